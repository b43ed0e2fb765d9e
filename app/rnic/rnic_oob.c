/* SPDX-License-Identifier: BSD-3-Clause */
#include "rnic_oob.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>

#include "dp_port.h"
#include "pingpong_xchg.h"
#include "roce_recovery.h"

#define ACCEPT_TIMEOUT_MS 120000
#define WAIT_TIMEOUT_MS 120000

static enum perftest_test
test_of(enum rnic_mode m)
{
	switch (m) {
	case RNIC_MODE_SEND_BW:
		return PERFTEST_SEND_BW;
	case RNIC_MODE_READ_BW:
		return PERFTEST_READ_BW;
	case RNIC_MODE_ATOMIC_BW:
		return PERFTEST_ATOMIC_BW;
	case RNIC_MODE_WRITE_LAT:
		return PERFTEST_WRITE_LAT;
	case RNIC_MODE_SEND_LAT:
		return PERFTEST_SEND_LAT;
	case RNIC_MODE_READ_LAT:
		return PERFTEST_READ_LAT;
	default:
		return PERFTEST_WRITE_BW;
	}
}

static int
mtu_enum(uint32_t mtu)
{
	int e = 1;

	while ((256u << (e - 1)) < mtu && e < 5)
		e++;
	return e; /* IBV_MTU_256 = 1 .. IBV_MTU_4096 = 5 */
}

static int
hook_connect(void *arg, const struct perftest_session *s)
{
	struct rnic_run *r = arg;

	for (unsigned int i = 0; i < s->p.num_qps; i++) {
		r->remote[i] = s->remote[i];
		if (r->connect_qp(r->connect_arg, i, &s->remote[i], s->mtu) != 0)
			return -1;
	}
	return 0;
}

static int
hook_post_recv(void *arg, const struct perftest_session *s, uint64_t size)
{
	struct rnic_run *r = arg;
	struct rnic_bench *b = &r->bench;
	uint64_t n = b->prm->rx_depth < b->prm->iters ? b->prm->rx_depth : b->prm->iters;

	(void)s;
	for (unsigned int k = 0; k < b->nqps; k++)
		for (r->pre_posted = 0; r->pre_posted < n; r->pre_posted++)
			if (rnic_bench_post_recv_qp(b, k, size, r->pre_posted) != 0)
				return -1;
	return 0;
}

/* Record the receiver's goodput (request payload accepted in order) every interval. */
static void
sample_rx(struct rnic_run *r, uint64_t now)
{
	struct roce_stats st;

	if (now < r->next_sample_ns || r->nsamples >= RNIC_MAX_SAMPLES)
		return;
	roce_dev_stats(r->bench.port->dev, &st); /* every QP's */
	r->samples[r->nsamples].t_ns = now;
	r->samples[r->nsamples].rx_bytes = st.v[ROCE_STAT_RX_REQ_BYTES];
	for (unsigned int l = 1; r->lc && l < r->lc->n; l++) { /* workers write, we only read */
		roce_dev_stats(r->lc->w[l].bench.port->dev, &st);
		r->samples[r->nsamples].rx_bytes += st.v[ROCE_STAT_RX_REQ_BYTES];
	}
	r->nsamples++;
	r->next_sample_ns = now + RNIC_SAMPLE_NS;
}

/* --lcores: start the workers once every QP is connected and its receives posted */
static void
ensure_workers(struct rnic_run *r)
{
	char err[256];

	if (!r->lc || r->lc->launched || r->lc_err)
		return;
	if (rnic_lcores_launch(r->lc, err, sizeof(err)) < 0) {
		fprintf(stderr, "rnic: %s\n", err);
		r->lc_err = -1;
	}
}

/* Serve the port until the peer's next TCP message is readable (it finished). */
static void
serve_until_peer_speaks(struct rnic_run *r, int fd)
{
	struct rnic_bench *b = &r->bench;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	struct dp_backoff bo;

	ensure_workers(r);
	dp_backoff_init(&bo, b->prm->busy_poll);
	for (uint32_t i = 0; !dp_quit; i++) {
		unsigned int w = rnic_port_poll(b->port);
		/* a system call per poll cost a busy-polling responder ~20 % of its CPU */
		if ((i % 32 == 0 || bo.idle >= bo.spins) && poll(&pfd, 1, 0) > 0)
			break;
		sample_rx(r, rnic_now_ns(b->port));
		rnic_port_idle(b->port, &bo, w);
	}
	r->next_sample_ns = 0;
	sample_rx(r, rnic_now_ns(b->port));
	/* let the last ACKs and responses leave */
	for (int i = 0; i < 64; i++)
		rnic_port_poll(b->port);
}

