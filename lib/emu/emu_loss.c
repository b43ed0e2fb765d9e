/* SPDX-License-Identifier: BSD-3-Clause */
#include "emu_loss.h"

#include <math.h>
#include <string.h>

#include "emu_err.h"

static const char *const kind_names[] = {"none", "random", "gemodel", "state"};
static const char *const ge_names[] = {"good", "bad"};
static const char *const gi_names[] = {"?", "1-gap-rx", "2-burst-rx", "3-burst-loss", "4-gap-loss"};

const char *
emu_loss_kind_name(enum emu_loss_kind k)
{
	return (unsigned)k < 4 ? kind_names[k] : "?";
}

const char *
emu_ge_state_name(enum emu_ge_state s)
{
	return (unsigned)s < 2 ? ge_names[s] : "?";
}

const char *
emu_gi_state_name(enum emu_gi_state s)
{
	return (unsigned)s < 5 ? gi_names[s] : "?";
}

void
emu_loss_gemodel_defaults(struct emu_loss_params *lp, double p)
{
	/* iproute2 q_netem.c: r = 1 - p, 1-h = 100 % (kernel h = 0), 1-k = 0 */
	lp->kind = EMU_LOSS_GEMODEL;
	lp->ge_p = p;
	lp->ge_r = 1. - p;
	lp->ge_1h = 1.;
	lp->ge_1k = 0.;
}

void
emu_loss_state_defaults(struct emu_loss_params *lp, double p13)
{
	/* iproute2 q_netem.c: p31 = 1 - p13, p32 = 0, p23 = 100 %, p14 = 0 */
	lp->kind = EMU_LOSS_STATE;
	lp->p13 = p13;
	lp->p31 = 1. - p13;
	lp->p32 = 0.;
	lp->p23 = 1.;
	lp->p14 = 0.;
}

static bool
is_prob(double p)
{
	return p >= 0. && p <= 1.;
}

/* Sums of two probabilities may exceed 1 by rounding of the user's decimals. */
#define EMU_SUM_SLACK 1e-12

int
emu_loss_params_check(const struct emu_loss_params *lp)
{
	switch (lp->kind) {
	case EMU_LOSS_NONE:
		return 0;
	case EMU_LOSS_RANDOM:
		return is_prob(lp->p) && is_prob(lp->corr) ? 0 : -EMU_E_RANGE;
	case EMU_LOSS_GEMODEL:
		return is_prob(lp->ge_p) && is_prob(lp->ge_r) && is_prob(lp->ge_1h) &&
			       is_prob(lp->ge_1k)
			   ? 0
			   : -EMU_E_RANGE;
	case EMU_LOSS_STATE:
		if (!is_prob(lp->p13) || !is_prob(lp->p31) || !is_prob(lp->p32) ||
		    !is_prob(lp->p23) || !is_prob(lp->p14))
			return -EMU_E_RANGE;
		if (lp->p13 + lp->p14 > 1. + EMU_SUM_SLACK ||
		    lp->p31 + lp->p32 > 1. + EMU_SUM_SLACK)
			return -EMU_E_RANGE;
		return 0;
	}
	return -EMU_E_INVAL;
}

int
emu_loss_init(struct emu_loss *l, const struct emu_loss_params *lp, uint64_t seed)
{
	int rc = emu_loss_params_check(lp);

	if (rc)
		return rc;
	memset(l, 0, sizeof(*l));
	l->kind = lp->kind;
	emu_rng_seed(&l->rng, seed, EMU_RNG_STREAM_LOSS);
	switch (lp->kind) {
	case EMU_LOSS_NONE:
		break;
	case EMU_LOSS_RANDOM:
		l->a[0] = emu_prob_from_double(lp->p);
		emu_crand_init(&l->crand, lp->corr);
		break;
	case EMU_LOSS_GEMODEL:
		l->a[0] = emu_prob_from_double(lp->ge_p);
		l->a[1] = emu_prob_from_double(lp->ge_r);
		l->a[2] = emu_prob_from_double(lp->ge_1h);
		l->a[3] = emu_prob_from_double(lp->ge_1k);
		l->state = EMU_GE_GOOD; /* netem: clg.state = GOOD_STATE on (re)configuration */
		break;
	case EMU_LOSS_STATE:
		l->a[0] = emu_prob_from_double(lp->p13);
		l->a[1] = emu_prob_from_double(lp->p31);
		l->a[2] = emu_prob_from_double(lp->p32);
		l->a[3] = emu_prob_from_double(lp->p23);
		l->a[4] = emu_prob_from_double(lp->p14);
		l->state = EMU_GI_GAP_RX; /* netem: TX_IN_GAP_PERIOD */
		break;
	}
	return 0;
}

