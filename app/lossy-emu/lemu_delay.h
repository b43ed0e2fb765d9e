/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file lemu_delay.h
 * The delay line of one direction: packets wait here until their exit time
 * (ns) and leave in exit-time order. DPDK-free: it holds opaque pointers.
 *
 * Two layouts over one array:
 *  - FIFO ring (constant delay, jitter-no-reorder, rate only): O(1) push and
 *    pop. Exit times are kept non-decreasing: a push earlier than the tail is
 *    clamped to the tail's time (so a delay decrease at run time drains the
 *    packets in flight first instead of reordering them).
 *  - binary min-heap on (exit, seq) (jitter that may reorder): O(log n).
 * A sorted ring is a valid heap, and a heap sorts in place, so the layout can
 * change at run time (lemu_dl_set_heap()) without dropping anything.
 *
 * Reordered packets (netem "reorder P gap N") skip the delay but overtake at
 * most N packets: lemu_dl_push_reorder() places the packet right behind the
 * (N+1)-th most recently pushed normal packet, or releases it at once when
 * that one has already left. In the FIFO layout the bound is exact; in the
 * heap layout packets that jitter already reordered are not counted.
 */
#ifndef LEMU_DELAY_H
#define LEMU_DELAY_H

#include <stdbool.h>
#include <stdint.h>

/** Largest reorder displacement honoured (a larger gap is clamped to it). */
#define LEMU_DL_MAX_GAP 1024

struct lemu_dl_ent {
	uint64_t t;   /**< exit time, ns */
	uint64_t seq; /**< tie-break: push order (normal pushes even, reordered odd) */
	void *p;
};

struct lemu_dl {
	struct lemu_dl_ent *e;
	uint32_t cap;
	uint32_t n;    /**< entries held */
	uint32_t head; /**< FIFO layout: index of the oldest entry */
	bool heap;
	uint64_t seq;
	/* (t, seq) of the last LEMU_DL_MAX_GAP + 1 normal pushes, for the reorder bound */
	struct lemu_dl_ent hist[LEMU_DL_MAX_GAP + 1];
	uint32_t hist_pos, hist_n;
};

/** Allocate room for @p cap packets. Returns 0 or -ENOMEM / -EINVAL. */
int lemu_dl_init(struct lemu_dl *dl, uint32_t cap, bool heap);
void lemu_dl_free(struct lemu_dl *dl);

/** Switch layout keeping every packet (control-path cost: O(n log n)). */
void lemu_dl_set_heap(struct lemu_dl *dl, bool heap);

/** Queue @p p to leave at @p t_ns. Returns the exit time used (clamped in FIFO layout) or
 * UINT64_MAX if full. */
uint64_t lemu_dl_push(struct lemu_dl *dl, uint64_t t_ns, void *p);

/**
 * Queue a reordered packet that is ready at @p t_ns and may overtake at most
 * @p gap packets. Returns the exit time given, or UINT64_MAX if full.
 */
uint64_t lemu_dl_push_reorder(struct lemu_dl *dl, uint64_t t_ns, uint32_t gap, void *p);

/** Exit time of the next packet, UINT64_MAX when empty. */
static inline uint64_t
lemu_dl_next(const struct lemu_dl *dl)
{
	if (dl->n == 0)
		return UINT64_MAX;
	return dl->heap ? dl->e[0].t : dl->e[dl->head].t;
}

static inline uint32_t
lemu_dl_count(const struct lemu_dl *dl)
{
	return dl->n;
}

/**
 * Take up to @p max packets whose exit time is <= @p now_ns, in exit order,
 * into @p out (pointers) and @p t (their exit times, may be NULL). Returns
 * the number taken.
 */
uint32_t lemu_dl_pop_due(struct lemu_dl *dl, uint64_t now_ns, void **out, uint64_t *t,
			 uint32_t max);

/** Take every packet regardless of time (shutdown); same contract as above. */
uint32_t lemu_dl_pop_any(struct lemu_dl *dl, void **out, uint32_t max);

#endif /* LEMU_DELAY_H */
