/* SPDX-License-Identifier: BSD-3-Clause */
#include "rnic_lcores.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_launch.h>
#include <rte_lcore.h>

#include "dp_port.h"

static int
run_job(struct rnic_worker *w)
{
	if (w->job == RNIC_JOB_REQUESTER)
		return rnic_bench_bw_requester(&w->bench, w->size, &w->res);
	return rnic_bench_bw_responder(&w->bench, w->size, w->expect, w->pre_posted, &w->res);
}

static struct rnic_lcores *the_lc;

/* A worker: serve the port (idle back-off) until a job is posted or stop is set. */
static int
worker_main(void *arg)
{
	struct rnic_worker *w = arg;
	struct rnic_port *port = w->bench.port;
	uint32_t done = __atomic_load_n(&w->done_seq, __ATOMIC_ACQUIRE);
	struct dp_backoff bo;

	dp_backoff_init(&bo, w->bench.prm->busy_poll);
	while (!__atomic_load_n(&the_lc->stop, __ATOMIC_ACQUIRE) && !dp_quit) {
		uint32_t seq = __atomic_load_n(&w->job_seq, __ATOMIC_ACQUIRE);

		if (seq != done) {
			w->rc = run_job(w);
			done = seq;
			__atomic_store_n(&w->done_seq, seq, __ATOMIC_RELEASE);
			dp_backoff_init(&bo, w->bench.prm->busy_poll);
			continue;
		}
		rnic_port_idle(port, &bo, rnic_port_poll(port));
	}
	for (int i = 0; i < 64; i++) /* let the last ACKs and responses leave */
		rnic_port_poll(port);
	return 0;
}

int
rnic_lcores_launch(struct rnic_lcores *lc, char *err, size_t errlen)
{
	unsigned int l = 1, id;

	if (lc->launched || lc->n < 2)
		return 0;
	the_lc = lc;
	RTE_LCORE_FOREACH_WORKER(id)
	{
		if (l >= lc->n)
			break;
		lc->w[l++].eal_lcore = id;
	}
	if (l < lc->n) {
		snprintf(err, errlen,
			 "--lcores %u needs %u EAL worker lcores besides the main one, "
			 "the EAL has %u (give e.g. -l 0-%u)",
			 lc->n, lc->n - 1, l - 1, lc->n - 1);
		return -EINVAL;
	}
	__atomic_store_n(&lc->stop, 0, __ATOMIC_RELEASE);
	/* from here on each worker alone polls its queue, ring and engine */
	lc->steer->running = true;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	lc->launched = true;
	for (l = 1; l < lc->n; l++) {
		if (rte_eal_remote_launch(worker_main, &lc->w[l], lc->w[l].eal_lcore) != 0) {
			snprintf(err, errlen, "cannot launch the worker on lcore %u",
				 lc->w[l].eal_lcore);
			rnic_lcores_stop(lc); /* the ones that run */
			return -EIO;
		}
		lc->w[l].launched = true;
	}
	return 0;
}

int
rnic_lcores_run(struct rnic_lcores *lc, enum rnic_job job, uint64_t size, uint64_t expect,
		uint64_t pre_posted, struct rnic_bench_result *r)
{
	struct dp_backoff bo;
	double bytes = 0, peak = 0;
	int rc = 0;

	for (unsigned int l = 0; l < lc->n; l++) {
		struct rnic_worker *w = &lc->w[l];

		w->job = job;
		w->size = size;
		w->expect = expect;
		w->pre_posted = pre_posted;
		if (l > 0)
			__atomic_store_n(&w->job_seq, w->job_seq + 1, __ATOMIC_RELEASE);
	}
	lc->w[0].rc = run_job(&lc->w[0]);
	/* wait for the workers, serving lcore 0's port (its engine answers late frames) */
	dp_backoff_init(&bo, lc->w[0].bench.prm->busy_poll);
	for (unsigned int l = 1; l < lc->n; l++)
		while (__atomic_load_n(&lc->w[l].done_seq, __ATOMIC_ACQUIRE) != lc->w[l].job_seq &&
		       !dp_quit)
			rnic_port_idle(lc->w[0].bench.port, &bo,
				       rnic_port_poll(lc->w[0].bench.port));
	memset(r, 0, sizeof(*r));
	r->size = size;
	for (unsigned int l = 0; l < lc->n; l++) {
		const struct rnic_bench_result *x = &lc->w[l].res;

		r->iters += x->iters;
		bytes += (double)x->iters * (double)size;
		r->seconds = x->seconds > r->seconds ? x->seconds : r->seconds;
		peak += x->bw_peak_mbps;
		if (x->errors && r->errors == 0)
			r->first_error = x->first_error;
		r->errors += x->errors;
		if (lc->w[l].rc && rc == 0)
			rc = lc->w[l].rc;
	}
	if (r->seconds > 0) {
		r->bw_avg_mbps = bytes / r->seconds / 1048576.0;
		r->msg_rate_mpps = (double)r->iters / r->seconds / 1e6;
	}
	r->bw_peak_mbps = peak > r->bw_avg_mbps ? peak : r->bw_avg_mbps;
	return rc;
}

void
rnic_lcores_stop(struct rnic_lcores *lc)
{
	if (!lc->launched)
		return;
	__atomic_store_n(&lc->stop, 1, __ATOMIC_RELEASE);
	for (unsigned int l = 1; l < lc->n; l++)
		if (lc->w[l].launched) {
			rte_eal_wait_lcore(lc->w[l].eal_lcore);
			lc->w[l].launched = false;
		}
	lc->launched = false;
	if (lc->steer)
		lc->steer->running = false;
}
