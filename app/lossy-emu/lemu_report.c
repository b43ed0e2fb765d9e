/* SPDX-License-Identifier: BSD-3-Clause */
/* Reports: the --json results (rocewan/1) and the counter table printed at exit. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "emu_loss.h"
#include "lemu_app.h"
#include "rw_json.h"

static double
ns_to_us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

static void
hist_json(struct rw_json *w, const char *name, const struct lemu_hist *h)
{
	rw_obj_begin(w, name);
	rw_uint(w, "calls", h->count);
	rw_dbl(w, "p50", ns_to_us(lemu_hist_quantile(h, 0.5)));
	rw_dbl(w, "p99", ns_to_us(lemu_hist_quantile(h, 0.99)));
	rw_dbl(w, "p999", ns_to_us(lemu_hist_quantile(h, 0.999)));
	rw_dbl(w, "max", ns_to_us(h->max));
	rw_dbl(w, "sum_ms", (double)h->sum / 1e6);
	rw_obj_end(w);
}

/* A direction's histograms and excluded count merged over its workers. */
struct merged {
	struct lemu_hist derr, derr_own, rx_call, tx_call, derr_tx;
	uint64_t excluded;
};

static void
merge_workers(const struct lemu_app *app, unsigned d, struct merged *m)
{
	memset(m, 0, sizeof(*m));
	for (unsigned k = 0; k < app->workers; k++) {
		const struct lemu_dir *x = &app->dir[d][k];

		lemu_hist_merge(&m->derr, &x->derr);
		lemu_hist_merge(&m->derr_own, &x->derr_own);
		lemu_hist_merge(&m->rx_call, &x->rx_call);
		lemu_hist_merge(&m->tx_call, &x->tx_call);
		lemu_hist_merge(&m->derr_tx, &x->derr_tx);
		m->excluded += x->own.excluded;
	}
}

/* What a rule dropped, summed over the workers. */
static uint64_t
rule_dropped(const struct lemu_app *app, unsigned d, uint32_t i)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < app->workers; k++)
		n += __atomic_load_n(&app->dir[d][k].rules.dropped[i], __ATOMIC_RELAXED);
	return n;
}

