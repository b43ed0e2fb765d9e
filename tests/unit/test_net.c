/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: Ethernet/802.1Q, IPv4/IPv6, UDP, checksums, ECN/DSCP (lib/net). */
#include <stdlib.h>

#include "net_bytes.h"
#include "net_hdr.h"
#include "rw_test.h"

static void
test_l2_roundtrip(void)
{
	uint8_t buf[32];
	struct net_l2 in = {.dst = {1, 2, 3, 4, 5, 6},
			    .src = {7, 8, 9, 10, 11, 12},
			    .has_vlan = true,
			    .vlan_tci = net_vlan_tci(3, 100),
			    .ethertype = NET_ETHERTYPE_IPV4};
	struct net_l2 out;

	CHECK_EQ(net_l2_build(buf, sizeof(buf), &in), 18);
	CHECK_EQ(net_get_be16(buf + 12), 0x8100);
	CHECK_EQ(net_l2_parse(buf, 18, &out), 0);
	CHECK(out.has_vlan);
	CHECK_EQ(net_vlan_pcp(out.vlan_tci), 3);
	CHECK_EQ(net_vlan_vid(out.vlan_tci), 100);
	CHECK_EQ(out.ethertype, NET_ETHERTYPE_IPV4);
	CHECK_EQ(out.hlen, 18);
	CHECK_MEM(out.src, in.src, 6);
	CHECK_EQ(net_l2_parse(buf, 13, &out), -NET_E_TRUNC_ETH);
	CHECK_EQ(net_l2_parse(buf, 16, &out), -NET_E_TRUNC_VLAN);
	in.has_vlan = false;
	CHECK_EQ(net_l2_build(buf, 13, &in), -NET_E_NOSPACE);
	CHECK_EQ(net_l2_build(buf, sizeof(buf), &in), 14);
}

/* RFC 1071 example bytes: 00 01 f2 03 f4 f5 f6 f7 -> sum 0xddf2, checksum 0x220d */
static void
test_csum_rfc1071(void)
{
	const uint8_t d[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};

	CHECK_EQ(net_csum_fold(net_csum_partial(d, sizeof(d), 0)), (uint16_t)~0xddf2);
	/* odd length: last byte padded with zero on the right */
	const uint8_t o[] = {0x12, 0x34, 0x56};
	CHECK_EQ(net_csum_fold(net_csum_partial(o, 3, 0)), (uint16_t) ~(0x1234 + 0x5600));
}

static void
make_v4(struct net_l3 *l3, uint16_t plen)
{
	memset(l3, 0, sizeof(*l3));
	l3->version = 4;
	l3->tos = 26 << 2 | NET_ECN_ECT0;
	l3->ttl = 64;
	l3->proto = NET_IPPROTO_UDP;
	l3->ip_id = 0x1234;
	net_ip4_to_mapped(0x0a000001, l3->src);
	net_ip4_to_mapped(0x0a000002, l3->dst);
	l3->payload_len = plen;
}

static void
test_ipv4(void)
{
	uint8_t buf[64] = {0};
	struct net_l3 in, out;
	uint32_t a;

	make_v4(&in, 8);
	CHECK_EQ(net_l3_build(buf, sizeof(buf), &in), 20);
	/* a known header checksum: recompute independently */
	CHECK_EQ(net_csum_fold(net_csum_partial(buf, 20, 0)), 0);
	CHECK_EQ(net_l3_parse(buf, 28, NET_ETHERTYPE_IPV4, &out), 0);
	CHECK_EQ(out.version, 4);
	CHECK_EQ(net_tos_dscp(out.tos), 26);
	CHECK_EQ(net_tos_ecn(out.tos), NET_ECN_ECT0);
	CHECK_EQ(out.payload_len, 8);
	CHECK(net_mapped_to_ip4(out.dst, &a));
	CHECK_EQ(a, 0x0a000002);
	/* trailing Ethernet padding is allowed */
	CHECK_EQ(net_l3_parse(buf, 60, NET_ETHERTYPE_IPV4, &out), 0);
	/* errors */
	CHECK_EQ(net_l3_parse(buf, 19, NET_ETHERTYPE_IPV4, &out), -NET_E_TRUNC_IP);
	CHECK_EQ(net_l3_parse(buf, 27, NET_ETHERTYPE_IPV4, &out), -NET_E_BAD_IP_LEN);
	CHECK_EQ(net_l3_parse(buf, 48, NET_ETHERTYPE_IPV6, &out), -NET_E_BAD_IP_VERSION);
	CHECK_EQ(net_l3_parse(buf, 28, 0x1234, &out), -NET_E_BAD_ETHERTYPE);
	buf[8]++; /* TTL changed without checksum update */
	CHECK_EQ(net_l3_parse(buf, 28, NET_ETHERTYPE_IPV4, &out), -NET_E_BAD_IP_CSUM);
	CHECK_EQ(out.ttl, 65); /* fields are still filled */
	buf[8]--;
	buf[0] = 0x44; /* IHL 16 bytes */
	CHECK_EQ(net_l3_parse(buf, 28, NET_ETHERTYPE_IPV4, &out), -NET_E_BAD_IP_HLEN);
	buf[0] = 0x4f; /* IHL 60 bytes > frame */
	CHECK_EQ(net_l3_parse(buf, 28, NET_ETHERTYPE_IPV4, &out), -NET_E_BAD_IP_HLEN);
	buf[0] = 0x45;
	buf[6] = 0x20; /* MF */
	net_ip4_fix_csum(buf);
	CHECK_EQ(net_l3_parse(buf, 28, NET_ETHERTYPE_IPV4, &out), -NET_E_IP_FRAGMENT);
	/* non-mapped address cannot be IPv4 */
	in.src[0] = 0x20;
	CHECK_EQ(net_l3_build(buf, sizeof(buf), &in), -NET_E_INVAL);
}

