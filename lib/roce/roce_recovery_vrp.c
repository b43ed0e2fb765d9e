/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_recovery_vrp.c
 * VRP loss-tolerant delivery ("vrp"): A. Denis, "Variable Reliability
 * Protocol" (LIP RR-2000-11), as a recovery mode. Compiled against the
 * public headers only (roce_recovery.h, roce_recovery_sel.h, roce_psn.h,
 * roce_psn_bitmap.h) and lib/vrp (vrp.h).
 *
 * Receiver: every RDMA WRITE message gets lib/vrp's incremental anticipation
 * receiver (VRP §2.3.4 "New receiver algorithm", §3.2.2 "Receiver"), fed with
 * the index of every packet of the message that arrives, in order or placed
 * ahead of ePSN (the self-placing opcodes of the selective modes, so that
 * packets after a hole land in target memory at once). A missing packet the
 * algorithm tolerates is marked; when ePSN reaches it the engine zero-fills
 * its bytes and moves on (ROCE_REC_F_TOLERATE). A missing packet it cannot
 * tolerate is NACKed (VRP §3.1: "NACK" tag) with a VRP NACK (docs/wire.md,
 * 0xE1). Every packet placed out of order is answered with a VRP ACK (0xE0):
 * the cumulative ACK (ePSN - 1, VRP's ACK tag) plus the PSN received and the
 * run before it (VRP's SINGLE_ACK tag).
 *
 * Placement after a lost WRITE_FIRST: the first packet of every message is
 * critical (docs/vrp.md): the engine learns the message's address and length
 * from its RETH, so a tolerated hole always has a known place. The last
 * packet is critical too: it ends the message (and carries the immediate of
 * a WRITE with immediate). A missing PSN of no known message (a lost FIRST, a
 * SEND, a message too large to track) is NACKed at once: SENDs, READs and
 * atomics are delivered reliably under vrp.
 *
 * Sender: the selective modes' scoreboard (roce_recovery_sel.h). It
 * retransmits only what a NACK names, and on a timeout (the shared adaptive
 * RTO, VRP §2.5.1) every PSN from una on that no VRP ACK reported received
 * (VRP §3.2.1: the sender's per-packet timer).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "roce_psn.h"
#include "roce_psn_bitmap.h"
#include "roce_recovery.h"
#include "roce_recovery_sel.h"
#include "roce_verbs.h"
#include "vrp.h"

#define VRPM_MSGS 8	    /* WRITE messages tracked at once per QP */
#define VRPM_MAX_PKTS 4096u /* largest message tracked (packets); larger: reliable */

struct vrpm_msg {
	bool used;
	uint32_t first_psn;
	struct vrp_rx rx;
	uint8_t cell[VRPM_MAX_PKTS];
};

struct vrpm {
	struct sel s; /* first: the sender scoreboard and the placed bitmap */
	bool rx_init;
	struct roce_psn_bitmap tol;    /* tolerated losses (base = ePSN) */
	struct roce_psn_bitmap nack;   /* NACKs to send (base = ePSN) */
	struct roce_psn_bitmap nacked; /* NACKed at least once (base = ePSN) */
	uint32_t scan;		       /* holes before it were looked at */
	struct vrpm_msg msg[VRPM_MSGS];
	struct roce_qp *qp;   /* for gap_cb */
	struct vrpm_msg *cur; /* for gap_cb */
};

static void
vrpm_init(struct roce_qp *qp, void *priv)
{
	struct vrpm *v = priv;

	sel_init(qp, priv);
	v->rx_init = false;
	for (unsigned int i = 0; i < VRPM_MSGS; i++)
		v->msg[i].used = false;
}

static bool
in_win(const struct roce_psn_bitmap *b, uint32_t psn)
{
	return roce_psn_in_window(psn, b->base, ROCE_PSN_BITMAP_BITS);
}

static bool
bit(const struct roce_psn_bitmap *b, uint32_t psn)
{
	return in_win(b, psn) && roce_psn_bitmap_test(b, psn);
}

/* Bring the receiver's bitmaps to @p epsn and forget the messages it passed. */
static void
rx_sync(struct vrpm *v, uint32_t epsn)
{
	if (!v->rx_init) {
		roce_psn_bitmap_init(&v->tol, epsn);
		roce_psn_bitmap_init(&v->nack, epsn);
		roce_psn_bitmap_init(&v->nacked, epsn);
		v->scan = epsn;
		v->rx_init = true;
	}
	roce_psn_bitmap_advance(&v->tol, epsn);
	roce_psn_bitmap_advance(&v->nack, epsn);
	roce_psn_bitmap_advance(&v->nacked, epsn);
	if (roce_psn_cmp(v->scan, epsn) < 0)
		v->scan = epsn;
	for (unsigned int i = 0; i < VRPM_MSGS; i++) {
		struct vrpm_msg *m = &v->msg[i];

		if (m->used && roce_psn_cmp(roce_psn_add(m->first_psn, m->rx.npkts), epsn) <= 0)
			m->used = false;
	}
}

static struct vrpm_msg *
msg_find(struct vrpm *v, uint32_t psn)
{
	for (unsigned int i = 0; i < VRPM_MSGS; i++) {
		struct vrpm_msg *m = &v->msg[i];

		if (m->used && roce_psn_in_window(psn, m->first_psn, m->rx.npkts))
			return m;
	}
	return NULL;
}

static void
nack_psn(struct roce_qp *qp, struct vrpm *v, uint32_t psn, enum roce_stat why)
{
	if (!in_win(&v->nack, psn))
		return;
	roce_psn_bitmap_set(&v->nack, psn);
	roce_psn_bitmap_set(&v->nacked, psn);
	roce_recovery_count(qp, ROCE_STAT_RX_VRP_NACKED, 1);
	roce_recovery_count(qp, why, 1);
}

/* lib/vrp's verdict on one missing packet of the message being fed (VRP §3.2.2). */
static void
gap_cb(void *ctx, uint32_t idx, enum vrp_decision d, enum vrp_nack_reason r)
{
	struct vrpm *v = ctx;
	uint32_t psn = roce_psn_add(v->cur->first_psn, idx);

	if (d == VRP_TOLERATE) {
		/*
		 * NACKed already (a hole of a message not yet known): its
		 * retransmission is on its way, so wait for it rather than
		 * zero-fill. lib/vrp counts it lost: the tolerance still holds.
		 */
		if (in_win(&v->tol, psn) && !bit(&v->nacked, psn))
			roce_psn_bitmap_set(&v->tol, psn);
		return;
	}
	nack_psn(v->qp, v, psn,
		 r == VRP_NR_CRITICAL ? ROCE_STAT_RX_VRP_NACK_CRIT
		 : r == VRP_NR_CONS   ? ROCE_STAT_RX_VRP_NACK_CONS
				      : ROCE_STAT_RX_VRP_NACK_RATE);
}

static void
feed(struct roce_qp *qp, struct vrpm *v, struct vrpm_msg *m, uint32_t psn)
{
	struct vrp_rx_out out;

	v->qp = qp;
	v->cur = m;
	vrp_rx_packet(&m->rx, (uint32_t)roce_psn_diff(psn, m->first_psn), &out, gap_cb, v);
}

static enum roce_rx_verdict
vrpm_rx_packet(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t psn)
{
	struct vrpm *v = priv;
	enum roce_rx_verdict rv = sel_rx_packet(qp, priv, epsn, psn);
	struct vrpm_msg *m;

	rx_sync(v, epsn);
	if (rv == ROCE_RXV_ACCEPT && (m = msg_find(v, psn)) != NULL)
		feed(qp, v, m, psn);
	return rv;
}

/*
 * Holes before @p psn not looked at yet: a PSN of no known message is NACKed
 * at once (it may be a lost FIRST, or a SEND); the last packet of a known
 * message is NACKed once a later PSN shows it missing (lib/vrp would wait for
 * a later packet of the same message, which never comes). Other holes of a
 * known message are lib/vrp's to decide.
 */
static void
scan_holes(struct roce_qp *qp, struct vrpm *v, uint32_t epsn, uint32_t psn)
{
	uint32_t q = roce_psn_cmp(v->scan, epsn) > 0 ? v->scan : epsn;

	for (; roce_psn_cmp(q, psn) < 0; q = roce_psn_add(q, 1)) {
		struct vrpm_msg *m;

		if (bit(&v->s.ooo, q) || bit(&v->tol, q) || bit(&v->nacked, q))
			continue;
		m = msg_find(v, q);
		if (!m)
			nack_psn(qp, v, q, ROCE_STAT_RX_VRP_NACK_UNKNOWN);
		else if (roce_psn_add(m->first_psn, m->rx.npkts - 1) == q)
			nack_psn(qp, v, q, ROCE_STAT_RX_VRP_NACK_CRIT);
	}
	if (roce_psn_cmp(roce_psn_add(psn, 1), v->scan) > 0)
		v->scan = roce_psn_add(psn, 1);
}

static enum roce_rx_notice
vrpm_rx_placed(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t psn, bool placed)
{
	struct vrpm *v = priv;
	uint32_t prev = roce_psn_add(psn, ROCE_PSN_MASK);
	struct vrpm_msg *m;

	if (!placed)
		return ROCE_NOTICE_NONE;
	rx_sync(v, epsn);
	if (roce_psn_cmp(prev, epsn) >= 0 && !bit(&v->s.ooo, prev))
		roce_recovery_count(qp, ROCE_STAT_RX_HOLES, 1);
	roce_psn_bitmap_set(&v->s.ooo, psn);
	m = msg_find(v, psn);
	if (m)
		feed(qp, v, m, psn);
	scan_holes(qp, v, epsn, psn);
	return ROCE_NOTICE_VRP_ACK;
}

/*
 * The tolerance of one message: the QP's, with the fields the work request
 * set (its FIRST's VTETH) put in its place, as VRP §3.3's "-1 means default
 * value", and the work request's critical ranges added to the QP's (VRP §3.1
 * CRITICAL_INTERVAL: the sender names what may never be lost).
 */
static void
msg_tolerance(const struct roce_recovery_env *env, const struct roce_vrp_wr *wr,
	      struct vrp_tolerance *t)
{
	if (env->vrp)
		*t = *env->vrp;
	else
		memset(t, 0, sizeof(*t));
	if (!wr)
		return;
	if (wr->set & ROCE_VRP_WR_LOSS)
		t->loss_bp = wr->loss_bp;
	if (wr->set & ROCE_VRP_WR_WINDOW)
		t->window = wr->window;
	if (wr->set & ROCE_VRP_WR_BURST)
		t->max_burst = wr->max_burst;
	/* QP ranges <= ROCE_VRP_QP_CRITICAL, WR ranges <= ROCE_VRP_WR_CRITICAL: all fit */
	for (unsigned int i = 0; i < wr->n_critical && t->n_critical < VRP_CRITICAL_MAX; i++)
		t->critical[t->n_critical++] = wr->critical[i];
}

_Static_assert(ROCE_VRP_QP_CRITICAL + ROCE_VRP_WR_CRITICAL + 2 <= VRP_CRITICAL_MAX,
	       "a message's critical ranges: the QP's, the WR's, its first and last packets");

/*
 * A WRITE message seen: give it a receiver with its tolerance (the QP's, or
 * what its work request carried), its first and last packets critical, and
 * feed it what already arrived of it, in PSN order (packets placed before the
 * FIRST was known).
 */
static void
vrpm_rx_msg(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t first_psn, uint64_t len,
	    const struct roce_vrp_wr *wr)
{
	struct vrpm *v = priv;
	struct roce_recovery_env env;
	struct vrp_tolerance t;
	struct vrp_params p;
	struct vrpm_msg *m = NULL;
	const char *err;
	uint32_t npkts;

	rx_sync(v, epsn);
	if (msg_find(v, first_psn))
		return;
	roce_recovery_env(qp, &env);
	npkts = vrp_npkts(len, env.mtu);
	for (unsigned int i = 0; i < VRPM_MSGS && !m; i++)
		if (!v->msg[i].used)
			m = &v->msg[i];
	msg_tolerance(&env, wr, &t);
	/* the first and the last packet: critical (docs/vrp.md, "Placement") */
	if (len && t.n_critical + 2 <= VRP_CRITICAL_MAX) {
		t.critical[t.n_critical++] = (struct vrp_range){0, 1};
		t.critical[t.n_critical++] = (struct vrp_range){len - 1, 1};
	} else if (len) {
		m = NULL;
	}
	if (!m || npkts == 0 || npkts > VRPM_MAX_PKTS) {
		roce_recovery_count(qp, ROCE_STAT_RX_VRP_UNTRACKED, 1);
		return;
	}
	memset(m->cell, 0, npkts);
	if (vrp_tolerance_to_params(&t, len, env.mtu, &p, m->cell, &err) < 0 ||
	    vrp_rx_init(&m->rx, &p, len, env.mtu, m->cell, &err) < 0) {
		/* a work request's tolerance lib/vrp refuses (a range outside the message) */
		if (wr)
			roce_recovery_count(qp, ROCE_STAT_RX_VRP_BAD_TOL, 1);
		roce_recovery_count(qp, ROCE_STAT_RX_VRP_UNTRACKED, 1);
		return;
	}
	m->used = true;
	m->first_psn = first_psn;
	feed(qp, v, m, first_psn);
	for (uint32_t i = 1; i < npkts; i++) {
		uint32_t q = roce_psn_add(first_psn, i);

		if (roce_psn_cmp(q, epsn) >= 0 && bit(&v->s.ooo, q))
			feed(qp, v, m, q);
	}
}

static bool
vrpm_rx_tolerated(struct roce_qp *qp, void *priv, uint32_t psn)
{
	struct vrpm *v = priv;

	(void)qp;
	return v->rx_init && bit(&v->tol, psn);
}

/* The run of PSNs from ePSN on that are placed or tolerated: the engine completes them. */
static uint32_t
vrpm_rx_advance(struct roce_qp *qp, void *priv, uint32_t epsn)
{
	struct vrpm *v = priv;
	struct roce_recovery_env env;
	uint32_t n = 0;

	if (!v->s.rx_init)
		return 0;
	rx_sync(v, epsn);
	roce_recovery_env(qp, &env);
	roce_psn_bitmap_advance(&v->s.ooo, epsn);
	while (n < env.max_ooo &&
	       (bit(&v->s.ooo, roce_psn_add(epsn, n)) || bit(&v->tol, roce_psn_add(epsn, n))))
		n++;
	/* the tolerated bits stay until rx_packet moves the base: the engine asks rx_tolerated */
	roce_psn_bitmap_advance(&v->s.ooo, roce_psn_add(epsn, n));
	return n;
}

/* The next NACK: the lowest pending PSN and the run of pending PSNs right after it. */
static bool
vrpm_rx_nack(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t *psn, uint32_t *run)
{
	struct vrpm *v = priv;
	uint32_t k, n = 0;

	(void)qp;
	if (!v->rx_init)
		return false;
	rx_sync(v, epsn);
	k = roce_psn_bitmap_find(&v->nack, epsn, ROCE_PSN_BITMAP_BITS, true);
	if (k == ROCE_PSN_BITMAP_BITS)
		return false;
	while (k + n + 1 < ROCE_PSN_BITMAP_BITS && n < 255 &&
	       roce_psn_bitmap_test(&v->nack, roce_psn_add(epsn, k + n + 1)))
		n++;
	roce_psn_bitmap_clear_range(&v->nack, roce_psn_add(epsn, k), n + 1);
	*psn = roce_psn_add(epsn, k + n);
	*run = n;
	return true;
}

static void
vrpm_rx_nak_sent(struct roce_qp *qp, void *priv, uint32_t psn)
{
	(void)qp;
	(void)priv;
	(void)psn;
}

/*
 * Sender: a VRP ACK reports @p psn and the @p run PSNs before it received or
 * given up by the receiver (a tolerated loss): never queued again, so the
 * timer resends only what no VRP ACK reported (VRP §3.2.1's per-packet timer,
 * for the packets still owed). A VRP NACK names @p psn and the @p run before
 * it as lost beyond tolerance: queue them ahead of new data.
 *
 * A NACKed PSN whose retransmission is lost too is not NACKed again by the
 * receiver (it NACKs a PSN once). The sender finds it instead, RACK-style, as
 * IRN does (sel_retx_lost, beyond the paper): a VRP ACK naming a PSN sent
 * after that retransmission (SEL_REORDER - 1 past it, the path keeps order)
 * while it is still unreported means the retransmission was lost: queue it
 * again, without waiting for the timer.
 */
static void
vrpm_tx_notice(struct roce_qp *qp, void *priv, enum roce_rx_notice kind, uint32_t una,
	       uint32_t epsn, uint32_t psn, uint32_t run, uint32_t nxt)
{
	struct sel *s = priv;

	sel_tx_sync(s, una);
	if (!roce_psn_in_window(psn, una, ROCE_PSN_BITMAP_BITS))
		return;
	for (uint32_t i = 0; i <= run; i++) {
		uint32_t q = roce_psn_add(psn, ROCE_PSN_MASK + 1u - i);

		if (kind == ROCE_NOTICE_VRP_NACK) {
			roce_psn_bitmap_clear(&s->rcvd, q);
			sel_tx_queue(qp, s, q);
		} else {
			roce_psn_bitmap_set(&s->rcvd, q);
		}
	}
	if (kind == ROCE_NOTICE_VRP_ACK)
		sel_retx_lost(qp, s, epsn, psn, nxt);
}

const struct roce_recovery_ops roce_recovery_vrp = {
    .name = "vrp",
    .priv_size = sizeof(struct vrpm),
    .init = vrpm_init,
    .tx_sent = sel_tx_sent,
    .tx_acked = sel_tx_acked,
    .tx_lost = sel_tx_lost,
    .tx_next = sel_tx_next,
    .rx_packet = vrpm_rx_packet,
    .rx_nak_sent = vrpm_rx_nak_sent,
    .flags = ROCE_REC_F_PLACE | ROCE_REC_F_TOLERATE,
    .rx_placed = vrpm_rx_placed,
    .rx_advance = vrpm_rx_advance,
    .tx_notice = vrpm_tx_notice,
    .rx_msg = vrpm_rx_msg,
    .rx_tolerated = vrpm_rx_tolerated,
    .rx_nack = vrpm_rx_nack,
};
