/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_recovery.h
 * Pluggable loss recovery for RC QPs, selected per QP by name.
 *
 * The sender side is told what happens to the PSN stream (sent, cumulatively
 * acknowledged, lost by NAK / timeout / RNR) and answers one question: which
 * already-sent PSN to transmit next, if any (otherwise the requester sends new
 * data). The requester can (re)build the packet of any outstanding PSN, so an
 * implementation may go back N (gbn), resend single PSNs (selective repeat,
 * IRN) or nothing at all (FEC-only).
 *
 * The receiver side classifies every request PSN against the expected PSN
 * and says whether to execute it, answer it as a duplicate, drop it, drop
 * it and send a PSN-sequence-error NAK, or (selective modes) place it out of
 * order now and complete it in order once the gap before it is filled.
 *
 * Selective modes (ROCE_REC_F_PLACE) make three more things of the engine:
 *  - the requester sends the self-placing extension opcodes (docs/wire.md):
 *    WRITE MIDDLE/LAST with the RETH of the packet, SENDs with the SPETH
 *    (receive-WQE sequence number and offset), so any packet can be placed
 *    on arrival;
 *  - the receiver places a packet the mode answers ROCE_RXV_PLACE, keeps a
 *    descriptor of it, tells the mode (rx_placed), and sends the notice the
 *    mode asks for (RACK or SACK: a cumulative ACK plus the PSN received);
 *    when ePSN advances it asks the mode how many following PSNs are already
 *    placed (rx_advance) and completes them in order (IBTA: completions are
 *    in order);
 *  - the sender hands every RACK/SACK to the mode (tx_notice); tx_next is the
 *    retransmit queue, always served ahead of new data.
 *
 * A mode compiles against the public headers only: this one, roce_psn.h,
 * roce_psn_bitmap.h and roce_stats.h. What it needs of the QP it gets from
 * roce_recovery_env(); it counts through roce_recovery_count().
 *
 * Callbacks run inside the engine: they must not call back into roce_* verbs.
 * All PSN arithmetic goes through roce_psn.h.
 */
#ifndef ROCE_RECOVERY_H
#define ROCE_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_stats.h"

struct roce_qp;
struct vrp_tolerance;
struct roce_vrp_wr;

/** Why PSNs are considered lost. */
enum roce_loss_kind {
	ROCE_LOSS_NAK_SEQ, /**< NAK PSN sequence error: the responder expects @p psn */
	ROCE_LOSS_IMPLIED, /**< a later response shows READ/atomic responses were lost */
	ROCE_LOSS_TIMEOUT, /**< local ACK timer expired; @p psn is the oldest unacked */
	ROCE_LOSS_RNR,	   /**< RNR timer expired after an RNR NAK for @p psn */
};

/** Receiver verdict for one request packet. */
enum roce_rx_verdict {
	ROCE_RXV_ACCEPT,    /**< the expected PSN: execute it */
	ROCE_RXV_DUPLICATE, /**< already executed: re-ACK, replay READ/atomic, never re-place */
	ROCE_RXV_DROP,	    /**< out of sequence: drop silently */
	ROCE_RXV_NAK_SEQ,   /**< out of sequence: drop, NAK (sequence error) the expected PSN */
	ROCE_RXV_PLACE, /**< after ePSN: place it now if it is self-placing, complete it in order */
};

/** What a receiver tells the sender about one out-of-order packet (docs/wire.md). */
enum roce_rx_notice {
	ROCE_NOTICE_NONE = 0,
	ROCE_NOTICE_RACK,     /**< Go-Back-ONE RACK (opcode 0xC0) */
	ROCE_NOTICE_SACK,     /**< IRN SACK (opcode 0xC1) */
	ROCE_NOTICE_VRP_ACK,  /**< VRP cumulative + single ACK (opcode 0xE0) */
	ROCE_NOTICE_VRP_NACK, /**< VRP NACK: the PSNs psn - run .. psn must arrive (opcode 0xE1) */
};

