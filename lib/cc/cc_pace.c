/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file cc_pace.c
 * The pacer rate-based algorithms share: a token bucket in the engine's
 * clock (the rnic's TSC in ns). Each packet advances the earliest time of the
 * next one by its wire time at the rate; a poll that woke late may catch up
 * CC_PACE_BURST_NS worth of packets at once, so idle sleeps and a
 * descheduled loop do not lower the average rate. At or above the line rate
 * (or with no rate) nothing is paced: the lossless fast path is untouched.
 */
#include "cc.h"

static bool
unpaced(double rate_bps)
{
	return rate_bps <= 0 || rate_bps >= (double)cc_line_rate();
}

uint64_t
cc_pace_gate(const struct cc_pacer *p, uint64_t now, double rate_bps)
{
	if (unpaced(rate_bps) || p->next <= now)
		return now;
	return p->next;
}

void
cc_pace_sent(struct cc_pacer *p, uint64_t now, uint32_t bytes, double rate_bps)
{
	uint64_t gap, floor, base;

	if (unpaced(rate_bps)) {
		p->next = now;
		return;
	}
	gap = (uint64_t)((double)(bytes + CC_PKT_OVERHEAD) * 8e9 / rate_bps);
	floor = now > CC_PACE_BURST_NS ? now - CC_PACE_BURST_NS : 0;
	base = p->next > floor ? p->next : floor;
	p->next = base + gap;
}
