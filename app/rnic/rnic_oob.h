/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_oob.h
 * The rnic side of perftest's out-of-band exchange: connect or accept over the
 * kernel's TCP, then run perftest's step plan (app/rnic/oob/perftest_xchg) with
 * hooks that bring the rnic's QP up and run the measurement loops, serving the
 * DPDK port whenever the engine must answer the peer.
 */
#ifndef RNIC_OOB_H
#define RNIC_OOB_H

#include "dp_port.h"
#include "oob_tcp.h"
#include "perftest_xchg.h"
#include "rnic_bench.h"
#include "rnic_flows.h"
#include "rnic_lcores.h"

#define RNIC_SAMPLE_NS 100000000ull /* receiver goodput samples: every 100 ms */
#define RNIC_MAX_SAMPLES 36000	    /* one hour */

struct rnic_run {
	struct rnic_bench bench;
	struct perftest_dest local[RNIC_MAX_QPS], remote[RNIC_MAX_QPS]; /**< -q QPs */
	struct rnic_bench_result res;
	struct rnic_bench_result res_rx; /**< send_bw -b: the receiving side of this rnic */
	struct rnic_flows flows;	 /**< --flows: per-flow records (client) */
	struct perftest_report peer_report;
	/** Negotiated in the version step (perftest_caps.h): the recovery every QP uses. */
	struct perftest_caps_result caps;
	/** caps.recovery's ops (lib/roce), NULL before the negotiation */
	const struct roce_recovery_ops *recovery;
	/** Bring QP @p qi of bench.q[] to RTS towards @p remote. */
	int (*connect_qp)(void *arg, unsigned int qi, const struct perftest_dest *remote,
			  int mtu_enum);
	void *connect_arg;
	/** -R: connect_qp sends at these PSNs (the peer named them in its REQ/REP) */
	uint32_t cm_sq_psn[RNIC_MAX_QPS];
	int cm_psns;
	struct rnic_lcores *lc; /**< --lcores > 1, else NULL */
	int lc_err;		/**< launching the workers failed */
	uint64_t pre_posted;	/**< receives posted on each QP before the pre-run sync */
	/* receiver side of write/read/atomic bw: goodput sampled over time */
	struct {
		uint64_t t_ns, rx_bytes;
	} samples[RNIC_MAX_SAMPLES];
	uint32_t nsamples;
	uint64_t next_sample_ns;
	/* serving the port while the TCP exchange waits (rnic_oob.c port_wait) */
	struct dp_backoff wait_bo;
};

/**
 * Connect (client) or listen and accept (server), then run the whole perftest
 * exchange with traffic. Returns 0 or a negative error with one line in @p err.
 */
int rnic_oob_run(struct rnic_run *run, const struct rnic_params *p, char *err, size_t errlen);

/**
 * The same for rdma-core's ibv_rc_pingpong: its 52-byte exchange (server:
 * QP up and receives posted before it answers), then the ping-pong loop;
 * prints rc_pingpong's address and result lines. 0 or a negative error.
 */
/** perftest -R (rnic_oob_rcm.c): the exchange over rdma_cm, then the traffic. */
int rnic_oob_run_rcm(struct rnic_run *run, const struct rnic_params *p, char *err, size_t errlen);

int rnic_oob_run_pingpong(struct rnic_run *run, const struct rnic_params *p, char *err,
			  size_t errlen);

#endif /* RNIC_OOB_H */
