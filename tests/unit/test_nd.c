/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests: IPv6 Neighbor Discovery (lib/net/net_nd). The expected frames
 * were built by Scapy 2.5 (independent ICMPv6 checksum code):
 *   Ether(src=me, dst="33:33:ff:00:00:02")/IPv6(src="fe80::1", dst="ff02::1:ff00:2",
 *     hlim=255)/ICMPv6ND_NS(tgt="fe80::2")/ICMPv6NDOptSrcLLAddr(lladdr=me)
 *   Ether(src=me, dst=peer)/IPv6(src="fe80::1", dst="fe80::2", hlim=255)/
 *     ICMPv6ND_NA(tgt="fe80::1", R=0, S=1, O=1)/ICMPv6NDOptDstLLAddr(lladdr=me)
 */
#include <arpa/inet.h>

#include "net_bytes.h"
#include "net_hdr.h"
#include "net_nd.h"
#include "rw_test.h"

static const uint8_t me[6] = {2, 0, 0, 0, 0, 1}, peer[6] = {2, 0, 0, 0, 0, 2};
static const uint8_t ip_me[16] = {0xfe, 0x80, [15] = 1}, ip_peer[16] = {0xfe, 0x80, [15] = 2};

static const uint8_t scapy_ns[86] = {
    0x33, 0x33, 0xff, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x86, 0xdd, 0x60,
    0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0x00, 0x00, 0x02, 0x87, 0x00, 0x7a, 0x97, 0x00, 0x00,
    0x00, 0x00, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x02, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
static const uint8_t scapy_na[86] = {
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x86, 0xdd, 0x60,
    0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x88, 0x00, 0x18, 0x1c, 0x60, 0x00,
    0x00, 0x00, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x02, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

static void
test_ns_matches_scapy(void)
{
	uint8_t f[128];
	struct net_nd nd;

	CHECK_EQ(net_nd_build_ns(f, sizeof(f), me, ip_me, ip_peer, -1), 86);
	CHECK_MEM(f, scapy_ns, 86);
	CHECK_EQ(net_nd_parse(f, 86, &nd), 0);
	CHECK_EQ(nd.type, NET_ND_NS);
	CHECK_MEM(nd.target, ip_peer, 16);
	CHECK_MEM(nd.src, ip_me, 16);
	CHECK(nd.has_lladdr);
	CHECK_MEM(nd.lladdr, me, 6);
	CHECK_EQ(net_nd_build_ns(f, 85, me, ip_me, ip_peer, -1), -NET_E_NOSPACE);
}

static void
test_na_answers_ns(void)
{
	uint8_t f[128];
	struct net_nd ns, na;

	/* the peer solicits us; our answer is what Scapy builds for that NA */
	CHECK_EQ(net_nd_build_ns(f, sizeof(f), peer, ip_peer, ip_me, -1), 86);
	CHECK_EQ(net_nd_parse(f, 86, &ns), 0);
	CHECK_EQ(net_nd_build_na(f, sizeof(f), me, ip_me, &ns, -1), 86);
	CHECK_MEM(f, scapy_na, 86);
	CHECK_EQ(net_nd_parse(f, 86, &na), 0);
	CHECK_EQ(na.type, NET_ND_NA);
	CHECK(na.solicited && na.override && !na.router);
	CHECK_MEM(na.lladdr, me, 6);
	CHECK_MEM(na.target, ip_me, 16);
	/* duplicate address probe from :: (no SLLA): answer to all-nodes, S clear */
	memset(ns.src, 0, 16);
	ns.has_lladdr = false;
	CHECK_EQ(net_nd_build_na(f, sizeof(f), me, ip_me, &ns, -1), 86);
	CHECK_EQ(f[0], 0x33);
	CHECK_EQ(f[5], 0x01);
	CHECK_EQ(net_nd_parse(f, 86, &na), 0);
	CHECK(!na.solicited && na.override);
}

static void
test_tagged_and_invalid(void)
{
	uint8_t f[128], g[128];
	struct net_nd nd;

	CHECK_EQ(net_nd_build_ns(f, sizeof(f), me, ip_me, ip_peer, net_vlan_tci(3, 7)), 90);
	CHECK_EQ(net_get_be16(f + 12), NET_ETHERTYPE_VLAN);
	CHECK_EQ(net_nd_parse(f, 90, &nd), 0);
	memcpy(g, scapy_ns, 86);
	g[21] = 64; /* hop limit below 255: may have crossed a router (RFC 4861 7.1.1) */
	CHECK_EQ(net_nd_parse(g, 86, &nd), -NET_E_INVAL);
	memcpy(g, scapy_ns, 86);
	g[57] ^= 1; /* checksum */
	CHECK_EQ(net_nd_parse(g, 86, &nd), -NET_E_INVAL);
	memcpy(g, scapy_ns, 86);
	g[55] = 1; /* code 1 */
	CHECK_EQ(net_nd_parse(g, 86, &nd), -NET_E_INVAL);
	memcpy(g, scapy_ns, 86);
	g[20] = 17; /* UDP, not ICMPv6 */
	CHECK_EQ(net_nd_parse(g, 86, &nd), -NET_E_INVAL);
	/* truncations */
	CHECK_EQ(net_nd_parse(scapy_ns, 40, &nd), -NET_E_TRUNC_IP);
	CHECK_EQ(net_nd_parse(scapy_ns, 85, &nd), -NET_E_BAD_IP_LEN);
	/* an option of length 0 (would loop for ever) */
	memcpy(g, scapy_ns, 86);
	g[79] = 0;
	CHECK_EQ(net_nd_parse(g, 86, &nd), -NET_E_INVAL);
	/* ARP is not ND */
	memcpy(g, scapy_ns, 86);
	net_put_be16(g + 12, NET_ETHERTYPE_ARP);
	CHECK_EQ(net_nd_parse(g, 86, &nd), -NET_E_BAD_ETHERTYPE);
}

/* Scapy 2.5: Ether()/IPv6(src=fe80::2, dst=fe80::1, hlim=64)/ICMPv6EchoRequest(id=0x1234,
 * seq=7, data=b"rocewan!"), and the ICMPv6EchoReply with the addresses swapped */
static const uint8_t scapy_echo_req[70] = {
    0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x86, 0xdd,
    0x60, 0x00, 0x00, 0x00, 0x00, 0x10, 0x3a, 0x40, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xfe, 0x80, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x80, 0x00,
    0xb5, 0x1d, 0x12, 0x34, 0x00, 0x07, 0x72, 0x6f, 0x63, 0x65, 0x77, 0x61, 0x6e, 0x21,
};
static const uint8_t scapy_echo_rep[70] = {
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x86, 0xdd,
    0x60, 0x00, 0x00, 0x00, 0x00, 0x10, 0x3a, 0x40, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xfe, 0x80, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x81, 0x00,
    0xb4, 0x1d, 0x12, 0x34, 0x00, 0x07, 0x72, 0x6f, 0x63, 0x65, 0x77, 0x61, 0x6e, 0x21,
};

static void
test_echo_reply_matches_scapy(void)
{
	uint8_t f[80];

	memcpy(f, scapy_echo_req, sizeof(scapy_echo_req));
	CHECK_EQ(net_icmp6_echo_reply(f, sizeof(scapy_echo_req), ip_me, me), 70);
	CHECK_MEM(f, scapy_echo_rep, sizeof(scapy_echo_rep));
	/* the reply is no request: nothing to answer */
	CHECK_EQ(net_icmp6_echo_reply(f, sizeof(scapy_echo_rep), ip_me, me), -NET_E_INVAL);
	/* not our address */
	memcpy(f, scapy_echo_req, sizeof(scapy_echo_req));
	CHECK_EQ(net_icmp6_echo_reply(f, sizeof(scapy_echo_req), ip_peer, me), -NET_E_INVAL);
	/* a wrong checksum, a nonzero code */
	f[57] ^= 1;
	CHECK_EQ(net_icmp6_echo_reply(f, sizeof(scapy_echo_req), ip_me, me), -NET_E_INVAL);
	memcpy(f, scapy_echo_req, sizeof(scapy_echo_req));
	f[55] = 1;
	CHECK_EQ(net_icmp6_echo_reply(f, sizeof(scapy_echo_req), ip_me, me), -NET_E_INVAL);
	/* a payload length beyond the frame, every truncation */
	memcpy(f, scapy_echo_req, sizeof(scapy_echo_req));
	for (size_t n = 0; n < sizeof(scapy_echo_req); n++)
		CHECK(net_icmp6_echo_reply(f, n, ip_me, me) < 0);
	CHECK_MEM(f, scapy_echo_req, sizeof(scapy_echo_req)); /* refused frames stay untouched */
}

static void
test_solicited_node_and_table(void)
{
	uint8_t ip[16] = {0xfe, 0x80, [8] = 0x50, 0x54, 0x01, 0xff, 0xfe, 0xc2, 0x30, 0x0d};
	uint8_t sn[16], mac[6], want[16] = {0xff, 0x02, [11] = 1, 0xff, 0xc2, 0x30, 0x0d};
	struct net_neigh6 n;

	net_nd_solicited_node(ip, sn);
	CHECK_MEM(sn, want, 16);
	net_nd_multicast_mac(sn, mac);
	CHECK_MEM(mac, ((const uint8_t[]){0x33, 0x33, 0xff, 0xc2, 0x30, 0x0d}), 6);
	net_neigh6_init(&n);
	CHECK(!net_neigh6_lookup(&n, ip, mac, 1));
	net_neigh6_learn(&n, ip, peer, 1);
	CHECK(net_neigh6_lookup(&n, ip, mac, 2));
	CHECK_MEM(mac, peer, 6);
	net_neigh6_learn(&n, ip, me, 3); /* update in place */
	CHECK(net_neigh6_lookup(&n, ip, mac, 4));
	CHECK_MEM(mac, me, 6);
	/* fill the table: the least recently used entry goes */
	for (int i = 0; i < NET_NEIGH6_SLOTS; i++) {
		uint8_t x[16] = {0x20, 0x01, [15] = (uint8_t)i};
		net_neigh6_learn(&n, x, peer, 10 + (uint64_t)i);
	}
	CHECK(!net_neigh6_lookup(&n, ip, mac, 100));
	uint8_t x15[16] = {0x20, 0x01, [15] = 15};
	CHECK(net_neigh6_lookup(&n, x15, mac, 101));
}

static void
test_on_link(void)
{
	uint8_t mine[16], a[16];

	inet_pton(AF_INET6, "fd00:61:1::11", mine);
	inet_pton(AF_INET6, "fd00:61:1::1", a);
	CHECK(net_ip6_on_link(a, mine, 64));
	inet_pton(AF_INET6, "fd00:61:2::12", a);
	CHECK(!net_ip6_on_link(a, mine, 64));
	CHECK(net_ip6_on_link(
	    a, mine, 46)); /* fd00:61:0::/46 holds both (the 3rd group differs in bit 46..47) */
	CHECK(!net_ip6_on_link(a, mine, 47));
	CHECK(net_ip6_on_link(a, mine, 1));
	CHECK(!net_ip6_on_link(a, mine, 128));
	CHECK(net_ip6_on_link(mine, mine, 128));
	inet_pton(AF_INET6, "fe80::99", a); /* link-local is always on-link */
	CHECK(net_ip6_on_link(a, mine, 64));
	inet_pton(AF_INET6, "febf::1", a);
	CHECK(net_ip6_on_link(a, mine, 64));
	inet_pton(AF_INET6, "fec0::1", a); /* outside fe80::/10 */
	CHECK(!net_ip6_on_link(a, mine, 64));
}

RW_TEST_MAIN(RW_TEST(test_ns_matches_scapy), RW_TEST(test_na_answers_ns),
	     RW_TEST(test_tagged_and_invalid), RW_TEST(test_solicited_node_and_table),
	     RW_TEST(test_echo_reply_matches_scapy), RW_TEST(test_on_link))
