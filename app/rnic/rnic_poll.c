/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_poll.c
 * The rnic's poll loop, the DPDK side of receiving: RX bursts (and the frames
 * the pre-TX RX check set aside), --lcores hand-off through the owners' rings,
 * each frame classified once and handed with its classification to the
 * core's dispatcher (rnic_rx_classified) and RoCEv2 to the engine, the
 * engine's timers, the TX flush, the idle back-off bounded by the next
 * timer, and the resolve loops of the bring-up.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "dp_port.h"
#include "pfc.h"
#include "rnic_cm.h"
#include "rnic_core.h"

void
rnic_port_pfc_fanout(struct rnic_port *p, struct rte_mbuf *m)
{
	struct rnic_steer *s = p->steer;

	for (unsigned int l = 0; s && l < s->n; l++) {
		if (l == p->lcore_idx)
			continue;
		rte_mbuf_refcnt_update(m, 1);
		if (rte_ring_mp_enqueue(s->ring[l], m) == 0) {
			p->cnt.pfc_fanout++;
		} else {
			rte_mbuf_refcnt_update(m, -1);
			p->cnt.rx_handoff_drop++;
		}
	}
}

void
rnic_port_slow_rx(struct rnic_port *p, unsigned int got)
{
	if (likely(p->slow_rx_us == 0) || got == 0)
		return;
	rte_delay_us_sleep(p->slow_rx_us);
	p->cnt.rx_slow_sleeps++;
}

/* This lcore's receive backlog in frames: the ring's fill level, else the full-burst run. */
static uint32_t
rx_level(const struct rnic_port *p)
{
	if (p->rxq_count) {
		int c = rte_eth_rx_queue_count(p->port_id, p->queue);

		if (c >= 0)
			return (uint32_t)c;
	}
	return p->rx_run;
}

/* --pfc-xoff (rnic_pfc_send_poll decides): the PFC frame goes out at once, ahead of any data */
static void
pfc_send_tick(struct rnic_port *p, uint64_t now)
{
	enum pfc_gen_event ev;
	uint8_t f[64];
	int n = rnic_pfc_send_poll(p, now, rx_level(p), f, sizeof(f), &ev);

	if (n <= 0 || rnic_port_tx_ctrl(p, f, (size_t)n) < 0)
		return;
	rnic_port_flush(p);
	rnic_pfc_send_count(p, ev);
}

/*
 * --lcores: keep this lcore's frames among rx[0..n), hand the others to their
 * owner's ring (in order, one burst per owner would reorder nothing: a QP's
 * frames all go to one ring). Returns the frames kept; frs[i] is kept frame
 * i's classification.
 */
static unsigned int
steer_dispatch(struct rnic_port *p, struct rte_mbuf **rx, struct net_frame *frs, unsigned int n)
{
	struct rnic_steer *s = p->steer;
	unsigned int keep = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = rx[i];
		const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
		size_t len = rte_pktmbuf_data_len(m);
		struct net_frame fr;
		enum net_frame_kind k =
		    rte_pktmbuf_is_contiguous(m) ? rnic_classify(f, len, &fr) : NET_FRAME_BAD_L2;
		unsigned int o = k == NET_FRAME_ROCE ? rnic_steer_frame(s, &fr) : 0;

		if (k == NET_FRAME_MAC_CTRL) {
			/* PFC: applied here and by every other lcore */
			rnic_port_pfc_fanout(p, m);
			frs[keep] = fr;
			rx[keep++] = m;
		} else if (o == p->lcore_idx) {
			frs[keep] = fr;
			rx[keep++] = m;
		} else if (rte_ring_mp_enqueue(s->ring[o], m) == 0) {
			p->cnt.rx_handoff++;
		} else {
			p->cnt.rx_handoff_drop++;
			rte_pktmbuf_free(m);
		}
	}
	return keep;
}

static unsigned int poll_one(struct rnic_port *p);

unsigned int
rnic_port_poll(struct rnic_port *p)
{
	unsigned int work = 0;

	/* bring-up, before the workers run: lcore 0 serves every lcore's queue */
	if (p->steer && p->lcore_idx == 0 && !p->steer->running)
		for (unsigned int l = 1; l < p->steer->n; l++)
			work += poll_one(p->steer->port[l]);
	work += poll_one(p);
	if (p->tick)
		p->tick(p->tick_arg);
	if (p->cm)
		rnic_cm_poll(p->cm); /* the CM's retry and TIMEWAIT timers */
	return work;
}