/*
 * Gilbert-Elliott, netem loss_gilb_ell(): transition draw, then loss draw with
 * the pre-transition state S_n:  P(loss | GOOD) = 1-k,  P(loss | BAD) = 1-h;
 * S_{n+1} = BAD w.p. p from GOOD, GOOD w.p. r from BAD.
 */
static bool
ge_step(struct emu_loss *l)
{
	enum emu_ge_state s = (enum emu_ge_state)l->state;
	uint32_t u_move = emu_rng_u32(&l->rng);
	uint32_t u_loss = emu_rng_u32(&l->rng);

	switch (s) {
	case EMU_GE_GOOD:
		if (emu_prob_hit(u_move, l->a[0]))
			l->state = EMU_GE_BAD;
		return emu_prob_hit(u_loss, l->a[3]);
	case EMU_GE_BAD:
		if (emu_prob_hit(u_move, l->a[1]))
			l->state = EMU_GE_GOOD;
		return emu_prob_hit(u_loss, l->a[2]);
	}
	return false;
}

/* 4-state handlers (netem loss_4state()): each returns the state entered. */
static enum emu_gi_state
gi_from_gap_rx(const struct emu_loss *l, uint64_t u)
{
	const emu_prob p13 = l->a[0], p14 = l->a[4];

	if (u < p14)
		return EMU_GI_GAP_LOSS;
	if (u < p14 + p13) /* 64-bit sum: no wrap, unlike netem's u32 a1 + a4 */
		return EMU_GI_BURST_LOSS;
	return EMU_GI_GAP_RX;
}

static enum emu_gi_state
gi_from_burst_rx(const struct emu_loss *l, uint64_t u)
{
	return u < l->a[3] ? EMU_GI_BURST_LOSS : EMU_GI_BURST_RX; /* p23 */
}

static enum emu_gi_state
gi_from_burst_loss(const struct emu_loss *l, uint64_t u)
{
	const emu_prob p31 = l->a[1], p32 = l->a[2];

	if (u < p32)
		return EMU_GI_BURST_RX;
	if (u < p32 + p31)
		return EMU_GI_GAP_RX;
	return EMU_GI_BURST_LOSS;
}

static bool
gi_step(struct emu_loss *l)
{
	uint64_t u = emu_rng_u32(&l->rng);
	enum emu_gi_state next = EMU_GI_GAP_RX;

	switch ((enum emu_gi_state)l->state) {
	case EMU_GI_GAP_RX:
		next = gi_from_gap_rx(l, u);
		break;
	case EMU_GI_BURST_RX:
		next = gi_from_burst_rx(l, u);
		break;
	case EMU_GI_BURST_LOSS:
		next = gi_from_burst_loss(l, u);
		break;
	case EMU_GI_GAP_LOSS:
		next = EMU_GI_GAP_RX; /* p41 = 1 */
		break;
	}
	l->state = next;
	return next == EMU_GI_BURST_LOSS || next == EMU_GI_GAP_LOSS;
}

static void
close_run(struct emu_loss_stats *st)
{
	uint64_t n = st->cur_run;

	if (n == 0)
		return;
	st->runs++;
	st->run_sum += n;
	if (n > st->max_run)
		st->max_run = n;
	st->loss_bursts[(n < EMU_LOSS_BURST_BUCKETS ? n : EMU_LOSS_BURST_BUCKETS) - 1]++;
	st->cur_run = 0;
}

