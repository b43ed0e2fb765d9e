/* SPDX-License-Identifier: BSD-3-Clause */
/* PFC-Relay protocol logic without DPDK: queues, scheduler, pacer, PFC generation and relay. */
#include "relay_core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const path_names[RELAY_NPATH] = {"l2r", "r2l"};

const char *
relay_path_name(unsigned p)
{
	return p < RELAY_NPATH ? path_names[p] : "?";
}

static const char *const drop_names[RELAY_DROP__COUNT] = {
#define RELAY_DROP_NAME(e, n) n,
    RELAY_DROPS(RELAY_DROP_NAME)
#undef RELAY_DROP_NAME
};

const char *
relay_drop_name(unsigned d)
{
	return d < RELAY_DROP__COUNT ? drop_names[d] : "?";
}

/* ns a frame of @p len bytes occupies the egress at @p rate_bps (0: no pacing). */
static uint64_t
wire_ns(uint64_t rate_bps, uint32_t len)
{
	if (rate_bps == 0)
		return 0;
	return ((uint64_t)len + RELAY_WIRE_OVERHEAD) * 8u * 1000000000u / rate_bps;
}

int
relay_path_init(struct relay_path *p, const struct relay_path_cfg *c)
{
	uint32_t slots = 1;

	memset(p, 0, sizeof(*p));
	if (c->slots == 0 || c->slots > (1u << 30) || (c->gen_pfc && c->xon_bytes >= c->xoff_bytes))
		return -EINVAL;
	while (slots < c->slots)
		slots <<= 1;
	for (unsigned n = 0; n < PFC_NUM_PRIO; n++) {
		p->q[n].slot = calloc(slots, sizeof(void *));
		p->q[n].len = calloc(slots, sizeof(uint32_t));
		p->q[n].mask = slots - 1;
		if (p->q[n].slot == NULL || p->q[n].len == NULL) {
			relay_path_free(p);
			return -ENOMEM;
		}
		pfc_wd_init(&p->wd[n], c->wd_detect_ns, c->wd_restore_ns, c->wd_action);
	}
	p->limit_bytes = c->limit_bytes;
	pfc_pause_init(&p->pause, c->rate_bps, c->lossless, false);
	p->wd_on = c->wd_on;
	p->pacer.rate_bps = c->rate_bps;
	p->pacer.burst_ns = c->burst_ns;
	p->gen_pfc = c->gen_pfc;
	p->xoff_bytes = c->xoff_bytes;
	p->xon_bytes = c->xon_bytes;
	p->xoff_quanta = c->xoff_quanta;
	/* refresh at half the pause time (ns3-rdma qbb-net-device.cc: PauseTime/2;
	 * docs/references.md) */
	p->refresh_ns = pfc_quanta_to_ns(c->xoff_quanta, c->ingress_bps) / 2;
	if (p->refresh_ns == 0)
		p->refresh_ns = 1;
	return 0;
}

void
relay_path_free(struct relay_path *p)
{
	for (unsigned n = 0; n < PFC_NUM_PRIO; n++) {
		free(p->q[n].slot);
		free(p->q[n].len);
		p->q[n].slot = NULL;
		p->q[n].len = NULL;
	}
}

static inline uint32_t
q_count(const struct relay_q *q)
{
	return q->tail - q->head;
}

static void
count_drop(struct relay_q *q, enum relay_drop why, uint32_t len)
{
	q->st.drops[why]++;
	q->st.drop_bytes += len;
}

static inline bool
wd_dropping(const struct relay_path *p, unsigned prio)
{
	return p->wd_on && p->wd[prio].state == PFC_WD_STORM && p->wd[prio].action == PFC_WD_DROP;
}

