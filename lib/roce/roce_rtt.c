/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_rtt.c
 * RTT sampler and adaptive retransmission timeout of RC QPs (roce_rtt.h).
 *
 * Every request packet the requester transmits stamps its PSN's slot in a
 * per-QP ring (roce_rtt_sent); a retransmission stamps it again and marks it
 * (Karn). When a response moves the oldest unacknowledged PSN forward, the
 * completer hands the acknowledged range and the response's own PSN to
 * roce_rtt_acked(), which clears the range and takes at most one sample:
 * now minus the send time of the response's PSN, if that PSN was sent
 * exactly once and no PSN of the range was ever retransmitted.
 *
 * The ring has a power-of-two size of at least the QP's window. A slot holds
 * the send time + 1 (0: no packet of this PSN was sent, e.g. the middle PSNs
 * of a READ) with ROCE_RTT_RETX set once the PSN was retransmitted. Slots
 * outside [una, nxt) are zero: acknowledged slots are cleared, RTS clears all.
 * A READ may span more PSNs than the ring, but no later PSN is sent until the
 * READ is acknowledged to within one window, so outstanding slots never
 * collide.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_int.h"

#define ROCE_RTT_RETX (1ull << 63)
/* a notice (RACK/SACK) already gave this PSN's sample: a later ACK naming it gives none */
#define ROCE_RTT_SAMPLED (1ull << 62)
#define ROCE_RTT_FLAGS (ROCE_RTT_RETX | ROCE_RTT_SAMPLED)

/* ---- the estimator (VRP, Denis LIP RR-2000-11, §2.5.1) ---- */

static uint64_t
rto_clamp(uint64_t t, uint64_t min_ns, uint64_t max_ns)
{
	if (t < min_ns)
		t = min_ns;
	return t > max_ns ? max_ns : t;
}

void
roce_rtt_est_init(struct roce_rtt_est *e, uint64_t initial_ns, uint64_t min_ns, uint64_t max_ns)
{
	e->srtt = e->rttvar = e->samples = e->min_rtt = 0;
	e->stall = 0;
	memset(e->stall_top, 0, sizeof(e->stall_top));
	memset(e->stall_at, 0, sizeof(e->stall_at));
	e->backoffs = 0;
	e->rto = rto_clamp(initial_ns, min_ns, max_ns);
}

/*
 * timeout = max(RTT + max(4 D, min_ns), min_rtt + S): the floor bounds the
 * margin above the smoothed RTT, as Linux TCP
 * applies its rto_min (and RFC 6298 its clock granularity G: RTO = SRTT +
 * max(G, K RTTVAR)). A path whose samples barely vary (D near 0) would
 * otherwise time out on any delay of a few hundred us beyond its mean, e.g. a
 * descheduled peer.
 */
static uint64_t
rto_of(const struct roce_rtt_est *e, uint64_t min_ns, uint64_t max_ns)
{
	uint64_t margin = 4 * e->rttvar;
	uint64_t t = e->srtt + (margin > min_ns ? margin : min_ns);

	/*
	 * The stall allowance: at least the largest recent sample (min_rtt + S),
	 * not srtt + S: the samples that raised S raised srtt too, and counting
	 * both put a 40 ms path's timeout at 1.5 RTT on a loaded host.
	 */
	if (e->stall && e->min_rtt + e->stall > t)
		t = e->min_rtt + e->stall;
	return rto_clamp(t, min_ns, max_ns);
}

