/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_rng.h
 * Seeded pseudo-random numbers for the impairment models, header-only so
 * the per-packet draws inline.
 *
 * Generator: xoshiro256** (Blackman and Vigna, 2018), 256-bit state,
 * period 2^256 - 1; state filled from the seed with splitmix64. Each model
 * owns its own stream, derived from (seed, stream id), so that enabling
 * jitter does not change the loss pattern of the same seed. netem instead
 * draws everything from one per-qdisc PRNG (a deliberate difference).
 *
 * Probabilities are fixed point ::emu_prob with scale 2^32: an event of
 * probability p happens iff a uniform 32-bit draw is below p. 0 never
 * happens and 2^32 (100 %) always happens. (netem scales by 2^32 - 1 and
 * compares with < or >= depending on the model, which makes "100 %" miss
 * with probability 2^-32; we do not reproduce that.)
 *
 * Correlated draws (::emu_crand) reproduce netem's get_crandom():
 *     next = ((2^32 - w) * U + w * last) / 2^32,   w = rho * 2^32,
 * an exponentially weighted average of uniforms. It is NOT a uniform with
 * lag-1 correlation rho: the stationary variance shrinks to
 * (1 - rho) / (12 (1 + rho)) instead of 1/12, so thresholds far from 1/2 are
 * crossed much less often than configured (e.g. "loss 1% 25%" loses about
 * 0.00024 % of packets, "loss 5% 25%" 0.19 %). It is kept for compatibility and documented as
 * broken, as netem's own man page does.
 */
#ifndef EMU_RNG_H
#define EMU_RNG_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/** Probability in fixed point, scale 2^32 (EMU_PROB_ONE = 100 %). */
typedef uint64_t emu_prob;
#define EMU_PROB_ONE (UINT64_C(1) << 32)

/** Stream ids: one independent sequence per model and direction. */
enum emu_rng_stream {
	EMU_RNG_STREAM_LOSS = 1,
	EMU_RNG_STREAM_DUPLICATE,
	EMU_RNG_STREAM_CORRUPT,
	EMU_RNG_STREAM_REORDER,
	EMU_RNG_STREAM_DELAY,
	EMU_RNG_STREAM_RED,
};

struct emu_rng {
	uint64_t s[4];
};

/** One splitmix64 step: advances *x and returns a well-mixed 64-bit value. */
static inline uint64_t
emu_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/** Seed stream @p stream of @p seed. Same (seed, stream) -> same sequence. */
static inline void
emu_rng_seed(struct emu_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ emu_splitmix64(&stream);

	for (int i = 0; i < 4; i++)
		r->s[i] = emu_splitmix64(&x);
	if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
		r->s[0] = 1; /* the all-zero state is the one fixed point */
}

/**
 * Seed of direction @p dir (0 or 1) derived from the user's seed, so the two
 * directions of a bump-in-the-wire never share random sequences.
 */
static inline uint64_t
emu_rng_direction_seed(uint64_t seed, unsigned dir)
{
	uint64_t x = seed + (uint64_t)(dir + 1) * UINT64_C(0xd1b54a32d192ed03);

	return emu_splitmix64(&x);
}

static inline uint64_t
emu_rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/** Next 64 uniform bits (xoshiro256**). */
static inline uint64_t
emu_rng_u64(struct emu_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = emu_rotl64(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = emu_rotl64(s[3], 45);
	return out;
}

/** Uniform 32-bit value (the high half, the best bits of xoshiro256**). */
static inline uint32_t
emu_rng_u32(struct emu_rng *r)
{
	return (uint32_t)(emu_rng_u64(r) >> 32);
}

/** Uniform double in [0, 1) with 53 random bits. */
static inline double
emu_rng_double(struct emu_rng *r)
{
	return (double)(emu_rng_u64(r) >> 11) * 0x1.0p-53;
}

/** Integer in [0, n) by multiply-high (bias below n / 2^64); 0 if n == 0. */
static inline uint64_t
emu_rng_below(struct emu_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)emu_rng_u64(r) * n) >> 64);
}

/** Probability @p p in [0, 1] to fixed point (rounded to nearest). */
static inline emu_prob
emu_prob_from_double(double p)
{
	if (!(p > 0.))
		return 0;
	if (p >= 1.)
		return EMU_PROB_ONE;
	return (emu_prob)llround(p * (double)EMU_PROB_ONE);
}

/** Fixed-point probability back to a double. */
static inline double
emu_prob_to_double(emu_prob p)
{
	return (double)p / (double)EMU_PROB_ONE;
}

/** True with probability p / 2^32, given a uniform 32-bit draw. */
static inline bool
emu_prob_hit(uint32_t u, emu_prob p)
{
	return (uint64_t)u < p;
}

/** Bernoulli(p) draw from @p r. */
static inline bool
emu_rng_bernoulli(struct emu_rng *r, emu_prob p)
{
	return emu_prob_hit(emu_rng_u32(r), p);
}

/** netem get_crandom() state: weight w = rho * 2^32 and the last value. */
struct emu_crand {
	emu_prob w;
	uint32_t last;
};

static inline void
emu_crand_init(struct emu_crand *c, double rho)
{
	c->w = emu_prob_from_double(rho);
	c->last = 0;
}

/**
 * Next correlated 32-bit value: ((2^32 - w) U + w last) >> 32, as netem's
 * get_crandom(); with w == 0 a plain uniform draw (last is left alone).
 */
static inline uint32_t
emu_crand_next(struct emu_crand *c, struct emu_rng *r)
{
	uint64_t u = emu_rng_u32(r);
	uint32_t v;

	if (c->w == 0)
		return (uint32_t)u;
	/* u (2^32 - w) + last w <= (2^32 - 1) 2^32: fits in 64 bits */
	v = (uint32_t)((u * (EMU_PROB_ONE - c->w) + (uint64_t)c->last * c->w) >> 32);
	c->last = v;
	return v;
}

#endif /* EMU_RNG_H */
