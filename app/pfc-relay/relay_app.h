/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file relay_app.h
 * pfc-relay's process state: the two paths (relay_core), the ports, the data
 * path poll (relay_dp.c), telemetry (relay_ctl.c) and reports (relay_report.c).
 */
#ifndef RELAY_APP_H
#define RELAY_APP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "dp_clock.h"
#include "relay_config.h"
#include "relay_core.h"

enum relay_port_id { RELAY_LOCAL, RELAY_REMOTE, RELAY_NPORT };

#define RELAY_CTRL_MAX 64 /**< control frames waiting for a TX port */

/** One port and what is waiting to leave it. */
struct relay_port {
	uint16_t id;
	struct rte_ether_addr mac;
	uint64_t rate_bps;
	uint32_t rx_cut_len; /**< the port may cut frames this long (dp_port_info), 0: never */
	struct rte_mbuf *ctrl[RELAY_CTRL_MAX]; /**< PFC frames: always sent before data */
	unsigned nctrl;
	/* counters */
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
	uint64_t rx_pfc, rx_pfc_bad, rx_pause_ignored;
	uint64_t tx_pfc, tx_pfc_fail; /**< PFC frames sent / lost for lack of mbufs or room */
	uint64_t tx_full;	      /**< bursts the PMD did not take completely */
	uint64_t rx_pool_empty;	      /**< empty RX polls with fewer free mbufs than one burst */
	uint64_t rx_cut; /**< frames the port cut (net_frame_rx_cut), dropped, not relayed */
};

struct relay_app {
	struct relay_params prm;
	struct relay_port port[RELAY_NPORT];
	struct relay_path path[RELAY_NPATH]; /**< L2R: Local -> Remote; R2L: Remote -> Local */
	struct pfc_classifier cls;
	struct rte_mempool *pool;
	uint32_t pool_mbufs;
	bool running;
	uint64_t started_ns;
	struct dp_clock clk; /**< relay_now_ns() (lib/dpdk dp_clock) */
	/* PFC relay latency inside the relay: RX burst returned -> TX burst returned */
	uint64_t relay_lat_n, relay_lat_sum_ns, relay_lat_max_ns;
	uint64_t loops, sleeps;
};

extern struct relay_app relay_app;

static inline uint64_t
relay_now_ns(void)
{
	return dp_clock_now(&relay_app.clk);
}

/** Data path: one poll of both ports; returns the work done (frames moved). */
uint32_t relay_dp_poll(struct relay_app *app, uint64_t *next_ns);

/** Free what the data path still holds (at exit). */
void relay_dp_drain(struct relay_app *app);

/** Register /pfc_relay/stats with DPDK telemetry (before rte_eal_init). */
int relay_ctl_telemetry_register(void);

/** Write the rocewan/1 document (config + counters) to @p path; 0 or -errno with @p err. */
int relay_report_json(struct relay_app *app, const char *path, char *err, size_t errlen);

/** Counter table for humans. */
void relay_report_table(struct relay_app *app, FILE *f);

#endif /* RELAY_APP_H */
