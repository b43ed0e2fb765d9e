/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_int.h
 * Internal objects of the transport engine and the prototypes the role files
 * share. Nothing here is API; see roce_verbs.h.
 *
 * Who owns what:
 *   roce_req.c   send queue, PSN assignment, (re)transmission of requests
 *   roce_comp.c  responses (ACK/NAK/READ/atomic), retry decisions, send CQEs
 *   roce_resp.c  receive queue, request checks and execution, responses out
 *   roce_recv.c  frame parsing and dispatch to a QP
 *   roce_qp.c    QP objects and the IBTA state machine
 *   roce_xmit.c  frame templates (addressing) and the transmit helper
 */
#ifndef ROCE_INT_H
#define ROCE_INT_H

#ifdef ROCE_RECOVERY_PLUGIN
#error                                                                                             \
    "a recovery plug-in compiles against the public headers only (roce_recovery.h, roce_psn.h, roce_rtt.h)"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "roce_cc.h"
#include "roce_fec.h"
#include "roce_gsi.h"
#include "roce_lwin.h"
#include "roce_pkt.h"
#include "roce_psn.h"
#include "roce_psn_bitmap.h"
#include "roce_recovery.h"
#include "roce_rtt.h"
#include "roce_trace.h"
#include "roce_verbs.h"

/* ------------------------------------------------------------------------- */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------- */

#define ROCE_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define roce_likely(x) __builtin_expect(!!(x), 1)
#define roce_unlikely(x) __builtin_expect(!!(x), 0)

/** Intrusive doubly-linked list (control path only). */
struct roce_list {
	struct roce_list *prev, *next;
};

static inline void
roce_list_init(struct roce_list *l)
{
	l->prev = l->next = l;
}

static inline void
roce_list_add_tail(struct roce_list *head, struct roce_list *n)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

static inline void
roce_list_del(struct roce_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

#define roce_container_of(ptr, type, member)                                                       \
	((type *)(void *)((char *)(ptr) - __builtin_offsetof(type, member)))

/* ------------------------------------------------------------------------- */
/* Objects                                                                   */
/* ------------------------------------------------------------------------- */

struct roce_pd {
	struct roce_dev *dev;
	struct roce_list node;
	uint32_t refs; /**< MRs, QPs and AHs using it */
};

struct roce_ah {
	struct roce_pd *pd;
	struct roce_list node;
	struct roce_pkt tmpl; /**< l2, l3 ready for roce_build() */
};

/** CQ arming (roce_req_notify_cq). */
enum roce_cq_arm {
	ROCE_CQ_DISARMED = 0,
	ROCE_CQ_ARM_NEXT,
	ROCE_CQ_ARM_SOLICITED,
};

struct roce_cq {
	struct roce_dev *dev;
	struct roce_list node;
	struct ibv_wc *ring;
	struct roce_vrp_loss
	    *loss;     /**< VRP loss map per entry, allocated at the first (NULL: none) */
	uint32_t size; /**< power of two */
	uint32_t prod, cons;
	uint32_t refs; /**< QPs using it */
	uint8_t armed; /**< enum roce_cq_arm */
};

/** Requester progress of a send WQE. */
enum roce_wqe_state {
	ROCE_WQE_POSTED = 0, /**< no PSN assigned yet */
	ROCE_WQE_STARTED,    /**< first_psn assigned, some packets sent */
	ROCE_WQE_SENT,	     /**< every packet sent at least once */
};

struct roce_send_wqe {
	uint64_t wr_id;
	uint8_t opcode; /**< enum ibv_wr_opcode */
	uint8_t state;	/**< enum roce_wqe_state */
	bool is_inline;
	unsigned int flags; /**< enum ibv_send_flags */
	uint32_t imm;	    /**< immediate data as the wire carries it, read host order */
	uint32_t length;    /**< message bytes */
	uint32_t num_sge;
	struct ibv_sge *sge; /**< this slot's SGEs (or NULL when inline) */
	uint8_t *inl;	     /**< this slot's inline buffer */
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add, swap;
	struct roce_ah *ah;	   /**< UD */
	uint32_t remote_qpn, qkey; /**< UD */
	uint8_t err;		   /**< enum ibv_wc_status to report instead of a flush error */
	uint32_t first_psn;	   /**< valid from STARTED */
	uint32_t npkts;		   /**< PSNs the message uses (READ: response packets) */
	uint32_t sent;		   /**< packets transmitted at least once */
	uint32_t rwqe_seq;    /**< SEND / WRITE with immediate: receive WQE it consumes (SPETH) */
	bool vrp_wr;	      /**< WRITE posted with a VRP tolerance (roce_post_send_vrp) */
	bool vrp_sum;	      /**< vrp: the responder's LOSS summary arrived (comp.vrp_sum[slot]) */
	struct roce_vteth vt; /**< that tolerance as its FIRST packet carries it (VTETH) */
};

struct roce_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length; /**< sum of the SGE lengths */
	struct ibv_sge *sge;
};

