/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file fec_wire.c
 * FEC wire format (docs/wire.md, "FEC repair and negotiation"): parameters,
 * the FEC Repair Header (FRH), parsing FEC frames, building negotiation
 * frames, and the coded symbol of a data frame.
 *
 * LoWAR (Zuo et al.), slide "Repair Header (RH) Extension", puts 0x1F and the
 * destination QPN in the first word and "Type | type-specified fields" after
 * it. In the BTH's position 0x1F is a reserved RC opcode, which an IBTA
 * responder may NAK as Invalid Request (fatal to the QP), so rocewan sends a
 * whole BTH with a manufacturer-specific opcode (0xD0/0xD1) and the
 * destination QP in its usual place, and the RH (our FRH) after it.
 */
#include "fec_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_bytes.h"
#include "net_hdr.h"
#include "roce_hdr.h"
#include "roce_icrc.h"
#include "roce_opcode.h"
#include "roce_pkt.h"
#include "roce_psn.h"

int
fec_params_check(const struct fec_params *p)
{
	if (p->mode == FEC_MODE_OFF)
		return 0;
	if (p->k < 1 || p->k > FEC_K_MAX)
		return -1;
	if (p->mode == FEC_MODE_XOR)
		return (p->d >= 1 && p->d <= FEC_D_MAX && p->r == 1) ? 0 : -1;
	if (p->mode == FEC_MODE_RS)
		/* ISA-L's Cauchy matrix is invertible for k + r <= 255 */
		return (p->d == 1 && p->r >= 1 && p->r <= FEC_R_MAX) ? 0 : -1;
	return -1;
}

int
fec_params_parse(const char *s, struct fec_params *p, char *err, size_t errlen)
{
	unsigned long a, b;
	char *end;
	int rs;

	if (strcmp(s, "off") == 0) {
		*p = (struct fec_params){FEC_MODE_OFF, 0, 0, 0};
		return 0;
	}
	if (strncmp(s, "xor:", 4) == 0)
		rs = 0;
	else if (strncmp(s, "rs:", 3) == 0)
		rs = 1;
	else
		goto bad;
	s += rs ? 3 : 4;
	a = strtoul(s, &end, 10);
	if (end == s || *end != ',')
		goto bad;
	s = end + 1;
	b = strtoul(s, &end, 10);
	if (end == s || *end != '\0' || a > 255 || b > 255)
		goto bad;
	if (rs)
		*p = (struct fec_params){FEC_MODE_RS, (uint8_t)a, 1, (uint8_t)b};
	else
		*p = (struct fec_params){FEC_MODE_XOR, (uint8_t)a, (uint8_t)b, 1};
	if (fec_params_check(p) == 0)
		return 0;
bad:
	snprintf(err, errlen,
		 "--fec: expected xor:K,D (K 1..%d, D 1..%d) or rs:K,R (K 1..%d, R 1..%d) or off",
		 FEC_K_MAX, FEC_D_MAX, FEC_K_MAX, FEC_R_MAX);
	return -1;
}

int
fec_params_format(const struct fec_params *p, char *buf, size_t len)
{
	if (p->mode == FEC_MODE_XOR)
		return snprintf(buf, len, "xor:%u,%u", p->k, p->d);
	if (p->mode == FEC_MODE_RS)
		return snprintf(buf, len, "rs:%u,%u", p->k, p->r);
	return snprintf(buf, len, "off");
}

/*
 * FRH (docs/wire.md), big-endian:
 *  0 type | 1 flags (bit 0: stream) | 2 mode | 3 K | 4 D | 5 R | 6 row | 7 reserved
 *  8-9 length code | 10-11 reserved | 12-15 block id | 16 reserved | 17-19 anchor PSN
 *  20-27 cover mask
 */
void
fec_frh_write(uint8_t *b, const struct fec_frh *h)
{
	memset(b, 0, FEC_FRH_LEN);
	b[0] = h->type;
	b[1] = h->stream & 1;
	b[2] = h->p.mode;
	b[3] = h->p.k;
	b[4] = h->p.d;
	b[5] = h->p.r;
	b[6] = h->row;
	net_put_be16(b + 8, h->len_code);
	net_put_be32(b + 12, h->block_id);
	net_put_be24(b + 17, h->anchor & ROCE_PSN_MASK);
	net_put_be64(b + 20, h->mask);
}

