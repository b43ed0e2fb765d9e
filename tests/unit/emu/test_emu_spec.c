/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: SPEC parser (every keyword, defaults, every error path) and writer. */
#include <math.h>

#include "emu_spec.h"
#include "rw_test.h"

static struct emu_spec s;
static char msg[512];

static int
parse(const char *text)
{
	int rc = emu_spec_parse(&s, text, msg, sizeof(msg));

	if (rc)
		fprintf(stderr, "    (\"%s\" -> %s: %s)\n", text, emu_err_name(rc), msg);
	return rc;
}

#define NEAR(a, b) (fabs((a) - (b)) < 1e-12)

static void
test_defaults(void)
{
	CHECK_EQ(parse(""), 0);
	CHECK_EQ(s.queue.limit_pkts, 1000); /* iproute2 q_netem.c */
	CHECK_EQ(s.delay.delay_ns, 0);
	CHECK_EQ(s.delay.kind, EMU_DIST_UNIFORM);
	CHECK_EQ(s.impair.loss.kind, EMU_LOSS_NONE);
	CHECK(!s.impair.ecn && !s.red.enabled && !s.pfc.enabled && !s.seed_set);
	CHECK_EQ(s.queue.rate_bps, 0);
	CHECK_EQ(s.pfc.prio, 3);
	CHECK_EQ(parse("   \t "), 0);
	CHECK_EQ(parse("netem delay 1ms"), 0); /* a pasted "netem" word is skipped */
	CHECK_EQ(s.delay.delay_ns, 1000000);
	CHECK_EQ(emu_spec_parse(&s, "delay 1ms", NULL, 0), 0);
	CHECK_EQ(emu_spec_parse(&s, NULL, NULL, 0), 0);
}

static void
test_every_keyword(void)
{
	CHECK_EQ(parse("limit 500 delay 10ms 1ms 25% distribution normal "
		       "loss gemodel 1% 25% 50% 2% ecn duplicate 1% 10% corrupt 0.1% 5% "
		       "corrupt-recompute reorder 25% 50% gap 5 "
		       "rate 100mbit 24 limit-bytes 400KB red kmin 64kb kmax 2mb pmax 1% "
		       "pfc xoff 300kb xon 100kb prio 4 jitter-no-reorder seed 42"),
		 0);
	CHECK_EQ(s.queue.limit_pkts, 500);
	CHECK_EQ(s.delay.delay_ns, 10000000);
	CHECK_EQ(s.delay.jitter_ns, 1000000);
	CHECK(NEAR(s.delay.corr, 0.25));
	CHECK_EQ(s.delay.kind, EMU_DIST_NORMAL);
	CHECK(s.delay.no_reorder);
	CHECK_EQ(s.impair.loss.kind, EMU_LOSS_GEMODEL);
	CHECK(NEAR(s.impair.loss.ge_p, 0.01) && NEAR(s.impair.loss.ge_r, 0.25));
	CHECK(NEAR(s.impair.loss.ge_1h, 0.5) && NEAR(s.impair.loss.ge_1k, 0.02));
	CHECK(s.impair.ecn);
	CHECK(NEAR(s.impair.dup_p, 0.01) && NEAR(s.impair.dup_corr, 0.1));
	CHECK(NEAR(s.impair.corrupt_p, 0.001) && NEAR(s.impair.corrupt_corr, 0.05));
	CHECK(s.impair.corrupt_recompute);
	CHECK(NEAR(s.impair.reorder_p, 0.25) && NEAR(s.impair.reorder_corr, 0.5));
	CHECK_EQ(s.impair.gap, 5);
	CHECK_EQ(s.queue.rate_bps, 100000000);
	CHECK_EQ(s.queue.overhead, 24);
	CHECK_EQ(s.queue.limit_bytes, 409600);
	CHECK(s.red.enabled);
	CHECK_EQ(s.red.kmin_bytes, 65536);
	CHECK_EQ(s.red.kmax_bytes, 2097152);
	CHECK(NEAR(s.red.pmax, 0.01));
	CHECK(s.pfc.enabled);
	CHECK_EQ(s.pfc.xoff_bytes, 307200);
	CHECK_EQ(s.pfc.xon_bytes, 102400);
	CHECK_EQ(s.pfc.prio, 4);
	CHECK(s.seed_set);
	CHECK_EQ(s.seed, 42);
}

