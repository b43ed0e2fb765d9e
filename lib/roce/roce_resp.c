/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_resp.c
 * Responder: request packets in; data placed, receive completions, and
 * responses (ACK, NAK, RNR NAK, READ responses, ATOMIC ACKNOWLEDGE) out.
 *
 * Each request runs through an explicit state machine whose checks follow
 * the order of IBTA ch. 9.7 (responder side): PSN (recovery plug-in), opcode
 * sequence, operation allowed and resources, lengths (C9-92, C9-94),
 * R_Key / access / bounds (zero-length transfers carry no R_Key, C9-88),
 * receive WQE (RNR), then execution. Failures map to the IBTA NAK classes:
 * PSN sequence error (once per gap), RNR, invalid request, remote access
 * error, remote operational error; the last three are fatal for RC.
 *
 * Responses leave in PSN order (IBTA: responses are returned in the order
 * of the requests): retained READ/atomic resources with output pending go
 * first, then the coalesced ACK or the NAK. Duplicates (C9-105) are re-ACKed;
 * a duplicate READ is re-executed from its PSN with its own RETH, re-checked;
 * a duplicate atomic is answered from the resource cache and never executed
 * again.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "roce_resp_int.h"

/* ------------------------------------------------------------------------- */
/* Receive queue                                                             */
/* ------------------------------------------------------------------------- */

static void
recv_cqe_loss(struct roce_qp *qp, const struct roce_recv_wqe *wqe, enum ibv_wc_status status,
	      const struct ibv_wc *tmpl, bool solicited, const struct roce_vrp_loss *loss)
{
	struct ibv_wc wc;

	if (tmpl)
		wc = *tmpl;
	else
		memset(&wc, 0, sizeof(wc));
	wc.wr_id = wqe->wr_id;
	wc.status = status;
	wc.qp_num = qp->qpn;
	if (status != IBV_WC_SUCCESS)
		wc.opcode = IBV_WC_RECV;
	roce_cq_push_loss(qp->rcq, &wc, solicited, loss);
	roce_qp_stat(qp, ROCE_STAT_RECV_CQES, 1);
	qp->rq.cons++;
	qp->resp.rwqe_seq++;
	qp->resp.recv_off = 0;
}

void
roce_resp_recv_cqe(struct roce_qp *qp, const struct roce_recv_wqe *wqe, enum ibv_wc_status status,
		   const struct ibv_wc *tmpl, bool solicited)
{
	recv_cqe_loss(qp, wqe, status, tmpl, solicited, NULL);
}

void
roce_resp_flush(struct roce_qp *qp)
{
	struct roce_recv_wqe *wqe;

	while ((wqe = rq_head(qp)) != NULL) {
		roce_qp_stat(qp, ROCE_STAT_FLUSHED_WQES, 1);
		roce_resp_recv_cqe(qp, wqe, IBV_WC_WR_FLUSH_ERR, NULL, false);
	}
	qp->resp.msg = ROCE_MSG_NONE;
}

int
roce_post_recv(struct roce_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	int rc = 0;

	qp->dev->now = qp->dev->ops.now_ns(qp->dev->ctx);
	for (; wr; wr = wr->next) {
		struct roce_recv_wqe *wqe;

		if (qp->state == IBV_QPS_RESET || wr->num_sge < 0 ||
		    (uint32_t)wr->num_sge > qp->rq.max_sge || (wr->num_sge && !wr->sg_list)) {
			rc = -EINVAL;
			break;
		}
		if (qp->rq.prod - qp->rq.cons >= qp->rq.max_wr) {
			rc = -ENOMEM;
			break;
		}
		wqe = &qp->rq.wqe[qp->rq.prod & (qp->rq.size - 1)];
		if (roce_sge_total(wr->sg_list, (uint32_t)wr->num_sge, &wqe->length) < 0) {
			rc = -EINVAL;
			break;
		}
		memcpy(wqe->sge, wr->sg_list, sizeof(*wr->sg_list) * (size_t)wr->num_sge);
		wqe->num_sge = (uint32_t)wr->num_sge;
		wqe->wr_id = wr->wr_id;
		qp->rq.prod++;
	}
	if (rc < 0 && bad_wr)
		*bad_wr = wr;
	if (qp->state == IBV_QPS_ERR)
		roce_resp_flush(qp);
	return rc;
}

/* ------------------------------------------------------------------------- */
/* Resources (retained READ / atomic state)                                  */
/* ------------------------------------------------------------------------- */

void
roce_resp_reset(struct roce_qp *qp)
{
	struct roce_resp_state *r = &qp->resp;

	memset(r, 0, sizeof(*r));
	r->epsn = qp->attr.rq_psn;
	r->ack_psn = roce_psn_add(r->epsn, ROCE_PSN_MASK); /* epsn - 1: nothing taken yet */
	r->nres = qp->attr.max_dest_rd_atomic ? qp->attr.max_dest_rd_atomic : 1;
}

/* A slot for a new READ/atomic: free, or the oldest whose responses all left. */
static struct roce_resp_res *
res_alloc(struct roce_qp *qp)
{
	struct roce_resp_res *best = NULL, *oldest = NULL;

	for (uint32_t i = 0; i < qp->resp.nres; i++) {
		struct roce_resp_res *r = &qp->resp.res[i];

		if (!oldest || r->seq < oldest->seq)
			oldest = r;
		if (r->pending)
			continue;
		if (r->type == ROCE_RES_FREE)
			return r;
		if (!best || r->seq < best->seq)
			best = r;
	}
	/*
	 * Every resource is busy. A new READ/atomic means the requester has at
	 * most max_dest_rd_atomic - 1 others outstanding, so the oldest retained
	 * one is complete there: if it is only being replayed (a duplicate after
	 * a retransmit timeout), the replay is useless and yields its slot. If it
	 * still sends its first responses, the requester broke the limit.
	 */
	if (!best && oldest && oldest->replay)
		return oldest;
	return best;
}

