/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the RoCEv2 wire layer: opcode table, PSN math, ICRC (against a
 * real Linux rxe capture and an independent zlib implementation), build/parse
 * round trips of every opcode over IPv4/IPv6 with and without 802.1Q, and a
 * malformed-input corpus (every truncation, bad lengths, pad, opcode, ICRC).
 */
#include <stdlib.h>
#include <zlib.h>

#include "net_bytes.h"
#include "net_frame.h"
#include "roce_icrc.h"
#include "roce_pkt.h"
#include "roce_psn.h"
#include "rw_pcap.h"
#include "rw_test.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	/* splitmix64: deterministic test data */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
test_psn(void)
{
	CHECK_EQ(roce_psn_add(0xffffff, 1), 0);
	CHECK_EQ(roce_psn_add(0xfffffe, 5), 3);
	CHECK_EQ(roce_psn_diff(0, 0xffffff), 1);
	CHECK_EQ(roce_psn_diff(0xffffff, 0), -1);
	CHECK_EQ(roce_psn_diff(10, 3), 7);
	CHECK_EQ(roce_psn_diff(0x7fffff, 0), 0x7fffff);
	CHECK_EQ(roce_psn_diff(0x800000, 0), -0x800000);
	CHECK_EQ(roce_psn_cmp(1, 0xfffff0), 1);
	CHECK_EQ(roce_psn_cmp(0xfffff0, 1), -1);
	CHECK_EQ(roce_psn_cmp(5, 5), 0);
	CHECK(roce_psn_in_window(2, 0xfffffe, 5));
	CHECK(!roce_psn_in_window(3, 0xfffffe, 5));
	for (int i = 0; i < 10000; i++) {
		uint32_t a = (uint32_t)rnd() & ROCE_PSN_MASK, n = (uint32_t)rnd() % 0x7fffff;
		uint32_t b = roce_psn_add(a, n);
		if (roce_psn_diff(b, a) != (int32_t)n || roce_psn_cmp(b, a) != (n > 0)) {
			CHECK(!"psn add/diff inconsistent");
			return;
		}
	}
	CHECK(1);
}

