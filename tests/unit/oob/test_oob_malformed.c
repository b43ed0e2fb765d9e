/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file test_oob_malformed.c
 * Hostile or broken peers: wrong version, bad sizes, bad hex, unterminated
 * strings, short reads, silence (bounded timeouts), a closed port. Every case
 * must fail cleanly with a message that names what was expected.
 */
#include <string.h>
#include <time.h>

#include "oob_test_util.h"
#include "perftest_xchg.h"
#include "pingpong_xchg.h"
#include "rw_test.h"

/* a time bound here only catches a hang: the timeouts are checked by their return codes */
#define HANG_GUARD_MS 10000

static const uint8_t V606[16] = "6.06";
static const uint8_t V610[16] = "6.10";
static const uint8_t PAGE[4] = {0, 0, 0x10, 0};
static const uint8_t CLINE[4] = {0, 0, 0, 0x40};
static const uint8_t MTU3[2] = {'3', 0};
static const uint8_t KEY[108] =
    "0000:0001:000011:65b02a:00000273:0000564fd4bb9000:00:00:00:00:00:00:00:"
    "00:00:00:ff:ff:0a:09:00:02:00000000:";

static int64_t
ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Runs our write_bw client against a fake server that first answers the
 * prologue correctly for @p good_steps messages (version, page, cache line,
 * MTU, key line...) and then does whatever the caller added to @p peer.
 */
static int
client_vs(struct fake_peer *peer, int io_timeout_ms, char *err, size_t errlen)
{
	struct oob_conn c;
	struct perftest_session s;
	struct perftest_params p;
	struct perftest_dest local = {.qpn = 0x11, .psn = 1}, remote;
	struct oob_connect_opts o = test_connect_opts(io_timeout_ms);
	if (peer_start_server(peer))
		return -100;
	int rc = oob_connect(&c, "127.0.0.1", peer->port, &o);
	if (!rc) {
		perftest_params_default(&p, PERFTEST_WRITE_BW, PERFTEST_CLIENT);
		p.wait_timeout_ms = io_timeout_ms;
		rc = perftest_session_init(&s, &c, &p, &local, &remote);
		if (!rc)
			rc = perftest_session_run(&s, NULL);
	}
	snprintf(err, errlen, "%s", c.err);
	fprintf(stderr, "    (client said: %s)\n", c.err);
	oob_close(&c);
	peer_join(peer);
	return rc;
}

/* A fake server answering the prologue (the client's messages are not checked). */
static void
prologue(struct fake_peer *p, int upto)
{
	const struct {
		const uint8_t *d;
		size_t n;
	} m[] = {{V606, 16}, {PAGE, 4}, {CLINE, 4}, {MTU3, 2}, {KEY, 108}};
	for (int i = 0; i < upto && i < 5; i++) {
		peer_add(p, PEER_EXPECT, NULL, m[i].n);
		peer_add(p, PEER_SEND, m[i].d, m[i].n);
	}
}

static void
t_wrong_version(void)
{
	struct fake_peer p;
	char err[OOB_ERR_LEN];
	peer_init(&p);
	peer_add(&p, PEER_EXPECT, V606, 16); /* we send "6.06" zero-padded */
	peer_add(&p, PEER_SEND, V610, 16);
	CHECK_EQ(client_vs(&p, 1000, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "version mismatch") && strstr(err, "\"6.10\"") &&
	      strstr(err, "expected \"6.06\""));
	CHECK_EQ(p.mismatch, -1);
}

static void
t_unterminated_version(void)
{
	struct fake_peer p;
	char err[OOB_ERR_LEN];
	static const uint8_t junk[16] = "6.06xxxxxxxxxxxx";
	static const uint8_t trail[16] = {'6', '.', '0', '6', 0, 'x'};
	peer_init(&p);
	peer_add(&p, PEER_EXPECT, NULL, 16);
	peer_add(&p, PEER_SEND, junk, 16);
	CHECK_EQ(client_vs(&p, 1000, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "malformed perftest version") && strstr(err, "zero-padded"));
	peer_init(&p);
	peer_add(&p, PEER_EXPECT, NULL, 16);
	peer_add(&p, PEER_SEND, trail, 16);
	CHECK_EQ(client_vs(&p, 1000, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "malformed perftest version") != NULL);
}

