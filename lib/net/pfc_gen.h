/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pfc_gen.h
 * When to send 802.1Qbb PFC: one XOFF/XON state machine driven by a backlog
 * level (any unit: bytes of a queue, frames of a receive ring) and the clock.
 * The lossy-emu's bottleneck queue (emu_pfcgen.h) and the rnic's receive path
 * both use it. No DPDK; times are caller-supplied nanoseconds.
 *
 * State machine (IEEE 802.1Q clause 36 / 802.3 Annex 31D semantics; the
 * thresholds as in switch MMUs):
 *   RUNNING --(level >= xoff)--> PAUSING   send XOFF with @c quanta
 *   PAUSING --(level <= xon)---> RUNNING   send XON (quanta 0)
 *   PAUSING --(now - last XOFF >= pause / 2)--> PAUSING   re-send XOFF
 * pause = quanta * 512 bit times at the rate of the port the frame leaves on
 * (pfc_quanta_to_ns()). Refreshing at half the pause time, as common switches
 * do, keeps the sender paused even if one frame is lost. Between xon and xoff
 * nothing is sent (hysteresis).
 */
#ifndef NET_PFC_GEN_H
#define NET_PFC_GEN_H

#include <stdbool.h>
#include <stdint.h>

/** The longest pause one frame can ask for. */
#define PFC_GEN_MAX_QUANTA 0xffff

enum pfc_gen_event {
	PFC_GEN_NONE,	 /**< send nothing */
	PFC_GEN_XOFF,	 /**< running -> pausing: send XOFF */
	PFC_GEN_REFRESH, /**< still pausing: send XOFF again before the last one expires */
	PFC_GEN_XON,	 /**< pausing -> running: send XON (quanta 0) */
};

struct pfc_gen {
	uint64_t xoff;	 /**< pause at level >= xoff */
	uint64_t xon;	 /**< resume at level <= xon (< xoff) */
	uint16_t quanta; /**< XOFF pause time in quanta */
	bool pausing;
	uint64_t pause_ns;   /**< duration of one XOFF */
	uint64_t refresh_ns; /**< pause_ns / 2 */
	uint64_t last_xoff_ns;
	uint64_t n_xoff, n_refresh, n_xon; /**< events so far */
};

/**
 * Initialise (running). @p quanta 0 means PFC_GEN_MAX_QUANTA. Returns 0, or -1
 * if xon >= xoff or link_bps == 0.
 */
int pfc_gen_init(struct pfc_gen *g, uint64_t xoff, uint64_t xon, uint16_t quanta,
		 uint64_t link_bps);

/**
 * Feed the level at @p now_ns; call after every change of the level and at
 * least by pfc_gen_deadline(). Returns what to send now.
 */
enum pfc_gen_event pfc_gen_poll(struct pfc_gen *g, uint64_t now_ns, uint64_t level);

/** Time of the next XOFF refresh, or UINT64_MAX when running. */
static inline uint64_t
pfc_gen_deadline(const struct pfc_gen *g)
{
	return g->pausing ? g->last_xoff_ns + g->refresh_ns : UINT64_MAX;
}

/** The quanta to put on the wire for @p ev (0 for XON). */
static inline uint16_t
pfc_gen_quanta(const struct pfc_gen *g, enum pfc_gen_event ev)
{
	return ev == PFC_GEN_XON ? 0 : g->quanta;
}

#endif /* NET_PFC_GEN_H */
