/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_recovery_sel.c
 * The selective loss recoveries: Go-Back-ONE ("gbone") and IRN ("irn").
 * Both place out-of-order packets on arrival (ROCE_REC_F_PLACE) and share
 * the receiver and the sender's scoreboard; they differ in what the sender
 * makes of a notice and in their timers. Compiled against the public
 * headers only (roce_recovery.h, roce_psn.h, roce_psn_bitmap.h).
 *
 * Receiver (both): a bitmap of the PSNs placed ahead of ePSN, bounded by
 * --max-ooo (roce_recovery_env().max_ooo, default the window); a packet
 * beyond it is dropped and counted (rx_ooo_bitmap_full). When ePSN moves,
 * the run of placed PSNs after it is found a 64-bit word at a time.
 *  - gbone: on every packet placed after a gap a RACK carrying ePSN and the
 *    PSN just received (Go-Back-ONE (Wang, NJUPT), section IV.C.2 and the
 *    receiver algorithm of section IV.B).
 *  - irn: the same per packet, as IRN's SACK (Swing paper, section 2.1
 *    "Lossy RDMA": "the receiver sends a SACK message after receiving an
 *    out-of-order packet").
 *
 * Sender, gbone (Go-Back-ONE, Algorithm 1 "ReceiveACK" lines 29-46): on a
 * RACK newer than the last one, queue the PSNs between the previous RACK
 * (at least snd_una, lines 30-35) and this one (lines 36-44) for
 * retransmission ahead of new data (Algorithm 2 "GetNextPacket": the
 * retransmit queue first). Our refinement: only the PSNs of that range no
 * RACK reported received are queued, not the whole range. A lost RACK is
 * covered by the next RACK (its range starts at the last RACK that
 * arrived). A lost retransmission: Algorithm 1 leaves it to the RTO (the
 * next range starts after the previous RACK, past the hole); we apply the
 * lost-retransmission rule below to gbone too (beyond the paper), and the
 * RTO, which queues every PSN from una on that no RACK reported, covers
 * what that rule cannot see (a resend with nothing sent after it).
 *
 * Sender, irn (Swing paper section 2.1): per-packet SACK, per-hole recovery:
 * every PSN before the highest SACKed one that is neither SACKed nor already
 * retransmitted is queued once. Timeout RTO_low while fewer than 3 packets
 * are outstanding, RTO_high otherwise. New data is capped at one BDP in
 * flight when the link rate is known (--link-rate) and an RTT is given.
 * Beyond both papers (gbone and irn): a lost retransmission is detected
 * before the timeout when a notice names a PSN first sent after that
 * retransmission while its PSN is still missing (the path keeps order), and
 * the PSN is queued again (counter retx_lost_detected); see docs/transport.md.
 */
#include <stdbool.h>
#include <stdint.h>

#include "roce_psn.h"
#include "roce_psn_bitmap.h"
#include "roce_recovery.h"
#include "roce_recovery_sel.h"
#include "roce_rtt.h"
#include "roce_trace.h"

/* IRN: flows with fewer than this many packets outstanding use RTO_low (Swing paper 2.1) */
#define IRN_LOW_PKTS 3u
/* a hole is lost once a notice names a PSN this many - 1 past it (RFC 5681's 3 duplicate ACKs) */
#define SEL_REORDER 3u

void
sel_init(struct roce_qp *qp, void *priv)
{
	struct sel *s = priv;

	(void)qp;
	s->tx_init = false;
	s->rx_init = false;
	s->have_rack = s->implied = s->rto_head = false;
	s->queued = 0;
	s->retx_head = s->retx_tail = 0;
}

/* ---- the retransmissions the lost-retransmission rule watches (sel_retx_lost) ---- */

#define SEL_RETX_NONE UINT32_MAX /* a forgotten entry */

static void
retx_log_push(struct sel *s, uint32_t psn, uint32_t nxt)
{
	if (s->retx_tail - s->retx_head == SEL_RETX_LOG)
		s->retx_head++; /* full: forget the oldest (its loss is left to the timer) */
	s->retx_log[s->retx_tail++ % SEL_RETX_LOG] = (struct sel_retx){.psn = psn, .nxt = nxt};
}

