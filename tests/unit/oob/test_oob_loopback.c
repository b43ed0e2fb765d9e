/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file test_oob_loopback.c
 * Our perftest client against our perftest server on 127.0.0.1 for every
 * test type and the options that change the exchange (-q, -b, -a), checking
 * the number of key-line exchanges against what the real 6.06 binaries did
 * (recorded with tests/unit/oob/fake_verbs.c), the hook order, and that each
 * side ends up with the other's QP details and report. Then
 * ibv_rc_pingpong's exchange, our client against our server.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oob_test_util.h"
#include "perftest_xchg.h"
#include "pingpong_xchg.h"
#include "rw_test.h"

struct variant {
	enum perftest_test t;
	unsigned q;
	int duplex, run_all;
	unsigned key_lines; /* key-line exchanges the real 6.06 binaries made */
	unsigned reports;   /* report exchanges */
	int done;	    /* "done" at the end */
};

static const struct variant variants[] = {
    {PERFTEST_WRITE_BW, 1, 0, 0, 5, 1, 1},  {PERFTEST_WRITE_BW, 2, 0, 0, 7, 1, 1},
    {PERFTEST_WRITE_BW, 1, 1, 0, 5, 1, 1},  {PERFTEST_WRITE_BW, 2, 1, 0, 7, 1, 1},
    {PERFTEST_WRITE_BW, 1, 0, 1, 5, 1, 1},  {PERFTEST_WRITE_BW, 1, 1, 1, 50, 23, 1},
    {PERFTEST_READ_BW, 1, 0, 0, 5, 1, 1},   {PERFTEST_READ_BW, 2, 0, 0, 7, 1, 1},
    {PERFTEST_READ_BW, 2, 1, 0, 7, 1, 1},   {PERFTEST_READ_BW, 1, 0, 1, 5, 1, 1},
    {PERFTEST_ATOMIC_BW, 1, 0, 0, 5, 1, 1}, {PERFTEST_ATOMIC_BW, 2, 0, 0, 7, 1, 1},
    {PERFTEST_ATOMIC_BW, 1, 1, 0, 5, 1, 1}, {PERFTEST_SEND_BW, 1, 0, 0, 5, 0, 1},
    {PERFTEST_SEND_BW, 2, 0, 0, 7, 0, 1},   {PERFTEST_SEND_BW, 1, 1, 0, 5, 1, 1},
    {PERFTEST_SEND_BW, 2, 1, 0, 7, 1, 1},   {PERFTEST_SEND_BW, 1, 0, 1, 50, 0, 1},
    {PERFTEST_SEND_BW, 1, 1, 1, 50, 23, 1}, {PERFTEST_WRITE_LAT, 1, 0, 0, 4, 0, 0},
    {PERFTEST_WRITE_LAT, 1, 0, 1, 4, 0, 0}, {PERFTEST_SEND_LAT, 1, 0, 0, 5, 0, 1},
    {PERFTEST_SEND_LAT, 1, 0, 1, 27, 0, 1}, {PERFTEST_READ_LAT, 1, 0, 0, 5, 0, 1},
    {PERFTEST_READ_LAT, 1, 0, 1, 5, 0, 1},  {PERFTEST_ATOMIC_LAT, 1, 0, 0, 5, 0, 1},
};

#define MAXQ 4

struct side {
	struct perftest_params p;
	struct perftest_dest local[MAXQ], remote[MAXQ];
	struct perftest_session s;
	struct oob_conn c;
	int rc;
	/* hook log */
	int n_connect, n_post, n_traffic;
	int order_ok; /* connect before any post_recv/traffic, post_recv before its traffic */
	uint64_t last_post_size;
};

static int
h_connect(void *arg, const struct perftest_session *s)
{
	struct side *d = arg;
	d->n_connect++;
	if (d->n_post || d->n_traffic)
		d->order_ok = 0;
	/* the remote details are complete when connecting */
	for (unsigned i = 0; i < s->p.num_qps; i++)
		if (!s->remote_seen[i])
			d->order_ok = 0;
	return 0;
}

