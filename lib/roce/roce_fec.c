/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_fec.c
 * FEC in the engine (roce_fec.h): the codec registry, the per-QP state, the
 * transmit hook that sends a block's repairs right after the frame that
 * completed it, and the idle flush. The receive-side hold-back and its
 * deadline are roce_fec_hold.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_fec_int.h"

static const struct roce_fec_ops *rfec_codec;

int
roce_fec_register(const struct roce_fec_ops *ops)
{
	if (!ops || !ops->create || !ops->destroy || !ops->tx || !ops->tx_flush || !ops->rx ||
	    !ops->span || !ops->info)
		return -EINVAL;
	rfec_codec = ops;
	return 0;
}

const struct roce_fec_ops *
roce_fec_codec(void)
{
	return rfec_codec;
}

/* ---- per-QP state ---- */

void
roce_fec_free(struct roce_qp *qp)
{
	struct roce_fec_qp *f = qp->fec;

	if (!f)
		return;
	f->ops->destroy(f->st);
	for (int i = 0; i < 2; i++) {
		free(f->hold[i].held);
		free(f->hold[i].held_len);
		free(f->hold[i].held_psn);
	}
	free(f);
	qp->fec = NULL;
}

int
roce_qp_set_fec(struct roce_qp *qp, const char *params, char *err, size_t errlen)
{
	const struct roce_fec_ops *ops = rfec_codec;
	struct roce_fec_qp *f;

	if (err && errlen)
		err[0] = '\0';
	if (qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_INIT)
		return -EINVAL;
	if (!params || !params[0] || strcmp(params, "off") == 0) {
		roce_fec_free(qp);
		return 0;
	}
	if (qp->type != IBV_QPT_RC)
		return -EINVAL;
	if (!ops)
		return -ENOTSUP;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->ops = ops;
	f->recode = -1;
	f->st = ops->create(params, err, errlen);
	if (!f->st) {
		free(f);
		return -EINVAL;
	}
	roce_fec_free(qp);
	qp->fec = f;
	return 0;
}

/* Drop every held packet and deadline (QP reset, RTR). */
void
roce_fec_reset(struct roce_qp *qp)
{
	struct roce_fec_qp *f = qp->fec;

	if (!f)
		return;
	for (int i = 0; i < 2; i++) {
		struct roce_fec_hold *h = &f->hold[i];

		if (h->held_len)
			memset(h->held_len, 0, sizeof(*h->held_len) * h->cap);
		if (h->nheld)
			roce_qp_stat(qp, ROCE_STAT_FEC_HOLD_RESET, 1);
		h->nheld = 0;
		h->hold_at = 0;
		h->release_now = false;
		h->released_valid = false;
	}
	f->rx_hi_valid = false;
	f->flush_at = 0;
	f->nq = 0;
	f->npost = 0;
	f->pend_valid = false;
}

int
roce_qp_fec_info(const struct roce_qp *qp, struct roce_fec_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!qp->fec)
		return -ENOENT;
	qp->fec->ops->info(qp->fec->st, out);
	return 0;
}

/*
 * The packet rate over whole blocks. A per-packet EWMA of the gap collapses
 * within the bursts a paced sender and a polled af_packet ring produce (tens
 * of frames within microseconds, then a pause), and the block-fill time it
 * predicts is then a fraction of the real one (measured: hold-back deadlines
 * expired before the repair in 131-772 holds per run, docs/results.md). The
 * mean over a window of `span` (K x D) packets is the fill time of a group
 * divided by its size, whatever the bursts inside it; pauses longer than
 * FEC_GAP_MAX_NS (window full, end of data) count as FEC_GAP_MAX_NS.
 */
void
roce_fec_rate_sample(struct roce_fec_rate *r, uint64_t now, uint32_t span)
{
	if (r->last && now > r->last) {
		uint64_t g = now - r->last;

		r->sum += g > FEC_GAP_MAX_NS ? FEC_GAP_MAX_NS : g;
	}
	if (r->last)
		r->n++;
	r->last = now;
	if (r->n >= (span ? span : 1)) {
		r->gap = r->sum / r->n;
		r->sum = 0;
		r->n = 0;
	}
}

