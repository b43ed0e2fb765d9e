/* SPDX-License-Identifier: BSD-3-Clause */
#include "emu_red.h"

#include <string.h>

#include "emu_err.h"

int
emu_red_init(struct emu_red *r, const struct emu_red_params *p, uint64_t seed,
	     struct emu_counters *cnt)
{
	if (cnt == NULL)
		return -EMU_E_INVAL;
	if (p->enabled && (p->kmax_bytes <= p->kmin_bytes || !(p->pmax >= 0. && p->pmax <= 1.)))
		return -EMU_E_RANGE;
	memset(r, 0, sizeof(*r));
	r->p = *p;
	r->pmax = emu_prob_from_double(p->pmax);
	r->cnt = cnt;
	emu_rng_seed(&r->rng, seed, EMU_RNG_STREAM_RED);
	return 0;
}

emu_prob
emu_red_prob(const struct emu_red *r, uint64_t q)
{
	const uint64_t kmin = r->p.kmin_bytes, kmax = r->p.kmax_bytes;

	if (!r->p.enabled || q <= kmin)
		return 0;
	if (q > kmax)
		return EMU_PROB_ONE;
	/* pmax (q - kmin) / (kmax - kmin); pmax <= 2^32 and q - kmin <= 2^48: fits in 128 bits */
	return (emu_prob)((unsigned __int128)r->pmax * (q - kmin) / (kmax - kmin));
}

enum emu_red_verdict
emu_red_decide(struct emu_red *r, uint64_t q_bytes, uint8_t ecn)
{
	emu_prob p = emu_red_prob(r, q_bytes);
	bool hit;

	if (p == 0 || ecn == 3) /* nothing to do, or already CE */
		return EMU_RED_PASS;
	hit = p >= EMU_PROB_ONE || emu_rng_bernoulli(&r->rng, p);
	if (!hit)
		return EMU_RED_PASS;
	if (ecn == 0) {
		r->cnt->v[EMU_CNT_RED_NOT_ECT]++;
		return EMU_RED_PASS;
	}
	r->cnt->v[EMU_CNT_ECN_MARK_RED]++;
	return EMU_RED_MARK;
}
