/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_pcap: write a pcap of RoCEv2 UD SEND-only frames to QP1 (BTH opcode 0x64, DETH
 * Q_Key 0x80010000, ICRC from lib/roce) carrying one of every CM message lib/cm builds,
 * with the fixed field values tests/python/test_cm_tshark.py reads back through tshark
 * and the Scapy layers. Usage: cm_pcap OUT.pcap
 */
#include <stdio.h>
#include <string.h>

#include "cm_msg.h"
#include "ip_cm.h"
#include "net_bytes.h"
#include "roce_pkt.h"

static void
put_le32(FILE *f, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	fwrite(b, 1, 4, f);
}

static void
put_le16(FILE *f, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};

	fwrite(b, 1, 2, f);
}

static int
frame(FILE *f, const struct cm_msg *m, uint32_t psn)
{
	uint8_t mad[MAD_SIZE], buf[512];
	struct roce_pkt p;
	int n;

	if (cm_msg_build(mad, m) != 0)
		return -1;
	memset(&p, 0, sizeof(p));
	memcpy(p.l2.dst, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(p.l2.src, "\x02\x00\x00\x00\x00\x01", 6);
	p.l3.version = 4;
	p.l3.ttl = 64;
	net_ip4_to_mapped(0x0a000001, p.l3.src);
	net_ip4_to_mapped(0x0a000002, p.l3.dst);
	p.udp.sport = 0xc001;
	p.h.bth.opcode = 0x64; /* UD SEND only */
	p.h.bth.pkey = MAD_DEFAULT_PKEY;
	p.h.bth.dqpn = MAD_GSI_QPN;
	p.h.bth.psn = psn;
	p.h.deth.qkey = MAD_GSI_QKEY;
	p.h.deth.sqpn = MAD_GSI_QPN;
	n = roce_build(buf, sizeof(buf), &p, mad, MAD_SIZE, 0);
	if (n < 0)
		return -1;
	put_le32(f, psn);
	put_le32(f, 0);
	put_le32(f, (uint32_t)n);
	put_le32(f, (uint32_t)n);
	fwrite(buf, 1, (size_t)n, f);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct cm_msg m;
	struct ip_cm_hdr h = {.ip_version = 4, .src_port = 0xc123};
	const uint8_t s4[4] = {10, 0, 0, 1}, d4[4] = {10, 0, 0, 2};
	uint32_t psn = 1;
	FILE *f;
	int rc = 0;

	if (argc != 2 || !strcmp(argv[1], "--help")) {
		printf("usage: cm_pcap OUT.pcap\n"
		       "  writes one RoCEv2 UD SEND to QP1 per CM message lib/cm builds\n");
		return argc == 2 ? 0 : 2;
	}
	f = fopen(argv[1], "wb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	put_le32(f, 0xa1b2c3d4);
	put_le16(f, 2);
	put_le16(f, 4);
	put_le32(f, 0);
	put_le32(f, 0);
	put_le32(f, 65535);
	put_le32(f, 1); /* Ethernet */

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_REQ;
	m.hdr.tid = 0x0102030405060708ull;
	m.u.req = (struct cm_req){.local_comm_id = 0x11223344,
				  .service_id = ip_cm_service_id(IP_CM_PS_TCP, 18515),
				  .local_ca_guid = 0x0002c9fffe000001ull,
				  .local_qpn = 0x000123,
				  .responder_resources = 16,
				  .initiator_depth = 8,
				  .remote_cm_response_timeout = 20,
				  .transport = CM_TRANSPORT_RC,
				  .flow_control = 1,
				  .starting_psn = 0x00abcd,
				  .local_cm_response_timeout = 18,
				  .retry_count = 7,
				  .pkey = 0xffff,
				  .path_mtu = 3,
				  .rnr_retry_count = 6,
				  .max_cm_retries = 15,
				  .srq = 0};
	m.u.req.primary.local_lid = 0xffff;
	m.u.req.primary.remote_lid = 0xffff;
	ip_cm_set_ipv4(m.u.req.primary.local_gid, s4);
	ip_cm_set_ipv4(m.u.req.primary.remote_gid, d4);
	m.u.req.primary.local_gid[10] = m.u.req.primary.local_gid[11] = 0xff;
	m.u.req.primary.remote_gid[10] = m.u.req.primary.remote_gid[11] = 0xff;
	m.u.req.primary.flow_label = 0x12345;
	m.u.req.primary.packet_rate = 3;
	m.u.req.primary.traffic_class = 0x60;
	m.u.req.primary.hop_limit = 64;
	m.u.req.primary.sl = 5;
	m.u.req.primary.subnet_local = 1;
	m.u.req.primary.local_ack_timeout = 14;
	ip_cm_set_ipv4(h.src_ip, s4);
	ip_cm_set_ipv4(h.dst_ip, d4);
	ip_cm_compose(m.u.req.private_data, CM_REQ_PD, IP_CM_PS_TCP, &h,
		      (const uint8_t *)"application", 11);
	rc |= frame(f, &m, psn++);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_MRA;
	m.hdr.tid = 0x0102030405060708ull;
	m.u.mra.local_comm_id = 0x55667788;
	m.u.mra.remote_comm_id = 0x11223344;
	m.u.mra.msg_mraed = CM_MSG_REF_REQ;
	m.u.mra.service_timeout = 20;
	rc |= frame(f, &m, psn++);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_REP;
	m.hdr.tid = 0x0102030405060708ull;
	m.u.rep = (struct cm_rep){.local_comm_id = 0x55667788,
				  .remote_comm_id = 0x11223344,
				  .local_qkey = 0,
				  .local_qpn = 0x000456,
				  .starting_psn = 0x00dcba,
				  .responder_resources = 4,
				  .initiator_depth = 2,
				  .target_ack_delay = 15,
				  .failover_accepted = 0,
				  .flow_control = 1,
				  .rnr_retry_count = 7,
				  .srq = 0,
				  .local_ca_guid = 0x0002c9fffe000002ull};
	rc |= frame(f, &m, psn++);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_RTU;
	m.hdr.tid = 0x0102030405060708ull;
	m.u.rtu.local_comm_id = 0x11223344;
	m.u.rtu.remote_comm_id = 0x55667788;
	rc |= frame(f, &m, psn++);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_DREQ;
	m.hdr.tid = 0x1111111122222222ull;
	m.u.dreq.local_comm_id = 0x11223344;
	m.u.dreq.remote_comm_id = 0x55667788;
	m.u.dreq.remote_qpn = 0x000456;
	rc |= frame(f, &m, psn++);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_DREP;
	m.hdr.tid = 0x1111111122222222ull;
	m.u.drep.local_comm_id = 0x55667788;
	m.u.drep.remote_comm_id = 0x11223344;
	rc |= frame(f, &m, psn++);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_REJ;
	m.hdr.tid = 0x0102030405060709ull;
	m.u.rej.local_comm_id = 0x55667789;
	m.u.rej.remote_comm_id = 0x11223345;
	m.u.rej.msg_rejected = CM_MSG_REF_REQ;
	m.u.rej.reason = CM_REJ_CONSUMER_DEFINED;
	rc |= frame(f, &m, psn++);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_SIDR_REQ;
	m.hdr.tid = 0x3333333344444444ull;
	m.u.sidr_req.request_id = 0x0badcafe;
	m.u.sidr_req.pkey = 0xffff;
	m.u.sidr_req.service_id = ip_cm_service_id(IP_CM_PS_UDP, 7174);
	ip_cm_compose(m.u.sidr_req.private_data, CM_SIDR_REQ_PD, IP_CM_PS_UDP, &h, NULL, 0);
	rc |= frame(f, &m, psn++);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = MAD_ATTR_CM_SIDR_REP;
	m.hdr.tid = 0x3333333344444444ull;
	m.u.sidr_rep.request_id = 0x0badcafe;
	m.u.sidr_rep.status = CM_SIDR_SUCCESS;
	m.u.sidr_rep.qpn = 0x000789;
	m.u.sidr_rep.service_id = ip_cm_service_id(IP_CM_PS_UDP, 7174);
	m.u.sidr_rep.qkey = 0x01234567;
	rc |= frame(f, &m, psn++);

	if (fclose(f) != 0 || rc) {
		fprintf(stderr, "cm_pcap: writing %s failed\n", argv[1]);
		return 1;
	}
	return 0;
}