/* @p psn is queued again by another rule: its earlier resends are not watched any more. */
static void
retx_log_forget(struct sel *s, uint32_t psn)
{
	for (uint32_t i = s->retx_head; i != s->retx_tail; i++)
		if (s->retx_log[i % SEL_RETX_LOG].psn == psn)
			s->retx_log[i % SEL_RETX_LOG].psn = SEL_RETX_NONE;
}

/* ---- sender scoreboard ---- */

/* PSNs of [una, nxt) the bitmaps can hold. */
static uint32_t
tx_span(uint32_t una, uint32_t nxt)
{
	uint32_t n = (uint32_t)roce_psn_diff(nxt, una);

	return n > ROCE_PSN_BITMAP_BITS ? ROCE_PSN_BITMAP_BITS : n;
}

void
sel_tx_sync(struct sel *s, uint32_t una)
{
	if (!s->tx_init) {
		roce_psn_bitmap_init(&s->rcvd, una);
		roce_psn_bitmap_init(&s->queue, una);
		roce_psn_bitmap_init(&s->retxd, una);
		s->queued = 0;
		s->tx_init = true;
		return;
	}
	if (roce_psn_cmp(una, s->queue.base) > 0) {
		uint32_t d = (uint32_t)roce_psn_diff(una, s->queue.base);

		s->queued -= roce_psn_bitmap_count(
		    &s->queue, s->queue.base, d < ROCE_PSN_BITMAP_BITS ? d : ROCE_PSN_BITMAP_BITS);
		roce_psn_bitmap_advance(&s->queue, una);
		roce_psn_bitmap_advance(&s->rcvd, una);
		roce_psn_bitmap_advance(&s->retxd, una);
	}
	/* resends acknowledged since: no longer watched (the rest go when a notice passes them) */
	while (s->retx_head != s->retx_tail) {
		uint32_t p = s->retx_log[s->retx_head % SEL_RETX_LOG].psn;

		if (p != SEL_RETX_NONE && roce_psn_cmp(p, una) >= 0)
			break;
		s->retx_head++;
	}
}

void
sel_tx_queue(struct roce_qp *qp, struct sel *s, uint32_t psn)
{
	if (roce_psn_bitmap_test(&s->queue, psn) || roce_psn_bitmap_test(&s->rcvd, psn))
		return;
	roce_psn_bitmap_set(&s->queue, psn);
	s->queued++;
	roce_recovery_count_max(qp, ROCE_STAT_RETX_QUEUE_HWM, s->queued);
}

/* Queue every PSN of [from, to) no notice reported received; a word at a time. */
static bool
tx_queue_missing(struct roce_qp *qp, struct sel *s, uint32_t from, uint32_t to, bool skip_retxd)
{
	uint32_t n = roce_psn_cmp(to, from) > 0 ? (uint32_t)roce_psn_diff(to, from) : 0;
	uint32_t i = 0;
	bool any = false;

	while (i < n) {
		uint32_t psn = roce_psn_add(from, i);
		uint32_t k = roce_psn_bitmap_find(&s->rcvd, psn, n - i, false);

		if (k == n - i)
			break;
		psn = roce_psn_add(psn, k);
		i += k + 1;
		if (skip_retxd && roce_psn_bitmap_test(&s->retxd, psn))
			continue;
		sel_tx_queue(qp, s, psn);
		any = true;
	}
	return any;
}

void
sel_tx_sent(struct roce_qp *qp, void *priv, uint32_t psn, uint32_t next, bool retx)
{
	struct sel *s = priv;
	struct roce_recovery_env env;
	uint32_t n;

	if (!retx || !s->tx_init)
		return;
	roce_recovery_env(qp, &env);
	sel_tx_sync(s, env.una);
	if (!roce_psn_in_window(psn, s->queue.base, ROCE_PSN_BITMAP_BITS))
		return;
	/* a READ request resends all its response PSNs at once */
	n = (uint32_t)roce_psn_diff(next, psn);
	for (uint32_t i = 0; i < n && i < ROCE_PSN_BITMAP_BITS; i++) {
		uint32_t p = roce_psn_add(psn, i);

		if (!roce_psn_in_window(p, s->queue.base, ROCE_PSN_BITMAP_BITS))
			break;
		if (roce_psn_bitmap_test(&s->queue, p)) {
			roce_psn_bitmap_clear(&s->queue, p);
			s->queued--;
		}
		roce_psn_bitmap_set(&s->retxd, p);
	}
	retx_log_push(s, psn, env.nxt);
}

