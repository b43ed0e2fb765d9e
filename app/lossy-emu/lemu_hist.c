/* SPDX-License-Identifier: BSD-3-Clause */
#include "lemu_hist.h"

#include <math.h>
#include <string.h>

void
lemu_hist_reset(struct lemu_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void
lemu_hist_bucket_range(unsigned i, uint64_t *lo, uint64_t *width)
{
	unsigned e, m;

	if (i < LEMU_HIST_SUB) {
		*lo = i;
		*width = 1;
		return;
	}
	e = i / LEMU_HIST_SUB + LEMU_HIST_SUB_BITS - 1;
	m = i % LEMU_HIST_SUB;
	*width = UINT64_C(1) << (e - LEMU_HIST_SUB_BITS);
	*lo = (UINT64_C(1) << e) + (uint64_t)m * *width;
}

uint64_t
lemu_hist_quantile(const struct lemu_hist *h, double q)
{
	uint64_t rank, seen = 0, lo, width, v;

	if (h->count == 0)
		return 0;
	if (q <= 0.)
		q = 0.;
	if (q >= 1.)
		return h->max;
	/* the smallest value with at least ceil(q * count) samples at or below it */
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank == 0)
		rank = 1;
	for (unsigned i = 0; i < LEMU_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			lemu_hist_bucket_range(i, &lo, &width);
			v = lo + width / 2;
			return v > h->max ? h->max : v;
		}
	}
	return h->max;
}

void
lemu_hist_merge(struct lemu_hist *dst, const struct lemu_hist *src)
{
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->max > dst->max)
		dst->max = src->max;
	for (unsigned i = 0; i < LEMU_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
}
