/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_req.c
 * Requester: send WRs in, request packets out.
 *
 * Each WQE gets a PSN range when its first packet leaves (READ: one PSN per
 * response packet it will get back, IBTA ch. 9.7; atomics: one). Messages
 * are cut into FIRST/MIDDLE/LAST/ONLY packets of the path MTU. Any packet of
 * any outstanding WQE can be rebuilt from the WQE and its PSN, so the loss
 * recovery plug-in decides freely what to resend: roce_req_run() asks it
 * first, and sends new data only when it has nothing to retransmit.
 *
 * New packets wait for the in-flight window (RC), max_rd_atomic, fences,
 * and the congestion-control gate; retransmissions only for the CC gate.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "roce_int.h"

void
roce_req_reset(struct roce_qp *qp)
{
	memset(&qp->req, 0, sizeof(qp->req));
	qp->req.stall = -1;
	qp->req.psn = qp->attr.sq_psn;
	qp->req.next = qp->sq.cons;
	qp->req.hint = qp->sq.cons;
}

static struct roce_send_wqe *
sq_wqe(struct roce_qp *qp, uint32_t idx)
{
	return &qp->sq.wqe[idx & (qp->sq.size - 1)];
}

/* ------------------------------------------------------------------------- */
/* Posting                                                                   */
/* ------------------------------------------------------------------------- */

static bool
wr_opcode_valid(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return type != IBV_QPT_UD;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return type == IBV_QPT_RC;
	default:
		return false;
	}
}

/* Copy IBV_SEND_INLINE data into the WQE slot (no keys involved, as in verbs). */
static int
wqe_fill_inline(struct roce_qp *qp, struct roce_send_wqe *wqe, const struct ibv_send_wr *wr)
{
	uint32_t total = 0;

	if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM &&
	    wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM)
		return -EINVAL;
	for (int i = 0; i < wr->num_sge; i++) {
		uint32_t len = wr->sg_list[i].length;

		if (len > qp->sq.max_inline - total)
			return -EINVAL; /* more than max_inline_data */
		if (len)
			memcpy(wqe->inl + total, (const void *)(uintptr_t)wr->sg_list[i].addr, len);
		total += len;
	}
	wqe->is_inline = true;
	wqe->num_sge = 0;
	wqe->length = total;
	return 0;
}

static int
wqe_fill_sges(struct roce_qp *qp, struct roce_send_wqe *wqe, const struct ibv_send_wr *wr)
{
	/* the keys are checked as the WQE executes (a bad one completes in error: roce_sge_fault)
	 */
	if ((uint32_t)wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	if (roce_sge_total(wr->sg_list, (uint32_t)wr->num_sge, &wqe->length) < 0)
		return -EINVAL;
	memcpy(wqe->sge, wr->sg_list, sizeof(*wr->sg_list) * (size_t)wr->num_sge);
	wqe->num_sge = (uint32_t)wr->num_sge;
	wqe->is_inline = false;
	return 0;
}

/* Per-opcode and per-transport limits of a filled WQE. */
static int
wqe_check(struct roce_qp *qp, const struct roce_send_wqe *wqe)
{
	switch (wqe->opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (wqe->length != ROCE_ATOMIC_SIZE)
			return -EINVAL;
		/* fall through */
	case IBV_WR_RDMA_READ:
		if (qp->attr.max_rd_atomic == 0)
			return -EINVAL; /* initiator depth 0: no READ/atomic allowed */
		break;
	default:
		break;
	}
	if (qp->type == IBV_QPT_UD) {
		if (!wqe->ah || wqe->ah->pd != qp->pd || wqe->length > qp->dev->cfg.mtu)
			return -EINVAL;
	}
	return 0;
}

static int
wqe_fill(struct roce_qp *qp, struct roce_send_wqe *wqe, const struct ibv_send_wr *wr)
{
	int rc;

	struct ibv_sge *sge = wqe->sge;
	uint8_t *inl = wqe->inl;

	if (!wr_opcode_valid(qp->type, wr->opcode) || wr->num_sge < 0 ||
	    (wr->num_sge && !wr->sg_list))
		return -EINVAL;
	memset(wqe, 0, sizeof(*wqe));
	wqe->sge = sge; /* the slot's storage stays */
	wqe->inl = inl;
	wqe->wr_id = wr->wr_id;
	wqe->opcode = (uint8_t)wr->opcode;
	wqe->flags = wr->send_flags;
	wqe->imm = be32toh(wr->imm_data);
	if (wr->send_flags & IBV_SEND_INLINE)
		rc = wqe_fill_inline(qp, wqe, wr);
	else
		rc = wqe_fill_sges(qp, wqe, wr);
	if (rc < 0)
		return rc;
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wqe->remote_addr = wr->wr.atomic.remote_addr;
		wqe->rkey = wr->wr.atomic.rkey;
		wqe->compare_add = wr->wr.atomic.compare_add;
		wqe->swap = wr->wr.atomic.swap;
	} else if (qp->type == IBV_QPT_UD) {
		wqe->ah = (struct roce_ah *)(void *)wr->wr.ud.ah;
		wqe->remote_qpn = wr->wr.ud.remote_qpn & ROCE_QPN_MASK;
		wqe->qkey = wr->wr.ud.remote_qkey;
	} else {
		wqe->remote_addr = wr->wr.rdma.remote_addr;
		wqe->rkey = wr->wr.rdma.rkey;
	}
	return wqe_check(qp, wqe);
}