static int
h_post(void *arg, const struct perftest_session *s, uint64_t size)
{
	struct side *d = arg;
	(void)s;
	if (!d->n_connect)
		d->order_ok = 0;
	d->n_post++;
	d->last_post_size = size;
	return 0;
}

static int
h_traffic(void *arg, const struct perftest_session *s, uint64_t size, struct perftest_report *rep)
{
	struct side *d = arg;
	if (!d->n_connect)
		d->order_ok = 0;
	/* send tests: the receives for this size are posted first (server, or -b) */
	if ((s->p.test == PERFTEST_SEND_BW || s->p.test == PERFTEST_SEND_LAT) &&
	    (s->p.role == PERFTEST_SERVER || s->p.duplex || s->p.test == PERFTEST_SEND_LAT) &&
	    d->last_post_size != size)
		d->order_ok = 0;
	d->n_traffic++;
	rep->size = size;
	rep->iters = 1000 + (uint64_t)d->n_traffic;
	rep->bw_peak = s->p.role == PERFTEST_CLIENT ? 1234.5 : 999.25;
	rep->bw_avg = 1000.0 + d->n_traffic;
	rep->msg_rate_avg = 0.125;
	return 0;
}

static void
fill_local(struct side *d, uint32_t base)
{
	for (unsigned i = 0; i < MAXQ; i++) {
		struct perftest_dest *l = &d->local[i];
		memset(l, 0, sizeof(*l));
		l->out_reads = 16;
		l->qpn = base + i;
		l->psn = (base * 7919u + i) & 0xffffff;
		l->rkey = 0x1000 + base + i;
		l->vaddr = 0x7f0000000000ull + ((uint64_t)base << 20) + i * 0x10000;
		l->gid[10] = l->gid[11] = 0xff;
		l->gid[12] = 127;
		l->gid[15] = (uint8_t)(base & 0xff);
	}
}

static struct perftest_hooks
hooks_for(struct side *d)
{
	struct perftest_hooks h = {
	    .arg = d, .connect_qps = h_connect, .post_recv = h_post, .run_traffic = h_traffic};
	return h;
}

static void *
server_main(void *arg)
{
	struct side *d = arg;
	struct perftest_hooks h = hooks_for(d);
	d->rc = perftest_session_init(&d->s, &d->c, &d->p, d->local, d->remote);
	if (!d->rc)
		d->rc = perftest_server_handshake(&d->s, &h);
	if (!d->rc)
		d->rc = perftest_session_finish(&d->s, &h);
	show_err("server", d->rc, &d->c);
	oob_close(&d->c);
	return NULL;
}

static unsigned
count_dests(const struct perftest_session *s)
{
	unsigned n = 0;
	for (size_t i = 0; i < s->nsteps; i++)
		n += s->plan[i].kind == PERFTEST_STEP_DEST;
	return n;
}

