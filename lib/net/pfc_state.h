/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pfc_state.h
 * Per-priority 802.1Qbb pause state of one transmitter, and a PFC watchdog,
 * shared by the relay, the rnic and the emulator. No DPDK: times are
 * nanoseconds from any monotonic clock, passed in by the caller.
 *
 * Semantics (802.1Qbb / 802.3 Annex 31D, docs/pfc.md):
 *  - a PFC frame with e[n] = 1 and time[n] > 0 pauses priority n for time[n]
 *    quanta (512 bit times at the port's rate) from its arrival: a new frame
 *    *reloads* the timer, it does not add to it;
 *  - e[n] = 1 with time[n] = 0 resumes priority n at once (XON);
 *  - e[n] = 0 leaves priority n alone; priorities outside the lossless set are
 *    never paused (PFC must not affect lossy priorities);
 *  - an 802.3x PAUSE pauses every priority (the parser copies its time to all
 *    eight slots with enable 0xff); only when PAUSE is accepted (pause_ok).
 */
#ifndef NET_PFC_STATE_H
#define NET_PFC_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "pfc.h"

/** Pause state of the eight priorities of one transmit port. */
struct pfc_pause {
	uint64_t link_bps;		 /**< port rate: quanta -> time */
	uint8_t lossless;		 /**< priorities that obey PFC (bit n = priority n) */
	bool pause_ok;			 /**< obey 802.3x PAUSE frames too */
	uint64_t until_ns[PFC_NUM_PRIO]; /**< paused until this time (0: running) */
	uint64_t since_ns[PFC_NUM_PRIO]; /**< start of the current pause */
	/* counters (Linux DCB calls received PFC "indications") */
	uint64_t rx_xoff[PFC_NUM_PRIO]; /**< frames that paused or re-paused the priority */
	uint64_t rx_xon[PFC_NUM_PRIO];	/**< frames that resumed it (time 0) */
	uint64_t rx_ignored; /**< frames for lossy priorities only, or PAUSE when !pause_ok */
	uint64_t paused_ns[PFC_NUM_PRIO]; /**< total time paused (closed pauses) */
	uint64_t pauses[PFC_NUM_PRIO];	  /**< running -> paused transitions */
};

/** Initialise: nothing paused, @p lossless priorities obey PFC. */
void pfc_pause_init(struct pfc_pause *p, uint64_t link_bps, uint8_t lossless, bool pause_ok);

/**
 * Apply a received frame (from pfc_parse) at @p now_ns. Returns the mask of
 * lossless priorities the frame touched (paused, re-paused or resumed).
 */
uint8_t pfc_pause_rx(struct pfc_pause *p, const struct pfc_frame *f, uint64_t now_ns);

/** True if priority @p prio may not send data at @p now_ns (expired timers resume it). */
bool pfc_pause_blocked(struct pfc_pause *p, unsigned prio, uint64_t now_ns);

/** Mask of paused priorities at @p now_ns. */
uint8_t pfc_pause_mask(struct pfc_pause *p, uint64_t now_ns);

/** Earliest time a paused priority resumes by its timer, or UINT64_MAX if none is paused. */
uint64_t pfc_pause_next_expiry(const struct pfc_pause *p);

/** Total paused time of @p prio up to @p now_ns (closed pauses plus the open one). */
uint64_t pfc_pause_total_ns(const struct pfc_pause *p, unsigned prio, uint64_t now_ns);

/* ---- watchdog (SONiC pfcwd semantics) ------------------------------------------------- */

enum pfc_wd_action { PFC_WD_DROP, PFC_WD_FORWARD, PFC_WD_ALERT };

enum pfc_wd_state { PFC_WD_OK, PFC_WD_STORM };

/** Watchdog of one (port, priority). */
struct pfc_wd {
	uint64_t detect_ns, restore_ns; /**< SONiC defaults: 200 ms each */
	enum pfc_wd_action action;
	enum pfc_wd_state state;
	uint64_t paused_from_ns;   /**< start of the current continuous pause (0: not paused) */
	uint64_t last_pfc_ns;	   /**< last PFC frame received for this priority */
	uint64_t storms, restores; /**< counters */
};

void pfc_wd_init(struct pfc_wd *w, uint64_t detect_ns, uint64_t restore_ns, enum pfc_wd_action a);

/** A PFC frame for this priority arrived (XOFF or XON) at @p now_ns. */
void pfc_wd_on_pfc(struct pfc_wd *w, uint64_t now_ns);

/**
 * Step the watchdog at @p now_ns with the priority's current pause status.
 * Storm: paused continuously for detect_ns (re-armed by received PFC), even
 * with an empty queue. Restore: in storm, no PFC received for restore_ns.
 * Returns the state after the step.
 */
enum pfc_wd_state pfc_wd_step(struct pfc_wd *w, bool paused, uint64_t now_ns);

/** True if, in this state, received PFC must be ignored (drop and forward actions). */
static inline bool
pfc_wd_ignores_pfc(const struct pfc_wd *w)
{
	return w->state == PFC_WD_STORM && w->action != PFC_WD_ALERT;
}

/** Parse "drop" | "forward" | "alert"; -1 if none. */
int pfc_wd_action_parse(const char *s);
const char *pfc_wd_action_name(enum pfc_wd_action a);

#endif /* NET_PFC_STATE_H */