/*
 * The stall allowance (ours; for the tail target at 2 ms RTT). A fixed floor has to
 * cover the longest stall the host may ever show: 10 ms on this shared host,
 * 5 RTT at 2 ms. Instead the floor follows what the samples show: S is the
 * third largest excess M - min_rtt seen lately, a decaying maximum (halved
 * every half-life @p hl_ns; RFC 8985 keeps RACK's reordering window the same
 * way, grown on evidence and decayed after 16 recoveries without any, and
 * Linux takes min_rtt over a window, not forever). A D smoothed over 8 samples
 * forgets a rare stall of several ms within a few round trips; S remembers it
 * for seconds, so the next one does not fire the timer. On a quiet host S is
 * the samples' jitter and the timeout approaches RTT + max(4 D, rto_min); on a
 * loaded one it rises to the stalls. The sample of a spurious expiry (its
 * original's ACK, roce_rtt_acked) teaches it the stall that fired the timer.
 *
 * Why not the largest: a stall must be seen ROCE_RTO_STALL_RANK
 * (3) times within the memory before the timer waits for it. On a quiet host
 * a 2 ms path's 400 samples of one write_lat run had an excess of 65 us
 * (p50), 250 us (p99), 266 us (p99.5) and one of 1.6 ms, a descheduling of
 * the sender itself. With the largest, that one sample held the timeout at
 * 1.7 RTT for the rest of the run and half the tail resends missed 1.5 RTT
 * (bench/rnic/rto_tail.py: 53 % within 1.0-1.5 RTT; the second largest 71 %,
 * the third 95 %, with as many spurious expiries on the lossless path: 20,
 * 24, 23 in 10 rounds). An isolated stall costs at most one spurious expiry
 * (found by F-RTO; its sample is then a sighting). A bulk flow takes
 * thousands of samples a second, so a stall that recurs is seen three times
 * anyway; the rank matters for sparse flows, where on a loaded host it trades
 * more spurious expiries for the shorter tail (docs/performance.md).
 */
static void
stall_note(struct roce_rtt_est *e, uint64_t m, uint64_t now, uint64_t hl_ns)
{
	uint64_t excess = m - e->min_rtt; /* min_rtt <= m: updated first */
	uint64_t *v = e->stall_top, *at = e->stall_at;
	unsigned int i, j;

	if (!hl_ns) {
		memset(v, 0, sizeof(e->stall_top));
		e->stall = 0;
		return;
	}
	for (i = 0; i < ROCE_RTO_STALL_RANK; i++) { /* halve each per half-life since set */
		if (v[i] && now > at[i] && now - at[i] >= hl_ns) {
			uint64_t n = (now - at[i]) / hl_ns;

			v[i] = n >= 64 ? 0 : v[i] >> n;
			at[i] += n * hl_ns;
		}
	}
	for (i = 1; i < ROCE_RTO_STALL_RANK; i++) /* older ones decayed more: keep them sorted */
		for (j = i; j > 0 && v[j] > v[j - 1]; j--) {
			uint64_t tv = v[j], ta = at[j];

			v[j] = v[j - 1], at[j] = at[j - 1];
			v[j - 1] = tv, at[j - 1] = ta;
		}
	for (i = 0; i < ROCE_RTO_STALL_RANK && excess < v[i]; i++)
		;
	if (i < ROCE_RTO_STALL_RANK) { /* insert, the smallest falls out */
		for (j = ROCE_RTO_STALL_RANK - 1; j > i; j--)
			v[j] = v[j - 1], at[j] = at[j - 1];
		v[i] = excess;
		at[i] = now;
	}
	e->stall = v[ROCE_RTO_STALL_RANK - 1];
}

void
roce_rtt_est_sample(struct roce_rtt_est *e, uint64_t m, uint64_t now, uint64_t stall_ns,
		    uint64_t min_ns, uint64_t max_ns)
{
	if (!e->min_rtt || m < e->min_rtt)
		e->min_rtt = m;
	e->backoffs = 0;
	stall_note(e, m, now, stall_ns);
	if (e->samples++ == 0) {
		/* VRP §2.5.1 "Initialization": a first timeout of 2 RTT, so D_init = RTT_init / 2
		 */
		e->srtt = m;
		e->rttvar = m / 2;
	} else {
		/* D = a D + (1 - a)|RTT - M| with the RTT before this sample (Jacobson; RFC
		 * 6298 2.3) */
		uint64_t err = e->srtt > m ? e->srtt - m : m - e->srtt;

		e->rttvar = (7 * e->rttvar + err) / 8; /* a = 7/8 */
		e->srtt = (7 * e->srtt + m) / 8;       /* RTT = a RTT + (1 - a) M */
	}
	e->rto = rto_of(e, min_ns, max_ns); /* timeout = RTT + max(4 D, floors) */
}

