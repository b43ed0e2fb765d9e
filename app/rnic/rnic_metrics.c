/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_metrics.c
 * The rnic's Prometheus document (rnic_metrics.h, docs/metrics.md). Runs on
 * the metrics threads only; reads the counters as rnic_tel.c does (one writer,
 * aligned 64-bit words, relaxed loads: each value is one the data path held).
 */
#include "rnic_metrics.h"

#include <stdio.h>
#include <string.h>

#include "rnic_gsi.h"
#include "roce_cc.h"
#include "roce_rtt.h"
#include "roce_stats.h"
#include "rw_metrics.h"

#define RNIC_METRICS_MAX_QP 1024 /* QPs tracked: more than the rnic creates (RNIC_MAX_QPS) */

/*
 * Linux's name for a counter where one exists (the stem of the metric): mlx5's
 * hw_counters (Documentation/ABI/.../infiniband, drivers/infiniband/hw/mlx5/counters.c)
 * and rxe's (drivers/infiniband/sw/rxe/rxe_hw_counters.c). docs/metrics.md has the table.
 */
static const struct {
	enum roce_stat id;
	const char *linux_name;
} linux_names[] = {
    {ROCE_STAT_RX_OOS, "out_of_sequence"},
    {ROCE_STAT_RX_NAK_SEQ, "packet_seq_err"},
    {ROCE_STAT_TIMEOUTS, "local_ack_timeout_err"},
    {ROCE_STAT_RX_DUP_REQ, "duplicate_request"},
    {ROCE_STAT_RX_NAK_RNR, "rnr_nak_retry_err"},
    {ROCE_STAT_TX_CNPS, "np_cnp_sent"},
    {ROCE_STAT_RX_CNPS, "rp_cnp_handled"},
    {ROCE_STAT_RX_ECN_CE, "np_ecn_marked_roce_packets"},
    {ROCE_STAT_IMPLIED_NAKS, "implied_nak_seq_err"},
    {ROCE_STAT_RX_NAK_ACCESS, "req_remote_access_errors"},
    {ROCE_STAT_RX_NAK_INV_REQ, "req_remote_invalid_request"},
    {ROCE_STAT_RX_LEN_ERR, "resp_local_length_error"},
    {ROCE_STAT_RX_DROP_ICRC, "rx_icrc_encapsulated"},
    {ROCE_STAT_RETRY_EXC, "retry_exceeded_err"},
    {ROCE_STAT_RNR_RETRY_EXC, "rnr_retry_exceeded_err"},
};

struct mq {
	struct roce_qp *qp;
	uint32_t qpn;
	enum ibv_qp_type type;
};

static struct rw_metrics *mx;
static struct rnic_port *mx_port; /* release/acquire */
static struct mq mx_qps[RNIC_METRICS_MAX_QP];
static unsigned int mx_nqps; /* release/acquire */

