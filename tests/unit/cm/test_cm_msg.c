/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: the CM message codecs (lib/cm/cm_msg) and the IP CM header (lib/cm/ip_cm),
 * byte-exact against the layout of IBTA Vol. 1 12.6.5-12.6.11, 12.11 (as Linux's
 * cm_msgs.h places the fields) and Linux cma.c's struct cma_hdr. */
#include <string.h>

#include "cm_msg.h"
#include "ip_cm.h"
#include "rw_test.h"

#define D(off) (m[MAD_HDR_SIZE + (off)]) /* byte at MAD-data offset off */

static void
fill_pd(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i);
}

/* parse into a zeroed struct, so that memcmp() sees no stale padding */
static int
parse0(const uint8_t *m, struct cm_msg *b)
{
	memset(b, 0, sizeof(*b));
	return cm_msg_parse(m, MAD_SIZE, b);
}

static void
test_req_bytes(void)
{
	static struct cm_msg a, b;
	uint8_t m[MAD_SIZE];
	struct cm_req *r = &a.u.req;

	memset(&a, 0, sizeof(a));
	a.hdr.attr_id = MAD_ATTR_CM_REQ;
	a.hdr.tid = 0x1122334455667788ull;
	r->local_comm_id = 0xa1b2c3d4;
	r->service_id = 0x0000000001064853ull;
	r->local_ca_guid = 0x0002c9fffe000001ull;
	r->local_qkey = 0x80010000;
	r->local_qpn = 0x123456;
	r->responder_resources = 0x10;
	r->local_eecn = 0;
	r->initiator_depth = 0x08;
	r->remote_eecn = 0;
	r->remote_cm_response_timeout = 20;
	r->transport = CM_TRANSPORT_RC;
	r->flow_control = 1;
	r->starting_psn = 0xabcdef;
	r->local_cm_response_timeout = 18;
	r->retry_count = 7;
	r->pkey = 0xffff;
	r->path_mtu = 3;
	r->rdc_exists = 0;
	r->rnr_retry_count = 6;
	r->max_cm_retries = 15;
	r->srq = 1;
	r->ext_transport = 0;
	r->primary.local_lid = 0xffff;
	r->primary.remote_lid = 0xffff;
	r->primary.local_gid[10] = r->primary.local_gid[11] = 0xff;
	r->primary.local_gid[12] = 10;
	r->primary.local_gid[15] = 1;
	r->primary.remote_gid[15] = 2;
	r->primary.flow_label = 0xabcde;
	r->primary.packet_rate = 0x3f;
	r->primary.traffic_class = 0x60;
	r->primary.hop_limit = 64;
	r->primary.sl = 5;
	r->primary.subnet_local = 1;
	r->primary.local_ack_timeout = 14;
	fill_pd(r->private_data, CM_REQ_PD, 0x40);
	CHECK_EQ(cm_msg_build(m, &a), 0);
	/* common header */
	CHECK_EQ(m[0], 1);
	CHECK_EQ(m[1], 0x07);
	CHECK_EQ(m[2], 2);
	CHECK_EQ(m[3], 0x03);
	CHECK_EQ(m[16], 0x00);
	CHECK_EQ(m[17], 0x10);
	CHECK_EQ(m[8], 0x11);
	CHECK_EQ(m[15], 0x88);
	/* 12.6.5 */
	static const uint8_t head[52] = {0xa1,
					 0xb2,
					 0xc3,
					 0xd4,
					 0,
					 0,
					 0,
					 0, /* comm ID, rsvd */
					 0,
					 0,
					 0,
					 0,
					 0x01,
					 0x06,
					 0x48,
					 0x53, /* service ID */
					 0x00,
					 0x02,
					 0xc9,
					 0xff,
					 0xfe,
					 0x00,
					 0x00,
					 0x01, /* CA GUID */
					 0,
					 0,
					 0,
					 0,
					 0x80,
					 0x01,
					 0x00,
					 0x00, /* rsvd, Q_Key */
					 0x12,
					 0x34,
					 0x56,
					 0x10,
					 0,
					 0,
					 0,
					 0x08, /* QPN|RR, EECN|ID */
					 0,
					 0,
					 0,
					 (20 << 3) | 1, /* rEECN|timeout|RC|FC */
					 0xab,
					 0xcd,
					 0xef,
					 (18 << 3) | 7, /* PSN|timeout|retry */
					 0xff,
					 0xff,
					 (3 << 4) | 6,
					 (15 << 4) | (1 << 3)}; /* P_Key, MTU.., retries.. */
	CHECK_MEM(m + MAD_HDR_SIZE, head, sizeof(head));
	CHECK_EQ(D(52), 0xff);
	CHECK_EQ(D(55), 0xff);
	CHECK_EQ(D(56 + 10), 0xff);
	CHECK_EQ(D(56 + 12), 10);
	CHECK_EQ(D(56 + 15), 1);
	CHECK_EQ(D(72 + 15), 2);
	/* flow label 20 | rsvd 6 | rate 6 */
	CHECK_EQ(D(88), 0xab);
	CHECK_EQ(D(89), 0xcd);
	CHECK_EQ(D(90), 0xe0);
	CHECK_EQ(D(91), 0x3f);
	CHECK_EQ(D(92), 0x60);
	CHECK_EQ(D(93), 64);
	CHECK_EQ(D(94), (5 << 4) | (1 << 3));
	CHECK_EQ(D(95), 14 << 3);
	for (int i = 96; i < 140; i++)
		CHECK_EQ(D(i), 0); /* no alternate path */
	CHECK_EQ(D(140), 0x40);
	CHECK_EQ(D(231), (uint8_t)(0x40 + 91));
	CHECK_EQ(parse0(m, &b), 0);
	CHECK(memcmp(&a.u.req, &b.u.req, sizeof(a.u.req)) == 0);
	CHECK_EQ(b.hdr.tid, a.hdr.tid);
}

