/* SPDX-License-Identifier: BSD-3-Clause */
#include "emu_dist.h"

#include <math.h>
#include <string.h>

#include "emu_err.h"

static const char *const kind_names[] = {"uniform", "normal", "pareto", "paretonormal"};

const char *
emu_dist_kind_name(enum emu_dist_kind k)
{
	return (unsigned)k < 4 ? kind_names[k] : "?";
}

int
emu_dist_kind_parse(const char *name, enum emu_dist_kind *k)
{
	for (unsigned i = 0; i < 4; i++) {
		if (strcmp(name, kind_names[i]) == 0) {
			*k = (enum emu_dist_kind)i;
			return 0;
		}
	}
	return -EMU_E_UNKNOWN_KEYWORD;
}

int
emu_dist_init(struct emu_dist *d, const struct emu_dist_params *p, uint64_t seed)
{
	if (!(p->corr >= 0. && p->corr <= 1.) || (unsigned)p->kind > EMU_DIST_PARETONORMAL ||
	    p->delay_ns > (UINT64_C(1) << 62) || p->jitter_ns > (UINT64_C(1) << 62))
		return -EMU_E_RANGE;
	memset(d, 0, sizeof(*d));
	d->p = *p;
	emu_rng_seed(&d->rng, seed, EMU_RNG_STREAM_DELAY);
	emu_crand_init(&d->crand, p->corr);
	return 0;
}

/*
 * Phi^-1(u): a starting point from Abramowitz & Stegun 26.2.23 (|error| <
 * 4.5e-4), then one Halley step on f(x) = Phi(x) - u, which is cubically
 * convergent:  t = f / phi(x),  x <- x - t / (1 + x t / 2).
 */
double
emu_norm_quantile(double u)
{
	double p, t, x, f;
	bool lower;

	if (!(u > 0.))
		return -INFINITY;
	if (!(u < 1.))
		return INFINITY;
	lower = u < 0.5;
	p = lower ? u : 1. - u; /* upper-tail probability of |x| */
	t = sqrt(-2. * log(p));
	x = t - (2.515517 + t * (0.802853 + t * 0.010328)) /
		    (1. + t * (1.432788 + t * (0.189269 + t * 0.001308)));
	/* Halley step on the upper tail Q(x) = erfc(x / sqrt 2) / 2 = p */
	f = 0.5 * erfc(x / M_SQRT2) - p;
	t = -f / (exp(-0.5 * x * x) / sqrt(2. * M_PI)); /* -(Q - p) / Q' with Q' = -phi */
	x = x - t / (1. + x * t / 2.);
	return lower ? -x : x;
}

static double
pareto_q(double u)
{
	/* Pareto(x_m = 1, alpha = 3) has mean 3/2; netem scales (X - 3/2) by 4/3 */
	double q = (4. / 3.) * (pow(1. - u, -1. / 3.) - 1.5);

	return q > EMU_DIST_CLIP ? EMU_DIST_CLIP : q;
}

static double
clip(double q)
{
	if (q > EMU_DIST_CLIP)
		return EMU_DIST_CLIP;
	if (q < -EMU_DIST_CLIP)
		return -EMU_DIST_CLIP;
	return q;
}

double
emu_dist_quantile(enum emu_dist_kind kind, double u)
{
	switch (kind) {
	case EMU_DIST_UNIFORM:
		return 2. * u - 1.;
	case EMU_DIST_NORMAL:
		return clip(emu_norm_quantile(u));
	case EMU_DIST_PARETO:
		return pareto_q(u);
	case EMU_DIST_PARETONORMAL:
		return clip((clip(emu_norm_quantile(u)) + 3. * pareto_q(u)) / 4.);
	}
	return 0.;
}

uint64_t
emu_dist_sample(struct emu_dist *d)
{
	const uint64_t mu = d->p.delay_ns, sigma = d->p.jitter_ns;
	uint32_t v;
	int64_t off;

	if (sigma == 0)
		return mu;
	v = emu_crand_next(&d->crand, &d->rng);
	if (d->p.kind == EMU_DIST_UNIFORM) {
		/* netem: (rnd % 2 sigma) + mu - sigma; here the exact scaled form */
		uint64_t k = (uint64_t)(((unsigned __int128)v * (2 * sigma)) >> 32);

		off = (int64_t)k - (int64_t)sigma;
	} else {
		/* cell midpoints: u never hits 0 or 1 */
		double u = ((double)v + 0.5) * 0x1.0p-32;

		off = llround((double)sigma * emu_dist_quantile(d->p.kind, u));
	}
	if (off < 0 && (uint64_t)-off > mu)
		return 0;
	return (uint64_t)((int64_t)mu + off);
}

uint64_t
emu_dist_departure(struct emu_dist *d, uint64_t now_ns)
{
	uint64_t t = now_ns + emu_dist_sample(d);

	if (d->p.no_reorder && t < d->last_departure_ns)
		t = d->last_departure_ns;
	if (t > d->last_departure_ns)
		d->last_departure_ns = t;
	return t;
}
