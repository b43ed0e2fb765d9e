/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_recv.c
 * Receive dispatch: parse a frame, find its QP, run the checks every packet
 * must pass before any role looks at it (IBTA ch. 9.6, packet header
 * validation: destination, transport, P_Key, QP state, source, Q_Key), and
 * hand requests to the responder, responses to the completer and CNPs to
 * congestion control. Every drop is counted, nothing here can crash on a
 * malformed frame: the wire parser bounds every read.
 */
#include <string.h>

#include "mad.h"
#include "net_frame.h"
#include "roce_int.h"

static int
rx_drop(struct roce_dev *dev, struct roce_qp *qp, enum roce_stat st)
{
	if (qp)
		roce_qp_stat(qp, st, 1);
	else
		roce_dev_stat(dev, st, 1);
	return (int)st;
}

/* @p fr: the receive path's classification of the frame, or NULL (a full parse) */
static int
rx_parse(struct roce_dev *dev, const uint8_t *frame, size_t len, const struct net_frame *fr,
	 struct roce_rx *rx)
{
	int rc = fr ? roce_parse_frame(frame, len, fr, &rx->pkt, dev->cfg.parse_flags)
		    : roce_parse(frame, len, &rx->pkt, dev->cfg.parse_flags);

	if (rc < 0) {
		dev->parse_err[rc > -NET_E__COUNT ? -rc : 0]++;
		if (rc == -NET_E_BAD_ICRC)
			return rx_drop(dev, NULL, ROCE_STAT_RX_DROP_ICRC);
		return rx_drop(dev, NULL, ROCE_STAT_RX_DROP_MALFORMED);
	}
	rx->frame = frame;
	rx->op = roce_opcode_info(rx->pkt.h.bth.opcode);
	rx->payload = frame + rx->pkt.payload_off;
	rx->len = rx->pkt.payload_len;
	rx->psn = rx->pkt.h.bth.psn;
	return 0;
}

int
roce_rx_parse(struct roce_dev *dev, const uint8_t *frame, size_t len, struct roce_rx *rx)
{
	return rx_parse(dev, frame, len, NULL, rx);
}

/* Our MAC (unless disabled) and one of our GIDs. */
static bool
rx_for_us(const struct roce_dev *dev, const struct roce_rx *rx)
{
	if (dev->cfg.check_dst_mac && memcmp(rx->pkt.l2.dst, dev->cfg.mac, NET_ETH_ALEN) != 0)
		return false;
	for (unsigned int i = 0; i < dev->cfg.gid_count; i++)
		if (memcmp(rx->pkt.l3.dst, dev->cfg.gid[i].raw, 16) == 0)
			return true;
	return false;
}

static bool
transport_matches(const struct roce_qp *qp, uint8_t transport)
{
	switch (qp->type) {
	case IBV_QPT_RC:
		return transport == ROCE_TR_RC;
	case IBV_QPT_UC:
		return transport == ROCE_TR_UC;
	default:
		return transport == ROCE_TR_UD;
	}
}

/* Checks against the destination QP; returns 0 or the drop counter. */
static int
rx_check_qp(struct roce_qp *qp, const struct roce_rx *rx)
{
	const struct roce_hdrs *h = &rx->pkt.h;

	if (!transport_matches(qp, rx->op->transport))
		return rx_drop(qp->dev, qp, ROCE_STAT_RX_DROP_BAD_TRANSPORT);
	/* P_Key: must match the QP's partition (C9-42 is the QP1 rule; others use their own) */
	if (!roce_pkey_match(h->bth.pkey, qp->pkey))
		return rx_drop(qp->dev, qp, ROCE_STAT_RX_DROP_BAD_PKEY);
	if (!roce_qp_can_receive(qp))
		return rx_drop(qp->dev, qp, ROCE_STAT_RX_DROP_QP_STATE);
	if (qp->type == IBV_QPT_UD) {
		/* the Q_Key must match the QP's (IBTA Q_Key check for UD) */
		if (h->deth.qkey != qp->attr.qkey)
			return rx_drop(qp->dev, qp, ROCE_STAT_RX_DROP_BAD_QKEY);
	} else if (memcmp(rx->pkt.l3.src, qp->attr.ah_attr.grh.dgid.raw, 16) != 0) {
		/* a connected QP only talks to its peer */
		return rx_drop(qp->dev, qp, ROCE_STAT_RX_DROP_BAD_SRC);
	}
	return 0;
}

