/* SPDX-License-Identifier: BSD-3-Clause */
#include "pfc.h"

#include <string.h>

#include "net_bytes.h"
#include "net_frame.h"
#include "net_hdr.h"

const uint8_t pfc_dst_mac[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};

static void
mac_ctrl_header(uint8_t *buf, const uint8_t src[6], uint16_t opcode)
{
	memset(buf, 0, PFC_FRAME_LEN);
	memcpy(buf, pfc_dst_mac, 6);
	memcpy(buf + 6, src, 6);
	net_put_be16(buf + 12, NET_ETHERTYPE_MAC_CTRL);
	net_put_be16(buf + 14, opcode);
}

int
pfc_build(uint8_t *buf, size_t cap, const uint8_t src[6], uint8_t enable,
	  const uint16_t quanta[PFC_NUM_PRIO])
{
	if (cap < PFC_FRAME_LEN)
		return -NET_E_NOSPACE;
	mac_ctrl_header(buf, src, PFC_OPCODE);
	net_put_be16(buf + 16, enable);
	for (int p = 0; p < PFC_NUM_PRIO; p++)
		net_put_be16(buf + 18 + 2 * p, (enable >> p & 1) ? quanta[p] : 0);
	return PFC_FRAME_LEN;
}

int
pause_build(uint8_t *buf, size_t cap, const uint8_t src[6], uint16_t quanta)
{
	if (cap < PFC_FRAME_LEN)
		return -NET_E_NOSPACE;
	mac_ctrl_header(buf, src, PAUSE_OPCODE);
	net_put_be16(buf + 16, quanta);
	return PFC_FRAME_LEN;
}

bool
pfc_is_mac_ctrl(const uint8_t *buf, size_t len)
{
	struct net_frame fr;

	/* what pfc_parse() reads: untagged or one 802.1Q tag */
	return net_frame_classify(buf, len, &fr) == NET_FRAME_MAC_CTRL && net_frame_dot1q_only(&fr);
}

int
pfc_parse(const uint8_t *buf, size_t len, struct pfc_frame *f)
{
	struct net_l2 l2;
	const uint8_t *body;
	size_t blen;
	uint16_t vec;
	int rc;

	rc = net_l2_parse(buf, len, &l2);
	if (rc < 0)
		return rc == -NET_E_TRUNC_ETH ? -NET_E_TRUNC_MAC_CTRL : rc;
	if (l2.ethertype != NET_ETHERTYPE_MAC_CTRL)
		return -NET_E_NOT_MAC_CTRL;
	body = buf + l2.hlen;
	blen = len - l2.hlen;
	if (blen < 2)
		return -NET_E_TRUNC_MAC_CTRL;
	memcpy(f->src, l2.src, 6);
	f->opcode = net_get_be16(body);
	if (f->opcode == PAUSE_OPCODE) {
		if (blen < 4)
			return -NET_E_TRUNC_MAC_CTRL;
		f->enable = 0xff;
		for (int p = 0; p < PFC_NUM_PRIO; p++)
			f->quanta[p] = net_get_be16(body + 2);
		return 0;
	}
	if (f->opcode != PFC_OPCODE)
		return -NET_E_BAD_MAC_CTRL_OP;
	if (blen < 2 + 2 + 2 * PFC_NUM_PRIO)
		return -NET_E_TRUNC_MAC_CTRL;
	vec = net_get_be16(body + 2);
	if (vec > 0xff)
		return -NET_E_BAD_PFC_VECTOR;
	f->enable = (uint8_t)vec;
	for (int p = 0; p < PFC_NUM_PRIO; p++)
		f->quanta[p] = (vec >> p & 1) ? net_get_be16(body + 4 + 2 * p) : 0;
	return 0;
}

uint64_t
pfc_quanta_to_ns(uint32_t quanta, uint64_t link_bps)
{
	if (link_bps == 0)
		return 0;
	/* ns = quanta * 512 bit / rate; 0xffff * 512 * 1e9 fits in 64 bits. */
	return (uint64_t)quanta * PFC_QUANTUM_BITS * 1000000000ull / link_bps;
}

uint16_t
pfc_ns_to_quanta(uint64_t ns, uint64_t link_bps)
{
	const uint64_t den = (uint64_t)PFC_QUANTUM_BITS * 1000000000ull;
	unsigned __int128 num = (unsigned __int128)ns * link_bps;
	unsigned __int128 q = (num + den - 1) / den;

	return q > PFC_MAX_QUANTA ? PFC_MAX_QUANTA : (uint16_t)q;
}

uint16_t
pfc_quanta_convert(uint16_t quanta, uint64_t from_bps, uint64_t to_bps)
{
	uint64_t q;

	if (quanta == 0 || from_bps == 0)
		return 0;
	/* same duration: q_to = q_from * to / from, rounded up so the pause never shrinks */
	q = ((uint64_t)quanta * to_bps + from_bps - 1) / from_bps;
	if (q == 0)
		q = 1;
	return q > PFC_MAX_QUANTA ? PFC_MAX_QUANTA : (uint16_t)q;
}

void
pfc_classifier_init(struct pfc_classifier *c, enum pfc_trust trust)
{
	c->trust = trust;
	c->default_prio = 0;
	for (int d = 0; d < 64; d++)
		c->dscp2prio[d] = (uint8_t)(d >> 3);
}

uint8_t
pfc_classify(const struct pfc_classifier *c, const uint8_t *frame, size_t len)
{
	struct net_frame fr;

	/* one header walk for every receive path: lib/net's classifier (net_frame.h) */
	net_frame_classify(frame, len, &fr);
	/* PCP trust: the outer 802.1Q tag, even when what follows it is cut or tagged again */
	if (c->trust == PFC_TRUST_PCP)
		return fr.ntags > 0 && fr.tpid[0] == NET_ETHERTYPE_VLAN ? net_vlan_pcp(fr.tci[0])
									: c->default_prio;
	/* DSCP trust: IP untagged or behind one 802.1Q tag, as net_l2_parse() reads frames */
	if (fr.has_tclass && net_frame_dot1q_only(&fr))
		return c->dscp2prio[fr.tclass >> 2] & 7;
	return c->default_prio;
}
