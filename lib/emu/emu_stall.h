/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_stall.h
 * A loop's own host-stall detector and the release-error exclusion built on it
 * (lossy-emu --stall-detect; docs/performance.md, "The emulator's own share").
 * DPDK-free, header-only; the caller supplies the clocks, so the arithmetic is
 * unit-tested with made-up readings (tests/unit/emu/test_emu_stall.c).
 *
 * The detector. At each check the caller reads its thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID) and then its wall clock. Between two checks, wall
 * time minus CPU time is the time the thread spent off the CPU; less the sleep
 * the loop asked for in between (emu_stall_asked), it is involuntary: another
 * task ran, the hypervisor took the vCPU (steal time is not charged to the
 * thread), or a sleep ended late. More than the threshold of it is a host stall;
 * the check notes its end (the wall time of the check: no later than the true
 * end, so nothing after the stall is taken for it).
 *
 * The exclusion, per direction (struct emu_stall_own). A frame due at t and
 * released at the check's time counts in the own share unless a stall ended
 * after t (it waited through the stall), or it fell due while the line was
 * still working off the backlog a stall left: until a release finds nothing
 * overdue, each release moves the stall's end on to its own time.
 *
 * Where the check goes matters: it must sit between the last clock read before a
 * release and that release, so that a stall anywhere before the release is
 * known when its frames are booked. A check at the top of the loop misses a
 * stall between it and the release (inside the RX call, say) and books the
 * frames it delayed as the emulator's own.
 *
 * What stays in the own share: everything the thread does on the CPU (its own
 * code, its PMD calls and any system call, with kernel work done in its context)
 * and off-CPU time below the threshold. The own share is never smaller than the
 * emulator's part; it over-counts, it does not hide.
 */
#ifndef EMU_STALL_H
#define EMU_STALL_H

#include <stdbool.h>
#include <stdint.h>

#define EMU_STALL_NS 5000u /**< involuntary off-CPU time above this is a host stall */

struct emu_stall {
	uint64_t threshold_ns;
	uint64_t wall0, cpu0; /**< readings of the last check (wall0 0: none yet) */
	uint64_t asked_ns;    /**< sleep the loop asked for since the last check */
	uint64_t checks;      /**< checks made */
	uint64_t stalls;      /**< checks that found a stall (a generation for emu_stall_own) */
	uint64_t off_ns;      /**< involuntary off-CPU time of the stalls found, summed */
	uint64_t max_off_ns;  /**< the longest */
	uint64_t end_ns;      /**< wall time of the check that found the last stall */
};

static inline void
emu_stall_init(struct emu_stall *s, uint64_t threshold_ns)
{
	*s = (struct emu_stall){.threshold_ns = threshold_ns};
}

/** The loop asked to sleep @p ns (the idle back-off): not a stall. */
static inline void
emu_stall_asked(struct emu_stall *s, uint64_t ns)
{
	s->asked_ns += ns;
}

/**
 * A check: @p cpu_ns, the thread's CPU time, read before @p wall_ns. Returns
 * true if the thread was off the CPU involuntarily for more than the threshold
 * since the last check (then end_ns = @p wall_ns and stalls counts it).
 */
static inline bool
emu_stall_check(struct emu_stall *s, uint64_t wall_ns, uint64_t cpu_ns)
{
	bool stall = false;

	if (s->wall0 != 0 && wall_ns > s->wall0) {
		uint64_t wall = wall_ns - s->wall0, cpu = cpu_ns > s->cpu0 ? cpu_ns - s->cpu0 : 0;
		uint64_t off = cpu < wall ? wall - cpu : 0;

		off = off > s->asked_ns ? off - s->asked_ns : 0;
		if (off > s->threshold_ns) {
			stall = true;
			s->stalls++;
			s->off_ns += off;
			if (off > s->max_off_ns)
				s->max_off_ns = off;
			s->end_ns = wall_ns;
		}
	}
	s->checks++;
	s->wall0 = wall_ns;
	s->cpu0 = cpu_ns;
	s->asked_ns = 0;
	return stall;
}

/** One direction's view of its lcore's detector. */
struct emu_stall_own {
	uint64_t seen;	   /**< the detector's stalls when last synced */
	uint64_t end_ns;   /**< frames due before this are left out */
	bool catching_up;  /**< since the last stall, no release found nothing overdue */
	uint64_t excluded; /**< releases left out of the own share */
};

/** Before a release: adopt a stall the detector found since the last sync. */
static inline void
emu_stall_own_sync(struct emu_stall_own *o, const struct emu_stall *s)
{
	if (s->stalls != o->seen) {
		o->seen = s->stalls;
		o->end_ns = s->end_ns;
		o->catching_up = true;
	}
}

/** A frame due at @p due_ns is released: true if it counts in the own share. */
static inline bool
emu_stall_own_counts(struct emu_stall_own *o, uint64_t due_ns)
{
	if (due_ns >= o->end_ns)
		return true;
	o->excluded++;
	return false;
}

/**
 * After a release at @p now_ns, with @p next_due_ns the earliest frame still in
 * the line (UINT64_MAX: none): while catching up, a frame still overdue moves
 * the stall's end on to now; nothing overdue ends the catch-up.
 */
static inline void
emu_stall_own_after(struct emu_stall_own *o, uint64_t now_ns, uint64_t next_due_ns)
{
	if (!o->catching_up)
		return;
	if (next_due_ns <= now_ns)
		o->end_ns = now_ns;
	else
		o->catching_up = false;
}

#endif /* EMU_STALL_H */