static void
t_bad_sysdata_and_mtu(void)
{
	struct fake_peer p;
	char err[OOB_ERR_LEN];
	static const uint8_t zero4[4];
	static const uint8_t mtu9[2] = {'9', 0}, mtu3x[2] = {'3', 'x'};
	peer_init(&p);
	prologue(&p, 1);
	peer_add(&p, PEER_EXPECT, PAGE, 4); /* our page size is 4096 */
	peer_add(&p, PEER_SEND, zero4, 4);
	CHECK_EQ(client_vs(&p, 1000, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "page size") && strstr(err, "expected"));

	peer_init(&p);
	prologue(&p, 3);
	peer_add(&p, PEER_EXPECT, MTU3, 2);
	peer_add(&p, PEER_SEND, mtu9, 2);
	CHECK_EQ(client_vs(&p, 1000, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "bad MTU") && strstr(err, "'1'..'5'"));

	peer_init(&p);
	prologue(&p, 3);
	peer_add(&p, PEER_EXPECT, NULL, 2);
	peer_add(&p, PEER_SEND, mtu3x, 2);
	CHECK_EQ(client_vs(&p, 1000, err, sizeof(err)), OOB_ERR_PROTO);
}

static void
t_truncated_key_line_eof(void)
{
	struct fake_peer p;
	char err[OOB_ERR_LEN];
	peer_init(&p);
	prologue(&p, 4);
	peer_add(&p, PEER_EXPECT, NULL, 108);
	peer_add(&p, PEER_SEND, KEY, 50);
	peer_add(&p, PEER_CLOSE, NULL, 0);
	CHECK_EQ(client_vs(&p, 1000, err, sizeof(err)), OOB_ERR_EOF);
	CHECK(strstr(err, "closed the connection") && strstr(err, "got 50 of 108 bytes") &&
	      strstr(err, "key line of QP 0"));
}

static void
t_truncated_key_line_timeout(void)
{
	struct fake_peer p;
	char err[OOB_ERR_LEN];
	peer_init(&p);
	prologue(&p, 4);
	peer_add(&p, PEER_EXPECT, NULL, 108);
	peer_add(&p, PEER_SEND, KEY, 107); /* everything but the NUL, then silence */
	peer_sleep(&p, 1500);
	int64_t t0 = ms_now();
	CHECK_EQ(client_vs(&p, 300, err, sizeof(err)), OOB_ERR_TIMEOUT);
	int64_t took = ms_now() - t0;
	CHECK(strstr(err, "timed out after 300 ms") && strstr(err, "got 107 of 108 bytes"));
	/*
	 * That the 300 ms deadline fired is the return code and its message: without it the
	 * read would wait for the peer's close after its 1.5 s sleep (OOB_ERR_EOF). The time
	 * is only a hang guard, 10 s, loose enough for a loaded host.
	 */
	CHECK(took < HANG_GUARD_MS);
}

static void
t_silent_peer_timeout(void)
{
	struct fake_peer p;
	char err[OOB_ERR_LEN];
	peer_init(&p);
	peer_sleep(&p, 800);
	int64_t t0 = ms_now();
	CHECK_EQ(client_vs(&p, 200, err, sizeof(err)), OOB_ERR_TIMEOUT);
	CHECK(strstr(err, "the perftest version") && strstr(err, "got 0 of 16"));
	CHECK(ms_now() - t0 < HANG_GUARD_MS); /* a hang guard (the timeout: the return code) */
}

static void
t_non_hex_key_line(void)
{
	struct fake_peer p;
	char err[OOB_ERR_LEN];
	static uint8_t bad[108];
	memcpy(bad, KEY, 108);
	bad[30] = 'X'; /* inside the RKEY */
	peer_init(&p);
	prologue(&p, 4);
	peer_add(&p, PEER_EXPECT, NULL, 108);
	peer_add(&p, PEER_SEND, bad, 108);
	CHECK_EQ(client_vs(&p, 1000, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "RKEY") && strstr(err, "'X'") && strstr(err, "127.0.0.1"));
}

static void
t_key_line_changes(void)
{
	struct fake_peer p;
	char err[OOB_ERR_LEN];
	static uint8_t other[108];
	memcpy(other, KEY, 108);
	other[15] = '2'; /* QPN 0x11 -> 0x12 in the second exchange of QP 0 */
	peer_init(&p);
	prologue(&p, 5);
	peer_add(&p, PEER_EXPECT, NULL, 108);
	peer_add(&p, PEER_SEND, other, 108);
	CHECK_EQ(client_vs(&p, 1000, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "changed") != NULL);
}

