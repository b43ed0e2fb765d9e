/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: instantaneous-queue RED/ECN marking curve (DCQCN congestion point). */
#include "emu_red.h"
#include "emu_test_stat.h"
#include "rw_test.h"

#define KMIN 10240u  /* 10kb */
#define KMAX 102400u /* 100kb */

static struct emu_counters cnt;

static struct emu_red
make(double pmax)
{
	struct emu_red_params p = {
	    .enabled = true, .kmin_bytes = KMIN, .kmax_bytes = KMAX, .pmax = pmax};
	struct emu_red r;

	CHECK_EQ(emu_red_init(&r, &p, 31337, &cnt), 0);
	return r;
}

static void
test_curve_exact(void)
{
	struct emu_red r = make(0.2);
	const emu_prob pmax = emu_prob_from_double(0.2);

	CHECK(emu_red_prob(&r, 0) == 0);
	CHECK(emu_red_prob(&r, KMIN) == 0);
	CHECK(emu_red_prob(&r, KMIN + (KMAX - KMIN) / 2) == pmax / 2);
	CHECK(emu_red_prob(&r, KMIN + 3 * (KMAX - KMIN) / 4) == pmax * 3 / 4);
	CHECK(emu_red_prob(&r, KMAX) == pmax);
	CHECK(emu_red_prob(&r, KMAX + 1) == EMU_PROB_ONE);
	r.p.enabled = false;
	CHECK(emu_red_prob(&r, KMAX + 1) == 0);
}

/* Marking fraction at several depths within binomial tolerance. */
static void
test_curve_statistical(void)
{
	static const double frac[] = {0.1, 0.25, 0.5, 0.75, 1.0};
	const double pmax = 0.2, n = 200000;
	struct emu_red r = make(pmax);
	char label[64];

	emu_counters_reset(&cnt);
	for (size_t i = 0; i < sizeof(frac) / sizeof(frac[0]); i++) {
		uint64_t q = KMIN + (uint64_t)(frac[i] * (KMAX - KMIN));
		double marks = 0, p = pmax * (double)(q - KMIN) / (KMAX - KMIN);

		for (int k = 0; k < (int)n; k++)
			marks += emu_red_decide(&r, q, 2 /* ECT(0) */) == EMU_RED_MARK;
		snprintf(label, sizeof(label), "RED mark fraction at q = kmin + %.2f (kmax-kmin)",
			 frac[i]);
		CHECK_NEAR(label, marks / n, p, emu_binom_tol(p, n));
	}
	/* below kmin and above kmax: exact */
	int below = 0, above = 0;

	for (int k = 0; k < 100000; k++) {
		below += emu_red_decide(&r, KMIN, 1 /* ECT(1) */) == EMU_RED_MARK;
		above += emu_red_decide(&r, KMAX + 1, 1) == EMU_RED_MARK;
	}
	CHECK_EQ(below, 0);
	CHECK_EQ(above, 100000);
}

/* Non-ECT packets are never dropped nor marked by RED; CE passes untouched. */
static void
test_not_ect_and_ce(void)
{
	struct emu_red r = make(0.5);
	int marked = 0;
	const double n = 100000;

	emu_counters_reset(&cnt);
	for (int k = 0; k < (int)n; k++) {
		marked += emu_red_decide(&r, KMAX + 1, 0) == EMU_RED_MARK;
		marked += emu_red_decide(&r, KMAX + 1, 3) == EMU_RED_MARK;
	}
	CHECK_EQ(marked, 0);
	CHECK_EQ(cnt.v[EMU_CNT_RED_NOT_ECT], (uint64_t)n); /* every one was selected */
	CHECK_EQ(cnt.v[EMU_CNT_ECN_MARK_RED], 0);
	for (int k = 0; k < (int)n; k++)
		emu_red_decide(&r, (KMIN + KMAX) / 2, 0);
	CHECK_NEAR("RED non-ECT selections at p = pmax/2 (counted, passed)",
		   (double)(cnt.v[EMU_CNT_RED_NOT_ECT] - (uint64_t)n) / n, 0.25,
		   emu_binom_tol(0.25, n));
}

static void
test_params(void)
{
	struct emu_red_params p = {
	    .enabled = true, .kmin_bytes = 100, .kmax_bytes = 100, .pmax = 0.1};
	struct emu_red r;

	CHECK_EQ(emu_red_init(&r, &p, 1, &cnt), -EMU_E_RANGE);
	p.kmax_bytes = 200;
	p.pmax = 1.5;
	CHECK_EQ(emu_red_init(&r, &p, 1, &cnt), -EMU_E_RANGE);
	p.pmax = 0.; /* DCTCP-style step at kmax */
	CHECK_EQ(emu_red_init(&r, &p, 1, &cnt), 0);
	CHECK_EQ(emu_red_decide(&r, 150, 2), EMU_RED_PASS);
	CHECK_EQ(emu_red_decide(&r, 201, 2), EMU_RED_MARK);
	CHECK_EQ(emu_red_init(&r, &p, 1, NULL), -EMU_E_INVAL);
}

RW_TEST_MAIN(RW_TEST(test_curve_exact), RW_TEST(test_curve_statistical),
	     RW_TEST(test_not_ect_and_ce), RW_TEST(test_params))
