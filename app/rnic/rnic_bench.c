/* SPDX-License-Identifier: BSD-3-Clause */
#include "rnic_bench.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "dp_port.h"

#define LINE                                                                                       \
	"---------------------------------------------------------------------------------------"  \
	"\n"
#define WAIT_LIMIT_S 30 /* no progress for this long: the peer is gone */
#define MIB 1048576.0	/* perftest's MB/sec is MiB/s */

static double
now_s(const struct rnic_bench *b)
{
	return (double)rnic_now_ns(b->port) / 1e9;
}

static enum ibv_wr_opcode
wr_opcode(enum rnic_mode m, const char *atomic_type)
{
	switch (m) {
	case RNIC_MODE_SEND_BW:
	case RNIC_MODE_SEND_LAT:
		return IBV_WR_SEND;
	case RNIC_MODE_READ_BW:
	case RNIC_MODE_READ_LAT:
		return IBV_WR_RDMA_READ;
	case RNIC_MODE_ATOMIC_BW:
		return strcmp(atomic_type, "CMP_AND_SWAP") == 0 ? IBV_WR_ATOMIC_CMP_AND_SWP
								: IBV_WR_ATOMIC_FETCH_AND_ADD;
	default:
		return IBV_WR_RDMA_WRITE;
	}
}

