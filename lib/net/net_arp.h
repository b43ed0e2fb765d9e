/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file net_arp.h
 * What an RNIC on a DPDK port needs from the host stack it bypasses: answer ARP
 * (RFC 826) and ICMP echo (RFC 792) for its own IPv4 address, resolve peers by
 * ARP, and remember the answers in a small neighbour table. No DPDK.
 */
#ifndef NET_ARP_H
#define NET_ARP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_ARP_LEN 28 /**< Ethernet/IPv4 ARP body */
#define NET_ARP_OP_REQUEST 1
#define NET_ARP_OP_REPLY 2

struct net_arp {
	uint16_t op;
	uint8_t sha[6];
	uint32_t spa; /**< host order */
	uint8_t tha[6];
	uint32_t tpa; /**< host order */
};

/** Parse an ARP frame (Ethernet, optional tag); only Ethernet/IPv4 ARP is accepted. */
int net_arp_parse(const uint8_t *frame, size_t len, struct net_arp *a);

/**
 * Build an ARP frame (60 bytes). Requests go to the broadcast MAC; replies to @p a->tha.
 * @p vlan_tci < 0 means untagged.
 */
int net_arp_build(uint8_t *buf, size_t cap, const struct net_arp *a, int vlan_tci);

/**
 * If @p frame is an ICMP echo request to @p my_ip, turn it in place into the echo
 * reply (MACs and IPs swapped, type 0, checksums fixed) and return its length;
 * otherwise return a negative error and leave the frame unchanged.
 */
int net_icmp_echo_reply(uint8_t *frame, size_t len, uint32_t my_ip, const uint8_t my_mac[6]);

/** A small fixed-size neighbour table (IPv4 -> MAC), LRU replacement. */
#define NET_NEIGH_SLOTS 64
struct net_neigh {
	struct {
		uint32_t ip;
		uint8_t mac[6];
		uint64_t used; /**< last use, caller's clock */
		bool valid;
	} e[NET_NEIGH_SLOTS];
};

void net_neigh_init(struct net_neigh *n);
void net_neigh_learn(struct net_neigh *n, uint32_t ip, const uint8_t mac[6], uint64_t now);
/** True and *mac filled if @p ip is known. */
bool net_neigh_lookup(struct net_neigh *n, uint32_t ip, uint8_t mac[6], uint64_t now);

/** True if @p a and @p b are in the same /prefix subnet. */
static inline bool
net_same_subnet(uint32_t a, uint32_t b, unsigned prefix)
{
	uint32_t mask = prefix == 0 ? 0 : ~0u << (32 - prefix);

	return (a & mask) == (b & mask);
}

#endif /* NET_ARP_H */
