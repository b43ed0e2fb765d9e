/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_gsi.c
 * QP1, the GSI (IBTA Vol. 1 13.5): receive checks and delivery of MADs to the
 * registered consumer, and the UD SEND-only a MAD goes out in. roce_recv.c hands
 * every frame to QP 1 here after the device's own checks (parse, ICRC, for us).
 */
#include <errno.h>
#include <string.h>

#include "mad.h"
#include "roce_int.h"

static const char *const drop_names[ROCE_GSI_DROP__COUNT] = {
    [ROCE_GSI_DROP_BAD_OPCODE] = "bad_opcode",
    [ROCE_GSI_DROP_IMM] = "imm",
    [ROCE_GSI_DROP_BAD_QKEY] = "bad_qkey",
    [ROCE_GSI_DROP_BAD_PKEY] = "bad_pkey",
    [ROCE_GSI_DROP_SHORT] = "short",
    [ROCE_GSI_DROP_LONG] = "long",
    [ROCE_GSI_DROP_BASE_VERSION] = "base_version",
    [ROCE_GSI_DROP_NO_HANDLER] = "no_handler",
    [ROCE_GSI_DROP_UNCLAIMED] = "unclaimed",
};

static const char *const tx_err_names[ROCE_GSI_TX_ERR__COUNT] = {
    [ROCE_GSI_TX_BAD_DEST] = "bad_dest",
    [ROCE_GSI_TX_NO_MAC] = "no_mac",
    [ROCE_GSI_TX_REFUSED] = "refused",
};

const char *
roce_gsi_drop_name(enum roce_gsi_drop d)
{
	return (unsigned int)d < ROCE_GSI_DROP__COUNT ? drop_names[d] : "?";
}

const char *
roce_gsi_tx_err_name(enum roce_gsi_tx_err e)
{
	return (unsigned int)e < ROCE_GSI_TX_ERR__COUNT ? tx_err_names[e] : "?";
}

void
roce_gsi_set_ops(struct roce_dev *dev, const struct roce_gsi_ops *ops, void *ctx)
{
	if (ops)
		dev->gsi.ops = *ops;
	else
		memset(&dev->gsi.ops, 0, sizeof(dev->gsi.ops));
	dev->gsi.ctx = ctx;
}

void
roce_gsi_set_psn(struct roce_dev *dev, uint32_t psn)
{
	dev->gsi.psn = psn & ROCE_PSN_MASK;
}

void
roce_gsi_stats(const struct roce_dev *dev, struct roce_gsi_stats *out)
{
	*out = dev->gsi.st;
}

static int
gsi_drop(struct roce_gsi *g, enum roce_gsi_drop d)
{
	g->st.drop[d]++;
	return 0;
}

static void
gsi_src(const struct roce_rx *rx, struct roce_gsi_src *s)
{
	const struct roce_pkt *p = &rx->pkt;

	memset(s, 0, sizeof(*s));
	memcpy(s->gid, p->l3.src, 16);
	memcpy(s->dst_gid, p->l3.dst, 16);
	memcpy(s->mac, p->l2.src, NET_ETH_ALEN);
	s->qpn = p->h.deth.sqpn & ROCE_QPN_MASK;
	s->pkey = p->h.bth.pkey;
	s->has_vlan = p->l2.has_vlan;
	if (p->l2.has_vlan) {
		s->vlan_id = p->l2.vlan_tci & 0xfff;
		s->pcp = (uint8_t)(p->l2.vlan_tci >> 13);
	}
	s->dscp = (uint8_t)(p->l3.tos >> 2);
	s->udp_sport = p->udp.sport;
}