static bool
post_send_state_ok(const struct roce_qp *qp)
{
	/* IBTA: no send WRs before RTS; in SQE and ERR they complete as flushed */
	return qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_SQD || qp->state == IBV_QPS_SQE ||
	       qp->state == IBV_QPS_ERR;
}

/*
 * A WRITE's VRP tolerance (roce_post_send_vrp) into the VTETH its FIRST
 * packet carries (VRP §3.1: the sender puts LOSS_RATE, CONS_LOSS and
 * CRITICAL_INTERVAL tags in the frame's header). The ranges are checked
 * against the message here; the receiver checks the whole again.
 */
static int
wqe_vrp(struct roce_send_wqe *wqe, const struct roce_vrp_wr *v)
{
	struct roce_vteth *vt = &wqe->vt;

	if (wqe->opcode != IBV_WR_RDMA_WRITE && wqe->opcode != IBV_WR_RDMA_WRITE_WITH_IMM)
		return 0;
	if ((v->set & ~(unsigned int)ROCE_VTETH_F_ALL) || v->loss_bp > VRP_LOSS_BP_MAX ||
	    v->window > UINT16_MAX || v->n_critical > ROCE_VRP_WR_CRITICAL)
		return -EINVAL;
	memset(vt, 0, sizeof(*vt));
	vt->flags = (uint8_t)v->set;
	vt->loss_bp = (uint16_t)v->loss_bp;
	vt->window = (uint16_t)v->window;
	vt->max_burst = v->max_burst >= UINT32_MAX ? UINT32_MAX : (uint32_t)v->max_burst;
	vt->n_crit = (uint8_t)v->n_critical;
	for (unsigned int i = 0; i < v->n_critical; i++) {
		const struct vrp_range *r = &v->critical[i];

		if (r->len == 0 || r->off >= wqe->length || r->len > wqe->length - r->off)
			return -EINVAL;
		vt->crit[i].off = (uint32_t)r->off;
		vt->crit[i].len = (uint32_t)r->len;
	}
	wqe->vrp_wr = true;
	return 0;
}

int
roce_post_send(struct roce_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return roce_post_send_vrp(qp, wr, NULL, bad_wr);
}

int
roce_post_send_vrp(struct roce_qp *qp, struct ibv_send_wr *wr, const struct roce_vrp_wr *vrp,
		   struct ibv_send_wr **bad_wr)
{
	struct roce_dev *dev = qp->dev;
	int rc = 0;

	dev->now = dev->ops.now_ns(dev->ctx);
	dev->tx_blocked = false;
	for (; wr; wr = wr->next) {
		struct roce_send_wqe *wqe;

		if (!post_send_state_ok(qp)) {
			rc = -EINVAL;
			break;
		}
		if (qp->sq.prod - qp->sq.cons >= qp->sq.max_wr) {
			rc = -ENOMEM;
			break;
		}
		wqe = sq_wqe(qp, qp->sq.prod);
		rc = wqe_fill(qp, wqe, wr);
		if (rc == 0 && vrp)
			rc = wqe_vrp(wqe, vrp);
		if (rc < 0)
			break;
		qp->sq.prod++;
	}
	if (rc < 0 && bad_wr)
		*bad_wr = wr;
	if (qp->state == IBV_QPS_SQE || qp->state == IBV_QPS_ERR)
		roce_comp_flush(qp);
	else
		roce_qp_run(qp);
	return rc;
}

/* ------------------------------------------------------------------------- */
/* Packet building                                                           */
/* ------------------------------------------------------------------------- */

