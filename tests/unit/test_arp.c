/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: ARP, ICMP echo reply, neighbour table (lib/net/net_arp). */
#include "net_arp.h"
#include "net_bytes.h"
#include "net_hdr.h"
#include "rw_test.h"

static const uint8_t me[6] = {2, 0, 0, 0, 0, 1}, peer[6] = {2, 0, 0, 0, 0, 2};

static void
test_arp(void)
{
	uint8_t f[64];
	struct net_arp a = {.op = NET_ARP_OP_REQUEST, .spa = 0x0a000001, .tpa = 0x0a000002}, b;

	memcpy(a.sha, me, 6);
	CHECK_EQ(net_arp_build(f, sizeof(f), &a, -1), 60);
	CHECK_EQ(f[0], 0xff);
	CHECK_EQ(net_get_be16(f + 12), 0x0806);
	CHECK_EQ(net_arp_parse(f, 60, &b), 0);
	CHECK_EQ(b.op, 1);
	CHECK_EQ(b.tpa, 0x0a000002);
	CHECK_MEM(b.sha, me, 6);
	CHECK_EQ(net_arp_parse(f, 41, &b), -NET_E_TRUNC_IP);
	/* tagged reply */
	a.op = NET_ARP_OP_REPLY;
	memcpy(a.tha, peer, 6);
	CHECK_EQ(net_arp_build(f, sizeof(f), &a, net_vlan_tci(3, 5)), 64);
	CHECK_MEM(f, peer, 6);
	CHECK_EQ(net_arp_parse(f, 64, &b), 0);
	CHECK_EQ(b.op, 2);
	CHECK_MEM(b.tha, peer, 6);
	f[18 + 5] = 16; /* plen 16: not Ethernet/IPv4 ARP */
	CHECK_EQ(net_arp_parse(f, 64, &b), -NET_E_INVAL);
	CHECK_EQ(net_arp_build(f, 59, &a, -1), -NET_E_NOSPACE);
}

static int
make_ping(uint8_t *f, uint32_t dst)
{
	struct net_l2 l2 = {.ethertype = NET_ETHERTYPE_IPV4};
	struct net_l3 l3 = {.version = 4, .ttl = 64, .proto = 1, .payload_len = 16};
	int h;

	memcpy(l2.dst, me, 6);
	memcpy(l2.src, peer, 6);
	h = net_l2_build(f, 128, &l2);
	net_ip4_to_mapped(0x0a000002, l3.src);
	net_ip4_to_mapped(dst, l3.dst);
	h += net_l3_build(f + h, 128, &l3);
	memset(f + h, 0, 16);
	f[h] = 8;
	f[h + 4] = 0x12, f[h + 7] = 1, f[h + 10] = 0xab;
	net_put_be16(f + h + 2, net_csum_fold(net_csum_partial(f + h, 16, 0)));
	return h + 16;
}

static void
test_icmp(void)
{
	uint8_t f[128];
	struct net_l3 l3;
	int n = make_ping(f, 0x0a000001);

	CHECK_EQ(net_icmp_echo_reply(f, (size_t)n, 0x0a000001, me), n);
	CHECK_MEM(f, peer, 6);
	CHECK_MEM(f + 6, me, 6);
	CHECK_EQ(net_l3_parse(f + 14, (size_t)n - 14, NET_ETHERTYPE_IPV4, &l3), 0);
	CHECK_EQ(net_get_be32(f + 14 + 16), 0x0a000002);
	CHECK_EQ(f[34], 0); /* echo reply */
	CHECK_EQ(net_csum_fold(net_csum_partial(f + 34, 16, 0)), 0);
	CHECK_EQ(f[34 + 10], 0xab);   /* payload echoed */
	n = make_ping(f, 0x0a000009); /* not for us */
	CHECK_EQ(net_icmp_echo_reply(f, (size_t)n, 0x0a000001, me), -NET_E_INVAL);
	n = make_ping(f, 0x0a000001);
	f[40] ^= 1; /* bad ICMP checksum */
	CHECK_EQ(net_icmp_echo_reply(f, (size_t)n, 0x0a000001, me), -NET_E_BAD_IP_CSUM);
	CHECK_EQ(net_icmp_echo_reply(f, 20, 0x0a000001, me), -NET_E_TRUNC_IP);
}

static void
test_neigh(void)
{
	struct net_neigh n;
	uint8_t mac[6], m2[6] = {2, 9, 9, 9, 9, 9};

	net_neigh_init(&n);
	CHECK(!net_neigh_lookup(&n, 1, mac, 0));
	net_neigh_learn(&n, 1, peer, 1);
	CHECK(net_neigh_lookup(&n, 1, mac, 2));
	CHECK_MEM(mac, peer, 6);
	net_neigh_learn(&n, 1, m2, 3); /* update in place */
	CHECK(net_neigh_lookup(&n, 1, mac, 4));
	CHECK_MEM(mac, m2, 6);
	for (uint32_t ip = 100; ip < 100 + NET_NEIGH_SLOTS; ip++)
		net_neigh_learn(&n, ip, peer, 10 + ip);
	CHECK(!net_neigh_lookup(&n, 1, mac, 500)); /* least recently used went first */
	CHECK(net_neigh_lookup(&n, 100 + NET_NEIGH_SLOTS - 1, mac, 500));
	CHECK(net_same_subnet(0x0a000001, 0x0a0000fe, 24));
	CHECK(!net_same_subnet(0x0a000001, 0x0a000101, 24));
	CHECK(net_same_subnet(1, 0xffffffff, 0));
}

RW_TEST_MAIN(RW_TEST(test_arp), RW_TEST(test_icmp), RW_TEST(test_neigh))