static void
test_opcode_table(void)
{
	static const uint8_t lens[] = {ROCE_DETH_LEN,  ROCE_RETH_LEN,	      ROCE_ATOMICETH_LEN,
				       ROCE_AETH_LEN,  ROCE_ATOMICACKETH_LEN, ROCE_IMMDT_LEN,
				       ROCE_IETH_LEN,  ROCE_CNP_RSVD_LEN,     ROCE_SPETH_LEN,
				       ROCE_NTETH_LEN, ROCE_FRH_LEN,	      ROCE_VTETH_LEN,
				       ROCE_VLETH_LEN};
	int n[5] = {0};

	for (int op = 0; op < 256; op++) {
		const struct roce_opcode_info *o = roce_opcode_info((uint8_t)op);
		int len = ROCE_BTH_LEN;

		n[o->transport]++;
		if (o->transport == ROCE_TR_NONE) {
			CHECK(o->name == NULL);
			continue;
		}
		for (int b = 0; b < 13; b++)
			if (o->ext & (1 << b))
				len += lens[b];
		CHECK_EQ(o->hdr_len, len);
		/* opcode ranges match the transport (IBTA table 38) */
		/* and the rocewan extension registry: 0xC0-0xFF, manufacturer-specific */
		if (o->transport == ROCE_TR_RC)
			CHECK(((op < 0x20 && !(o->flags & ROCE_OPF_VENDOR)) ||
			       (op >= 0xc0 && (o->flags & ROCE_OPF_VENDOR))) &&
			      strncmp(o->name, "RC_", 3) == 0);
		if (o->transport == ROCE_TR_UC)
			CHECK(op >= 0x20 && op < 0x40 && strncmp(o->name, "UC_", 3) == 0);
		if (o->transport == ROCE_TR_UD)
			CHECK(op >= 0x60 && op < 0x80 && strncmp(o->name, "UD_", 3) == 0);
		/* exactly one of first/middle/last/only (or neither for CNP) */
		CHECK((o->flags & (ROCE_OPF_MIDDLE)) == 0 ||
		      (o->flags & (ROCE_OPF_FIRST | ROCE_OPF_LAST)) == 0);
	}
	/* + FEC repair, negotiation; VRP ACK/NACK, VRP WRITE FIRST, VRP LOSS */
	CHECK_EQ(n[ROCE_TR_RC], 23 + 10 + 2 + 4);
	CHECK_EQ(n[ROCE_TR_UC], 12);
	CHECK_EQ(n[ROCE_TR_UD], 2);
	CHECK_EQ(n[ROCE_TR_CNP], 1);
	CHECK(strcmp(roce_opcode_name(0x0b), "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE") == 0);
	CHECK(strcmp(roce_opcode_name(0x15), "RESERVED") == 0);
	CHECK(strcmp(roce_opcode_name(0x81), "CNP") == 0);
	CHECK_EQ(roce_opcode_info(0x12)->hdr_len, 24);
	CHECK_EQ(roce_ext_offset(0x0b, ROCE_EXT_RETH), 0);
	CHECK_EQ(roce_ext_offset(0x0b, ROCE_EXT_IMMDT), 16);
	CHECK_EQ(roce_ext_offset(0x65, ROCE_EXT_IMMDT), 8);
	CHECK_EQ(roce_ext_offset(0x12, ROCE_EXT_ATOMICACKETH), 4);
	CHECK_EQ(roce_ext_offset(0x04, ROCE_EXT_RETH), -1);
	CHECK(roce_opcode_info(0x11)->flags & ROCE_OPF_ACK);
	CHECK(!(roce_opcode_info(0x0c)->flags & ROCE_OPF_PAYLOAD));
	/* extension registry (docs/wire.md): layouts */
	CHECK_EQ(roce_opcode_info(ROCE_XOP_RACK)->hdr_len, 12 + 4 + 4);
	CHECK_EQ(roce_ext_offset(ROCE_XOP_RACK, ROCE_EXT_NTETH), 4);
	CHECK_EQ(roce_opcode_info(ROCE_XOP_WRITE_MIDDLE)->hdr_len, 12 + 16);
	CHECK_EQ(roce_ext_offset(ROCE_XOP_SEND_LAST_IMM, ROCE_EXT_SPETH), 4);
	CHECK_EQ(roce_opcode_info(ROCE_XOP_SEND_ONLY)->hdr_len, 12 + 8);
	CHECK(strcmp(roce_opcode_name(0xca), "RESERVED") == 0);
	CHECK(strcmp(roce_opcode_name(0xd0), "RC_X_FEC_REPAIR") == 0);
	CHECK(strcmp(roce_opcode_name(0xd1), "RC_X_FEC_NEGOTIATE") == 0);
	CHECK(roce_opcode_is_fec(0xd0) && roce_opcode_is_fec(0xd1) && !roce_opcode_is_fec(0xc0));
	CHECK(!(roce_opcode_info(0xd0)->flags & (ROCE_OPF_REQ | ROCE_OPF_RESP)));
	CHECK_EQ(roce_opcode_info(0xd0)->hdr_len, 12 + 28);
	CHECK(strcmp(roce_opcode_name(0xd2), "RESERVED") == 0);
	/* VRP per-WR tolerance: WRITE FIRST + RETH + VTETH (docs/wire.md) */
	CHECK(strcmp(roce_opcode_name(0xe2), "RC_X_RDMA_WRITE_FIRST_VRP") == 0);
	CHECK_EQ(roce_opcode_info(ROCE_XOP_WRITE_FIRST_VRP)->hdr_len, 12 + 16 + 44);
	CHECK_EQ(roce_ext_offset(ROCE_XOP_WRITE_FIRST_VRP, ROCE_EXT_VTETH), 16);
	CHECK((roce_opcode_info(0xe2)->flags & (ROCE_OPF_FIRST | ROCE_OPF_WRITE | ROCE_OPF_REQ)) ==
	      (ROCE_OPF_FIRST | ROCE_OPF_WRITE | ROCE_OPF_REQ));
	CHECK(!(roce_opcode_info(0xe2)->flags & ROCE_OPF_PLACED));
	/* VRP loss summary: AETH + VLETH, a response the completer takes (docs/wire.md) */
	CHECK(strcmp(roce_opcode_name(0xe3), "RC_X_VRP_LOSS") == 0);
	CHECK_EQ(roce_opcode_info(ROCE_XOP_VRP_LOSS)->hdr_len, 12 + 4 + 80);
	CHECK_EQ(roce_ext_offset(ROCE_XOP_VRP_LOSS, ROCE_EXT_VLETH), 4);
	CHECK((roce_opcode_info(0xe3)->flags & (ROCE_OPF_RESP | ROCE_OPF_REQ | ROCE_OPF_NOTICE |
						ROCE_OPF_PAYLOAD)) == ROCE_OPF_RESP);
	CHECK(strcmp(roce_opcode_name(0xe4), "RESERVED") == 0);
}

/* Independent ICRC: mask a full copy of the packet and hash it with zlib. */
static uint32_t
icrc_ref(const uint8_t *ip, size_t len, int ver)
{
	uint8_t *c = malloc(len + 8);
	size_t iphl = ver == 4 ? 20 : 40;
	uint32_t crc;

	memset(c, 0xff, 8);
	memcpy(c + 8, ip, len);
	if (ver == 4) {
		c[8 + 1] = c[8 + 8] = c[8 + 10] = c[8 + 11] = 0xff;
	} else {
		c[8] |= 0x0f;
		c[9] = c[10] = c[11] = c[8 + 7] = 0xff;
	}
	c[8 + iphl + 6] = c[8 + iphl + 7] = 0xff;
	c[8 + iphl + 8 + 4] = 0xff;
	crc = (uint32_t)crc32(0, c, (uInt)(len + 8));
	free(c);
	return crc;
}