static void
test_netem_forms(void)
{
	/* gemodel defaults: r = 1 - p, 1-h = 100 %, 1-k = 0 */
	CHECK_EQ(parse("loss gemodel 1%"), 0);
	CHECK(NEAR(s.impair.loss.ge_r, 0.99) && s.impair.loss.ge_1h == 1. &&
	      s.impair.loss.ge_1k == 0.);
	CHECK_EQ(parse("loss gemodel 1% 30%"), 0);
	CHECK(NEAR(s.impair.loss.ge_r, 0.3) && s.impair.loss.ge_1h == 1.);
	/* state defaults: p31 = 1 - p13, p32 = 0, p23 = 100 %, p14 = 0 */
	CHECK_EQ(parse("loss state 2%"), 0);
	CHECK_EQ(s.impair.loss.kind, EMU_LOSS_STATE);
	CHECK(NEAR(s.impair.loss.p31, 0.98) && s.impair.loss.p32 == 0. && s.impair.loss.p23 == 1. &&
	      s.impair.loss.p14 == 0.);
	CHECK_EQ(parse("loss state 2% 25% 10% 50% 0.5%"), 0);
	CHECK(NEAR(s.impair.loss.p14, 0.005) && NEAR(s.impair.loss.p23, 0.5));
	/* old syntax "loss P [CORR]", "loss random", and netem's aliases */
	CHECK_EQ(parse("loss 5% 25%"), 0);
	CHECK(s.impair.loss.kind == EMU_LOSS_RANDOM && NEAR(s.impair.loss.p, 0.05) &&
	      NEAR(s.impair.loss.corr, 0.25));
	CHECK_EQ(parse("loss random 0.5"), 0);
	CHECK(NEAR(s.impair.loss.p, 0.005));
	CHECK_EQ(parse("drop 1% latency 5ms"), 0);
	CHECK(s.impair.loss.kind == EMU_LOSS_RANDOM && s.delay.delay_ns == 5000000);
	/* reorder without gap: gap 1; keywords in any order */
	CHECK_EQ(parse("reorder 25% delay 10ms"), 0);
	CHECK_EQ(s.impair.gap, 1);
	CHECK_EQ(parse("gap 5 reorder 10% delay 1ms"), 0);
	CHECK_EQ(s.impair.gap, 5);
	/* rate forms */
	CHECK_EQ(parse("rate 10Gbit -4"), 0);
	CHECK(s.queue.rate_bps == 10000000000ull && s.queue.overhead == -4);
	CHECK_EQ(parse("rate 5kbit 20 100 5"), 0); /* tc-netem(8) example */
	CHECK(s.queue.rate_bps == 5000 && s.queue.overhead == 20 && s.queue.cell_size == 100 &&
	      s.queue.cell_overhead == 5);
	CHECK_EQ(parse("rate 1mbps"), 0); /* megaBYTES per second, as tc */
	CHECK_EQ(s.queue.rate_bps, 8000000);
	CHECK_EQ(parse("delay 10ms 2ms distribution pareto"), 0);
	CHECK_EQ(s.delay.kind, EMU_DIST_PARETO);
	CHECK_EQ(parse("delay 10ms 2ms distribution paretonormal"), 0);
	CHECK_EQ(parse("delay 10ms 2ms distribution uniform"), 0);
	CHECK_EQ(parse("pfc xon 0 xoff 64kb rate 1gbit"), 0); /* any order; prio default 3 */
	CHECK(s.pfc.xon_bytes == 0 && s.pfc.xoff_bytes == 65536 && s.pfc.prio == 3);
	CHECK_EQ(parse("red pmax 100% kmax 20kb kmin 10kb rate 1gbit"), 0);
	CHECK_EQ(parse("red kmin 10kb kmax 20kb pmax 0% rate 1gbit"), 0); /* DCTCP step */
	CHECK_EQ(parse("delay 0 loss 1% ecn"), 0);
	CHECK_EQ(parse("seed 18446744073709551615"), 0);
	CHECK(s.seed == UINT64_MAX);
}