void
sel_tx_acked(struct roce_qp *qp, void *priv, uint32_t una)
{
	struct sel *s = priv;

	sel_tx_sync(s, una);
	if (s->rto_head) {
		/*
		 * The first progress after a head-only expiry (sel_tx_lost_head):
		 * an ACK that answers the resend (roce_rto_head_answered) comes
		 * a round trip after it, when every PSN sent before the resend
		 * that arrived has been reported (the path keeps order): those
		 * still unreported are lost too (F-RTO's verdict, RFC 5682 2.1),
		 * go back for them. One too early to answer the resend is the
		 * original's (B ACKs each paced packet): the expiry was spurious,
		 * nothing more is resent.
		 */
		struct roce_recovery_env env;
		struct roce_rtt_info r;

		roce_recovery_env(qp, &env);
		if (roce_psn_cmp(una, roce_psn_add(s->rto_head_psn, 1)) == 0 &&
		    roce_psn_cmp(una, s->rto_head_nxt) < 0 && !s->rto_head_wait) {
			/*
			 * The head alone: B ACKs each paced packet, so this may be
			 * the head's original ACK, and F-RTO's test (roce_rtt.c)
			 * decides on the next one. Wait for it (once); a second
			 * expiry without progress still goes back at once
			 * (sel_tx_lost_head). Deciding here went back a window
			 * when the next ACK of the same burst found the expiry
			 * spurious: 550 resends for nothing in one loaded 4 s
			 * gbone run (t_rto_frto_sel).
			 */
			s->rto_head_wait = true;
		} else {
			bool rtt = roce_qp_rtt(qp, &r) == 0;
			/* no go-back once the engine found the expiry spurious */
			bool back = roce_psn_cmp(una, s->rto_head_nxt) < 0 &&
				    roce_rto_head_answered(qp, s->rto_head_at, env.now_ns) &&
				    !(rtt && r.rto_spurious);

			if (back && rtt && r.srtt_ns &&
			    env.now_ns - s->rto_head_at < r.srtt_ns / 4 * 3) {
				/*
				 * Later than 3/4 of the least RTT but sooner than 3/4
				 * of the smoothed one: on a loaded host this is as
				 * likely a late answer to an earlier send of the head
				 * (a resend no test can find spurious) as the answer to
				 * this one. Undecided: the next progress decides again,
				 * una reaching rto_head_nxt ends it with nothing resent,
				 * a second expiry goes back. Deciding here went back
				 * 409 and 464 PSNs the receiver had, in one loaded 4 s
				 * gbone run (t_rto_verdict_late).
				 */
			} else {
				s->rto_head = false;
				if (back) {
					roce_trace_loss(qp, ROCE_TRACE_RTO_GOBACK, una);
					sel_tx_lost(qp, s, una, s->rto_head_nxt, ROCE_LOSS_TIMEOUT);
				}
			}
		}
	}
	if (s->implied && roce_psn_cmp(una, s->implied_psn) > 0)
		s->implied = false;
}

bool
sel_tx_lost(struct roce_qp *qp, void *priv, uint32_t psn, uint32_t nxt, enum roce_loss_kind kind)
{
	struct sel *s = priv;
	uint32_t end;

	sel_tx_sync(s, psn);
	if (kind == ROCE_LOSS_IMPLIED) {
		/* READ responses lost: ask again from the first missing one, once per gap */
		if (s->implied && s->implied_psn == psn)
			return false;
		s->implied = true;
		s->implied_psn = psn;
		retx_log_forget(s, psn);
		roce_psn_bitmap_clear(&s->retxd, psn);
		sel_tx_queue(qp, s, psn);
		return true;
	}
	/* timeout, RNR, sequence NAK: everything outstanding that no notice reported */
	end = roce_psn_add(psn, tx_span(psn, nxt));
	roce_psn_bitmap_clear_range(&s->retxd, psn, tx_span(psn, nxt));
	s->retx_head = s->retx_tail; /* all of them are queued again */
	s->have_rack = false;
	s->rto_head = false; /* gone back: no head-only verdict is pending any more */
	return tx_queue_missing(qp, s, psn, end, false) || roce_psn_cmp(psn, nxt) < 0;
}