enum relay_enq
relay_enqueue(struct relay_path *p, unsigned prio, void *frame, uint32_t len, uint64_t now_ns)
{
	struct relay_q *q = &p->q[prio & 7];

	(void)now_ns;
	if (wd_dropping(p, prio & 7)) {
		count_drop(q, RELAY_DROP_WATCHDOG, len);
		return RELAY_ENQ_DROP;
	}
	if (q->bytes + len > p->limit_bytes) {
		count_drop(q, p->gen_pfc ? RELAY_DROP_HEADROOM_FULL : RELAY_DROP_BUFFER_FULL, len);
		return RELAY_ENQ_DROP;
	}
	if (q_count(q) > q->mask) {
		count_drop(q, RELAY_DROP_QUEUE_SLOTS, len);
		return RELAY_ENQ_DROP;
	}
	q->slot[q->tail & q->mask] = frame;
	q->len[q->tail & q->mask] = len;
	q->tail++;
	q->bytes += len;
	q->st.enq_pkts++;
	q->st.enq_bytes += len;
	if (q->bytes > q->st.hwm_bytes)
		q->st.hwm_bytes = q->bytes;
	return RELAY_ENQ_OK;
}

bool
relay_prio_blocked(struct relay_path *p, unsigned prio, uint64_t now_ns)
{
	/* forward and drop actions: the storming priority no longer honours PFC (SONiC) */
	if (p->wd_on && pfc_wd_ignores_pfc(&p->wd[prio]))
		return false;
	return pfc_pause_blocked(&p->pause, prio, now_ns);
}

unsigned
relay_dequeue(struct relay_path *p, uint64_t now_ns, void **out, uint32_t *lens, uint8_t *prios,
	      unsigned max)
{
	struct relay_pacer *pc = &p->pacer;
	unsigned n = 0;

	while (n < max) {
		unsigned pr = 8;
		struct relay_q *q;
		uint64_t start;

		if (pc->rate_bps && now_ns < pc->next_ns)
			break; /* paced: the egress is still "sending" the previous frame */
		for (unsigned i = 0; i < PFC_NUM_PRIO; i++) {
			unsigned c = (p->rr + i) & 7;

			if (q_count(&p->q[c]) && !relay_prio_blocked(p, c, now_ns)) {
				pr = c;
				break;
			}
		}
		if (pr == 8)
			break;
		p->rr = (uint8_t)((pr + 1) & 7);
		q = &p->q[pr];
		out[n] = q->slot[q->head & q->mask];
		lens[n] = q->len[q->head & q->mask];
		prios[n] = (uint8_t)pr;
		q->head++;
		q->bytes -= lens[n];
		q->st.deq_pkts++;
		q->st.deq_bytes += lens[n];
		if (p->wd_on && p->wd[pr].state == PFC_WD_STORM)
			p->tx_while_storm[pr]++;
		/* virtual clock: idle credit is bounded by burst_ns */
		start = pc->next_ns;
		if (now_ns > pc->burst_ns && start < now_ns - pc->burst_ns)
			start = now_ns - pc->burst_ns;
		pc->next_ns = start + wire_ns(pc->rate_bps, lens[n]);
		n++;
	}
	return n;
}

void
relay_requeue_head(struct relay_path *p, unsigned prio, void *frame, uint32_t len)
{
	struct relay_q *q = &p->q[prio & 7];
	uint64_t w = wire_ns(p->pacer.rate_bps, len);

	q->head--;
	q->slot[q->head & q->mask] = frame;
	q->len[q->head & q->mask] = len;
	q->bytes += len;
	q->st.deq_pkts--;
	q->st.deq_bytes -= len;
	p->pacer.next_ns = p->pacer.next_ns > w ? p->pacer.next_ns - w : 0;
}

uint8_t
relay_pfc_rx(struct relay_path *p, const struct pfc_frame *f, uint64_t now_ns)
{
	uint8_t mask = f->enable & p->pause.lossless;
	struct pfc_frame g;

	if (mask == 0 || (f->opcode == PAUSE_OPCODE && !p->pause.pause_ok))
		return pfc_pause_rx(&p->pause, f, now_ns); /* counted as ignored */
	for (unsigned n = 0; n < PFC_NUM_PRIO; n++) {
		if (!(mask & (1u << n)) || !p->wd_on)
			continue;
		pfc_wd_on_pfc(&p->wd[n], now_ns);
		if (pfc_wd_ignores_pfc(&p->wd[n])) {
			/* SONiC drop/forward: received pause frames are discarded */
			mask &= (uint8_t) ~(1u << n);
			p->wd_ignored_pfc[n]++;
		}
	}
	if (mask == 0)
		return 0;
	g = *f;
	g.enable = mask;
	return pfc_pause_rx(&p->pause, &g, now_ns);
}

