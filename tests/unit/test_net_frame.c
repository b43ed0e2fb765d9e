/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/net's frame classifier (net_frame.h): every kind, tag
 * stacks (802.1Q, VLAN-in-VLAN, a third tag), IPv4 options, IPv6, wrong
 * version nibbles, and every truncation of each frame, read from a buffer of
 * exactly the frame's length (the ASan build turns any read past it into a
 * failure).
 */
#include <stdlib.h>

#include "net_bytes.h"
#include "net_frame.h"
#include "net_hdr.h"
#include "rw_test.h"

/* Ethernet with @p ntags tags (TPIDs @p tpid), then @p et; returns the header length. */
static size_t
eth(uint8_t *f, unsigned ntags, const uint16_t *tpid, uint16_t et)
{
	size_t o = 12;

	memset(f, 0, 12);
	f[0] = 0x02, f[5] = 0x01, f[6] = 0x02, f[11] = 0x02;
	for (unsigned i = 0; i < ntags; i++, o += 4) {
		net_put_be16(f + o, tpid[i]);
		net_put_be16(f + o + 2, net_vlan_tci((uint8_t)(3 + i), (uint16_t)(100 + i)));
	}
	net_put_be16(f + o, et);
	return o + 2;
}

/* IPv4 with @p ihl 32-bit words of header, protocol @p proto, @p plen payload bytes */
static size_t
ip4(uint8_t *ip, unsigned ihl, uint8_t proto, size_t plen)
{
	memset(ip, 0, ihl * 4);
	ip[0] = (uint8_t)(0x40 | ihl);
	net_put_be16(ip + 2, (uint16_t)(ihl * 4 + plen));
	ip[8] = 64;
	ip[9] = proto;
	net_put_be32(ip + 12, 0x0a000001);
	net_put_be32(ip + 16, 0x0a000002);
	net_ip4_fix_csum(ip);
	return ihl * 4;
}

static size_t
ip6(uint8_t *ip, uint8_t nh, size_t plen)
{
	memset(ip, 0, 40);
	ip[0] = 0x60;
	net_put_be16(ip + 4, (uint16_t)plen);
	ip[6] = nh;
	ip[7] = 64;
	ip[8] = 0xfe, ip[9] = 0x80, ip[23] = 1;
	ip[24] = 0xfe, ip[25] = 0x80, ip[39] = 2;
	return 40;
}

/* UDP to @p dport with a BTH to QP @p dqpn and 4 bytes of "ICRC" */
static size_t
udp_bth(uint8_t *u, uint16_t dport, uint32_t dqpn)
{
	memset(u, 0, 8 + 12 + 4);
	net_put_be16(u, 0xc000);
	net_put_be16(u + 2, dport);
	net_put_be16(u + 4, 8 + 12 + 4);
	u[8] = 0x0a; /* RC WRITE ONLY */
	net_put_be16(u + 8 + 2, 0xffff);
	u[8 + 5] = (uint8_t)(dqpn >> 16), u[8 + 6] = (uint8_t)(dqpn >> 8), u[8 + 7] = (uint8_t)dqpn;
	return 8 + 12 + 4;
}

/* classify from a heap copy of exactly @p len bytes */
static enum net_frame_kind
classify(const uint8_t *f, size_t len, struct net_frame *fr)
{
	uint8_t *c = malloc(len ? len : 1);
	enum net_frame_kind k;

	memcpy(c, f, len);
	k = net_frame_classify(c, len, fr);
	free(c);
	return k;
}

/*
 * Every prefix of a frame of kind @p full is classified without a read past
 * it, to a kind no more specific than the whole frame's, and reaches @p full
 * from @p need bytes on.
 */
