/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_recovery_sel.h
 * The selective recoveries' sender scoreboard (roce_recovery_sel.c), shared
 * with the modes built on it (gbone, irn, vrp). A mode's private state starts
 * with a struct sel so that the sel_* callbacks take it as their @p priv.
 * Public headers only: roce_recovery.h, roce_psn_bitmap.h.
 */
#ifndef ROCE_RECOVERY_SEL_H
#define ROCE_RECOVERY_SEL_H

#include <stdbool.h>
#include <stdint.h>

#include "roce_psn_bitmap.h"
#include "roce_recovery.h"

/*
 * Retransmissions remembered for the lost-retransmission rule, in send order
 * (a power of two). When full, the oldest is forgotten: a loss of that
 * resend is left to the timer.
 */
#define SEL_RETX_LOG 2048u

/** One retransmission: its PSN and snd_nxt when it left. */
struct sel_retx {
	uint32_t psn, nxt;
};

struct sel {
	/* sender */
	bool tx_init;
	struct roce_psn_bitmap rcvd;  /* reported received by a RACK/SACK (base = una) */
	struct roce_psn_bitmap queue; /* retransmit queue (base = una) */
	struct roce_psn_bitmap retxd; /* irn: retransmitted in this recovery */
	uint32_t queued;	      /* bits set in queue */
	bool have_rack;
	uint32_t frontier; /* holes before it were considered (Algorithm 1 m_crtRACK) */
	/* the retransmissions not yet known to have arrived or been lost, oldest first */
	struct sel_retx retx_log[SEL_RETX_LOG];
	uint32_t retx_head, retx_tail; /* FIFO indexes (free-running; empty when equal) */
	bool implied;		       /* a READ re-request for implied_psn is queued or sent */
	uint32_t implied_psn;
	bool rto_head; /* gbone/irn: an expiry resent rto_head_psn alone, no progress since */
	uint32_t rto_head_psn;
	uint64_t rto_head_at;  /* when it was resent (engine clock) */
	uint32_t rto_head_nxt; /* snd_nxt then */
	bool rto_head_wait;    /* the head alone was acknowledged: the next progress decides */
	/* receiver */
	bool rx_init;
	struct roce_psn_bitmap ooo; /* placed ahead of ePSN (base = ePSN) */
};

/* roce_recovery_ops callbacks, @p priv a struct sel (or a struct starting with one) */
void sel_init(struct roce_qp *qp, void *priv);
void sel_tx_sent(struct roce_qp *qp, void *priv, uint32_t psn, uint32_t next, bool retx);
void sel_tx_acked(struct roce_qp *qp, void *priv, uint32_t una);
bool sel_tx_lost(struct roce_qp *qp, void *priv, uint32_t psn, uint32_t nxt,
		 enum roce_loss_kind kind);
bool sel_tx_next(struct roce_qp *qp, void *priv, uint32_t una, uint32_t nxt, uint32_t *psn);
/** Receiver: ACCEPT ePSN, DUPLICATE below it or placed, DROP beyond max_ooo, else PLACE. */
enum roce_rx_verdict sel_rx_packet(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t psn);
/** Bring the scoreboard's base to @p una (first call: initialise it there). */
void sel_tx_sync(struct sel *s, uint32_t una);
/** Queue @p psn for retransmission unless queued or reported received. */
void sel_tx_queue(struct roce_qp *qp, struct sel *s, uint32_t psn);
/**
 * A notice reported @p psn received (receiver's ePSN @p epsn, snd_nxt @p nxt).
 * Every retransmission whose snd_nxt @p psn is SEL_REORDER - 1 past (or @p psn
 * is the last PSN sent) and whose PSN is still missing was lost again (the
 * path keeps order): queue it once more, count retx_lost_detected. The rule
 * of roce_recovery_sel.c, shared with vrp.
 */
void sel_retx_lost(struct roce_qp *qp, struct sel *s, uint32_t epsn, uint32_t psn, uint32_t nxt);

#endif /* ROCE_RECOVERY_SEL_H */
