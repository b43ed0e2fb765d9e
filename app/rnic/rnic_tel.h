/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_tel.h
 * The rnic's counters through DPDK telemetry. Query with
 * `dpdk-telemetry.py -f PREFIX` (the rnic needs --file-prefix PREFIX) or the
 * v2 socket /var/run/dpdk/PREFIX/dpdk_telemetry.v2:
 *
 *   /rnic/port/stats     port counters (rnic_port.h) and, under "device", the
 *                        device-wide RoCE counters (roce_stats.h: every QP's
 *                        counters added up, plus drops before a QP is known,
 *                        e.g. rx_drop_icrc)
 *   /rnic/qp/list        the QP numbers, in creation order
 *   /rnic/qp/stats,QPN   one QP: qpn, type, state, its RoCE counters and,
 *                        under "rtt", its srtt_us, rttvar_us, rto_us (roce_rtt.h)
 *
 * /rnic/port/stats also carries "rtt" over the published QPs, aggregated as
 * rnic_rtt_summary() does (qps_sampled: how many QPs the means cover).
 *
 * The callbacks run on DPDK's telemetry thread while the data path runs. They
 * take no lock: every counter has one writer (the data-path lcore) and is an
 * aligned 64-bit word, which x86-64 and arm64 load in one access, so each
 * value is one the data path held (a reply is not one instant's snapshot).
 * QPs are published once created and never withdrawn while the process runs.
 */
#ifndef RNIC_TEL_H
#define RNIC_TEL_H

#include "rnic_port.h"

#define RNIC_TEL_MAX_QP 1024

/** Register the /rnic/ commands for @p port. 0 or a negative errno. */
int rnic_tel_register(struct rnic_port *port);

/** Publish a created QP to /rnic/qp/list and /rnic/qp/stats. -ENOSPC beyond RNIC_TEL_MAX_QP. */
int rnic_tel_add_qp(struct roce_qp *qp, enum ibv_qp_type type);

/** RTT figures of a set of QPs (--json "rtt", the exit table, telemetry). */
struct rnic_rtt_sum {
	double srtt_us;	      /**< mean srtt over the RC QPs with at least one sample */
	double rttvar_us;     /**< mean rttvar over the same QPs */
	double rto_us;	      /**< the largest retransmit timeout in force over all RC QPs */
	double stall_us;      /**< the largest stall allowance (roce_rtt.h) over all RC QPs */
	unsigned int sampled; /**< RC QPs with at least one sample */
};

void rnic_rtt_summary(struct roce_qp *const *qps, unsigned int n, struct rnic_rtt_sum *out);

#endif /* RNIC_TEL_H */