static int
hook_traffic(void *arg, const struct perftest_session *s, uint64_t size,
	     struct perftest_report *rep)
{
	struct rnic_run *r = arg;
	struct rnic_bench *b = &r->bench;
	const struct rnic_params *p = b->prm;
	int rc = 0;

	for (unsigned int k = 0; k < b->nqps; k++) {
		b->q[k].raddr = r->remote[k].vaddr;
		b->q[k].rkey = r->remote[k].rkey;
	}
	b->raddr = b->q[0].raddr;
	b->rkey = b->q[0].rkey;
	if (r->lc) {
		/* --lcores: each lcore's bench holds its QPs (q[i] of lcore i % n) */
		for (unsigned int k = 0; k < b->nqps; k++) {
			struct rnic_bench *lb = &r->lc->w[k % r->lc->n].bench;

			lb->q[k / r->lc->n] = b->q[k]; /* QP, peer buffer, UD AH, MR */
		}
		for (unsigned int l = 0; l < r->lc->n; l++) {
			struct rnic_bench *lb = &r->lc->w[l].bench;

			lb->qp = lb->q[0].qp;
			lb->raddr = lb->q[0].raddr;
			lb->rkey = lb->q[0].rkey;
			lb->ah = lb->q[0].ah;
			lb->remote_qpn = lb->q[0].remote_qpn;
		}
		ensure_workers(r);
		if (r->lc_err)
			return -1;
	}
	/* send_bw -D: the responder counts no -n, it receives until the client's next message */
	uint64_t expect = p->duration_s ? RNIC_BENCH_UNTIL_PEER : p->iters;

	b->peer_fd = s->conn->fd;
	for (unsigned int l = 0; r->lc && l < r->lc->n; l++)
		r->lc->w[l].bench.peer_fd = s->conn->fd;
	if (rnic_mode_is_bw(p->mode) && r->lc && (!b->server || p->mode == RNIC_MODE_SEND_BW)) {
		if (!b->server)
			rc = rnic_lcores_run(r->lc, RNIC_JOB_REQUESTER, size, 0, 0, &r->res);
		else
			rc = rnic_lcores_run(r->lc, RNIC_JOB_RESPONDER, size, expect, r->pre_posted,
					     &r->res);
		if (rep) {
			double k = p->report_gbits ? 8.0 * 1048576 / 1e9 : 1.0;
			rep->size = size;
			rep->iters = r->res.iters;
			rep->bw_peak = r->res.bw_peak_mbps * k;
			rep->bw_avg = r->res.bw_avg_mbps * k;
			rep->msg_rate_avg = r->res.msg_rate_mpps;
		}
	} else if (rnic_mode_is_bw(p->mode)) {
		/*
		 * -b: both sides run the requester at once, as perftest's duplex
		 * write/read/atomic_bw (run_iter_bw on both); the engine answers the
		 * peer's requests while we poll. send_bw -b also receives (run_iter_bi).
		 */
		if (!b->server && p->flows)
			rc = rnic_flows_run(b, &r->flows, &r->res);
		else if (p->bidirectional && p->mode == RNIC_MODE_SEND_BW)
			rc = rnic_bench_bw_duplex_send(b, size, r->pre_posted, &r->res, &r->res_rx);
		else if (!b->server || p->bidirectional)
			rc = rnic_bench_bw_requester(b, size, &r->res);
		else if (p->mode == RNIC_MODE_SEND_BW)
			rc = rnic_bench_bw_responder(b, size, expect, r->pre_posted, &r->res);
		else
			serve_until_peer_speaks(r, s->conn->fd);
		if (rep) {
			double k = p->report_gbits ? 8.0 * 1048576 / 1e9 : 1.0;
			rep->size = size;
			rep->iters = r->res.iters;
			rep->bw_peak = r->res.bw_peak_mbps * k;
			rep->bw_avg = r->res.bw_avg_mbps * k;
			rep->msg_rate_avg = r->res.msg_rate_mpps;
		}
	} else if (b->server && p->mode != RNIC_MODE_SEND_LAT) {
		/* write_lat / read_lat: the client times requests; the server only answers */
		serve_until_peer_speaks(r, s->conn->fd);
	} else {
		rc = rnic_bench_lat(b, size, &r->res);
	}
	return rc;
}