static bool
res_covers(const struct roce_resp_res *r, uint32_t psn)
{
	return roce_psn_in_window(psn, r->first_psn,
				  (uint32_t)roce_psn_diff(r->last_psn, r->first_psn) + 1);
}

/* The newest retained resource whose original request covered @p psn. */
static struct roce_resp_res *
res_find(struct roce_qp *qp, uint8_t type, uint32_t psn)
{
	struct roce_resp_res *best = NULL;

	for (uint32_t i = 0; i < qp->resp.nres; i++) {
		struct roce_resp_res *r = &qp->resp.res[i];

		/* after a PSN wrap an old slot may cover the same numbers: take the newest */
		if (r->type == type && res_covers(r, psn) && (!best || r->seq > best->seq))
			best = r;
	}
	return best;
}

/* The resource to transmit from next: pending, oldest first (PSN order). */
static struct roce_resp_res *
res_next_pending(struct roce_qp *qp)
{
	struct roce_resp_res *best = NULL;

	for (uint32_t i = 0; i < qp->resp.nres; i++) {
		struct roce_resp_res *r = &qp->resp.res[i];

		if (r->pending && (!best || r->seq < best->seq))
			best = r;
	}
	return best;
}

static uint32_t
read_npkts(const struct roce_qp *qp, uint32_t len)
{
	uint32_t n = (uint32_t)(((uint64_t)len + qp->mtu - 1) / qp->mtu);

	return n ? n : 1;
}

/* ------------------------------------------------------------------------- */
/* The responder state machine                                               */
/* ------------------------------------------------------------------------- */

static const char *const resp_state_names[] = {
    [RESP_CHECK_PSN] = "CHECK_PSN",
    [RESP_CHECK_OP_SEQ] = "CHECK_OP_SEQ",
    [RESP_CHECK_OP] = "CHECK_OP",
    [RESP_CHECK_LENGTH] = "CHECK_LENGTH",
    [RESP_CHECK_RKEY] = "CHECK_RKEY",
    [RESP_GET_RECV] = "GET_RECV",
    [RESP_EXECUTE] = "EXECUTE",
    [RESP_COMPLETE] = "COMPLETE",
    [RESP_ACK] = "ACK",
    [RESP_DUPLICATE] = "DUPLICATE",
    [RESP_NAK_SEQ] = "NAK_SEQ",
    [RESP_NAK_RNR] = "NAK_RNR",
    [RESP_NAK] = "NAK",
    [RESP_UC_ABORT] = "UC_ABORT",
    [RESP_PLACE] = "PLACE",
    [RESP_DROP] = "DROP",
    [RESP_DONE] = "DONE",
};

static const char *
resp_state_name(enum resp_state s)
{
	return (unsigned int)s < ROCE_ARRAY_SIZE(resp_state_names) ? resp_state_names[s] : "?";
}

/* A fatal NAK for RC; UC has no responses and drops the message instead. */
static enum resp_state
resp_fail(struct resp_ctx *c, enum roce_nak_code code, enum roce_stat stat)
{
	roce_qp_stat(c->qp, stat, 1);
	if (!is_rc(c))
		return c->qp->type == IBV_QPT_UC ? RESP_UC_ABORT : RESP_DROP;
	c->nak = (uint8_t)code;
	return RESP_NAK;
}

static enum resp_state
resp_check_psn_uc(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;

	if (c->rx->psn == qp->resp.epsn)
		return RESP_CHECK_OP_SEQ;
	/* UC (IBTA ch. 9.8): a gap loses the message in progress; a FIRST/ONLY starts anew */
	roce_qp_stat(qp, ROCE_STAT_RX_OOS, 1);
	if (qp->resp.msg != ROCE_MSG_NONE) {
		roce_qp_stat(qp, ROCE_STAT_RX_UC_MSG_DROP, 1);
		qp->resp.msg = ROCE_MSG_NONE;
		qp->resp.recv_off = 0; /* the receive WQE is reused for the next message */
	}
	qp->resp.epsn = c->rx->psn;
	if (c->f & ROCE_OPF_FIRST)
		return RESP_CHECK_OP_SEQ;
	qp->resp.epsn = roce_psn_add(c->rx->psn, 1);
	return RESP_DROP;
}

/* --trace: PSN @p psn arrived out of sequence; the PSNs before it are missing. */
static void
resp_trace_gap(struct roce_qp *qp, uint32_t psn)
{
	struct roce_resp_state *r = &qp->resp;

	if (roce_likely(!qp->dev->ops.trace) || roce_psn_cmp(psn, r->epsn) <= 0)
		return;
	if (!r->late_gap || roce_psn_cmp(psn, r->late_hi) > 0)
		r->late_hi = psn;
	r->late_gap = true;
}

/* --trace: @p psn, accepted in order, arrived after a later PSN: it was missing. */
static void
resp_trace_late(struct roce_qp *qp, uint32_t psn)
{
	struct roce_resp_state *r = &qp->resp;

	if (roce_psn_cmp(psn, r->late_hi) >= 0) {
		r->late_gap = false; /* the stream caught up with what had arrived */
		return;
	}
	roce_trace_loss(qp, ROCE_TRACE_RX_LATE, psn);
}

/*
 * --trace, selective modes: a packet placed ahead of ePSN after a later PSN had
 * arrived was missing too (a hole repaired before the first one).
 */
static void
resp_trace_place(struct roce_qp *qp, uint32_t psn)
{
	struct roce_resp_state *r = &qp->resp;

	if (roce_likely(!qp->dev->ops.trace))
		return;
	if (r->late_gap && roce_psn_cmp(psn, r->late_hi) < 0)
		roce_trace_loss(qp, ROCE_TRACE_RX_LATE, psn);
	resp_trace_gap(qp, psn);
}

