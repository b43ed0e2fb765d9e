/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_report.c
 * The rnic's report at exit: the --json document (docs/rnic.md lists its fields),
 * the nonzero counters on stderr and the VRP summary lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cc.h"
#include "fec.h"
#include "fec_roce.h"
#include "rnic_app.h"
#include "rnic_bench.h"
#include "rnic_gsi.h"
#include "rnic_metrics.h"
#include "rnic_tel.h"
#include "roce_recovery.h"
#include "rw_json.h"

/* A FEC code as --fec spells it ("xor:32,4"), or null if none. */
static void
rnic_fec_code_json(struct rw_json *w, const char *key, uint8_t mode, uint8_t k, uint8_t d,
		   uint8_t r)
{
	struct fec_params p = {.mode = mode, .k = k, .d = d, .r = r};
	char buf[32];

	if (!mode || fec_params_format(&p, buf, sizeof(buf)) <= 0)
		rw_str(w, key, NULL);
	else
		rw_str(w, key, buf);
}

/*
 * cc_used: the congestion control the QPs ran (roce_cc_info.name), not the --cc asked
 * for; the names of every QP, comma-separated if they differ; null without a QP.
 */
static void
rnic_cc_used_json(const struct rnic_ctx *c, struct rw_json *w)
{
	char used[128] = "";
	size_t len = 0;

	for (unsigned int q = 0; q < c->prm.num_qps; q++) {
		struct roce_cc_info ci;
		char key[40];

		if (!c->qp[q])
			continue;
		roce_qp_cc_info(c->qp[q], &ci); /* -ENOTSUP (no info hook) still names the CC */
		if (!ci.name)
			continue;
		snprintf(key, sizeof(key), ",%s,", ci.name);
		if (len && strstr(used, key) != NULL)
			continue;
		len += (size_t)snprintf(used + len, sizeof(used) - len, "%s%s,", len ? "" : ",",
					ci.name);
		if (len >= sizeof(used))
			break;
	}
	if (len == 0 || len >= sizeof(used)) {
		rw_str(w, "cc_used", NULL);
		return;
	}
	used[len - 1] = '\0'; /* drop the framing commas */
	rw_str(w, "cc_used", used + 1);
}