/*
 * While the TCP exchange waits (for a client to connect, or for the peer's next
 * message): serve the port, so ARP, ND and ping are answered (a peer like rxe
 * resolves our MAC while it connects its QP, before it sends its next line),
 * back off, and see Ctrl-C.
 */
static int
port_wait(void *arg)
{
	struct rnic_run *r = arg;

	rnic_port_idle(r->bench.port, &r->wait_bo, rnic_port_poll(r->bench.port));
	return dp_quit;
}

/* Connect (client) or listen and accept one peer (server) on the kernel's TCP. */
static int
oob_open(struct rnic_run *run, struct oob_conn *c, const struct rnic_params *p, char *err,
	 size_t errlen)
{
	struct oob_listener l;
	int rc;

	dp_backoff_init(&run->wait_bo,
			false); /* waiting for a peer: never spin, even with --busy-poll */
	oob_conn_init(c);
	if (p->server[0]) {
		struct oob_connect_opts o = {.connect_timeout_ms = 3000,
					     .retries = 40,
					     .retry_delay_ms = 250,
					     .io_timeout_ms = WAIT_TIMEOUT_MS};
		rc = oob_connect(c, p->server, (uint16_t)p->tcp_port, &o);
		if (rc != OOB_OK) {
			snprintf(err, errlen, "%s", c->err);
			return -ECONNREFUSED;
		}
		c->wait = port_wait;
		c->wait_arg = run;
		return 0;
	}
	rc = oob_listen(&l, NULL, (uint16_t)p->tcp_port, err, errlen);
	if (rc != OOB_OK)
		return -EADDRINUSE;
	printf(" Waiting for client to connect on TCP port %u... *\n", p->tcp_port);
	fflush(stdout);
	l.wait = port_wait;
	l.wait_arg = run;
	rc = oob_accept(&l, c, ACCEPT_TIMEOUT_MS, WAIT_TIMEOUT_MS);
	oob_listener_close(&l);
	if (rc == OOB_ERR_STOPPED) {
		snprintf(err, errlen, "stopped while waiting for a client on TCP port %u",
			 p->tcp_port);
		return -EINTR;
	}
	if (rc != OOB_OK) {
		snprintf(err, errlen, "no client connected on TCP port %u within %d s", p->tcp_port,
			 ACCEPT_TIMEOUT_MS / 1000);
		return -ETIMEDOUT;
	}
	c->wait = port_wait;
	c->wait_arg = run;
	return 0;
}

/*
 * The capability negotiation (perftest_caps.h): decide the recovery mode from
 * our record and the peer's (NULL: a standard peer or rc_pingpong), print the
 * one fallback line if the requested mode cannot be used. -1 on a refusal.
 */
static int
negotiate(struct rnic_run *run, const struct rnic_params *p, const struct perftest_caps *remote,
	  const char *peer, const char *why, char *err, size_t errlen)
{
	struct perftest_caps local;
	char line[320];

	perftest_caps_local(&local, p->rec.ops, p->rec.fec, p->cc);
	if (perftest_caps_negotiate(&local, remote, peer, why, &run->caps, line, sizeof(line)) <
	    0) {
		snprintf(err, errlen, "%s", line);
		return -1;
	}
	run->recovery = roce_recovery_find(run->caps.recovery);
	if (line[0]) {
		printf("rnic: %s\n", line);
		fflush(stdout);
	}
	return 0;
}

static void
print_pp_dest(const char *what, const struct pingpong_dest *d)
{
	char gid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, d->gid, gid, sizeof(gid));
	printf("  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", what, d->lid, d->qpn, d->psn,
	       gid);
}