/*
 * A silence between two received packets of the stream, in a windowed maximum
 * (the longest of the current and the previous FEC_STALL_WINDOW_NS). Called
 * before roce_fec_rate_sample moves rate.last.
 */
void
roce_fec_stall_sample(struct roce_fec_hold *h, uint64_t now)
{
	uint64_t g;

	if (!h->stall_win)
		h->stall_win = now ? now : 1;
	while (now >= h->stall_win + FEC_STALL_WINDOW_NS) {
		/* one step per elapsed window: an idle longer than two forgets both */
		h->stall_prev = h->stall_cur;
		h->stall_cur = 0;
		h->stall_win += FEC_STALL_WINDOW_NS;
		if (!h->stall_prev && !h->stall_cur) {
			h->stall_win = now;
			break;
		}
	}
	if (!h->rate.last || now <= h->rate.last)
		return;
	g = now - h->rate.last;
	if (g > FEC_GAP_MAX_NS && g <= FEC_STALL_MAX_NS && g > h->stall_cur)
		h->stall_cur = g;
}

/* The longest stall the stream showed lately (roce_fec_stall_sample); 0: none. */
uint64_t
roce_fec_stall(const struct roce_fec_hold *h)
{
	return h->stall_cur > h->stall_prev ? h->stall_cur : h->stall_prev;
}

/* Mean gap: the last whole window, else the partial first one. */
uint64_t
roce_fec_rate_gap(const struct roce_fec_rate *r)
{
	if (r->gap)
		return r->gap;
	return r->n ? r->sum / r->n : 0;
}

/* ---- transmit ---- */

/*
 * The sender pauses (window, end of data): it flushes the open blocks after a
 * quarter of a group's fill time (span / 4 mean gaps, the mean over whole
 * groups) without a coded frame, so a tail never waits for frames that do not
 * come. Four per-packet EWMA gaps (the first version) fired between the
 * pacer's bursts every ~50 packets: partial blocks, 7-20 % FEC frames instead
 * of 3.1 % at xor:32,4. The retransmit timer adds this delay (roce_req.c): a
 * tail's repair leaves only then, and a timer shorter than RTT + this (IRN's
 * RTO_low on a short path) would resend what the repair is about to rebuild.
 */
uint64_t
roce_fec_tx_idle_ns(const struct roce_qp *qp)
{
	uint64_t idle;

	if (!qp->fec)
		return 0;
	idle =
	    (uint64_t)(qp->fec->ops->span(qp->fec->st) / 4) * roce_fec_rate_gap(&qp->fec->tx_rate);
	idle = idle < FEC_IDLE_MIN_NS ? FEC_IDLE_MIN_NS : idle;
	return idle > FEC_IDLE_MAX_NS ? FEC_IDLE_MAX_NS : idle;
}

/*
 * The port's back-pressure (ops->tx -EBUSY: its TX ring full) must not cost a
 * repair. The engine keeps a refused data frame and retries it; a FEC frame
 * has no such retry, so the refused ones wait in a queue (q), in order, and
 * go out before any later frame of the QP (a new frame is refused, uncoded,
 * while the queue is not empty) and at every poll (roce_fec_idle_flush). A
 * data frame refused after the codec coded it (pend) is sent on its retry as
 * the bytes that were coded, followed by its repairs, and not coded again: the
 * rebuilt frame has another IPv4 identification (not an ICRC-masked field),
 * and under fec+gbn a PSN below the codec's next one would start a new grid
 * (recode), closing every open block with partial repairs. Before this, every
 * refusal of a frame that closed a block dropped that block's repairs
 * (fec_tx_dropped), and each refused frame re-gridded the stream under
 * fec+gbn: at 5-7 Gb/s over memif 16 800 FEC frames were dropped in a 6 s run
 * and holes their repairs should have rebuilt became go-back rounds of a whole
 * BDP (docs/fec.md, t_tx_ring_full). Only a queue overflow drops (counted).
 */
