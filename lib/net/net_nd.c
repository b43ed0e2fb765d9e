/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv6 Neighbor Discovery (RFC 4861): see net_nd.h. */
#include "net_nd.h"

#include <string.h>

#include "net_bytes.h"
#include "net_hdr.h"

#define OPT_SLLA 1 /* source link-layer address */
#define OPT_TLLA 2 /* target link-layer address */

static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 0x01};
static const uint8_t unspecified[16];

void
net_nd_solicited_node(const uint8_t ip[16], uint8_t out[16])
{
	static const uint8_t pfx[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff};

	memcpy(out, pfx, 13);
	memcpy(out + 13, ip + 13, 3);
}

void
net_nd_multicast_mac(const uint8_t ip[16], uint8_t mac[6])
{
	mac[0] = 0x33;
	mac[1] = 0x33;
	memcpy(mac + 2, ip + 12, 4);
}

/* ICMPv6 checksum over the pseudo-header (RFC 8200 8.1) and the message. */
static uint16_t
icmp6_csum(const uint8_t src[16], const uint8_t dst[16], const uint8_t *msg, size_t len)
{
	uint8_t ph[40];
	uint32_t sum;

	memcpy(ph, src, 16);
	memcpy(ph + 16, dst, 16);
	net_put_be32(ph + 32, (uint32_t)len);
	ph[36] = ph[37] = ph[38] = 0;
	ph[39] = NET_IPPROTO_ICMPV6;
	sum = net_csum_partial(ph, sizeof(ph), 0);
	sum = net_csum_partial(msg, len, sum);
	return net_csum_fold(sum);
}

/*
 * The IPv6 header of an Ethernet frame carrying ICMPv6 (no extension headers):
 * its offset in @p frame and its payload length, after the checks both NS/NA
 * and echo parsing need. @return 0 or -NET_E_*.
 */
static int
icmp6_locate(const uint8_t *frame, size_t len, struct net_l2 *l2, size_t *plen)
{
	const uint8_t *ip;
	int rc = net_l2_parse(frame, len, l2);

	if (rc < 0)
		return rc;
	if (l2->ethertype != NET_ETHERTYPE_IPV6)
		return -NET_E_BAD_ETHERTYPE;
	if (len - l2->hlen < NET_IPV6_HLEN)
		return -NET_E_TRUNC_IP;
	ip = frame + l2->hlen;
	if ((ip[0] >> 4) != 6)
		return -NET_E_BAD_IP_VERSION;
	*plen = net_get_be16(ip + 4);
	if (*plen > len - l2->hlen - NET_IPV6_HLEN)
		return -NET_E_BAD_IP_LEN;
	return ip[6] == NET_IPPROTO_ICMPV6 ? 0 : -NET_E_INVAL;
}

int
net_icmp6_echo_reply(uint8_t *frame, size_t len, const uint8_t my_ip[16], const uint8_t my_mac[6])
{
	struct net_l2 l2;
	uint8_t *ip, *m, tmp[16];
	size_t plen;
	int rc = icmp6_locate(frame, len, &l2, &plen);

	if (rc < 0)
		return rc;
	ip = frame + l2.hlen;
	if (memcmp(ip + 24, my_ip, 16) != 0 || plen < 8)
		return -NET_E_INVAL;
	m = ip + NET_IPV6_HLEN;
	if (m[0] != NET_ICMP6_ECHO_REQUEST || m[1] != 0)
		return -NET_E_INVAL;
	if (icmp6_csum(ip + 8, ip + 24, m, plen) != 0)
		return -NET_E_INVAL;
	memcpy(frame, frame + 6, 6);
	memcpy(frame + 6, my_mac, 6);
	memcpy(tmp, ip + 8, 16);
	memcpy(ip + 8, ip + 24, 16);
	memcpy(ip + 24, tmp, 16);
	ip[7] = 64;
	m[0] = NET_ICMP6_ECHO_REPLY;
	net_put_be16(m + 2, 0);
	net_put_be16(m + 2, icmp6_csum(ip + 8, ip + 24, m, plen));
	return (int)(l2.hlen + NET_IPV6_HLEN + plen);
}

int
net_nd_parse(const uint8_t *frame, size_t len, struct net_nd *nd)
{
	struct net_l2 l2;
	const uint8_t *ip, *m;
	size_t plen;
	int rc = icmp6_locate(frame, len, &l2, &plen);

	if (rc < 0)
		return rc;
	ip = frame + l2.hlen;
	/* RFC 4861 7.1.1 / 7.1.2: next header ICMPv6 (no extension headers here), hop limit 255 */
	if (ip[7] != 255 || plen < 24)
		return -NET_E_INVAL;
	m = ip + NET_IPV6_HLEN;
	if ((m[0] != NET_ND_NS && m[0] != NET_ND_NA) || m[1] != 0)
		return -NET_E_INVAL;
	if (icmp6_csum(ip + 8, ip + 24, m, plen) != 0)
		return -NET_E_INVAL; /* a correct checksum folds the sum to 0 */
	if (m[8] == 0xff)
		return -NET_E_INVAL; /* target is multicast */
	memset(nd, 0, sizeof(*nd));
	nd->type = m[0];
	memcpy(nd->src, ip + 8, 16);
	memcpy(nd->dst, ip + 24, 16);
	memcpy(nd->eth_src, l2.src, 6);
	memcpy(nd->target, m + 8, 16);
	if (nd->type == NET_ND_NA) {
		nd->router = m[4] & 0x80;
		nd->solicited = m[4] & 0x40;
		nd->override = m[4] & 0x20;
	}
	for (size_t off = 24; off + 2 <= plen;) {
		size_t olen = (size_t)m[off + 1] * 8;

		if (olen == 0 || off + olen > plen)
			return -NET_E_INVAL; /* 7.1.1: every option has a length > 0 */
		if (olen == 8 && m[off] == (nd->type == NET_ND_NS ? OPT_SLLA : OPT_TLLA)) {
			nd->has_lladdr = true;
			memcpy(nd->lladdr, m + off + 2, 6);
		}
		off += olen;
	}
	/* 7.1.1: an NS from :: (address resolution is not DAD) carries no SLLA */
	if (nd->type == NET_ND_NS && memcmp(nd->src, unspecified, 16) == 0 && nd->has_lladdr)
		return -NET_E_INVAL;
	return 0;
}

