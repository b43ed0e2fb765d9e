/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: deterministic drop rules (drop-psn, drop-nth, drop-mad): decisions, SPEC parse,
 * format, errors. */
#include "emu_rules.h"
#include "emu_spec.h"
#include "mad.h"
#include "mad_kind.h"
#include "net_bytes.h"
#include "net_frame.h"
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

/*
 * A RoCEv2 frame, IPv4 with @p vlan tag or not: Ethernet | [802.1Q] | IPv4 | UDP 4791 |
 * BTH (opcode @p op, dest QP @p dqpn) | DETH | MAD (class @p cls, attribute @p attr).
 * Returns its length (ICRC bytes included, zero: the emulator does not check them).
 */
static size_t
mad_frame(uint8_t *f, bool vlan, uint8_t op, uint32_t dqpn, uint8_t cls, uint16_t attr)
{
	size_t o = 12, ip, mad;

	memset(f, 0, 512);
	f[0] = 0x02;
	f[6] = 0x02;
	if (vlan) {
		net_put_be16(f + o, 0x8100);
		net_put_be16(f + o + 2, 5);
		o += 4;
	}
	net_put_be16(f + o, 0x0800);
	ip = o + 2;
	f[ip] = 0x45;
	net_put_be16(f + ip + 2, 20 + 8 + 12 + 8 + MAD_SIZE + 4);
	f[ip + 8] = 64;
	f[ip + 9] = 17;
	net_put_be32(f + ip + 12, 0x0a000001);
	net_put_be32(f + ip + 16, 0x0a000002);
	net_put_be16(f + ip + 20, 0xc001);
	net_put_be16(f + ip + 22, 4791);
	net_put_be16(f + ip + 24, 8 + 12 + 8 + MAD_SIZE + 4);
	f[ip + 28] = op;
	net_put_be16(f + ip + 30, 0xffff);
	net_put_be32(f + ip + 32, dqpn & 0xffffff);
	net_put_be32(f + ip + 36, 7);
	net_put_be32(f + ip + 40, MAD_GSI_QKEY);
	net_put_be32(f + ip + 44, 1);
	mad = ip + 48;
	f[mad] = MAD_BASE_VERSION;
	f[mad + 1] = cls;
	f[mad + 2] = 2;
	net_put_be16(f + mad + 16, attr);
	return mad + MAD_SIZE + 4;
}

static int
kind_of(const uint8_t *f, size_t len)
{
	struct net_frame fr;

	net_frame_classify(f, len, &fr);
	return emu_rules_mad_kind(f, len, &fr);
}

static void
test_mad_kind(void)
{
	uint8_t f[512];
	size_t n;

	n = mad_frame(f, false, 0x64, 1, MAD_CLASS_CM, MAD_ATTR_CM_REQ);
	CHECK_EQ(kind_of(f, n), MAD_KIND_CM_REQ);
	n = mad_frame(f, true, 0x64, 1, MAD_CLASS_CM, MAD_ATTR_CM_REP);
	CHECK_EQ(kind_of(f, n), MAD_KIND_CM_REP);
	n = mad_frame(f, false, 0x64, 1, 0x31, 0x10);
	CHECK_EQ(kind_of(f, n), MAD_KIND_VENDOR);
	/* not a MAD to QP1: another QP, an RC SEND, SEND with immediate */
	n = mad_frame(f, false, 0x64, 2, MAD_CLASS_CM, MAD_ATTR_CM_REQ);
	CHECK_EQ(kind_of(f, n), -1);
	n = mad_frame(f, false, 0x04, 1, MAD_CLASS_CM, MAD_ATTR_CM_REQ);
	CHECK_EQ(kind_of(f, n), -1);
	n = mad_frame(f, false, 0x65, 1, MAD_CLASS_CM, MAD_ATTR_CM_REQ);
	CHECK_EQ(kind_of(f, n), -1);
	/* cut before the attribute: every length up to it is refused, none read past */
	n = mad_frame(f, false, 0x64, 1, MAD_CLASS_CM, MAD_ATTR_CM_REQ);
	for (size_t cut = 0; cut < 14 + 20 + 8 + 12 + 8 + 18; cut++)
		CHECK_EQ(kind_of(f, cut), -1);
	CHECK_EQ(kind_of(f, 14 + 20 + 8 + 12 + 8 + 18), MAD_KIND_CM_REQ);
}