static enum resp_state
resp_check_psn(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;

	if (qp->type == IBV_QPT_UD)
		return RESP_CHECK_LENGTH; /* UD ignores PSNs; every message is one packet */
	if (qp->type == IBV_QPT_UC)
		return resp_check_psn_uc(c);
	switch (qp->rec->rx_packet(qp, qp->rec_priv, qp->resp.epsn, c->rx->psn)) {
	case ROCE_RXV_ACCEPT:
		if (roce_unlikely(qp->resp.late_gap))
			resp_trace_late(qp, c->rx->psn);
		return RESP_CHECK_OP_SEQ;
	case ROCE_RXV_DUPLICATE:
		return RESP_DUPLICATE;
	case ROCE_RXV_NAK_SEQ:
		roce_qp_stat(qp, ROCE_STAT_RX_OOS, 1);
		resp_trace_gap(qp, c->rx->psn);
		return RESP_NAK_SEQ;
	case ROCE_RXV_PLACE:
		roce_qp_stat(qp, ROCE_STAT_RX_OOS, 1);
		resp_trace_place(qp, c->rx->psn);
		return RESP_PLACE;
	default:
		roce_qp_stat(qp, ROCE_STAT_RX_OOS, 1);
		resp_trace_gap(qp, c->rx->psn);
		return RESP_DROP;
	}
}

/* Opcode sequence (IBTA ch. 9.7, responder): a message is FIRST MIDDLE* LAST or ONLY. */
static enum resp_state
resp_check_op_seq(struct resp_ctx *c)
{
	uint8_t msg = c->qp->resp.msg;
	bool ok = msg == ROCE_MSG_NONE ? (c->f & ROCE_OPF_FIRST) != 0
				       : op_msg_kind(c->f) == msg && !(c->f & ROCE_OPF_FIRST);

	return ok ? RESP_CHECK_OP : resp_fail(c, ROCE_NAK_INVALID_REQ, ROCE_STAT_RX_INV_REQ);
}

/* The operation must be supported and enabled by the QP's access flags. */
static enum resp_state
resp_check_op(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	unsigned int acc = qp->attr.qp_access_flags;
	uint16_t f = c->f;

	if (f & ROCE_OPF_INV) /* SEND with invalidate is not implemented */
		return resp_fail(c, ROCE_NAK_INVALID_REQ, ROCE_STAT_RX_INV_REQ);
	if (((f & ROCE_OPF_WRITE) && !(acc & IBV_ACCESS_REMOTE_WRITE)) ||
	    ((f & ROCE_OPF_READ) && !(acc & IBV_ACCESS_REMOTE_READ)) ||
	    ((f & ROCE_OPF_ATOMIC) && !(acc & IBV_ACCESS_REMOTE_ATOMIC)))
		return resp_fail(c, ROCE_NAK_INVALID_REQ, ROCE_STAT_RX_INV_REQ);
	/* READ/atomic need a responder resource (max_dest_rd_atomic) */
	if ((f & (ROCE_OPF_READ | ROCE_OPF_ATOMIC)) &&
	    (qp->attr.max_dest_rd_atomic == 0 || !res_alloc(qp)))
		return resp_fail(c, ROCE_NAK_INVALID_REQ, ROCE_STAT_RX_INV_REQ);
	/* only the last packet of a message may carry pad bytes */
	if (c->h->bth.pad && !(f & ROCE_OPF_LAST))
		return resp_fail(c, ROCE_NAK_INVALID_REQ, ROCE_STAT_RX_INV_REQ);
	return RESP_CHECK_LENGTH;
}

/* C9-92: FIRST/MIDDLE carry exactly one MTU, LAST 1..MTU, ONLY 0..MTU; C9-94: DMA length. */
static enum resp_state
resp_check_length(struct resp_ctx *c)
{
	uint32_t mtu = c->qp->mtu, len = c->rx->len;
	uint16_t f = c->f;
	bool ok;

	if (c->qp->type == IBV_QPT_UD)
		ok = len <= mtu;
	else if (!(f & ROCE_OPF_LAST))
		ok = len == mtu;
	else if (!(f & ROCE_OPF_FIRST))
		ok = len >= 1 && len <= mtu;
	else
		ok = len <= mtu;
	if (ok && (f & ROCE_OPF_READ))
		ok = c->h->reth.dlen <= (1u << 31);
	if (ok && (f & ROCE_OPF_WRITE) && (f & ROCE_OPF_FIRST))
		ok = (f & ROCE_OPF_LAST) ? c->h->reth.dlen == len : c->h->reth.dlen > len;
	if (!ok)
		return resp_fail(c, ROCE_NAK_INVALID_REQ, ROCE_STAT_RX_INV_REQ);
	return (f & (ROCE_OPF_WRITE | ROCE_OPF_READ | ROCE_OPF_ATOMIC)) ? RESP_CHECK_RKEY
									: RESP_GET_RECV;
}

static enum resp_state
resp_bad_rkey(struct resp_ctx *c)
{
	qp_log(c->qp, ROCE_LOG_DEBUG, "PSN 0x%06x: R_Key/access/bounds violation", c->rx->psn);
	return resp_fail(c, ROCE_NAK_REMOTE_ACCESS, ROCE_STAT_RX_BAD_RKEY);
}

static bool
needs_recv_wqe(uint16_t f)
{
	return ((f & ROCE_OPF_SEND) && (f & ROCE_OPF_FIRST)) ||
	       ((f & ROCE_OPF_WRITE) && (f & ROCE_OPF_IMM) && (f & ROCE_OPF_LAST));
}