static void
check_prefixes(const uint8_t *f, size_t len, enum net_frame_kind full, size_t need)
{
	struct net_frame fr;

	for (size_t l = 0; l <= len; l++) {
		enum net_frame_kind k = classify(f, l, &fr);

		CHECK(k <= full || (full == NET_FRAME_IP && k == NET_FRAME_ICMP));
		if (l >= need)
			CHECK_EQ(k, full);
		else
			CHECK(k != full);
		if (k == NET_FRAME_ROCE && fr.has_bth)
			CHECK((size_t)fr.l4_off + 8 + 12 <= l);
		if (fr.udp)
			CHECK((size_t)fr.l4_off + 8 <= l);
	}
}

static void
test_kinds_untagged(void)
{
	uint8_t f[256];
	struct net_frame fr;
	size_t h;

	h = eth(f, 0, NULL, NET_ETHERTYPE_ARP);
	memset(f + h, 0, 28);
	CHECK_EQ(classify(f, h + 28, &fr), NET_FRAME_ARP);
	CHECK_EQ(fr.l3_off, 14);
	CHECK_EQ(fr.ntags, 0);
	CHECK(net_frame_dot1q_only(&fr));

	h = eth(f, 0, NULL, NET_ETHERTYPE_MAC_CTRL);
	CHECK_EQ(classify(f, 60, &fr), NET_FRAME_MAC_CTRL);

	h = eth(f, 0, NULL, 0x88cc); /* LLDP */
	CHECK_EQ(classify(f, 60, &fr), NET_FRAME_OTHER);
	CHECK_EQ(fr.ethertype, 0x88cc);

	h = eth(f, 0, NULL, NET_ETHERTYPE_IPV4);
	h += ip4(f + h, 5, NET_IPPROTO_ICMP, 8);
	CHECK_EQ(classify(f, h + 8, &fr), NET_FRAME_ICMP);
	CHECK(fr.ip && fr.ip_version_ok);
	CHECK_EQ(fr.proto, NET_IPPROTO_ICMP);
	CHECK_EQ(fr.l4_off, 34);

	h = eth(f, 0, NULL, NET_ETHERTYPE_IPV4);
	h += ip4(f + h, 5, 6 /* TCP */, 20);
	CHECK_EQ(classify(f, h + 20, &fr), NET_FRAME_IP);
	CHECK(!fr.udp);

	h = eth(f, 0, NULL, NET_ETHERTYPE_IPV4);
	h += ip4(f + h, 5, NET_IPPROTO_UDP, 24);
	h += udp_bth(f + h, 53, 0);
	CHECK_EQ(classify(f, h, &fr), NET_FRAME_UDP);
	CHECK_EQ(fr.udp_dport, 53);
	CHECK(!fr.has_bth);
}

static void
test_roce_ipv4(void)
{
	uint8_t f[256];
	struct net_frame fr;
	size_t h = eth(f, 0, NULL, NET_ETHERTYPE_IPV4), l3 = h;

	h += ip4(f + h, 5, NET_IPPROTO_UDP, 24);
	h += udp_bth(f + h, NET_UDP_PORT_ROCEV2, 0x123456);
	CHECK_EQ(classify(f, h, &fr), NET_FRAME_ROCE);
	CHECK_EQ(fr.l3_off, l3);
	CHECK_EQ(fr.l4_off, l3 + 20);
	CHECK_EQ(fr.udp_dport, 4791);
	CHECK(fr.has_bth);
	CHECK_EQ(fr.bth_dqpn, 0x123456);
	/* the PSN (bytes 9-11) and opcode (byte 0) of the BTH, for lossy-emu's drop rules */
	f[l3 + 20 + 8] = 0x0a;
	f[l3 + 20 + 8 + 9] = 0xfe;
	f[l3 + 20 + 8 + 10] = 0xdc;
	f[l3 + 20 + 8 + 11] = 0xba;
	CHECK_EQ(classify(f, h, &fr), NET_FRAME_ROCE);
	CHECK_EQ(fr.bth_psn, 0xfedcba);
	CHECK_EQ(fr.bth_op, 0x0a);
	CHECK_EQ(fr.bth_dqpn, 0x123456);
	/* RoCE from the whole UDP header on; the BTH from 12 bytes after it */
	check_prefixes(f, h, NET_FRAME_ROCE, l3 + 20 + 8);
	CHECK_EQ(classify(f, l3 + 20 + 8 + 11, &fr), NET_FRAME_ROCE);
	CHECK(!fr.has_bth);
	CHECK_EQ(classify(f, l3 + 20 + 8 + 12, &fr), NET_FRAME_ROCE);
	CHECK(fr.has_bth);
}

