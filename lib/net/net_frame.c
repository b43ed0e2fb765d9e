/* SPDX-License-Identifier: BSD-3-Clause */
/** @file net_frame.c Frame classification (net_frame.h): bounds-checked header walk. */
#include "net_frame.h"

#include <string.h>

#include "net_bytes.h"
#include "net_hdr.h"

static bool
is_tpid(uint16_t et, unsigned int depth)
{
	/* 802.1ad: the service tag (0x88A8) is the outer one; customer tags are 0x8100 */
	return et == NET_ETHERTYPE_VLAN || (depth == 0 && et == NET_ETHERTYPE_QINQ);
}

/* IPv4 / IPv6 at fr->l3_off: protocol, L4 offset, UDP port, BTH destination QP */
static void
classify_ip(const uint8_t *buf, size_t len, struct net_frame *fr)
{
	const uint8_t *ip = buf + fr->l3_off;
	size_t iplen = len - fr->l3_off, hlen;

	fr->kind = NET_FRAME_IP;
	/* the DSCP a priority is classified by needs only the first two bytes */
	if (iplen >= 2 && ip[0] >> 4 == (fr->ethertype == NET_ETHERTYPE_IPV4 ? 4 : 6)) {
		fr->has_tclass = true;
		fr->tclass = fr->ethertype == NET_ETHERTYPE_IPV4
				 ? ip[1]
				 : (uint8_t)((net_get_be16(ip) >> 4) & 0xff);
	}
	if (fr->ethertype == NET_ETHERTYPE_IPV4) {
		if (iplen < NET_IPV4_HLEN)
			return;
		fr->ip = true;
		fr->ip_version_ok = ip[0] >> 4 == 4;
		fr->proto = ip[9];
		hlen = (size_t)(ip[0] & 0x0f) * 4;
		if (fr->proto == NET_IPPROTO_ICMP)
			fr->kind = NET_FRAME_ICMP;
		if (hlen < NET_IPV4_HLEN || hlen > iplen)
			return;
	} else {
		if (iplen < NET_IPV6_HLEN)
			return;
		fr->ip = true;
		fr->ip_version_ok = ip[0] >> 4 == 6;
		fr->proto = ip[6];
		hlen = NET_IPV6_HLEN;
		if (fr->proto == NET_IPPROTO_ICMPV6)
			fr->kind = NET_FRAME_ICMPV6;
	}
	fr->l4_off = (uint16_t)(fr->l3_off + hlen);
	if (fr->proto != NET_IPPROTO_UDP || (size_t)fr->l4_off + NET_UDP_HLEN > len)
		return;
	fr->udp = true;
	fr->udp_dport = net_get_be16(buf + fr->l4_off + 2);
	fr->kind = NET_FRAME_UDP;
	if (fr->udp_dport != NET_UDP_PORT_ROCEV2)
		return;
	fr->kind = NET_FRAME_ROCE;
	if ((size_t)fr->l4_off + NET_UDP_HLEN + 12 <= len) {
		const uint8_t *bth = buf + fr->l4_off + NET_UDP_HLEN;

		fr->has_bth = true;
		fr->bth_dqpn = (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7];
		fr->bth_psn = (uint32_t)bth[9] << 16 | (uint32_t)bth[10] << 8 | bth[11];
		fr->bth_op = bth[0];
	}
}

enum net_frame_kind
net_frame_classify(const uint8_t *buf, size_t len, struct net_frame *fr)
{
	memset(fr, 0, sizeof(*fr));
	fr->kind = NET_FRAME_BAD_L2;
	if (len < NET_ETH_HLEN)
		return fr->kind;
	fr->ethertype = net_get_be16(buf + 12);
	fr->l3_off = NET_ETH_HLEN;
	while (fr->ntags < NET_FRAME_MAX_TAGS && is_tpid(fr->ethertype, fr->ntags)) {
		if ((size_t)fr->l3_off + NET_VLAN_HLEN > len)
			return fr->kind; /* the truncated tag's TPID stays in ethertype */
		fr->tpid[fr->ntags] = fr->ethertype;
		fr->tci[fr->ntags] = net_get_be16(buf + fr->l3_off);
		fr->ethertype = net_get_be16(buf + fr->l3_off + 2);
		fr->l3_off += NET_VLAN_HLEN;
		fr->ntags++;
	}
	switch (fr->ethertype) {
	case NET_ETHERTYPE_ARP:
		fr->kind = NET_FRAME_ARP;
		break;
	case NET_ETHERTYPE_MAC_CTRL:
		fr->kind = NET_FRAME_MAC_CTRL;
		break;
	case NET_ETHERTYPE_IPV4:
	case NET_ETHERTYPE_IPV6:
		classify_ip(buf, len, fr);
		break;
	default:
		fr->kind = NET_FRAME_OTHER;
	}
	return fr->kind;
}

const char *
net_frame_kind_name(enum net_frame_kind k)
{
	static const char *const names[] = {
	    [NET_FRAME_BAD_L2] = "bad_l2", [NET_FRAME_OTHER] = "other",
	    [NET_FRAME_ARP] = "arp",	   [NET_FRAME_MAC_CTRL] = "mac_ctrl",
	    [NET_FRAME_IP] = "ip",	   [NET_FRAME_ICMP] = "icmp",
	    [NET_FRAME_ICMPV6] = "icmpv6", [NET_FRAME_UDP] = "udp",
	    [NET_FRAME_ROCE] = "roce",
	};

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

bool
net_frame_rx_cut(const uint8_t *buf, size_t len, const struct net_frame *fr, size_t rx_limit)
{
	const uint8_t *ip;
	size_t want;

	if (rx_limit == 0 || len < rx_limit || !fr->ip || !fr->ip_version_ok)
		return false;
	ip = buf + fr->l3_off; /* fr->ip: the fixed IP header is in the frame */
	if (fr->ethertype == NET_ETHERTYPE_IPV4)
		want = net_get_be16(ip + 2);
	else
		want = (size_t)net_get_be16(ip + 4) + NET_IPV6_HLEN;
	return (size_t)fr->l3_off + want > len;
}