int
rnic_report_json(struct rnic_ctx *c, const struct roce_stats *st, const char *error, char *err,
		 size_t errlen)
{
	struct rw_json w;
	FILE *f = fopen(c->prm.json, "w");

	if (!f) {
		snprintf(err, errlen, "--json %s: %s", c->prm.json, strerror(errno));
		return -1;
	}
	rw_json_init(&w, f);
	rw_doc_begin(&w, "rnic");
	rnic_params_json(&c->prm, &w);
	rw_doc_results(&w, true, c->prm.seed);
	rw_str(&w, "error", error);
	rw_str(&w, "recovery_used", c->run.caps.recovery[0] ? c->run.caps.recovery : NULL);
	rnic_cc_used_json(c, &w);
	rw_str(&w, "fec_used", c->run.caps.fec ? c->prm.fec : NULL);
	rw_bool(&w, "peer_capabilities", c->run.caps.peer_has_caps);
	rw_uint(&w, "size_bytes", c->run.res.size);
	rw_uint(&w, "iters", c->run.res.iters);
	rw_dbl(&w, "duration_s", c->run.res.seconds);
	rw_dbl(&w, "bw_avg_mbps", c->run.res.bw_avg_mbps);
	rw_dbl(&w, "bw_peak_mbps", c->run.res.bw_peak_mbps);
	rw_dbl(&w, "goodput_gbps", c->run.res.bw_avg_mbps * 8 / 1000);
	rw_dbl(&w, "msg_rate_mpps", c->run.res.msg_rate_mpps);
	if (c->prm.bidirectional && rnic_mode_is_bw(c->prm.mode)) {
		/* -b: the figures above add both directions (perftest's row); here each */
		double k = c->prm.report_gbits ? 1e9 / 8 / 1048576.0 : 1.0;

		rw_obj_begin(&w, "directions");
		rw_obj_begin(&w, "local");
		rw_uint(&w, "iters", c->local_res.iters);
		rw_uint(&w, "bytes", c->local_res.iters * c->local_res.size);
		rw_dbl(&w, "bw_avg_mbps", c->local_res.bw_avg_mbps);
		rw_dbl(&w, "bw_peak_mbps", c->local_res.bw_peak_mbps);
		rw_dbl(&w, "msg_rate_mpps", c->local_res.msg_rate_mpps);
		rw_obj_end(&w);
		rw_obj_begin(&w, "remote"); /* the peer's own report of its requester */
		rw_uint(&w, "iters", c->run.peer_report.iters);
		rw_uint(&w, "bytes", c->run.peer_report.iters * c->run.peer_report.size);
		rw_dbl(&w, "bw_avg_mbps", c->run.peer_report.bw_avg * k);
		rw_dbl(&w, "bw_peak_mbps", c->run.peer_report.bw_peak * k);
		rw_dbl(&w, "msg_rate_mpps", c->run.peer_report.msg_rate_avg);
		rw_obj_end(&w);
		if (c->prm.mode == RNIC_MODE_SEND_BW) {
			rw_obj_begin(&w,
				     "received"); /* our receive completions of the peer's SENDs */
			rw_uint(&w, "iters", c->run.res_rx.iters);
			rw_uint(&w, "bytes", c->run.res_rx.iters * c->run.res_rx.size);
			rw_dbl(&w, "bw_avg_mbps", c->run.res_rx.bw_avg_mbps);
			rw_uint(&w, "completion_errors", c->run.res_rx.errors);
			rw_obj_end(&w);
		}
		rw_obj_end(&w);
	}
	if (!rnic_mode_is_bw(c->prm.mode)) {
		rw_dbl(&w, "lat_min_us", c->run.res.t_min);
		rw_dbl(&w, "lat_typical_us", c->run.res.t_typical);
		rw_dbl(&w, "lat_avg_us", c->run.res.t_avg);
		rw_dbl(&w, "lat_p99_us", c->run.res.t_p99);
		rw_dbl(&w, "lat_p999_us", c->run.res.t_p999);
		rw_dbl(&w, "lat_max_us", c->run.res.t_max);
	}
	rw_uint(&w, "completion_errors", c->run.res.errors);
	if (c->run.flows.rec)
		rnic_flows_json(&c->run.flows, &w);
	if (c->run.nsamples > 1) {
		/* [seconds since the first sample, Gb/s of in-order request payload over the
		 * interval] */
		rw_arr_begin(&w, "rx_goodput_samples");
		for (uint32_t i = 1; i < c->run.nsamples; i++) {
			double dt = (c->run.samples[i].t_ns - c->run.samples[i - 1].t_ns) / 1e9;
			uint64_t db = c->run.samples[i].rx_bytes - c->run.samples[i - 1].rx_bytes;

			rw_arr_begin(&w, NULL);
			rw_dbl(&w, NULL, (c->run.samples[i].t_ns - c->run.samples[0].t_ns) / 1e9);
			rw_dbl(&w, NULL, dt > 0 ? db * 8 / dt / 1e9 : 0);
			rw_arr_end(&w);
		}
		rw_arr_end(&w);
	}
	if (c->ncct) {
		rw_obj_begin(&w, "cc_trace");
		rw_dbl(&w, "interval_s", RNIC_CC_TRACE_NS / 1e9);
		rw_arr_begin(&w, "columns");
		rw_str(&w, NULL, "t_s");
		rw_str(&w, NULL, "qpn");
		rw_str(&w, NULL, "rate_gbps");
		rw_str(&w, NULL, "target_gbps");
		rw_str(&w, NULL, "cc_window_pkts");
		rw_str(&w, NULL, "loss_window_pkts");
		rw_str(&w, NULL, "alpha");
		rw_str(&w, NULL, "rtt_us");
		rw_arr_end(&w);
		rw_arr_begin(&w, "rows");
		for (uint32_t i = 0; i < c->ncct; i++) {
			const struct rnic_cc_sample *s = &c->cct[i];

			rw_arr_begin(&w, NULL);
			rw_dbl(&w, NULL, s->t_s);
			rw_uint(&w, NULL, s->qpn);
			rw_dbl(&w, NULL, s->rate_gbps);
			rw_dbl(&w, NULL, s->target_gbps);
			rw_uint(&w, NULL, s->cc_window);
			rw_uint(&w, NULL, s->loss_window);
			rw_dbl(&w, NULL, s->alpha);
			rw_dbl(&w, NULL, s->rtt_us);
			rw_arr_end(&w);
		}
		rw_arr_end(&w);
		rw_obj_end(&w);
	}
	if (rnic_mode_is_bw(c->prm.mode) && c->prm.server[0] && c->nl <= 1) {
		/* the requester's QPs (-q): messages, bytes and the time of the last completion,
		 * for per-flow rates and fairness (testbed reproduce incast) */
		rw_arr_begin(&w, "qp_results");
		for (unsigned int q = 0; q < c->run.bench.nqps; q++) {
			const struct rnic_bench_qp *bq = &c->run.bench.q[q];

			if (!bq->qp)
				continue;
			rw_obj_begin(&w, NULL);
			rw_uint(&w, "qpn", roce_qp_num(bq->qp));
			rw_uint(&w, "msgs", bq->done);
			rw_uint(&w, "bytes", bq->done * c->run.res.size);
			rw_dbl(&w, "last_completion_s", bq->last_s);
			rw_obj_end(&w);
		}
		rw_arr_end(&w);
	}
	/* each QP's congestion control state at the end (lib/cc info hook) */
	rw_arr_begin(&w, "cc_qps");
	for (unsigned int q = 0; q < c->prm.num_qps; q++) {
		struct roce_cc_info ci;

		if (!c->qp[q] || roce_qp_cc_info(c->qp[q], &ci) < 0)
			continue;
		rw_obj_begin(&w, NULL);
		rw_uint(&w, "qpn", roce_qp_num(c->qp[q]));
		rw_str(&w, "cc", ci.name);
		rw_dbl(&w, "rate_gbps", ci.rate_bps / 1e9);
		rw_dbl(&w, "target_gbps", ci.target_bps / 1e9);
		rw_uint(&w, "window_pkts", ci.window);
		rw_dbl(&w, "alpha", ci.alpha);
		rw_dbl(&w, "rtt_us", ci.rtt_ns / 1e3);
		rw_obj_end(&w);
	}
	rw_arr_end(&w);
	/* each FEC QP's code at the end: --fec-adapt moves it (docs/fec.md) */
	rw_arr_begin(&w, "fec_qps");
	for (unsigned int q = 0; q < c->prm.num_qps; q++) {
		struct roce_fec_info fi;

		if (!c->qp[q] || roce_qp_fec_info(c->qp[q], &fi) < 0)
			continue;
		rw_obj_begin(&w, NULL);
		rw_uint(&w, "qpn", roce_qp_num(c->qp[q]));
		rnic_fec_code_json(&w, "code", fi.mode, fi.k, fi.d, fi.r);
		rnic_fec_code_json(&w, "peer_code", fi.dec_mode, fi.dec_k, fi.dec_d, fi.dec_r);
		rw_int(&w, "adapt_level", fi.adapt_level);
		rw_uint(&w, "adapt_loss_ppm", fi.adapt_loss_ppm);
		rw_uint(&w, "rebuilt", fi.rebuilt);
		rw_uint(&w, "unrecoverable", fi.unrecoverable);
		rw_obj_end(&w);
	}
	rw_arr_end(&w);
	rw_obj_begin(&w, "qp_counters");
	for (int i = 0; i < ROCE_STAT__COUNT; i++)
		rw_uint(&w, roce_stat_name((enum roce_stat)i), st->v[i]);
	rw_obj_end(&w);
	if (c->qp[0]) {
		/*
		 * --recovery vrp: the loss map of the last WRITE message QP 0 received
		 * (vrp_last, the responder's record) and of the last one it sent whose
		 * VRP LOSS summary came back (vrp_peer_last, the requester's view)
		 */
		struct roce_vrp_loss l;

		for (int k = 0; k < 2; k++) {
			if ((k == 0 ? roce_qp_vrp_loss(c->qp[0], &l)
				    : roce_qp_vrp_peer_loss(c->qp[0], &l)) < 0)
				continue;
			rw_obj_begin(&w, k == 0 ? "vrp_last" : "vrp_peer_last");
			rw_uint(&w, "msn", l.msn);
			rw_uint(&w, "len", l.len);
			rw_uint(&w, "lost_pkts", l.lost_pkts);
			rw_uint(&w, "lost_bytes", l.lost_bytes);
			rw_bool(&w, "holes_truncated", l.holes_truncated);
			rw_arr_begin(&w, "holes");
			for (uint32_t i = 0; i < l.n_holes && i < ROCE_VRP_HOLES; i++) {
				rw_obj_begin(&w, NULL);
				rw_uint(&w, "off", l.holes[i].off);
				rw_uint(&w, "len", l.holes[i].len);
				rw_obj_end(&w);
			}
			rw_arr_end(&w);
			rw_obj_end(&w);
		}
	}
	{
		/* the run's QPs at exit: mean srtt / rttvar of the sampled ones, the largest RTO */
		struct rnic_rtt_sum rs;

		rnic_rtt_summary(c->qp, c->prm.num_qps, &rs);
		rw_obj_begin(&w, "rtt");
		rw_dbl(&w, "srtt_us", rs.srtt_us);
		rw_dbl(&w, "rttvar_us", rs.rttvar_us);
		rw_dbl(&w, "rto_us", rs.rto_us);
		rw_dbl(&w, "stall_us", rs.stall_us);
		rw_uint(&w, "qps_sampled", rs.sampled);
		rw_obj_end(&w);
	}
	/* with --lcores every lcore's port and device counters, summed (and below, each) */
	struct rnic_port_counters pcs;
	struct roce_stats ds, one;

	memset(&pcs, 0, sizeof(pcs));
	memset(&ds, 0, sizeof(ds));
	for (unsigned int l = 0; l < c->nl; l++) {
		rnic_port_counters_add(&pcs, c->lport[l]);
		roce_dev_stats(c->lport[l]->dev, &one);
		for (int i = 0; i < ROCE_STAT__COUNT; i++)
			ds.v[i] = i == ROCE_STAT_RETX_QUEUE_HWM
				      ? (ds.v[i] > one.v[i] ? ds.v[i] : one.v[i])
				      : ds.v[i] + one.v[i]; /* a high-water mark: the max */
	}
	rw_obj_begin(&w, "device_counters");
	for (int i = 0; i < ROCE_STAT__COUNT; i++)
		rw_uint(&w, roce_stat_name((enum roce_stat)i), ds.v[i]);
	rw_obj_end(&w);
	{ /* QP1 (rnic_gsi.c) */
		struct roce_dev *gd[RNIC_MAX_LCORES];
		struct roce_gsi_stats gs;

		for (unsigned int l = 0; l < c->nl; l++)
			gd[l] = c->lport[l]->dev;
		rnic_gsi_sum(gd, c->nl, &gs);
		rnic_gsi_json(&w, &gs);
	}
	rw_obj_begin(&w, "port_counters");
#define RNIC_CNT_JSON(name, help) rw_uint(&w, #name, pcs.name);
	RNIC_PORT_COUNTERS(RNIC_CNT_JSON)
#undef RNIC_CNT_JSON
	rw_obj_end(&w);
	/* the PMD's own drops: frames its RX ring had no room for never reached the rnic */
	struct rte_eth_stats es;

	if (rte_eth_stats_get(c->port.port_id, &es) == 0) {
		rw_obj_begin(&w, "pmd_counters");
		rw_uint(&w, "ipackets", es.ipackets);
		rw_uint(&w, "imissed", es.imissed);
		rw_uint(&w, "ierrors", es.ierrors);
		rw_uint(&w, "rx_nombuf", es.rx_nombuf);
		rw_uint(&w, "oerrors", es.oerrors);
		rw_obj_end(&w);
	}
	/* the process as the kernel saw it: involuntary switches and faults explain poll_gap_max_ns
	 */
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		rw_obj_begin(&w, "process");
		rw_uint(&w, "voluntary_switches", (uint64_t)ru.ru_nvcsw);
		rw_uint(&w, "involuntary_switches", (uint64_t)ru.ru_nivcsw);
		rw_uint(&w, "major_faults", (uint64_t)ru.ru_majflt);
		rw_uint(&w, "minor_faults", (uint64_t)ru.ru_minflt);
		rw_uint(&w, "max_rss_kib", (uint64_t)ru.ru_maxrss);
		rw_obj_end(&w);
	}
	/* mbufs taken from the pool and not yet returned when the report is written (after
	 * a storm of hostile frames the count is what a clean run leaves, 0 leaked) */
	rw_obj_begin(&w, "mempool");
	rw_uint(&w, "size", c->port.pool->size);
	rw_uint(&w, "in_use", rte_mempool_in_use_count(c->port.pool));
	rw_obj_end(&w);
	if (c->nl > 1) {
		rw_arr_begin(&w, "lcores");
		for (unsigned int l = 0; l < c->nl; l++) {
			const struct rnic_port *lp = c->lport[l];

			rw_obj_begin(&w, NULL);
			rw_uint(&w, "index", l);
			rw_uint(&w, "queue", lp->queue);
			rw_uint(&w, "first_qpn", ROCE_FIRST_QPN + l * RNIC_QPN_SPAN);
			rw_arr_begin(&w, "qpns");
			for (unsigned int q = l; q < c->prm.num_qps; q += c->nl)
				rw_uint(&w, NULL, roce_qp_num(c->qp[q]));
			rw_arr_end(&w);
			rw_uint(&w, "iters", c->lc.w[l].res.iters);
			/* handed over after the owner stopped polling (rx_from_ring + this =
			 * handoffs) */
			rw_uint(&w, "ring_left", rte_ring_count(c->steer.ring[l]));
			rw_obj_begin(&w, "port_counters");
#define RNIC_CNT_JSON(name, help) rw_uint(&w, #name, lp->cnt.name);
			RNIC_PORT_COUNTERS(RNIC_CNT_JSON)
#undef RNIC_CNT_JSON
			rw_obj_end(&w);
			roce_dev_stats(lp->dev, &one);
			rw_obj_begin(&w, "dev_counters");
			for (int i = 0; i < ROCE_STAT__COUNT; i++)
				rw_uint(&w, roce_stat_name((enum roce_stat)i), one.v[i]);
			rw_obj_end(&w);
			rw_obj_end(&w);
		}
		rw_arr_end(&w);
	}
	/* the device's counters also hold the receive path's early drops (ICRC, parse, QPN) */
	rw_obj_begin(&w, "dev_counters");
	for (int i = 0; i < ROCE_STAT__COUNT; i++)
		rw_uint(&w, roce_stat_name((enum roce_stat)i), ds.v[i]);
	rw_obj_end(&w);
	if (rw_doc_end(&w) < 0 || fclose(f) != 0) {
		snprintf(err, errlen, "--json %s: write failed", c->prm.json);
		return -1;
	}
	return 0;
}

