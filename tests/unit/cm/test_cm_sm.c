/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: the CM state machine (lib/cm/cm), two instances wired back to back through
 * the ops table, with an injected clock and deterministic MAD loss. */
#include <stdlib.h>
#include <string.h>

#include "cm.h"
#include "ip_cm.h"
#include "rw_test.h"

#define QMAX 64
#define EVMAX 64
#define SID 0x0000000001064853ull

struct side;
struct qent {
	int to; /* side index */
	struct cm_dest src;
	uint8_t mad[MAD_SIZE];
};

static struct {
	uint64_t now;
	struct qent q[QMAX];
	int qh, qt;
	/* drop the n-th (1-based) sent MAD of attribute drop_attr from side drop_from */
	int drop_from;
	uint16_t drop_attr;
	int drop_nth, drop_seen;
	unsigned dropped;
} net;

struct side {
	int idx;
	struct cm cm;
	int auto_accept, auto_rtu, auto_reject, auto_mra, auto_sidr;
	int ev[EVMAX];
	int nev;
	struct cm_id *last;
	unsigned traces;
	uint8_t tr_from[EVMAX], tr_to[EVMAX];
	uint8_t last_pd[CM_REQ_PD];
};

static struct side *S[2];

static uint64_t
t_now(void *ctx)
{
	(void)ctx;
	return net.now;
}

static int
t_send(void *ctx, const struct cm_dest *dst, const uint8_t mad[MAD_SIZE])
{
	struct side *s = ctx;
	uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);
	struct qent *e;

	(void)dst;
	if (net.drop_attr == attr && net.drop_from == s->idx && ++net.drop_seen == net.drop_nth) {
		net.dropped++;
		return 0;
	}
	CHECK(net.qt - net.qh < QMAX);
	e = &net.q[net.qt++ % QMAX];
	e->to = !s->idx;
	memset(&e->src, 0, sizeof(e->src));
	e->src.gid[15] = (uint8_t)(s->idx + 1);
	e->src.qpn = MAD_GSI_QPN;
	e->src.qkey = MAD_GSI_QKEY;
	e->src.pkey = MAD_DEFAULT_PKEY;
	memcpy(e->mad, mad, MAD_SIZE);
	return 0;
}

static void
t_event(void *ctx, struct cm_id *id, const struct cm_event *ev)
{
	struct side *s = ctx;

	CHECK(s->nev < EVMAX);
	if (s->nev < EVMAX)
		s->ev[s->nev++] = ev->type;
	s->last = id;
	switch (ev->type) {
	case CM_EV_REQ_RCVD:
		memcpy(s->last_pd, ev->msg->u.req.private_data, CM_REQ_PD);
		if (s->auto_mra)
			CHECK_EQ(cm_mra(&s->cm, id, 20, NULL, 0), 0);
		if (s->auto_reject) {
			CHECK_EQ(cm_reject(&s->cm, id, CM_REJ_CONSUMER_DEFINED, NULL, 0,
					   (const uint8_t *)"no", 2),
				 0);
		} else if (s->auto_accept) {
			struct cm_rep rep = {.local_qpn = 0x22,
					     .starting_psn = 0x2222,
					     .responder_resources = 1,
					     .initiator_depth = 1,
					     .rnr_retry_count = 7};
			CHECK_EQ(cm_accept(&s->cm, id, &rep), 0);
		}
		break;
	case CM_EV_REP_RCVD:
		if (s->auto_rtu)
			CHECK_EQ(cm_rtu(&s->cm, id, NULL, 0), 0);
		break;
	case CM_EV_SIDR_REQ_RCVD:
		if (s->auto_sidr) {
			struct cm_sidr_rep rep = {.status = CM_SIDR_SUCCESS,
						  .qpn = 0x33,
						  .qkey = 0x11223344,
						  .service_id = ev->msg->u.sidr_req.service_id};
			CHECK_EQ(cm_sidr_rep(&s->cm, id, &rep), 0);
		}
		break;
	default:
		break;
	}
}

