/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_impair.h
 * Stage 1 of a direction: the per-packet loss, duplicate, corrupt and
 * reorder decisions, in netem's order (sch_netem.c netem_enqueue()):
 *
 *   1. duplicate draw:  count = 1 + (u_dup < P_dup)
 *   2. loss model step: if it fires, an ECN-capable packet (ECT or CE) is
 *      marked CE when "ecn" is set, else count -= 1
 *   3. count == 0: drop (no further draws)
 *   4. corrupt draw:    flag a bit flip
 *   5. reorder: with gap N, the first N-1 packets after a reorder (and at
 *      start) are delayed normally; after that each packet is sent ahead of
 *      the delay line with probability P_reorder.
 * So a packet that is both duplicated and lost still goes out once (netem's
 * --count), and a duplicate is lost only by its own loss step.
 *
 * count == 2 returns EMU_V_DUPLICATE: the caller makes a copy (after applying
 * CE, as netem clones the marked skb) and runs it through
 * emu_impair_decide_copy(), which repeats steps 2-5 without a duplicate draw
 * (netem re-enqueues the clone at the root with duplication disabled, so the
 * clone advances the loss chain too). Call it right after the original.
 *
 * Reorder: netem sends the packet with time_to_send = now at the head of the
 * queue, overtaking the whole delay line. lossy-emu instead lets it skip the
 * delay but bounds the displacement: the delay line may move it ahead of at
 * most reorder_gap packets (the spec's gap, 1 by default).
 */
#ifndef EMU_IMPAIR_H
#define EMU_IMPAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "emu_counters.h"
#include "emu_err.h"
#include "emu_loss.h"
#include "emu_rng.h"

struct emu_impair_params {
	struct emu_loss_params loss;
	bool ecn; /**< loss events mark ECN-capable packets instead of dropping */
	double dup_p, dup_corr;
	double corrupt_p, corrupt_corr;
	bool corrupt_recompute; /**< app hint: recompute ICRC after the flip */
	double reorder_p, reorder_corr;
	uint32_t gap; /**< 0 = no reordering; with reorder_p > 0 at least 1 */
};

/** Verdict flags of one packet (bitwise OR). */
enum emu_verdict_flag {
	EMU_V_DROP = 1u << 0,	   /**< drop; no other flag is set */
	EMU_V_DUPLICATE = 1u << 1, /**< also send a copy; decide it with emu_impair_decide_copy() */
	EMU_V_MARK_CE = 1u << 2,   /**< set CE (netem ecn) */
	EMU_V_CORRUPT = 1u << 3,   /**< flip one bit: emu_impair_corrupt_bit() */
	EMU_V_REORDER = 1u << 4,   /**< skip the delay line (bounded by reorder_gap) */
};

struct emu_impair {
	struct emu_loss loss;
	bool ecn;
	emu_prob dup, corrupt, reorder;
	struct emu_crand dup_c, corrupt_c, reorder_c;
	struct emu_rng dup_rng, corrupt_rng, reorder_rng;
	uint32_t gap;
	uint32_t reorder_counter; /**< netem q->counter: packets delayed since the last reorder */
	struct emu_counters *cnt;
};

/** Validate parameters. 0, -EMU_E_RANGE or -EMU_E_CONFLICT (gap without reorder). */
int emu_impair_params_check(const struct emu_impair_params *p);

/** Initialise; each decision uses its own stream of @p seed. */
int emu_impair_init(struct emu_impair *im, const struct emu_impair_params *p, uint64_t seed,
		    struct emu_counters *cnt);

/**
 * Decide for an arriving packet whose ECN codepoint is @p ecn (0 Not-ECT,
 * 1/2 ECT, 3 CE). Returns EMU_V_* flags; counts RX, DROP_LOSS, ECN_MARK_LOSS,
 * DUPLICATED, CORRUPTED, REORDERED.
 */
unsigned emu_impair_decide(struct emu_impair *im, uint8_t ecn);

/** Decide for the duplicate copy of the packet just decided (never EMU_V_DUPLICATE). */
unsigned emu_impair_decide_copy(struct emu_impair *im, uint8_t ecn);

/** Bit to flip in a packet of @p nbytes flagged EMU_V_CORRUPT: in [0, 8 nbytes). */
uint64_t emu_impair_corrupt_bit(struct emu_impair *im, uint32_t nbytes);

/** Maximum displacement of a reordered packet, in packets. */
static inline uint32_t
emu_impair_reorder_gap(const struct emu_impair *im)
{
	return im->gap;
}

#endif /* EMU_IMPAIR_H */
