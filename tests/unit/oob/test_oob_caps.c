/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file test_oob_caps.c
 * The capability record in perftest's version padding (perftest_caps.h):
 * byte layout, the local record built from lib/roce's registry (a recovery
 * mode registered under a table name joins by itself), the negotiation
 * rules, hostile and garbled records, two of our sessions agreeing on a
 * mode over TCP, and the fallback against the recorded rxe exchange.
 */
#include <errno.h>
#include <string.h>

#include "oob_test_util.h"
#include "perftest_caps.h"
#include "perftest_xchg.h"
#include "roce_fec.h"
#include "roce_recovery.h"
#include "rw_test.h"

static const uint8_t PAGE[4] = {0, 0, 0x10, 0};
static const uint8_t CLINE[4] = {0, 0, 0, 0x40};
static const uint8_t MTU3[2] = {'3', 0};

/* ---- a do-nothing recovery, registered under a table name that is not yet taken ---- */
static void
f_init(struct roce_qp *qp, void *priv)
{
	(void)qp;
	(void)priv;
}
static void
f_sent(struct roce_qp *qp, void *priv, uint32_t psn, uint32_t next, bool retx)
{
	(void)qp;
	(void)priv;
	(void)psn;
	(void)next;
	(void)retx;
}
static void
f_acked(struct roce_qp *qp, void *priv, uint32_t una)
{
	(void)qp;
	(void)priv;
	(void)una;
}
static bool
f_lost(struct roce_qp *qp, void *priv, uint32_t psn, uint32_t nxt, enum roce_loss_kind kind)
{
	(void)qp;
	(void)priv;
	(void)psn;
	(void)nxt;
	(void)kind;
	return false;
}
static bool
f_next(struct roce_qp *qp, void *priv, uint32_t una, uint32_t nxt, uint32_t *psn)
{
	(void)qp;
	(void)priv;
	(void)una;
	(void)nxt;
	(void)psn;
	return false;
}
static enum roce_rx_verdict
f_rx(struct roce_qp *qp, void *priv, uint32_t epsn, uint32_t psn)
{
	(void)qp;
	(void)priv;
	(void)epsn;
	(void)psn;
	return ROCE_RXV_DROP;
}
static void
f_nak(struct roce_qp *qp, void *priv, uint32_t psn)
{
	(void)qp;
	(void)priv;
	(void)psn;
}
static struct roce_recovery_ops fake_ops[PERFTEST_CAPS_NAMES];

/* Registers a fake mode under every table name lib/roce does not have yet. */
static void
register_all_table_modes(void)
{
	for (int i = 0; i < PERFTEST_CAPS_NAMES; i++) {
		const char *n = perftest_caps_recovery_names[i];
		if (!n || roce_recovery_find(n))
			continue;
		fake_ops[i] = (struct roce_recovery_ops){.name = n,
							 .init = f_init,
							 .tx_sent = f_sent,
							 .tx_acked = f_acked,
							 .tx_lost = f_lost,
							 .tx_next = f_next,
							 .rx_packet = f_rx,
							 .rx_nak_sent = f_nak};
		CHECK_EQ(roce_recovery_register(&fake_ops[i]), 0);
	}
}

static uint8_t
registered_bits(void)
{
	uint8_t b = 0;
	for (int i = 0; i < PERFTEST_CAPS_NAMES; i++)
		if (perftest_caps_recovery_names[i] &&
		    roce_recovery_find(perftest_caps_recovery_names[i]))
			b |= (uint8_t)(1u << i);
	return b;
}

static void
t_table(void)
{
	/* wire-stable bit numbers */
	CHECK_EQ(perftest_caps_index(perftest_caps_recovery_names, "gbn"), 0);
	CHECK_EQ(perftest_caps_index(perftest_caps_recovery_names, "gbone"), 1);
	CHECK_EQ(perftest_caps_index(perftest_caps_recovery_names, "irn"), 2);
	CHECK_EQ(perftest_caps_index(perftest_caps_recovery_names, "nope"), -1);
	CHECK_EQ(perftest_caps_index(perftest_caps_recovery_names, NULL), -1);
	CHECK_EQ(perftest_caps_index(perftest_caps_cc_names, "none"), 0);
}

