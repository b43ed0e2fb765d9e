/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_pfcgen.h
 * PFC generation by the bottleneck queue (extension "pfc xoff BYTES xon BYTES
 * [prio N]"): one priority, driven by the queue backlog in bytes and the
 * clock. The state machine (XOFF at xoff, XON at xon, refresh at half the
 * pause time) is lib/net's pfc_gen.h; this adds the emulator's parameters
 * and counters.
 */
#ifndef EMU_PFCGEN_H
#define EMU_PFCGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "emu_counters.h"
#include "emu_err.h"
#include "pfc_gen.h"

/** RoCE's usual lossless priority (pfc_relay.md: DSCP 26 -> priority 3). */
#define EMU_PFC_DEFAULT_PRIO 3
#define EMU_PFC_XOFF_QUANTA 0xffff

struct emu_pfcgen_params {
	bool enabled;
	uint64_t xoff_bytes; /**< pause at backlog >= xoff */
	uint64_t xon_bytes;  /**< resume at backlog <= xon; must be < xoff */
	uint8_t prio;	     /**< 0..7 */
	uint64_t link_bps;   /**< rate of the port PFC is sent on (set by the app) */
	uint16_t quanta;     /**< XOFF quanta; 0 means EMU_PFC_XOFF_QUANTA */
};

enum emu_pfc_state {
	EMU_PFC_RUNNING, /**< sender not paused by us */
	EMU_PFC_PAUSING, /**< we sent XOFF and keep it refreshed */
};

/** What to send now, if anything. */
struct emu_pfc_action {
	bool send;
	uint8_t prio;
	uint16_t quanta; /**< 0 = XON */
};

struct emu_pfcgen {
	struct emu_pfcgen_params p;
	struct pfc_gen gen; /**< state, pause_ns, refresh_ns, last_xoff_ns */
	struct emu_counters *cnt;
};

/** RUNNING or PAUSING. */
static inline enum emu_pfc_state
emu_pfcgen_state(const struct emu_pfcgen *g)
{
	return g->gen.pausing ? EMU_PFC_PAUSING : EMU_PFC_RUNNING;
}

/** Initialise. 0, -EMU_E_RANGE (xon >= xoff, prio > 7, link_bps == 0) or -EMU_E_INVAL. */
int emu_pfcgen_init(struct emu_pfcgen *g, const struct emu_pfcgen_params *p,
		    struct emu_counters *cnt);

/**
 * Feed the backlog @p q_bytes at time @p now_ns; call after every enqueue and
 * dequeue and at least by emu_pfcgen_deadline(). Fills @p act and returns true
 * if a PFC frame must be sent now. Counts PFC_XOFF, PFC_REFRESH, PFC_XON.
 */
bool emu_pfcgen_poll(struct emu_pfcgen *g, uint64_t now_ns, uint64_t q_bytes,
		     struct emu_pfc_action *act);

/** Time of the next XOFF refresh, or UINT64_MAX when RUNNING. */
uint64_t emu_pfcgen_deadline(const struct emu_pfcgen *g);

const char *emu_pfc_state_name(enum emu_pfc_state s);

#endif /* EMU_PFCGEN_H */