static void
run_variant(const struct variant *v)
{
	static struct side cl, sv;
	struct oob_listener lst;
	char err[OOB_ERR_LEN];
	pthread_t th;
	unsigned nsizes = v->run_all ? 23 : 1;

	memset(&cl, 0, sizeof(cl));
	memset(&sv, 0, sizeof(sv));
	cl.order_ok = sv.order_ok = 1;
	perftest_params_default(&cl.p, v->t, PERFTEST_CLIENT);
	perftest_params_default(&sv.p, v->t, PERFTEST_SERVER);
	cl.p.num_qps = sv.p.num_qps = v->q;
	cl.p.duplex = sv.p.duplex = v->duplex;
	cl.p.run_all = sv.p.run_all = v->run_all;
	cl.p.wait_timeout_ms = sv.p.wait_timeout_ms = 5000;
	cl.p.mtu = 5;
	sv.p.mtu = 3;
	sv.p.cycle_buffer = 65536; /* e.g. a 64 KiB-page peer */
	cl.p.cache_line = 128;
	fill_local(&cl, 0x100);
	fill_local(&sv, 0x200);

	CHECK_EQ(oob_listen(&lst, "127.0.0.1", 0, err, sizeof(err)), OOB_OK);
	struct oob_connect_opts o = test_connect_opts(3000);
	CHECK_EQ(oob_connect(&cl.c, "127.0.0.1", lst.port, &o), OOB_OK);
	CHECK_EQ(oob_accept(&lst, &sv.c, 3000, 3000), OOB_OK);
	oob_listener_close(&lst);
	pthread_create(&th, NULL, server_main, &sv);

	struct perftest_hooks h = hooks_for(&cl);
	cl.rc = perftest_session_init(&cl.s, &cl.c, &cl.p, cl.local, cl.remote);
	if (!cl.rc)
		cl.rc = perftest_client_handshake(&cl.s, &h);
	if (!cl.rc)
		cl.rc = perftest_session_finish(&cl.s, &h);
	show_err("client", cl.rc, &cl.c);
	oob_close(&cl.c);
	pthread_join(th, NULL);

	CHECK_EQ(cl.rc, OOB_OK);
	CHECK_EQ(sv.rc, OOB_OK);
	CHECK_EQ(count_dests(&cl.s), v->key_lines);
	CHECK_EQ(count_dests(&sv.s), v->key_lines);
	CHECK_EQ(cl.s.n_reports, v->reports);
	CHECK_EQ(sv.s.n_reports, v->reports);
	CHECK_EQ(cl.s.plan[cl.s.nsteps - 1].kind == PERFTEST_STEP_DONE, v->done);
	CHECK(memcmp(cl.remote, sv.local, v->q * sizeof(cl.remote[0])) == 0);
	CHECK(memcmp(sv.remote, cl.local, v->q * sizeof(sv.remote[0])) == 0);
	CHECK_EQ(cl.n_connect, 1);
	CHECK_EQ(sv.n_connect, 1);
	CHECK(cl.order_ok);
	CHECK(sv.order_ok);
	CHECK_EQ(cl.s.mtu, 3);
	CHECK_EQ(sv.s.mtu, 3);
	CHECK_EQ(cl.s.cycle_buffer, 65536);
	CHECK_EQ(sv.s.cache_line, 128);
	/* who runs traffic */
	int bw = perftest_test_is_bw(v->t);
	int server_runs = v->duplex || v->t == PERFTEST_SEND_BW || v->t == PERFTEST_WRITE_LAT ||
			  v->t == PERFTEST_SEND_LAT;
	CHECK_EQ(cl.n_traffic, (int)nsizes);
	CHECK_EQ(sv.n_traffic, server_runs ? (int)nsizes : 0);
	if (bw && v->reports) {
		/* the server learns the client's numbers */
		CHECK(sv.s.remote_report.bw_peak == 1234.5);
		CHECK_EQ(sv.s.remote_report.iters, 1000 + nsizes);
		CHECK_EQ(sv.s.remote_report.size, v->run_all ? (1u << 23) : cl.p.size);
		if (v->duplex)
			CHECK(cl.s.remote_report.bw_peak == 999.25);
	}
}

static void
t_all_variants(void)
{
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		unsigned f0 = rw_t_fail;
		run_variant(&variants[i]);
		if (rw_t_fail != f0)
			fprintf(stderr, "  ... in variant %zu: %s -q %u%s%s\n", i,
				perftest_test_name(variants[i].t), variants[i].q,
				variants[i].duplex ? " -b" : "", variants[i].run_all ? " -a" : "");
	}
}

/* ---- ibv_rc_pingpong ---- */

struct pp_side {
	struct oob_conn c;
	struct pingpong_dest local, remote;
	int rc, connected_before_reply;
};

static int
pp_connect(void *arg, const struct pingpong_dest *remote)
{
	struct pp_side *d = arg;
	d->connected_before_reply = remote->qpn == 0x1234;
	return 0;
}

