/* SPDX-License-Identifier: BSD-3-Clause */
/* SPEC writer: the effective configuration as text emu_spec_parse() reads back. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "emu_spec.h"
#include "emu_units.h"

struct out {
	char *buf;
	size_t len, pos;
	bool overflow;
};

__attribute__((format(printf, 2, 3))) static void
put(struct out *o, const char *fmt, ...)
{
	size_t room = o->pos < o->len ? o->len - o->pos : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->pos : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room)
		o->overflow = true;
	else
		o->pos += (size_t)n;
}

static void
put_time(struct out *o, uint64_t ns)
{
	char b[32];

	emu_format_time(b, sizeof(b), ns);
	put(o, " %s", b);
}

static void
put_size(struct out *o, const char *kw, uint64_t bytes)
{
	char b[32];

	emu_format_size(b, sizeof(b), bytes);
	put(o, " %s %s", kw, b);
}

static void
put_prob(struct out *o, double p)
{
	char b[40];

	emu_format_prob(b, sizeof(b), p);
	put(o, " %s", b);
}

static void
put_prob_corr(struct out *o, const char *kw, double p, double corr)
{
	put(o, " %s", kw);
	put_prob(o, p);
	if (corr > 0.)
		put_prob(o, corr);
}

static void
put_loss(struct out *o, const struct emu_loss_params *lp)
{
	switch (lp->kind) {
	case EMU_LOSS_NONE:
		break;
	case EMU_LOSS_RANDOM:
		put_prob_corr(o, "loss random", lp->p, lp->corr);
		break;
	case EMU_LOSS_GEMODEL:
		put(o, " loss gemodel");
		put_prob(o, lp->ge_p);
		put_prob(o, lp->ge_r);
		put_prob(o, lp->ge_1h);
		put_prob(o, lp->ge_1k);
		break;
	case EMU_LOSS_STATE:
		put(o, " loss state");
		put_prob(o, lp->p13);
		put_prob(o, lp->p31);
		put_prob(o, lp->p32);
		put_prob(o, lp->p23);
		put_prob(o, lp->p14);
		break;
	}
}

static void
put_rate(struct out *o, const struct emu_shaper_params *q)
{
	char b[32];

	emu_format_rate(b, sizeof(b), q->rate_bps);
	put(o, " rate %s", b);
	if (q->overhead != 0 || q->cell_size != 0)
		put(o, " %" PRId32, q->overhead);
	if (q->cell_size != 0)
		put(o, " %" PRIu32 " %" PRId32, q->cell_size, q->cell_overhead);
}

int
emu_spec_format(const struct emu_spec *s, char *buf, size_t len)
{
	const struct emu_impair_params *im = &s->impair;
	struct out o = {buf, len, 0, false};

	if (len != 0)
		buf[0] = '\0';
	put(&o, "limit %" PRIu32, s->queue.limit_pkts);
	if (s->delay.delay_ns != 0 || s->delay.jitter_ns != 0) {
		put(&o, " delay");
		put_time(&o, s->delay.delay_ns);
		if (s->delay.jitter_ns != 0) {
			put_time(&o, s->delay.jitter_ns);
			if (s->delay.corr > 0.)
				put_prob(&o, s->delay.corr);
		}
	}
	if (s->delay.kind != EMU_DIST_UNIFORM)
		put(&o, " distribution %s", emu_dist_kind_name(s->delay.kind));
	if (s->delay.no_reorder)
		put(&o, " jitter-no-reorder");
	put_loss(&o, &im->loss);
	if (im->ecn)
		put(&o, " ecn");
	if (im->dup_p > 0.)
		put_prob_corr(&o, "duplicate", im->dup_p, im->dup_corr);
	if (im->corrupt_p > 0.)
		put_prob_corr(&o, "corrupt", im->corrupt_p, im->corrupt_corr);
	if (im->corrupt_recompute)
		put(&o, " corrupt-recompute");
	if (s->ctrl_delay)
		put(&o, " ctrl-delay");
	if (im->reorder_p > 0.) {
		put_prob_corr(&o, "reorder", im->reorder_p, im->reorder_corr);
		put(&o, " gap %" PRIu32, im->gap ? im->gap : 1);
	}
	if (s->queue.rate_bps != 0)
		put_rate(&o, &s->queue);
	if (s->queue.limit_bytes != 0)
		put_size(&o, "limit-bytes", s->queue.limit_bytes);
	if (s->red.enabled) {
		put_size(&o, "red kmin", s->red.kmin_bytes);
		put_size(&o, "kmax", s->red.kmax_bytes);
		put(&o, " pmax");
		put_prob(&o, s->red.pmax);
	}
	if (s->pfc.enabled) {
		put_size(&o, "pfc xoff", s->pfc.xoff_bytes);
		put_size(&o, "xon", s->pfc.xon_bytes);
		put(&o, " prio %u", (unsigned)s->pfc.prio);
	}
	for (uint32_t i = 0; i < s->rules.n && i < EMU_RULES_MAX; i++) {
		char b[128];

		emu_rule_format(&s->rules.r[i], b, sizeof(b));
		put(&o, " %s", b);
	}
	if (s->seed_set)
		put(&o, " seed %" PRIu64, s->seed);
	return o.overflow ? -EMU_E_NOSPACE : (int)o.pos;
}