/* Post one request for message i of @p size bytes on QP @p q. */
static int
post_one(struct rnic_bench *b, const struct rnic_bench_qp *q, uint64_t size, uint64_t i)
{
	size_t slots = b->buf_size / (size ? size : 1);
	size_t off = slots > 1 ? (size_t)(i % slots) * size : 0;
	struct ibv_sge sge = {.addr = (uintptr_t)b->buf + off,
			      .length = (uint32_t)size,
			      .lkey = (q->mr ? q->mr : b->mr)->lkey};
	struct ibv_send_wr wr = {.wr_id = i,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = wr_opcode(b->prm->mode, b->prm->atomic_type),
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	if (size <= b->prm->inline_size && wr.opcode != IBV_WR_RDMA_READ &&
	    wr.opcode != IBV_WR_ATOMIC_FETCH_AND_ADD && wr.opcode != IBV_WR_ATOMIC_CMP_AND_SWP)
		wr.send_flags |= IBV_SEND_INLINE;
	if (wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD || wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = q->raddr;
		wr.wr.atomic.rkey = q->rkey;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.swap = i;
		sge.length = 8;
	} else if (b->prm->conn == RNIC_CONN_UD) {
		wr.wr.ud.ah = roce_ah_ibv(q->ah);
		wr.wr.ud.remote_qpn = q->remote_qpn;
		wr.wr.ud.remote_qkey = RNIC_UD_QKEY;
	} else {
		/*
		 * Local buffers rotate; the remote address does not: a perftest peer
		 * only promises room for one message there (its cycle buffer).
		 */
		wr.wr.rdma.remote_addr = q->raddr;
		wr.wr.rdma.rkey = q->rkey;
	}
	/* --vrp-wr: message i carries tolerance i mod n (VTETH; WRITEs only, docs/vrp.md) */
	if (b->prm->n_vrp_wr) {
		const struct roce_vrp_wr *v = &b->prm->vrp_wr[i % b->prm->n_vrp_wr];

		/* "qp": nothing set, no range: the WRITE carries no tolerance */
		return roce_post_send_vrp(q->qp, &wr, v->set || v->n_critical ? v : NULL, &bad);
	}
	return roce_post_send(q->qp, &wr, &bad);
}

int
rnic_bench_post_recv(struct rnic_bench *b, uint64_t size, uint64_t i)
{
	return rnic_bench_post_recv_qp(b, 0, size, i);
}

/* The q[] entry of a completion's QP (q[0] if none matches: cannot happen). */
static struct rnic_bench_qp *
qp_of(struct rnic_bench *b, uint32_t qpn)
{
	for (unsigned int k = 0; k < b->nqps; k++)
		if (roce_qp_num(b->q[k].qp) == qpn)
			return &b->q[k];
	return &b->q[0];
}

int
rnic_bench_post_recv_qp(struct rnic_bench *b, unsigned int qi, uint64_t size, uint64_t i)
{
	if (b->prm->conn == RNIC_CONN_UD)
		size += RNIC_UD_GRH;
	size_t slots = b->buf_size / (size ? size : 1);
	size_t off = slots > 1 ? (size_t)(i % slots) * size : 0;
	struct ibv_sge sge = {.addr = (uintptr_t)b->buf + off,
			      .length = (uint32_t)size,
			      .lkey = (b->q[qi].mr ? b->q[qi].mr : b->mr)->lkey};
	struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;

	return roce_post_recv(b->q[qi].qp, &wr, &bad);
}

static void
note_error(struct rnic_bench_result *r, const struct ibv_wc *wc)
{
	if (r->errors++ == 0)
		r->first_error = wc->status;
}

int
rnic_bench_bw_requester(struct rnic_bench *b, uint64_t size, struct rnic_bench_result *r)
{
	const struct rnic_params *p = b->prm;
	uint64_t done = 0, iters = p->iters, total;
	uint32_t depth = p->tx_depth;
	double start, last_progress, deadline = 0, win_start, peak = 0;
	uint64_t win_done = 0;
	struct dp_backoff bo;
	struct ibv_wc wc[64];
	bool ending = false;

	memset(r, 0, sizeof(*r));
	r->size = size;
	if (p->mode == RNIC_MODE_READ_BW || p->mode == RNIC_MODE_ATOMIC_BW)
		depth = depth < p->outs * 4 ? depth : p->outs * 4;
	dp_backoff_init(&bo, p->busy_poll);
	start = win_start = last_progress = now_s(b);
	if (p->duration_s) {
		iters = UINT64_MAX;
		deadline = start + p->duration_s;
	}
	for (unsigned int k = 0; k < b->nqps; k++) {
		b->q[k].posted = b->q[k].done = 0;
		b->q[k].last_s = 0;
	}
	total = iters == UINT64_MAX ? UINT64_MAX : iters * b->nqps;
	while (done < total && !dp_quit) {
		unsigned int work = 0;

		/* every QP keeps up to tx_depth WRs outstanding (perftest: -n per QP) */
		ending = deadline && now_s(b) >= deadline;
		for (unsigned int k = 0; k < b->nqps && !ending; k++) {
			struct rnic_bench_qp *q = &b->q[k];

			while (q->posted < iters && q->posted - q->done < depth) {
				if (post_one(b, q, size, q->posted) != 0)
					break;
				q->posted++;
				work++;
			}
		}
		work += rnic_port_poll(b->port);
		int n = roce_poll_cq(b->cq, 64, wc);
		double t_cq = n ? now_s(b) : 0;

		for (int i = 0; i < n; i++) {
			struct rnic_bench_qp *q = qp_of(b, wc[i].qp_num);

			if (wc[i].status != IBV_WC_SUCCESS)
				note_error(r, &wc[i]);
			q->done++;
			q->last_s = t_cq - start; /* per-QP completion time (--json qp_results) */
		}
		done += (uint64_t)n;
		win_done += (uint64_t)n;
		if (n) {
			double t = t_cq;
			last_progress = t;
			if (t - win_start >= 0.1) { /* peak over 100 ms windows */
				double bw = (double)win_done * size / (t - win_start) / MIB;
				peak = bw > peak ? bw : peak;
				win_start = t;
				win_done = 0;
			}
		}
		if (r->errors)
			break;
		if (ending) {
			bool idle = true;

			for (unsigned int k = 0; k < b->nqps; k++)
				idle = idle && b->q[k].posted == b->q[k].done;
			if (idle)
				break;
		}
		if (now_s(b) - last_progress > WAIT_LIMIT_S) {
			r->errors++;
			r->first_error = IBV_WC_RETRY_EXC_ERR;
			break;
		}
		rnic_port_idle(b->port, &bo, work + (unsigned int)n);
	}
	r->iters = done;
	r->seconds = now_s(b) - start;
	if (r->seconds > 0) {
		r->bw_avg_mbps = (double)done * size / r->seconds / MIB;
		r->msg_rate_mpps = (double)done / r->seconds / 1e6;
	}
	r->bw_peak_mbps = peak > r->bw_avg_mbps ? peak : r->bw_avg_mbps;
	return r->errors ? -EIO : 0;
}

int
rnic_bench_bw_responder(struct rnic_bench *b, uint64_t size, uint64_t expect, uint64_t pre_posted,
			struct rnic_bench_result *r)
{
	const struct rnic_params *p = b->prm;
	const bool until_peer = expect == RNIC_BENCH_UNTIL_PEER;
	uint64_t done = 0, total = until_peer ? UINT64_MAX : expect * b->nqps;
	double start = now_s(b), last = start;
	struct pollfd pfd = {.fd = b->peer_fd, .events = POLLIN};
	bool peer_done = false;
	struct dp_backoff bo;
	struct ibv_wc wc[64];

	memset(r, 0, sizeof(*r));
	r->size = size;
	dp_backoff_init(&bo, p->busy_poll);
	for (unsigned int k = 0; k < b->nqps; k++) {
		b->q[k].posted = pre_posted;
		b->q[k].done = 0;
	}
	for (uint32_t it = 0; done < total && !dp_quit; it++) {
		unsigned int work = 0;

		/*
		 * -D: the requester sends for its duration, so the receives are reposted
		 * without a count (a count of -n left the requester's SENDs facing an empty
		 * receive queue: RNR NAKs until its retry limit). It sends its closing sync
		 * only once every SEND completed, i.e. once we received them all. A system
		 * call per poll is too dear for a busy-polling responder: every 32 loops.
		 */
		if (until_peer && (it % 32 == 0 || bo.idle >= bo.spins) && poll(&pfd, 1, 0) > 0) {
			peer_done = true;
			break;
		}

		for (unsigned int k = 0; k < b->nqps; k++) {
			struct rnic_bench_qp *q = &b->q[k];

			while (q->posted < expect && q->posted - q->done < p->rx_depth &&
			       rnic_bench_post_recv_qp(b, k, size, q->posted) == 0)
				q->posted++, work++;
		}
		work += rnic_port_poll(b->port);
		int n = roce_poll_cq(b->cq, 64, wc);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				note_error(r, &wc[i]);
			qp_of(b, wc[i].qp_num)->done++;
		}
		done += (uint64_t)n;
		if (n)
			last = now_s(b);
		if (r->errors || now_s(b) - last > WAIT_LIMIT_S)
			break;
		rnic_port_idle(b->port, &bo, work + (unsigned int)n);
	}
	r->iters = done;
	/* -D: the run ends at the last receive, not when the peer's sync was seen */
	r->seconds = (until_peer && done ? last : now_s(b)) - start;
	if (r->seconds > 0) {
		r->bw_avg_mbps = r->bw_peak_mbps = (double)done * size / r->seconds / MIB;
		r->msg_rate_mpps = (double)done / r->seconds / 1e6;
	}
	if (until_peer)
		return peer_done && !r->errors ? 0 : -EIO;
	return done == total ? 0 : -EIO;
}

