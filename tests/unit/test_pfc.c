/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: 802.1Qbb PFC and 802.3x PAUSE frames, quanta <-> time, classification. */
#include "net_bytes.h"
#include "net_hdr.h"
#include "pfc.h"
#include "rw_test.h"

static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x0a};

static void
test_pfc_layout(void)
{
	uint8_t f[64];
	uint16_t q[8] = {1, 2, 3, 0xffff, 5, 6, 7, 8};
	struct pfc_frame p;

	CHECK_EQ(pfc_build(f, sizeof(f), mac, 1 << 3 | 1 << 4, q), 60);
	CHECK_MEM(f, pfc_dst_mac, 6);
	CHECK_EQ(net_get_be16(f + 12), 0x8808);
	CHECK_EQ(net_get_be16(f + 14), 0x0101);
	CHECK_EQ(net_get_be16(f + 16), 0x0018);
	CHECK_EQ(net_get_be16(f + 18 + 2 * 3), 0xffff);
	CHECK_EQ(net_get_be16(f + 18 + 2 * 4), 5);
	CHECK_EQ(net_get_be16(f + 18 + 2 * 0), 0); /* disabled priority carries 0 */
	for (int i = 34; i < 60; i++)
		CHECK_EQ(f[i], 0);
	CHECK_EQ(pfc_parse(f, 60, &p), 0);
	CHECK_EQ(p.opcode, PFC_OPCODE);
	CHECK_EQ(p.enable, 0x18);
	CHECK_EQ(p.quanta[3], 0xffff);
	CHECK_EQ(p.quanta[0], 0);
	CHECK_MEM(p.src, mac, 6);
	CHECK(pfc_is_mac_ctrl(f, 60));
	/* minimum parse length is 34: pad may be absent, FCS may be present */
	CHECK_EQ(pfc_parse(f, 34, &p), 0);
	CHECK_EQ(pfc_parse(f, 64, &p), 0);
	CHECK_EQ(pfc_parse(f, 33, &p), -NET_E_TRUNC_MAC_CTRL);
	CHECK_EQ(pfc_parse(f, 10, &p), -NET_E_TRUNC_MAC_CTRL);
	CHECK_EQ(pfc_build(f, 59, mac, 1, q), -NET_E_NOSPACE);
	f[16] = 0x01; /* enable vector high octet must be zero */
	CHECK_EQ(pfc_parse(f, 60, &p), -NET_E_BAD_PFC_VECTOR);
	f[16] = 0;
	f[15] = 0x02; /* opcode 0x0102 */
	CHECK_EQ(pfc_parse(f, 60, &p), -NET_E_BAD_MAC_CTRL_OP);
	f[12] = 0x08, f[13] = 0x00;
	CHECK_EQ(pfc_parse(f, 60, &p), -NET_E_NOT_MAC_CTRL);
	CHECK(!pfc_is_mac_ctrl(f, 60));
}

static void
test_pause(void)
{
	uint8_t f[60];
	struct pfc_frame p;

	CHECK_EQ(pause_build(f, sizeof(f), mac, 0x1234), 60);
	CHECK_EQ(net_get_be16(f + 14), 0x0001);
	CHECK_EQ(net_get_be16(f + 16), 0x1234);
	CHECK_EQ(pfc_parse(f, 60, &p), 0);
	CHECK_EQ(p.opcode, PAUSE_OPCODE);
	CHECK_EQ(p.enable, 0xff);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(p.quanta[i], 0x1234);
	CHECK_EQ(pfc_parse(f, 17, &p), -NET_E_TRUNC_MAC_CTRL);
}

static void
test_quanta_time(void)
{
	/* fact-sheet table: 65535 quanta = 33.55 ms at 1G, 3.355 ms at 10G, 335.5 us at 100G */
	CHECK_EQ(pfc_quanta_to_ns(65535, 1000000000ull), 33553920);
	CHECK_EQ(pfc_quanta_to_ns(65535, 10000000000ull), 3355392);
	CHECK_EQ(pfc_quanta_to_ns(65535, 100000000000ull), 335539);
	CHECK_EQ(pfc_quanta_to_ns(1, 40000000000ull), 12); /* 12.8 ns rounded down */
	CHECK_EQ(pfc_quanta_to_ns(1, 0), 0);
	CHECK_EQ(pfc_ns_to_quanta(512, 1000000000ull), 1);
	CHECK_EQ(pfc_ns_to_quanta(513, 1000000000ull), 2);		    /* rounded up */
	CHECK_EQ(pfc_ns_to_quanta(1000000000ull, 100000000000ull), 0xffff); /* saturates */
	CHECK_EQ(pfc_ns_to_quanta(0, 10000000000ull), 0);
	/* conversion keeps the duration and never turns XOFF into XON */
	CHECK_EQ(pfc_quanta_convert(100, 10000000000ull, 100000000000ull), 1000);
	CHECK_EQ(pfc_quanta_convert(1000, 100000000000ull, 10000000000ull), 100);
	CHECK_EQ(pfc_quanta_convert(1, 100000000000ull, 10000000000ull), 1);
	CHECK_EQ(pfc_quanta_convert(0, 100000000000ull, 10000000000ull), 0);
	CHECK_EQ(pfc_quanta_convert(0xffff, 10000000000ull, 100000000000ull), 0xffff);
	for (uint32_t q = 1; q < 0xffff; q += 97) {
		uint16_t r = pfc_quanta_convert((uint16_t)q, 25000000000ull, 10000000000ull);
		/* the converted pause is never shorter than the original */
		CHECK(pfc_quanta_to_ns(r, 10000000000ull) + 1 >=
		      pfc_quanta_to_ns(q, 25000000000ull));
	}
}

