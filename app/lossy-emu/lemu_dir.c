/* SPDX-License-Identifier: BSD-3-Clause */
/* One direction's data path: stage 1 -> bottleneck queue -> delay line -> TX. */
#include "lemu_dir.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_prefetch.h>
#ifdef RTE_ARCH_X86
#include <immintrin.h>
#endif

#include "emu_spread.h"
#include "lemu_droplog.h"
#include "net_bytes.h"
#include "net_frame.h"
#include "net_hdr.h"
#include "pfc.h"
#include "roce_opcode.h"
#include "roce_pkt.h"

#define LEMU_PREFETCH 16	/* frames whose data is fetched ahead of stage1 */
#define LEMU_POOL_LOOK_EVERY 32 /* empty RX polls per look at the pool (rx_pool_empty) */

struct dp_clock lemu_clk;

void
lemu_clock_init(void)
{
	dp_clock_init(&lemu_clk, rte_get_tsc_hz(), rte_rdtsc());
}

/* ---- frame helpers ---------------------------------------------------------- */

/*
 * Is there an IPv4/IPv6 header whose ECN we may read and set (lib/net's
 * classifier)? The emulator looks inside at most one tag (802.1Q or 802.1ad):
 * a VLAN-in-VLAN frame is forwarded as data that is not IP.
 */
static inline bool
frame_is_ip(const struct net_frame *fr)
{
	return fr->ip && fr->ip_version_ok && fr->ntags <= 1;
}

static inline uint8_t
ip_ecn(const uint8_t *ip)
{
	return ip[0] >> 4 == 4 ? ip[1] & 3 : (ip[1] >> 4) & 3;
}

/* --drop-log: the frame of @p m is about to be freed for @p cause. */
static inline void
log_drop(const struct lemu_dir *d, const char *cause, const struct rte_mbuf *m)
{
	if (unlikely(lemu_droplog_f != NULL))
		lemu_droplog_frame(d->id, cause, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);
}

/* ---- compact store (lemu_delay.h) ----------------------------------------------- */

/* Give the mbufs of frames stored compact back to their pool. */
static inline void
free_batch(struct lemu_dir *d)
{
	if (d->nfb > 0) {
		rte_pktmbuf_free_bulk(d->fb, d->nfb);
		d->nfb = 0;
	}
}

/*
 * Copy a frame into its units of the compact store with non-temporal stores when the
 * source may be read in whole units: the units were last touched a delay ago, so plain
 * stores would first read each line from memory (the frame is read back only after the
 * delay, by then out of the cache anyway).
 */
static inline void
cr_store(uint8_t *dst, const struct rte_mbuf *m, uint32_t len)
{
	const uint8_t *src = rte_pktmbuf_mtod(m, const uint8_t *);
#ifdef RTE_ARCH_X86
	uint32_t whole = RTE_ALIGN_CEIL(len, LEMU_CR_UNIT);

	if ((uint32_t)m->data_off + whole <= m->buf_len) {
		for (uint32_t o = 0; o < whole; o += 16)
			_mm_stream_si128((__m128i *)(void *)(dst + o),
					 _mm_loadu_si128((const __m128i *)(const void *)(src + o)));
		return;
	}
#endif
	memcpy(dst, src, len);
}

/*
 * What the delay line holds for @p m: a compact handle when the frame is small, in one
 * segment, owned by us alone and asks the TX port for no offload (what it carries besides
 * its bytes is then nothing a TX port reads); else the mbuf itself.
 */
static inline void *
to_held(struct lemu_dir *d, struct rte_mbuf *m)
{
	void *h;

	if (m->data_len > LEMU_CR_MAXLEN || m->nb_segs != 1 ||
	    (m->ol_flags & RTE_MBUF_F_TX_OFFLOAD_MASK) != 0 || rte_mbuf_refcnt_read(m) != 1 ||
	    !RTE_MBUF_DIRECT(m))
		return m;
	h = lemu_cr_take(&d->cr, m->data_len);
	if (h == NULL)
		return m;
	cr_store(lemu_cr_data(&d->cr, h), m, m->data_len);
	if (d->nfb == LEMU_FREE_MAX)
		free_batch(d);
	d->fb[d->nfb++] = m;
	return h;
}

/* Free a frame the line held (mbuf or compact handle) without sending it. */
static void
held_free(struct lemu_dir *d, void *p)
{
	if (lemu_cr_is(p))
		lemu_cr_release(&d->cr, p);
	else
		rte_pktmbuf_free(p);
}

/*
 * Make mbufs of the compact frames among tx[0, ntx), in order. Returns how many leading
 * frames of tx[] are mbufs: all of them, unless the pool ran dry (the rest then wait for
 * the next poll, still in their slots, like frames the TX port did not take).
 *
 * The mbufs come from tx_pool, which no RX port draws from. Taken from the RX pool
 * instead, a delay line holding every mbuf of that pool (full-size frames
 * are held as mbufs, lemu_pool_need sized for --mbuf-size frames) deadlocks the
 * direction: the compact frame at the head of tx[] waited for an mbuf that only a
 * release could free, and nothing behind it was released (`testbed reproduce
 * lowar-memif --mtu 1024` at 80 ms on a quiet host: 1 frame forwarded in 30 s; the
 * rate queue, the line and tx[] together hold more frames than the pool has mbufs,
 * so the compact ones among them can find it empty). The TX pool is returned by the
 * port's TX completions alone.
 */