void
roce_rtt_est_backoff(struct roce_rtt_est *e, uint64_t min_ns, uint64_t max_ns)
{
	/*
	 * KARN (VRP §2.5.1): "double the timeout each time a packet is lost".
	 * The paper goes on: "multiply RTT and D rather than timeout". We double
	 * the timeout only and keep RTT and D, as Karn and Partridge's original
	 * rule and RFC 6298 §5.5/§5.7 do: the backed-off timeout holds until the
	 * next fresh (non-retransmitted) PSN is acknowledged, whose sample then
	 * recomputes the timeout from the undoubled estimate. Doubling RTT and D
	 * themselves left them inflated for tens of samples after each expiry and
	 * compounded over consecutive losses (docs/transport.md §5.2 gives the
	 * measurement: exit RTT 134 ms on a 40 ms path). At the cap nothing doubles.
	 */
	if (e->rto >= max_ns)
		return;
	e->rto = rto_clamp(e->rto > max_ns / 2 ? max_ns : 2 * e->rto, min_ns, max_ns);
	/*
	 * The back-off floor (ours): the first expiry fires at the
	 * small timeout the tail target needs (RTT + 500 us at 2 ms); if its
	 * resend is not answered either, the peer or the path is down or stalled,
	 * and the next expiries wait at least ROCE_RTO_BACKOFF_MIN_NS. Without
	 * it, retry_cnt's 7 retries (IBTA C9-140) doubling from 0.6 ms spent their
	 * budget in 152 ms, and a peer descheduled that long ended its QP in
	 * IBV_WC_RETRY_EXC_ERR; with it they span 10 + 20 + ... + 640 ms = 1.27 s
	 * (t_rto_backoff_floor), as a 10 ms --rto-min would
	 * (RFC 6298 2.4 keeps its 1 s minimum for the same reason).
	 */
	if (e->rto < ROCE_RTO_BACKOFF_MIN_NS)
		e->rto = rto_clamp(ROCE_RTO_BACKOFF_MIN_NS, min_ns, max_ns);
	e->backoffs++;
}

void
roce_rtt_est_rearm(struct roce_rtt_est *e, uint64_t initial_ns, uint64_t min_ns, uint64_t max_ns)
{
	e->backoffs = 0;
	e->rto = e->samples ? rto_of(e, min_ns, max_ns) : rto_clamp(initial_ns, min_ns, max_ns);
}

/* ---- the per-QP sampler ---- */

static uint32_t
ring_size(uint32_t window)
{
	uint32_t n = 1;

	while (n < window)
		n <<= 1;
	return n;
}

int
roce_rtt_alloc(struct roce_qp *qp)
{
	uint32_t n = ring_size(qp->window);
	uint64_t *r;

	if (qp->type != IBV_QPT_RC)
		return 0;
	if (qp->rtt_sent && qp->rtt_mask + 1 >= n)
		return 0;
	/* calloc: a large ring is mapped lazily, only slots in use cost memory */
	r = calloc(n, sizeof(*r));
	if (!r)
		return -ENOMEM;
	free(qp->rtt_sent);
	qp->rtt_sent = r; /* outstanding stamps are lost: those PSNs give no sample */
	qp->rtt_mask = n - 1;
	qp->rtt_dirty = false;
	return 0;
}

void
roce_rtt_free(struct roce_qp *qp)
{
	free(qp->rtt_sent);
	qp->rtt_sent = NULL;
}

uint64_t
roce_qp_rto_ns(const struct roce_qp *qp)
{
	if (qp->attr.timeout == 0)
		return 0; /* IBTA: timeout 0 means no transport timer, in both modes */
	if (qp->dev->cfg.rto_mode == ROCE_RTO_FIXED)
		return roce_ack_timeout_ns(qp->attr.timeout);
	return qp->rtt.rto;
}

void
roce_rtt_reset(struct roce_qp *qp)
{
	const struct roce_dev_cfg *c = &qp->dev->cfg;

	roce_rtt_est_init(&qp->rtt, roce_ack_timeout_ns(qp->attr.timeout), c->rto_min_ns,
			  c->rto_max_ns);
	qp->req.rto_defer = false;
	qp->rto_spur_armed = false;
	qp->rto_frto_armed = false;
	qp->rto_found_spurious = false;
	/* a fresh ring is already zero: clearing it would map all its pages */
	if (qp->rtt_sent && qp->rtt_dirty)
		memset(qp->rtt_sent, 0, ((size_t)qp->rtt_mask + 1) * sizeof(*qp->rtt_sent));
	qp->rtt_dirty = false;
}

