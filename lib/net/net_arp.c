/* SPDX-License-Identifier: BSD-3-Clause */
#include "net_arp.h"

#include <string.h>

#include "net_bytes.h"
#include "net_hdr.h"

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

int
net_arp_parse(const uint8_t *frame, size_t len, struct net_arp *a)
{
	struct net_l2 l2;
	const uint8_t *b;
	int rc = net_l2_parse(frame, len, &l2);

	if (rc < 0)
		return rc;
	if (l2.ethertype != NET_ETHERTYPE_ARP)
		return -NET_E_BAD_ETHERTYPE;
	if (len - l2.hlen < NET_ARP_LEN)
		return -NET_E_TRUNC_IP;
	b = frame + l2.hlen;
	/* htype 1 (Ethernet), ptype 0x0800, hlen 6, plen 4 */
	if (net_get_be16(b) != 1 || net_get_be16(b + 2) != NET_ETHERTYPE_IPV4 || b[4] != 6 ||
	    b[5] != 4)
		return -NET_E_INVAL;
	a->op = net_get_be16(b + 6);
	memcpy(a->sha, b + 8, 6);
	a->spa = net_get_be32(b + 14);
	memcpy(a->tha, b + 18, 6);
	a->tpa = net_get_be32(b + 24);
	return 0;
}

int
net_arp_build(uint8_t *buf, size_t cap, const struct net_arp *a, int vlan_tci)
{
	struct net_l2 l2 = {.has_vlan = vlan_tci >= 0,
			    .vlan_tci = (uint16_t)(vlan_tci < 0 ? 0 : vlan_tci),
			    .ethertype = NET_ETHERTYPE_ARP};
	uint8_t *b;
	int h;

	if (cap < NET_ETH_MIN_FRAME + (l2.has_vlan ? NET_VLAN_HLEN : 0))
		return -NET_E_NOSPACE;
	memcpy(l2.dst, a->op == NET_ARP_OP_REQUEST ? bcast : a->tha, 6);
	memcpy(l2.src, a->sha, 6);
	h = net_l2_build(buf, cap, &l2);
	memset(buf + h, 0, NET_ETH_MIN_FRAME + (l2.has_vlan ? NET_VLAN_HLEN : 0) - (size_t)h);
	b = buf + h;
	net_put_be16(b, 1);
	net_put_be16(b + 2, NET_ETHERTYPE_IPV4);
	b[4] = 6;
	b[5] = 4;
	net_put_be16(b + 6, a->op);
	memcpy(b + 8, a->sha, 6);
	net_put_be32(b + 14, a->spa);
	if (a->op == NET_ARP_OP_REQUEST)
		memset(b + 18, 0, 6);
	else
		memcpy(b + 18, a->tha, 6);
	net_put_be32(b + 24, a->tpa);
	return NET_ETH_MIN_FRAME + (l2.has_vlan ? NET_VLAN_HLEN : 0);
}

int
net_icmp_echo_reply(uint8_t *frame, size_t len, uint32_t my_ip, const uint8_t my_mac[6])
{
	struct net_l2 l2;
	struct net_l3 l3;
	uint8_t *ip, *icmp, tmp[4];
	size_t icmp_len;
	int rc;

	rc = net_l2_parse(frame, len, &l2);
	if (rc < 0)
		return rc;
	if (l2.ethertype != NET_ETHERTYPE_IPV4)
		return -NET_E_BAD_ETHERTYPE;
	ip = frame + l2.hlen;
	rc = net_l3_parse(ip, len - l2.hlen, l2.ethertype, &l3);
	if (rc < 0)
		return rc;
	if (l3.proto != 1 || net_get_be32(ip + 16) != my_ip)
		return -NET_E_INVAL;
	icmp = ip + l3.hlen;
	icmp_len = l3.payload_len;
	if (icmp_len < 8 || icmp[0] != 8 || icmp[1] != 0)
		return -NET_E_INVAL; /* not an echo request */
	if (net_csum_fold(net_csum_partial(icmp, icmp_len, 0)) != 0)
		return -NET_E_BAD_IP_CSUM;
	memcpy(frame, frame + 6, 6);
	memcpy(frame + 6, my_mac, 6);
	memcpy(tmp, ip + 12, 4);
	memcpy(ip + 12, ip + 16, 4);
	memcpy(ip + 16, tmp, 4);
	ip[8] = 64;
	net_ip4_fix_csum(ip);
	icmp[0] = 0;
	net_put_be16(icmp + 2, 0);
	net_put_be16(icmp + 2, net_csum_fold(net_csum_partial(icmp, icmp_len, 0)));
	return (int)(l2.hlen + l3.hlen + icmp_len);
}

void
net_neigh_init(struct net_neigh *n)
{
	memset(n, 0, sizeof(*n));
}

void
net_neigh_learn(struct net_neigh *n, uint32_t ip, const uint8_t mac[6], uint64_t now)
{
	int victim = 0;

	for (int i = 0; i < NET_NEIGH_SLOTS; i++) {
		if (n->e[i].valid && n->e[i].ip == ip) {
			victim = i;
			break;
		}
		if (!n->e[i].valid || (n->e[victim].valid && n->e[i].used < n->e[victim].used))
			victim = i;
	}
	n->e[victim].ip = ip;
	memcpy(n->e[victim].mac, mac, 6);
	n->e[victim].used = now;
	n->e[victim].valid = true;
}

bool
net_neigh_lookup(struct net_neigh *n, uint32_t ip, uint8_t mac[6], uint64_t now)
{
	for (int i = 0; i < NET_NEIGH_SLOTS; i++)
		if (n->e[i].valid && n->e[i].ip == ip) {
			memcpy(mac, n->e[i].mac, 6);
			n->e[i].used = now;
			return true;
		}
	return false;
}
