/* SPDX-License-Identifier: BSD-3-Clause */
/* Reports: --json / --stats-json (rocewan/1) and the counter table printed at exit. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_ethdev.h>

#include "relay_app.h"
#include "rw_json.h"

static const char *const port_names[RELAY_NPORT] = {"local", "remote"};

static void
port_json(const struct relay_port *pt, const char *name, struct rw_json *w)
{
	struct rte_eth_stats es;

	rw_obj_begin(w, name);
	rw_uint(w, "port", pt->id);
	rw_uint(w, "rate_bps", pt->rate_bps);
	rw_uint(w, "rx_pkts", pt->rx_pkts);
	rw_uint(w, "rx_bytes", pt->rx_bytes);
	rw_uint(w, "tx_pkts", pt->tx_pkts);
	rw_uint(w, "tx_bytes", pt->tx_bytes);
	rw_uint(w, "rx_pfc", pt->rx_pfc);
	rw_uint(w, "rx_pfc_bad", pt->rx_pfc_bad);
	rw_uint(w, "rx_pause_ignored", pt->rx_pause_ignored);
	rw_uint(w, "tx_pfc", pt->tx_pfc);
	rw_uint(w, "tx_pfc_fail", pt->tx_pfc_fail);
	rw_uint(w, "tx_full", pt->tx_full);
	rw_uint(w, "rx_pool_empty", pt->rx_pool_empty);
	rw_uint(w, "rx_cut", pt->rx_cut);
	/* drops before the relay saw the frame: PMD/kernel ring overruns, no mbuf */
	if (rte_eth_stats_get(pt->id, &es) == 0) {
		rw_uint(w, "pmd_imissed", es.imissed);
		rw_uint(w, "pmd_ierrors", es.ierrors);
		rw_uint(w, "pmd_rx_nombuf", es.rx_nombuf);
		rw_uint(w, "pmd_oerrors", es.oerrors);
	}
	rw_obj_end(w);
}

static void
path_json(struct relay_path *p, unsigned d, uint64_t now, struct rw_json *w)
{
	uint64_t v[RELAY_PS__COUNT], tot[RELAY_PS__COUNT];

	memset(tot, 0, sizeof(tot));
	rw_obj_begin(w, relay_path_name(d));
	rw_str(w, "pfc_from", d == RELAY_L2R ? "remote" : "local");
	rw_uint(w, "limit_bytes", p->limit_bytes);
	rw_uint(w, "pfc_relayed", p->pfc_relayed);
	rw_arr_begin(w, "prio");
	for (unsigned n = 0; n < PFC_NUM_PRIO; n++) {
		relay_prio_stats(p, n, now, v);
		rw_obj_begin(w, NULL);
		rw_uint(w, "prio", n);
		rw_bool(w, "lossless", p->pause.lossless >> n & 1);
		for (unsigned i = 0; i < RELAY_PS__COUNT; i++) {
			rw_uint(w, relay_pstat_name(i), v[i]);
			tot[i] = i == RELAY_PS_HWM_BYTES ? (v[i] > tot[i] ? v[i] : tot[i])
							 : tot[i] + v[i];
		}
		rw_obj_end(w);
	}
	rw_arr_end(w);
	rw_obj_begin(w, "total");
	for (unsigned i = 0; i < RELAY_PS__COUNT; i++)
		rw_uint(w, relay_pstat_name(i), tot[i]);
	rw_uint(w, "drops",
		tot[RELAY_PS_DROP_BUFFER_FULL] + tot[RELAY_PS_DROP_HEADROOM_FULL] +
		    tot[RELAY_PS_DROP_WATCHDOG] + tot[RELAY_PS_DROP_QUEUE_SLOTS]);
	rw_obj_end(w);
	rw_obj_end(w);
}

int
relay_report_json(struct relay_app *app, const char *path, char *err, size_t errlen)
{
	struct rw_json w;
	FILE *f = fopen(path, "w");
	uint64_t now = relay_now_ns();
	int rc;

	if (f == NULL) {
		snprintf(err, errlen, "--json %s: cannot open: %s", path, strerror(errno));
		return -errno;
	}
	rw_json_init(&w, f);
	rw_doc_begin(&w, "pfc-relay");
	relay_params_json(&app->prm, &w);
	rw_uint(&w, "mbufs", app->pool_mbufs);
	rw_doc_results(&w, false, 0);
	for (unsigned i = 0; i < RELAY_NPORT; i++)
		port_json(&app->port[i], port_names[i], &w);
	for (unsigned d = 0; d < RELAY_NPATH; d++)
		path_json(&app->path[d], d, now, &w);
	rw_obj_begin(&w, "pfc_relay_latency_ns");
	rw_uint(&w, "samples", app->relay_lat_n);
	rw_dbl(&w, "mean",
	       app->relay_lat_n ? (double)app->relay_lat_sum_ns / (double)app->relay_lat_n : 0.);
	rw_uint(&w, "max", app->relay_lat_max_ns);
	rw_obj_end(&w);
	rw_uint(&w, "loops", app->loops);
	rw_uint(&w, "sleeps", app->sleeps); /* idle back-off sleeps (0 with --busy-poll) */
	rw_dbl(&w, "duration_s", (double)(now - app->started_ns) / 1e9);
	rc = rw_doc_end(&w);
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		snprintf(err, errlen, "--json %s: write failed: %s", path, strerror(-rc));
	return rc;
}

void
relay_report_table(struct relay_app *app, FILE *f)
{
	uint64_t now = relay_now_ns(), v[RELAY_PS__COUNT];

	for (unsigned i = 0; i < RELAY_NPORT; i++) {
		const struct relay_port *pt = &app->port[i];

		fprintf(f,
			"pfc-relay %-6s rx %" PRIu64 " tx %" PRIu64 " rx_pfc %" PRIu64
			" tx_pfc %" PRIu64 " rx_pfc_bad %" PRIu64 "\n",
			port_names[i], pt->rx_pkts, pt->tx_pkts, pt->rx_pfc, pt->tx_pfc,
			pt->rx_pfc_bad);
	}
	for (unsigned d = 0; d < RELAY_NPATH; d++) {
		for (unsigned n = 0; n < PFC_NUM_PRIO; n++) {
			bool any = false;

			relay_prio_stats(&app->path[d], n, now, v);
			for (unsigned i = 0; i < RELAY_PS__COUNT; i++)
				any |= v[i] != 0;
			if (!any)
				continue;
			fprintf(f, "  %s prio %u:", relay_path_name(d), n);
			for (unsigned i = 0; i < RELAY_PS__COUNT; i++)
				if (v[i])
					fprintf(f, " %s %" PRIu64, relay_pstat_name(i), v[i]);
			fputc('\n', f);
		}
	}
	if (app->relay_lat_n)
		fprintf(f,
			"  PFC relay latency in the relay: mean %.1f us, max %.1f us (%" PRIu64
			" frames)\n",
			(double)app->relay_lat_sum_ns / (double)app->relay_lat_n / 1e3,
			(double)app->relay_lat_max_ns / 1e3, app->relay_lat_n);
}
