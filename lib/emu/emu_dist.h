/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_dist.h
 * Delay-line timing: fixed delay plus jitter drawn from netem's
 * distributions, with netem's meaning of (mu = delay, sigma = jitter), and the
 * optional "jitter-no-reorder" clamp.
 *
 * netem (sch_netem.c tabledist()) maps a (possibly correlated) uniform draw u
 * through a 4096/16384-entry table of the distribution's quantile function
 * scaled by 8192 and stored in int16 (so |value| <= 32767/8192 ~= 4 sigma):
 *     delay = mu + sigma * Q(u)
 * We compute Q(u) analytically instead of by table lookup (no table files,
 * no 1/16384 quantile steps) but keep netem's shapes and clipping:
 *   - uniform      (no "distribution", netem's kernel default): mu - sigma + u * 2 sigma
 *   - normal       Q(u) = Phi^-1(u), clipped to [-4, 4]
 *   - pareto       Q(u) = (4/3) ((1 - u)^(-1/3) - 3/2)  (Pareto alpha = 3,
 *                  shifted to mean 0), clipped above at 4, so in [-2/3, 4]
 *   - paretonormal Q(u) = (Phi^-1(u) + 3 Qpareto(u)) / 4, the two components
 *                  at the same quantile u, as iproute2's paretonormal table.
 * A negative result is clamped to 0 delay (netem sends such packets at once).
 * Correlation ("delay T J CORR") is netem's get_crandom() on u, which narrows
 * the distribution (see emu_rng.h) exactly as netem does.
 */
#ifndef EMU_DIST_H
#define EMU_DIST_H

#include <stdbool.h>
#include <stdint.h>

#include "emu_err.h"
#include "emu_rng.h"

enum emu_dist_kind {
	EMU_DIST_UNIFORM,
	EMU_DIST_NORMAL,
	EMU_DIST_PARETO,
	EMU_DIST_PARETONORMAL,
};

/** Clip of the table-based distributions, in sigmas (netem: 32767 / 8192). */
#define EMU_DIST_CLIP 4.0

struct emu_dist_params {
	uint64_t delay_ns;  /**< mu */
	uint64_t jitter_ns; /**< sigma; 0 = constant delay */
	double corr;	    /**< netem delay correlation in [0, 1] */
	enum emu_dist_kind kind;
	bool no_reorder; /**< jitter-no-reorder: never depart before the previous packet */
};

struct emu_dist {
	struct emu_dist_params p;
	struct emu_rng rng;
	struct emu_crand crand;
	uint64_t last_departure_ns;
};

/** Initialise; draws use stream DELAY of @p seed. Returns 0 or -EMU_E_RANGE. */
int emu_dist_init(struct emu_dist *d, const struct emu_dist_params *p, uint64_t seed);

/**
 * The standardised shape Q(u) for u in [0, 1): the number of sigmas added to
 * mu. Uniform gives 2u - 1. Exposed for tests and docs.
 */
double emu_dist_quantile(enum emu_dist_kind kind, double u);

/** Inverse standard normal CDF Phi^-1(u), u in (0, 1), |error| < 1e-12. */
double emu_norm_quantile(double u);

/** One delay sample in ns (>= 0), as netem's tabledist(). */
uint64_t emu_dist_sample(struct emu_dist *d);

/**
 * Delay-line exit time of a packet entering it at @p now_ns:
 * now + sample, and with no_reorder max(that, previous exit). Not for
 * packets flagged for reordering (they skip the delay line).
 */
uint64_t emu_dist_departure(struct emu_dist *d, uint64_t now_ns);

const char *emu_dist_kind_name(enum emu_dist_kind k);

/** Kind from its SPEC name ("normal"); returns 0 or -EMU_E_UNKNOWN_KEYWORD. */
int emu_dist_kind_parse(const char *name, enum emu_dist_kind *k);

#endif /* EMU_DIST_H */
