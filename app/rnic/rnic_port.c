/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_port.c
 * The DPDK shell's transmit side: the clock, TX batching into mbufs (with the
 * engine's zero-copy buffers), the PFC checks around a TX burst, and the
 * roce_dev_ops the engine calls. Receiving is rnic_poll.c; every decision
 * about a frame is the DPDK-free core (rnic_core.h).
 */
#include "rnic_port.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "dp_clock.h"
#include "pfc.h"
#include "rnic_core.h"

/*
 * One clock per process (lib/dpdk dp_clock, epoch at boot); the TSC rate is one
 * machine-wide constant, so a benign race on the lazy init writes one value.
 */
static struct dp_clock rnic_clk;

uint64_t
rnic_now_ns(const struct rnic_port *p)
{
	(void)p;
	if (unlikely(rnic_clk.mult == 0))
		dp_clock_init(&rnic_clk, rte_get_tsc_hz(), 0);
	return dp_clock_now(&rnic_clk);
}

int
rnic_port_pfc_send_init(struct rnic_port *p, uint32_t xoff, uint32_t xon, uint16_t quanta,
			uint64_t link_bps, uint8_t mask)
{
	if (pfc_gen_init(&p->pfc_gen, xoff, xon, quanta, link_bps) < 0)
		return -EINVAL;
	p->pfc_send = true;
	p->pfc_send_mask = mask;
	p->rx_run = 0;
	/* real NICs report their descriptor ring's fill level; af_packet and af_xdp do not */
	p->rxq_count = rte_eth_rx_queue_count(p->port_id, p->queue) >= 0;
	return 0;
}

/*
 * The RX check before a TX burst: a PFC frame that arrived since the last poll
 * takes effect before more data goes out, so the data handed to the PMD after
 * a pause arrived stays within one TX burst (docs/pfc.md). Other frames are
 * set aside for the next rnic_port_poll() in their order.
 */
static void
rx_check_early(struct rnic_port *p)
{
	unsigned int room = RNIC_RX_EARLY - p->nrx_early, keep = p->nrx_early, want;
	uint64_t now;
	uint16_t n;

	if (room == 0)
		return; /* the poll loop is behind: the next poll finds the PFC */
	want = room < RNIC_BURST ? room : RNIC_BURST;
	n = rte_eth_rx_burst(p->port_id, p->queue, p->rx_early + keep, (uint16_t)want);
	rnic_port_rx_run_note(p, n, want);
	rnic_port_slow_rx(p, n);
	if (n == 0) {
		pfc_tx_rx_done(&p->pfc);
		return;
	}
	now = rnic_now_ns(p);
	p->cnt.rx_frames += n;
	p->cnt.rx_bursts++;
	for (unsigned int i = keep; i < keep + n; i++) {
		struct rte_mbuf *m = p->rx_early[i];
		const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
		size_t len = rte_pktmbuf_data_len(m);

		if (rte_pktmbuf_is_contiguous(m) && pfc_is_mac_ctrl(f, len)) {
			rnic_port_pfc_fanout(p, m);
			rnic_pfc_rx(p, f, len, now);
			p->cnt.pfc_rx_early++;
			rte_pktmbuf_free(m);
		} else {
			p->rx_early[p->nrx_early++] = m;
		}
	}
	pfc_tx_rx_done(&p->pfc);
}

/*
 * Hand the batched frames to the PMD. Frames the TX ring cannot take stay in
 * the batch, in order, for the next flush: the rnic never drops its own
 * frames. While the batch is full, ops_tx refuses the engine's frames
 * (-EBUSY) and the engine keeps them and retries on its next run, so a full
 * ring pushes back on the requester instead of turning into losses that
 * Go-Back-N would resend.
 */
void
rnic_port_flush(struct rnic_port *p)
{
	unsigned int sent = 0;
	bool data = false;

	if (p->ntx == 0)
		return;
	if (p->pfc.obey) {
		for (unsigned int i = 0; i < p->ntx && !data; i++)
			data = p->txprio[i] != 0xff && (p->pfc.pause.lossless >> p->txprio[i] & 1);
		if (data)
			rx_check_early(p);
	}
	/* a few tries only: what is left waits in the batch, nothing is lost */
	for (int tries = 0; sent < p->ntx && tries < RNIC_TX_TRIES; tries++)
		sent +=
		    rte_eth_tx_burst(p->port_id, p->queue, p->tx + sent, (uint16_t)(p->ntx - sent));
	if (data) {
		uint64_t now = rnic_now_ns(p);

		/* frames committed before a pause became known are its overshoot (pfc_tx_sent) */
		for (unsigned int i = 0; i < sent; i++)
			if (p->txprio[i] != 0xff)
				pfc_tx_sent(&p->pfc, p->txprio[i], p->txlen[i], now);
	}
	p->cnt.tx_frames += sent;
	p->cnt.tx_bursts += sent != 0;
	if (sent < p->ntx) {
		unsigned int left = p->ntx - sent;

		p->cnt.tx_ring_full++;
		memmove(p->tx, p->tx + sent, left * sizeof(p->tx[0]));
		memmove(p->txprio, p->txprio + sent, left * sizeof(p->txprio[0]));
		memmove(p->txlen, p->txlen + sent, left * sizeof(p->txlen[0]));
		p->ntx = left;
		return;
	}
	p->ntx = 0;
}