static uint16_t
materialize(struct lemu_dir *d)
{
	struct rte_mbuf *mb[LEMU_TX_MAX];
	uint16_t nc = 0, got, j = 0;

	for (uint16_t i = 0; i < d->ntx; i++)
		nc += lemu_cr_is(d->tx[i]);
	if (nc == 0)
		return d->ntx;
	if (rte_pktmbuf_alloc_bulk(d->tx_pool, mb, nc) == 0) {
		got = nc;
	} else {
		for (got = 0; got < nc; got++)
			if ((mb[got] = rte_pktmbuf_alloc(d->tx_pool)) == NULL)
				break;
	}
	for (uint16_t i = 0; i < d->ntx; i++) {
		void *h = d->tx[i];
		struct rte_mbuf *m;
		uint32_t len;

		if (!lemu_cr_is(h))
			continue;
		if (j == got)
			return i;
		m = mb[j++];
		len = lemu_cr_len(h);
		rte_memcpy(rte_pktmbuf_mtod(m, void *), lemu_cr_data(&d->cr, h), len);
		m->data_len = (uint16_t)len;
		m->pkt_len = len;
		lemu_cr_release(&d->cr, h);
		d->tx[i] = m;
	}
	return d->ntx;
}

/* ---- configuration (data path side) ------------------------------------------ */

static void
loss_runs_save(struct lemu_dir *d)
{
	emu_loss_flush(&d->im.loss);
	for (unsigned i = 0; i < EMU_LOSS_BURST_BUCKETS; i++)
		d->bursts_prev[i] += d->im.loss.stats.loss_bursts[i];
	memset(&d->im.loss.stats, 0, sizeof(d->im.loss.stats));
}

static void emit_pfc(struct lemu_dir *d, uint8_t prio, uint16_t quanta);
static void to_line(struct lemu_dir *d, struct rte_mbuf *m, uint64_t t, uint32_t flags,
		    uint64_t now);

/* The bottleneck's PFC frames (emu_bneck.h; called with its lock held). */
static void
bn_emit(void *ctx, const struct emu_pfc_action *act)
{
	emit_pfc(ctx, act->prio, act->quanta);
}

uint64_t
lemu_worker_seed(uint64_t seed, unsigned w)
{
	uint64_t x = seed ^ (UINT64_C(0x9e3779b97f4a7c15) * w);

	return w == 0 ? seed : emu_splitmix64(&x);
}

/*
 * Rebuild the models from @p c. Like netem's "tc qdisc change", the loss,
 * duplicate, corrupt, reorder, delay and RED draws restart from the
 * direction's seed (each worker its own stream of it, lemu_worker_seed);
 * what is in flight keeps its departure and exit times, the queue keeps its
 * backlog, and a PFC pause in progress is kept (or ended with an XON if the
 * new SPEC has no pfc). The bottleneck is reconfigured once, by the first
 * worker of the direction to see @p c.
 */
static void
apply_cfg(struct lemu_dir *d, const struct lemu_dir_cfg *c)
{
	const struct emu_spec *s = &c->spec;
	uint64_t last_exit = d->dist.last_departure_ns, seed = lemu_worker_seed(c->seed, d->widx);
	bool first = d->cur == NULL;
	struct emu_pfcgen_params pp = s->pfc;

	if (!first)
		loss_runs_save(d);
	/* the parser validated everything; failures here would be bugs */
	if (emu_impair_init(&d->im, &s->impair, seed, &d->ec) < 0) {
		memset(&d->im, 0, sizeof(d->im)); /* no impairment rather than garbage */
		d->im.cnt = &d->ec;
	}
	pp.link_bps = d->link_bps;
	emu_bneck_lock(d->bn);
	if (d->bn->tag != c)
		emu_bneck_configure(d->bn, &s->queue, &s->red, &pp, c->seed, c, bn_emit, d);
	emu_bneck_unlock(d->bn);
	emu_rules_init(&d->rules, &s->rules);
	d->has_rules = s->rules.n > 0;
	emu_dist_init(&d->dist, &s->delay, seed);
	d->dist.last_departure_ns = last_exit;
	d->has_queue = s->queue.rate_bps != 0;
	d->has_delay = s->delay.delay_ns != 0 || s->delay.jitter_ns != 0;
	d->ctrl_delay_ns = s->ctrl_delay ? s->delay.delay_ns : 0;
	d->corrupt_recompute = s->impair.corrupt_recompute;
	d->gap = emu_impair_reorder_gap(&d->im);
	lemu_dl_set_heap(&d->dl, s->delay.jitter_ns != 0 && !s->delay.no_reorder);
	/* no bottleneck any more: what it held moves on at its departure time, in order */
	while (!d->has_queue && d->qn > 0) {
		struct lemu_qent *e = &d->qr[d->qhead];

		to_line(d, e->m, e->dep_ns, e->flags, e->dep_ns);
		d->qhead = (d->qhead + 1) & d->qmask;
		d->qn--;
	}
	if (!first)
		d->stat[LEMU_ST_SPEC_CHANGES] += d->widx == 0;
	d->cur = c;
}

int
lemu_dir_init(struct lemu_dir *d, const struct lemu_dir_args *a)
{
	uint32_t qcap = 1;
	int rc;

	memset(d, 0, sizeof(*d));
	d->id = a->id;
	d->widx = a->widx;
	d->nworkers = a->nworkers ? a->nworkers : 1;
	d->rx_port = a->rx_port;
	d->tx_port = a->tx_port;
	d->rx_queue = a->rx_queue;
	d->tx_queue = a->tx_queue;
	d->bn = a->bn;
	d->tx_lock = a->tx_lock;
	d->spread_in = a->spread_in;
	d->spread_out = a->spread_out;
	d->burst = a->burst > LEMU_BURST_MAX ? LEMU_BURST_MAX : a->burst;
	d->pool = a->pool;
	d->tx_pool = a->tx_pool;
	d->rx_cut_len = a->rx_cut_len;
	d->link_bps = a->link_bps;
	d->coalesce_ns = a->coalesce_ns;
	d->pfc_out = a->pfc_out;
	d->pfc_in = a->pfc_in;
	d->sd = a->sd;
	rte_eth_macaddr_get(a->rx_port, &d->rx_mac);
	while (qcap < a->capacity)
		qcap <<= 1;
	d->qr = calloc(qcap, sizeof(*d->qr));
	if (d->qr == NULL)
		return -ENOMEM;
	d->qmask = qcap - 1;
	rc = lemu_dl_init(&d->dl, a->capacity, false);
	if (rc < 0) {
		free(d->qr);
		d->qr = NULL;
		return rc;
	}
	/* without it every frame waits as its mbuf: slower, not wrong */
	if (lemu_cr_init(&d->cr, a->capacity) < 0)
		RTE_LOG(WARNING, USER1, "lossy-emu: no memory for the compact delay store\n");
	apply_cfg(d, a->cfg);
	d->want = a->cfg;
	d->applied = a->cfg;
	return 0;
}