struct roce_sq {
	struct roce_send_wqe *wqe;
	struct ibv_sge *sge; /**< size * max_sge */
	uint8_t *inl;	     /**< size * max_inline */
	uint32_t size;	     /**< power of two */
	uint32_t max_wr, max_sge, max_inline;
	uint32_t prod; /**< next slot to post */
	uint32_t cons; /**< oldest WQE not completed */
};

struct roce_rq {
	struct roce_recv_wqe *wqe;
	struct ibv_sge *sge;
	uint32_t size, max_wr, max_sge;
	uint32_t prod, cons;
};

/** Requester (roce_req.c) state. */
struct roce_req_state {
	uint32_t psn;	     /**< next new PSN (snd_nxt) */
	uint32_t next;	     /**< SQ index of the first WQE not fully sent */
	uint32_t rd_atomic;  /**< READ/atomic WQEs started and not completed */
	uint32_t ackreq_cnt; /**< packets since the last AckReq bit */
	uint32_t hint;	     /**< SQ index cache for PSN -> WQE lookups */
	uint64_t wake_at;    /**< CC pacing deadline (0: none) */
	uint64_t pace_at;    /**< IBV_QP_RATE_LIMIT: earliest time of the next packet (ns) */
	bool pace_backlog;   /**< a packet waited for the pacer (or the loop) since the last send */
	uint64_t rto_at;     /**< retransmit deadline (0: disarmed) */
	bool rto_defer;	     /**< adaptive RTO: una advanced since the last poll, check next poll */
	uint64_t rnr_at;     /**< RNR wait deadline (0: not waiting) */
	bool blocked;	     /**< the last run stopped on window/CC/rd_atomic/fence/SQD */
	int stall;	     /**< counter of the current stall (-1: none), counted once */
	uint32_t rwqe_seq;   /**< messages started that consume a receive WQE (SPETH) */
};

/** Completer (roce_comp.c) state. */
struct roce_comp_state {
	uint32_t una;	    /**< oldest unacknowledged PSN (snd_una) */
	uint8_t retry_left; /**< retries left before IBV_WC_RETRY_EXC_ERR */
	uint8_t rnr_left;   /**< RNR retries left (ignored when rnr_retry == 7) */
	bool rx_becn;	    /**< the response being processed is a BECN-flagged ACK */
	/* --recovery vrp: the responder's LOSS summaries (0xE3) of our WRITEs */
	struct roce_vrp_loss *vrp_sum;	    /**< per SQ slot, allocated at the first summary */
	struct roce_vrp_loss vrp_peer_last; /**< the last summary taken */
	bool vrp_have_peer_last;
};

/** A retained READ or atomic at the responder (IBTA "responder resources"). */
enum roce_res_type {
	ROCE_RES_FREE = 0,
	ROCE_RES_READ,
	ROCE_RES_ATOMIC,
};

struct roce_resp_res {
	uint8_t type; /**< enum roce_res_type */
	bool pending; /**< responses still to transmit */
	bool replay;  /**< they answer a duplicate request (may yield to a new one) */
	uint32_t first_psn, last_psn; /**< PSNs of the original request */
	uint64_t seq;		      /**< allocation order */
	/* READ: the (re)execution being transmitted */
	uint64_t va;
	uint32_t rkey;
	uint32_t len;	    /**< bytes of this execution */
	uint32_t start_psn; /**< PSN of its first response */
	uint32_t cur_psn;   /**< next response to transmit */
	/* ATOMIC */
	uint64_t orig; /**< value returned (and replayed): never re-executed */
};

/** Message being received (multi-packet SEND or WRITE). */
enum roce_resp_msg {
	ROCE_MSG_NONE = 0,
	ROCE_MSG_SEND,
	ROCE_MSG_WRITE,
};