/* Every RETH / AtomicETH against the MR: R_Key, PD, access flags, bounds (IBTA ch. 9.7, 10). */
static enum resp_state
resp_check_rkey(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	const struct roce_hdrs *h = c->h;
	struct roce_resp_state *r = &qp->resp;
	uint16_t f = c->f;

	if (f & ROCE_OPF_ATOMIC) {
		if (h->atomic.va & (ROCE_ATOMIC_SIZE - 1))
			return resp_fail(c, ROCE_NAK_INVALID_REQ, ROCE_STAT_RX_INV_REQ);
		c->dst = roce_mr_remote(qp->pd, h->atomic.rkey, h->atomic.va, ROCE_ATOMIC_SIZE,
					IBV_ACCESS_REMOTE_ATOMIC);
		return c->dst ? RESP_EXECUTE : resp_bad_rkey(c);
	}
	if (f & ROCE_OPF_READ) {
		/* C9-88: a zero-length READ is not checked against an R_Key */
		if (h->reth.dlen && !roce_mr_remote(qp->pd, h->reth.rkey, h->reth.va, h->reth.dlen,
						    IBV_ACCESS_REMOTE_READ))
			return resp_bad_rkey(c);
		return RESP_EXECUTE;
	}
	if (f & ROCE_OPF_FIRST) {
		/* the whole message is checked at its first packet ... */
		if (h->reth.dlen && !roce_mr_remote(qp->pd, h->reth.rkey, h->reth.va, h->reth.dlen,
						    IBV_ACCESS_REMOTE_WRITE))
			return resp_bad_rkey(c);
		r->wr_va = h->reth.va;
		r->wr_rkey = h->reth.rkey;
		r->wr_len = h->reth.dlen;
		r->wr_off = 0;
	} else if (r->wr_off + c->rx->len > r->wr_len ||
		   ((f & ROCE_OPF_LAST) && r->wr_off + c->rx->len != r->wr_len) ||
		   ((f & ROCE_OPF_PLACED) &&
		    (h->reth.va != r->wr_va + r->wr_off || h->reth.rkey != r->wr_rkey))) {
		/* a self-placing MIDDLE/LAST must name the place the message reached */
		return resp_fail(c, ROCE_NAK_INVALID_REQ, ROCE_STAT_RX_INV_REQ);
	}
	/* ... and every packet is resolved again, in case the MR went away meanwhile */
	c->dst = NULL;
	if (c->rx->len) {
		c->dst = roce_mr_remote(qp->pd, r->wr_rkey, r->wr_va + r->wr_off, c->rx->len,
					IBV_ACCESS_REMOTE_WRITE);
		if (!c->dst)
			return resp_bad_rkey(c);
	}
	return needs_recv_wqe(f) ? RESP_GET_RECV : RESP_EXECUTE;
}

static enum resp_state
resp_get_recv(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;

	c->rwqe = rq_head(qp);
	if (c->rwqe)
		return RESP_EXECUTE;
	roce_qp_stat(qp, is_rc(c) ? ROCE_STAT_RX_RNR : ROCE_STAT_RX_NO_RECV_WQE, 1);
	if (is_rc(c))
		return RESP_NAK_RNR;
	return qp->type == IBV_QPT_UC ? RESP_UC_ABORT : RESP_DROP;
}

/* A receive WQE failed (length, protection): complete it in error. */
static enum resp_state
resp_recv_error(struct resp_ctx *c, enum ibv_wc_status status)
{
	struct roce_qp *qp = c->qp;

	roce_resp_recv_cqe(qp, c->rwqe, status, NULL, false);
	if (status == IBV_WC_LOC_LEN_ERR)
		roce_qp_stat(qp, ROCE_STAT_RX_LEN_ERR, 1);
	switch (qp->type) {
	case IBV_QPT_RC:
		/* length: invalid request; a bad local key: remote operational error */
		c->nak = status == IBV_WC_LOC_LEN_ERR ? ROCE_NAK_INVALID_REQ : ROCE_NAK_REMOTE_OP;
		return RESP_NAK;
	case IBV_QPT_UC:
		qp->resp.msg = ROCE_MSG_NONE;
		roce_qp_to_err(qp);
		return RESP_DONE;
	default:
		return RESP_DONE; /* UD: the QP carries on */
	}
}

/* UD: the first 40 bytes of the buffer get the GRH; for IPv4 the IPv4 header in bytes 20..39. */
static int
ud_place_grh(struct resp_ctx *c)
{
	const struct roce_pkt *p = &c->rx->pkt;
	uint8_t grh[ROCE_UD_GRH_LEN];

	memset(grh, 0, sizeof(grh));
	if (p->l3.version == 4)
		memcpy(grh + ROCE_UD_GRH_LEN - NET_IPV4_HLEN, c->rx->frame + p->l3_off,
		       NET_IPV4_HLEN);
	else
		memcpy(grh, c->rx->frame + p->l3_off, NET_IPV6_HLEN);
	return roce_sge_scatter(c->qp->pd, c->rwqe->sge, c->rwqe->num_sge, 0, grh, sizeof(grh));
}

static enum resp_state
resp_exec_send(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	uint32_t off;

	if (!c->rwqe)
		c->rwqe = rq_head(qp); /* MIDDLE/LAST: the WQE taken by the FIRST */
	if (!c->rwqe)
		return RESP_DROP;
	if (qp->type == IBV_QPT_UD) {
		if (ROCE_UD_GRH_LEN + c->rx->len > c->rwqe->length)
			return resp_recv_error(c, IBV_WC_LOC_LEN_ERR);
		if (ud_place_grh(c) < 0)
			return resp_recv_error(c, roce_sge_fault(qp->pd, c->rwqe->sge,
								 c->rwqe->num_sge,
								 IBV_ACCESS_LOCAL_WRITE));
		qp->resp.recv_off = ROCE_UD_GRH_LEN;
	}
	off = qp->resp.recv_off;
	if ((c->f & ROCE_OPF_PLACED) &&
	    (c->h->speth.wqe_seq != qp->resp.rwqe_seq || c->h->speth.offset != off))
		return resp_fail(c, ROCE_NAK_INVALID_REQ, ROCE_STAT_RX_INV_REQ);
	if (c->rx->len > c->rwqe->length - off)
		return resp_recv_error(c, IBV_WC_LOC_LEN_ERR);
	if (roce_sge_scatter(qp->pd, c->rwqe->sge, c->rwqe->num_sge, off, c->rx->payload,
			     c->rx->len) < 0)
		return resp_recv_error(c, roce_sge_fault(qp->pd, c->rwqe->sge, c->rwqe->num_sge,
							 IBV_ACCESS_LOCAL_WRITE));
	qp->resp.recv_off = off + c->rx->len;
	return RESP_COMPLETE;
}