static void
test_classify(void)
{
	struct pfc_classifier c;
	uint8_t f[64] = {0};
	struct net_l2 l2 = {
	    .has_vlan = true, .vlan_tci = net_vlan_tci(5, 10), .ethertype = NET_ETHERTYPE_IPV4};
	int h = net_l2_build(f, sizeof(f), &l2);

	f[h] = 0x45;
	f[h + 1] = 26 << 2 | 2; /* DSCP 26 (AF31), ECT(0) */
	pfc_classifier_init(&c, PFC_TRUST_PCP);
	CHECK_EQ(pfc_classify(&c, f, 60), 5);
	pfc_classifier_init(&c, PFC_TRUST_DSCP);
	CHECK_EQ(pfc_classify(&c, f, 60), 3);
	f[h + 1] = 48 << 2; /* CNP's DSCP 48 -> 6 */
	CHECK_EQ(pfc_classify(&c, f, 60), 6);
	c.dscp2prio[48] = 1;
	CHECK_EQ(pfc_classify(&c, f, 60), 1);
	/* untagged frame in PCP mode, truncated frame: default priority */
	l2.has_vlan = false;
	h = net_l2_build(f, sizeof(f), &l2);
	pfc_classifier_init(&c, PFC_TRUST_PCP);
	c.default_prio = 2;
	CHECK_EQ(pfc_classify(&c, f, 60), 2);
	CHECK_EQ(pfc_classify(&c, f, 5), 2);
	/* IPv6 traffic class */
	l2.ethertype = NET_ETHERTYPE_IPV6;
	h = net_l2_build(f, sizeof(f), &l2);
	f[h] = 0x60 | (26 << 2) >> 4;
	f[h + 1] = (uint8_t)((26 << 2) << 4);
	pfc_classifier_init(&c, PFC_TRUST_DSCP);
	CHECK_EQ(pfc_classify(&c, f, 60), 3);
	/* the first two IP bytes are enough; one is not */
	CHECK_EQ(pfc_classify(&c, f, (size_t)h + 2), 3);
	CHECK_EQ(pfc_classify(&c, f, (size_t)h + 1), 0);
	/* the version nibble must be the EtherType's */
	f[h] = 0x40 | (26 << 2) >> 4;
	CHECK_EQ(pfc_classify(&c, f, 60), 0);
}

/* Tag stacks: PCP trust reads the outer 802.1Q tag, DSCP trust IP behind at most one. */
static void
test_classify_tags(void)
{
	struct pfc_classifier c;
	uint8_t f[64] = {0};
	struct net_l2 l2 = {
	    .has_vlan = true, .vlan_tci = net_vlan_tci(5, 10), .ethertype = NET_ETHERTYPE_VLAN};
	int h = net_l2_build(f, sizeof(f), &l2);

	/* 802.1Q in 802.1Q (inner PCP 1), then IPv4 DSCP 26 */
	net_put_be16(f + h, net_vlan_tci(1, 11));
	net_put_be16(f + h + 2, NET_ETHERTYPE_IPV4);
	f[h + 4] = 0x45;
	f[h + 5] = 26 << 2;
	pfc_classifier_init(&c, PFC_TRUST_PCP);
	CHECK_EQ(pfc_classify(&c, f, 60), 5);
	CHECK_EQ(pfc_classify(&c, f, (size_t)h + 1), 5); /* inner tag cut: the outer one counts */
	CHECK_EQ(pfc_classify(&c, f, (size_t)h - 1), 0); /* outer tag cut: default */
	pfc_classifier_init(&c, PFC_TRUST_DSCP);
	c.default_prio = 4;
	CHECK_EQ(pfc_classify(&c, f, 60), 4); /* IP behind two tags is not read */
	/* an 802.1ad outer tag: no 802.1Q PCP, and the IP behind it is not read either */
	net_put_be16(f + 12, NET_ETHERTYPE_QINQ);
	net_put_be16(f + h - 2, NET_ETHERTYPE_IPV4);
	f[h] = 0x45;
	f[h + 1] = 26 << 2;
	CHECK_EQ(pfc_classify(&c, f, 60), 4);
	pfc_classifier_init(&c, PFC_TRUST_PCP);
	CHECK_EQ(pfc_classify(&c, f, 60), 0);
}

RW_TEST_MAIN(RW_TEST(test_pfc_layout), RW_TEST(test_pause), RW_TEST(test_quanta_time),
	     RW_TEST(test_classify), RW_TEST(test_classify_tags))