static void
fill_pkt(struct roce_pkt *p, uint8_t opcode, int ver, bool vlan)
{
	static const uint8_t s[6] = {0x02, 0, 0, 0, 0, 1}, d[6] = {0x02, 0, 0, 0, 0, 2};

	memset(p, 0, sizeof(*p));
	memcpy(p->l2.src, s, 6);
	memcpy(p->l2.dst, d, 6);
	p->l2.has_vlan = vlan;
	p->l2.vlan_tci = net_vlan_tci(3, 42);
	p->l3.version = (uint8_t)ver;
	p->l3.tos = 26 << 2 | NET_ECN_ECT0;
	p->l3.ttl = 64;
	if (ver == 4) {
		net_ip4_to_mapped(0xc0a80001, p->l3.src);
		net_ip4_to_mapped(0xc0a80002, p->l3.dst);
	} else {
		for (int i = 0; i < 16; i++)
			p->l3.src[i] = (uint8_t)(0x20 + i), p->l3.dst[i] = (uint8_t)(0x40 + i);
		p->l3.flow_label = 0x12345;
	}
	p->udp.sport = roce_udp_sport(0x11, 0x22);
	p->h.bth.opcode = opcode;
	p->h.bth.se = 1;
	p->h.bth.mig = 1;
	p->h.bth.pkey = 0xffff;
	p->h.bth.becn = 1;
	p->h.bth.dqpn = 0xabcdef;
	p->h.bth.ackreq = 1;
	p->h.bth.psn = 0xfffffe;
	p->h.reth = (struct roce_reth){0x1122334455667788ull, 0xdeadbeef, 65536};
	p->h.aeth =
	    (struct roce_aeth){roce_aeth_syndrome(ROCE_AETH_NAK, ROCE_NAK_REMOTE_ACCESS), 0x123456};
	p->h.deth = (struct roce_deth){0x80010000, 0x000abc};
	p->h.imm = 0xcafef00d;
	p->h.ieth_rkey = 0x0badf00d;
	p->h.atomic = (struct roce_atomiceth){0x1000, 0x42, 7, 9};
	p->h.atomic_orig = 0x0123456789abcdefull;
	p->h.speth = (struct roce_speth){0xfedcba98, 0x00012000};
	p->h.nt_psn = 0xabcdef;
	p->h.nt_run = 0x5a;
	p->h.vt =
	    (struct roce_vteth){.flags = 5,
				.n_crit = 3,
				.loss_bp = 0x1388,
				.window = 0x0102,
				.max_burst = 0xa0b0c0d0,
				.crit = {{1, 2}, {0x10000, 0x20000}, {0xfffffff0, 0x10}, {0, 0}}};
	p->h.vl = (struct roce_vleth){.len = 0x00100000,
				      .lost_pkts = 0x01020304,
				      .lost_bytes = 0xa0b0c0d0,
				      .n_holes = 2,
				      .flags = 1,
				      .holes = {{0x400, 0x800}, {0xfffff000, 0xc00}}};
}

static bool
hdrs_equal(const struct roce_pkt *a, const struct roce_pkt *b)
{
	const struct roce_opcode_info *o = roce_opcode_info(a->h.bth.opcode);
	const struct roce_bth *x = &a->h.bth, *y = &b->h.bth;
	bool eq = x->opcode == y->opcode && x->se == y->se && x->mig == y->mig &&
		  x->pad == y->pad && x->tver == y->tver && x->pkey == y->pkey &&
		  x->fecn == y->fecn && x->becn == y->becn && x->dqpn == y->dqpn &&
		  x->ackreq == y->ackreq && x->psn == y->psn;

	if (o->ext & ROCE_EXT_RETH)
		eq &= a->h.reth.va == b->h.reth.va && a->h.reth.rkey == b->h.reth.rkey &&
		      a->h.reth.dlen == b->h.reth.dlen;
	if (o->ext & ROCE_EXT_AETH)
		eq &= a->h.aeth.syndrome == b->h.aeth.syndrome && a->h.aeth.msn == b->h.aeth.msn;
	if (o->ext & ROCE_EXT_DETH)
		eq &= a->h.deth.qkey == b->h.deth.qkey && a->h.deth.sqpn == b->h.deth.sqpn;
	if (o->ext & ROCE_EXT_IMMDT)
		eq &= a->h.imm == b->h.imm;
	if (o->ext & ROCE_EXT_IETH)
		eq &= a->h.ieth_rkey == b->h.ieth_rkey;
	if (o->ext & ROCE_EXT_ATOMICETH)
		eq &= a->h.atomic.va == b->h.atomic.va && a->h.atomic.rkey == b->h.atomic.rkey &&
		      a->h.atomic.swap_add == b->h.atomic.swap_add &&
		      a->h.atomic.cmp == b->h.atomic.cmp;
	if (o->ext & ROCE_EXT_ATOMICACKETH)
		eq &= a->h.atomic_orig == b->h.atomic_orig;
	if (o->ext & ROCE_EXT_SPETH)
		eq &= a->h.speth.wqe_seq == b->h.speth.wqe_seq &&
		      a->h.speth.offset == b->h.speth.offset;
	if (o->ext & ROCE_EXT_NTETH)
		eq &= a->h.nt_psn == b->h.nt_psn && a->h.nt_run == b->h.nt_run;
	if (o->ext & ROCE_EXT_VTETH) {
		const struct roce_vteth *u = &a->h.vt, *v = &b->h.vt;

		eq &= u->flags == v->flags && u->n_crit == v->n_crit && u->loss_bp == v->loss_bp &&
		      u->window == v->window && u->max_burst == v->max_burst;
		for (int i = 0; i < ROCE_VTETH_CRIT; i++)
			eq &= u->crit[i].off == v->crit[i].off && u->crit[i].len == v->crit[i].len;
	}
	if (o->ext & ROCE_EXT_VLETH) {
		const struct roce_vleth *u = &a->h.vl, *v = &b->h.vl;

		eq &= u->len == v->len && u->lost_pkts == v->lost_pkts &&
		      u->lost_bytes == v->lost_bytes && u->n_holes == v->n_holes &&
		      u->flags == v->flags;
		for (int i = 0; i < ROCE_VLETH_HOLES; i++)
			eq &= u->holes[i].off == v->holes[i].off &&
			      u->holes[i].len == v->holes[i].len;
	}
	return eq;
}

