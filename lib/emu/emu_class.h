/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_class.h
 * Per-flow impairment classes of a direction, as a tc filter chain in front
 * of several netem qdiscs (docs/lossy-emu.md, "Impairment classes"):
 *
 *   MATCH => SPEC
 *
 * MATCH is one or more tc-flower keys (tc-flower(8)), all of which must hold:
 *   src_ip ADDR[/PREFIX]   dst_ip ADDR[/PREFIX]   (IPv4 or IPv6)
 *   ip_proto tcp|udp|sctp|icmp|icmpv6|NUMBER
 *   src_port PORT[-PORT]   dst_port PORT[-PORT]   (need ip_proto tcp, udp or sctp)
 *   ip_tos TOS[/MASK]      (IPv4 TOS / IPv6 traffic class byte)
 *   vlan_id VID            vlan_prio PCP           (the outer tag)
 * plus, for RoCEv2 (UDP port 4791 with a whole BTH, as net_frame_classify() finds it):
 *   roce_dqp QPN           roce_opcode OPCODE      (BTH destination QP, opcode)
 * SPEC is a SPEC of emu_spec.h restricted to what a class owns: delay
 * (jitter, distribution), loss, duplicate, corrupt, reorder, ecn, seed. The
 * queue keywords (rate, limit, limit-bytes, red, pfc), ctrl-delay and the
 * drop rules belong to the direction: every class shares its bottleneck.
 *
 * Classes are tried in order and the first that matches wins; a frame no
 * class matches takes the direction's SPEC. Only the frame's own headers are
 * read, and only the operator sets classes: nothing a peer sends changes one.
 * DPDK-free; classification is lib/net's net_frame_classify().
 */
#ifndef EMU_CLASS_H
#define EMU_CLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu_spec.h"

#define EMU_CLASS_MAX 8 /**< classes per direction */

struct net_frame;

enum emu_class_key {
	EMU_CK_SRC_IP = 1u << 0,
	EMU_CK_DST_IP = 1u << 1,
	EMU_CK_IP_PROTO = 1u << 2,
	EMU_CK_SRC_PORT = 1u << 3,
	EMU_CK_DST_PORT = 1u << 4,
	EMU_CK_IP_TOS = 1u << 5,
	EMU_CK_VLAN_ID = 1u << 6,
	EMU_CK_VLAN_PRIO = 1u << 7,
	EMU_CK_ROCE_DQP = 1u << 8,
	EMU_CK_ROCE_OPCODE = 1u << 9,
};

/** An address with a prefix: @p fam 4 or 6, @p plen bits of @p a compared. */
struct emu_class_addr {
	uint8_t fam;
	uint8_t plen;
	uint8_t a[16];
};

struct emu_class_match {
	uint32_t keys; /**< enum emu_class_key present */
	struct emu_class_addr src_ip, dst_ip;
	uint8_t ip_proto;
	uint16_t sport_lo, sport_hi, dport_lo, dport_hi;
	uint8_t tos, tos_mask;
	uint16_t vlan_id;
	uint8_t vlan_prio;
	uint32_t roce_dqp;
	uint8_t roce_opcode;
};

struct emu_class {
	struct emu_class_match m;
	struct emu_spec spec;
};

/**
 * Parse "MATCH => SPEC" into @p c. 0 or a negated ::emu_err; then @p msg names
 * the bad key or value and what is allowed, e.g.
 *   class: dst_ip "10.0.0.0/33": prefix is out of range (0..32)
 */
int emu_class_parse(struct emu_class *c, const char *text, char *msg, size_t msglen);

/** MATCH alone ("ip_proto udp dst_port 4791"), for emu_class_parse() and tests. */
int emu_class_match_parse(struct emu_class_match *m, const char *text, char *msg, size_t msglen);

/** "MATCH => SPEC" that emu_class_parse() reads back to the same values; the length. */
int emu_class_format(const struct emu_class *c, char *buf, size_t len);

/**
 * Does the frame (@p len bytes at @p f, classified into @p fr by
 * net_frame_classify()) match @p m? Reads nothing past @p len; a key whose
 * header is not in the frame does not match.
 */
bool emu_class_match(const struct emu_class_match *m, const uint8_t *f, size_t len,
		     const struct net_frame *fr);

/** The first of @p n classes that matches, or -1 (the direction's SPEC). */
int emu_class_select(const struct emu_class *cs, unsigned n, const uint8_t *f, size_t len,
		     const struct net_frame *fr);

/** The seed of class @p idx of a direction seeded @p seed: its own RNG streams. */
uint64_t emu_class_seed(uint64_t seed, unsigned idx);

#endif /* EMU_CLASS_H */
