/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_flows.h
 * The flow workload (the testbed's flow experiments): a sequence of flows, each one RDMA WRITE
 * of a size drawn from a CDF (or -s bytes), started either one after another
 * (load 0: the next flow starts when the previous one completed) or at Poisson
 * arrivals for a target load of the link rate. Each flow's completion time
 * (FCT) is measured from its arrival to its completion, so a flow that waits
 * behind earlier ones on the QP pays for the wait, as on a real NIC. With -q N
 * the QPs are a pool of N connections, each with its own PSNs, recovery and
 * congestion control: a flow takes an idle QP (the lowest-numbered), or with
 * all busy the one with the fewest flows outstanding; at load 0 each QP runs
 * one flow at a time.
 */
#ifndef RNIC_FLOWS_H
#define RNIC_FLOWS_H

#include <stdint.h>

#include "rnic_bench.h"
#include "rnic_cdf.h"

struct rw_json;

struct rnic_flow_rec {
	uint64_t size;	   /**< bytes */
	uint64_t start_ns; /**< arrival, from the start of the run */
	uint64_t fct_ns;   /**< completion - arrival (0: did not complete) */
	uint32_t qp;	   /**< the QP (index in -q) that ran it: an idle one if any */
};

struct rnic_flows {
	uint64_t n;		   /**< flows asked for */
	uint64_t done;		   /**< flows completed */
	struct rnic_flow_rec *rec; /**< n records */
	double seconds;		   /**< first arrival .. last completion */
	uint64_t bytes;		   /**< bytes of completed flows */
};

/**
 * Run the workload on @p b (requester side). Flow parameters come from
 * b->prm (flows, load_pct, link rate, cdf, size, seed). Fills @p f and the
 * bandwidth fields of @p r. Returns 0, or -1 if the peer stopped answering.
 */
int rnic_flows_run(struct rnic_bench *b, struct rnic_flows *f, struct rnic_bench_result *r);

/** The "flows" object of --json: summary and one [size_bytes, start_us, fct_us, qp] per
 * flow. */
void rnic_flows_json(const struct rnic_flows *f, struct rw_json *w);

void rnic_flows_free(struct rnic_flows *f);

#endif /* RNIC_FLOWS_H */
