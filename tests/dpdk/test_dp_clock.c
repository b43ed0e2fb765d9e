/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dpdk dp_clock: the TSC -> ns multiply-and-shift of the three apps against
 * the exact 128-bit division, at the epochs they use. Exact arithmetic only:
 * no EAL, no timing.
 */
#include "dp_clock.h"
#include "rw_test.h"

/* floor((tsc - tsc0) * 10^9 / hz), the value the multiply-and-shift approximates */
static uint64_t
exact_ns(uint64_t tsc, uint64_t tsc0, uint64_t hz)
{
	return (uint64_t)((unsigned __int128)(tsc - tsc0) * 1000000000u / hz);
}

static void
test_one_ghz_is_identity(void)
{
	struct dp_clock c;

	dp_clock_init(&c, 1000000000u, 0);
	CHECK_EQ(c.mult, 1ull << 32);
	CHECK_EQ(dp_clock_ns(&c, 0), 0);
	CHECK_EQ(dp_clock_ns(&c, 123456789), 123456789);
	CHECK(dp_clock_ns(&c, UINT64_MAX) == UINT64_MAX);
}

/* the error bound of the header: below one ns per 2^32 / (hz / 10^9) cycles, rounding down */
static void
test_against_division(void)
{
	static const uint64_t hz[] = {1000000u,	   1999999999u, 2100000000u,	 2994375000u,
				      3600000000u, 4999999999u, 1000000000000ull};
	static const uint64_t tsc[] = {
	    0, 1, 999, 1000000007u, 3ull << 33, 86400ull * 4000000000ull, (uint64_t)1 << 60};

	for (unsigned h = 0; h < sizeof(hz) / sizeof(hz[0]); h++) {
		struct dp_clock c;

		dp_clock_init(&c, hz[h], 0);
		CHECK_EQ(c.mult, (uint64_t)(((unsigned __int128)1000000000u << 32) / hz[h]));
		for (unsigned t = 0; t < sizeof(tsc) / sizeof(tsc[0]); t++) {
			uint64_t want = exact_ns(tsc[t], 0, hz[h]);
			uint64_t got = dp_clock_ns(&c, tsc[t]);
			/* mult is rounded down: got <= want, short by at most tsc * 2^-32 + 1 */
			uint64_t slack = (uint64_t)(tsc[t] >> 32) + 1;

			CHECK(got <= want);
			CHECK(want - got <= slack);
		}
	}
}

/*
 * Epochs: the lossy-emu's (its start) and the pfc-relay's (one second before
 * its start). At 2 GHz mult is exact (10^9 * 2^32 / (2^10 * 5^9) = 2^31), so
 * the values are too.
 */
static void
test_epochs(void)
{
	const uint64_t hz = 2000000000u, start = 777777777777ull;
	struct dp_clock lemu, relay;

	dp_clock_init(&lemu, hz, start);
	dp_clock_init(&relay, hz, start - hz);
	CHECK_EQ(dp_clock_ns(&lemu, start), 0);
	CHECK_EQ(dp_clock_ns(&relay, start), 1000000000);
	CHECK_EQ(dp_clock_ns(&lemu, start + hz / 2), 500000000);
	CHECK_EQ(dp_clock_ns(&relay, start + hz / 2), 1500000000);
	CHECK_EQ(dp_clock_ns(&relay, start + 3 * hz), exact_ns(start + 3 * hz, start - hz, hz));
	CHECK_EQ(dp_clock_ns(&relay, start + 3 * hz), 4000000000u);
	/* the rnic's epoch is boot: ns = tsc / 2 */
	dp_clock_init(&lemu, hz, 0);
	CHECK_EQ(dp_clock_ns(&lemu, start), start / 2);
}

/* monotone in the TSC: never steps back, whatever the rate */
static void
test_monotone(void)
{
	struct dp_clock c;
	uint64_t prev = 0;

	dp_clock_init(&c, 2994375000u, 1000);
	for (uint64_t t = 1000; t < 1000 + 100000; t += 7) {
		uint64_t ns = dp_clock_ns(&c, t);

		CHECK(ns >= prev);
		prev = ns;
	}
}

/* a zero rate never divides by zero: the clock stands at 0 */
static void
test_zero_rate(void)
{
	struct dp_clock c;

	dp_clock_init(&c, 0, 5);
	CHECK_EQ(c.mult, 0);
	CHECK_EQ(dp_clock_ns(&c, 123456), 0);
}

RW_TEST_MAIN(RW_TEST(test_one_ghz_is_identity), RW_TEST(test_against_division),
	     RW_TEST(test_epochs), RW_TEST(test_monotone), RW_TEST(test_zero_rate))
