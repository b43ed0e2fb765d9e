/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data path: the thin DPDK adapter around relay_core. One poll:
 *   1. RX both ports. MAC Control frames are parsed and acted on at once: PFC
 *      from the Local port pauses the Local egress (path R2L) and is
 *      re-originated out of the Remote port in the same poll (Swing); PFC from
 *      the Remote port pauses the Remote egress (path L2R). Data is classified
 *      (DSCP or PCP) and queued on its path and priority.
 *   2. Tick both paths: watchdogs, and XOFF/XON/refresh toward the local switch.
 *   3. TX: control frames first, then data the scheduler and pacer release.
 */
#include <string.h>

#include <rte_ethdev.h>

#include "net_frame.h"
#include "relay_app.h"

#define RELAY_BURST_MAX 256

/* Path whose queues receive data arriving on port @p in, and whose egress is the other port. */
static inline unsigned
path_of_ingress(unsigned in)
{
	return in == RELAY_LOCAL ? RELAY_L2R : RELAY_R2L;
}

/* Path whose egress is port @p out: PFC received on @p out pauses it. */
static inline unsigned
path_of_egress(unsigned out)
{
	return out == RELAY_LOCAL ? RELAY_R2L : RELAY_L2R;
}

/* Build a PFC frame from port @p out's MAC and queue it ahead of all data on that port. */
static void
ctrl_queue(struct relay_app *app, unsigned out, uint8_t enable, const uint16_t quanta[8])
{
	struct relay_port *pt = &app->port[out];
	struct rte_mbuf *m;
	uint8_t *buf;

	if (pt->nctrl >= RELAY_CTRL_MAX || (m = rte_pktmbuf_alloc(app->pool)) == NULL) {
		pt->tx_pfc_fail++;
		return;
	}
	buf = (uint8_t *)rte_pktmbuf_append(m, PFC_FRAME_LEN);
	if (buf == NULL || pfc_build(buf, PFC_FRAME_LEN, pt->mac.addr_bytes, enable, quanta) < 0) {
		rte_pktmbuf_free(m);
		pt->tx_pfc_fail++;
		return;
	}
	pt->ctrl[pt->nctrl++] = m;
}

static void
ctrl_flush(struct relay_port *pt)
{
	uint16_t sent;

	if (pt->nctrl == 0)
		return;
	sent = rte_eth_tx_burst(pt->id, 0, pt->ctrl, (uint16_t)pt->nctrl);
	pt->tx_pfc += sent;
	pt->tx_pkts += sent;
	pt->tx_bytes += (uint64_t)sent * PFC_FRAME_LEN;
	if (sent < pt->nctrl)
		memmove(pt->ctrl, pt->ctrl + sent, (pt->nctrl - sent) * sizeof(pt->ctrl[0]));
	pt->nctrl -= sent;
}

/* A MAC Control frame arrived on port @p in. */
static void
mac_ctrl_rx(struct relay_app *app, unsigned in, const uint8_t *buf, uint32_t len, uint64_t now)
{
	struct relay_port *pt = &app->port[in];
	struct relay_path *eg = &app->path[path_of_egress(in)];
	struct pfc_frame f;
	uint16_t q[PFC_NUM_PRIO];
	uint8_t obeyed, en;

	if (pfc_parse(buf, len, &f) < 0) {
		pt->rx_pfc_bad++;
		eg->pfc_bad++;
		return;
	}
	if (f.opcode == PAUSE_OPCODE) {
		pt->rx_pause_ignored++; /* 802.3x is off when PFC is on (802.3 Annex 31D) */
		return;
	}
	pt->rx_pfc++;
	obeyed = relay_pfc_rx(eg, &f, now);
	if (in != RELAY_LOCAL)
		return;
	/*
	 * Swing (Chen et al., TPDS 2023) §5.2, Fig. 8: "the local port which is connected to the
	 * local switch requires to relay the received PFC messages to the remote
	 * side" -- at once, own SA, same duration at the Remote port's rate.
	 */
	en = relay_convert(&f, obeyed, app->port[RELAY_LOCAL].rate_bps,
			   app->port[RELAY_REMOTE].rate_bps, q);
	if (en == 0)
		return;
	ctrl_queue(app, RELAY_REMOTE, en, q);
	eg->pfc_relayed++;
	for (unsigned n = 0; n < PFC_NUM_PRIO; n++)
		if (en >> n & 1)
			eg->pfc_relayed_prio[n]++;
}

