/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_metrics.h
 * The rnic's Prometheus metrics (--metrics ADDR:PORT, --metrics-file PATH;
 * lib/common/rw_metrics.h, docs/metrics.md): the device's RoCE counters under
 * Linux's rdma statistics / mlx5 hw_counter names where one exists, the port
 * counters, and per-QP series (counters, CC rate and windows, RTT) for the
 * first RW_METRICS_MAX_QPS QPs, the others added up under qp="other".
 */
#ifndef RNIC_METRICS_H
#define RNIC_METRICS_H

#include "rnic_config.h"
#include "rnic_port.h"

/** Start the server / file writer (before the EAL: its threads keep the process's CPU mask).
 * 0, or -1 with a message in @p err. Nothing asked for: 0. */
int rnic_metrics_start(const struct rnic_params *p, char *err, size_t errlen);
/** The port is set up: its counters may be read. */
void rnic_metrics_set_port(struct rnic_port *port);
/** Publish a created QP (after rnic_metrics_set_port). */
void rnic_metrics_add_qp(struct roce_qp *qp, enum ibv_qp_type type);
/** Everything is published: scrapes get the document. */
void rnic_metrics_ready(void);
/** The data path stopped: write the file with the final values, stop. */
void rnic_metrics_stop(void);

#endif /* RNIC_METRICS_H */
