/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_recovery_gbn.c
 * IBTA Go-Back-N, the loss recovery every RoCE NIC implements.
 *
 * Sender: on a loss report, resend every PSN from the reported one up to the
 * highest PSN sent so far, then continue with new data. A repeated NAK or
 * implied NAK for the PSN already being repaired is ignored (it carries no
 * news), until the oldest unacknowledged PSN moves past it. RNR retries and
 * timeouts of IBTA's fixed timer always go back; with --rto adaptive the
 * first expiry since the last progress resends the head alone (gbn_tx_lost).
 *
 * Receiver: accept only the expected PSN; a PSN before it is a duplicate;
 * after it, send one PSN-sequence-error NAK per gap (IBTA: the responder
 * "NAK sent" state) and drop silently until the expected PSN arrives.
 *
 * The reference plug-in: it compiles against the public headers only
 * (roce_recovery.h, roce_psn.h), as every recovery mode must; the QP is an
 * opaque handle. ROCE_RECOVERY_PLUGIN makes roce_int.h refuse to be included.
 */
#define ROCE_RECOVERY_PLUGIN 1

#include <stdbool.h>
#include <stdint.h>

#include "roce_psn.h"
#include "roce_recovery.h"
#include "roce_rtt.h"
#include "roce_trace.h"

struct gbn {
	/* sender */
	bool retx;	   /* a go-back round is in progress */
	uint32_t retx_psn; /* next PSN to resend */
	uint32_t retx_end; /* first PSN not to resend (snd_nxt when the round began) */
	bool repaired;	   /* repair_psn is being repaired: ignore repeated NAKs for it */
	uint32_t repair_psn;
	bool rto_head; /* --rto adaptive: an expiry resent rto_head_psn alone, no progress since */
	uint32_t rto_head_psn;
	uint64_t rto_head_at;  /* when (engine clock) */
	uint32_t rto_head_nxt; /* the next PSN to send then: the go-back's end */
	bool rto_head_wait;    /* the head's ACK came alone: the next ACK decides */
	/* receiver */
	bool nak_sent; /* a sequence NAK (or RNR NAK) is outstanding */
};

static void
gbn_init(struct roce_qp *qp, void *priv)
{
	(void)qp;
	*(struct gbn *)priv = (struct gbn){0};
}

static void
gbn_tx_sent(struct roce_qp *qp, void *priv, uint32_t psn, uint32_t next, bool retx)
{
	struct gbn *g = priv;

	(void)qp;
	(void)psn;
	if (retx && g->retx) {
		g->retx_psn = next;
		if (roce_psn_cmp(g->retx_psn, g->retx_end) >= 0)
			g->retx = false;
	}
}

static void
gbn_tx_acked(struct roce_qp *qp, void *priv, uint32_t una)
{
	struct gbn *g = priv;

	if (g->repaired && roce_psn_cmp(una, g->repair_psn) > 0)
		g->repaired = false;
	if (g->rto_head) {
		/*
		 * The first progress after a head-only expiry (gbn_tx_lost). An
		 * ACK that can answer the resend (roce_rto_head_answered: at
		 * least 3/4 of the least RTT after it) was sent when the resend
		 * reached B, after every PSN sent before the resend had reached
		 * it (the path keeps order); B takes PSNs in order only, so every
		 * PSN from una up to what was sent before the resend is missing
		 * there: go back for all of them (F-RTO's verdict, RFC 5682 2.1;
		 * the gbone/irn rule, roce_recovery_sel.c). An ACK too early to
		 * answer the resend is the original's (the expiry was spurious):
		 * nothing more is resent.
		 */
		struct roce_recovery_env env;

		roce_recovery_env(qp, &env);
		if (roce_psn_cmp(una, roce_psn_add(g->rto_head_psn, 1)) == 0 &&
		    roce_psn_cmp(una, g->rto_head_nxt) < 0 && !g->rto_head_wait) {
			/*
			 * The head alone: B ACKs each AckReq packet, so this may be
			 * the head's original ACK, late (a stall of B or of the
			 * path), and F-RTO's test (roce_rtt.c, RFC 5682 2.1 step 2)
			 * decides on the next ACK: the PSN after the head
			 * acknowledged from a send before the resend. Wait for it
			 * (once). A true loss of the tail sends no next ACK: the
			 * timer, re-armed from this progress (RTT + its margin after
			 * the send of una, at most the margin from now), expires
			 * again and gbn_tx_lost goes back then (t_rto_frto_gbn).
			 * Deciding here went back the whole window on the head's
			 * ACK while the next ACK of the same stall found the expiry
			 * spurious: the defect t_rto_frto_sel covers for
			 * gbone/irn, here for gbn.
			 */
			g->rto_head_wait = true;
		} else {
			struct roce_rtt_info r;
			/* no go-back once the engine found the expiry spurious */
			bool spurious = roce_qp_rtt(qp, &r) == 0 && r.rto_spurious;

			g->rto_head = false;
			g->rto_head_wait = false;
			if (roce_psn_cmp(una, g->rto_head_nxt) < 0 && !spurious &&
			    roce_rto_head_answered(qp, g->rto_head_at, env.now_ns)) {
				roce_trace_loss(qp, ROCE_TRACE_RTO_GOBACK, una);
				g->retx = true;
				g->retx_psn = una;
				g->retx_end = env.nxt; /* B drops every PSN after una */
				g->repaired = true;
				g->repair_psn = una;
			}
		}
	}
}