/* The server's hook: bring the QP up with the client's details and post the receives. */
static int
pp_connect(void *arg, const struct pingpong_dest *remote)
{
	struct rnic_run *r = arg;
	struct perftest_dest d = {.lid = remote->lid, .qpn = remote->qpn, .psn = remote->psn};
	int64_t n;

	memcpy(d.gid, remote->gid, 16);
	r->remote[0] = d;
	if (r->connect_qp(r->connect_arg, 0, &d, mtu_enum(r->bench.prm->mtu)) != 0)
		return -1;
	n = rnic_bench_pingpong_prepare(&r->bench, r->bench.prm->size);
	if (n < 0)
		return -1;
	r->pre_posted = (uint64_t)n;
	return 0;
}

/*
 * pingpong_client_exchange(), step by step: while the server brings its QP up
 * it resolves our MAC (ARP / ND) before it answers, and only we can answer
 * for our DPDK port, so serve the port until its reply is readable.
 */
static int
pp_client_exchange(struct rnic_run *run, struct oob_conn *c, const struct pingpong_dest *local,
		   struct pingpong_dest *remote)
{
	static const uint8_t done[PINGPONG_DONE_LEN] = "done";
	uint8_t msg[PINGPONG_MSG_LEN];
	char perr[160];
	int rc;

	if (pingpong_format_dest(local, msg, sizeof(msg), perr, sizeof(perr)) < 0)
		return oob_fail(c, OOB_ERR_ARG, "%s", perr);
	rc = oob_write_full(c, msg, sizeof(msg), "our ibv_rc_pingpong address");
	if (rc)
		return rc;
	serve_until_peer_speaks(run, c->fd);
	rc = oob_read_full(c, msg, sizeof(msg), "the peer's ibv_rc_pingpong address");
	if (rc)
		return rc;
	if (pingpong_parse_dest(msg, sizeof(msg), remote, perr, sizeof(perr)))
		return oob_fail(c, OOB_ERR_PROTO, "%s from %s", perr, c->peer);
	return oob_write_full(c, done, sizeof(done), "\"done\"");
}

int
rnic_oob_run_pingpong(struct rnic_run *run, const struct rnic_params *p, char *err, size_t errlen)
{
	struct pingpong_dest local = {.lid = 0, .qpn = run->local[0].qpn, .psn = run->local[0].psn},
			     remote;
	struct oob_conn c;
	int rc;

	memcpy(local.gid, run->local[0].gid, 16);
	/* rc_pingpong's exchange has no version step: never any extension */
	if (negotiate(run, p, NULL, p->server[0] ? p->server : "the client",
		      "ibv_rc_pingpong's exchange has no capability record", err, errlen) < 0)
		return -EPROTO;
	rc = oob_open(run, &c, p, err, errlen);
	if (rc < 0)
		return rc;
	print_pp_dest("local address: ", &local);
	if (p->server[0]) {
		rc = pp_client_exchange(run, &c, &local, &remote);
		if (rc == OOB_OK && pp_connect(run, &remote) != 0)
			rc = oob_fail(&c, OOB_ERR_ARG, "connecting the local QP failed");
	} else {
		rc = pingpong_server_exchange(&c, &local, &remote, pp_connect, run);
	}
	if (rc != OOB_OK) {
		snprintf(err, errlen, "ibv_rc_pingpong exchange with %s: %s",
			 p->server[0] ? p->server : "the client", c.err[0] ? c.err : "failed");
		oob_close(&c);
		return -EPROTO;
	}
	oob_close(&c);
	print_pp_dest("remote address:", &remote);
	rc = rnic_bench_pingpong(&run->bench, p->size, run->pre_posted, &run->res);
	if (rc == 0)
		rnic_bench_linger(&run->bench);
	if (run->res.iters) {
		const struct rnic_bench_result *r = &run->res;
		uint64_t bytes = r->size * r->iters * 2;
		double us = r->seconds * 1e6;

		/* rc_pingpong's two result lines */
		printf("%" PRIu64 " bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, r->seconds,
		       us > 0 ? (double)bytes * 8 / us : 0);
		printf("%" PRIu64 " iters in %.2f seconds = %.2f usec/iter\n", r->iters, r->seconds,
		       us / (double)r->iters);
	}
	if (run->res.data_mismatches && !p->server[0])
		snprintf(
		    err, errlen,
		    "rc_pingpong --chk: %" PRIu64 " received message(s) without 0 at "
		    "every 4 KiB page start (was the client run with -c?); first: message %" PRIu64
		    ", invalid data in page %" PRIu64,
		    run->res.data_mismatches, run->res.first_mismatch_msg,
		    run->res.first_mismatch_byte / 4096);
	else if (run->res.data_mismatches)
		snprintf(err, errlen,
			 "rc_pingpong: %" PRIu64 " echo(es) differ from what was sent; "
			 "first: message %" PRIu64 " at byte %" PRIu64,
			 run->res.data_mismatches, run->res.first_mismatch_msg,
			 run->res.first_mismatch_byte);
	else if (run->res.errors)
		snprintf(err, errlen,
			 "rc_pingpong: completion error %s after %" PRIu64 " of %" PRIu64
			 " round trips",
			 roce_wc_status_str(run->res.first_error), run->res.iters, p->iters);
	else if (rc)
		snprintf(err, errlen,
			 "rc_pingpong: only %" PRIu64 " of %" PRIu64 " round trips "
			 "completed (%s)",
			 run->res.iters, p->iters,
			 dp_quit ? "stopped by a signal" : "no progress for 30 s");
	return rc ? -EIO : 0;
}

