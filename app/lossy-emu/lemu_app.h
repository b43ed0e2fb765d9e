/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file lemu_app.h
 * lossy-emu's process state and its control plane: SPEC changes at run time
 * (lemu_ctl.c: built and validated here, handed to the data path through an
 * atomically published pointer), DPDK telemetry commands, and the reports
 * (lemu_report.c: --json, the counter table).
 */
#ifndef LEMU_APP_H
#define LEMU_APP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lemu_config.h"
#include "lemu_dir.h"

struct lemu_app {
	struct lemu_params prm;
	struct lemu_dir *dir[LEMU_NDIR]; /**< each direction's workers (--workers), [0] first */
	unsigned workers;		 /**< per direction */
	struct emu_bneck bn[LEMU_NDIR];	 /**< each direction's one bottleneck */
	const char *spread[LEMU_NDIR];	 /**< how flows reach the workers: "none", "rss", ... */
	uint32_t pool_mbufs[LEMU_NDIR];	 /**< mbufs per direction actually allocated */
	uint64_t line_bytes[LEMU_NDIR];	 /**< delay line at the rate: rate x longest delay, bytes */
	uint64_t line_pkts[LEMU_NDIR];	 /**< the same in frames of the sizing frame length */
	uint64_t mbuf_bytes;		 /**< EAL memory per mbuf */
	uint64_t link_bps[LEMU_NDIR];	 /**< rate of each direction's RX port */
	unsigned lcores;		 /**< lcores given with -l */
	bool running;			 /**< dir[] initialised: telemetry may act */
	pthread_mutex_t ctl_lock;	 /**< serialises control-plane changes */
	struct lemu_dir_cfg *cfgs;	 /**< every config ever built, freed at exit */
	uint64_t started_ns;		 /**< lemu_now_ns() at start (for duration_s) */
	uint64_t fwd_start_ns;		 /**< the forwarding lcores launched (for forward_s) */
	uint64_t fwd_end_ns;		 /**< the forwarding lcores stopped */
};

extern struct lemu_app lemu_app;

/** Build a config for direction @p d from a parsed SPEC (control plane). NULL on ENOMEM. */
struct lemu_dir_cfg *lemu_cfg_new(struct lemu_app *app, unsigned d, const struct emu_spec *s);

/**
 * Parse @p text and apply it to direction @p d (LEMU_NDIR = both) while
 * running; waits until the data path adopted it. Returns 0, or a negative
 * errno with one line in @p msg. A note (e.g. the pool is small for the new
 * delay) may be left in @p note even on success.
 */
int lemu_ctl_set(struct lemu_app *app, int d, const char *text, char *msg, size_t msglen,
		 char *note, size_t notelen);

/** Register /lossy_emu/{set,get,stats} with DPDK telemetry. */
int lemu_ctl_telemetry_register(void);

/** Free every config built (at exit). */
void lemu_ctl_free(struct lemu_app *app);

/** The counter table of both directions, for humans. */
void lemu_report_table(const struct lemu_app *app, FILE *f);

/** Write --json (rocewan/1). Returns 0 or a negative errno with @p err set. */
int lemu_report_json(const struct lemu_app *app, const char *path, char *err, size_t errlen);

#endif /* LEMU_APP_H */
