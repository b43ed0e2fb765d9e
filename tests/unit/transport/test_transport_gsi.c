/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP1, the GSI (lib/roce roce_gsi.c): a MAD sent by one device's QP 1 arrives at the
 * other's handler byte-exact with its source; the frame on the wire is a UD
 * SEND_ONLY from QP 1 with a valid ICRC; every receive drop cause is counted
 * exactly once and rx_total == delivered + sum(drops); the per-kind counters.
 */
#include <string.h>

#include "mad.h"
#include "mad_kind.h"
#include "net_bytes.h"
#include "roce_gsi.h"
#include "roce_pkt.h"
#include "rw_test.h"
#include "tr_harness.h"

static struct {
	unsigned int calls;
	int ret;
	uint8_t mad[MAD_SIZE];
	struct roce_gsi_src src;
} got;

static int
on_mad(void *ctx, const uint8_t *mad, const struct roce_gsi_src *src)
{
	(void)ctx;
	got.calls++;
	memcpy(got.mad, mad, MAD_SIZE);
	got.src = *src;
	return got.ret;
}

static const struct roce_gsi_ops gsi_ops = {.on_mad = on_mad};

static void
make_mad(uint8_t *mad, uint8_t mgmt_class, uint16_t attr, uint32_t seed)
{
	struct mad_hdr h = {.base_version = MAD_BASE_VERSION,
			    .mgmt_class = mgmt_class,
			    .class_version = MAD_CLASS_CM_VERSION,
			    .method = MAD_METHOD_SEND,
			    .tid = 0x1122334455667788ull + seed,
			    .attr_id = attr};

	for (unsigned int i = 0; i < MAD_SIZE; i++)
		mad[i] = (uint8_t)(i * 7 + seed);
	mad_hdr_build(mad, &h);
}

static void
dest_of(struct tr_wire *w, int to, struct roce_gsi_dest *d)
{
	memset(d, 0, sizeof(*d));
	memcpy(d->gid, w->side[to].gid.raw, 16);
	memcpy(d->mac, w->side[to].mac, 6);
	d->qpn = MAD_GSI_QPN;
	d->qkey = MAD_GSI_QKEY;
}

/* A sends one MAD; the frame A put on the wire, parsed back with its ICRC checked. */
static size_t
send_one(struct tr_wire *w, const uint8_t *mad, uint8_t *frame, struct roce_pkt *p)
{
	struct roce_gsi_dest d;
	struct tr_frame *f;

	dest_of(w, TR_B, &d);
	CHECK_EQ(roce_gsi_send(w->side[TR_A].dev, &d, mad), 0);
	f = w->q[TR_A].tail;
	CHECK(f != NULL);
	if (!f)
		return 0;
	memcpy(frame, f->data, f->len);
	CHECK_EQ(roce_parse(frame, f->len, p, 0), 0);
	return f->len;
}

