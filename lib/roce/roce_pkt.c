/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce_pkt.h"

#include <string.h>

#include "../net/net_bytes.h"
#include "../net/net_frame.h"
#include "roce_icrc.h"
#include "roce_psn.h"

/* BTH (IBTA 9.2, figure 104). */
static void
bth_read(const uint8_t *b, struct roce_bth *bth)
{
	bth->opcode = b[0];
	bth->se = b[1] >> 7;
	bth->mig = (b[1] >> 6) & 1;
	bth->pad = (b[1] >> 4) & 3;
	bth->tver = b[1] & 0x0f;
	bth->pkey = net_get_be16(b + 2);
	bth->fecn = b[4] >> 7;
	bth->becn = (b[4] >> 6) & 1;
	bth->dqpn = net_get_be24(b + 5);
	bth->ackreq = b[8] >> 7;
	bth->psn = net_get_be24(b + 9);
}

static void
bth_write(uint8_t *b, const struct roce_bth *bth)
{
	b[0] = bth->opcode;
	b[1] = (uint8_t)((bth->se & 1) << 7 | (bth->mig & 1) << 6 | (bth->pad & 3) << 4 |
			 (bth->tver & 0x0f));
	net_put_be16(b + 2, bth->pkey);
	b[4] = (uint8_t)((bth->fecn & 1) << 7 | (bth->becn & 1) << 6);
	net_put_be24(b + 5, bth->dqpn & ROCE_PSN_MASK);
	b[8] = (uint8_t)((bth->ackreq & 1) << 7);
	net_put_be24(b + 9, bth->psn & ROCE_PSN_MASK);
}

/* Extension headers in wire order; @p b points just after the BTH. */
static void
ext_read(const uint8_t *b, uint16_t ext, struct roce_hdrs *h)
{
	if (ext & ROCE_EXT_DETH) {
		h->deth.qkey = net_get_be32(b);
		h->deth.sqpn = net_get_be24(b + 5);
		b += ROCE_DETH_LEN;
	}
	if (ext & ROCE_EXT_RETH) {
		h->reth.va = net_get_be64(b);
		h->reth.rkey = net_get_be32(b + 8);
		h->reth.dlen = net_get_be32(b + 12);
		b += ROCE_RETH_LEN;
	}
	if (ext & ROCE_EXT_ATOMICETH) {
		h->atomic.va = net_get_be64(b);
		h->atomic.rkey = net_get_be32(b + 8);
		h->atomic.swap_add = net_get_be64(b + 12);
		h->atomic.cmp = net_get_be64(b + 20);
		b += ROCE_ATOMICETH_LEN;
	}
	if (ext & ROCE_EXT_AETH) {
		h->aeth.syndrome = b[0];
		h->aeth.msn = net_get_be24(b + 1);
		b += ROCE_AETH_LEN;
	}
	if (ext & ROCE_EXT_ATOMICACKETH) {
		h->atomic_orig = net_get_be64(b);
		b += ROCE_ATOMICACKETH_LEN;
	}
	if (ext & ROCE_EXT_IMMDT) {
		h->imm = net_get_be32(b);
		b += ROCE_IMMDT_LEN;
	}
	if (ext & ROCE_EXT_IETH) {
		h->ieth_rkey = net_get_be32(b);
		b += ROCE_IETH_LEN;
	}
	if (ext & ROCE_EXT_SPETH) {
		h->speth.wqe_seq = net_get_be32(b);
		h->speth.offset = net_get_be32(b + 4);
		b += ROCE_SPETH_LEN;
	}
	if (ext & ROCE_EXT_NTETH) {
		h->nt_run = b[0];
		h->nt_psn = net_get_be24(b + 1);
		b += ROCE_NTETH_LEN;
	}
	if (ext & ROCE_EXT_VTETH) {
		h->vt.flags = b[0];
		h->vt.n_crit = b[1];
		h->vt.loss_bp = net_get_be16(b + 2);
		h->vt.window = net_get_be16(b + 4);
		h->vt.max_burst = net_get_be32(b + 8);
		for (unsigned int i = 0; i < ROCE_VTETH_CRIT; i++) {
			h->vt.crit[i].off = net_get_be32(b + 12 + 8 * i);
			h->vt.crit[i].len = net_get_be32(b + 16 + 8 * i);
		}
		b += ROCE_VTETH_LEN;
	}
	if (ext & ROCE_EXT_VLETH) {
		h->vl.len = net_get_be32(b);
		h->vl.lost_pkts = net_get_be32(b + 4);
		h->vl.lost_bytes = net_get_be32(b + 8);
		h->vl.n_holes = b[12];
		h->vl.flags = b[13];
		for (unsigned int i = 0; i < ROCE_VLETH_HOLES; i++) {
			h->vl.holes[i].off = net_get_be32(b + 16 + 8 * i);
			h->vl.holes[i].len = net_get_be32(b + 20 + 8 * i);
		}
	}
}