static void
test_roundtrip_all(void)
{
	static const uint32_t sizes[] = {0, 1, 2, 3, 4, 5, 255, 256, 1023, 1024, 4095, 4096};
	static uint8_t buf[5000], payload[4096];
	unsigned built = 0;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)rnd();
	for (int op = 0; op < 256; op++) {
		if (!roce_opcode_valid((uint8_t)op))
			continue;
		for (int ver = 4; ver <= 6; ver += 2)
			for (int vlan = 0; vlan < 2; vlan++)
				for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
					struct roce_pkt in, out;
					uint32_t n = sizes[s];
					int len;

					if (!(roce_opcode_info((uint8_t)op)->flags &
					      ROCE_OPF_PAYLOAD) &&
					    n)
						continue;
					fill_pkt(&in, (uint8_t)op, ver, vlan);
					len = roce_build(buf, sizeof(buf), &in, payload, n, 0);
					CHECK(len >= 60);
					CHECK_EQ(len, roce_frame_len(&in, n));
					CHECK_EQ(roce_parse(buf, (size_t)len, &out, 0), 0);
					CHECK(hdrs_equal(&in, &out));
					CHECK_EQ(out.payload_len, n);
					CHECK_EQ(out.h.bth.pad, (-n) & 3);
					CHECK_MEM(buf + out.payload_off, payload, n);
					CHECK_EQ(out.icrc,
						 icrc_ref(buf + out.l3_off,
							  out.frame_len - 4 - out.l3_off, ver));
					CHECK_EQ(out.l2.has_vlan, vlan);
					CHECK_EQ(out.l3.tos, in.l3.tos);
					CHECK_EQ(out.udp.dport, 4791);
					CHECK(out.udp.sport >= 0xc000);
					if (ver ==
					    6) /* RFC 8200: UDP checksum over IPv6 is valid */
						CHECK_EQ(net_udp_csum(&out.l3,
								      buf + out.bth_off - 8,
								      out.udp.len),
							 out.udp.csum);
					built++;
				}
	}
	CHECK(built > 700);
}

/* In-place build: payload already at its final offset, no copy. */
static void
test_build_in_place(void)
{
	uint8_t buf[2048];
	struct roce_pkt p, q;
	size_t h;

	fill_pkt(&p, ROCE_OP_RC_BASE + ROCE_OP_WRITE_ONLY, 4, false);
	h = roce_hdr_len(&p);
	CHECK_EQ(h, 14 + 20 + 8 + 12 + 16);
	memset(buf + h, 0x5a, 1000);
	CHECK(roce_build(buf, sizeof(buf), &p, buf + h, 1000, 0) > 0);
	CHECK_EQ(roce_parse(buf, p.frame_len, &q, 0), 0);
	CHECK_EQ(buf[q.payload_off + 999], 0x5a);
	/* NULL payload leaves bytes as they are, too */
	CHECK(roce_build(buf, sizeof(buf), &p, NULL, 1000, 0) > 0);
	CHECK_EQ(roce_parse(buf, p.frame_len, &q, 0), 0);
}