/* Every error returns its code and a message naming the bad token and what is allowed. */
static void
expect(const char *text, int code, const char *want1, const char *want2)
{
	int rc = emu_spec_parse(&s, text, msg, sizeof(msg));

	CHECK_EQ(rc, code);
	if (rc != code)
		fprintf(stderr, "    spec \"%s\": got %s \"%s\"\n", text, emu_err_name(rc), msg);
	if (want1 && !strstr(msg, want1)) {
		fprintf(stderr, "    spec \"%s\": message \"%s\" lacks \"%s\"\n", text, msg, want1);
		CHECK(!"message names the token");
	}
	if (want2 && !strstr(msg, want2)) {
		fprintf(stderr, "    spec \"%s\": message \"%s\" lacks \"%s\"\n", text, msg, want2);
		CHECK(!"message says what is allowed");
	}
}

static void
test_errors(void)
{
	const int U = -EMU_E_UNKNOWN_KEYWORD, M = -EMU_E_MISSING_ARG, R = -EMU_E_RANGE,
		  C = -EMU_E_CONFLICT;

	/* two error messages, verbatim */
	expect("loss gemodel 120%", R, "loss gemodel: \"120%\" is not a probability (0%..100%)",
	       NULL);
	CHECK_EQ(strcmp(msg, "loss gemodel: \"120%\" is not a probability (0%..100%)"), 0);
	expect("dealy 10ms", U, "unknown keyword \"dealy\"", "did you mean \"delay\"");
	CHECK(strstr(msg, "expected delay, distribution, loss") != NULL);
	expect("bogus", U, "\"bogus\"", "expected delay");
	expect("10ms", U, "\"10ms\"", NULL);
	expect("slot 10ms", -EMU_E_UNSUPPORTED, "slot", NULL);
	/* values */
	expect("delay", M, "delay: missing TIME", "a time");
	expect("delay 10", -EMU_E_NEED_UNIT, "\"10\"", "s, sec, ms");
	expect("delay 10xs", -EMU_E_BAD_UNIT, "\"10xs\"", "allowed: s, sec");
	expect("delay -5ms", -EMU_E_NEGATIVE, "\"-5ms\"", "negative");
	expect("delay abc", -EMU_E_BAD_NUMBER, "\"abc\"", "is not a time");
	expect("delay 10ms 1ms 150%", R, "\"150%\"", "0%..100%");
	expect("delay 10ms 1x", -EMU_E_BAD_UNIT, "\"1x\"", "allowed");
	expect("distribution", M, "distribution: missing NAME", "uniform, normal");
	expect("delay 10ms 1ms distribution gaussian", -EMU_E_UNSUPPORTED, "\"gaussian\"",
	       "uniform, normal, pareto, paretonormal");
	expect("loss", M, "loss: missing model", "gemodel p");
	expect("loss random", M, "loss random: missing PERCENT", NULL);
	expect("loss markov 1%", U, "\"markov\"", "is not a loss model");
	expect("loss gemodel", M, "loss gemodel: missing p", "probability");
	expect("loss gemodel 1% 25% 1x%", -EMU_E_BAD_UNIT, "\"1x%\"", "0%..100%");
	expect("loss gemodel 1% abc", U, "\"abc\"", NULL);
	expect("loss state 90% 50% 60%", R, "p31 + p32 = 110%", "exceeds 100%");
	expect("loss state 60% 50% 0% 100% 50%", R, "p13 + p14 = 110%", "exceeds 100%");
	expect("loss state", M, "loss state: missing p13", NULL);
	expect("duplicate x", -EMU_E_BAD_NUMBER, "duplicate: \"x\"", "0%..100%");
	expect("duplicate", M, "duplicate: missing PERCENT", NULL);
	expect("corrupt 101%", R, "corrupt: \"101%\"", "0%..100%");
	expect("reorder 5% 200% delay 1ms", R, "reorder: \"200%\"", NULL);
	expect("rate", M, "rate: missing RATE", NULL);
	expect("rate 0bit", R, "rate: \"0bit\"", "more than 0");
	expect("rate 10%", -EMU_E_UNSUPPORTED, "rate: \"10%\"", "absolute rate");
	expect("rate 100mbits", -EMU_E_BAD_UNIT, "\"100mbits\"", "kbit, mbit");
	expect("rate fast", -EMU_E_BAD_NUMBER, "\"fast\"", "is not a rate");
	expect("rate 1gbit 10 100 -200", R, "\"-200\"", "leaves no cell");
	expect("rate 1gbit 99999999999", R, "\"99999999999\"", NULL);
	expect("limit 0", R, "limit: \"0\"", "1..4294967295");
	expect("limit 10.5", -EMU_E_BAD_UNIT, "limit: \"10.5\"", "not an integer");
	expect("limit -1", -EMU_E_NEGATIVE, "limit: \"-1\"", "out of range");
	expect("limit", M, "limit: missing PACKETS", NULL);
	expect("limit-bytes 0", R, "\"0\"", "more than 0 bytes");
	expect("limit-bytes 10xb", -EMU_E_BAD_UNIT, "\"10xb\"", "b, k/kb");
	expect("gap x reorder 1% delay 1ms", -EMU_E_BAD_NUMBER, "gap: \"x\"", NULL);
	expect("seed abc", -EMU_E_BAD_NUMBER, "seed: \"abc\"", "integer");
	expect("seed 18446744073709551616", R, "seed: \"18446744073709551616\"", NULL);
	/* red and pfc sub-grammars */
	expect("red", M, "red: missing", "kmin BYTES kmax BYTES pmax P%");
	expect("red kmin 10kb pmax 1%", M, "red: missing", "kmin BYTES");
	expect("red kmin 10kb kmin 20kb", M, "\"kmin\"", "each once");
	expect("red kmin 10kb kmax 5kb pmax 1% rate 1gbit", R, "kmin 10kb", "below kmax 5kb");
	expect("red kmin x kmax 50kb pmax 1%", -EMU_E_BAD_NUMBER, "red kmin: \"x\"", NULL);
	expect("red kmin 10kb kmax 50kb pmax 1%", C, "red needs rate", NULL);
	expect("pfc xoff 100kb rate 1gbit", M, "pfc: missing xon", "xoff BYTES xon BYTES");
	expect("pfc rate 1gbit", M, "pfc: missing xoff", NULL);
	expect("pfc xon 100kb xoff 50kb rate 1gbit", R, "xon 100kb", "below xoff 50kb");
	expect("pfc xoff 100kb xon 10kb prio 9 rate 1gbit", R, "pfc prio: \"9\"", "0..7");
	expect("pfc xoff 100kb xon 10kb", C, "pfc needs rate", NULL);
	expect("pfc xoff 1mb xon 100kb rate 1gbit limit-bytes 500kb", C, "xoff 1mb",
	       "limit-bytes 500kb");
	/* combinations (iproute2's rules, then ours) */
	expect("delay 10ms delay 20ms", -EMU_E_DUPLICATE, "\"delay\"", "more than once");
	expect("latency 10ms delay 20ms", -EMU_E_DUPLICATE, "\"delay\"", NULL);
	expect("distribution normal", C, "distribution normal", "delay TIME JITTER");
	expect("delay 10ms distribution normal", C, "distribution normal", NULL);
	expect("reorder 25%", C, "reorder needs a delay", NULL);
	expect("delay 10ms gap 5", C, "gap 5", "without reorder");
	expect("ecn", C, "ecn needs a loss model", "red");
	expect("corrupt-recompute", C, "corrupt-recompute needs corrupt", NULL);
	expect("delay 1ms jitter-no-reorder", C, "jitter-no-reorder needs", NULL);
}

