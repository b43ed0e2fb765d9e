/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: stage-1 decisions in netem's order (duplicate, loss/ECN, corrupt, reorder). */
#include "emu_impair.h"
#include "emu_test_stat.h"
#include "rw_test.h"

#define SEED 4242u
#define N 1000000

static struct emu_counters cnt;

static struct emu_impair
make(const struct emu_impair_params *p, uint64_t seed)
{
	struct emu_impair im;

	emu_counters_reset(&cnt);
	CHECK_EQ(emu_impair_init(&im, p, seed, &cnt), 0);
	return im;
}

static void
test_duplicate_rate(void)
{
	struct emu_impair_params p = {.dup_p = 0.1};
	struct emu_impair im = make(&p, SEED);
	double dups = 0;

	for (int i = 0; i < N; i++)
		dups += (emu_impair_decide(&im, 0) & EMU_V_DUPLICATE) != 0;
	CHECK_NEAR("duplicate 10% rate", dups / N, 0.1, emu_binom_tol(0.1, N));
	CHECK_EQ(cnt.v[EMU_CNT_DUPLICATED], (uint64_t)dups);
	CHECK_EQ(cnt.v[EMU_CNT_RX], N);
}

/*
 * netem: count = 1 + D - L (D ~ B(d), L ~ B(l)); count 2 makes a clone that
 * takes its own loss step. Copies delivered per packet:
 *   P(2) = d (1-l)^2,  P(1) = (1-d)(1-l) + d l + d (1-l) l,  P(0) = (1-d) l.
 */
static void
test_duplicate_and_loss(void)
{
	const double d = 0.2, l = 0.1;
	struct emu_impair_params p = {.dup_p = d, .loss = {.kind = EMU_LOSS_RANDOM, .p = l}};
	struct emu_impair im = make(&p, SEED + 1);
	const double p2 = d * (1 - l) * (1 - l), p1 = (1 - d) * (1 - l) + d * l + d * (1 - l) * l;
	const double mean = p1 + 2 * p2, var = p1 + 4 * p2 - mean * mean;
	double copies = 0, zero = 0;
	int dup_of_copy = 0;

	for (int i = 0; i < N; i++) {
		unsigned v = emu_impair_decide(&im, 0), c = 0;

		if (!(v & EMU_V_DROP))
			c++;
		if (v & EMU_V_DUPLICATE) {
			unsigned v2 = emu_impair_decide_copy(&im, 0);

			/* never: a copy is not duplicated */
			dup_of_copy += (v2 & EMU_V_DUPLICATE) != 0;
			c += !(v2 & EMU_V_DROP);
		}
		copies += c;
		zero += c == 0;
	}
	CHECK_EQ(dup_of_copy, 0);
	CHECK_NEAR("dup 20% + loss 10%: copies delivered per packet", copies / N, mean,
		   EMU_Z * sqrt(var / N));
	CHECK_NEAR("dup 20% + loss 10%: P(no copy) = (1-d) l", zero / N, (1 - d) * l,
		   emu_binom_tol((1 - d) * l, N));
	/* the clone advanced the same loss chain (netem re-enqueues it through netem) */
	CHECK_EQ(im.loss.stats.steps, N + cnt.v[EMU_CNT_DUPLICATED]);
}

/* netem ecn: a loss event marks ECT and CE packets, drops Not-ECT ones. */
static void
test_ecn(void)
{
	struct emu_impair_params p = {.ecn = true, .loss = {.kind = EMU_LOSS_RANDOM, .p = 0.1}};
	struct emu_impair im = make(&p, SEED + 2);
	double marked = 0, dropped = 0, bad = 0;

	for (int i = 0; i < N; i++) {
		unsigned v = emu_impair_decide(&im, (uint8_t)(1 + i % 3)); /* ECT(1), ECT(0), CE */

		marked += (v & EMU_V_MARK_CE) != 0;
		bad += (v & EMU_V_DROP) != 0;
	}
	CHECK_EQ(bad, 0);
	CHECK_NEAR("loss 10% ecn, ECN-capable: CE fraction", marked / N, 0.1,
		   emu_binom_tol(0.1, N));
	CHECK_EQ(cnt.v[EMU_CNT_ECN_MARK_LOSS], (uint64_t)marked);
	im = make(&p, SEED + 3);
	marked = 0;
	for (int i = 0; i < N; i++) {
		unsigned v = emu_impair_decide(&im, 0);

		dropped += (v & EMU_V_DROP) != 0;
		marked += (v & EMU_V_MARK_CE) != 0;
	}
	CHECK_EQ(marked, 0);
	CHECK_NEAR("loss 10% ecn, Not-ECT: drop fraction", dropped / N, 0.1, emu_binom_tol(0.1, N));
	CHECK_EQ(cnt.v[EMU_CNT_DROP_LOSS], (uint64_t)dropped);
}

