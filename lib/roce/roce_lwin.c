/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_lwin.c
 * The loss-reactive window (roce_lwin.h): multiplicative decrease on a loss
 * episode, floored by the delivery of recent clean rounds, additive increase.
 */
#include "roce_lwin.h"

#include <string.h>

#include "roce_psn.h"

void
roce_lwin_init(struct roce_lwin *w)
{
	memset(w, 0, sizeof(*w));
	w->cwnd = UINT32_MAX;
	w->ssthresh = 0;
	w->iw = ROCE_LWIN_IW;
}

int
roce_lwin_undo(struct roce_lwin *w, uint32_t window, uint32_t una, uint32_t nxt, uint32_t acked,
	       bool echo)
{
	uint32_t flight = (uint32_t)roce_psn_diff(nxt, una), iw = w->iw ? w->iw : ROCE_LWIN_IW;
	uint64_t cwnd;

	if (!w->undo_ok)
		return ROCE_LWIN_NO_UNDO;
	w->undo_ok = false;
	if (echo || w->undo_echo || w->ecn_round)
		return ROCE_LWIN_UNDO_ECN; /* RFC 4015 step (8): ECN-Echo set, keep the response */
	cwnd = (uint64_t)flight + (acked < iw ? acked : iw);
	if (cwnd < ROCE_LWIN_MIN)
		cwnd = ROCE_LWIN_MIN;
	w->ssthresh = w->undo_pipe;
	w->cwnd = cwnd >= window ? UINT32_MAX : (uint32_t)cwnd;
	w->cut = w->undo_cut;
	w->recover = w->undo_recover;
	w->ai_acc = 0;
	w->undo_ack = true;
	return ROCE_LWIN_UNDONE;
}

void
roce_lwin_slow_start(struct roce_lwin *w, uint32_t init)
{
	if (!init)
		return;
	w->cwnd = init < ROCE_LWIN_MIN ? ROCE_LWIN_MIN : init;
	w->iw = w->cwnd;
	w->ssthresh = UINT32_MAX; /* until the QP window, a cut or a notification */
}

void
roce_lwin_on_ecn(struct roce_lwin *w)
{
	w->ecn_round = true;
	if (w->undo_ok)
		w->undo_echo = true; /* a spurious-expiry verdict now leaves the cut (RFC 4015) */
	if (w->cwnd != UINT32_MAX && w->cwnd < w->ssthresh)
		w->ssthresh = w->cwnd; /* slow start ends; the CC's rate decreases */
}

void
roce_lwin_on_rtt(struct roce_lwin *w, uint64_t rtt_ns)
{
	if (!rtt_ns)
		return;
	if (!w->min_rtt || rtt_ns < w->min_rtt)
		w->min_rtt = rtt_ns;
	if (!w->rtt_round_min || rtt_ns < w->rtt_round_min)
		w->rtt_round_min = rtt_ns;
}

bool
roce_lwin_congested(const struct roce_lwin *w)
{
	uint64_t recent = w->rtt_prev_min;

	if (w->ecn_round || w->ecn_prev || !w->min_rtt)
		return true;
	if (w->rtt_round_min && (!recent || w->rtt_round_min < recent))
		recent = w->rtt_round_min;
	return recent > w->min_rtt + w->min_rtt / 4;
}

uint32_t
roce_lwin_delivered(const struct roce_lwin *w)
{
	uint32_t best = 0;

	for (unsigned int i = 0; i < ROCE_LWIN_ROUNDS; i++)
		if (w->rounds[i] > best)
			best = w->rounds[i];
	return best;
}

static void
round_start(struct roce_lwin *w, uint32_t nxt)
{
	w->round_on = true;
	w->round_lossy = false;
	w->round_end = nxt;
	w->round_acked = 0;
	w->ecn_prev = w->ecn_round;
	w->ecn_round = false;
	if (w->rtt_round_min) {
		w->rtt_prev_min = w->rtt_round_min;
		w->rtt_round_min = 0;
	}
}