/*
 * A timer expiry under gbone and irn with --rto adaptive (ours, beyond both
 * papers, after F-RTO, RFC 5682): the first expiry since the last progress
 * resends una alone;
 * a second one with no progress in between, or an ACK of the resent head
 * that stops right after it (sel_tx_acked), resends every PSN from una that
 * no notice reported (sel_tx_lost), as Algorithm 1's go-back does. The
 * notices already find every hole with a later PSN received, so what the
 * timer must repair is the head; resending every unreported PSN on the first
 * expiry cost a window of duplicates whenever the expiry was spurious (an
 * ACK delayed beyond RTT + --rto-min by the host's scheduler or a queue):
 * 11,820 duplicates at the receiver in a 3 s run with 14 spurious expiries
 * (docs/transport.md section 5.2).
 */
static bool
sel_tx_lost_head(struct roce_qp *qp, void *priv, uint32_t psn, uint32_t nxt,
		 enum roce_loss_kind kind)
{
	struct sel *s = priv;
	struct roce_recovery_env env;
	struct roce_rtt_info r;

	/* --rto adaptive only: IBTA's fixed timer (67 ms at -u 14) keeps the go-back */
	if (kind != ROCE_LOSS_TIMEOUT || s->rto_head || roce_qp_rtt(qp, &r) < 0 || !r.adaptive) {
		if (kind == ROCE_LOSS_TIMEOUT && s->rto_head)
			roce_trace_loss(qp, ROCE_TRACE_RTO_GOBACK, psn); /* a second expiry */
		return sel_tx_lost(qp, priv, psn, nxt, kind);
	}
	roce_recovery_env(qp, &env);
	sel_tx_sync(s, psn);
	s->rto_head = true;
	s->rto_head_wait = false;
	s->rto_head_psn = psn;
	s->rto_head_at = env.now_ns;
	s->rto_head_nxt = nxt;
	retx_log_forget(s, psn);
	roce_psn_bitmap_clear(&s->retxd, psn);
	sel_tx_queue(qp, s, psn);
	return roce_psn_cmp(psn, nxt) < 0;
}

bool
sel_tx_next(struct roce_qp *qp, void *priv, uint32_t una, uint32_t nxt, uint32_t *psn)
{
	struct sel *s = priv;
	uint32_t n, k;

	(void)qp;
	if (!s->tx_init || !s->queued)
		return false;
	sel_tx_sync(s, una);
	n = tx_span(una, nxt);
	k = roce_psn_bitmap_find(&s->queue, una, n, true);
	if (k == n)
		return false;
	*psn = roce_psn_add(una, k);
	return true;
}

/* Holes before this PSN count as lost once a notice names @p psn (see sel_notice). */
static uint32_t
notice_limit(uint32_t psn, uint32_t nxt)
{
	return roce_psn_add(psn, 1) == nxt ? psn
					   : roce_psn_add(psn, ROCE_PSN_MASK + 2u - SEL_REORDER);
}

