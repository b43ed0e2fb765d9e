/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pfc.h
 * IEEE 802.1Qbb Priority-based Flow Control and 802.3x PAUSE frames
 * (802.3 Clause 31, Annexes 31B and 31D): build, parse, quanta <-> time, and
 * priority classification by VLAN PCP or a DSCP table. Shared by the rnic, the
 * relay and the emulator; no DPDK dependency.
 *
 * Wire format (60 bytes without FCS):
 *   DA 01:80:C2:00:00:01 | SA | 0x8808 | opcode | body | zero pad
 *   PFC   (opcode 0x0101): enable vector (16 bit, bit n = priority n),
 *                          time[0..7] (16 bit each, priority 0 first), 26 B pad
 *   PAUSE (opcode 0x0001): pause_time (16 bit), 42 B pad
 */
#ifndef NET_PFC_H
#define NET_PFC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PFC_NUM_PRIO 8
#define PFC_OPCODE 0x0101
#define PAUSE_OPCODE 0x0001
#define PFC_FRAME_LEN 60     /**< both PFC and PAUSE, without FCS */
#define PFC_MIN_PARSE_LEN 34 /**< header + PFC body; pad may be absent */
#define PAUSE_MIN_PARSE_LEN 18
#define PFC_QUANTUM_BITS 512 /**< one pause quantum = 512 bit times */
#define PFC_MAX_QUANTA 0xffff

extern const uint8_t pfc_dst_mac[6]; /**< 01:80:C2:00:00:01 */

/** A parsed MAC Control frame (PFC or PAUSE). */
struct pfc_frame {
	uint16_t opcode; /**< PFC_OPCODE or PAUSE_OPCODE */
	uint8_t src[6];
	uint8_t enable;		       /**< PFC: e[7:0]; PAUSE: 0xff (all priorities) */
	uint16_t quanta[PFC_NUM_PRIO]; /**< PAUSE: pause_time copied to every slot */
};

/**
 * Build a PFC frame. Priorities whose bit in @p enable is clear get time 0 on
 * the wire, as the standard asks. Returns PFC_FRAME_LEN or -NET_E_NOSPACE.
 */
int pfc_build(uint8_t *buf, size_t cap, const uint8_t src[6], uint8_t enable,
	      const uint16_t quanta[PFC_NUM_PRIO]);

/** Build an 802.3x PAUSE frame to the multicast DA. */
int pause_build(uint8_t *buf, size_t cap, const uint8_t src[6], uint16_t quanta);

/**
 * Parse a MAC Control frame (untagged; a single 802.1Q tag is tolerated).
 * Accepts frames of at least 34 bytes (PFC) / 18 bytes (PAUSE); trailing pad
 * and FCS are ignored. Returns 0 or -NET_E_NOT_MAC_CTRL, -NET_E_TRUNC_MAC_CTRL,
 * -NET_E_BAD_MAC_CTRL_OP, -NET_E_BAD_PFC_VECTOR.
 */
int pfc_parse(const uint8_t *buf, size_t len, struct pfc_frame *f);

/** True if the frame is MAC Control, untagged or in one 802.1Q tag (lib/net net_frame_classify). */
bool pfc_is_mac_ctrl(const uint8_t *buf, size_t len);

/** Pause duration of @p quanta at @p link_bps, in nanoseconds (rounded down). */
uint64_t pfc_quanta_to_ns(uint32_t quanta, uint64_t link_bps);

/** Quanta that cover at least @p ns at @p link_bps, saturated at 0xffff. */
uint16_t pfc_ns_to_quanta(uint64_t ns, uint64_t link_bps);

/**
 * Convert quanta received on a link of rate @p from_bps into quanta of the
 * same duration on a link of rate @p to_bps (rounded up, saturated); 0 stays 0
 * so an XON is always relayed as an XON.
 */
uint16_t pfc_quanta_convert(uint16_t quanta, uint64_t from_bps, uint64_t to_bps);

/** Trust mode for priority classification. */
enum pfc_trust {
	PFC_TRUST_PCP,
	PFC_TRUST_DSCP,
};

/** Classification table: DSCP -> priority, used in DSCP trust mode. */
struct pfc_classifier {
	enum pfc_trust trust;
	uint8_t dscp2prio[64];
	uint8_t default_prio; /**< untagged frames in PCP mode, non-IP in DSCP mode */
};

/** Default table: prio = DSCP >> 3 (DSCP 26 -> 3, DSCP 48 -> 6). */
void pfc_classifier_init(struct pfc_classifier *c, enum pfc_trust trust);

/**
 * Priority (0..7) of an Ethernet frame, from net_frame_classify()'s one walk
 * over the headers. PCP mode reads the outer 802.1Q tag; DSCP mode reads the
 * IPv4/IPv6 DSCP of IP untagged or behind one 802.1Q tag (its first two bytes
 * suffice). Anything else, short frames included, gets default_prio.
 */
uint8_t pfc_classify(const struct pfc_classifier *c, const uint8_t *frame, size_t len);

#endif /* NET_PFC_H */
