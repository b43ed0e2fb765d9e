/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_fec_hold.c
 * FEC in the engine, receive side (roce_fec.h): the hold-back shim in front
 * of the transport, the codec's rebuilt frames and events, the receiver's
 * code proposal (--fec-adapt), and the hold's deadline (roce_fec_timers).
 *
 * The hold-back is LoWAR's "packet reordering and draining" (Zuo et al.,
 * "LoWAR: Enhancing RDMA over Lossy WANs with Transparent Error Correction"):
 * a request packet after a hole (PSN after ePSN) is copied into a ring indexed
 * by PSN instead of reaching the responder, so the transport sends no loss
 * signal (Go-Back-N NAK, Go-Back-ONE RACK, IRN SACK) and, under gbn, does not
 * drop the packets after the hole. The hold ends when
 *  - the hole is filled (a rebuilt frame, or the original late): the held
 *    packets are drained in PSN order (fec_holds_repaired);
 *  - the codec reports a held-for PSN unrecoverable (fec_release_unrecoverable);
 *  - a packet arrives that the sender sent after the hole's block's repairs
 *    (its PSN 1.5 groups past the hole): they did not rebuild the hole
 *    (fec_release_progress) - the block-fill deadline counted in packets;
 *  - the stream falls silent: no packet held for two block-fill times, at
 *    least 8 ms, + margin (fec_release_deadline);
 *  - the ring cannot take a packet (fec_release_full);
 * in the last four the held packets go to the transport as they came, and
 * the transport's own mode recovers (the fallback). Request packets are held
 * at the responder, READ responses at the requester (each stream behind its
 * own expected PSN, roce_fec_expected()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_fec_int.h"

/* ---- receive ---- */

/*
 * Two streams are held back, each behind its own expected PSN:
 *  - [0] request packets at the responder, behind ePSN (qp->resp.epsn);
 *  - [1] READ responses at the requester, behind the oldest unacknowledged
 *    PSN (qp->comp.una) while the oldest outstanding WQE is a READ, so the
 *    completer neither re-issues the READ (Go-Back-N) nor re-reads the hole
 *    (selective modes) before the repair could rebuild it.
 */
uint32_t
roce_fec_expected(const struct roce_qp *qp, int stream)
{
	return stream ? qp->comp.una : qp->resp.epsn;
}

/* A rebuilt frame: kept, received after the frame that triggered the rebuild. */
static void
rfec_deliver(void *arg, const uint8_t *frame, size_t len)
{
	struct roce_qp *qp = arg;
	struct roce_fec_qp *f = qp->fec;

	if (f->nreb >= ROCE_FEC_STASH || len > ROCE_FEC_FRAME_MAX) {
		roce_qp_stat(qp, ROCE_STAT_FEC_REBUILT_LOST, 1);
		return;
	}
	memcpy(f->reb[f->nreb], frame, len);
	f->reb_len[f->nreb++] = (uint32_t)len;
}

static void
rfec_event(void *arg, enum roce_fec_event ev, int stream, uint32_t psn)
{
	struct roce_qp *qp = arg;
	struct roce_fec_hold *h;
	int32_t d;

	if (stream == 0 && qp->dev->cfg.fec_adapt && qp->fec->ops->adapt_sample)
		qp->fec->ops->adapt_sample(qp->fec->st, true, psn); /* missing, rebuilt or not */
	if (ev != ROCE_FEC_EV_UNRECOVERABLE)
		return;
	roce_qp_stat(qp, ROCE_STAT_FEC_UNRECOVERABLE, 1);
	if (stream < 0 || stream > 1)
		return;
	/* a hole the shim holds packets for will not be rebuilt: release them now */
	h = &qp->fec->hold[stream];
	d = roce_psn_diff(psn, roce_fec_expected(qp, stream));
	if (h->nheld && d >= 0 && (uint32_t)d < h->cap)
		h->release_now = true;
}

static uint32_t
rfec_slot(const struct roce_fec_hold *h, uint32_t psn)
{
	return psn & (h->cap - 1);
}

/*
 * How far past the hole (in PSNs) a packet shows that the hole's block's
 * repairs have been sent: they leave right after the block's last member,
 * which lies less than one group (span = K x D PSNs) after any of its members
 * (XOR: (K - 1) x D; RS, D = 1: K - 1); half a group more for reordering.
 * A packet this far on, with the hole still open, means the repairs were lost
 * or could not rebuild it: the hold ends (fec_release_progress). This is the
 * block-fill deadline counted in packets, so neither a receiver that reads a
 * backlog after a stall nor a burst of arrivals moves it (the time-based
 * deadline of the first version did: 77 of 77 go-back rounds of a 1 % rs:32,4
 * run began at a deadline that expired with the repair on its way or in the
 * receive ring, 0.2-9 ms after the hole, docs/results.md).
 */
static uint32_t
rfec_hold_reach(const struct roce_qp *qp)
{
	uint32_t span = qp->fec->ops->span(qp->fec->st);

	return span + span / 2;
}

/*
 * The time part of the deadline, for a stream that stops (the end of a
 * message, a sender held by its window): no packet held for this long after
 * the last one. Two block-fill times (the mean gap over whole groups of the
 * stream's packets, roce_fec_rate_sample), at least FEC_HOLD_SILENCE_MIN_NS: a
 * sender that stopped has flushed the open blocks' repairs within
 * FEC_IDLE_MAX_NS (roce_fec_tx_idle_ns), and a sender or path that is merely
 * descheduled (pauses of 1-8 ms measured on the shared 2-vCPU host) must not
 * end the hold. Plus the margin: roce_dev_cfg.fec_hold_ns (--fec-hold), or
 * FEC_STALL_K times the longest stall the stream showed in the last 5-10 s
 * (roce_fec_stall), whichever is longer. While packets arrive, rfec_hold_reach ends
 * the hold.
 *
 * Why the stall part: over memif on the loaded 2-core host, A's poll loop
 * stalled 15-34 ms several times a run; a hole open when A stalled in the
 * middle of its block waited for a repair A had not sent yet, the 8.2 ms
 * deadline released the hold, Go-Back-N NAKed, and the repair then rebuilt
 * the hole (fec_rebuilt_after_release): 2-8 NAKs per 1e-5 / 1e-4 point of
 * `reproduce lowar-memif` (docs/results.md), each a go-back round of a BDP.
 * The receiver sees such a stall as a silence between two packets of the
 * stream, as it sees its own (t_receiver_stall); once it has seen one, the
 * next of up to FEC_STALL_K times its length (plus the 8 ms floor) does not
 * end a hold. Silences above FEC_STALL_MAX_NS are a sender that stopped (no
 * data, a retransmit timeout) and do not count, so the stall margin stays at
 * most 100 ms. The measured RTT is not used: the responder of a WRITE stream
 * sends no request and has no RTT sample. The cost: a hole whose repair is
 * lost while the sender really stops is signalled up to 2 x stall later.
 */
uint64_t
roce_fec_hold_ns(const struct roce_qp *qp, const struct roce_fec_hold *h)
{
	const struct roce_fec_qp *f = qp->fec;
	uint64_t fill = 2ull * f->ops->span(f->st) * roce_fec_rate_gap(&h->rate);
	uint64_t margin =
	    qp->dev->cfg.fec_hold_ns ? qp->dev->cfg.fec_hold_ns : ROCE_DEFAULT_FEC_HOLD_NS;
	uint64_t stall = FEC_STALL_K * roce_fec_stall(h);

	margin = stall > margin ? stall : margin;
	fill = fill > FEC_HOLD_SPAN_MAX_NS ? FEC_HOLD_SPAN_MAX_NS : fill;
	return (fill < FEC_HOLD_SILENCE_MIN_NS ? FEC_HOLD_SILENCE_MIN_NS : fill) + margin;
}

static bool
rfec_hold_alloc(struct roce_qp *qp, struct roce_fec_hold *h)
{
	const struct roce_fec_qp *f = qp->fec;
	uint32_t want = 4 * f->ops->span(f->st), cap = FEC_HOLD_MIN;

	while (cap < want && cap < FEC_HOLD_MAX)
		cap <<= 1;
	h->slot_size = qp->mtu + ROCE_MAX_HDR_LEN;
	h->held = malloc((size_t)cap * h->slot_size);
	h->held_len = calloc(cap, sizeof(*h->held_len));
	h->held_psn = calloc(cap, sizeof(*h->held_psn));
	if (!h->held || !h->held_len || !h->held_psn) {
		free(h->held);
		free(h->held_len);
		free(h->held_psn);
		h->held = NULL;
		h->held_len = NULL;
		h->held_psn = NULL;
		return false;
	}
	h->cap = cap;
	return true;
}

/* Deliver a held (or rebuilt) frame to the transport as if it had just arrived. */
static void
rfec_rx_copy(struct roce_qp *qp, const uint8_t *frame, size_t len)
{
	struct roce_rx rx;

	if (roce_rx_parse(qp->dev, frame, len, &rx) != 0)
		return; /* counted by the parser */
	roce_rx_deliver(qp, &rx);
}

/* Give every held packet to the transport in PSN order: it sees the gap now. */
static void
rfec_release(struct roce_qp *qp, struct roce_fec_hold *h, enum roce_stat why)
{
	uint32_t psn = h->lo;

	roce_qp_stat(qp, why, 1);
	h->hold_at = 0;
	h->release_now = false;
	h->released = h->hole;
	h->released_valid = true;
	for (uint32_t n = 0; n < h->cap && h->nheld; n++, psn = roce_psn_add(psn, 1)) {
		uint32_t s = rfec_slot(h, psn);

		uint32_t l = h->held_len[s];

		if (!l || h->held_psn[s] != psn)
			continue;
		h->nheld--;
		h->held_len[s] = 0;
		rfec_rx_copy(qp, h->held + (size_t)s * h->slot_size, l);
	}
	/* nothing stays behind, whatever the ring held */
	memset(h->held_len, 0, sizeof(*h->held_len) * h->cap);
	h->nheld = 0;
}

/* The expected PSN moved: deliver the held packets it reached, in order. */
static void
rfec_drain(struct roce_qp *qp, struct roce_fec_hold *h, int stream)
{
	while (h->nheld && roce_psn_diff(h->lo, roce_fec_expected(qp, stream)) <= 0) {
		uint32_t s = rfec_slot(h, h->lo), psn = h->lo;

		uint32_t l = h->held_len[s];

		h->lo = roce_psn_add(h->lo, 1);
		if (!l || h->held_psn[s] != psn)
			continue;
		h->nheld--;
		h->held_len[s] = 0;
		/* the slot stays valid while the transport reads it: nothing is held
		 * into it before this returns (it lies behind the expected PSN now) */
		rfec_rx_copy(qp, h->held + (size_t)s * h->slot_size, l);
	}
}

static bool
rfec_hold(struct roce_qp *qp, struct roce_fec_hold *h, int stream, const struct roce_rx *rx,
	  size_t len, int32_t d)
{
	uint32_t s;

	if (!h->held && !rfec_hold_alloc(qp, h))
		return false;
	if ((uint32_t)d >= h->cap || len > h->slot_size) {
		/* beyond the ring: the transport must see the gap now */
		if (h->nheld)
			rfec_release(qp, h, ROCE_STAT_FEC_RELEASE_FULL);
		return false;
	}
	s = rfec_slot(h, rx->psn);
	if (h->held_len[s] && h->held_psn[s] == rx->psn) {
		roce_qp_stat(qp, ROCE_STAT_FEC_HOLD_DUP, 1);
		return true;
	}
	if (h->held_len[s]) /* a stale packet from another lap of the ring: replaced */
		h->nheld--;
	if (!h->nheld) {
		/* a new hole: its loss signal is withheld until the deadline */
		h->lo = roce_fec_expected(qp, stream);
		h->hole = h->lo;
		roce_qp_stat(qp, ROCE_STAT_FEC_WITHHELD, 1);
	}
	/* the silence deadline runs from the latest packet held */
	h->hold_at = qp->dev->now + roce_fec_hold_ns(qp, h);
	memcpy(h->held + (size_t)s * h->slot_size, rx->frame, len);
	h->held_len[s] = (uint32_t)len;
	h->held_psn[s] = rx->psn;
	h->nheld++;
	roce_qp_stat(qp, ROCE_STAT_FEC_HELD, 1);
	return true;
}

/*
 * --trace (docs/loss-trace.md): a request PSN that was missing has arrived.
 * A rebuilt one is FEC_REBUILT (before the transport sees it, so it precedes
 * any RX_LATE the responder emits for it after a released hold). The hole a
 * hold keeps packets back for, filled by the original or a resend, is
 * RX_LATE here: the responder saw no later PSN (they are held), so it does
 * not report it itself; after a release it does (late_gap), and this stays
 * silent.
 */
static void
rfec_trace_arrival(struct roce_qp *qp, const struct roce_fec_hold *h, uint32_t psn, int32_t d,
		   bool rebuilt)
{
	const struct roce_resp_state *r = &qp->resp;

	if (d < 0)
		return; /* a duplicate: nothing was missing */
	if (rebuilt) {
		roce_trace_loss(qp, ROCE_TRACE_FEC_REBUILT, psn);
		return;
	}
	if (d == 0 && h->nheld && !(r->late_gap && roce_psn_cmp(psn, r->late_hi) < 0))
		roce_trace_loss(qp, ROCE_TRACE_RX_LATE, psn);
}

/* One data frame (original or rebuilt) through the hold-back of its stream. */
static void
rfec_in(struct roce_qp *qp, const struct roce_rx *rx, size_t len, bool rebuilt)
{
	struct roce_fec_qp *f = qp->fec;
	enum roce_stat filled = rebuilt ? ROCE_STAT_FEC_HOLD_REPAIRED : ROCE_STAT_FEC_HOLD_FILLED;
	uint16_t fl = rx->op->flags;
	struct roce_fec_hold *h;
	int stream;
	int32_t d;

	if (fl & ROCE_OPF_REQ)
		stream = 0;
	else if ((fl & ROCE_OPF_RESP) && (fl & ROCE_OPF_READ))
		stream = 1;
	else {
		roce_rx_deliver(qp, rx);
		return;
	}
	h = &f->hold[stream];
	d = roce_psn_diff(rx->psn, roce_fec_expected(qp, stream));
	if (rebuilt && d < 0)
		roce_qp_stat(qp, ROCE_STAT_FEC_REBUILT_DUP, 1);
	if (roce_unlikely(qp->dev->ops.trace) && stream == 0)
		rfec_trace_arrival(qp, h, rx->psn, d, rebuilt);
	if (rebuilt && h->released_valid && rx->psn == h->released) {
		/* its hold had been given up: the loss signal it let go was wasted */
		roce_qp_stat(qp, ROCE_STAT_FEC_REBUILT_AFTER_RELEASE, 1);
		h->released_valid = false;
	}
	if (!rebuilt) {
		roce_fec_stall_sample(h, qp->dev->now);
		roce_fec_rate_sample(&h->rate, qp->dev->now, f->ops->span(f->st));
	}
	if (!rebuilt && stream == 0 && qp->dev->cfg.fec_adapt && f->ops->adapt_sample) {
		int32_t g = f->rx_hi_valid ? roce_psn_diff(rx->psn, f->rx_hi) : 0;

		f->ops->adapt_sample(f->st, false, rx->psn);
		if (g > 0 && f->ops->adapt_gap) /* g PSNs before this one never arrived */
			f->ops->adapt_gap(f->st, (uint32_t)g);
		if (g >= 0) {
			f->rx_hi = roce_psn_add(rx->psn, 1);
			f->rx_hi_valid = true;
		}
	}
	/* a READ response is held only while a READ heads the send queue: a
	 * response beyond another outstanding WQE acknowledges it implicitly */
	if (d > 0 && (stream == 0 || h->nheld || roce_comp_awaits_read(qp))) {
		uint32_t hole = roce_fec_expected(qp, stream);

		if ((uint32_t)d >= rfec_hold_reach(qp) &&
		    !(h->released_valid && h->released == hole)) {
			/*
			 * Sent after the hole's block's repairs, and the hole is still
			 * open: the transport sees the gap now. From then on the packets
			 * after the hole are held as after any release: when the
			 * resent hole arrives they drain, and the cumulative ACK lets a
			 * go-back round skip them (Go-Back-N would drop them).
			 */
			if (h->nheld) {
				rfec_release(qp, h, ROCE_STAT_FEC_RELEASE_PROGRESS);
			} else {
				h->released = hole;
				h->released_valid = true;
				roce_rx_deliver(qp, rx);
				return;
			}
		}
		if (rfec_hold(qp, h, stream, rx, len, d))
			return;
	}
	roce_rx_deliver(qp, rx);
	if (h->nheld && roce_psn_diff(roce_fec_expected(qp, stream), h->hole) > 0) {
		rfec_drain(qp, h, stream);
		if (!h->nheld) {
			h->hold_at = 0;
			roce_qp_stat(qp, filled, 1);
		} else if (roce_psn_diff(roce_fec_expected(qp, stream), h->hole) > 0) {
			/* another hole further on: a new deadline for it */
			h->hole = roce_fec_expected(qp, stream);
			h->hold_at = qp->dev->now + roce_fec_hold_ns(qp, h);
			roce_qp_stat(qp, filled, 1);
			roce_qp_stat(qp, ROCE_STAT_FEC_WITHHELD, 1);
		}
	}
}

/*
 * --fec-adapt: after each frame the receiver's policy may move a level; the
 * new parameters go to the peer's encoder in a PROPOSE (built from an ACK of
 * this QP as the template of the reverse path), which it applies at its next
 * group boundary and COMMITs. No level down within 4 SRTTs of a change.
 */
static void
rfec_adapt(struct roce_qp *qp)
{
	struct roce_fec_qp *f = qp->fec;
	uint64_t srtt = qp->rtt.srtt;
	uint64_t hold = srtt ? 4 * srtt : ROCE_DEFAULT_FEC_ADAPT_HOLD_NS;
	uint8_t tmpl[ROCE_MAX_HDR_LEN + 64];
	struct roce_pkt p = qp->tmpl;
	int dir, n, tl;

	dir = f->ops->adapt_decide(f->st, qp->dev->now, hold);
	if (!dir)
		return;
	roce_qp_stat(qp, dir > 0 ? ROCE_STAT_FEC_ADAPT_UP : ROCE_STAT_FEC_ADAPT_DOWN, 1);
	roce_bth_init(qp, &p, ROCE_OP_RC_BASE + ROCE_OP_ACK, qp->resp.epsn);
	tl = roce_build(tmpl, sizeof(tmpl), &p, NULL, 0, 0);
	n = tl > 0 ? f->ops->adapt_propose(f->st, tmpl, (size_t)tl, qp->attr.dest_qp_num,
					   f->post[0], ROCE_FEC_FRAME_MAX)
		   : -1;
	if (n <= 0) {
		roce_qp_stat(qp, ROCE_STAT_FEC_ADAPT_FAILED, 1);
		return;
	}
	roce_qp_stat(qp, ROCE_STAT_FEC_ADAPT_PROPOSALS, 1);
	roce_fec_emit_now(qp, f->post[0], (size_t)n);
}

void
roce_fec_rx(struct roce_qp *qp, const struct roce_rx *rx, size_t len)
{
	struct roce_fec_qp *f = qp->fec;
	uint32_t n;
	int rc;

	f->nreb = 0;
	rc = f->ops->rx(f->st, rx->frame, len, rfec_deliver, rfec_event, qp);
	if (rc < 0) {
		roce_qp_stat(qp, ROCE_STAT_FEC_RX_REFUSED, 1);
	} else if (rc == ROCE_FEC_RX_CONSUMED) {
		roce_qp_stat(qp, ROCE_STAT_FEC_RX_FRAMES, 1);
	} else if (roce_opcode_is_fec(rx->pkt.h.bth.opcode)) {
		roce_qp_stat(qp, ROCE_STAT_FEC_RX_REFUSED, 1); /* the codec did not take it */
	} else {
		rfec_in(qp, rx, len, false);
	}
	n = f->nreb;
	for (uint32_t i = 0; i < n; i++) {
		struct roce_rx r;

		roce_qp_stat(qp, ROCE_STAT_FEC_REBUILT, 1);
		if (roce_rx_parse(qp->dev, f->reb[i], f->reb_len[i], &r) == 0)
			rfec_in(qp, &r, f->reb_len[i], true);
	}
	f->nreb = 0;
	for (int i = 0; i < 2; i++) {
		struct roce_fec_hold *h = &f->hold[i];

		if (h->release_now && h->nheld)
			rfec_release(qp, h, ROCE_STAT_FEC_RELEASE_UNREC);
		h->release_now = false;
	}
	if (qp->dev->cfg.fec_adapt && f->ops->adapt_decide && f->ops->adapt_propose)
		rfec_adapt(qp);
}

void
roce_fec_timers(struct roce_qp *qp)
{
	struct roce_fec_qp *f = qp->fec;
	uint64_t now = qp->dev->now;

	for (int i = 0; i < 2; i++) {
		struct roce_fec_hold *h = &f->hold[i];

		if (h->hold_at && now >= h->hold_at && h->nheld)
			rfec_release(qp, h, ROCE_STAT_FEC_RELEASE_DEADLINE);
		else if (h->hold_at && now >= h->hold_at)
			h->hold_at = 0;
	}
}