/** Responder (roce_resp.c) state. */
struct roce_resp_state {
	uint32_t epsn;	   /**< expected PSN */
	uint32_t msn;	   /**< message sequence number (24 bit) */
	uint32_t ack_psn;  /**< PSN an ACK carries: last in-order SEND/WRITE packet */
	uint8_t msg;	   /**< enum roce_resp_msg */
	uint32_t recv_off; /**< SEND: bytes placed in the head receive WQE */
	uint64_t wr_va;	   /**< WRITE: RETH of the message in progress */
	uint32_t wr_rkey, wr_len, wr_off;
	struct roce_resp_res res[ROCE_MAX_RD_ATOMIC];
	uint32_t nres; /**< slots in use: max(1, max_dest_rd_atomic) */
	uint64_t res_seq;
	/* pending ACK / NAK */
	uint32_t unacked; /**< packets accepted since the last ACK */
	bool ack_now;
	uint64_t ack_at; /**< delayed ACK deadline (0: none) */
	bool nak_pending;
	uint8_t nak_syndrome;
	uint32_t nak_psn;
	bool fatal; /**< a fatal NAK is queued: drop requests, go to ERR after it */
	bool cnp_pending;
	bool becn_pending; /**< the next ACK carries BECN (cc->becn_ack) */
	/* selective recovery: packets placed ahead of ePSN (qp->ooo) */
	uint32_t rwqe_seq; /**< receive WQEs consumed so far (SPETH numbering) */
	uint32_t ooo_n;	   /**< valid descriptors in qp->ooo */
	uint32_t ooo_hi;   /**< one past the highest PSN placed out of order */
	/* --trace (roce_trace.h RX_LATE): a PSN after epsn arrived; PSNs below late_hi are late */
	bool late_gap;
	uint32_t late_hi;
	/* --recovery vrp: losses of the WRITE in progress, and of the last one ended */
	struct roce_vrp_loss vrp_cur, vrp_last;
	bool vrp_have_last;
};

/**
 * A request packet placed out of order (ROCE_RXV_PLACE): what the responder
 * needs to complete it in order later, when ePSN reaches it.
 */
struct roce_ooo_desc {
	bool valid;
	uint8_t se, sl;
	uint16_t f; /**< opcode flags */
	uint32_t psn;
	uint32_t len; /**< payload bytes */
	uint32_t imm;
	uint64_t va; /**< WRITE: RETH VA of the packet (FIRST/ONLY: of the message) */
	uint32_t rkey, dlen;
	uint8_t *dst;	       /**< WRITE: where the payload went */
	uint32_t wqe_seq, off; /**< SEND: SPETH */
};

#define ROCE_FEC_STASH 8	 /**< repairs after one frame, frames rebuilt by one frame */
#define ROCE_FEC_FRAME_MAX 4352u /**< largest FEC frame (lib/fec's FEC_FRAME_MAX) */
#define ROCE_FEC_TXQ 16		 /**< FEC frames kept while the port refuses them */

/**
 * Mean gap between packets over a window of whole blocks (roce_fec.c): the
 * gaps of the last completed window of `span` packets (K x D), each gap
 * capped, so a burst of back-to-back frames does not make it collapse.
 */
struct roce_fec_rate {
	uint64_t last; /**< time of the last sample */
	uint64_t sum;  /**< gaps summed in the window being filled */
	uint32_t n;    /**< gaps in it */
	uint64_t gap;  /**< mean gap of the last completed window (0: none yet) */
};

/**
 * The hold-back of one coded stream (roce_fec.c): packets after a hole in
 * a ring indexed by PSN, until the hole is filled or given up.
 */
struct roce_fec_hold {
	struct roce_fec_rate rate; /**< gap between received packets of the stream */
	bool release_now;	   /**< a held-for PSN was found unrecoverable */
	bool released_valid;
	uint32_t released;  /**< hole of the last released hold */
	uint8_t *held;	    /**< the ring (allocated at the first hole) */
	uint32_t *held_len; /**< 0: empty slot */
	uint32_t *held_psn;
	uint32_t cap, slot_size, nheld;
	uint32_t lo;	  /**< lowest PSN that may be held */
	uint32_t hole;	  /**< expected PSN when the current hold started */
	uint64_t hold_at; /**< hold-back deadline (0: none) */
	/** longest silence between received packets of the stream (a stall of
	 * the sender, the path or this receiver) in the current and the previous
	 * window of FEC_STALL_WINDOW_NS, from stall_win on (fec_stall_sample) */
	uint64_t stall_cur, stall_prev, stall_win;
};