void
lemu_dir_free(struct lemu_dir *d)
{
	void *p[64];
	uint32_t n;

	for (uint32_t i = 0; i < d->qn; i++)
		rte_pktmbuf_free(d->qr[(d->qhead + i) & d->qmask].m);
	d->qn = 0;
	if (d->dl.e)
		while ((n = lemu_dl_pop_any(&d->dl, p, 64)) > 0)
			for (uint32_t i = 0; i < n; i++)
				held_free(d, p[i]);
	for (uint16_t i = 0; i < d->ntx; i++)
		held_free(d, d->tx[i]);
	free_batch(d);
	for (uint16_t i = 0; i < d->nctrl; i++)
		rte_pktmbuf_free(d->ctrl[i]);
	d->ntx = d->nctrl = 0;
	if (d->pfc_in)
		while (rte_ring_dequeue(d->pfc_in, p) == 0)
			rte_pktmbuf_free(p[0]);
	if (d->spread_in) /* frames worker 0 handed over and we did not take */
		while (rte_ring_dequeue(d->spread_in, p) == 0)
			rte_pktmbuf_free(p[0]);
	free(d->qr);
	d->qr = NULL;
	lemu_dl_free(&d->dl);
	lemu_cr_free(&d->cr);
}

/* ---- PFC generation ---------------------------------------------------------- */

static void
emit_pfc(struct lemu_dir *d, uint8_t prio, uint16_t quanta)
{
	uint16_t q[PFC_NUM_PRIO] = {0};
	struct rte_mbuf *m;
	int n;

	if (d->pfc_out == NULL)
		return;
	m = rte_pktmbuf_alloc(d->pool);
	if (unlikely(m == NULL)) {
		d->stat[LEMU_ST_DROP_NOMBUF]++;
		return;
	}
	q[prio & 7] = quanta;
	n = pfc_build(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m), d->rx_mac.addr_bytes,
		      (uint8_t)(1u << (prio & 7)), q);
	if (likely(n > 0))
		m->data_len = m->pkt_len = (uint32_t)n;
	/* several workers may emit (one at a time, under the bottleneck's lock): the ring is
	 * multi-producer then */
	if (unlikely(n < 0 || rte_ring_enqueue(d->pfc_out, m) != 0)) {
		rte_pktmbuf_free(m);
		d->stat[LEMU_ST_DROP_CTRL]++;
		return;
	}
	d->stat[LEMU_ST_PFC_SENT]++;
}

/* ---- delay line ---------------------------------------------------------------- */

/* The emulator's own share (--stall-detect, emu_stall.h): a frame due at @p t released at
 * @p now counts unless a measured host stall ended after it fell due. */
static inline void
own_err(struct lemu_dir *d, uint64_t t, uint64_t now)
{
	if (emu_stall_own_counts(&d->own, t))
		lemu_hist_add(&d->derr_own, now > t ? now - t : 0);
}

/* Queue @p m in the delay line to leave at @p t: compact if it can be (to_held()). */
static inline uint64_t
line_push(struct lemu_dir *d, uint64_t t, struct rte_mbuf *m)
{
	void *h;

	if (d->dl.n == d->dl.cap)
		return UINT64_MAX; /* the caller drops m */
	h = to_held(d, m);
	return lemu_dl_push(&d->dl, t, h);
}

/* A packet leaves the bottleneck at @p t (ns): into the delay line, or straight to TX. */
static void
to_line(struct lemu_dir *d, struct rte_mbuf *m, uint64_t t, uint32_t flags, uint64_t now)
{
	uint64_t exit;

	if (unlikely(flags & EMU_V_REORDER)) {
		exit = lemu_dl_push_reorder(&d->dl, t, d->gap, m);
	} else if (d->has_delay) {
		uint64_t dep = emu_dist_departure(&d->dist, t);

		d->stat[LEMU_ST_DELAY_DRAWN_NS] +=
		    dep - t; /* the draw itself: no clamp with reorder */
		exit = line_push(d, dep, m);
	} else if (d->dl.n == 0 && d->ntx < LEMU_TX_MAX) {
		lemu_hist_add(&d->derr, now > t ? now - t : 0);
		if (unlikely(d->sd != NULL)) {
			own_err(d, t, now);
			d->tx_due[d->ntx] = t;
		}
		if (d->ntx == 0)
			d->tx_first_ns = now;
		d->tx[d->ntx++] = m;
		return;
	} else {
		exit = line_push(d, t, m);
	}
	/*
	 * The line has a slot per pool mbuf, but a compact frame holds no mbuf, so a
	 * line with compact frames in it can fill while mbufs remain (measured: 896
	 * of 1024 frames behind one 64 B frame, --mbufs 128): counted as drop_queue.
	 */
	if (unlikely(exit == UINT64_MAX)) {
		log_drop(d, "queue", m);
		rte_pktmbuf_free(m);
		d->stat[LEMU_ST_DROP_QUEUE]++;
	}
}

/* --stall-detect: the backlog a stall left delays what falls due while it is worked off */
static inline void
catch_up(struct lemu_dir *d, uint64_t now)
{
	if (unlikely(d->sd != NULL))
		emu_stall_own_after(&d->own, now, lemu_dl_next(&d->dl));
}