static enum resp_state
exec_read(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	struct roce_resp_res *res = res_alloc(qp);
	uint32_t npkts = read_npkts(qp, c->h->reth.dlen);

	if (!res) /* resp_check_op made sure there is one */
		return resp_fail(c, ROCE_NAK_INVALID_REQ, ROCE_STAT_RX_INV_REQ);
	if (res->pending)
		roce_qp_stat(qp, ROCE_STAT_RX_REPLAY_CUT, 1);
	memset(res, 0, sizeof(*res));
	res->type = ROCE_RES_READ;
	res->seq = ++qp->resp.res_seq;
	res->first_psn = c->rx->psn;
	res->last_psn = roce_psn_add(c->rx->psn, npkts - 1);
	res->va = c->h->reth.va;
	res->rkey = c->h->reth.rkey;
	res->len = c->h->reth.dlen;
	res->start_psn = res->cur_psn = c->rx->psn;
	res->pending = true;
	/* one PSN per response packet: the next request follows the last response */
	qp->resp.epsn = roce_psn_add(res->last_psn, 1);
	/* packets a peer placed inside the READ's PSNs can never complete: forget them */
	for (uint32_t i = 1; qp->resp.ooo_n && i < npkts && i < qp->ooo_size; i++) {
		struct roce_ooo_desc *d = roce_ooo_desc_at(qp, roce_psn_add(c->rx->psn, i));

		if (d->valid && d->psn == roce_psn_add(c->rx->psn, i)) {
			d->valid = false;
			qp->resp.ooo_n--;
		}
	}
	return RESP_COMPLETE;
}

static enum resp_state
exec_atomic(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	struct roce_resp_res *res = res_alloc(qp);
	const struct roce_atomiceth *a = &c->h->atomic;
	uint64_t v;

	if (!res)
		return resp_fail(c, ROCE_NAK_INVALID_REQ, ROCE_STAT_RX_INV_REQ);
	if (res->pending)
		roce_qp_stat(qp, ROCE_STAT_RX_REPLAY_CUT, 1);
	/* one aligned 64-bit word in host order; single-threaded, so atomic by construction */
	memcpy(&v, c->dst, sizeof(v));
	memset(res, 0, sizeof(*res));
	res->type = ROCE_RES_ATOMIC;
	res->seq = ++qp->resp.res_seq;
	res->first_psn = res->last_psn = c->rx->psn;
	res->orig = v;
	res->pending = true;
	if (c->rx->pkt.h.bth.opcode == ROCE_OP_RC_BASE + ROCE_OP_CMP_SWAP) {
		if (v == a->cmp)
			v = a->swap_add;
	} else {
		v += a->swap_add;
	}
	memcpy(c->dst, &v, sizeof(v));
	qp->resp.epsn = roce_psn_add(c->rx->psn, 1);
	return RESP_COMPLETE;
}

static enum resp_state
resp_execute(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;

	if (c->f & ROCE_OPF_SEND)
		return resp_exec_send(c);
	if (c->f & ROCE_OPF_READ)
		return exec_read(c);
	if (c->f & ROCE_OPF_ATOMIC)
		return exec_atomic(c);
	if (c->rx->len) {
		if (qp->resp.ooo_n)
			roce_ooo_write_guarded(qp, c->dst, c->rx->payload, c->rx->len,
					       roce_psn_add(c->rx->psn, 1));
		else
			memcpy(c->dst, c->rx->payload, c->rx->len);
		qp->resp.wr_off += c->rx->len;
	}
	return RESP_COMPLETE;
}

static void
resp_recv_done(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	const struct roce_hdrs *h = c->h;
	bool imm = c->f & ROCE_OPF_IMM;
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.opcode = (c->f & ROCE_OPF_WRITE) ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	wc.byte_len = (c->f & ROCE_OPF_WRITE) ? qp->resp.wr_len : qp->resp.recv_off;
	wc.wc_flags = (imm ? IBV_WC_WITH_IMM : 0) | (qp->type == IBV_QPT_UD ? IBV_WC_GRH : 0);
	wc.imm_data = imm ? htobe32(h->imm) : 0;
	wc.src_qp = qp->type == IBV_QPT_UD ? h->deth.sqpn : qp->attr.dest_qp_num;
	wc.pkey_index = qp->attr.pkey_index;
	wc.sl = c->rx->pkt.l2.has_vlan ? net_vlan_pcp(c->rx->pkt.l2.vlan_tci) : 0;
	/* VRP: a WRITE with immediate carries its message's loss map (roce_poll_cq_ex) */
	recv_cqe_loss(qp, c->rwqe, IBV_WC_SUCCESS, &wc, h->bth.se,
		      (qp->rec->flags & ROCE_REC_F_TOLERATE) && (c->f & ROCE_OPF_WRITE) &&
			      qp->resp.vrp_have_last
			  ? &qp->resp.vrp_last
			  : NULL);
}

