/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file relay_metrics.c
 * pfc-relay's Prometheus document (relay_metrics.h, docs/metrics.md), built on
 * the metrics threads from relay_prio_stats() and the port counters (one
 * writer, the polling lcore; aligned 64-bit words read without a lock, as the
 * telemetry command does).
 */
#include "relay_metrics.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "rw_metrics.h"

static struct rw_metrics *mx;
static struct relay_app *mx_app;

static const char *const port_names[RELAY_NPORT] = {"local", "remote"};

/* levels and maxima, not counts */
static int
is_gauge(unsigned i)
{
	return i == RELAY_PS_QUEUED_BYTES || i == RELAY_PS_HWM_BYTES || i == RELAY_PS_PAUSED_NOW ||
	       i == RELAY_PS_WD_IN_STORM;
}

static uint64_t
rd(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

static void
ports(struct rw_prom *p, struct relay_app *app)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} c[] = {
#define RELAY_MX_PORT(f, h) {#f, h, offsetof(struct relay_port, f)}
	    RELAY_MX_PORT(rx_pkts, "frames received"),
	    RELAY_MX_PORT(rx_bytes, "bytes received"),
	    RELAY_MX_PORT(tx_pkts, "frames sent"),
	    RELAY_MX_PORT(tx_bytes, "bytes sent"),
	    RELAY_MX_PORT(rx_pfc, "PFC frames received"),
	    RELAY_MX_PORT(rx_pfc_bad, "MAC control frames that did not parse"),
	    RELAY_MX_PORT(rx_pause_ignored, "802.3x PAUSE frames ignored"),
	    RELAY_MX_PORT(tx_pfc, "PFC frames sent"),
	    RELAY_MX_PORT(tx_pfc_fail, "PFC frames lost for lack of mbufs or room"),
	    RELAY_MX_PORT(tx_full, "TX bursts the PMD did not take completely"),
	    RELAY_MX_PORT(rx_pool_empty, "empty RX polls with fewer free mbufs than one burst"),
	    RELAY_MX_PORT(rx_cut, "frames the port cut, dropped, not relayed"),
#undef RELAY_MX_PORT
	};
	char name[128], help[300], lab[RELAY_NPORT][48];

	for (unsigned i = 0; i < RELAY_NPORT; i++) {
		lab[i][0] = '\0';
		rw_prom_label(lab[i], sizeof(lab[i]), "port", port_names[i]);
	}
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		rw_prom_name(name, sizeof(name), "rocewan_pfc_relay_port_", c[k].name, 1);
		snprintf(help, sizeof(help), "%s (pfc-relay port counter %s)", c[k].help,
			 c[k].name);
		rw_prom_head(p, name, "counter", help);
		for (unsigned i = 0; i < RELAY_NPORT; i++)
			rw_prom_u64(p, name, lab[i],
				    rd((const uint64_t *)((const char *)&app->port[i] + c[k].off)));
	}
}

static void
fill(struct rw_prom *p, void *arg)
{
	static uint64_t v[RELAY_NPATH][PFC_NUM_PRIO][RELAY_PS__COUNT]; /* under the metrics lock */
	struct relay_app *app = mx_app;
	uint64_t now = relay_now_ns();
	char name[128], help[300], lab[RELAY_NPATH][PFC_NUM_PRIO][64];

	(void)arg;
	for (unsigned d = 0; d < RELAY_NPATH; d++)
		for (unsigned n = 0; n < PFC_NUM_PRIO; n++) {
			char prio[4];

			relay_prio_stats(&app->path[d], n, now, v[d][n]);
			lab[d][n][0] = '\0';
			snprintf(prio, sizeof(prio), "%u", n);
			rw_prom_label(lab[d][n], sizeof(lab[d][n]), "path", relay_path_name(d));
			rw_prom_label(lab[d][n], sizeof(lab[d][n]), "prio", prio);
		}
	rw_prom_head(p, "rocewan_pfc_relay_up", "gauge", "1 while pfc-relay serves its counters");
	rw_prom_u64(p, "rocewan_pfc_relay_up", NULL, 1);
	for (unsigned i = 0; i < RELAY_PS__COUNT; i++) {
		double sc = rw_prom_name(name, sizeof(name), "rocewan_pfc_relay_",
					 relay_pstat_name(i), !is_gauge(i));

		snprintf(help, sizeof(help),
			 "pfc-relay counter %s per path and priority (docs/pfc-relay.md)",
			 relay_pstat_name(i));
		rw_prom_head(p, name, is_gauge(i) ? "gauge" : "counter", help);
		for (unsigned d = 0; d < RELAY_NPATH; d++)
			for (unsigned n = 0; n < PFC_NUM_PRIO; n++) {
				if (sc == 1)
					rw_prom_u64(p, name, lab[d][n], v[d][n][i]);
				else
					rw_prom_f64(p, name, lab[d][n], (double)v[d][n][i] * sc);
			}
	}
	rw_prom_head(p, "rocewan_pfc_relay_buffer_limit_bytes", "gauge",
		     "per-priority buffer limit of the path (one BDP, or XOFF + headroom)");
	for (unsigned d = 0; d < RELAY_NPATH; d++) {
		char l[48] = "";

		rw_prom_label(l, sizeof(l), "path", relay_path_name(d));
		rw_prom_u64(p, "rocewan_pfc_relay_buffer_limit_bytes", l, app->path[d].limit_bytes);
	}
	ports(p, app);
}

int
relay_metrics_start(struct relay_app *app, char *err, size_t errlen)
{
	struct rw_metrics_cfg cfg = {.listen = app->prm.metrics,
				     .file = app->prm.metrics_file,
				     .interval_ms =
					 (unsigned)(app->prm.metrics_every_ns / 1000000u),
				     .fill = fill,
				     .prog = "pfc-relay"};

	mx_app = app;
	mx = rw_metrics_start(&cfg, err, errlen);
	if (!mx)
		return err[0] ? -1 : 0;
	return 0;
}

void
relay_metrics_ready(void)
{
	rw_metrics_ready(mx);
}

void
relay_metrics_stop(void)
{
	rw_metrics_stop(mx);
	mx = NULL;
}