/*
 * Selective recovery places packets out of order, so each must say where it
 * goes: WRITE MIDDLE/LAST carry their RETH, SENDs the SPETH (docs/wire.md,
 * extension registry). WRITE FIRST/ONLY already have a RETH; WRITE with
 * immediate LAST/ONLY, READ and atomics stay standard (executed in order).
 */
static uint8_t
req_opcode_placed(uint8_t op)
{
	switch (op) {
	case ROCE_OP_WRITE_MIDDLE:
		return ROCE_XOP_WRITE_MIDDLE;
	case ROCE_OP_WRITE_LAST:
		return ROCE_XOP_WRITE_LAST;
	case ROCE_OP_SEND_FIRST:
		return ROCE_XOP_SEND_FIRST;
	case ROCE_OP_SEND_MIDDLE:
		return ROCE_XOP_SEND_MIDDLE;
	case ROCE_OP_SEND_LAST:
		return ROCE_XOP_SEND_LAST;
	case ROCE_OP_SEND_LAST_IMM:
		return ROCE_XOP_SEND_LAST_IMM;
	case ROCE_OP_SEND_ONLY:
		return ROCE_XOP_SEND_ONLY;
	case ROCE_OP_SEND_ONLY_IMM:
		return ROCE_XOP_SEND_ONLY_IMM;
	default:
		return (uint8_t)(ROCE_OP_RC_BASE + op);
	}
}

/* Opcode of packet @p idx of a WQE (IBTA table 38 offsets, plus the transport base). */
static uint8_t
req_opcode(const struct roce_qp *qp, const struct roce_send_wqe *wqe, uint32_t idx)
{
	bool first = idx == 0, last = idx + 1 == wqe->npkts;
	uint8_t op;

	switch (wqe->opcode) {
	case IBV_WR_SEND:
		op = first && last ? ROCE_OP_SEND_ONLY
		     : first	   ? ROCE_OP_SEND_FIRST
		     : last	   ? ROCE_OP_SEND_LAST
				   : ROCE_OP_SEND_MIDDLE;
		break;
	case IBV_WR_SEND_WITH_IMM:
		op = first && last ? ROCE_OP_SEND_ONLY_IMM
		     : first	   ? ROCE_OP_SEND_FIRST
		     : last	   ? ROCE_OP_SEND_LAST_IMM
				   : ROCE_OP_SEND_MIDDLE;
		break;
	case IBV_WR_RDMA_WRITE:
		op = first && last ? ROCE_OP_WRITE_ONLY
		     : first	   ? ROCE_OP_WRITE_FIRST
		     : last	   ? ROCE_OP_WRITE_LAST
				   : ROCE_OP_WRITE_MIDDLE;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		op = first && last ? ROCE_OP_WRITE_ONLY_IMM
		     : first	   ? ROCE_OP_WRITE_FIRST
		     : last	   ? ROCE_OP_WRITE_LAST_IMM
				   : ROCE_OP_WRITE_MIDDLE;
		break;
	case IBV_WR_RDMA_READ:
		op = ROCE_OP_READ_REQ;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		op = ROCE_OP_CMP_SWAP;
		break;
	default:
		op = ROCE_OP_FETCH_ADD;
		break;
	}
	/* VRP: a WRITE posted with a tolerance carries it in its FIRST (VTETH, docs/wire.md) */
	if (op == ROCE_OP_WRITE_FIRST && wqe->vrp_wr && qp->type == IBV_QPT_RC &&
	    (qp->rec->flags & ROCE_REC_F_TOLERATE))
		return ROCE_XOP_WRITE_FIRST_VRP;
	if (qp->type == IBV_QPT_RC && (qp->rec->flags & ROCE_REC_F_PLACE))
		return req_opcode_placed(op);
	return (uint8_t)(roce_qp_op_base(qp) + op);
}

/* Payload bytes of packet @p idx (READ requests and atomics carry none). */
static uint32_t
req_payload_len(const struct roce_qp *qp, const struct roce_send_wqe *wqe, uint32_t idx)
{
	uint32_t off = idx * qp->mtu;

	if (roce_wqe_is_rd_atomic(wqe))
		return 0;
	return wqe->length - off < qp->mtu ? wqe->length - off : qp->mtu;
}

/*
 * AckReq (BTH A bit): on the last packet of every RC message and every N
 * packets, N = min(ackreq_every, window / 2). A responder only has to ACK
 * when asked (IBTA: it must acknowledge a request with AckReq set and may
 * coalesce the rest; Linux rxe ACKs nothing else), so a message longer than
 * the window must ask before the window fills, or every window costs a
 * retransmit timeout.
 */
