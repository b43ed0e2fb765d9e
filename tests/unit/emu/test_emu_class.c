/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: per-flow impairment classes (MATCH => SPEC): parse, refusals, format round
 * trip, matching on built frames, first match wins, per-class seeds. */
#include <string.h>

#include "emu_class.h"
#include "net_frame.h"
#include "rw_test.h"

static char msg[512];

/* an untagged or one-tag IPv4/UDP frame to @p dport with a BTH (dqp, opcode) after it */
static size_t
frame4(uint8_t *f, int vlan, uint16_t vid, uint8_t pcp, uint8_t tos, const uint8_t src[4],
       const uint8_t dst[4], uint16_t sport, uint16_t dport, uint32_t dqp, uint8_t op)
{
	size_t o = 12;

	memset(f, 0, 128);
	if (vlan) {
		f[o++] = 0x81, f[o++] = 0x00;
		f[o++] = (uint8_t)(pcp << 5 | vid >> 8), f[o++] = (uint8_t)vid;
	}
	f[o++] = 0x08, f[o++] = 0x00;
	f[o] = 0x45, f[o + 1] = tos, f[o + 3] = 60, f[o + 8] = 64, f[o + 9] = 17;
	memcpy(f + o + 12, src, 4);
	memcpy(f + o + 16, dst, 4);
	o += 20;
	f[o] = (uint8_t)(sport >> 8), f[o + 1] = (uint8_t)sport;
	f[o + 2] = (uint8_t)(dport >> 8), f[o + 3] = (uint8_t)dport, f[o + 5] = 40;
	o += 8;
	f[o] = op;
	f[o + 5] = (uint8_t)(dqp >> 16), f[o + 6] = (uint8_t)(dqp >> 8), f[o + 7] = (uint8_t)dqp;
	return o + 12 + 16;
}

static const uint8_t A[4] = {10, 0, 0, 1}, B[4] = {10, 0, 1, 7}, C[4] = {192, 168, 3, 4};

static int
sel(const struct emu_class *cs, unsigned n, const uint8_t *f, size_t len)
{
	struct net_frame fr;

	net_frame_classify(f, len, &fr);
	return emu_class_select(cs, n, f, len, &fr);
}

static void
test_parse_and_format(void)
{
	struct emu_class c, d;
	char a[EMU_SPEC_MAX_LEN], b[EMU_SPEC_MAX_LEN];

	CHECK_EQ(emu_class_parse(&c,
				 "ip_proto udp dst_port 4791 roce_dqp 0x11 => delay 40ms loss 1%",
				 msg, sizeof(msg)),
		 0);
	CHECK_EQ(c.m.keys, EMU_CK_IP_PROTO | EMU_CK_DST_PORT | EMU_CK_ROCE_DQP);
	CHECK_EQ(c.m.ip_proto, 17);
	CHECK_EQ(c.m.dport_lo, 4791);
	CHECK_EQ(c.m.dport_hi, 4791);
	CHECK_EQ(c.m.roce_dqp, 0x11);
	CHECK_EQ(c.spec.delay.delay_ns, 40000000);
	CHECK(emu_class_format(&c, a, sizeof(a)) > 0);
	CHECK_EQ(emu_class_parse(&d, a, msg, sizeof(msg)), 0);
	CHECK(emu_class_format(&d, b, sizeof(b)) > 0);
	CHECK(strcmp(a, b) == 0);
	CHECK_EQ(emu_class_parse(&c,
				 "dst_ip 10.0.1.99/24 src_ip 10.0.0.1 ip_tos 0x20/0xfc "
				 "vlan_id 5 vlan_prio 3 => corrupt 2%",
				 msg, sizeof(msg)),
		 0);
	CHECK_EQ(c.m.dst_ip.plen, 24);
	CHECK_EQ(c.m.dst_ip.a[3], 0); /* host bits cleared */
	CHECK(emu_class_format(&c, a, sizeof(a)) > 0);
	CHECK_EQ(emu_class_parse(&d, a, msg, sizeof(msg)), 0);
	CHECK(emu_class_format(&d, b, sizeof(b)) > 0);
	CHECK(strcmp(a, b) == 0);
	CHECK_EQ(emu_class_parse(&c, "dst_ip fd00::/8 => loss 3%", msg, sizeof(msg)), 0);
	CHECK_EQ(c.m.dst_ip.fam, 6);
}

