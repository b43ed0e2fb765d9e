/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file relay_metrics.h
 * pfc-relay's Prometheus metrics (--metrics ADDR:PORT, --metrics-file PATH;
 * lib/common/rw_metrics.h, docs/metrics.md): the buffer occupancy, pauses,
 * PFC relayed and sent, drops by cause per path and priority, and the ports'
 * counters.
 */
#ifndef RELAY_METRICS_H
#define RELAY_METRICS_H

#include <stddef.h>

#include "relay_app.h"

/** Start (before the EAL). 0, or -1 with a message in @p err; nothing asked for: 0. */
int relay_metrics_start(struct relay_app *app, char *err, size_t errlen);
/** The paths are set up: serve them. */
void relay_metrics_ready(void);
/** The loop stopped: write the file with the final values, stop (before the paths are freed). */
void relay_metrics_stop(void);

#endif /* RELAY_METRICS_H */
