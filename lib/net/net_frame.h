/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file net_frame.h
 * Frame classification: what a received frame is (ARP, MAC Control, ICMP,
 * ICMPv6, UDP, RoCEv2) and where its headers start, for the three apps'
 * receive paths (rnic dispatch and lcore steering, lossy-emu stage 1, PFC
 * detection). One pass over the headers, never reading past @p len.
 *
 * This decides where a frame goes; it does not validate it. A frame classified
 * NET_FRAME_ROCE has an IP header and a whole UDP header to port 4791 in the
 * frame; the RoCE parser (roce_parse) checks lengths, checksums and the BTH.
 */
#ifndef NET_FRAME_H
#define NET_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_FRAME_MAX_TAGS 2 /**< VLAN-in-VLAN: an 802.1ad (or 802.1Q) tag, then an 802.1Q tag */

/** What a frame is; each kind implies the ones above it in struct net_frame are valid. */
enum net_frame_kind {
	NET_FRAME_BAD_L2,   /**< shorter than its Ethernet header and tags */
	NET_FRAME_OTHER,    /**< another EtherType (including a third tag) */
	NET_FRAME_ARP,	    /**< EtherType 0x0806 */
	NET_FRAME_MAC_CTRL, /**< EtherType 0x8808: PAUSE, PFC */
	NET_FRAME_IP,	  /**< IPv4/IPv6 EtherType, no more specific kind below (maybe truncated) */
	NET_FRAME_ICMP,	  /**< IPv4 protocol 1, whole 20-byte header */
	NET_FRAME_ICMPV6, /**< IPv6 next header 58, whole 40-byte header */
	NET_FRAME_UDP,	  /**< IP protocol 17 with a whole UDP header, to another port */
	NET_FRAME_ROCE,	  /**< UDP to port 4791 (RoCEv2, IBTA Annex A17.2.1) */
};

/** The headers of a frame as far as net_frame_classify() found them. */
struct net_frame {
	enum net_frame_kind kind;
	uint8_t ntags;			   /**< VLAN tags before the EtherType: 0..2 */
	uint16_t tpid[NET_FRAME_MAX_TAGS]; /**< each tag's TPID (0x8100 or 0x88A8), outer first */
	uint16_t tci[NET_FRAME_MAX_TAGS];  /**< each tag's PCP | DEI | VID */
	uint16_t ethertype; /**< after the tags; a truncated tag's TPID for NET_FRAME_BAD_L2 */
	uint16_t l3_off;    /**< where the EtherType's payload starts (14 + 4 per tag) */
	/**
	 * The fixed IP header (20 bytes IPv4, 40 IPv6) is in the frame: proto is
	 * valid. Its version nibble is not checked (ip_version_ok says).
	 */
	bool ip;
	bool ip_version_ok; /**< version nibble 4 / 6 as the EtherType says */
	/**
	 * The first two bytes of the IP header are in the frame and its version
	 * nibble is the EtherType's: tclass is valid (the header may be cut after).
	 */
	bool has_tclass;
	uint8_t tclass; /**< IPv4 TOS / IPv6 traffic class: DSCP << 2 | ECN */
	uint8_t proto;	/**< IPv4 protocol / IPv6 next header */
	/** after the IP header (IPv4: IHL * 4); 0 if the IHL is below 5 or runs past the frame */
	uint16_t l4_off;
	bool udp; /**< proto 17 and the whole UDP header is in the frame */
	uint16_t udp_dport;
	bool has_bth;	   /**< RoCE: the 12-byte BTH follows the UDP header in the frame */
	uint32_t bth_dqpn; /**< RoCE with has_bth: the BTH destination QP (24 bit) */
	uint32_t bth_psn;  /**< RoCE with has_bth: the BTH PSN (24 bit) */
	uint8_t bth_op;	   /**< RoCE with has_bth: the BTH opcode */
};

/**
 * Classify @p len bytes at @p buf into @p fr (every field set). Tags: an outer
 * 802.1Q (0x8100) or 802.1ad (0x88A8) tag, then at most one inner 802.1Q tag.
 * Returns fr->kind.
 */
enum net_frame_kind net_frame_classify(const uint8_t *buf, size_t len, struct net_frame *fr);

/**
 * The frame is untagged or carries one 802.1Q tag: what net_l2_parse() reads
 * and what the rnic and the PFC code speak. Other tag stacks are another
 * EtherType to them.
 */
static inline bool
net_frame_dot1q_only(const struct net_frame *fr)
{
	return fr->ntags == 0 || (fr->ntags == 1 && fr->tpid[0] == 0x8100);
}

/**
 * The receive path cut this frame: it is @p rx_limit bytes or longer, the most the
 * port hands over whole (0: the port never cuts), and its IP header promises more
 * bytes than the frame holds (IPv4 total length, IPv6 payload length + 40). A port
 * that copies at most a fixed number of bytes of each frame (DPDK's af_packet PMD:
 * its ring frame less the kernel's TPACKET_V2 header, dp_port_info::rx_cut_len)
 * hands on a longer frame cut to that length and says nothing; a bump in the wire
 * must drop it rather than forward a frame it did not receive whole. A frame that
 * arrived short (below the limit) is what the wire carried and is not matched.
 * @p fr is net_frame_classify()'s result for the frame.
 */
bool net_frame_rx_cut(const uint8_t *buf, size_t len, const struct net_frame *fr, size_t rx_limit);

/** Short name of a kind ("roce"), for logs and tests. */
const char *net_frame_kind_name(enum net_frame_kind k);

#endif /* NET_FRAME_H */
