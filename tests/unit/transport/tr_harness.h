/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file tr_harness.h
 * Two roce_dev instances joined by an in-memory wire, for driving the
 * transport packet by packet. Frames sent by side d wait in queue d until the
 * test (or tr_run) delivers them to the other side. Faults are deterministic
 * rules ("drop request PSN 5 and its first 2 retransmissions") or seeded
 * random loss / duplication / reordering. The clock is fake: tr_run jumps it
 * to the next engine deadline whenever the wire is idle.
 */
#ifndef TR_HARNESS_H
#define TR_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_trace.h"
#include "roce_verbs.h"

#define TR_A 0
#define TR_B 1
#define TR_BUF_SIZE (1u << 20) /**< default size of each side's buffer */
#define TR_MAX_RULES 16
#define TR_MAX_TRACE 256 /**< trace events kept per side (tr_opts.trace) */

/** Which packets a rule matches. */
enum tr_match {
	TR_ANY,	 /**< every RoCE packet */
	TR_REQ,	 /**< request packets (SEND/WRITE/READ request/atomic) */
	TR_RESP, /**< ACK/NAK, READ responses, atomic ACKs */
	TR_ACK,	 /**< RC_ACKNOWLEDGE only */
	TR_READ_RESP,
	TR_ATOMIC_ACK,
	TR_RACK, /**< Go-Back-ONE RACK; the rule's PSN is the one it reports received */
	TR_SACK, /**< IRN SACK; likewise */
	TR_FEC,	 /**< FEC repair (0xD0); the rule's PSN is its BTH PSN, the block's first member */
	TR_VRP_NACK, /**< VRP NACK; the rule's PSN is the last one it names (NTETH) */
	TR_VRP_LOSS, /**< VRP LOSS summary (0xE3); the rule's PSN is its BTH PSN (message's last) */
};

enum tr_action {
	TR_DROP,
	TR_DUP,	    /**< deliver twice */
	TR_DELAY,   /**< hold back until the next frame in the same direction passed it */
	TR_MARK_CE, /**< set ECN CE in the IP header */
	TR_REFUSE,  /**< ops->tx refuses it (-ENOBUFS, a full TX ring): not sent, the engine retries
		     */
};

struct tr_rule {
	int dir; /**< sender side (TR_A / TR_B), -1 for both */
	enum tr_match match;
	int64_t psn; /**< -1: any PSN */
	enum tr_action action;
	int count; /**< matches to act on ("drop n and its first k resends": k + 1) */
};

struct tr_frame {
	uint8_t *data;
	size_t len;
	struct tr_frame *next;
};

struct tr_queue {
	struct tr_frame *head, *tail;
	size_t count;
};

struct tr_side {
	struct tr_wire *w;
	int idx;
	struct roce_dev *dev;
	struct roce_pd *pd;
	struct roce_cq *scq, *rcq;
	struct roce_qp *qp;
	enum ibv_qp_type type;
	struct roce_ah *ah; /**< UD: address of the peer */
	struct roce_mr *mr;
	uint8_t *buf; /**< buf_size bytes; [mr_guard, buf_size - mr_guard) registered */
	uint32_t buf_size;
	uint8_t mac[6];
	union ibv_gid gid;
	int refuse_tx; /**< refuse this many next ops->tx calls (-ENOBUFS) */
	bool paused;   /**< refuse every ops->tx as PFC-paused (ROCE_TX_PAUSED) */
	unsigned int cq_events;
	/* TR_TX_BUF=1: the engine builds payload frames in a buffer lent by ops->tx_buf */
	uint8_t *lend;			/**< ROCE_MAX_FRAME bytes, poisoned at every loan */
	uint64_t lend_calls, lend_used; /**< loans, and frames that came back in the loan */
	/* tr_opts.trace: the engine's trace events (roce_trace.h), in order */
	struct roce_trace_event trace[TR_MAX_TRACE];
	unsigned int ntrace; /**< events seen (may exceed TR_MAX_TRACE) */
};

