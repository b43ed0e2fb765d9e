/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file lemu_metrics.c
 * lossy-emu's Prometheus document (lemu_metrics.h, docs/metrics.md), built on
 * the metrics threads from lemu_dir_snapshot() (racy but untorn reads, exact
 * once the data path stopped) and the queue's depth.
 */
#include "lemu_metrics.h"

#include <stdio.h>
#include <string.h>

#include "rw_metrics.h"

static struct rw_metrics *mx;
static struct lemu_app *mx_app;

/* The drops by cause: counter -> cause label (rocewan_lossy_emu_drops_total) */
static const struct {
	enum lemu_stat id;
	const char *cause;
} causes[] = {
    {LEMU_ST_DROP_LOSS, "loss"}, {LEMU_ST_DROP_QUEUE, "queue"},
    {LEMU_ST_DROP_RULE, "rule"}, {LEMU_ST_DROP_NOMBUF, "nombuf"},
    {LEMU_ST_DROP_CTRL, "ctrl"}, {LEMU_ST_DROP_MULTISEG, "multiseg"},
    {LEMU_ST_DROP_CUT, "cut"},	 {LEMU_ST_RX_MISSED, "rx_missed"},
};

/* values that are levels or maxima, not counts */
static int
is_gauge(unsigned i)
{
	return i == LEMU_ST_QUEUE_MAX_BYTES || i == LEMU_ST_PFC_XOFF_AT_BYTES ||
	       i == LEMU_ST_PFC_XON_AT_BYTES || i == LEMU_ST_IN_FLIGHT;
}

static void
put(struct rw_prom *p, const char *name, const char *lab, uint64_t v, double scale)
{
	if (scale == 1)
		rw_prom_u64(p, name, lab, v);
	else
		rw_prom_f64(p, name, lab, (double)v * scale);
}

static void
fill(struct rw_prom *p, void *arg)
{
	struct lemu_app *app = mx_app;
	uint64_t v[LEMU_NDIR][LEMU_ST__COUNT];
	char name[160], help[600], lab[LEMU_NDIR][64];

	(void)arg;
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		lemu_dir_snapshot(app->dir[d], app->workers, v[d]);
		lab[d][0] = '\0';
		rw_prom_label(lab[d], sizeof(lab[d]), "dir", lemu_dir_name(d));
	}
	rw_prom_head(p, "rocewan_lossy_emu_up", "gauge", "1 while lossy-emu serves its counters");
	rw_prom_u64(p, "rocewan_lossy_emu_up", NULL, 1);
	for (unsigned i = 0; i < LEMU_ST__COUNT; i++) {
		double sc = rw_prom_name(name, sizeof(name), "rocewan_lossy_emu_",
					 lemu_stat_name(i), !is_gauge(i));

		snprintf(help, sizeof(help), "%s (lossy-emu counter %s, per direction)",
			 lemu_stat_help(i), lemu_stat_name(i));
		rw_prom_head(p, name, is_gauge(i) ? "gauge" : "counter", help);
		for (unsigned d = 0; d < LEMU_NDIR; d++)
			put(p, name, lab[d], v[d][i], sc);
	}
	rw_prom_head(p, "rocewan_lossy_emu_drops_total", "counter",
		     "frames dropped, by cause (the drop_* counters and rx_missed) and direction");
	for (unsigned d = 0; d < LEMU_NDIR; d++)
		for (size_t k = 0; k < sizeof(causes) / sizeof(causes[0]); k++) {
			char l[96];

			snprintf(l, sizeof(l), "%s", lab[d]);
			rw_prom_label(l, sizeof(l), "cause", causes[k].cause);
			rw_prom_u64(p, "rocewan_lossy_emu_drops_total", l, v[d][causes[k].id]);
		}
	/* the direction's one bottleneck queue now, whatever the number of workers
	 * (data-path words, read without its lock) */
	rw_prom_head(p, "rocewan_lossy_emu_queue_packets", "gauge",
		     "frames in the bottleneck queue now");
	for (unsigned d = 0; d < LEMU_NDIR; d++)
		rw_prom_u64(p, "rocewan_lossy_emu_queue_packets", lab[d],
			    __atomic_load_n(&app->bn[d].q.q_pkts, __ATOMIC_RELAXED));
	rw_prom_head(p, "rocewan_lossy_emu_queue_bytes", "gauge",
		     "bytes in the bottleneck queue now");
	for (unsigned d = 0; d < LEMU_NDIR; d++)
		rw_prom_u64(p, "rocewan_lossy_emu_queue_bytes", lab[d],
			    __atomic_load_n(&app->bn[d].q.q_bytes, __ATOMIC_RELAXED));
	rw_prom_head(p, "rocewan_lossy_emu_link_bytes_per_second", "gauge",
		     "rate of the direction's input port (bytes/s)");
	for (unsigned d = 0; d < LEMU_NDIR; d++)
		rw_prom_u64(p, "rocewan_lossy_emu_link_bytes_per_second", lab[d],
			    app->link_bps[d] / 8);
}

int
lemu_metrics_start(struct lemu_app *app, char *err, size_t errlen)
{
	struct rw_metrics_cfg cfg = {.listen = app->prm.metrics,
				     .file = app->prm.metrics_file,
				     .interval_ms =
					 (unsigned)(app->prm.metrics_every_ns / 1000000u),
				     .fill = fill,
				     .prog = "lossy-emu"};

	mx_app = app;
	mx = rw_metrics_start(&cfg, err, errlen);
	if (!mx)
		return err[0] ? -1 : 0;
	return 0;
}

void
lemu_metrics_ready(void)
{
	rw_metrics_ready(mx);
}

void
lemu_metrics_stop(void)
{
	rw_metrics_stop(mx);
	mx = NULL;
}