static int
rx_cnp(struct roce_qp *qp)
{
	if (qp->type == IBV_QPT_UD || !roce_qp_can_send(qp))
		return rx_drop(qp->dev, qp, ROCE_STAT_RX_DROP_QP_STATE);
	roce_comp_cnp(qp);
	return 0;
}

void
roce_rx_deliver(struct roce_qp *qp, const struct roce_rx *rx)
{
	if (rx->op->flags & ROCE_OPF_REQ) {
		if (net_tos_ecn(rx->pkt.l3.tos) == NET_ECN_CE)
			roce_resp_ecn_ce(qp);
		roce_resp_rx(qp, rx);
	} else {
		roce_comp_rx(qp, rx);
	}
}

/* One frame; *qpp gets the QP that took it (to run afterwards) or NULL. */
static int
rx_one(struct roce_dev *dev, const uint8_t *frame, size_t len, const struct net_frame *fr,
       struct roce_qp **qpp)
{
	struct roce_qp *qp;
	struct roce_rx rx;
	int rc;

	*qpp = NULL;
	roce_dev_stat(dev, ROCE_STAT_RX_PKTS, 1);
	roce_dev_stat(dev, ROCE_STAT_RX_BYTES, len);
	rc = rx_parse(dev, frame, len, fr, &rx);
	if (rc)
		return rc;
	if (!rx_for_us(dev, &rx))
		return rx_drop(dev, NULL, ROCE_STAT_RX_DROP_NOT_FOR_US);
	if (rx.pkt.h.bth.dqpn == MAD_GSI_QPN) /* QP1, the GSI: its own checks and counters */
		return roce_gsi_rx(dev, &rx);
	qp = roce_qp_lookup(dev, rx.pkt.h.bth.dqpn);
	if (!qp)
		return rx_drop(dev, NULL, ROCE_STAT_RX_DROP_BAD_QPN);
	qp->stats.v[ROCE_STAT_RX_PKTS]++;
	qp->stats.v[ROCE_STAT_RX_BYTES] += len;
	if (rx.op->transport == ROCE_TR_CNP) {
		rc = rx_cnp(qp);
	} else {
		rc = rx_check_qp(qp, &rx);
		if (rc)
			return rc;
		if (qp->fec) /* data and FEC frames: the codec, then the hold-back */
			roce_fec_rx(qp, &rx, rx.pkt.frame_len);
		else if (roce_unlikely(roce_opcode_is_fec(rx.pkt.h.bth.opcode)))
			return rx_drop(dev, qp, ROCE_STAT_RX_DROP_FEC_OFF);
		else
			roce_rx_deliver(qp, &rx);
	}
	*qpp = qp;
	return rc;
}

int
roce_dev_rx(struct roce_dev *dev, const uint8_t *frame, size_t len)
{
	struct roce_qp *qp;
	int rc;

	dev->now = dev->ops.now_ns(dev->ctx);
	dev->tx_blocked = false;
	rc = rx_one(dev, frame, len, NULL, &qp);
	if (qp)
		roce_qp_run(qp);
	return rc;
}

void
roce_dev_rx_burst(struct roce_dev *dev, const uint8_t *const *frames, const size_t *lens,
		  unsigned int n)
{
	roce_dev_rx_burst_classified(dev, frames, lens, NULL, n);
}

void
roce_dev_rx_burst_classified(struct roce_dev *dev, const uint8_t *const *frames, const size_t *lens,
			     const struct net_frame *frs, unsigned int n)
{
	struct roce_qp *dirty = NULL;

	dev->now = dev->ops.now_ns(dev->ctx);
	dev->tx_blocked = false;
	for (unsigned int i = 0; i < n; i++) {
		struct roce_qp *qp;

		rx_one(dev, frames[i], lens[i], frs ? &frs[i] : NULL, &qp);
		if (qp && !qp->dirty) {
			qp->dirty = true;
			qp->dirty_next = dirty;
			dirty = qp;
		}
	}
	while (dirty) {
		struct roce_qp *qp = dirty;

		dirty = qp->dirty_next;
		qp->dirty = false;
		roce_qp_run(qp);
	}
}