int
fec_frh_read(const uint8_t *b, struct fec_frh *h)
{
	h->type = b[0];
	h->stream = b[1] & 1;
	h->p.mode = b[2];
	h->p.k = b[3];
	h->p.d = b[4];
	h->p.r = b[5];
	h->row = b[6];
	h->len_code = net_get_be16(b + 8);
	h->block_id = net_get_be32(b + 12);
	h->anchor = net_get_be24(b + 17);
	h->mask = net_get_be64(b + 20);
	if ((b[1] & 0xfe) || b[7] || b[10] || b[11] || b[16])
		return -1; /* reserved bits must be zero */
	if (h->p.mode == FEC_MODE_OFF || fec_params_check(&h->p) != 0)
		return -1;
	switch (h->type) {
	case FEC_T_XOR:
	case FEC_T_RS:
		if (h->p.mode != (h->type == FEC_T_XOR ? FEC_MODE_XOR : FEC_MODE_RS))
			return -1;
		if (h->row >= h->p.r || h->mask == 0)
			return -1;
		if (h->p.k < 64 && (h->mask >> h->p.k) != 0)
			return -1;
		return 0;
	case FEC_T_PROPOSE:
	case FEC_T_COMMIT:
		return (h->row == 0 && h->mask == 0 && h->len_code == 0) ? 0 : -1;
	default:
		return -1;
	}
}

int
fec_parse(const uint8_t *frame, size_t len, struct fec_pkt *out, bool check_icrc)
{
	struct net_l2 l2;
	struct net_l3 l3;
	struct net_udp udp;
	const uint8_t *ip, *bth;
	size_t roce_len, body;
	uint8_t pad;

	if (net_l2_parse(frame, len, &l2) < 0)
		return -FEC_E_NOT_FEC;
	if (l2.ethertype != NET_ETHERTYPE_IPV4 && l2.ethertype != NET_ETHERTYPE_IPV6)
		return -FEC_E_NOT_FEC;
	ip = frame + l2.hlen;
	if (net_l3_parse(ip, len - l2.hlen, l2.ethertype, &l3) < 0)
		return -FEC_E_PARSE;
	if (l3.proto != NET_IPPROTO_UDP)
		return -FEC_E_NOT_FEC;
	if (net_udp_parse(ip + l3.hlen, l3.payload_len, &udp) < 0 || udp.len != l3.payload_len)
		return -FEC_E_PARSE;
	if (udp.dport != ROCE_UDP_DPORT)
		return -FEC_E_NOT_FEC;
	roce_len = udp.len - NET_UDP_HLEN;
	if (roce_len < ROCE_BTH_LEN)
		return -FEC_E_PARSE;
	bth = ip + l3.hlen + NET_UDP_HLEN;
	if (!fec_opcode_is_fec(bth[0]))
		return -FEC_E_NOT_FEC;
	if ((bth[1] & 0x0f) != 0) /* TVer */
		return -FEC_E_PARSE;
	if (roce_len < ROCE_BTH_LEN + FEC_FRH_LEN + ROCE_ICRC_LEN)
		return -FEC_E_PARSE;
	out->l3_off = l2.hlen;
	out->ip_ver = l3.version;
	out->dqpn = net_get_be24(bth + 5);
	out->psn = net_get_be24(bth + 9);
	out->frame_len = (uint32_t)(l2.hlen + l3.hlen + udp.len);
	out->payload_off = (uint16_t)(bth + ROCE_BTH_LEN + FEC_FRH_LEN - frame);
	if (check_icrc &&
	    roce_icrc_calc(ip, out->frame_len - ROCE_ICRC_LEN - l2.hlen, l3.version) !=
		roce_icrc_get(frame + out->frame_len - ROCE_ICRC_LEN))
		return -FEC_E_ICRC;
	if (fec_frh_read(bth + ROCE_BTH_LEN, &out->frh) < 0)
		return -FEC_E_FRH;
	pad = (bth[1] >> 4) & 3;
	body = roce_len - ROCE_BTH_LEN - FEC_FRH_LEN - ROCE_ICRC_LEN;
	if (pad > body)
		return -FEC_E_LEN;
	out->payload_len = (uint32_t)(body - pad);
	if (bth[0] == FEC_OP_NEGOTIATE) {
		if (body || (out->frh.type != FEC_T_PROPOSE && out->frh.type != FEC_T_COMMIT))
			return -FEC_E_LEN;
	} else {
		if (out->frh.type != FEC_T_XOR && out->frh.type != FEC_T_RS)
			return -FEC_E_FRH;
		if (out->payload_len > FEC_DATA_MAX)
			return -FEC_E_LEN;
	}
	return 0;
}

