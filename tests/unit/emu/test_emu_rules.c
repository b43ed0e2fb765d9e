/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: deterministic drop rules (drop-psn, drop-nth): decisions, SPEC parse, format, errors.
 */
#include "emu_rules.h"
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

static void
test_drop_psn(void)
{
	struct emu_rules r;
	struct emu_rules_params p = {
	    .n = 2,
	    .r = {{.kind = EMU_RULE_DROP_PSN, .qpn = 0x11, .psn = 100, .times = 1},
		  {.kind = EMU_RULE_DROP_PSN, .qpn = 0x11, .psn = 105, .times = 3}}};

	emu_rules_init(&r, &p);
	/* a stream 98..110 with go-back-N style retransmissions of 100 and 105 */
	for (uint32_t psn = 98; psn < 110; psn++)
		CHECK_EQ(emu_rules_decide(&r, 0x11, psn), psn == 100 ? 0 : psn == 105 ? 1 : -1);
	CHECK_EQ(emu_rules_decide(&r, 0x11, 100), -1); /* the retransmission passes */
	CHECK_EQ(emu_rules_decide(&r, 0x11, 105), 1);  /* 2nd of 3 */
	CHECK_EQ(emu_rules_decide(&r, 0x11, 105), 1);  /* 3rd of 3 */
	CHECK_EQ(emu_rules_decide(&r, 0x11, 105), -1); /* 4th passes */
	CHECK_EQ(emu_rules_decide(&r, 0x12, 100), -1); /* another QP */
	CHECK_EQ(emu_rules_decide(&r, 0x1000011, 100 | 0x1000000),
		 -1); /* 24-bit: still QP 0x11 PSN 100, 2nd arrival */
	CHECK_EQ(r.dropped[0], 1);
	CHECK_EQ(r.dropped[1], 3);
	CHECK_EQ(r.matched[0], 3);
	CHECK_EQ(r.matched[1], 4);
	CHECK_EQ(r.roce_seen, 12 + 5 + 1);
	/* init resets the counts */
	emu_rules_init(&r, &p);
	CHECK_EQ(emu_rules_decide(&r, 0x11, 100), 0);
	/* no rules: everything passes */
	emu_rules_init(&r, NULL);
	CHECK_EQ(emu_rules_decide(&r, 0x11, 100), -1);
}

static void
test_drop_nth(void)
{
	struct emu_rules r;
	struct emu_rules_params p = {
	    .n = 2,
	    .r = {{.kind = EMU_RULE_DROP_NTH, .nth = 4},
		  {.kind = EMU_RULE_DROP_PSN, .qpn = 7, .psn = 8, .times = 1}}};
	unsigned dropped = 0;

	emu_rules_init(&r, &p);
	for (uint32_t i = 1; i <= 20; i++) {
		int v = emu_rules_decide(&r, 7, i); /* psn i */
		/* the 4th, 8th, ... packet by drop-nth; PSN 8 is the 8th: drop-nth wins (first
		 * rule) */
		CHECK_EQ(v, i % 4 == 0 ? 0 : -1);
		dropped += v >= 0;
	}
	CHECK_EQ(dropped, 5);
	CHECK_EQ(r.dropped[0], 5);
	CHECK_EQ(r.dropped[1], 0);
	CHECK_EQ(r.matched[1], 1);		  /* it still counted PSN 8's arrival */
	CHECK_EQ(emu_rules_decide(&r, 7, 8), -1); /* so its retransmission passes */
}