int
rnic_oob_run(struct rnic_run *run, const struct rnic_params *p, char *err, size_t errlen)
{
	struct perftest_hooks hooks = {.arg = run,
				       .connect_qps = hook_connect,
				       .post_recv = hook_post_recv,
				       .run_traffic = hook_traffic};
	struct oob_conn c;
	struct perftest_params pp;
	struct perftest_session *s;
	struct perftest_caps caps;
	int rc;

	rc = oob_open(run, &c, p, err, errlen);
	if (rc < 0)
		return rc;
	perftest_params_default(&pp, test_of(p->mode),
				p->server[0] ? PERFTEST_CLIENT : PERFTEST_SERVER);
	pp.num_qps = p->num_qps;
	pp.duplex = p->bidirectional;
	pp.run_all = p->all_sizes;
	pp.size = p->size;
	pp.mtu = mtu_enum(p->mtu);
	pp.wait_timeout_ms = WAIT_TIMEOUT_MS;
	/* into the version's NUL padding */
	perftest_caps_local(&caps, p->rec.ops, p->rec.fec, p->cc);
	pp.caps = &caps;
	s = calloc(1, sizeof(*s));
	if (!s) {
		oob_close(&c);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = perftest_session_init(s, &c, &pp, run->local, run->remote);
	/*
	 * Step by step: the server reads first in every exchange, and after the
	 * handshake the peer may be sending RoCE traffic that our engine must answer
	 * (ACKs, READ responses) while we wait, so serve the port until the peer's
	 * next TCP message is readable. (perftest's write/read/atomic servers run no
	 * traffic step at all: they sit in that read.)
	 */
	while (rc == OOB_OK && s->pos < s->nsteps) {
		const struct perftest_step *st = &s->plan[s->pos];

		if (run->bench.server && st->after_handshake &&
		    (st->kind == PERFTEST_STEP_DEST || st->kind == PERFTEST_STEP_REPORT ||
		     st->kind == PERFTEST_STEP_DONE))
			serve_until_peer_speaks(run, c.fd);
		rc = perftest_session_step(s, &hooks);
		if (rc == OOB_OK && st->kind == PERFTEST_STEP_VERSION &&
		    negotiate(run, p, s->remote_has_caps ? &s->remote_caps : NULL, c.peer,
			      "a standard perftest (no capability record)", err, errlen) < 0) {
			free(s);
			oob_close(&c);
			return -EPROTO;
		}
	}
	if (rc != OOB_OK)
		snprintf(err, errlen, "perftest exchange with %s: %s",
			 p->server[0] ? p->server : "the client", c.err[0] ? c.err : "failed");
	else
		run->peer_report = s->remote_report;
	free(s);
	oob_close(&c);
	return rc == OOB_OK ? 0 : -EPROTO;
}
