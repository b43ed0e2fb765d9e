/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_psn_bitmap.h
 * A window of PSN flags for the selective loss recoveries: bit psn says "this
 * PSN arrived" (receiver, sender's scoreboard) or "queued for retransmission".
 * The window starts at @c base and spans ROCE_PSN_BITMAP_BITS PSNs; the bit
 * of a PSN is psn mod ROCE_PSN_BITMAP_BITS (a power of two dividing 2^24, so
 * the index wraps with the PSN). Searches go a 64-bit word at a time: Go-Back-
 * ONE (Wang, NJUPT, section V) names slot-by-slot scanning after many
 * consecutive losses as its own slow spot.
 *
 * All PSN arithmetic goes through roce_psn.h. Callers keep every PSN they
 * pass within [base, base + ROCE_PSN_BITMAP_BITS).
 */
#ifndef ROCE_PSN_BITMAP_H
#define ROCE_PSN_BITMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "roce_psn.h"

#define ROCE_PSN_BITMAP_BITS 65536u /**< the largest --max-ooo (IRN's bitmap is 6,686) */
#define ROCE_PSN_BITMAP_WORDS (ROCE_PSN_BITMAP_BITS / 64u)

struct roce_psn_bitmap {
	uint32_t base; /**< first PSN of the window */
	uint64_t w[ROCE_PSN_BITMAP_WORDS];
};

static inline void
roce_psn_bitmap_init(struct roce_psn_bitmap *b, uint32_t base)
{
	memset(b->w, 0, sizeof(b->w));
	b->base = base & ROCE_PSN_MASK;
}

static inline uint32_t
roce_psn_bitmap_idx(uint32_t psn)
{
	return psn & (ROCE_PSN_BITMAP_BITS - 1u);
}

static inline bool
roce_psn_bitmap_test(const struct roce_psn_bitmap *b, uint32_t psn)
{
	uint32_t i = roce_psn_bitmap_idx(psn);

	return (b->w[i >> 6] >> (i & 63u)) & 1u;
}

static inline void
roce_psn_bitmap_set(struct roce_psn_bitmap *b, uint32_t psn)
{
	uint32_t i = roce_psn_bitmap_idx(psn);

	b->w[i >> 6] |= 1ull << (i & 63u);
}

static inline void
roce_psn_bitmap_clear(struct roce_psn_bitmap *b, uint32_t psn)
{
	uint32_t i = roce_psn_bitmap_idx(psn);

	b->w[i >> 6] &= ~(1ull << (i & 63u));
}

/* Bits [i, i + n) of word i >> 6 (n >= 1, stays inside the word). */
static inline uint64_t
roce_psn_bitmap_mask(uint32_t i, uint32_t n)
{
	uint32_t s = i & 63u;

	return (n >= 64u ? ~0ull : ((1ull << n) - 1u)) << s;
}

/** Clear the n PSNs from @p psn on (n <= ROCE_PSN_BITMAP_BITS), a word at a time. */
static inline void
roce_psn_bitmap_clear_range(struct roce_psn_bitmap *b, uint32_t psn, uint32_t n)
{
	while (n) {
		uint32_t i = roce_psn_bitmap_idx(psn);
		uint32_t k = 64u - (i & 63u);

		if (k > n)
			k = n;
		b->w[i >> 6] &= ~roce_psn_bitmap_mask(i, k);
		psn = roce_psn_add(psn, k);
		n -= k;
	}
}

/** Move the window start to @p base (not backwards), forgetting the PSNs it leaves. */
static inline void
roce_psn_bitmap_advance(struct roce_psn_bitmap *b, uint32_t base)
{
	int32_t d = roce_psn_diff(base, b->base);

	if (d <= 0)
		return;
	if ((uint32_t)d >= ROCE_PSN_BITMAP_BITS)
		memset(b->w, 0, sizeof(b->w));
	else
		roce_psn_bitmap_clear_range(b, b->base, (uint32_t)d);
	b->base = base & ROCE_PSN_MASK;
}

/*
 * First PSN in [psn, psn + n) whose bit equals @p set, a word at a time;
 * returns its distance from @p psn, or n if there is none.
 */
static inline uint32_t
roce_psn_bitmap_find(const struct roce_psn_bitmap *b, uint32_t psn, uint32_t n, bool set)
{
	uint32_t done = 0;

	while (done < n) {
		uint32_t i = roce_psn_bitmap_idx(roce_psn_add(psn, done));
		uint32_t k = 64u - (i & 63u);
		uint64_t w = set ? b->w[i >> 6] : ~b->w[i >> 6];

		if (k > n - done)
			k = n - done;
		w &= roce_psn_bitmap_mask(i, k);
		if (w)
			return done + (uint32_t)__builtin_ctzll(w) - (i & 63u);
		done += k;
	}
	return n;
}

/** Set bits in [psn, psn + n), a word at a time. */
static inline uint32_t
roce_psn_bitmap_count(const struct roce_psn_bitmap *b, uint32_t psn, uint32_t n)
{
	uint32_t done = 0, c = 0;

	while (done < n) {
		uint32_t i = roce_psn_bitmap_idx(roce_psn_add(psn, done));
		uint32_t k = 64u - (i & 63u);

		if (k > n - done)
			k = n - done;
		c += (uint32_t)__builtin_popcountll(b->w[i >> 6] & roce_psn_bitmap_mask(i, k));
		done += k;
	}
	return c;
}

#endif /* ROCE_PSN_BITMAP_H */