static void *
pp_server(void *arg)
{
	struct pp_side *d = arg;
	d->rc = pingpong_server_exchange(&d->c, &d->local, &d->remote, pp_connect, d);
	show_err("pingpong server", d->rc, &d->c);
	oob_close(&d->c);
	return NULL;
}

static void
t_pingpong(void)
{
	struct pp_side cl, sv;
	struct oob_listener lst;
	char err[OOB_ERR_LEN];
	pthread_t th;
	memset(&cl, 0, sizeof(cl));
	memset(&sv, 0, sizeof(sv));
	cl.local.qpn = 0x1234;
	cl.local.psn = 0xabcdef;
	cl.local.gid[15] = 9;
	sv.local.lid = 0x17;
	sv.local.qpn = 0xfffffe;
	sv.local.psn = 0;
	CHECK_EQ(oob_listen(&lst, "127.0.0.1", 0, err, sizeof(err)), OOB_OK);
	struct oob_connect_opts o = test_connect_opts(3000);
	CHECK_EQ(oob_connect(&cl.c, "127.0.0.1", lst.port, &o), OOB_OK);
	CHECK_EQ(oob_accept(&lst, &sv.c, 3000, 3000), OOB_OK);
	oob_listener_close(&lst);
	pthread_create(&th, NULL, pp_server, &sv);
	cl.rc = pingpong_client_exchange(&cl.c, &cl.local, &cl.remote);
	show_err("pingpong client", cl.rc, &cl.c);
	oob_close(&cl.c);
	pthread_join(th, NULL);
	CHECK_EQ(cl.rc, OOB_OK);
	CHECK_EQ(sv.rc, OOB_OK);
	CHECK(memcmp(&cl.remote, &sv.local, sizeof(cl.remote)) == 0);
	CHECK(memcmp(&sv.remote, &cl.local, sizeof(sv.remote)) == 0);
	CHECK_EQ(sv.connected_before_reply, 1);
}

/* oob_listener.wait: called while nobody connects; nonzero stops the accept */
struct wait_count {
	int calls, stop_after;
	const char *connect_port; /* connect from the hook at call 3 (NULL: never) */
	struct oob_conn c;
};

static int
count_wait(void *arg)
{
	struct wait_count *w = arg;

	if (++w->calls == 3 && w->connect_port) {
		struct oob_connect_opts o = test_connect_opts(3000);

		CHECK_EQ(oob_connect(&w->c, "127.0.0.1", (uint16_t)atoi(w->connect_port), &o),
			 OOB_OK);
	}
	return w->stop_after && w->calls >= w->stop_after;
}

static void
t_accept_wait_hook(void)
{
	struct oob_listener lst;
	struct oob_conn sv;
	char err[128], port[8];
	struct wait_count w = {.stop_after = 5};

	CHECK_EQ(oob_listen(&lst, "127.0.0.1", 0, err, sizeof(err)), OOB_OK);
	lst.wait = count_wait;
	lst.wait_arg = &w;
	CHECK_EQ(oob_accept(&lst, &sv, 3000, 3000), OOB_ERR_STOPPED);
	CHECK_EQ(w.calls, 5);
	CHECK(strstr(sv.err, "stopped while waiting") != NULL);

	/* a client that connects while the hook runs is accepted */
	snprintf(port, sizeof(port), "%u", lst.port);
	w = (struct wait_count){.connect_port = port};
	oob_conn_init(&w.c);
	CHECK_EQ(oob_accept(&lst, &sv, 3000, 3000), OOB_OK);
	CHECK(w.calls >= 3);
	oob_close(&sv);
	oob_close(&w.c);

	/* the deadline still holds: a hook that never stops times out */
	w = (struct wait_count){0};
	CHECK_EQ(oob_accept(&lst, &sv, 50, 3000), OOB_ERR_TIMEOUT);
	CHECK(w.calls > 1);
	oob_listener_close(&lst);
}

RW_TEST_MAIN(RW_TEST(t_all_variants), RW_TEST(t_pingpong), RW_TEST(t_accept_wait_hook))