static void
test_spec(void)
{
	char f[1024], f2[1024];
	struct emu_spec b;

	CHECK_EQ(parse("delay 5ms drop-psn 0x11:0x52e51e drop-psn 17:100:3 drop-nth 1000 loss 1%"),
		 0);
	CHECK_EQ(s.rules.n, 3);
	CHECK_EQ(s.rules.r[0].kind, EMU_RULE_DROP_PSN);
	CHECK_EQ(s.rules.r[0].qpn, 0x11);
	CHECK_EQ(s.rules.r[0].psn, 0x52e51e);
	CHECK_EQ(s.rules.r[0].times, 1);
	CHECK_EQ(s.rules.r[1].qpn, 17);
	CHECK_EQ(s.rules.r[1].psn, 100);
	CHECK_EQ(s.rules.r[1].times, 3);
	CHECK_EQ(s.rules.r[2].kind, EMU_RULE_DROP_NTH);
	CHECK_EQ(s.rules.r[2].nth, 1000);
	CHECK(emu_spec_format(&s, f, sizeof(f)) > 0);
	CHECK(strstr(f, "drop-psn 0x11:0x52e51e:1 drop-psn 0x11:0x64:3 drop-nth 1000") != NULL);
	fprintf(stderr, "    (formatted: %s)\n", f);
	CHECK_EQ(emu_spec_parse(&b, f, msg, sizeof(msg)), 0);
	CHECK(emu_spec_format(&b, f2, sizeof(f2)) > 0);
	CHECK(strcmp(f, f2) == 0);
	CHECK_EQ(parse("drop-psn 0xffffff:0XFFFFFF:1000000"), 0);
	CHECK_EQ(s.rules.r[0].psn, 0xffffff);
	CHECK_EQ(parse(""), 0);
	CHECK_EQ(s.rules.n, 0);
	/* the maximum number of rules, then one more */
	char big[2048] = "";
	for (int i = 0; i < EMU_RULES_MAX; i++)
		snprintf(big + strlen(big), sizeof(big) - strlen(big), "drop-psn 1:%d ", i);
	CHECK_EQ(parse(big), 0);
	CHECK_EQ(s.rules.n, EMU_RULES_MAX);
	strcat(big, "drop-nth 5");
	CHECK_EQ(parse(big), -EMU_E_RANGE);
	CHECK(strstr(msg, "more than 16 drop rules") != NULL);
}

static void
test_errors(void)
{
	CHECK_EQ(parse("drop-psn"), -EMU_E_MISSING_ARG);
	CHECK_EQ(parse("drop-psn 17"), -EMU_E_MISSING_ARG);
	CHECK(strstr(msg, "lacks the PSN") != NULL);
	CHECK_EQ(parse("drop-psn 17:"), -EMU_E_RANGE);
	CHECK_EQ(parse("drop-psn :5"), -EMU_E_RANGE);
	CHECK(strstr(msg, "QPN") != NULL);
	CHECK_EQ(parse("drop-psn 17:0x1000000"), -EMU_E_RANGE);
	CHECK(strstr(msg, "PSN in \"17:0x1000000\"") != NULL);
	CHECK_EQ(parse("drop-psn 0x1000000:1"), -EMU_E_RANGE);
	CHECK_EQ(parse("drop-psn 17:5:0"), -EMU_E_RANGE);
	CHECK(strstr(msg, "TIMES") != NULL);
	CHECK_EQ(parse("drop-psn 17:5:1000001"), -EMU_E_RANGE);
	CHECK_EQ(parse("drop-psn 17:5:1:2"), -EMU_E_INVAL);
	CHECK_EQ(parse("drop-psn 17:5x"), -EMU_E_RANGE);
	CHECK_EQ(parse("drop-psn 0x:5"), -EMU_E_RANGE);
	CHECK_EQ(parse("drop-psn -1:5"), -EMU_E_RANGE);
	CHECK_EQ(parse("drop-psn 99999999999999999999999:5"), -EMU_E_RANGE);
	CHECK_EQ(parse("drop-nth"), -EMU_E_MISSING_ARG);
	CHECK_EQ(parse("drop-nth 0"), -EMU_E_RANGE);
	CHECK_EQ(parse("drop-nth 1x"), -EMU_E_BAD_UNIT);
	CHECK_EQ(parse("drop-nth 5 drop-nth 6"), -EMU_E_DUPLICATE);
	CHECK_EQ(parse("drop-ps 1:2"), -EMU_E_UNKNOWN_KEYWORD);
	CHECK(strstr(msg, "did you mean \"drop-psn\"") != NULL);
}

static void
test_format_names(void)
{
	struct emu_rule a = {.kind = EMU_RULE_DROP_PSN, .qpn = 0x11, .psn = 5, .times = 2};
	struct emu_rule b = {.kind = EMU_RULE_DROP_NTH, .nth = 9};
	char t[64];

	CHECK_EQ(emu_rule_format(&a, t, sizeof(t)), (int)strlen("drop-psn 0x11:0x5:2"));
	CHECK(strcmp(t, "drop-psn 0x11:0x5:2") == 0);
	emu_rule_format(&b, t, sizeof(t));
	CHECK(strcmp(t, "drop-nth 9") == 0);
	CHECK(strcmp(emu_rule_kind_name(EMU_RULE_DROP_PSN), "drop-psn") == 0);
	CHECK(strcmp(emu_rule_kind_name(EMU_RULE_DROP_NTH), "drop-nth") == 0);
}

RW_TEST_MAIN(RW_TEST(test_drop_psn), RW_TEST(test_drop_nth), RW_TEST(test_spec),
	     RW_TEST(test_errors), RW_TEST(test_format_names))