static void
release(struct lemu_dir *d, uint64_t now)
{
	uint64_t t[LEMU_TX_MAX];
	uint32_t k, space = LEMU_TX_MAX - d->ntx;

	if (space == 0 || d->dl.n == 0) {
		catch_up(d, now);
		return;
	}
	k = lemu_dl_pop_due(&d->dl, now, (void **)(d->tx + d->ntx), t, space);
	/*
	 * The released frames' headers were last touched when they entered the line
	 * (10 ms ago at `delay 10ms`): fetch both lines of each now, ahead of flush()'s
	 * pkt_len read and the PMD's free (m->next), so the misses overlap.
	 */
	for (uint32_t i = 0; i < k; i++) {
		void *h = d->tx[d->ntx + i];

		if (lemu_cr_is(h)) { /* in the compact store: fetched ahead, below */
			rte_prefetch0(lemu_cr_data(&d->cr, h));
			continue;
		}
		rte_prefetch0(h);
		rte_prefetch0(RTE_PTR_ADD(h, RTE_CACHE_LINE_MIN_SIZE));
	}
	/* the compact store is read in ring order (FIFO layout): fetch the units the next
	 * release takes, those after the ones waiting in tx[] now */
	if (d->cr.buf != NULL && lemu_cr_used(&d->cr) > 0) {
		uint32_t from = d->cr.rd + d->ntx + k, to = from + k;

		for (uint32_t u = from; u < to; u++)
			rte_prefetch0(d->cr.buf + (size_t)(u & d->cr.mask) * LEMU_CR_UNIT);
	}
	for (uint32_t i = 0; i < k; i++) {
		lemu_hist_add(&d->derr, now - t[i]);
		if (unlikely(d->sd != NULL)) {
			own_err(d, t[i], now);
			d->tx_due[d->ntx + i] = t[i];
		}
	}
	catch_up(d, now);
	if (k == 0)
		return;
	if (d->ntx == 0)
		d->tx_first_ns = now;
	d->ntx = (uint16_t)(d->ntx + k);
}

/* ---- bottleneck queue ---------------------------------------------------------- */

/* This worker's packets whose departure time has come move on to the delay line. */
static inline void
drain_queue(struct lemu_dir *d, uint64_t now)
{
	while (d->qn > 0) {
		struct lemu_qent *e = &d->qr[d->qhead];

		if (e->dep_ns > now)
			break;
		to_line(d, e->m, e->dep_ns, e->flags, now);
		d->qhead = (d->qhead + 1) & d->qmask;
		d->qn--;
	}
}

/* Admit one packet to the direction's bottleneck (its lock held, emu_bneck.h). */
static inline void
admit_one(struct lemu_dir *d, struct rte_mbuf *m, uint8_t *ip, uint32_t flags, uint64_t now)
{
	enum emu_bneck_verdict v;
	uint64_t dep = 0;

	if (unlikely(d->qn > d->qmask)) { /* cannot happen: the ring holds the whole pool */
		d->stat[LEMU_ST_DROP_QUEUE]++;
		log_drop(d, "queue", m);
		rte_pktmbuf_free(m);
		return;
	}
	v = emu_bneck_admit(d->bn, now, m->pkt_len, ip ? ip_ecn(ip) : EMU_BNECK_NOT_IP, &dep,
			    bn_emit, d);
	if (v == EMU_BNECK_DROP) {
		log_drop(d, "queue", m);
		rte_pktmbuf_free(m);
		return;
	}
	if (v == EMU_BNECK_MARK)
		net_ip_set_ecn(ip, NET_ECN_CE);
	d->qr[(d->qhead + d->qn) & d->qmask] = (struct lemu_qent){m, dep, m->pkt_len, flags};
	d->qn++;
}

/*
 * A kept packet for the bottleneck. One worker admits it at once (no lock: the queue is
 * its own); with several, it waits for the rest of its burst (admit_pending).
 */
static inline void
to_queue(struct lemu_dir *d, struct rte_mbuf *m, uint8_t *ip, uint32_t flags, uint64_t now)
{
	if (!d->has_queue) {
		to_line(d, m, now, flags, now);
		return;
	}
	if (!d->bn->shared) {
		admit_one(d, m, ip, flags, now);
		return;
	}
	d->pend[d->npend++] = (struct lemu_pend){m, ip, flags};
}

/*
 * Admit the burst's packets to the direction's shared bottleneck in one hold of its
 * lock (emu_bneck.h: tail drop, RED on the backlog found, the departure time, PFC), in
 * arrival order, all stamped @p now; the accepted ones wait in this worker's FIFO.
 */
static void
admit_pending(struct lemu_dir *d, uint64_t now)
{
	emu_bneck_lock(d->bn);
	for (uint16_t i = 0; i < d->npend; i++)
		admit_one(d, d->pend[i].m, d->pend[i].ip, d->pend[i].flags, now);
	emu_bneck_unlock(d->bn);
	d->npend = 0;
}

/* ---- stage 1 --------------------------------------------------------------------- */

static inline uint16_t
be16(const uint8_t *p)
{
	return net_get_be16(p);
}

/*
 * Flip one bit "in the payload": for RoCEv2 the RoCE payload (or, without
 * one, BTH..ICRC), for other UDP the UDP payload, for other IP the IP payload,
 * else anything after the Ethernet header. With corrupt-recompute a RoCEv2
 * frame gets a fresh ICRC (and IPv6 UDP checksum), so only the data is wrong;
 * RoCEv2 frames without payload are then left intact (corrupt_skipped).
 */