/* IHL > 5: the UDP header starts after the options; IHL < 5 or past the frame: no L4 */
static void
test_ipv4_options(void)
{
	uint8_t f[256];
	struct net_frame fr;
	size_t h = eth(f, 0, NULL, NET_ETHERTYPE_IPV4), l3 = h;

	h += ip4(f + h, 15, NET_IPPROTO_UDP, 24); /* 40 bytes of options */
	h += udp_bth(f + h, NET_UDP_PORT_ROCEV2, 7);
	CHECK_EQ(classify(f, h, &fr), NET_FRAME_ROCE);
	CHECK_EQ(fr.l4_off, l3 + 60);
	CHECK_EQ(fr.bth_dqpn, 7);
	/* the short frame the old dispatcher read past: IP header whole, UDP not */
	CHECK_EQ(classify(f, l3 + 28, &fr), NET_FRAME_IP);
	CHECK(fr.ip);
	CHECK_EQ(fr.l4_off, 0); /* 60-byte header past a 28-byte packet */
	CHECK_EQ(classify(f, l3 + 60 + 7, &fr), NET_FRAME_IP);
	CHECK_EQ(fr.l4_off, l3 + 60);
	CHECK(!fr.udp);
	check_prefixes(f, h, NET_FRAME_ROCE, l3 + 60 + 8);

	for (unsigned ihl = 0; ihl < 5; ihl++) {
		f[l3] = (uint8_t)(0x40 | ihl);
		CHECK_EQ(classify(f, h, &fr), NET_FRAME_IP);
		CHECK(fr.ip);
		CHECK_EQ(fr.proto, NET_IPPROTO_UDP);
		CHECK_EQ(fr.l4_off, 0);
		CHECK(!fr.udp);
	}
}

static void
test_ipv6(void)
{
	uint8_t f[256];
	struct net_frame fr;
	size_t h = eth(f, 0, NULL, NET_ETHERTYPE_IPV6), l3 = h;

	h += ip6(f + h, NET_IPPROTO_UDP, 24);
	h += udp_bth(f + h, NET_UDP_PORT_ROCEV2, 0xabcdef);
	CHECK_EQ(classify(f, h, &fr), NET_FRAME_ROCE);
	CHECK_EQ(fr.l4_off, l3 + 40);
	CHECK_EQ(fr.bth_dqpn, 0xabcdef);
	CHECK(fr.ip_version_ok);
	check_prefixes(f, h, NET_FRAME_ROCE, l3 + 48);

	h = eth(f, 0, NULL, NET_ETHERTYPE_IPV6);
	h += ip6(f + h, NET_IPPROTO_ICMPV6, 32);
	memset(f + h, 0, 32);
	CHECK_EQ(classify(f, h + 32, &fr), NET_FRAME_ICMPV6);
	check_prefixes(f, h + 32, NET_FRAME_ICMPV6, l3 + 40);
	CHECK_EQ(classify(f, l3 + 39, &fr), NET_FRAME_IP);
	CHECK(!fr.ip);
}

