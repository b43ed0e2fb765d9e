/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_test_stat.h
 * Statistical checks for the lib/emu model tests, on rw_test.h's counters.
 * Every statistical check prints one line "stat NAME measured M theory T tol
 * D (z = Z)" so the test log records measured-vs-theory; the tolerances are
 * EMU_Z standard deviations of the estimator, from the variance formulas in
 * docs/emulator-models.md. The seeds are fixed, so results are reproducible;
 * the z bound only says how far from theory an honest model may land.
 */
#ifndef EMU_TEST_STAT_H
#define EMU_TEST_STAT_H

#include <math.h>
#include <stdio.h>

#include "rw_test.h"

#define EMU_Z 5.0 /* standard deviations allowed */

#define CHECK_NEAR(name, meas, theory, tol)                                                        \
	emu_check_near(__FILE__, __LINE__, (name), (meas), (theory), (tol))

static inline void
emu_check_near(const char *file, int line, const char *name, double m, double t, double tol)
{
	double z = tol > 0. ? (m - t) / (tol / EMU_Z) : 0.;

	printf("  stat %-44s measured %-12.6g theory %-12.6g tol %-10.3g (z = %+.2f)\n", name, m, t,
	       tol, z);
	if (fabs(m - t) <= tol) {
		rw_t_pass++;
	} else {
		rw_t_fail++;
		fprintf(stderr,
			"%s:%d: [%s] %s: measured %.9g, theory %.9g, |diff| %.3g > tol %.3g\n",
			file, line, rw_t_case, name, m, t, fabs(m - t), tol);
	}
}

/** EMU_Z standard deviations of a binomial proportion p over n trials. */
static inline double
emu_binom_tol(double p, double n)
{
	return EMU_Z * sqrt(p * (1. - p) / n);
}

#endif /* EMU_TEST_STAT_H */