static void
test_ipv6(void)
{
	uint8_t buf[64] = {0};
	struct net_l3 in = {.version = 6,
			    .tos = 0xab,
			    .ttl = 7,
			    .proto = 17,
			    .flow_label = 0xabcde,
			    .payload_len = 8};
	struct net_l3 out;

	in.src[0] = 0xfe, in.src[1] = 0x80, in.src[15] = 1;
	in.dst[0] = 0xfe, in.dst[1] = 0x80, in.dst[15] = 2;
	CHECK_EQ(net_l3_build(buf, sizeof(buf), &in), 40);
	CHECK_EQ(net_get_be32(buf), 0x6ababcde);
	CHECK_EQ(net_l3_parse(buf, 48, NET_ETHERTYPE_IPV6, &out), 0);
	CHECK_EQ(out.tos, 0xab);
	CHECK_EQ(out.flow_label, 0xabcde);
	CHECK_EQ(out.ttl, 7);
	CHECK_MEM(out.src, in.src, 16);
	CHECK_EQ(net_l3_parse(buf, 47, NET_ETHERTYPE_IPV6, &out), -NET_E_BAD_IP_LEN);
	CHECK_EQ(net_l3_parse(buf, 39, NET_ETHERTYPE_IPV6, &out), -NET_E_TRUNC_IP);
}

static void
test_ecn_dscp(void)
{
	uint8_t buf[40] = {0};
	struct net_l3 l3, out;

	make_v4(&l3, 0);
	net_l3_build(buf, sizeof(buf), &l3);
	CHECK_EQ(net_ip_set_ecn(buf, NET_ECN_CE), NET_ECN_ECT0);
	CHECK_EQ(net_tos_ecn(buf[1]), NET_ECN_CE);
	CHECK_EQ(net_tos_dscp(buf[1]), 26);
	/* the incremental update must equal a full recompute */
	CHECK_EQ(net_l3_parse(buf, 20, NET_ETHERTYPE_IPV4, &out), 0);
	/* exhaustively: every TOS byte, every ECN value */
	for (int tos = 0; tos < 256; tos++)
		for (int e = 0; e < 4; e++) {
			make_v4(&l3, 0);
			l3.tos = (uint8_t)tos;
			net_l3_build(buf, sizeof(buf), &l3);
			net_ip_set_ecn(buf, (uint8_t)e);
			if (net_l3_parse(buf, 20, NET_ETHERTYPE_IPV4, &out) != 0 ||
			    out.tos != (uint8_t)((tos & ~3) | e)) {
				CHECK(!"ECN update broke the IPv4 checksum");
				return;
			}
		}
	CHECK(1);
	net_ip_set_dscp(buf, 48);
	CHECK_EQ(net_l3_parse(buf, 20, NET_ETHERTYPE_IPV4, &out), 0);
	CHECK_EQ(net_tos_dscp(out.tos), 48);
	/* IPv6 traffic class */
	struct net_l3 v6 = {.version = 6, .tos = 26 << 2 | 2, .flow_label = 0x12345};
	net_l3_build(buf, sizeof(buf), &v6);
	CHECK_EQ(net_ip_set_ecn(buf, NET_ECN_CE), 2);
	net_ip_set_dscp(buf, 46);
	CHECK_EQ(net_l3_parse(buf, 40, NET_ETHERTYPE_IPV6, &out), 0);
	CHECK_EQ(out.tos, 46 << 2 | 3);
	CHECK_EQ(out.flow_label, 0x12345);
}

static void
test_udp(void)
{
	uint8_t buf[16] = {0};
	struct net_udp u = {.sport = 0xc000, .dport = 4791, .len = 12};
	struct net_udp o;
	struct net_l3 l3;

	CHECK_EQ(net_udp_build(buf, sizeof(buf), &u), 8);
	CHECK_EQ(net_udp_parse(buf, 12, &o), 0);
	CHECK_EQ(o.dport, 4791);
	CHECK_EQ(net_udp_parse(buf, 7, &o), -NET_E_TRUNC_UDP);
	CHECK_EQ(net_udp_parse(buf, 11, &o), -NET_E_BAD_UDP_LEN);
	/* checksum: verifying a datagram with its checksum stored sums to zero */
	make_v4(&l3, 12);
	buf[8] = 1, buf[9] = 2, buf[10] = 3, buf[11] = 4;
	uint16_t c = net_udp_csum(&l3, buf, 12);
	net_put_be16(buf + 6, c);
	uint8_t ph[12];
	memcpy(ph, l3.src + 12, 4);
	memcpy(ph + 4, l3.dst + 12, 4);
	ph[8] = 0, ph[9] = 17;
	net_put_be16(ph + 10, 12);
	CHECK_EQ(net_csum_fold(net_csum_partial(buf, 12, net_csum_partial(ph, 12, 0))), 0);
}

static void
test_err_names(void)
{
	CHECK(strcmp(net_err_name(-NET_E_BAD_ICRC), "BAD_ICRC") == 0);
	CHECK(strcmp(net_err_name(NET_E_OK), "OK") == 0);
	CHECK(strcmp(net_err_name(9999), "UNKNOWN") == 0);
	CHECK(strstr(net_err_str(-NET_E_TRUNC_BTH), "BTH") != NULL);
}

RW_TEST_MAIN(RW_TEST(test_l2_roundtrip), RW_TEST(test_csum_rfc1071), RW_TEST(test_ipv4),
	     RW_TEST(test_ipv6), RW_TEST(test_ecn_dscp), RW_TEST(test_udp), RW_TEST(test_err_names))
