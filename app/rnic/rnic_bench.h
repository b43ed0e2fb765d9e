/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_bench.h
 * perftest's measurement loops on the rnic's verbs API: bandwidth modes
 * (write/send/read/atomic) and latency modes (write/send/read ping-pong), and
 * perftest's output table so existing lab scripts can parse it.
 */
#ifndef RNIC_BENCH_H
#define RNIC_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "rnic_config.h"
#include "rnic_port.h"
#include "roce_verbs.h"

#define RNIC_MAX_QPS 64 /**< -q limit (perftest's MAX_QPS too) */
/** rnic_bench_bw_responder's @p expect for a timed run (-D) */
#define RNIC_BENCH_UNTIL_PEER UINT64_MAX

/** One QP of the test and its peer's side: buffer and, for UD, address. */
struct rnic_bench_qp {
	struct roce_qp *qp;
	uint64_t raddr; /**< peer's buffer */
	uint32_t rkey;
	struct roce_ah *ah;	 /**< UD: the peer's address handle */
	uint32_t remote_qpn;	 /**< UD: the peer's QPN */
	uint64_t posted, done;	 /**< WRs of the current run */
	uint64_t rposted, rdone; /**< send_bw -b: receive WRs of the current run */
	struct roce_mr *mr;	 /**< the buffer's MR on this QP's device; NULL: the bench's */
	/** requester: seconds from the run's start to this QP's latest completion */
	double last_s;
};

/**
 * The connected QPs (-q) and the memory they work on; all QPs share the CQ and
 * the local buffer. qp, raddr, rkey, ah and remote_qpn repeat q[0]'s: the
 * latency, ping-pong and flow modes run on one QP.
 */
struct rnic_bench {
	struct rnic_port *port;
	const struct rnic_params *prm;
	struct roce_cq *cq;
	struct roce_qp *qp;
	struct roce_mr *mr;
	uint8_t *buf; /**< local buffer (registered as mr) */
	size_t buf_size;
	uint64_t raddr; /**< peer's buffer */
	uint32_t rkey;
	bool server;
	struct roce_ah *ah;  /**< UD: the peer's address handle */
	uint32_t remote_qpn; /**< UD: the peer's QPN */
	unsigned int nqps;   /**< QPs in q[] (-q) */
	struct rnic_bench_qp q[RNIC_MAX_QPS];
	/** send_bw -D responder: the perftest TCP socket whose next message (the client's
	 * closing sync) ends the run; read only when the run counts no fixed number */
	int peer_fd;
};

/** The Q_Key both sides of a UD test use (perftest's DEF_QKEY). */
#define RNIC_UD_QKEY 0x11111111u
/** A UD receive buffer holds the 40-byte GRH before the message. */
#define RNIC_UD_GRH 40u

struct rnic_bench_result {
	uint64_t size;
	uint64_t iters; /**< completed messages */
	double seconds;
	double bw_avg_mbps; /**< MB/s in perftest's sense: 2^20 bytes/s */
	double bw_peak_mbps;
	double msg_rate_mpps;
	/* latency modes (microseconds) */
	double t_min, t_max, t_typical, t_avg, t_stdev, t_p99, t_p999;
	uint64_t errors; /**< completions with an error status */
	enum ibv_wc_status first_error;
	/* rc_pingpong: echoes that differ from what was sent (client side) */
	uint64_t data_mismatches;
	uint64_t first_mismatch_msg, first_mismatch_byte;
};

/** Bandwidth test, requester side (write/send/read/atomic per prm->mode): -n messages per QP. */
int rnic_bench_bw_requester(struct rnic_bench *b, uint64_t size, struct rnic_bench_result *r);

/**
 * Bandwidth test, responder side of send_bw: keeps receives posted on every QP
 * (the first @p pre_posted of each were posted before the run) and counts
 * @p expect messages per QP. @p expect RNIC_BENCH_UNTIL_PEER (send_bw -D: the
 * requester sends for a time, so no count is known) reposts without limit and
 * ends when b->peer_fd becomes readable: the requester has every completion and
 * sent its next perftest message.
 */
int rnic_bench_bw_responder(struct rnic_bench *b, uint64_t size, uint64_t expect,
			    uint64_t pre_posted, struct rnic_bench_result *r);

/**
 * send_bw -b (perftest's duplex send, run_iter_bi): every QP sends -n messages
 * and receives the peer's -n at the same time, on one CQ; the first
 * @p pre_posted receives of each QP were posted before the run. @p r is this
 * side's sending (what perftest reports), @p rx its receiving. Returns 0 when
 * both counts are complete.
 */
int rnic_bench_bw_duplex_send(struct rnic_bench *b, uint64_t size, uint64_t pre_posted,
			      struct rnic_bench_result *r, struct rnic_bench_result *rx);

/** Post receive number @p i for @p size bytes on QP 0 (buffers rotate through the MR). */
int rnic_bench_post_recv(struct rnic_bench *b, uint64_t size, uint64_t i);
/** The same on QP @p qi of q[]. */
int rnic_bench_post_recv_qp(struct rnic_bench *b, unsigned int qi, uint64_t size, uint64_t i);

/** Latency ping-pong (write_lat, send_lat) or request/response (read_lat). */
int rnic_bench_lat(struct rnic_bench *b, uint64_t size, struct rnic_bench_result *r);

/**
 * ibv_rc_pingpong (rdma-core 44): post the receives the peer's first SEND needs
 * (min(rx_depth, iters) of @p size bytes, all into the buffer's first @p size
 * bytes, as rdma-core does). Call once the QP is at least in INIT, before the
 * peer may send. Returns the number posted or a negative errno.
 */
int64_t rnic_bench_pingpong_prepare(struct rnic_bench *b, uint64_t size);

/**
 * ibv_rc_pingpong's loop: the client sends first, each side sends again once
 * its previous SEND completed and the peer's next message arrived; both do
 * prm->iters SENDs and receives. The buffer is shared by the SEND and the
 * receives, so the server echoes what it received. The client sends a
 * different pattern per message and checks each echo byte for byte.
 */
int rnic_bench_pingpong(struct rnic_bench *b, uint64_t size, uint64_t posted,
			struct rnic_bench_result *r);
/** After a successful RC rc_pingpong: keep re-acknowledging the peer's resends until
 * the port is quiet (rc_pingpong has no closing handshake; see rnic_bench.c). */
void rnic_bench_linger(struct rnic_bench *b);

/** perftest's banner and table header for the mode. */
void rnic_bench_print_header(FILE *f, const struct rnic_params *p);
void rnic_bench_print_row(FILE *f, const struct rnic_params *p, const struct rnic_bench_result *r);
void rnic_bench_print_footer(FILE *f);

#endif /* RNIC_BENCH_H */