static enum resp_state
resp_complete(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	struct roce_resp_state *r = &qp->resp;
	uint16_t f = c->f;

	roce_qp_stat(qp, ROCE_STAT_RX_REQ_PKTS, 1);
	roce_qp_stat(qp, ROCE_STAT_RX_REQ_BYTES, c->rx->len);
	if (f & (ROCE_OPF_READ | ROCE_OPF_ATOMIC)) {
		/* the response itself acknowledges everything before it */
		r->msn = roce_psn_add(r->msn, 1);
		r->ack_now = false;
		r->ack_at = 0;
		r->unacked = 0;
		if (is_rc(c))
			roce_ooo_advance(qp);
		return RESP_DONE;
	}
	if (qp->type != IBV_QPT_UD) {
		r->epsn = roce_psn_add(c->rx->psn, 1);
		r->ack_psn = c->rx->psn;
	}
	r->msg = (f & ROCE_OPF_LAST) ? ROCE_MSG_NONE : op_msg_kind(f);
	if (f & ROCE_OPF_LAST) {
		r->msn = roce_psn_add(r->msn, 1);
		/* VRP: the message's loss record first, for the receive completion */
		if (f & ROCE_OPF_WRITE)
			roce_resp_vrp_msg_end(qp, c->rx->psn);
		if ((f & ROCE_OPF_SEND) || (f & ROCE_OPF_IMM))
			resp_recv_done(c);
	}
	if (!is_rc(c))
		return RESP_DONE;
	/* VRP: a WRITE's first packet makes its message known (before the hole after it completes)
	 */
	if ((qp->rec->flags & ROCE_REC_F_TOLERATE) && (f & ROCE_OPF_WRITE) &&
	    (f & ROCE_OPF_FIRST)) {
		struct roce_vrp_wr w;

		qp->rec->rx_msg(qp, qp->rec_priv, r->epsn, c->rx->psn, c->h->reth.dlen,
				roce_resp_vrp_wr(qp, c->h, &w));
	}
	if (roce_ooo_advance(qp))
		r->ack_now = true; /* a gap closed: tell the sender at once */
	roce_resp_vrp_nacks(qp);
	return RESP_ACK;
}

/* Coalesced ACKs: at once when asked (AckReq) or every ack_every packets, else after a delay. */
static enum resp_state
resp_ack(struct resp_ctx *c)
{
	struct roce_resp_state *r = &c->qp->resp;
	const struct roce_dev_cfg *cfg = &c->qp->dev->cfg;

	r->unacked++;
	if (c->h->bth.ackreq || r->unacked >= cfg->ack_every || !cfg->ack_delay_ns) {
		r->ack_now = true;
		r->ack_at = 0;
	} else if (!r->ack_at) {
		r->ack_at = c->qp->dev->now + cfg->ack_delay_ns;
	}
	return RESP_DONE;
}

static enum resp_state
resp_dup_read(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	const struct roce_reth *reth = &c->h->reth;
	struct roce_resp_res *res = res_find(qp, ROCE_RES_READ, c->rx->psn);

	if (!res) {
		roce_qp_stat(qp, ROCE_STAT_RX_DUP_NO_RES, 1);
		return RESP_DONE;
	}
	/* re-execute with the duplicate's own RETH, checked again, inside the original PSNs */
	if ((reth->dlen &&
	     !roce_mr_remote(qp->pd, reth->rkey, reth->va, reth->dlen, IBV_ACCESS_REMOTE_READ)) ||
	    !res_covers(res, roce_psn_add(c->rx->psn, read_npkts(qp, reth->dlen) - 1))) {
		roce_qp_stat(qp, ROCE_STAT_RX_BAD_RKEY, 1);
		return RESP_DONE;
	}
	res->va = reth->va;
	res->rkey = reth->rkey;
	res->len = reth->dlen;
	res->start_psn = res->cur_psn = c->rx->psn;
	res->pending = true;
	res->replay = true;
	roce_qp_stat(qp, ROCE_STAT_RX_READ_REPLAYS, 1);
	return RESP_DONE;
}

static enum resp_state
resp_duplicate(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;

	roce_qp_stat(qp, ROCE_STAT_RX_DUP_REQ, 1);
	/* selective modes: a SEND/WRITE packet that had arrived was resent for nothing */
	if ((qp->rec->flags & ROCE_REC_F_PLACE) && !(c->f & (ROCE_OPF_READ | ROCE_OPF_ATOMIC)))
		roce_qp_stat(qp, ROCE_STAT_RX_SPURIOUS, 1);
	if (c->f & ROCE_OPF_READ)
		return resp_dup_read(c);
	if (c->f & ROCE_OPF_ATOMIC) {
		struct roce_resp_res *res = res_find(qp, ROCE_RES_ATOMIC, c->rx->psn);

		if (!res) {
			roce_qp_stat(qp, ROCE_STAT_RX_DUP_NO_RES, 1);
			return RESP_DONE;
		}
		res->pending = true; /* replay the cached result: never execute twice */
		res->replay = true;
		roce_qp_stat(qp, ROCE_STAT_RX_ATOMIC_REPLAYS, 1);
		return RESP_DONE;
	}
	/*
	 * SEND/WRITE: not placed again; ACKed (cumulatively, with the last PSN
	 * taken) so that a lost ACK is made good. A go-back round resends many
	 * duplicates: they share the coalesced-ACK policy instead of one each.
	 */
	return RESP_ACK;
}

void
roce_resp_queue_nak(struct roce_qp *qp, enum roce_aeth_type type, uint8_t value, uint32_t psn)
{
	qp->resp.nak_pending = true;
	qp->resp.nak_syndrome = roce_aeth_syndrome(type, value);
	qp->resp.nak_psn = psn;
}

static enum resp_state
resp_nak_seq(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;

	/* the NAK names the PSN we expect; the recovery suppresses more until it arrives */
	roce_resp_queue_nak(qp, ROCE_AETH_NAK, ROCE_NAK_PSN_SEQ_ERR, qp->resp.epsn);
	qp->rec->rx_nak_sent(qp, qp->rec_priv, qp->resp.epsn);
	return RESP_DONE;
}

