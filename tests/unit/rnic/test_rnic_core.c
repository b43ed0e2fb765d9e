/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rnic's DPDK-free core (app/rnic/rnic_core.h) without EAL: frames in
 * through rnic_rx_frame(), control frames out through this file's
 * rnic_port_tx_ctrl(), time from this file's rnic_now_ns(). Exact counts and
 * byte-exact replies: ARP, ICMP echo, IPv6 ND, PFC obeyed and sent, RoCEv2
 * handed to the engine (IPv4, IPv6, 802.1Q, IPv4 options), hostile frames
 * counted (truncated, VLAN-in-VLAN, IHL past the frame), lcore steering by QPN
 * and peer resolution with its 100 ms solicitation limit.
 */
#include <errno.h>
#include <stdlib.h>

#include "net_arp.h"
#include "net_bytes.h"
#include "net_nd.h"
#include "pfc.h"
#include "rnic_core.h"
#include "roce_pkt.h"
#include "rw_test.h"

/* ---- the shell's two functions, as a test double ---- */

static uint64_t fake_now = 1000000000ull;
static uint8_t sent[8][256];
static size_t sent_len[8];
static unsigned int nsent;
static bool tx_refuse;

uint64_t
rnic_now_ns(const struct rnic_port *p)
{
	(void)p;
	return fake_now;
}

int
rnic_port_tx_ctrl(struct rnic_port *p, const uint8_t *frame, size_t len)
{
	(void)p;
	if (tx_refuse)
		return -ENOBUFS;
	if (nsent < 8 && len <= sizeof(sent[0])) {
		memcpy(sent[nsent], frame, len);
		sent_len[nsent] = len;
	}
	nsent++;
	return 0;
}

/* ---- set-up ---- */

static const uint8_t my_mac[6] = {0x02, 0, 0, 0, 0, 0x0a};
static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x0b};
#define MY_IP 0x0a000001u
#define PEER_IP 0x0a000002u
static const uint8_t my_ip6[16] = {0xfe, 0x80, [15] = 0x0a};
static const uint8_t peer_ip6[16] = {0xfe, 0x80, [15] = 0x0b};

static struct rnic_port port;

static struct rnic_port *
fresh_port(void)
{
	struct rnic_port *p = &port;

	memset(p, 0, sizeof(*p));
	memcpy(p->mac, my_mac, 6);
	p->ip = MY_IP;
	p->prefix = 24;
	p->vlan_tci = -1;
	p->has_ip6 = true;
	memcpy(p->ip6, my_ip6, 16);
	p->ip6_prefix = 64;
	net_neigh_init(&p->neigh);
	net_neigh6_init(&p->neigh6);
	rnic_port_pfc_init(p, true, 1u << 3, 10000000000ull, 3);
	nsent = 0;
	tx_refuse = false;
	fake_now = 1000000000ull;
	return p;
}

/* the counters other than @p except are all zero */
static bool
counters_zero(const struct rnic_port *p)
{
	const struct rnic_port_counters z = {0};

	return memcmp(&p->cnt, &z, sizeof(z)) == 0;
}

/* ---- frames ---- */

static size_t
roce_frame(uint8_t *buf, size_t cap, int version, int vlan_tci, uint32_t dqpn)
{
	struct roce_pkt r;
	uint8_t payload[64] = {1, 2, 3};

	memset(&r, 0, sizeof(r));
	memcpy(r.l2.src, peer_mac, 6);
	memcpy(r.l2.dst, my_mac, 6);
	if (vlan_tci >= 0) {
		r.l2.has_vlan = true;
		r.l2.vlan_tci = (uint16_t)vlan_tci;
	}
	r.l3.version = (uint8_t)version;
	r.l3.ttl = 64;
	if (version == 4) {
		net_ip4_to_mapped(PEER_IP, r.l3.src);
		net_ip4_to_mapped(MY_IP, r.l3.dst);
	} else {
		memcpy(r.l3.src, peer_ip6, 16);
		memcpy(r.l3.dst, my_ip6, 16);
	}
	r.udp.sport = 0xc000;
	r.h.bth.opcode = 0x0a; /* RC RDMA WRITE Only */
	r.h.bth.pkey = 0xffff;
	r.h.bth.dqpn = dqpn;
	r.h.reth.va = 0x1000;
	r.h.reth.rkey = 7;
	r.h.reth.dlen = sizeof(payload);
	int n = roce_build(buf, cap, &r, payload, sizeof(payload), 0);

	CHECK(n > 0);
	return n > 0 ? (size_t)n : 0;
}