/* the version nibble is reported, not enforced: the RoCE parser counts a wrong one */
static void
test_wrong_version(void)
{
	uint8_t f[256];
	struct net_frame fr;
	size_t h = eth(f, 0, NULL, NET_ETHERTYPE_IPV4), l3 = h;

	h += ip4(f + h, 5, NET_IPPROTO_UDP, 24);
	h += udp_bth(f + h, NET_UDP_PORT_ROCEV2, 1);
	f[l3] = 0x65;
	CHECK_EQ(classify(f, h, &fr), NET_FRAME_ROCE);
	CHECK(fr.ip && !fr.ip_version_ok);

	h = eth(f, 0, NULL, NET_ETHERTYPE_IPV6);
	h += ip6(f + h, NET_IPPROTO_UDP, 24);
	f[l3] = 0x45;
	CHECK_EQ(classify(f, h, &fr), NET_FRAME_IP); /* byte 6 is not 17 once read as v6 */
	CHECK(fr.ip && !fr.ip_version_ok);
}

static void
test_vlan(void)
{
	static const uint16_t q[] = {NET_ETHERTYPE_VLAN};
	uint8_t f[256];
	struct net_frame fr;
	size_t h = eth(f, 1, q, NET_ETHERTYPE_IPV4);

	CHECK_EQ(h, 18);
	h += ip4(f + h, 5, NET_IPPROTO_UDP, 24);
	h += udp_bth(f + h, NET_UDP_PORT_ROCEV2, 0x11);
	CHECK_EQ(classify(f, h, &fr), NET_FRAME_ROCE);
	CHECK_EQ(fr.ntags, 1);
	CHECK_EQ(fr.tpid[0], 0x8100);
	CHECK_EQ(net_vlan_pcp(fr.tci[0]), 3);
	CHECK_EQ(net_vlan_vid(fr.tci[0]), 100);
	CHECK_EQ(fr.l3_off, 18);
	CHECK_EQ(fr.l4_off, 38);
	CHECK(net_frame_dot1q_only(&fr));
	check_prefixes(f, h, NET_FRAME_ROCE, 18 + 28);
	/* a tag cut short: its TPID stays the EtherType, the payload would start at it */
	for (size_t l = 14; l < 18; l++) {
		CHECK_EQ(classify(f, l, &fr), NET_FRAME_BAD_L2);
		CHECK_EQ(fr.ethertype, 0x8100);
		CHECK_EQ(fr.l3_off, 14);
		CHECK_EQ(fr.ntags, 0);
	}
	/* a lone 802.1ad tag is a tag, but not one net_l2_parse() reads */
	static const uint16_t ad[] = {NET_ETHERTYPE_QINQ};
	h = eth(f, 1, ad, NET_ETHERTYPE_ARP);
	memset(f + h, 0, 28);
	CHECK_EQ(classify(f, h + 28, &fr), NET_FRAME_ARP);
	CHECK_EQ(fr.tpid[0], 0x88a8);
	CHECK(!net_frame_dot1q_only(&fr));
}