static void
t_trace(void *ctx, const struct cm_id *id, enum cm_state from, enum cm_state to, const char *why)
{
	struct side *s = ctx;

	(void)id;
	(void)why;
	if (s->traces < EVMAX) {
		s->tr_from[s->traces] = (uint8_t)from;
		s->tr_to[s->traces] = (uint8_t)to;
	}
	s->traces++;
}

static const struct cm_ops ops = {
    .send_mad = t_send, .event = t_event, .now = t_now, .trace = t_trace};

static void
setup(struct side *a, struct side *b, uint32_t max_ids)
{
	struct cm_config ca = {
	    .local_ca_guid = 0xa, .seed = 1, .packet_life_time = 0, .max_ids = max_ids};
	struct cm_config cb = {
	    .local_ca_guid = 0xb, .seed = 2, .packet_life_time = 0, .max_ids = max_ids};

	memset(&net, 0, sizeof(net));
	net.now = 1000;
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	a->idx = 0;
	b->idx = 1;
	S[0] = a;
	S[1] = b;
	cm_init(&a->cm, &ca, &ops, a);
	cm_init(&b->cm, &cb, &ops, b);
	a->auto_rtu = 1;
	b->auto_accept = 1;
	CHECK(cm_listen(&b->cm, SID, ~0ull, b) >= 0);
}

/* deliver everything in flight; returns the number delivered */
static int
pump(void)
{
	int n = 0;

	while (net.qh != net.qt) {
		struct qent e = net.q[net.qh++ % QMAX];

		cm_rx(&S[e.to]->cm, &e.src, e.mad, MAD_SIZE);
		n++;
	}
	return n;
}

static struct cm_dest
peer_of(int idx)
{
	struct cm_dest d = {.qpn = MAD_GSI_QPN, .qkey = MAD_GSI_QKEY, .pkey = MAD_DEFAULT_PKEY};

	d.gid[15] = (uint8_t)(idx + 1);
	return d;
}

static struct cm_req
mk_req(uint8_t timeout, uint8_t retries)
{
	struct cm_req r;
	struct ip_cm_hdr h = {.ip_version = 4, .src_port = 40000};
	const uint8_t s4[4] = {10, 0, 0, 1}, d4[4] = {10, 0, 0, 2}, app[4] = {1, 2, 3, 4};

	memset(&r, 0, sizeof(r));
	r.service_id = SID;
	r.local_qkey = 0;
	r.local_qpn = 0x11;
	r.starting_psn = 0x1111;
	r.responder_resources = 1;
	r.initiator_depth = 1;
	r.remote_cm_response_timeout = timeout;
	r.local_cm_response_timeout = timeout;
	r.retry_count = 7;
	r.rnr_retry_count = 7;
	r.max_cm_retries = retries;
	r.pkey = 0xffff;
	r.path_mtu = 3;
	r.primary.local_ack_timeout = 14;
	ip_cm_set_ipv4(h.src_ip, s4);
	ip_cm_set_ipv4(h.dst_ip, d4);
	ip_cm_compose(r.private_data, CM_REQ_PD, IP_CM_PS_TCP, &h, app, sizeof(app));
	return r;
}

static int
count_ev(const struct side *s, int type)
{
	int n = 0;

	for (int i = 0; i < s->nev; i++)
		n += s->ev[i] == type;
	return n;
}

/* advance the clock to @p t and fire timers on both sides */
static void
advance(uint64_t t)
{
	net.now = t;
	cm_tick(&S[0]->cm);
	cm_tick(&S[1]->cm);
}

static void
finish_timewait(void)
{
	/* TIMEWAIT: 2 x PLT + ACK timeout (14) */
	advance(net.now + 2 * cm_time_ns(0) + cm_time_ns(14));
	pump();
}

static struct side A, B;

