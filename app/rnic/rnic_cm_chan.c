/* SPDX-License-Identifier: BSD-3-Clause */
/* A message channel over an RC QP connected through the CM endpoint (rnic_cm_chan.h). */
#include "rnic_cm_chan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ip_cm.h"
#include "mad.h"
#include "roce_verbs.h"

/* what rdma_cm puts in a REQ (cma.c: CMA_CM_RESPONSE_TIMEOUT, CMA_MAX_CM_RETRIES) */
#define CHAN_CM_RESPONSE_TIMEOUT 20
#define CHAN_MAX_CM_RETRIES 15
#define CHAN_ACK_TIMEOUT 19
#define CHAN_RETRY 7
#define CHAN_RNR_RETRY 7
#define CHAN_SLOT RNIC_CHAN_MSG_MAX

static int
post_recv(struct rnic_cm_chan *ch, unsigned int slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(ch->buf + slot * CHAN_SLOT),
			      .length = CHAN_SLOT,
			      .lkey = ch->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;

	return roce_post_recv(ch->qp, &wr, &bad);
}

int
rnic_cm_chan_create(struct rnic_cm_chan *ch, struct rnic_cm *ep, uint32_t psn)
{
	struct ibv_qp_init_attr ia;
	size_t len = (RNIC_CHAN_RECVS + 1) * CHAN_SLOT;

	memset(ch, 0, sizeof(*ch));
	ch->ep = ep;
	ch->psn = psn & 0xffffff;
	ch->buf = aligned_alloc(64, len);
	ch->pd = roce_pd_alloc(ep->dev);
	ch->scq = roce_create_cq(ep->dev, 8);
	ch->rcq = roce_create_cq(ep->dev, RNIC_CHAN_RECVS + 4);
	if (!ch->buf || !ch->pd || !ch->scq || !ch->rcq)
		goto fail;
	memset(ch->buf, 0, len);
	ch->mr = roce_reg_mr(ch->pd, ch->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!ch->mr)
		goto fail;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = roce_cq_ibv(ch->scq);
	ia.recv_cq = roce_cq_ibv(ch->rcq);
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = RNIC_CHAN_RECVS;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = 1;
	ch->qp = roce_create_qp(ch->pd, &ia);
	if (!ch->qp)
		goto fail;
	return 0;
fail:
	rnic_cm_chan_destroy(ch);
	return -ENOMEM;
}

void
rnic_cm_chan_destroy(struct rnic_cm_chan *ch)
{
	if (ch->id && ch->state != RNIC_CHAN_FAILED && ch->state != RNIC_CHAN_CLOSED)
		cm_destroy(&ch->ep->cm, ch->id);
	ch->id = NULL;
	if (ch->qp)
		roce_destroy_qp(ch->qp);
	if (ch->mr)
		roce_dereg_mr(ch->mr);
	if (ch->scq)
		roce_destroy_cq(ch->scq);
	if (ch->rcq)
		roce_destroy_cq(ch->rcq);
	if (ch->pd)
		roce_pd_dealloc(ch->pd);
	free(ch->buf);
	ch->qp = NULL;
	ch->mr = NULL;
	ch->scq = ch->rcq = NULL;
	ch->pd = NULL;
	ch->buf = NULL;
}

uint32_t
rnic_cm_chan_qpn(const struct rnic_cm_chan *ch)
{
	return roce_qp_num(ch->qp);
}

static void
fail(struct rnic_cm_chan *ch, const char *why)
{
	ch->state = RNIC_CHAN_FAILED;
	snprintf(ch->why, sizeof(ch->why), "%s", why);
}

