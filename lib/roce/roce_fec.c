/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_fec.c
 * FEC in the engine (roce_fec.h): the codec registry, the transmit hook that
 * sends a block's repairs right after the frame that completed it, the idle
 * flush, and the receive-side hold-back shim.
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
 *  - the deadline passes: block fill time + margin (fec_release_deadline);
 *  - the ring cannot take a packet (fec_release_full);
 * in the last three the held packets go to the transport as they came, and
 * the transport's own mode recovers (the fallback). Only the request stream is
 * held; READ responses are rebuilt but not held (docs/fec.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_fec.h"
#include "roce_int.h"

#define FEC_HOLD_MIN 512u  /**< held-packet ring: at least this many slots */
#define FEC_HOLD_MAX 4096u /**< and at most */
#define FEC_HOLD_SPAN_MAX_NS                                                                       \
	100000000ull		   /**< the block-fill part of a deadline: at most 100 ms          \
				    */
#define FEC_IDLE_MIN_NS 50000ull   /**< sender idle flush: at least 50 us */
#define FEC_IDLE_MAX_NS 2000000ull /**< and at most 2 ms */
#define FEC_GAP_MAX_NS 10000000ull /**< inter-packet gap samples are capped at 10 ms */

static const struct roce_fec_ops *fec_codec;

int
roce_fec_register(const struct roce_fec_ops *ops)
{
	if (!ops || !ops->create || !ops->destroy || !ops->tx || !ops->tx_flush || !ops->rx ||
	    !ops->span || !ops->info)
		return -EINVAL;
	fec_codec = ops;
	return 0;
}

const struct roce_fec_ops *
roce_fec_codec(void)
{
	return fec_codec;
}

/* ---- per-QP state ---- */

void
roce_fec_free(struct roce_qp *qp)
{
	struct roce_fec_qp *f = qp->fec;

	if (!f)
		return;
	f->ops->destroy(f->st);
	free(f->held);
	free(f->held_len);
	free(f->held_psn);
	free(f);
	qp->fec = NULL;
}

int
roce_qp_set_fec(struct roce_qp *qp, const char *params, char *err, size_t errlen)
{
	const struct roce_fec_ops *ops = fec_codec;
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
	if (f->held_len)
		memset(f->held_len, 0, sizeof(*f->held_len) * f->cap);
	f->nheld = 0;
	f->hold_at = 0;
	f->flush_at = 0;
	f->release_now = false;
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

static uint64_t
ewma_gap(uint64_t avg, uint64_t *last, uint64_t now)
{
	uint64_t g = *last && now > *last ? now - *last : 0;

	*last = now;
	if (g > FEC_GAP_MAX_NS)
		g = FEC_GAP_MAX_NS;
	return avg ? avg - avg / 8 + g / 8 : g; /* alpha = 1/8 */
}

/* ---- transmit ---- */

/*
 * The sender pauses (window, pacing, end of data): it flushes the open blocks
 * after four mean gaps without a coded frame, so a tail never waits for frames
 * that do not come. The retransmit timer adds this delay (roce_req.c): a
 * tail's repair leaves only then, and a timer shorter than RTT + this (IRN's
 * RTO_low on a short path) would resend what the repair is about to rebuild.
 */
uint64_t
roce_fec_tx_idle_ns(const struct roce_qp *qp)
{
	uint64_t idle;

	if (!qp->fec)
		return 0;
	idle = 4 * qp->fec->tx_gap;
	idle = idle < FEC_IDLE_MIN_NS ? FEC_IDLE_MIN_NS : idle;
	return idle > FEC_IDLE_MAX_NS ? FEC_IDLE_MAX_NS : idle;
}

/* A codec frame that goes out at once (COMMIT before a data frame, flush). */
static void
fec_emit_now(void *arg, const uint8_t *frame, size_t len)
{
	struct roce_qp *qp = arg;
	struct roce_dev *dev = qp->dev;

	if (dev->ops.tx(dev->ctx, frame, len) < 0) {
		roce_qp_stat(qp, ROCE_STAT_FEC_TX_DROPPED, 1);
		return;
	}
	roce_qp_stat(qp, ROCE_STAT_TX_PKTS, 1);
	roce_qp_stat(qp, ROCE_STAT_TX_BYTES, len);
	roce_qp_stat(qp, ROCE_STAT_FEC_TX_FRAMES, 1);
	roce_qp_stat(qp, ROCE_STAT_FEC_TX_OVERHEAD, len);
}

/* A repair that must follow the data frame being sent: kept until it left. */
static void
fec_emit_post(void *arg, const uint8_t *frame, size_t len)
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

int
roce_fec_tx(struct roce_qp *qp, const uint8_t *frame, size_t len)
{
	struct roce_fec_qp *f = qp->fec;
	struct roce_dev *dev = qp->dev;
	int coded, rc;

	f->npost = 0;
	coded = f->ops->tx(f->st, frame, len, fec_emit_now, fec_emit_post, qp);
	if (coded > 0) /* coded now even if the port refuses it: its resend is not coded again */
		roce_qp_stat(qp, ROCE_STAT_FEC_TX_COVERED, 1);
	rc = dev->ops.tx(dev->ctx, frame, len);
	if (rc < 0) {
		roce_qp_stat(qp, ROCE_STAT_FEC_TX_DROPPED, f->npost);
		f->npost = 0;
		return rc;
	}
	for (uint32_t i = 0; i < f->npost; i++)
		fec_emit_now(qp, f->post[i], f->post_len[i]);
	f->npost = 0;
	if (coded > 0) {
		uint64_t idle;

		f->tx_gap = ewma_gap(f->tx_gap, &f->tx_last, dev->now);
		idle = roce_fec_tx_idle_ns(qp);
		f->flush_at = dev->now + idle;
	}
	return rc;
}

/* ---- receive ---- */

/* A rebuilt frame: kept, received after the frame that triggered the rebuild. */
static void
fec_deliver(void *arg, const uint8_t *frame, size_t len)
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
fec_event(void *arg, enum roce_fec_event ev, int stream, uint32_t psn)
{
	struct roce_qp *qp = arg;
	struct roce_fec_qp *f = qp->fec;
	int32_t d;

	if (ev != ROCE_FEC_EV_UNRECOVERABLE)
		return;
	roce_qp_stat(qp, ROCE_STAT_FEC_UNRECOVERABLE, 1);
	/* a hole the shim holds packets for will not be rebuilt: release them now */
	d = roce_psn_diff(psn, qp->resp.epsn);
	if (stream == 0 && f->nheld && d >= 0 && (uint32_t)d < f->cap)
		f->release_now = true;
}

static uint32_t
fec_slot(const struct roce_fec_qp *f, uint32_t psn)
{
	return psn & (f->cap - 1);
}

/*
 * Deadline of a new hold: the hole's block fills within span packets of it;
 * wait for two block-fill times (measured: the mean gap between request
 * packets) and the margin (roce_dev_cfg.fec_hold_ns).
 */
static uint64_t
fec_hold_ns(const struct roce_qp *qp)
{
	const struct roce_fec_qp *f = qp->fec;
	uint64_t fill = 2ull * f->ops->span(f->st) * f->rx_gap;
	uint64_t margin =
	    qp->dev->cfg.fec_hold_ns ? qp->dev->cfg.fec_hold_ns : ROCE_DEFAULT_FEC_HOLD_NS;

	return (fill > FEC_HOLD_SPAN_MAX_NS ? FEC_HOLD_SPAN_MAX_NS : fill) + margin;
}

static bool
fec_hold_alloc(struct roce_qp *qp)
{
	struct roce_fec_qp *f = qp->fec;
	uint32_t want = 4 * f->ops->span(f->st), cap = FEC_HOLD_MIN;

	while (cap < want && cap < FEC_HOLD_MAX)
		cap <<= 1;
	f->slot_size = qp->mtu + ROCE_MAX_HDR_LEN;
	f->held = malloc((size_t)cap * f->slot_size);
	f->held_len = calloc(cap, sizeof(*f->held_len));
	f->held_psn = calloc(cap, sizeof(*f->held_psn));
	if (!f->held || !f->held_len || !f->held_psn) {
		free(f->held);
		free(f->held_len);
		free(f->held_psn);
		f->held = NULL;
		f->held_len = NULL;
		f->held_psn = NULL;
		return false;
	}
	f->cap = cap;
	return true;
}

/* Deliver a held (or rebuilt) frame to the transport as if it had just arrived. */
static void
fec_rx_copy(struct roce_qp *qp, const uint8_t *frame, size_t len)
{
	struct roce_rx rx;

	if (roce_rx_parse(qp->dev, frame, len, &rx) != 0)
		return; /* counted by the parser */
	roce_rx_deliver(qp, &rx);
}

/* Give every held packet to the transport in PSN order: it sees the gap now. */
static void
fec_release(struct roce_qp *qp, enum roce_stat why)
{
	struct roce_fec_qp *f = qp->fec;
	uint32_t psn = f->lo;

	roce_qp_stat(qp, why, 1);
	f->hold_at = 0;
	f->release_now = false;
	for (uint32_t n = 0; n < f->cap && f->nheld; n++, psn = roce_psn_add(psn, 1)) {
		uint32_t s = fec_slot(f, psn);

		uint32_t l = f->held_len[s];

		if (!l || f->held_psn[s] != psn)
			continue;
		f->nheld--;
		f->held_len[s] = 0;
		fec_rx_copy(qp, f->held + (size_t)s * f->slot_size, l);
	}
	/* nothing stays behind, whatever the ring held */
	memset(f->held_len, 0, sizeof(*f->held_len) * f->cap);
	f->nheld = 0;
}

/* ePSN moved: deliver the held packets it reached, in order. */
static void
fec_drain(struct roce_qp *qp)
{
	struct roce_fec_qp *f = qp->fec;

	while (f->nheld && roce_psn_diff(f->lo, qp->resp.epsn) <= 0) {
		uint32_t s = fec_slot(f, f->lo), psn = f->lo;

		uint32_t l = f->held_len[s];

		f->lo = roce_psn_add(f->lo, 1);
		if (!l || f->held_psn[s] != psn)
			continue;
		f->nheld--;
		f->held_len[s] = 0;
		/* the slot stays valid while the transport reads it: nothing is held
		 * into it before this returns (it lies behind ePSN now) */
		fec_rx_copy(qp, f->held + (size_t)s * f->slot_size, l);
	}
}

static bool
fec_hold(struct roce_qp *qp, const struct roce_rx *rx, size_t len, int32_t d)
{
	struct roce_fec_qp *f = qp->fec;
	uint32_t s;

	if (!f->held && !fec_hold_alloc(qp))
		return false;
	if ((uint32_t)d >= f->cap || len > f->slot_size) {
		/* beyond the ring: the transport must see the gap now */
		if (f->nheld)
			fec_release(qp, ROCE_STAT_FEC_RELEASE_FULL);
		return false;
	}
	s = fec_slot(f, rx->psn);
	if (f->held_len[s] && f->held_psn[s] == rx->psn) {
		roce_qp_stat(qp, ROCE_STAT_FEC_HOLD_DUP, 1);
		return true;
	}
	if (f->held_len[s]) /* a stale packet from another lap of the ring: replaced */
		f->nheld--;
	if (!f->nheld) {
		/* a new hole: its loss signal is withheld until the deadline */
		f->lo = qp->resp.epsn;
		f->hold_at = qp->dev->now + fec_hold_ns(qp);
		f->hole = qp->resp.epsn;
		roce_qp_stat(qp, ROCE_STAT_FEC_WITHHELD, 1);
	}
	memcpy(f->held + (size_t)s * f->slot_size, rx->frame, len);
	f->held_len[s] = (uint32_t)len;
	f->held_psn[s] = rx->psn;
	f->nheld++;
	roce_qp_stat(qp, ROCE_STAT_FEC_HELD, 1);
	return true;
}

/* One data frame (original or rebuilt) through the hold-back. */
static void
fec_in(struct roce_qp *qp, const struct roce_rx *rx, size_t len)
{
	struct roce_fec_qp *f = qp->fec;
	int32_t d;

	if (!(rx->op->flags & ROCE_OPF_REQ)) {
		roce_rx_deliver(qp, rx);
		return;
	}
	f->rx_gap = ewma_gap(f->rx_gap, &f->rx_last, qp->dev->now);
	d = roce_psn_diff(rx->psn, qp->resp.epsn);
	if (d > 0 && fec_hold(qp, rx, len, d))
		return;
	roce_rx_deliver(qp, rx);
	if (f->nheld && roce_psn_diff(qp->resp.epsn, f->hole) > 0) {
		fec_drain(qp);
		if (!f->nheld) {
			f->hold_at = 0;
			roce_qp_stat(qp, ROCE_STAT_FEC_HOLD_REPAIRED, 1);
		} else if (roce_psn_diff(qp->resp.epsn, f->hole) > 0) {
			/* another hole further on: a new deadline for it */
			f->hole = qp->resp.epsn;
			f->hold_at = qp->dev->now + fec_hold_ns(qp);
			roce_qp_stat(qp, ROCE_STAT_FEC_HOLD_REPAIRED, 1);
			roce_qp_stat(qp, ROCE_STAT_FEC_WITHHELD, 1);
		}
	}
}

void
roce_fec_rx(struct roce_qp *qp, const struct roce_rx *rx, size_t len)
{
	struct roce_fec_qp *f = qp->fec;
	uint32_t n;
	int rc;

	f->nreb = 0;
	rc = f->ops->rx(f->st, rx->frame, len, fec_deliver, fec_event, qp);
	if (rc < 0) {
		roce_qp_stat(qp, ROCE_STAT_FEC_RX_REFUSED, 1);
	} else if (rc == ROCE_FEC_RX_CONSUMED) {
		roce_qp_stat(qp, ROCE_STAT_FEC_RX_FRAMES, 1);
	} else if (roce_opcode_is_fec(rx->pkt.h.bth.opcode)) {
		roce_qp_stat(qp, ROCE_STAT_FEC_RX_REFUSED, 1); /* the codec did not take it */
	} else {
		fec_in(qp, rx, len);
	}
	n = f->nreb;
	for (uint32_t i = 0; i < n; i++) {
		struct roce_rx r;

		roce_qp_stat(qp, ROCE_STAT_FEC_REBUILT, 1);
		if (roce_rx_parse(qp->dev, f->reb[i], f->reb_len[i], &r) == 0)
			fec_in(qp, &r, f->reb_len[i]);
	}
	f->nreb = 0;
	if (f->release_now && f->nheld)
		fec_release(qp, ROCE_STAT_FEC_RELEASE_UNREC);
	f->release_now = false;
}

/* ---- timers ---- */

uint64_t
roce_fec_next_deadline(const struct roce_qp *qp)
{
	const struct roce_fec_qp *f = qp->fec;
	uint64_t t = UINT64_MAX;

	if (f->hold_at)
		t = f->hold_at;
	if (f->flush_at && f->flush_at < t)
		t = f->flush_at;
	return t;
}

void
roce_fec_timers(struct roce_qp *qp)
{
	struct roce_fec_qp *f = qp->fec;
	uint64_t now = qp->dev->now;

	if (f->flush_at && now >= f->flush_at) {
		f->flush_at = 0;
		roce_qp_stat(qp, ROCE_STAT_FEC_TX_FLUSHES, 1);
		f->ops->tx_flush(f->st, fec_emit_now, qp);
	}
	if (f->hold_at && now >= f->hold_at && f->nheld)
		fec_release(qp, ROCE_STAT_FEC_RELEASE_DEADLINE);
	else if (f->hold_at && now >= f->hold_at)
		f->hold_at = 0;
}