static void
test_build_errors(void)
{
	uint8_t buf[256];
	struct roce_pkt p;

	fill_pkt(&p, 0x15, 4, false);
	CHECK_EQ(roce_build(buf, sizeof(buf), &p, NULL, 0, 0), -NET_E_BAD_OPCODE);
	fill_pkt(&p, ROCE_OP_ACK, 4, false);
	CHECK_EQ(roce_build(buf, sizeof(buf), &p, buf, 4, 0), -NET_E_INVAL);
	CHECK_EQ(roce_build(buf, 59, &p, NULL, 0, 0), -NET_E_NOSPACE);
	fill_pkt(&p, ROCE_OP_SEND_ONLY, 4, false);
	CHECK_EQ(roce_build(buf, sizeof(buf), &p, NULL, 300, 0), -NET_E_NOSPACE);
	p.l3.version = 5;
	CHECK_EQ(roce_build(buf, sizeof(buf), &p, NULL, 0, 0), -NET_E_INVAL);
	/* the smallest RoCEv2 frame (IPv4 ACK) is 62 bytes; parse ignores Ethernet padding */
	fill_pkt(&p, ROCE_OP_ACK, 4, false);
	CHECK_EQ(roce_build(buf, sizeof(buf), &p, NULL, 0, 0), 62);
	CHECK_EQ(p.frame_len, 14 + 20 + 8 + 12 + 4 + 4);
	struct roce_pkt q;
	memset(buf + 62, 0, 20);
	CHECK_EQ(roce_parse(buf, 82, &q, 0), 0);
	CHECK_EQ(q.frame_len, 62);
	/* CNP: BTH + 16 reserved bytes, BECN set */
	fill_pkt(&p, ROCE_OP_CNP, 4, false);
	CHECK(roce_build(buf, sizeof(buf), &p, NULL, 0, 0) > 0);
	CHECK_EQ(roce_parse(buf, p.frame_len, &q, 0), 0);
	CHECK_EQ(q.h.bth.becn, 1);
	CHECK_EQ(q.frame_len, 14 + 20 + 8 + 12 + 16 + 4);
}

/* Parse a copy of exactly len bytes so ASan catches any read past the end. */
static int
parse_exact(const uint8_t *frame, size_t len, struct roce_pkt *p, unsigned flags)
{
	uint8_t *c = malloc(len ? len : 1);
	int rc;

	memcpy(c, frame, len);
	rc = roce_parse(c, len, p, flags);
	free(c);
	return rc;
}

static void
test_truncation(void)
{
	uint8_t buf[1200];
	struct roce_pkt p, q;
	static const uint8_t ops[] = {0x00, 0x06, 0x0b, 0x0c, 0x10, 0x11,
				      0x12, 0x13, 0x17, 0x2b, 0x65, 0x81};

	for (size_t k = 0; k < sizeof(ops); k++)
		for (int ver = 4; ver <= 6; ver += 2) {
			uint32_t n = (roce_opcode_info(ops[k])->flags & ROCE_OPF_PAYLOAD) ? 37 : 0;
			int len;

			fill_pkt(&p, ops[k], ver, true);
			len = roce_build(buf, sizeof(buf), &p, NULL, n, 0);
			for (int cut = 0; cut < (int)p.frame_len; cut++) {
				int rc = parse_exact(buf, (size_t)cut, &q, 0);
				if (rc == 0) {
					fprintf(stderr, "op %#x v%d cut %d parsed OK\n", ops[k],
						ver, cut);
					CHECK(!"truncated frame accepted");
				}
			}
			CHECK_EQ(parse_exact(buf, (size_t)len, &q, 0), 0);
		}
	/* expected codes at each layer boundary (IPv4, untagged, SEND_ONLY 37 B) */
	fill_pkt(&p, ROCE_OP_SEND_ONLY, 4, false);
	roce_build(buf, sizeof(buf), &p, NULL, 37, 0);
	CHECK_EQ(parse_exact(buf, 10, &q, 0), -NET_E_TRUNC_ETH);
	CHECK_EQ(parse_exact(buf, 20, &q, 0), -NET_E_TRUNC_IP);
	CHECK_EQ(parse_exact(buf, 40, &q, 0), -NET_E_BAD_IP_LEN);
}

