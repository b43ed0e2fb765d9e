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
 * and says whether to execute it, answer it as a duplicate, drop it, or drop
 * it and send a PSN-sequence-error NAK.
 *
 * Callbacks run inside the engine: they must not call back into roce_* verbs.
 * All PSN arithmetic goes through roce_psn.h.
 */
#ifndef ROCE_RECOVERY_H
#define ROCE_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct roce_qp;

/** Why PSNs are considered lost. */
enum roce_loss_kind {
	ROCE_LOSS_NAK_SEQ,   /**< NAK PSN sequence error: the responder expects @p psn */
	ROCE_LOSS_IMPLIED,   /**< a later response shows READ/atomic responses were lost */
	ROCE_LOSS_TIMEOUT,   /**< local ACK timer expired; @p psn is the oldest unacked */
	ROCE_LOSS_RNR,       /**< RNR timer expired after an RNR NAK for @p psn */
};

/** Receiver verdict for one request packet. */
enum roce_rx_verdict {
	ROCE_RXV_ACCEPT,    /**< the expected PSN: execute it */
	ROCE_RXV_DUPLICATE, /**< already executed: re-ACK, replay READ/atomic, never re-place */
	ROCE_RXV_DROP,      /**< out of sequence: drop silently */
	ROCE_RXV_NAK_SEQ,   /**< out of sequence: drop, NAK (sequence error) the expected PSN */
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
};

/** Register an implementation (before creating QPs). -EEXIST, -ENOSPC or -EINVAL. */
int roce_recovery_register(const struct roce_recovery_ops *ops);
/** Find an implementation by name, or NULL. "gbn" is always present. */
const struct roce_recovery_ops *roce_recovery_find(const char *name);

/** IBTA Go-Back-N, the default. */
extern const struct roce_recovery_ops roce_recovery_gbn;

#endif /* ROCE_RECOVERY_H */
