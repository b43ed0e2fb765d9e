/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_comp.c
 * Completer: responses in (ACK, NAK, RNR NAK, READ response, ATOMIC
 * ACKNOWLEDGE), send completions out, and the retry decisions of IBTA ch. 9.7
 * (requester side): cumulative and implicit acknowledgement, implied NAKs for
 * lost READ/atomic responses, the transport (ACK) timer with retry_cnt, the
 * RNR timer with rnr_retry (7 = infinite), and fatal NAKs that complete the
 * WQE in error and move the QP to ERR.
 *
 * A response is run through an explicit state machine; each handler returns
 * the next state. Retransmission itself is the recovery plug-in's job: the
 * completer only reports losses to it (tx_lost) and charges the retry budget.
 */
#include <stdlib.h>
#include <string.h>

#include "roce_int.h"
#include "roce_psn_bitmap.h"

void
roce_comp_reset(struct roce_qp *qp)
{
	qp->comp.una = qp->attr.sq_psn;
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	if (qp->rd_ooo)
		roce_psn_bitmap_init(qp->rd_ooo, qp->comp.una);
}

/* ------------------------------------------------------------------------- */
/* Send completions                                                          */
/* ------------------------------------------------------------------------- */

static enum ibv_wc_opcode
wc_opcode(uint8_t wr_opcode)
{
	switch (wr_opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	default:
		return IBV_WC_SEND;
	}
}

