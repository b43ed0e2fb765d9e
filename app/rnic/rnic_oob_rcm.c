/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_oob_rcm.c
 * perftest's -R in the rnic's built-in bandwidth modes (docs/rdma-cm.md "-R on the
 * rnic"): the CM endpoint (rnic_cm.h) on the port, perftest's channel QP through the
 * CM (rnic_cm_chan.h), the version (with the rnic's capability record in its padding,
 * as over TCP), page size, cache line and MTU messages over it as SENDs, a zero key
 * message, the test QP connected through its own REQ/REP/RTU, a zero key message and
 * three key messages of the test QP (56-byte binary), the traffic, the "client done"
 * key message, the report (write/read), the closing key message, then the client's
 * DREQ of the test connection and the server's DREQ of the channel. The order and the
 * sizes are those of rxe <-> rxe ib_{write,send,read}_bw -R captures.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "ip_cm.h"
#include "rnic_cm.h"
#include "rnic_cm_chan.h"
#include "rnic_oob.h"

#define RCM_TIMEOUT_MS 120000

struct rcm {
	struct rnic_run *run;
	const struct rnic_params *p;
	struct rnic_cm ep;
	struct rnic_cm_chan ch;
	struct oob_conn c;
	struct dp_backoff bo;
	int chan_taken; /* server: the channel accepted its REQ */
	struct cm_id *tid;
	int t_state; /* test connection: 0 none, 1 connecting, 2 up, 3 closed, -1 failed */
	struct cm_req t_req;
	int t_req_pending;
	uint32_t t_peer_qpn, t_peer_psn;
};

static struct rcm R;

static uint64_t
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
serve(struct rcm *r)
{
	unsigned int w = rnic_port_poll(r->run->bench.port);

	w += rnic_cm_chan_poll(&r->ch);
	rnic_port_idle(r->run->bench.port, &r->bo, w);
}

static void
rcm_event(void *ctx, struct rnic_cm *ep, struct cm_id *id, const struct cm_event *ev)
{
	struct rcm *r = ctx;

	(void)ep;
	if (ev->type == CM_EV_REQ_RCVD && !r->chan_taken) {
		r->chan_taken = 1;
		if (rnic_cm_chan_accept(&r->ch, id, &ev->msg->u.req) != 0)
			cm_reject(&r->ep.cm, id, CM_REJ_NO_RESOURCES, NULL, 0, NULL, 0);
		return;
	}
	if (id == r->ch.id) {
		rnic_cm_chan_event(&r->ch, id, ev);
		return;
	}
	switch (ev->type) {
	case CM_EV_REQ_RCVD:
		if (r->tid) { /* one test connection */
			cm_reject(&r->ep.cm, id, CM_REJ_NO_RESOURCES, NULL, 0, NULL, 0);
			return;
		}
		r->tid = id;
		r->t_req = ev->msg->u.req;
		r->t_req_pending = 1;
		break;
	case CM_EV_REP_RCVD:
		if (id != r->tid)
			return;
		r->t_peer_qpn = ev->msg->u.rep.local_qpn;
		r->t_peer_psn = ev->msg->u.rep.starting_psn;
		r->t_state = 2; /* rnic_oob_run_rcm brings the QP up and sends the RTU */
		break;
	case CM_EV_ESTABLISHED:
		if (id == r->tid)
			r->t_state = 2;
		break;
	case CM_EV_DREQ_RCVD:
	case CM_EV_DREP_RCVD:
		if (id == r->tid)
			r->t_state = 3;
		break;
	case CM_EV_REJ_RCVD:
	case CM_EV_TIMEOUT:
		if (id == r->tid) {
			r->t_state = -1;
			r->tid = NULL;
		}
		break;
	case CM_EV_TIMEWAIT_EXIT:
		if (id == r->tid)
			r->tid = NULL;
		break;
	default:
		break;
	}
}

static const struct rnic_cm_user rcm_user = {.event = rcm_event};

/* ---- the channel as the exchange's transport ---- */

static int
chan_write(void *arg, struct oob_conn *c, const void *buf, size_t n, const char *what)
{
	struct rcm *r = arg;
	uint64_t end = ms_now() + RCM_TIMEOUT_MS;
	int rc;

	while ((rc = rnic_cm_chan_send(&r->ch, buf, n)) == -EAGAIN && !dp_quit && ms_now() < end)
		serve(r);
	if (rc)
		return oob_fail(c, OOB_ERR_SYS, "cannot send %s on the rdma_cm channel: %s", what,
				r->ch.why[0] ? r->ch.why : strerror(-rc));
	while (r->ch.sends_out && r->ch.state == RNIC_CHAN_UP && !dp_quit && ms_now() < end)
		serve(r);
	if (r->ch.sends_out || r->ch.state != RNIC_CHAN_UP)
		return oob_fail(c, OOB_ERR_SYS, "sending %s on the rdma_cm channel failed: %s",
				what, r->ch.why[0] ? r->ch.why : "not completed");
	return OOB_OK;
}

static int
chan_read(void *arg, struct oob_conn *c, void *buf, size_t n, const char *what, int timeout_ms)
{
	struct rcm *r = arg;
	uint64_t end = ms_now() + (uint64_t)(timeout_ms > 0 ? timeout_ms : RCM_TIMEOUT_MS);
	uint8_t m[RNIC_CHAN_MSG_MAX];
	int len;

	while (!r->ch.rxn && r->ch.state == RNIC_CHAN_UP && !dp_quit && ms_now() < end)
		serve(r);
	if (!r->ch.rxn)
		return oob_fail(c, r->ch.state == RNIC_CHAN_UP ? OOB_ERR_TIMEOUT : OOB_ERR_EOF,
				"no %s from %s on the rdma_cm channel (%s)", what, c->peer,
				r->ch.why[0] ? r->ch.why : "timed out");
	len = rnic_cm_chan_recv(&r->ch, m, sizeof(m));
	if (len != (int)n)
		return oob_fail(c, OOB_ERR_PROTO, "%s from %s: a message of %d bytes, expected %zu",
				what, c->peer, len, n);
	memcpy(buf, m, n);
	c->got = n;
	return OOB_OK;
}

static const struct oob_msg_ops chan_ops = {.write = chan_write, .read = chan_read};

/* one key message exchange (client writes first) */
static int
xchg_key(struct rcm *r, const struct perftest_dest *mine, struct perftest_dest *theirs,
	 const char *what)
{
	uint8_t a[PERFTEST_KEY_MSG_BIN_LEN], b[PERFTEST_KEY_MSG_BIN_LEN];
	struct perftest_dest tmp;
	char perr[160];
	int rc;

	if (perftest_format_dest_bin(mine, r->p->gid_index, a, perr, sizeof(perr)) < 0)
		return oob_fail(&r->c, OOB_ERR_ARG, "%s", perr);
	rc = perftest_xchg_raw(&r->c, r->p->server[0] ? PERFTEST_CLIENT : PERFTEST_SERVER, a, b,
			       sizeof(a), what, RCM_TIMEOUT_MS);
	if (rc)
		return rc;
	if (perftest_parse_dest_bin(b, sizeof(b), theirs ? theirs : &tmp, NULL, perr, sizeof(perr)))
		return oob_fail(&r->c, OOB_ERR_PROTO, "%s from %s", perr, r->c.peer);
	return OOB_OK;
}

static int
wait_for(struct rcm *r, int *flag_ok, const char *what, char *err, size_t errlen)
{
	uint64_t end = ms_now() + RCM_TIMEOUT_MS;

	(void)flag_ok;
	while (!dp_quit && ms_now() < end) {
		if (!strcmp(what, "channel") && r->ch.state != RNIC_CHAN_CONNECTING &&
		    r->ch.state != RNIC_CHAN_IDLE)
			break;
		if (!strcmp(what, "test REQ") && (r->t_req_pending || r->t_state < 0))
			break;
		if (!strcmp(what, "test QP") && r->t_state != 1)
			break;
		if (!strcmp(what, "test close") && (r->t_state == 3 || r->t_state < 0))
			break;
		if (!strcmp(what, "channel close") && r->ch.state != RNIC_CHAN_UP)
			break;
		serve(r);
	}
	if (dp_quit) {
		snprintf(err, errlen, "stopped by a signal while waiting for the %s", what);
		return -EINTR;
	}
	return 0;
}

static int
test_connect(struct rcm *r, char *err, size_t errlen)
{
	struct rnic_run *run = r->run;
	struct perftest_dest d = run->local[0];
	int mtu;

	if (r->p->server[0]) { /* client: REQ for the test QP */
		struct cm_req req;
		struct ip_cm_hdr h;
		struct cm_dest cd;
		int rc;

		memset(&req, 0, sizeof(req));
		memset(&h, 0, sizeof(h));
		req.service_id = ip_cm_service_id(IP_CM_PS_TCP, (uint16_t)r->p->tcp_port);
		req.local_qpn = run->local[0].qpn;
		req.starting_psn = run->local[0].psn;
		if (r->p->mode == RNIC_MODE_READ_BW)
			req.responder_resources = req.initiator_depth = (uint8_t)r->p->outs;
		req.remote_cm_response_timeout = req.local_cm_response_timeout = 20;
		req.retry_count = req.rnr_retry_count = 7;
		req.max_cm_retries = 15;
		req.pkey = MAD_DEFAULT_PKEY;
		req.path_mtu = r->ch.route.path_mtu;
		rnic_cm_path(&r->ch.route, 19, &req.primary);
		h.ip_version = r->ch.route.sgid_index ? 6 : 4;
		h.src_port = (uint16_t)(0xc000 | ((r->p->seed + 1) & 0x3fff));
		memcpy(h.src_ip, r->ch.route.sgid, 16);
		memcpy(h.dst_ip, r->ch.route.dgid, 16);
		if (h.ip_version == 4) {
			memset(h.src_ip, 0, 12);
			memset(h.dst_ip, 0, 12);
		}
		ip_cm_compose(req.private_data, CM_REQ_PD, IP_CM_PS_TCP, &h, NULL, 0);
		rnic_cm_dest(&r->ch.route, &cd);
		r->t_state = 1;
		rc = cm_connect(&r->ep.cm, &req, &cd, NULL, &r->tid);
		if (rc) {
			snprintf(err, errlen, "cannot send the test QP's REQ: %s", strerror(-rc));
			return -EIO;
		}
		rnic_cm_kick(&r->ep);
		wait_for(r, NULL, "test QP", err, errlen);
		if (r->t_state != 2) {
			snprintf(err, errlen, "the test QP's connection through the CM failed");
			return -ECONNREFUSED;
		}
		/* the active side receives at its own PSN and sends at the REP's */
		d.qpn = r->t_peer_qpn;
		d.psn = run->local[0].psn;
		memcpy(d.gid, r->ch.route.dgid, 16);
		run->cm_sq_psn[0] = r->t_peer_psn;
		run->cm_psns = 1;
		mtu = r->ch.route.path_mtu;
		if (run->connect_qp(run->connect_arg, 0, &d, mtu) != 0)
			return -EIO;
		if (cm_rtu(&r->ep.cm, r->tid, NULL, 0) != 0) {
			snprintf(err, errlen, "cannot send the test QP's RTU");
			return -EIO;
		}
		rnic_cm_kick(&r->ep);
		return 0;
	}
	/* server: the test QP's REQ, then REP; the RTU establishes it */
	wait_for(r, NULL, "test REQ", err, errlen);
	if (!r->t_req_pending) {
		snprintf(err, errlen, "no REQ for the test QP from the client");
		return -ETIMEDOUT;
	}
	r->t_req_pending = 0;
	{
		struct cm_rep rep;

		d.qpn = r->t_req.local_qpn;
		d.psn = run->local[0].psn; /* we receive at our own PSN (named in the REP) */
		memcpy(d.gid, r->t_req.primary.local_gid, 16);
		run->cm_sq_psn[0] = r->t_req.starting_psn; /* and send at the REQ's */
		run->cm_psns = 1;
		mtu = r->t_req.path_mtu < r->ch.route.path_mtu || !r->ch.route.path_mtu
			  ? r->t_req.path_mtu
			  : r->ch.route.path_mtu;
		if (run->connect_qp(run->connect_arg, 0, &d, mtu) != 0)
			return -EIO;
		memset(&rep, 0, sizeof(rep));
		rep.local_qpn = run->local[0].qpn;
		rep.starting_psn = run->local[0].psn;
		rep.responder_resources = r->t_req.initiator_depth;
		rep.initiator_depth = r->t_req.responder_resources;
		rep.target_ack_delay = 15;
		rep.rnr_retry_count = 7;
		r->t_state = 1;
		if (cm_accept(&r->ep.cm, r->tid, &rep) != 0) {
			snprintf(err, errlen, "cannot send the test QP's REP");
			return -EIO;
		}
		rnic_cm_kick(&r->ep);
	}
	wait_for(r, NULL, "test QP", err, errlen);
	if (r->t_state != 2) {
		snprintf(err, errlen, "the test QP's connection through the CM failed (no RTU)");
		return -ECONNREFUSED;
	}
	return 0;
}

static int
chan_open(struct rcm *r, char *err, size_t errlen)
{
	const struct rnic_params *p = r->p;
	uint32_t psn = (uint32_t)((p->seed * 2654435761u + 0x5a17u) & 0xffffff);
	int rc;

	if (rnic_cm_chan_create(&r->ch, &r->ep, psn) != 0) {
		snprintf(err, errlen, "cannot create the rdma_cm channel QP");
		return -ENOMEM;
	}
	if (p->server[0]) {
		struct rnic_cm_route rt;
		uint8_t ip[16] = {[10] = 0xff, [11] = 0xff};
		struct in_addr a;
		uint64_t end = ms_now() + 3000;

		if (inet_pton(AF_INET, p->server, &a) != 1) {
			snprintf(err, errlen, "-R needs the server's IPv4 address, not \"%s\"",
				 p->server);
			return -EINVAL;
		}
		memcpy(ip + 12, &a, 4);
		while ((rc = rnic_cm_resolve(&r->ep, ip, &rt)) == -EAGAIN && ms_now() < end &&
		       !dp_quit)
			serve(r);
		if (rc) {
			snprintf(err, errlen, "peer %s does not answer ARP on the DPDK port (3 s)",
				 p->server);
			return -EHOSTUNREACH;
		}
		rc = rnic_cm_chan_connect(&r->ch, &rt, (uint16_t)p->tcp_port,
					  (uint16_t)(0xc000 | (p->seed & 0x3fff)));
		if (rc) {
			snprintf(err, errlen, "cannot send the REQ: %s", strerror(-rc));
			return -EIO;
		}
		snprintf(r->c.peer, sizeof(r->c.peer), "%.40s:%u", p->server, p->tcp_port);
	} else {
		if (cm_listen(&r->ep.cm, ip_cm_service_id(IP_CM_PS_TCP, (uint16_t)p->tcp_port),
			      ~0ull, NULL) < 0) {
			snprintf(err, errlen, "cannot listen on the CM");
			return -EADDRINUSE;
		}
		printf(" Waiting for client rdma_cm QP to connect on port %u... *\n", p->tcp_port);
		fflush(stdout);
		snprintf(r->c.peer, sizeof(r->c.peer), "the client");
	}
	wait_for(r, NULL, "channel", err, errlen);
	if (r->ch.state != RNIC_CHAN_UP) {
		snprintf(err, errlen, "the rdma_cm channel did not connect: %s",
			 r->ch.why[0] ? r->ch.why : "no peer");
		return -ECONNREFUSED;
	}
	r->c.msg = &chan_ops;
	r->c.msg_arg = r;
	return 0;
}

static int
mtu_enum_of(uint32_t mtu)
{
	int e = 1;

	while ((256u << (e - 1)) < mtu && e < 5)
		e++;
	return e;
}

static int
fail_x(struct rcm *r, int rc, char *err, size_t errlen)
{
	if (rc != OOB_OK)
		snprintf(err, errlen, "perftest -R exchange with %s: %s", r->c.peer,
			 r->c.err[0] ? r->c.err : "failed");
	return rc == OOB_OK ? 0 : -EPROTO;
}

int
rnic_oob_run_rcm(struct rnic_run *run, const struct rnic_params *p, char *err, size_t errlen)
{
	struct rcm *r = &R;
	enum perftest_role role = p->server[0] ? PERFTEST_CLIENT : PERFTEST_SERVER;
	struct rnic_bench *b = &run->bench;
	struct perftest_caps caps, rcaps;
	struct perftest_dest zero;
	char rv[PERFTEST_VERSION_LEN + 1], line[320];
	uint32_t rpage, rline;
	int rc, has = 0, rmtu;

	if (p->mode != RNIC_MODE_WRITE_BW && p->mode != RNIC_MODE_SEND_BW &&
	    p->mode != RNIC_MODE_READ_BW) {
		snprintf(err, errlen, "-R: only write_bw, send_bw and read_bw run over rdma_cm");
		return -EINVAL;
	}
	if (p->num_qps > 1 || p->bidirectional || p->all_sizes || p->duration_s || p->flows ||
	    run->lc) {
		snprintf(err, errlen,
			 "-R runs one QP, one size, -n iterations, one lcore: drop -q, -b, -a, -D, "
			 "--flows and --lcores");
		return -EINVAL;
	}
	memset(r, 0, sizeof(*r));
	r->run = run;
	r->p = p;
	dp_backoff_init(&r->bo, false);
	oob_conn_init(&r->c);
	rnic_cm_init(&r->ep, b->port, p->seed ^ 0x524d0000ull, &rcm_user, r);
	rc = chan_open(r, err, errlen);
	if (rc)
		return rc;
	/* version (the capability record in its padding), page size, cache line, MTU */
	perftest_caps_local(&caps, p->rec.ops, p->rec.fec, p->cc);
	rc = perftest_xchg_version_caps(&r->c, role, NULL, &caps, rv, &rcaps, &has);
	if (rc)
		return fail_x(r, rc, err, errlen);
	if (perftest_caps_negotiate(&caps, has ? &rcaps : NULL, r->c.peer,
				    "a standard perftest (no capability record)", &run->caps, line,
				    sizeof(line)) < 0) {
		snprintf(err, errlen, "%s", line);
		return -EPROTO;
	}
	if (line[0]) {
		printf("rnic: %s\n", line);
		fflush(stdout);
	}
	rc = perftest_xchg_sysdata(&r->c, role, 4096, 64, &rpage, &rline);
	if (!rc)
		rc = perftest_xchg_mtu(&r->c, role, mtu_enum_of(p->mtu), &rmtu);
	memset(&zero, 0, sizeof(zero));
	if (!rc)
		rc = xchg_key(r, &zero, NULL, "the key message before the test QP");
	if (rc)
		return fail_x(r, rc, err, errlen);
	rc = test_connect(r, err, errlen);
	if (rc)
		return rc;
	rc = xchg_key(r, &zero, NULL, "the key message after the test QP's connection");
	if (!rc && p->mode == RNIC_MODE_SEND_BW && !p->server[0]) {
		uint64_t n = p->rx_depth < p->iters ? p->rx_depth : p->iters;

		for (run->pre_posted = 0; run->pre_posted < n; run->pre_posted++)
			if (rnic_bench_post_recv_qp(b, 0, p->size, run->pre_posted) != 0) {
				snprintf(err, errlen, "cannot post the receives");
				return -EIO;
			}
	}
	for (int i = 0; i < 3 && !rc; i++)
		rc = xchg_key(r, &run->local[0], &run->remote[0], "the peer's key message");
	if (rc)
		return fail_x(r, rc, err, errlen);

	/* the traffic */
	b->peer_fd = -1;
	b->q[0].raddr = b->raddr = run->remote[0].vaddr;
	b->q[0].rkey = b->rkey = run->remote[0].rkey;
	if (p->server[0])
		rc = rnic_bench_bw_requester(b, p->size, &run->res);
	else if (p->mode == RNIC_MODE_SEND_BW)
		rc = rnic_bench_bw_responder(b, p->size, p->iters, run->pre_posted, &run->res);
	else
		while (!r->ch.rxn && r->ch.state == RNIC_CHAN_UP && !dp_quit)
			serve(r); /* the client's "done" key message ends it */
	if (rc) {
		snprintf(err, errlen, "the traffic failed");
		return -EIO;
	}
	for (int i = 0; i < 64; i++) /* the last ACKs and responses leave */
		rnic_port_poll(b->port);
	rc = xchg_key(r, &run->local[0], NULL, "the client's \"finished\" key message");
	if (!rc && p->mode != RNIC_MODE_SEND_BW) {
		struct perftest_report lrep;
		double k = p->report_gbits ? 8.0 * 1048576 / 1e9 : 1.0;

		memset(&lrep, 0, sizeof(lrep));
		lrep.size = p->size;
		lrep.iters = run->res.iters;
		lrep.bw_peak = run->res.bw_peak_mbps * k;
		lrep.bw_avg = run->res.bw_avg_mbps * k;
		lrep.msg_rate_avg = run->res.msg_rate_mpps;
		rc = perftest_xchg_report(&r->c, role, 0, &lrep, &run->peer_report, RCM_TIMEOUT_MS);
		if (!rc)
			rc = xchg_key(r, &run->local[0], NULL, "the closing key message");
	}
	if (rc)
		return fail_x(r, rc, err, errlen);

	/* the client disconnects the test QP, then the server the channel */
	if (p->server[0]) {
		if (r->tid && cm_disconnect(&r->ep.cm, r->tid, NULL, 0) == 0)
			rnic_cm_kick(&r->ep);
		wait_for(r, NULL, "test close", err, errlen);
		wait_for(r, NULL, "channel close", err, errlen);
	} else {
		wait_for(r, NULL, "test close", err, errlen);
		rnic_cm_chan_disconnect(&r->ch);
		wait_for(r, NULL, "channel close", err, errlen);
	}
	for (int i = 0; i < 64; i++)
		serve(r);
	return 0;
}
