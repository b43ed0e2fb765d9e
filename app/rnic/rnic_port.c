/* SPDX-License-Identifier: BSD-3-Clause */
#include "rnic_port.h"

#include "dp_clock.h"
#include "dp_port.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "net_bytes.h"
#include "net_hdr.h"
#include "pfc.h"
#include "rw_json.h"

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

void
rnic_port_pfc_init(struct rnic_port *p, bool obey, uint8_t lossless, uint64_t link_bps,
		   uint8_t own_prio)
{
	pfc_classifier_init(&p->pfc_cls, p->vlan_tci >= 0 ? PFC_TRUST_PCP : PFC_TRUST_DSCP);
	pfc_tx_init(&p->pfc, link_bps, lossless, obey);
	p->own_prio = own_prio;
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
 * A full RX burst means the ring still held at least a burst: the rnic has not
 * caught up. Frames read in back-to-back full bursts are a lower bound of the
 * backlog for PMDs that cannot report their ring's fill level.
 */
static inline void
rx_run_note(struct rnic_port *p, unsigned int got, unsigned int asked)
{
	p->rx_run = got == asked ? p->rx_run + got : got;
}

static int port_tx(struct rnic_port *p, const uint8_t *frame, size_t len, uint8_t prio);

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

/*
 * --pfc-xoff: the receive path fell behind, so pause the peer's lossless
 * priorities before the ring overflows (pfc_gen.h: XOFF at xoff, refresh at
 * half the pause, XON at xon). The frame goes out at once, ahead of any data.
 * With --lcores, PFC pauses the whole port: every lcore publishes its own
 * backlog, and lcore 0 alone runs the generator on the largest of them, so
 * the peer resumes only once every queue has caught up.
 */
static void
pfc_send_tick(struct rnic_port *p, uint64_t now)
{
	uint16_t q[PFC_NUM_PRIO] = {0};
	uint64_t level = rx_level(p);
	enum pfc_gen_event ev;
	uint8_t f[64];
	int n;

	if (p->steer) {
		if (p->lcore_idx != 0) {
			__atomic_store_n(&p->rx_level_pub, (uint32_t)level, __ATOMIC_RELAXED);
			return;
		}
		for (unsigned int l = 1; l < p->steer->n; l++) {
			uint32_t o = __atomic_load_n(&p->steer->port[l]->rx_level_pub, __ATOMIC_RELAXED);

			if (o > level)
				level = o;
		}
	}
	if (level > p->cnt.rx_backlog_max)
		p->cnt.rx_backlog_max = level;
	ev = pfc_gen_poll(&p->pfc_gen, now, level);
	if (ev == PFC_GEN_NONE)
		return;
	for (unsigned int i = 0; i < PFC_NUM_PRIO; i++)
		if (p->pfc_send_mask >> i & 1)
			q[i] = pfc_gen_quanta(&p->pfc_gen, ev);
	n = pfc_build(f, sizeof(f), p->mac, p->pfc_send_mask, q);
	if (n <= 0 || port_tx(p, f, (size_t)n, 0xff) < 0)
		return;
	rnic_port_flush(p);
	if (ev == PFC_GEN_XOFF)
		p->cnt.pfc_sent_xoff++;
	else if (ev == PFC_GEN_REFRESH)
		p->cnt.pfc_sent_refresh++;
	else
		p->cnt.pfc_sent_xon++;
}

/* Copy the PFC meter's counters into the port's (the ones telemetry and --json read). */
static void
pfc_sync_counters(struct rnic_port *p, uint64_t now)
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

/* A MAC control frame: 802.1Qbb PFC updates the pause timers (802.3x PAUSE is ignored). */
static void
handle_pfc(struct rnic_port *p, const uint8_t *f, size_t len, uint64_t now)
{
	struct pfc_frame pf;

	p->cnt.rx_pfc++;
	if (pfc_parse(f, len, &pf) < 0) {
		p->cnt.pfc_rx_bad++;
		return;
	}
	pfc_tx_rx(&p->pfc, &pf, now);
}

/*
 * The RX check before a TX burst: a PFC frame that arrived since the last poll
 * takes effect before more data goes out, so the data handed to the PMD after
 * a pause arrived stays within one TX burst (docs/pfc.md). Other frames are
 * set aside for the next rnic_port_poll() in their order.
 */
/*
 * --lcores: a PFC frame pauses the whole port, so every lcore's transmit gate
 * must see it. The lcore that read it hands the same mbuf (reference counted,
 * read-only) to every other lcore's ring; each applies it and frees its
 * reference. Frames taken from a ring are never handed on again.
 */
static void
pfc_fanout(struct rnic_port *p, struct rte_mbuf *m)
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

/* --slow-rx-us (test aid): a receive path that falls behind, after every read that got frames */
static inline void
slow_rx(struct rnic_port *p, unsigned int got)
{
	if (likely(p->slow_rx_us == 0) || got == 0)
		return;
	rte_delay_us_sleep(p->slow_rx_us);
	p->cnt.rx_slow_sleeps++;
}

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
	rx_run_note(p, n, want);
	slow_rx(p, n);
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
			pfc_fanout(p, m);
			handle_pfc(p, f, len, now);
			p->cnt.pfc_rx_early++;
			rte_pktmbuf_free(m);
		} else {
			p->rx_early[p->nrx_early++] = m;
		}
	}
	pfc_tx_rx_done(&p->pfc);
}

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
	for (int tries = 0; sent < p->ntx && tries < 64; tries++)
		sent += rte_eth_tx_burst(p->port_id, p->queue, p->tx + sent, (uint16_t)(p->ntx - sent));
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
		p->cnt.tx_drop_full += p->ntx - sent;
		rte_pktmbuf_free_bulk(p->tx + sent, p->ntx - sent);
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
 * (-EBUSY); the engine keeps it and retries on its next run (docs/transport.md
 * §2), so nothing is lost and no PSN advances while paused. A lent mbuf stays
 * lent for the retry.
 */