/*
 * red pmax takes a "%": DCQCN-p (Wang et al.) 3.1's Pmax 0.1 is a fraction (10 %), netem
 * reads a bare 0.1 as 0.1 %, so a bare number is refused with both readings.
 */
static void
test_red_pmax_units(void)
{
	const int N = -EMU_E_NEED_UNIT;

	expect("red kmin 100KB kmax 400KB pmax 0.1 rate 200mbit", N, "red pmax: \"0.1\"", NULL);
	CHECK_EQ(strcmp(msg, "red pmax: \"0.1\" is ambiguous: write pmax 0.1% (netem's percent) "
			     "or pmax 10% (tc-red's fraction 0.1)"),
		 0);
	expect("red kmin 10kb kmax 50kb pmax 1 rate 1gbit", N, "pmax 1% (netem's percent)",
	       "pmax 100% (tc-red's fraction 1)");
	expect("red kmin 10kb kmax 50kb pmax .05 rate 1gbit", N, "pmax .05%", "pmax 5%");
	/* no fraction reading above 1, and 0 reads the same both ways: only the "%" is missing */
	expect("red kmin 10kb kmax 50kb pmax 2 rate 1gbit", N, "\"2\" needs a %",
	       "write pmax 2% (0%..100%)");
	expect("red pmax 0 kmin 10kb kmax 50kb rate 1gbit", N, "\"0\" needs a %", "pmax 0%");
	expect("red kmin 10kb kmax 50kb pmax 100 rate 1gbit", N, "\"100\" needs a %", NULL);
	/* what is not a bare number keeps its own message */
	expect("red kmin 10kb kmax 50kb pmax 101 rate 1gbit", -EMU_E_RANGE, "\"101\"", "0%..100%");
	expect("red kmin 10kb kmax 50kb pmax 0.1x rate 1gbit", -EMU_E_BAD_UNIT, "\"0.1x\"", NULL);
	expect("red kmin 10kb kmax 50kb pmax", -EMU_E_MISSING_ARG, "red pmax: missing P", NULL);
	/* with its "%" the paper's value is 10 %, netem's 0.1 % stays expressible */
	CHECK_EQ(parse("red kmin 100KB kmax 400KB pmax 10% rate 200mbit"), 0);
	CHECK(s.red.enabled && NEAR(s.red.pmax, 0.1));
	CHECK_EQ(s.red.kmin_bytes, 102400); /* tc: KB = 1024 B */
	CHECK_EQ(s.red.kmax_bytes, 409600);
	CHECK_EQ(parse("red kmin 100KB kmax 400KB pmax 0.1% rate 200mbit"), 0);
	CHECK(NEAR(s.red.pmax, 0.001));
	CHECK_EQ(parse("red pmax 100% kmin 1kb kmax 2kb rate 1gbit"), 0);
	CHECK(NEAR(s.red.pmax, 1.0));
	/* the writer spells the "%", so its output parses back */
	CHECK_EQ(parse("red kmin 100KB kmax 400KB pmax 10% rate 200mbit"), 0);
	CHECK(emu_spec_format(&s, msg, sizeof(msg)) > 0);
	CHECK(strstr(msg, "red kmin 100kb kmax 400kb pmax 10%") != NULL);
	CHECK_EQ(parse(msg), 0);
	CHECK(NEAR(s.red.pmax, 0.1));
}

