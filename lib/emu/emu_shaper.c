/* SPDX-License-Identifier: BSD-3-Clause */
#include "emu_shaper.h"

#include <string.h>

#include "emu_err.h"

#define NS_PER_S UINT64_C(1000000000)

int
emu_shaper_init(struct emu_shaper *s, const struct emu_shaper_params *p, struct emu_counters *cnt)
{
	if (cnt == NULL)
		return -EMU_E_INVAL;
	if (p->rate_bps > (UINT64_C(1) << 50) || p->limit_bytes > (UINT64_C(1) << 48))
		return -EMU_E_RANGE;
	if (p->cell_size != 0 && (int64_t)p->cell_size + p->cell_overhead <= 0)
		return -EMU_E_RANGE;
	memset(s, 0, sizeof(*s));
	s->p = *p;
	s->cnt = cnt;
	return 0;
}

uint64_t
emu_shaper_wire_len(const struct emu_shaper_params *p, uint32_t len)
{
	int64_t wire = (int64_t)len + p->overhead;

	if (wire <= 0)
		return 0;
	if (p->cell_size != 0) {
		/* netem: cells = ceil(len / cell_size);
		 * len = cells * (cell_size + cell_overhead) */
		int64_t cells = (wire + p->cell_size - 1) / p->cell_size;

		wire = cells * ((int64_t)p->cell_size + p->cell_overhead);
	}
	return (uint64_t)wire;
}

/* Exact serialisation time as ns * rate_bps (the numerator over rate_bps). */
static unsigned __int128
tx_scaled(const struct emu_shaper_params *p, uint32_t len)
{
	return (unsigned __int128)emu_shaper_wire_len(p, len) * 8u * NS_PER_S;
}

uint64_t
emu_shaper_tx_ns(const struct emu_shaper_params *p, uint32_t len)
{
	if (p->rate_bps == 0)
		return 0;
	return (uint64_t)(tx_scaled(p, len) / p->rate_bps);
}

enum emu_shaper_verdict
emu_shaper_enqueue(struct emu_shaper *s, uint64_t now_ns, uint32_t len, uint64_t *dep_ns)
{
	const uint64_t rate = s->p.rate_bps;
	unsigned __int128 total;
	uint64_t start;

	if ((s->p.limit_pkts != 0 && s->q_pkts >= s->p.limit_pkts) ||
	    (s->p.limit_bytes != 0 && s->q_bytes + len > s->p.limit_bytes)) {
		s->cnt->v[EMU_CNT_DROP_QUEUE]++;
		return EMU_SHAPER_DROP;
	}
	s->q_pkts++;
	s->q_bytes += len;
	s->cnt->v[EMU_CNT_ENQUEUED]++;
	if (rate == 0) {
		*dep_ns = now_ns;
		return EMU_SHAPER_ACCEPT;
	}
	/* dep_n = max(now_n, dep_{n-1}) + tx_n, in units of 1 / rate_bps ns */
	if (now_ns > s->last_dep_ns || (now_ns == s->last_dep_ns && s->last_dep_rem == 0)) {
		start = now_ns; /* link idle: start now, no fraction carried */
		total = tx_scaled(&s->p, len);
	} else {
		start = s->last_dep_ns;
		total = tx_scaled(&s->p, len) + s->last_dep_rem;
	}
	s->last_dep_ns = start + (uint64_t)(total / rate);
	s->last_dep_rem = (uint64_t)(total % rate);
	*dep_ns = s->last_dep_ns;
	return EMU_SHAPER_ACCEPT;
}