static size_t
icmp_echo(uint8_t *f, uint32_t dst)
{
	struct net_l2 l2 = {.ethertype = NET_ETHERTYPE_IPV4};
	struct net_l3 l3 = {.version = 4, .ttl = 64, .proto = NET_IPPROTO_ICMP, .payload_len = 16};
	uint8_t *icmp;
	size_t h;

	memcpy(l2.src, peer_mac, 6);
	memcpy(l2.dst, my_mac, 6);
	net_ip4_to_mapped(PEER_IP, l3.src);
	net_ip4_to_mapped(dst, l3.dst);
	h = (size_t)net_l2_build(f, 64, &l2);
	h += (size_t)net_l3_build(f + h, 64, &l3);
	icmp = f + h;
	memset(icmp, 0, 16);
	icmp[0] = 8; /* echo request */
	net_put_be16(icmp + 4, 0x1234);
	net_put_be16(icmp + 6, 1);
	memcpy(icmp + 8, "rocewan!", 8);
	net_put_be16(icmp + 2, net_csum_fold(net_csum_partial(icmp, 16, 0)));
	return h + 16;
}

/* ---- tests ---- */

static void
test_arp(void)
{
	struct rnic_port *p = fresh_port();
	struct net_arp a = {.op = NET_ARP_OP_REQUEST, .spa = PEER_IP, .tpa = MY_IP}, r;
	uint8_t f[64], mac[6];
	int n;

	memcpy(a.sha, peer_mac, 6);
	n = net_arp_build(f, sizeof(f), &a, -1);
	CHECK(!rnic_rx_frame(p, f, (size_t)n, fake_now));
	CHECK_EQ(p->cnt.rx_arp_req, 1);
	CHECK_EQ(nsent, 1);
	CHECK_EQ(net_arp_parse(sent[0], sent_len[0], &r), 0);
	CHECK_EQ(r.op, NET_ARP_OP_REPLY);
	CHECK_EQ(r.spa, MY_IP);
	CHECK_EQ(r.tpa, PEER_IP);
	CHECK_MEM(r.sha, my_mac, 6);
	CHECK_MEM(r.tha, peer_mac, 6);
	CHECK_MEM(sent[0], peer_mac, 6); /* unicast back */
	/* the requester was learned (RFC 826 merge) */
	CHECK(net_neigh_lookup(&p->neigh, PEER_IP, mac, fake_now));
	CHECK_MEM(mac, peer_mac, 6);

	/* a request for someone else: counted, not answered, not learned */
	a.tpa = 0x0a000063;
	a.spa = 0x0a000064;
	n = net_arp_build(f, sizeof(f), &a, -1);
	rnic_rx_frame(p, f, (size_t)n, fake_now);
	CHECK_EQ(p->cnt.rx_arp_other, 1);
	CHECK_EQ(nsent, 1);
	CHECK(!net_neigh_lookup(&p->neigh, 0x0a000064, mac, fake_now));

	/* a reply to us */
	a.op = NET_ARP_OP_REPLY;
	a.spa = 0x0a000005;
	a.tpa = MY_IP;
	n = net_arp_build(f, sizeof(f), &a, -1);
	rnic_rx_frame(p, f, (size_t)n, fake_now);
	CHECK_EQ(p->cnt.rx_arp_reply, 1);
	CHECK(net_neigh_lookup(&p->neigh, 0x0a000005, mac, fake_now));

	/* a truncated ARP frame */
	rnic_rx_frame(p, f, 20, fake_now);
	CHECK_EQ(p->cnt.rx_arp_other, 2);
	CHECK_EQ(nsent, 1);
}