void
rnic_report_counters(struct rnic_ctx *c, struct roce_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned int q = 0; q < c->prm.num_qps; q++) { /* the run's QPs added up */
		struct roce_stats one;

		roce_qp_stats(c->qp[q], &one);
		for (int i = 0; i < ROCE_STAT__COUNT; i++)
			st->v[i] += one.v[i];
	}
	fprintf(stderr, "rnic counters (nonzero):\n");
	if (c->nl > 1) {
		/* each lcore's port counters, then the sum (and device drops) like one lcore */
		struct rnic_port sum = c->port;

		memset(&sum.cnt, 0, sizeof(sum.cnt));
		for (unsigned int l = 0; l < c->nl; l++) {
			fprintf(stderr,
				"  lcore %u (queue %u): rx_frames %" PRIu64 " rx_roce %" PRIu64
				" tx_frames %" PRIu64 " handed over %" PRIu64
				" taken from ring %" PRIu64 "\n",
				l, c->lport[l]->queue, c->lport[l]->cnt.rx_frames,
				c->lport[l]->cnt.rx_roce, c->lport[l]->cnt.tx_frames,
				c->lport[l]->cnt.rx_handoff, c->lport[l]->cnt.rx_from_ring);
			rnic_port_counters_add(&sum.cnt, c->lport[l]);
		}
		rnic_port_print_counters(&sum, stderr);
		for (unsigned int l = 1; l < c->nl; l++) {
			struct roce_stats ds;

			roce_dev_stats(c->lport[l]->dev, &ds);
			for (int i = 0; i < ROCE_STAT__COUNT; i++)
				if (ds.v[i] &&
				    strncmp(roce_stat_name((enum roce_stat)i), "rx_drop_", 8) == 0)
					fprintf(stderr, "  lcore %u device %-15s %12" PRIu64 "\n",
						l, roce_stat_name((enum roce_stat)i), ds.v[i]);
		}
	} else {
		rnic_port_print_counters(&c->port, stderr);
	}
	for (int i = 0; i < ROCE_STAT__COUNT; i++)
		if (st->v[i])
			fprintf(stderr, "  %-22s %12" PRIu64 "  %s\n",
				roce_stat_name((enum roce_stat)i), st->v[i],
				roce_stat_desc((enum roce_stat)i));
	if (c->prm.conn == RNIC_CONN_RC) {
		struct rnic_rtt_sum rs;

		rnic_rtt_summary(c->qp, c->prm.num_qps, &rs);
		fprintf(stderr,
			"  rtt (--rto %s): srtt %.1f us, rttvar %.1f us (mean of %u sampled QPs), "
			"rto %.1f us (largest)\n",
			c->prm.rto, rs.srtt_us, rs.rttvar_us, rs.sampled, rs.rto_us);
	}
}