static void
test_limits(void)
{
	static char big[EMU_SPEC_MAX_LEN + 10];
	char *p = big;

	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	expect(big, -EMU_E_RANGE, "characters long", NULL);
	for (int i = 0; i < EMU_SPEC_MAX_TOKENS + 1; i++)
		p += sprintf(p, "ecn ");
	expect(big, -EMU_E_RANGE, "more than 128 words", NULL);
}

/* format() writes text that parse() reads back to the same values. */
static void
round_trip(const char *text)
{
	struct emu_spec a, b;
	char out1[1024], out2[1024];
	int n1, n2;

	CHECK_EQ(emu_spec_parse(&a, text, msg, sizeof(msg)), 0);
	n1 = emu_spec_format(&a, out1, sizeof(out1));
	CHECK(n1 > 0);
	CHECK_EQ(emu_spec_parse(&b, out1, msg, sizeof(msg)), 0);
	n2 = emu_spec_format(&b, out2, sizeof(out2));
	CHECK_EQ(n1, n2);
	CHECK_EQ(strcmp(out1, out2), 0);
	/* integers exactly, probabilities to 1e-12 */
	CHECK(a.delay.delay_ns == b.delay.delay_ns && a.delay.jitter_ns == b.delay.jitter_ns &&
	      a.delay.kind == b.delay.kind && a.delay.no_reorder == b.delay.no_reorder);
	CHECK(NEAR(a.delay.corr, b.delay.corr));
	CHECK(a.impair.loss.kind == b.impair.loss.kind);
	CHECK(NEAR(a.impair.loss.p, b.impair.loss.p) &&
	      NEAR(a.impair.loss.ge_r, b.impair.loss.ge_r) &&
	      NEAR(a.impair.loss.ge_1h, b.impair.loss.ge_1h) &&
	      NEAR(a.impair.loss.p23, b.impair.loss.p23) &&
	      NEAR(a.impair.loss.p14, b.impair.loss.p14));
	CHECK(a.impair.ecn == b.impair.ecn && a.impair.gap == b.impair.gap &&
	      a.impair.corrupt_recompute == b.impair.corrupt_recompute);
	CHECK(NEAR(a.impair.dup_p, b.impair.dup_p) && NEAR(a.impair.reorder_p, b.impair.reorder_p));
	CHECK(memcmp(&a.queue, &b.queue, sizeof(a.queue)) == 0);
	CHECK(a.red.enabled == b.red.enabled && a.red.kmin_bytes == b.red.kmin_bytes &&
	      a.red.kmax_bytes == b.red.kmax_bytes && NEAR(a.red.pmax, b.red.pmax));
	CHECK(memcmp(&a.pfc, &b.pfc, sizeof(a.pfc)) == 0);
	CHECK(a.seed_set == b.seed_set && a.seed == b.seed);
	printf("  format: %s\n", out1);
}

