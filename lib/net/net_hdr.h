/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file net_hdr.h
 * Ethernet (optional 802.1Q), IPv4, IPv6 and UDP: build and parse without DPDK.
 *
 * Parsers take (buf, len) and never read past len; they return 0 or a
 * negative ::net_err. Builders take a capacity and return the bytes written
 * or a negative ::net_err.
 */
#ifndef NET_HDR_H
#define NET_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_ETH_ALEN 6
#define NET_ETH_HLEN 14
#define NET_VLAN_HLEN 4
#define NET_IPV4_HLEN 20 /**< without options; RoCEv2 never sends options */
#define NET_IPV6_HLEN 40
#define NET_UDP_HLEN 8
#define NET_ETH_MIN_FRAME 60 /**< minimum frame without FCS */

#define NET_ETHERTYPE_IPV4 0x0800
#define NET_ETHERTYPE_ARP 0x0806
#define NET_ETHERTYPE_VLAN 0x8100
#define NET_ETHERTYPE_QINQ 0x88A8
#define NET_ETHERTYPE_IPV6 0x86DD
#define NET_ETHERTYPE_MAC_CTRL 0x8808 /**< 802.3 MAC Control (PAUSE, PFC) */

#define NET_IPPROTO_ICMP 1
#define NET_IPPROTO_UDP 17
#define NET_IPPROTO_ICMPV6 58

#define NET_UDP_PORT_ROCEV2 4791 /**< RoCEv2's UDP destination port (IBTA Annex A17.2.1) */

/** ECN codepoints (RFC 3168), the low two bits of TOS / traffic class. */
enum net_ecn {
	NET_ECN_NOT_ECT = 0,
	NET_ECN_ECT1 = 1,
	NET_ECN_ECT0 = 2,
	NET_ECN_CE = 3,
};

/** Errors shared by lib/net and lib/roce parsers (negated when returned). */
#define NET_ERR_LIST(X)                                                                            \
	X(OK, "ok")                                                                                \
	X(TRUNC_ETH, "frame shorter than the Ethernet header")                                     \
	X(TRUNC_VLAN, "frame ends inside the 802.1Q tag")                                          \
	X(BAD_ETHERTYPE, "EtherType is neither IPv4 nor IPv6")                                     \
	X(TRUNC_IP, "frame ends inside the IP header")                                             \
	X(BAD_IP_VERSION, "IP version field does not match the EtherType")                         \
	X(BAD_IP_HLEN, "IPv4 header length below 20 bytes or past the frame")                      \
	X(BAD_IP_LEN, "IP total/payload length disagrees with the frame length")                   \
	X(BAD_IP_CSUM, "IPv4 header checksum is wrong")                                            \
	X(IP_FRAGMENT, "IPv4 fragment (RoCEv2 is never fragmented)")                               \
	X(NOT_UDP, "IP protocol / next header is not UDP")                                         \
	X(TRUNC_UDP, "frame ends inside the UDP header")                                           \
	X(BAD_UDP_LEN, "UDP length disagrees with the IP length")                                  \
	X(NOT_ROCE_PORT, "UDP destination port is not 4791")                                       \
	X(TRUNC_BTH, "UDP payload shorter than BTH + ICRC")                                        \
	X(BAD_OPCODE, "BTH opcode is reserved or unsupported")                                     \
	X(BAD_TVER, "BTH transport header version is not 0")                                       \
	X(TRUNC_EXT, "packet ends inside an extension header")                                     \
	X(BAD_PAD, "pad count larger than the payload or not allowed for the opcode")              \
	X(PAYLOAD_NOT_ALLOWED, "opcode carries no payload but bytes follow")                       \
	X(BAD_ICRC, "ICRC mismatch")                                                               \
	X(NOSPACE, "output buffer too small")                                                      \
	X(INVAL, "invalid argument")                                                               \
	X(TRUNC_MAC_CTRL, "MAC Control frame shorter than its opcode and body")                    \
	X(NOT_MAC_CTRL, "not a MAC Control frame (EtherType 0x8808)")                              \
	X(BAD_MAC_CTRL_OP, "MAC Control opcode is neither PAUSE nor PFC")                          \
	X(BAD_PFC_VECTOR, "PFC priority-enable vector has bits above 7 set")

enum net_err {
#define NET_ERR_ENUM(name, text) NET_E_##name,
	NET_ERR_LIST(NET_ERR_ENUM)
#undef NET_ERR_ENUM
	    NET_E__COUNT
};

/** Short symbolic name ("TRUNC_BTH") of an error; accepts e or -e. */
const char *net_err_name(int e);
/** One-line human description of an error; accepts e or -e. */
const char *net_err_str(int e);