static void
test_connect_disconnect(void)
{
	struct cm_req r = mk_req(16, 3);
	struct cm_dest d = peer_of(1);
	struct cm_id *id;

	setup(&A, &B, 0);
	CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
	CHECK_EQ(id->state, CM_REQ_SENT);
	CHECK_EQ(pump(), 3); /* REQ, REP, RTU */
	CHECK_EQ(id->state, CM_ESTABLISHED);
	CHECK_EQ(B.last->state, CM_ESTABLISHED);
	CHECK_EQ(B.last->remote_comm_id, id->local_comm_id);
	CHECK_EQ(id->remote_comm_id, B.last->local_comm_id);
	CHECK_EQ(id->remote_qpn, 0x22);
	CHECK_EQ(B.last->remote_qpn, 0x11);
	CHECK_EQ(B.nev, 2);
	CHECK_EQ(B.ev[0], CM_EV_REQ_RCVD);
	CHECK_EQ(B.ev[1], CM_EV_ESTABLISHED);
	CHECK_EQ(A.nev, 1);
	CHECK_EQ(A.ev[0], CM_EV_REP_RCVD);
	/* the IP CM header and the application's bytes arrive untouched */
	CHECK_EQ(B.last_pd[1], 0x40);
	CHECK_EQ(B.last_pd[36], 1);
	CHECK_EQ(B.last_pd[39], 4);
	CHECK_EQ(A.cm.cnt.tx[0], 1);
	CHECK_EQ(B.cm.cnt.rx[0], 1);
	CHECK_EQ(B.cm.cnt.tx[MAD_ATTR_CM_REP - MAD_ATTR_CM_REQ], 1);
	CHECK_EQ(A.cm.cnt.tx[MAD_ATTR_CM_RTU - MAD_ATTR_CM_REQ], 1);
	CHECK(A.traces >= 2 && B.traces >= 2);
	CHECK_EQ(cm_disconnect(&A.cm, id, NULL, 0), 0);
	CHECK_EQ(pump(), 2); /* DREQ, DREP */
	CHECK_EQ(id->state, CM_TIMEWAIT);
	CHECK_EQ(B.last->state, CM_TIMEWAIT);
	CHECK_EQ(count_ev(&B, CM_EV_DREQ_RCVD), 1);
	CHECK_EQ(count_ev(&A, CM_EV_DREP_RCVD), 1);
	finish_timewait();
	CHECK_EQ(cm_ids_in_use(&A.cm), 0);
	CHECK_EQ(cm_ids_in_use(&B.cm), 0);
	CHECK_EQ(count_ev(&A, CM_EV_TIMEWAIT_EXIT), 1);
	CHECK_EQ(count_ev(&B, CM_EV_TIMEWAIT_EXIT), 1);
	for (int i = 0; i < CM_DROP_COUNT; i++) {
		CHECK_EQ(A.cm.cnt.drop[i], 0);
		CHECK_EQ(B.cm.cnt.drop[i], 0);
	}
}

static void
test_100_cycles(void)
{
	struct cm_req r = mk_req(16, 3);
	struct cm_dest d = peer_of(1);
	struct cm_id *id;

	setup(&A, &B, 4);
	for (int i = 0; i < 100; i++) {
		CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
		pump();
		CHECK_EQ(id->state, CM_ESTABLISHED);
		CHECK_EQ(cm_disconnect(&A.cm, id, NULL, 0), 0);
		pump();
		finish_timewait();
		A.nev = B.nev = 0;
	}
	CHECK_EQ(A.cm.cnt.established, 100);
	CHECK_EQ(B.cm.cnt.established, 100);
	CHECK_EQ(cm_ids_in_use(&A.cm), 0);
	CHECK_EQ(cm_ids_in_use(&B.cm), 0);
	CHECK_EQ(A.cm.cnt.ids_alloc, 100);
	CHECK_EQ(A.cm.cnt.ids_free, 100);
	CHECK_EQ(B.cm.cnt.ids_alloc, 100);
	CHECK_EQ(B.cm.cnt.ids_free, 100);
	CHECK_EQ(A.cm.cnt.retries + B.cm.cnt.retries, 0);
}

