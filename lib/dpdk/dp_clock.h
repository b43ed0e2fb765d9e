/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file dp_clock.h
 * The one nanosecond clock of the three apps: the TSC read by DPDK, turned into
 * ns as ns = (tsc - tsc0) * mult >> 32 with mult = 10^9 * 2^32 / tsc_hz.
 *
 * A multiply and a shift instead of a 128-bit division (tens of ns), because
 * the data paths read the clock several times per poll. mult has 32 fractional
 * bits, so the relative error is below 2^-32 * tsc_hz / 10^9 (under 1 ns per
 * second of uptime at 4 GHz). Each app keeps its own epoch tsc0: the rnic
 * counts from boot (0), the lossy-emu from its start, the pfc-relay from one
 * second before its start (pfc_state reads time 0 as "unset").
 */
#ifndef DP_CLOCK_H
#define DP_CLOCK_H

#include <stdint.h>

#include <rte_cycles.h>

/** A TSC clock: epoch and scale. Zeroed: not initialised (every read gives 0). */
struct dp_clock {
	uint64_t tsc0; /**< TSC value at ns 0 */
	uint64_t mult; /**< ns per cycle with 32 fractional bits */
};

/** ns per cycle as a 32.32 fixed-point number; 0 for a zero rate. */
static inline uint64_t
dp_clock_mult(uint64_t tsc_hz)
{
	return tsc_hz ? (uint64_t)(((unsigned __int128)1000000000u << 32) / tsc_hz) : 0;
}

/** Start @p c at TSC value @p tsc0 (ns 0 there), counting at @p tsc_hz cycles/s. */
static inline void
dp_clock_init(struct dp_clock *c, uint64_t tsc_hz, uint64_t tsc0)
{
	c->tsc0 = tsc0;
	c->mult = dp_clock_mult(tsc_hz);
}

/** The time of TSC value @p tsc on @p c, in ns since its epoch. */
static inline uint64_t
dp_clock_ns(const struct dp_clock *c, uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)(tsc - c->tsc0) * c->mult) >> 32);
}

/** Now on @p c, in ns since its epoch. */
static inline uint64_t
dp_clock_now(const struct dp_clock *c)
{
	return dp_clock_ns(c, rte_rdtsc());
}

#endif /* DP_CLOCK_H */