/** FEC on an RC QP (roce_fec.c): the codec and the receive-side hold-back. */
struct roce_fec_qp {
	const struct roce_fec_ops *ops;
	void *st; /**< the codec's state */
	/* transmit */
	uint64_t flush_at;	      /**< idle flush deadline (0: none) */
	struct roce_fec_rate tx_rate; /**< gap between coded frames */
	int recode;		      /**< tx_recode state given to the codec (-1: not yet) */
	uint32_t npost;
	uint32_t post_len[ROCE_FEC_STASH];
	uint8_t post[ROCE_FEC_STASH][ROCE_FEC_FRAME_MAX]; /**< repairs after the frame in flight */
	/** FEC frames the port refused (-EBUSY), sent in order before anything else */
	uint32_t qhead, nq;
	uint32_t q_len[ROCE_FEC_TXQ];
	uint8_t q[ROCE_FEC_TXQ][ROCE_FEC_FRAME_MAX];
	/** a data frame coded and then refused by the port: its retry sends these
	 * bytes (the coded ones; a rebuild has another IPv4 identification) and
	 * then its repairs (post[]), and is not coded again */
	bool pend_valid;
	uint8_t pend_op;
	uint32_t pend_psn, pend_len;
	uint8_t pend[ROCE_MAX_FRAME];
	/* receive */
	uint32_t nreb;
	uint32_t reb_len[ROCE_FEC_STASH];
	uint8_t reb[ROCE_FEC_STASH][ROCE_FEC_FRAME_MAX]; /**< rebuilt by the current frame */
	/** hold-back per coded stream: [0] requests (responder), [1] READ responses (requester) */
	struct roce_fec_hold hold[2];
	uint32_t rx_hi; /**< --fec-adapt: highest request PSN received (+1), for bursts */
	bool rx_hi_valid;
};

struct roce_qp {
	struct roce_dev *dev;
	struct roce_pd *pd;
	struct roce_cq *scq, *rcq;
	void *context;
	uint32_t qpn;
	enum ibv_qp_type type;
	enum ibv_qp_state state;
	bool sq_sig_all;
	struct ibv_qp_attr attr; /**< attributes as last modified (roce_query_qp) */
	struct ibv_qp_cap cap;
	uint32_t mtu;  /**< path MTU in bytes */
	uint16_t pkey; /**< P_Key of attr.pkey_index */
	uint8_t remote_mac[6];
	bool remote_mac_set;
	struct roce_pkt tmpl;  /**< RC/UC frame template (l2, l3, udp) from RTR on */
	uint32_t window;       /**< RC in-flight packet limit (--max-inflight) */
	struct roce_lwin lwin; /**< loss-reactive window below it (cfg.loss_window) */
	uint32_t rate_kbps;    /**< IBV_QP_RATE_LIMIT pacing of requests (0: none) */
	struct roce_sq sq;
	struct roce_rq rq;
	struct roce_req_state req;
	struct roce_comp_state comp;
	struct roce_resp_state resp;
	const struct roce_recovery_ops *rec;
	void *rec_priv;
	struct vrp_tolerance vrp_tol;	/**< --recovery vrp: tolerance of received WRITEs */
	struct roce_ooo_desc *ooo;	/**< selective recovery: ooo_size descriptors, or NULL */
	uint32_t ooo_size;		/**< power of two */
	uint32_t max_ooo;		/**< out-of-order span the receiver accepts (PSNs) */
	struct roce_psn_bitmap *rd_ooo; /**< selective: READ responses placed ahead of una */
	const struct roce_cc_ops *cc;
	void *cc_priv;
	struct roce_rtt_est rtt; /**< adaptive RTO estimator (roce_rtt.c) */
	uint64_t *rtt_sent;	 /**< RC: send stamp per PSN, rtt_mask + 1 slots (roce_rtt.c) */
	uint32_t rtt_mask;
	bool rtt_dirty;		 /**< a stamp was written since the ring was last cleared */
	struct roce_fec_qp *fec; /**< FEC on (roce_qp_set_fec), or NULL */
	bool rto_spur_armed;	 /**< a timer expiry resent rto_spur_psn: is it spurious? */
	uint32_t rto_spur_psn;	 /**< the oldest PSN the last expiry resent */
	uint64_t rto_spur_at;	 /**< when it was resent (engine clock) */
	uint64_t rto_spur_orig;	 /**< its one earlier send (0: none, or it was resent before) */
	bool rto_frto_armed;	 /**< F-RTO: is rto_spur_psn + 1 acknowledged from an early send? */
	bool rto_found_spurious; /**< the latest expiry was found spurious (roce_rtt_info) */
	uint32_t rto_spur_nxt;	 /**< the next PSN to send at the expiry */
	struct roce_stats stats;
	struct roce_qp *dirty_next; /**< roce_dev_rx_burst: QPs to run at the end */
	bool dirty;
};

