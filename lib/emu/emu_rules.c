/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_rules.c
 * Deterministic drop rules: see emu_rules.h.
 */
#include "emu_rules.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void
emu_rules_init(struct emu_rules *r, const struct emu_rules_params *p)
{
	memset(r, 0, sizeof(*r));
	if (p != NULL) {
		r->p = *p;
		if (r->p.n > EMU_RULES_MAX)
			r->p.n = EMU_RULES_MAX;
	}
}

int
emu_rules_decide(struct emu_rules *r, uint32_t dqpn, uint32_t psn)
{
	int drop = -1;

	r->roce_seen++;
	dqpn &= 0xffffff;
	psn &= 0xffffff;
	for (uint32_t i = 0; i < r->p.n; i++) {
		const struct emu_rule *ru = &r->p.r[i];
		bool hit = false;

		if (ru->kind == EMU_RULE_DROP_NTH) {
			hit = ru->nth != 0 && r->roce_seen % ru->nth == 0;
		} else if (ru->kind == EMU_RULE_DROP_PSN && ru->qpn == dqpn && ru->psn == psn) {
			if (r->matched[i] < UINT32_MAX)
				r->matched[i]++;
			hit = r->matched[i] <= ru->times;
		}
		if (hit && drop < 0)
			drop = (int)i;
	}
	if (drop >= 0)
		r->dropped[drop]++;
	return drop;
}

int
emu_rule_format(const struct emu_rule *ru, char *buf, size_t len)
{
	if (ru->kind == EMU_RULE_DROP_NTH)
		return snprintf(buf, len, "drop-nth %" PRIu64, ru->nth);
	return snprintf(buf, len, "drop-psn 0x%" PRIx32 ":0x%" PRIx32 ":%" PRIu32, ru->qpn, ru->psn,
			ru->times);
}

const char *
emu_rule_kind_name(enum emu_rule_kind k)
{
	return k == EMU_RULE_DROP_NTH ? "drop-nth" : k == EMU_RULE_DROP_PSN ? "drop-psn" : "?";
}