/* --rto adaptive (roce_rtt.h): its timer may fire on a stall; IBTA's fixed one keeps go-back */
static bool
gbn_adaptive(const struct roce_qp *qp)
{
	struct roce_rtt_info r;

	return roce_qp_rtt(qp, &r) == 0 && r.adaptive;
}

static bool
gbn_tx_lost(struct roce_qp *qp, void *priv, uint32_t psn, uint32_t nxt, enum roce_loss_kind kind)
{
	struct gbn *g = priv;

	(void)qp;
	if ((kind == ROCE_LOSS_NAK_SEQ || kind == ROCE_LOSS_IMPLIED) && g->repaired &&
	    g->repair_psn == psn)
		return false; /* the same gap, reported again by a packet already in flight */
	g->retx = roce_psn_cmp(psn, nxt) < 0;
	g->retx_psn = psn;
	g->retx_end = nxt;
	if (kind == ROCE_LOSS_TIMEOUT && !g->rto_head && gbn_adaptive(qp)) {
		/*
		 * --rto adaptive, the first expiry since the last progress: resend
		 * the head alone (ours, after F-RTO, RFC 5682). Its timer is RTT +
		 * max(4 D, --rto-min), so a host stall longer than the margin fires
		 * it on a path that lost nothing; going back then resent the whole
		 * window (1,272 packets from 11 spurious expiries in one 4 s
		 * lossless testbed run). gbn_tx_acked goes back when the head's ACK
		 * shows the rest lost; a second expiry without progress goes back.
		 */
		struct roce_recovery_env env;

		roce_recovery_env(qp, &env);
		g->rto_head = true;
		g->rto_head_psn = psn;
		g->rto_head_at = env.now_ns;
		g->rto_head_nxt = nxt;
		g->rto_head_wait = false;
		g->retx_end = roce_psn_add(psn, 1);
	} else {
		/* a go-back (a NAK, a second expiry) ends a pending head-only verdict */
		g->rto_head = false;
		g->rto_head_wait = false;
	}
	g->repaired = true;
	g->repair_psn = psn;
	return true;
}

static bool
gbn_tx_next(struct roce_qp *qp, void *priv, uint32_t una, uint32_t nxt, uint32_t *psn)
{
	struct gbn *g = priv;

	(void)qp;
	if (!g->retx)
		return false;
	if (roce_psn_cmp(g->retx_psn, una) < 0)
		g->retx_psn = una; /* acknowledged meanwhile: skip */
	if (roce_psn_cmp(g->retx_psn, g->retx_end) >= 0 || roce_psn_cmp(g->retx_psn, nxt) >= 0) {
		g->retx = false;
		return false;
	}
	*psn = g->retx_psn;
	return true;
}

static enum roce_rx_verdict
gbn_rx_packet(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t psn)
{
	struct gbn *g = priv;
	int d = roce_psn_cmp(psn, epsn);

	(void)qp;
	if (d == 0) {
		g->nak_sent = false;
		return ROCE_RXV_ACCEPT;
	}
	if (d < 0)
		return ROCE_RXV_DUPLICATE; /* C9-105: duplicates are answered, never re-executed */
	if (g->nak_sent)
		return ROCE_RXV_DROP;
	return ROCE_RXV_NAK_SEQ;
}

static void
gbn_rx_nak_sent(struct roce_qp *qp, void *priv, uint32_t psn)
{
	(void)qp;
	(void)psn;
	((struct gbn *)priv)->nak_sent = true;
}

const struct roce_recovery_ops roce_recovery_gbn = {
    .name = "gbn",
    .priv_size = sizeof(struct gbn),
    .init = gbn_init,
    .tx_sent = gbn_tx_sent,
    .tx_acked = gbn_tx_acked,
    .tx_lost = gbn_tx_lost,
    .tx_next = gbn_tx_next,
    .rx_packet = gbn_rx_packet,
    .rx_nak_sent = gbn_rx_nak_sent,
};