static __rte_noinline void
corrupt(struct lemu_dir *d, uint8_t *f, uint32_t len, const struct net_frame *fr)
{
	struct roce_pkt rp;
	uint32_t l3 = fr->l3_off, lo = l3, hi = len;
	bool roce = false;
	uint32_t masked = UINT32_MAX; /* a byte the ICRC does not cover, skipped by the flip */
	uint64_t bit;

	if (frame_is_ip(fr)) {
		const uint8_t *ip = f + l3;
		uint32_t hlen, tot;
		uint8_t proto;

		if (ip[0] >> 4 == 4) {
			hlen = (ip[0] & 15u) * 4;
			tot = be16(ip + 2);
			proto = ip[9];
		} else {
			hlen = NET_IPV6_HLEN;
			tot = NET_IPV6_HLEN + be16(ip + 4);
			proto = ip[6];
		}
		lo = l3 + hlen;
		if (l3 + tot < hi)
			hi = l3 + tot;
		if (proto == NET_IPPROTO_UDP && lo + NET_UDP_HLEN <= hi)
			lo += NET_UDP_HLEN;
		if (roce_parse(f, len, &rp, ROCE_PARSE_NO_ICRC | ROCE_PARSE_NO_IP_CSUM) == 0) {
			roce = true;
			if (rp.payload_len > 0) {
				lo = rp.payload_off;
				hi = rp.payload_off + rp.payload_len;
			} else if (d->corrupt_recompute) {
				/* silent corruption is of data: leave header-only frames alone */
				d->stat[LEMU_ST_CORRUPT_SKIPPED]++;
				return;
			} else {
				/* BTH..ICRC, less BTH resv8a (FECN/BECN): the ICRC masks it, so a
				 * flip there would be a corruption no receiver can see */
				lo = rp.bth_off;
				hi = rp.frame_len - 4;
				masked = rp.bth_off + 4;
			}
		}
	}
	if (hi <= lo) {
		lo = len > NET_ETH_HLEN ? NET_ETH_HLEN : 0;
		hi = len;
	}
	if (hi <= lo)
		return;
	if (masked >= lo && masked < hi) {
		bit = emu_impair_corrupt_bit(&d->im, hi - lo - 1);
		if (lo + bit / 8 >= masked)
			bit += 8;
	} else {
		bit = emu_impair_corrupt_bit(&d->im, hi - lo);
	}
	f[lo + bit / 8] ^= (uint8_t)(1u << (bit % 8));
	if (roce && d->corrupt_recompute) {
		roce_icrc_update(f, &rp);
		if (rp.l3.version == 6 && rp.udp.csum != 0) {
			uint8_t *udp = f + rp.l3_off + NET_IPV6_HLEN;

			net_put_be16(udp + 6, 0);
			net_put_be16(udp + 6, net_udp_csum(&rp.l3, udp, rp.udp.len));
		}
		d->stat[LEMU_ST_ICRC_RECOMPUTED]++;
	}
}

/* Apply a stage-1 verdict's edits (CE, bit flip) to a kept packet. */
static inline void
edit(struct lemu_dir *d, struct rte_mbuf *m, unsigned v, uint8_t *ip, const struct net_frame *fr)
{
	if ((v & EMU_V_MARK_CE) && ip != NULL)
		net_ip_set_ecn(ip, NET_ECN_CE);
	if (unlikely(v & EMU_V_CORRUPT))
		corrupt(d, rte_pktmbuf_mtod(m, uint8_t *), m->data_len, fr);
}

static inline void
ctrl_push(struct lemu_dir *d, struct rte_mbuf *m, uint8_t fwd)
{
	if (unlikely(d->nctrl == LEMU_CTRL_MAX)) {
		log_drop(d, "ctrl", m);
		rte_pktmbuf_free(m);
		d->stat[LEMU_ST_DROP_CTRL]++;
		return;
	}
	d->ctrl_fwd[d->nctrl] = fwd;
	d->ctrl[d->nctrl++] = m;
}

/*
 * The SPEC's deterministic rules (emu_rules.h), ahead of stage 1: only RoCEv2
 * frames (UDP port 4791 with a whole BTH, as net_frame_classify() finds them;
 * nothing else is checked) count and can match. FEC repair and negotiation
 * frames (0xD0/0xD1, docs/fec.md) neither count nor match: their PSN names a
 * block or a grid, not a packet, so `drop-psn Q:P` drops the data packet P.
 */
static __rte_noinline bool
drop_by_rule(struct lemu_dir *d, struct rte_mbuf *m, const struct net_frame *fr)
{
	int r;

	if (fr->kind != NET_FRAME_ROCE || !fr->has_bth || roce_opcode_is_fec(fr->bth_op))
		return false;
	/* drop-mad: the MAD kind of a UD SEND_ONLY to QP1 (emu_rules_mad_kind) */
	r = emu_rules_decide_mad(
	    &d->rules, fr->bth_dqpn, fr->bth_psn,
	    fr->bth_dqpn == 1 ? emu_rules_mad_kind(rte_pktmbuf_mtod(m, uint8_t *), m->data_len, fr)
			      : -1);
	if (r < 0)
		return false;
	d->stat[LEMU_ST_DROP_RULE]++;
	log_drop(d, emu_rule_kind_name(d->rules.p.r[r].kind), m);
	rte_pktmbuf_free(m);
	return true;
}

