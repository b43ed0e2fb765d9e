/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_rules.h
 * Deterministic drop rules of a direction, so that a test drops exactly the
 * packet it means to (docs/lossy-emu.md, "Deterministic drops"):
 *
 *   drop-psn QPN:PSN[:TIMES]  the RoCEv2 packets (requests, READ responses,
 *                             ACK/NAKs: any BTH) with destination QP QPN and
 *                             PSN PSN, their first TIMES arrivals (default 1);
 *                             the later ones pass. Repeatable, up to
 *                             EMU_RULES_MAX rules in all.
 *   drop-nth N                every N-th RoCEv2 packet of the direction (the
 *                             N-th, 2N-th, ... counted from 1). Only RoCEv2
 *                             packets count, so ARP, ND or the TCP exchange
 *                             of perftest on the same wire do not shift it.
 *   drop-mad KIND ORD[,ORD]...  the ORD-th MADs of kind KIND to QP1 (1-based,
 *                             counted per direction): a RoCEv2 UD SEND_ONLY to
 *                             BTH destination QP 1 whose MAD class (byte 1) and
 *                             attribute (bytes 16-17) lib/cm's mad_kind names
 *                             KIND ("cm-req", "cm-rep", "vendor", ...), e.g.
 *                             "drop-mad cm-req 1" drops the first CM REQ, and
 *                             its retransmission passes. Repeatable.
 *
 * Every matching RoCEv2 arrival counts towards every rule it matches, also
 * when another rule drops it; a packet is dropped (and counted) by the first
 * rule in SPEC order that says so. Rules run before stage 1: a packet a rule
 * drops takes no loss, duplicate, corrupt or reorder draw. DPDK-free: the app
 * passes the BTH fields it parsed.
 */
#ifndef EMU_RULES_H
#define EMU_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EMU_RULES_MAX 16
#define EMU_RULES_MAX_TIMES 1000000u
#define EMU_RULES_MAX_ORDS 8 /**< ordinals of one drop-mad rule */

enum emu_rule_kind {
	EMU_RULE_DROP_PSN = 1, /**< drop-psn QPN:PSN[:TIMES] */
	EMU_RULE_DROP_NTH,     /**< drop-nth N */
	EMU_RULE_DROP_MAD,     /**< drop-mad KIND ORD[,ORD]... */
};

struct emu_rule {
	enum emu_rule_kind kind;
	uint32_t qpn;	/**< drop-psn: destination QP, 24 bits */
	uint32_t psn;	/**< drop-psn: 24 bits */
	uint32_t times; /**< drop-psn: arrivals to drop, 1..EMU_RULES_MAX_TIMES */
	uint64_t nth;	/**< drop-nth: N >= 1 */
	int mad_kind;	/**< drop-mad: enum mad_kind (lib/cm mad_kind.h) */
	uint32_t nords; /**< drop-mad: ordinals in ords[], 1..EMU_RULES_MAX_ORDS */
	uint32_t ords[EMU_RULES_MAX_ORDS]; /**< drop-mad: ascending, 1..EMU_RULES_MAX_TIMES */
};

struct emu_rules_params {
	uint32_t n;
	struct emu_rule r[EMU_RULES_MAX];
};

/** Run-time state of one direction's rules. */
struct emu_rules {
	struct emu_rules_params p;
	uint64_t roce_seen;		 /**< RoCEv2 packets seen (drop-nth counts these) */
	uint32_t matched[EMU_RULES_MAX]; /**< drop-psn, drop-mad: matching arrivals so far */
	uint64_t dropped[EMU_RULES_MAX]; /**< packets each rule dropped */
};

/** Start counting from zero with @p p. */
void emu_rules_init(struct emu_rules *r, const struct emu_rules_params *p);

/**
 * A RoCEv2 packet with BTH destination QP @p dqpn and PSN @p psn arrives.
 * @return -1 to let it pass, else the index of the rule that drops it.
 */
int emu_rules_decide(struct emu_rules *r, uint32_t dqpn, uint32_t psn);

/**
 * emu_rules_decide() for a packet that may be a MAD to QP1: @p mad_kind is its
 * enum mad_kind (emu_rules_mad_kind()), or -1 when it is not one.
 */
int emu_rules_decide_mad(struct emu_rules *r, uint32_t dqpn, uint32_t psn, int mad_kind);

struct net_frame;
/**
 * The MAD kind of a classified frame (net_frame_classify()) of @p len bytes: a
 * RoCEv2 UD SEND_ONLY (0x64) to BTH destination QP 1 whose DETH and first 18 MAD
 * bytes are in the frame; -1 for anything else. Reads nothing past @p len.
 */
int emu_rules_mad_kind(const uint8_t *frame, size_t len, const struct net_frame *fr);

/** Does the SPEC have a drop-mad rule (the caller need not classify MADs otherwise)? */
bool emu_rules_have_mad(const struct emu_rules_params *p);

/** The rule as SPEC text ("drop-psn 0x11:0x52e51e:1", "drop-nth 100"); the length. */
int emu_rule_format(const struct emu_rule *rule, char *buf, size_t len);

/** Short cause name for logs and counters: "drop-psn", "drop-nth" or "drop-mad". */
const char *emu_rule_kind_name(enum emu_rule_kind k);

#endif /* EMU_RULES_H */
