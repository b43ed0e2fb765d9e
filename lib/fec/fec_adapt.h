/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file fec_adapt.h
 * The receiver-driven FEC policy of `--fec-adapt` (docs/fec.md#adaptive-policy).
 * LoWAR (Zuo et al., "LoWAR: Enhancing RDMA over Lossy WANs with Transparent
 * Error Correction", "Negotiation Channel") says only that the receiver changes
 * the parameters proactively; this is rocewan's policy:
 *  - estimator: the fraction of the coded request stream's packets the decoder
 *    found missing (rebuilt or not) per window of ::FEC_ADAPT_WINDOW packets,
 *    averaged with weight 1/2 over windows (about the last 2048 packets: one
 *    loss alone, 1e-3 of a window, does not move a level), and the longest
 *    run of consecutive missing PSNs (a PSN gap on arrival, fec_adapt_gap);
 *  - a table of five levels from xor:32,4 to rs:16,4 (::fec_adapt_params);
 *  - hysteresis: one level up when the EWMA passes the level's "up"
 *    threshold or a run exceeds what the level repairs (D for XOR, R for RS),
 *    at most once per hold/4 (the loss estimate at window ends, a burst at
 *    once); one level down only after ::FEC_ADAPT_DOWN_WINDOWS windows in a
 *    row below the level's "down" threshold and never within @p hold_ns
 *    (4 RTTs) of the last change.
 * Pure integer arithmetic: the same sample sequence gives the same changes.
 * The change reaches the sender as a PROPOSE frame; it applies it at its next
 * group boundary and announces it with a COMMIT (fec.h).
 */
#ifndef FEC_ADAPT_H
#define FEC_ADAPT_H

#include <stdbool.h>
#include <stdint.h>

#include "fec.h"

#define FEC_ADAPT_LEVELS 5
#define FEC_ADAPT_WINDOW 1024u	  /**< packets per estimator window */
#define FEC_ADAPT_DOWN_WINDOWS 2u /**< windows in a row below "down" before a level down */

#define FEC_ADAPT_STATS_LIST(X)                                                                    \
	X(SAMPLES, "fec_adapt_samples", "packets the loss estimator saw")                          \
	X(LOST, "fec_adapt_lost", "of them found missing by the decoder")                          \
	X(UP_LOSS, "fec_adapt_up_loss", "level up: the loss EWMA passed the level's threshold")    \
	X(UP_BURST, "fec_adapt_up_burst",                                                          \
	  "level up: a run of losses longer than the level repairs")                               \
	X(DOWN, "fec_adapt_down", "level down: loss below the level's threshold long enough")

#define FEC_X_ENUM(e, n, d) FEC_AD_##e,
enum fec_adapt_stat { FEC_ADAPT_STATS_LIST(FEC_X_ENUM) FEC_AD_NSTATS };
#undef FEC_X_ENUM
extern const char *const fec_adapt_stat_names[FEC_AD_NSTATS];

struct fec_adapt {
	unsigned level;
	uint64_t loss;		  /**< the loss estimate, fraction x 2^32 */
	uint32_t win_n, win_lost; /**< packets and losses in the window being filled */
	uint64_t windows;	  /**< windows completed */
	bool decide;		  /**< a window ended since the last decision */
	uint32_t max_run;	  /**< longest run of missing PSNs since the last decision */
	uint32_t below;	     /**< windows in a row with the estimate below the level's "down" */
	uint64_t changed_at; /**< time of the last change (0: none yet) */
	uint64_t st[FEC_AD_NSTATS];
};

/** Start at @p level (0: xor:32,4, the rnic's default). */
void fec_adapt_init(struct fec_adapt *a, unsigned level);
/** The parameters of a level (NULL beyond the table). */
const struct fec_params *fec_adapt_params(unsigned level);
/** Thresholds of a level, as fraction x 1e6 (0: none). */
void fec_adapt_thresholds(unsigned level, uint32_t *up_ppm, uint32_t *down_ppm);
/** The level whose parameters equal @p p, or -1. */
int fec_adapt_level_of(const struct fec_params *p);
/** One packet of the coded stream: received, or found missing (rebuilt or not). */
void fec_adapt_sample(struct fec_adapt *a, bool lost, uint32_t psn);
/**
 * A run of @p run consecutive PSNs missing, seen when a packet arrives after
 * them (the burst a level must repair: D for XOR, R for RS).
 */
void fec_adapt_gap(struct fec_adapt *a, uint32_t run);
/** The loss estimate as fraction x 1e6. */
uint32_t fec_adapt_loss_ppm(const struct fec_adapt *a);
/**
 * Decide at @p now: +1 (one level up), -1 (down) or 0. @p hold_ns: the
 * minimum time between a change and a level down (4 RTTs); ups are at least
 * hold_ns / 4 apart.
 */
int fec_adapt_decide(struct fec_adapt *a, uint64_t now, uint64_t hold_ns);

#endif /* FEC_ADAPT_H */
