/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_lwin.h
 * The loss-reactive window every congestion control inherits.
 *
 * An RC QP may have at most min(window, cwnd) packets in flight. cwnd starts
 * at the QP's window (--max-inflight), or in slow start from a small initial
 * window (below), and once back at the QP's window a path that never loses
 * never sees it. A loss (NAK sequence error,
 * implied NAK, local ACK timeout, RNR NAK) cuts it once per loss episode
 * (losses below the PSN sent when it was cut belong to the same episode):
 *
 *     cwnd = clamp(max(min(cwnd, in_flight) / 2, delivered), min, window)
 *
 * where delivered is the most packets acknowledged in one clean round trip
 * (a round ends when una passes the PSN that was next when it began; clean:
 * no loss was signalled in it) among the last ROCE_LWIN_ROUNDS rounds. It is
 * the path's BDP as measured by delivery, so a random loss on a path whose
 * window was already the BDP does not lower the rate, while a receiver that
 * drains slowly (no clean round at the old size) halves the window until
 * rounds are clean. After a cut that follows a clean round trip, cwnd
 * regrows in slow start (one packet per packet acknowledged) to ssthresh =
 * 7/8 of the window that lost (else ssthresh is the cut), then by
 * one packet per window of acknowledged packets (Reno's additive increase),
 * up to the QP's window: a random loss on a long path costs about one round
 * trip at half the window instead of hundreds of additive rounds, and a
 * receiver that cannot take 7/8 loses again on the way up and is cut from there.
 * A local ACK timeout cuts whatever the episode and, as TCP's RTO does
 * (RFC 5681 §3.1), restarts at ROCE_LWIN_MIN in slow start:
 * the ACK clock is lost, and rounds of a changing size also keep a periodic
 * loss pattern from hitting the same PSN in every go-back round.
 *
 * Start (roce_lwin_slow_start, cfg.loss_window_init > 0, the rnic's default):
 * cwnd starts at a small initial window and grows in slow start (one packet
 * per packet acknowledged: doubling per round trip, RFC 5681 §3.1, the
 * initial window of RFC 6928) until the QP window, a cut, or the first
 * congestion notification (roce_lwin_on_ecn: a CNP or a BECN-flagged ACK),
 * which ends slow start without a cut (RFC 3168 §6.1.2 would halve; here the
 * congestion control's own decrease reacts, the window only stops doubling).
 * Nor does the window grow additively in a round trip with (or right after)
 * an ECN echo: a window that grows by one packet per round trip while the
 * queue sits in the marking band would otherwise fill any queue in time.
 * A sender that starts at its line rate otherwise puts a whole feedback delay
 * of line-rate data into the bottleneck before the first notification can
 * come back (10 Gb/s for 10 ms into a 2 MB queue).
 *
 * Random loss or congestion (roce_lwin_on_rtt, roce_lwin_on_ecn): a loss
 * episode cuts only with a queue signal: an ECN echo in this or the last
 * round trip, or a recent RTT more than 1/4 above the least RTT seen (TCP
 * Vegas' and TIMELY's reading of a growing RTT as a queue), or no RTT sample
 * yet. The recent RTT is the least sample of this and the last round with
 * samples: a standing queue raises every sample of a round, a host's
 * scheduling stall only some. Otherwise the loss is taken as random: the window
 * holds (ROCE_LWIN_HELD); a timeout still restarts in slow start from
 * ROCE_LWIN_MIN, but back to the whole window that lost.
 *
 * Pure arithmetic on PSNs, counts and RTT samples: no clock, unit-tested on
 * replayed event sequences (tests/unit/cc/test_lwin.c).
 */
#ifndef ROCE_LWIN_H
#define ROCE_LWIN_H

#include <stdbool.h>
#include <stdint.h>

/** Clean rounds whose delivery the cut may not go below (a max filter). */
#define ROCE_LWIN_ROUNDS 8
/** Smallest window a loss may leave (packets). */
#define ROCE_LWIN_MIN 4
/** IW of the Eifel response when the QP does not slow-start (RFC 6928's 10 packets). */
#define ROCE_LWIN_IW 10

struct roce_lwin {
	uint32_t cwnd;	      /**< packets; UINT32_MAX: not cut yet (the QP window rules) */
	uint32_t ssthresh;    /**< slow start below it (after a timeout) */
	uint32_t ai_acc;      /**< packets acknowledged toward the next +1 */
	uint32_t recover;     /**< next PSN at the last cut; losses below it: same episode */
	bool cut;	      /**< recover is valid */
	bool clean_since_cut; /**< a clean round completed since the last cut */
	bool round_on;
	bool round_lossy;
	uint32_t round_end;		   /**< the round ends when una reaches this PSN */
	uint32_t round_acked;		   /**< packets acknowledged in the current round */
	uint32_t rounds[ROCE_LWIN_ROUNDS]; /**< delivered per recent round (0: lossy) */
	uint8_t round_i;
	bool ecn_round;		/**< an ECN echo in the current round */
	bool ecn_prev;		/**< ... in the previous round */
	uint64_t min_rtt;	/**< least RTT sample (ns; 0: none yet) */
	uint64_t rtt_round_min; /**< least RTT sample of the current round (0: none) */
	uint64_t rtt_prev_min;	/**< ... of the last round that had samples */
	uint32_t iw;		/**< initial window (roce_lwin_slow_start; else ROCE_LWIN_IW) */
	/* the state before the last timeout, for roce_lwin_undo (valid: undo_ok) */
	bool undo_ok;
	bool undo_cut;
	bool undo_echo;	    /**< an ECN echo (CNP, BECN-flagged ACK) since the timeout */
	bool undo_ack;	    /**< the ACK that undid it: no growth on it (roce_lwin_on_ack) */
	uint32_t undo_pipe; /**< RFC 4015's pipe_prev: max(FlightSize, ssthresh) at expiry */
	uint32_t undo_recover;
};

/** roce_lwin_on_loss(): the loss belongs to the episode already handled. */
#define ROCE_LWIN_SAME 0
/** roce_lwin_on_loss(): a new episode with a queue signal: the window was cut. */
#define ROCE_LWIN_CUT 1
/** roce_lwin_on_loss(): a new episode without a queue signal (random loss): held. */
#define ROCE_LWIN_HELD 2

/** Start (the QP reached RTS). */
void roce_lwin_init(struct roce_lwin *w);
/** Start at @p init packets in slow start instead of at the QP window (0: no change). */
void roce_lwin_slow_start(struct roce_lwin *w, uint32_t init);
/** A congestion notification (CNP, BECN-flagged ACK) arrived: slow start ends. */
void roce_lwin_on_ecn(struct roce_lwin *w);
/** One RTT sample (ns; Karn's rule already applied, roce_rtt.c). */
void roce_lwin_on_rtt(struct roce_lwin *w, uint64_t rtt_ns);
/** True if a loss now would be taken as congestion (a queue signal, or no RTT yet). */
bool roce_lwin_congested(const struct roce_lwin *w);
/** In-flight limit given the QP's configured @p window. */
static inline uint32_t
roce_lwin_window(const struct roce_lwin *w, uint32_t window)
{
	return w->cwnd < window ? w->cwnd : window;
}
/** @p acked packets were newly acknowledged; una and nxt after the ACK. */
void roce_lwin_on_ack(struct roce_lwin *w, uint32_t window, uint32_t una, uint32_t nxt,
		      uint32_t acked);
/**
 * A loss was detected with una, nxt (@p timeout: the local ACK timer). Returns ROCE_LWIN_CUT
 * if this cut the window (a new episode with a queue signal), ROCE_LWIN_HELD for a new episode
 * taken as random loss, ROCE_LWIN_SAME if it belongs to the episode already handled.
 */
int roce_lwin_on_loss(struct roce_lwin *w, uint32_t window, uint32_t una, uint32_t nxt,
		      bool timeout);
/** roce_lwin_undo(): the window was restored (count loss_window_undone). */
#define ROCE_LWIN_UNDONE 1
/** roce_lwin_undo(): nothing to undo (no timeout since, or already undone or voided). */
#define ROCE_LWIN_NO_UNDO 0
/** roce_lwin_undo(): the expiry was spurious but the path echoed ECN: the cut stands. */
#define ROCE_LWIN_UNDO_ECN 2
/**
 * The last timeout was spurious (roce_rtt.c found the resend's ACK too early to
 * answer it): the Eifel response, RFC 4015 §3.2 step (8). Unless an ECN echo
 * came with it (@p echo: the ACK that shows the expiry spurious is BECN-flagged;
 * or a CNP or BECN since the expiry, or in the current round trip), the window
 * resumes at
 *
 *     cwnd = FlightSize + min(acked, IW),  ssthresh = pipe_prev
 *
 * with FlightSize = nxt - una after that ACK, @p acked the packets it newly
 * acknowledged, IW the QP's initial window, and pipe_prev = max(FlightSize,
 * ssthresh) at the expiry (an uncut window: the QP window), so cwnd slow-starts
 * back to where it was instead of sending the whole pre-expiry window at once;
 * the ACK itself grows nothing more. The loss episode is restored too. Once per
 * timeout; a later loss report voids it.
 */
int roce_lwin_undo(struct roce_lwin *w, uint32_t window, uint32_t una, uint32_t nxt, uint32_t acked,
		   bool echo);
/** The largest delivery of a recent clean round (the floor of a cut). */
uint32_t roce_lwin_delivered(const struct roce_lwin *w);

#endif /* ROCE_LWIN_H */
