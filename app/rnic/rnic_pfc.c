/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_pfc.c
 * 802.1Qbb PFC on the rnic's port, the decisions (rnic_core.h; docs/pfc.md):
 * received PFC pauses the engine's frames of a paused priority (lib/net
 * pfc_tx), and with --pfc-xoff the rnic pauses its peer when its own receive
 * path falls behind (lib/net pfc_gen). The DPDK shell measures the backlog and
 * sends the frames.
 */
#include "rnic_core.h"

#include "pfc.h"

void
rnic_port_pfc_init(struct rnic_port *p, bool obey, uint8_t lossless, uint64_t link_bps,
		   uint8_t own_prio)
{
	pfc_classifier_init(&p->pfc_cls, p->vlan_tci >= 0 ? PFC_TRUST_PCP : PFC_TRUST_DSCP);
	pfc_tx_init(&p->pfc, link_bps, lossless, obey);
	p->own_prio = own_prio;
}

/* A MAC control frame: 802.1Qbb PFC updates the pause timers (802.3x PAUSE is ignored). */
void
rnic_pfc_rx(struct rnic_port *p, const uint8_t *f, size_t len, uint64_t now)
{
	struct pfc_frame pf;

	p->cnt.rx_pfc++;
	if (pfc_parse(f, len, &pf) < 0) {
		p->cnt.pfc_rx_bad++;
		return;
	}
	pfc_tx_rx(&p->pfc, &pf, now);
}

void
rnic_pfc_sync_counters(struct rnic_port *p, uint64_t now)
{
	const struct pfc_tx *t = &p->pfc;

	p->cnt.pfc_rx_xoff = t->rx_xoff;
	p->cnt.pfc_rx_xon = t->rx_xon;
	p->cnt.pfc_rx_ignored = t->rx_ignored;
	p->cnt.pfc_pauses = t->pauses;
	p->cnt.pfc_overshoot_bytes = t->overshoot_bytes;
	p->cnt.pfc_overshoot_frames = t->overshoot_frames;
	p->cnt.pfc_overshoot_max_bytes = t->overshoot_max_bytes;
	p->cnt.pfc_overshoot_max_frames = t->overshoot_max_frames;
	p->cnt.pfc_xoff_window_bytes = t->xoff_window_bytes;
	p->cnt.pfc_xoff_window_max_frames = t->xoff_window_max_frames;
	p->cnt.tx_paused_ns = pfc_pause_total_ns(&t->pause, p->own_prio, now);
}

/*
 * --pfc-xoff: the receive path fell behind, so pause the peer's lossless
 * priorities before the ring overflows (pfc_gen.h: XOFF at xoff, refresh at
 * half the pause, XON at xon). The frame goes out at once, ahead of any data.
 * With --lcores, PFC pauses the whole port: every lcore publishes its own
 * backlog, and lcore 0 alone runs the generator on the largest of them, so
 * the peer resumes only once every queue has caught up.
 */
int
rnic_pfc_send_poll(struct rnic_port *p, uint64_t now, uint32_t own_level, uint8_t *f, size_t cap,
		   enum pfc_gen_event *ev)
{
	uint16_t q[PFC_NUM_PRIO] = {0};
	uint64_t level = own_level;
	int n;

	if (p->steer) {
		if (p->lcore_idx != 0) {
			__atomic_store_n(&p->rx_level_pub, (uint32_t)level, __ATOMIC_RELAXED);
			return 0;
		}
		for (unsigned int l = 1; l < p->steer->n; l++) {
			uint32_t o =
			    __atomic_load_n(&p->steer->port[l]->rx_level_pub, __ATOMIC_RELAXED);

			if (o > level)
				level = o;
		}
	}
	if (level > p->cnt.rx_backlog_max)
		p->cnt.rx_backlog_max = level;
	*ev = pfc_gen_poll(&p->pfc_gen, now, level);
	if (*ev == PFC_GEN_NONE)
		return 0;
	for (unsigned int i = 0; i < PFC_NUM_PRIO; i++)
		if (p->pfc_send_mask >> i & 1)
			q[i] = pfc_gen_quanta(&p->pfc_gen, *ev);
	n = pfc_build(f, cap, p->mac, p->pfc_send_mask, q);
	return n > 0 ? n : 0;
}

void
rnic_pfc_send_count(struct rnic_port *p, enum pfc_gen_event ev)
{
	if (ev == PFC_GEN_XOFF)
		p->cnt.pfc_sent_xoff++;
	else if (ev == PFC_GEN_REFRESH)
		p->cnt.pfc_sent_refresh++;
	else
		p->cnt.pfc_sent_xon++;
}