static void
test_icmp_echo(void)
{
	struct rnic_port *p = fresh_port();
	uint8_t f[128], want[128];
	size_t len = icmp_echo(f, MY_IP);

	memcpy(want, f, len);
	CHECK(!rnic_rx_frame(p, f, len, fake_now));
	CHECK_EQ(p->cnt.rx_icmp_echo, 1);
	CHECK_EQ(nsent, 1);
	CHECK_EQ(sent_len[0], len);
	CHECK_MEM(sent[0], peer_mac, 6);
	CHECK_MEM(sent[0] + 6, my_mac, 6);
	CHECK_EQ(net_get_be32(sent[0] + 26), MY_IP);
	CHECK_EQ(net_get_be32(sent[0] + 30), PEER_IP);
	CHECK_EQ(sent[0][34], 0);		/* echo reply */
	CHECK_MEM(sent[0] + 38, want + 38, 12); /* id, sequence, data */
	/* to another address: not for us, no reply */
	len = icmp_echo(f, 0x0a000063);
	rnic_rx_frame(p, f, len, fake_now);
	CHECK_EQ(p->cnt.rx_not_for_us, 1);
	CHECK_EQ(nsent, 1);
}

static void
test_nd(void)
{
	struct rnic_port *p = fresh_port();
	struct net_nd ns, na;
	uint8_t f[128], mac[6];
	int n;

	/* the peer solicits our address */
	n = net_nd_build_ns(f, sizeof(f), peer_mac, peer_ip6, my_ip6, -1);
	CHECK(!rnic_rx_frame(p, f, (size_t)n, fake_now));
	CHECK_EQ(p->cnt.rx_nd_solicit, 1);
	CHECK_EQ(nsent, 1);
	CHECK_EQ(net_nd_parse(sent[0], sent_len[0], &na), 0);
	CHECK_EQ(na.type, NET_ND_NA);
	CHECK_MEM(na.target, my_ip6, 16);
	CHECK(na.has_lladdr);
	CHECK_MEM(na.lladdr, my_mac, 6);
	CHECK(net_neigh6_lookup(&p->neigh6, peer_ip6, mac, fake_now));

	/* the advertisement answering our solicitation for the peer */
	p = fresh_port();
	n = net_nd_build_ns(f, sizeof(f), my_mac, my_ip6, peer_ip6, -1);
	CHECK_EQ(net_nd_parse(f, (size_t)n, &ns), 0);
	n = net_nd_build_na(f, sizeof(f), peer_mac, peer_ip6, &ns, -1);
	CHECK(!rnic_rx_frame(p, f, (size_t)n, fake_now));
	CHECK_EQ(p->cnt.rx_nd_advert, 1);
	CHECK_EQ(nsent, 0);
	CHECK(net_neigh6_lookup(&p->neigh6, peer_ip6, mac, fake_now));
	CHECK_MEM(mac, peer_mac, 6);

	/* without --ip6 ICMPv6 is not ours */
	p = fresh_port();
	p->has_ip6 = false;
	n = net_nd_build_ns(f, sizeof(f), peer_mac, peer_ip6, my_ip6, -1);
	rnic_rx_frame(p, f, (size_t)n, fake_now);
	CHECK_EQ(p->cnt.rx_nd_other, 1);
	CHECK_EQ(nsent, 0);
}

static void
test_pfc_obeyed(void)
{
	struct rnic_port *p = fresh_port();
	uint16_t q[8] = {[3] = 0xffff};
	uint8_t f[64];
	int n = pfc_build(f, sizeof(f), peer_mac, 1u << 3, q);

	CHECK(!rnic_rx_frame(p, f, (size_t)n, fake_now));
	CHECK_EQ(p->cnt.rx_pfc, 1);
	CHECK(pfc_tx_hold(&p->pfc, 3, fake_now));
	CHECK(!pfc_tx_hold(&p->pfc, 0, fake_now)); /* priority 0 is lossy here */
	rnic_pfc_sync_counters(p, fake_now + 1000);
	CHECK_EQ(p->cnt.pfc_rx_xoff, 1);
	CHECK_EQ(p->cnt.pfc_pauses, 1);
	CHECK_EQ(p->cnt.tx_paused_ns, 1000);
	/* a MAC control frame that is not PFC */
	net_put_be16(f + 14, 0x0005);
	rnic_rx_frame(p, f, (size_t)n, fake_now);
	CHECK_EQ(p->cnt.rx_pfc, 2);
	CHECK_EQ(p->cnt.pfc_rx_bad, 1);
	CHECK_EQ(nsent, 0);
}

