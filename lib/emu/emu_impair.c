/* SPDX-License-Identifier: BSD-3-Clause */
#include "emu_impair.h"

#include <string.h>

#include "emu_err.h"

static bool
is_prob(double p)
{
	return p >= 0. && p <= 1.;
}

int
emu_impair_params_check(const struct emu_impair_params *p)
{
	int rc = emu_loss_params_check(&p->loss);

	if (rc)
		return rc;
	if (!is_prob(p->dup_p) || !is_prob(p->dup_corr) || !is_prob(p->corrupt_p) ||
	    !is_prob(p->corrupt_corr) || !is_prob(p->reorder_p) || !is_prob(p->reorder_corr))
		return -EMU_E_RANGE;
	if (p->gap != 0 && p->reorder_p <= 0.)
		return -EMU_E_CONFLICT; /* iproute2: "gap specified without reorder probability" */
	if (p->ecn && p->loss.kind == EMU_LOSS_NONE)
		return -EMU_E_CONFLICT; /* iproute2: "ecn requested without loss model" */
	return 0;
}

int
emu_impair_init(struct emu_impair *im, const struct emu_impair_params *p, uint64_t seed,
		struct emu_counters *cnt)
{
	int rc;

	if (cnt == NULL)
		return -EMU_E_INVAL;
	rc = emu_impair_params_check(p);
	if (rc)
		return rc;
	memset(im, 0, sizeof(*im));
	rc = emu_loss_init(&im->loss, &p->loss, seed);
	if (rc)
		return rc;
	im->ecn = p->ecn;
	im->dup = emu_prob_from_double(p->dup_p);
	im->corrupt = emu_prob_from_double(p->corrupt_p);
	im->reorder = emu_prob_from_double(p->reorder_p);
	emu_crand_init(&im->dup_c, p->dup_corr);
	emu_crand_init(&im->corrupt_c, p->corrupt_corr);
	emu_crand_init(&im->reorder_c, p->reorder_corr);
	emu_rng_seed(&im->dup_rng, seed, EMU_RNG_STREAM_DUPLICATE);
	emu_rng_seed(&im->corrupt_rng, seed, EMU_RNG_STREAM_CORRUPT);
	emu_rng_seed(&im->reorder_rng, seed, EMU_RNG_STREAM_REORDER);
	/* iproute2: a reorder probability without gap means gap 1 */
	im->gap = p->reorder_p > 0. && p->gap == 0 ? 1 : p->gap;
	im->cnt = cnt;
	return 0;
}

/* Steps 2-5 of netem_enqueue() for a packet whose count is already known. */
static unsigned
decide_rest(struct emu_impair *im, uint8_t ecn, unsigned count)
{
	unsigned v = 0;

	if (emu_loss_step(&im->loss) == EMU_LOSS_LOSE) {
		/* netem: if (q->ecn && INET_ECN_set_ce(skb)) mark; else --count.
		 * INET_ECN_set_ce() succeeds for ECT(0), ECT(1) and CE. */
		if (im->ecn && ecn != 0) {
			v |= EMU_V_MARK_CE;
			im->cnt->v[EMU_CNT_ECN_MARK_LOSS]++;
		} else {
			count--;
		}
	}
	if (count == 0) {
		im->cnt->v[EMU_CNT_DROP_LOSS]++;
		return EMU_V_DROP;
	}
	if (count > 1) {
		v |= EMU_V_DUPLICATE;
		im->cnt->v[EMU_CNT_DUPLICATED]++;
	}
	if (im->corrupt != 0 &&
	    emu_prob_hit(emu_crand_next(&im->corrupt_c, &im->corrupt_rng), im->corrupt)) {
		v |= EMU_V_CORRUPT;
		im->cnt->v[EMU_CNT_CORRUPTED]++;
	}
	/* netem: if (gap == 0 || counter < gap - 1 || reorder < get_crandom()) delay
	 * normally and ++counter; else send now and counter = 0. The draw is made
	 * only once the gap has passed (short-circuit), as in netem. */
	if (im->gap == 0 || im->reorder_counter < im->gap - 1 ||
	    !emu_prob_hit(emu_crand_next(&im->reorder_c, &im->reorder_rng), im->reorder)) {
		im->reorder_counter++;
	} else {
		im->reorder_counter = 0;
		v |= EMU_V_REORDER;
		im->cnt->v[EMU_CNT_REORDERED]++;
	}
	return v;
}

unsigned
emu_impair_decide(struct emu_impair *im, uint8_t ecn)
{
	unsigned count = 1;

	im->cnt->v[EMU_CNT_RX]++;
	/* netem: if (q->duplicate && q->duplicate >= get_crandom(&q->dup_cor)) ++count */
	if (im->dup != 0 && emu_prob_hit(emu_crand_next(&im->dup_c, &im->dup_rng), im->dup))
		count++;
	return decide_rest(im, ecn, count);
}

unsigned
emu_impair_decide_copy(struct emu_impair *im, uint8_t ecn)
{
	return decide_rest(im, ecn, 1);
}

uint64_t
emu_impair_corrupt_bit(struct emu_impair *im, uint32_t nbytes)
{
	return emu_rng_below(&im->corrupt_rng, (uint64_t)nbytes * 8u);
}
