/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: seeded PRNG streams, uniformity, and netem's correlated draws. */
#include "emu_rng.h"
#include "emu_test_stat.h"
#include "rw_test.h"

static void
test_determinism(void)
{
	struct emu_rng a, b, c;
	int same_ab = 1, diff_ac = 0;

	emu_rng_seed(&a, 42, EMU_RNG_STREAM_LOSS);
	emu_rng_seed(&b, 42, EMU_RNG_STREAM_LOSS);
	emu_rng_seed(&c, 42, EMU_RNG_STREAM_DELAY);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = emu_rng_u64(&a), y = emu_rng_u64(&b), z = emu_rng_u64(&c);

		same_ab &= x == y;
		diff_ac += x != z;
	}
	CHECK(same_ab);
	CHECK(diff_ac > 990);
	emu_rng_seed(&a, 42, EMU_RNG_STREAM_LOSS);
	emu_rng_seed(&b, 43, EMU_RNG_STREAM_LOSS);
	CHECK(emu_rng_u64(&a) != emu_rng_u64(&b));
	/* pinned values: a change of generator or seeding breaks reproducibility of old runs */
	emu_rng_seed(&a, 1, 1);
	CHECK(emu_rng_u64(&a) == UINT64_C(3501290240102054732));
	emu_rng_seed(&a, 0, 0); /* the zero seed still gives a non-degenerate state */
	CHECK(emu_rng_u64(&a) == UINT64_C(18110106563157542208));
	CHECK(emu_rng_direction_seed(5, 0) != emu_rng_direction_seed(5, 1));
	CHECK(emu_rng_direction_seed(5, 0) == emu_rng_direction_seed(5, 0));
}

static void
test_uniformity(void)
{
	enum { N = 1 << 20, BINS = 256 };
	static uint32_t hist[BINS];
	struct emu_rng r;
	double sum = 0., chi2 = 0., dmin = 1., dmax = 0.;
	int below_ok = 1;

	emu_rng_seed(&r, 7, 1);
	for (int i = 0; i < N; i++) {
		uint32_t u = emu_rng_u32(&r);
		double d = emu_rng_double(&r);

		hist[u >> 24]++;
		sum += u * 0x1.0p-32;
		dmin = d < dmin ? d : dmin;
		dmax = d > dmax ? d : dmax;
		below_ok &= emu_rng_below(&r, 1000) < 1000;
	}
	for (int b = 0; b < BINS; b++) {
		double e = (double)N / BINS;

		chi2 += (hist[b] - e) * (hist[b] - e) / e;
	}
	CHECK_NEAR("u32 mean", sum / N, 0.5, EMU_Z * sqrt(1. / 12. / N));
	/* chi-square with 255 degrees of freedom: mean 255, sd sqrt(510) */
	CHECK_NEAR("u32 chi2 (256 bins)", chi2, 255., EMU_Z * sqrt(510.));
	CHECK(dmin >= 0. && dmax < 1.);
	CHECK(below_ok);
	CHECK_EQ(emu_rng_below(&r, 0), 0);
}

static void
test_prob_fixed_point(void)
{
	CHECK(emu_prob_from_double(0.) == 0);
	CHECK(emu_prob_from_double(1.) == EMU_PROB_ONE);
	CHECK(emu_prob_from_double(0.5) == EMU_PROB_ONE / 2);
	CHECK(emu_prob_from_double(-1.) == 0);
	CHECK(emu_prob_hit(UINT32_MAX, EMU_PROB_ONE)); /* 100 % always fires */
	CHECK(!emu_prob_hit(0, 0));		       /* 0 % never fires */
	CHECK(emu_prob_hit(0, 1));
	CHECK(!emu_prob_hit(1, 1));
}

/*
 * netem get_crandom(): X_n = (1 - rho) U_n + rho X_{n-1}. Stationary mean 1/2,
 * variance (1 - rho) / (12 (1 + rho)), lag-1 autocorrelation rho.
 */
static void
test_crand(void)
{
	enum { N = 1000000 };
	const double rho = 0.5;
	struct emu_crand c;
	struct emu_rng r;
	double sum = 0., sum2 = 0., lag = 0., prev = 0.5, var_th, var, mean;

	emu_rng_seed(&r, 11, 1);
	emu_crand_init(&c, rho);
	for (int i = 0; i < 100; i++)
		emu_crand_next(&c, &r); /* leave the start-up transient */
	for (int i = 0; i < N; i++) {
		double x = emu_crand_next(&c, &r) * 0x1.0p-32;

		sum += x;
		sum2 += x * x;
		lag += (x - 0.5) * (prev - 0.5);
		prev = x;
	}
	mean = sum / N;
	var = sum2 / N - mean * mean;
	var_th = (1. - rho) / (12. * (1. + rho));
	/* AR(1): Var(mean) = var (1 + rho) / ((1 - rho) N) */
	CHECK_NEAR("crand rho=0.5 mean", mean, 0.5, EMU_Z * sqrt(var_th * 3. / N));
	/* large-N sd of the AR(1) sample variance ~ var sqrt(2 (1 + rho^2) / ((1 - rho^2) N)),
	 * of the lag-1 autocorrelation ~ sqrt((1 - rho^2) / N) (Bartlett) */
	CHECK_NEAR("crand rho=0.5 variance", var, var_th,
		   EMU_Z * var_th * sqrt(2. * (1. + rho * rho) / ((1. - rho * rho) * N)));
	CHECK_NEAR("crand rho=0.5 lag-1 autocorrelation", lag / N / var, rho,
		   EMU_Z * sqrt((1. - rho * rho) / N));
	/* rho = 0: plain uniform, the state is not touched */
	emu_crand_init(&c, 0.);
	emu_crand_next(&c, &r);
	CHECK_EQ(c.last, 0);
	/* rho = 1: stuck at the last value forever */
	emu_crand_init(&c, 1.);
	c.last = 12345;
	CHECK_EQ(emu_crand_next(&c, &r), 12345);
}

RW_TEST_MAIN(RW_TEST(test_determinism), RW_TEST(test_uniformity), RW_TEST(test_prob_fixed_point),
	     RW_TEST(test_crand))
