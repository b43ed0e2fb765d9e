/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file lemu_metrics.h
 * lossy-emu's Prometheus metrics (--metrics ADDR:PORT, --metrics-file PATH;
 * lib/common/rw_metrics.h, docs/metrics.md): every counter of lemu_stats.h per
 * direction, the drops by cause, the bottleneck queue's depth now and the ECN
 * marks.
 */
#ifndef LEMU_METRICS_H
#define LEMU_METRICS_H

#include <stddef.h>

#include "lemu_app.h"

/** Start (before the EAL). 0, or -1 with a message in @p err; nothing asked for: 0. */
int lemu_metrics_start(struct lemu_app *app, char *err, size_t errlen);
/** The directions are initialised: serve them. */
void lemu_metrics_ready(void);
/** The lcores stopped: write the file with the final values, stop (before the dirs are freed). */
void lemu_metrics_stop(void);

#endif /* LEMU_METRICS_H */