static void
test_req_lost_once(void)
{
	struct cm_req r = mk_req(16, 3);
	struct cm_dest d = peer_of(1);
	struct cm_id *id;
	uint64_t t0, wait = 2 * cm_time_ns(0) + cm_time_ns(16);

	setup(&A, &B, 0);
	net.drop_from = 0;
	net.drop_attr = MAD_ATTR_CM_REQ;
	net.drop_nth = 1;
	t0 = net.now;
	CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
	CHECK_EQ(pump(), 0);
	CHECK_EQ(net.dropped, 1);
	advance(t0 + wait - 1); /* one ns early: nothing */
	CHECK_EQ(A.cm.cnt.retries, 0);
	CHECK_EQ(pump(), 0);
	advance(t0 + wait); /* exactly the timeout: the REQ again */
	CHECK_EQ(A.cm.cnt.retries, 1);
	CHECK_EQ(A.cm.cnt.tx[0], 2);
	CHECK_EQ(pump(), 3);
	CHECK_EQ(id->state, CM_ESTABLISHED);
	CHECK_EQ(B.cm.cnt.established, 1);
}

static void
test_rep_lost(void)
{
	struct cm_req r = mk_req(16, 3);
	struct cm_dest d = peer_of(1);
	struct cm_id *id;
	uint64_t t0 = 1000, wait = 2 * cm_time_ns(0) + cm_time_ns(16);

	setup(&A, &B, 0);
	net.drop_from = 1;
	net.drop_attr = MAD_ATTR_CM_REP;
	net.drop_nth = 1;
	CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
	CHECK_EQ(pump(), 1); /* REQ arrives; its REP is lost */
	CHECK_EQ(B.last->state, CM_REP_SENT);
	/* the REQ side's timer fires first (both waits are equal; A ticks first) */
	net.now = t0 + wait;
	cm_tick(&A.cm);
	CHECK_EQ(A.cm.cnt.retries, 1);
	CHECK_EQ(pump(), 3); /* duplicate REQ -> REP resent -> RTU */
	CHECK_EQ(B.cm.cnt.dup_resends, 1);
	CHECK_EQ(B.cm.cnt.tx[MAD_ATTR_CM_REP - MAD_ATTR_CM_REQ], 2);
	CHECK_EQ(id->state, CM_ESTABLISHED);
	CHECK_EQ(B.last->state, CM_ESTABLISHED);
	CHECK_EQ(count_ev(&B, CM_EV_REQ_RCVD), 1); /* the duplicate made no new ID */
	CHECK_EQ(cm_ids_in_use(&B.cm), 1);
	/* B's own REP timer is off now: nothing more */
	advance(net.now + 10 * wait);
	CHECK_EQ(pump(), 0);
}

static void
test_rtu_lost_dup_rep(void)
{
	struct cm_req r = mk_req(16, 3);
	struct cm_dest d = peer_of(1);
	struct cm_id *id;
	uint64_t wait = 2 * cm_time_ns(0) + cm_time_ns(16);

	setup(&A, &B, 0);
	net.drop_from = 0;
	net.drop_attr = MAD_ATTR_CM_RTU;
	net.drop_nth = 1;
	CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
	CHECK_EQ(pump(), 2);
	CHECK_EQ(id->state, CM_ESTABLISHED);
	CHECK_EQ(B.last->state, CM_REP_SENT);
	advance(net.now + wait); /* REP retried; A is established: RTU resent */
	CHECK_EQ(B.cm.cnt.retries, 1);
	CHECK_EQ(pump(), 2);
	CHECK_EQ(A.cm.cnt.dup_resends, 1);
	CHECK_EQ(B.last->state, CM_ESTABLISHED);
}

