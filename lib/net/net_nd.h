/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file net_nd.h
 * IPv6 Neighbor Discovery (RFC 4861), the part an RNIC on a DPDK port needs
 * to carry RoCEv2 over IPv6: answer Neighbor Solicitations for its own
 * address, resolve peers by soliciting them, and remember the answers. The
 * IPv6 counterpart of net_arp.h. No DPDK.
 */
#ifndef NET_ND_H
#define NET_ND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_hdr.h" /* NET_IPPROTO_ICMPV6 */

#define NET_ND_NS 135 /**< Neighbor Solicitation */
#define NET_ND_NA 136 /**< Neighbor Advertisement */
#define NET_ND_LEN 32 /**< NS/NA body (24) + one link-layer address option (8) */

/** A parsed NS or NA. */
struct net_nd {
	uint8_t type;	    /**< NET_ND_NS or NET_ND_NA */
	uint8_t src[16];    /**< IPv6 source (:: for a duplicate address probe) */
	uint8_t dst[16];    /**< IPv6 destination */
	uint8_t eth_src[6]; /**< Ethernet source */
	uint8_t target[16]; /**< target address */
	bool has_lladdr;    /**< a source (NS) / target (NA) link-layer address option */
	uint8_t lladdr[6];
	bool router, solicited, override; /**< NA flags R, S, O */
};

/**
 * Parse an Ethernet (optionally tagged) / IPv6 / ICMPv6 NS or NA, with the
 * RFC 4861 section 7.1 validity checks: hop limit 255, code 0, ICMPv6
 * checksum, length >= 24, target not multicast, options of nonzero length.
 * @return 0, or -NET_E_* (INVAL for a frame that is not a valid NS/NA).
 */
int net_nd_parse(const uint8_t *frame, size_t len, struct net_nd *nd);

/** Solicited-node multicast address of @p ip: ff02::1:ffXX:XXXX (RFC 4291 2.7.1). */
void net_nd_solicited_node(const uint8_t ip[16], uint8_t out[16]);

/** Ethernet multicast MAC of an IPv6 multicast address: 33:33 + its low 32 bits (RFC 2464 7). */
void net_nd_multicast_mac(const uint8_t ip[16], uint8_t mac[6]);

/**
 * Build an NS for @p target from @p my_ip / @p my_mac, sent to the target's
 * solicited-node address, with the source link-layer address option.
 * @p vlan_tci < 0: untagged. @return frame length or -NET_E_NOSPACE.
 */
int net_nd_build_ns(uint8_t *buf, size_t cap, const uint8_t my_mac[6], const uint8_t my_ip[16],
		    const uint8_t target[16], int vlan_tci);

/**
 * Build the NA that answers @p ns (an NS for @p my_ip): solicited and override
 * flags, target link-layer address option, sent to the solicitor; to the
 * all-nodes address ff02::1 without S when the NS came from :: (RFC 4861
 * 7.2.4). @return frame length or -NET_E_NOSPACE.
 */
int net_nd_build_na(uint8_t *buf, size_t cap, const uint8_t my_mac[6], const uint8_t my_ip[16],
		    const struct net_nd *ns, int vlan_tci);

#define NET_ICMP6_ECHO_REQUEST 128
#define NET_ICMP6_ECHO_REPLY 129

/**
 * If @p frame is a valid ICMPv6 echo request (RFC 4443 4.1: code 0, checksum
 * right, no extension headers) addressed to @p my_ip, turn it in place into
 * the echo reply (RFC 4443 4.2: MACs and addresses swapped, type 129, hop
 * limit 64, checksum recomputed, identifier, sequence and data kept) and
 * return its length; otherwise -NET_E_*.
 */
int net_icmp6_echo_reply(uint8_t *frame, size_t len, const uint8_t my_ip[16],
			 const uint8_t my_mac[6]);

/**
 * Whether @p a is on-link for an interface with address @p mine / @p prefix:
 * link-local (fe80::/10, RFC 4291 2.5.6) or in the same prefix. Off-link
 * peers are reached through the gateway (rnic --gw6).
 */
bool net_ip6_on_link(const uint8_t a[16], const uint8_t mine[16], unsigned int prefix);

/** A small IPv6 -> MAC neighbour table, LRU replacement. */
#define NET_NEIGH6_SLOTS 16
struct net_neigh6 {
	struct {
		uint8_t ip[16];
		uint8_t mac[6];
		uint64_t used;
		bool valid;
	} e[NET_NEIGH6_SLOTS];
};

void net_neigh6_init(struct net_neigh6 *n);
void net_neigh6_learn(struct net_neigh6 *n, const uint8_t ip[16], const uint8_t mac[6],
		      uint64_t now);
bool net_neigh6_lookup(struct net_neigh6 *n, const uint8_t ip[16], uint8_t mac[6], uint64_t now);

#endif /* NET_ND_H */
