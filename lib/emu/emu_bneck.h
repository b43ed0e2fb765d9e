/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_bneck.h
 * One direction's bottleneck, shared by every worker of the direction: the rate
 * shaper, the byte/packet limit, RED/ECN marking and PFC generation of one
 * queue, whatever the number of workers (lossy-emu --workers N).
 *
 * Design: one shaping stage. The workers keep their own packets (each in its
 * own FIFO, in the order it admitted them) but admit every packet through this
 * one object, which holds the queue's whole state: the departure time of the
 * last packet (emu_shaper), the backlog, RED's random stream (emu_red) and the
 * PFC state machine (emu_pfcgen), plus the (departure, length) of every packet
 * admitted and not yet departed. A packet arriving at t first retires the
 * packets whose departure is <= t, then finds the backlog the rest make up:
 * the backlog a packet sees is the bytes of the packets admitted before it
 * that leave after it arrived. That is a function of the sequence of
 * (arrival, length, ECN) alone, not of when a worker happens to move its
 * packets on. PFC is decided at the same exact times: XOFF after the enqueue
 * that reaches xoff, XON at the departure that brings the backlog to xon, each
 * refresh at its deadline (half the pause time after the last XOFF), not at the
 * first poll after it. So N workers and one worker make the same tail drops,
 * the same CE marks, the same departure times and the same PFC frames for the
 * same admissions in the same order, whenever and by whom the queue is
 * advanced (tests/unit/emu/test_emu_bneck.c).
 *
 * Order of admissions: under the lock, in the order the workers take it.
 * Arrival stamps of different workers can be out of order by the time between
 * two workers' RX bursts; the bottleneck's clock never goes back (an
 * admission stamped before the latest time it saw is taken at that time), so
 * a departure is never before an arrival and the queue stays one FIFO.
 *
 * Locking: with @c shared (more than one worker) emu_bneck_lock() spins on one
 * flag; with one worker it does nothing. A worker takes it once per RX burst
 * (all its admissions of the burst), so the cost is one atomic exchange per
 * burst, not per packet. PFC frames are decided under the lock and handed to
 * the caller's emit function there, so XOFF and XON leave in decision order.
 *
 * DPDK-free.
 */
#ifndef EMU_BNECK_H
#define EMU_BNECK_H

#include <stdbool.h>
#include <stdint.h>

#include "emu_counters.h"
#include "emu_pfcgen.h"
#include "emu_red.h"
#include "emu_shaper.h"

/** ECN argument of emu_bneck_admit() for a frame without an IP header: RED leaves it alone. */
#define EMU_BNECK_NOT_IP 0xff

/** A PFC frame to send (called with the lock held). */
typedef void (*emu_bneck_emit_fn)(void *ctx, const struct emu_pfc_action *act);

enum emu_bneck_verdict {
	EMU_BNECK_DROP = 0, /**< tail drop (limit / limit-bytes) */
	EMU_BNECK_PASS = 1, /**< admitted */
	EMU_BNECK_MARK = 2, /**< admitted; RED selected it: set CE */
};

struct emu_bneck_ent {
	uint64_t dep_ns;
	uint32_t len;
};

struct emu_bneck {
	uint32_t lock; /**< 0 free, 1 taken (only with shared) */
	bool shared;
	bool has_queue, has_red, has_pfc;
	struct emu_shaper q;
	struct emu_red red;
	struct emu_pfcgen pfc;
	struct emu_counters
	    ec;		 /**< ENQUEUED, DROP_QUEUE, DEQUEUED, ECN_MARK_RED, RED_NOT_ECT, PFC_* */
	uint64_t now_ns; /**< latest time seen: the queue's clock never goes back */
	/* admitted packets not yet departed, in departure order (power-of-two ring) */
	struct emu_bneck_ent *r;
	uint32_t mask, head, n;
	uint32_t cap_max;	/**< the ring never needs more (the pool feeding the queue) */
	uint64_t max_bytes;	/**< largest backlog seen */
	uint64_t xoff_at_bytes; /**< backlog at the last first XOFF */
	uint64_t xon_at_bytes;	/**< backlog at the last XON */
	const void *tag;	/**< the caller's config in force (emu_bneck_configure) */
};

/**
 * Initialise; @p capacity is the most packets the queue can ever hold (the pool
 * feeding it). The ring of admitted packets is sized to the SPEC's limit (at most
 * @p capacity) at each emu_bneck_configure(). 0 or -EMU_E_NOSPACE (no memory).
 */
int emu_bneck_init(struct emu_bneck *b, uint32_t capacity, bool shared);

