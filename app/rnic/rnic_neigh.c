/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_neigh.c
 * The rnic's neighbours (rnic_core.h): ARP (RFC 826) and IPv6 Neighbor
 * Discovery (RFC 4861) to resolve peers and to be resolved, and the ICMP /
 * ICMPv6 echo replies that make the port pingable. Replies go out through
 * rnic_port_tx_ctrl(); the tables are lib/net's net_neigh / net_neigh6.
 */
#include <errno.h>
#include <string.h>

#include "net_arp.h"
#include "net_nd.h"
#include "rnic_core.h"

#define RNIC_SOLICIT_NS 100000000ull /**< at most one ARP request / NS per 100 ms */

void
rnic_neigh_arp_request(struct rnic_port *p, uint32_t target)
{
	struct net_arp a = {.op = NET_ARP_OP_REQUEST, .spa = p->ip, .tpa = target};
	uint8_t f[64];
	int n;

	memcpy(a.sha, p->mac, 6);
	n = net_arp_build(f, sizeof(f), &a, p->vlan_tci);
	if (n > 0 && rnic_port_tx_ctrl(p, f, (size_t)n) == 0)
		p->cnt.arp_requests_sent++;
}

uint32_t
rnic_neigh_next_hop(const struct rnic_port *p, uint32_t ip)
{
	return (p->gw && !net_same_subnet(ip, p->ip, p->prefix)) ? p->gw : ip;
}

static void
send_nd_solicit(struct rnic_port *p, const uint8_t target[16])
{
	uint8_t f[128];
	int n = net_nd_build_ns(f, sizeof(f), p->mac, p->ip6, target, p->vlan_tci);

	if (n > 0 && rnic_port_tx_ctrl(p, f, (size_t)n) == 0)
		p->cnt.nd_solicits_sent++;
}

/* IPv6 peers: ND, RFC 4861 7.2 */
static int
resolve6(struct rnic_port *p, const uint8_t peer[16], uint8_t mac[6])
{
	uint64_t now = rnic_now_ns(p);
	/* next hop: the peer itself on-link, else the gateway */
	const uint8_t *ip6 =
	    p->has_gw6 && !net_ip6_on_link(peer, p->ip6, p->ip6_prefix) ? p->gw6 : peer;

	if (!p->has_ip6)
		return -EAFNOSUPPORT;
	if (net_neigh6_lookup(&p->neigh6, ip6, mac, now))
		return 0;
	/* --lcores: lcore 0 resolves; during bring-up (only the main lcore runs) copy its entry */
	if (p->steer && p->lcore_idx && !p->steer->running &&
	    net_neigh6_lookup(&p->steer->port[0]->neigh6, ip6, mac, now)) {
		net_neigh6_learn(&p->neigh6, ip6, mac, now);
		return 0;
	}
	if (now - p->last_ns_ns > RNIC_SOLICIT_NS) {
		send_nd_solicit(p, ip6);
		p->last_ns_ns = now;
	}
	return -EAGAIN;
}

int
rnic_neigh_resolve(struct rnic_port *p, const uint8_t gid[16], uint8_t mac[6])
{
	uint64_t now = rnic_now_ns(p);
	uint32_t ip;

	if (!net_mapped_to_ip4(gid, &ip))
		return resolve6(p, gid, mac);
	ip = rnic_neigh_next_hop(p, ip);
	if (net_neigh_lookup(&p->neigh, ip, mac, now))
		return 0;
	if (p->steer && p->lcore_idx && !p->steer->running &&
	    net_neigh_lookup(&p->steer->port[0]->neigh, ip, mac, now)) {
		net_neigh_learn(&p->neigh, ip, mac, now);
		return 0;
	}
	if (now - p->last_arp_ns > RNIC_SOLICIT_NS) {
		rnic_neigh_arp_request(p, ip);
		p->last_arp_ns = now;
	}
	return -EAGAIN;
}

void
rnic_neigh_arp_rx(struct rnic_port *p, const uint8_t *f, size_t len)
{
	struct net_arp a;
	uint8_t out[64];
	int n;

	if (net_arp_parse(f, len, &a) < 0) {
		p->cnt.rx_arp_other++;
		return;
	}
	/* learn whoever talks to us (RFC 826 merge step) */
	if (a.tpa == p->ip || a.op == NET_ARP_OP_REPLY)
		net_neigh_learn(&p->neigh, a.spa, a.sha, rnic_now_ns(p));
	if (a.op == NET_ARP_OP_REQUEST && a.tpa == p->ip) {
		struct net_arp r = {.op = NET_ARP_OP_REPLY, .spa = p->ip, .tpa = a.spa};

		memcpy(r.sha, p->mac, 6);
		memcpy(r.tha, a.sha, 6);
		n = net_arp_build(out, sizeof(out), &r, p->vlan_tci);
		if (n > 0)
			rnic_port_tx_ctrl(p, out, (size_t)n);
		p->cnt.rx_arp_req++;
	} else if (a.op == NET_ARP_OP_REPLY && a.tpa == p->ip) {
		p->cnt.rx_arp_reply++;
	} else {
		p->cnt.rx_arp_other++;
	}
}

void
rnic_neigh_icmp_rx(struct rnic_port *p, uint8_t *f, size_t len)
{
	int r = net_icmp_echo_reply(f, len, p->ip, p->mac);

	if (r > 0) {
		p->cnt.rx_icmp_echo++;
		rnic_port_tx_ctrl(p, f, (size_t)r);
	} else {
		p->cnt.rx_not_for_us++;
	}
}

/* An NA for a peer we asked about (its target is the peer's address). */
static bool
nd_advert(struct rnic_port *p, const uint8_t *f, size_t len)
{
	struct net_nd nd;

	if (!p->has_ip6 || net_nd_parse(f, len, &nd) < 0 || nd.type != NET_ND_NA ||
	    memcmp(nd.target, p->ip6, 16) == 0)
		return false;
	net_neigh6_learn(&p->neigh6, nd.target, nd.has_lladdr ? nd.lladdr : nd.eth_src,
			 rnic_now_ns(p));
	p->cnt.rx_nd_advert++;
	return true;
}

void
rnic_neigh_icmp6_rx(struct rnic_port *p, uint8_t *f, size_t len)
{
	struct net_nd nd;
	uint8_t out[128];
	int n;

	if (nd_advert(p, f, len))
		return;
	/* ping -6: answered in place, like the IPv4 echo */
	if (p->has_ip6 && (n = net_icmp6_echo_reply(f, len, p->ip6, p->mac)) > 0) {
		p->cnt.rx_icmp6_echo++;
		rnic_port_tx_ctrl(p, f, (size_t)n);
		return;
	}
	/* answer Neighbor Solicitations for our address */
	if (!p->has_ip6 || net_nd_parse(f, len, &nd) < 0 || memcmp(nd.target, p->ip6, 16) != 0) {
		p->cnt.rx_nd_other++;
		return;
	}
	if (nd.type == NET_ND_NS) {
		/* 7.2.3: a solicitor with an address gets a neighbour entry for it */
		if (nd.has_lladdr)
			net_neigh6_learn(&p->neigh6, nd.src, nd.lladdr, rnic_now_ns(p));
		n = net_nd_build_na(out, sizeof(out), p->mac, p->ip6, &nd, p->vlan_tci);
		if (n > 0)
			rnic_port_tx_ctrl(p, out, (size_t)n);
		p->cnt.rx_nd_solicit++;
	} else {
		p->cnt.rx_nd_other++; /* an advertisement for our own address: ignore */
	}
}