/*
 * Both modes and vrp, beyond the papers: a lost retransmission found before
 * the timer, RACK's rule (RFC 8985) in PSN space. Each retransmission is
 * remembered with snd_nxt when it left (sel_tx_sent). A notice SEL_REORDER - 1
 * past that snd_nxt (or naming the last PSN sent) reports a PSN first sent
 * after the retransmission; the path keeps order, so if the retransmitted PSN
 * is still missing (not below the receiver's ePSN, not reported, not queued
 * again) it was lost again: queue it once more. Go-Back-ONE's Algorithm 1
 * has no such rule (its next RACK range starts past the hole, lines 35-44),
 * so a lost resend waited for the RTO.
 *
 * A rule that compares the notice with the snd_nxt of the
 * *latest* retransmission only fails: at 1 % loss both ways (2 holes per round trip
 * at 0.18 Gb/s x 10 ms) a newer resend leaves within every round trip, so no
 * notice was ever past it and every lost resend waited for the timer: all 9
 * expiries of a gbone run after the first were a head whose original and
 * resend the emulator had both dropped (t_lost_retx_busy).
 */
void
sel_retx_lost(struct roce_qp *qp, struct sel *s, uint32_t epsn, uint32_t psn, uint32_t nxt)
{
	uint32_t limit = notice_limit(psn, nxt), lost = 0;

	while (s->retx_head != s->retx_tail) {
		struct sel_retx *e = &s->retx_log[s->retx_head % SEL_RETX_LOG];
		uint32_t p = e->psn;

		if (roce_psn_cmp(limit, e->nxt) <= 0)
			break; /* this one and the later ones may still arrive */
		s->retx_head++;
		if (p == SEL_RETX_NONE || roce_psn_cmp(p, epsn) < 0 ||
		    !roce_psn_in_window(p, s->queue.base, ROCE_PSN_BITMAP_BITS) ||
		    !roce_psn_bitmap_test(&s->retxd, p) || roce_psn_bitmap_test(&s->rcvd, p) ||
		    roce_psn_bitmap_test(&s->queue, p))
			continue; /* arrived, acknowledged, or queued again already */
		roce_psn_bitmap_clear(&s->retxd, p);
		sel_tx_queue(qp, s, p);
		lost++;
	}
	if (lost)
		roce_recovery_count(qp, ROCE_STAT_RETX_LOST_DETECT, lost);
}

/*
 * A RACK/SACK for @p psn: queue the holes it reveals.
 *
 * Go-Back-ONE, Algorithm 1 lines 29-46: the range between the previous RACK
 * (at least snd_una, here the receiver's ePSN: lines 30-35) and this one is
 * queued (lines 36-44); an older RACK queues nothing. IRN (Swing paper 2.1):
 * every hole before the SACKed PSN not retransmitted yet is queued.
 *
 * Two refinements of ours (docs/transport.md): only PSNs no notice reported
 * received are queued; and a hole counts as lost only once a notice names a
 * PSN SEL_REORDER - 1 past it (TCP's duplicate-ACK threshold, RFC 5681),
 * or when the notice names the last PSN sent (RFC 5827 early retransmit:
 * nothing more can come to tell reordering from loss). So a packet
 * overtaken by one or two others is not retransmitted.
 */
static void
sel_notice(struct roce_qp *qp, struct sel *s, uint32_t una, uint32_t epsn, uint32_t psn,
	   uint32_t run, uint32_t nxt, bool irn)
{
	uint32_t limit, from;

	sel_tx_sync(s, una);
	if (!roce_psn_in_window(psn, una, ROCE_PSN_BITMAP_BITS))
		return; /* names nothing outstanding */
	/* the PSN received, and the run right before it (what a lost notice said) */
	for (uint32_t i = 0; i <= run; i++)
		roce_psn_bitmap_set(&s->rcvd, roce_psn_add(psn, ROCE_PSN_MASK + 1u - i));
	limit = notice_limit(psn, nxt);
	sel_retx_lost(qp, s, epsn, psn, nxt);
	/*
	 * Algorithm 1: from the previous RACK on (holes before it were queued
	 * then). IRN's per-hole rule gives the same: each hole is queued once,
	 * again only by the timer or the lost-retransmission rule above.
	 */
	from = epsn;
	if (s->have_rack && roce_psn_cmp(s->frontier, epsn) > 0)
		from = s->frontier;
	if (roce_psn_cmp(limit, from) <= 0)
		return;
	tx_queue_missing(qp, s, from, limit, irn);
	s->frontier = limit;
	s->have_rack = true;
}

