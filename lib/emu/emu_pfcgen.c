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
emu_pfcgen_init(struct emu_pfcgen *g, const struct emu_pfcgen_params *p,
		struct emu_counters *cnt)
{
	if (cnt == NULL)
		return -EMU_E_INVAL;
	if (p->enabled && (p->xon_bytes >= p->xoff_bytes || p->prio >= PFC_NUM_PRIO ||
			   p->link_bps == 0))
		return -EMU_E_RANGE;
	memset(g, 0, sizeof(*g));
	g->p = *p;
	if (g->p.quanta == 0)
		g->p.quanta = EMU_PFC_XOFF_QUANTA;
	g->cnt = cnt;
	g->state = EMU_PFC_RUNNING;
	g->pause_ns = pfc_quanta_to_ns(g->p.quanta, p->link_bps ? p->link_bps : 1);
	g->refresh_ns = g->pause_ns / 2;
	return 0;
}

static void
emit(struct emu_pfcgen *g, struct emu_pfc_action *act, uint16_t quanta)
{
	act->send = true;
	act->prio = g->p.prio;
	act->quanta = quanta;
}

/* RUNNING: pause the sender once the backlog reaches xoff. */
static enum emu_pfc_state
on_running(struct emu_pfcgen *g, uint64_t now, uint64_t q, struct emu_pfc_action *act)
{
	if (q < g->p.xoff_bytes)
		return EMU_PFC_RUNNING;
	emit(g, act, g->p.quanta);
	g->last_xoff_ns = now;
	g->cnt->v[EMU_CNT_PFC_XOFF]++;
	return EMU_PFC_PAUSING;
}

/* PAUSING: resume at xon, else refresh the pause before it expires. */
static enum emu_pfc_state
on_pausing(struct emu_pfcgen *g, uint64_t now, uint64_t q, struct emu_pfc_action *act)
{
	if (q <= g->p.xon_bytes) {
		emit(g, act, 0);
		g->cnt->v[EMU_CNT_PFC_XON]++;
		return EMU_PFC_RUNNING;
	}
	if (now >= g->last_xoff_ns && now - g->last_xoff_ns >= g->refresh_ns) {
		emit(g, act, g->p.quanta);
		g->last_xoff_ns = now;
		g->cnt->v[EMU_CNT_PFC_REFRESH]++;
	}
	return EMU_PFC_PAUSING;
}

bool
emu_pfcgen_poll(struct emu_pfcgen *g, uint64_t now_ns, uint64_t q_bytes,
		struct emu_pfc_action *act)
{
	act->send = false;
	act->prio = g->p.prio;
	act->quanta = 0;
	if (!g->p.enabled)
		return false;
	switch (g->state) {
	case EMU_PFC_RUNNING:
		g->state = on_running(g, now_ns, q_bytes, act);
		break;
	case EMU_PFC_PAUSING:
		g->state = on_pausing(g, now_ns, q_bytes, act);
		break;
	}
	return act->send;
}

uint64_t
emu_pfcgen_deadline(const struct emu_pfcgen *g)
{
	if (!g->p.enabled || g->state != EMU_PFC_PAUSING)
		return UINT64_MAX;
	return g->last_xoff_ns + g->refresh_ns;
}