struct roce_dev {
	struct roce_dev_cfg cfg;
	struct roce_dev_ops ops;
	void *ctx;
	uint64_t now;	 /**< time of the current entry point */
	bool tx_blocked; /**< ops->tx refused a frame in this run */
	uint64_t
	    tx_held_since; /**< ops->tx refuses frames since then (PFC pause, full ring); 0: not */
	uint64_t tx_refused_at; /**< the latest refusal */
	uint16_t ip_id;
	struct roce_stats stats;
	uint64_t parse_err[NET_E__COUNT];
	struct roce_qp **qp_tbl; /**< index = qpn - ROCE_FIRST_QPN */
	uint32_t qp_next, nqp;
	struct roce_mr **mr_tbl; /**< index = (key >> 8) - 1 */
	uint32_t mr_next, nmr;
	uint8_t mr_gen;
	struct roce_list pds, cqs, ahs;
	uint32_t npd, ncq, nah;
	uint64_t log_window; /**< start of the current log-rate second */
	uint32_t log_count;
	struct roce_gsi gsi; /**< QP1 (roce_gsi.c) */
	uint8_t *txcur;	     /**< ops->tx_buf()'s buffer for the frame being built, or NULL */
	uint8_t txbuf[ROCE_MAX_FRAME];
};

/** One received, parsed packet on its way to a QP. */
struct roce_rx {
	const uint8_t *frame;
	struct roce_pkt pkt;
	const struct roce_opcode_info *op;
	const uint8_t *payload;
	uint32_t len; /**< payload bytes (pad excluded) */
	uint32_t psn;
};

/* ------------------------------------------------------------------------- */
/* Counters and logging (roce_dev.c)                                         */
/* ------------------------------------------------------------------------- */

static inline void
roce_dev_stat(struct roce_dev *dev, enum roce_stat id, uint64_t n)
{
	dev->stats.v[id] += n;
}

static inline void
roce_qp_stat(struct roce_qp *qp, enum roce_stat id, uint64_t n)
{
	qp->stats.v[id] += n;
	qp->dev->stats.v[id] += n;
}