static void
test_drop_mad(void)
{
	struct emu_rules r;
	struct emu_rules_params p = {
	    .n = 3,
	    .r = {{.kind = EMU_RULE_DROP_MAD, .mad_kind = MAD_KIND_CM_REQ, .nords = 1, .ords = {1}},
		  {.kind = EMU_RULE_DROP_MAD,
		   .mad_kind = MAD_KIND_CM_REP,
		   .nords = 2,
		   .ords = {1, 3}},
		  {.kind = EMU_RULE_DROP_NTH, .nth = 1000}}};
	int seq[] = {MAD_KIND_CM_REQ, MAD_KIND_CM_REQ, -1,
		     MAD_KIND_CM_REP, MAD_KIND_CM_RTU, MAD_KIND_CM_REP,
		     MAD_KIND_CM_REP, MAD_KIND_CM_REP, MAD_KIND_CM_REQ};
	int want[] = {0, -1, -1, 1, -1, -1, 1, -1, -1};

	emu_rules_init(&r, &p);
	for (unsigned int i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		CHECK_EQ(emu_rules_decide_mad(&r, seq[i] < 0 ? 0x11 : 1, i, seq[i]), want[i]);
	/* data packets (not MADs) never match a drop-mad rule */
	for (unsigned int i = 0; i < 50; i++)
		CHECK_EQ(emu_rules_decide(&r, 1, i), -1);
	CHECK_EQ(r.dropped[0], 1);
	CHECK_EQ(r.dropped[1], 2);
	CHECK_EQ(r.dropped[2], 0);
	CHECK_EQ(r.matched[0], 3);
	CHECK_EQ(r.matched[1], 4);
	CHECK_EQ(r.roce_seen, 59);
	CHECK(emu_rules_have_mad(&p));
	p.n = 0;
	CHECK(!emu_rules_have_mad(&p));
}

static void
test_drop_mad_spec(void)
{
	char f[1024], f2[1024], t[128];
	struct emu_spec b;

	CHECK_EQ(parse("delay 5ms drop-mad cm-req 1 drop-mad cm-rep 1,3 drop-nth 7"), 0);
	CHECK_EQ(s.rules.n, 3);
	CHECK_EQ(s.rules.r[0].kind, EMU_RULE_DROP_MAD);
	CHECK_EQ(s.rules.r[0].mad_kind, MAD_KIND_CM_REQ);
	CHECK_EQ(s.rules.r[0].nords, 1);
	CHECK_EQ(s.rules.r[0].ords[0], 1);
	CHECK_EQ(s.rules.r[1].mad_kind, MAD_KIND_CM_REP);
	CHECK_EQ(s.rules.r[1].nords, 2);
	CHECK_EQ(s.rules.r[1].ords[1], 3);
	CHECK(emu_spec_format(&s, f, sizeof(f)) > 0);
	CHECK(strstr(f, "drop-mad cm-req 1 drop-mad cm-rep 1,3 drop-nth 7") != NULL);
	CHECK_EQ(emu_spec_parse(&b, f, msg, sizeof(msg)), 0);
	CHECK(emu_spec_format(&b, f2, sizeof(f2)) > 0);
	CHECK(strcmp(f, f2) == 0);
	/* the longest rule fits the format buffer the emulator's report uses */
	CHECK_EQ(parse("drop-mad cm-sidr-rep 999993,999994,999995,999996,999997,999998,999999,"
		       "1000000"),
		 0);
	CHECK(emu_rule_format(&s.rules.r[0], t, sizeof(t)) < (int)sizeof(t));
	CHECK(strcmp(t, "drop-mad cm-sidr-rep 999993,999994,999995,999996,999997,999998,999999,"
			"1000000") == 0);
	CHECK(strcmp(emu_rule_kind_name(EMU_RULE_DROP_MAD), "drop-mad") == 0);
	/* errors, each naming the fix */
	CHECK_EQ(parse("drop-mad"), -EMU_E_MISSING_ARG);
	CHECK_EQ(parse("drop-mad cm-req"), -EMU_E_MISSING_ARG);
	CHECK(strstr(msg, "ordinals") != NULL);
	CHECK_EQ(parse("drop-mad cm-foo 1"), -EMU_E_INVAL);
	CHECK(strstr(msg, "cm-sidr-req") != NULL);
	CHECK_EQ(parse("drop-mad cm-req 0"), -EMU_E_RANGE);
	CHECK_EQ(parse("drop-mad cm-req 1,"), -EMU_E_RANGE);
	CHECK_EQ(parse("drop-mad cm-req 1000001"), -EMU_E_RANGE);
	CHECK_EQ(parse("drop-mad cm-req 3,2"), -EMU_E_INVAL);
	CHECK(strstr(msg, "ascend") != NULL);
	CHECK_EQ(parse("drop-mad cm-req 2,2"), -EMU_E_INVAL);
	CHECK_EQ(parse("drop-mad cm-req 1,2,3,4,5,6,7,8,9"), -EMU_E_RANGE);
	CHECK_EQ(parse("drop-mad cm-req 1,2,3,4,5,6,7,8"), 0);
}

RW_TEST_MAIN(RW_TEST(test_drop_psn), RW_TEST(test_drop_nth), RW_TEST(test_spec),
	     RW_TEST(test_errors), RW_TEST(test_format_names), RW_TEST(test_mad_kind),
	     RW_TEST(test_drop_mad), RW_TEST(test_drop_mad_spec))