static int
ops_tx(void *ctx, const uint8_t *frame, size_t len)
{
	struct rnic_port *p = ctx;
	uint8_t prio = pfc_classify(&p->pfc_cls, frame, len);

	if (unlikely(p->pfc.pause.until_ns[prio & 7]) &&
	    pfc_tx_hold(&p->pfc, prio, rnic_now_ns(p))) {
		p->cnt.tx_pfc_held++;
		return -EBUSY;
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
	return port_tx(p, frame, len, prio);
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
	fprintf(stderr, "rnic.roce: %s: %s\n", level <= ROCE_LOG_ERR ? "error" :
		level == ROCE_LOG_WARNING ? "warning" : "info", msg);
}

static void
send_arp_request(struct rnic_port *p, uint32_t target)
{
	struct net_arp a = {.op = NET_ARP_OP_REQUEST, .spa = p->ip, .tpa = target};
	uint8_t f[64];
	int n;

	memcpy(a.sha, p->mac, 6);
	n = net_arp_build(f, sizeof(f), &a, p->vlan_tci);
	if (n > 0 && port_tx(p, f, (size_t)n, 0xff) == 0)
		p->cnt.arp_requests_sent++;
}

/* Next hop for a peer: itself on-link, else the gateway. */
static uint32_t
next_hop(const struct rnic_port *p, uint32_t ip)
{
	return (p->gw && !net_same_subnet(ip, p->ip, p->prefix)) ? p->gw : ip;
}

static void
send_nd_solicit(struct rnic_port *p, const uint8_t target[16])
{
	uint8_t f[128];
	int n = net_nd_build_ns(f, sizeof(f), p->mac, p->ip6, target, p->vlan_tci);

	if (n > 0 && port_tx(p, f, (size_t)n, 0xff) == 0)
		p->cnt.nd_solicits_sent++;
}

/* IPv6 peers are on-link (RoCEv2 peers here share the L2 segment): ND, RFC 4861 7.2 */
static int
resolve6(struct rnic_port *p, const uint8_t peer[16], uint8_t mac[6])
{
	uint64_t now = rnic_now_ns(p);
	/* next hop: the peer itself on-link, else the gateway */
	const uint8_t *ip6 = p->has_gw6 && !net_ip6_on_link(peer, p->ip6, p->ip6_prefix) ? p->gw6
											  : peer;

	if (!p->has_ip6)
		return -EAFNOSUPPORT;
	if (net_neigh6_lookup(&p->neigh6, ip6, mac, now))
		return 0;
	/* --lcores: lcore 0 resolves; during bring-up (only the main lcore runs) copy its entry */
	if (p->steer && p->lcore_idx && !p->steer->running &&
	    net_neigh6_lookup(&p->steer->port[0]->neigh6, ip6, mac, now)) {
		net_neigh6_learn(&p->neigh6, ip6, mac, now);
		return 0;
	}
	if (now - p->last_ns_ns > 100000000ull) {
		send_nd_solicit(p, ip6);
		p->last_ns_ns = now;
	}
	return -EAGAIN;
}

static int
ops_resolve(void *ctx, const union ibv_gid *gid, uint8_t mac[6])
{
	struct rnic_port *p = ctx;
	uint64_t now = rnic_now_ns(p);
	uint32_t ip;

	if (!net_mapped_to_ip4(gid->raw, &ip))
		return resolve6(p, gid->raw, mac);
	ip = next_hop(p, ip);
	if (net_neigh_lookup(&p->neigh, ip, mac, now))
		return 0;
	if (p->steer && p->lcore_idx && !p->steer->running &&
	    net_neigh_lookup(&p->steer->port[0]->neigh, ip, mac, now)) {
		net_neigh_learn(&p->neigh, ip, mac, now);
		return 0;
	}
	if (now - p->last_arp_ns > 100000000ull) {
		send_arp_request(p, ip);
		p->last_arp_ns = now;
	}
	return -EAGAIN;
}

const struct roce_dev_ops rnic_port_ops = {
	.tx = ops_tx,
	.now_ns = ops_now,
	.log = ops_log,
	.resolve_mac = ops_resolve,
	.tx_buf = ops_tx_buf,
};

static void
handle_arp(struct rnic_port *p, const uint8_t *f, size_t len)
{
	struct net_arp a;
	uint8_t out[64];
	int n;

	if (net_arp_parse(f, len, &a) < 0) {
		p->cnt.rx_arp_other++;
		return;
	}
	/* learn whoever talks to us (RFC 826 merge step) */
	if (a.tpa == p->ip || a.op == NET_ARP_OP_REPLY)
		net_neigh_learn(&p->neigh, a.spa, a.sha, rnic_now_ns(p));
	if (a.op == NET_ARP_OP_REQUEST && a.tpa == p->ip) {
		struct net_arp r = {.op = NET_ARP_OP_REPLY, .spa = p->ip, .tpa = a.spa};

		memcpy(r.sha, p->mac, 6);
		memcpy(r.tha, a.sha, 6);
		n = net_arp_build(out, sizeof(out), &r, p->vlan_tci);
		if (n > 0)
			port_tx(p, out, (size_t)n, 0xff);
		p->cnt.rx_arp_req++;
	} else if (a.op == NET_ARP_OP_REPLY && a.tpa == p->ip) {
		p->cnt.rx_arp_reply++;
	} else {
		p->cnt.rx_arp_other++;
	}
}

/* ICMPv6: answer Neighbor Solicitations for our address, learn from NS and NA. */
static void
handle_icmp6(struct rnic_port *p, uint8_t *f, size_t len)
{
	struct net_nd nd;
	uint8_t out[128];
	int n;

	/* ping -6: answered in place, like the IPv4 echo */
	if (p->has_ip6 && (n = net_icmp6_echo_reply(f, len, p->ip6, p->mac)) > 0) {
		p->cnt.rx_icmp6_echo++;
		port_tx(p, f, (size_t)n, 0xff);
		return;
	}
	if (!p->has_ip6 || net_nd_parse(f, len, &nd) < 0 || memcmp(nd.target, p->ip6, 16) != 0) {
		p->cnt.rx_nd_other++;
		return;
	}
	if (nd.type == NET_ND_NS) {
		/* 7.2.3: a solicitor with an address gets a neighbour entry for it */
		if (nd.has_lladdr)
			net_neigh6_learn(&p->neigh6, nd.src, nd.lladdr, rnic_now_ns(p));
		n = net_nd_build_na(out, sizeof(out), p->mac, p->ip6, &nd, p->vlan_tci);
		if (n > 0)
			port_tx(p, out, (size_t)n, 0xff);
		p->cnt.rx_nd_solicit++;
	} else {
		p->cnt.rx_nd_other++; /* an advertisement for our own address: ignore */
	}
}

/* An NA for a peer we asked about (its target is the peer's address). */
static bool
handle_nd_advert(struct rnic_port *p, const uint8_t *f, size_t len)
{
	struct net_nd nd;

	if (!p->has_ip6 || net_nd_parse(f, len, &nd) < 0 || nd.type != NET_ND_NA ||
	    memcmp(nd.target, p->ip6, 16) == 0)
		return false;
	net_neigh6_learn(&p->neigh6, nd.target, nd.has_lladdr ? nd.lladdr : nd.eth_src,
			 rnic_now_ns(p));
	p->cnt.rx_nd_advert++;
	return true;
}

unsigned int
rnic_steer_owner(const struct rnic_steer *s, uint32_t qpn)
{
	uint32_t l = (qpn - ROCE_FIRST_QPN) / RNIC_QPN_SPAN;

	return qpn >= ROCE_FIRST_QPN && l < s->n ? l : 0;
}

void
rnic_port_counters_add(struct rnic_port_counters *sum, const struct rnic_port *p)
{
#define RNIC_CNT_ADD(name, help) sum->name += p->cnt.name;
	RNIC_PORT_COUNTERS(RNIC_CNT_ADD)
#undef RNIC_CNT_ADD
}

/*
 * The lcore a received frame belongs to: RoCEv2 (UDP 4791) by the BTH's
 * destination QPN (bytes 5..7 of the BTH, right after the UDP header), every
 * other frame to lcore 0, which answers ARP, ICMP and ND and reads PFC.
 */
static unsigned int
frame_owner(const struct rnic_steer *s, const uint8_t *f, size_t len)
{
	struct net_l2 l2;
	const uint8_t *ip, *bth;

	if (net_l2_parse(f, len, &l2) < 0)
		return 0;
	ip = f + l2.hlen;
	if (l2.ethertype == NET_ETHERTYPE_IPV4 && len >= (size_t)l2.hlen + 20 && ip[9] == 17)
		bth = ip + (ip[0] & 0xf) * 4 + 8;
	else if (l2.ethertype == NET_ETHERTYPE_IPV6 && len >= (size_t)l2.hlen + 48 && ip[6] == 17)
		bth = ip + 48;
	else
		return 0;
	if ((size_t)(bth - f) + 12 > len || net_get_be16(bth - 6) != 4791)
		return 0;
	return rnic_steer_owner(s, (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7]);
}

/*
 * --lcores: keep this lcore's frames among rx[0..n), hand the others to their
 * owner's ring (in order, one burst per owner would reorder nothing: a QP's
 * frames all go to one ring). Returns the frames kept.
 */
static unsigned int
steer_dispatch(struct rnic_port *p, struct rte_mbuf **rx, unsigned int n)
{
	struct rnic_steer *s = p->steer;
	unsigned int keep = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = rx[i];
		const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
		size_t len = rte_pktmbuf_data_len(m);
		bool contig = rte_pktmbuf_is_contiguous(m);
		unsigned int o = contig ? frame_owner(s, f, len) : 0;

		if (contig && pfc_is_mac_ctrl(f, len)) {
			/* PFC: applied here and by every other lcore */
			pfc_fanout(p, m);
			rx[keep++] = m;
		} else if (o == p->lcore_idx) {
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
	return work + poll_one(p);
}

static unsigned int
poll_one(struct rnic_port *p)
{
	struct rte_mbuf *rx[RNIC_RX_EARLY + 2 * RNIC_BURST];
	const uint8_t *frames[RNIC_RX_EARLY + 2 * RNIC_BURST];
	size_t lens[RNIC_RX_EARLY + 2 * RNIC_BURST];
	unsigned int nroce = 0, n = p->nrx_early, fresh;
	uint64_t now;

	/* frames the pre-TX RX check set aside come first, in arrival order */
	if (n)
		memcpy(rx, p->rx_early, n * sizeof(rx[0]));
	p->nrx_early = 0;
	fresh = rte_eth_rx_burst(p->port_id, p->queue, rx + n, RNIC_BURST);
	rx_run_note(p, fresh, RNIC_BURST);
	n += fresh;
	if (p->steer) {
		n = steer_dispatch(p, rx, n);
		unsigned int r = rte_ring_sc_dequeue_burst(p->steer->ring[p->lcore_idx],
							   (void **)(rx + n), RNIC_BURST, NULL);
		n += r;
		p->cnt.rx_from_ring += r;
	}
	now = rnic_now_ns(p);
	p->cnt.polls++;
	p->cnt.rx_frames += fresh;
	p->cnt.rx_bursts += fresh != 0;
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = rx[i];
		uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
		size_t len = rte_pktmbuf_data_len(m);
		struct net_l2 l2;

		if (unlikely(!rte_pktmbuf_is_contiguous(m))) {
			p->cnt.rx_multiseg++;
			continue;
		}
		if (net_l2_parse(f, len, &l2) < 0) {
			p->cnt.rx_other++;
			continue;
		}
		switch (l2.ethertype) {
		case NET_ETHERTYPE_ARP:
			handle_arp(p, f, len);
			break;
		case NET_ETHERTYPE_MAC_CTRL:
			handle_pfc(p, f, len, now);
			break;
		case NET_ETHERTYPE_IPV4:
		case NET_ETHERTYPE_IPV6: {
			const uint8_t *ip = f + l2.hlen;
			size_t iplen = len - l2.hlen;

			/* UDP 4791 goes to the engine, which checks everything else */
			if (l2.ethertype == NET_ETHERTYPE_IPV4 && iplen >= 20 && ip[9] == 1) {
				int r = net_icmp_echo_reply(f, len, p->ip, p->mac);
				if (r > 0) {
					p->cnt.rx_icmp_echo++;
					port_tx(p, f, (size_t)r, 0xff);
				} else {
					p->cnt.rx_not_for_us++;
				}
				break;
			}
			if (l2.ethertype == NET_ETHERTYPE_IPV6 && iplen >= 40 &&
			    ip[6] == NET_IPPROTO_ICMPV6) {
				if (!handle_nd_advert(p, f, len))
					handle_icmp6(p, f, len);
				break;
			}
			if ((l2.ethertype == NET_ETHERTYPE_IPV4 && iplen >= 28 && ip[9] == 17 &&
			     net_get_be16(ip + (ip[0] & 0xf) * 4 + 2) == 4791) ||
			    (l2.ethertype == NET_ETHERTYPE_IPV6 && iplen >= 48 && ip[6] == 17 &&
			     net_get_be16(ip + 42) == 4791)) {
				frames[nroce] = f;
				lens[nroce++] = len;
				break;
			}
			p->cnt.rx_not_for_us++;
			break;
		}
		default:
			p->cnt.rx_other++;
		}
	}
	pfc_tx_rx_done(&p->pfc); /* the engine's frames from here on are after this RX check */
	if (p->pfc_send)
		pfc_send_tick(p, now);
	if (nroce) {
		roce_dev_rx_burst(p->dev, frames, lens, nroce);
		p->cnt.rx_roce += nroce;
	}
	if (n)
		rte_pktmbuf_free_bulk(rx, n);
	roce_dev_poll(p->dev, rnic_now_ns(p));
	unsigned int work = n + p->ntx;
	rnic_port_flush(p);
	pfc_sync_counters(p, rnic_now_ns(p));
	slow_rx(p, fresh);
	return work;
}

int
rnic_port_resolve(struct rnic_port *p, uint32_t ip, uint8_t mac[6], unsigned int timeout_ms)
{
	uint64_t start = rnic_now_ns(p), last = 0;
	uint32_t hop = next_hop(p, ip);

	while (rnic_now_ns(p) - start < (uint64_t)timeout_ms * 1000000ull) {
		uint64_t now = rnic_now_ns(p);

		if (net_neigh_lookup(&p->neigh, hop, mac, now))
			return 0;
		if (now - last > 100000000ull) {
			send_arp_request(p, hop);
			last = now;
		}
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

int
rnic_port_resolve6(struct rnic_port *p, const uint8_t ip6[16], uint8_t mac[6], unsigned int timeout_ms)
{
	uint64_t start = rnic_now_ns(p);

	while (rnic_now_ns(p) - start < (uint64_t)timeout_ms * 1000000ull) {
		int rc = resolve6(p, ip6, mac);

		if (rc != -EAGAIN)
			return rc;
		if (rnic_port_poll(p) == 0)
			rte_delay_us_sleep(200);
	}
	return -ETIMEDOUT;
}

void
rnic_port_print_counters(const struct rnic_port *p, FILE *f)
{
#define RNIC_CNT_PRINT(name, help) \
	if (p->cnt.name)           \
		fprintf(f, "  %-22s %12llu  %s\n", #name, (unsigned long long)p->cnt.name, help);
	RNIC_PORT_COUNTERS(RNIC_CNT_PRINT)
#undef RNIC_CNT_PRINT
	struct roce_stats st;

	roce_dev_stats(p->dev, &st);
	for (int i = 0; i < ROCE_STAT__COUNT; i++) {
		const char *name = roce_stat_name((enum roce_stat)i);

		if (st.v[i] && strncmp(name, "rx_drop_", 8) == 0)
			fprintf(f, "  device %-15s %12llu  %s\n", name, (unsigned long long)st.v[i],
				roce_stat_desc((enum roce_stat)i));
	}
}

void
rnic_port_json_device(const struct rnic_port *p, struct rw_json *w)
{
	struct roce_stats st;

	roce_dev_stats(p->dev, &st);
	rw_obj_begin(w, "device_counters");
	for (int i = 0; i < ROCE_STAT__COUNT; i++)
		rw_uint(w, roce_stat_name((enum roce_stat)i), st.v[i]);
	rw_obj_end(w);
}