void
roce_rtt_sent(struct roce_qp *qp, uint32_t psn, bool retx)
{
	uint64_t *slot;

	if (roce_unlikely(!qp->rtt_sent))
		return;
	slot = &qp->rtt_sent[psn & qp->rtt_mask];
	qp->rtt_dirty = true;
	/* Karn: once retransmitted, a PSN never gives a sample; its time still sets the timer */
	*slot = (qp->dev->now + 1) | (retx || (*slot & ROCE_RTT_RETX) ? ROCE_RTT_RETX : 0);
}

uint64_t
roce_rtt_sent_at(const struct roce_qp *qp, uint32_t psn)
{
	uint64_t s;

	if (!qp->rtt_sent)
		return 0;
	s = qp->rtt_sent[psn & qp->rtt_mask] & ~ROCE_RTT_FLAGS;
	return s ? s - 1 : 0; /* a stamp of time 0 reads as "none": the timer falls back to now */
}

/* The latest expiry was spurious: counted, traced, and told to the recovery (roce_rtt_info). */
static void
rto_spurious_found(struct roce_qp *qp)
{
	roce_qp_stat(qp, ROCE_STAT_RTO_SPURIOUS, 1);
	roce_trace_loss(qp, ROCE_TRACE_RTO_SPURIOUS, qp->rto_spur_psn);
	qp->rto_found_spurious = true;
}

/*
 * The Eifel response to the spurious expiry just found, on the ACK of @p n
 * packets (roce_lwin_undo): counted as undone, or as left cut by an ECN echo.
 */
static void
rto_lwin_undo(struct roce_qp *qp, uint32_t n)
{
	int r =
	    roce_lwin_undo(&qp->lwin, qp->window, qp->comp.una, qp->req.psn, n, qp->comp.rx_becn);

	if (r == ROCE_LWIN_UNDONE)
		roce_qp_stat(qp, ROCE_STAT_LWIN_UNDONE, 1);
	else if (r == ROCE_LWIN_UNDO_ECN)
		roce_qp_stat(qp, ROCE_STAT_LWIN_UNDO_ECN, 1);
}

/*
 * One RTT sample: now minus @p sent, to the estimator and, unless @p timer_only,
 * to the loss window and the CC.
 */
static void
rtt_take_to(struct roce_qp *qp, uint64_t sent, bool timer_only)
{
	const struct roce_dev_cfg *c = &qp->dev->cfg;
	uint64_t now = qp->dev->now;

	if (roce_unlikely(now < sent))
		return; /* a clock that went backwards gives no sample */
	roce_rtt_est_sample(&qp->rtt, now - sent, now, c->rto_stall_ns, c->rto_min_ns,
			    c->rto_max_ns);
	roce_qp_stat(qp, ROCE_STAT_RTT_SAMPLES, 1);
	if (timer_only)
		return;
	roce_lwin_on_rtt(&qp->lwin, now - sent);
	if (qp->cc->on_rtt)
		qp->cc->on_rtt(qp, qp->cc_priv, now, now - sent);
}

static void
rtt_take(struct roce_qp *qp, uint64_t sent)
{
	rtt_take_to(qp, sent, false);
}