static void
test_corrupt(void)
{
	struct emu_impair_params p = {.corrupt_p = 0.05};
	struct emu_impair im = make(&p, SEED + 4);
	double hits = 0;
	int bits_ok = 1;

	for (int i = 0; i < N; i++) {
		if (emu_impair_decide(&im, 0) & EMU_V_CORRUPT) {
			hits++;
			bits_ok &= emu_impair_corrupt_bit(&im, 64) < 512;
		}
	}
	CHECK(bits_ok);
	CHECK_NEAR("corrupt 5% rate", hits / N, 0.05, emu_binom_tol(0.05, N));
	CHECK_EQ(cnt.v[EMU_CNT_CORRUPTED], (uint64_t)hits);
}

/*
 * reorder P gap G: after each reorder (and at start) G-1 packets are delayed,
 * then each packet reorders with probability P. Renewal cycle C = (G-1) + Geom(P):
 * E[C] = G - 1 + 1/P, Var[C] = (1-P)/P^2; reorder fraction 1/E[C] = P / (1 + (G-1) P),
 * with Var(fraction) ~ Var[C] / (E[C]^3 n).
 */
static void
check_reorder(double prob, uint32_t gap, uint64_t seed)
{
	struct emu_impair_params p = {.reorder_p = prob, .gap = gap};
	struct emu_impair im = make(&p, seed);
	const uint32_t g = gap ? gap : 1; /* iproute2: no gap means gap 1 */
	const double ec = g - 1 + 1. / prob, vc = (1 - prob) / (prob * prob);
	double re = 0;
	long since = 0, min_since = 1L << 30, first = -1;
	char label[64];

	for (long i = 0; i < N; i++) {
		if (emu_impair_decide(&im, 0) & EMU_V_REORDER) {
			re++;
			if (first < 0)
				first = i;
			else
				min_since = since < min_since ? since : min_since;
			since = 0;
		} else {
			since++;
		}
	}
	snprintf(label, sizeof(label), "reorder %g%% gap %u fraction", prob * 100, gap);
	CHECK_NEAR(label, re / N, 1. / ec, EMU_Z * sqrt(vc / (ec * ec * ec * N)) + 1e-12);
	CHECK(first >= (long)g - 1);	 /* the first G-1 packets are never reordered */
	CHECK(min_since >= (long)g - 1); /* at least G-1 delayed packets between reorders */
	CHECK_EQ(emu_impair_reorder_gap(&im), g);
}

static void
test_reorder(void)
{
	check_reorder(0.25, 5, SEED + 5); /* 0.25 / (1 + 4 * 0.25) = 0.125 */
	check_reorder(0.30, 0, SEED + 6); /* gap 0 given = gap 1: plain Bernoulli 0.3 */
	check_reorder(0.01, 10, SEED + 7);
	/* "reorder 100% gap 5": exactly every 5th packet (tc-netem(8)) */
	struct emu_impair_params p = {.reorder_p = 1., .gap = 5};
	struct emu_impair im = make(&p, SEED);
	int exact = 1;

	for (int i = 1; i <= 1000; i++)
		exact &= ((emu_impair_decide(&im, 0) & EMU_V_REORDER) != 0) == (i % 5 == 0);
	CHECK(exact);
}

static void
test_determinism_and_checks(void)
{
	struct emu_impair_params p = {
	    .dup_p = 0.05,
	    .corrupt_p = 0.01,
	    .reorder_p = 0.1,
	    .gap = 3,
	    .loss = {
		.kind = EMU_LOSS_GEMODEL, .ge_p = 0.01, .ge_r = 0.3, .ge_1h = 0.9, .ge_1k = 0.001}};
	struct emu_impair a = make(&p, 9), b;
	int same = 1, diff = 0;

	CHECK_EQ(emu_impair_init(&b, &p, 9, &cnt), 0);
	for (int i = 0; i < 100000; i++)
		same &= emu_impair_decide(&a, 2) == emu_impair_decide(&b, 2);
	CHECK(same);
	CHECK_EQ(emu_impair_init(&a, &p, 9, &cnt), 0);
	CHECK_EQ(emu_impair_init(&b, &p, 10, &cnt), 0);
	for (int i = 0; i < 100000; i++)
		diff += emu_impair_decide(&a, 2) != emu_impair_decide(&b, 2);
	CHECK(diff > 1000);
	p.reorder_p = 0.;
	CHECK_EQ(emu_impair_params_check(&p), -EMU_E_CONFLICT); /* gap without reorder */
	p.gap = 0;
	p.ecn = true;
	p.loss.kind = EMU_LOSS_NONE;
	CHECK_EQ(emu_impair_params_check(&p), -EMU_E_CONFLICT); /* ecn without loss */
	p.ecn = false;
	p.dup_p = 2.;
	CHECK_EQ(emu_impair_params_check(&p), -EMU_E_RANGE);
	CHECK_EQ(emu_impair_init(&a, &p, 1, NULL), -EMU_E_INVAL);
	CHECK_EQ(strcmp(emu_counter_name(EMU_CNT_DROP_QUEUE), "drop_queue"), 0);
	CHECK(emu_counter_name(EMU_CNT__COUNT) == NULL);
	CHECK(emu_counter_help(EMU_CNT_RX) != NULL);
}

RW_TEST_MAIN(RW_TEST(test_duplicate_rate), RW_TEST(test_duplicate_and_loss), RW_TEST(test_ecn),
	     RW_TEST(test_corrupt), RW_TEST(test_reorder), RW_TEST(test_determinism_and_checks))