static inline void
stage1(struct lemu_dir *d, struct rte_mbuf *m, uint64_t now)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *), *ip = NULL, *cip = NULL, ecn = 0;
	struct rte_mbuf *copy = NULL;
	struct net_frame fr;
	unsigned v, cv;

	net_frame_classify(f, m->data_len, &fr);

	d->stat[LEMU_ST_RX_PKTS]++;
	d->stat[LEMU_ST_RX_BYTES] += m->pkt_len;
	if (unlikely(fr.kind == NET_FRAME_MAC_CTRL && fr.ntags <= 1)) {
		/* PFC / PAUSE: no loss, no queue, ahead of all data; no delay unless ctrl-delay */
		d->stat[LEMU_ST_MAC_CTRL_FWD]++;
		if (d->ctrl_delay_ns) {
			/* the base propagation delay only: exits stay ordered in the FIFO line */
			if (lemu_dl_push(&d->dl, now + d->ctrl_delay_ns, m) == UINT64_MAX) {
				log_drop(d, "queue", m);
				rte_pktmbuf_free(m);
				d->stat[LEMU_ST_DROP_QUEUE]++;
			}
			return;
		}
		ctrl_push(d, m, 1);
		return;
	}
	if (unlikely(m->nb_segs != 1)) {
		d->stat[LEMU_ST_DROP_MULTISEG]++;
		log_drop(d, "multiseg", m);
		rte_pktmbuf_free(m);
		return;
	}
	/* a frame the input port cut (longer than its ring frame): not forwarded cut */
	if (unlikely(d->rx_cut_len && m->data_len >= d->rx_cut_len) &&
	    net_frame_rx_cut(f, m->data_len, &fr, d->rx_cut_len)) {
		d->stat[LEMU_ST_DROP_CUT]++;
		log_drop(d, "cut", m);
		rte_pktmbuf_free(m);
		return;
	}
	if (unlikely(d->has_rules) && drop_by_rule(d, m, &fr))
		return;
	if (frame_is_ip(&fr)) {
		ip = f + fr.l3_off;
		ecn = ip_ecn(ip);
	}
	v = emu_impair_decide(&d->im, ecn);
	if (v & EMU_V_DROP) {
		log_drop(d, "loss", m);
		rte_pktmbuf_free(m);
		return;
	}
	if ((v & EMU_V_MARK_CE) && ip != NULL) {
		net_ip_set_ecn(ip, NET_ECN_CE);
		ecn = NET_ECN_CE;
	}
	if (unlikely(v & EMU_V_DUPLICATE)) {
		/* netem clones after the CE mark and before the corruption */
		copy = rte_pktmbuf_copy(m, d->pool, 0, UINT32_MAX);
		cv = emu_impair_decide_copy(&d->im, ecn); /* always: keeps the draws seed-exact */
		if (copy == NULL) {
			d->stat[LEMU_ST_DROP_NOMBUF]++;
		} else if (cv & EMU_V_DROP) {
			rte_pktmbuf_free(copy);
			copy = NULL;
		} else if (ip != NULL) {
			cip = rte_pktmbuf_mtod(copy, uint8_t *) + fr.l3_off;
		}
	}
	edit(d, m, v & EMU_V_CORRUPT, ip, &fr);
	to_queue(d, m, ip, v & EMU_V_REORDER, now);
	if (unlikely(copy != NULL)) {
		edit(d, copy, cv, cip, &fr);
		to_queue(d, copy, cip, cv & EMU_V_REORDER, now);
	}
}

/* ---- TX ---------------------------------------------------------------------------- */

/* --stall-detect also times each PMD call, reported apart from the release error */
static inline uint16_t
tx_burst(struct lemu_dir *d, struct rte_mbuf **m, uint16_t n)
{
	uint64_t t0;
	uint16_t sent;

	if (likely(d->sd == NULL && d->tx_lock == NULL))
		return rte_eth_tx_burst(d->tx_port, d->tx_queue, m, n);
	if (d->tx_lock != NULL) { /* the port's one TX queue, shared by the workers */
		rte_spinlock_lock(d->tx_lock);
		sent = rte_eth_tx_burst(d->tx_port, d->tx_queue, m, n);
		rte_spinlock_unlock(d->tx_lock);
		if (likely(d->sd == NULL))
			return sent;
		d->tx_done_ns = lemu_now_ns();
		return sent;
	}
	t0 = lemu_now_ns();
	sent = rte_eth_tx_burst(d->tx_port, d->tx_queue, m, n);
	d->tx_done_ns = lemu_now_ns();
	lemu_hist_add(&d->tx_call, d->tx_done_ns - t0);
	return sent;
}

static void
flush(struct lemu_dir *d)
{
	uint32_t len[LEMU_TX_MAX];
	uint16_t sent, i, ready;

	if (d->pfc_in != NULL && d->nctrl < LEMU_CTRL_MAX) {
		unsigned k = rte_ring_sc_dequeue_burst(d->pfc_in, (void **)(d->ctrl + d->nctrl),
						       LEMU_CTRL_MAX - d->nctrl, NULL);

		for (i = 0; i < k; i++)
			d->ctrl_fwd[d->nctrl + i] = 0;
		d->nctrl = (uint16_t)(d->nctrl + k);
		d->stat[LEMU_ST_TX_PEER_PFC] += k;
	}
	if (d->nctrl > 0) {
		for (i = 0; i < d->nctrl; i++)
			len[i] = d->ctrl[i]->pkt_len;
		sent = tx_burst(d, d->ctrl, d->nctrl);
		for (i = 0; i < sent; i++) {
			if (d->ctrl_fwd[i]) {
				d->stat[LEMU_ST_TX_PKTS]++;
				d->stat[LEMU_ST_TX_BYTES] += len[i];
			}
		}
		if (sent < d->nctrl) {
			memmove(d->ctrl, d->ctrl + sent, (d->nctrl - sent) * sizeof(d->ctrl[0]));
			memmove(d->ctrl_fwd, d->ctrl_fwd + sent, d->nctrl - sent);
			d->nctrl = (uint16_t)(d->nctrl - sent);
			return; /* data waits until the control frames are out */
		}
		d->nctrl = 0;
	}
	if (d->ntx == 0)
		return;
	ready = materialize(d);
	for (i = 0; i < ready; i++)
		len[i] = d->tx[i]->pkt_len;
	sent = tx_burst(d, d->tx, ready);
	if (unlikely(d->sd != NULL)) {
		for (i = 0; i < sent; i++)
			lemu_hist_add(&d->derr_tx, d->tx_done_ns > d->tx_due[i]
						       ? d->tx_done_ns - d->tx_due[i]
						       : 0);
		if (sent < d->ntx)
			memmove(d->tx_due, d->tx_due + sent,
				(d->ntx - sent) * sizeof(d->tx_due[0]));
	}
	d->stat[LEMU_ST_TX_PKTS] += sent;
	d->stat[LEMU_ST_TX_BURSTS] += sent > 0;
	for (i = 0; i < sent; i++)
		d->stat[LEMU_ST_TX_BYTES] += len[i];
	if (sent < d->ntx)
		memmove(d->tx, d->tx + sent, (d->ntx - sent) * sizeof(d->tx[0]));
	d->ntx = (uint16_t)(d->ntx - sent);
}

