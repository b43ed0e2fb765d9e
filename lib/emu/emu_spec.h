/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_spec.h
 * The impairment SPEC of one direction of lossy-emu, in tc-netem's grammar
 * and semantics plus documented extensions (docs/emulator-models.md):
 *
 *   [netem] [limit PACKETS] [delay TIME [JITTER [CORR]]]
 *   [distribution uniform|normal|pareto|paretonormal]
 *   [loss [random] P [CORR] | loss gemodel p [r [1-h [1-k]]]
 *                           | loss state p13 [p31 [p32 [p23 [p14]]]]] [ecn]
 *   [duplicate P [CORR]] [corrupt P [CORR]] [reorder P [CORR]] [gap N]
 *   [rate RATE [PACKETOVERHEAD [CELLSIZE [CELLOVERHEAD]]]] [seed N]
 *   extensions:
 *   [limit-bytes BYTES] [red kmin BYTES kmax BYTES pmax P%] [jitter-no-reorder]
 *   [corrupt-recompute] [pfc xoff BYTES xon BYTES [prio N]] [ctrl-delay]
 *   [drop-psn QPN:PSN[:TIMES]]... [drop-nth N] [drop-mad KIND ORD[,ORD]...]...   (emu_rules.h)
 *
 * Units follow tc (emu_units.h). "latency" and "drop" are accepted as netem's
 * aliases of "delay" and "loss". Keywords may come in any order but only
 * once (drop-psn, drop-mad: up to EMU_RULES_MAX rules in all, with drop-nth). Not supported: slot,
 * custom distribution tables, rates in % of the device speed.
 *
 * The parsed struct holds effective values: what the SPEC left unset has
 * netem's default (limit 1000, gemodel r = 1-p, 1-h = 100 %, 1-k = 0, state
 * p31 = 1-p13, p23 = 100 %, uniform jitter, gap 1 with reorder) or, for the
 * extensions, off (pfc prio 3 when pfc is on).
 */
#ifndef EMU_SPEC_H
#define EMU_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu_dist.h"
#include "emu_err.h"
#include "emu_impair.h"
#include "emu_loss.h"
#include "emu_pfcgen.h"
#include "emu_red.h"
#include "emu_rules.h"
#include "emu_shaper.h"

#define EMU_SPEC_MAX_LEN 2048 /**< characters in a SPEC string, NUL included */
#define EMU_SPEC_MAX_TOKENS 128

struct emu_spec {
	struct emu_dist_params delay;	 /**< delay, jitter, correlation, distribution */
	struct emu_impair_params impair; /**< loss, ecn, duplicate, corrupt, reorder, gap */
	struct emu_shaper_params queue;	 /**< rate, overheads, limit, limit-bytes */
	struct emu_red_params red;
	struct emu_pfcgen_params pfc; /**< link_bps stays 0: the app knows the port speed */
	bool seed_set;
	uint64_t seed;
	/**
	 * ctrl-delay: MAC control frames (PFC/PAUSE) still skip loss and the queue
	 * but take the base delay (no jitter), as on a real long link; default:
	 * they bypass the delay line too.
	 */
	bool ctrl_delay;
	struct emu_rules_params rules; /**< drop-psn / drop-nth, in SPEC order */
};

/** Defaults: netem's (limit 1000, no impairment). */
void emu_spec_init(struct emu_spec *s);

/**
 * Parse a whitespace-separated SPEC into @p s (initialised first). Returns 0
 * or a negated ::emu_err; then @p msg (if not NULL) holds one line naming the
 * bad token and what is allowed, e.g.
 *   loss gemodel: "120%" is not a probability (0%..100%)
 */
int emu_spec_parse(struct emu_spec *s, const char *text, char *msg, size_t msglen);

/** The same on pre-split tokens (e.g. the rest of a command line). */
int emu_spec_parse_argv(struct emu_spec *s, int argc, const char *const argv[], char *msg,
			size_t msglen);

/**
 * Write the effective SPEC as text that emu_spec_parse() reads back to the
 * same values (every default spelled out for the models in use). Returns the
 * length written or -EMU_E_NOSPACE.
 */
int emu_spec_format(const struct emu_spec *s, char *buf, size_t len);

#endif /* EMU_SPEC_H */