uint8_t
relay_convert(const struct pfc_frame *f, uint8_t obeyed, uint64_t from_bps, uint64_t to_bps,
	      uint16_t quanta[PFC_NUM_PRIO])
{
	uint8_t en = f->enable & obeyed;

	for (unsigned n = 0; n < PFC_NUM_PRIO; n++)
		quanta[n] = (en >> n & 1) ? pfc_quanta_convert(f->quanta[n], from_bps, to_bps) : 0;
	return en;
}

static unsigned
flush(struct relay_q *q, void **flushed, unsigned max)
{
	unsigned n = 0;

	while (n < max && q_count(q)) {
		uint32_t len = q->len[q->head & q->mask];

		flushed[n++] = q->slot[q->head & q->mask];
		q->head++;
		q->bytes -= len;
		count_drop(q, RELAY_DROP_WATCHDOG, len);
	}
	return n;
}

unsigned
relay_tick(struct relay_path *p, uint64_t now_ns, struct relay_pfc_out *out, void **flushed,
	   unsigned max)
{
	unsigned nf = 0;

	memset(out, 0, sizeof(*out));
	pfc_pause_mask(&p->pause, now_ns); /* expire timers, so next_event never sees stale ones */
	for (unsigned n = 0; n < PFC_NUM_PRIO; n++) {
		struct relay_xoff *x = &p->xo[n];
		uint64_t b = p->q[n].bytes;

		if (!(p->pause.lossless & (1u << n)))
			continue;
		if (p->wd_on) {
			pfc_wd_step(&p->wd[n], pfc_pause_blocked(&p->pause, n, now_ns), now_ns);
			if (wd_dropping(p, n))
				nf += flush(&p->q[n], flushed + nf, max - nf);
		}
		if (!p->gen_pfc)
			continue;
		/* 802.1Qbb as a PFC device: XOFF above xoff, refresh before expiry, XON at xon */
		if (!x->sent && b >= p->xoff_bytes && !wd_dropping(p, n)) {
			x->sent = true;
			x->xoff_sent++;
		} else if (x->sent && (b <= p->xon_bytes || wd_dropping(p, n))) {
			x->sent = false;
			x->xon_sent++;
			out->enable |= (uint8_t)(1u << n);
			out->quanta[n] = 0;
			continue;
		} else if (x->sent && now_ns >= x->refresh_ns) {
			x->refreshes++;
		} else {
			continue;
		}
		x->refresh_ns = now_ns + p->refresh_ns;
		out->enable |= (uint8_t)(1u << n);
		out->quanta[n] = p->xoff_quanta;
	}
	return nf;
}

uint64_t
relay_next_event(const struct relay_path *p, uint64_t now_ns)
{
	uint64_t t = pfc_pause_next_expiry(&p->pause);

	if (t < now_ns)
		t = UINT64_MAX; /* expired, not yet cleared by relay_tick(): nothing to wait for */

	for (unsigned n = 0; n < PFC_NUM_PRIO; n++) {
		if (q_count(&p->q[n]) && p->pause.until_ns[n] == 0) {
			uint64_t ready = p->pacer.rate_bps && p->pacer.next_ns > now_ns
					     ? p->pacer.next_ns
					     : now_ns;
			if (ready < t)
				t = ready;
		}
		if (p->gen_pfc && p->xo[n].sent && p->xo[n].refresh_ns < t)
			t = p->xo[n].refresh_ns;
		if (p->wd_on && (p->pause.until_ns[n] || p->wd[n].state == PFC_WD_STORM) &&
		    now_ns + 1000000u < t)
			t = now_ns + 1000000u; /* watchdog polling: 1 ms */
	}
	return t;
}