static uint8_t
req_ackreq(struct roce_qp *qp, bool last)
{
	uint32_t every = qp->dev->cfg.ackreq_every, half = roce_qp_window(qp) / 2;

	if (qp->type != IBV_QPT_RC)
		return 0;
	if (half < every)
		every = half ? half : 1;
	if (last || ++qp->req.ackreq_cnt >= every) {
		qp->req.ackreq_cnt = 0;
		return 1;
	}
	return 0;
}

static void
req_fill_ext(const struct roce_qp *qp, const struct roce_send_wqe *wqe, uint32_t idx,
	     struct roce_pkt *p)
{
	uint16_t ext = roce_opcode_info(p->h.bth.opcode)->ext;
	uint32_t off = idx * qp->mtu;

	if (ext & ROCE_EXT_RETH) {
		/* WRITE: the whole message; READ: what is still missing from PSN idx on */
		p->h.reth.va = wqe->remote_addr + off;
		p->h.reth.rkey = wqe->rkey;
		p->h.reth.dlen = wqe->opcode == IBV_WR_RDMA_READ ? wqe->length - off : wqe->length;
		if (wqe->opcode == IBV_WR_RDMA_READ && qp->rd_ooo && idx && idx < wqe->npkts &&
		    idx - (uint32_t)roce_psn_diff(qp->comp.una, wqe->first_psn) <
			ROCE_PSN_BITMAP_BITS) {
			/* selective: re-read only up to the next response already placed */
			uint32_t psn = roce_psn_add(wqe->first_psn, idx), n = wqe->npkts - idx;
			uint32_t room =
			    ROCE_PSN_BITMAP_BITS - (uint32_t)roce_psn_diff(psn, qp->comp.una);
			uint32_t hole =
			    roce_psn_bitmap_find(qp->rd_ooo, psn, n < room ? n : room, true);

			if (hole < n && hole < room)
				p->h.reth.dlen = hole * qp->mtu;
		}
	}
	if (ext & ROCE_EXT_ATOMICETH) {
		p->h.atomic.va = wqe->remote_addr;
		p->h.atomic.rkey = wqe->rkey;
		p->h.atomic.swap_add =
		    wqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? wqe->swap : wqe->compare_add;
		p->h.atomic.cmp = wqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? wqe->compare_add : 0;
	}
	if (ext & ROCE_EXT_IMMDT)
		p->h.imm = wqe->imm;
	if (ext & ROCE_EXT_VTETH)
		p->h.vt = wqe->vt;
	if (ext & ROCE_EXT_SPETH) {
		p->h.speth.wqe_seq = wqe->rwqe_seq;
		p->h.speth.offset = off;
	}
	if (ext & ROCE_EXT_DETH) {
		/* IBTA Q_Key rule: a WR Q_Key with the high bit set means "use the QP's" */
		p->h.deth.qkey = (wqe->qkey & 0x80000000u) ? qp->attr.qkey : wqe->qkey;
		p->h.deth.sqpn = qp->qpn;
	}
}

/* Build packet @p idx of @p wqe into the transmit buffer and send it. */
static int
req_xmit(struct roce_qp *qp, struct roce_send_wqe *wqe, uint32_t idx)
{
	uint8_t opcode = req_opcode(qp, wqe, idx);
	uint32_t len = req_payload_len(qp, wqe, idx);
	bool last = roce_opcode_info(opcode)->flags & ROCE_OPF_LAST;
	struct roce_pkt p;
	uint8_t *payload;

	p = qp->type == IBV_QPT_UD ? wqe->ah->tmpl : qp->tmpl;
	roce_bth_init(qp, &p, opcode, roce_psn_add(wqe->first_psn, idx));
	if (qp->type == IBV_QPT_UD) {
		p.h.bth.dqpn = wqe->remote_qpn;
		p.udp.sport = roce_path_sport(p.l3.flow_label, qp->qpn, wqe->remote_qpn);
	}
	p.h.bth.se = last && (wqe->flags & IBV_SEND_SOLICITED) &&
		     (wqe->opcode == IBV_WR_SEND || wqe->opcode == IBV_WR_SEND_WITH_IMM ||
		      wqe->opcode == IBV_WR_RDMA_WRITE_WITH_IMM);
	p.h.bth.ackreq = req_ackreq(qp, last);
	req_fill_ext(qp, wqe, idx, &p);
	if (len) {
		payload = roce_tx_payload(qp->dev, &p);
		if (wqe->is_inline)
			memcpy(payload, wqe->inl + idx * qp->mtu, len);
		else if (roce_sge_gather(qp->pd, wqe->sge, wqe->num_sge, idx * qp->mtu, payload,
					 len) < 0)
			return -EACCES;
	}
	return roce_tx_pkt(qp, &p, len, true);
}

