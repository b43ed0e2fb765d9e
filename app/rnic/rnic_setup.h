/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_setup.h
 * Open the rnic's port 0 and its RoCE device from the rnic's options
 * (rnic_config.h): what the rnic binary and the verbs library (lib/verbs)
 * share. EAL must be running.
 */
#ifndef RNIC_SETUP_H
#define RNIC_SETUP_H

#include <stddef.h>

#include "dp_port.h"
#include "rnic_config.h"
#include "rnic_port.h"

/** What rnic_setup_port() set up besides the port. */
struct rnic_setup {
	struct dp_port_info info; /**< the DPDK port */
	struct roce_dev_cfg dc;	  /**< the device configuration (for more devices, --lcores) */
	struct roce_dev_ops ops;  /**< the engine's ops (rnic_port_ops, + --trace) */
	/** in: a roce_dev_ops.cq_event for the device (NULL: none) */
	void (*cq_event)(void *ctx, struct roce_cq *cq);
};

/**
 * Start port 0 (mempool, queues: prm->lcores), fill @p port (addresses,
 * neighbour tables, PFC) and create its device (@p port->dev). 0, or -1 with
 * one line in @p err.
 */
int rnic_setup_port(struct rnic_port *port, const struct rnic_params *prm, struct rnic_setup *out,
		    char *err, size_t errlen);

#endif /* RNIC_SETUP_H */