static void
test_vlan_in_vlan(void)
{
	static const uint16_t ad_q[] = {NET_ETHERTYPE_QINQ, NET_ETHERTYPE_VLAN};
	static const uint16_t q_q[] = {NET_ETHERTYPE_VLAN, NET_ETHERTYPE_VLAN};
	static const uint16_t q_q_q[] = {NET_ETHERTYPE_VLAN, NET_ETHERTYPE_VLAN,
					 NET_ETHERTYPE_VLAN};
	static const uint16_t q_ad[] = {NET_ETHERTYPE_VLAN, NET_ETHERTYPE_QINQ};
	uint8_t f[256];
	struct net_frame fr;
	size_t h;

	h = eth(f, 2, ad_q, NET_ETHERTYPE_IPV4);
	CHECK_EQ(h, 22);
	h += ip4(f + h, 5, NET_IPPROTO_UDP, 24);
	h += udp_bth(f + h, NET_UDP_PORT_ROCEV2, 0x42);
	CHECK_EQ(classify(f, h, &fr), NET_FRAME_ROCE);
	CHECK_EQ(fr.ntags, 2);
	CHECK_EQ(fr.tpid[0], 0x88a8);
	CHECK_EQ(fr.tpid[1], 0x8100);
	CHECK_EQ(net_vlan_vid(fr.tci[0]), 100);
	CHECK_EQ(net_vlan_vid(fr.tci[1]), 101);
	CHECK_EQ(fr.l3_off, 22);
	CHECK_EQ(fr.bth_dqpn, 0x42);
	CHECK(!net_frame_dot1q_only(&fr));
	check_prefixes(f, h, NET_FRAME_ROCE, 22 + 28);
	/* the inner tag cut short */
	CHECK_EQ(classify(f, 20, &fr), NET_FRAME_BAD_L2);
	CHECK_EQ(fr.ntags, 1);
	CHECK_EQ(fr.ethertype, 0x8100);
	CHECK_EQ(fr.l3_off, 18);

	h = eth(f, 2, q_q, NET_ETHERTYPE_ARP);
	CHECK_EQ(classify(f, h + 28, &fr), NET_FRAME_ARP);
	CHECK_EQ(fr.ntags, 2);
	/* a third tag is not parsed: the frame is of "EtherType" 0x8100 */
	h = eth(f, 3, q_q_q, NET_ETHERTYPE_ARP);
	CHECK_EQ(classify(f, h + 28, &fr), NET_FRAME_OTHER);
	CHECK_EQ(fr.ntags, 2);
	CHECK_EQ(fr.ethertype, 0x8100);
	/* 802.1ad is only an outer tag */
	h = eth(f, 2, q_ad, NET_ETHERTYPE_ARP);
	CHECK_EQ(classify(f, h + 28, &fr), NET_FRAME_OTHER);
	CHECK_EQ(fr.ntags, 1);
	CHECK_EQ(fr.ethertype, 0x88a8);
}

/* short frames: nothing but a verdict */
static void
test_runts(void)
{
	uint8_t f[64] = {0};
	struct net_frame fr;

	for (size_t l = 0; l < 14; l++) {
		CHECK_EQ(classify(f, l, &fr), NET_FRAME_BAD_L2);
		CHECK_EQ(fr.l3_off, 0);
	}
	CHECK_EQ(net_frame_classify(NULL, 0, &fr), NET_FRAME_BAD_L2);
	CHECK(strcmp(net_frame_kind_name(NET_FRAME_ROCE), "roce") == 0);
	CHECK(strcmp(net_frame_kind_name((enum net_frame_kind)99), "unknown") == 0);
}
/* the traffic class (DSCP, ECN) needs the first two IP bytes and the right version nibble */
static void
test_tclass(void)
{
	uint8_t f[256];
	struct net_frame fr;
	size_t h = eth(f, 0, NULL, NET_ETHERTYPE_IPV4), l3 = h;

	h += ip4(f + h, 5, NET_IPPROTO_UDP, 24);
	f[l3 + 1] = 26 << 2 | 2; /* AF31, ECT(0) */
	CHECK_EQ(classify(f, h, &fr), NET_FRAME_IP);
	CHECK(fr.has_tclass);
	CHECK_EQ(fr.tclass, 26 << 2 | 2);
	/* cut after two bytes: no IP header, but the class is there */
	CHECK_EQ(classify(f, l3 + 2, &fr), NET_FRAME_IP);
	CHECK(!fr.ip && fr.has_tclass && fr.tclass == (26 << 2 | 2));
	CHECK_EQ(classify(f, l3 + 1, &fr), NET_FRAME_IP);
	CHECK(!fr.has_tclass);
	f[l3] = 0x65; /* a v6 nibble under the IPv4 EtherType */
	CHECK_EQ(classify(f, h, &fr), NET_FRAME_IP);
	CHECK(!fr.has_tclass);

	h = eth(f, 0, NULL, NET_ETHERTYPE_IPV6);
	h += ip6(f + h, NET_IPPROTO_UDP, 24);
	f[l3] = 0x60 | (48 << 2) >> 4; /* traffic class 0xc3: DSCP 48 (CNP), ECN 3 */
	f[l3 + 1] = (uint8_t)((48 << 2 | 3) << 4);
	CHECK_EQ(classify(f, l3 + 2, &fr), NET_FRAME_IP);
	CHECK(fr.has_tclass);
	CHECK_EQ(fr.tclass, 48 << 2 | 3);
	/* not IP: no class */
	h = eth(f, 0, NULL, NET_ETHERTYPE_ARP);
	memset(f + h, 0x45, 28);
	CHECK_EQ(classify(f, h + 28, &fr), NET_FRAME_ARP);
	CHECK(!fr.has_tclass);
}