static enum resp_state
resp_nak_rnr(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;

	/* RNR NAK carries the PSN of the request and our min_rnr_timer */
	roce_resp_queue_nak(qp, ROCE_AETH_RNR_NAK, qp->attr.min_rnr_timer, c->rx->psn);
	qp->rec->rx_nak_sent(qp, qp->rec_priv, c->rx->psn);
	return RESP_DONE;
}

static enum resp_state
resp_nak(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;

	qp_log(qp, ROCE_LOG_WARNING, "PSN 0x%06x (%s): NAK code %u, QP goes to ERR", c->rx->psn,
	       roce_opcode_name(c->h->bth.opcode), c->nak);
	roce_resp_queue_nak(qp, ROCE_AETH_NAK, c->nak, c->rx->psn);
	qp->resp.fatal = true;
	return RESP_DONE;
}

static enum resp_state
resp_uc_abort(struct resp_ctx *c)
{
	struct roce_resp_state *r = &c->qp->resp;

	if (r->msg != ROCE_MSG_NONE)
		roce_qp_stat(c->qp, ROCE_STAT_RX_UC_MSG_DROP, 1);
	r->msg = ROCE_MSG_NONE;
	r->recv_off = 0;
	r->epsn = roce_psn_add(c->rx->psn, 1);
	return RESP_DROP;
}

static void
resp_machine(struct resp_ctx *c)
{
	enum resp_state s = RESP_CHECK_PSN, from;

	while (s != RESP_DONE) {
		from = s;
		switch (s) {
		case RESP_CHECK_PSN:
			s = resp_check_psn(c);
			break;
		case RESP_CHECK_OP_SEQ:
			s = resp_check_op_seq(c);
			break;
		case RESP_CHECK_OP:
			s = resp_check_op(c);
			break;
		case RESP_CHECK_LENGTH:
			s = resp_check_length(c);
			break;
		case RESP_CHECK_RKEY:
			s = resp_check_rkey(c);
			break;
		case RESP_GET_RECV:
			s = resp_get_recv(c);
			break;
		case RESP_EXECUTE:
			s = resp_execute(c);
			break;
		case RESP_COMPLETE:
			s = resp_complete(c);
			break;
		case RESP_ACK:
			s = resp_ack(c);
			break;
		case RESP_DUPLICATE:
			s = resp_duplicate(c);
			break;
		case RESP_NAK_SEQ:
			s = resp_nak_seq(c);
			break;
		case RESP_NAK_RNR:
			s = resp_nak_rnr(c);
			break;
		case RESP_NAK:
			s = resp_nak(c);
			break;
		case RESP_UC_ABORT:
			s = resp_uc_abort(c);
			break;
		case RESP_PLACE:
			s = roce_resp_place(c);
			break;
		case RESP_DROP:
			s = RESP_DONE;
			break;
		default:
			qp_log(c->qp, ROCE_LOG_ERR, "responder: bad state %s", resp_state_name(s));
			s = RESP_DONE;
			break;
		}
		if (roce_tracing(c->qp))
			roce_trace(c->qp, "responder", c->rx->psn, resp_state_name(from),
				   resp_state_name(s));
	}
}

void
roce_resp_rx(struct roce_qp *qp, const struct roce_rx *rx)
{
	struct resp_ctx c = {.qp = qp, .rx = rx, .h = &rx->pkt.h, .f = rx->op->flags};

	if (!roce_qp_can_receive(qp) || qp->resp.fatal) {
		roce_qp_stat(qp, ROCE_STAT_RX_DROP_QP_STATE, 1);
		return;
	}
	resp_machine(&c);
}

/* ------------------------------------------------------------------------- */
/* Responses out                                                             */
/* ------------------------------------------------------------------------- */

/* ACK syndrome: no end-to-end credit count (we do not do credits) */

static int
resp_send_ack(struct roce_qp *qp, uint8_t syndrome, uint32_t psn)
{
	struct roce_pkt p = qp->tmpl;

	bool becn = qp->resp.becn_pending;
	int rc;

	roce_bth_init(qp, &p, ROCE_OP_RC_BASE + ROCE_OP_ACK, psn);
	p.h.aeth.syndrome = syndrome;
	p.h.aeth.msn = qp->resp.msn;
	p.h.bth.becn =
	    becn; /* ECN echo (DCQCN-p (Wang et al.) §2.1: a BECN ACK for RC instead of a CNP) */
	rc = roce_tx_pkt(qp, &p, 0, false);
	if (rc == 0 && becn) {
		qp->resp.becn_pending = false;
		roce_qp_stat(qp, ROCE_STAT_TX_BECN_ACKS, 1);
	}
	return rc;
}

static uint8_t
read_resp_opcode(bool first, bool last)
{
	uint8_t op = first && last ? ROCE_OP_READ_RESP_ONLY
		     : first	   ? ROCE_OP_READ_RESP_FIRST
		     : last	   ? ROCE_OP_READ_RESP_LAST
				   : ROCE_OP_READ_RESP_MIDDLE;

	return (uint8_t)(ROCE_OP_RC_BASE + op);
}

/* One READ response packet of @p res; its data are re-resolved through the MR. */
static int
resp_send_read(struct roce_qp *qp, struct roce_resp_res *res)
{
	uint32_t idx = (uint32_t)roce_psn_diff(res->cur_psn, res->start_psn);
	uint32_t n = read_npkts(qp, res->len);
	uint32_t off = idx * qp->mtu;
	uint32_t len = res->len - off < qp->mtu ? res->len - off : qp->mtu;
	struct roce_pkt p = qp->tmpl;
	const uint8_t *src = NULL;
	int rc;

	roce_bth_init(qp, &p, read_resp_opcode(idx == 0, idx + 1 == n), res->cur_psn);
	p.h.aeth.syndrome = ack_syndrome();
	p.h.aeth.msn = qp->resp.msn;
	if (len) {
		src = roce_mr_remote(qp->pd, res->rkey, res->va + off, len, IBV_ACCESS_REMOTE_READ);
		if (!src) {
			/* the MR went away after the request was checked */
			res->pending = false;
			roce_qp_stat(qp, ROCE_STAT_RX_BAD_RKEY, 1);
			roce_resp_queue_nak(qp, ROCE_AETH_NAK, ROCE_NAK_REMOTE_ACCESS,
					    res->cur_psn);
			qp->resp.fatal = true;
			return 0;
		}
		memcpy(roce_tx_payload(qp->dev, &p), src, len);
	}
	rc = roce_tx_pkt(qp, &p, len, true);
	if (rc < 0)
		return rc;
	roce_qp_stat(qp, ROCE_STAT_TX_READ_RESP, 1);
	res->cur_psn = roce_psn_add(res->cur_psn, 1);
	if (idx + 1 == n)
		res->pending = false;
	return 0;
}