static void
rfec_q_add(struct roce_qp *qp, const uint8_t *frame, size_t len)
{
	struct roce_fec_qp *f = qp->fec;
	uint32_t i;

	if (f->nq >= ROCE_FEC_TXQ || len > ROCE_FEC_FRAME_MAX) {
		roce_qp_stat(qp, ROCE_STAT_FEC_TX_DROPPED, 1);
		return;
	}
	i = (f->qhead + f->nq++) % ROCE_FEC_TXQ;
	memcpy(f->q[i], frame, len);
	f->q_len[i] = (uint32_t)len;
}

/* Send the queued FEC frames in order until the port refuses one; true when none is left. */
static bool
rfec_q_push(struct roce_qp *qp)
{
	struct roce_fec_qp *f = qp->fec;
	struct roce_dev *dev = qp->dev;

	while (f->nq) {
		uint32_t len = f->q_len[f->qhead];

		if (dev->ops.tx(dev->ctx, f->q[f->qhead], len) < 0)
			return false;
		roce_qp_stat(qp, ROCE_STAT_TX_PKTS, 1);
		roce_qp_stat(qp, ROCE_STAT_TX_BYTES, len);
		roce_qp_stat(qp, ROCE_STAT_FEC_TX_FRAMES, 1);
		roce_qp_stat(qp, ROCE_STAT_FEC_TX_OVERHEAD, len);
		f->qhead = (f->qhead + 1) % ROCE_FEC_TXQ;
		f->nq--;
	}
	return true;
}

/* A codec frame that goes out at once (COMMIT before a data frame, flush), in queue order. */
void
roce_fec_emit_now(void *arg, const uint8_t *frame, size_t len)
{
	struct roce_qp *qp = arg;

	rfec_q_add(qp, frame, len);
	rfec_q_push(qp);
}

/* A frame that goes before the data frame being coded: queued, sent before it. */
static void
rfec_emit_pre(void *arg, const uint8_t *frame, size_t len)
{
	rfec_q_add(arg, frame, len);
}

/* A repair that must follow the data frame being sent: kept until it left. */
static void
rfec_emit_post(void *arg, const uint8_t *frame, size_t len)
{
	struct roce_qp *qp = arg;
	struct roce_fec_qp *f = qp->fec;

	if (f->npost >= ROCE_FEC_STASH || len > ROCE_FEC_FRAME_MAX) {
		roce_qp_stat(qp, ROCE_STAT_FEC_TX_DROPPED, 1);
		return;
	}
	memcpy(f->post[f->npost], frame, len);
	f->post_len[f->npost++] = (uint32_t)len;
}

/* The data frame left: its repairs join the queue, behind it. */
static void
rfec_tx_sent(struct roce_qp *qp)
{
	struct roce_fec_qp *f = qp->fec;

	for (uint32_t i = 0; i < f->npost; i++)
		rfec_q_add(qp, f->post[i], f->post_len[i]);
	f->npost = 0;
	rfec_q_push(qp);
}

/* A frame the codec covers: a request or a READ response (not an ACK). */
static bool
rfec_codable(uint8_t opcode)
{
	uint16_t fl = roce_opcode_info(opcode)->flags;

	return (fl & ROCE_OPF_REQ) || ((fl & ROCE_OPF_RESP) && (fl & ROCE_OPF_READ));
}