/* ---- poll ---------------------------------------------------------------------------- */

/* Earliest time something in the queue or the delay line is due. */
static inline uint64_t
next_due(const struct lemu_dir *d)
{
	uint64_t next = d->qn > 0 ? d->qr[d->qhead].dep_ns : UINT64_MAX, t = lemu_dl_next(&d->dl);

	return t < next ? t : next;
}

/*
 * Software spread (worker 0 of a direction whose input port hashes nothing): keep the
 * frames of our own flows in @p rx, hand the others to their worker's ring by the
 * 5-tuple hash (emu_spread.h). One ring per worker, filled in port order, so a flow
 * keeps its order. A full ring (it holds the whole pool: cannot happen) drops the
 * frame before it counts as received (rx_missed). Returns the frames kept.
 */
static uint16_t
spread(struct lemu_dir *d, struct rte_mbuf **rx, uint16_t n)
{
	struct rte_mbuf *out[LEMU_WORKERS_MAX][LEMU_BURST_MAX];
	uint16_t no[LEMU_WORKERS_MAX] = {0}, keep = 0;

	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *f = rte_pktmbuf_mtod(rx[i], const uint8_t *);
		struct net_frame fr;
		unsigned w;

		net_frame_classify(f, rx[i]->data_len, &fr);
		w = emu_spread_worker(emu_spread_hash(f, rx[i]->data_len, &fr), d->nworkers);
		if (w == 0)
			rx[keep++] = rx[i];
		else
			out[w][no[w]++] = rx[i];
	}
	for (unsigned w = 1; w < d->nworkers; w++) {
		unsigned k;

		if (no[w] == 0)
			continue;
		k = rte_ring_sp_enqueue_burst(d->spread_out[w], (void **)out[w], no[w], NULL);
		if (unlikely(k < no[w])) {
			rte_pktmbuf_free_bulk(out[w] + k, no[w] - k);
			d->stat[LEMU_ST_RX_MISSED] += no[w] - k;
		}
	}
	return keep;
}

uint32_t
lemu_dir_poll(struct lemu_dir *d, uint64_t now, uint64_t *next_ns)
{
	struct rte_mbuf *rx[LEMU_BURST_MAX];
	const struct lemu_dir_cfg *w = __atomic_load_n(&d->want, __ATOMIC_ACQUIRE);
	uint64_t next, t;
	uint32_t work;
	uint16_t n, got;

	if (unlikely(w != d->cur)) {
		apply_cfg(d, w);
		__atomic_store_n(&d->applied, w, __ATOMIC_RELEASE);
	}
	if (d->qn > 0)
		drain_queue(d, now);
	if (unlikely(d->spread_in != NULL)) {
		n = (uint16_t)rte_ring_sc_dequeue_burst(d->spread_in, (void **)rx, d->burst, NULL);
	} else if (likely(d->sd == NULL)) {
		n = rte_eth_rx_burst(d->rx_port, d->rx_queue, rx, d->burst);
	} else {
		t = lemu_now_ns();
		n = rte_eth_rx_burst(d->rx_port, d->rx_queue, rx, d->burst);
		lemu_hist_add(&d->rx_call, lemu_now_ns() - t);
	}
	got = n;
	if (unlikely(d->spread_out != NULL) && n > 0)
		n = spread(d, rx, n);
	if (n > 0) {
		/*
		 * Stamp arrivals after the RX burst returned: a frame is never
		 * stamped before it arrived, so it can never leave early, even if
		 * the lcore was descheduled between the clock read and the burst.
		 */
		now = lemu_now_ns();
		/*
		 * Frames come from a pool as large as the delay line, so their data
		 * is cold: perf put 37 % of the impaired path's cycles in the first
		 * read of each frame (net_frame_classify). Fetch LEMU_PREFETCH ahead.
		 */
		for (uint16_t i = 0; i < n && i < LEMU_PREFETCH; i++)
			rte_prefetch0(rte_pktmbuf_mtod(rx[i], void *));
		for (uint16_t i = 0; i < n; i++) {
			if (i + LEMU_PREFETCH < n)
				rte_prefetch0(rte_pktmbuf_mtod(rx[i + LEMU_PREFETCH], void *));
			stage1(d, rx[i], now);
		}
		if (d->npend > 0)
			admit_pending(d, now);
	} else if (got == 0 && d->spread_in == NULL) {
		/*
		 * rx_pool_empty: an empty poll that found fewer free mbufs than one
		 * burst. rte_mempool_avail_count() walks every lcore's cache
		 * (RTE_MAX_LCORE of them): called on every empty poll, it took 6.6 %
		 * of the worker's samples in the memif chain (perf record), where
		 * the ACK direction is empty on nearly every loop. An exhausted pool
		 * stays so while the delay line holds its mbufs, so look at it on the
		 * first empty poll after traffic and then on every 32nd; the polls
		 * between count by the last look.
		 */
		if (d->empty_polls++ % LEMU_POOL_LOOK_EVERY == 0)
			d->pool_short = rte_mempool_avail_count(d->pool) < d->burst;
		if (unlikely(d->pool_short))
			d->stat[LEMU_ST_RX_POOL_EMPTY]++;
	}
	if (got > 0)
		d->empty_polls = 0;
	work = got;
	/* PFC: the refreshes and the XON at a departure need the queue brought to now;
	 * worker 0 does it for the direction (the others only admit) */
	if (d->widx == 0 && d->bn->has_pfc) {
		emu_bneck_lock(d->bn);
		emu_bneck_advance(d->bn, now, bn_emit, d);
		emu_bneck_unlock(d->bn);
	}
	if (d->dl.n > 0) {
		if (unlikely(d->sd != NULL)) {
			/* the stall check sits right before the release it judges: a stall
			 * anywhere since the last check (in the RX call, say) is known before
			 * the frames it delayed are booked (emu_stall.h) */
			uint64_t cpu = lemu_thread_cpu_ns();

			now = lemu_now_ns();
			emu_stall_check(d->sd, now, cpu);
			emu_stall_own_sync(&d->own, d->sd);
		} else {
			now = lemu_now_ns(); /* release against a fresh clock */
		}
		release(d, now);
	}
	next = next_due(d);
	/*
	 * Send control frames at once; data when a burst is full, when the
	 * oldest frame waited the coalescing window, or when nothing more will
	 * come within it (the RX ring drained and nothing is due).
	 */
	if (d->nctrl > 0 || (d->pfc_in != NULL && !rte_ring_empty(d->pfc_in)) ||
	    (d->ntx > 0 && (d->ntx >= d->burst || now - d->tx_first_ns >= d->coalesce_ns ||
			    (n < d->burst && next > now + d->coalesce_ns)))) {
		work += d->ntx + d->nctrl;
		flush(d);
	}
	if (d->widx == 0 && d->bn->has_pfc && (t = emu_bneck_next(d->bn)) < next)
		next = t;
	if (d->ntx > 0 && d->tx_first_ns + d->coalesce_ns < next)
		next = d->tx_first_ns + d->coalesce_ns;
	if (d->nctrl > 0)
		next = 0;
	free_batch(d);
	*next_ns = next;
	return work;
}