static void
test_refusals(void)
{
	struct emu_class c;

	CHECK_EQ(emu_class_parse(&c, "ip_proto udp delay 1ms", msg, sizeof(msg)),
		 -EMU_E_MISSING_ARG);
	CHECK_EQ(emu_class_parse(&c, "=> delay 1ms", msg, sizeof(msg)), -EMU_E_EMPTY);
	CHECK_EQ(emu_class_parse(&c, "dst_prt 1 => delay 1ms", msg, sizeof(msg)),
		 -EMU_E_UNKNOWN_KEYWORD);
	CHECK(strstr(msg, "dst_prt") != NULL);
	CHECK_EQ(emu_class_parse(&c, "dst_port 4791 => delay 1ms", msg, sizeof(msg)),
		 -EMU_E_CONFLICT); /* ports need ip_proto, as in tc-flower */
	CHECK_EQ(emu_class_parse(&c, "dst_ip 10.0.0.0/33 => delay 1ms", msg, sizeof(msg)),
		 -EMU_E_RANGE);
	CHECK(strstr(msg, "dst_ip") != NULL);
	CHECK_EQ(emu_class_parse(&c, "vlan_id 4096 => delay 1ms", msg, sizeof(msg)), -EMU_E_RANGE);
	CHECK_EQ(emu_class_parse(&c, "vlan_id 1 vlan_id 2 => delay 1ms", msg, sizeof(msg)),
		 -EMU_E_DUPLICATE);
	CHECK_EQ(emu_class_parse(&c, "vlan_id 1 => rate 1gbit", msg, sizeof(msg)),
		 -EMU_E_CONFLICT); /* the bottleneck is the direction's */
	CHECK(strstr(msg, "rate") != NULL);
	CHECK_EQ(emu_class_parse(&c, "vlan_id 1 => pfc xoff 10kb xon 5kb", msg, sizeof(msg)),
		 -EMU_E_CONFLICT);
	CHECK_EQ(emu_class_parse(&c, "vlan_id 1 => drop-nth 3", msg, sizeof(msg)), -EMU_E_CONFLICT);
	CHECK_EQ(emu_class_parse(&c, "vlan_id 1 => dealy 3ms", msg, sizeof(msg)),
		 -EMU_E_UNKNOWN_KEYWORD);
	CHECK(strstr(msg, "class SPEC") != NULL);
	CHECK_EQ(emu_class_parse(&c, "vlan_id 1 => delay 1ms => loss 1%", msg, sizeof(msg)),
		 -EMU_E_DUPLICATE);
}

static void
test_match_first_wins(void)
{
	struct emu_class cs[4];
	uint8_t f[128];
	size_t n;

	CHECK_EQ(emu_class_parse(&cs[0], "ip_proto udp dst_port 4791 roce_dqp 0x11 => delay 40ms",
				 msg, sizeof(msg)),
		 0);
	CHECK_EQ(emu_class_parse(&cs[1], "dst_ip 10.0.1.0/24 => loss 5%", msg, sizeof(msg)), 0);
	CHECK_EQ(emu_class_parse(&cs[2], "vlan_prio 3 => corrupt 1%", msg, sizeof(msg)), 0);
	CHECK_EQ(emu_class_parse(&cs[3],
				 "ip_proto udp src_port 1000-1999 ip_tos 0x08/0xfc => "
				 "delay 1ms",
				 msg, sizeof(msg)),
		 0);
	/* dqp 0x11 to 10.0.1.7 matches classes 0 and 1: the first wins */
	n = frame4(f, 0, 0, 0, 0, A, B, 49152, 4791, 0x11, 0x04);
	CHECK_EQ(sel(cs, 4, f, n), 0);
	CHECK_EQ(sel(cs + 1, 3, f, n), 0); /* without class 0 it is class 1 */
	n = frame4(f, 0, 0, 0, 0, A, B, 49152, 4791, 0x12, 0x04);
	CHECK_EQ(sel(cs, 4, f, n), 1);
	n = frame4(f, 1, 5, 3, 0, A, C, 49152, 4791, 0x12, 0x04);
	CHECK_EQ(sel(cs, 4, f, n), 2);
	n = frame4(f, 1, 5, 2, 0, A, C, 49152, 4791, 0x12, 0x04);
	CHECK_EQ(sel(cs, 4, f, n), -1); /* the direction's SPEC */
	n = frame4(f, 0, 0, 0, 0x0b, A, C, 1500, 5000, 0, 0);
	CHECK_EQ(sel(cs, 4, f, n), 3); /* ECN bits masked off */
	n = frame4(f, 0, 0, 0, 0x0b, A, C, 2000, 5000, 0, 0);
	CHECK_EQ(sel(cs, 4, f, n), -1);
	/* a frame cut before the ports or the BTH matches nothing that needs them */
	n = frame4(f, 0, 0, 0, 0, A, B, 49152, 4791, 0x11, 0x04);
	CHECK_EQ(sel(cs, 1, f, 14 + 20 + 2), -1);
	CHECK_EQ(sel(cs + 1, 1, f, 14 + 20), 0); /* the address is there */
	CHECK_EQ(sel(cs + 1, 1, f, 14 + 10), -1);
}

static void
test_seeds(void)
{
	CHECK(emu_class_seed(1, 0) != emu_class_seed(1, 1));
	CHECK(emu_class_seed(1, 0) != emu_class_seed(2, 0));
	CHECK_EQ(emu_class_seed(7, 3), emu_class_seed(7, 3));
}

RW_TEST_MAIN(RW_TEST(test_parse_and_format), RW_TEST(test_refusals), RW_TEST(test_match_first_wins),
	     RW_TEST(test_seeds))