static void
test_small_msgs(void)
{
	static struct cm_msg a, b;
	uint8_t m[MAD_SIZE];

	/* REP 12.6.8 */
	memset(&a, 0, sizeof(a));
	a.hdr.attr_id = MAD_ATTR_CM_REP;
	a.u.rep = (struct cm_rep){.local_comm_id = 0x01020304,
				  .remote_comm_id = 0x05060708,
				  .local_qkey = 0x11111111,
				  .local_qpn = 0xabcdef,
				  .starting_psn = 0x123456,
				  .responder_resources = 4,
				  .initiator_depth = 3,
				  .target_ack_delay = 15,
				  .failover_accepted = 3,
				  .flow_control = 1,
				  .rnr_retry_count = 7,
				  .srq = 1,
				  .local_ca_guid = 0x0807060504030201ull};
	fill_pd(a.u.rep.private_data, CM_REP_PD, 1);
	CHECK_EQ(cm_msg_build(m, &a), 0);
	CHECK_EQ(m[17], 0x13);
	CHECK_EQ(D(0), 0x01);
	CHECK_EQ(D(7), 0x08);
	CHECK_EQ(D(12), 0xab);
	CHECK_EQ(D(14), 0xef);
	CHECK_EQ(D(15), 0);
	CHECK_EQ(D(20), 0x12);
	CHECK_EQ(D(24), 4);
	CHECK_EQ(D(25), 3);
	CHECK_EQ(D(26), (15 << 3) | (3 << 1) | 1);
	CHECK_EQ(D(27), (7 << 5) | (1 << 4));
	CHECK_EQ(D(28), 0x08);
	CHECK_EQ(D(35), 0x01);
	CHECK_EQ(D(36), 1);
	CHECK_EQ(D(231), (uint8_t)(1 + 195));
	CHECK_EQ(parse0(m, &b), 0);
	CHECK(memcmp(&a.u.rep, &b.u.rep, sizeof(a.u.rep)) == 0);

	/* MRA 12.6.6 */
	memset(&a, 0, sizeof(a));
	a.hdr.attr_id = MAD_ATTR_CM_MRA;
	a.u.mra.local_comm_id = 1;
	a.u.mra.remote_comm_id = 2;
	a.u.mra.msg_mraed = CM_MSG_REF_REP;
	a.u.mra.service_timeout = 31;
	fill_pd(a.u.mra.private_data, CM_MRA_PD, 9);
	CHECK_EQ(cm_msg_build(m, &a), 0);
	CHECK_EQ(D(8), 0x40);
	CHECK_EQ(D(9), 0xf8);
	CHECK_EQ(D(10), 9);
	CHECK_EQ(D(231), (uint8_t)(9 + 221));
	CHECK_EQ(parse0(m, &b), 0);
	CHECK(memcmp(&a.u.mra, &b.u.mra, sizeof(a.u.mra)) == 0);

	/* REJ 12.6.7 */
	memset(&a, 0, sizeof(a));
	a.hdr.attr_id = MAD_ATTR_CM_REJ;
	a.u.rej.local_comm_id = 3;
	a.u.rej.remote_comm_id = 4;
	a.u.rej.msg_rejected = CM_MSG_REF_OTHER;
	a.u.rej.ari_length = 72;
	a.u.rej.reason = CM_REJ_CONSUMER_DEFINED;
	fill_pd(a.u.rej.ari, CM_REJ_ARI, 0x80);
	fill_pd(a.u.rej.private_data, CM_REJ_PD, 0x20);
	CHECK_EQ(cm_msg_build(m, &a), 0);
	CHECK_EQ(D(8), 0x80);
	CHECK_EQ(D(9), 72 << 1);
	CHECK_EQ(D(10), 0);
	CHECK_EQ(D(11), 28);
	CHECK_EQ(D(12), 0x80);
	CHECK_EQ(D(83), (uint8_t)(0x80 + 71));
	CHECK_EQ(D(84), 0x20);
	CHECK_EQ(D(231), (uint8_t)(0x20 + 147));
	CHECK_EQ(parse0(m, &b), 0);
	CHECK(memcmp(&a.u.rej, &b.u.rej, sizeof(a.u.rej)) == 0);
	D(9) = 73 << 1; /* ARI length beyond 72 */
	CHECK_EQ(cm_msg_parse(m, sizeof(m), &b), -CM_MSG_E_FIELD);

	/* RTU 12.6.9, DREQ 12.6.10, DREP 12.6.11 */
	memset(&a, 0, sizeof(a));
	a.hdr.attr_id = MAD_ATTR_CM_DREQ;
	a.u.dreq.local_comm_id = 0xdeadbeef;
	a.u.dreq.remote_comm_id = 0xcafef00d;
	a.u.dreq.remote_qpn = 0x000011;
	fill_pd(a.u.dreq.private_data, CM_DREQ_PD, 3);
	CHECK_EQ(cm_msg_build(m, &a), 0);
	CHECK_EQ(m[17], 0x15);
	CHECK_EQ(D(3), 0xef);
	CHECK_EQ(D(4), 0xca);
	CHECK_EQ(D(10), 0x11);
	CHECK_EQ(D(11), 0);
	CHECK_EQ(D(12), 3);
	CHECK_EQ(D(231), (uint8_t)(3 + 219));
	CHECK_EQ(parse0(m, &b), 0);
	CHECK(memcmp(&a.u.dreq, &b.u.dreq, sizeof(a.u.dreq)) == 0);
	memset(&a, 0, sizeof(a));
	a.hdr.attr_id = MAD_ATTR_CM_RTU;
	a.u.rtu.local_comm_id = 7;
	fill_pd(a.u.rtu.private_data, CM_RTU_PD, 5);
	CHECK_EQ(cm_msg_build(m, &a), 0);
	CHECK_EQ(D(8), 5);
	CHECK_EQ(D(231), (uint8_t)(5 + 223));
	CHECK_EQ(parse0(m, &b), 0);
	CHECK(memcmp(&a.u.rtu, &b.u.rtu, sizeof(a.u.rtu)) == 0);
	a.hdr.attr_id = MAD_ATTR_CM_DREP;
	CHECK_EQ(cm_msg_build(m, &a), 0);
	CHECK_EQ(m[17], 0x16);
	CHECK_EQ(parse0(m, &b), 0);
	CHECK(memcmp(a.u.rtu.private_data, b.u.drep.private_data, CM_DREP_PD) == 0);

	/* SIDR_REQ 12.11.2, SIDR_REP 12.11.3 */
	memset(&a, 0, sizeof(a));
	a.hdr.attr_id = MAD_ATTR_CM_SIDR_REQ;
	a.u.sidr_req.request_id = 0x01020304;
	a.u.sidr_req.pkey = 0xffff;
	a.u.sidr_req.service_id = 0x0000000001114853ull;
	fill_pd(a.u.sidr_req.private_data, CM_SIDR_REQ_PD, 7);
	CHECK_EQ(cm_msg_build(m, &a), 0);
	CHECK_EQ(D(4), 0xff);
	CHECK_EQ(D(6), 0);
	CHECK_EQ(D(12), 0x01);
	CHECK_EQ(D(13), 0x11);
	CHECK_EQ(D(16), 7);
	CHECK_EQ(D(231), (uint8_t)(7 + 215));
	CHECK_EQ(parse0(m, &b), 0);
	CHECK(memcmp(&a.u.sidr_req, &b.u.sidr_req, sizeof(a.u.sidr_req)) == 0);
	memset(&a, 0, sizeof(a));
	a.hdr.attr_id = MAD_ATTR_CM_SIDR_REP;
	a.u.sidr_rep.request_id = 0x01020304;
	a.u.sidr_rep.status = CM_SIDR_SUCCESS;
	a.u.sidr_rep.qpn = 0x000123;
	a.u.sidr_rep.service_id = 0x0000000001114853ull;
	a.u.sidr_rep.qkey = 0x12345678;
	fill_pd(a.u.sidr_rep.private_data, CM_SIDR_REP_PD, 11);
	CHECK_EQ(cm_msg_build(m, &a), 0);
	CHECK_EQ(D(4), 0);
	CHECK_EQ(D(9), 0x01);
	CHECK_EQ(D(10), 0x23);
	CHECK_EQ(D(11), 0);
	CHECK_EQ(D(16), 0x01);
	CHECK_EQ(D(17), 0x11);
	CHECK_EQ(D(20), 0x12);
	CHECK_EQ(D(23), 0x78);
	CHECK_EQ(D(96), 11);
	CHECK_EQ(D(231), (uint8_t)(11 + 135));
	CHECK_EQ(parse0(m, &b), 0);
	CHECK(memcmp(&a.u.sidr_rep, &b.u.sidr_rep, sizeof(a.u.sidr_rep)) == 0);
}

