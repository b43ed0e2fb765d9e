/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_pkt.h
 * Whole RoCEv2 frames: Ethernet [802.1Q] | IPv4 or IPv6 | UDP 4791 | BTH |
 * extension headers | payload | pad | ICRC. Pure functions over byte buffers.
 */
#ifndef ROCE_PKT_H
#define ROCE_PKT_H

#include <stddef.h>
#include <stdint.h>

#include "../net/net_hdr.h"
#include "roce_hdr.h"
#include "roce_opcode.h"

/** A RoCEv2 frame: parse output and build input. */
struct roce_pkt {
	struct net_l2 l2;
	struct net_l3 l3;
	struct net_udp udp;
	struct roce_hdrs h;
	/* set by roce_parse (and by roce_build for the frame it wrote) */
	uint16_t l3_off;      /**< offset of the IP header */
	uint16_t bth_off;     /**< offset of the BTH */
	uint16_t payload_off; /**< offset of the payload */
	uint32_t payload_len; /**< payload bytes, pad excluded */
	uint32_t icrc;	      /**< ICRC as carried */
	uint32_t frame_len;   /**< bytes up to and including the ICRC (Ethernet pad excluded) */
};

/** roce_parse() flags. */
enum roce_parse_flags {
	ROCE_PARSE_NO_ICRC = 1 << 0,	/**< do not verify the ICRC */
	ROCE_PARSE_ANY_PORT = 1 << 1,	/**< accept any UDP destination port */
	ROCE_PARSE_NO_IP_CSUM = 1 << 2, /**< do not verify the IPv4 header checksum */
};

/**
 * Parse and validate one frame. Never reads past @p len. Returns 0, or a
 * negative ::net_err naming the first problem (truncation at any layer, bad
 * IP/UDP lengths, reserved opcode, BTH TVer != 0, pad count larger than the
 * payload or on an opcode without payload, ICRC mismatch). On error the fields
 * parsed so far are valid.
 */
int roce_parse(const uint8_t *frame, size_t len, struct roce_pkt *p, unsigned flags);

struct net_frame;

/**
 * roce_parse() for a frame the receive path already classified: @p fr is
 * net_frame_classify()'s result for these @p len bytes. A NET_FRAME_ROCE frame
 * untagged or with one 802.1Q tag takes its L2 header (addresses, tag, where IP
 * starts) from @p fr instead of walking it again; IP and UDP are then checked
 * (lengths, IPv4 checksum, port) and roce_parse_payload() reads the rest. Any
 * other classification is parsed by roce_parse(). The result, fields and return
 * value, is roce_parse()'s for the same bytes.
 */
int roce_parse_frame(const uint8_t *frame, size_t len, const struct net_frame *fr,
		     struct roce_pkt *p, unsigned flags);

/**
 * The RoCE part of roce_parse(), from the BTH (the UDP payload) on: opcode, TVer,
 * extension headers, pad, payload and ICRC. @p p must hold the checked outer
 * headers: l3 (version, hlen), l3_off and udp.len (at least 8, the UDP datagram
 * lies whole in @p frame). Sets bth_off, h, payload_off, payload_len, frame_len
 * and icrc. Returns 0 or a negative ::net_err, as roce_parse() does.
 */
int roce_parse_payload(const uint8_t *frame, struct roce_pkt *p, unsigned flags);

/** Bytes from the start of the frame to the payload for the headers in @p p. */
size_t roce_hdr_len(const struct roce_pkt *p);

/** Size of the frame roce_build() would write for @p payload_len bytes. */
size_t roce_frame_len(const struct roce_pkt *p, uint32_t payload_len);

/** roce_build() flags. */
enum roce_build_flags {
	ROCE_BUILD_KEEP_PAD = 1 << 0,  /**< use h.bth.pad as given instead of (-len) & 3 */
	ROCE_BUILD_NO_ICRC = 1 << 1,   /**< leave the ICRC field zero (for offload or tests) */
	ROCE_BUILD_UDP6_ZERO = 1 << 2, /**< IPv6: UDP checksum 0 instead of computed */
};

/**
 * Build a frame into @p buf from p->l2 (addresses, tag), p->l3 (version, tos,
 * ttl, flow label, addresses, ip_id), p->udp.sport and p->h (BTH and the
 * extension headers the opcode needs). Lengths, EtherType, IP protocol, UDP
 * dport 4791, IPv4 header checksum, pad bytes (zero) and ICRC are filled in.
 * @p payload may already sit at buf + roce_hdr_len(p) (no copy then) or be NULL
 * (payload bytes left as they are). Frames shorter than 60 bytes are zero-padded
 * to 60 (Ethernet minimum, FCS excluded).
 * Returns the frame length, or -NET_E_NOSPACE / -NET_E_BAD_OPCODE / -NET_E_INVAL.
 * p's offsets, lengths and ICRC fields are updated to describe the built frame.
 */
int roce_build(uint8_t *buf, size_t cap, struct roce_pkt *p, const void *payload,
	       uint32_t payload_len, unsigned flags);

/** UDP source port from a QP number (entropy for ECMP/RSS, in 0xC000..0xFFFF as rxe/RoCE NICs use).
 */
uint16_t roce_udp_sport(uint32_t src_qpn, uint32_t dst_qpn);

/** Recompute and store the ICRC of a frame parsed or built into @p p. */
void roce_icrc_update(uint8_t *frame, const struct roce_pkt *p);

#endif /* ROCE_PKT_H */