/*
 * --recovery as rnic_configure() resolves it (the "fec+" prefix off, the mode's ops),
 * then the local record; a name lib/roce lacks becomes a stand-in of that name.
 */
static void
caps_local(struct perftest_caps *c, const char *rec, const char *cc)
{
	static struct roce_recovery_ops unknown;
	bool fec = rec && strncmp(rec, "fec+", 4) == 0;
	const char *base = rec ? rec + (fec ? 4 : 0) : NULL;
	const struct roce_recovery_ops *ops = roce_recovery_find(base);

	if (!ops && base) {
		unknown.name = base;
		ops = &unknown;
	}
	perftest_caps_local(c, ops, fec, cc);
}

static void
t_local_from_registry(void)
{
	struct perftest_caps c;
	int irn = perftest_caps_index(perftest_caps_recovery_names, "irn");
	int had_irn = roce_recovery_find("irn") != NULL;

	caps_local(&c, "gbn", "none");
	CHECK_EQ(c.version, PERFTEST_CAPS_VERSION);
	CHECK_EQ(c.recovery, registered_bits());
	CHECK(c.recovery & 1); /* gbn is always there */
	CHECK_EQ(c.recovery_req, 0);
	CHECK(c.cc & 1); /* "none" */
	CHECK_EQ(c.cc_req, 0);
	CHECK_EQ(c.fec, 0);
	CHECK_EQ(c.vrp, 0);
	/* a request lib/roce cannot serve is no request */
	caps_local(&c, had_irn ? "nope" : "irn", "none");
	CHECK_EQ(c.recovery_req, PERFTEST_CAPS_NONE);
	/* registering a mode under a table name is all it takes to offer it */
	register_all_table_modes();
	caps_local(&c, "irn", "none");
	CHECK(c.recovery >> irn & 1);
	CHECK(c.recovery >> 1 & 1); /* gbone */
	CHECK_EQ(c.recovery, registered_bits());
	CHECK_EQ(c.recovery_req, irn);
}

static void
t_encode_layout(void)
{
	struct perftest_caps c = {.version = 1,
				  .recovery = 0x07,
				  .recovery_req = 1,
				  .cc = 0x01,
				  .cc_req = 0,
				  .fec = 0,
				  .vrp = 0};
	uint8_t r[PERFTEST_CAPS_LEN];
	/* byte by byte, as docs/perftest-exchange.md gives it (bytes 5..15) */
	static const uint8_t want[PERFTEST_CAPS_LEN] = {'r',  'w',  0x01, 0x07, 0x01, 0x01,
							0x00, 0x00, 0x00, 0x00, 0x0d};
	perftest_caps_encode(&c, r);
	CHECK_MEM(r, want, sizeof(want));
	uint8_t sum = 0;
	for (int i = 0; i < PERFTEST_CAPS_LEN; i++)
		sum = (uint8_t)(sum + r[i]);
	CHECK_EQ(sum, 0);

	/* round trip through a whole version message */
	uint8_t msg[16] = "6.06";
	struct perftest_caps d;
	char err[256];
	memcpy(msg + PERFTEST_CAPS_OFF, r, sizeof(r));
	CHECK_EQ(perftest_caps_decode(msg, 4, &d, err, sizeof(err)), 1);
	CHECK_EQ(d.version, 1);
	CHECK_EQ(d.recovery, 0x07);
	CHECK_EQ(d.recovery_req, 1);
	CHECK_EQ(d.cc, 1);
	CHECK_EQ(d.cc_req, 0);
	/* no request in either nibble */
	c.recovery_req = c.cc_req = PERFTEST_CAPS_NONE;
	perftest_caps_encode(&c, r);
	CHECK_EQ(r[4], 0xff);
	memcpy(msg + PERFTEST_CAPS_OFF, r, sizeof(r));
	CHECK_EQ(perftest_caps_decode(msg, 4, &d, err, sizeof(err)), 1);
	CHECK_EQ(d.recovery_req, PERFTEST_CAPS_NONE);
	/* NUL padding: a standard perftest */
	static const uint8_t plain[16] = "6.06";
	CHECK_EQ(perftest_caps_decode(plain, 4, &d, err, sizeof(err)), 0);
	/* a later record version keeps version 1's fields: accepted */
	c = (struct perftest_caps){.version = 2, .recovery = 0x01, .recovery_req = 0, .cc = 1};
	c.param[0] = 0x55;
	perftest_caps_encode(&c, msg + PERFTEST_CAPS_OFF);
	CHECK_EQ(perftest_caps_decode(msg, 4, &d, err, sizeof(err)), 1);
	CHECK_EQ(d.version, 2);
	CHECK_EQ(d.param[0], 0x55);
}

