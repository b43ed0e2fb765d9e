/* SPDX-License-Identifier: BSD-3-Clause */
#include "rnic_flows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_port.h"
#include "rw_json.h"

#define WAIT_LIMIT_NS (30ull * 1000000000ull) /* no progress for this long: the peer is gone */
#define MIB 1048576.0

/* splitmix64: a small, well-mixed generator for sizes and arrival gaps */
static uint64_t
rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double
rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

/*
 * The QP a new flow runs on. The seeds' simulations give every flow a QP of its
 * own; -q N QPs are a pool of such connections (each its own PSNs, CC state and
 * recovery): the lowest-numbered idle QP, or, with all N busy, the one with the
 * fewest flows outstanding (the lowest-numbered of those), where the flow waits
 * behind the earlier ones as on any QP.
 */
static uint32_t
pick_qp(const struct rnic_bench *b)
{
	unsigned int n = b->nqps ? b->nqps : 1;
	uint32_t best = 0;

	for (unsigned int k = 0; k < n; k++) {
		if (b->q[k].posted == b->q[k].done)
			return k;
		if (b->q[k].posted - b->q[k].done < b->q[best].posted - b->q[best].done)
			best = k;
	}
	return best;
}

static int
post_flow(struct rnic_bench *b, struct rnic_bench_qp *q, uint64_t i, uint64_t size)
{
	struct ibv_sge sge = {.addr = (uintptr_t)b->buf,
			      .length = (uint32_t)size,
			      .lkey = (q->mr ? q->mr : b->mr)->lkey};
	struct ibv_send_wr wr = {.wr_id = i,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	wr.wr.rdma.remote_addr = q->raddr;
	wr.wr.rdma.rkey = q->rkey;
	return roce_post_send(q->qp, &wr, &bad);
}

int
rnic_flows_run(struct rnic_bench *b, struct rnic_flows *f, struct rnic_bench_result *r)
{
	const struct rnic_params *p = b->prm;
	uint64_t seed = p->seed * 0x2545f4914f6cdd1dull + 7, posted = 0, t0, last_progress;
	double mean_size = p->flow_cdf[0] ? rnic_cdf_mean(&p->cdf) : (double)p->size;
	double gap_ns = 0;
	struct dp_backoff bo;
	struct ibv_wc wc[64];
	int rc = 0;

	memset(r, 0, sizeof(*r));
	memset(f, 0, sizeof(*f));
	f->n = p->flows;
	f->rec = calloc(f->n, sizeof(*f->rec));
	if (!f->rec)
		return -1;
	/* sizes and arrivals are drawn up front: the same seed gives the same workload */
	for (uint64_t i = 0, t = 0; i < f->n; i++) {
		f->rec[i].size =
		    p->flow_cdf[0] ? rnic_cdf_sample(&p->cdf, rng_unit(&seed)) : p->size;
		if (f->rec[i].size > p->flow_max)
			f->rec[i].size = p->flow_max;
		if (p->load_pct) {
			/* Poisson arrivals: exponential gaps with mean = mean size / (load x rate)
			 */
			gap_ns = mean_size * 8 / (p->load_pct / 100.0 * p->link_gbps);
			f->rec[i].start_ns = t;
			t += (uint64_t)(-log(1 - rng_unit(&seed)) * gap_ns);
		}
	}
	for (unsigned int k = 0; k < (b->nqps ? b->nqps : 1); k++)
		b->q[k].posted = b->q[k].done = 0;
	dp_backoff_init(&bo, p->busy_poll);
	t0 = last_progress = rnic_now_ns(b->port);
	while (f->done < f->n && !dp_quit) {
		uint64_t now = rnic_now_ns(b->port) - t0;
		unsigned work = 0;

		/* in arrival order; a flow waits behind the earlier ones of its QP */
		while (posted < f->n) {
			struct rnic_flow_rec *fr = &f->rec[posted];
			uint32_t k = pick_qp(b);
			struct rnic_bench_qp *q = &b->q[k];

			if (q->posted - q->done >= p->tx_depth)
				break;
			/* load 0: each QP runs one flow at a time, the next when one is idle */
			if (p->load_pct ? now < fr->start_ns : q->posted != q->done)
				break;
			fr->qp = k;
			if (!p->load_pct)
				fr->start_ns = now;
			if (post_flow(b, q, posted, fr->size) != 0)
				break;
			posted++;
			q->posted++;
			work++;
		}
		work += rnic_port_poll(b->port);
		int n = roce_poll_cq(b->cq, 64, wc);
		if (n > 0) {
			now = rnic_now_ns(b->port) - t0;
			last_progress = now + t0;
		}
		for (int i = 0; i < n; i++) {
			uint64_t id = wc[i].wr_id < f->n ? wc[i].wr_id : 0;
			struct rnic_flow_rec *fr = &f->rec[id];

			b->q[fr->qp].done++;
			if (wc[i].status != IBV_WC_SUCCESS) {
				if (r->errors++ == 0)
					r->first_error = wc[i].status;
				continue;
			}
			fr->fct_ns = now > fr->start_ns ? now - fr->start_ns : 1;
			f->bytes += fr->size;
			f->seconds = now / 1e9;
		}
		f->done += (uint64_t)(n > 0 ? n : 0);
		if (r->errors)
			break;
		if (rnic_now_ns(b->port) - last_progress > WAIT_LIMIT_NS) {
			rc = -1;
			break;
		}
		/* with Poisson arrivals, sleep no later than the next arrival */
		rnic_port_idle(b->port, &bo, work + (unsigned)(n > 0 ? n : 0));
	}
	r->size = (uint64_t)llround(mean_size);
	r->iters = f->done;
	r->seconds = f->seconds;
	if (f->seconds > 0) {
		r->bw_avg_mbps = (double)f->bytes / f->seconds / MIB;
		r->bw_peak_mbps = r->bw_avg_mbps;
		r->msg_rate_mpps = (double)f->done / f->seconds / 1e6;
	}
	return rc;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void
rnic_flows_json(const struct rnic_flows *f, struct rw_json *w)
{
	uint64_t *fct = malloc((f->done ? f->done : 1) * sizeof(*fct)), m = 0;
	double sum = 0;

	for (uint64_t i = 0; fct && i < f->n; i++)
		if (f->rec[i].fct_ns) {
			fct[m++] = f->rec[i].fct_ns;
			sum += (double)f->rec[i].fct_ns;
		}
	if (fct)
		qsort(fct, m, sizeof(*fct), cmp_u64);
	rw_obj_begin(w, "flows");
	rw_uint(w, "count", f->n);
	rw_uint(w, "completed", m);
	rw_uint(w, "bytes", f->bytes);
	rw_dbl(w, "duration_s", f->seconds);
	rw_dbl(w, "goodput_gbps", f->seconds > 0 ? f->bytes * 8 / f->seconds / 1e9 : 0);
	rw_dbl(w, "fct_avg_us", m ? sum / m / 1e3 : 0);
	rw_dbl(w, "fct_p50_us", m ? fct[(m - 1) / 2] / 1e3 : 0);
	rw_dbl(w, "fct_p99_us", m ? fct[(uint64_t)((m - 1) * 0.99)] / 1e3 : 0);
	rw_arr_begin(w, "records");
	for (uint64_t i = 0; i < f->n; i++) {
		rw_arr_begin(w, NULL);
		rw_uint(w, NULL, f->rec[i].size);
		rw_dbl(w, NULL, f->rec[i].start_ns / 1e3);
		rw_dbl(w, NULL, f->rec[i].fct_ns / 1e3);
		rw_uint(w, NULL, f->rec[i].qp);
		rw_arr_end(w);
	}
	rw_arr_end(w);
	rw_obj_end(w);
	free(fct);
}

void
rnic_flows_free(struct rnic_flows *f)
{
	free(f->rec);
	f->rec = NULL;
}
