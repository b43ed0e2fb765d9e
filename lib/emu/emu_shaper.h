/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_shaper.h
 * The bottleneck queue: a rate shaper on a ns clock with packet and byte
 * accounting and tail drop. It holds no packets itself; the caller keeps
 * them in a FIFO, asks emu_shaper_enqueue() for each packet's departure time
 * and calls emu_shaper_dequeue() when the packet leaves.
 *
 * Serialisation (tc-netem "rate RATE [PACKETOVERHEAD [CELLSIZE [CELLOVERHEAD]]]",
 * sch_netem.c packet_time_ns()):
 *     wire = len + overhead;  with cells: ceil(wire / cell) * (cell + cell_overhead)
 *     tx   = wire * 8 / rate seconds
 *     dep_n = max(now_n, dep_{n-1}) + tx_n
 * Departure times are exact: the fractional ns are carried between
 * back-to-back packets, so dep_n = floor(exact departure), never drifting
 * (netem truncates each tx to whole ns). Without a rate, dep = now.
 *
 * Limits: "limit PACKETS" admits a packet iff qlen < limit (netem / pfifo);
 * "limit-bytes BYTES" iff backlog + len <= limit (bfifo). Unlike netem, the
 * limit covers only this queue, not the delay line behind it.
 */
#ifndef EMU_SHAPER_H
#define EMU_SHAPER_H

#include <stdint.h>

#include "emu_counters.h"
#include "emu_err.h"

/** netem's default "limit" (iproute2 q_netem.c: .limit = 1000). */
#define EMU_DEFAULT_LIMIT 1000

struct emu_shaper_params {
	uint64_t rate_bps;     /**< bits per second; 0 = no shaping */
	int32_t overhead;      /**< PACKETOVERHEAD bytes, may be negative */
	uint32_t cell_size;    /**< CELLSIZE bytes; 0 = no cells */
	int32_t cell_overhead; /**< CELLOVERHEAD bytes per cell */
	uint32_t limit_pkts;   /**< packets; 0 = unlimited */
	uint64_t limit_bytes;  /**< bytes; 0 = unlimited */
};

enum emu_shaper_verdict {
	EMU_SHAPER_ACCEPT = 0,
	EMU_SHAPER_DROP = 1, /**< tail drop; counted as drop_queue */
};

struct emu_shaper {
	struct emu_shaper_params p;
	uint64_t last_dep_ns;  /**< floor of the last exact departure time */
	uint64_t last_dep_rem; /**< its fraction: rem / (rate * 1e-9) ns, rem < rate */
	uint32_t q_pkts;
	uint64_t q_bytes;
	struct emu_counters *cnt;
};

/** Initialise; @p cnt receives ENQUEUED, DROP_QUEUE, DEQUEUED. 0 or -EMU_E_RANGE. */
int emu_shaper_init(struct emu_shaper *s, const struct emu_shaper_params *p,
		    struct emu_counters *cnt);

/** Bytes a packet of @p len occupies on the shaped link (overhead and cells applied). */
uint64_t emu_shaper_wire_len(const struct emu_shaper_params *p, uint32_t len);

/** Serialisation time of @p len bytes in ns, rounded down (0 without a rate). */
uint64_t emu_shaper_tx_ns(const struct emu_shaper_params *p, uint32_t len);

/**
 * Admit a packet of @p len bytes arriving at @p now_ns. On ACCEPT, *dep_ns is
 * the time its last bit leaves the bottleneck, and the packet counts in the
 * backlog until emu_shaper_dequeue(). On DROP nothing changes but the counter.
 */
enum emu_shaper_verdict emu_shaper_enqueue(struct emu_shaper *s, uint64_t now_ns, uint32_t len,
					   uint64_t *dep_ns);

/** The packet of @p len bytes admitted earlier has left the queue (inline: once per packet). */
static inline void
emu_shaper_dequeue(struct emu_shaper *s, uint32_t len)
{
	if (s->q_pkts == 0)
		return; /* caller bug; keep the accounting sane */
	s->q_pkts--;
	s->q_bytes = s->q_bytes >= len ? s->q_bytes - len : 0;
	s->cnt->v[EMU_CNT_DEQUEUED]++;
}

/** Current backlog, for RED and PFC. */
static inline uint64_t
emu_shaper_backlog_bytes(const struct emu_shaper *s)
{
	return s->q_bytes;
}

static inline uint32_t
emu_shaper_backlog_pkts(const struct emu_shaper *s)
{
	return s->q_pkts;
}

#endif /* EMU_SHAPER_H */
