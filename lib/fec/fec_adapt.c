/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file fec_adapt.c
 * The `--fec-adapt` policy (fec_adapt.h, docs/fec.md#adaptive-policy).
 */
#include <stddef.h>

#include "fec_adapt.h"

#define FEC_X_NAME(e, n, d) n,
const char *const fec_adapt_stat_names[FEC_AD_NSTATS] = {FEC_ADAPT_STATS_LIST(FEC_X_NAME)};
#undef FEC_X_NAME

/*
 * The table (docs/fec.md): residual loss per packet at random loss p is about
 * p * P(another loss among the block's other members not covered by R); each
 * level's "up" is where the level's residual loss is no longer small against p
 * and the next level's overhead pays; "down" is a quarter of the lower level's
 * "up", so a loss rate near a threshold does not flap.
 */
static const struct {
	struct fec_params p;
	uint32_t up_ppm, down_ppm;
} levels[FEC_ADAPT_LEVELS] = {
    {{FEC_MODE_XOR, 32, 4, 1}, 2000, 0},    /* 3.1 % overhead */
    {{FEC_MODE_XOR, 16, 4, 1}, 5000, 500},  /* 6.3 % */
    {{FEC_MODE_RS, 32, 1, 2}, 10000, 1250}, /* 6.3 % */
    {{FEC_MODE_RS, 32, 1, 4}, 30000, 2500}, /* 12.5 % */
    {{FEC_MODE_RS, 16, 1, 4}, 0, 7500},	    /* 25 % */
};

void
fec_adapt_init(struct fec_adapt *a, unsigned level)
{
	*a = (struct fec_adapt){0};
	a->level = level < FEC_ADAPT_LEVELS ? level : 0;
}

const struct fec_params *
fec_adapt_params(unsigned level)
{
	return level < FEC_ADAPT_LEVELS ? &levels[level].p : NULL;
}

void
fec_adapt_thresholds(unsigned level, uint32_t *up_ppm, uint32_t *down_ppm)
{
	*up_ppm = level < FEC_ADAPT_LEVELS ? levels[level].up_ppm : 0;
	*down_ppm = level < FEC_ADAPT_LEVELS ? levels[level].down_ppm : 0;
}

int
fec_adapt_level_of(const struct fec_params *p)
{
	for (unsigned i = 0; i < FEC_ADAPT_LEVELS; i++)
		if (levels[i].p.mode == p->mode && levels[i].p.k == p->k && levels[i].p.d == p->d &&
		    levels[i].p.r == p->r)
			return (int)i;
	return -1;
}

uint32_t
fec_adapt_loss_ppm(const struct fec_adapt *a)
{
	return (uint32_t)((a->loss * 1000000u) >> 32);
}

void
fec_adapt_sample(struct fec_adapt *a, bool lost, uint32_t psn)
{
	a->st[FEC_AD_SAMPLES]++;
	if (lost) {
		a->st[FEC_AD_LOST]++;
		a->win_lost++;
	}
	(void)psn;
	if (++a->win_n < FEC_ADAPT_WINDOW)
		return;
	/* a window ends: the estimate moves half way to its loss fraction */
	{
		uint64_t w = ((uint64_t)a->win_lost << 32) / FEC_ADAPT_WINDOW;

		a->loss = a->windows ? (a->loss + w) / 2 : w;
	}
	a->windows++;
	a->win_n = a->win_lost = 0;
	a->decide = true;
	if (fec_adapt_loss_ppm(a) < levels[a->level].down_ppm)
		a->below++;
	else
		a->below = 0;
}

void
fec_adapt_gap(struct fec_adapt *a, uint32_t run)
{
	if (run > a->max_run)
		a->max_run = run;
}

/* The longest run of losses a level repairs: D for XOR (interleaving), R for RS. */
static uint32_t
level_burst(unsigned level)
{
	const struct fec_params *p = &levels[level].p;

	return p->mode == FEC_MODE_XOR ? p->d : p->r;
}

static int
change(struct fec_adapt *a, int dir, uint64_t now, enum fec_adapt_stat why)
{
	a->level = (unsigned)((int)a->level + dir);
	a->changed_at = now ? now : 1;
	a->below = 0;
	a->max_run = 0;
	a->decide = false;
	a->st[why]++;
	return dir;
}

int
fec_adapt_decide(struct fec_adapt *a, uint64_t now, uint64_t hold_ns)
{
	uint64_t since = a->changed_at ? now - a->changed_at : UINT64_MAX;
	uint32_t loss = fec_adapt_loss_ppm(a), up = levels[a->level].up_ppm;
	bool burst = a->max_run > level_burst(a->level);

	/* a burst acts at once; the loss estimate at the end of a window */
	if (!a->decide && !burst)
		return 0;
	if (a->level + 1 < FEC_ADAPT_LEVELS && since >= hold_ns / 4) {
		if (burst)
			return change(a, +1, now, FEC_AD_UP_BURST);
		if (a->decide && loss > up)
			return change(a, +1, now, FEC_AD_UP_LOSS);
	}
	if (a->decide && a->level > 0 && a->below >= FEC_ADAPT_DOWN_WINDOWS && since >= hold_ns)
		return change(a, -1, now, FEC_AD_DOWN);
	a->decide = false;
	if (since >= hold_ns / 4)
		a->max_run = 0; /* a run counts until a decision that could act on it */
	return 0;
}
