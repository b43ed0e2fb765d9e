/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_red.h
 * Instantaneous-queue RED/ECN marking, the DCQCN congestion point
 * (extension "red kmin BYTES kmax BYTES pmax P"):
 *
 *     p(q) = 0                                  q <= kmin
 *            pmax * (q - kmin) / (kmax - kmin)  kmin < q <= kmax
 *            1                                  q >  kmax
 *
 * q is the bottleneck backlog in bytes seen by the arriving packet, with no
 * averaging (wq = 1), as in the DCQCN / HPCC switch model. A selected ECT(0)
 * or ECT(1) packet is marked CE. Non-ECT packets are never dropped by RED
 * (unlike RFC 2309 RED or switch WRED): they pass and are counted as
 * red_not_ect; only the queue limit drops. CE packets pass unchanged.
 */
#ifndef EMU_RED_H
#define EMU_RED_H

#include <stdbool.h>
#include <stdint.h>

#include "emu_counters.h"
#include "emu_err.h"
#include "emu_rng.h"

struct emu_red_params {
	bool enabled;
	uint64_t kmin_bytes;
	uint64_t kmax_bytes; /**< > kmin_bytes */
	double pmax;	     /**< in [0, 1] */
};

enum emu_red_verdict {
	EMU_RED_PASS = 0,
	EMU_RED_MARK = 1, /**< set CE (ECT packets only) */
};

struct emu_red {
	struct emu_red_params p;
	emu_prob pmax;
	struct emu_rng rng;
	struct emu_counters *cnt;
};

/** Initialise; draws use stream RED of @p seed. 0, -EMU_E_RANGE or -EMU_E_INVAL. */
int emu_red_init(struct emu_red *r, const struct emu_red_params *p, uint64_t seed,
		 struct emu_counters *cnt);

/** Marking probability p(q) in fixed point (scale 2^32). */
emu_prob emu_red_prob(const struct emu_red *r, uint64_t q_bytes);

/**
 * Decide for one packet with ECN codepoint @p ecn (0 Not-ECT, 1 ECT(1),
 * 2 ECT(0), 3 CE) arriving at backlog @p q_bytes. Draws a random number
 * only when 0 < p(q) < 1 and the packet is not CE. Counts ECN_MARK_RED and
 * RED_NOT_ECT.
 */
enum emu_red_verdict emu_red_decide(struct emu_red *r, uint64_t q_bytes, uint8_t ecn);

#endif /* EMU_RED_H */
