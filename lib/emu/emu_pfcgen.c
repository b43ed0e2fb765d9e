/* SPDX-License-Identifier: BSD-3-Clause */
#include "emu_pfcgen.h"

#include <string.h>

#include "emu_err.h"
#include "pfc.h"

static const char *const state_names[] = {"running", "pausing"};

const char *
emu_pfc_state_name(enum emu_pfc_state s)
{
	return (unsigned)s < 2 ? state_names[s] : "?";
}

int
emu_pfcgen_init(struct emu_pfcgen *g, const struct emu_pfcgen_params *p, struct emu_counters *cnt)
{
	if (cnt == NULL)
		return -EMU_E_INVAL;
	if (p->enabled &&
	    (p->xon_bytes >= p->xoff_bytes || p->prio >= PFC_NUM_PRIO || p->link_bps == 0))
		return -EMU_E_RANGE;
	memset(g, 0, sizeof(*g));
	g->p = *p;
	if (g->p.quanta == 0)
		g->p.quanta = EMU_PFC_XOFF_QUANTA;
	g->cnt = cnt;
	if (p->enabled)
		pfc_gen_init(&g->gen, p->xoff_bytes, p->xon_bytes, g->p.quanta, p->link_bps);
	return 0;
}

bool
emu_pfcgen_poll(struct emu_pfcgen *g, uint64_t now_ns, uint64_t q_bytes, struct emu_pfc_action *act)
{
	enum pfc_gen_event ev;

	act->send = false;
	act->prio = g->p.prio;
	act->quanta = 0;
	if (!g->p.enabled)
		return false;
	ev = pfc_gen_poll(&g->gen, now_ns, q_bytes);
	switch (ev) {
	case PFC_GEN_NONE:
		return false;
	case PFC_GEN_XOFF:
		g->cnt->v[EMU_CNT_PFC_XOFF]++;
		break;
	case PFC_GEN_REFRESH:
		g->cnt->v[EMU_CNT_PFC_REFRESH]++;
		break;
	case PFC_GEN_XON:
		g->cnt->v[EMU_CNT_PFC_XON]++;
		break;
	}
	act->send = true;
	act->quanta = pfc_gen_quanta(&g->gen, ev);
	return true;
}

uint64_t
emu_pfcgen_deadline(const struct emu_pfcgen *g)
{
	return g->p.enabled ? pfc_gen_deadline(&g->gen) : UINT64_MAX;
}