static void
t_send_deliver(void)
{
	struct tr_wire w;
	struct tr_opts o = {.type = IBV_QPT_UD};
	struct roce_gsi_stats st;
	struct roce_pkt p;
	uint8_t mad[MAD_SIZE], frame[2048];

	memset(&got, 0, sizeof(got));
	tr_init(&w, &o);
	w.capture_only = true;
	roce_gsi_set_ops(w.side[TR_B].dev, &gsi_ops, NULL);
	roce_gsi_set_psn(w.side[TR_A].dev, 0xabcdef);
	make_mad(mad, MAD_CLASS_CM, MAD_ATTR_CM_REQ, 1);
	send_one(&w, mad, frame, &p);
	/* the frame: UD SEND_ONLY, DETH from QP 1 with the GSI Q_Key, default P_Key, a MAD */
	CHECK_EQ(p.h.bth.opcode, ROCE_OP_UD_BASE | ROCE_OP_SEND_ONLY);
	CHECK_EQ(p.h.bth.dqpn, MAD_GSI_QPN);
	CHECK_EQ(p.h.bth.pkey, MAD_DEFAULT_PKEY);
	CHECK_EQ(p.h.bth.psn, 0xabcdef);
	CHECK_EQ(p.h.deth.sqpn, MAD_GSI_QPN);
	CHECK_EQ(p.h.deth.qkey, MAD_GSI_QKEY);
	CHECK_EQ(p.payload_len, MAD_SIZE);
	CHECK_MEM(frame + p.payload_off, mad, MAD_SIZE);
	CHECK_EQ(p.udp.sport, roce_udp_sport(MAD_GSI_QPN, MAD_GSI_QPN));
	CHECK_MEM(p.l2.src, w.side[TR_A].mac, 6);
	CHECK_MEM(p.l2.dst, w.side[TR_B].mac, 6);
	CHECK_MEM(p.l3.src, w.side[TR_A].gid.raw, 16);
	CHECK_MEM(p.l3.dst, w.side[TR_B].gid.raw, 16);
	/* a flipped payload bit fails the ICRC (negative control of the parse above) */
	frame[p.payload_off + 40] ^= 1;
	CHECK(roce_parse(frame, p.frame_len, &p, 0) < 0);
	/* the PSN advances per MAD, modulo 2^24 */
	make_mad(mad, MAD_CLASS_CM, MAD_ATTR_CM_REP, 2);
	send_one(&w, mad, frame, &p);
	CHECK_EQ(p.h.bth.psn, 0xabcdf0);
	roce_gsi_set_psn(w.side[TR_A].dev, 0xffffff);
	send_one(&w, mad, frame, &p);
	send_one(&w, mad, frame, &p);
	CHECK_EQ(p.h.bth.psn, 0);
	/* delivery: byte-exact, with the source */
	w.capture_only = false;
	CHECK(tr_deliver_one(&w, TR_A));
	CHECK_EQ(got.calls, 1);
	make_mad(mad, MAD_CLASS_CM, MAD_ATTR_CM_REQ, 1);
	CHECK_MEM(got.mad, mad, MAD_SIZE);
	CHECK_MEM(got.src.gid, w.side[TR_A].gid.raw, 16);
	CHECK_MEM(got.src.dst_gid, w.side[TR_B].gid.raw, 16);
	CHECK_MEM(got.src.mac, w.side[TR_A].mac, 6);
	CHECK_EQ(got.src.qpn, MAD_GSI_QPN);
	CHECK_EQ(got.src.pkey, MAD_DEFAULT_PKEY);
	CHECK_EQ(got.src.udp_sport, roce_udp_sport(MAD_GSI_QPN, MAD_GSI_QPN));
	while (tr_deliver_one(&w, TR_A))
		;
	CHECK_EQ(got.calls, 4);
	make_mad(mad, MAD_CLASS_CM, MAD_ATTR_CM_REP, 2);
	CHECK_MEM(got.mad, mad, MAD_SIZE);
	roce_gsi_stats(w.side[TR_A].dev, &st);
	CHECK_EQ(st.tx_total, 4);
	CHECK_EQ(st.mad[ROCE_GSI_TX][MAD_KIND_CM_REQ], 1);
	CHECK_EQ(st.mad[ROCE_GSI_TX][MAD_KIND_CM_REP], 3);
	roce_gsi_stats(w.side[TR_B].dev, &st);
	CHECK_EQ(st.rx_total, 4);
	CHECK_EQ(st.delivered, 4);
	CHECK_EQ(st.mad[ROCE_GSI_RX][MAD_KIND_CM_REQ], 1);
	CHECK_EQ(st.mad[ROCE_GSI_RX][MAD_KIND_CM_REP], 3);
	/* the device's own QPN drop does not see QP 1 */
	CHECK_EQ(tr_dev_stat(&w.side[TR_B], ROCE_STAT_RX_DROP_BAD_QPN), 0);
	tr_fini(&w);
}

/* Rebuild @p p (a parsed GSI frame) with @p plen payload bytes and feed it to B. */
static void
feed(struct tr_wire *w, struct roce_pkt *p, const uint8_t *payload, uint32_t plen)
{
	uint8_t f[2048];
	int len = roce_build(f, sizeof(f), p, payload, plen, 0);

	CHECK(len > 0);
	if (len > 0)
		CHECK_EQ(roce_dev_rx(w->side[TR_B].dev, f, (size_t)len), 0);
}