static void
test_malformed(void)
{
	uint8_t buf[600], m[600];
	struct roce_pkt p, q;
	int len;

	fill_pkt(&p, ROCE_OP_RC_BASE + ROCE_OP_WRITE_ONLY, 4, false);
	len = roce_build(buf, sizeof(buf), &p, NULL, 100, 0);
	size_t ip = p.l3_off, udp = ip + 20, bth = p.bth_off;
#define MUT(stmt, expect)                                                                          \
	do {                                                                                       \
		memcpy(m, buf, (size_t)len);                                                       \
		stmt;                                                                              \
		CHECK_EQ(parse_exact(m, (size_t)len, &q, 0), expect);                              \
	} while (0)
	MUT((void)0, 0);
	MUT(m[12] = 0x88, -NET_E_BAD_ETHERTYPE);
	MUT((m[ip + 9] = 6, net_ip4_fix_csum(m + ip)), -NET_E_NOT_UDP);
	MUT(net_put_be16(m + udp + 2, 4792), -NET_E_NOT_ROCE_PORT);
	MUT(net_put_be16(m + udp + 4, (uint16_t)(net_get_be16(m + udp + 4) - 1)),
	    -NET_E_BAD_UDP_LEN);
	MUT(net_put_be16(m + udp + 4, 7), -NET_E_BAD_UDP_LEN);
	MUT((net_put_be16(m + ip + 2, 20 + 8 + 10), net_put_be16(m + udp + 4, 18),
	     net_ip4_fix_csum(m + ip)),
	    -NET_E_TRUNC_BTH);
	MUT((net_put_be16(m + ip + 2, 20 + 8 + 20), net_put_be16(m + udp + 4, 28),
	     net_ip4_fix_csum(m + ip)),
	    -NET_E_TRUNC_EXT);
	MUT(m[bth] = 0x15, -NET_E_BAD_OPCODE);
	MUT(m[bth] = 0x1f, -NET_E_BAD_OPCODE);
	MUT(m[bth + 1] |= 0x01, -NET_E_BAD_TVER);
	MUT(m[bth + 20] ^= 1, -NET_E_BAD_ICRC);		  /* RETH byte */
	MUT(m[len - 1] ^= 0x80, -NET_E_BAD_ICRC);	  /* ICRC itself */
	MUT(m[p.payload_off + 50] ^= 4, -NET_E_BAD_ICRC); /* payload bit flip */
	MUT(m[ip + 8]++, -NET_E_BAD_IP_CSUM);
	/* variant fields are masked: changing them keeps the ICRC valid */
	MUT((m[ip + 8] = 3, net_ip4_fix_csum(m + ip)), 0);
	MUT(net_ip_set_ecn(m + ip, NET_ECN_CE), 0);
	MUT(m[bth + 4] = 0x80, 0); /* FECN */
	MUT(net_put_be16(m + udp + 6, 0x1234), 0);
	/* unmasked fields are covered */
	MUT((m[ip + 4] ^= 1, net_ip4_fix_csum(m + ip)), -NET_E_BAD_ICRC);
	MUT(m[bth + 7] ^= 1, -NET_E_BAD_ICRC); /* dest QP */
	/* pad count larger than the payload */
	fill_pkt(&p, ROCE_OP_SEND_ONLY, 4, false);
	len = roce_build(buf, sizeof(buf), &p, NULL, 2, 0); /* 2 bytes + pad 2 */
	bth = p.bth_off;
	MUT((m[bth + 1] = (uint8_t)((m[bth + 1] & ~0x30) | 0x30), roce_icrc_update(m, &p)), 0);
	fill_pkt(&p, ROCE_OP_SEND_ONLY, 4, false);
	len = roce_build(buf, sizeof(buf), &p, NULL, 0, ROCE_BUILD_KEEP_PAD);
	MUT((m[bth + 1] |= 0x10, roce_icrc_update(m, &p)), -NET_E_BAD_PAD);
	/* pad or payload on an opcode without payload */
	fill_pkt(&p, ROCE_OP_ACK, 4, false);
	len = roce_build(buf, sizeof(buf), &p, NULL, 0, 0);
	MUT((m[bth + 1] |= 0x10, roce_icrc_update(m, &p)), -NET_E_BAD_PAD);
	/* an ACK whose UDP/IP length claims 4 extra bytes: payload where none is allowed */
	fill_pkt(&p, ROCE_OP_ACK, 4, false);
	len = roce_build(buf, sizeof(buf), &p, NULL, 0, 0);
	memset(buf + len, 0, 4);
	len += 4;
	ip = p.l3_off;
	udp = ip + 20;
	MUT((net_put_be16(m + ip + 2, (uint16_t)(net_get_be16(m + ip + 2) + 4)),
	     net_put_be16(m + udp + 4, (uint16_t)(net_get_be16(m + udp + 4) + 4)),
	     net_ip4_fix_csum(m + ip)),
	    -NET_E_PAYLOAD_NOT_ALLOWED);
	/* flags */
	fill_pkt(&p, ROCE_OP_SEND_ONLY, 4, false);
	len = roce_build(buf, sizeof(buf), &p, NULL, 8, ROCE_BUILD_NO_ICRC);
	CHECK_EQ(parse_exact(buf, (size_t)len, &q, 0), -NET_E_BAD_ICRC);
	CHECK_EQ(parse_exact(buf, (size_t)len, &q, ROCE_PARSE_NO_ICRC), 0);
#undef MUT
}

/* Random byte mutations never crash and never read out of bounds (ASan build). */
static void
test_fuzz_mutations(void)
{
	uint8_t buf[4300], m[4300];
	struct roce_pkt p, q;
	unsigned ok = 0;

	for (int it = 0; it < 20000; it++) {
		uint8_t op;
		do
			op = (uint8_t)rnd();
		while (!roce_opcode_valid(op));
		uint32_t n =
		    (roce_opcode_info(op)->flags & ROCE_OPF_PAYLOAD) ? (uint32_t)(rnd() % 4097) : 0;
		fill_pkt(&p, op, (rnd() & 1) ? 4 : 6, rnd() & 1);
		int len = roce_build(buf, sizeof(buf), &p, NULL, n, 0);
		memcpy(m, buf, (size_t)len);
		for (int k = 0, nm = 1 + (int)(rnd() % 4); k < nm; k++)
			m[rnd() % (uint64_t)len] ^= (uint8_t)(1u << (rnd() % 8));
		size_t cut = (rnd() % 4) ? (size_t)len : (size_t)(rnd() % (uint64_t)len);
		if (parse_exact(m, cut, &q, rnd() & 1 ? ROCE_PARSE_NO_ICRC : 0) == 0)
			ok++;
	}
	CHECK(ok < 20000); /* mutations are detected */
}