/* A local SGE the payload cannot be gathered from (bad lkey, range, or MR deregistered). */
static void
req_local_error(struct roce_qp *qp, struct roce_send_wqe *wqe)
{
	enum ibv_wc_status st = roce_sge_fault(qp->pd, wqe->sge, wqe->num_sge, 0);

	qp_log(qp, ROCE_LOG_WARNING, "wr_id %llu: %s", (unsigned long long)wqe->wr_id,
	       roce_wc_status_str(st));
	if (qp->type == IBV_QPT_RC) {
		wqe->err = st;
		roce_qp_to_err(qp);
	} else {
		roce_comp_complete_head(qp, st);
		roce_qp_to_sqe(qp);
	}
}

/* ------------------------------------------------------------------------- */
/* Gates: window, rd_atomic, fence, SQD, congestion control                  */
/* ------------------------------------------------------------------------- */

static uint32_t
req_in_flight(const struct roce_qp *qp)
{
	return qp->type == IBV_QPT_RC ? (uint32_t)roce_psn_diff(qp->req.psn, qp->comp.una) : 0;
}

/* Stop this run; count a stall once, not once per poll while it lasts. */
static void
req_block(struct roce_qp *qp, int stat)
{
	if (stat >= 0 && stat != qp->req.stall)
		roce_qp_stat(qp, (enum roce_stat)stat, 1);
	if (stat != ROCE_STAT_RATE_BLOCKED)
		qp->req.pace_backlog = false; /* held by something else: no pacer credit */
	qp->req.stall = stat;
	qp->req.blocked = true;
}

