/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_rtt.h
 * The RTT sampler and the adaptive retransmission timeout of an RC QP, as the
 * recovery and congestion-control plug-ins see them (public: a plug-in may
 * include it beside roce_recovery.h / roce_cc.h).
 *
 * The engine stamps every request packet it transmits (engine clock, ns) and
 * takes one RTT sample M from each ACK, READ response or ATOMIC ACKNOWLEDGE
 * that acknowledges a PSN it sent exactly once (Karn's rule: no sample from a
 * PSN that was ever retransmitted, nor from a response whose acknowledged
 * range holds one). Samples are in-band, never from the out-of-band exchange.
 *
 * The estimator is the Jacobson/Karn adaptive timeout as the Variable
 * Reliability Protocol (Denis, LIP RR-2000-11, §2.5.1) gives it:
 *   RTT = a RTT + (1 - a) M,  D = a D + (1 - a) |RTT - M|,  a = 7/8,
 *   timeout = RTT + 4 D;  the first sample sets RTT = M, D = M / 2;
 *   on expiry the timeout doubles. The paper doubles RTT and D ("multiply RTT
 *   and D rather than timeout"); we keep them, as Karn/Partridge and RFC 6298
 *   §5.5/§5.7 do, so the next fresh sample recomputes the timeout from the
 *   undoubled estimate (docs/transport.md §5.2 has why).
 * |RTT - M| uses RTT before this sample's update (Jacobson's order, RFC 6298
 * §2.3). timeout = max(RTT + max(4 D, rto_min), min_rtt + S), where
 * rto_min is the user's hard floor of the margin (as Linux TCP applies its
 * rto_min, RFC 6298 its clock granularity G) and S, the stall allowance (ours),
 * is the ROCE_RTO_STALL_RANK-th largest excess M - min_rtt
 * of the recent samples (a stall seen that often; roce_rtt.c says why), each halved
 * every stall half-life (roce_dev_cfg.rto_stall_ns; 0: no allowance): the
 * timer does not fire on a delay as long as one the path (or the host) showed
 * lately; the ceiling rto_max caps it. An
 * expiry doubles the timeout in force up to rto_max. Before
 * the first sample the timeout is the QP's IBTA timer (4.096 us * 2^timeout),
 * clamped, and doubles on expiry. The back-off ends (ours) when the PSN the
 * expiry resent is acknowledged: with a sample of its original send if the
 * ACK came too soon to answer the resend (a spurious expiry), without one
 * otherwise (Karn), as well as at any fresh sample.
 */
#ifndef ROCE_RTT_H
#define ROCE_RTT_H

#include <stdbool.h>
#include <stdint.h>

struct roce_qp;

/**
 * The stall allowance is the excess over min_rtt of the ROCE_RTO_STALL_RANK-th
 * largest recent sample: a stall must be seen this often within the memory
 * before the timer waits for it (roce_rtt.c says why).
 */
#ifndef ROCE_RTO_STALL_RANK
#define ROCE_RTO_STALL_RANK 3
#endif

/** How the retransmit timer of RC QPs is set (struct roce_dev_cfg.rto_mode). */
enum roce_rto_mode {
	ROCE_RTO_ADAPTIVE = 0, /**< Jacobson/Karn from in-band RTT samples (the default) */
	ROCE_RTO_FIXED = 1,    /**< IBTA: 4.096 us * 2^timeout from every progress, as rxe */
};

/** The estimator's state (ns). */
struct roce_rtt_est {
	uint64_t srtt;	   /**< RTT: smoothed round-trip time (0 before the first sample) */
	uint64_t rttvar;   /**< D: smoothed mean deviation */
	uint64_t rto;	   /**< the retransmission timeout in force */
	uint64_t samples;  /**< samples taken */
	uint64_t min_rtt;  /**< the smallest sample (0 before the first) */
	uint32_t backoffs; /**< expiries since the last sample (the timeout doubled this often) */
	/**
	 * The stall allowance (ours): the ROCE_RTO_STALL_RANK-th largest recent
	 * excess of a sample over min_rtt (a stall seen that often), each halved
	 * every stall half-life since it was set; a floor of the margin above RTT
	 * (roce_rtt_est_sample). 0: none seen often enough, or disabled.
	 */
	uint64_t stall;
	/** the largest recent excesses, descending (stall = the last), and when each was set or
	 * last halved */
	uint64_t stall_top[ROCE_RTO_STALL_RANK];
	uint64_t stall_at[ROCE_RTO_STALL_RANK];
};

/** A QP's RTT figures for the plug-ins and the app. */
struct roce_rtt_info {
	uint64_t srtt_ns; /**< 0 before the first sample */
	uint64_t rttvar_ns;
	uint64_t rto_ns; /**< the timer the QP uses now (fixed mode: the IBTA value; 0 = none) */
	uint64_t samples;
	uint64_t min_rtt_ns; /**< the smallest sample: the path's round trip without queueing */
	uint32_t backoffs;   /**< expiries since the last fresh sample */
	uint64_t stall_ns;   /**< the stall allowance at the latest sample (0: none) */
	bool adaptive;	     /**< --rto adaptive (else fixed: the IBTA timer) */
	bool rto_spurious;   /**< the latest expiry was found spurious (rto_spurious counted) */
};

/** RTT figures of an RC QP. -EINVAL for a NULL pointer. */
int roce_qp_rtt(const struct roce_qp *qp, struct roce_rtt_info *out);

/**
 * Can an ACK arriving at @p now_ns answer a packet resent at @p resent_ns? Not if it
 * came within 3/4 of the QP's least RTT sample (it answers the original: the rule of
 * the rto_spurious counter); true when there is no sample yet.
 */
bool roce_rto_head_answered(const struct roce_qp *qp, uint64_t resent_ns, uint64_t now_ns);

/** Reset @p e: no samples, timeout @p initial_ns clamped to [min_ns, max_ns]. */
void roce_rtt_est_init(struct roce_rtt_est *e, uint64_t initial_ns, uint64_t min_ns,
		       uint64_t max_ns);
/**
 * Fold in one sample @p m_ns taken at @p now_ns (VRP §2.5.1, Jacobson's formulas;
 * the stall allowance with half-life @p stall_ns, 0: none) and recompute the timeout.
 */
void roce_rtt_est_sample(struct roce_rtt_est *e, uint64_t m_ns, uint64_t now_ns, uint64_t stall_ns,
			 uint64_t min_ns, uint64_t max_ns);
/** End the back-off: the timeout from RTT and D again (before any sample: @p initial_ns). */
void roce_rtt_est_rearm(struct roce_rtt_est *e, uint64_t initial_ns, uint64_t min_ns,
			uint64_t max_ns);
/** The timer expired: double the timeout (not RTT and D), capped at @p max_ns. */
void roce_rtt_est_backoff(struct roce_rtt_est *e, uint64_t min_ns, uint64_t max_ns);

#endif /* ROCE_RTT_H */