void
roce_rtt_acked(struct roce_qp *qp, uint32_t old_una, uint32_t una, bool has_psn, uint32_t psn)
{
	const struct roce_dev_cfg *c = &qp->dev->cfg;
	uint32_t n = (uint32_t)roce_psn_diff(una, old_una);
	uint64_t stamp = 0, now = qp->dev->now;
	bool karn = false, frto = false;

	if (!qp->rtt_sent || roce_psn_diff(una, old_una) <= 0)
		return;
	if (has_psn && roce_psn_in_window(psn, old_una, n))
		stamp = qp->rtt_sent[psn & qp->rtt_mask];
	if (qp->rto_frto_armed ||
	    (qp->rto_spur_armed && qp->rto_spur_orig && c->rto_mode == ROCE_RTO_ADAPTIVE &&
	     roce_psn_in_window(qp->rto_spur_psn, old_una, n))) {
		/*
		 * F-RTO's test (RFC 5682 2.1), for a head-only resend (--rto
		 * adaptive; rto_spur_orig: the head had been sent once): the ACK
		 * of the resent head, or the next ACK (B ACKs each paced packet,
		 * so the first one may cover the head alone), acknowledges the PSN
		 * after the head from a send before the resend (the path keeps
		 * order: it reached the receiver before the resend did). Under
		 * Go-Back-N the receiver took it, so it had the head's original.
		 * Under gbone/irn a lost head with the next PSN received raises
		 * a notice, and the head was never resent for one. Either way the
		 * head was not lost: the expiry was spurious, however late the ACK
		 * came (a stall longer than the 3/4 RTT rule below sees).
		 */
		uint32_t nx = roce_psn_add(qp->rto_spur_psn, 1);

		if (roce_psn_in_window(nx, old_una, n)) {
			uint64_t sl = qp->rtt_sent[nx & qp->rtt_mask];

			uint64_t at = (sl & ~ROCE_RTT_FLAGS) - 1;

			/*
			 * its last send before the resend, or one this ACK cannot
			 * answer (within 3/4 of the least RTT: a go-back the
			 * head's ACK started may have resent it meanwhile)
			 */
			frto = sl && roce_psn_cmp(nx, qp->rto_spur_nxt) < 0 &&
			       (at < qp->rto_spur_at || (qp->rtt.min_rtt && now >= at &&
							 now - at < qp->rtt.min_rtt / 4 * 3));
			qp->rto_frto_armed = false;
		} else if (!qp->rto_frto_armed) {
			/* the ACK covers the head alone: the next one decides */
			qp->rto_frto_armed = roce_psn_cmp(nx, qp->req.psn) < 0;
		}
	}
	if (frto && c->rto_mode == ROCE_RTO_ADAPTIVE && !qp->rto_spur_armed) {
		/* found on the ACK after the head's (which ended the back-off) */
		rto_spurious_found(qp);
		rto_lwin_undo(qp, n);
		frto = false;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t *slot = &qp->rtt_sent[roce_psn_add(old_una, i) & qp->rtt_mask];

		karn |= (*slot & ROCE_RTT_RETX) != 0;
		*slot = 0;
	}
	if (qp->rto_spur_armed && roce_psn_in_window(qp->rto_spur_psn, old_una, n)) {
		/*
		 * Spurious-expiry detection (ours; Eifel's question, RFC 3522,
		 * answered without timestamps): the answer to a resend cannot come
		 * sooner than the path's round trip, so an ACK of the resent PSN
		 * within 3/4 of the smallest RTT sample after the resend answers
		 * the original send: the timer fired on a packet that was not lost.
		 * A late-counted one (its ACK slower than that) is not counted: the
		 * figure is a lower bound.
		 */
		bool adaptive = c->rto_mode == ROCE_RTO_ADAPTIVE;

		qp->rto_spur_armed = false;
		if (qp->rtt.min_rtt && now >= qp->rto_spur_at &&
		    now - qp->rto_spur_at < qp->rtt.min_rtt / 4 * 3) {
			rto_spurious_found(qp);
			qp->rto_frto_armed = false; /* found: not counted again */
			/*
			 * The Eifel response (RFC 4015): the timeout restarted the
			 * loss-reactive window at ROCE_LWIN_MIN for a path that lost
			 * nothing; restore it. Each spurious expiry otherwise cost a
			 * slow start (7 round trips to 440 packets at 10 ms) on a host
			 * whose stalls outlast --rto-min.
			 */
			rto_lwin_undo(qp, n);
			if (adaptive && qp->rto_spur_orig) {
				/*
				 * The ACK answers the one send of the resent PSN before
				 * the expiry: now minus that send is a true sample of
				 * how late its ACK came (what Eifel takes with
				 * timestamps, RFC 3522/4015). It ends the back-off (the
				 * doubling undone, as Linux does on a valid sample
				 * after a spurious RTO) and teaches D the stall that
				 * fired the timer (t_rto_spurious_sample).
				 * The timer's only: the loss window and the CC read a
				 * sample above 5/4 of the least RTT as a queue, and a
				 * stall is not one (fed to them, it could let the next random
				 * loss cut the window for good under irn).
				 * Before, the doubled timeout held until a PSN sent
				 * once was acknowledged.
				 */
				rtt_take_to(qp, qp->rto_spur_orig, true);
				qp->rto_spur_orig = 0;
				return;
			}
		} else if (adaptive && frto) {
			rto_spurious_found(qp);
			/*
			 * Found by F-RTO's test: restore the loss window (above).
			 * Undetected, an expiry on a stall in a round whose RTT
			 * samples the stall inflated ("a queue") cut ssthresh for
			 * good: irn then crept up by one packet per RTT, at a
			 * third of the fixed timer's goodput for a whole run.
			 * No sample: the ACK may be the resend's duplicate's.
			 */
			rto_lwin_undo(qp, n);
		}
		if (adaptive) {
			/*
			 * The resent PSN is acknowledged: end the back-off (the
			 * timeout from RTT and D again; before any sample, the
			 * QP's IBTA timer), with no sample (Karn: the ACK may
			 * answer either send). Ours, as QUIC resets its PTO
			 * back-off on an acknowledgement (RFC 9002 6.2.1); RFC
			 * 6298 5.7 keeps it until a fresh sample. Kept, it stayed
			 * at --rto-max under Go-Back-N at 10 % loss, where every
			 * go-back round is cut by the next loss and every PSN is
			 * resent before its ACK (no fresh sample ever), and each
			 * loss the NAKs could not repair cost 1 s: 5-10x the run
			 * time of the fixed 67 ms timer, and with the head-first
			 * expiry rnic A never finished
			 * (t_rto_backoff_ends_on_repair, t_gbn_loss10_sim). A
			 * timeout truly below a grown round trip is still
			 * corrected: the next expiry's original-ACK is a sample
			 * (above), and so is every PSN sent once.
			 */
			roce_rtt_est_rearm(&qp->rtt, roce_ack_timeout_ns(qp->attr.timeout),
					   c->rto_min_ns, c->rto_max_ns);
		}
	}
	if (!stamp || (stamp & ROCE_RTT_SAMPLED))
		return; /* not a response to a packet we stamped (a NAK, a READ's later PSN) */
	if (karn) {
		/* the response may answer a retransmission: M is ambiguous (Karn) */
		roce_qp_stat(qp, ROCE_STAT_KARN_SKIPPED, 1);
		return;
	}
	rtt_take(qp, stamp - 1);
}