static void
test_parse_errors(void)
{
	static struct cm_msg a, b;
	uint8_t m[MAD_SIZE];

	memset(&a, 0, sizeof(a));
	a.hdr.attr_id = MAD_ATTR_CM_RTU;
	CHECK_EQ(cm_msg_build(m, &a), 0);
	CHECK_EQ(cm_msg_parse(m, MAD_SIZE - 1, &b), -CM_MSG_E_SHORT);
	CHECK_EQ(cm_msg_parse(m, 0, &b), -CM_MSG_E_SHORT);
	m[2] = 1;
	CHECK_EQ(cm_msg_parse(m, MAD_SIZE, &b), -CM_MSG_E_CLASS_VERSION);
	m[2] = 2;
	m[1] = 0x04;
	CHECK_EQ(cm_msg_parse(m, MAD_SIZE, &b), -CM_MSG_E_CLASS);
	m[1] = 0x07;
	m[3] = 0x01;
	CHECK_EQ(cm_msg_parse(m, MAD_SIZE, &b), -CM_MSG_E_METHOD);
	m[3] = 0x03;
	m[17] = 0x1b;
	CHECK_EQ(cm_msg_parse(m, MAD_SIZE, &b), -CM_MSG_E_ATTR);
	m[17] = 0x19;
	CHECK_EQ(cm_msg_parse(m, MAD_SIZE, &b), 0); /* LAP is recognised */
	a.hdr.attr_id = 0x20;
	CHECK_EQ(cm_msg_build(m, &a), -CM_MSG_E_ATTR);
	CHECK(strcmp(cm_msg_err_name(-CM_MSG_E_CLASS_VERSION), "class_version") == 0);
	CHECK(strcmp(cm_attr_name(MAD_ATTR_CM_SIDR_REP), "SIDR_REP") == 0);
	CHECK_EQ(cm_time_ns(0), 4096);
	CHECK_EQ(cm_time_ns(20), 4096ull << 20);
}