static void
dir_json(const struct lemu_app *app, unsigned d, struct rw_json *w)
{
	const struct lemu_dir *dir = app->dir[d];
	uint64_t v[LEMU_ST__COUNT], b[EMU_LOSS_BURST_BUCKETS];
	const struct lemu_dir_cfg *c = lemu_dir_current(dir);
	double exp_loss = 0., exp_burst = 0.;
	static struct merged mg;
	const struct merged *m = &mg;

	merge_workers(app, d, &mg);
	lemu_dir_snapshot(dir, app->workers, v);
	rw_obj_begin(w, lemu_dir_name(d));
	for (unsigned i = 0; i < LEMU_ST__COUNT; i++)
		rw_uint(w, lemu_stat_name(i), v[i]);
	/* [burst_length, count]; the last bucket holds every run of that length or longer */
	lemu_dir_loss_bursts(dir, app->workers, b);
	rw_arr_begin(w, "loss_bursts");
	for (unsigned i = 0; i < EMU_LOSS_BURST_BUCKETS; i++) {
		if (b[i] == 0)
			continue;
		rw_arr_begin(w, NULL);
		rw_uint(w, NULL, i + 1);
		rw_uint(w, NULL, b[i]);
		rw_arr_end(w);
	}
	rw_arr_end(w);
	rw_uint(w, "loss_bursts_last_bucket_min_len", EMU_LOSS_BURST_BUCKETS);
	if (c && emu_loss_expected(&c->spec.impair.loss, &exp_loss, &exp_burst) == 0) {
		rw_dbl(w, "loss_expected_pct", exp_loss * 100.);
		rw_dbl(w, "loss_burst_expected_len", exp_burst);
	}
	rw_obj_begin(w, "delay_err_us");
	rw_dbl(w, "p50", ns_to_us(lemu_hist_quantile(&m->derr, 0.5)));
	rw_dbl(w, "p99", ns_to_us(lemu_hist_quantile(&m->derr, 0.99)));
	rw_dbl(w, "max", ns_to_us(m->derr.max));
	rw_dbl(w, "mean", m->derr.count ? ns_to_us(m->derr.sum) / (double)m->derr.count : 0.);
	rw_uint(w, "samples", m->derr.count);
	if (dir->sd != NULL) { /* --stall-detect: releases no measured host stall delayed */
		rw_dbl(w, "own_p50", ns_to_us(lemu_hist_quantile(&m->derr_own, 0.5)));
		rw_dbl(w, "own_p99", ns_to_us(lemu_hist_quantile(&m->derr_own, 0.99)));
		rw_dbl(w, "own_max", ns_to_us(m->derr_own.max));
		rw_uint(w, "own_samples", m->derr_own.count);
		rw_uint(w, "stall_excluded", m->excluded);
	}
	rw_obj_end(w);
	if (dir->sd != NULL) {
		/* the lcore's detector (shared by both directions on one lcore) and the PMD
		 * calls of this direction's loop, timed apart from the release error */
		rw_obj_begin(w, "stall_detect");
		rw_uint(w, "checks", dir->sd->checks);
		rw_uint(w, "stalls", dir->sd->stalls);
		rw_dbl(w, "stall_off_ms", (double)dir->sd->off_ns / 1e6);
		rw_dbl(w, "stall_max_us", ns_to_us(dir->sd->max_off_ns));
		hist_json(w, "rx_call_us", &m->rx_call);
		hist_json(w, "tx_call_us", &m->tx_call);
		/* each data frame from its intended exit to the return of the TX call that took
		 * it: the release error at the port (calls = frames sent) */
		hist_json(w, "tx_done_err_us", &m->derr_tx);
		rw_obj_end(w);
	}
	/* each rule of the SPEC in force: what it dropped since that SPEC was applied */
	rw_arr_begin(w, "drop_rules");
	for (uint32_t i = 0; c && i < c->spec.rules.n; i++) {
		char t[128];

		emu_rule_format(&c->spec.rules.r[i], t, sizeof(t));
		rw_obj_begin(w, NULL);
		rw_str(w, "rule", t);
		rw_uint(w, "dropped", rule_dropped(app, d, i));
		rw_obj_end(w);
	}
	rw_arr_end(w);
	rw_str(w, "spec_final", c ? c->text : "");
	rw_uint(w, "mbufs", app->pool_mbufs[d]);
	rw_uint(w, "pool_bytes", (uint64_t)app->pool_mbufs[d] * app->mbuf_bytes);
	rw_uint(w, "line_bytes", app->line_bytes[d]);
	rw_uint(w, "line_pkts", app->line_pkts[d]);
	/* --workers: how flows reach the workers, and each worker's own counts (the
	 * bottleneck's are the direction's, above) */
	rw_str(w, "spread", app->spread[d] ? app->spread[d] : "none");
	rw_arr_begin(w, "workers");
	for (unsigned k = 0; k < app->workers; k++) {
		uint64_t x[LEMU_ST__COUNT];

		lemu_dir_snapshot_worker(&app->dir[d][k], x);
		rw_obj_begin(w, NULL);
		rw_uint(w, "rx_pkts", x[LEMU_ST_RX_PKTS]);
		rw_uint(w, "tx_pkts", x[LEMU_ST_TX_PKTS]);
		rw_uint(w, "drop_loss", x[LEMU_ST_DROP_LOSS]);
		rw_uint(w, "duplicated", x[LEMU_ST_DUPLICATED]);
		rw_uint(w, "in_flight", x[LEMU_ST_IN_FLIGHT]);
		rw_obj_end(w);
	}
	rw_arr_end(w);
	rw_obj_end(w);
}

