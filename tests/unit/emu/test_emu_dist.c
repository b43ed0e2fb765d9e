/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests: delay jitter distributions against their analytic quantiles,
 * moments and clipping, netem's correlation, and jitter-no-reorder.
 */
#include "emu_dist.h"
#include "emu_test_stat.h"
#include "rw_test.h"

#define SEED 777u
#define MU 10000000.   /* 10 ms */
#define SIGMA 1000000. /* 1 ms */
#define N 400000

/* Independent Phi^-1 by bisection on Phi(x) = erfc(-x / sqrt 2) / 2. */
static double
phi_inv_bisect(double u)
{
	double lo = -40., hi = 40.;

	for (int i = 0; i < 200; i++) {
		double mid = 0.5 * (lo + hi);

		if (0.5 * erfc(-mid / sqrt(2.)) < u)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

static void
test_norm_quantile(void)
{
	static const double us[] = {1e-12, 1e-9, 1e-6, 1e-3, 0.025, 0.3, 0.5, 0.7, 0.975, 0.999999};
	double worst = 0.;

	for (size_t i = 0; i < sizeof(us) / sizeof(us[0]); i++) {
		double e = fabs(emu_norm_quantile(us[i]) - phi_inv_bisect(us[i]));

		worst = e > worst ? e : worst;
	}
	CHECK_NEAR("Phi^-1 max abs error vs bisection", worst, 0., 1e-9);
	CHECK(isinf(emu_norm_quantile(0.)) && emu_norm_quantile(0.) < 0.);
	CHECK(isinf(emu_norm_quantile(1.)) && emu_norm_quantile(1.) > 0.);
}

struct sample_stats {
	double mean, sd, min, max;
	double m4; /* central fourth moment */
	double *x; /* sorted deviations (D - mu) / sigma */
};

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
draw(enum emu_dist_kind kind, double corr, struct sample_stats *ss)
{
	struct emu_dist_params p = {
	    .delay_ns = (uint64_t)MU, .jitter_ns = (uint64_t)SIGMA, .corr = corr, .kind = kind};
	struct emu_dist d;
	double s = 0., s2 = 0.;

	CHECK_EQ(emu_dist_init(&d, &p, SEED + kind), 0);
	ss->min = INFINITY;
	ss->max = -INFINITY;
	for (int i = 0; i < N; i++) {
		double y = ((double)emu_dist_sample(&d) - MU) / SIGMA;

		ss->x[i] = y;
		s += y;
		s2 += y * y;
		ss->min = y < ss->min ? y : ss->min;
		ss->max = y > ss->max ? y : ss->max;
	}
	ss->mean = s / N;
	ss->sd = sqrt(s2 / N - ss->mean * ss->mean);
	ss->m4 = 0.;
	for (int i = 0; i < N; i++)
		ss->m4 += pow(ss->x[i] - ss->mean, 4.) / N;
	qsort(ss->x, N, sizeof(double), cmp_double);
}

/* Fraction of samples <= y (x sorted). */
static double
cdf_at(const struct sample_stats *ss, double y)
{
	size_t lo = 0, hi = N;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ss->x[mid] <= y)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (double)lo / N;
}

/*
 * EMU_Z sd of the sample sd: Var(s^2) = (mu4 - sigma^4) / N (times @p infl for
 * correlated samples), sd(s) = sd(s^2) / (2 s). mu4 is taken from the sample.
 */
static double
sd_tol(const struct sample_stats *ss, double infl)
{
	return EMU_Z * sqrt(infl * (ss->m4 - pow(ss->sd, 4.)) / N) / (2. * ss->sd);
}

static void
check_cdf(const char *name, const struct sample_stats *ss, double y, double q)
{
	char label[96];

	snprintf(label, sizeof(label), "%s P(D <= mu %+.3f sigma)", name, y);
	CHECK_NEAR(label, cdf_at(ss, y), q, emu_binom_tol(q, N));
}

static double xs[N];

static void
test_uniform(void)
{
	struct sample_stats ss = {.x = xs};

	draw(EMU_DIST_UNIFORM, 0., &ss);
	/* U(mu - sigma, mu + sigma): mean mu, sd sigma / sqrt 3 */
	CHECK_NEAR("uniform mean / sigma", ss.mean, 0., EMU_Z * sqrt(1. / 3. / N));
	CHECK_NEAR("uniform sd / sigma", ss.sd, 1. / sqrt(3.), sd_tol(&ss, 1.));
	CHECK(ss.min >= -1. && ss.max < 1.);
	check_cdf("uniform", &ss, -0.5, 0.25);
	check_cdf("uniform", &ss, 0.8, 0.9);
}

static void
test_normal(void)
{
	struct sample_stats ss = {.x = xs};

	draw(EMU_DIST_NORMAL, 0., &ss);
	CHECK_NEAR("normal mean / sigma", ss.mean, 0., EMU_Z / sqrt(N));
	/* clipping at 4 sigma lowers the sd by < 0.1 % */
	CHECK_NEAR("normal sd / sigma", ss.sd, 1., sd_tol(&ss, 1.) + 1e-3);
	CHECK(ss.min >= -EMU_DIST_CLIP && ss.max <= EMU_DIST_CLIP);
	check_cdf("normal", &ss, -2., 0.5 * erfc(2. / sqrt(2.)));
	check_cdf("normal", &ss, 0., 0.5);
	check_cdf("normal", &ss, 1., 0.5 * erfc(-1. / sqrt(2.)));
}

/*
 * netem pareto: Y = (4/3) (X - 3/2), X ~ Pareto(1, 3) with P(X > x) = x^-3,
 * clipped at Y = 4 (X = 4.5). So P(Y <= y) = 1 - (3y/4 + 3/2)^-3 for y < 4,
 * P(Y = 4) = 4.5^-3, min Y = -2/3, E[min(X, c)] = 3/2 - 1/(2c^2),
 * E[min(X, c)^2] = 3 - 2/c.
 */
static void
test_pareto(void)
{
	const double c = 4.5, m1 = 1.5 - 1. / (2. * c * c), m2 = 3. - 2. / c;
	const double mean = (4. / 3.) * (m1 - 1.5), sd = (4. / 3.) * sqrt(m2 - m1 * m1);
	struct sample_stats ss = {.x = xs};

	draw(EMU_DIST_PARETO, 0., &ss);
	CHECK_NEAR("pareto mean / sigma (clipped)", ss.mean, mean, EMU_Z * sd / sqrt(N));
	CHECK_NEAR("pareto sd / sigma (clipped)", ss.sd, sd, sd_tol(&ss, 1.));
	CHECK_NEAR("pareto min / sigma", ss.min, -2. / 3., 1e-3);
	CHECK_NEAR("pareto max / sigma (clip)", ss.max, EMU_DIST_CLIP, 1e-6);
	check_cdf("pareto", &ss, 0., 1. - pow(1.5, -3.));
	check_cdf("pareto", &ss, 1., 1. - pow(0.75 + 1.5, -3.));
	CHECK_NEAR("pareto P(D = mu + 4 sigma) (clip mass)", 1. - cdf_at(&ss, 3.9999), pow(c, -3.),
		   emu_binom_tol(pow(c, -3.), N));
}

/* paretonormal quantile: (Phi^-1(q) + 3 (4/3)((1 - q)^-1/3 - 3/2)) / 4, same q. */
static double
paretonormal_q(double q)
{
	return (phi_inv_bisect(q) + 3. * (4. / 3.) * (pow(1. - q, -1. / 3.) - 1.5)) / 4.;
}

static void
test_paretonormal(void)
{
	static const double qs[] = {0.05, 0.25, 0.5, 0.75, 0.95};
	struct sample_stats ss = {.x = xs};

	draw(EMU_DIST_PARETONORMAL, 0., &ss);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		check_cdf("paretonormal", &ss, paretonormal_q(qs[i]), qs[i]);
	CHECK(ss.max <= EMU_DIST_CLIP);
}

/*
 * netem's delay correlation narrows the distribution: the uniform jitter
 * becomes mu - sigma + 2 sigma X with X the EWMA, so its sd is
 * 2 sqrt((1 - rho) / (12 (1 + rho))) sigma instead of sigma / sqrt 3.
 */
static void
test_correlation_narrows(void)
{
	const double rho = 0.5, th = 2. * sqrt((1. - rho) / (12. * (1. + rho)));
	struct sample_stats ss = {.x = xs};

	draw(EMU_DIST_UNIFORM, rho, &ss);
	/* AR(1) inflation of Var(s^2): (1 + rho^2) / (1 - rho^2) */
	CHECK_NEAR("uniform rho=50% sd / sigma (netem narrowing)", ss.sd, th,
		   sd_tol(&ss, (1. + rho * rho) / (1. - rho * rho)));
	CHECK_NEAR("uniform rho=50% mean / sigma", ss.mean, 0., EMU_Z * th * sqrt(3. / N));
}

static void
test_clamp_and_constant(void)
{
	struct emu_dist_params p = {.delay_ns = 100000, .jitter_ns = 1000000};
	struct emu_dist d;
	int zeros = 0;

	CHECK_EQ(emu_dist_init(&d, &p, SEED), 0);
	for (int i = 0; i < N; i++)
		zeros += emu_dist_sample(&d) == 0;
	/* U(-0.9 ms, 1.1 ms) clamped at 0: P(0) = 0.9 / 2 */
	CHECK_NEAR("uniform 100us 1ms P(delay clamped to 0)", (double)zeros / N, 0.45,
		   emu_binom_tol(0.45, N));
	p.jitter_ns = 0;
	CHECK_EQ(emu_dist_init(&d, &p, SEED), 0);
	zeros = 0;
	for (int i = 0; i < 100; i++)
		zeros += emu_dist_sample(&d) != 100000;
	CHECK_EQ(zeros, 0);
	p.corr = 1.5;
	CHECK_EQ(emu_dist_init(&d, &p, SEED), -EMU_E_RANGE);
}

/* jitter-no-reorder: exits never go backwards; the mean delay grows (documented). */
static void
test_no_reorder(void)
{
	struct emu_dist_params p = {
	    .delay_ns = 1000000, .jitter_ns = 500000, .kind = EMU_DIST_NORMAL};
	struct emu_dist a, b;
	uint64_t prev_a = 0, prev_b = 0;
	int inversions_a = 0, inversions_b = 0, earlier = 0;
	double extra_a = 0., extra_b = 0.;

	CHECK_EQ(emu_dist_init(&a, &p, SEED), 0);
	p.no_reorder = true;
	CHECK_EQ(emu_dist_init(&b, &p, SEED), 0);
	for (int i = 0; i < 100000; i++) {
		uint64_t now = (uint64_t)i * 10000; /* 10 us spacing << jitter */
		uint64_t ta = emu_dist_departure(&a, now), tb = emu_dist_departure(&b, now);

		inversions_a += ta < prev_a;
		inversions_b += tb < prev_b;
		earlier += tb < ta; /* same draws: the clamp only ever delays */
		extra_a += (double)(ta - now);
		extra_b += (double)(tb - now);
		prev_a = ta;
		prev_b = tb;
	}
	CHECK_EQ(earlier, 0);
	CHECK(inversions_a > 10000); /* plain jitter reorders heavily at this spacing */
	CHECK_EQ(inversions_b, 0);
	CHECK(extra_b / 100000 > extra_a / 100000 + 500000); /* mean delay inflated */
	printf("  stat %-44s measured %-12.6g plain %-12.6g (ns)\n", "jitter-no-reorder mean delay",
	       extra_b / 100000, extra_a / 100000);
	CHECK_EQ(strcmp(emu_dist_kind_name(EMU_DIST_PARETONORMAL), "paretonormal"), 0);
}

static void
test_determinism(void)
{
	struct emu_dist_params p = {
	    .delay_ns = 5000000, .jitter_ns = 1000000, .corr = 0.25, .kind = EMU_DIST_PARETONORMAL};
	struct emu_dist a, b;
	int same = 1;

	CHECK_EQ(emu_dist_init(&a, &p, 5), 0);
	CHECK_EQ(emu_dist_init(&b, &p, 5), 0);
	for (int i = 0; i < 10000; i++)
		same &= emu_dist_sample(&a) == emu_dist_sample(&b);
	CHECK(same);
}

RW_TEST_MAIN(RW_TEST(test_norm_quantile), RW_TEST(test_uniform), RW_TEST(test_normal),
	     RW_TEST(test_pareto), RW_TEST(test_paretonormal), RW_TEST(test_correlation_narrows),
	     RW_TEST(test_clamp_and_constant), RW_TEST(test_no_reorder), RW_TEST(test_determinism))