static void
test_roce_dispatch(void)
{
	struct rnic_port *p = fresh_port();
	uint8_t f[256];
	size_t len;

	len = roce_frame(f, sizeof(f), 4, -1, 0x11);
	CHECK(rnic_rx_frame(p, f, len, fake_now));
	len = roce_frame(f, sizeof(f), 6, -1, 0x11);
	CHECK(rnic_rx_frame(p, f, len, fake_now));
	len = roce_frame(f, sizeof(f), 4, net_vlan_tci(3, 10), 0x11);
	CHECK(rnic_rx_frame(p, f, len, fake_now));
	/* the engine checks the rest: a RoCE frame cut inside its BTH still goes there */
	CHECK(rnic_rx_frame(p, f, 18 + 20 + 8 + 2, fake_now));
	CHECK(counters_zero(p));
	CHECK_EQ(nsent, 0);
}

/* frames the rnic does not take, each counted once by reason */
static void
test_hostile(void)
{
	struct rnic_port *p = fresh_port();
	uint8_t f[256], g[300];
	size_t len = roce_frame(f, sizeof(f), 4, -1, 0x11);

	/* runts */
	for (size_t l = 0; l < 14; l++)
		CHECK(!rnic_rx_frame(p, f, l, fake_now));
	CHECK_EQ(p->cnt.rx_other, 14);
	/* IPv4 headers cut short, of every length below a whole UDP header */
	for (size_t l = 14; l < 14 + 28; l++)
		CHECK(!rnic_rx_frame(p, f, l, fake_now));
	CHECK_EQ(p->cnt.rx_ip_malformed, 28);
	/*
	 * IHL 15 (40 bytes of options claimed) on a frame that ends 28 bytes into
	 * the IP header: the dispatcher once read the UDP port past the frame.
	 */
	f[14] = 0x4f;
	CHECK(!rnic_rx_frame(p, f, 14 + 28, fake_now));
	CHECK_EQ(p->cnt.rx_ip_malformed, 29);
	/* IHL below 5 */
	f[14] = 0x43;
	CHECK(!rnic_rx_frame(p, f, len, fake_now));
	CHECK_EQ(p->cnt.rx_ip_malformed, 30);
	/* a version nibble that is not the EtherType's (RoCE would go to the engine) */
	f[14] = 0x65;
	net_put_be16(f + 14 + 20 + 2, 4792);
	CHECK(!rnic_rx_frame(p, f, len, fake_now));
	CHECK_EQ(p->cnt.rx_ip_malformed, 31);
	f[14] = 0x45;
	/* UDP to another port */
	net_put_be16(f + 14 + 20 + 2, 4792);
	CHECK(!rnic_rx_frame(p, f, len, fake_now));
	CHECK_EQ(p->cnt.rx_not_for_us, 1);
	net_put_be16(f + 14 + 20 + 2, NET_UDP_PORT_ROCEV2);
	/* VLAN-in-VLAN and a lone 802.1ad tag: another EtherType to the rnic */
	memcpy(g, f, 12);
	net_put_be16(g + 12, NET_ETHERTYPE_QINQ);
	net_put_be16(g + 14, 5);
	net_put_be16(g + 16, NET_ETHERTYPE_VLAN);
	net_put_be16(g + 18, 6);
	memcpy(g + 20, f + 12, len - 12);
	CHECK(!rnic_rx_frame(p, g, len + 8, fake_now));
	net_put_be16(g + 12, NET_ETHERTYPE_VLAN);
	CHECK(!rnic_rx_frame(p, g, len + 8, fake_now));
	memcpy(g + 16, f + 12, len - 12);
	net_put_be16(g + 12, NET_ETHERTYPE_QINQ);
	CHECK(!rnic_rx_frame(p, g, len + 4, fake_now));
	CHECK_EQ(p->cnt.rx_other, 17);
	/* and the same frame with an 802.1Q tag is RoCE */
	net_put_be16(g + 12, NET_ETHERTYPE_VLAN);
	CHECK(rnic_rx_frame(p, g, len + 4, fake_now));
	CHECK_EQ(p->cnt.rx_other, 17);
	CHECK_EQ(p->cnt.rx_not_for_us, 1);
	CHECK_EQ(p->cnt.rx_ip_malformed, 31);
	CHECK_EQ(nsent, 0);
}