uint32_t
relay_queued(const struct relay_path *p)
{
	uint32_t n = 0;

	for (unsigned i = 0; i < PFC_NUM_PRIO; i++)
		n += q_count(&p->q[i]);
	return n;
}

uint64_t
relay_bdp_bytes(uint64_t rate_bps, uint64_t rtt_ns)
{
	unsigned __int128 bits = (unsigned __int128)rate_bps * rtt_ns;

	return (uint64_t)((bits + 8000000000ull - 1) / 8000000000ull);
}

uint64_t
relay_auto_buffer(uint64_t rate_bps, uint64_t rtt_ns, uint32_t frame_bytes)
{
	/*
	 * Swing (Chen et al., TPDS 2023) §5.2, Eq. (5): R_in(t) = R_out(t - 2D), so the queue
	 * integral of (R_in - R_out) over any window of 2D is at most 2D * BW:
	 * "the minimum buffer required for the PFC-Relay queue is one BDP".
	 */
	uint64_t bdp = relay_bdp_bytes(rate_bps, rtt_ns);

	return bdp + bdp / 10 + 4ull * frame_bytes;
}

static const char *const pstat_names[RELAY_PS__COUNT] = {
#define RELAY_PSTAT_NAME(e, n) n,
    RELAY_PSTATS(RELAY_PSTAT_NAME)
#undef RELAY_PSTAT_NAME
};

const char *
relay_pstat_name(unsigned i)
{
	return i < RELAY_PS__COUNT ? pstat_names[i] : "?";
}

void
relay_prio_stats(struct relay_path *p, unsigned prio, uint64_t now_ns, uint64_t *v)
{
	const struct relay_q *q = &p->q[prio];

	v[RELAY_PS_ENQ_PKTS] = q->st.enq_pkts;
	v[RELAY_PS_ENQ_BYTES] = q->st.enq_bytes;
	v[RELAY_PS_DEQ_PKTS] = q->st.deq_pkts;
	v[RELAY_PS_DEQ_BYTES] = q->st.deq_bytes;
	v[RELAY_PS_QUEUED_BYTES] = q->bytes;
	v[RELAY_PS_HWM_BYTES] = q->st.hwm_bytes;
	v[RELAY_PS_DROP_BUFFER_FULL] = q->st.drops[RELAY_DROP_BUFFER_FULL];
	v[RELAY_PS_DROP_HEADROOM_FULL] = q->st.drops[RELAY_DROP_HEADROOM_FULL];
	v[RELAY_PS_DROP_WATCHDOG] = q->st.drops[RELAY_DROP_WATCHDOG];
	v[RELAY_PS_DROP_QUEUE_SLOTS] = q->st.drops[RELAY_DROP_QUEUE_SLOTS];
	v[RELAY_PS_DROP_BYTES] = q->st.drop_bytes;
	v[RELAY_PS_PFC_RX_XOFF] = p->pause.rx_xoff[prio];
	v[RELAY_PS_PFC_RX_XON] = p->pause.rx_xon[prio];
	v[RELAY_PS_PAUSES] = p->pause.pauses[prio];
	v[RELAY_PS_PAUSED_NS] = pfc_pause_total_ns(&p->pause, prio, now_ns);
	v[RELAY_PS_PAUSED_NOW] = p->pause.until_ns[prio] > now_ns;
	v[RELAY_PS_PFC_RELAYED] = p->pfc_relayed_prio[prio];
	v[RELAY_PS_XOFF_SENT] = p->xo[prio].xoff_sent;
	v[RELAY_PS_XOFF_REFRESH] = p->xo[prio].refreshes;
	v[RELAY_PS_XON_SENT] = p->xo[prio].xon_sent;
	v[RELAY_PS_WD_STORMS] = p->wd[prio].storms;
	v[RELAY_PS_WD_RESTORES] = p->wd[prio].restores;
	v[RELAY_PS_WD_IN_STORM] = p->wd[prio].state == PFC_WD_STORM;
	v[RELAY_PS_WD_IGNORED_PFC] = p->wd_ignored_pfc[prio];
	v[RELAY_PS_TX_WHILE_STORM] = p->tx_while_storm[prio];
}