/*
 * Zero-copy TX: the engine builds frames with a payload straight into an mbuf
 * (ops->tx_buf), which saves a copy of up to 4 KiB per data packet. The mbuf
 * stays lent until the frame comes back through ops->tx, and is lent again if
 * the engine asks again first.
 */
static uint8_t *
ops_tx_buf(void *ctx, size_t len)
{
	struct rnic_port *p = ctx;

	if (!p->tx_lent) {
		p->tx_lent = rte_pktmbuf_alloc(p->pool);
		if (unlikely(!p->tx_lent))
			return NULL; /* the engine falls back to its scratch buffer */
	}
	if (unlikely(rte_pktmbuf_tailroom(p->tx_lent) < len))
		return NULL;
	return rte_pktmbuf_mtod(p->tx_lent, uint8_t *);
}

/*
 * Queue one frame for TX: the lent mbuf it was built in, or a copy in a fresh
 * one. @p prio is the 802.1Qbb priority of a RoCE frame, 0xff for control
 * frames (ARP, ND, ICMP), which PFC never pauses.
 */
static int
port_tx(struct rnic_port *p, const uint8_t *frame, size_t len, uint8_t prio)
{
	struct rte_mbuf *m;
	char *d;

	if (unlikely(p->ntx == RNIC_BURST)) {
		rnic_port_flush(p);
		if (p->ntx == RNIC_BURST) {
			/* the TX ring is still full: the engine keeps its frame (ops_tx) */
			if (prio == 0xff)
				p->cnt.tx_drop_full++;
			return -EBUSY;
		}
	}
	if (p->tx_lent && frame == rte_pktmbuf_mtod(p->tx_lent, uint8_t *)) {
		m = p->tx_lent;
		p->tx_lent = NULL;
		rte_pktmbuf_append(m, (uint16_t)len); /* fits: tx_buf checked the tailroom */
		p->txprio[p->ntx] = prio;
		p->txlen[p->ntx] = (uint16_t)len;
		p->tx[p->ntx++] = m;
		if (p->ntx == RNIC_BURST)
			rnic_port_flush(p);
		return 0;
	}
	m = rte_pktmbuf_alloc(p->pool);
	if (unlikely(!m)) {
		p->cnt.tx_drop_nombuf++;
		return -ENOBUFS;
	}
	d = rte_pktmbuf_append(m, (uint16_t)len);
	if (unlikely(!d)) {
		rte_pktmbuf_free(m);
		p->cnt.tx_drop_nombuf++;
		return -EMSGSIZE;
	}
	memcpy(d, frame, len);
	p->txprio[p->ntx] = prio;
	p->txlen[p->ntx] = (uint16_t)len;
	p->tx[p->ntx++] = m;
	if (p->ntx == RNIC_BURST)
		rnic_port_flush(p);
	return 0;
}

/*
 * The engine's frames: a frame whose priority is paused by PFC is refused
 * (ROCE_TX_PAUSED); the engine keeps it and retries on its next run (docs/transport.md
 * §2), so nothing is lost and no PSN advances while paused. A lent mbuf stays
 * lent for the retry.
 */
static int
ops_tx(void *ctx, const uint8_t *frame, size_t len)
{
	struct rnic_port *p = ctx;
	uint8_t prio = pfc_classify(&p->pfc_cls, frame, len);
	int rc;

	if (unlikely(p->pfc.pause.until_ns[prio & 7]) &&
	    pfc_tx_hold(&p->pfc, prio, rnic_now_ns(p))) {
		p->cnt.tx_pfc_held++;
		return ROCE_TX_PAUSED;
	}
	/*
	 * The pre-TX RX check has set aside all it can hold (the engine sent many
	 * bursts without a poll, e.g. perftest posting a deep queue of large
	 * WRITEs): it can no longer see a PFC frame, so lossless data waits for
	 * the next poll. This keeps the data sent after an XOFF arrived within the
	 * one-burst bound however long the engine runs between polls.
	 */
	if (unlikely(p->nrx_early == RNIC_RX_EARLY) && p->pfc.obey && prio < PFC_NUM_PRIO &&
	    (p->pfc.pause.lossless >> prio & 1)) {
		p->cnt.tx_rx_behind_held++;
		return -EBUSY;
	}
	rc = port_tx(p, frame, len, prio);
	if (unlikely(rc == -EBUSY))
		p->cnt.tx_ring_held++;
	return rc;
}

static uint64_t
ops_now(void *ctx)
{
	return rnic_now_ns(ctx);
}

static void
ops_log(void *ctx, enum roce_log_level level, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "rnic.roce: %s: %s\n",
		level <= ROCE_LOG_ERR	    ? "error"
		: level == ROCE_LOG_WARNING ? "warning"
		: level == ROCE_LOG_TRACE   ? "trace"
					    : "info",
		msg);
}

static int
ops_resolve(void *ctx, const union ibv_gid *gid, uint8_t mac[6])
{
	return rnic_neigh_resolve(ctx, gid->raw, mac);
}

const struct roce_dev_ops rnic_port_ops = {
    .tx = ops_tx,
    .now_ns = ops_now,
    .log = ops_log,
    .resolve_mac = ops_resolve,
    .tx_buf = ops_tx_buf,
};

/* the core's control frames (rnic_core.h): never paused by PFC */
int
rnic_port_tx_ctrl(struct rnic_port *p, const uint8_t *frame, size_t len)
{
	return port_tx(p, frame, len, 0xff);
}