static void
test_retries_exhausted(void)
{
	struct cm_req r = mk_req(10, 2);
	struct cm_dest d = peer_of(1);
	struct cm_id *id;
	uint64_t wait = 2 * cm_time_ns(0) + cm_time_ns(10);

	setup(&A, &B, 0);
	cm_listen_cancel(&B.cm, 0);
	net.drop_from = 0;
	net.drop_attr = MAD_ATTR_CM_REQ;
	net.drop_nth = 1;
	/* the first REQ is lost, the retries stay in flight until A has given up */
	CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
	for (int i = 1; i <= 3; i++)
		advance(1000 + (uint64_t)i * wait);
	CHECK_EQ(A.cm.cnt.retries, 2);
	CHECK_EQ(A.cm.cnt.timeouts, 1);
	CHECK_EQ(A.cm.cnt.tx[0], 3);
	CHECK_EQ(A.cm.cnt.tx[MAD_ATTR_CM_REJ - MAD_ATTR_CM_REQ], 1);
	CHECK_EQ(count_ev(&A, CM_EV_TIMEOUT), 1);
	CHECK_EQ(cm_ids_in_use(&A.cm), 0);
	/* in flight: REQ, REQ (retries) and the REJ; the last is REJ Timeout */
	CHECK_EQ(net.qt - net.qh, 3);
	{
		struct cm_msg m;
		const struct qent *e = &net.q[(net.qt - 1) % QMAX];

		CHECK_EQ(cm_msg_parse(e->mad, MAD_SIZE, &m), 0);
		CHECK_EQ(m.hdr.attr_id, MAD_ATTR_CM_REJ);
		CHECK_EQ(m.u.rej.reason, CM_REJ_TIMEOUT);
		CHECK_EQ(m.u.rej.ari_length, 8);
		CHECK_EQ(m.u.rej.ari[7], 0xa);
	}
	/* B has no listener: each REQ is refused with REJ Invalid service ID, the REJ
	 * Timeout names no ID of B's */
	pump();
	CHECK_EQ(B.cm.cnt.drop[CM_DROP_NO_LISTENER], 2);
	CHECK_EQ(B.cm.cnt.drop[CM_DROP_STALE_ID], 1);
	pump(); /* the REJs reach A, whose ID is gone */
	CHECK_EQ(A.cm.cnt.drop[CM_DROP_STALE_ID], 2);
}

static void
test_mra(void)
{
	struct cm_req r = mk_req(10, 2);
	struct cm_dest d = peer_of(1);
	struct cm_id *id, *p;
	uint64_t wait_mra = 2 * cm_time_ns(0) + cm_time_ns(20);

	setup(&A, &B, 0);
	B.auto_accept = 0;
	B.auto_mra = 1;
	CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
	CHECK_EQ(pump(), 2); /* REQ, MRA */
	CHECK_EQ(id->state, CM_MRA_REQ_RCVD);
	CHECK_EQ(B.last->state, CM_MRA_REQ_SENT);
	CHECK_EQ(count_ev(&A, CM_EV_MRA_RCVD), 1);
	/* well past the REQ timeout (2^10) but within the MRA's (2^20): no retry */
	advance(1000 + wait_mra - 1);
	CHECK_EQ(A.cm.cnt.retries, 0);
	p = B.last;
	{
		struct cm_rep rep = {.local_qpn = 0x22, .starting_psn = 1};

		CHECK_EQ(cm_accept(&B.cm, p, &rep), 0);
	}
	CHECK_EQ(pump(), 2);
	CHECK_EQ(id->state, CM_ESTABLISHED);
	CHECK_EQ(p->state, CM_ESTABLISHED);
}

static void
test_reject(void)
{
	struct cm_req r = mk_req(16, 3);
	struct cm_dest d = peer_of(1);
	struct cm_id *id;

	setup(&A, &B, 0);
	B.auto_reject = 1;
	CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
	CHECK_EQ(pump(), 2);
	CHECK_EQ(count_ev(&A, CM_EV_REJ_RCVD), 1);
	CHECK_EQ(cm_ids_in_use(&A.cm), 0);
	CHECK_EQ(cm_ids_in_use(&B.cm), 0);
	CHECK_EQ(A.cm.cnt.rx[MAD_ATTR_CM_REJ - MAD_ATTR_CM_REQ], 1);
}

static void
test_sidr(void)
{
	struct cm_sidr_req sr = {.pkey = 0xffff, .service_id = 0x0000000001114853ull};
	struct cm_dest d = peer_of(1);
	struct cm_id *id;

	setup(&A, &B, 0);
	CHECK(cm_listen(&B.cm, 0x0000000001114853ull, ~0ull, NULL) >= 0);
	B.auto_sidr = 1;
	CHECK_EQ(cm_sidr_req(&A.cm, &sr, &d, 16, 2, NULL, &id), 0);
	CHECK_EQ(id->state, CM_SIDR_REQ_SENT);
	CHECK_EQ(pump(), 2);
	CHECK_EQ(count_ev(&B, CM_EV_SIDR_REQ_RCVD), 1);
	CHECK_EQ(count_ev(&A, CM_EV_SIDR_REP_RCVD), 1);
	CHECK_EQ(cm_ids_in_use(&A.cm), 0);
	CHECK_EQ(cm_ids_in_use(&B.cm), 0);
	/* no listener: SIDR_REP "unsupported" */
	sr.service_id = 0x0000000001110001ull;
	CHECK_EQ(cm_sidr_req(&A.cm, &sr, &d, 16, 2, NULL, &id), 0);
	CHECK_EQ(pump(), 2);
	CHECK_EQ(B.cm.cnt.drop[CM_DROP_NO_LISTENER], 1);
	CHECK_EQ(count_ev(&A, CM_EV_SIDR_REP_RCVD), 2);
}

