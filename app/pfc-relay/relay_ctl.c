/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control plane: the DPDK telemetry command /pfc_relay/stats. The counters are
 * plain 64-bit words written by the one data-path lcore; the telemetry thread
 * reads them without a lock (each word is read atomically on x86-64; a
 * snapshot may mix values from consecutive polls).
 */
#include <errno.h>
#include <string.h>

#include <rte_telemetry.h>

#include "relay_app.h"

static void
port_stats(const struct relay_port *pt, struct rte_tel_data *t)
{
	rte_tel_data_start_dict(t);
	rte_tel_data_add_dict_u64(t, "rx_pkts", pt->rx_pkts);
	rte_tel_data_add_dict_u64(t, "tx_pkts", pt->tx_pkts);
	rte_tel_data_add_dict_u64(t, "rx_pfc", pt->rx_pfc);
	rte_tel_data_add_dict_u64(t, "rx_pfc_bad", pt->rx_pfc_bad);
	rte_tel_data_add_dict_u64(t, "rx_pause_ignored", pt->rx_pause_ignored);
	rte_tel_data_add_dict_u64(t, "tx_pfc", pt->tx_pfc);
	rte_tel_data_add_dict_u64(t, "tx_pfc_fail", pt->tx_pfc_fail);
	rte_tel_data_add_dict_u64(t, "rx_pool_empty", pt->rx_pool_empty);
	rte_tel_data_add_dict_u64(t, "rx_cut", pt->rx_cut);
}

/*
 * /pfc_relay/stats: ports, per-path totals, and one flat dict per (path,
 * priority) named "l2r_p3" for lossless priorities and any that carried
 * traffic (telemetry nests only one level).
 */
static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *t)
{
	struct relay_app *app = &relay_app;
	uint64_t now, v[RELAY_PS__COUNT];
	char key[16];

	(void)cmd;
	(void)params;
	if (!app->running)
		return -EAGAIN;
	now = relay_now_ns();
	rte_tel_data_start_dict(t);
	for (unsigned i = 0; i < RELAY_NPORT; i++) {
		struct rte_tel_data *c = rte_tel_data_alloc();

		if (c == NULL)
			return -ENOMEM;
		port_stats(&app->port[i], c);
		rte_tel_data_add_dict_container(t, i == RELAY_LOCAL ? "local" : "remote", c, 0);
	}
	for (unsigned d = 0; d < RELAY_NPATH; d++) {
		struct relay_path *p = &app->path[d];

		for (unsigned n = 0; n < PFC_NUM_PRIO; n++) {
			struct rte_tel_data *c;

			relay_prio_stats(p, n, now, v);
			if (!(p->pause.lossless >> n & 1) && v[RELAY_PS_ENQ_PKTS] == 0 &&
			    v[RELAY_PS_DROP_BYTES] == 0)
				continue;
			c = rte_tel_data_alloc();
			if (c == NULL)
				return -ENOMEM;
			rte_tel_data_start_dict(c);
			for (unsigned i = 0; i < RELAY_PS__COUNT; i++)
				rte_tel_data_add_dict_u64(c, relay_pstat_name(i), v[i]);
			snprintf(key, sizeof(key), "%s_p%u", relay_path_name(d), n);
			rte_tel_data_add_dict_container(t, key, c, 0);
		}
	}
	rte_tel_data_add_dict_u64(t, "pfc_relayed", app->path[RELAY_R2L].pfc_relayed);
	rte_tel_data_add_dict_u64(t, "relay_latency_max_ns", app->relay_lat_max_ns);
	/* mbufs of the pool held now: queued frames, control frames, the PMD's (leaks show) */
	rte_tel_data_add_dict_u64(t, "mempool_in_use", rte_mempool_in_use_count(app->pool));
	return 0;
}

int
relay_ctl_telemetry_register(void)
{
	return rte_telemetry_register_cmd("/pfc_relay/stats", tel_stats,
					  "PFC-Relay counters per port and (path, priority)");
}