/* RESET -> INIT -> RTR -> RTS towards @p rqpn: we receive at ch->psn, send at @p sq_psn */
static int
bring_up(struct rnic_cm_chan *ch, uint32_t rqpn, uint32_t sq_psn, uint8_t path_mtu)
{
	struct ibv_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = 0;
	rc = roce_modify_qp(ch->qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc)
		return rc;
	for (unsigned int s = 0; s < RNIC_CHAN_RECVS; s++)
		if ((rc = post_recv(ch, s)) != 0)
			return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = (enum ibv_mtu)path_mtu;
	a.dest_qp_num = rqpn;
	a.rq_psn = ch->psn;
	a.max_dest_rd_atomic = ch->resources;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	memcpy(a.ah_attr.grh.dgid.raw, ch->route.dgid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)ch->route.sgid_index;
	a.ah_attr.grh.hop_limit = 64;
	rc = roce_modify_qp(ch->qp, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc)
		return rc;
	/* a MAC the route has; else the device resolves it (ARP / ND) */
	static const uint8_t zero[6];
	if (memcmp(ch->route.mac, zero, 6) != 0 &&
	    (rc = roce_qp_set_remote_mac(ch->qp, ch->route.mac)))
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn & 0xffffff;
	a.timeout = CHAN_ACK_TIMEOUT;
	a.retry_cnt = CHAN_RETRY;
	a.rnr_retry = CHAN_RNR_RETRY;
	a.max_rd_atomic = ch->depth;
	return roce_modify_qp(ch->qp, &a,
			      IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

int
rnic_cm_chan_connect(struct rnic_cm_chan *ch, const struct rnic_cm_route *r, uint16_t port,
		     uint16_t src_port)
{
	struct cm_req req;
	struct ip_cm_hdr h;
	struct cm_dest d;
	int rc;

	memset(&req, 0, sizeof(req));
	memset(&h, 0, sizeof(h));
	ch->route = *r;
	ch->active = 1;
	req.service_id = ip_cm_service_id(IP_CM_PS_TCP, port);
	req.local_qpn = rnic_cm_chan_qpn(ch);
	req.starting_psn = ch->psn;
	req.responder_resources = ch->resources;
	req.initiator_depth = ch->depth;
	req.remote_cm_response_timeout = CHAN_CM_RESPONSE_TIMEOUT;
	req.local_cm_response_timeout = CHAN_CM_RESPONSE_TIMEOUT;
	req.transport = CM_TRANSPORT_RC;
	req.retry_count = CHAN_RETRY;
	req.rnr_retry_count = CHAN_RNR_RETRY;
	req.max_cm_retries = CHAN_MAX_CM_RETRIES;
	req.pkey = MAD_DEFAULT_PKEY;
	req.path_mtu = r->path_mtu;
	rnic_cm_path(r, CHAN_ACK_TIMEOUT, &req.primary);
	h.cma_version = IP_CM_VERSION;
	h.ip_version = r->sgid_index ? 6 : 4;
	h.src_port = src_port;
	memcpy(h.src_ip, r->sgid, 16);
	memcpy(h.dst_ip, r->dgid, 16);
	if (h.ip_version == 4) { /* cma.c's layout: 12 zero bytes, then the address */
		memset(h.src_ip, 0, 12);
		memset(h.dst_ip, 0, 12);
	}
	if (ip_cm_compose(req.private_data, CM_REQ_PD, IP_CM_PS_TCP, &h, NULL, 0) < 0)
		return -EINVAL;
	rnic_cm_dest(r, &d);
	rc = cm_connect(&ch->ep->cm, &req, &d, ch, &ch->id);
	if (rc)
		return rc;
	ch->state = RNIC_CHAN_CONNECTING;
	rnic_cm_kick(ch->ep);
	return 0;
}

int
rnic_cm_chan_accept(struct rnic_cm_chan *ch, struct cm_id *id, const struct cm_req *req)
{
	struct cm_rep rep;
	uint8_t mtu;
	int rc;

	ch->active = 0;
	ch->id = id;
	id->user_ctx = ch;
	if (rnic_cm_resolve(ch->ep, req->primary.local_gid, &ch->route) != 0) {
		/* not resolved yet: the device's resolve op finds the MAC when it sends */
		const struct roce_dev_cfg *dc = roce_dev_config(ch->ep->dev);

		memset(&ch->route, 0, sizeof(ch->route));
		memcpy(ch->route.dgid, req->primary.local_gid, 16);
		ch->route.sgid_index =
		    memcmp(req->primary.local_gid, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) ? 1 : 0;
		ch->route.path_mtu = rnic_cm_ib_mtu(dc->mtu);
	}
	mtu = req->path_mtu && req->path_mtu < ch->route.path_mtu ? req->path_mtu
								  : ch->route.path_mtu;
	ch->resources = req->initiator_depth < ch->resources ? req->initiator_depth : ch->resources;
	/* the passive side sends at the REQ's starting PSN and receives at its own */
	rc = bring_up(ch, req->local_qpn, req->starting_psn, mtu);
	if (rc) {
		fail(ch, "cannot bring the channel QP up");
		return rc;
	}
	memset(&rep, 0, sizeof(rep));
	rep.local_qpn = rnic_cm_chan_qpn(ch);
	rep.starting_psn = ch->psn;
	rep.responder_resources = ch->resources;
	rep.initiator_depth = ch->depth;
	rep.target_ack_delay = 15;
	rep.rnr_retry_count = CHAN_RNR_RETRY;
	rc = cm_accept(&ch->ep->cm, id, &rep);
	if (rc)
		return rc;
	ch->state = RNIC_CHAN_CONNECTING;
	rnic_cm_kick(ch->ep);
	return 0;
}

void
rnic_cm_chan_event(struct rnic_cm_chan *ch, struct cm_id *id, const struct cm_event *ev)
{
	if (id != ch->id)
		return;
	switch (ev->type) {
	case CM_EV_REP_RCVD: {
		const struct cm_rep *rep = &ev->msg->u.rep;

		/* the active side sends at the REP's starting PSN */
		if (bring_up(ch, rep->local_qpn, rep->starting_psn, ch->route.path_mtu) != 0) {
			cm_reject(&ch->ep->cm, id, CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
			ch->id = NULL;
			fail(ch, "cannot bring the channel QP up");
			return;
		}
		if (cm_rtu(&ch->ep->cm, id, NULL, 0) != 0) {
			fail(ch, "cannot send the RTU");
			return;
		}
		ch->state = RNIC_CHAN_UP;
		break;
	}
	case CM_EV_ESTABLISHED:
		ch->state = RNIC_CHAN_UP;
		break;
	case CM_EV_REJ_RCVD:
		snprintf(ch->why, sizeof(ch->why),
			 "the peer rejected the connection (REJ reason %u)", ev->msg->u.rej.reason);
		ch->state = RNIC_CHAN_FAILED;
		ch->id = NULL;
		break;
	case CM_EV_TIMEOUT:
		fail(ch, "no answer from the peer's CM (retries exhausted)");
		ch->id = NULL;
		break;
	case CM_EV_DREQ_RCVD:
	case CM_EV_DREP_RCVD:
		ch->state = RNIC_CHAN_CLOSED;
		break;
	case CM_EV_TIMEWAIT_EXIT:
		ch->id = NULL;
		break;
	default:
		break;
	}
}

unsigned int
rnic_cm_chan_poll(struct rnic_cm_chan *ch)
{
	struct ibv_wc wc[8];
	unsigned int seen = 0;
	int n;

	while ((n = roce_poll_cq(ch->scq, 8, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			if (ch->sends_out)
				ch->sends_out--;
			if (wc[i].status != IBV_WC_SUCCESS && ch->state != RNIC_CHAN_CLOSED)
				fail(ch, roce_wc_status_str(wc[i].status));
		}
		seen += (unsigned int)n;
	}
	while ((n = roce_poll_cq(ch->rcq, 8, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			unsigned int slot = (unsigned int)wc[i].wr_id;

			if (wc[i].status != IBV_WC_SUCCESS) {
				if (ch->state == RNIC_CHAN_UP)
					fail(ch, roce_wc_status_str(wc[i].status));
				continue;
			}
			if (ch->rxn < RNIC_CHAN_RECVS) {
				unsigned int t = (ch->rxhead + ch->rxn) % RNIC_CHAN_RECVS;

				memcpy(ch->rxq[t], ch->buf + slot * CHAN_SLOT, wc[i].byte_len);
				ch->rxlen[t] = wc[i].byte_len;
				ch->rxn++;
				ch->rx_msgs++;
			}
			post_recv(ch, slot);
		}
		seen += (unsigned int)n;
	}
	return seen;
}

int
rnic_cm_chan_send(struct rnic_cm_chan *ch, const void *msg, size_t n)
{
	uint8_t *slot = ch->buf + RNIC_CHAN_RECVS * CHAN_SLOT;
	struct ibv_sge sge = {.addr = (uintptr_t)slot, .length = (uint32_t)n, .lkey = ch->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 1,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	int rc;

	if (ch->state != RNIC_CHAN_UP)
		return -ENOTCONN;
	if (n == 0 || n > RNIC_CHAN_MSG_MAX)
		return -EMSGSIZE;
	if (ch->sends_out) /* one message at a time: its slot is in use until it completes */
		return -EAGAIN;
	memcpy(slot, msg, n);
	rc = roce_post_send(ch->qp, &wr, &bad);
	if (rc)
		return rc < 0 ? rc : -rc;
	ch->sends_out++;
	ch->tx_msgs++;
	return 0;
}

int
rnic_cm_chan_recv(struct rnic_cm_chan *ch, void *out, size_t cap)
{
	unsigned int h = ch->rxhead;
	uint32_t len;

	if (!ch->rxn)
		return 0;
	len = ch->rxlen[h];
	ch->rxhead = (h + 1) % RNIC_CHAN_RECVS;
	ch->rxn--;
	if (len > cap)
		return -EMSGSIZE;
	memcpy(out, ch->rxq[h], len);
	return (int)len;
}

int
rnic_cm_chan_disconnect(struct rnic_cm_chan *ch)
{
	int rc;

	if (!ch->id || ch->state != RNIC_CHAN_UP)
		return -ENOTCONN;
	rc = cm_disconnect(&ch->ep->cm, ch->id, NULL, 0);
	rnic_cm_kick(ch->ep);
	return rc;
}