/* ---- counters ------------------------------------------------------------------------- */

static inline uint64_t
rd(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void
lemu_dir_snapshot_worker(const struct lemu_dir *d, uint64_t out[LEMU_ST__COUNT])
{
	const uint64_t *ec = d->ec.v;

	for (unsigned i = 0; i < LEMU_ST__COUNT; i++)
		out[i] = rd(&d->stat[i]);
	out[LEMU_ST_DROP_LOSS] = rd(&ec[EMU_CNT_DROP_LOSS]);
	out[LEMU_ST_CORRUPTED] = rd(&ec[EMU_CNT_CORRUPTED]) - out[LEMU_ST_CORRUPT_SKIPPED];
	out[LEMU_ST_ECN_MARKED_LOSS] = rd(&ec[EMU_CNT_ECN_MARK_LOSS]);
	out[LEMU_ST_DUPLICATED] = rd(&ec[EMU_CNT_DUPLICATED]);
	out[LEMU_ST_REORDERED] = rd(&ec[EMU_CNT_REORDERED]);
	out[LEMU_ST_IN_FLIGHT] = (uint64_t)__atomic_load_n(&d->qn, __ATOMIC_RELAXED) +
				 __atomic_load_n(&d->dl.n, __ATOMIC_RELAXED) +
				 __atomic_load_n(&d->ntx, __ATOMIC_RELAXED);
}

void
lemu_dir_snapshot(const struct lemu_dir *ws, unsigned n, uint64_t out[LEMU_ST__COUNT])
{
	const struct emu_bneck *bn = ws[0].bn;
	const uint64_t *bc = bn->ec.v;
	struct rte_eth_stats es;
	uint64_t w[LEMU_ST__COUNT];

	memset(out, 0, sizeof(uint64_t) * LEMU_ST__COUNT);
	for (unsigned k = 0; k < n; k++) {
		lemu_dir_snapshot_worker(&ws[k], w);
		for (unsigned i = 0; i < LEMU_ST__COUNT; i++)
			out[i] += w[i];
	}
	/* the bottleneck's, once: it is one queue whatever the number of workers */
	out[LEMU_ST_DROP_QUEUE] += rd(&bc[EMU_CNT_DROP_QUEUE]);
	out[LEMU_ST_ENQUEUED] = rd(&bc[EMU_CNT_ENQUEUED]);
	out[LEMU_ST_ECN_MARKED_RED] = rd(&bc[EMU_CNT_ECN_MARK_RED]);
	out[LEMU_ST_ECN_MARKED] = out[LEMU_ST_ECN_MARKED_LOSS] + out[LEMU_ST_ECN_MARKED_RED];
	out[LEMU_ST_RED_NOT_ECT] = rd(&bc[EMU_CNT_RED_NOT_ECT]);
	out[LEMU_ST_PFC_XOFF] = rd(&bc[EMU_CNT_PFC_XOFF]);
	out[LEMU_ST_PFC_REFRESH] = rd(&bc[EMU_CNT_PFC_REFRESH]);
	out[LEMU_ST_PFC_XON] = rd(&bc[EMU_CNT_PFC_XON]);
	out[LEMU_ST_QUEUE_MAX_BYTES] = rd(&bn->max_bytes);
	out[LEMU_ST_PFC_XOFF_AT_BYTES] = rd(&bn->xoff_at_bytes);
	out[LEMU_ST_PFC_XON_AT_BYTES] = rd(&bn->xon_at_bytes);
	out[LEMU_ST_SPEC_CHANGES] = rd(&ws[0].stat[LEMU_ST_SPEC_CHANGES]);
	/* the port's drops, once (every worker reads the same port), plus the spread's */
	if (rte_eth_stats_get(ws[0].rx_port, &es) == 0)
		out[LEMU_ST_RX_MISSED] += es.imissed + es.rx_nombuf;
}

void
lemu_dir_loss_bursts(const struct lemu_dir *ws, unsigned n, uint64_t out[EMU_LOSS_BURST_BUCKETS])
{
	for (unsigned i = 0; i < EMU_LOSS_BURST_BUCKETS; i++) {
		out[i] = 0;
		for (unsigned k = 0; k < n; k++)
			out[i] += ws[k].bursts_prev[i] + rd(&ws[k].im.loss.stats.loss_bursts[i]);
	}
}

void
lemu_dir_finish(struct lemu_dir *d)
{
	emu_loss_flush(&d->im.loss);
}