/* a frame the port cut (longer than its ring frame) is counted rx_cut, not handed on */
static void
test_rx_cut(void)
{
	struct rnic_port *p = fresh_port();
	uint8_t f[256];
	size_t len = roce_frame(f, sizeof(f), 4, -1, 0x11);

	p->rx_cut_len = (uint32_t)len - 20;
	CHECK(!rnic_rx_frame(p, f, len - 20, fake_now)); /* cut at the limit */
	CHECK_EQ(p->cnt.rx_cut, 1);
	CHECK(rnic_rx_frame(p, f, len - 21, fake_now)); /* short of it: the engine's to judge */
	CHECK(rnic_rx_frame(p, f, len, fake_now));	/* whole (a port that cuts longer ones) */
	p->rx_cut_len = 0;
	CHECK(rnic_rx_frame(p, f, len - 20, fake_now)); /* a port that never cuts */
	CHECK_EQ(p->cnt.rx_cut, 1);
	CHECK_EQ(nsent, 0);
}

static void
test_steering(void)
{
	struct rnic_steer s = {.n = 4};
	struct net_frame fr;
	uint8_t f[256];
	size_t len;

	CHECK_EQ(rnic_steer_owner(&s, ROCE_FIRST_QPN), 0);
	CHECK_EQ(rnic_steer_owner(&s, ROCE_FIRST_QPN + 2 * RNIC_QPN_SPAN + 5), 2);
	CHECK_EQ(rnic_steer_owner(&s, ROCE_FIRST_QPN + 4 * RNIC_QPN_SPAN), 0); /* past the last */
	CHECK_EQ(rnic_steer_owner(&s, 1), 0);				       /* QP1, below */
	len = roce_frame(f, sizeof(f), 4, -1, ROCE_FIRST_QPN + 3 * RNIC_QPN_SPAN);
	CHECK_EQ(rnic_classify(f, len, &fr), NET_FRAME_ROCE);
	CHECK_EQ(rnic_steer_frame(&s, &fr), 3);
	len = roce_frame(f, sizeof(f), 6, net_vlan_tci(0, 7), ROCE_FIRST_QPN + RNIC_QPN_SPAN);
	rnic_classify(f, len, &fr);
	CHECK_EQ(rnic_steer_frame(&s, &fr), 1);
	/* no whole BTH: lcore 0 (whose engine counts it) */
	rnic_classify(f, 18 + 40 + 8 + 11, &fr);
	CHECK_EQ(fr.kind, NET_FRAME_ROCE);
	CHECK_EQ(rnic_steer_frame(&s, &fr), 0);
	len = icmp_echo(f, MY_IP);
	rnic_classify(f, len, &fr);
	CHECK_EQ(rnic_steer_frame(&s, &fr), 0);
}

static void
test_pfc_send(void)
{
	struct rnic_port *p = fresh_port(), other;
	struct rnic_steer s = {.n = 2, .port = {p, &other}};
	enum pfc_gen_event ev = PFC_GEN_NONE;
	struct pfc_frame pf;
	uint8_t f[64];
	int n;

	CHECK_EQ(pfc_gen_init(&p->pfc_gen, 10, 2, 0x100, 10000000000ull), 0);
	p->pfc_send = true;
	p->pfc_send_mask = 1u << 3;
	CHECK_EQ(rnic_pfc_send_poll(p, fake_now, 9, f, sizeof(f), &ev), 0);
	n = rnic_pfc_send_poll(p, fake_now, 10, f, sizeof(f), &ev);
	CHECK_EQ(n, PFC_FRAME_LEN);
	CHECK_EQ(ev, PFC_GEN_XOFF);
	CHECK_EQ(pfc_parse(f, (size_t)n, &pf), 0);
	CHECK_EQ(pf.enable, 1u << 3);
	CHECK_EQ(pf.quanta[3], 0x100);
	CHECK_MEM(pf.src, my_mac, 6);
	rnic_pfc_send_count(p, ev);
	CHECK_EQ(p->cnt.pfc_sent_xoff, 1);
	CHECK_EQ(p->cnt.rx_backlog_max, 10);
	n = rnic_pfc_send_poll(p, fake_now + 1000, 2, f, sizeof(f), &ev);
	CHECK_EQ(ev, PFC_GEN_XON);
	CHECK_EQ(pfc_parse(f, (size_t)n, &pf), 0);
	CHECK_EQ(pf.quanta[3], 0);
	rnic_pfc_send_count(p, ev);
	CHECK_EQ(p->cnt.pfc_sent_xon, 1);

	/* --lcores: lcore 1 only publishes; lcore 0 decides on the largest backlog */
	memset(&other, 0, sizeof(other));
	other.steer = &s;
	other.lcore_idx = 1;
	p->steer = &s;
	CHECK_EQ(rnic_pfc_send_poll(&other, fake_now + 2000, 50, f, sizeof(f), &ev), 0);
	CHECK_EQ(other.rx_level_pub, 50);
	n = rnic_pfc_send_poll(p, fake_now + 2000, 0, f, sizeof(f), &ev);
	CHECK_EQ(n, PFC_FRAME_LEN);
	CHECK_EQ(ev, PFC_GEN_XOFF);
	CHECK_EQ(p->cnt.rx_backlog_max, 50);
	CHECK_EQ(nsent, 0); /* the shell sends */
}

