/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared bottleneck of one direction (emu_bneck.h). */
#include "emu_bneck.h"

#include <stdlib.h>
#include <string.h>

#include "emu_err.h"

#define EMU_BNECK_MIN_RING 1024u

/*
 * The ring holds what the queue can hold: `limit` packets, or limit-bytes of 14-byte
 * frames, at most the pool (capacity). Sized to that and not to the pool, so that the
 * slots the FIFO cycles through stay in the cache (a pool-sized ring of 150 000 slots
 * made every admission's store a miss on net_null). Grown (never shrunk) when a SPEC
 * with a larger limit comes; 0, or -EMU_E_NOSPACE when it cannot grow (then the
 * admissions beyond the old size are tail drops).
 */
static int
ring_fit(struct emu_bneck *b, const struct emu_shaper_params *q)
{
	uint64_t need = q->limit_pkts	 ? q->limit_pkts
			: q->limit_bytes ? q->limit_bytes / 14 + 1
					 : b->cap_max;
	uint32_t cap = b->r ? b->mask + 1 : 0, ncap = EMU_BNECK_MIN_RING;
	struct emu_bneck_ent *r;

	if (need > b->cap_max)
		need = b->cap_max;
	while (ncap < need && ncap < (1u << 31))
		ncap <<= 1;
	if (ncap <= cap)
		return 0;
	r = calloc(ncap, sizeof(*r));
	if (r == NULL)
		return -EMU_E_NOSPACE;
	for (uint32_t i = 0; i < b->n; i++)
		r[i] = b->r[(b->head + i) & b->mask];
	free(b->r);
	b->r = r;
	b->head = 0;
	b->mask = ncap - 1;
	return 0;
}

int
emu_bneck_init(struct emu_bneck *b, uint32_t capacity, bool shared)
{
	memset(b, 0, sizeof(*b));
	b->cap_max = capacity ? capacity : 1;
	if (ring_fit(b, &(struct emu_shaper_params){.limit_pkts = EMU_BNECK_MIN_RING}) < 0)
		return -EMU_E_NOSPACE;
	b->shared = shared;
	emu_shaper_init(&b->q, &(struct emu_shaper_params){0}, &b->ec);
	return 0;
}

void
emu_bneck_free(struct emu_bneck *b)
{
	free(b->r);
	b->r = NULL;
	b->n = 0;
}

/* PFC from the backlog at @p t; records the backlog at each XOFF and XON. */
void
emu_bneck_pfc_poll(struct emu_bneck *b, uint64_t t, emu_bneck_emit_fn emit, void *ctx)
{
	struct emu_pfc_action act;
	uint64_t xoff = b->ec.v[EMU_CNT_PFC_XOFF], xon = b->ec.v[EMU_CNT_PFC_XON];

	if (!emu_pfcgen_poll(&b->pfc, t, b->q.q_bytes, &act))
		return;
	if (b->ec.v[EMU_CNT_PFC_XOFF] != xoff)
		b->xoff_at_bytes = b->q.q_bytes;
	if (b->ec.v[EMU_CNT_PFC_XON] != xon)
		b->xon_at_bytes = b->q.q_bytes;
	if (emit)
		emit(ctx, &act);
}

/*
 * Bring the queue to time @p t: every departure and every PFC refresh due by then, in
 * time order, each decided at its own time (a departure at its departure time, a
 * refresh at its deadline), so what is decided does not depend on when the workers
 * call in (a refresh at the deadline, not at the first poll after it).
 */