static void
gbone_tx_notice(struct roce_qp *qp, void *priv, enum roce_rx_notice kind, uint32_t una,
		uint32_t epsn, uint32_t psn, uint32_t run, uint32_t nxt)
{
	(void)kind;
	sel_notice(qp, priv, una, epsn, psn, run, nxt, false);
}

static void
irn_tx_notice(struct roce_qp *qp, void *priv, enum roce_rx_notice kind, uint32_t una, uint32_t epsn,
	      uint32_t psn, uint32_t run, uint32_t nxt)
{
	(void)kind;
	sel_notice(qp, priv, una, epsn, psn, run, nxt, true);
}

/*
 * IRN timers (Swing paper, Chen et al., §2.1 "Lossy RDMA", after IRN):
 * RTO_low for flows with fewer than 3 packets outstanding, "set to one RTT";
 * RTO_high otherwise, "the RTT including full queuing time". Given
 * (--rto-low / --rto-high), they are used as they are. Otherwise, from the
 * engine's measured RTT (roce_rtt.h; adaptive RTO only, --rto fixed keeps
 * the -u timer for both):
 *   RTO_high = the engine's timeout, RTT + max(4 D, --rto-min): its samples
 *              are ACK times, queueing included; the floor covers stalls;
 *   RTO_low  = RTT + 4 D (one RTT; the 4 D because a smoothed RTT alone
 *              is exceeded by about half the samples), at most RTO_high,
 *              doubled with each expiry since the last fresh sample as the
 *              engine's timeout is (a lost resend must not burn retry_cnt
 *              at one RTT a try).
 * Before the first sample both are the engine's timeout (-u's value).
 */
static uint64_t
irn_rto_low(struct roce_qp *qp, const struct roce_recovery_env *env, uint64_t high)
{
	struct roce_rtt_info r;
	uint64_t low;

	if (env->rto_low_ns)
		return env->rto_low_ns;
	if (roce_qp_rtt(qp, &r) < 0 || !r.adaptive || !r.samples)
		return high;
	low = r.srtt_ns + 4 * r.rttvar_ns;
	for (uint32_t i = 0; i < r.backoffs && low < high; i++)
		low *= 2;
	return low < high ? low : high;
}

static uint64_t
irn_tx_rto(struct roce_qp *qp, void *priv, uint32_t outstanding, uint64_t dflt_ns)
{
	struct roce_recovery_env env;
	uint64_t high;

	(void)priv;
	roce_recovery_env(qp, &env);
	high = env.rto_high_ns ? env.rto_high_ns : dflt_ns;
	return outstanding < IRN_LOW_PKTS ? irn_rto_low(qp, &env, high) : high;
}

/*
 * IRN bounds the packets in flight to one BDP (its bitmap "just fills a BDP":
 * the Swing paper's 6,686 packets = 100 Gb/s x 802 us / 1,500 B). BDP =
 * --link-rate x RTT / MTU, at least 3, at most the window. The RTT: --rto-low
 * when given (IRN sets RTO_low to one RTT), else the least RTT sample (the
 * path's round trip without queueing). No cap without a link rate, nor
 * before the first sample.
 */
static uint32_t
irn_tx_cap(struct roce_qp *qp, void *priv)
{
	struct roce_recovery_env env;
	struct roce_rtt_info r;
	uint64_t bdp, rtt;

	(void)priv;
	roce_recovery_env(qp, &env);
	if (!env.link_bps || !env.mtu)
		return 0;
	rtt = env.rto_low_ns;
	if (!rtt && roce_qp_rtt(qp, &r) == 0)
		rtt = r.min_rtt_ns;
	if (!rtt)
		return 0;
	/* 128 bits: 400 Gb/s x a 100 s --rto-low overflows 64 */
	bdp = (uint64_t)((unsigned __int128)(env.link_bps / 8u) * rtt / 1000000000u / env.mtu);
	if (bdp < IRN_LOW_PKTS)
		bdp = IRN_LOW_PKTS;
	return bdp > env.window ? env.window : (uint32_t)bdp;
}

/* ---- receiver (both) ---- */