/*
 * net_frame_rx_cut(): a frame the port cut at its receive limit (an oversized frame
 * through an af_packet ring) is told from one that arrived short or whole: only at or
 * above the limit, and only when the IP header promises more than the frame holds.
 */
static bool
rx_cut(const uint8_t *f, size_t len, size_t limit)
{
	uint8_t *c = malloc(len ? len : 1);
	struct net_frame fr;
	bool cut;

	memcpy(c, f, len);
	net_frame_classify(c, len, &fr);
	cut = net_frame_rx_cut(c, len, &fr, limit);
	free(c);
	return cut;
}

static void
test_rx_cut(void)
{
	static uint8_t f[9200];
	const uint16_t tag[2] = {0x88a8, 0x8100};
	size_t h = eth(f, 0, NULL, NET_ETHERTYPE_IPV4), whole;

	/* a 9 KB RoCE frame, cut to 1982 bytes (a 2048-byte af_packet ring frame) */
	whole = h + ip4(f + h, 5, NET_IPPROTO_UDP, 9000);
	udp_bth(f + whole, NET_UDP_PORT_ROCEV2, 0x11);
	whole += 9000;
	CHECK(rx_cut(f, 1982, 1982));
	CHECK(rx_cut(f, 1986, 1982));	     /* a VLAN tag put back after the cut */
	CHECK(!rx_cut(f, 1981, 1982));	     /* below the limit: it came short off the wire */
	CHECK(!rx_cut(f, 1982, 0));	     /* a port that never cuts */
	CHECK(!rx_cut(f, whole, 1982));	     /* whole: as long as its header says */
	CHECK(!rx_cut(f, whole + 10, 1982)); /* Ethernet padding after the datagram */
	/* a wrong version nibble or no full IP header: not judged */
	f[h] = 0x65;
	CHECK(!rx_cut(f, 1982, 1982));
	f[h] = 0x45;
	CHECK(!rx_cut(f, h + 19, h + 19));
	/* behind two tags */
	h = eth(f, 2, tag, NET_ETHERTYPE_IPV4);
	h += ip4(f + h, 5, NET_IPPROTO_UDP, 9000);
	CHECK(rx_cut(f, 2000, 2000));
	/* IPv6: payload length + 40 */
	h = eth(f, 0, NULL, NET_ETHERTYPE_IPV6);
	whole = h + ip6(f + h, NET_IPPROTO_UDP, 4000) + 4000;
	CHECK(rx_cut(f, 1982, 1982));
	CHECK(!rx_cut(f, whole, 1982));
	/* not IP (ARP, a MAC control frame): never judged */
	h = eth(f, 0, NULL, NET_ETHERTYPE_ARP);
	CHECK(!rx_cut(f, 1982, 1982));
}

RW_TEST_MAIN(RW_TEST(test_rx_cut), RW_TEST(test_tclass), RW_TEST(test_kinds_untagged),
	     RW_TEST(test_roce_ipv4), RW_TEST(test_ipv4_options), RW_TEST(test_ipv6),
	     RW_TEST(test_wrong_version), RW_TEST(test_vlan), RW_TEST(test_vlan_in_vlan),
	     RW_TEST(test_runts))