static uint32_t
rx_port(struct relay_app *app, unsigned in, uint64_t *now)
{
	struct rte_mbuf *rx[RELAY_BURST_MAX];
	struct relay_port *pt = &app->port[in];
	struct relay_path *path = &app->path[path_of_ingress(in)];
	uint16_t n = rte_eth_rx_burst(pt->id, 0, rx, (uint16_t)app->prm.burst);
	bool had_pfc = false;
	uint64_t t0;

	if (n == 0) {
		/* the port could not receive: the pool is empty (the frames wait in the PMD) */
		if (unlikely(rte_mempool_avail_count(app->pool) < app->prm.burst))
			pt->rx_pool_empty++;
		return 0;
	}
	t0 = *now = relay_now_ns();
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = rx[i];
		const uint8_t *buf = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t len = rte_pktmbuf_data_len(m);

		pt->rx_pkts++;
		pt->rx_bytes += len;
		if (unlikely(pfc_is_mac_ctrl(buf, len))) {
			mac_ctrl_rx(app, in, buf, len, t0);
			had_pfc = true;
			rte_pktmbuf_free(m);
			continue;
		}
		if (unlikely(pt->rx_cut_len && len >= pt->rx_cut_len)) {
			struct net_frame fr;

			/* longer than the port's ring frame: cut on the way in, not relayed */
			net_frame_classify(buf, len, &fr);
			if (net_frame_rx_cut(buf, len, &fr, pt->rx_cut_len)) {
				pt->rx_cut++;
				rte_pktmbuf_free(m);
				continue;
			}
		}
		if (relay_enqueue(path, pfc_classify(&app->cls, buf, len), m, m->pkt_len, t0) !=
		    RELAY_ENQ_OK)
			rte_pktmbuf_free(m);
	}
	if (had_pfc && in == RELAY_LOCAL && app->port[RELAY_REMOTE].nctrl) {
		uint64_t dt;

		ctrl_flush(
		    &app->port[RELAY_REMOTE]); /* the relayed PFC leaves before anything else */
		dt = relay_now_ns() - t0;
		app->relay_lat_n++;
		app->relay_lat_sum_ns += dt;
		if (dt > app->relay_lat_max_ns)
			app->relay_lat_max_ns = dt;
	}
	return n;
}

static uint32_t
tx_path(struct relay_app *app, unsigned pid, uint64_t now)
{
	struct relay_path *path = &app->path[pid];
	struct relay_port *pt = &app->port[pid == RELAY_L2R ? RELAY_REMOTE : RELAY_LOCAL];
	void *out[RELAY_BURST_MAX];
	uint32_t lens[RELAY_BURST_MAX];
	uint8_t prios[RELAY_BURST_MAX];
	unsigned n;
	uint16_t sent;

	ctrl_flush(pt);
	if (pt->nctrl)
		return 0; /* control frames first: data waits until they are out */
	n = relay_dequeue(path, now, out, lens, prios, app->prm.burst);
	if (n == 0)
		return 0;
	sent = rte_eth_tx_burst(pt->id, 0, (struct rte_mbuf **)out, (uint16_t)n);
	for (unsigned i = 0; i < sent; i++) {
		pt->tx_pkts++;
		pt->tx_bytes += lens[i];
	}
	if (sent < n) {
		pt->tx_full++;
		for (unsigned i = n; i-- > sent;)
			relay_requeue_head(path, prios[i], out[i], lens[i]);
	}
	return sent;
}

uint32_t
relay_dp_poll(struct relay_app *app, uint64_t *next_ns)
{
	void *flushed[RELAY_BURST_MAX];
	uint64_t now = relay_now_ns(), nx;
	uint32_t work = 0;

	work += rx_port(app, RELAY_LOCAL, &now);
	work += rx_port(app, RELAY_REMOTE, &now);
	for (unsigned p = 0; p < RELAY_NPATH; p++) {
		struct relay_pfc_out po;
		unsigned nf = relay_tick(&app->path[p], now, &po, flushed, RELAY_BURST_MAX);

		for (unsigned i = 0; i < nf; i++)
			rte_pktmbuf_free(flushed[i]);
		work += nf;
		if (po.enable) {
			/* our Local-ingress queues crossed a threshold: PFC toward the local switch
			 */
			ctrl_queue(app, RELAY_LOCAL, po.enable, po.quanta);
			work++;
		}
	}
	now = relay_now_ns();
	for (unsigned p = 0; p < RELAY_NPATH; p++)
		work += tx_path(app, p, now);
	*next_ns = UINT64_MAX;
	for (unsigned p = 0; p < RELAY_NPATH; p++) {
		nx = relay_next_event(&app->path[p], now);
		if (nx < *next_ns)
			*next_ns = nx;
	}
	for (unsigned i = 0; i < RELAY_NPORT; i++)
		if (app->port[i].nctrl)
			*next_ns = now;
	return work;
}

void
relay_dp_drain(struct relay_app *app)
{
	void *out[RELAY_BURST_MAX];
	uint32_t lens[RELAY_BURST_MAX];
	uint8_t prios[RELAY_BURST_MAX];

	for (unsigned p = 0; p < RELAY_NPATH; p++) {
		struct relay_path *path = &app->path[p];
		unsigned n;

		path->pacer.rate_bps = 0; /* no pacing: take everything */
		for (unsigned q = 0; q < PFC_NUM_PRIO; q++)
			path->pause.until_ns[q] = 0;
		path->wd_on = false;
		while ((n = relay_dequeue(path, UINT64_MAX / 2, out, lens, prios, RELAY_BURST_MAX)))
			rte_pktmbuf_free_bulk((struct rte_mbuf **)out, n);
	}
	for (unsigned i = 0; i < RELAY_NPORT; i++) {
		rte_pktmbuf_free_bulk(app->port[i].ctrl, app->port[i].nctrl);
		app->port[i].nctrl = 0;
	}
}