void
roce_rtt_noticed(struct roce_qp *qp, uint32_t psn)
{
	uint64_t *slot;

	if (!qp->rtt_sent ||
	    !roce_psn_in_window(psn, qp->comp.una,
				(uint32_t)roce_psn_diff(qp->req.psn, qp->comp.una)))
		return;
	slot = &qp->rtt_sent[psn & qp->rtt_mask];
	if (!*slot || (*slot & ROCE_RTT_FLAGS))
		return; /* never stamped, retransmitted (Karn) or sampled already */
	/*
	 * A RACK/SACK names the one PSN whose arrival sent it (Go-Back-ONE
	 * section IV.B, IRN: a notice per out-of-order packet), so now minus that
	 * PSN's send time is a round trip as exact as an ACK's; a PSN sent once
	 * gives an unambiguous sample (Karn). Ours, as Linux TCP times SACKed
	 * segments (tcp_sacktag_one): while a hole holds una back, every
	 * cumulative ACK covers a resend and Karn's rule leaves no sample, so a
	 * backed-off timeout stayed doubled (at --rto-max after a few expiries
	 * at 10 % loss). The slot is marked so the cumulative ACK that
	 * later names the same PSN does not sample it twice.
	 */
	uint64_t stamp = *slot - 1;

	*slot |= ROCE_RTT_SAMPLED;
	roce_qp_stat(qp, ROCE_STAT_RTT_NOTICE_SAMPLES, 1);
	rtt_take(qp, stamp);
}

