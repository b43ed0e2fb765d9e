/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_psn.h
 * 24-bit packet sequence number arithmetic (IBTA 9.7.1). The one place PSNs
 * are compared, advanced and subtracted; never open-code the mask elsewhere.
 */
#ifndef ROCE_PSN_H
#define ROCE_PSN_H

#include <stdint.h>

#define ROCE_PSN_MASK 0xffffffu
#define ROCE_PSN_HALF 0x800000u /**< half the PSN space: the comparison window */

/** a + n modulo 2^24. */
static inline uint32_t
roce_psn_add(uint32_t a, uint32_t n)
{
	return (a + n) & ROCE_PSN_MASK;
}

/**
 * Signed distance a - b in the 24-bit space, in [-2^23, 2^23).
 * Positive: a is after b.
 */
static inline int32_t
roce_psn_diff(uint32_t a, uint32_t b)
{
	/* shift the 24-bit difference into the top of an int32 and back: sign-extends */
	return (int32_t)((a - b) << 8) >> 8;
}

/** <0, 0, >0 as a is before, equal to or after b (IBTA's "PSN compare"). */
static inline int
roce_psn_cmp(uint32_t a, uint32_t b)
{
	int32_t d = roce_psn_diff(a, b);

	return (d > 0) - (d < 0);
}

/** True if psn lies in [lo, lo + n) modulo 2^24. */
static inline int
roce_psn_in_window(uint32_t psn, uint32_t lo, uint32_t n)
{
	return ((psn - lo) & ROCE_PSN_MASK) < n;
}

#endif /* ROCE_PSN_H */
