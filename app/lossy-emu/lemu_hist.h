/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file lemu_hist.h
 * Log-linear histogram of non-negative nanosecond values (delay-line release
 * error): values below 16 ns are exact, above that each power of two is split
 * into 16 buckets, so a quantile is off by at most 1/32 of its value
 * (reported at the bucket's midpoint). Count, sum and max are exact.
 * O(1) add, no allocation; DPDK-free.
 */
#ifndef LEMU_HIST_H
#define LEMU_HIST_H

#include <stdint.h>

#define LEMU_HIST_SUB_BITS 4
#define LEMU_HIST_SUB (1u << LEMU_HIST_SUB_BITS)
#define LEMU_HIST_BUCKETS ((64 - LEMU_HIST_SUB_BITS + 1) * LEMU_HIST_SUB)

struct lemu_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t max;
	uint64_t b[LEMU_HIST_BUCKETS];
};

static inline unsigned
lemu_hist_bucket(uint64_t v)
{
	unsigned e;

	if (v < LEMU_HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v); /* >= SUB_BITS */
	return (e - LEMU_HIST_SUB_BITS + 1) * LEMU_HIST_SUB +
	       (unsigned)((v >> (e - LEMU_HIST_SUB_BITS)) & (LEMU_HIST_SUB - 1));
}

static inline void
lemu_hist_add(struct lemu_hist *h, uint64_t v)
{
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
	h->b[lemu_hist_bucket(v)]++;
}

void lemu_hist_reset(struct lemu_hist *h);

/** Smallest value of bucket @p i, and its width. */
void lemu_hist_bucket_range(unsigned i, uint64_t *lo, uint64_t *width);

/** Value at quantile @p q in [0, 1] (bucket midpoint, capped at max); 0 when empty. */
uint64_t lemu_hist_quantile(const struct lemu_hist *h, double q);

/** Add every sample of @p src to @p dst. */
void lemu_hist_merge(struct lemu_hist *dst, const struct lemu_hist *src);

#endif /* LEMU_HIST_H */