static unsigned int
poll_one(struct rnic_port *p)
{
	struct rte_mbuf *rx[RNIC_RX_EARLY + 2 * RNIC_BURST];
	const uint8_t *frames[RNIC_RX_EARLY + 2 * RNIC_BURST];
	size_t lens[RNIC_RX_EARLY + 2 * RNIC_BURST];
	/* each frame's classification, made once: by the steering, else below */
	struct net_frame frs[RNIC_RX_EARLY + 2 * RNIC_BURST];
	unsigned int nroce = 0, n = p->nrx_early, fresh, nclassified = 0;
	uint64_t now, tx0 = p->cnt.tx_frames;

	/* frames the pre-TX RX check set aside come first, in arrival order */
	if (n)
		memcpy(rx, p->rx_early, n * sizeof(rx[0]));
	p->nrx_early = 0;
	fresh = rte_eth_rx_burst(p->port_id, p->queue, rx + n, RNIC_BURST);
	rnic_port_rx_run_note(p, fresh, RNIC_BURST);
	n += fresh;
	if (p->steer) {
		n = steer_dispatch(p, rx, frs, n);
		nclassified = n;
		unsigned int r = rte_ring_sc_dequeue_burst(p->steer->ring[p->lcore_idx],
							   (void **)(rx + n), RNIC_BURST, NULL);
		n += r;
		p->cnt.rx_from_ring += r;
	}
	now = rnic_now_ns(p);
	if (p->last_poll_end_ns && now - p->last_poll_end_ns > p->cnt.poll_gap_max_ns)
		p->cnt.poll_gap_max_ns = now - p->last_poll_end_ns;
	p->cnt.polls++;
	p->cnt.rx_frames += fresh;
	p->cnt.rx_bursts += fresh != 0;
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = rx[i];
		uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
		size_t len = rte_pktmbuf_data_len(m);

		if (unlikely(!rte_pktmbuf_is_contiguous(m))) {
			p->cnt.rx_multiseg++;
			continue;
		}
		if (i >= nclassified)
			rnic_classify(f, len, &frs[i]);
		if (rnic_rx_classified(p, f, len, &frs[i], now)) {
			/* the engine's frames, packed in place: nroce <= i */
			if (nroce != i)
				frs[nroce] = frs[i];
			frames[nroce] = f;
			lens[nroce++] = len;
		}
	}
	pfc_tx_rx_done(&p->pfc); /* the engine's frames from here on are after this RX check */
	if (p->pfc_send)
		pfc_send_tick(p, now);
	if (nroce) {
		roce_dev_rx_burst_classified(p->dev, frames, lens, frs, nroce);
		p->cnt.rx_roce += nroce;
	}
	if (n)
		rte_pktmbuf_free_bulk(rx, n);
	roce_dev_poll(p->dev, rnic_now_ns(p));
	unsigned int work = n + p->ntx;
	rnic_port_flush(p);
	/* frames left batched by a full TX ring are work only while the ring drains */
	if (p->ntx && p->cnt.tx_frames == tx0)
		work = n;
	uint64_t end = rnic_now_ns(p);

	rnic_pfc_sync_counters(p, end);
	if (end - now > p->cnt.poll_busy_max_ns)
		p->cnt.poll_busy_max_ns = end - now;
	rnic_port_slow_rx(p, fresh);
	p->last_poll_end_ns = rnic_now_ns(p);
	return work;
}

int
rnic_port_resolve(struct rnic_port *p, uint32_t ip, uint8_t mac[6], unsigned int timeout_ms)
{
	uint64_t start = rnic_now_ns(p), last = 0;
	uint32_t hop = rnic_neigh_next_hop(p, ip);

	while (rnic_now_ns(p) - start < (uint64_t)timeout_ms * 1000000ull) {
		uint64_t now = rnic_now_ns(p);

		if (net_neigh_lookup(&p->neigh, hop, mac, now))
			return 0;
		if (now - last > 100000000ull) {
			rnic_neigh_arp_request(p, hop);
			last = now;
		}
		if (rnic_port_poll(p) == 0)
			rte_delay_us_sleep(200);
	}
	return -ETIMEDOUT;
}

int
rnic_port_resolve6(struct rnic_port *p, const uint8_t ip6[16], uint8_t mac[6],
		   unsigned int timeout_ms)
{
	uint64_t start = rnic_now_ns(p);

	while (rnic_now_ns(p) - start < (uint64_t)timeout_ms * 1000000ull) {
		int rc = rnic_neigh_resolve(p, ip6, mac);

		if (rc != -EAGAIN)
			return rc;
		if (rnic_port_poll(p) == 0)
			rte_delay_us_sleep(200);
	}
	return -ETIMEDOUT;
}

void
rnic_port_idle(struct rnic_port *p, struct dp_backoff *bo, unsigned int work)
{
	/*
	 * The deadline only matters for a poll that will sleep: finding it scans
	 * every QP slot, which cost ~16 % of a busy-polling responder's CPU.
	 */
	if (work || bo->busy_poll || bo->idle + 1 < bo->spins) {
		dp_backoff_step(bo, work);
		return;
	}
	uint64_t d = roce_dev_next_deadline(p->dev), now = rnic_now_ns(p);
	uint64_t resume = pfc_tx_next_expiry(&p->pfc);
	uint32_t max = bo->max_us;

	if (resume < d) /* a pause that ends by its timer resumes the engine on time */
		d = resume;
	if (p->pfc_send && pfc_gen_deadline(&p->pfc_gen) < d) /* our XOFF's refresh */
		d = pfc_gen_deadline(&p->pfc_gen);

	if (d != UINT64_MAX && !work) {
		uint64_t us = d > now ? (d - now) / 1000 : 0;

		if (us < bo->max_us)
			bo->max_us = us > bo->min_us ? (uint32_t)us : bo->min_us;
		if (bo->sleep_us > bo->max_us)
			bo->sleep_us = bo->max_us;
	}
	dp_backoff_step(bo, work);
	bo->max_us = max;
}