/*
 * Offsets (from the IP header) and values of the bytes the coded symbol
 * zeroes: exactly the fields the ICRC masks (IBTA Annex A17.3.3), the ones a
 * router may change: IPv4 TOS, TTL, header checksum; IPv6 traffic class, flow
 * label, hop limit; the UDP checksum. Returns how many (at most 8).
 */
static int
variant_bytes(const uint8_t *ip, int ver, uint16_t ihl, uint16_t off[8], uint8_t val[8])
{
	int n = 0;

	if (ver == 4) {
		off[n] = 1, val[n++] = ip[1];
		off[n] = 8, val[n++] = ip[8];
		off[n] = 10, val[n++] = ip[10];
		off[n] = 11, val[n++] = ip[11];
	} else {
		off[n] = 0, val[n++] = ip[0] & 0x0f;
		off[n] = 1, val[n++] = ip[1];
		off[n] = 2, val[n++] = ip[2];
		off[n] = 3, val[n++] = ip[3];
		off[n] = 7, val[n++] = ip[7];
	}
	off[n] = (uint16_t)(ihl + 6), val[n++] = ip[ihl + 6];
	off[n] = (uint16_t)(ihl + 7), val[n++] = ip[ihl + 7];
	return n;
}

/* Exported to fec.c through this prototype only (not part of the API). */
int fec_symbol_info(const uint8_t *frame, size_t len, int *stream, uint32_t *psn, uint16_t *l3_off,
		    uint32_t *dlen, uint16_t voff[8], uint8_t vval[8], int *nv);

/*
 * Which stream a data frame belongs to, where its coded region starts and how
 * long it is. -1 if it is not covered (ACK, CNP, FEC, not RoCE) or too long.
 */
int
fec_symbol_info(const uint8_t *frame, size_t len, int *stream, uint32_t *psn, uint16_t *l3_off,
		uint32_t *dlen, uint16_t voff[8], uint8_t vval[8], int *nv)
{
	const struct roce_opcode_info *op;
	struct roce_pkt p;

	if (roce_parse(frame, len, &p, ROCE_PARSE_NO_ICRC | ROCE_PARSE_NO_IP_CSUM) < 0)
		return -1;
	op = roce_opcode_info(p.h.bth.opcode);
	if (op->transport != ROCE_TR_RC && op->transport != ROCE_TR_UC)
		return -1;
	if ((op->flags & ROCE_OPF_REQ) && !(op->flags & ROCE_OPF_ACK))
		*stream = FEC_STREAM_REQ;
	else if ((op->flags & ROCE_OPF_RESP) && (op->flags & ROCE_OPF_READ))
		*stream = FEC_STREAM_RESP;
	else
		return -1;
	*psn = p.h.bth.psn;
	*l3_off = p.l3_off;
	*dlen = p.frame_len - p.l3_off;
	if (*dlen > FEC_DATA_MAX)
		return -2;
	*nv = variant_bytes(frame + p.l3_off, p.l3.version, p.l3.hlen, voff, vval);
	return 0;
}

int
fec_symbol(const uint8_t *frame, size_t len, uint8_t *sym, int *stream, uint32_t *psn)
{
	uint16_t l3_off, voff[8];
	uint8_t vval[8];
	uint32_t dlen;
	int nv;

	if (fec_symbol_info(frame, len, stream, psn, &l3_off, &dlen, voff, vval, &nv) < 0)
		return -1;
	net_put_be16(sym, (uint16_t)dlen);
	memcpy(sym + 2, frame + l3_off, dlen);
	for (int i = 0; i < nv; i++)
		sym[2 + voff[i]] ^= vval[i];
	return (int)(2 + dlen);
}

