/* SPDX-License-Identifier: BSD-3-Clause */
#include "pfc_gen.h"

#include <string.h>

#include "pfc.h"

int
pfc_gen_init(struct pfc_gen *g, uint64_t xoff, uint64_t xon, uint16_t quanta, uint64_t link_bps)
{
	if (xon >= xoff || link_bps == 0)
		return -1;
	memset(g, 0, sizeof(*g));
	g->xoff = xoff;
	g->xon = xon;
	g->quanta = quanta ? quanta : PFC_GEN_MAX_QUANTA;
	g->pause_ns = pfc_quanta_to_ns(g->quanta, link_bps);
	g->refresh_ns = g->pause_ns / 2;
	return 0;
}

enum pfc_gen_event
pfc_gen_poll(struct pfc_gen *g, uint64_t now_ns, uint64_t level)
{
	if (!g->pausing) {
		/* RUNNING: pause the sender once the level reaches xoff */
		if (level < g->xoff)
			return PFC_GEN_NONE;
		g->pausing = true;
		g->last_xoff_ns = now_ns;
		g->n_xoff++;
		return PFC_GEN_XOFF;
	}
	/* PAUSING: resume at xon, else refresh the pause before it expires */
	if (level <= g->xon) {
		g->pausing = false;
		g->n_xon++;
		return PFC_GEN_XON;
	}
	if (now_ns >= g->last_xoff_ns && now_ns - g->last_xoff_ns >= g->refresh_ns) {
		g->last_xoff_ns = now_ns;
		g->n_refresh++;
		return PFC_GEN_REFRESH;
	}
	return PFC_GEN_NONE;
}
