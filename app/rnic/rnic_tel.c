/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control plane: the rnic's counters through DPDK telemetry (see rnic_tel.h).
 * The data path only ever writes the counters; this file only reads them.
 */
#include "rnic_tel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "roce_cc.h"

struct tel_qp {
	struct roce_qp *qp;
	uint32_t qpn;
	enum ibv_qp_type type;
};

static struct rnic_port *tel_port;
static struct tel_qp tel_qps[RNIC_TEL_MAX_QP];
static unsigned int tel_nqps; /* published with a release store */

static uint64_t
rd(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

static const char *
qp_type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : t == IBV_QPT_UD ? "UD" : "?";
}

static const char *
qp_state_name(enum ibv_qp_state s)
{
	static const char *const n[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

static void
add_roce_stats(struct rte_tel_data *d, const struct roce_stats *st)
{
	for (int i = 0; i < ROCE_STAT__COUNT; i++)
		rte_tel_data_add_dict_u64(d, roce_stat_name((enum roce_stat)i), rd(&st->v[i]));
}

void
rnic_rtt_summary(struct roce_qp *const *qps, unsigned int n, struct rnic_rtt_sum *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; i < n; i++) {
		struct roce_rtt_info r;

		if (!qps[i] || roce_qp_rtt(qps[i], &r) < 0)
			continue;
		if (r.rto_ns / 1e3 > out->rto_us)
			out->rto_us = r.rto_ns / 1e3;
		if (r.stall_ns / 1e3 > out->stall_us)
			out->stall_us = r.stall_ns / 1e3;
		if (!r.samples)
			continue;
		out->srtt_us += r.srtt_ns / 1e3;
		out->rttvar_us += r.rttvar_ns / 1e3;
		out->sampled++;
	}
	if (out->sampled) {
		out->srtt_us /= out->sampled;
		out->rttvar_us /= out->sampled;
	}
}

/* Under "rtt": the RTT figures of @p qps (not counters: they are not added up). */
static int
add_rtt(struct rte_tel_data *d, struct roce_qp *const *qps, unsigned int n)
{
	struct rte_tel_data *r = rte_tel_data_alloc();
	struct rnic_rtt_sum s;

	if (!r)
		return -ENOMEM;
	rnic_rtt_summary(qps, n, &s);
	rte_tel_data_start_dict(r);
	rte_tel_data_add_dict_u64(r, "srtt_us", (uint64_t)s.srtt_us);
	rte_tel_data_add_dict_u64(r, "rttvar_us", (uint64_t)s.rttvar_us);
	rte_tel_data_add_dict_u64(r, "rto_us", (uint64_t)s.rto_us);
	rte_tel_data_add_dict_u64(r, "qps_sampled", s.sampled);
	return rte_tel_data_add_dict_container(d, "rtt", r, 0);
}

/*
 * Under "cc": the QP's congestion-control state now, the live form of --json's cc_trace
 * (rate and target in Mb/s, windows in packets, alpha in millionths, the last RTT sample in
 * us; 0 where the algorithm has no such quantity; under --cc none the loss window only).
 */
static int
add_cc(struct rte_tel_data *d, const struct roce_qp *qp)
{
	struct rte_tel_data *c = rte_tel_data_alloc();
	struct roce_cc_info ci;

	if (!c)
		return -ENOMEM;
	memset(&ci, 0, sizeof(ci));
	(void)roce_qp_cc_info(qp, &ci); /* -ENOTSUP (none): the loss window only */
	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_u64(c, "rate_mbps", (uint64_t)(ci.rate_bps / 1e6));
	rte_tel_data_add_dict_u64(c, "target_mbps", (uint64_t)(ci.target_bps / 1e6));
	rte_tel_data_add_dict_u64(c, "cc_window_pkts", ci.window);
	rte_tel_data_add_dict_u64(c, "loss_window_pkts", ci.loss_window);
	rte_tel_data_add_dict_u64(c, "alpha_ppm", (uint64_t)(ci.alpha * 1e6));
	rte_tel_data_add_dict_u64(c, "rtt_us", ci.rtt_ns / 1000);
	return rte_tel_data_add_dict_container(d, "cc", c, 0);
}

static int
tel_port_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rnic_port *p = __atomic_load_n(&tel_port, __ATOMIC_ACQUIRE);
	struct rte_tel_data *dev;
	struct roce_stats st;

	(void)cmd;
	(void)params;
	if (!p || !p->dev)
		return -EAGAIN;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "port_id", p->port_id);
	/* --lcores: every lcore's port counters and device counters, summed */
	unsigned int nl = p->steer ? p->steer->n : 1;
	struct rnic_port_counters sum;

	memset(&sum, 0, sizeof(sum));
	for (unsigned int l = 0; l < nl; l++) {
		const struct rnic_port *q = p->steer ? p->steer->port[l] : p;
#define RNIC_CNT_SUM(name, help) sum.name += rd(&q->cnt.name);
		RNIC_PORT_COUNTERS(RNIC_CNT_SUM)
#undef RNIC_CNT_SUM
	}