void
rnic_report_vrp(const struct rnic_ctx *c, const struct roce_stats *st)
{
	/* the negotiated mode gives up tolerated losses (VRP, ROCE_REC_F_TOLERATE) */
	bool vrp = c->run.recovery && (c->run.recovery->flags & ROCE_REC_F_TOLERATE);

	if (vrp && st->v[ROCE_STAT_RX_VRP_MSGS]) {
		/* VRP goodput: the bytes delivered intact, zero-filled ones excluded (docs/vrp.md)
		 */
		uint64_t total = st->v[ROCE_STAT_RX_REQ_BYTES] + st->v[ROCE_STAT_RX_VRP_ZERO_BYTES];
		double lost =
		    total ? (double)st->v[ROCE_STAT_RX_VRP_ZERO_BYTES] / (double)total : 0;

		printf(" VRP received    : %" PRIu64 " WRITE messages, %" PRIu64
		       " packets lost (%" PRIu64
		       " bytes zero-filled, %.3f %% of the bytes), %" PRIu64 " NACKed\n",
		       st->v[ROCE_STAT_RX_VRP_MSGS], st->v[ROCE_STAT_RX_VRP_TOLERATED],
		       st->v[ROCE_STAT_RX_VRP_ZERO_BYTES], 100.0 * lost,
		       st->v[ROCE_STAT_RX_VRP_NACKED]);
		if (c->run.bench.server && rnic_mode_is_bw(c->prm.mode))
			printf(" VRP intact BW   : %.2f %s (the row's average less the zero-filled "
			       "share)\n",
			       c->run.res.bw_avg_mbps * (1.0 - lost) *
				   (c->prm.report_gbits ? 8.0 * 1048576.0 / 1e9 : 1.0),
			       c->prm.report_gbits ? "Gb/sec" : "MB/sec");
	}
	if (vrp && (st->v[ROCE_STAT_RX_VRP_SUMMARIES] || st->v[ROCE_STAT_VRP_SUM_MISSING]))
		/* the requester's view: the responder's VRP LOSS summaries (docs/vrp.md) */
		printf(" VRP reported    : %" PRIu64 " WRITE summaries from the responder, %" PRIu64
		       " packets lost (%" PRIu64 " bytes zero-filled), %" PRIu64
		       " WRITEs completed without one\n",
		       st->v[ROCE_STAT_RX_VRP_SUMMARIES] - st->v[ROCE_STAT_RX_VRP_SUM_DROP],
		       st->v[ROCE_STAT_VRP_PEER_LOST_PKTS], st->v[ROCE_STAT_VRP_PEER_LOST_BYTES],
		       st->v[ROCE_STAT_VRP_SUM_MISSING]);
	if (vrp && c->qp[0]) {
		/* the loss map of the last WRITE message received (docs/vrp.md) */
		struct roce_vrp_loss l;

		if (roce_qp_vrp_loss(c->qp[0], &l) == 0) {
			printf(" VRP last message: MSN %u, %u bytes, %u packets lost (%" PRIu64
			       " bytes), holes (offset+length):",
			       l.msn, l.len, l.lost_pkts, l.lost_bytes);
			for (uint32_t i = 0; i < l.n_holes; i++)
				printf(" %" PRIu64 "+%" PRIu64, l.holes[i].off, l.holes[i].len);
			printf("%s\n", l.n_holes == 0 ? " none" : l.holes_truncated ? " ..." : "");
		}
	}
}