int
roce_gsi_rx(struct roce_dev *dev, const struct roce_rx *rx)
{
	struct roce_gsi *g = &dev->gsi;
	const struct roce_hdrs *h = &rx->pkt.h;
	struct roce_gsi_src src;
	struct mad_hdr mh;
	int rc;

	g->st.rx_total++;
	if (h->bth.opcode == (ROCE_OP_UD_BASE | ROCE_OP_SEND_ONLY_IMM))
		return gsi_drop(g, ROCE_GSI_DROP_IMM);
	if (h->bth.opcode != (ROCE_OP_UD_BASE | ROCE_OP_SEND_ONLY))
		return gsi_drop(g, ROCE_GSI_DROP_BAD_OPCODE);
	/* 13.5.1.1: QP1 takes the GSI's well-known Q_Key only */
	if (h->deth.qkey != MAD_GSI_QKEY)
		return gsi_drop(g, ROCE_GSI_DROP_BAD_QKEY);
	/* C9-42: a packet to QP1 carries a P_Key of QP1's (the default) partition */
	if (!roce_pkey_match(h->bth.pkey, MAD_DEFAULT_PKEY))
		return gsi_drop(g, ROCE_GSI_DROP_BAD_PKEY);
	if (rx->len > MAD_SIZE)
		return gsi_drop(g, ROCE_GSI_DROP_LONG);
	rc = mad_hdr_parse(rx->payload, rx->len, &mh);
	if (rc == -MAD_E_SHORT)
		return gsi_drop(g, ROCE_GSI_DROP_SHORT);
	if (rc < 0)
		return gsi_drop(g, ROCE_GSI_DROP_BASE_VERSION);
	g->st.mad[ROCE_GSI_RX][mad_kind_of(mh.mgmt_class, mh.attr_id)]++;
	if (!g->ops.on_mad)
		return gsi_drop(g, ROCE_GSI_DROP_NO_HANDLER);
	gsi_src(rx, &src);
	if (g->ops.on_mad(g->ctx, rx->payload, &src) != 0)
		return gsi_drop(g, ROCE_GSI_DROP_UNCLAIMED);
	g->st.delivered++;
	return 0;
}

static int
gsi_tx_err(struct roce_gsi *g, enum roce_gsi_tx_err e, int rc)
{
	g->st.tx_err[e]++;
	return rc;
}

int
roce_gsi_send(struct roce_dev *dev, const struct roce_gsi_dest *d, const uint8_t *mad)
{
	static const uint8_t zero_mac[NET_ETH_ALEN];
	struct roce_gsi *g = &dev->gsi;
	struct ibv_ah_attr ah;
	struct roce_pkt p;
	uint8_t mac[NET_ETH_ALEN];
	int len;

	memset(&ah, 0, sizeof(ah));
	ah.is_global = 1;
	ah.grh.sgid_index = (uint8_t)(d->sgid_index > 255 ? 255 : d->sgid_index);
	ah.grh.traffic_class = d->traffic_class;
	memcpy(ah.grh.dgid.raw, d->gid, 16);
	memcpy(mac, d->mac, NET_ETH_ALEN);
	if (memcmp(mac, zero_mac, NET_ETH_ALEN) == 0 &&
	    (!dev->ops.resolve_mac || dev->ops.resolve_mac(dev->ctx, &ah.grh.dgid, mac) != 0))
		return gsi_tx_err(g, ROCE_GSI_TX_NO_MAC, -EHOSTUNREACH);
	if (roce_tmpl_init(dev, &p, &ah, mac) != 0)
		return gsi_tx_err(g, ROCE_GSI_TX_BAD_DEST, -EINVAL);
	/* a UD SEND_ONLY with DETH from QP 1 (13.5.1) */
	memset(&p.h, 0, sizeof(p.h));
	p.h.bth.opcode = ROCE_OP_UD_BASE | ROCE_OP_SEND_ONLY;
	p.h.bth.pkey = d->pkey ? d->pkey : MAD_DEFAULT_PKEY;
	p.h.bth.dqpn = d->qpn & ROCE_QPN_MASK;
	p.h.bth.psn = g->psn;
	p.h.deth.qkey = d->qkey;
	p.h.deth.sqpn = MAD_GSI_QPN;
	p.udp.sport = roce_path_sport(0, MAD_GSI_QPN, p.h.bth.dqpn);
	p.l3.ip_id = dev->ip_id++;
	len = roce_build(dev->txbuf, ROCE_MAX_FRAME, &p, mad, MAD_SIZE, 0);
	if (len < 0)
		return gsi_tx_err(g, ROCE_GSI_TX_BAD_DEST, -EINVAL);
	if (dev->ops.tx(dev->ctx, dev->txbuf, (size_t)len) < 0)
		return gsi_tx_err(g, ROCE_GSI_TX_REFUSED, -EAGAIN);
	g->psn = (g->psn + 1) & ROCE_PSN_MASK;
	g->st.tx_total++;
	g->st.mad[ROCE_GSI_TX][mad_kind_of_bytes(mad, MAD_SIZE)]++;
	roce_dev_stat(dev, ROCE_STAT_TX_PKTS, 1);
	roce_dev_stat(dev, ROCE_STAT_TX_BYTES, (uint64_t)len);
	return 0;
}