/* Ground truth: every RoCE packet in a capture of two Linux rxe VMs running ib_write_bw. */
static void
test_rxe_capture(void)
{
	const char *dir = getenv("RW_GOLDEN_DIR");
	char path[512];
	struct rw_pcap pc;
	uint8_t f[9000];
	uint32_t n;
	int roce = 0, writes = 0, acks = 0;

	snprintf(path, sizeof(path), "%s/rxe-ib_write_bw-4096.pcap", dir ? dir : "tests/golden");
	CHECK_EQ(rw_pcap_open_read(&pc, path), 0);
	if (!pc.f)
		return;
	while (rw_pcap_next(&pc, f, sizeof(f), &n, NULL, NULL) > 0) {
		struct roce_pkt p;
		int rc = roce_parse(f, (size_t)n, &p, 0);

		if (rc == -NET_E_NOT_UDP || rc == -NET_E_NOT_ROCE_PORT ||
		    rc == -NET_E_BAD_ETHERTYPE)
			continue; /* TCP exchange, ARP, IPv6 ND */
		CHECK_EQ(rc, 0);
		if (rc)
			fprintf(stderr, "rxe frame %d: %s\n", roce, net_err_name(rc));
		roce++;
		if (roce_opcode_info(p.h.bth.opcode)->flags & ROCE_OPF_WRITE) {
			writes++;
			CHECK_EQ(p.payload_len % 1024, 0);
		}
		if (p.h.bth.opcode == ROCE_OP_ACK) {
			acks++;
			CHECK_EQ(roce_aeth_type(p.h.aeth.syndrome), ROCE_AETH_ACK);
		}
		/* our builder reproduces rxe's frame byte for byte (same headers in, same bytes
		 * out) */
		{
			uint8_t again[9000];
			struct roce_pkt b = p;
			int len = roce_build(again, sizeof(again), &b, f + p.payload_off,
					     p.payload_len, ROCE_BUILD_KEEP_PAD);
			CHECK_EQ((uint32_t)len >= p.frame_len, 1);
			CHECK_MEM(again + p.l3_off + 20, f + p.l3_off + 20,
				  p.frame_len - p.l3_off - 20);
		}
	}
	rw_pcap_close(&pc);
	CHECK(roce > 20);
	CHECK(writes > 10);
	CHECK(acks > 0);
	printf("rxe capture: %d RoCE frames (%d RDMA WRITE, %d ACK), all ICRC-valid\n", roce,
	       writes, acks);
}

/* VTETH (docs/wire.md, "VRP tolerance"): the bytes after the RETH of a 0xE2, big-endian */
static void
test_vteth_bytes(void)
{
	static const uint8_t want[ROCE_VTETH_LEN] = {
	    0x07, 0x02, 0x03, 0xe8, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, /* fixed */
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, /* crit 0: off 0, len 64 */
	    0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x08, /* crit 1: off 4096, len 8 */
	    0,	  0,	0,    0,    0,	  0,	0,    0,    0,	  0,	0,    0,    0, 0, 0, 0};
	uint8_t buf[2048];
	struct roce_pkt p, q;
	size_t off;

	fill_pkt(&p, ROCE_XOP_WRITE_FIRST_VRP, 4, false);
	memset(&p.h.vt, 0, sizeof(p.h.vt));
	p.h.vt.flags = ROCE_VTETH_F_LOSS | ROCE_VTETH_F_WINDOW | ROCE_VTETH_F_BURST;
	p.h.vt.n_crit = 2;
	p.h.vt.loss_bp = 1000; /* 10 % */
	p.h.vt.window = 16;
	p.h.vt.max_burst = 2048;
	p.h.vt.crit[0].len = 64;
	p.h.vt.crit[1].off = 4096;
	p.h.vt.crit[1].len = 8;
	CHECK(roce_build(buf, sizeof(buf), &p, NULL, 1024, 0) > 0);
	CHECK_EQ(roce_hdr_len(&p), 14 + 20 + 8 + 12 + 16 + 44);
	off = 14 + 20 + 8 + 12 + 16;
	CHECK_MEM(buf + off, want, sizeof(want));
	CHECK_EQ(roce_parse(buf, p.frame_len, &q, 0), 0);
	CHECK(hdrs_equal(&p, &q));
	CHECK_EQ(q.payload_off, off + 44);
	/* one byte short of the VTETH: truncated, never read past the end */
	CHECK_EQ(roce_parse(buf, off + 43 + 4, &q, 0) < 0, 1);
}

