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
#include <string.h>

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

/*
 * The compact store: a small frame waits in the delay line as a copy of its
 * bytes in a ring of 64-byte units instead of as the mbuf it came in. The mbuf goes back
 * to its pool at once, so a few hundred hot mbufs of the pool's cache carry every frame,
 * and what the line holds is one sequential stream (written at insert, read at release
 * 10 ms later, the hardware prefetcher's best case) instead of a random walk over a pool
 * as large as the line, whose headers and data were all cache and TLB misses. The data
 * path gets a fresh mbuf at release and copies the bytes back (lemu_dir.c).
 *
 * A frame of up to LEMU_CR_MAXLEN bytes takes 1 or 2 consecutive units (never split by
 * the ring's end: the units left there are skipped). A handle is what the line holds in
 * place of the mbuf pointer: bit 0 set (an mbuf pointer is aligned), length - 1 in bits
 * 1..7, the first unit from bit 9. Units are taken in ring order and normally freed in
 * the same order (FIFO layout); the heap layout may free them out of order: a freed unit
 * is marked, and the read side passes over marked units only. When the ring is full
 * lemu_cr_put() refuses and the frame keeps its mbuf.
 */
#define LEMU_CR_UNIT 64u
#define LEMU_CR_MAXLEN 128u    /**< the largest frame stored compact */
#define LEMU_CR_MAX (1u << 19) /**< most units per direction (32 MB) */

struct lemu_cr {
	uint8_t *buf;	 /**< (mask + 1) * LEMU_CR_UNIT bytes */
	uint8_t *busy;	 /**< per unit: 1 while a frame holds it */
	uint32_t mask;	 /**< units - 1 (a power of two); no ring: buf == NULL */
	uint32_t wr, rd; /**< free-running: next unit to take, oldest unit not yet freed */
	size_t bytes;	 /**< of buf, as allocated */
};

/** A ring of the next power of two >= 2 x @p frames units, at most LEMU_CR_MAX. 0 or -ENOMEM. */
int lemu_cr_init(struct lemu_cr *c, uint32_t frames);
void lemu_cr_free(struct lemu_cr *c);

static inline bool
lemu_cr_is(const void *h)
{
	return ((uintptr_t)h & 1) != 0;
}

static inline uint32_t
lemu_cr_len(const void *h)
{
	return (uint32_t)(((uintptr_t)h >> 1) & 0x7f) + 1;
}

static inline uint8_t *
lemu_cr_data(const struct lemu_cr *c, const void *h)
{
	return c->buf + (size_t)((uintptr_t)h >> 9) * LEMU_CR_UNIT;
}

/**
 * Take the units for a frame of @p len bytes (1..LEMU_CR_MAXLEN) and return its handle,
 * or NULL when there is no ring, the ring is full or @p len does not fit. The caller
 * copies the frame to lemu_cr_data() (whole units may be written).
 */
static inline void *
lemu_cr_take(struct lemu_cr *c, uint32_t len)
{
	uint32_t u = (len + LEMU_CR_UNIT - 1) / LEMU_CR_UNIT, i, wr = c->wr;

	if (c->buf == NULL || len == 0 || len > LEMU_CR_MAXLEN)
		return NULL;
	i = wr & c->mask;
	if (i + u > c->mask + 1) /* not across the end: skip the units left there */
		wr += c->mask + 1 - i, i = 0;
	if (wr + u - c->rd > c->mask + 1)
		return NULL;
	c->busy[i] = 1;
	if (u == 2)
		c->busy[i + 1] = 1;
	c->wr = wr + u;
	return (void *)(((uintptr_t)i << 9) | ((uintptr_t)(len - 1) << 1) | 1);
}

/** Copy @p len bytes of @p data into a new slot (lemu_cr_take()). */
static inline void *
lemu_cr_put(struct lemu_cr *c, const void *data, uint32_t len)
{
	void *h = lemu_cr_take(c, len);

	if (h != NULL)
		memcpy(lemu_cr_data(c, h), data, len);
	return h;
}

/** The frame of @p h has been copied out (or dropped): free its units. */
static inline void
lemu_cr_release(struct lemu_cr *c, const void *h)
{
	uint32_t i = (uint32_t)((uintptr_t)h >> 9);

	c->busy[i] = 0;
	if (lemu_cr_len(h) > LEMU_CR_UNIT)
		c->busy[i + 1] = 0;
	while (c->rd != c->wr && c->busy[c->rd & c->mask] == 0)
		c->rd++;
}

/** Units between the oldest not yet freed and the next to take (skipped ones included). */
static inline uint32_t
lemu_cr_used(const struct lemu_cr *c)
{
	return c->wr - c->rd;
}

#endif /* LEMU_DELAY_H */