enum emu_loss_verdict
emu_loss_step(struct emu_loss *l)
{
	bool lose = false;

	switch (l->kind) {
	case EMU_LOSS_NONE:
		break;
	case EMU_LOSS_RANDOM:
		/* netem loss_event(): q->loss >= get_crandom() */
		lose = emu_prob_hit(emu_crand_next(&l->crand, &l->rng), l->a[0]);
		break;
	case EMU_LOSS_GEMODEL:
		lose = ge_step(l);
		break;
	case EMU_LOSS_STATE:
		lose = gi_step(l);
		break;
	}
	l->stats.steps++;
	if (lose) {
		l->stats.lost++;
		l->stats.cur_run++;
		return EMU_LOSS_LOSE;
	}
	close_run(&l->stats);
	return EMU_LOSS_KEEP;
}

void
emu_loss_flush(struct emu_loss *l)
{
	close_run(&l->stats);
}

/* E[B] = P_L / (P_L - P_11), or infinity when losses never end. */
static double
mean_run(double pl, double p11)
{
	if (pl <= 0.)
		return 0.;
	return pl - p11 > 0. ? pl / (pl - p11) : INFINITY;
}

static void
ge_expected(const struct emu_loss_params *lp, double *rate, double *burst)
{
	const double p = lp->ge_p, r = lp->ge_r, lb = lp->ge_1h, lg = lp->ge_1k;
	double pib, pig, p11;

	if (p + r <= 0.) { /* never leaves GOOD (the initial state) */
		*rate = lg;
		*burst = mean_run(lg, lg * lg);
		return;
	}
	/* pi_B = p / (p + r); P_L = pi_G (1-k) + pi_B (1-h) */
	pib = p / (p + r);
	pig = r / (p + r);
	*rate = pig * lg + pib * lb;
	/* P_11 = pi_G l_G [(1-p) l_G + p l_B] + pi_B l_B [r l_G + (1-r) l_B] */
	p11 = pig * lg * ((1. - p) * lg + p * lb) + pib * lb * (r * lg + (1. - r) * lb);
	*burst = mean_run(*rate, p11);
}

static void
gi_expected(const struct emu_loss_params *lp, double *rate, double *burst)
{
	const double p13 = lp->p13, p31 = lp->p31, p32 = lp->p32, p23 = lp->p23, p14 = lp->p14;
	/* unnormalised stationary weights: pi_i * p31 * p23 */
	const double w1 = p31 * p23, w2 = p13 * p32, w3 = p13 * p23, w4 = p14 * p31 * p23;
	const double sum = w1 + w2 + w3 + w4;
	double ends;

	if (sum <= 0.) {	 /* reducible chains started in state 1 */
		if (p13 <= 0.) { /* 1 <-> 4 only */
			*rate = p14 / (1. + p14);
			*burst = p14 > 0. ? 1. : 0.;
		} else { /* state 3 absorbing */
			*rate = 1.;
			*burst = INFINITY;
		}
		return;
	}
	*rate = (w3 + w4) / sum;
	/* a loss run ends after state 3 w.p. p31 + p32 and always after state 4 */
	ends = w3 * (p31 + p32) + w4;
	*burst = w3 + w4 <= 0. ? 0. : (ends > 0. ? (w3 + w4) / ends : INFINITY);
}

int
emu_loss_expected(const struct emu_loss_params *lp, double *loss_rate, double *mean_burst)
{
	double rate = 0., burst = 0.;

	switch (lp->kind) {
	case EMU_LOSS_NONE:
		break;
	case EMU_LOSS_RANDOM:
		rate = lp->p;
		burst = mean_run(rate, rate * rate);
		break;
	case EMU_LOSS_GEMODEL:
		ge_expected(lp, &rate, &burst);
		break;
	case EMU_LOSS_STATE:
		gi_expected(lp, &rate, &burst);
		break;
	default:
		return -EMU_E_INVAL;
	}
	*loss_rate = rate;
	*mean_burst = burst;
	return 0;
}