static void
ext_write(uint8_t *b, uint16_t ext, const struct roce_hdrs *h)
{
	if (ext & ROCE_EXT_DETH) {
		net_put_be32(b, h->deth.qkey);
		b[4] = 0;
		net_put_be24(b + 5, h->deth.sqpn & 0xffffff);
		b += ROCE_DETH_LEN;
	}
	if (ext & ROCE_EXT_RETH) {
		net_put_be64(b, h->reth.va);
		net_put_be32(b + 8, h->reth.rkey);
		net_put_be32(b + 12, h->reth.dlen);
		b += ROCE_RETH_LEN;
	}
	if (ext & ROCE_EXT_ATOMICETH) {
		net_put_be64(b, h->atomic.va);
		net_put_be32(b + 8, h->atomic.rkey);
		net_put_be64(b + 12, h->atomic.swap_add);
		net_put_be64(b + 20, h->atomic.cmp);
		b += ROCE_ATOMICETH_LEN;
	}
	if (ext & ROCE_EXT_AETH) {
		b[0] = h->aeth.syndrome;
		net_put_be24(b + 1, h->aeth.msn & 0xffffff);
		b += ROCE_AETH_LEN;
	}
	if (ext & ROCE_EXT_ATOMICACKETH) {
		net_put_be64(b, h->atomic_orig);
		b += ROCE_ATOMICACKETH_LEN;
	}
	if (ext & ROCE_EXT_IMMDT) {
		net_put_be32(b, h->imm);
		b += ROCE_IMMDT_LEN;
	}
	if (ext & ROCE_EXT_IETH) {
		net_put_be32(b, h->ieth_rkey);
		b += ROCE_IETH_LEN;
	}
	if (ext & ROCE_EXT_SPETH) {
		net_put_be32(b, h->speth.wqe_seq);
		net_put_be32(b + 4, h->speth.offset);
		b += ROCE_SPETH_LEN;
	}
	if (ext & ROCE_EXT_NTETH) {
		b[0] = h->nt_run;
		net_put_be24(b + 1, h->nt_psn & ROCE_PSN_MASK);
		b += ROCE_NTETH_LEN;
	}
	if (ext & ROCE_EXT_VTETH) {
		b[0] = h->vt.flags;
		b[1] = h->vt.n_crit;
		net_put_be16(b + 2, h->vt.loss_bp);
		net_put_be16(b + 4, h->vt.window);
		b[6] = b[7] = 0;
		net_put_be32(b + 8, h->vt.max_burst);
		for (unsigned int i = 0; i < ROCE_VTETH_CRIT; i++) {
			net_put_be32(b + 12 + 8 * i, h->vt.crit[i].off);
			net_put_be32(b + 16 + 8 * i, h->vt.crit[i].len);
		}
		b += ROCE_VTETH_LEN;
	}
	if (ext & ROCE_EXT_VLETH) {
		net_put_be32(b, h->vl.len);
		net_put_be32(b + 4, h->vl.lost_pkts);
		net_put_be32(b + 8, h->vl.lost_bytes);
		b[12] = h->vl.n_holes;
		b[13] = h->vl.flags;
		b[14] = b[15] = 0;
		for (unsigned int i = 0; i < ROCE_VLETH_HOLES; i++) {
			net_put_be32(b + 16 + 8 * i, h->vl.holes[i].off);
			net_put_be32(b + 20 + 8 * i, h->vl.holes[i].len);
		}
		b += ROCE_VLETH_LEN;
	}
	if (ext & ROCE_EXT_FRH) /* lib/fec writes its FEC Repair Header itself */
		memset(b, 0, ROCE_FRH_LEN);
	if (ext & ROCE_EXT_CNP)
		memset(b, 0, ROCE_CNP_RSVD_LEN);
}

/*
 * IP and UDP after the L2 header p->l2 describes (p->l2.hlen bytes, IPv4 or
 * IPv6 EtherType): their lengths and the IPv4 checksum, then the BTH on.
 */
static int
parse_ip_udp(const uint8_t *frame, size_t len, struct roce_pkt *p, unsigned flags)
{
	const uint8_t *ip;
	int rc;

	p->l3_off = p->l2.hlen;
	ip = frame + p->l3_off;
	rc = net_l3_parse(ip, len - p->l3_off, p->l2.ethertype, &p->l3);
	if (rc == -NET_E_BAD_IP_CSUM && (flags & ROCE_PARSE_NO_IP_CSUM))
		rc = 0;
	if (rc < 0)
		return rc;
	if (p->l3.proto != NET_IPPROTO_UDP)
		return -NET_E_NOT_UDP;
	rc = net_udp_parse(ip + p->l3.hlen, p->l3.payload_len, &p->udp);
	if (rc < 0)
		return rc;
	if (p->udp.len != p->l3.payload_len)
		return -NET_E_BAD_UDP_LEN;
	if (p->udp.dport != ROCE_UDP_DPORT && !(flags & ROCE_PARSE_ANY_PORT))
		return -NET_E_NOT_ROCE_PORT;
	return roce_parse_payload(frame, p, flags);
}

