/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_lcores.h
 * --lcores L > 1: the bandwidth modes' QPs spread round-robin over L lcores,
 * each with its own rnic_port (RX/TX queue) and roce_dev. The main lcore
 * (index 0) keeps the perftest TCP exchange and runs its own QPs; workers
 * (rte_eal_remote_launch) serve their port between jobs and run the
 * measurement loop for their QPs when the main lcore posts a job, until
 * told to stop.
 */
#ifndef RNIC_LCORES_H
#define RNIC_LCORES_H

#include <stdbool.h>
#include <stdint.h>

#include "rnic_bench.h"

enum rnic_job { RNIC_JOB_REQUESTER, RNIC_JOB_RESPONDER };

struct rnic_worker {
	struct rnic_bench bench;    /**< this lcore's QPs, CQ, MR and port */
	unsigned int eal_lcore;	    /**< EAL lcore id (workers) */
	bool launched;		    /**< remote-launched, not yet waited for */
	uint32_t job_seq, done_seq; /**< atomics: job posted / finished */
	enum rnic_job job;
	uint64_t size, expect, pre_posted;
	struct rnic_bench_result res;
	int rc;
};

struct rnic_lcores {
	unsigned int n;
	struct rnic_worker w[RNIC_MAX_LCORES];
	struct rnic_steer *steer;
	bool launched;
	uint32_t stop; /**< atomic */
};

/** Start the workers (lcores 1..n-1) on the EAL's worker lcores; idempotent. */
int rnic_lcores_launch(struct rnic_lcores *lc, char *err, size_t errlen);

/**
 * Run one bandwidth job on every lcore (the main lcore does index 0) and add
 * the results up into @p r: iterations and bytes summed, time the longest.
 */
int rnic_lcores_run(struct rnic_lcores *lc, enum rnic_job job, uint64_t size, uint64_t expect,
		    uint64_t pre_posted, struct rnic_bench_result *r);

/** Tell the workers to stop serving, and wait for them. */
void rnic_lcores_stop(struct rnic_lcores *lc);

#endif /* RNIC_LCORES_H */