static void
t_bad_done(void)
{
	struct fake_peer p;
	char err[OOB_ERR_LEN];
	static const uint8_t zeros8[8];
	static const uint8_t nope[5] = "DONE";
	peer_init(&p);
	prologue(&p, 5);
	for (int i = 0; i < 3; i++) {
		peer_add(&p, PEER_EXPECT, NULL, 108);
		peer_add(&p, PEER_SEND, KEY, 108);
	}
	for (int i = 0; i < 5; i++) {
		peer_add(&p, PEER_EXPECT, NULL, 8);
		peer_add(&p, PEER_SEND, zeros8, 8);
	}
	peer_add(&p, PEER_EXPECT, NULL, 108);
	peer_add(&p, PEER_SEND, KEY, 108);
	peer_add(&p, PEER_SEND, nope, 5);
	peer_add(&p, PEER_EXPECT, "done", 5);
	CHECK_EQ(client_vs(&p, 1000, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "expected \"done\\0\"") && strstr(err, "DONE"));
	CHECK_EQ(p.mismatch, -1);

	/* a peer that closes instead of sending "done" */
	peer_init(&p);
	prologue(&p, 5);
	for (int i = 0; i < 3; i++) {
		peer_add(&p, PEER_EXPECT, NULL, 108);
		peer_add(&p, PEER_SEND, KEY, 108);
	}
	for (int i = 0; i < 5; i++) {
		peer_add(&p, PEER_EXPECT, NULL, 8);
		peer_add(&p, PEER_SEND, zeros8, 8);
	}
	peer_add(&p, PEER_EXPECT, NULL, 108);
	peer_add(&p, PEER_SEND, KEY, 108);
	peer_add(&p, PEER_EXPECT, "done", 5);
	peer_add(&p, PEER_CLOSE, NULL, 0);
	CHECK_EQ(client_vs(&p, 1000, err, sizeof(err)), OOB_ERR_EOF);
	CHECK(strstr(err, "\"done\"") != NULL);
}

/* Our server against a fake client. */
static int
server_vs(struct fake_peer *peer, int io_timeout_ms, char *err, size_t errlen)
{
	struct oob_listener lst;
	struct oob_conn c;
	struct perftest_session s;
	struct perftest_params p;
	struct perftest_dest local = {.qpn = 0x22}, remote;
	if (oob_listen(&lst, "127.0.0.1", 0, err, errlen))
		return -100;
	peer_start_client(peer, lst.port);
	int rc = oob_accept(&lst, &c, 2000, io_timeout_ms);
	oob_listener_close(&lst);
	if (!rc) {
		perftest_params_default(&p, PERFTEST_SEND_BW, PERFTEST_SERVER);
		p.wait_timeout_ms = io_timeout_ms;
		rc = perftest_session_init(&s, &c, &p, &local, &remote);
		if (!rc)
			rc = perftest_session_run(&s, NULL);
	}
	snprintf(err, errlen, "%s", c.err);
	fprintf(stderr, "    (server said: %s)\n", c.err);
	oob_close(&c);
	peer_join(peer);
	return rc;
}

static void
t_server_side(void)
{
	struct fake_peer p;
	char err[OOB_ERR_LEN];
	static const uint8_t v5[16] = "5.60";
	static uint8_t badkey[108];

	/* an old client: we answer with our version, then refuse */
	peer_init(&p);
	peer_add(&p, PEER_SEND, v5, 16);
	peer_add(&p, PEER_EXPECT, V606, 16);
	CHECK_EQ(server_vs(&p, 1000, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "\"5.60\"") && strstr(err, "expected \"6.06\""));
	CHECK_EQ(p.mismatch, -1);

	/* a key line with a NUL in the middle */
	memcpy(badkey, KEY, 108);
	badkey[5] = 0;
	peer_init(&p);
	peer_add(&p, PEER_SEND, V606, 16);
	peer_add(&p, PEER_EXPECT, NULL, 16);
	peer_add(&p, PEER_SEND, PAGE, 4);
	peer_add(&p, PEER_EXPECT, NULL, 4);
	peer_add(&p, PEER_SEND, CLINE, 4);
	peer_add(&p, PEER_EXPECT, NULL, 4);
	peer_add(&p, PEER_SEND, MTU3, 2);
	peer_add(&p, PEER_EXPECT, NULL, 2);
	peer_add(&p, PEER_SEND, badkey, 108);
	CHECK_EQ(server_vs(&p, 1000, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "out_reads") && strstr(err, "0x00"));

	/* a client that connects and says nothing */
	peer_init(&p);
	peer_sleep(&p, 700);
	int64_t t0 = ms_now();
	CHECK_EQ(server_vs(&p, 150, err, sizeof(err)), OOB_ERR_TIMEOUT);
	CHECK(ms_now() - t0 < HANG_GUARD_MS); /* a hang guard (the timeout: the return code) */
	CHECK(strstr(err, "timed out after 150 ms") != NULL);
}

