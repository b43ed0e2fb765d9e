/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_loss.h
 * Packet loss models with netem's exact step semantics (sch_netem.c
 * loss_event(), loss_gilb_ell(), loss_4state()); see docs/emulator-models.md.
 *
 *  - random P [CORR]: lose iff a (netem-correlated) uniform draw is below P.
 *  - gemodel p r 1-h 1-k (Gilbert-Elliott): per packet, first the transition
 *    draw (GOOD->BAD with p, BAD->GOOD with r), then the loss draw, which uses
 *    the state the packet ARRIVED in (1-k in GOOD, 1-h in BAD). Starts GOOD.
 *  - state p13 p31 p32 p23 p14 (4-state Markov, Salsano et al.): one draw per
 *    packet moves the chain; the packet is lost iff the state ENTERED is 3
 *    (burst loss) or 4 (isolated loss). Starts in state 1.
 *
 * One emu_loss_step() per packet; it also keeps the loss-run histogram.
 */
#ifndef EMU_LOSS_H
#define EMU_LOSS_H

#include <stdbool.h>
#include <stdint.h>

#include "emu_err.h"
#include "emu_rng.h"

enum emu_loss_kind {
	EMU_LOSS_NONE,
	EMU_LOSS_RANDOM,
	EMU_LOSS_GEMODEL,
	EMU_LOSS_STATE,
};

/** Model parameters as probabilities in [0, 1] (the SPEC's percentages / 100). */
struct emu_loss_params {
	enum emu_loss_kind kind;
	double p, corr;			 /**< random: loss probability, netem correlation */
	double ge_p, ge_r, ge_1h, ge_1k; /**< gemodel: p, r, 1-h, 1-k */
	double p13, p31, p32, p23, p14;	 /**< state */
};

/** Gilbert-Elliott states. */
enum emu_ge_state {
	EMU_GE_GOOD,
	EMU_GE_BAD,
};

/** 4-state model states, numbered as in netem and Salsano et al. */
enum emu_gi_state {
	EMU_GI_GAP_RX = 1,     /**< 1: good reception */
	EMU_GI_BURST_RX = 2,   /**< 2: good reception within a burst */
	EMU_GI_BURST_LOSS = 3, /**< 3: loss within a burst */
	EMU_GI_GAP_LOSS = 4,   /**< 4: isolated (independent) loss */
};

enum emu_loss_verdict {
	EMU_LOSS_KEEP = 0,
	EMU_LOSS_LOSE = 1,
};

/** Loss-run histogram: loss_bursts[i] counts runs of i+1 losses; the last bucket is ">= N". */
#define EMU_LOSS_BURST_BUCKETS 16

struct emu_loss_stats {
	uint64_t steps;	  /**< packets decided */
	uint64_t lost;	  /**< EMU_LOSS_LOSE verdicts */
	uint64_t runs;	  /**< closed loss runs */
	uint64_t run_sum; /**< losses in closed runs (so mean run = run_sum / runs) */
	uint64_t max_run; /**< longest closed run */
	uint64_t cur_run; /**< length of the run in progress */
	uint64_t loss_bursts[EMU_LOSS_BURST_BUCKETS];
};

struct emu_loss {
	enum emu_loss_kind kind;
	int state; /**< enum emu_ge_state or enum emu_gi_state */
	/** random: a[0]; GE: p, r, 1-h, 1-k; 4-state: p13, p31, p32, p23, p14 */
	emu_prob a[5];
	struct emu_crand crand; /**< random model's netem correlation */
	struct emu_rng rng;
	struct emu_loss_stats stats;
};

/** netem's gemodel defaults for "gemodel p": r = 1 - p, 1-h = 100 %, 1-k = 0 %. */
void emu_loss_gemodel_defaults(struct emu_loss_params *lp, double p);

/** netem's defaults for "state p13": p31 = 1 - p13, p32 = 0, p23 = 100 %, p14 = 0. */
void emu_loss_state_defaults(struct emu_loss_params *lp, double p13);

/**
 * Validate: every probability in [0, 1]; for the 4-state model also
 * p13 + p14 <= 1 and p31 + p32 <= 1 (netem does not check and its u32 sums
 * wrap). Returns 0, -EMU_E_RANGE or -EMU_E_INVAL (unknown kind).
 */
int emu_loss_params_check(const struct emu_loss_params *lp);

/** Initialise from validated parameters; the draws use stream LOSS of @p seed. */
int emu_loss_init(struct emu_loss *l, const struct emu_loss_params *lp, uint64_t seed);

/** Decide the fate of one packet and advance the model. */
enum emu_loss_verdict emu_loss_step(struct emu_loss *l);

/** Close the loss run in progress (if any) so the histogram counts it. */
void emu_loss_flush(struct emu_loss *l);

/**
 * Closed forms (docs/emulator-models.md): stationary loss rate and mean
 * loss-run length. For "random" with correlation the result is the nominal
 * P, which netem's correlated draws do NOT achieve. Returns 0 or -EMU_E_INVAL.
 */
int emu_loss_expected(const struct emu_loss_params *lp, double *loss_rate, double *mean_burst);

/** Names for logs. */
const char *emu_loss_kind_name(enum emu_loss_kind k);
const char *emu_ge_state_name(enum emu_ge_state s);
const char *emu_gi_state_name(enum emu_gi_state s);

#endif /* EMU_LOSS_H */