int
lemu_report_json(const struct lemu_app *app, const char *path, char *err, size_t errlen)
{
	struct rw_json w;
	FILE *f = fopen(path, "w");
	int rc;

	if (f == NULL) {
		snprintf(err, errlen, "--json %s: cannot open: %s", path, strerror(errno));
		return -errno;
	}
	rw_json_init(&w, f);
	rw_doc_begin(&w, "lossy-emu");
	lemu_params_json(&app->prm, &w);
	rw_uint(&w, "lcores", app->lcores);
	rw_uint(&w, "workers_per_dir", app->workers);
	rw_uint(&w, "link_bps_a2b", app->link_bps[LEMU_A2B]);
	rw_uint(&w, "link_bps_b2a", app->link_bps[LEMU_B2A]);
	rw_doc_results(&w, true, app->prm.seed);
	for (unsigned d = 0; d < LEMU_NDIR; d++)
		dir_json(app, d, &w);
	/*
	 * duration_s: since EAL start, so it includes the pools' allocation and
	 * population and the ports' start (seconds with large pools on 2 MB pages);
	 * forward_s: only the time the lcores forwarded, the denominator of a rate.
	 */
	rw_dbl(&w, "duration_s", (double)(lemu_now_ns() - app->started_ns) / 1e9);
	rw_dbl(&w, "forward_s",
	       app->fwd_end_ns > app->fwd_start_ns
		   ? (double)(app->fwd_end_ns - app->fwd_start_ns) / 1e9
		   : 0.0);
	rc = rw_doc_end(&w);
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		snprintf(err, errlen, "--json %s: write failed: %s", path, strerror(-rc));
	return rc;
}

void
lemu_report_table(const struct lemu_app *app, FILE *f)
{
	uint64_t v[LEMU_NDIR][LEMU_ST__COUNT], b[LEMU_NDIR][EMU_LOSS_BURST_BUCKETS];

	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		lemu_dir_snapshot(app->dir[d], app->workers, v[d]);
		lemu_dir_loss_bursts(app->dir[d], app->workers, b[d]);
	}
	fprintf(f, "lossy-emu counters %26s %16s\n", "a2b", "b2a");
	for (unsigned i = 0; i < LEMU_ST__COUNT; i++) {
		if (v[0][i] == 0 && v[1][i] == 0 && i != LEMU_ST_RX_PKTS && i != LEMU_ST_TX_PKTS)
			continue; /* keep the table short: zero rows are in --json */
		fprintf(f, "  %-34s %16" PRIu64 " %16" PRIu64 "\n", lemu_stat_name(i), v[0][i],
			v[1][i]);
	}
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		static struct merged mg;
		const struct lemu_hist *h = &mg.derr;

		merge_workers(app, d, &mg);
		uint64_t runs = 0, lost = 0;

		for (unsigned i = 0; i < EMU_LOSS_BURST_BUCKETS; i++) {
			runs += b[d][i];
			lost += b[d][i] * (i + 1);
		}
		fprintf(f,
			"  %s: delay error p50 %.1f us, p99 %.1f us, max %.1f us (%" PRIu64
			" samples)",
			lemu_dir_name(d), ns_to_us(lemu_hist_quantile(h, 0.5)),
			ns_to_us(lemu_hist_quantile(h, 0.99)), ns_to_us(h->max), h->count);
		if (runs)
			fprintf(f, "; loss runs %" PRIu64 ", mean length %.2f", runs,
				(double)lost / (double)runs);
		fputc('\n', f);
		const struct lemu_dir_cfg *c = lemu_dir_current(app->dir[d]);
		for (uint32_t i = 0; c && i < c->spec.rules.n; i++) {
			char t[128];

			emu_rule_format(&c->spec.rules.r[i], t, sizeof(t));
			fprintf(f, "  %s: rule %-32s dropped %" PRIu64 "\n", lemu_dir_name(d), t,
				rule_dropped(app, d, i));
		}
	}
}