/* PSNs a message uses: one per MTU of payload (READ: of response), at least one. */
static uint32_t
wqe_npkts(const struct roce_qp *qp, const struct roce_send_wqe *wqe)
{
	uint32_t n;

	if (wqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wqe->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
		return 1;
	n = (uint32_t)(((uint64_t)wqe->length + qp->mtu - 1) / qp->mtu);
	return n ? n : 1;
}

/* The recovery's own in-flight cap on new data (IRN: one BDP). */
static bool
req_cap_allows(struct roce_qp *qp)
{
	uint32_t cap;

	if (qp->type != IBV_QPT_RC || !qp->rec->tx_cap)
		return true;
	cap = qp->rec->tx_cap(qp, qp->rec_priv);
	if (!cap || req_in_flight(qp) < cap)
		return true;
	req_block(qp, ROCE_STAT_WINDOW_FULL);
	return false;
}

/* May the not yet started @p wqe start now? */
static bool
req_may_start(struct roce_qp *qp, const struct roce_send_wqe *wqe)
{
	bool rd = roce_wqe_is_rd_atomic(wqe);
	uint32_t in_flight;

	if (qp->state == IBV_QPS_SQD) {
		req_block(qp, -1); /* SQD: started WQEs finish, no new one starts */
		return false;
	}
	if ((wqe->flags & IBV_SEND_FENCE) && qp->req.rd_atomic) {
		req_block(qp, -1); /* fence: wait for every earlier READ/atomic */
		return false;
	}
	if (rd && qp->req.rd_atomic >= qp->attr.max_rd_atomic) {
		req_block(qp, ROCE_STAT_RD_ATOMIC_BLOCKED);
		return false;
	}
	/* a READ occupies all its response PSNs; it may start alone whatever its size */
	in_flight = req_in_flight(qp);
	if (qp->type == IBV_QPT_RC && in_flight &&
	    in_flight + (rd ? wqe_npkts(qp, wqe) : 1) > roce_qp_window(qp)) {
		req_block(qp, ROCE_STAT_WINDOW_FULL);
		return false;
	}
	return true;
}

/*
 * Bytes a request packet occupies on the wire besides its payload, for the
 * rate limit: Ethernet header + FCS (18), IPv4 (20), UDP (8), BTH (12), ICRC (4).
 */
#define REQ_PACE_OVERHEAD 62u
/*
 * Burst the pacer allows after a late wake-up: the larger of 200 us and 64
 * packets, so idle sleeps do not lower the average rate.
 */
#define REQ_PACE_BURST_NS 200000u
#define REQ_PACE_BURST_PKTS 64u
/*
 * What a QP that stayed backlogged may catch up at once: its poll loop was
 * descheduled (milliseconds on a shared core), or the port's TX ring was full,
 * while a packet waited for its pacing time. Only backlogged time earns it
 * (pace_backlog): a QP that ran out of work, or was held by its window, its CC
 * or a fence, gets the burst above. 5 ms: in trials on the gbn-10g
 * chain over memif, 10 Gb/s x 40 ms, paced at 9.8) a 5 ms bucket raised the
 * chain's goodput in 7 of 8 alternated pairs (+25 % median), a 20 ms one did
 * no better; docs/performance.md.
 */
#define REQ_PACE_CATCHUP_NS 5000000u

/*
 * Congestion-control gate for one packet of @p bytes (the QP rate limit
 * first), with @p in_flight packets ahead of it: for a new packet all that is
 * unacknowledged, for a retransmission the PSNs between una and it (a go-back
 * round resends what is in flight, so a window must not hold back its own
 * repair).
 */
static bool
req_cc_allows(struct roce_qp *qp, uint32_t bytes, uint32_t in_flight)
{
	uint64_t now = qp->dev->now;
	uint64_t t;

	if (qp->rate_kbps && now < qp->req.pace_at) {
		qp->req.wake_at = qp->req.pace_at;
		req_block(qp, ROCE_STAT_RATE_BLOCKED);
		return false;
	}
	t = qp->cc->tx_gate(qp, qp->cc_priv, now, bytes, in_flight);

	if (t <= now)
		return true;
	qp->req.wake_at = t == ROCE_CC_WAIT_EVENT ? 0 : t;
	req_block(qp, ROCE_STAT_CC_BLOCKED);
	return false;
}

static void
req_start(struct roce_qp *qp, struct roce_send_wqe *wqe)
{
	wqe->state = ROCE_WQE_STARTED;
	wqe->first_psn = qp->req.psn;
	wqe->npkts = wqe_npkts(qp, wqe);
	wqe->sent = 0;
	if (roce_wqe_is_rd_atomic(wqe))
		qp->req.rd_atomic++;
	/* the responder numbers receive WQEs the same way (SPETH) */
	if (wqe->opcode == IBV_WR_SEND || wqe->opcode == IBV_WR_SEND_WITH_IMM ||
	    wqe->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wqe->rwqe_seq = qp->req.rwqe_seq++;
}

/* ------------------------------------------------------------------------- */
/* Transmission                                                              */
/* ------------------------------------------------------------------------- */

static void
req_after_send(struct roce_qp *qp, uint32_t psn, uint32_t next, uint32_t bytes, bool retx)
{
	qp->req.stall = -1;
	if (qp->type == IBV_QPT_RC) {
		roce_rtt_sent(qp, psn, retx);
		qp->rec->tx_sent(qp, qp->rec_priv, psn, next, retx);
		/*
		 * A resend of una re-arms the timer from the resend (every mode).
		 * A hole at una repaired by a notice (a VRP NACK, a Go-Back-ONE
		 * RACK, an IRN SACK) is acknowledged two round trips after its
		 * first send: the notice, then the resend. Left armed from the
		 * first send, the adaptive timer (RTT + max(4 D, --rto-min), under
		 * 2 RTT whenever the margin is under one RTT) expired before every
		 * such repair: a spurious expiry that resent every PSN no notice
		 * reported and doubled the timeout (the cause of the spurious
		 * expiries under gbone/irn; test t_rto_resend_rearms).
		 * VRP §3.2.1 ("each packet's timer starts when it is sent") and
		 * Linux TCP (it re-arms its RTO when it retransmits the head of
		 * its queue) time the resend likewise. Go-Back-N's go-back
		 * re-armed from now already (comp_retry): unchanged for it.
		 */
		if (!qp->req.rto_at || (retx && psn == qp->comp.una))
			roce_req_rearm(qp);
	}
	qp->cc->on_send(qp, qp->cc_priv, qp->dev->now, bytes, retx);
	if (qp->rate_kbps) {
		/*
		 * IBV_QP_RATE_LIMIT: space packets by their wire time at the limit.
		 * A token bucket of REQ_PACE_BURST_NS: a poll loop that woke late
		 * may catch up that much at once, so sleeps do not lower the rate;
		 * REQ_PACE_CATCHUP_NS when the QP stayed backlogged since its last
		 * send, so a descheduled loop or a full TX ring does not either.
		 */
		uint64_t now = qp->dev->now;
		uint64_t gap = (uint64_t)(bytes + REQ_PACE_OVERHEAD) * 8000000u / qp->rate_kbps;
		uint64_t burst = gap * REQ_PACE_BURST_PKTS > REQ_PACE_BURST_NS
				     ? gap * REQ_PACE_BURST_PKTS
				     : REQ_PACE_BURST_NS;
		uint64_t floor, base;

		if (qp->req.pace_backlog && burst < REQ_PACE_CATCHUP_NS)
			burst = REQ_PACE_CATCHUP_NS;
		floor = now > burst ? now - burst : 0;
		base = qp->req.pace_at > floor ? qp->req.pace_at : floor;
		qp->req.pace_at = base + gap;
		qp->req.pace_backlog = true;
	}
	roce_qp_stat(qp, retx ? ROCE_STAT_TX_RETX_PKTS : ROCE_STAT_TX_REQ_PKTS, 1);
	if (retx)
		roce_trace_loss(qp, ROCE_TRACE_RETX, psn);
}

/* Send the next new packet. Returns 1 if sent, 0 if nothing may go, <0 on error. */
static int
req_send_new(struct roce_qp *qp)
{
	struct roce_send_wqe *wqe;
	uint32_t psn, len;
	int rc;

	if (qp->req.next == qp->sq.prod) {
		qp->req.pace_backlog = false; /* out of work: idle time earns no catch-up */
		return 0;
	}
	wqe = sq_wqe(qp, qp->req.next);
	if (wqe->state == ROCE_WQE_POSTED) {
		if (!req_may_start(qp, wqe))
			return 0;
		req_start(qp, wqe);
	} else if (qp->type == IBV_QPT_RC && req_in_flight(qp) >= roce_qp_window(qp)) {
		req_block(qp, ROCE_STAT_WINDOW_FULL);
		return 0;
	}
	if (!req_cap_allows(qp))
		return 0;
	len = req_payload_len(qp, wqe, wqe->sent);
	if (!req_cc_allows(qp, len, req_in_flight(qp)))
		return 0;
	psn = roce_psn_add(wqe->first_psn, wqe->sent);
	rc = req_xmit(qp, wqe, wqe->sent);
	if (rc == -EACCES) {
		req_local_error(qp, wqe);
		return rc;
	}
	if (rc < 0)
		return rc;
	wqe->sent = roce_wqe_is_rd_atomic(wqe) ? wqe->npkts : wqe->sent + 1;
	qp->req.psn = roce_psn_add(wqe->first_psn, wqe->sent);
	if (wqe->sent == wqe->npkts) {
		wqe->state = ROCE_WQE_SENT;
		qp->req.next++;
	}
	req_after_send(qp, psn, qp->req.psn, len, false);
	/* UC and UD are done once transmitted: they have no acknowledgements */
	if (wqe->state == ROCE_WQE_SENT && qp->type != IBV_QPT_RC)
		roce_comp_complete_head(qp, IBV_WC_SUCCESS);
	return 1;
}

/* Has the WQE at SQ index @p i been started (it holds PSNs)? */
static bool
sq_started(struct roce_qp *qp, uint32_t i)
{
	return i - qp->sq.cons < qp->sq.prod - qp->sq.cons &&
	       sq_wqe(qp, i)->state != ROCE_WQE_POSTED;
}

struct roce_send_wqe *
roce_req_find_wqe(struct roce_qp *qp, uint32_t psn)
{
	uint32_t i = qp->req.hint;

	/* go-back rounds walk forward: resume at the last hit unless it lies past psn */
	if (!sq_started(qp, i) || roce_psn_cmp(sq_wqe(qp, i)->first_psn, psn) > 0)
		i = qp->sq.cons;
	for (; sq_started(qp, i); i++) {
		struct roce_send_wqe *wqe = sq_wqe(qp, i);

		if (roce_psn_in_window(psn, wqe->first_psn, wqe->npkts)) {
			qp->req.hint = i;
			return wqe;
		}
	}
	return NULL;
}

/* Resend the packet of @p psn as the recovery asked. Returns 1 if sent. */
static int
req_retransmit(struct roce_qp *qp, uint32_t psn)
{
	struct roce_send_wqe *wqe = roce_req_find_wqe(qp, psn);
	uint32_t idx, len, next, ahead = 0;
	int rc;

	if (roce_unlikely(!wqe)) {
		/* not outstanding any more: tell the recovery it is done with it */
		qp->rec->tx_sent(qp, qp->rec_priv, psn, roce_psn_add(psn, 1), true);
		return 1;
	}
	/*
	 * A Go-Back-N round resends from una: what it resends is all that is in
	 * flight, so it too stays inside the window (after a timeout the
	 * loss-reactive window restarts small, roce_lwin.h), and a window CC sees
	 * the PSNs ahead of it, not the whole flight. A selective retransmission
	 * (gbone, irn) replaces one lost packet and adds nothing to the flight.
	 */
	if (qp->rec == &roce_recovery_gbn) {
		ahead = (uint32_t)roce_psn_diff(psn, qp->comp.una);
		if (ahead >= roce_qp_window(qp)) {
			req_block(qp, ROCE_STAT_WINDOW_FULL);
			return 0;
		}
	}
	idx = (uint32_t)roce_psn_diff(psn, wqe->first_psn);
	len = req_payload_len(qp, wqe, idx);
	if (!req_cc_allows(qp, len, ahead))
		return 0;
	rc = req_xmit(qp, wqe, idx);
	if (rc == -EACCES) {
		req_local_error(qp, wqe);
		return rc;
	}
	if (rc < 0)
		return rc;
	/* one READ request asks for every response from psn to the end */
	next = roce_wqe_is_rd_atomic(wqe) ? roce_psn_add(roce_wqe_last_psn(wqe), 1)
					  : roce_psn_add(psn, 1);
	req_after_send(qp, psn, next, len, true);
	return 1;
}

/* Not waiting for RNR, pacing or a state change (the transmit ring aside). */
static bool
req_ready(const struct roce_qp *qp)
{
	if (!roce_qp_can_send(qp) || qp->req.rnr_at)
		return false;
	return !qp->req.wake_at || qp->dev->now >= qp->req.wake_at;
}

void
roce_req_run(struct roce_qp *qp, uint32_t *budget)
{
	qp->req.blocked = false;
	while (*budget && !qp->dev->tx_blocked && req_ready(qp)) {
		uint32_t psn;
		int rc;

		if (qp->type == IBV_QPT_RC &&
		    qp->rec->tx_next(qp, qp->rec_priv, qp->comp.una, qp->req.psn, &psn))
			rc = req_retransmit(qp, psn);
		else
			rc = req_send_new(qp);
		if (rc <= 0)
			break;
		(*budget)--;
	}
}

bool
roce_req_busy(struct roce_qp *qp)
{
	uint32_t psn;

	if (!req_ready(qp) || qp->req.blocked)
		return false;
	if (qp->type == IBV_QPT_RC &&
	    qp->rec->tx_next(qp, qp->rec_priv, qp->comp.una, qp->req.psn, &psn))
		return true;
	return qp->req.next != qp->sq.prod;
}

/*
 * The retransmit timer runs while PSNs are outstanding. --rto fixed (IBTA,
 * as rxe): restarted from now at every progress. --rto adaptive: it expires
 * one RTO after the send time of the oldest outstanding PSN, so a lost tail
 * is resent at its send time + RTO, not one more RTT later (the adaptive RTO
 * already covers a whole round trip). The send time counts as no earlier
 * than one smoothed RTT before the latest progress: a PSN sent long before
 * its turn (a READ queued behind other READs' responses, a burst behind a
 * bottleneck queue) gets RTO - RTT = 4 D (at least the floor's margin) after
 * the response before it, as a timer restarted at every ACK would give it.
 */
static void
req_arm(struct roce_qp *qp, bool from_now)
{
	uint64_t rto = roce_qp_rto_ns(qp);
	uint64_t base = qp->dev->now;

	if (qp->type != IBV_QPT_RC || !rto || qp->comp.una == qp->req.psn || qp->req.rnr_at) {
		qp->req.rto_at = 0;
		return;
	}
	if (qp->rec->tx_rto) {
		/* a mode may set its own (IRN: RTO_low / RTO_high), given the engine's */
		uint64_t m = qp->rec->tx_rto(qp, qp->rec_priv, (uint32_t)req_in_flight(qp), rto);

		if (m)
			rto = m;
	}
	rto += roce_fec_tx_idle_ns(qp); /* a tail's repair waits for the idle flush */
	if (!from_now && qp->dev->cfg.rto_mode == ROCE_RTO_ADAPTIVE) {
		uint64_t sent = roce_rtt_sent_at(qp, qp->comp.una);
		uint64_t alive = base > qp->rtt.srtt ? base - qp->rtt.srtt : 0;

		if (sent)
			base = sent > alive ? sent : alive; /* may be more than an RTO back: due */
	}
	qp->req.rto_at = base + rto;
}

void
roce_req_rearm(struct roce_qp *qp)
{
	req_arm(qp, false);
}

void
roce_req_rearm_now(struct roce_qp *qp)
{
	req_arm(qp, true);
}