void
roce_rtt_expired(struct roce_qp *qp)
{
	const struct roce_dev_cfg *c = &qp->dev->cfg;

	/* both modes: the resend of una leaves now (see roce_rtt_acked) */
	qp->rto_spur_armed = true;
	qp->rto_frto_armed = false;
	qp->rto_found_spurious = false;
	qp->rto_spur_psn = qp->comp.una;
	qp->rto_spur_nxt = qp->req.psn;
	qp->rto_spur_at = qp->dev->now;
	/* una's one send before this expiry (not if it was resent already: ambiguous) */
	qp->rto_spur_orig = 0;
	if (qp->rtt_sent) {
		uint64_t s = qp->rtt_sent[qp->comp.una & qp->rtt_mask];

		if (s && !(s & ROCE_RTT_RETX))
			qp->rto_spur_orig = (s & ~ROCE_RTT_FLAGS) - 1;
	}
	if (c->rto_mode != ROCE_RTO_ADAPTIVE)
		return;
	roce_rtt_est_backoff(&qp->rtt, c->rto_min_ns, c->rto_max_ns);
	roce_qp_stat(qp, ROCE_STAT_RTO_EXPIRIES, 1);
}

/*
 * The app refused frames (a PFC pause, a full ring) from dev->tx_held_since
 * to now. Adaptive RTO: that time does not count. A paused sender's packets
 * wait in the pausing hops, so their ACKs come that much later; no timer
 * fired meanwhile (roce_qp_timers), and every armed deadline moves by the
 * held time. --rto fixed keeps IBTA's timer, which runs through pauses;
 * only its expiry waits for the pause to end (roce_rtt_tx_held).
 */
void
roce_rtt_tx_resumed(struct roce_dev *dev)
{
	uint64_t end = dev->now, held;

	/* a hold nobody retried for a while ended at its last refusal */
	if (end - dev->tx_refused_at > ROCE_TX_HELD_STALE_NS)
		end = dev->tx_refused_at;
	held = end > dev->tx_held_since ? end - dev->tx_held_since : 0;
	dev->tx_held_since = 0;
	if (dev->cfg.rto_mode != ROCE_RTO_ADAPTIVE || !held)
		return;
	for (uint32_t i = 0; i < dev->cfg.max_qp; i++) {
		struct roce_qp *qp = dev->qp_tbl[i];

		if (qp && qp->req.rto_at)
			qp->req.rto_at += held;
	}
}

bool
roce_rtt_tx_held(struct roce_dev *dev)
{
	/*
	 * Both modes: no timeout fires while the app refuses frames. --rto fixed
	 * keeps IBTA's timer running through the pause (its deadline does not
	 * move), but the retry it starts waits for the pause to end: a retry whose
	 * resend cannot leave the port would spend one of retry_cnt's attempts
	 * (IBTA C9-140's retry counter) on nothing, and seven such pauses end a
	 * healthy QP in IBV_WC_RETRY_EXC_ERR (the Swing chain, where the relay's
	 * pauses hold the sender for a third of the run).
	 */
	if (!dev->tx_held_since)
		return false;
	/*
	 * The engine retries a refused frame at every run. No refusal for
	 * ROCE_TX_HELD_STALE_NS means nothing was retried (the QP left RTS):
	 * end the hold, or the other QPs' timers would wait for a transmit
	 * that never comes.
	 */
	if (dev->now - dev->tx_refused_at > ROCE_TX_HELD_STALE_NS) {
		roce_rtt_tx_resumed(dev);
		return false;
	}
	return true;
}

bool
roce_rto_head_answered(const struct roce_qp *qp, uint64_t resent_ns, uint64_t now_ns)
{
	uint64_t m = qp->rtt.min_rtt;

	return !m || now_ns < resent_ns || now_ns - resent_ns >= m / 4 * 3;
}

int
roce_qp_rtt(const struct roce_qp *qp, struct roce_rtt_info *out)
{
	if (!qp || !out)
		return -EINVAL;
	out->srtt_ns = qp->rtt.srtt;
	out->rttvar_ns = qp->rtt.rttvar;
	out->rto_ns = qp->type == IBV_QPT_RC ? roce_qp_rto_ns(qp) : 0;
	out->samples = qp->rtt.samples;
	out->min_rtt_ns = qp->rtt.min_rtt;
	out->backoffs = qp->rtt.backoffs;
	out->stall_ns = qp->rtt.stall;
	out->adaptive = qp->dev->cfg.rto_mode == ROCE_RTO_ADAPTIVE;
	out->rto_spurious = qp->rto_found_spurious;
	return 0;
}