static void
bw_finish(struct rnic_bench_result *r, uint64_t done, uint64_t size, double seconds)
{
	r->iters = done;
	r->seconds = seconds;
	if (seconds > 0) {
		r->bw_avg_mbps = (double)done * size / seconds / MIB;
		r->msg_rate_mpps = (double)done / seconds / 1e6;
	}
	if (r->bw_peak_mbps < r->bw_avg_mbps)
		r->bw_peak_mbps = r->bw_avg_mbps;
}

int
rnic_bench_bw_duplex_send(struct rnic_bench *b, uint64_t size, uint64_t pre_posted,
			  struct rnic_bench_result *r, struct rnic_bench_result *rx)
{
	const struct rnic_params *p = b->prm;
	uint64_t iters = p->iters, total = iters * b->nqps, sent = 0, recvd = 0;
	double start = now_s(b), last = start, t_sent = 0, t_recvd = 0;
	struct dp_backoff bo;
	struct ibv_wc wc[64];

	memset(r, 0, sizeof(*r));
	memset(rx, 0, sizeof(*rx));
	r->size = rx->size = size;
	dp_backoff_init(&bo, p->busy_poll);
	for (unsigned int k = 0; k < b->nqps; k++) {
		b->q[k].posted = b->q[k].done = 0;
		b->q[k].rposted = pre_posted;
		b->q[k].rdone = 0;
	}
	while ((sent < total || recvd < total) && !dp_quit) {
		unsigned int work = 0;

		for (unsigned int k = 0; k < b->nqps; k++) {
			struct rnic_bench_qp *q = &b->q[k];

			/* receives first: the peer's SENDs must never find the queue empty */
			while (q->rposted < iters && q->rposted - q->rdone < p->rx_depth &&
			       rnic_bench_post_recv_qp(b, k, size, q->rposted) == 0)
				q->rposted++, work++;
			while (q->posted < iters && q->posted - q->done < p->tx_depth &&
			       post_one(b, q, size, q->posted) == 0)
				q->posted++, work++;
		}
		work += rnic_port_poll(b->port);
		int n = roce_poll_cq(b->cq, 64, wc);
		for (int i = 0; i < n; i++) {
			struct rnic_bench_qp *q = qp_of(b, wc[i].qp_num);
			bool is_rx = (wc[i].opcode & IBV_WC_RECV) != 0;

			if (wc[i].status != IBV_WC_SUCCESS)
				note_error(is_rx ? rx : r, &wc[i]);
			if (is_rx) {
				q->rdone++;
				if (++recvd == total)
					t_recvd = now_s(b);
			} else {
				q->done++;
				if (++sent == total)
					t_sent = now_s(b);
			}
		}
		if (n)
			last = now_s(b);
		if (r->errors || rx->errors)
			break;
		if (now_s(b) - last > WAIT_LIMIT_S) {
			if (sent < total && r->errors++ == 0)
				r->first_error = IBV_WC_RETRY_EXC_ERR;
			if (recvd < total)
				rx->errors++;
			break;
		}
		rnic_port_idle(b->port, &bo, work + (unsigned int)n);
	}
	bw_finish(r, sent, size, (sent == total ? t_sent : now_s(b)) - start);
	bw_finish(rx, recvd, size, (recvd == total ? t_recvd : now_s(b)) - start);
	return sent == total && recvd == total && !r->errors && !rx->errors ? 0 : -EIO;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Wait for one completion on the CQ, serving the port meanwhile. */
static int
wait_one(struct rnic_bench *b, struct ibv_wc *wc)
{
	double start = now_s(b);
	struct dp_backoff bo;

	dp_backoff_init(&bo, true); /* latency: never sleep while waiting */
	while (!dp_quit) {
		if (roce_poll_cq(b->cq, 1, wc) == 1)
			return wc->status == IBV_WC_SUCCESS ? 0 : -EIO;
		rnic_port_poll(b->port);
		if (now_s(b) - start > WAIT_LIMIT_S)
			return -ETIMEDOUT;
	}
	return -EINTR;
}

int
rnic_bench_lat(struct rnic_bench *b, uint64_t size, struct rnic_bench_result *r)
{
	const struct rnic_params *p = b->prm;
	uint64_t n = p->iters;
	double *t = calloc(n, sizeof(double)), sum = 0, sq = 0;
	struct ibv_wc wc;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->size = size;
	if (!t)
		return -ENOMEM;
	/*
	 * send_lat: ping-pong of SENDs (the server answers each receive);
	 * write_lat/read_lat: the client times each request to its completion
	 * (perftest's write_lat polls memory instead; the RTT measured is the same
	 * request -> ACK path through the peer).
	 */
	for (uint64_t i = 0; i < n && rc == 0; i++) {
		double t0 = now_s(b);

		if (p->mode == RNIC_MODE_SEND_LAT) {
			/*
			 * Keep the receive queue topped up: the receives posted before
			 * the run cover the first messages, so a full queue is no error.
			 */
			rc = rnic_bench_post_recv(b, size, i);
			if (rc == -ENOMEM)
				rc = 0;
			if (rc != 0)
				break;
			if (!b->server && (rc = post_one(b, &b->q[0], size, i)) != 0)
				break;
			/* client: own send completion + peer's reply; server: receive then reply */
			if ((rc = wait_one(b, &wc)) != 0)
				break;
			if (b->server) {
				if ((rc = post_one(b, &b->q[0], size, i)) != 0 ||
				    (rc = wait_one(b, &wc)) != 0)
					break;
			} else if ((rc = wait_one(b, &wc)) != 0) {
				break;
			}
		} else {
			if ((rc = post_one(b, &b->q[0], size, i)) != 0 ||
			    (rc = wait_one(b, &wc)) != 0)
				break;
		}
		t[i] = (now_s(b) - t0) * 1e6;
		if (p->mode == RNIC_MODE_SEND_LAT || p->mode == RNIC_MODE_WRITE_LAT)
			t[i] /= 2; /* perftest reports one-way latency for ping-pong modes */
		r->iters++;
	}
	if (rc)
		r->errors = 1, r->first_error = wc.status;
	if (r->iters) {
		for (uint64_t i = 0; i < r->iters; i++)
			sum += t[i], sq += t[i] * t[i];
		qsort(t, r->iters, sizeof(double), cmp_double);
		r->t_min = t[0];
		r->t_max = t[r->iters - 1];
		r->t_typical = t[r->iters / 2];
		r->t_avg = sum / (double)r->iters;
		r->t_stdev = sqrt(fmax(0, sq / (double)r->iters - r->t_avg * r->t_avg));
		r->t_p99 = t[(uint64_t)((double)(r->iters - 1) * 0.99)];
		r->t_p999 = t[(uint64_t)((double)(r->iters - 1) * 0.999)];
	}
	free(t);
	return rc;
}

/* ---- ibv_rc_pingpong (rdma-core 44, libibverbs/examples/rc_pingpong.c) ---- */

enum { PP_RECV_WRID = 1, PP_SEND_WRID = 2 }; /* rc_pingpong's PINGPONG_RECV/SEND_WRID */

/*
 * What the client sends as message @p msg: different per message, and 0 at
 * every 4 KiB page start, which is what `ibv_rc_pingpong -c` puts there (its
 * client sets buf[i] = i / page_size % sizeof(char), i.e. 0, at each page)
 * and what its server checks at the end.
 */
static uint8_t
pp_pattern(uint64_t msg, uint64_t byte)
{
	return byte % 4096 == 0 ? 0 : (uint8_t)(byte * 7 + msg * 13 + 1);
}

static int
pp_post_recv(struct rnic_bench *b, uint64_t size)
{
	struct ibv_sge sge = {
	    .addr = (uintptr_t)b->buf, .length = (uint32_t)size, .lkey = b->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = PP_RECV_WRID, .sg_list = &sge, .num_sge = 1}, *bad;

	return roce_post_recv(b->qp, &wr, &bad);
}

static int
pp_post_send(struct rnic_bench *b, uint64_t size)
{
	struct ibv_sge sge = {
	    .addr = (uintptr_t)b->buf, .length = (uint32_t)size, .lkey = b->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = PP_SEND_WRID,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	return roce_post_send(b->qp, &wr, &bad);
}

int64_t
rnic_bench_pingpong_prepare(struct rnic_bench *b, uint64_t size)
{
	uint64_t n = b->prm->rx_depth < b->prm->iters ? b->prm->rx_depth : b->prm->iters;

	if (size > b->buf_size)
		return -EINVAL;
	memset(b->buf, 0x7b, size); /* rc_pingpong's initial buffer contents */
	for (uint64_t i = 0; i < n; i++)
		if (pp_post_recv(b, size) != 0)
			return -ENOMEM;
	return (int64_t)n;
}

int
rnic_bench_pingpong(struct rnic_bench *b, uint64_t size, uint64_t posted,
		    struct rnic_bench_result *r)
{
	const uint64_t iters = b->prm->iters;
	uint64_t scnt = 0, rcnt = 0, routs = posted;
	unsigned int pending = PP_RECV_WRID;
	double start, last;
	struct dp_backoff bo;
	struct ibv_wc wc[16];

	memset(r, 0, sizeof(*r));
	r->size = size;
	dp_backoff_init(&bo, true); /* a ping-pong waits on every round trip: never sleep */
	start = last = now_s(b);
	if (!b->server) {
		for (uint64_t j = 0; j < size; j++)
			b->buf[j] = pp_pattern(0, j);
		if (pp_post_send(b, size) != 0)
			return -ENOMEM;
		pending |= PP_SEND_WRID;
	}
	while ((rcnt < iters || scnt < iters) && !dp_quit && !r->errors) {
		unsigned int work = rnic_port_poll(b->port);
		int n = roce_poll_cq(b->cq, 16, wc);

		for (int i = 0; i < n && !r->errors; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				note_error(r, &wc[i]);
				break;
			}
			if (wc[i].wr_id == PP_SEND_WRID) {
				scnt++;
			} else if (wc[i].wr_id == PP_RECV_WRID) {
				if (b->server && b->prm->chk) {
					/* ibv_rc_pingpong -c: the client puts 0 at each page start
					 */
					for (uint64_t j = 0; j < size; j += 4096) {
						if (b->buf[j] == 0)
							continue;
						if (r->data_mismatches++ == 0) {
							r->first_mismatch_msg = rcnt;
							r->first_mismatch_byte = j;
						}
						break;
					}
				} else if (!b->server) { /* the echo of message rcnt */
					for (uint64_t j = 0; j < size; j++) {
						if (b->buf[j] == pp_pattern(rcnt, j))
							continue;
						if (r->data_mismatches++ == 0) {
							r->first_mismatch_msg = rcnt;
							r->first_mismatch_byte = j;
						}
						break;
					}
				}
				rcnt++;
				/* rc_pingpong: if (--routs <= 1) routs += pp_post_recv(rx_depth -
				 * routs) */
				if (--routs <= 1 && posted < iters) {
					while (routs < b->prm->rx_depth && posted < iters &&
					       pp_post_recv(b, size) == 0)
						routs++, posted++;
				}
			} else {
				r->errors++; /* not ours: count it as an error */
				r->first_error = IBV_WC_GENERAL_ERR;
				break;
			}
			pending &= ~(unsigned int)wc[i].wr_id;
			if (scnt < iters && !pending) {
				if (!b->server)
					for (uint64_t j = 0; j < size; j++)
						b->buf[j] = pp_pattern(scnt, j);
				if (pp_post_send(b, size) != 0) {
					r->errors++;
					r->first_error = IBV_WC_LOC_QP_OP_ERR;
					break;
				}
				pending = PP_RECV_WRID | PP_SEND_WRID;
			}
		}
		if (n > 0)
			last = now_s(b);
		else if (now_s(b) - last > WAIT_LIMIT_S)
			break;
		rnic_port_idle(b->port, &bo, work + (unsigned int)n);
	}
	r->iters = scnt < rcnt ? scnt : rcnt;
	r->seconds = now_s(b) - start;
	if (r->seconds > 0) {
		r->bw_avg_mbps = r->bw_peak_mbps = (double)r->iters * size * 2 / r->seconds / MIB;
		r->msg_rate_mpps = (double)r->iters / r->seconds / 1e6;
	}
	if (r->errors || r->data_mismatches)
		return -EIO;
	return r->iters == iters ? 0 : -ETIMEDOUT;
}

/*
 * rc_pingpong ends without a closing handshake: a side is done when its last
 * message is acknowledged and the peer's last one arrived, so it may leave
 * while the ACK it sent for that message is still on the wire. If the network
 * loses that ACK, the peer resends its message after its retransmission
 * timeout, and nobody answers: the peer's retry_cnt runs out
 * (IBV_WC_RETRY_EXC_ERR) although every byte arrived. TCP's TIME-WAIT state
 * (RFC 9293 §3.6.1) answers the same question, a lost last ACK: stay and
 * re-acknowledge. Here the RC responder stays until no duplicate request has
 * come for the quiet time, the larger of 1 s and four of this QP's own
 * timeouts (the peer's timer sees the same path), and at most LINGER_MAX_S
 * (a peer that keeps resending, or a flood of other frames, cannot hold it).
 */
#define LINGER_QUIET_MIN_S 1.0
#define LINGER_MAX_S 10.0

void
rnic_bench_linger(struct rnic_bench *b)
{
	struct roce_rtt_info rtt;
	struct roce_stats st;
	double quiet = LINGER_QUIET_MIN_S, start, heard;
	uint64_t dups;
	struct dp_backoff bo;

	if (b->prm->conn != RNIC_CONN_RC || !b->qp)
		return;
	if (roce_qp_rtt(b->qp, &rtt) == 0 && 4e-9 * (double)rtt.rto_ns > quiet)
		quiet = 4e-9 * (double)rtt.rto_ns;
	roce_dev_stats(b->port->dev, &st);
	dups = st.v[ROCE_STAT_RX_DUP_REQ];
	dp_backoff_init(&bo, false); /* nothing is timed here: sleep when idle */
	start = heard = now_s(b);
	while (!dp_quit) {
		unsigned int work = rnic_port_poll(b->port);
		double now = now_s(b);

		roce_dev_stats(b->port->dev, &st);
		if (st.v[ROCE_STAT_RX_DUP_REQ] != dups) {
			b->port->cnt.rx_linger += st.v[ROCE_STAT_RX_DUP_REQ] - dups;
			dups = st.v[ROCE_STAT_RX_DUP_REQ];
			heard = now;
		} else if (now - heard > quiet || now - start > LINGER_MAX_S) {
			break;
		}
		rnic_port_idle(b->port, &bo, work);
	}
}

static const char *
test_title(enum rnic_mode m)
{
	switch (m) {
	case RNIC_MODE_WRITE_BW:
		return "RDMA_Write BW Test";
	case RNIC_MODE_SEND_BW:
		return "Send BW Test";
	case RNIC_MODE_READ_BW:
		return "RDMA_Read BW Test";
	case RNIC_MODE_ATOMIC_BW:
		return "Atomic FETCH_AND_ADD BW Test";
	case RNIC_MODE_WRITE_LAT:
		return "RDMA_Write Latency Test";
	case RNIC_MODE_SEND_LAT:
		return "Send Latency Test";
	case RNIC_MODE_READ_LAT:
		return "RDMA_Read Latency Test";
	default:
		return "rc_pingpong";
	}
}

void
rnic_bench_print_header(FILE *f, const struct rnic_params *p)
{
	static const char *const conn[] = {"RC", "UC", "UD"};

	fprintf(f, LINE);
	fprintf(f, "                    %s\n", test_title(p->mode));
	fprintf(f, " Dual-port       : OFF\t\tDevice         : rnic (DPDK)\n");
	fprintf(f, " Number of qps   : %u\t\tTransport type : IB\n", p->num_qps);
	fprintf(f, " Connection type : %s\t\tUsing SRQ      : OFF\n", conn[p->conn]);
	fprintf(f, " TX depth        : %u\n", p->tx_depth);
	fprintf(f, " Mtu             : %u[B]\n", p->mtu);
	fprintf(f, " Link type       : Ethernet\n");
	fprintf(f, " GID index       : %u\n", p->gid_index);
	fprintf(f, " Max inline data : %u[B]\n", p->inline_size);
	fprintf(f, " rdma_cm QPs\t : OFF\n Data ex. method : Ethernet\n");
	fprintf(f, LINE);
	if (rnic_mode_is_bw(p->mode)) {
		const char *u = p->report_gbits ? "Gb/sec" : "MB/sec";
		fprintf(
		    f, " #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n",
		    u, u);
	} else {
		fprintf(f, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
			   "t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% "
			   "percentile[usec] \n");
	}
}

void
rnic_bench_print_row(FILE *f, const struct rnic_params *p, const struct rnic_bench_result *r)
{
	if (rnic_mode_is_bw(p->mode)) {
		double k = p->report_gbits ? 8.0 * MIB / 1e9 : 1.0;
		fprintf(
		    f,
		    " %-10" PRIu64 " %-10" PRIu64 "       %-7.2f            %-7.2f\t\t   %-7.6f\n",
		    r->size, r->iters, r->bw_peak_mbps * k, r->bw_avg_mbps * k, r->msg_rate_mpps);
	} else {
		fprintf(f,
			" %-7" PRIu64 " %-10" PRIu64
			"     %-7.2f        %-7.2f      %-7.2f  \t     "
			"%-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
			r->size, r->iters, r->t_min, r->t_max, r->t_typical, r->t_avg, r->t_stdev,
			r->t_p99, r->t_p999);
	}
}

void
rnic_bench_print_footer(FILE *f)
{
	fprintf(f, LINE);
}
