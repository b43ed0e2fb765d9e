/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_rules.c
 * Deterministic drop rules: see emu_rules.h.
 */
#include "emu_rules.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "mad.h"
#include "mad_kind.h"
#include "net_bytes.h"
#include "net_frame.h"

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

static bool
ord_listed(const struct emu_rule *ru, uint32_t n)
{
	for (uint32_t k = 0; k < ru->nords && k < EMU_RULES_MAX_ORDS; k++)
		if (ru->ords[k] == n)
			return true;
	return false;
}

int
emu_rules_decide(struct emu_rules *r, uint32_t dqpn, uint32_t psn)
{
	return emu_rules_decide_mad(r, dqpn, psn, -1);
}

int
emu_rules_decide_mad(struct emu_rules *r, uint32_t dqpn, uint32_t psn, int mad_kind)
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
		} else if (ru->kind == EMU_RULE_DROP_MAD && mad_kind >= 0 &&
			   ru->mad_kind == mad_kind) {
			if (r->matched[i] < UINT32_MAX)
				r->matched[i]++;
			hit = ord_listed(ru, r->matched[i]);
		}
		if (hit && drop < 0)
			drop = (int)i;
	}
	if (drop >= 0)
		r->dropped[drop]++;
	return drop;
}

int
emu_rules_mad_kind(const uint8_t *frame, size_t len, const struct net_frame *fr)
{
	/* UDP 8 | BTH 12 | DETH 8 | MAD: class at byte 1, attribute at bytes 16-17 */
	size_t mad = (size_t)fr->l4_off + 8 + 12 + 8;

	if (fr->kind != NET_FRAME_ROCE || !fr->has_bth || fr->bth_dqpn != MAD_GSI_QPN ||
	    fr->bth_op != 0x64 || fr->l4_off == 0 || len < mad + 18)
		return -1;
	return (int)mad_kind_of_bytes(frame + mad, len - mad);
}

bool
emu_rules_have_mad(const struct emu_rules_params *p)
{
	for (uint32_t i = 0; i < p->n && i < EMU_RULES_MAX; i++)
		if (p->r[i].kind == EMU_RULE_DROP_MAD)
			return true;
	return false;
}

int
emu_rule_format(const struct emu_rule *ru, char *buf, size_t len)
{
	if (ru->kind == EMU_RULE_DROP_MAD) {
		const char *name = mad_kind_name((enum mad_kind)ru->mad_kind);
		int n = snprintf(buf, len, "drop-mad %s ", name ? name : "?");

		for (uint32_t k = 0; k < ru->nords && k < EMU_RULES_MAX_ORDS && n >= 0; k++) {
			size_t at = (size_t)n < len ? (size_t)n : len;
			int m =
			    snprintf(buf + at, len - at, "%s%" PRIu32, k ? "," : "", ru->ords[k]);

			n = m < 0 ? m : n + m;
		}
		return n;
	}
	if (ru->kind == EMU_RULE_DROP_NTH)
		return snprintf(buf, len, "drop-nth %" PRIu64, ru->nth);
	return snprintf(buf, len, "drop-psn 0x%" PRIx32 ":0x%" PRIx32 ":%" PRIu32, ru->qpn, ru->psn,
			ru->times);
}

const char *
emu_rule_kind_name(enum emu_rule_kind k)
{
	return k == EMU_RULE_DROP_NTH	? "drop-nth"
	       : k == EMU_RULE_DROP_PSN ? "drop-psn"
	       : k == EMU_RULE_DROP_MAD ? "drop-mad"
					: "?";
}