/* The VLETH on the wire, byte by byte (docs/wire.md): 2 holes, 3 packets, 3072 bytes lost. */
static void
test_vleth_bytes(void)
{
	static const uint8_t want[ROCE_VLETH_LEN] = {
	    0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x03, /* len 16384, 3 packets */
	    0x00, 0x00, 0x0c, 0x00, 0x02, 0x00, 0x00, 0x00, /* 3072 bytes, 2 holes, flags 0 */
	    0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x08, 0x00, /* hole 0: 1024+2048 */
	    0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x04, 0x00, /* hole 1: 6144+1024 */
	    0,	  0,	0,    0,    0,	  0,	0,    0,    0, 0, 0, 0, 0, 0, 0, 0,
	    0,	  0,	0,    0,    0,	  0,	0,    0,    0, 0, 0, 0, 0, 0, 0, 0,
	    0,	  0,	0,    0,    0,	  0,	0,    0,    0, 0, 0, 0, 0, 0, 0, 0};
	uint8_t buf[2048];
	struct roce_pkt p, q;
	size_t off;

	fill_pkt(&p, ROCE_XOP_VRP_LOSS, 4, false);
	memset(&p.h.vl, 0, sizeof(p.h.vl));
	p.h.vl.len = 16384;
	p.h.vl.lost_pkts = 3;
	p.h.vl.lost_bytes = 3072;
	p.h.vl.n_holes = 2;
	p.h.vl.holes[0].off = 1024;
	p.h.vl.holes[0].len = 2048;
	p.h.vl.holes[1].off = 6144;
	p.h.vl.holes[1].len = 1024;
	CHECK(roce_build(buf, sizeof(buf), &p, NULL, 0, 0) > 0);
	CHECK_EQ(roce_hdr_len(&p), 14 + 20 + 8 + 12 + 4 + 80);
	off = 14 + 20 + 8 + 12 + 4;
	CHECK_MEM(buf + off, want, sizeof(want));
	CHECK_EQ(roce_parse(buf, p.frame_len, &q, 0), 0);
	CHECK(hdrs_equal(&p, &q));
	/* one byte short of the VLETH: truncated, never read past the end */
	CHECK_EQ(roce_parse(buf, off + 79 + 4, &q, 0) < 0, 1);
}

/* roce_parse_frame() on a classified frame: roce_parse()'s return value and fields. */
static int
parse_both(const uint8_t *f, size_t len, unsigned flags)
{
	struct roce_pkt a, b;
	struct net_frame fr;
	int ra, rb;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ra = roce_parse(f, len, &a, flags);
	net_frame_classify(f, len, &fr);
	rb = roce_parse_frame(f, len, &fr, &b, flags);
	CHECK_EQ(rb, ra);
	if (ra == 0 && rb == 0)
		CHECK_EQ(memcmp(&a, &b, sizeof(a)), 0);
	return fr.kind == NET_FRAME_ROCE && ra == 0;
}

/*
 * Every frame of the golden captures, cut at every length and with each byte
 * flipped in turn (the first frames), parsed both ways.
 */
static void
test_parse_frame_goldens(void)
{
	static const char *const files[] = {
	    "rxe-ib_write_bw-4096.pcap",
	    "scapy-rc-v4.pcap",
	    "scapy-rc-v6.pcap",
	    "scapy-ext-v4-v6.pcap",
	    "scapy-psn-pfc-v4.pcap",
	    "run-gbone.pcap",
	    "run-irn.pcap",
	    "run-vrp.pcap",
	    "run-fec-gbn.pcap",
	    "fec-xor-rs.pcap",
	};
	const char *dir = getenv("RW_GOLDEN_DIR");
	unsigned int roce = 0, frames = 0;

	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		char path[512];
		struct rw_pcap pc;
		uint8_t f[9000];
		uint32_t n;
		unsigned int i = 0;

		snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/golden", files[k]);
		CHECK_EQ(rw_pcap_open_read(&pc, path), 0);
		if (!pc.f)
			continue;
		while (rw_pcap_next(&pc, f, sizeof(f), &n, NULL, NULL) > 0) {
			frames++;
			roce += (unsigned int)parse_both(f, n, 0);
			parse_both(f, n, ROCE_PARSE_NO_ICRC | ROCE_PARSE_NO_IP_CSUM);
			if (i++ >= 8)
				continue;
			for (uint32_t l = 0; l < n && l < 200; l++)
				parse_both(f, l, 0);
			for (uint32_t o = 0; o < n && o < 120; o++) {
				f[o] ^= 0x5a;
				parse_both(f, n, 0);
				parse_both(f, n, ROCE_PARSE_NO_ICRC | ROCE_PARSE_NO_IP_CSUM);
				f[o] ^= 0x5a;
			}
		}
		rw_pcap_close(&pc);
	}
	/* the classified path ran on real RoCE frames, not only on the fallback */
	CHECK(roce > 100);
	CHECK(frames > roce);
}

RW_TEST_MAIN(RW_TEST(test_psn), RW_TEST(test_opcode_table), RW_TEST(test_roundtrip_all),
	     RW_TEST(test_vteth_bytes), RW_TEST(test_vleth_bytes), RW_TEST(test_build_in_place),
	     RW_TEST(test_build_errors), RW_TEST(test_truncation), RW_TEST(test_malformed),
	     RW_TEST(test_fuzz_mutations), RW_TEST(test_rxe_capture),
	     RW_TEST(test_parse_frame_goldens))