static void
t_rx_drops(void)
{
	struct tr_wire w;
	struct tr_opts o = {.type = IBV_QPT_UD};
	struct roce_gsi_stats st;
	struct roce_pkt p, q;
	uint8_t mad[MAD_SIZE + 8], frame[2048];
	uint64_t sum = 0;

	memset(&got, 0, sizeof(got));
	tr_init(&w, &o);
	w.capture_only = true;
	make_mad(mad, MAD_CLASS_CM, MAD_ATTR_CM_REQ, 3);
	memset(mad + MAD_SIZE, 0x5a, 8);
	send_one(&w, mad, frame, &p);

	/* no handler registered yet: counted, with its kind */
	q = p;
	feed(&w, &q, mad, MAD_SIZE);
	roce_gsi_set_ops(w.side[TR_B].dev, &gsi_ops, NULL);
	/* with immediate */
	q = p;
	q.h.bth.opcode = ROCE_OP_UD_BASE | ROCE_OP_SEND_ONLY_IMM;
	q.h.imm = 7;
	feed(&w, &q, mad, MAD_SIZE);
	/* an RC SEND to QP 1 */
	q = p;
	q.h.bth.opcode = ROCE_OP_RC_BASE | ROCE_OP_SEND_ONLY;
	feed(&w, &q, mad, MAD_SIZE);
	/* Q_Key: not the GSI's (twice), P_Key: another partition (three times) */
	q = p;
	q.h.deth.qkey = 0x11111111;
	feed(&w, &q, mad, MAD_SIZE);
	q.h.deth.qkey = MAD_GSI_QKEY ^ 1;
	feed(&w, &q, mad, MAD_SIZE);
	q = p;
	q.h.bth.pkey = 0x8001;
	feed(&w, &q, mad, MAD_SIZE);
	feed(&w, &q, mad, MAD_SIZE);
	q.h.bth.pkey = 0x7ffe;
	feed(&w, &q, mad, MAD_SIZE);
	/* a limited member's default P_Key is the same partition: accepted */
	q.h.bth.pkey = 0x7fff;
	feed(&w, &q, mad, MAD_SIZE);
	/* short, long, empty */
	q = p;
	feed(&w, &q, mad, MAD_SIZE - 1);
	feed(&w, &q, mad, 24);
	feed(&w, &q, mad, 0);
	feed(&w, &q, mad, MAD_SIZE + 4);
	/* base version 2 */
	mad[0] = 2;
	feed(&w, &q, mad, MAD_SIZE);
	mad[0] = MAD_BASE_VERSION;
	/* the handler declines: unclaimed */
	got.ret = 1;
	feed(&w, &q, mad, MAD_SIZE);
	got.ret = 0;
	/* good ones of other kinds: vendor (0x30, 0x0a), other (SubnAdm 0x03), CM other */
	make_mad(mad, 0x30, 0x10, 4);
	feed(&w, &q, mad, MAD_SIZE);
	make_mad(mad, 0x0a, 0x10, 4);
	feed(&w, &q, mad, MAD_SIZE);
	make_mad(mad, 0x03, 0x10, 4);
	feed(&w, &q, mad, MAD_SIZE);
	make_mad(mad, MAD_CLASS_CM, MAD_ATTR_CLASS_PORT_INFO, 4);
	feed(&w, &q, mad, MAD_SIZE);
	make_mad(mad, MAD_CLASS_CM, MAD_ATTR_CM_DREQ, 4);
	feed(&w, &q, mad, MAD_SIZE);
	CHECK_MEM(got.mad, mad, MAD_SIZE);

	roce_gsi_stats(w.side[TR_B].dev, &st);
	CHECK_EQ(st.drop[ROCE_GSI_DROP_NO_HANDLER], 1);
	CHECK_EQ(st.drop[ROCE_GSI_DROP_IMM], 1);
	CHECK_EQ(st.drop[ROCE_GSI_DROP_BAD_OPCODE], 1);
	CHECK_EQ(st.drop[ROCE_GSI_DROP_BAD_QKEY], 2);
	CHECK_EQ(st.drop[ROCE_GSI_DROP_BAD_PKEY], 3);
	CHECK_EQ(st.drop[ROCE_GSI_DROP_SHORT], 3);
	CHECK_EQ(st.drop[ROCE_GSI_DROP_LONG], 1);
	CHECK_EQ(st.drop[ROCE_GSI_DROP_BASE_VERSION], 1);
	CHECK_EQ(st.drop[ROCE_GSI_DROP_UNCLAIMED], 1);
	CHECK_EQ(st.delivered, 6); /* the 0x7fff REQ and five of other kinds */
	CHECK_EQ(got.calls, 7);	   /* and the unclaimed one */
	for (int i = 0; i < ROCE_GSI_DROP__COUNT; i++)
		sum += st.drop[i];
	CHECK_EQ(st.rx_total, 20);
	CHECK_EQ(st.rx_total, st.delivered + sum);
	/* kinds count MADs with a valid header: no handler, 0x7fff, unclaimed + 5 */
	CHECK_EQ(st.mad[ROCE_GSI_RX][MAD_KIND_CM_REQ], 3);
	CHECK_EQ(st.mad[ROCE_GSI_RX][MAD_KIND_VENDOR], 2);
	CHECK_EQ(st.mad[ROCE_GSI_RX][MAD_KIND_OTHER], 1);
	CHECK_EQ(st.mad[ROCE_GSI_RX][MAD_KIND_CM_OTHER], 1);
	CHECK_EQ(st.mad[ROCE_GSI_RX][MAD_KIND_CM_DREQ], 1);
	CHECK_EQ(tr_dev_stat(&w.side[TR_B], ROCE_STAT_RX_DROP_BAD_QPN), 0);
	tr_fini(&w);
}