static void
test_resolve(void)
{
	struct rnic_port *p = fresh_port();
	uint8_t gid[16], mac[6];
	struct net_arp a;

	/* unknown peer: one ARP request per 100 ms */
	net_ip4_to_mapped(PEER_IP, gid);
	CHECK_EQ(rnic_neigh_resolve(p, gid, mac), -EAGAIN);
	CHECK_EQ(nsent, 1);
	CHECK_EQ(net_arp_parse(sent[0], sent_len[0], &a), 0);
	CHECK_EQ(a.op, NET_ARP_OP_REQUEST);
	CHECK_EQ(a.tpa, PEER_IP);
	fake_now += 100000000ull;
	CHECK_EQ(rnic_neigh_resolve(p, gid, mac), -EAGAIN);
	CHECK_EQ(nsent, 1);
	fake_now += 1;
	CHECK_EQ(rnic_neigh_resolve(p, gid, mac), -EAGAIN);
	CHECK_EQ(nsent, 2);
	CHECK_EQ(p->cnt.arp_requests_sent, 2);
	/* a request that could not be queued is not counted */
	tx_refuse = true;
	fake_now += 200000000ull;
	CHECK_EQ(rnic_neigh_resolve(p, gid, mac), -EAGAIN);
	CHECK_EQ(p->cnt.arp_requests_sent, 2);
	tx_refuse = false;
	net_neigh_learn(&p->neigh, PEER_IP, peer_mac, fake_now);
	CHECK_EQ(rnic_neigh_resolve(p, gid, mac), 0);
	CHECK_MEM(mac, peer_mac, 6);

	/* off-link with --gw: the gateway is resolved */
	p = fresh_port();
	p->gw = 0x0a0000fe;
	net_ip4_to_mapped(0x0b000001, gid);
	CHECK_EQ(rnic_neigh_resolve(p, gid, mac), -EAGAIN);
	CHECK_EQ(net_arp_parse(sent[0], sent_len[0], &a), 0);
	CHECK_EQ(a.tpa, 0x0a0000fe);
	CHECK_EQ(rnic_neigh_next_hop(p, PEER_IP), PEER_IP);

	/* IPv6: a Neighbor Solicitation; without --ip6 refused */
	p = fresh_port();
	CHECK_EQ(rnic_neigh_resolve(p, peer_ip6, mac), -EAGAIN);
	CHECK_EQ(p->cnt.nd_solicits_sent, 1);
	p->has_ip6 = false;
	CHECK_EQ(rnic_neigh_resolve(p, peer_ip6, mac), -EAFNOSUPPORT);
}

RW_TEST_MAIN(RW_TEST(test_arp), RW_TEST(test_icmp_echo), RW_TEST(test_nd), RW_TEST(test_pfc_obeyed),
	     RW_TEST(test_roce_dispatch), RW_TEST(test_hostile), RW_TEST(test_rx_cut),
	     RW_TEST(test_steering), RW_TEST(test_pfc_send), RW_TEST(test_resolve))