static void
test_format(void)
{
	char small[16];

	round_trip("");
	round_trip("delay 10ms 1ms 25% distribution normal loss gemodel 1% 25% 50% 2% ecn "
		   "duplicate 1% 10% corrupt 0.1% corrupt-recompute reorder 25% 50% gap 5 "
		   "rate 100mbit 24 limit-bytes 400KB red kmin 64kb kmax 2mb pmax 1% "
		   "pfc xoff 300kb xon 100kb prio 4 jitter-no-reorder seed 42 limit 500");
	round_trip("loss gemodel 1%");
	round_trip("delay 20ms rate 1gbit ctrl-delay");
	CHECK_EQ(parse("delay 20ms ctrl-delay"), 0);
	CHECK(s.ctrl_delay);
	CHECK_EQ(parse("delay 20ms"), 0);
	CHECK(!s.ctrl_delay);
	round_trip("loss state 2% 25% 10% 50% 0.5% delay 1500ns 700ns 33.3333333333333%");
	round_trip("loss 5% 25% rate 5kbit 20 100 5 reorder 10% delay 2s");
	round_trip("rate 2.5gbit -14 delay 10ms 5ms distribution paretonormal");
	CHECK_EQ(parse("loss gemodel 1%"), 0);
	CHECK_EQ(emu_spec_format(&s, msg, sizeof(msg)), (int)strlen(msg));
	CHECK_EQ(strcmp(msg, "limit 1000 loss gemodel 1% 99% 100% 0%"), 0);
	CHECK_EQ(emu_spec_format(&s, small, sizeof(small)), -EMU_E_NOSPACE);
}

RW_TEST_MAIN(RW_TEST(test_defaults), RW_TEST(test_every_keyword), RW_TEST(test_netem_forms),
	     RW_TEST(test_errors), RW_TEST(test_red_pmax_units), RW_TEST(test_limits),
	     RW_TEST(test_format))