/*
 * A FEC frame from a template's Ethernet/IP/UDP headers: IP/UDP lengths, IPv4
 * checksum, BTH (opcode, pad, P_Key 0xFFFF, destination QP, PSN), FRH,
 * payload, pad, ICRC, then the IPv6 UDP checksum (if the template has one).
 * Shared with fec.c.
 */
int fec_build_frame(uint8_t *buf, size_t cap, const uint8_t *tmpl, uint16_t l3_off, int ver,
		    bool udp_csum, uint8_t opcode, uint32_t dqpn, uint32_t psn,
		    const struct fec_frh *h, const uint8_t *payload, uint32_t plen);

int
fec_build_frame(uint8_t *buf, size_t cap, const uint8_t *tmpl, uint16_t l3_off, int ver,
		bool udp_csum, uint8_t opcode, uint32_t dqpn, uint32_t psn, const struct fec_frh *h,
		const uint8_t *payload, uint32_t plen)
{
	uint16_t ihl = ver == 4 ? NET_IPV4_HLEN : NET_IPV6_HLEN;
	uint32_t pad = (-plen) & 3u;
	size_t hdr = (size_t)l3_off + ihl + NET_UDP_HLEN;
	size_t flen = hdr + ROCE_BTH_LEN + FEC_FRH_LEN + plen + pad + ROCE_ICRC_LEN;
	size_t out = flen < NET_ETH_MIN_FRAME ? NET_ETH_MIN_FRAME : flen;
	uint8_t *ip = buf + l3_off, *udp = ip + ihl, *bth = udp + NET_UDP_HLEN;
	struct net_l3 l3;

	if (out > cap)
		return -1;
	memcpy(buf, tmpl, hdr);
	memset(buf + hdr, 0, out - hdr);
	if (ver == 4) {
		net_put_be16(ip + 2, (uint16_t)(flen - l3_off));
		net_ip4_fix_csum(ip);
	} else {
		net_put_be16(ip + 4, (uint16_t)(flen - l3_off - ihl));
	}
	net_put_be16(udp + 4, (uint16_t)(flen - l3_off - ihl));
	net_put_be16(udp + 6, 0);
	bth[0] = opcode;
	bth[1] = (uint8_t)(pad << 4);
	net_put_be16(bth + 2, ROCE_DEFAULT_PKEY);
	net_put_be24(bth + 5, dqpn & ROCE_PSN_MASK);
	net_put_be24(bth + 9, psn & ROCE_PSN_MASK);
	fec_frh_write(bth + ROCE_BTH_LEN, h);
	if (plen)
		memcpy(bth + ROCE_BTH_LEN + FEC_FRH_LEN, payload, plen);
	roce_icrc_put(buf + flen - ROCE_ICRC_LEN,
		      roce_icrc_calc(ip, flen - ROCE_ICRC_LEN - l3_off, ver));
	if (ver == 6 && udp_csum && net_l3_parse(ip, flen - l3_off, NET_ETHERTYPE_IPV6, &l3) == 0)
		net_put_be16(udp + 6, net_udp_csum(&l3, udp, flen - l3_off - ihl));
	return (int)out;
}

int
fec_build_negotiate(uint8_t *buf, size_t cap, const uint8_t *tmpl, size_t tmpl_len, uint32_t dqpn,
		    uint32_t psn, const struct fec_frh *h)
{
	struct roce_pkt p;

	if (h->type != FEC_T_PROPOSE && h->type != FEC_T_COMMIT)
		return -1;
	if (roce_parse(tmpl, tmpl_len, &p, ROCE_PARSE_NO_ICRC | ROCE_PARSE_NO_IP_CSUM) < 0)
		return -1;
	return fec_build_frame(buf, cap, tmpl, p.l3_off, p.l3.version, p.udp.csum != 0,
			       FEC_OP_NEGOTIATE, dqpn, psn, h, NULL, 0);
}