/** Test knobs; zero means the harness default. */
struct tr_opts {
	enum ibv_qp_type type; /**< IBV_QPT_RC unless set */
	enum ibv_mtu mtu;      /**< default IBV_MTU_1024 */
	bool ipv6;
	bool vlan;
	uint8_t timeout;		   /**< default 14 (67 ms) */
	uint8_t retry_cnt;		   /**< default 7 */
	uint8_t rnr_retry;		   /**< default 7 */
	uint8_t min_rnr_timer;		   /**< default 1 (10 us) */
	uint8_t max_rd_atomic;		   /**< default 16 */
	uint32_t max_send_wr, max_recv_wr; /**< default 1024 */
	uint32_t max_sge;		   /**< default 4 */
	uint32_t max_inline;		   /**< default 256 */
	uint32_t window;		   /**< default: device default */
	uint32_t cqe;			   /**< default 65536 */
	unsigned int access;		   /**< QP access flags, default all remote */
	bool sq_sig_all;
	uint32_t sq_psn, rq_psn; /**< start PSNs (A's sq_psn = B's rq_psn, and vice versa) */
	bool psn_set;
	const char *cc;				    /**< congestion control by name */
	const char *recovery;			    /**< loss recovery by name (default "gbn") */
	uint32_t max_ooo;			    /**< roce_dev_cfg.max_ooo */
	uint64_t link_bps, rto_low_ns, rto_high_ns; /**< roce_dev_cfg (IRN) */
	bool no_loss_window;		 /**< turn the loss-reactive window off (roce_lwin.h) */
	uint32_t loss_window_init;	 /**< slow start from this many packets (0: none) */
	bool fec_adapt;			 /**< roce_dev_cfg.fec_adapt (--fec-adapt) */
	bool no_ecn;			 /**< cfg.ecn off (the CC alone decides ECT(0)) */
	uint32_t buf_size;		 /**< default TR_BUF_SIZE */
	uint32_t mr_guard;		 /**< bytes at both ends of the buffer left out of the MR */
	enum roce_log_level log_level;	 /**< devices' roce_dev_cfg.log_level (0: the default) */
	bool rto_fixed;			 /**< --rto fixed (IBTA timer); default adaptive */
	uint64_t rto_min_ns, rto_max_ns; /**< adaptive RTO bounds (0: device default) */
	/** the stall allowance's half-life (roce_dev_cfg.rto_stall_ns; 0: device default) */
	uint64_t rto_stall_ns;
	bool no_rto_stall; /**< no stall allowance (rto_stall_ns 0) */
	bool trace;	   /**< give the devices a roce_dev_ops.trace that records events */
	const char
	    *fec; /**< roce_qp_set_fec on both QPs ("xor:8,2"); the codec must be registered */
};

/** Every log line of both devices (side TR_A / TR_B) goes here too when set. */
extern void (*tr_log_hook)(int side, enum roce_log_level level, const char *msg);

struct tr_wire {
	struct tr_opts opts;
	uint64_t now;
	struct tr_side side[2];
	struct tr_queue q[2];
	struct tr_frame *held[2]; /**< TR_DELAY frame per direction */
	struct tr_rule rules[TR_MAX_RULES];
	int nrules;
	/* seeded random faults, per mille */
	uint64_t rng;
	unsigned int p_drop, p_dup, p_reorder;
	/* what happened */
	uint64_t sent, delivered, dropped, duplicated, delayed;
	size_t max_queued[2];
	bool capture_only; /**< tr_run never delivers (window tests) */
};

/** Build both sides and connect their QPs (RESET -> INIT -> RTR -> RTS). */
void tr_init(struct tr_wire *w, const struct tr_opts *o);
void tr_fini(struct tr_wire *w);

/** Add a fault rule. */
void tr_rule(struct tr_wire *w, int dir, enum tr_match match, int64_t psn, enum tr_action action,
	     int count);
/** Random faults with a fixed seed, per mille of the frames (both directions). */
void tr_random_faults(struct tr_wire *w, uint64_t seed, unsigned int drop, unsigned int dup,
		      unsigned int reorder);

/** Deliver the oldest frame sent by side @p dir; false if none. */
bool tr_deliver_one(struct tr_wire *w, int dir);
/** Drop the oldest queued frame sent by side @p dir; false if none. */
bool tr_discard_one(struct tr_wire *w, int dir);
/** Deliver and poll until nothing moves and no timer is armed, or @p max_steps. Returns steps. */
unsigned int tr_run(struct tr_wire *w, unsigned int max_steps);
/** Poll both devices at the current time. */
void tr_poll(struct tr_wire *w);

/* Work requests on side @p s's QP; offsets index side buffers. */
int tr_post_send(struct tr_side *s, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t loff,
		 uint32_t len, uint32_t roff, unsigned int flags);
int tr_post_imm(struct tr_side *s, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t loff,
		uint32_t len, uint32_t roff, uint32_t imm_host);
/** tr_post_imm with a VRP tolerance for the WRITE (roce_post_send_vrp; NULL: none). */
int tr_post_vrp(struct tr_side *s, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t loff,
		uint32_t len, uint32_t roff, uint32_t imm_host, const struct roce_vrp_wr *vrp);
int tr_post_atomic(struct tr_side *s, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t loff,
		   uint32_t roff, uint64_t compare_add, uint64_t swap);
int tr_post_recv(struct tr_side *s, uint64_t wr_id, uint32_t off, uint32_t len);
/** Poll up to @p n completions of side @p s's send (recv = false) or receive CQ. */
int tr_poll_cq(struct tr_side *s, bool recv, struct ibv_wc *wc, int n);

/** Move a QP through RESET -> INIT -> RTR -> RTS again (after ERR). */
void tr_reconnect(struct tr_wire *w);
/** A counter of a side's device. */
uint64_t tr_dev_stat(const struct tr_side *s, enum roce_stat id);
/** Fill a side's buffer with a pattern derived from @p seed. */
void tr_fill(struct tr_side *s, uint32_t off, uint32_t len, uint32_t seed);
/** Deterministic 64-bit PRNG (splitmix64). */
uint64_t tr_rand(uint64_t *state);

#endif /* TR_HARNESS_H */
