/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_xmit.c
 * Frame templates (RoCEv2 addressing from an ibv_ah_attr and a peer MAC) and
 * the one transmit helper every role uses.
 */
#include <errno.h>
#include <string.h>

#include "roce_int.h"

int
roce_tmpl_init(struct roce_dev *dev, struct roce_pkt *tmpl, const struct ibv_ah_attr *ah,
	       const uint8_t mac[6])
{
	const struct roce_dev_cfg *cfg = &dev->cfg;
	const uint8_t *sgid, *dgid;
	uint32_t ip4;
	bool v4;

	/* RoCEv2 has no LRH: every path is "global", addressed by its GRH fields */
	if (!ah->is_global || ah->grh.sgid_index >= cfg->gid_count)
		return -EINVAL;
	sgid = cfg->gid[ah->grh.sgid_index].raw;
	dgid = ah->grh.dgid.raw;
	v4 = net_mapped_to_ip4(sgid, &ip4);
	if (v4 != net_mapped_to_ip4(dgid, &ip4))
		return -EINVAL; /* an IPv4 GID cannot talk to an IPv6 one */

	memset(tmpl, 0, sizeof(*tmpl));
	memcpy(tmpl->l2.dst, mac, NET_ETH_ALEN);
	memcpy(tmpl->l2.src, cfg->mac, NET_ETH_ALEN);
	tmpl->l2.has_vlan = cfg->vlan;
	tmpl->l2.vlan_tci = net_vlan_tci(ah->sl ? ah->sl : cfg->pcp, cfg->vlan_id);
	tmpl->l3.version = v4 ? 4 : 6;
	tmpl->l3.tos = ah->grh.traffic_class ? ah->grh.traffic_class : (uint8_t)(cfg->dscp << 2);
	tmpl->l3.tos &= (uint8_t)~NET_ECN_CE; /* ECN is set per packet */
	tmpl->l3.ttl = ah->grh.hop_limit ? ah->grh.hop_limit : cfg->hop_limit;
	tmpl->l3.flow_label = ah->grh.flow_label & 0xfffff;
	memcpy(tmpl->l3.src, sgid, 16);
	memcpy(tmpl->l3.dst, dgid, 16);
	return 0;
}

uint8_t
roce_qp_op_base(const struct roce_qp *qp)
{
	switch (qp->type) {
	case IBV_QPT_UC:
		return ROCE_OP_UC_BASE;
	case IBV_QPT_UD:
		return ROCE_OP_UD_BASE;
	default:
		return ROCE_OP_RC_BASE;
	}
}

void
roce_bth_init(const struct roce_qp *qp, struct roce_pkt *p, uint8_t opcode, uint32_t psn)
{
	memset(&p->h, 0, sizeof(p->h));
	p->h.bth.opcode = opcode;
	p->h.bth.pkey = qp->pkey;
	p->h.bth.dqpn = qp->attr.dest_qp_num;
	p->h.bth.psn = psn & ROCE_PSN_MASK;
}

uint8_t *
roce_tx_payload(struct roce_dev *dev, const struct roce_pkt *p)
{
	/* the payload goes straight into the app's buffer when it lends one */
	dev->txcur = dev->ops.tx_buf ? dev->ops.tx_buf(dev->ctx, ROCE_MAX_FRAME) : NULL;
	return (dev->txcur ? dev->txcur : dev->txbuf) + roce_hdr_len(p);
}

int
roce_tx_pkt(struct roce_qp *qp, struct roce_pkt *p, uint32_t payload_len, bool ecn)
{
	struct roce_dev *dev = qp->dev;
	uint8_t *buf = payload_len && dev->txcur ? dev->txcur : dev->txbuf;
	int len, rc;

	dev->txcur = NULL;
	if (dev->tx_blocked)
		return -EAGAIN;
	if (ecn && (dev->cfg.ecn || qp->cc->ecn))
		p->l3.tos = (uint8_t)((p->l3.tos & ~NET_ECN_CE) | NET_ECN_ECT0);
	p->l3.ip_id = dev->ip_id++;
	len = roce_build(buf, ROCE_MAX_FRAME, p, NULL, payload_len, 0);
	if (roce_unlikely(len < 0)) {
		qp_log(qp, ROCE_LOG_ERR, "cannot build %s: %s", roce_opcode_name(p->h.bth.opcode),
		       net_err_str(len));
		return -EINVAL;
	}
	if (qp->fec) /* FEC: its COMMIT before the frame, the block's repairs after */
		rc = roce_fec_tx(qp, buf, (size_t)len, p);
	else
		rc = dev->ops.tx(dev->ctx, buf, (size_t)len);
	if (rc < 0) {
		/* a paused link is not a late loop: no pacer catch-up for it (a NIC's
		 * rate limiter loses paused time too; roce_req.c, REQ_PACE_CATCHUP_NS) */
		if (rc == ROCE_TX_PAUSED)
			qp->req.pace_backlog = false;
		dev->tx_blocked = true;
		if (!dev->tx_held_since)
			dev->tx_held_since = dev->now ? dev->now : 1;
		dev->tx_refused_at = dev->now;
		roce_qp_stat(qp, ROCE_STAT_TX_ERRORS, 1);
		return -EAGAIN;
	}
	if (roce_unlikely(dev->tx_held_since))
		roce_rtt_tx_resumed(dev);
	roce_qp_stat(qp, ROCE_STAT_TX_PKTS, 1);
	roce_qp_stat(qp, ROCE_STAT_TX_BYTES, (uint64_t)len);
	return 0;
}

uint16_t
roce_path_sport(uint32_t flow_label, uint32_t src_qpn, uint32_t dst_qpn)
{
	uint32_t fl = flow_label & 0xfffff;

	/* a flow label, when given, is the ECMP entropy; fold its 20 bits into 14 */
	if (fl)
		return (uint16_t)(0xc000 | ((fl ^ (fl >> 14)) & 0x3fff));
	return roce_udp_sport(src_qpn, dst_qpn);
}