/** Parsed L2 header. */
struct net_l2 {
	uint8_t dst[NET_ETH_ALEN];
	uint8_t src[NET_ETH_ALEN];
	bool has_vlan;
	uint16_t vlan_tci;  /**< PCP(3) | DEI(1) | VID(12) */
	uint16_t ethertype; /**< inner EtherType after any tag */
	uint16_t hlen;	    /**< 14 or 18 */
};

/** Parse Ethernet with at most one 802.1Q tag. */
int net_l2_parse(const uint8_t *buf, size_t len, struct net_l2 *l2);

/** Write an Ethernet header (with a tag if has_vlan); returns bytes written. */
int net_l2_build(uint8_t *buf, size_t cap, const struct net_l2 *l2);

static inline uint8_t
net_vlan_pcp(uint16_t tci)
{
	return (uint8_t)(tci >> 13);
}

static inline uint16_t
net_vlan_vid(uint16_t tci)
{
	return tci & 0x0fff;
}

static inline uint16_t
net_vlan_tci(uint8_t pcp, uint16_t vid)
{
	return (uint16_t)((pcp & 7) << 13 | (vid & 0x0fff));
}

/** Parsed IPv4 or IPv6 header; addresses in IPv6 form (IPv4 as ::ffff:a.b.c.d). */
struct net_l3 {
	uint8_t version;     /**< 4 or 6 */
	uint8_t tos;	     /**< IPv4 TOS or IPv6 traffic class: DSCP(6) | ECN(2) */
	uint8_t ttl;	     /**< TTL or hop limit */
	uint8_t proto;	     /**< protocol or next header */
	uint32_t flow_label; /**< IPv6 only */
	uint16_t ip_id;	     /**< IPv4 only */
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t hlen;	      /**< header length in bytes */
	uint16_t payload_len; /**< bytes after the IP header */
};

static inline uint8_t
net_tos_dscp(uint8_t tos)
{
	return tos >> 2;
}

static inline uint8_t
net_tos_ecn(uint8_t tos)
{
	return tos & 3;
}

/** Write the IPv4-mapped IPv6 form ::ffff:a.b.c.d of a host-order IPv4 address. */
void net_ip4_to_mapped(uint32_t ip4, uint8_t out[16]);
/** True if addr is ::ffff:a.b.c.d; then *ip4 gets a.b.c.d in host order. */
bool net_mapped_to_ip4(const uint8_t addr[16], uint32_t *ip4);

/**
 * Parse an IPv4 or IPv6 header at buf (version from the first nibble must match
 * @p ethertype). Checks lengths against @p len; trailing bytes (Ethernet padding)
 * are allowed and reported by payload_len. Verifies the IPv4 header checksum
 * last: on -NET_E_BAD_IP_CSUM every field of @p l3 is filled.
 */
int net_l3_parse(const uint8_t *buf, size_t len, uint16_t ethertype, struct net_l3 *l3);

/** Build IPv4 (version 4, checksum filled) or IPv6 header for payload_len bytes. */
int net_l3_build(uint8_t *buf, size_t cap, const struct net_l3 *l3);

/** Internet checksum (RFC 1071) folded, not complemented, continuing from sum. */
uint32_t net_csum_partial(const uint8_t *buf, size_t len, uint32_t sum);
/** Fold and complement a partial sum into the final 16-bit checksum. */
uint16_t net_csum_fold(uint32_t sum);

/** Recompute the IPv4 header checksum in place (hdr points at the IPv4 header). */
void net_ip4_fix_csum(uint8_t *hdr);

/**
 * Set the ECN bits of the IPv4/IPv6 header at @p hdr to @p ecn. For IPv4 the
 * header checksum is updated incrementally (RFC 1624). Returns the old ECN.
 */
uint8_t net_ip_set_ecn(uint8_t *hdr, uint8_t ecn);

/** Set DSCP (keeping ECN), with the IPv4 checksum update. */
void net_ip_set_dscp(uint8_t *hdr, uint8_t dscp);

/** UDP header. */
struct net_udp {
	uint16_t sport;
	uint16_t dport;
	uint16_t len; /**< header + payload */
	uint16_t csum;
};

int net_udp_parse(const uint8_t *buf, size_t len, struct net_udp *udp);
int net_udp_build(uint8_t *buf, size_t cap, const struct net_udp *udp);

/**
 * UDP checksum over the IPv4 or IPv6 pseudo-header; @p udp points at the UDP
 * header, which must already hold its length; returns the value to store
 * (0 becomes 0xffff as RFC 768 asks).
 */
uint16_t net_udp_csum(const struct net_l3 *l3, const uint8_t *udp, size_t udp_len);

#endif /* NET_HDR_H */