static void
t_tx_errors(void)
{
	struct tr_wire w;
	struct tr_opts o = {.type = IBV_QPT_UD};
	struct roce_gsi_stats st;
	struct roce_gsi_dest d;
	uint8_t mad[MAD_SIZE];

	tr_init(&w, &o);
	w.capture_only = true;
	make_mad(mad, MAD_CLASS_CM, MAD_ATTR_CM_REQ, 5);
	/* no MAC given: resolved through the device's resolve_mac op */
	dest_of(&w, TR_B, &d);
	memset(d.mac, 0, 6);
	CHECK_EQ(roce_gsi_send(w.side[TR_A].dev, &d, mad), 0);
	CHECK_MEM(w.q[TR_A].tail->data, w.side[TR_B].mac, 6);
	/* an unknown GID resolves to nothing */
	d.gid[15] ^= 0x40;
	CHECK(roce_gsi_send(w.side[TR_A].dev, &d, mad) < 0);
	/* a source GID the device does not have */
	dest_of(&w, TR_B, &d);
	d.sgid_index = 9;
	CHECK(roce_gsi_send(w.side[TR_A].dev, &d, mad) < 0);
	/* the port refuses */
	dest_of(&w, TR_B, &d);
	w.side[TR_A].refuse_tx = 1;
	CHECK(roce_gsi_send(w.side[TR_A].dev, &d, mad) < 0);
	roce_gsi_stats(w.side[TR_A].dev, &st);
	CHECK_EQ(st.tx_total, 1);
	CHECK_EQ(st.tx_err[ROCE_GSI_TX_NO_MAC], 1);
	CHECK_EQ(st.tx_err[ROCE_GSI_TX_BAD_DEST], 1);
	CHECK_EQ(st.tx_err[ROCE_GSI_TX_REFUSED], 1);
	CHECK_EQ(w.q[TR_A].count, 1);
	tr_fini(&w);
}

static void
t_kinds(void)
{
	CHECK_EQ(mad_kind_of(MAD_CLASS_CM, MAD_ATTR_CM_REQ), MAD_KIND_CM_REQ);
	CHECK_EQ(mad_kind_of(MAD_CLASS_CM, MAD_ATTR_CM_APR), MAD_KIND_CM_APR);
	CHECK_EQ(mad_kind_of(MAD_CLASS_CM, MAD_ATTR_CM_SIDR_REP), MAD_KIND_CM_SIDR_REP);
	CHECK_EQ(mad_kind_of(MAD_CLASS_CM, 0x1b), MAD_KIND_CM_OTHER);
	CHECK_EQ(mad_kind_of(MAD_CLASS_CM, 0x0f), MAD_KIND_CM_OTHER);
	CHECK_EQ(mad_kind_of(0x4f, MAD_ATTR_CM_REQ), MAD_KIND_VENDOR);
	CHECK_EQ(mad_kind_of(0x50, MAD_ATTR_CM_REQ), MAD_KIND_OTHER);
	CHECK_EQ(mad_kind_of(0x08, MAD_ATTR_CM_REQ), MAD_KIND_OTHER);
	for (int k = 0; k < MAD_KIND__COUNT; k++)
		CHECK_EQ(mad_kind_from_name(mad_kind_name((enum mad_kind)k)), k);
	CHECK_EQ(mad_kind_from_name("cm-nope"), -1);
	CHECK(mad_kind_name(MAD_KIND__COUNT) == NULL);
	CHECK_EQ(strcmp(mad_kind_name(MAD_KIND_CM_SIDR_REQ), "cm-sidr-req"), 0);
}

RW_TEST_MAIN(RW_TEST(t_send_deliver), RW_TEST(t_rx_drops), RW_TEST(t_tx_errors), RW_TEST(t_kinds))