int
roce_parse_payload(const uint8_t *frame, struct roce_pkt *p, unsigned flags)
{
	const struct roce_opcode_info *op;
	const uint8_t *bth;
	size_t udp_len = p->udp.len, roce_len, body;

	roce_len = udp_len - NET_UDP_HLEN; /* BTH .. ICRC */
	if (roce_len < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return -NET_E_TRUNC_BTH;
	p->bth_off = (uint16_t)(p->l3_off + p->l3.hlen + NET_UDP_HLEN);
	bth = frame + p->bth_off;
	bth_read(bth, &p->h.bth);
	op = roce_opcode_info(p->h.bth.opcode);
	if (op->transport == ROCE_TR_NONE)
		return -NET_E_BAD_OPCODE;
	if (p->h.bth.tver != 0)
		return -NET_E_BAD_TVER;
	if (roce_len < (size_t)op->hdr_len + ROCE_ICRC_LEN)
		return -NET_E_TRUNC_EXT;
	ext_read(bth + ROCE_BTH_LEN, op->ext, &p->h);
	body = roce_len - op->hdr_len - ROCE_ICRC_LEN; /* payload + pad */
	if (!(op->flags & ROCE_OPF_PAYLOAD)) {
		if (p->h.bth.pad)
			return -NET_E_BAD_PAD;
		if (body)
			return -NET_E_PAYLOAD_NOT_ALLOWED;
	} else if (p->h.bth.pad > body) {
		return -NET_E_BAD_PAD;
	}
	p->payload_off = (uint16_t)(p->bth_off + op->hdr_len);
	p->payload_len = (uint32_t)(body - p->h.bth.pad);
	p->frame_len = (uint32_t)(p->l3_off + p->l3.hlen + udp_len);
	p->icrc = roce_icrc_get(frame + p->frame_len - ROCE_ICRC_LEN);
	if (!(flags & ROCE_PARSE_NO_ICRC) &&
	    roce_icrc_calc(frame + p->l3_off, p->frame_len - ROCE_ICRC_LEN - p->l3_off,
			   p->l3.version) != p->icrc)
		return -NET_E_BAD_ICRC;
	return 0;
}

int
roce_parse(const uint8_t *frame, size_t len, struct roce_pkt *p, unsigned flags)
{
	int rc = net_l2_parse(frame, len, &p->l2);

	if (rc < 0)
		return rc;
	if (p->l2.ethertype != NET_ETHERTYPE_IPV4 && p->l2.ethertype != NET_ETHERTYPE_IPV6)
		return -NET_E_BAD_ETHERTYPE;
	return parse_ip_udp(frame, len, p, flags);
}

int
roce_parse_frame(const uint8_t *frame, size_t len, const struct net_frame *fr, struct roce_pkt *p,
		 unsigned flags)
{
	/* the classifier walked L2 and found UDP to 4791: only its tag rule is roce_parse's own */
	if (fr->kind != NET_FRAME_ROCE || !net_frame_dot1q_only(fr))
		return roce_parse(frame, len, p, flags);
	memcpy(p->l2.dst, frame, NET_ETH_ALEN);
	memcpy(p->l2.src, frame + NET_ETH_ALEN, NET_ETH_ALEN);
	p->l2.ethertype = fr->ethertype;
	p->l2.has_vlan = fr->ntags == 1;
	p->l2.vlan_tci = fr->ntags == 1 ? fr->tci[0] : 0;
	p->l2.hlen = fr->l3_off;
	return parse_ip_udp(frame, len, p, flags);
}

static size_t
l3_hlen(const struct roce_pkt *p)
{
	return p->l3.version == 4 ? NET_IPV4_HLEN : NET_IPV6_HLEN;
}

size_t
roce_hdr_len(const struct roce_pkt *p)
{
	return NET_ETH_HLEN + (p->l2.has_vlan ? NET_VLAN_HLEN : 0) + l3_hlen(p) + NET_UDP_HLEN +
	       roce_opcode_info(p->h.bth.opcode)->hdr_len;
}

static uint32_t
pad_for(const struct roce_pkt *p, uint32_t payload_len, unsigned flags)
{
	return (flags & ROCE_BUILD_KEEP_PAD) ? p->h.bth.pad : (-payload_len) & 3u;
}

static size_t
frame_len(const struct roce_pkt *p, uint32_t payload_len, uint32_t pad)
{
	return roce_hdr_len(p) + payload_len + pad + ROCE_ICRC_LEN;
}

size_t
roce_frame_len(const struct roce_pkt *p, uint32_t payload_len)
{
	size_t n = frame_len(p, payload_len, (-payload_len) & 3u);

	return n < NET_ETH_MIN_FRAME ? NET_ETH_MIN_FRAME : n;
}

uint16_t
roce_udp_sport(uint32_t src_qpn, uint32_t dst_qpn)
{
	/* fold both QPNs (rdma-core's rdma_flow_label/sport style hash) into 14 bits */
	uint64_t fl = (uint64_t)src_qpn * dst_qpn;
	uint32_t v;

	fl ^= fl >> 20;
	fl ^= fl >> 40;
	v = (uint32_t)fl & 0xfffff;
	return (uint16_t)(0xc000 | ((v ^ (v >> 14)) & 0x3fff));
}

void
roce_icrc_update(uint8_t *frame, const struct roce_pkt *p)
{
	size_t icrc_off = p->frame_len - ROCE_ICRC_LEN;

	roce_icrc_put(frame + icrc_off,
		      roce_icrc_calc(frame + p->l3_off, icrc_off - p->l3_off, p->l3.version));
}

int
roce_build(uint8_t *buf, size_t cap, struct roce_pkt *p, const void *payload, uint32_t payload_len,
	   unsigned flags)
{
	const struct roce_opcode_info *op = roce_opcode_info(p->h.bth.opcode);
	uint32_t pad = pad_for(p, payload_len, flags);
	size_t hdr, flen, out;
	uint8_t *ip, *udp;
	int rc;

	if (op->transport == ROCE_TR_NONE)
		return -NET_E_BAD_OPCODE;
	if ((p->l3.version != 4 && p->l3.version != 6) || pad > 3 ||
	    (!(op->flags & ROCE_OPF_PAYLOAD) && (payload_len || pad)))
		return -NET_E_INVAL;
	hdr = roce_hdr_len(p);
	flen = frame_len(p, payload_len, pad);
	if (flen - NET_ETH_HLEN - (p->l2.has_vlan ? NET_VLAN_HLEN : 0) > 0xffff)
		return -NET_E_INVAL; /* IP length field would overflow */
	out = flen < NET_ETH_MIN_FRAME ? NET_ETH_MIN_FRAME : flen;
	if (cap < out)
		return -NET_E_NOSPACE;

	if (payload && payload_len && (const uint8_t *)payload != buf + hdr)
		memmove(buf + hdr, payload, payload_len);
	memset(buf + hdr + payload_len, 0, out - hdr - payload_len); /* pad, ICRC, Eth pad */

	p->l2.ethertype = p->l3.version == 4 ? NET_ETHERTYPE_IPV4 : NET_ETHERTYPE_IPV6;
	rc = net_l2_build(buf, cap, &p->l2);
	if (rc < 0)
		return rc;
	p->l2.hlen = (uint16_t)rc;
	p->l3_off = (uint16_t)rc;
	ip = buf + rc;
	p->l3.proto = NET_IPPROTO_UDP;
	p->l3.hlen = (uint16_t)l3_hlen(p);
	p->l3.payload_len = (uint16_t)(flen - p->l3_off - p->l3.hlen);
	rc = net_l3_build(ip, cap - p->l3_off, &p->l3);
	if (rc < 0)
		return rc;
	udp = ip + p->l3.hlen;
	p->udp.dport = ROCE_UDP_DPORT;
	p->udp.len = p->l3.payload_len;
	p->udp.csum = 0;
	net_udp_build(udp, NET_UDP_HLEN, &p->udp);
	p->bth_off = (uint16_t)(udp + NET_UDP_HLEN - buf);
	p->h.bth.pad = (uint8_t)pad;
	bth_write(buf + p->bth_off, &p->h.bth);
	ext_write(buf + p->bth_off + ROCE_BTH_LEN, op->ext, &p->h);
	p->payload_off = (uint16_t)hdr;
	p->payload_len = payload_len;
	p->frame_len = (uint32_t)flen;
	if (!(flags & ROCE_BUILD_NO_ICRC))
		roce_icrc_update(buf, p);
	p->icrc = roce_icrc_get(buf + flen - ROCE_ICRC_LEN);
	if (p->l3.version == 6 && !(flags & ROCE_BUILD_UDP6_ZERO)) {
		/* UDP checksum is masked out of the ICRC but covers it: compute it last */
		p->udp.csum = net_udp_csum(&p->l3, udp, p->udp.len);
		net_put_be16(udp + 6, p->udp.csum);
	}
	return (int)out;
}
