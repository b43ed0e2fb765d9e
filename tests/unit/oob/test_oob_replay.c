/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file test_oob_replay.c
 * Replays the captured perftest 6.06 write_bw exchange (tests/golden/
 * rxe-ib_write_bw-4096.pcap, extracted to rxe_write_bw_4096.vec):
 *  - a fake server sends exactly the captured server bytes and checks that
 *    our client, given the capture's client values, sends exactly the
 *    captured client bytes, from the version string to "done";
 *  - a fake client sends the captured client bytes and checks our server's
 *    bytes against the captured server bytes (except the five report values
 *    a 6.06 server sends from uninitialised memory: ours are zeros).
 */
#include <string.h>

#include "oob_test_util.h"
#include "perftest_xchg.h"
#include "rw_test.h"

#ifndef OOB_VEC_DIR
#define OOB_VEC_DIR "."
#endif

static struct vec_msg vec[64];
static int nvec;
static const uint8_t zeros8[8];

static const struct vec_msg *
frame(int f)
{
	for (int i = 0; i < nvec; i++)
		if (vec[i].frame == f)
			return &vec[i];
	return NULL;
}

static uint64_t
be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static double
be_double(const uint8_t *p)
{
	uint64_t u = be64(p);
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

static struct perftest_dest
cap_client(void)
{
	struct perftest_dest d = {.lid = 0,
				  .out_reads = 1,
				  .qpn = 0x11,
				  .psn = 0x52e51e,
				  .rkey = 0x203,
				  .vaddr = 0x556fa0ce7000ull,
				  .srqn = 0};
	d.gid[10] = 0xff;
	d.gid[11] = 0xff;
	d.gid[12] = 10;
	d.gid[13] = 9;
	d.gid[15] = 3;
	return d;
}

static struct perftest_dest
cap_server(void)
{
	struct perftest_dest d = cap_client();
	d.psn = 0x65b02a;
	d.rkey = 0x273;
	d.vaddr = 0x564fd4bb9000ull;
	d.gid[15] = 2;
	return d;
}

/* The client's report in the capture: frames 49 (size) .. 57 (msgRate). */
static struct perftest_report
cap_report(void)
{
	struct perftest_report r;
	memset(&r, 0, sizeof(r));
	r.size = be64(frame(49)->data);
	r.iters = be64(frame(51)->data);
	r.bw_peak = be_double(frame(53)->data);
	r.bw_avg = be_double(frame(55)->data);
	r.msg_rate_avg = be_double(frame(57)->data);
	return r;
}

struct hook_log {
	int connect_at; /* session step index when connect_qps ran */
	int traffic_at;
	int n_connect, n_traffic;
	uint64_t traffic_size;
};

static int
h_connect(void *arg, const struct perftest_session *s)
{
	struct hook_log *l = arg;
	l->connect_at = (int)s->pos;
	l->n_connect++;
	return 0;
}

static int
h_traffic(void *arg, const struct perftest_session *s, uint64_t size, struct perftest_report *rep)
{
	struct hook_log *l = arg;
	l->traffic_at = (int)s->pos;
	l->n_traffic++;
	l->traffic_size = size;
	*rep = cap_report();
	return 0;
}

static void
t_load(void)
{
	nvec = vec_load(OOB_VEC_DIR "/rxe_write_bw_4096.vec", vec, 64);
	CHECK_EQ(nvec, 30);
	CHECK(frame(49) && frame(57) && frame(61) && frame(62));
}

static void
t_client_replay(void)
{
	struct fake_peer peer;
	struct oob_conn c;
	struct perftest_session s;
	struct perftest_params p;
	struct perftest_dest local = cap_client(), remote;
	struct hook_log log = {0};
	struct perftest_hooks h = {.arg = &log, .connect_qps = h_connect, .run_traffic = h_traffic};
	if (nvec != 30)
		return;

	peer_init(&peer);
	for (int i = 0; i < nvec; i++)
		peer_add(&peer, vec[i].side == 'C' ? PEER_EXPECT : PEER_SEND, vec[i].data,
			 vec[i].len);
	CHECK_EQ(peer_start_server(&peer), 0);

	struct oob_connect_opts o = test_connect_opts(3000);
	CHECK_EQ(show_err("connect", oob_connect(&c, "127.0.0.1", peer.port, &o), &c), OOB_OK);
	perftest_params_default(&p, PERFTEST_WRITE_BW, PERFTEST_CLIENT);
	p.size = 4096;
	p.wait_timeout_ms = 3000;
	CHECK_EQ(perftest_session_init(&s, &c, &p, &local, &remote), OOB_OK);
	CHECK_EQ(show_err("client handshake", perftest_client_handshake(&s, &h), &c), OOB_OK);
	/* the handshake stops right before the traffic: 3 key lines done, no traffic yet */
	CHECK_EQ(log.n_connect, 1);
	CHECK_EQ(log.n_traffic, 0);
	CHECK_EQ(s.plan[s.pos].kind, PERFTEST_STEP_TRAFFIC);
	CHECK_EQ(show_err("client finish", perftest_session_finish(&s, &h), &c), OOB_OK);
	oob_close(&c);
	peer_join(&peer);

	CHECK_EQ(peer.failed, 0);
	CHECK_EQ(peer.mismatch, -1);
	CHECK_EQ(peer.done_acts, (size_t)nvec);
	CHECK_EQ(log.n_traffic, 1);
	CHECK_EQ(log.traffic_size, 4096);
	CHECK_EQ(log.connect_at, 4); /* after version, sysdata, MTU and the first key line */
	CHECK_EQ(s.pos, s.nsteps);
	struct perftest_dest want = cap_server();
	CHECK(memcmp(&remote, &want, sizeof(want)) == 0);
	CHECK(strcmp(s.remote_version, "6.06") == 0);
	CHECK_EQ(s.remote_cycle_buffer, 4096);
	CHECK_EQ(s.remote_cache_line, 64);
	CHECK_EQ(s.remote_mtu, 3);
	CHECK_EQ(s.mtu, 3);
	CHECK_EQ(s.n_reports, 1);
}

static void
t_server_replay(void)
{
	struct fake_peer peer;
	struct oob_listener lst;
	struct oob_conn c;
	struct perftest_session s;
	struct perftest_params p;
	struct perftest_dest local = cap_server(), remote;
	struct hook_log log = {0};
	struct perftest_hooks h = {.arg = &log, .connect_qps = h_connect, .run_traffic = h_traffic};
	char err[OOB_ERR_LEN];
	if (nvec != 30)
		return;

	CHECK_EQ(oob_listen(&lst, "127.0.0.1", 0, err, sizeof(err)), OOB_OK);
	peer_init(&peer);
	for (int i = 0; i < nvec; i++) {
		int garbage = vec[i].side == 'S' && vec[i].len == 8; /* 6.06 server's report */
		if (vec[i].side == 'C')
			peer_add(&peer, PEER_SEND, vec[i].data, vec[i].len);
		else
			peer_add(&peer, PEER_EXPECT, garbage ? zeros8 : vec[i].data, vec[i].len);
	}
	CHECK_EQ(peer_start_client(&peer, lst.port), 0);
	CHECK_EQ(oob_accept(&lst, &c, 3000, 3000), OOB_OK);
	oob_listener_close(&lst);

	perftest_params_default(&p, PERFTEST_WRITE_BW, PERFTEST_SERVER);
	p.size = 4096;
	p.wait_timeout_ms = 3000;
	CHECK_EQ(perftest_session_init(&s, &c, &p, &local, &remote), OOB_OK);
	CHECK_EQ(show_err("server handshake", perftest_server_handshake(&s, &h), &c), OOB_OK);
	CHECK_EQ(log.n_connect, 1);
	CHECK_EQ(show_err("server finish", perftest_session_finish(&s, &h), &c), OOB_OK);
	oob_close(&c);
	peer_join(&peer);

	CHECK_EQ(peer.failed, 0);
	CHECK_EQ(peer.mismatch, -1);
	CHECK_EQ(peer.done_acts, (size_t)nvec);
	CHECK_EQ(log.n_traffic, 0); /* a write_bw server does not run traffic */
	struct perftest_dest want = cap_client();
	CHECK(memcmp(&remote, &want, sizeof(want)) == 0);
	struct perftest_report r = cap_report();
	CHECK_EQ(s.remote_report.size, 4096);
	CHECK_EQ(s.remote_report.iters, 5);
	CHECK(s.remote_report.bw_peak == r.bw_peak);
	CHECK(s.remote_report.bw_avg == r.bw_avg);
	CHECK(s.remote_report.msg_rate_avg == r.msg_rate_avg);
	CHECK(r.bw_peak > 1.79 && r.bw_peak < 1.80);		       /* MiB/s */
	CHECK(r.msg_rate_avg > 0.000413 && r.msg_rate_avg < 0.000415); /* Mpps */
}

/* The same capture through the single-step functions, as a main() would call them. */
static void
t_client_single_steps(void)
{
	struct fake_peer peer;
	struct oob_conn c;
	struct perftest_dest local = cap_client(), remote;
	struct perftest_report rep = cap_report(), rrep;
	char ver[PERFTEST_VERSION_LEN + 1];
	uint32_t cb, cl;
	int mtu;
	if (nvec != 30)
		return;
	peer_init(&peer);
	for (int i = 0; i < nvec; i++)
		peer_add(&peer, vec[i].side == 'C' ? PEER_EXPECT : PEER_SEND, vec[i].data,
			 vec[i].len);
	CHECK_EQ(peer_start_server(&peer), 0);
	struct oob_connect_opts o = test_connect_opts(3000);
	CHECK_EQ(oob_connect(&c, "127.0.0.1", peer.port, &o), OOB_OK);
	const enum perftest_role R = PERFTEST_CLIENT;
	CHECK_EQ(perftest_xchg_version(&c, R, NULL, ver), OOB_OK);
	CHECK_EQ(perftest_xchg_sysdata(&c, R, 4096, 64, &cb, &cl), OOB_OK);
	CHECK_EQ(perftest_xchg_mtu(&c, R, 3, &mtu), OOB_OK);
	for (int k = 0; k < 4; k++)
		CHECK_EQ(perftest_xchg_dest(&c, R, 0, &local, &remote, NULL, 3000), OOB_OK);
	CHECK_EQ(perftest_xchg_report(&c, R, 0, &rep, &rrep, 3000), OOB_OK);
	CHECK_EQ(perftest_xchg_dest(&c, R, 0, &local, &remote, NULL, 3000), OOB_OK);
	CHECK_EQ(show_err("done", perftest_xchg_done(&c, 3000), &c), OOB_OK);
	oob_close(&c);
	peer_join(&peer);
	CHECK_EQ(peer.mismatch, -1);
	CHECK_EQ(peer.failed, 0);
	CHECK_EQ(peer.done_acts, (size_t)nvec);
}

RW_TEST_MAIN(RW_TEST(t_load), RW_TEST(t_client_replay), RW_TEST(t_server_replay),
	     RW_TEST(t_client_single_steps))