static void
test_dreq_unknown(void)
{
	struct cm_msg m;
	uint8_t mad[MAD_SIZE];
	struct cm_dest src = peer_of(0);

	setup(&A, &B, 0);
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_DREQ;
	m.hdr.tid = 77;
	m.u.dreq.local_comm_id = 0x1234;
	m.u.dreq.remote_comm_id = 0x5678;
	cm_msg_build(mad, &m);
	CHECK_EQ(cm_rx(&B.cm, &src, mad, MAD_SIZE), -(1 + CM_DROP_STALE_ID));
	CHECK_EQ(B.cm.cnt.drop[CM_DROP_STALE_ID], 1);
	CHECK_EQ(net.qt - net.qh, 1);
	CHECK_EQ(cm_msg_parse(net.q[net.qh].mad, MAD_SIZE, &m), 0);
	CHECK_EQ(m.hdr.attr_id, MAD_ATTR_CM_DREP);
	CHECK_EQ(m.hdr.tid, 77);
	CHECK_EQ(m.u.drep.local_comm_id, 0x5678);
	CHECK_EQ(m.u.drep.remote_comm_id, 0x1234);
}

static void
test_storm_then_connect(void)
{
	struct cm_msg m;
	uint8_t mad[MAD_SIZE];
	struct cm_dest src = peer_of(0), d = peer_of(1);
	struct cm_req r = mk_req(16, 3);
	struct cm_id *id;

	setup(&A, &B, 8);
	/* REP without REQ x5 */
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_REP;
	for (uint32_t i = 0; i < 5; i++) {
		m.u.rep.remote_comm_id = 0x100 + i;
		cm_msg_build(mad, &m);
		CHECK_EQ(cm_rx(&B.cm, &src, mad, MAD_SIZE), -(1 + CM_DROP_STALE_ID));
	}
	/* RTU and DREP naming nothing x2 each */
	for (int i = 0; i < 2; i++) {
		m.hdr.attr_id = MAD_ATTR_CM_RTU;
		cm_msg_build(mad, &m);
		cm_rx(&B.cm, &src, mad, MAD_SIZE);
		m.hdr.attr_id = MAD_ATTR_CM_DREP;
		cm_msg_build(mad, &m);
		cm_rx(&B.cm, &src, mad, MAD_SIZE);
	}
	/* truncated x3 (one of length 0), wrong class version x4, unknown attribute x1 */
	cm_rx(&B.cm, &src, mad, 0);
	cm_rx(&B.cm, &src, mad, 24);
	cm_rx(&B.cm, &src, mad, 255);
	mad[2] = 1;
	for (int i = 0; i < 4; i++)
		cm_rx(&B.cm, &src, mad, MAD_SIZE);
	mad[2] = 2;
	mad[17] = 0x30;
	cm_rx(&B.cm, &src, mad, MAD_SIZE);
	/* LAP x2: APR "unsupported" each */
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_LAP;
	cm_msg_build(mad, &m);
	cm_rx(&B.cm, &src, mad, MAD_SIZE);
	cm_rx(&B.cm, &src, mad, MAD_SIZE);
	/* REQ flood: 10 distinct REQs, capacity 8 (B does not answer: auto_accept off) */
	B.auto_accept = 0;
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_REQ;
	m.u.req = r;
	for (uint32_t i = 0; i < 10; i++) {
		m.u.req.local_comm_id = 0x9000 + i;
		cm_msg_build(mad, &m);
		cm_rx(&B.cm, &src, mad, MAD_SIZE);
	}
	/* the same REQ again: a duplicate, no new ID */
	cm_rx(&B.cm, &src, mad, MAD_SIZE);
	CHECK_EQ(B.cm.cnt.drop[CM_DROP_STALE_ID], 5 + 2 + 2);
	CHECK_EQ(B.cm.cnt.drop[CM_DROP_SHORT], 3);
	CHECK_EQ(B.cm.cnt.drop[CM_DROP_CLASS_VERSION], 4);
	CHECK_EQ(B.cm.cnt.drop[CM_DROP_ATTR], 1);
	CHECK_EQ(B.cm.cnt.drop[CM_DROP_UNSUPPORTED], 2);
	/* 0x9008, 0x9009, and 0x9009 again: refused, not held, so not a duplicate */
	CHECK_EQ(B.cm.cnt.drop[CM_DROP_NO_RESOURCES], 3);
	CHECK_EQ(B.cm.cnt.drop[CM_DROP_DUPLICATE], 0);
	CHECK_EQ(B.cm.cnt.tx[MAD_ATTR_CM_APR - MAD_ATTR_CM_REQ], 2);
	CHECK_EQ(B.cm.cnt.tx[MAD_ATTR_CM_REJ - MAD_ATTR_CM_REQ], 3);
	CHECK_EQ(cm_ids_in_use(&B.cm), 8);
	/* a duplicate of a held REQ */
	m.u.req.local_comm_id = 0x9000;
	cm_msg_build(mad, &m);
	CHECK_EQ(cm_rx(&B.cm, &src, mad, MAD_SIZE), -(1 + CM_DROP_DUPLICATE));
	/* free the flood's IDs (REJ each), then a real connection forms */
	for (uint32_t i = 0; i < 8; i++)
		cm_destroy(&B.cm, &B.cm.ids[i]);
	CHECK_EQ(cm_ids_in_use(&B.cm), 0);
	net.qh = net.qt; /* the storm's answers go to a peer that is not there */
	B.auto_accept = 1;
	CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
	CHECK_EQ(pump(), 3);
	CHECK_EQ(id->state, CM_ESTABLISHED);
	CHECK_EQ(B.cm.cnt.established, 1);
}