/** roce_recovery_ops.flags */
enum roce_recovery_flags {
	ROCE_REC_F_PLACE = 1 << 0, /**< receiver places out of order: send self-placing opcodes */
	/**
	 * With ROCE_REC_F_PLACE: the receiver may give up a missing PSN of an
	 * RDMA WRITE (VRP's tolerated loss): when ePSN reaches a PSN the mode
	 * calls tolerated (rx_tolerated), the engine zero-fills its bytes in the
	 * target memory, counts them lost and moves on (docs/vrp.md).
	 */
	ROCE_REC_F_TOLERATE = 1 << 1,
};

struct roce_recovery_ops {
	const char *name; /**< selection key, e.g. "gbn" */
	size_t priv_size; /**< per-QP state, zeroed and passed as @p priv */

	/** QP reached RTS (sender) or RTR (receiver), or was reset: (re)initialise @p priv. */
	void (*init)(struct roce_qp *qp, void *priv);

	/* ---- sender (requester/completer) ---- */
	/**
	 * The packet of @p psn was transmitted; the next PSN after it is
	 * @p next (psn + 1, or past the whole READ for a READ request).
	 */
	void (*tx_sent)(struct roce_qp *qp, void *priv, uint32_t psn, uint32_t next, bool retx);
	/** The oldest unacknowledged PSN advanced to @p una. */
	void (*tx_acked)(struct roce_qp *qp, void *priv, uint32_t una);
	/**
	 * PSNs from @p psn on are lost (@p nxt is the next new PSN). Return
	 * true if a retransmission was scheduled; false to ignore the report
	 * (e.g. a repeated NAK for a gap already being repaired). The engine
	 * charges retry_cnt only for reports that return true.
	 */
	bool (*tx_lost)(struct roce_qp *qp, void *priv, uint32_t psn, uint32_t nxt,
			enum roce_loss_kind kind);
	/**
	 * Which sent PSN to transmit next: return true with *psn set, or
	 * false to let the requester send new data. @p una and @p nxt bound
	 * the PSNs that may be retransmitted: [una, nxt).
	 */
	bool (*tx_next)(struct roce_qp *qp, void *priv, uint32_t una, uint32_t nxt, uint32_t *psn);

	/* ---- receiver (responder) ---- */
	/** Classify request @p psn when the responder expects @p epsn. */
	enum roce_rx_verdict (*rx_packet)(struct roce_qp *qp, void *priv, uint32_t epsn,
					  uint32_t psn);
	/** The responder sent a NAK (sequence error or RNR) for @p psn. */
	void (*rx_nak_sent)(struct roce_qp *qp, void *priv, uint32_t psn);

	/* ---- selective modes (flags & ROCE_REC_F_PLACE); NULL otherwise ---- */
	unsigned int flags; /**< enum roce_recovery_flags */
	/**
	 * Receiver: @p psn (after @p epsn, answered ROCE_RXV_PLACE) was placed,
	 * or could not be (@p placed false: not self-placing, no receive WQE,
	 * a READ/atomic, a check failed; the packet was dropped). Return the
	 * notice to send the sender about it.
	 */
	enum roce_rx_notice (*rx_placed)(struct roce_qp *qp, void *priv, uint32_t epsn,
					 uint32_t psn, bool placed);
	/**
	 * Receiver: ePSN advanced to @p epsn. Return how many PSNs from @p epsn
	 * on were already placed (the engine completes them in order and moves
	 * ePSN past them); the mode forgets them.
	 */
	uint32_t (*rx_advance)(struct roce_qp *qp, void *priv, uint32_t epsn);
	/**
	 * Sender: a RACK or SACK arrived. The receiver expects @p epsn (it
	 * executed everything before) and has @p psn. The engine has applied
	 * the cumulative part (@p una is the oldest unacknowledged PSN now; it
	 * stays before @p epsn while READ/atomic responses are on their way).
	 * @p psn lies in [una, nxt), or is una - 1 when the notice named
	 * nothing outstanding; the receiver has the @p run PSNs right before
	 * @p psn too (clipped to una), so one lost notice costs nothing.
	 */
	void (*tx_notice)(struct roce_qp *qp, void *priv, enum roce_rx_notice kind, uint32_t una,
			  uint32_t epsn, uint32_t psn, uint32_t run, uint32_t nxt);
	/**
	 * Sender, optional: the retransmit timeout to arm now, given the engine's
	 * (@p dflt_ns) and the PSNs outstanding. 0 keeps the engine's.
	 */
	uint64_t (*tx_rto)(struct roce_qp *qp, void *priv, uint32_t outstanding, uint64_t dflt_ns);
	/** Sender, optional: the in-flight cap in packets for new data now (0: no cap). */
	uint32_t (*tx_cap)(struct roce_qp *qp, void *priv);