int
roce_fec_tx(struct roce_qp *qp, const uint8_t *frame, size_t len, const struct roce_pkt *p)
{
	struct roce_fec_qp *f = qp->fec;
	struct roce_dev *dev = qp->dev;
	uint32_t psn = p->h.bth.psn & ROCE_PSN_MASK;
	int coded, rc;

	if (f->pend_valid) {
		if (p->h.bth.opcode == f->pend_op && psn == f->pend_psn && len == f->pend_len) {
			/* the retry of the frame coded last: the coded bytes, then its repairs */
			if (!rfec_q_push(qp))
				return -EBUSY;
			rc = dev->ops.tx(dev->ctx, f->pend, f->pend_len);
			if (rc < 0)
				return rc;
			f->pend_valid = false;
			rfec_tx_sent(qp);
			return rc;
		}
		if (rfec_codable(p->h.bth.opcode)) {
			/* the engine sends other data (a go-back rewound past it): the
			 * repairs still go out, valid for the frame as it was coded */
			f->pend_valid = false;
			rfec_tx_sent(qp);
		} else if (!rfec_q_push(qp)) {
			return -EBUSY;
		} else { /* an ACK meanwhile: not coded, the pending frame stays */
			return dev->ops.tx(dev->ctx, frame, len);
		}
	}
	if (!rfec_q_push(qp))
		return -EBUSY; /* not coded: the engine retries it after the queue */
	f->npost = 0;
	if (f->ops->tx_recode && f->recode != (qp->rec == &roce_recovery_gbn)) {
		/* Go-Back-N resends contiguous ranges: code them on a new grid */
		f->recode = qp->rec == &roce_recovery_gbn;
		f->ops->tx_recode(f->st, f->recode);
	}
	coded = f->ops->tx(f->st, frame, len, rfec_emit_pre, rfec_emit_post, qp);
	if (coded > 0)
		roce_qp_stat(qp, ROCE_STAT_FEC_TX_COVERED, 1);
	if (coded > 1)
		roce_qp_stat(qp, ROCE_STAT_FEC_TX_RECODED, 1);
	rc = rfec_q_push(qp) ? dev->ops.tx(dev->ctx, frame, len) : -EBUSY;
	if (rc < 0) {
		if (coded > 0 && len <= sizeof(f->pend)) {
			memcpy(f->pend, frame, len);
			f->pend_len = (uint32_t)len;
			f->pend_psn = psn;
			f->pend_op = p->h.bth.opcode;
			f->pend_valid = true;
		} else if (f->npost) { /* cannot happen: a frame that made repairs was coded */
			roce_qp_stat(qp, ROCE_STAT_FEC_TX_DROPPED, f->npost);
			f->npost = 0;
		}
		return rc;
	}
	rfec_tx_sent(qp);
	if (coded > 0) {
		uint64_t idle;

		roce_fec_rate_sample(&f->tx_rate, dev->now, f->ops->span(f->st));
		idle = roce_fec_tx_idle_ns(qp);
		f->flush_at = dev->now + idle;
	}
	return rc;
}

/* ---- timers ---- */

uint64_t
roce_fec_next_deadline(const struct roce_qp *qp)
{
	const struct roce_fec_qp *f = qp->fec;
	uint64_t t = UINT64_MAX;

	for (int i = 0; i < 2; i++)
		if (f->hold[i].hold_at && f->hold[i].hold_at < t)
			t = f->hold[i].hold_at;
	if (f->flush_at && f->flush_at < t)
		t = f->flush_at;
	return t;
}

/*
 * The sender's idle flush, checked after the QP's run in a poll
 * (roce_dev_poll), not with its timers before it: a sender that was
 * descheduled past flush_at and has frames to send now sends them first,
 * which moves flush_at (roce_fec_tx), so it does not close its open blocks
 * with partial repairs only to code the next frames on a new grid. Checked
 * before the run, the flush fired at almost every wake-up of a descheduled
 * sender on the shared host: 1.3-1.8 k flushes in a 4 s run of rs:32,4, 19-20 %
 * FEC frames instead of 12.5 % (docs/claims.md).
 */
void
roce_fec_idle_flush(struct roce_qp *qp)
{
	struct roce_fec_qp *f = qp->fec;

	/*
	 * What the port refused goes out even when no frame follows. A sender
	 * whose frames the port refuses (a FEC frame still queued, a coded data
	 * frame waiting for its retry) is not idle: no flush then. Its partial
	 * repairs would overtake the coded frame that waits (the receiver would
	 * rebuild it, then receive it again) and restart the grid.
	 */
	if (!rfec_q_push(qp) || f->pend_valid)
		return;
	if (f->flush_at && qp->dev->now >= f->flush_at) {
		f->flush_at = 0;
		roce_qp_stat(qp, ROCE_STAT_FEC_TX_FLUSHES, 1);
		f->ops->tx_flush(f->st, roce_fec_emit_now, qp);
	}
}