static void
test_trace_order(void)
{
	struct cm_req r = mk_req(16, 3);
	struct cm_dest d = peer_of(1);
	struct cm_id *id;
	static const uint8_t a_from[] = {CM_IDLE,	 CM_REQ_SENT,  CM_REP_RCVD,
					 CM_ESTABLISHED, CM_DREQ_SENT, CM_TIMEWAIT};
	static const uint8_t a_to[] = {CM_REQ_SENT,  CM_REP_RCVD, CM_ESTABLISHED,
				       CM_DREQ_SENT, CM_TIMEWAIT, CM_IDLE};
	static const uint8_t b_from[] = {CM_IDLE,	 CM_REQ_RCVD,  CM_REP_SENT,
					 CM_ESTABLISHED, CM_DREQ_RCVD, CM_TIMEWAIT};
	static const uint8_t b_to[] = {CM_REQ_RCVD,  CM_REP_SENT, CM_ESTABLISHED,
				       CM_DREQ_RCVD, CM_TIMEWAIT, CM_IDLE};

	setup(&A, &B, 0);
	CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
	pump();
	CHECK_EQ(cm_disconnect(&A.cm, id, NULL, 0), 0);
	pump();
	finish_timewait();
	CHECK_EQ(A.traces, sizeof(a_from));
	CHECK_EQ(B.traces, sizeof(b_from));
	CHECK_MEM(A.tr_from, a_from, sizeof(a_from));
	CHECK_MEM(A.tr_to, a_to, sizeof(a_to));
	CHECK_MEM(B.tr_from, b_from, sizeof(b_from));
	CHECK_MEM(B.tr_to, b_to, sizeof(b_to));
	CHECK(strcmp(cm_state_name(CM_MRA_REP_RCVD), "MRA_REP_RCVD") == 0);
	CHECK(strcmp(cm_drop_name(CM_DROP_STALE_ID), "stale_id") == 0);
}