static uint64_t
rd(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

static const char *
stem(enum roce_stat id)
{
	for (size_t i = 0; i < sizeof(linux_names) / sizeof(linux_names[0]); i++)
		if (linux_names[i].id == id)
			return linux_names[i].linux_name;
	return roce_stat_name(id);
}

/* a high-water mark is a gauge; everything else counts up */
static int
is_gauge(enum roce_stat id)
{
	return id == ROCE_STAT_RETX_QUEUE_HWM;
}

static double
metric_name(char *out, size_t n, const char *prefix, enum roce_stat id)
{
	return rw_prom_name(out, n, prefix, stem(id), !is_gauge(id));
}

/* a counter's value with its scale (1, or 1e-9 for a count of ns exported in seconds) */
static void
put_stat(struct rw_prom *p, const char *name, const char *labels, uint64_t v, double scale)
{
	if (scale == 1)
		rw_prom_u64(p, name, labels, v);
	else
		rw_prom_f64(p, name, labels, (double)v * scale);
}

static void
dev_counters(struct rw_prom *p, struct rnic_port *port)
{
	unsigned int nl = port->steer ? port->steer->n : 1;
	struct roce_stats st, o;
	char name[128], help[512];

	roce_dev_stats(port->dev, &st);
	for (unsigned int l = 1; l < nl; l++) {
		roce_dev_stats(port->steer->port[l]->dev, &o);
		for (int i = 0; i < ROCE_STAT__COUNT;
		     i++) /* a high-water mark: the max (as --json) */
			st.v[i] = is_gauge((enum roce_stat)i)
				      ? (st.v[i] > o.v[i] ? st.v[i] : o.v[i])
				      : st.v[i] + o.v[i];
	}
	for (int i = 0; i < ROCE_STAT__COUNT; i++) {
		enum roce_stat id = (enum roce_stat)i;

		double sc = metric_name(name, sizeof(name), "rocewan_rnic_", id);

		snprintf(help, sizeof(help), "%s (rocewan counter %s, every QP of the device)",
			 roce_stat_desc(id), roce_stat_name(id));
		rw_prom_head(p, name, is_gauge(id) ? "gauge" : "counter", help);
		put_stat(p, name, NULL, st.v[i], sc);
	}
}

/* QP1 of every lcore's device, summed (rnic_gsi.c) */
static void
gsi_counters(struct rw_prom *p, struct rnic_port *port)
{
	unsigned int nl = port->steer ? port->steer->n : 1;
	struct roce_dev *devs[RNIC_MAX_LCORES];
	struct roce_gsi_stats st;

	if (nl > RNIC_MAX_LCORES)
		nl = RNIC_MAX_LCORES;
	for (unsigned int l = 0; l < nl; l++)
		devs[l] = port->steer ? port->steer->port[l]->dev : port->dev;
	rnic_gsi_sum(devs, nl, &st);
	rnic_gsi_prom(p, &st);
}

static void
port_counters(struct rw_prom *p, struct rnic_port *port)
{
	unsigned int nl = port->steer ? port->steer->n : 1;
	struct rnic_port_counters sum;
	char name[128];

	memset(&sum, 0, sizeof(sum));
	for (unsigned int l = 0; l < nl; l++) {
		const struct rnic_port *q = port->steer ? port->steer->port[l] : port;
#define RNIC_MX_SUM(n, help)                                                                       \
	sum.n = (strstr(#n, "_max_") ? (rd(&q->cnt.n) > sum.n ? rd(&q->cnt.n) : sum.n)             \
				     : sum.n + rd(&q->cnt.n));
		RNIC_PORT_COUNTERS(RNIC_MX_SUM)
#undef RNIC_MX_SUM
	}
#define RNIC_MX_PORT(n, help)                                                                      \
	{                                                                                          \
		int gauge = strstr(#n, "_max_") != NULL; /* a maximum, not a count */              \
		double sc = rw_prom_name(name, sizeof(name), "rocewan_rnic_port_", #n, !gauge);    \
                                                                                                   \
		rw_prom_head(p, name, gauge ? "gauge" : "counter",                                 \
			     help " (rocewan port counter " #n ")");                               \
		put_stat(p, name, NULL, sum.n, sc);                                                \
	}
	RNIC_PORT_COUNTERS(RNIC_MX_PORT)
#undef RNIC_MX_PORT
}

static void
qp_label(char *out, size_t n, const struct mq *q)
{
	char v[16];

	out[0] = '\0';
	if (!q) {
		rw_prom_label(out, n, "qp", "other");
		return;
	}
	snprintf(v, sizeof(v), "%u", q->qpn);
	rw_prom_label(out, n, "qp", v);
	rw_prom_label(out, n, "type",
		      q->type == IBV_QPT_RC   ? "RC"
		      : q->type == IBV_QPT_UC ? "UC"
		      : q->type == IBV_QPT_UD ? "UD"
					      : "?");
}

static void
qp_series(struct rw_prom *p, unsigned int n)
{
	unsigned int shown = n < RW_METRICS_MAX_QPS ? n : RW_METRICS_MAX_QPS;
	static struct roce_stats st[RW_METRICS_MAX_QPS + 1]; /* metrics threads only, under lock */
	char name[128], help[512], lab[96];

	memset(st, 0, sizeof(st));
	for (unsigned int i = 0; i < n; i++) {
		struct roce_stats s;
		unsigned int k = i < shown ? i : RW_METRICS_MAX_QPS;

		roce_qp_stats(mx_qps[i].qp, &s);
		for (int c = 0; c < ROCE_STAT__COUNT; c++)
			st[k].v[c] = is_gauge((enum roce_stat)c) && st[k].v[c] > s.v[c] ? st[k].v[c]
				     : is_gauge((enum roce_stat)c)			? s.v[c]
								   : st[k].v[c] + s.v[c];
	}
	rw_prom_head(p, "rocewan_rnic_qps", "gauge", "QPs created (per-QP series: the first 16)");
	rw_prom_u64(p, "rocewan_rnic_qps", NULL, n);
	for (int c = 0; c < ROCE_STAT__COUNT; c++) {
		enum roce_stat id = (enum roce_stat)c;

		double sc = metric_name(name, sizeof(name), "rocewan_rnic_qp_", id);

		snprintf(help, sizeof(help),
			 "%s (rocewan counter %s, per QP; qp=\"other\": the QPs after the first 16 "
			 "added up)",
			 roce_stat_desc(id), roce_stat_name(id));
		rw_prom_head(p, name, is_gauge(id) ? "gauge" : "counter", help);
		for (unsigned int i = 0; i < shown; i++) {
			qp_label(lab, sizeof(lab), &mx_qps[i]);
			put_stat(p, name, lab, st[i].v[c], sc);
		}
		if (n > shown) {
			qp_label(lab, sizeof(lab), NULL);
			put_stat(p, name, lab, st[RW_METRICS_MAX_QPS].v[c], sc);
		}
	}
	/* gauges of the first QPs only (a rate or an RTT does not add up) */
	static const struct {
		const char *name, *help;
	} g[] = {
	    {"rocewan_rnic_qp_rate_bytes_per_second",
	     "congestion control pacing rate now, bytes/s (0: not rate based or line rate)"},
	    {"rocewan_rnic_qp_target_rate_bytes_per_second",
	     "DCQCN target rate now, bytes/s (0: other CCs)"},
	    {"rocewan_rnic_qp_cc_window_packets",
	     "congestion control window now (0: not window based)"},
	    {"rocewan_rnic_qp_inflight_limit_packets",
	     "RC in-flight limit now: the QP window and the loss-reactive window"},
	    {"rocewan_rnic_qp_cc_alpha", "DCQCN/DCTCP alpha now"},
	    {"rocewan_rnic_qp_srtt_seconds", "smoothed RTT (0 before the first sample)"},
	    {"rocewan_rnic_qp_rto_seconds", "retransmit timeout in force"},
	    {"rocewan_rnic_qp_min_rtt_seconds", "smallest RTT sample"},
	};
	for (size_t k = 0; k < sizeof(g) / sizeof(g[0]); k++) {
		rw_prom_head(p, g[k].name, "gauge", g[k].help);
		for (unsigned int i = 0; i < shown; i++) {
			struct roce_cc_info ci;
			struct roce_rtt_info r;
			double v;

			memset(&ci, 0, sizeof(ci));
			memset(&r, 0, sizeof(r));
			(void)roce_qp_cc_info(mx_qps[i].qp, &ci);
			(void)roce_qp_rtt(mx_qps[i].qp, &r);
			v = k == 0   ? ci.rate_bps / 8
			    : k == 1 ? ci.target_bps / 8
			    : k == 2 ? ci.window
			    : k == 3 ? ci.loss_window
			    : k == 4 ? ci.alpha
			    : k == 5 ? r.srtt_ns / 1e9
			    : k == 6 ? r.rto_ns / 1e9
				     : r.min_rtt_ns / 1e9;
			qp_label(lab, sizeof(lab), &mx_qps[i]);
			rw_prom_f64(p, g[k].name, lab, v);
		}
	}
}

static void
fill(struct rw_prom *p, void *arg)
{
	struct rnic_port *port = __atomic_load_n(&mx_port, __ATOMIC_ACQUIRE);
	unsigned int n = __atomic_load_n(&mx_nqps, __ATOMIC_ACQUIRE);

	(void)arg;
	rw_prom_head(p, "rocewan_rnic_up", "gauge", "1 while the rnic serves its counters");
	rw_prom_u64(p, "rocewan_rnic_up", NULL, 1);
	if (!port || !port->dev)
		return;
	dev_counters(p, port);
	port_counters(p, port);
	gsi_counters(p, port);
	qp_series(p, n);
}

int
rnic_metrics_start(const struct rnic_params *p, char *err, size_t errlen)
{
	struct rw_metrics_cfg cfg = {.listen = p->metrics,
				     .file = p->metrics_file,
				     .interval_ms = p->metrics_interval_ms,
				     .fill = fill,
				     .prog = "rnic"};

	mx = rw_metrics_start(&cfg, err, errlen);
	if (!mx)
		return err[0] ? -1 : 0;
	return 0;
}

void
rnic_metrics_set_port(struct rnic_port *port)
{
	__atomic_store_n(&mx_port, port, __ATOMIC_RELEASE);
}

void
rnic_metrics_add_qp(struct roce_qp *qp, enum ibv_qp_type type)
{
	unsigned int n = mx_nqps;

	if (n >= RNIC_METRICS_MAX_QP)
		return;
	mx_qps[n] = (struct mq){.qp = qp, .qpn = roce_qp_num(qp), .type = type};
	__atomic_store_n(&mx_nqps, n + 1, __ATOMIC_RELEASE);
}

void
rnic_metrics_ready(void)
{
	rw_metrics_ready(mx);
}

void
rnic_metrics_stop(void)
{
	rw_metrics_stop(mx);
	mx = NULL;
}