	/* ---- loss-tolerant modes (flags & ROCE_REC_F_TOLERATE); NULL otherwise ---- */
	/**
	 * Receiver: the RDMA WRITE message starting at @p first_psn, @p len
	 * bytes, was seen (its FIRST/ONLY executed in order or placed); @p epsn
	 * is the expected PSN. Called after rx_packet / rx_placed for that packet.
	 * @p wr: the tolerance the message carries itself (its FIRST's VTETH,
	 * roce_post_send_vrp), NULL for none: the QP's applies.
	 */
	void (*rx_msg)(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t first_psn,
		       uint64_t len, const struct roce_vrp_wr *wr);
	/** Receiver: is @p psn (== ePSN, not placed) a loss the mode tolerated? */
	bool (*rx_tolerated)(struct roce_qp *qp, void *priv, uint32_t psn);
	/**
	 * Receiver: the next NACK to send, if any: the PSNs from @p *psn - @p *run
	 * to @p *psn must be retransmitted. The engine asks after every packet
	 * until it returns false.
	 */
	bool (*rx_nack)(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t *psn,
			uint32_t *run);
};

/** What a mode may know of its QP (roce_recovery_env). */
struct roce_recovery_env {
	uint64_t now_ns;   /**< time of the current engine entry point */
	uint32_t mtu;	   /**< path MTU in bytes */
	uint32_t window;   /**< RC in-flight packet window */
	uint32_t max_ooo;  /**< receiver out-of-order span (roce_dev_cfg.max_ooo, or the window) */
	uint32_t una, nxt; /**< sender: oldest unacknowledged and next new PSN */
	uint64_t link_bps; /**< roce_dev_cfg.link_bps (0: unknown) */
	uint64_t rto_low_ns,
	    rto_high_ns; /**< roce_dev_cfg.rto_low_ns / rto_high_ns (0: mode default) */
	const struct vrp_tolerance *vrp; /**< the QP's VRP loss tolerance (roce_qp_set_vrp) */
};

/** Fill @p env for @p qp (from any callback). */
void roce_recovery_env(const struct roce_qp *qp, struct roce_recovery_env *env);
/** Add @p n to counter @p id of @p qp (and its device). */
void roce_recovery_count(struct roce_qp *qp, enum roce_stat id, uint64_t n);
/** Raise counter @p id of @p qp (and its device) to @p v if it is lower (high-water marks). */
void roce_recovery_count_max(struct roce_qp *qp, enum roce_stat id, uint64_t v);

/** Register an implementation (before creating QPs). -EEXIST, -ENOSPC or -EINVAL. */
int roce_recovery_register(const struct roce_recovery_ops *ops);
/** Find an implementation by name, or NULL. "gbn" is always present. */
const struct roce_recovery_ops *roce_recovery_find(const char *name);

/** IBTA Go-Back-N, the default. */
extern const struct roce_recovery_ops roce_recovery_gbn;
/** Go-Back-ONE (Wang, NJUPT): RACK + receiver bitmap, "gbone". */
extern const struct roce_recovery_ops roce_recovery_gbone;
/** IRN selective repeat (Swing paper section 2.1), "irn". */
extern const struct roce_recovery_ops roce_recovery_irn;
/** VRP loss-tolerant delivery (Denis, LIP RR-2000-11), "vrp". */
extern const struct roce_recovery_ops roce_recovery_vrp;

#endif /* ROCE_RECOVERY_H */
