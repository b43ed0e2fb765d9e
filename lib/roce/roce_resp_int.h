/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_resp_int.h
 * The responder's private interface: its state machine's states and per-packet
 * context (roce_resp.c), and what the state machine and the out-of-order
 * placement and VRP (roce_resp_ooo.c) call of each other.
 */
#ifndef ROCE_RESP_INT_H
#define ROCE_RESP_INT_H

#include "roce_int.h"

enum resp_state {
	RESP_CHECK_PSN,	   /* recovery verdict (RC), UC resynchronisation */
	RESP_CHECK_OP_SEQ, /* FIRST/MIDDLE/LAST sequence of the message in progress */
	RESP_CHECK_OP,	   /* operation supported, enabled on the QP, resources free */
	RESP_CHECK_LENGTH, /* C9-92 packet sizes, C9-94 DMA length */
	RESP_CHECK_RKEY,   /* R_Key, PD, access flags, bounds */
	RESP_GET_RECV,	   /* a receive WQE for SEND / WRITE with immediate */
	RESP_EXECUTE,	   /* place data, queue a READ, perform an atomic */
	RESP_COMPLETE,	   /* ePSN, MSN, message state, receive completion */
	RESP_ACK,	   /* coalesced ACK policy */
	RESP_DUPLICATE,	   /* C9-105 */
	RESP_NAK_SEQ,	   /* PSN sequence error, once per gap */
	RESP_NAK_RNR,	   /* no receive WQE */
	RESP_NAK,	   /* fatal NAK: invalid request, remote access, remote op */
	RESP_UC_ABORT,	   /* UC: drop the message in progress */
	RESP_PLACE,	   /* selective recovery: place a packet ahead of ePSN */
	RESP_DROP,
	RESP_DONE,
};

struct resp_ctx {
	struct roce_qp *qp;
	const struct roce_rx *rx;
	const struct roce_hdrs *h;
	uint16_t f;		    /* opcode flags */
	uint8_t nak;		    /* enum roce_nak_code for RESP_NAK */
	struct roce_recv_wqe *rwqe; /* receive WQE used by this packet */
	uint8_t *dst;		    /* resolved WRITE target or atomic word */
};

static inline struct roce_recv_wqe *
rq_head(struct roce_qp *qp)
{
	if (qp->rq.cons == qp->rq.prod)
		return NULL;
	return &qp->rq.wqe[qp->rq.cons & (qp->rq.size - 1)];
}

static inline bool
is_rc(const struct resp_ctx *c)
{
	return c->qp->type == IBV_QPT_RC;
}

static inline uint8_t
op_msg_kind(uint16_t f)
{
	if (f & ROCE_OPF_SEND)
		return ROCE_MSG_SEND;
	return (f & ROCE_OPF_WRITE) ? ROCE_MSG_WRITE : ROCE_MSG_NONE;
}

static inline uint8_t
ack_syndrome(void)
{
	return roce_aeth_syndrome(ROCE_AETH_ACK, ROCE_AETH_CREDIT_INVALID);
}

/* roce_resp.c */
void roce_resp_recv_cqe(struct roce_qp *qp, const struct roce_recv_wqe *wqe,
			enum ibv_wc_status status, const struct ibv_wc *tmpl, bool solicited);
void roce_resp_queue_nak(struct roce_qp *qp, enum roce_aeth_type type, uint8_t value, uint32_t psn);

/* roce_resp_ooo.c: selective recovery (placing ahead of ePSN, completing in order) and VRP */
const struct roce_vrp_wr *roce_resp_vrp_wr(struct roce_qp *qp, const struct roce_hdrs *h,
					   struct roce_vrp_wr *w);
struct roce_ooo_desc *roce_ooo_desc_at(struct roce_qp *qp, uint32_t psn);
void roce_ooo_write_guarded(struct roce_qp *qp, uint8_t *dst, const uint8_t *src, uint32_t len,
			    uint32_t from);
void roce_resp_vrp_nacks(struct roce_qp *qp);
enum resp_state roce_resp_place(struct resp_ctx *c);
void roce_resp_vrp_msg_end(struct roce_qp *qp, uint32_t last_psn);
uint32_t roce_ooo_advance(struct roce_qp *qp);

#endif /* ROCE_RESP_INT_H */
