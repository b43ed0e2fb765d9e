/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rnic's CM endpoint (app/rnic/rnic_cm.h) without EAL: two ports, each with a real
 * lib/roce device, wired back to back (each device's tx queues the frame for the other),
 * the clock injected. A REQ/REP/RTU then DREQ/DREP over QP1 frames with exact counts on
 * both sides; the route from the neighbour table with the port MTU's IB encoding; a
 * dropped first REQ resent exactly once by the timer; a MAD of another class left
 * unclaimed and counted; an IPv6 peer without --ip6 refused (no GID).
 *
 * With RNIC_CM_PCAP=FILE set, the frames both sides send in the connect/disconnect case
 * (REQ REP RTU DREQ DREP, in order) go to FILE (tests/python/test_rnic_cm_tshark.py).
 */
#include <errno.h>
#include <stdlib.h>

#include "ip_cm.h"
#include "mad.h"
#include "rnic_cm.h"
#include "rnic_cm_chan.h"
#include "rnic_core.h"
#include "roce_verbs.h"
#include "rw_pcap.h"
#include "rw_test.h"

/* ---- the shell's functions, as a test double ---- */

static uint64_t fake_now = 1000000000ull;

uint64_t
rnic_now_ns(const struct rnic_port *p)
{
	(void)p;
	return fake_now;
}

int
rnic_port_tx_ctrl(struct rnic_port *p, const uint8_t *frame, size_t len)
{
	(void)p;
	(void)frame;
	(void)len;
	return 0;
}

/* ---- two ports back to back ---- */

#define QMAX 64
struct wire {
	uint8_t f[QMAX][512];
	size_t len[QMAX];
	unsigned int n;
	unsigned int drop_next; /* drop this many frames still to come */
	unsigned int dropped;
};

struct side {
	struct rnic_port port;
	struct rnic_cm ep;
	struct wire out; /* frames this side sent */
	int ev[16];	 /* events seen, by type */
	struct cm_id *last;
};

static struct side A, B;
static struct rw_pcap pcap;
static int pcap_on;

static int
dev_tx(void *ctx, const uint8_t *frame, size_t len)
{
	struct side *s = ctx;

	if (s->out.drop_next) {
		s->out.drop_next--;
		s->out.dropped++;
		return 0;
	}
	if (s->out.n >= QMAX || len > sizeof(s->out.f[0]))
		return -ENOBUFS;
	if (pcap_on)
		rw_pcap_write(&pcap, frame, (uint32_t)len, fake_now);
	memcpy(s->out.f[s->out.n], frame, len);
	s->out.len[s->out.n++] = len;
	return 0;
}

static uint64_t
dev_now(void *ctx)
{
	(void)ctx;
	return fake_now;
}

static int
dev_resolve(void *ctx, const union ibv_gid *gid, uint8_t mac[6])
{
	struct side *s = ctx;

	return rnic_neigh_resolve(&s->port, gid->raw, mac);
}

static const struct roce_dev_ops dev_ops = {
    .tx = dev_tx, .now_ns = dev_now, .resolve_mac = dev_resolve};

static struct rnic_cm_chan *chan_of[2]; /* A's, B's: channel mode when set */

static void
user_event(void *ctx, struct rnic_cm *ep, struct cm_id *id, const struct cm_event *ev)
{
	struct side *s = ctx;
	struct rnic_cm_chan *ch = chan_of[s == &B];

	s->ev[ev->type]++;
	s->last = id;
	if (ch) {
		if (ev->type == CM_EV_REQ_RCVD)
			CHECK_EQ(rnic_cm_chan_accept(ch, id, &ev->msg->u.req), 0);
		else
			rnic_cm_chan_event(ch, id, ev);
		return;
	}
	if (ev->type == CM_EV_REQ_RCVD) {
		struct cm_rep rep = {.local_qpn = 0x22,
				     .starting_psn = 0x222222,
				     .rnr_retry_count = 7,
				     .target_ack_delay = 15};
		CHECK_EQ(cm_accept(&ep->cm, id, &rep), 0);
	} else if (ev->type == CM_EV_REP_RCVD) {
		CHECK_EQ(ev->msg->u.rep.local_qpn, 0x22);
		CHECK_EQ(cm_rtu(&ep->cm, id, NULL, 0), 0);
	}
}

static const struct rnic_cm_user user = {.event = user_event};

static void
side_init(struct side *s, uint8_t last, uint64_t seed)
{
	struct roce_dev_cfg dc;

	memset(s, 0, sizeof(*s));
	roce_dev_cfg_init(&dc);
	uint8_t mac[6] = {0x02, 0, 0, 0, 0, last};
	memcpy(dc.mac, mac, 6);
	memcpy(s->port.mac, mac, 6);
	s->port.ip = 0x0a000000u | last; /* 10.0.0.last */
	s->port.prefix = 24;
	s->port.vlan_tci = -1;
	memset(dc.gid[0].raw, 0, 16);
	dc.gid[0].raw[10] = dc.gid[0].raw[11] = 0xff;
	dc.gid[0].raw[12] = 10;
	dc.gid[0].raw[15] = last;
	dc.gid_count = 1;
	dc.mtu = 1024;
	net_neigh_init(&s->port.neigh);
	net_neigh6_init(&s->port.neigh6);
	s->port.dev = roce_dev_create(&dc, &dev_ops, s);
	CHECK(s->port.dev != NULL);
	CHECK_EQ(rnic_cm_init(&s->ep, &s->port, seed, &user, s), 0);
	CHECK(s->port.cm == &s->ep);
}

static void
ip4(uint8_t out[16], uint8_t last)
{
	memset(out, 0, 16);
	out[10] = out[11] = 0xff;
	out[12] = 10;
	out[15] = last;
}

/* deliver every queued frame to the other side, until quiet; returns frames moved */
static unsigned int
pump(void)
{
	unsigned int moved = 0, again = 1;

	while (again) {
		again = 0;
		for (int k = 0; k < 2; k++) {
			struct side *from = k ? &B : &A, *to = k ? &A : &B;
			struct wire w = from->out;

			from->out.n = 0;
			for (unsigned int i = 0; i < w.n; i++)
				roce_dev_rx(to->port.dev, w.f[i], w.len[i]);
			moved += w.n;
			again |= w.n != 0;
			roce_dev_poll(from->port.dev, fake_now); /* the QPs' transmit side */
			again |= from->out.n != 0;
		}
	}
	return moved;
}

/* deliver A's frames to B; B's answers are dropped */
static void
pump_from_a_only(void)
{
	for (unsigned int i = 0; i < A.out.n; i++)
		roce_dev_rx(B.port.dev, A.out.f[i], A.out.len[i]);
	A.out.n = 0;
	B.out.n = 0;
}

static void
two_sides(void)
{
	uint8_t mb[6] = {0x02, 0, 0, 0, 0, 2}, ma[6] = {0x02, 0, 0, 0, 0, 1};

	side_init(&A, 1, 11);
	side_init(&B, 2, 22);
	net_neigh_learn(&A.port.neigh, 0x0a000002u, mb, fake_now);
	net_neigh_learn(&B.port.neigh, 0x0a000001u, ma, fake_now);
	CHECK(cm_listen(&B.ep.cm, ip_cm_service_id(IP_CM_PS_TCP, 18515), ~0ull, NULL) >= 0);
}

static void
side_fini(struct side *s)
{
	rnic_cm_fini(&s->ep);
	CHECK(s->port.cm == NULL);
	roce_dev_destroy(s->port.dev);
}

static int
connect_ab(struct cm_id **out)
{
	struct rnic_cm_route r;
	struct cm_req req = {.service_id = ip_cm_service_id(IP_CM_PS_TCP, 18515),
			     .local_qpn = 0x11,
			     .starting_psn = 0x111111,
			     .remote_cm_response_timeout = 20,
			     .local_cm_response_timeout = 20,
			     .retry_count = 7,
			     .rnr_retry_count = 7,
			     .max_cm_retries = 15,
			     .pkey = MAD_DEFAULT_PKEY};
	struct ip_cm_hdr h = {.cma_version = 0, .ip_version = 4, .src_port = 40000};
	struct cm_dest d;
	uint8_t peer[16];
	const uint8_t a4[4] = {10, 0, 0, 1}, b4[4] = {10, 0, 0, 2};

	ip4(peer, 2);
	CHECK_EQ(rnic_cm_resolve(&A.ep, peer, &r), 0);
	CHECK_EQ(r.sgid_index, 0);
	CHECK_EQ(r.sgid[15], 1);
	CHECK_EQ(r.mac[5], 2);
	CHECK_EQ(r.path_mtu, 3); /* 1024 */
	CHECK_EQ(r.mtu, 1024);
	req.path_mtu = r.path_mtu;
	rnic_cm_path(&r, 19, &req.primary);
	CHECK_EQ(req.primary.local_lid, 0xffff);
	CHECK_EQ(req.primary.hop_limit, 64);
	ip_cm_set_ipv4(h.src_ip, a4);
	ip_cm_set_ipv4(h.dst_ip, b4);
	CHECK_EQ(ip_cm_compose(req.private_data, CM_REQ_PD, IP_CM_PS_TCP, &h, NULL, 0), 0);
	rnic_cm_dest(&r, &d);
	CHECK_EQ(d.qpn, 1);
	CHECK_EQ(d.qkey, MAD_GSI_QKEY);
	return cm_connect(&A.ep.cm, &req, &d, NULL, out);
}

static void
test_connect_disconnect(void)
{
	struct cm_id *id = NULL;
	struct roce_gsi_stats ga, gb;

	const char *pc = getenv("RNIC_CM_PCAP");

	if (pc && *pc) {
		CHECK_EQ(rw_pcap_open_write(&pcap, pc), 0);
		pcap_on = 1;
	}
	two_sides();
	CHECK_EQ(connect_ab(&id), 0);
	pump();
	CHECK_EQ(A.ev[CM_EV_REP_RCVD], 1);
	CHECK_EQ(B.ev[CM_EV_REQ_RCVD], 1);
	CHECK_EQ(B.ev[CM_EV_ESTABLISHED], 1);
	CHECK_EQ(id->state, CM_ESTABLISHED);
	CHECK_EQ(B.last->state, CM_ESTABLISHED);
	CHECK_EQ(A.ep.cm.cnt.tx[0], 1); /* REQ */
	CHECK_EQ(B.ep.cm.cnt.rx[0], 1);
	CHECK_EQ(B.ep.cm.cnt.tx[3], 1); /* REP */
	CHECK_EQ(A.ep.cm.cnt.tx[4], 1); /* RTU */
	CHECK_EQ(B.ep.cm.cnt.rx[4], 1);
	CHECK_EQ(A.ep.cnt.rx_cm, 1);
	CHECK_EQ(B.ep.cnt.rx_cm, 2);

	CHECK_EQ(cm_disconnect(&A.ep.cm, id, NULL, 0), 0);
	pump();
	CHECK_EQ(B.ev[CM_EV_DREQ_RCVD], 1);
	CHECK_EQ(A.ev[CM_EV_DREP_RCVD], 1);
	CHECK_EQ(A.ep.cm.cnt.tx[5], 1); /* DREQ */
	CHECK_EQ(B.ep.cm.cnt.tx[6], 1); /* DREP */
	CHECK_EQ(A.ep.cm.cnt.retries + B.ep.cm.cnt.retries, 0);
	if (pcap_on) {
		pcap_on = 0;
		CHECK_EQ(rw_pcap_close(&pcap), 0);
	}

	/* QP1 saw exactly those MADs, each delivered */
	roce_gsi_stats(A.port.dev, &ga);
	roce_gsi_stats(B.port.dev, &gb);
	CHECK_EQ(ga.tx_total, 3); /* REQ RTU DREQ */
	CHECK_EQ(gb.tx_total, 2); /* REP DREP */
	CHECK_EQ(ga.delivered, 2);
	CHECK_EQ(gb.delivered, 3);

	/* TIMEWAIT ends on the timer that rnic_cm_poll fires; then nothing is left */
	for (int i = 0; i < 200 && (cm_ids_in_use(&A.ep.cm) || cm_ids_in_use(&B.ep.cm)); i++) {
		fake_now += 100000000ull; /* 100 ms */
		rnic_cm_poll(&A.ep);
		rnic_cm_poll(&B.ep);
		pump();
	}
	CHECK_EQ(cm_ids_in_use(&A.ep.cm), 0);
	CHECK_EQ(cm_ids_in_use(&B.ep.cm), 0);
	CHECK_EQ(A.ev[CM_EV_TIMEWAIT_EXIT], 1);
	CHECK_EQ(B.ev[CM_EV_TIMEWAIT_EXIT], 1);
	CHECK(A.ep.cnt.ticks > 0);
	side_fini(&A);
	side_fini(&B);
}

static void
test_req_lost_once(void)
{
	struct cm_id *id = NULL;

	two_sides();
	A.out.drop_next = 1; /* the first REQ */
	CHECK_EQ(connect_ab(&id), 0);
	CHECK_EQ(A.out.dropped, 1);
	pump();
	CHECK_EQ(B.ep.cm.cnt.rx[0], 0);
	/* a poll before the deadline resends nothing */
	rnic_cm_poll(&A.ep);
	pump();
	CHECK_EQ(A.ep.cm.cnt.retries, 0);
	/* the REQ waits 2 x PLT + 4.096 us x 2^20 (about 4.3 s): step past it */
	for (int i = 0; i < 60 && id->state != CM_ESTABLISHED; i++) {
		fake_now += 100000000ull;
		rnic_cm_poll(&A.ep);
		rnic_cm_poll(&B.ep);
		pump();
	}
	CHECK_EQ(id->state, CM_ESTABLISHED);
	CHECK_EQ(A.ep.cm.cnt.retries, 1);
	CHECK_EQ(A.ep.cm.cnt.tx[0], 2);
	CHECK_EQ(B.ep.cm.cnt.rx[0], 1);
	CHECK_EQ(B.ev[CM_EV_ESTABLISHED], 1);
	side_fini(&A);
	side_fini(&B);
}

static void
test_other_class_and_no_gid(void)
{
	struct roce_gsi_dest d = {.qpn = 1, .qkey = MAD_GSI_QKEY};
	uint8_t mad[MAD_SIZE] = {MAD_BASE_VERSION, 0x81 /* not CM */, 1, MAD_METHOD_GET};
	struct roce_gsi_stats gb;
	struct rnic_cm_route r;
	struct cm_dest cd = {.qpn = 1, .qkey = MAD_GSI_QKEY, .pkey = MAD_DEFAULT_PKEY};
	uint8_t v6[16] = {0xfd, 0, [15] = 2};
	struct cm_req req = {.service_id = 1, .remote_cm_response_timeout = 1, .max_cm_retries = 0};
	struct cm_id *id;

	two_sides();
	ip4(d.gid, 2);
	CHECK_EQ(roce_gsi_send(A.port.dev, &d, mad), 0);
	pump();
	roce_gsi_stats(B.port.dev, &gb);
	CHECK_EQ(B.ep.cnt.rx_other_unclaimed, 1);
	CHECK_EQ(B.ep.cnt.rx_cm, 0);
	CHECK_EQ(gb.drop[ROCE_GSI_DROP_UNCLAIMED], 1);

	/* no --ip6: an IPv6 peer has no route and no MAD goes to it */
	CHECK_EQ(rnic_cm_resolve(&A.ep, v6, &r), -EAFNOSUPPORT);
	memcpy(cd.gid, v6, 16);
	CHECK_EQ(cm_connect(&A.ep.cm, &req, &cd, NULL, &id), 0);
	CHECK_EQ(A.ep.cnt.tx_no_gid, 1);
	CHECK_EQ(A.ep.cm.cnt.tx_err, 1);
	side_fini(&A);
	side_fini(&B);
}

/* send one raw MAD from A's QP1 to B's, with Q_Key @p qkey */
static void
raw_mad(const uint8_t mad[MAD_SIZE], uint32_t qkey)
{
	struct roce_gsi_dest d = {.qpn = 1, .qkey = qkey};

	ip4(d.gid, 2);
	CHECK_EQ(roce_gsi_send(A.port.dev, &d, mad), 0);
}

static void
cm_mad(uint16_t attr, uint32_t local_id, uint32_t remote_id, uint8_t mad[MAD_SIZE])
{
	struct cm_msg m;

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = attr;
	m.hdr.tid = 0x5157;
	switch (attr) {
	case MAD_ATTR_CM_REP:
		m.u.rep.local_comm_id = local_id;
		m.u.rep.remote_comm_id = remote_id;
		m.u.rep.local_qpn = 0x33;
		break;
	case MAD_ATTR_CM_DREQ:
		m.u.dreq.local_comm_id = local_id;
		m.u.dreq.remote_comm_id = remote_id;
		break;
	default:
		break;
	}
	CHECK_EQ(cm_msg_build(mad, &m), 0);
}

/*
 * A storm at B's QP1: the same REQ 50 times, a REP naming no REQ, DREQs for 10 unknown
 * IDs, a CM MAD of a wrong class version and a wrong method, MADs with a wrong Q_Key and
 * a wrong base version. Every one is counted where it stops; then a connection forms.
 */
static void
test_hostile_storm(void)
{
	struct roce_gsi_stats gb;
	struct cm_id *id = NULL;
	uint8_t mad[MAD_SIZE], req_frame[512];
	size_t req_len;
	uint64_t drops0;

	two_sides();
	/* the REQ flood: A's first REQ, captured and replayed 50 times */
	CHECK_EQ(connect_ab(&id), 0);
	CHECK_EQ(A.out.n, 1);
	req_len = A.out.len[0];
	memcpy(req_frame, A.out.f[0], req_len);
	A.out.n = 0;
	for (int i = 0; i < 50; i++)
		roce_dev_rx(B.port.dev, req_frame, req_len);
	CHECK_EQ(B.ep.cm.cnt.rx[0], 50);
	CHECK_EQ(B.ev[CM_EV_REQ_RCVD], 1); /* one passive ID, however many copies */
	CHECK_EQ(cm_ids_in_use(&B.ep.cm), 1);
	CHECK_EQ(B.ep.cm.cnt.drop[CM_DROP_DUPLICATE] + B.ep.cm.cnt.dup_resends, 49);
	B.out.n = 0; /* its REPs are lost: A's REQ stays unanswered */
	cm_destroy(&A.ep.cm, id);
	A.out.n = 0;

	/* a REP without a REQ, DREQs for unknown IDs */
	drops0 = B.ep.cm.cnt.drop[CM_DROP_STALE_ID];
	cm_mad(MAD_ATTR_CM_REP, 0xabcdef01, 0x12345678, mad);
	raw_mad(mad, MAD_GSI_QKEY);
	for (uint32_t i = 0; i < 10; i++) {
		cm_mad(MAD_ATTR_CM_DREQ, 0x1000 + i, 0x77770000 + i, mad);
		raw_mad(mad, MAD_GSI_QKEY);
	}
	pump_from_a_only();
	CHECK_EQ(B.ep.cm.cnt.drop[CM_DROP_STALE_ID] - drops0, 11);
	CHECK_EQ(B.ep.cm.cnt.tx[6], 10); /* each unknown DREQ answered by a DREP */

	/* wrong class version, wrong method: lib/cm drops them by cause */
	cm_mad(MAD_ATTR_CM_REP, 1, 2, mad);
	mad[2] = 1;
	raw_mad(mad, MAD_GSI_QKEY);
	cm_mad(MAD_ATTR_CM_REP, 1, 2, mad);
	mad[3] = MAD_METHOD_GET;
	raw_mad(mad, MAD_GSI_QKEY);
	pump_from_a_only();
	CHECK_EQ(B.ep.cm.cnt.drop[CM_DROP_CLASS_VERSION], 1);
	CHECK_EQ(B.ep.cm.cnt.drop[CM_DROP_METHOD], 1);

	/* a wrong Q_Key and a wrong base version: QP1 drops them before the CM */
	roce_gsi_stats(B.port.dev, &gb);
	uint64_t qk0 = gb.drop[ROCE_GSI_DROP_BAD_QKEY], bv0 = gb.drop[ROCE_GSI_DROP_BASE_VERSION];
	uint64_t rxcm0 = B.ep.cnt.rx_cm;
	cm_mad(MAD_ATTR_CM_REP, 1, 2, mad);
	raw_mad(mad, 0x12345678);
	mad[0] = 2;
	raw_mad(mad, MAD_GSI_QKEY);
	pump_from_a_only();
	roce_gsi_stats(B.port.dev, &gb);
	CHECK_EQ(gb.drop[ROCE_GSI_DROP_BAD_QKEY] - qk0, 1);
	CHECK_EQ(gb.drop[ROCE_GSI_DROP_BASE_VERSION] - bv0, 1);
	CHECK_EQ(B.ep.cnt.rx_cm, rxcm0);
	/* QP1's invariant holds through it all */
	uint64_t sum = gb.delivered;
	for (int i = 0; i < ROCE_GSI_DROP__COUNT; i++)
		sum += gb.drop[i];
	CHECK_EQ(gb.rx_total, sum);

	/* and a connection still forms right after */
	memset(A.ev, 0, sizeof(A.ev));
	memset(B.ev, 0, sizeof(B.ev));
	CHECK_EQ(connect_ab(&id), 0);
	pump();
	CHECK_EQ(id->state, CM_ESTABLISHED);
	CHECK_EQ(B.ev[CM_EV_ESTABLISHED], 1);
	side_fini(&A);
	side_fini(&B);
}

/* The -R channel: an RC QP through the CM, then messages both ways as SENDs. */
static void
test_channel(void)
{
	static struct rnic_cm_chan ca, cb;
	static const uint8_t version[16] = "6.06";
	static const uint8_t page[4] = {0, 0, 0x10, 0};
	uint8_t got[64], peer[16];
	struct rnic_cm_route r;
	uint32_t sq, una, epsn;

	two_sides();
	CHECK_EQ(rnic_cm_chan_create(&ca, &A.ep, 0x0a0a0a), 0);
	CHECK_EQ(rnic_cm_chan_create(&cb, &B.ep, 0x0b0b0b), 0);
	chan_of[0] = &ca;
	chan_of[1] = &cb;
	ip4(peer, 2);
	CHECK_EQ(rnic_cm_resolve(&A.ep, peer, &r), 0);
	CHECK_EQ(rnic_cm_chan_send(&ca, version, 16), -ENOTCONN);
	CHECK_EQ(rnic_cm_chan_connect(&ca, &r, 18515, 40001), 0);
	CHECK_EQ(ca.state, RNIC_CHAN_CONNECTING);
	pump();
	CHECK_EQ(ca.state, RNIC_CHAN_UP);
	CHECK_EQ(cb.state, RNIC_CHAN_UP);
	CHECK_EQ(A.ep.cm.cnt.tx[0], 1);
	CHECK_EQ(B.ep.cm.cnt.tx[3], 1);
	CHECK_EQ(A.ep.cm.cnt.tx[4], 1);

	/* client first, then the server, as perftest's exchange */
	CHECK_EQ(rnic_cm_chan_send(&ca, version, 16), 0);
	CHECK_EQ(rnic_cm_chan_send(&ca, version, 16), -EAGAIN); /* one in flight */
	pump();
	rnic_cm_chan_poll(&ca);
	rnic_cm_chan_poll(&cb);
	CHECK_EQ(rnic_cm_chan_recv(&cb, got, sizeof(got)), 16);
	CHECK(memcmp(got, version, 16) == 0);
	CHECK_EQ(rnic_cm_chan_recv(&cb, got, sizeof(got)), 0);
	CHECK_EQ(rnic_cm_chan_send(&cb, page, 4), 0);
	pump();
	rnic_cm_chan_poll(&ca);
	rnic_cm_chan_poll(&cb);
	CHECK_EQ(rnic_cm_chan_recv(&ca, got, sizeof(got)), 4);
	CHECK(memcmp(got, page, 4) == 0);
	CHECK_EQ(ca.tx_msgs, 1);
	CHECK_EQ(ca.rx_msgs, 1);
	CHECK_EQ(cb.tx_msgs, 1);
	CHECK_EQ(cb.rx_msgs, 1);
	CHECK_EQ(ca.sends_out + cb.sends_out, 0);
	/* each side sends at the PSN the other named: A at B's (REP), B at A's (REQ) */
	roce_qp_psns(ca.qp, &sq, &una, &epsn);
	CHECK_EQ(sq, 0x0b0b0b + 1);
	CHECK_EQ(epsn, 0x0a0a0a + 1);
	roce_qp_psns(cb.qp, &sq, &una, &epsn);
	CHECK_EQ(sq, 0x0a0a0a + 1);
	CHECK_EQ(epsn, 0x0b0b0b + 1);
	/* too long for the receiver's buffer: dropped with -EMSGSIZE */
	CHECK_EQ(rnic_cm_chan_send(&ca, version, 16), 0);
	pump();
	rnic_cm_chan_poll(&ca);
	rnic_cm_chan_poll(&cb);
	CHECK_EQ(rnic_cm_chan_recv(&cb, got, 8), -EMSGSIZE);
	CHECK_EQ(rnic_cm_chan_recv(&cb, got, sizeof(got)), 0);

	/* the server disconnects the channel (as perftest's does): DREQ, DREP */
	CHECK_EQ(rnic_cm_chan_disconnect(&cb), 0);
	pump();
	CHECK_EQ(ca.state, RNIC_CHAN_CLOSED);
	CHECK_EQ(cb.state, RNIC_CHAN_CLOSED);
	CHECK_EQ(B.ep.cm.cnt.tx[5], 1);
	CHECK_EQ(A.ep.cm.cnt.tx[6], 1);
	for (int i = 0; i < 200 && (cm_ids_in_use(&A.ep.cm) || cm_ids_in_use(&B.ep.cm)); i++) {
		fake_now += 100000000ull;
		rnic_cm_poll(&A.ep);
		rnic_cm_poll(&B.ep);
		pump();
	}
	CHECK_EQ(cm_ids_in_use(&A.ep.cm) + cm_ids_in_use(&B.ep.cm), 0);
	rnic_cm_chan_destroy(&ca);
	rnic_cm_chan_destroy(&cb);
	chan_of[0] = chan_of[1] = NULL;
	side_fini(&A);
	side_fini(&B);
}

static void
test_ib_mtu(void)
{
	CHECK_EQ(rnic_cm_ib_mtu(100), 1);
	CHECK_EQ(rnic_cm_ib_mtu(256), 1);
	CHECK_EQ(rnic_cm_ib_mtu(511), 1);
	CHECK_EQ(rnic_cm_ib_mtu(512), 2);
	CHECK_EQ(rnic_cm_ib_mtu(1024), 3);
	CHECK_EQ(rnic_cm_ib_mtu(1500), 3);
	CHECK_EQ(rnic_cm_ib_mtu(2048), 4);
	CHECK_EQ(rnic_cm_ib_mtu(4096), 5);
	CHECK_EQ(rnic_cm_ib_mtu(9000), 5);
}

RW_TEST_MAIN(RW_TEST(test_connect_disconnect), RW_TEST(test_req_lost_once),
	     RW_TEST(test_other_class_and_no_gid), RW_TEST(test_hostile_storm),
	     RW_TEST(test_channel), RW_TEST(test_ib_mtu))