void roce_log(struct roce_dev *dev, enum roce_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define qp_log(qp, level, fmt, ...)                                                                \
	roce_log((qp)->dev, (level), "qp 0x%06x: " fmt, (qp)->qpn, ##__VA_ARGS__)

/** One ROCE_LOG_TRACE line "qp Q: MACHINE PSN P: FROM -> TO" (not rate limited). */
void roce_trace(const struct roce_qp *qp, const char *machine, uint32_t psn, const char *from,
		const char *to);

/** Is the transition trace on (roce_dev_cfg.log_level ROCE_LOG_TRACE)? One load and compare. */
#define roce_tracing(qp) roce_unlikely((qp)->dev->cfg.log_level >= ROCE_LOG_TRACE)

/** The smallest power of two >= @p n (1 for 0): ring sizes of the queues and CQs. */
static inline uint32_t
roce_pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/** RC in-flight limit now: the QP window, lowered by the loss-reactive window. */
static inline uint32_t
roce_qp_window(const struct roce_qp *qp)
{
	return qp->dev->cfg.loss_window ? roce_lwin_window(&qp->lwin, qp->window) : qp->window;
}

/** Run a QP's transmit side: responses first (they are ordered), then requests. */
void roce_qp_run(struct roce_qp *qp);
/** True if the QP could transmit now (used by roce_dev_busy). */
bool roce_qp_busy(struct roce_qp *qp);
/** Earliest armed deadline of a QP, or UINT64_MAX. */
uint64_t roce_qp_next_deadline(const struct roce_qp *qp);
/** Fire the QP's expired timers at dev->now. */
void roce_qp_timers(struct roce_qp *qp);

/* ------------------------------------------------------------------------- */
/* Receive dispatch (roce_recv.c) and FEC (roce_fec.c)                       */
/* ------------------------------------------------------------------------- */

/** Parse a frame for the receive path (drops counted). 0 or the drop counter. */
int roce_rx_parse(struct roce_dev *dev, const uint8_t *frame, size_t len, struct roce_rx *rx);
/** Hand a checked packet to the responder (requests) or the completer (responses). */
void roce_rx_deliver(struct roce_qp *qp, const struct roce_rx *rx);
/** A frame (data or FEC) for a QP with FEC on: codec, rebuilt frames, hold-back. */
void roce_fec_rx(struct roce_qp *qp, const struct roce_rx *rx, size_t len);
/** Transmit a frame of a QP with FEC on: its COMMIT before, its repairs after. As ops->tx. */
int roce_fec_tx(struct roce_qp *qp, const uint8_t *frame, size_t len, const struct roce_pkt *p);
/** FEC deadlines (hold-back, idle flush) of a QP with FEC on, or UINT64_MAX. */
uint64_t roce_fec_next_deadline(const struct roce_qp *qp);
/** FEC on: the sender's idle flush delay (a tail's repair leaves that late); 0 without FEC. */
uint64_t roce_fec_tx_idle_ns(const struct roce_qp *qp);
void roce_fec_timers(struct roce_qp *qp);
void roce_fec_idle_flush(struct roce_qp *qp);
void roce_fec_reset(struct roce_qp *qp);
void roce_fec_free(struct roce_qp *qp);

/* ------------------------------------------------------------------------- */
/* Frames (roce_xmit.c)                                                      */
/* ------------------------------------------------------------------------- */

/** Build l2/l3 of a frame template for a path (ah_attr + peer MAC). */
int roce_tmpl_init(struct roce_dev *dev, struct roce_pkt *tmpl, const struct ibv_ah_attr *ah,
		   const uint8_t mac[6]);
/** Where the payload of a packet with @p p's headers goes in the transmit buffer. */
uint8_t *roce_tx_payload(struct roce_dev *dev, const struct roce_pkt *p);
/**
 * Build the frame for @p p (payload already at roce_tx_payload()) and hand it
 * to ops->tx. @p ecn marks it ECT(0) if the device has ECN on.
 * Returns 0, or a negative errno if the frame could not be built or sent.
 */
int roce_tx_pkt(struct roce_qp *qp, struct roce_pkt *p, uint32_t payload_len, bool ecn);
/** Fill the BTH fields every packet of an RC/UC QP shares (P_Key, destination QP). */
void roce_bth_init(const struct roce_qp *qp, struct roce_pkt *p, uint8_t opcode, uint32_t psn);
/** UDP source port of a path: from the flow label if set, else a hash of both QPNs. */
uint16_t roce_path_sport(uint32_t flow_label, uint32_t src_qpn, uint32_t dst_qpn);
/** Transport base opcode (ROCE_OP_RC_BASE / UC / UD) of a QP. */
uint8_t roce_qp_op_base(const struct roce_qp *qp);

/* ------------------------------------------------------------------------- */
/* Memory (roce_mr.c)                                                        */
/* ------------------------------------------------------------------------- */

/** The MR of a key, or NULL (unknown or deregistered). */
struct roce_mr *roce_mr_lookup(struct roce_dev *dev, uint32_t key);
/**
 * Resolve a remote access [va, va+len) with @p rkey for an operation needing
 * @p access (IBV_ACCESS_REMOTE_*) by a QP of @p pd. Returns the host pointer,
 * or NULL on any violation (unknown key, other PD, access flag, bounds).
 */
uint8_t *roce_mr_remote(struct roce_pd *pd, uint32_t rkey, uint64_t va, uint32_t len,
			unsigned int access);
/** The byte sum of a local SGE list in *total; -EINVAL past ROCE_MAX_MSG_SIZE. Keys are
 * checked on use (roce_sge_gather / roce_sge_scatter: IBV_WC_LOC_PROT_ERR). */
int roce_sge_total(const struct ibv_sge *sge, uint32_t n, uint32_t *total);
/** The status for an SGE list gather/scatter refused: LOC_QP_OP_ERR (key, PD, right) or
 * LOC_PROT_ERR (range), as rxe gives them. */
enum ibv_wc_status roce_sge_fault(struct roce_pd *pd, const struct ibv_sge *sge, uint32_t n,
				  unsigned int access);
/** Copy @p len bytes at offset @p off of an SGE list to @p dst. -EACCES / -ENOSPC. */
int roce_sge_gather(struct roce_pd *pd, const struct ibv_sge *sge, uint32_t n, uint32_t off,
		    uint8_t *dst, uint32_t len);
/** Copy @p len bytes from @p src to offset @p off of an SGE list. -EACCES / -ENOSPC. */
int roce_sge_scatter(struct roce_pd *pd, const struct ibv_sge *sge, uint32_t n, uint32_t off,
		     const uint8_t *src, uint32_t len);
/** Free every MR of a device (roce_dev_destroy). */
void roce_mr_destroy_all(struct roce_dev *dev);

/* ------------------------------------------------------------------------- */
/* Completion queues (roce_cq.c)                                             */
/* ------------------------------------------------------------------------- */

/** Append a completion; @p solicited for receive completions of SE messages. */
void roce_cq_push(struct roce_cq *cq, const struct ibv_wc *wc, bool solicited);
/** The same with the VRP loss map of the message (a WRITE with immediate under vrp), for
 * roce_poll_cq_ex. */
void roce_cq_push_loss(struct roce_cq *cq, const struct ibv_wc *wc, bool solicited,
		       const struct roce_vrp_loss *loss);
void roce_cq_destroy_all(struct roce_dev *dev);

/* ------------------------------------------------------------------------- */
/* QPs (roce_qp.c)                                                           */
/* ------------------------------------------------------------------------- */

struct roce_qp *roce_qp_lookup(struct roce_dev *dev, uint32_t qpn);
/** Move to ERR (IBTA: any state -> Error) and flush both queues. */
void roce_qp_to_err(struct roce_qp *qp);
/** UC/UD send-side error: move to SQE and flush the send queue. */
void roce_qp_to_sqe(struct roce_qp *qp);
/** States in which the responder accepts requests (RTR, RTS, SQD, SQE). */
bool roce_qp_can_receive(const struct roce_qp *qp);
/** States in which the requester/completer work (RTS, SQD; SQE for UC/UD completions). */
bool roce_qp_can_send(const struct roce_qp *qp);
void roce_qp_destroy_all(struct roce_dev *dev);
/** P_Key match (IBTA partitioning): same key number, at least one full member. */
bool roce_pkey_match(uint16_t a, uint16_t b);
/** A frame to QP 1 (roce_gsi.c): checked, counted, delivered; returns 0. */
int roce_gsi_rx(struct roce_dev *dev, const struct roce_rx *rx);
/** Name of a QP state ("RTS"). */
const char *roce_qp_state_name(enum ibv_qp_state s);

/* ------------------------------------------------------------------------- */
/* Requester (roce_req.c)                                                    */
/* ------------------------------------------------------------------------- */

void roce_req_reset(struct roce_qp *qp);
/** Transmit up to *budget request packets (retransmissions first). */
void roce_req_run(struct roce_qp *qp, uint32_t *budget);
/** True if the requester has something it may send now. */
bool roce_req_busy(struct roce_qp *qp);
/** The started WQE whose PSN range holds @p psn, or NULL. */
struct roce_send_wqe *roce_req_find_wqe(struct roce_qp *qp, uint32_t psn);
/** Last PSN of a started WQE. */
static inline uint32_t
roce_wqe_last_psn(const struct roce_send_wqe *wqe)
{
	return roce_psn_add(wqe->first_psn, wqe->npkts - 1);
}
/** READ and atomics: completed by a response carrying data, not by an ACK. */
static inline bool
roce_wqe_is_rd_atomic(const struct roce_send_wqe *wqe)
{
	return wqe->opcode == IBV_WR_RDMA_READ || wqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       wqe->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}
/** (Re)arm or stop the retransmit timer after a change of una/nxt. */
void roce_req_rearm(struct roce_qp *qp);

/** Arm the retransmit timer from now (a retransmission was just scheduled). */
void roce_req_rearm_now(struct roce_qp *qp);

/* ------------------------------------------------------------------------- */
/* RTT sampler and adaptive RTO (roce_rtt.c)                                 */
/* ------------------------------------------------------------------------- */

/** (Re)allocate an RC QP's stamp ring for its window (keeps a large enough one). -ENOMEM. */
int roce_rtt_alloc(struct roce_qp *qp);
void roce_rtt_free(struct roce_qp *qp);
/** RTS from RTR: no samples, the initial timeout, every stamp cleared. */
void roce_rtt_reset(struct roce_qp *qp);
/** Request @p psn was transmitted at dev->now (@p retx: a retransmission, Karn). */
void roce_rtt_sent(struct roce_qp *qp, uint32_t psn, bool retx);
/** Send time of outstanding @p psn, or 0 if it has no stamp. */
uint64_t roce_rtt_sent_at(const struct roce_qp *qp, uint32_t psn);
/**
 * A response moved una from @p old_una to @p una: clear the range and, if
 * @p has_psn, sample the RTT of the response's PSN @p psn (Karn's rule).
 */
void roce_rtt_acked(struct roce_qp *qp, uint32_t old_una, uint32_t una, bool has_psn, uint32_t psn);
/** A RACK/SACK named @p psn received: one RTT sample if it was sent once (roce_rtt.c). */
void roce_rtt_noticed(struct roce_qp *qp, uint32_t psn);
/** The retransmit timer expired: back the adaptive RTO off (RTT and D doubled). */
void roce_rtt_expired(struct roce_qp *qp);
/** The retransmit timeout in force (0: no timer). */
uint64_t roce_qp_rto_ns(const struct roce_qp *qp);
/** ops->tx takes frames again after refusing them since dev->tx_held_since. */
void roce_rtt_tx_resumed(struct roce_dev *dev);
/** True while ops->tx refuses frames (adaptive RTO: no expiry); ends a stale hold. */
bool roce_rtt_tx_held(struct roce_dev *dev);

/* ------------------------------------------------------------------------- */
/* Completer (roce_comp.c)                                                   */
/* ------------------------------------------------------------------------- */

void roce_comp_reset(struct roce_qp *qp);
/** Process a response (ACK, NAK, READ response, atomic ACK). */
void roce_comp_rx(struct roce_qp *qp, const struct roce_rx *rx);
/** The retransmit timer expired. */
void roce_comp_timeout(struct roce_qp *qp);
/** The RNR wait after an RNR NAK is over. */
void roce_comp_rnr_done(struct roce_qp *qp);
/** Complete the oldest send WQE (UC/UD after transmission, or any with an error). */
void roce_comp_complete_head(struct roce_qp *qp, enum ibv_wc_status status);
/** Complete every outstanding send WQE with IBV_WC_WR_FLUSH_ERR. */
void roce_comp_flush(struct roce_qp *qp);
/** A send WQE completed with @p status: CQE if signaled or failed. */
void roce_comp_send_cqe(struct roce_qp *qp, const struct roce_send_wqe *wqe,
			enum ibv_wc_status status);
/** A CNP for this QP arrived. */
void roce_comp_cnp(struct roce_qp *qp);
/** The oldest outstanding send WQE is an RDMA READ (its responses are awaited: FEC hold-back). */
bool roce_comp_awaits_read(struct roce_qp *qp);

/* ------------------------------------------------------------------------- */
/* Responder (roce_resp.c)                                                   */
/* ------------------------------------------------------------------------- */

void roce_resp_reset(struct roce_qp *qp);
/** Process a request packet. */
void roce_resp_rx(struct roce_qp *qp, const struct roce_rx *rx);
/** Transmit pending READ responses, atomic ACKs, then the ACK/NAK, up to *budget. */
void roce_resp_run(struct roce_qp *qp, uint32_t *budget);
bool roce_resp_busy(const struct roce_qp *qp);
/** The delayed-ACK deadline passed. */
void roce_resp_ack_timer(struct roce_qp *qp);
/** Complete every posted receive WQE with IBV_WC_WR_FLUSH_ERR. */
void roce_resp_flush(struct roce_qp *qp);
/** A request with ECN CE arrived: ask CC whether to send a CNP. */
void roce_resp_ecn_ce(struct roce_qp *qp);

#endif /* ROCE_INT_H */