/* Ethernet + IPv6 + ICMPv6 body of 24 bytes + one 8-byte link-layer option. */
static int
build(uint8_t *buf, size_t cap, const uint8_t eth_dst[6], const uint8_t eth_src[6],
      const uint8_t src[16], const uint8_t dst[16], uint8_t type, uint8_t flags,
      const uint8_t target[16], uint8_t opt, int vlan_tci)
{
	struct net_l2 l2 = {.has_vlan = vlan_tci >= 0,
			    .vlan_tci = (uint16_t)(vlan_tci < 0 ? 0 : vlan_tci),
			    .ethertype = NET_ETHERTYPE_IPV6};
	size_t hl = NET_ETH_HLEN + (l2.has_vlan ? NET_VLAN_HLEN : 0);
	size_t flen = hl + NET_IPV6_HLEN + NET_ND_LEN;
	uint8_t *ip, *m;

	if (cap < flen)
		return -NET_E_NOSPACE;
	memcpy(l2.dst, eth_dst, 6);
	memcpy(l2.src, eth_src, 6);
	net_l2_build(buf, cap, &l2);
	ip = buf + hl;
	memset(ip, 0, NET_IPV6_HLEN + NET_ND_LEN);
	ip[0] = 0x60;
	net_put_be16(ip + 4, NET_ND_LEN);
	ip[6] = NET_IPPROTO_ICMPV6;
	ip[7] = 255;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	m = ip + NET_IPV6_HLEN;
	m[0] = type;
	m[4] = flags;
	memcpy(m + 8, target, 16);
	m[24] = opt;
	m[25] = 1; /* 8 bytes */
	memcpy(m + 26, eth_src, 6);
	net_put_be16(m + 2, icmp6_csum(src, dst, m, NET_ND_LEN));
	return (int)flen;
}

int
net_nd_build_ns(uint8_t *buf, size_t cap, const uint8_t my_mac[6], const uint8_t my_ip[16],
		const uint8_t target[16], int vlan_tci)
{
	uint8_t dst[16], mac[6];

	net_nd_solicited_node(target, dst);
	net_nd_multicast_mac(dst, mac);
	return build(buf, cap, mac, my_mac, my_ip, dst, NET_ND_NS, 0, target, OPT_SLLA, vlan_tci);
}

int
net_nd_build_na(uint8_t *buf, size_t cap, const uint8_t my_mac[6], const uint8_t my_ip[16],
		const struct net_nd *ns, int vlan_tci)
{
	uint8_t mac[6];

	if (memcmp(ns->src, unspecified, 16) == 0) { /* answer to DAD: all-nodes, S = 0 */
		net_nd_multicast_mac(all_nodes, mac);
		return build(buf, cap, mac, my_mac, my_ip, all_nodes, NET_ND_NA, 0x20, my_ip,
			     OPT_TLLA, vlan_tci);
	}
	return build(buf, cap, ns->has_lladdr ? ns->lladdr : ns->eth_src, my_mac, my_ip, ns->src,
		     NET_ND_NA, 0x60, my_ip, OPT_TLLA, vlan_tci);
}

void
net_neigh6_init(struct net_neigh6 *n)
{
	memset(n, 0, sizeof(*n));
}

void
net_neigh6_learn(struct net_neigh6 *n, const uint8_t ip[16], const uint8_t mac[6], uint64_t now)
{
	int slot = 0;

	for (int i = 0; i < NET_NEIGH6_SLOTS; i++) {
		if (n->e[i].valid && memcmp(n->e[i].ip, ip, 16) == 0) {
			slot = i;
			break;
		}
		if (!n->e[i].valid || n->e[i].used < n->e[slot].used)
			slot = i;
		if (!n->e[i].valid)
			break;
	}
	memcpy(n->e[slot].ip, ip, 16);
	memcpy(n->e[slot].mac, mac, 6);
	n->e[slot].used = now;
	n->e[slot].valid = true;
}

bool
net_neigh6_lookup(struct net_neigh6 *n, const uint8_t ip[16], uint8_t mac[6], uint64_t now)
{
	for (int i = 0; i < NET_NEIGH6_SLOTS; i++)
		if (n->e[i].valid && memcmp(n->e[i].ip, ip, 16) == 0) {
			memcpy(mac, n->e[i].mac, 6);
			n->e[i].used = now;
			return true;
		}
	return false;
}

bool
net_ip6_on_link(const uint8_t a[16], const uint8_t mine[16], unsigned int prefix)
{
	unsigned int full = (prefix > 128 ? 128 : prefix) / 8, rest = prefix % 8;

	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return true;
	if (memcmp(a, mine, full) != 0)
		return false;
	return prefix >= 128 || rest == 0 || ((a[full] ^ mine[full]) >> (8 - rest)) == 0;
}