void
emu_bneck_catch_up(struct emu_bneck *b, uint64_t t, emu_bneck_emit_fn emit, void *ctx)
{
	if (!b->has_pfc) {
		/*
		 * No PFC: nothing is decided at a departure, only the backlog falls. The
		 * departures in one pass with the ring's indices and the backlog in
		 * registers (emu_shaper_dequeue() per packet stored and reloaded them:
		 * a tenth of the one-worker loop at rate 10gbit on net_null, perf).
		 */
		uint32_t h = b->head, n = b->n, k = 0;
		uint64_t bytes = b->q.q_bytes;

		while (n > 0 && b->r[h].dep_ns <= t) {
			uint32_t len = b->r[h].len;

			bytes = bytes >= len ? bytes - len : 0;
			h = (h + 1) & b->mask;
			n--;
			k++;
		}
		b->head = h;
		b->n = n;
		b->q.q_bytes = bytes;
		b->q.q_pkts = b->q.q_pkts >= k ? b->q.q_pkts - k : 0;
		b->ec.v[EMU_CNT_DEQUEUED] += k;
		return;
	}
	for (;;) {
		uint64_t dl = b->has_pfc ? emu_pfcgen_deadline(&b->pfc) : UINT64_MAX;
		uint64_t dep = b->n > 0 ? b->r[b->head].dep_ns : UINT64_MAX;

		if (dep <= t && dep <= dl) {
			emu_shaper_dequeue(&b->q, b->r[b->head].len);
			b->head = (b->head + 1) & b->mask;
			b->n--;
			if (b->has_pfc)
				emu_bneck_pfc_poll(b, dep, emit, ctx);
		} else if (dl <= t) {
			uint64_t before = b->pfc.gen.last_xoff_ns;

			emu_bneck_pfc_poll(b, dl, emit, ctx);
			/* a refresh moves the deadline on, an XON clears it; anything else
			 * (cannot happen) must not spin */
			if (b->pfc.gen.pausing && b->pfc.gen.last_xoff_ns == before)
				break;
			if (b->pfc.gen.pausing && emu_pfcgen_deadline(&b->pfc) <= dl)
				break;
		} else {
			break;
		}
	}
}

void
emu_bneck_configure(struct emu_bneck *b, const struct emu_shaper_params *q,
		    const struct emu_red_params *red, const struct emu_pfcgen_params *pfc,
		    uint64_t seed, const void *tag, emu_bneck_emit_fn emit, void *ctx)
{
	struct emu_shaper oq = b->q;
	struct emu_pfcgen op = b->pfc;
	bool was_pausing = b->has_pfc && emu_pfcgen_state(&op) == EMU_PFC_PAUSING;

	ring_fit(b, q);
	emu_shaper_init(&b->q, q, &b->ec);
	b->q.q_pkts = oq.q_pkts;
	b->q.q_bytes = oq.q_bytes;
	b->q.last_dep_ns = oq.last_dep_ns;
	b->has_queue = q->rate_bps != 0;
	b->has_red = red->enabled && emu_red_init(&b->red, red, seed, &b->ec) == 0;
	b->has_pfc = pfc->enabled && emu_pfcgen_init(&b->pfc, pfc, &b->ec) == 0;
	if (b->has_pfc && was_pausing) {
		b->pfc.gen.pausing = true;
		b->pfc.gen.last_xoff_ns = op.gen.last_xoff_ns;
	} else if (!b->has_pfc && was_pausing) {
		struct emu_pfc_action act = {.send = true, .prio = op.p.prio, .quanta = 0};

		b->ec.v[EMU_CNT_PFC_XON]++; /* release the sender we paused */
		if (emit)
			emit(ctx, &act);
	}
	/* no bottleneck any more: what it held leaves the accounting (the workers move
	 * their packets on at their departure times) */
	while (!b->has_queue && b->n > 0) {
		emu_shaper_dequeue(&b->q, b->r[b->head].len);
		b->head = (b->head + 1) & b->mask;
		b->n--;
	}
	b->tag = tag;
}

void
emu_bneck_advance(struct emu_bneck *b, uint64_t now, emu_bneck_emit_fn emit, void *ctx)
{
	uint64_t t = emu_bneck_clock_at(b, now);

	emu_bneck_catch_up(b, t, emit, ctx);
}

uint64_t
emu_bneck_next(const struct emu_bneck *b)
{
	uint64_t next = UINT64_MAX, t;
	uint32_t n = __atomic_load_n(&b->n, __ATOMIC_RELAXED);

	if (n > 0)
		next = __atomic_load_n(&b->r[__atomic_load_n(&b->head, __ATOMIC_RELAXED)].dep_ns,
				       __ATOMIC_RELAXED);
	if (b->has_pfc && (t = emu_pfcgen_deadline(&b->pfc)) < next)
		next = t;
	return next;
}