void emu_bneck_free(struct emu_bneck *b);

static inline void
emu_bneck_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static inline void
emu_bneck_lock(struct emu_bneck *b)
{
	if (!b->shared)
		return;
	while (__atomic_exchange_n(&b->lock, 1u, __ATOMIC_ACQUIRE) != 0)
		while (__atomic_load_n(&b->lock, __ATOMIC_RELAXED) != 0)
			emu_bneck_relax();
}

static inline void
emu_bneck_unlock(struct emu_bneck *b)
{
	if (b->shared)
		__atomic_store_n(&b->lock, 0u, __ATOMIC_RELEASE);
}

/**
 * (Re)configure from a SPEC's queue, RED and PFC parameters (lock held). Like
 * "tc qdisc change": the backlog and the last departure are kept, RED's draws
 * restart from @p seed, a pause in progress is kept (or ended with an XON
 * through @p emit when the new SPEC has no pfc). Without a rate the packets
 * still counted leave the accounting at once (the caller moves its packets
 * on). @p tag is remembered so that the first of N workers to see a new
 * config applies it once.
 */
void emu_bneck_configure(struct emu_bneck *b, const struct emu_shaper_params *q,
			 const struct emu_red_params *red, const struct emu_pfcgen_params *pfc,
			 uint64_t seed, const void *tag, emu_bneck_emit_fn emit, void *ctx);

/* internals of the inline emu_bneck_admit() (lock held) */
void emu_bneck_catch_up(struct emu_bneck *b, uint64_t t, emu_bneck_emit_fn emit, void *ctx);
void emu_bneck_pfc_poll(struct emu_bneck *b, uint64_t t, emu_bneck_emit_fn emit, void *ctx);

static inline uint64_t
emu_bneck_clock_at(struct emu_bneck *b, uint64_t now)
{
	if (now > b->now_ns)
		b->now_ns = now;
	return b->now_ns;
}

/**
 * Admit a packet of @p len bytes with ECN codepoint @p ecn arriving at @p now_ns
 * (lock held; @p ecn EMU_BNECK_NOT_IP for a frame that is not IP, which RED
 * does not look at). Retires the packets departed by then (PFC decided at each
 * departure), then tail drop, RED on the backlog found, the departure time in
 * @p dep_ns, and PFC after the enqueue.
 */
static inline enum emu_bneck_verdict
emu_bneck_admit(struct emu_bneck *b, uint64_t now, uint32_t len, uint8_t ecn, uint64_t *dep_ns,
		emu_bneck_emit_fn emit, void *ctx)
{
	enum emu_bneck_verdict v = EMU_BNECK_PASS;
	uint64_t t = emu_bneck_clock_at(b, now), backlog;

	/* nothing departed and no refresh due: the common case inside a burst */
	if ((b->n > 0 && b->r[b->head].dep_ns <= t) ||
	    (b->has_pfc && emu_pfcgen_deadline(&b->pfc) <= t))
		emu_bneck_catch_up(b, t, emit, ctx);
	backlog = b->q.q_bytes;
	if (b->n > b->mask || emu_shaper_enqueue(&b->q, t, len, dep_ns) != EMU_SHAPER_ACCEPT) {
		if (b->n > b->mask) /* the ring is sized to the limit: cannot happen */
			b->ec.v[EMU_CNT_DROP_QUEUE]++;
		return EMU_BNECK_DROP;
	}
	if (b->has_red && ecn != EMU_BNECK_NOT_IP &&
	    emu_red_decide(&b->red, backlog, ecn) == EMU_RED_MARK)
		v = EMU_BNECK_MARK;
	b->r[(b->head + b->n) & b->mask] = (struct emu_bneck_ent){*dep_ns, len};
	b->n++;
	if (b->q.q_bytes > b->max_bytes)
		b->max_bytes = b->q.q_bytes;
	if (b->has_pfc)
		emu_bneck_pfc_poll(b, t, emit, ctx);
	return v;
}

/**
 * Bring the queue to @p now_ns (lock held): the departures and PFC refreshes due by
 * then, each decided at its own time (departure time, refresh deadline).
 */
void emu_bneck_advance(struct emu_bneck *b, uint64_t now_ns, emu_bneck_emit_fn emit, void *ctx);

/** When the queue next needs emu_bneck_advance(): a departure or a PFC refresh (racy read). */
uint64_t emu_bneck_next(const struct emu_bneck *b);

static inline uint64_t
emu_bneck_backlog_bytes(const struct emu_bneck *b)
{
	return b->q.q_bytes;
}

#endif /* EMU_BNECK_H */
