/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_app.h
 * The rnic program's context (rnic_main.c) and its report (rnic_report.c): the
 * --json document, the counters printed at exit and the VRP lines.
 */
#ifndef RNIC_APP_H
#define RNIC_APP_H

#include <stddef.h>
#include <stdint.h>

#include "rnic_config.h"
#include "rnic_core.h"
#include "rnic_lcores.h"
#include "rnic_oob.h"
#include "rnic_port.h"

struct rnic_ctx {
	struct rnic_params prm;
	struct rnic_port port;
	struct roce_pd *pd;
	struct roce_cq *cq;
	struct roce_qp *qp[RNIC_MAX_QPS]; /**< -q */
	struct roce_mr *mr;
	uint8_t *buf;
	size_t buf_size;
	uint32_t psn[RNIC_MAX_QPS];
	struct rnic_run run;
	struct rnic_bench_result local_res; /**< -b: this side's requester alone */
	/* --lcores L > 1: lcore l's port (queue l), device, PD, CQ and MR; index 0 = the above */
	unsigned int nl;
	struct rnic_port *lport[RNIC_MAX_LCORES];
	struct rnic_port xport[RNIC_MAX_LCORES];
	struct roce_pd *lpd[RNIC_MAX_LCORES];
	struct roce_cq *lcq[RNIC_MAX_LCORES];
	struct roce_mr *lmr[RNIC_MAX_LCORES];
	struct rnic_steer steer;
	struct rnic_lcores lc;
	/* --json: each QP's rate and windows over time (cc_trace), sampled by the port's tick */
	struct rnic_cc_sample *cct;
	uint32_t ncct;
	uint64_t cct_t0, cct_next;
};

/*
 * The per-QP congestion-control trace in --json ("cc_trace"): every
 * RNIC_CC_TRACE_NS, the first RNIC_CC_TRACE_QPS QPs' rate, target, CC window,
 * in-flight limit (loss window), alpha and RTT; at most RNIC_CC_TRACE_MAX
 * sampling instants (then it stops). One lcore only: with --lcores the
 * workers own the QPs.
 */
#define RNIC_CC_TRACE_NS 10000000ull /* 10 ms */
#define RNIC_CC_TRACE_MAX 12000u     /* two minutes */
#define RNIC_CC_TRACE_QPS 4u

struct rnic_cc_sample {
	float t_s, rate_gbps, target_gbps, alpha, rtt_us;
	uint32_t qpn, cc_window, loss_window;
};

/**
 * --json: the results, or with @p error (a run that failed) what was measured up to
 * then; @p st: the run's QPs added up (rnic_report_counters()). 0, or -1 with one
 * line in @p err.
 */
int rnic_report_json(struct rnic_ctx *c, const struct roce_stats *st, const char *error, char *err,
		     size_t errlen);

/** Sum the run's QPs' counters into @p st and print the nonzero ones (stderr). */
void rnic_report_counters(struct rnic_ctx *c, struct roce_stats *st);

/** --recovery vrp: what the receiver lost and the responder reported (stdout). */
void rnic_report_vrp(const struct rnic_ctx *c, const struct roce_stats *st);

#endif /* RNIC_APP_H */