static bool
wqe_is_write(const struct roce_send_wqe *wqe)
{
	return wqe->opcode == IBV_WR_RDMA_WRITE || wqe->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

void
roce_comp_send_cqe(struct roce_qp *qp, const struct roce_send_wqe *wqe, enum ibv_wc_status status)
{
	const struct roce_vrp_loss *loss = NULL;
	struct ibv_wc wc;

	roce_qp_stat(qp, ROCE_STAT_SEND_CQES, 1);
	/* VRP: a WRITE's completion carries the responder's LOSS summary of it */
	if (status == IBV_WC_SUCCESS && qp->type == IBV_QPT_RC &&
	    (qp->rec->flags & ROCE_REC_F_TOLERATE) && wqe_is_write(wqe)) {
		if (wqe->vrp_sum && qp->comp.vrp_sum)
			loss = &qp->comp.vrp_sum[(uint32_t)(wqe - qp->sq.wqe)];
		else
			roce_qp_stat(qp, ROCE_STAT_VRP_SUM_MISSING, 1);
	}
	/* unsignaled WRs complete silently, but an error is always reported */
	if (status == IBV_WC_SUCCESS && !(wqe->flags & IBV_SEND_SIGNALED) && !qp->sq_sig_all)
		return;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wqe->wr_id;
	wc.status = status;
	wc.opcode = wc_opcode(wqe->opcode);
	wc.byte_len = wqe->length;
	wc.qp_num = qp->qpn;
	roce_cq_push_loss(qp->scq, &wc, false, loss);
}

/*
 * VRP LOSS summary (0xE3, docs/wire.md): the responder's loss record of the
 * WRITE message that ends at its PSN. It acknowledges nothing (the ACK that
 * covers the message follows it); it is kept beside that WRITE's send WQE
 * until the WRITE completes (roce_comp_send_cqe). Dropped and counted: on a
 * QP not running vrp, when no outstanding WRITE ends at its PSN or its
 * length differs, and when its fields do not add up.
 */
static void
comp_vrp_summary(struct roce_qp *qp, const struct roce_rx *rx)
{
	const struct roce_vleth *v = &rx->pkt.h.vl;
	struct roce_send_wqe *wqe = NULL;
	const char *why = NULL;
	uint64_t hole_bytes = 0, end = 0;
	struct roce_vrp_loss *l;

	roce_qp_stat(qp, ROCE_STAT_RX_VRP_SUMMARIES, 1);
	if (!(qp->rec->flags & ROCE_REC_F_TOLERATE))
		why = "the QP does not run vrp";
	else if (!(wqe = roce_req_find_wqe(qp, rx->psn)) || !wqe_is_write(wqe) ||
		 roce_wqe_last_psn(wqe) != rx->psn || wqe->length != v->len)
		why = "no outstanding WRITE ends at its PSN";
	else if (v->n_holes > ROCE_VLETH_HOLES || (v->flags & ~ROCE_VLETH_F_ALL) ||
		 v->lost_bytes > v->len || v->lost_pkts > wqe->npkts ||
		 ((v->flags & ROCE_VLETH_F_TRUNC) && v->n_holes < ROCE_VLETH_HOLES))
		why = "fields out of range";
	for (uint32_t i = 0; !why && i < v->n_holes; i++) {
		/* holes: in order, apart, non-empty, inside the message */
		if (v->holes[i].len == 0 || v->holes[i].off < end ||
		    (uint64_t)v->holes[i].off + v->holes[i].len > v->len)
			why = "holes out of order or outside the message";
		end = (uint64_t)v->holes[i].off + v->holes[i].len + 1;
		hole_bytes += v->holes[i].len;
	}
	if (!why && (hole_bytes > v->lost_bytes ||
		     (!(v->flags & ROCE_VLETH_F_TRUNC) && hole_bytes != v->lost_bytes)))
		why = "holes and bytes lost disagree";
	if (why) {
		roce_qp_stat(qp, ROCE_STAT_RX_VRP_SUM_DROP, 1);
		qp_log(qp, ROCE_LOG_DEBUG, "VRP LOSS summary PSN 0x%06x dropped: %s", rx->psn, why);
		return;
	}
	if (!qp->comp.vrp_sum) {
		qp->comp.vrp_sum = calloc(qp->sq.size, sizeof(*qp->comp.vrp_sum));
		if (!qp->comp.vrp_sum) {
			roce_qp_stat(qp, ROCE_STAT_RX_VRP_SUM_DROP, 1);
			return;
		}
	}
	l = &qp->comp.vrp_sum[(uint32_t)(wqe - qp->sq.wqe)];
	memset(l, 0, sizeof(*l));
	l->msn = rx->pkt.h.aeth.msn;
	l->len = v->len;
	l->lost_pkts = v->lost_pkts;
	l->lost_bytes = v->lost_bytes;
	l->n_holes = v->n_holes;
	l->holes_truncated = v->flags & ROCE_VLETH_F_TRUNC;
	for (uint32_t i = 0; i < v->n_holes; i++)
		l->holes[i] = (struct roce_vrp_hole){v->holes[i].off, v->holes[i].len};
	if (!wqe->vrp_sum) { /* a duplicate summary counts once */
		roce_qp_stat(qp, ROCE_STAT_VRP_PEER_LOST_PKTS, v->lost_pkts);
		roce_qp_stat(qp, ROCE_STAT_VRP_PEER_LOST_BYTES, v->lost_bytes);
	}
	wqe->vrp_sum = true;
	qp->comp.vrp_peer_last = *l;
	qp->comp.vrp_have_peer_last = true;
}

static struct roce_send_wqe *
comp_head(struct roce_qp *qp)
{
	struct roce_send_wqe *wqe;

	if (qp->sq.cons == qp->sq.prod)
		return NULL;
	wqe = &qp->sq.wqe[qp->sq.cons & (qp->sq.size - 1)];
	return wqe->state == ROCE_WQE_POSTED ? NULL : wqe;
}

bool
roce_comp_awaits_read(struct roce_qp *qp)
{
	const struct roce_send_wqe *wqe = comp_head(qp);

	return wqe && wqe->opcode == IBV_WR_RDMA_READ;
}

void
roce_comp_complete_head(struct roce_qp *qp, enum ibv_wc_status status)
{
	struct roce_send_wqe *wqe = &qp->sq.wqe[qp->sq.cons & (qp->sq.size - 1)];

	if (qp->sq.cons == qp->sq.prod)
		return;
	if (wqe->state != ROCE_WQE_POSTED && roce_wqe_is_rd_atomic(wqe) && qp->req.rd_atomic)
		qp->req.rd_atomic--;
	roce_comp_send_cqe(qp, wqe, status);
	qp->sq.cons++;
	if ((int32_t)(qp->req.next - qp->sq.cons) < 0)
		qp->req.next = qp->sq.cons;
}

void
roce_comp_flush(struct roce_qp *qp)
{
	while (qp->sq.cons != qp->sq.prod) {
		struct roce_send_wqe *wqe = &qp->sq.wqe[qp->sq.cons & (qp->sq.size - 1)];
		enum ibv_wc_status st =
		    wqe->err ? (enum ibv_wc_status)wqe->err : IBV_WC_WR_FLUSH_ERR;

		if (st == IBV_WC_WR_FLUSH_ERR)
			roce_qp_stat(qp, ROCE_STAT_FLUSHED_WQES, 1);
		roce_comp_complete_head(qp, st);
	}
	qp->req.next = qp->sq.cons;
	qp->req.rd_atomic = 0;
	qp->req.rto_at = qp->req.rnr_at = 0;
	qp->comp.una = qp->req.psn;
}

/* ------------------------------------------------------------------------- */
/* Acknowledgement                                                           */
/* ------------------------------------------------------------------------- */

/*
 * Complete every SEND/WRITE whose PSNs all lie before @p upto: an ACK is
 * cumulative, and a NAK or a READ/atomic response implies that everything
 * before its PSN was executed (responses are returned in PSN order). Stops
 * at a READ/atomic still waiting for its response; returns true if PSNs of
 * that WQE lie before @p upto, i.e. its responses were lost (implied NAK).
 */
static bool
comp_ack_until(struct roce_qp *qp, uint32_t upto)
{
	struct roce_send_wqe *wqe;

	while ((wqe = comp_head(qp)) != NULL) {
		if (roce_wqe_is_rd_atomic(wqe))
			return roce_psn_cmp(upto, qp->comp.una) > 0;
		if (wqe->state == ROCE_WQE_SENT && roce_psn_cmp(roce_wqe_last_psn(wqe), upto) < 0) {
			qp->comp.una = roce_psn_add(roce_wqe_last_psn(wqe), 1);
			roce_comp_complete_head(qp, IBV_WC_SUCCESS);
			continue;
		}
		if (roce_psn_cmp(upto, qp->comp.una) > 0)
			qp->comp.una = upto; /* part of a multi-packet message */
		break;
	}
	return false;
}

/* ------------------------------------------------------------------------- */
/* The completer state machine                                               */
/* ------------------------------------------------------------------------- */

enum comp_state {
	COMP_CHECK_PSN, /* response PSN within [una, nxt) */
	COMP_CLASSIFY,	/* opcode and AETH syndrome */
	COMP_ACK,	/* cumulative ACK of everything up to its PSN */
	COMP_READ,	/* READ response for una: place the data */
	COMP_ATOMIC,	/* ATOMIC ACKNOWLEDGE for una: return the original value */
	COMP_NAK_SEQ,	/* NAK PSN sequence error: resend from its PSN */
	COMP_NAK_RNR,	/* RNR NAK: wait the RNR timer, then resend */
	COMP_NAK_FATAL, /* invalid request / remote access / remote operational error */
	COMP_PROGRESS,	/* una advanced: reset retry budgets, rearm, tell recovery and CC */
	COMP_RETRY,	/* report a loss to the recovery and charge retry_cnt */
	COMP_RNR_WAIT,	/* charge rnr_retry and start the RNR timer */
	COMP_ERROR,	/* complete the oldest WQE in error, QP to ERR */
	COMP_NOTICE,	/* RACK / SACK: cumulative ACK, then the PSN received to the recovery */
	COMP_DONE,
};

static const char *const comp_state_names[] = {
    [COMP_CHECK_PSN] = "CHECK_PSN", [COMP_CLASSIFY] = "CLASSIFY",   [COMP_ACK] = "ACK",
    [COMP_READ] = "READ",	    [COMP_ATOMIC] = "ATOMIC",	    [COMP_NAK_SEQ] = "NAK_SEQ",
    [COMP_NAK_RNR] = "NAK_RNR",	    [COMP_NAK_FATAL] = "NAK_FATAL", [COMP_PROGRESS] = "PROGRESS",
    [COMP_RETRY] = "RETRY",	    [COMP_RNR_WAIT] = "RNR_WAIT",   [COMP_ERROR] = "ERROR",
    [COMP_NOTICE] = "NOTICE",	    [COMP_DONE] = "DONE",
};

static const char *
comp_state_name(enum comp_state s)
{
	return (unsigned int)s < ROCE_ARRAY_SIZE(comp_state_names) ? comp_state_names[s] : "?";
}

struct comp_ctx {
	struct roce_qp *qp;
	const struct roce_rx *rx; /* NULL for timer-driven runs */
	uint32_t psn;
	uint32_t old_una;
	bool loss; /* a loss to report after PROGRESS */
	enum roce_loss_kind loss_kind;
	bool rnr;		    /* an RNR wait to start after PROGRESS */
	enum roce_rx_notice notice; /* a RACK/SACK to hand the recovery after PROGRESS */
	uint32_t notice_epsn;	    /* the PSN its receiver expects */
	enum ibv_wc_status status;  /* for COMP_ERROR */
	bool sample; /* an ACK / READ response / ATOMIC ACK: may give an RTT sample */
};

static enum comp_state
comp_bad_response(struct comp_ctx *c, const char *why)
{
	roce_qp_stat(c->qp, ROCE_STAT_RX_BAD_RESP, 1);
	qp_log(c->qp, ROCE_LOG_DEBUG, "response PSN 0x%06x dropped: %s", c->psn, why);
	return COMP_DONE;
}

/* An ACK packet whose AETH is a NAK-PSN sequence error (not a READ response or atomic ACK). */
static bool
comp_is_nak_seq(const struct roce_rx *rx)
{
	uint8_t syn = rx->pkt.h.aeth.syndrome;

	return !(rx->op->flags & (ROCE_OPF_READ | ROCE_OPF_ATOMIC)) &&
	       roce_aeth_type(syn) == ROCE_AETH_NAK && roce_aeth_value(syn) == ROCE_NAK_PSN_SEQ_ERR;
}

/*
 * A response must answer an outstanding PSN (IBTA ch. 9.7: requester PSN
 * checks). Every response carries the PSN of a request we sent, except the
 * NAK-PSN sequence error, which carries the responder's expected PSN: when the
 * responder has everything we sent (an out-of-sequence request that we did not
 * send, e.g. a forged or stale one, reached it), that is our next PSN, one
 * past the last one sent. Such a NAK acknowledges everything before it and
 * asks for nothing to be resent (comp_nak_seq).
 */
static enum comp_state
comp_check_psn(struct comp_ctx *c)
{
	struct roce_qp *qp = c->qp;

	if (roce_psn_cmp(c->psn, qp->comp.una) < 0) {
		/* stale: an ACK coalesced behind a newer one, or a duplicate response */
		roce_qp_stat(qp, ROCE_STAT_RX_DUP_RESP, 1);
		return COMP_DONE;
	}
	if (roce_psn_cmp(c->psn, qp->req.psn) > 0 ||
	    (c->psn == qp->req.psn && !comp_is_nak_seq(c->rx)))
		return comp_bad_response(c, "PSN was never sent");
	return COMP_CLASSIFY;
}

static enum comp_state
comp_classify_nak(struct comp_ctx *c, uint8_t code)
{
	static const struct {
		enum roce_stat stat;
		enum ibv_wc_status status;
	} fatal[] = {
	    [ROCE_NAK_INVALID_REQ] = {ROCE_STAT_RX_NAK_INV_REQ, IBV_WC_REM_INV_REQ_ERR},
	    [ROCE_NAK_REMOTE_ACCESS] = {ROCE_STAT_RX_NAK_ACCESS, IBV_WC_REM_ACCESS_ERR},
	    [ROCE_NAK_REMOTE_OP] = {ROCE_STAT_RX_NAK_REM_OP, IBV_WC_REM_OP_ERR},
	    [ROCE_NAK_INVALID_RD_REQ] = {ROCE_STAT_RX_NAK_INV_REQ, IBV_WC_REM_INV_RD_REQ_ERR},
	};

	if (code == ROCE_NAK_PSN_SEQ_ERR) {
		roce_qp_stat(c->qp, ROCE_STAT_RX_NAK_SEQ, 1);
		return COMP_NAK_SEQ;
	}
	if (code < ROCE_ARRAY_SIZE(fatal) && fatal[code].stat) {
		roce_qp_stat(c->qp, fatal[code].stat, 1);
		c->status = fatal[code].status;
	} else {
		roce_qp_stat(c->qp, ROCE_STAT_RX_NAK_OTHER, 1);
		c->status = IBV_WC_BAD_RESP_ERR; /* reserved NAK code */
	}
	/* one line naming the rule the peer says we broke (interop tests quote it) */
	qp_log(c->qp, ROCE_LOG_ERR, "peer sent NAK: %s (code %u) at PSN 0x%06x",
	       code == ROCE_NAK_INVALID_REQ	 ? "invalid request"
	       : code == ROCE_NAK_REMOTE_ACCESS	 ? "remote access error"
	       : code == ROCE_NAK_REMOTE_OP	 ? "remote operational error"
	       : code == ROCE_NAK_INVALID_RD_REQ ? "invalid RD request"
						 : "reserved code",
	       code, c->psn);
	return COMP_NAK_FATAL;
}

static enum comp_state
comp_classify(struct comp_ctx *c)
{
	const struct roce_rx *rx = c->rx;
	uint16_t f = rx->op->flags;
	uint8_t syn = rx->pkt.h.aeth.syndrome;

	if (f & ROCE_OPF_READ) {
		roce_qp_stat(c->qp, ROCE_STAT_RX_READ_RESP, 1);
		return COMP_READ;
	}
	if (f & ROCE_OPF_ATOMIC) {
		roce_qp_stat(c->qp, ROCE_STAT_RX_ATOMIC_ACKS, 1);
		return COMP_ATOMIC;
	}
	switch (roce_aeth_type(syn)) {
	case ROCE_AETH_ACK:
		roce_qp_stat(c->qp, ROCE_STAT_RX_ACKS, 1);
		return COMP_ACK;
	case ROCE_AETH_RNR_NAK:
		roce_qp_stat(c->qp, ROCE_STAT_RX_NAK_RNR, 1);
		return COMP_NAK_RNR;
	case ROCE_AETH_NAK:
		return comp_classify_nak(c, roce_aeth_value(syn));
	default:
		return comp_bad_response(c, "reserved AETH syndrome");
	}
}

static enum comp_state
comp_implied_nak(struct comp_ctx *c)
{
	c->loss = true;
	c->loss_kind = ROCE_LOSS_IMPLIED;
	return COMP_PROGRESS;
}

static enum comp_state
comp_ack(struct comp_ctx *c)
{
	c->sample = true;
	if (comp_ack_until(c->qp, roce_psn_add(c->psn, 1)))
		return comp_implied_nak(c);
	return COMP_PROGRESS;
}

/* READ response payload must be exactly the bytes of its PSN (IBTA ch. 9.7: response checks). */
static bool
comp_read_len_ok(const struct roce_qp *qp, const struct roce_send_wqe *wqe, uint32_t idx,
		 const struct roce_rx *rx)
{
	uint32_t off = idx * qp->mtu;
	uint32_t want = wqe->length - off < qp->mtu ? wqe->length - off : qp->mtu;
	bool last_psn = idx + 1 == wqe->npkts;
	bool last_op = rx->op->flags & ROCE_OPF_LAST;

	/* selective recovery re-reads one hole: its LAST may precede the READ's */
	if (qp->rd_ooo && last_op && !last_psn)
		return rx->len == want;
	return rx->len == want && last_psn == last_op;
}

/*
 * Selective recovery: a READ response after a gap is placed at once by its
 * PSN offset in the head READ's buffer and remembered (qp->rd_ooo); the gap
 * itself is reported as an implied NAK as usual, and the recovery re-reads
 * the hole only (roce_req.c sizes the RETH up to the next placed PSN).
 */
static void
comp_read_ooo(struct comp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	struct roce_send_wqe *wqe = comp_head(qp);
	uint32_t idx;

	if (!wqe || wqe->opcode != IBV_WR_RDMA_READ ||
	    !roce_psn_in_window(c->psn, qp->comp.una,
				(uint32_t)roce_psn_diff(roce_wqe_last_psn(wqe), qp->comp.una) +
				    1) ||
	    roce_psn_diff(c->psn, qp->comp.una) >= (int32_t)ROCE_PSN_BITMAP_BITS ||
	    roce_psn_bitmap_test(qp->rd_ooo, c->psn))
		return;
	idx = (uint32_t)roce_psn_diff(c->psn, wqe->first_psn);
	if (!comp_read_len_ok(qp, wqe, idx, c->rx) ||
	    roce_sge_scatter(qp->pd, wqe->sge, wqe->num_sge, idx * qp->mtu, c->rx->payload,
			     c->rx->len) < 0)
		return; /* the in-order response will tell */
	roce_psn_bitmap_set(qp->rd_ooo, c->psn);
	roce_qp_stat(qp, ROCE_STAT_RX_OOO_PLACED, 1);
}

/*
 * una moved inside the head READ: skip the responses already placed. True
 * if a later one is placed past the next gap (that gap needs a re-read now:
 * nothing else in flight will report it).
 */
static bool
comp_read_advance(struct roce_qp *qp, const struct roce_send_wqe *wqe)
{
	uint32_t left = (uint32_t)roce_psn_diff(roce_wqe_last_psn(wqe), qp->comp.una) + 1;
	uint32_t n;

	if (left > ROCE_PSN_BITMAP_BITS)
		left = ROCE_PSN_BITMAP_BITS;
	roce_psn_bitmap_advance(qp->rd_ooo, qp->comp.una);
	n = roce_psn_bitmap_find(qp->rd_ooo, qp->comp.una, left, false);
	qp->comp.una = roce_psn_add(qp->comp.una, n);
	roce_psn_bitmap_advance(qp->rd_ooo, qp->comp.una);
	return n < left &&
	       roce_psn_bitmap_find(qp->rd_ooo, qp->comp.una, left - n, true) < left - n;
}

static enum comp_state
comp_read(struct comp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	struct roce_send_wqe *wqe;
	uint32_t idx;

	if (comp_ack_until(qp, c->psn)) {
		if (qp->rd_ooo)
			comp_read_ooo(c);
		return comp_implied_nak(c); /* responses before this one were lost */
	}
	wqe = comp_head(qp);
	if (!wqe || wqe->opcode != IBV_WR_RDMA_READ || c->psn != qp->comp.una)
		return comp_bad_response(c, "READ response for no outstanding READ");
	idx = (uint32_t)roce_psn_diff(c->psn, wqe->first_psn);
	if (!comp_read_len_ok(qp, wqe, idx, c->rx))
		return comp_bad_response(c, "READ response length or position mismatch");
	if (roce_sge_scatter(qp->pd, wqe->sge, wqe->num_sge, idx * qp->mtu, c->rx->payload,
			     c->rx->len) < 0) {
		c->status = roce_sge_fault(qp->pd, wqe->sge, wqe->num_sge, IBV_ACCESS_LOCAL_WRITE);
		return COMP_ERROR;
	}
	qp->comp.una = roce_psn_add(c->psn, 1);
	c->sample = true; /* only the PSN the READ request was sent with has a stamp */
	if (qp->rd_ooo && idx + 1 < wqe->npkts && comp_read_advance(qp, wqe)) {
		c->loss = true; /* the next hole of this READ: re-read it now */
		c->loss_kind = ROCE_LOSS_IMPLIED;
	}
	if (roce_psn_cmp(qp->comp.una, roce_wqe_last_psn(wqe)) > 0)
		roce_comp_complete_head(qp, IBV_WC_SUCCESS);
	return COMP_PROGRESS;
}

static enum comp_state
comp_atomic(struct comp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	struct roce_send_wqe *wqe;
	uint64_t orig = c->rx->pkt.h.atomic_orig;

	if (comp_ack_until(qp, c->psn))
		return comp_implied_nak(c);
	wqe = comp_head(qp);
	if (!wqe || !roce_wqe_is_rd_atomic(wqe) || wqe->opcode == IBV_WR_RDMA_READ ||
	    c->psn != qp->comp.una)
		return comp_bad_response(c, "ATOMIC ACKNOWLEDGE for no outstanding atomic");
	/* the original remote value lands in the local buffer in host order, as verbs does */
	if (roce_sge_scatter(qp->pd, wqe->sge, wqe->num_sge, 0, (const uint8_t *)&orig,
			     sizeof(orig)) < 0) {
		c->status = roce_sge_fault(qp->pd, wqe->sge, wqe->num_sge, IBV_ACCESS_LOCAL_WRITE);
		return COMP_ERROR;
	}
	qp->comp.una = roce_psn_add(c->psn, 1);
	c->sample = true;
	roce_comp_complete_head(qp, IBV_WC_SUCCESS);
	return COMP_PROGRESS;
}

static enum comp_state
comp_nak_seq(struct comp_ctx *c)
{
	/* everything before the NAK's PSN arrived: resend from there (or from a lost READ) */
	bool rd_lost = comp_ack_until(c->qp, c->psn);

	/* nothing before it is outstanding (it names our next PSN): no loss to repair */
	if (!rd_lost && c->qp->comp.una == c->qp->req.psn)
		return COMP_PROGRESS;
	c->loss = true;
	c->loss_kind = ROCE_LOSS_NAK_SEQ;
	return COMP_PROGRESS;
}

/*
 * RACK (Go-Back-ONE) / SACK (IRN), docs/wire.md: the BTH PSN is the
 * receiver's ePSN - 1, which may lie just before una (the receiver still
 * waits for una); the NTETH names one PSN it has.
 */
static enum comp_state
comp_notice(struct comp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	uint8_t op = c->rx->pkt.h.bth.opcode;
	bool vrp = op == ROCE_XOP_VRP_ACK || op == ROCE_XOP_VRP_NACK;
	uint32_t upto = roce_psn_add(c->psn, 1);

	roce_qp_stat(qp,
		     op == ROCE_XOP_RACK      ? ROCE_STAT_RX_RACKS
		     : op == ROCE_XOP_SACK    ? ROCE_STAT_RX_SACKS
		     : op == ROCE_XOP_VRP_ACK ? ROCE_STAT_RX_VRP_ACKS
					      : ROCE_STAT_RX_VRP_NACKS,
		     1);
	if (!qp->rec->tx_notice)
		return comp_bad_response(c, "RACK/SACK for a QP without selective recovery");
	if (vrp != ((qp->rec->flags & ROCE_REC_F_TOLERATE) != 0))
		return comp_bad_response(c, "VRP ACK/NACK and the QP's recovery disagree");
	if (roce_psn_cmp(upto, qp->req.psn) > 0)
		return comp_bad_response(c, "PSN was never sent");
	c->notice = op == ROCE_XOP_RACK	     ? ROCE_NOTICE_RACK
		    : op == ROCE_XOP_SACK    ? ROCE_NOTICE_SACK
		    : op == ROCE_XOP_VRP_ACK ? ROCE_NOTICE_VRP_ACK
					     : ROCE_NOTICE_VRP_NACK;
	c->notice_epsn = upto;
	/*
	 * Everything before the receiver's ePSN was executed. A READ/atomic
	 * before it is still waiting for its responses, which the responder sent
	 * before this notice: not an implied NAK, the ACK stops there.
	 */
	if (roce_psn_cmp(upto, qp->comp.una) > 0)
		comp_ack_until(qp, upto);
	return COMP_PROGRESS;
}

static enum comp_state
comp_nak_rnr(struct comp_ctx *c)
{
	comp_ack_until(c->qp, c->psn);
	c->rnr = true;
	return COMP_PROGRESS;
}

static enum comp_state
comp_nak_fatal(struct comp_ctx *c)
{
	/* the NAKed request is the oldest one left once the earlier ones are acknowledged */
	comp_ack_until(c->qp, c->psn);
	return COMP_ERROR;
}

static enum comp_state
comp_progress(struct comp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	int32_t acked = roce_psn_diff(qp->comp.una, c->old_una);

	if (acked > 0) {
		roce_rtt_acked(qp, c->old_una, qp->comp.una, c->sample, c->psn);
		/* the next poll may not fire the timer: ACKs may still wait behind this burst */
		qp->req.rto_defer = qp->dev->cfg.rto_mode == ROCE_RTO_ADAPTIVE;
		/* forward progress restores both retry budgets */
		qp->comp.retry_left = qp->attr.retry_cnt;
		qp->comp.rnr_left = qp->attr.rnr_retry;
		qp->rec->tx_acked(qp, qp->rec_priv, qp->comp.una);
		roce_lwin_on_ack(&qp->lwin, qp->window, qp->comp.una, qp->req.psn, (uint32_t)acked);
		qp->cc->on_ack(qp, qp->cc_priv, qp->dev->now, (uint32_t)acked);
		roce_req_rearm(qp);
	}
	if (c->notice != ROCE_NOTICE_NONE) {
		uint32_t got = c->rx->pkt.h.nt_psn, run = c->rx->pkt.h.nt_run;

		/* a PSN not outstanding (any more) tells nothing: report una - 1 */
		if (!roce_psn_in_window(got, qp->comp.una,
					(uint32_t)roce_psn_diff(qp->req.psn, qp->comp.una))) {
			got = roce_psn_add(qp->comp.una, ROCE_PSN_MASK);
			run = 0;
		} else if (run > (uint32_t)roce_psn_diff(got, qp->comp.una)) {
			run = (uint32_t)roce_psn_diff(got, qp->comp.una);
		}
		uint32_t epsn =
		    roce_psn_cmp(c->notice_epsn, qp->comp.una) > 0 ? c->notice_epsn : qp->comp.una;

		roce_rtt_noticed(qp, got); /* the PSN whose arrival sent the notice */

		qp->rec->tx_notice(qp, qp->rec_priv, c->notice, qp->comp.una, epsn, got, run,
				   qp->req.psn);
	}
	if (c->loss)
		return COMP_RETRY;
	if (c->rnr)
		return COMP_RNR_WAIT;
	return COMP_DONE;
}

/* Every loss signal (NAK, implied NAK, timeout, RNR) may cut the loss-reactive window. */
static void
comp_lwin_loss(struct roce_qp *qp, enum roce_loss_kind kind)
{
	int r;

	if (!qp->dev->cfg.loss_window)
		return;
	r = roce_lwin_on_loss(&qp->lwin, qp->window, qp->comp.una, qp->req.psn,
			      kind == ROCE_LOSS_TIMEOUT);
	if (r == ROCE_LWIN_CUT)
		roce_qp_stat(qp, ROCE_STAT_LWIN_CUTS, 1);
	else if (r == ROCE_LWIN_HELD)
		roce_qp_stat(qp, ROCE_STAT_LWIN_HELD, 1);
}

static enum comp_state
comp_retry(struct comp_ctx *c)
{
	struct roce_qp *qp = c->qp;

	comp_lwin_loss(qp, c->loss_kind);
	if (!qp->rec->tx_lost(qp, qp->rec_priv, qp->comp.una, qp->req.psn, c->loss_kind))
		return COMP_DONE; /* already being repaired */
	roce_qp_stat(qp, ROCE_STAT_RETRIES, 1);
	if (c->loss_kind == ROCE_LOSS_IMPLIED)
		roce_qp_stat(qp, ROCE_STAT_IMPLIED_NAKS, 1);
	qp->cc->on_loss(qp, qp->cc_priv, qp->dev->now, c->loss_kind);
	if (qp->comp.retry_left == 0) {
		roce_qp_stat(qp, ROCE_STAT_RETRY_EXC, 1);
		c->status = IBV_WC_RETRY_EXC_ERR;
		return COMP_ERROR;
	}
	qp->comp.retry_left--;
	roce_req_rearm_now(qp); /* the retransmission goes now: time it from now */
	return COMP_DONE;
}

static enum comp_state
comp_rnr_wait(struct comp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	uint8_t code = roce_aeth_value(c->rx->pkt.h.aeth.syndrome);

	comp_lwin_loss(qp, ROCE_LOSS_RNR);
	qp->cc->on_loss(qp, qp->cc_priv, qp->dev->now, ROCE_LOSS_RNR);
	if (qp->attr.rnr_retry != ROCE_RNR_RETRY_INFINITE) {
		if (qp->comp.rnr_left == 0) {
			roce_qp_stat(qp, ROCE_STAT_RNR_RETRY_EXC, 1);
			c->status = IBV_WC_RNR_RETRY_EXC_ERR;
			return COMP_ERROR;
		}
		qp->comp.rnr_left--;
	}
	/* wait at least the responder's RNR timer; the transport timer stops meanwhile */
	qp->req.rnr_at = qp->dev->now + roce_rnr_timer_ns(code);
	qp->req.rto_at = 0;
	return COMP_DONE;
}

static enum comp_state
comp_error(struct comp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	struct roce_send_wqe *wqe = comp_head(qp);

	qp_log(qp, ROCE_LOG_WARNING, "send queue error %s at PSN 0x%06x",
	       roce_wc_status_str(c->status), qp->comp.una);
	if (wqe)
		wqe->err = (uint8_t)c->status;
	roce_qp_to_err(qp);
	return COMP_DONE;
}

static void
comp_run(struct comp_ctx *c, enum comp_state s)
{
	enum comp_state from;

	c->old_una = c->qp->comp.una;
	while (s != COMP_DONE) {
		from = s;
		switch (s) {
		case COMP_CHECK_PSN:
			s = comp_check_psn(c);
			break;
		case COMP_CLASSIFY:
			s = comp_classify(c);
			break;
		case COMP_ACK:
			s = comp_ack(c);
			break;
		case COMP_READ:
			s = comp_read(c);
			break;
		case COMP_ATOMIC:
			s = comp_atomic(c);
			break;
		case COMP_NAK_SEQ:
			s = comp_nak_seq(c);
			break;
		case COMP_NAK_RNR:
			s = comp_nak_rnr(c);
			break;
		case COMP_NAK_FATAL:
			s = comp_nak_fatal(c);
			break;
		case COMP_PROGRESS:
			s = comp_progress(c);
			break;
		case COMP_RETRY:
			s = comp_retry(c);
			break;
		case COMP_RNR_WAIT:
			s = comp_rnr_wait(c);
			break;
		case COMP_ERROR:
			s = comp_error(c);
			break;
		case COMP_NOTICE:
			s = comp_notice(c);
			break;
		default:
			qp_log(c->qp, ROCE_LOG_ERR, "completer: bad state %s", comp_state_name(s));
			s = COMP_DONE;
			break;
		}
		if (roce_tracing(c->qp))
			roce_trace(c->qp, "completer", c->rx ? c->psn : c->old_una,
				   comp_state_name(from), comp_state_name(s));
	}
}

void
roce_comp_rx(struct roce_qp *qp, const struct roce_rx *rx)
{
	struct comp_ctx c = {.qp = qp, .rx = rx, .psn = rx->psn};
	uint32_t old_una = qp->comp.una;

	if (qp->type != IBV_QPT_RC || !roce_qp_can_send(qp)) {
		roce_qp_stat(qp, ROCE_STAT_RX_DROP_QP_STATE, 1);
		return;
	}
	if (rx->pkt.h.bth.opcode == ROCE_XOP_VRP_LOSS) {
		comp_vrp_summary(qp, rx);
		return;
	}
	/* a spurious-expiry verdict on this ACK reads its echo (roce_lwin_undo, RFC 4015) */
	qp->comp.rx_becn =
	    rx->pkt.h.bth.becn && rx->pkt.h.bth.opcode == ROCE_OP_RC_BASE + ROCE_OP_ACK;
	comp_run(&c, (rx->op->flags & ROCE_OPF_NOTICE) ? COMP_NOTICE : COMP_CHECK_PSN);
	if (qp->comp.rx_becn) {
		qp->comp.rx_becn = false;
		/* ECN echo: DCTCP counts the packets it covers; rate CCs take it as a CNP */
		int32_t acked = roce_psn_diff(qp->comp.una, old_una);

		roce_qp_stat(qp, ROCE_STAT_RX_BECN_ACKS, 1);
		roce_lwin_on_ecn(&qp->lwin);
		if (qp->cc->on_becn)
			qp->cc->on_becn(qp, qp->cc_priv, qp->dev->now,
					acked > 0 ? (uint32_t)acked : 0);
		else
			qp->cc->on_cnp(qp, qp->cc_priv, qp->dev->now);
	}
}

void
roce_comp_timeout(struct roce_qp *qp)
{
	struct comp_ctx c = {.qp = qp, .loss = true, .loss_kind = ROCE_LOSS_TIMEOUT};

	qp->req.rto_at = 0;
	if (qp->type != IBV_QPT_RC || !roce_qp_can_send(qp) || qp->comp.una == qp->req.psn)
		return;
	roce_qp_stat(qp, ROCE_STAT_TIMEOUTS, 1);
	roce_trace_loss(qp, ROCE_TRACE_RTO, qp->comp.una);
	roce_rtt_expired(qp);
	comp_run(&c, COMP_RETRY);
}

void
roce_comp_rnr_done(struct roce_qp *qp)
{
	qp->req.rnr_at = 0;
	if (!roce_qp_can_send(qp))
		return;
	roce_qp_stat(qp, ROCE_STAT_RNR_RETRIES, 1);
	qp->rec->tx_lost(qp, qp->rec_priv, qp->comp.una, qp->req.psn, ROCE_LOSS_RNR);
	roce_req_rearm_now(qp);
}

void
roce_comp_cnp(struct roce_qp *qp)
{
	roce_qp_stat(qp, ROCE_STAT_RX_CNPS, 1);
	roce_lwin_on_ecn(&qp->lwin);
	qp->cc->on_cnp(qp, qp->cc_priv, qp->dev->now);
}
