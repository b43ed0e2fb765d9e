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

enum emu_rule_kind {
	EMU_RULE_DROP_PSN = 1, /**< drop-psn QPN:PSN[:TIMES] */
	EMU_RULE_DROP_NTH,     /**< drop-nth N */
};

struct emu_rule {
	enum emu_rule_kind kind;
	uint32_t qpn;	/**< drop-psn: destination QP, 24 bits */
	uint32_t psn;	/**< drop-psn: 24 bits */
	uint32_t times; /**< drop-psn: arrivals to drop, 1..EMU_RULES_MAX_TIMES */
	uint64_t nth;	/**< drop-nth: N >= 1 */
};

struct emu_rules_params {
	uint32_t n;
	struct emu_rule r[EMU_RULES_MAX];
};

/** Run-time state of one direction's rules. */
struct emu_rules {
	struct emu_rules_params p;
	uint64_t roce_seen;		 /**< RoCEv2 packets seen (drop-nth counts these) */
	uint32_t matched[EMU_RULES_MAX]; /**< drop-psn: matching arrivals so far */
	uint64_t dropped[EMU_RULES_MAX]; /**< packets each rule dropped */
};

/** Start counting from zero with @p p. */
void emu_rules_init(struct emu_rules *r, const struct emu_rules_params *p);

/**
 * A RoCEv2 packet with BTH destination QP @p dqpn and PSN @p psn arrives.
 * @return -1 to let it pass, else the index of the rule that drops it.
 */
int emu_rules_decide(struct emu_rules *r, uint32_t dqpn, uint32_t psn);

/** The rule as SPEC text ("drop-psn 0x11:0x52e51e:1", "drop-nth 100"); the length. */
int emu_rule_format(const struct emu_rule *rule, char *buf, size_t len);

/** Short cause name for logs and counters: "drop-psn" or "drop-nth". */
const char *emu_rule_kind_name(enum emu_rule_kind k);

#endif /* EMU_RULES_H */