enum roce_rx_verdict
sel_rx_packet(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t psn)
{
	struct sel *s = priv;
	struct roce_recovery_env env;
	int32_t d = roce_psn_diff(psn, epsn);

	if (!s->rx_init) {
		roce_psn_bitmap_init(&s->ooo, epsn);
		s->rx_init = true;
	}
	roce_psn_bitmap_advance(&s->ooo, epsn);
	if (d == 0)
		return ROCE_RXV_ACCEPT;
	if (d < 0 || roce_psn_bitmap_test(&s->ooo, psn))
		return ROCE_RXV_DUPLICATE; /* the engine counts spurious SEND/WRITE repeats */
	roce_recovery_env(qp, &env);
	if ((uint32_t)d >= env.max_ooo) {
		roce_recovery_count(qp, ROCE_STAT_RX_OOO_FULL, 1);
		return ROCE_RXV_DROP;
	}
	return ROCE_RXV_PLACE;
}

static enum roce_rx_notice
sel_rx_placed(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t psn, bool placed,
	      enum roce_rx_notice kind)
{
	struct sel *s = priv;
	uint32_t prev = roce_psn_add(psn, ROCE_PSN_MASK);

	if (!placed)
		return ROCE_NOTICE_NONE;
	/* a new hole opens when the PSN before this one is missing too */
	if (roce_psn_cmp(prev, epsn) >= 0 && !roce_psn_bitmap_test(&s->ooo, prev))
		roce_recovery_count(qp, ROCE_STAT_RX_HOLES, 1);
	roce_psn_bitmap_set(&s->ooo, psn);
	return kind;
}

static enum roce_rx_notice
gbone_rx_placed(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t psn, bool placed)
{
	return sel_rx_placed(qp, priv, epsn, psn, placed, ROCE_NOTICE_RACK);
}

static enum roce_rx_notice
irn_rx_placed(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t psn, bool placed)
{
	return sel_rx_placed(qp, priv, epsn, psn, placed, ROCE_NOTICE_SACK);
}

static uint32_t
sel_rx_advance(struct roce_qp *qp, void *priv, uint32_t epsn)
{
	struct sel *s = priv;
	struct roce_recovery_env env;
	uint32_t n;

	if (!s->rx_init)
		return 0;
	roce_recovery_env(qp, &env);
	roce_psn_bitmap_advance(&s->ooo, epsn);
	/* the run of placed PSNs from ePSN on: the first clear bit, a word at a time */
	n = roce_psn_bitmap_find(&s->ooo, epsn, env.max_ooo, false);
	roce_psn_bitmap_advance(&s->ooo, roce_psn_add(epsn, n));
	return n;
}

static void
sel_rx_nak_sent(struct roce_qp *qp, void *priv, uint32_t psn)
{
	(void)qp;
	(void)priv;
	(void)psn;
}

const struct roce_recovery_ops roce_recovery_gbone = {
    .name = "gbone",
    .priv_size = sizeof(struct sel),
    .init = sel_init,
    .tx_sent = sel_tx_sent,
    .tx_acked = sel_tx_acked,
    .tx_lost = sel_tx_lost_head,
    .tx_next = sel_tx_next,
    .rx_packet = sel_rx_packet,
    .rx_nak_sent = sel_rx_nak_sent,
    .flags = ROCE_REC_F_PLACE,
    .rx_placed = gbone_rx_placed,
    .rx_advance = sel_rx_advance,
    .tx_notice = gbone_tx_notice,
};

const struct roce_recovery_ops roce_recovery_irn = {
    .name = "irn",
    .priv_size = sizeof(struct sel),
    .init = sel_init,
    .tx_sent = sel_tx_sent,
    .tx_acked = sel_tx_acked,
    .tx_lost = sel_tx_lost_head,
    .tx_next = sel_tx_next,
    .rx_packet = sel_rx_packet,
    .rx_nak_sent = sel_rx_nak_sent,
    .flags = ROCE_REC_F_PLACE,
    .rx_placed = irn_rx_placed,
    .rx_advance = sel_rx_advance,
    .tx_notice = irn_tx_notice,
    .tx_rto = irn_tx_rto,
    .tx_cap = irn_tx_cap,
};