static void
test_seed_determinism(void)
{
	struct cm_req r = mk_req(16, 3);
	struct cm_dest d = peer_of(1);
	struct cm_id *id;
	uint32_t ids[2][3];

	for (int run = 0; run < 2; run++) {
		setup(&A, &B, 0);
		for (int i = 0; i < 3; i++) {
			CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
			ids[run][i] = id->local_comm_id;
		}
	}
	CHECK_MEM(ids[0], ids[1], sizeof(ids[0]));
	CHECK(ids[0][0] != ids[0][1] && ids[0][1] != ids[0][2]);
	/* another seed, other IDs */
	{
		struct cm_config c = {.local_ca_guid = 0xa, .seed = 99};

		cm_init(&A.cm, &c, &ops, &A);
		CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
		CHECK(id->local_comm_id != ids[0][0]);
	}
}

static void
test_dreq_lost_and_exhausted(void)
{
	struct cm_req r = mk_req(12, 1);
	struct cm_dest d = peer_of(1);
	struct cm_id *id;
	uint64_t wait = 2 * cm_time_ns(0) + cm_time_ns(12), t0;

	setup(&A, &B, 0);
	CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
	pump();
	net.drop_from = 0;
	net.drop_attr = MAD_ATTR_CM_DREQ;
	net.drop_nth = 1;
	t0 = net.now;
	CHECK_EQ(cm_disconnect(&A.cm, id, NULL, 0), 0);
	CHECK_EQ(pump(), 0);
	advance(t0 + wait);
	CHECK_EQ(A.cm.cnt.retries, 1);
	CHECK_EQ(pump(), 2); /* DREQ again, DREP */
	CHECK_EQ(id->state, CM_TIMEWAIT);
	CHECK_EQ(B.last->state, CM_TIMEWAIT);
	finish_timewait();
	CHECK_EQ(cm_ids_in_use(&A.cm) + cm_ids_in_use(&B.cm), 0);
	/* the peer never answers: one retry, then TIMEWAIT anyway */
	CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
	pump();
	CHECK_EQ(cm_disconnect(&A.cm, id, NULL, 0), 0);
	t0 = net.now;
	net.qh = net.qt;
	advance(t0 + wait);
	net.qh = net.qt;
	advance(t0 + 2 * wait);
	CHECK_EQ(A.cm.cnt.retries, 2);
	CHECK_EQ(A.cm.cnt.timeouts, 1);
	CHECK_EQ(id->state, CM_TIMEWAIT);
	finish_timewait();
	CHECK_EQ(cm_ids_in_use(&A.cm), 0);
}

static void
test_destroy_established(void)
{
	struct cm_req r = mk_req(16, 3);
	struct cm_dest d = peer_of(1);
	struct cm_id *id;
	int nev;

	setup(&A, &B, 0);
	CHECK_EQ(cm_connect(&A.cm, &r, &d, NULL, &id), 0);
	pump();
	nev = A.nev;
	cm_destroy(&A.cm, id); /* DREQ, then freed after TIMEWAIT, no event on A */
	CHECK_EQ(id->state, CM_DREQ_SENT);
	CHECK_EQ(pump(), 2);
	finish_timewait();
	CHECK_EQ(A.nev, nev);
	CHECK_EQ(count_ev(&B, CM_EV_DREQ_RCVD), 1);
	CHECK_EQ(cm_ids_in_use(&A.cm) + cm_ids_in_use(&B.cm), 0);
}

RW_TEST_MAIN(RW_TEST(test_connect_disconnect), RW_TEST(test_trace_order),
	     RW_TEST(test_seed_determinism), RW_TEST(test_dreq_lost_and_exhausted),
	     RW_TEST(test_destroy_established), RW_TEST(test_100_cycles),
	     RW_TEST(test_req_lost_once), RW_TEST(test_rep_lost), RW_TEST(test_rtu_lost_dup_rep),
	     RW_TEST(test_retries_exhausted), RW_TEST(test_mra), RW_TEST(test_reject),
	     RW_TEST(test_sidr), RW_TEST(test_dreq_unknown), RW_TEST(test_storm_then_connect))