static int
resp_send_atomic(struct roce_qp *qp, struct roce_resp_res *res)
{
	struct roce_pkt p = qp->tmpl;
	int rc;

	roce_bth_init(qp, &p, ROCE_OP_RC_BASE + ROCE_OP_ATOMIC_ACK, res->first_psn);
	p.h.aeth.syndrome = ack_syndrome();
	p.h.aeth.msn = qp->resp.msn;
	p.h.atomic_orig = res->orig;
	rc = roce_tx_pkt(qp, &p, 0, false);
	if (rc < 0)
		return rc;
	roce_qp_stat(qp, ROCE_STAT_TX_ATOMIC_ACKS, 1);
	res->pending = false;
	return 0;
}

static enum roce_stat
nak_stat(uint8_t syndrome)
{
	if (roce_aeth_type(syndrome) == ROCE_AETH_RNR_NAK)
		return ROCE_STAT_TX_NAK_RNR;
	switch (roce_aeth_value(syndrome)) {
	case ROCE_NAK_PSN_SEQ_ERR:
		return ROCE_STAT_TX_NAK_SEQ;
	case ROCE_NAK_REMOTE_ACCESS:
		return ROCE_STAT_TX_NAK_ACCESS;
	case ROCE_NAK_REMOTE_OP:
		return ROCE_STAT_TX_NAK_REM_OP;
	default:
		return ROCE_STAT_TX_NAK_INV_REQ;
	}
}

static void
resp_ack_sent(struct roce_resp_state *r)
{
	r->ack_now = false;
	r->ack_at = 0;
	r->unacked = 0;
}

/* The NAK, or else the coalesced ACK; after a fatal NAK the QP goes to ERR. */
static void
resp_send_ack_or_nak(struct roce_qp *qp, uint32_t *budget)
{
	struct roce_resp_state *r = &qp->resp;

	if (r->nak_pending) {
		if (resp_send_ack(qp, r->nak_syndrome, r->nak_psn) < 0)
			return;
		(*budget)--;
		roce_qp_stat(qp, nak_stat(r->nak_syndrome), 1);
		r->nak_pending = false;
		resp_ack_sent(r); /* a NAK acknowledges everything before its PSN */
		if (r->fatal)
			roce_qp_to_err(qp);
		return;
	}
	if (r->ack_now && resp_send_ack(qp, ack_syndrome(), r->ack_psn) == 0) {
		(*budget)--;
		roce_qp_stat(qp, ROCE_STAT_TX_ACKS, 1);
		resp_ack_sent(r);
	}
}

static void
resp_send_cnp(struct roce_qp *qp)
{
	struct roce_pkt p = qp->tmpl;

	roce_bth_init(qp, &p, ROCE_OP_CNP, 0);
	p.h.bth.becn = 1;
	/* CNPs on their own DSCP (NVIDIA CNP_DSCP 48), ahead of a data priority's queue */
	p.l3.tos = (uint8_t)(qp->dev->cfg.cnp_dscp << 2);
	if (roce_tx_pkt(qp, &p, 0, false) == 0) {
		roce_qp_stat(qp, ROCE_STAT_TX_CNPS, 1);
		qp->resp.cnp_pending = false;
	}
}

void
roce_resp_run(struct roce_qp *qp, uint32_t *budget)
{
	struct roce_resp_res *res;

	if (!roce_qp_can_receive(qp) || qp->type == IBV_QPT_UD)
		return;
	if (qp->resp.cnp_pending && *budget) {
		resp_send_cnp(qp);
		(*budget)--;
	}
	if (qp->type != IBV_QPT_RC)
		return;
	while (*budget && (res = res_next_pending(qp)) != NULL) {
		int rc = res->type == ROCE_RES_READ ? resp_send_read(qp, res)
						    : resp_send_atomic(qp, res);

		if (rc < 0)
			return;
		(*budget)--;
	}
	if (*budget && !res_next_pending(qp))
		resp_send_ack_or_nak(qp, budget);
}

bool
roce_resp_busy(const struct roce_qp *qp)
{
	const struct roce_resp_state *r = &qp->resp;

	if (!roce_qp_can_receive(qp))
		return false;
	if (r->cnp_pending || r->nak_pending || r->ack_now)
		return true;
	for (uint32_t i = 0; i < r->nres; i++)
		if (r->res[i].pending)
			return true;
	return false;
}

void
roce_resp_ack_timer(struct roce_qp *qp)
{
	qp->resp.ack_at = 0;
	if (qp->resp.unacked)
		qp->resp.ack_now = true;
}

void
roce_resp_ecn_ce(struct roce_qp *qp)
{
	roce_qp_stat(qp, ROCE_STAT_RX_ECN_CE, 1);
	if (qp->type == IBV_QPT_UD || !qp->cc->on_ecn_ce(qp, qp->cc_priv, qp->dev->now))
		return;
	if (qp->type == IBV_QPT_RC && qp->cc->becn_ack) {
		qp->resp.becn_pending = true; /* echoed on an ACK sent now */
		qp->resp.ack_now = true;
	} else {
		qp->resp.cnp_pending = true;
	}
}