static void
t_connect_refused(void)
{
	struct oob_listener lst;
	struct oob_conn c;
	char err[OOB_ERR_LEN];
	/* a port that was just free: listen, note, close */
	CHECK_EQ(oob_listen(&lst, "127.0.0.1", 0, err, sizeof(err)), OOB_OK);
	uint16_t port = lst.port;
	oob_listener_close(&lst);
	struct oob_connect_opts o = {.connect_timeout_ms = 500, .retries = 2, .retry_delay_ms = 10};
	CHECK_EQ(oob_connect(&c, "127.0.0.1", port, &o), OOB_ERR_SYS);
	char want[80];
	snprintf(want, sizeof(want), "cannot connect to 127.0.0.1:%u: Connection refused", port);
	CHECK(strcmp(c.err, want) == 0);
	fprintf(stderr, "    (%s)\n", c.err);
	CHECK_EQ(oob_connect(&c, "", port, &o), OOB_ERR_ARG);
}

static void
t_accept_timeout(void)
{
	struct oob_listener lst;
	struct oob_conn c;
	char err[OOB_ERR_LEN];
	CHECK_EQ(oob_listen(&lst, "127.0.0.1", 0, err, sizeof(err)), OOB_OK);
	int64_t t0 = ms_now();
	CHECK_EQ(oob_accept(&lst, &c, 100, 100), OOB_ERR_TIMEOUT);
	CHECK(ms_now() - t0 < 1000);
	CHECK(strstr(c.err, "no client connected") != NULL);
	oob_listener_close(&lst);
	/* listening on an address we do not have */
	CHECK(oob_listen(&lst, "192.0.2.1", 0, err, sizeof(err)) != OOB_OK);
	CHECK(strstr(err, "cannot listen on 192.0.2.1") != NULL);
}

static void
t_pingpong_hostile(void)
{
	struct fake_peer p;
	struct oob_conn c;
	struct pingpong_dest local = {.qpn = 1}, remote;
	static const uint8_t good[52] = "0000:000011:8d6f45:00000000000000000000ffff7f000001";
	static uint8_t bad[52];
	struct oob_connect_opts o = test_connect_opts(500);

	/* client side: the server's answer has an upper-case digit */
	memcpy(bad, good, 52);
	bad[40] = 'F';
	peer_init(&p);
	peer_add(&p, PEER_EXPECT, NULL, 52);
	peer_add(&p, PEER_SEND, bad, 52);
	CHECK_EQ(peer_start_server(&p), 0);
	CHECK_EQ(oob_connect(&c, "127.0.0.1", p.port, &o), OOB_OK);
	CHECK_EQ(pingpong_client_exchange(&c, &local, &remote), OOB_ERR_PROTO);
	CHECK(strstr(c.err, "GID") && strstr(c.err, "0x46"));
	oob_close(&c);
	peer_join(&p);

	/* server side: the client sends 20 bytes and hangs up */
	struct oob_listener lst;
	char err[OOB_ERR_LEN];
	CHECK_EQ(oob_listen(&lst, "127.0.0.1", 0, err, sizeof(err)), OOB_OK);
	peer_init(&p);
	peer_add(&p, PEER_SEND, good, 20);
	peer_add(&p, PEER_CLOSE, NULL, 0);
	peer_start_client(&p, lst.port);
	CHECK_EQ(oob_accept(&lst, &c, 2000, 500), OOB_OK);
	CHECK_EQ(pingpong_server_exchange(&c, &local, &remote, NULL, NULL), OOB_ERR_EOF);
	CHECK(strstr(c.err, "got 20 of 52 bytes") != NULL);
	oob_close(&c);
	peer_join(&p);

	/* server side: wrong "done" */
	peer_init(&p);
	peer_add(&p, PEER_SEND, good, 52);
	peer_add(&p, PEER_EXPECT, NULL, 52);
	peer_add(&p, PEER_SEND, "fini", 5);
	peer_start_client(&p, lst.port);
	CHECK_EQ(oob_accept(&lst, &c, 2000, 500), OOB_OK);
	CHECK_EQ(pingpong_server_exchange(&c, &local, &remote, NULL, NULL), OOB_ERR_PROTO);
	CHECK(strstr(c.err, "expected \"done\\0\"") != NULL);
	oob_close(&c);
	peer_join(&p);
	oob_listener_close(&lst);
}

RW_TEST_MAIN(RW_TEST(t_wrong_version), RW_TEST(t_unterminated_version),
	     RW_TEST(t_bad_sysdata_and_mtu), RW_TEST(t_truncated_key_line_eof),
	     RW_TEST(t_truncated_key_line_timeout), RW_TEST(t_silent_peer_timeout),
	     RW_TEST(t_non_hex_key_line), RW_TEST(t_key_line_changes), RW_TEST(t_bad_done),
	     RW_TEST(t_server_side), RW_TEST(t_connect_refused), RW_TEST(t_accept_timeout),
	     RW_TEST(t_pingpong_hostile))
