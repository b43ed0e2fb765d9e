/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_verbs.h
 * The public API of the software RNIC: verbs with rdma-core's own types.
 *
 * Everything here mirrors libibverbs (ibv_alloc_pd -> roce_pd_alloc,
 * ibv_post_send -> roce_post_send, ...) and takes the same structs, enums and
 * masks from <infiniband/verbs.h>; libibverbs itself is not linked. The engine
 * never touches DPDK: frames leave through roce_dev_ops.tx, arrive through
 * roce_dev_rx(), time comes from roce_dev_ops.now_ns, and timers (retransmit,
 * RNR, delayed ACK, pacing) are checked by roce_dev_poll().
 *
 * Conventions
 *  - Functions returning int return 0 or a negative errno (-EINVAL, -ENOMEM,
 *    -EBUSY, ...); ibverbs returns a positive errno, so test with `!= 0`.
 *  - Constructors return NULL on failure and set errno.
 *  - Where a verbs struct holds a pointer to a verbs object (ibv_qp_init_attr
 *    send_cq/recv_cq, ibv_send_wr wr.ud.ah) store the roce object through
 *    roce_cq_ibv() / roce_ah_ibv(); the engine casts it back and never
 *    dereferences it as the ibv type.
 *  - Not thread safe: one thread drives a device (as a DPDK lcore would).
 *
 * Differences from verbs worth knowing
 *  - Local keys and SGE bounds are checked when the work request executes, as
 *    rxe checks them: a bad lkey or an SGE outside its MR is posted (0) and
 *    completes with IBV_WC_LOC_QP_OP_ERR (a key that names no MR of the PD, or
 *    lacks the right) or IBV_WC_LOC_PROT_ERR (a range outside the MR), the
 *    statuses rxe gives (roce_sge_fault; the QP then goes to the error state;
 *    a receive's sender gets a NAK remote operational error). roce_post_send /
 *    roce_post_recv refuse (-EINVAL, *bad_wr) only what verbs refuses at post:
 *    the state, num_sge past the QP's max, a message past 2^31 bytes.
 *  - A UD send longer than the port MTU is refused by roce_post_send.
 */
#ifndef ROCE_VERBS_H
#define ROCE_VERBS_H

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_params.h"
#include "roce_rtt.h"
#include "roce_stats.h"
#include "vrp.h"

struct roce_dev;
struct roce_pd;
struct roce_cq;
struct roce_qp;
struct roce_ah;
struct roce_trace_event;

/* ------------------------------------------------------------------------- */
/* Device                                                                    */
/* ------------------------------------------------------------------------- */

/** Log levels passed to roce_dev_ops.log (syslog numbering). */
enum roce_log_level {
	ROCE_LOG_ERR = 3,
	ROCE_LOG_WARNING = 4,
	ROCE_LOG_INFO = 6,
	ROCE_LOG_DEBUG = 7,
	/**
	 * Every state transition of the responder and the completer, one line
	 * each, as rxe logs them; only with roce_dev_cfg.log_level = ROCE_LOG_TRACE
	 * and never rate limited (a trace with holes is no trace).
	 */
	ROCE_LOG_TRACE = 8,
};

/**
 * Device configuration. Fill with roce_dev_cfg_init() and override fields;
 * roce_dev_create() validates all of it.
 */
struct roce_dev_cfg {
	uint8_t mac[6];			 /**< local MAC, source of every frame */
	union ibv_gid gid[ROCE_MAX_GID]; /**< GID table: IPv4 as ::ffff:a.b.c.d, or IPv6 */
	unsigned int gid_count;		 /**< valid entries in gid[] (at least 1) */
	uint16_t pkey[ROCE_MAX_PKEY];	 /**< P_Key table (pkey_index); default {0xffff} */
	unsigned int pkey_count;
	bool vlan; /**< send with an 802.1Q tag */
	uint16_t vlan_id;
	uint8_t pcp;  /**< 802.1p priority when the AH's sl is 0 */
	uint8_t dscp; /**< DSCP when the AH's traffic_class is 0 */
	bool ecn;     /**< mark request and READ-response packets ECT(0) (also when the QP's CC uses
			 ECN) */
	uint8_t cnp_dscp;  /**< DSCP of CNPs (default 48, NVIDIA's CNP_DSCP) */
	uint8_t hop_limit; /**< TTL / hop limit when the AH's hop_limit is 0 */
	uint32_t mtu;	   /**< port MTU in bytes (256..4096): caps path_mtu, UD size */
	uint32_t max_qp, max_cq, max_mr, max_pd, max_ah; /**< object limits */
	/**
	 * First QPN handed out (default ROCE_FIRST_QPN); QPNs are first_qpn ..
	 * first_qpn + max_qp - 1. Several devices on one port (one per lcore)
	 * take disjoint ranges so a QPN names its device.
	 */
	uint32_t first_qpn;
	uint32_t window_pkts; /**< default RC in-flight packet window per QP */
	/**
	 * Loss-reactive window under window_pkts (roce_lwin.h), whatever the
	 * congestion control: halve on a loss episode, floored by the delivery of
	 * a recent clean round trip, additive increase. Default true.
	 */
	bool loss_window;
	/**
	 * Initial loss-reactive window in packets, grown in slow start until the
	 * QP window, a loss or a congestion notification (roce_lwin.h); 0: start
	 * at window_pkts (the device default; the rnic's --loss-window-init is 10).
	 */
	uint32_t loss_window_init;
	uint32_t ackreq_every;	  /**< requester: AckReq bit at least every N packets */
	uint32_t ack_every;	  /**< responder: ACK at least every N packets */
	uint64_t ack_delay_ns;	  /**< responder: ACK an idle flow after this long */
	uint32_t tx_burst;	  /**< packets per QP per run (post, rx, poll) */
	unsigned int parse_flags; /**< roce_parse() flags, e.g. ROCE_PARSE_NO_ICRC if offloaded */
	bool check_dst_mac;	  /**< drop frames whose destination MAC is not ours */
	char recovery[16];	  /**< default loss recovery by name ("gbn") */
	char cc[16];		  /**< default congestion control by name ("none") */
	/** most verbose level handed to ops->log (default ROCE_LOG_DEBUG: all but the trace) */
	enum roce_log_level log_level;
	/* selective loss recovery (gbone, irn); 0 = the mode's default */
	uint32_t max_ooo;     /**< receiver out-of-order span in PSNs (0: the window) */
	uint64_t link_bps;    /**< link rate for IRN's one-BDP in-flight cap (0: none) */
	uint64_t rto_low_ns;  /**< IRN RTO_low (fewer than 3 packets outstanding) */
	uint64_t rto_high_ns; /**< IRN RTO_high */
	uint8_t rto_mode;     /**< enum roce_rto_mode: ROCE_RTO_ADAPTIVE (default) or _FIXED */
	uint64_t rto_min_ns;  /**< adaptive RTO floor (ROCE_DEFAULT_RTO_MIN_NS) */
	uint64_t rto_max_ns;  /**< adaptive RTO ceiling, also caps the doubling on expiry */
	/**
	 * adaptive RTO stall allowance's half-life (roce_rtt.h): the margin above
	 * RTT is at least the third largest recent sample excess over the least
	 * RTT (a stall seen 3 times, ROCE_RTO_STALL_RANK), each halved this often
	 * (ROCE_DEFAULT_RTO_STALL_NS; 0: no allowance)
	 */
	uint64_t rto_stall_ns;
	/**
	 * FEC hold-back (roce_fec.h): how long past two block-fill times a hole's
	 * loss signal is withheld for its repair (0: ROCE_DEFAULT_FEC_HOLD_NS).
	 */
	uint64_t fec_hold_ns;
	/**
	 * --fec-adapt: the receiver's policy (lib/fec fec_adapt.h) proposes
	 * the peer's FEC parameters from the loss it sees (docs/fec.md).
	 */
	bool fec_adapt;
	/**
	 * --recovery vrp: the loss tolerance of every RDMA WRITE message a QP
	 * receives (default 0 %: reliable); per QP with roce_qp_set_vrp().
	 * At most ROCE_VRP_QP_CRITICAL critical ranges (the first and the last
	 * packet of a message are always critical, and a work request may add
	 * ROCE_VRP_WR_CRITICAL more: docs/vrp.md).
	 */
	struct vrp_tolerance vrp;
};

/**
 * The outside world. tx and now_ns are required; the others may be NULL.
 * None of them may call back into the engine.
 */
/** roce_dev_ops.tx's refusal of a frame that priority flow control holds */
#define ROCE_TX_PAUSED (-EAGAIN)

struct roce_dev_ops {
	/**
	 * Transmit one frame (Ethernet header to ICRC, at least 60 bytes). The
	 * engine reuses @p frame after the call, so copy it. Return 0, or a
	 * negative errno (e.g. -ENOBUFS) to refuse: the engine keeps the packet
	 * and tries again on a later roce_dev_poll(). ROCE_TX_PAUSED refuses a
	 * frame whose priority the peer paused (802.1Qbb PFC): kept likewise, but
	 * the paused time earns the QP's rate limiter no catch-up (roce_req.c).
	 */
	int (*tx)(void *ctx, const uint8_t *frame, size_t len);
	/** Current time in nanoseconds (monotonic). */
	uint64_t (*now_ns)(void *ctx);
	/** One log line (no newline), rate limited by the engine. */
	void (*log)(void *ctx, enum roce_log_level level, const char *msg);
	/** A CQ armed by roce_req_notify_cq() got a matching completion. */
	void (*cq_event)(void *ctx, struct roce_cq *cq);
	/**
	 * Resolve a peer GID to a MAC (ARP/ND in the app) when a connected QP
	 * goes to RTR without roce_qp_set_remote_mac(). Return 0 or -errno.
	 */
	int (*resolve_mac)(void *ctx, const union ibv_gid *gid, uint8_t mac[6]);
	/**
	 * Optional zero-copy transmit: a buffer of at least @p len bytes, owned by
	 * the app, in which the engine builds the next frame that carries a
	 * payload and then hands it to tx() (frame == this buffer), so tx() need
	 * not copy. The engine may ask again before a tx() (the frame was not
	 * sent): return the same buffer again or another one. NULL: the engine
	 * builds in its own scratch buffer and tx() copies, as without this op.
	 */
	uint8_t *(*tx_buf)(void *ctx, size_t len);
	/**
	 * Optional loss-recovery trace (roce_trace.h): a retransmission, a
	 * missing PSN that arrived, ... NULL (the default): no events, no cost.
	 */
	void (*trace)(void *ctx, const struct roce_trace_event *ev);
};

/** Fill @p cfg with the defaults of roce_params.h (GID and MAC left zero). */
void roce_dev_cfg_init(struct roce_dev_cfg *cfg);

/**
 * Create a device. @p cfg and @p ops are copied; @p ctx is passed to every op.
 * Returns NULL with errno EINVAL (bad cfg; see the log) or ENOMEM.
 */
struct roce_dev *roce_dev_create(const struct roce_dev_cfg *cfg, const struct roce_dev_ops *ops,
				 void *ctx);

/** Destroy a device and every object still on it (no completions are generated). */
void roce_dev_destroy(struct roce_dev *dev);

/**
 * Receive one frame. Never reads past @p len and never fails: a frame that is
 * not accepted is counted. Returns 0 if a QP took the packet (which may still
 * drop it as a duplicate or out of sequence, counted per QP), otherwise the
 * ::roce_stat counter that recorded the drop.
 */
int roce_dev_rx(struct roce_dev *dev, const uint8_t *frame, size_t len);

/**
 * Receive a burst; QPs run their transmit side (ACKs, responses, new data)
 * once at the end of the burst instead of after every frame.
 */
void roce_dev_rx_burst(struct roce_dev *dev, const uint8_t *const *frames, const size_t *lens,
		       unsigned int n);

struct net_frame;

/**
 * roce_dev_rx_burst() for frames the receive path classified: @p frs[i] is
 * net_frame_classify()'s result for frame i (or @p frs is NULL), so the parse
 * does not walk the headers the classifier walked (roce_parse_frame). Same
 * result as roce_dev_rx_burst().
 */
void roce_dev_rx_burst_classified(struct roce_dev *dev, const uint8_t *const *frames,
				  const size_t *lens, const struct net_frame *frs, unsigned int n);

/**
 * Check every timer (retransmit, RNR, delayed ACK, pacing) against @p now_ns
 * and let each QP transmit up to tx_burst packets. Call it from the main loop.
 */
void roce_dev_poll(struct roce_dev *dev, uint64_t now_ns);

/** Earliest armed timer deadline of any QP in ns, or UINT64_MAX if none. */
uint64_t roce_dev_next_deadline(const struct roce_dev *dev);

/**
 * True if some QP has packets to send now, including packets ops->tx refused:
 * the app should call roce_dev_poll() again soon rather than sleep until
 * roce_dev_next_deadline().
 */
bool roce_dev_busy(const struct roce_dev *dev);

/** Copy the device-wide counters. */
void roce_dev_stats(const struct roce_dev *dev, struct roce_stats *out);

/**
 * Frames the wire parser rejected, by ::net_err (index 1..NET_E__COUNT-1);
 * returns the count for one error code.
 */
uint64_t roce_dev_parse_errors(const struct roce_dev *dev, int net_err);

/** The device configuration in use. */
const struct roce_dev_cfg *roce_dev_config(const struct roce_dev *dev);

/* ------------------------------------------------------------------------- */
/* Protection domain, memory regions, address handles                        */
/* ------------------------------------------------------------------------- */

/** Allocate a PD. NULL with errno ENOMEM when cfg.max_pd is reached. */
struct roce_pd *roce_pd_alloc(struct roce_dev *dev);
/** Free a PD; -EBUSY while MRs, QPs or AHs use it. */
int roce_pd_dealloc(struct roce_pd *pd);

/** A registered memory region, as ibv_mr: read the keys, do not write. */
struct roce_mr {
	struct roce_pd *pd;
	void *addr; /**< start of the region in this process */
	size_t length;
	uint64_t iova;	     /**< remote address of addr (= (uintptr_t)addr) */
	uint32_t lkey;	     /**< local key for SGEs */
	uint32_t rkey;	     /**< remote key for RETH / AtomicETH (same value as lkey) */
	unsigned int access; /**< enum ibv_access_flags */
};

/**
 * Register @p len bytes at @p addr with IBV_ACCESS_LOCAL_WRITE /
 * REMOTE_WRITE / REMOTE_READ / REMOTE_ATOMIC (as verbs: remote write or
 * atomic access requires local write). NULL with errno EINVAL or ENOMEM.
 */
struct roce_mr *roce_reg_mr(struct roce_pd *pd, void *addr, size_t len, unsigned int access);
/** Deregister; the keys stop working at once (packets using them are NAKed). */
int roce_dereg_mr(struct roce_mr *mr);

/**
 * Create an address handle for UD sends: @p attr as for ibv_create_ah (is_global
 * must be set: grh.dgid, grh.sgid_index, grh.traffic_class, grh.hop_limit,
 * grh.flow_label; sl gives the 802.1p priority) plus the peer's MAC, which the
 * app resolved. Put it in ibv_send_wr.wr.ud.ah with roce_ah_ibv().
 */
struct roce_ah *roce_create_ah(struct roce_pd *pd, const struct ibv_ah_attr *attr,
			       const uint8_t mac[6]);
int roce_destroy_ah(struct roce_ah *ah);

/** The value to store in ibv_send_wr.wr.ud.ah (a cast; never dereferenced as ibv_ah). */
static inline struct ibv_ah *
roce_ah_ibv(struct roce_ah *ah)
{
	return (struct ibv_ah *)(void *)ah;
}

/* ------------------------------------------------------------------------- */
/* Completion queues                                                         */
/* ------------------------------------------------------------------------- */

/** Create a CQ of at least @p cqe entries. NULL with errno EINVAL or ENOMEM. */
struct roce_cq *roce_create_cq(struct roce_dev *dev, int cqe);
/** Destroy a CQ; -EBUSY while a QP uses it. */
int roce_destroy_cq(struct roce_cq *cq);
/** Poll up to @p n completions into @p wc; returns how many (0..n) or -EINVAL. */
int roce_poll_cq(struct roce_cq *cq, int n, struct ibv_wc *wc);
/**
 * Arm the CQ: the next completion (or, with @p solicited_only, the next
 * receive completion of a message with the solicited-event bit, or any error
 * completion) calls ops->cq_event once.
 */
int roce_req_notify_cq(struct roce_cq *cq, int solicited_only);
/** Name of a completion status ("IBV_WC_RETRY_EXC_ERR"); ibv_wc_status_str needs libibverbs. */
const char *roce_wc_status_str(enum ibv_wc_status status);
/** Completions waiting in the CQ. */
unsigned int roce_cq_count(const struct roce_cq *cq);

/** The value to store in ibv_qp_init_attr.send_cq / recv_cq (a cast). */
static inline struct ibv_cq *
roce_cq_ibv(struct roce_cq *cq)
{
	return (struct ibv_cq *)(void *)cq;
}

/* ------------------------------------------------------------------------- */
/* Queue pairs                                                               */
/* ------------------------------------------------------------------------- */

/**
 * Create an RC, UC or UD QP in RESET. @p attr: send_cq/recv_cq via
 * roce_cq_ibv(), cap (max_send_wr, max_recv_wr, max_send_sge, max_recv_sge,
 * max_inline_data), qp_type, sq_sig_all, qp_context. SRQ is not supported.
 * attr->cap is updated with the sizes granted. NULL with errno EINVAL/ENOMEM.
 */
struct roce_qp *roce_create_qp(struct roce_pd *pd, struct ibv_qp_init_attr *attr);
/** Destroy a QP (no completions are generated for its WQEs). */
int roce_destroy_qp(struct roce_qp *qp);
/** The QP number (24 bit). */
uint32_t roce_qp_num(const struct roce_qp *qp);
/** The QP's current state. */
enum ibv_qp_state roce_qp_state(const struct roce_qp *qp);
/**
 * The QP's live PSNs: the next one its requester sends (@p sq_psn), the oldest
 * one not yet acknowledged (@p una) and the one its responder expects
 * (@p epsn). For telemetry and tests; safe to call from another thread (each
 * value is one load, the three are not a snapshot).
 */
void roce_qp_psns(const struct roce_qp *qp, uint32_t *sq_psn, uint32_t *una, uint32_t *epsn);
/** The qp_context given at creation. */
void *roce_qp_context(const struct roce_qp *qp);

/**
 * Modify a QP as ibv_modify_qp: the IBTA state machine (RESET, INIT, RTR, RTS,
 * SQD, SQE, ERR) with IBTA's required and optional attribute masks per
 * transition (as the ibv_modify_qp man page lists them). RoCEv2 addressing
 * comes from attr->ah_attr: is_global = 1, grh.dgid (the peer's GID),
 * grh.sgid_index, grh.traffic_class, grh.hop_limit, grh.flow_label, sl.
 * Returns 0, or -EINVAL for an illegal transition, a missing required or a
 * disallowed optional attribute, or a value out of range (nothing changes
 * then), or -EHOSTUNREACH when the peer MAC is unknown at RTR.
 */
int roce_modify_qp(struct roce_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
/** Query attributes and the creation parameters, as ibv_query_qp. */
int roce_query_qp(struct roce_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr);

/**
 * Set the peer's MAC for an RC/UC QP (the app resolved the GID by ARP/ND).
 * Call before or after the transition to RTR; it takes effect at once.
 */
int roce_qp_set_remote_mac(struct roce_qp *qp, const uint8_t mac[6]);
/** Select the loss recovery (e.g. "gbn") by name; only in RESET or INIT. -ENOENT if unknown. */
int roce_qp_set_recovery(struct roce_qp *qp, const char *name);
/**
 * Turn FEC on for an RC QP with codec parameters (e.g. "xor:32,4", "rs:32,4";
 * NULL or "off": off), through the codec registered with roce_fec_register()
 * (roce_fec.h). Only in RESET or INIT. -ENOTSUP (no codec), -EINVAL (bad
 * state, not RC, bad parameters: @p err says why), -ENOMEM.
 */
int roce_qp_set_fec(struct roce_qp *qp, const char *params, char *err, size_t errlen);
struct roce_fec_info;
/** The QP's FEC codec counters and parameters; -ENOENT if FEC is off. */
int roce_qp_fec_info(const struct roce_qp *qp, struct roce_fec_info *out);
/** Select the congestion control (e.g. "none") by name; only in RESET or INIT. */
int roce_qp_set_cc(struct roce_qp *qp, const char *name);
/** In-flight packet window of an RC QP (1..ROCE_MAX_WINDOW_PKTS). */
int roce_qp_set_window(struct roce_qp *qp, uint32_t pkts);
/** Copy the QP's counters. */
void roce_qp_stats(const struct roce_qp *qp, struct roce_stats *out);

/**
 * --recovery vrp: set the loss tolerance of the RDMA WRITE messages this QP
 * receives from now on (any state). -EINVAL (and one line in *err) for a
 * tolerance lib/vrp refuses or with more than ROCE_VRP_QP_CRITICAL ranges.
 */
int roce_qp_set_vrp(struct roce_qp *qp, const struct vrp_tolerance *tol, const char **err);

#define ROCE_VRP_WR_CRITICAL 4	/**< critical ranges per work request (the VTETH's) */
#define ROCE_VRP_QP_CRITICAL 14 /**< critical ranges per QP (roce_qp_set_vrp, roce_dev_cfg.vrp) */

/** Which fields of a struct roce_vrp_wr the work request sets (the others: the receiver's). */
enum roce_vrp_wr_set {
	ROCE_VRP_WR_LOSS = 1 << 0,   /**< loss_bp (VRP §3.1 LOSS_RATE) */
	ROCE_VRP_WR_WINDOW = 1 << 1, /**< window */
	ROCE_VRP_WR_BURST = 1 << 2,  /**< max_burst (VRP §3.1 CONS_LOSS) */
};

/**
 * The loss tolerance of one RDMA WRITE work request under --recovery vrp
 * (docs/vrp.md, "Tolerance per work request"): VRP's per-frame tags
 * (Denis, LIP RR-2000-11, §3.1 LOSS_RATE, CONS_LOSS, CRITICAL_INTERVAL;
 * §3.3 vrp_buffer_set_loss_rate / vrp_buffer_add_critical), carried to the
 * receiver in the message's FIRST packet (VTETH, docs/wire.md). A field not
 * in @c set takes the receiving QP's value, as the paper's "-1 means default
 * value". The critical ranges are added to the receiving QP's: a critical
 * byte is never lost, whoever named it. The first and the last packet of a
 * message stay critical.
 */
struct roce_vrp_wr {
	unsigned int set;    /**< enum roce_vrp_wr_set */
	uint32_t loss_bp;    /**< tolerated loss over the window, basis points (0..10000) */
	uint32_t window;     /**< history window in packets (0: 64; at most 65535) */
	uint64_t max_burst;  /**< largest consecutive loss in bytes (>= 2^32 - 1: no bound) */
	unsigned n_critical; /**< entries used in critical[] (0..ROCE_VRP_WR_CRITICAL) */
	struct vrp_range critical[ROCE_VRP_WR_CRITICAL]; /**< byte ranges never lost */
};

/**
 * roce_post_send() with a VRP tolerance for every RDMA WRITE (with or
 * without immediate) in the chain; other opcodes ignore it, and @p vrp NULL
 * is roce_post_send(). It goes on the wire only on an RC QP that runs
 * --recovery vrp (negotiated) and only for messages of 2 packets or more; on
 * a QP that fell back to gbn the WRITE is delivered reliably (stricter than
 * asked, never looser). Returns -EINVAL with *bad_wr at the WR for an
 * unknown bit in set, a loss above 100 %, a window above 65535, more than
 * ROCE_VRP_WR_CRITICAL ranges, or a critical range empty or outside the
 * message.
 */
int roce_post_send_vrp(struct roce_qp *qp, struct ibv_send_wr *wr, const struct roce_vrp_wr *vrp,
		       struct ibv_send_wr **bad_wr);

#define ROCE_VRP_HOLES 8 /**< holes kept per message loss record */

/** A tolerated hole of a message: bytes [off, off + len), zero-filled. */
struct roce_vrp_hole {
	uint64_t off, len;
};

/** What one RDMA WRITE message lost under --recovery vrp (zero-filled in the target). */
struct roce_vrp_loss {
	uint32_t msn;	      /**< the responder's MSN after the message */
	uint32_t len;	      /**< message length (bytes) */
	uint32_t lost_pkts;   /**< packets given up */
	uint64_t lost_bytes;  /**< bytes zero-filled */
	uint32_t n_holes;     /**< entries in holes[] (merged runs) */
	bool holes_truncated; /**< more holes than ROCE_VRP_HOLES */
	struct roce_vrp_hole holes[ROCE_VRP_HOLES];
};

/**
 * The loss record of the last RDMA WRITE message this QP received under
 * --recovery vrp (the receiver application's view of a plain WRITE, and of
 * a WRITE with immediate once its completion is polled). -ENOENT before the
 * first one.
 */
int roce_qp_vrp_loss(const struct roce_qp *qp, struct roce_vrp_loss *out);

/**
 * The requester's view (docs/vrp.md, "What the requester sees"): the loss
 * record of the last RDMA WRITE message this QP sent under --recovery vrp
 * whose VRP LOSS summary (0xE3) came back from the responder, as the
 * responder's roce_qp_vrp_loss() had it. -ENOENT before the first one.
 */
int roce_qp_vrp_peer_loss(const struct roce_qp *qp, struct roce_vrp_loss *out);

/**
 * An extended work completion (docs/vrp.md, "What the receiver application
 * sees"): rdma-core's struct ibv_wc, unchanged and first (a struct roce_wc_ex *
 * is a valid struct ibv_wc *), then the loss map of the message under
 * --recovery vrp. @c vrp_valid is set on the receive completion of an RDMA
 * WRITE with immediate that ran under vrp (also when it lost nothing), and on
 * the send completion of an RDMA WRITE (with or without immediate) under vrp
 * whose VRP LOSS summary came back from the responder; @c vrp then holds the
 * message's record as the responder's roce_qp_vrp_loss() gives it: packets
 * and bytes zero-filled and the first ROCE_VRP_HOLES holes (@c msn is the
 * responder's). Otherwise @c vrp is zero (a send completion whose summary was
 * lost: counter vrp_summary_missing).
 */
struct roce_wc_ex {
	struct ibv_wc wc;	  /**< the standard fields, rdma-core's layout */
	bool vrp_valid;		  /**< @c vrp describes this message */
	struct roce_vrp_loss vrp; /**< what the message lost (zero-filled) */
};

/** roce_poll_cq() into extended completions; the same return values. */
int roce_poll_cq_ex(struct roce_cq *cq, int n, struct roce_wc_ex *wc);

/**
 * Post a chain of send WRs. Opcodes: SEND, SEND_WITH_IMM, RDMA_WRITE,
 * RDMA_WRITE_WITH_IMM, RDMA_READ, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD
 * (RC only for READ and atomics; SEND only on UD). Flags: SIGNALED,
 * SOLICITED, INLINE, FENCE. Transmission starts at once (up to tx_burst
 * packets). Returns 0, or -EINVAL (bad WR or QP state), -ENOMEM (queue full)
 * with *bad_wr at the first WR not posted.
 */
int roce_post_send(struct roce_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
/** Post a chain of receive WRs (in INIT, RTR, RTS, SQD, SQE; flushed in ERR). */
int roce_post_recv(struct roce_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

#endif /* ROCE_VERBS_H */