static int
decode_bytes(const uint8_t msg[16], char *err, size_t errlen)
{
	struct perftest_caps d;
	size_t len = 0;
	while (len < 16 && msg[len])
		len++;
	err[0] = '\0';
	int rc = perftest_caps_decode(msg, len, &d, err, errlen);
	if (rc < 0)
		fprintf(stderr, "    (refused: %s)\n", err);
	return rc;
}

static void
t_hostile_records(void)
{
	struct perftest_caps c;
	uint8_t msg[16];
	char err[256];

	caps_local(&c, "gbn", "none");
	/* garbage in the padding, no magic */
	static const uint8_t junk[16] = {'6', '.', '0', '6', 0, 'x', 'y', 'z'};
	CHECK_EQ(decode_bytes(junk, err, sizeof(err)), -1);
	CHECK(strstr(err, "non-zero padding byte 5") != NULL);
	/* a non-zero byte between the NUL and the record */
	static const uint8_t gap[16] = {'6', '.', '0', '6', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	CHECK_EQ(decode_bytes(gap, err, sizeof(err)), -1);
	CHECK(strstr(err, "byte 15") != NULL);
	/* a record behind a 5-character version: there is no room for it */
	memset(msg, 0, sizeof(msg));
	memcpy(msg, "6.060", 5);
	msg[6] = 'r';
	CHECK_EQ(decode_bytes(msg, err, sizeof(err)), -1);
	/* one flipped bit: the checksum */
	memset(msg, 0, sizeof(msg));
	memcpy(msg, "6.06", 4);
	perftest_caps_encode(&c, msg + PERFTEST_CAPS_OFF);
	msg[8] ^= 0x04;
	CHECK_EQ(decode_bytes(msg, err, sizeof(err)), -1);
	CHECK(strstr(err, "garbled capability record") != NULL);
	/* every single-byte corruption of bytes 7..15 is refused (sum check) */
	for (int b = 7; b < 16; b++) {
		for (int v = 1; v < 256; v++) {
			memset(msg, 0, sizeof(msg));
			memcpy(msg, "6.06", 4);
			perftest_caps_encode(&c, msg + PERFTEST_CAPS_OFF);
			msg[b] = (uint8_t)(msg[b] + v);
			struct perftest_caps d;
			if (perftest_caps_decode(msg, 4, &d, err, sizeof(err)) != -1) {
				CHECK(!"a corrupted record was accepted");
				b = 16;
				break;
			}
		}
	}
	/* record version 0, with a right checksum */
	c.version = 0;
	memset(msg, 0, sizeof(msg));
	memcpy(msg, "6.06", 4);
	perftest_caps_encode(&c, msg + PERFTEST_CAPS_OFF);
	CHECK_EQ(decode_bytes(msg, err, sizeof(err)), -1);
	CHECK(strstr(err, "version 0") != NULL);
	/* a request for a mode its own bitmap does not offer */
	c = (struct perftest_caps){.version = 1, .recovery = 0x01, .recovery_req = 2, .cc = 1};
	perftest_caps_encode(&c, msg + PERFTEST_CAPS_OFF);
	CHECK_EQ(decode_bytes(msg, err, sizeof(err)), -1);
	CHECK(strstr(err, "does not offer") != NULL);
	c = (struct perftest_caps){
	    .version = 1, .recovery = 0x01, .recovery_req = 0, .cc = 1, .cc_req = 3};
	perftest_caps_encode(&c, msg + PERFTEST_CAPS_OFF);
	CHECK_EQ(decode_bytes(msg, err, sizeof(err)), -1);
	CHECK(strstr(err, "congestion control") != NULL);
}

static void
t_negotiate(void)
{
	struct perftest_caps a, b;
	struct perftest_caps_result r;
	char line[300];

	register_all_table_modes();
	/* a standard peer, gbn asked: nothing to say */
	caps_local(&a, "gbn", "none");
	CHECK_EQ(perftest_caps_negotiate(&a, NULL, "10.0.0.2", "a standard perftest", &r, line,
					 sizeof(line)),
		 0);
	CHECK(strcmp(r.recovery, "gbn") == 0);
	CHECK(!r.fell_back && !r.extensions && !r.peer_has_caps);
	CHECK_EQ(line[0], '\0');
	/* a standard peer, gbone asked: gbn, one line */
	caps_local(&a, "gbone", "none");
	CHECK_EQ(perftest_caps_negotiate(&a, NULL, "10.0.0.2", "a standard perftest", &r, line,
					 sizeof(line)),
		 0);
	CHECK(strcmp(r.recovery, "gbn") == 0);
	CHECK(r.fell_back && !r.extensions);
	CHECK(strstr(line, "falling back from --recovery gbone to Go-Back-N (gbn)") != NULL);
	CHECK(strchr(line, '\n') == NULL);
	/* two rnics asking for the same mode, both have it */
	caps_local(&b, "gbone", "none");
	CHECK_EQ(perftest_caps_negotiate(&a, &b, "10.0.0.2", "", &r, line, sizeof(line)), 0);
	CHECK(strcmp(r.recovery, "gbone") == 0);
	CHECK(r.extensions && r.peer_has_caps && !r.fell_back);
	CHECK_EQ(line[0], '\0');
	/* both ask gbn: gbn, no extensions */
	caps_local(&a, "gbn", "none");
	caps_local(&b, "gbn", "none");
	CHECK_EQ(perftest_caps_negotiate(&a, &b, "p", "", &r, line, sizeof(line)), 0);
	CHECK(strcmp(r.recovery, "gbn") == 0 && !r.extensions && !r.fell_back);
	/* the same request, but the peer (an older build) lacks it: gbn, one line, both sides */
	caps_local(&a, "irn", "none");
	b = a;
	b.recovery &= (uint8_t) ~(1u << 2);
	CHECK_EQ(perftest_caps_negotiate(&a, &b, "p", "", &r, line, sizeof(line)), 0);
	CHECK(strcmp(r.recovery, "gbn") == 0 && r.fell_back && !r.extensions);
	CHECK(strstr(line, "lacks irn") != NULL);
	CHECK_EQ(perftest_caps_negotiate(&b, &a, "p", "", &r, line, sizeof(line)), 0);
	CHECK(strcmp(r.recovery, "gbn") == 0 && r.fell_back);
	/* different requests: refused on both sides, one clear line */
	caps_local(&a, "gbone", "none");
	caps_local(&b, "irn", "none");
	CHECK_EQ(perftest_caps_negotiate(&a, &b, "10.0.0.2", "", &r, line, sizeof(line)), -1);
	CHECK(
	    strstr(line, "recovery mismatch: this rnic asks for gbone, the peer 10.0.0.2 for irn"));
	CHECK_EQ(perftest_caps_negotiate(&b, &a, "10.0.0.1", "", &r, line, sizeof(line)), -1);
	caps_local(&b, "gbn", "none");
	CHECK_EQ(perftest_caps_negotiate(&a, &b, "p", "", &r, line, sizeof(line)), -1);
}

/* A codec stand-in: perftest_caps_local only asks whether one is registered. */
static void *
dummy_create(const char *params, char *err, size_t errlen)
{
	(void)params, (void)err, (void)errlen;
	return NULL;
}
static void
dummy_destroy(void *st)
{
	(void)st;
}
static int
dummy_tx(void *st, const uint8_t *f, size_t len, roce_fec_emit_fn pre, roce_fec_emit_fn post,
	 void *arg)
{
	(void)st, (void)f, (void)len, (void)pre, (void)post, (void)arg;
	return 0;
}
static void
dummy_flush(void *st, roce_fec_emit_fn emit, void *arg)
{
	(void)st, (void)emit, (void)arg;
}
static int
dummy_rx(void *st, const uint8_t *f, size_t len, roce_fec_emit_fn d, roce_fec_event_fn ev,
	 void *arg)
{
	(void)st, (void)f, (void)len, (void)d, (void)ev, (void)arg;
	return 0;
}
static uint32_t
dummy_span(void *st)
{
	(void)st;
	return 1;
}
static void
dummy_info(void *st, struct roce_fec_info *o)
{
	(void)st, (void)o;
}

/* --recovery fec+MODE: the FEC bit (byte 11 bit 0); on only when both records carry it. */
static void
t_negotiate_fec(void)
{
	static const struct roce_fec_ops dummy = {
	    "fec",    dummy_create, dummy_destroy, dummy_tx,   dummy_flush,
	    dummy_rx, NULL,	    dummy_span,	   dummy_info,
	};
	struct perftest_caps a, b;
	struct perftest_caps_result r;
	uint8_t enc[PERFTEST_CAPS_LEN];
	char line[300];

	register_all_table_modes();
	/* without a codec registered, fec+ asks for nothing */
	if (!roce_fec_codec()) {
		caps_local(&a, "fec+gbone", "none");
		CHECK_EQ(a.fec, 0);
		CHECK_EQ(a.recovery_req, 1);
	}
	CHECK_EQ(roce_fec_register(&dummy), 0);
	caps_local(&a, "fec+gbone", "none");
	CHECK_EQ(a.fec, PERFTEST_CAPS_FEC);
	CHECK_EQ(a.recovery_req, 1); /* the base mode is what the recovery nibble asks */
	perftest_caps_encode(&a, enc);
	CHECK_EQ(enc[11 - PERFTEST_CAPS_OFF], PERFTEST_CAPS_FEC);
	/* both ask: FEC on, extensions on */
	caps_local(&b, "fec+gbone", "none");
	CHECK_EQ(perftest_caps_negotiate(&a, &b, "p", "", &r, line, sizeof(line)), 0);
	CHECK(r.fec && r.extensions && strcmp(r.recovery, "gbone") == 0);
	CHECK_EQ(line[0], '\0');
	/* fec+gbn both sides: gbn with FEC, FEC frames are extension packets */
	caps_local(&a, "fec+gbn", "none");
	caps_local(&b, "fec+gbn", "none");
	CHECK_EQ(perftest_caps_negotiate(&a, &b, "p", "", &r, line, sizeof(line)), 0);
	CHECK(r.fec && r.extensions && strcmp(r.recovery, "gbn") == 0);
	/* the peer does not ask: the base mode without FEC, one line on the asking side */
	caps_local(&b, "gbn", "none");
	CHECK_EQ(perftest_caps_negotiate(&a, &b, "10.0.0.2", "", &r, line, sizeof(line)), 0);
	CHECK(!r.fec && strcmp(r.recovery, "gbn") == 0);
	CHECK(strstr(line, "10.0.0.2: the peer does not ask for FEC") != NULL);
	CHECK(strstr(line, "running --recovery gbn without FEC") != NULL);
	CHECK_EQ(perftest_caps_negotiate(&b, &a, "10.0.0.1", "", &r, line, sizeof(line)), 0);
	CHECK(!r.fec);
	CHECK_EQ(line[0], '\0');
	/* a standard peer (rxe): gbn, no FEC, one line */
	CHECK_EQ(perftest_caps_negotiate(&a, NULL, "10.0.0.2", "a standard perftest", &r, line,
					 sizeof(line)),
		 0);
	CHECK(!r.fec && !r.extensions && strcmp(r.recovery, "gbn") == 0);
	CHECK(strstr(line, "falling back from --recovery fec+gbn to Go-Back-N (gbn), no extension "
			   "packets, no FEC") != NULL);
	CHECK(strchr(line, '\n') == NULL);
}

/* ---- over TCP ---- */

struct side {
	struct perftest_params p;
	struct perftest_caps caps;
	struct perftest_dest local, remote;
	struct perftest_session s;
	struct oob_conn c;
	int rc;
};

static void *
server_main(void *arg)
{
	struct side *d = arg;
	d->rc = perftest_session_init(&d->s, &d->c, &d->p, &d->local, &d->remote);
	if (!d->rc)
		d->rc = perftest_session_run(&d->s, NULL);
	show_err("server", d->rc, &d->c);
	oob_close(&d->c);
	return NULL;
}

/* Our client against our server, each with a record (or NULL). */
static void
pair(const char *crec, const char *srec, struct side *cl, struct side *sv)
{
	struct oob_listener lst;
	char err[OOB_ERR_LEN];
	pthread_t th;

	memset(cl, 0, sizeof(*cl));
	memset(sv, 0, sizeof(*sv));
	perftest_params_default(&cl->p, PERFTEST_WRITE_BW, PERFTEST_CLIENT);
	perftest_params_default(&sv->p, PERFTEST_WRITE_BW, PERFTEST_SERVER);
	cl->p.wait_timeout_ms = sv->p.wait_timeout_ms = 5000;
	if (crec) {
		caps_local(&cl->caps, crec, "none");
		cl->p.caps = &cl->caps;
	}
	if (srec) {
		caps_local(&sv->caps, srec, "none");
		sv->p.caps = &sv->caps;
	}
	cl->local.qpn = 0x11;
	sv->local.qpn = 0x22;
	CHECK_EQ(oob_listen(&lst, "127.0.0.1", 0, err, sizeof(err)), OOB_OK);
	struct oob_connect_opts o = test_connect_opts(3000);
	CHECK_EQ(oob_connect(&cl->c, "127.0.0.1", lst.port, &o), OOB_OK);
	CHECK_EQ(oob_accept(&lst, &sv->c, 3000, 3000), OOB_OK);
	oob_listener_close(&lst);
	pthread_create(&th, NULL, server_main, sv);
	cl->rc = perftest_session_init(&cl->s, &cl->c, &cl->p, &cl->local, &cl->remote);
	if (!cl->rc)
		cl->rc = perftest_session_run(&cl->s, NULL);
	show_err("client", cl->rc, &cl->c);
	oob_close(&cl->c);
	pthread_join(th, NULL);
}

static void
t_two_rnics(void)
{
	static struct side cl, sv;
	struct perftest_caps_result rc, rs;
	char lc[300], ls[300];

	register_all_table_modes();
	pair("irn", "irn", &cl, &sv);
	CHECK_EQ(cl.rc, OOB_OK);
	CHECK_EQ(sv.rc, OOB_OK);
	CHECK(cl.s.remote_has_caps && sv.s.remote_has_caps);
	CHECK(strcmp(cl.s.remote_version, "6.06") == 0);
	CHECK_MEM(&cl.s.remote_caps, &sv.caps, sizeof(sv.caps));
	CHECK_MEM(&sv.s.remote_caps, &cl.caps, sizeof(cl.caps));
	CHECK_EQ(cl.remote.qpn, 0x22);
	CHECK_EQ(
	    perftest_caps_negotiate(&cl.caps, &cl.s.remote_caps, "server", "", &rc, lc, sizeof(lc)),
	    0);
	CHECK_EQ(
	    perftest_caps_negotiate(&sv.caps, &sv.s.remote_caps, "client", "", &rs, ls, sizeof(ls)),
	    0);
	CHECK(strcmp(rc.recovery, "irn") == 0 && strcmp(rs.recovery, "irn") == 0);
	CHECK(rc.extensions && rs.extensions);

	/* our client with a record, a server without (what perftest does): the
	 * server takes the record as padding; the client sees a standard peer */
	pair("gbone", NULL, &cl, &sv);
	CHECK_EQ(cl.rc, OOB_OK);
	CHECK_EQ(sv.rc, OOB_OK);
	CHECK(!cl.s.remote_has_caps);
	CHECK(sv.s.remote_has_caps);
	CHECK_EQ(perftest_caps_negotiate(&cl.caps, cl.s.remote_has_caps ? &cl.s.remote_caps : NULL,
					 "server", "a standard perftest", &rc, lc, sizeof(lc)),
		 0);
	CHECK(strcmp(rc.recovery, "gbn") == 0 && rc.fell_back && !rc.extensions);
	CHECK(strstr(lc, "falling back from --recovery gbone") != NULL);
}

/* A fake server answering the version with @p ver, then the rest of the prologue. */
static int
client_vs_version_mode(const uint8_t ver[16], const char *mode, struct side *cl, char *err,
		       size_t errlen)
{
	static const uint8_t KEY[108] =
	    "0000:0001:000011:65b02a:00000273:0000564fd4bb9000:00:00:00:00:00:00:00:"
	    "00:00:00:ff:ff:0a:09:00:02:00000000:";
	struct fake_peer p;
	struct oob_connect_opts o = test_connect_opts(1000);
	peer_init(&p);
	peer_add(&p, PEER_EXPECT, NULL, 16);
	peer_add(&p, PEER_SEND, ver, 16);
	peer_add(&p, PEER_EXPECT, NULL, 4);
	peer_add(&p, PEER_SEND, PAGE, 4);
	peer_add(&p, PEER_EXPECT, NULL, 4);
	peer_add(&p, PEER_SEND, CLINE, 4);
	peer_add(&p, PEER_EXPECT, NULL, 2);
	peer_add(&p, PEER_SEND, MTU3, 2);
	peer_add(&p, PEER_EXPECT, NULL, 108);
	peer_add(&p, PEER_SEND, KEY, 108);
	peer_add(&p, PEER_CLOSE, NULL, 0);
	memset(cl, 0, sizeof(*cl));
	if (peer_start_server(&p))
		return -100;
	int rc = oob_connect(&cl->c, "127.0.0.1", p.port, &o);
	if (!rc) {
		perftest_params_default(&cl->p, PERFTEST_WRITE_BW, PERFTEST_CLIENT);
		cl->p.wait_timeout_ms = 1000;
		caps_local(&cl->caps, mode, "none");
		cl->p.caps = &cl->caps;
		rc = perftest_session_init(&cl->s, &cl->c, &cl->p, &cl->local, &cl->remote);
		/* just the version, page size, cache line and MTU */
		for (int i = 0; !rc && i < 3; i++)
			rc = perftest_session_step(&cl->s, NULL);
	}
	snprintf(err, errlen, "%s", cl->c.err);
	oob_close(&cl->c);
	peer_join(&p);
	return rc;
}

static int
client_vs_version(const uint8_t ver[16], struct side *cl, char *err, size_t errlen)
{
	return client_vs_version_mode(ver, "irn", cl, err, errlen);
}

static void
t_garbled_over_tcp(void)
{
	static struct side cl;
	uint8_t ver[16] = "6.06";
	struct perftest_caps c;
	char err[OOB_ERR_LEN];

	caps_local(&c, "gbn", "none");
	perftest_caps_encode(&c, ver + PERFTEST_CAPS_OFF);
	ver[15] ^= 0x80;
	CHECK_EQ(client_vs_version(ver, &cl, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "malformed perftest version from") && strstr(err, "garbled"));
	fprintf(stderr, "    (client said: %s)\n", err);
}

/* The rxe capture's server version (perftest 6.06 on Linux rxe): a standard peer. */
static void
t_rxe_recorded(void)
{
	static struct vec_msg vec[64];
	static struct side cl;
	struct perftest_caps_result r;
	char err[OOB_ERR_LEN], line[300];
	int n = vec_load(OOB_VEC_DIR "/rxe_write_bw_4096.vec", vec, 64);
	const struct vec_msg *sv = NULL;

	CHECK(n > 2);
	for (int i = 0; i < n && !sv; i++)
		if (vec[i].side == 'S' && vec[i].len == 16)
			sv = &vec[i];
	CHECK(sv != NULL);
	if (!sv)
		return;
	register_all_table_modes();
	CHECK_EQ(client_vs_version(sv->data, &cl, err, sizeof(err)), OOB_OK);
	CHECK(!cl.s.remote_has_caps);
	CHECK_EQ(perftest_caps_negotiate(&cl.caps, NULL, "10.9.0.2",
					 "a standard perftest "
					 "(no capability record)",
					 &r, line, sizeof(line)),
		 0);
	CHECK(strcmp(r.recovery, "gbn") == 0 && !r.extensions && r.fell_back);
	CHECK(strcmp(line, "10.9.0.2: a standard perftest (no capability record): falling back "
			   "from --recovery irn to Go-Back-N (gbn), no extension packets") == 0);
	fprintf(stderr, "    (line: %s)\n", line);

	/* --recovery vrp (docs/vrp.md) against the same rxe: plain RC, one line */
	CHECK_EQ(client_vs_version_mode(sv->data, "vrp", &cl, err, sizeof(err)), OOB_OK);
	CHECK(!cl.s.remote_has_caps);
	CHECK(cl.caps.recovery >> 3 & 1); /* vrp is bit 3 of our record */
	CHECK_EQ(cl.caps.recovery_req, 3);
	CHECK_EQ(perftest_caps_negotiate(&cl.caps, NULL, "10.9.0.2",
					 "a standard perftest "
					 "(no capability record)",
					 &r, line, sizeof(line)),
		 0);
	CHECK(strcmp(r.recovery, "gbn") == 0 && !r.extensions && r.fell_back);
	CHECK(strcmp(line, "10.9.0.2: a standard perftest (no capability record): falling back "
			   "from --recovery vrp to Go-Back-N (gbn), no extension packets") == 0);
}

/*
 * --recovery vrp against peers that do not advertise it (docs/vrp.md,
 * "Negotiation"): an rnic whose record lacks bit 3 (an older build), on both
 * sides, and a standard perftest over TCP; both rnics with vrp run vrp.
 */
static void
t_negotiate_vrp(void)
{
	static struct side cl, sv;
	struct perftest_caps a, b;
	struct perftest_caps_result r, rs;
	char line[300], ls[300];

	register_all_table_modes();
	CHECK_EQ(perftest_caps_index(perftest_caps_recovery_names, "vrp"), 3);
	CHECK(roce_recovery_find("vrp") != NULL);
	caps_local(&a, "vrp", "none");
	b = a;
	b.recovery &= (uint8_t) ~(1u << 3);
	CHECK_EQ(perftest_caps_negotiate(&a, &b, "10.0.0.2", "", &r, line, sizeof(line)), 0);
	CHECK(strcmp(r.recovery, "gbn") == 0 && r.fell_back && !r.extensions && r.peer_has_caps);
	CHECK(strstr(line, "lacks vrp: falling back to Go-Back-N (gbn), no extension packets"));
	CHECK(strchr(line, '\n') == NULL);
	CHECK_EQ(perftest_caps_negotiate(&b, &a, "10.0.0.1", "", &r, line, sizeof(line)), 0);
	CHECK(strcmp(r.recovery, "gbn") == 0 && r.fell_back && !r.extensions);

	/* over TCP: two rnics asking vrp agree on it */
	pair("vrp", "vrp", &cl, &sv);
	CHECK_EQ(cl.rc, OOB_OK);
	CHECK_EQ(sv.rc, OOB_OK);
	CHECK_EQ(perftest_caps_negotiate(&cl.caps, &cl.s.remote_caps, "server", "", &r, line,
					 sizeof(line)),
		 0);
	CHECK_EQ(
	    perftest_caps_negotiate(&sv.caps, &sv.s.remote_caps, "client", "", &rs, ls, sizeof(ls)),
	    0);
	CHECK(strcmp(r.recovery, "vrp") == 0 && strcmp(rs.recovery, "vrp") == 0);
	CHECK(r.extensions && rs.extensions && !r.fell_back && !rs.fell_back);
	CHECK_EQ(line[0], '\0');

	/* our client asking vrp, a server without a record (a standard perftest) */
	pair("vrp", NULL, &cl, &sv);
	CHECK_EQ(cl.rc, OOB_OK);
	CHECK_EQ(sv.rc, OOB_OK);
	CHECK(!cl.s.remote_has_caps);
	CHECK_EQ(perftest_caps_negotiate(&cl.caps, NULL, "server", "a standard perftest", &r, line,
					 sizeof(line)),
		 0);
	CHECK(strcmp(r.recovery, "gbn") == 0 && r.fell_back && !r.extensions);
	CHECK(strcmp(line, "server: a standard perftest: falling back from --recovery vrp to "
			   "Go-Back-N (gbn), no extension packets") == 0);
}

RW_TEST_MAIN(RW_TEST(t_table), RW_TEST(t_local_from_registry), RW_TEST(t_encode_layout),
	     RW_TEST(t_hostile_records), RW_TEST(t_negotiate), RW_TEST(t_negotiate_fec),
	     RW_TEST(t_two_rnics), RW_TEST(t_garbled_over_tcp), RW_TEST(t_rxe_recorded),
	     RW_TEST(t_negotiate_vrp))