static void
test_ip_cm(void)
{
	struct ip_cm_hdr h = {.cma_version = 0, .ip_version = 4, .src_port = 0xc001}, g;
	uint8_t pd[CM_REQ_PD], app[57];
	const uint8_t v4s[4] = {10, 0, 0, 1}, v4d[4] = {10, 0, 0, 2};
	uint16_t ps, port;

	CHECK_EQ(ip_cm_service_id(IP_CM_PS_TCP, 18515), 0x0000000001064853ull);
	CHECK_EQ(ip_cm_service_id(IP_CM_PS_UDP, 18515), 0x0000000001114853ull);
	CHECK_EQ(ip_cm_sid_split(0x0000000001064853ull, &ps, &port), 0);
	CHECK_EQ(ps, IP_CM_PS_TCP);
	CHECK_EQ(port, 18515);
	CHECK_EQ(ip_cm_sid_split(0x0000000002064853ull, &ps, &port), -IP_CM_E_SID);
	ip_cm_set_ipv4(h.src_ip, v4s);
	ip_cm_set_ipv4(h.dst_ip, v4d);
	fill_pd(app, sizeof(app), 0xa0);
	CHECK_EQ(ip_cm_compose(pd, sizeof(pd), IP_CM_PS_TCP, &h, app, 57), -1); /* 56 max */
	CHECK_EQ(ip_cm_compose(pd, sizeof(pd), IP_CM_PS_TCP, &h, app, 56), 56);
	static const uint8_t want[36] = {0x00, 0x40, 0xc0, 0x01, 0,  0, 0, 0, 0,  0, 0, 0,
					 0,    0,    0,	   0,	 10, 0, 0, 1, 0,  0, 0, 0,
					 0,    0,    0,	   0,	 0,  0, 0, 0, 10, 0, 0, 2};
	CHECK_MEM(pd, want, 36);
	CHECK_MEM(pd + 36, app, 56); /* the application's bytes, untouched */
	CHECK_EQ(ip_cm_hdr_parse(pd, sizeof(pd), &g), 0);
	CHECK_EQ(g.ip_version, 4);
	CHECK_EQ(g.src_port, 0xc001);
	CHECK_MEM(g.dst_ip, h.dst_ip, 16);
	CHECK_EQ(ip_cm_hdr_parse(pd, 35, &g), -IP_CM_E_SHORT);
	pd[1] = 0x50;
	CHECK_EQ(ip_cm_hdr_parse(pd, sizeof(pd), &g), -IP_CM_E_IP_VERSION);
	pd[0] = 1;
	CHECK_EQ(ip_cm_hdr_parse(pd, sizeof(pd), &g), -IP_CM_E_VERSION);
	/* RDMA_PS_IB: no header, all 92 bytes are the application's */
	CHECK_EQ(ip_cm_compose(pd, sizeof(pd), IP_CM_PS_IB, &h, app, 57), 57);
	CHECK_MEM(pd, app, 57);
	CHECK_EQ(pd[57], 0);
	CHECK_EQ(ip_cm_app_offset(IP_CM_PS_IB), 0);
	CHECK_EQ(ip_cm_app_offset(IP_CM_PS_UDP), 36);
}

RW_TEST_MAIN(RW_TEST(test_req_bytes), RW_TEST(test_small_msgs), RW_TEST(test_parse_errors),
	     RW_TEST(test_ip_cm))
