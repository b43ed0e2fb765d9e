/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pfc_tx.h
 * The transmit side of 802.1Qbb in a software port (the rnic): which data
 * frames a received PFC holds back, and how many bytes left after a pause had
 * arrived ("overshoot"). No DPDK; times are caller-supplied nanoseconds.
 *
 * A software port learns of a PFC frame only when it polls its receive ring
 * (an "RX check"), not when the frame arrives. Two amounts are measured:
 *  - overshoot: data of a paused priority handed to the driver after the port
 *    read the XOFF, because it was already committed (queued in the port's TX
 *    batch); a port that checks RX before every TX burst bounds it by one burst;
 *  - XOFF window: data of that priority handed to the driver between the
 *    previous RX check and the one that found the XOFF. It arrived somewhere in
 *    that interval, so part of it may have left after the XOFF.
 * Data on the wire after the XOFF is at most the two together. 802.3 Annex
 * 31B bounds a hardware MAC's reaction to 60 quanta at 10 Gb/s (docs/pfc.md).
 */
#ifndef NET_PFC_TX_H
#define NET_PFC_TX_H

#include <stdbool.h>
#include <stdint.h>

#include "pfc.h"
#include "pfc_state.h"

/** Per-port transmit gate and overshoot meter. */
struct pfc_tx {
	struct pfc_pause pause;		  /**< per-priority timers (pfc_state.h) */
	bool obey;			  /**< false: count PFC frames, never pause */
	uint64_t win_bytes[PFC_NUM_PRIO]; /**< data bytes handed over since the last RX check */
	uint32_t win_frames[PFC_NUM_PRIO];
	uint64_t cur_bytes[PFC_NUM_PRIO]; /**< overshoot of the current (or last) pause */
	uint64_t xoff_window_bytes;	  /**< total XOFF-window data over all pauses */
	uint64_t xoff_window_max_bytes;	  /**< largest XOFF window of a single pause */
	uint64_t xoff_window_max_frames;
	uint32_t cur_frames[PFC_NUM_PRIO];
	/* counters */
	uint64_t rx_xoff;	  /**< frames that paused or re-paused an obeyed priority */
	uint64_t rx_xon;	  /**< frames that resumed one (time 0) */
	uint64_t rx_ignored;	  /**< frames for lossy priorities only, or while !obey */
	uint64_t pauses;	  /**< running -> paused transitions (any priority) */
	uint64_t overshoot_bytes; /**< total over all pauses */
	uint64_t overshoot_frames;
	uint64_t overshoot_max_bytes; /**< largest overshoot of a single pause */
	uint64_t overshoot_max_frames;
};

/**
 * Initialise: nothing paused; priorities in @p lossless obey PFC (if @p obey);
 * quanta convert to time at @p link_bps.
 */
void pfc_tx_init(struct pfc_tx *t, uint64_t link_bps, uint8_t lossless, bool obey);

/**
 * Apply a PFC/PAUSE frame found by the current RX check at @p now_ns. A pause
 * that starts here records the data of its priority handed over since the
 * previous RX check (its XOFF window). Returns the mask of priorities that
 * became paused.
 */
uint8_t pfc_tx_rx(struct pfc_tx *t, const struct pfc_frame *f, uint64_t now_ns);

/** End of an RX check: frames handed over from now on are after it. */
void pfc_tx_rx_done(struct pfc_tx *t);

/** True if a new data frame of priority @p prio must be held at @p now_ns. */
static inline bool
pfc_tx_hold(struct pfc_tx *t, unsigned prio, uint64_t now_ns)
{
	return t->obey && pfc_pause_blocked(&t->pause, prio, now_ns);
}

/**
 * A data frame of priority @p prio and @p bytes was handed to the driver at
 * @p now_ns. If the priority is paused (the frame was committed before the
 * pause was known) it counts as overshoot of that pause.
 */
void pfc_tx_sent(struct pfc_tx *t, unsigned prio, uint32_t bytes, uint64_t now_ns);

/** Earliest timer expiry of a paused priority, UINT64_MAX if none (for idle sleeps). */
static inline uint64_t
pfc_tx_next_expiry(const struct pfc_tx *t)
{
	return pfc_pause_next_expiry(&t->pause);
}

/**
 * Parse "3" or "3,4" (priorities 0..7, each once) into a bit mask. Returns 0
 * and the mask, or -1 with a one-line reason in @p why.
 */
int pfc_prio_list_parse(const char *s, uint8_t *mask, char *why, unsigned whylen);

#endif /* NET_PFC_TX_H */
