/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_rx.c
 * Frame classification and dispatch (rnic_core.h): one lib/net classification
 * per received frame, then ARP, ICMP, ND / ICMPv6 and PFC to their handlers,
 * RoCEv2 back to the caller for the engine, the rest counted by reason.
 */
#include "rnic_core.h"

enum net_frame_kind
rnic_classify(const uint8_t *f, size_t len, struct net_frame *fr)
{
	if (net_frame_classify(f, len, fr) != NET_FRAME_BAD_L2 && !net_frame_dot1q_only(fr))
		fr->kind = NET_FRAME_OTHER;
	return fr->kind;
}

bool
rnic_rx_frame(struct rnic_port *p, uint8_t *f, size_t len, uint64_t now)
{
	struct net_frame fr;

	rnic_classify(f, len, &fr);
	return rnic_rx_classified(p, f, len, &fr, now);
}

bool
rnic_rx_classified(struct rnic_port *p, uint8_t *f, size_t len, const struct net_frame *fr,
		   uint64_t now)
{
	enum net_frame_kind k = fr->kind;

	/* longer than the port's ring frame: cut on the way in (net_frame_rx_cut) */
	if (p->rx_cut_len && len >= p->rx_cut_len && net_frame_rx_cut(f, len, fr, p->rx_cut_len)) {
		p->cnt.rx_cut++;
		return false;
	}
	switch (k) {
	case NET_FRAME_ARP:
		rnic_neigh_arp_rx(p, f, len);
		break;
	case NET_FRAME_MAC_CTRL:
		rnic_pfc_rx(p, f, len, now);
		break;
	case NET_FRAME_ICMP:
		rnic_neigh_icmp_rx(p, f, len);
		break;
	case NET_FRAME_ICMPV6:
		rnic_neigh_icmp6_rx(p, f, len);
		break;
	case NET_FRAME_ROCE:
		return true; /* the engine checks everything else */
	case NET_FRAME_IP:
	case NET_FRAME_UDP:
		if (!fr->ip || !fr->ip_version_ok || !fr->l4_off ||
		    (fr->proto == NET_IPPROTO_UDP && !fr->udp))
			p->cnt.rx_ip_malformed++;
		else
			p->cnt.rx_not_for_us++;
		break;
	case NET_FRAME_BAD_L2:
	case NET_FRAME_OTHER:
	default:
		p->cnt.rx_other++;
	}
	return false;
}