void
roce_lwin_on_ack(struct roce_lwin *w, uint32_t window, uint32_t una, uint32_t nxt, uint32_t acked)
{
	/* these packets were acknowledged in a round with, or right after, an ECN echo */
	bool echo = w->ecn_round || w->ecn_prev;
	/*
	 * The window grows only while it limits what is in flight (RFC 7661's
	 * cwnd validation, as Linux's tcp_is_cwnd_limited in slow start: cwnd
	 * below twice the flight): a paced or application-limited QP would
	 * otherwise "grow" its window far past anything it ever sent.
	 */
	uint64_t flight = (uint64_t)(uint32_t)roce_psn_diff(nxt, una) + acked;
	bool limited = w->cwnd != UINT32_MAX && (uint64_t)w->cwnd < 2 * flight;

	if (!w->round_on) {
		round_start(w, nxt);
	} else {
		w->round_acked += acked;
		if (roce_psn_cmp(una, w->round_end) >= 0) {
			/* a round trip is over: keep its delivery if nothing was lost in it */
			w->rounds[w->round_i] = w->round_lossy ? 0 : w->round_acked;
			if (!w->round_lossy)
				w->clean_since_cut = true;
			w->round_i = (uint8_t)((w->round_i + 1) % ROCE_LWIN_ROUNDS);
			round_start(w, nxt);
		}
	}
	if (w->undo_ack) {
		w->undo_ack = false; /* roce_lwin_undo set the window for this ACK */
		return;
	}
	if (w->cwnd == UINT32_MAX || !limited)
		return;
	if (w->cwnd < w->ssthresh && w->cwnd < window) {
		/* slow start: one packet per packet acknowledged, up to ssthresh */
		uint32_t room = w->ssthresh - w->cwnd;

		w->cwnd += acked < room ? acked : room;
	} else if (!echo) {
		/*
		 * additive increase: one packet per window of acknowledged packets
		 * (Reno), but not while the path echoes ECN marks: the queue is in
		 * the marking band and the CC's rate is the one to move
		 */
		w->ai_acc += acked;
		while (w->ai_acc >= w->cwnd && w->cwnd < window) {
			w->ai_acc -= w->cwnd;
			w->cwnd++;
		}
	}
	if (w->cwnd >= window) {
		w->cwnd = UINT32_MAX; /* back at the configured window: follow it again */
		w->ai_acc = 0;
	}
}

int
roce_lwin_on_loss(struct roce_lwin *w, uint32_t window, uint32_t una, uint32_t nxt, bool timeout)
{
	uint32_t in_flight = (uint32_t)roce_psn_diff(nxt, una), base, cut, floor;

	w->undo_ok = timeout;
	w->undo_ack = false;
	if (timeout) {
		/* RFC 4015 step (1): pipe_prev = max(FlightSize, ssthresh); uncut: the QP window */
		uint32_t ss = w->cwnd == UINT32_MAX ? UINT32_MAX : w->ssthresh;

		w->undo_pipe = in_flight > ss ? in_flight : ss;
		w->undo_cut = w->cut;
		w->undo_recover = w->recover;
		w->undo_echo = false;
	}
	w->round_lossy = true;
	if (w->cut && roce_psn_cmp(una, w->recover) < 0) {
		/* the episode this window was already cut (or held) for */
		if (timeout) {
			/*
			 * a retransmission was lost too: restart small for the
			 * lost ACK clock, ssthresh as the episode set it (Linux
			 * keeps it on a repeated RTO in its Loss state; halving
			 * it per expiry would leave a few packets per round trip)
			 */
			w->cwnd = ROCE_LWIN_MIN;
			w->ai_acc = 0;
		}
		return ROCE_LWIN_SAME;
	}
	base = roce_lwin_window(w, window);
	if (!roce_lwin_congested(w)) {
		/*
		 * No queue signal: a random loss. The window holds (a cut would
		 * only lower the rate of a path that is not full); a timeout
		 * still restarts at ROCE_LWIN_MIN for the lost ACK clock, back
		 * to the whole window in slow start. (Restarting at the delivery
		 * of a clean round instead failed tests/dpdk/test_rnic_ring.c's
		 * periodic drop in one of two runs: rounds of one size.)
		 */
		if (base > window)
			base = window;
		if (base > w->ssthresh)
			w->ssthresh = base; /* a random loss never lowers the target */
		if (timeout) {
			w->cwnd = ROCE_LWIN_MIN;
			w->ai_acc = 0;
		}
		w->recover = nxt;
		w->cut = true;
		return ROCE_LWIN_HELD;
	}
	if (in_flight < base)
		base = in_flight;
	cut = base / 2;
	floor = roce_lwin_delivered(w);
	if (floor > base)
		floor = base; /* a cut never raises the window */
	if (cut < floor)
		cut = floor;
	if (cut < ROCE_LWIN_MIN)
		cut = ROCE_LWIN_MIN;
	if (cut > window)
		cut = window;
	/*
	 * After a clean round trip since the last cut (a loss that interrupts
	 * a working window), regrow in slow start to 7/8 of the window that
	 * lost: a single random or spurious loss costs about one round trip at
	 * half rate. Back-to-back lossy rounds (a receiver or path that cannot
	 * take the window; the first loss, before any clean round) keep
	 * ssthresh at the cut: halving until rounds are clean, then additive.
	 */
	w->ssthresh = w->clean_since_cut && base - base / 8 > cut ? base - base / 8 : cut;
	if (w->ssthresh > window)
		w->ssthresh = window;
	/* a timeout lost the ACK clock: restart from the minimum (TCP's RTO) */
	w->cwnd = timeout ? ROCE_LWIN_MIN : cut;
	w->ai_acc = 0;
	w->recover = nxt;
	w->cut = true;
	w->clean_since_cut = false;
	return ROCE_LWIN_CUT;
}