#define RNIC_CNT_TEL(name, help) rte_tel_data_add_dict_u64(d, #name, sum.name);
	RNIC_PORT_COUNTERS(RNIC_CNT_TEL)
#undef RNIC_CNT_TEL
	dev = rte_tel_data_alloc();
	if (!dev)
		return -ENOMEM;
	rte_tel_data_start_dict(dev);
	roce_dev_stats(p->dev, &st);
	for (unsigned int l = 1; l < nl; l++) {
		struct roce_stats o;

		roce_dev_stats(p->steer->port[l]->dev, &o);
		for (int i = 0; i < ROCE_STAT__COUNT; i++)
			st.v[i] += o.v[i];
	}
	add_roce_stats(dev, &st);
	rte_tel_data_add_dict_container(d, "device", dev, 0);
	{
		unsigned int n = __atomic_load_n(&tel_nqps, __ATOMIC_ACQUIRE), k = 0;
		struct roce_qp *qps[RNIC_TEL_MAX_QP];

		for (unsigned int i = 0; i < n; i++)
			qps[k++] = tel_qps[i].qp;
		return add_rtt(d, qps, k);
	}
}

static int
tel_qp_list(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int n = __atomic_load_n(&tel_nqps, __ATOMIC_ACQUIRE);

	(void)cmd;
	(void)params;
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (unsigned int i = 0; i < n && i < RTE_TEL_MAX_ARRAY_ENTRIES; i++)
		rte_tel_data_add_array_int(d, (int)tel_qps[i].qpn);
	return 0;
}

static int
tel_qp_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int n = __atomic_load_n(&tel_nqps, __ATOMIC_ACQUIRE);
	const struct tel_qp *q = NULL;
	struct roce_stats st;
	unsigned long qpn;
	char *end;

	(void)cmd;
	if (!params || !*params)
		return -EINVAL; /* usage: /rnic/qp/stats,QPN (see /rnic/qp/list) */
	qpn = strtoul(params, &end, 0);
	if (*end)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++)
		if (tel_qps[i].qpn == qpn)
			q = &tel_qps[i];
	if (!q)
		return -ENOENT;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "qpn", (int)q->qpn);
	rte_tel_data_add_dict_string(d, "type", qp_type_name(q->type));
	rte_tel_data_add_dict_string(d, "state", qp_state_name(roce_qp_state(q->qp)));
	{
		uint32_t sq_psn, una, epsn;

		roce_qp_psns(q->qp, &sq_psn, &una, &epsn);
		rte_tel_data_add_dict_int(d, "sq_psn", (int)sq_psn);
		rte_tel_data_add_dict_int(d, "una", (int)una);
		rte_tel_data_add_dict_int(d, "epsn", (int)epsn);
	}
	roce_qp_stats(q->qp, &st);
	add_roce_stats(d, &st);
	if (add_cc(d, q->qp) < 0)
		return -ENOMEM;
	return add_rtt(d, &q->qp, 1);
}

int
rnic_tel_add_qp(struct roce_qp *qp, enum ibv_qp_type type)
{
	unsigned int n = tel_nqps;

	if (n >= RNIC_TEL_MAX_QP)
		return -ENOSPC;
	tel_qps[n] = (struct tel_qp){.qp = qp, .qpn = roce_qp_num(qp), .type = type};
	__atomic_store_n(&tel_nqps, n + 1, __ATOMIC_RELEASE);
	return 0;
}

int
rnic_tel_register(struct rnic_port *port)
{
	int rc = 0;

	__atomic_store_n(&tel_port, port, __ATOMIC_RELEASE);
	rc |=
	    rte_telemetry_register_cmd("/rnic/port/stats", tel_port_stats,
				       "Port counters and, under \"device\", the device-wide RoCE "
				       "counters. No parameters");
	rc |= rte_telemetry_register_cmd("/rnic/qp/list", tel_qp_list, "QP numbers. No parameters");
	rc |= rte_telemetry_register_cmd(
	    "/rnic/qp/stats", tel_qp_stats,
	    /* help: under 128 bytes (RTE_TEL_MAX_STRING_LEN), or the command is refused */
	    "One QP's counters, state, PSNs, rtt and cc (its congestion control). "
	    "Parameters: QPN (see /rnic/qp/list)");
	return rc ? -EINVAL : 0;
}
