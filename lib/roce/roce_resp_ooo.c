/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_resp_ooo.c
 * Responder, selective recovery (docs/transport.md §5.1): packets placed
 * ahead of ePSN (ROCE_REC_F_PLACE), their out-of-order descriptors, the
 * RACK/SACK notices, and the in-order completion once a hole is filled; VRP
 * (docs/vrp.md): a WRITE's tolerance (VTETH), NACKs, tolerated holes
 * zero-filled, the per-message loss summary. The state machine that calls
 * it is roce_resp.c.
 */
#include <string.h>

#include "roce_resp_int.h"

/*
 * VRP: the tolerance a WRITE's FIRST carries (VTETH, 0xE2), decoded for the
 * mode; NULL when it carries none. A VTETH with reserved flag bits, more
 * than ROCE_VTETH_CRIT ranges or a loss above 100 % is refused and counted
 * (vrp_bad_tolerance): the message is then delivered reliably (0 %).
 */
const struct roce_vrp_wr *
roce_resp_vrp_wr(struct roce_qp *qp, const struct roce_hdrs *h, struct roce_vrp_wr *w)
{
	const struct roce_vteth *vt = &h->vt;

	if (!(roce_opcode_info(h->bth.opcode)->ext & ROCE_EXT_VTETH))
		return NULL;
	memset(w, 0, sizeof(*w));
	if ((vt->flags & ~ROCE_VTETH_F_ALL) || vt->n_crit > ROCE_VTETH_CRIT ||
	    vt->loss_bp > VRP_LOSS_BP_MAX) {
		roce_qp_stat(qp, ROCE_STAT_RX_VRP_BAD_TOL, 1);
		w->set = ROCE_VRP_WR_LOSS; /* loss_bp 0: reliable */
		return w;
	}
	roce_qp_stat(qp, ROCE_STAT_RX_VRP_WR_MSGS, 1);
	w->set = vt->flags;
	w->loss_bp = vt->loss_bp;
	w->window = vt->window;
	w->max_burst = vt->max_burst == UINT32_MAX ? VRP_BURST_UNLIMITED : vt->max_burst;
	w->n_critical = vt->n_crit;
	for (unsigned int i = 0; i < vt->n_crit; i++)
		w->critical[i] = (struct vrp_range){vt->crit[i].off, vt->crit[i].len};
	return w;
}

struct roce_ooo_desc *
roce_ooo_desc_at(struct roce_qp *qp, uint32_t psn)
{
	return &qp->ooo[psn & (qp->ooo_size - 1)];
}

/*
 * The overwrite hazard Go-Back-ONE (Wang, NJUPT, section IV.D, after IRN)
 * names: "the old data may overwrite the new". Write @p len bytes to @p dst
 * except where a packet of a later PSN (from @p from on) already placed its
 * data: in PSN order that later packet would have written last, so its bytes
 * stay. Recursion splits around each overlap; a descriptor checked against
 * the whole range is not checked against its parts again.
 */
void
roce_ooo_write_guarded(struct roce_qp *qp, uint8_t *dst, const uint8_t *src, uint32_t len,
		       uint32_t from)
{
	struct roce_resp_state *r = &qp->resp;

	for (uint32_t psn = from; len && roce_psn_cmp(psn, r->ooo_hi) < 0;
	     psn = roce_psn_add(psn, 1)) {
		const struct roce_ooo_desc *d = roce_ooo_desc_at(qp, psn);
		uintptr_t a = (uintptr_t)dst, b = a + len, da, db, lo, hi;

		if (!d->valid || d->psn != psn || !d->dst || !d->len)
			continue;
		da = (uintptr_t)d->dst;
		db = da + d->len;
		if (db <= a || da >= b)
			continue;
		lo = da > a ? da : a;
		hi = db < b ? db : b;
		roce_qp_stat(qp, ROCE_STAT_RX_OOO_GUARDED, hi - lo);
		if (lo > a)
			roce_ooo_write_guarded(qp, dst, src, (uint32_t)(lo - a),
					       roce_psn_add(psn, 1));
		if (hi < b)
			roce_ooo_write_guarded(qp, dst + (hi - a), src + (hi - a),
					       (uint32_t)(b - hi), roce_psn_add(psn, 1));
		return;
	}
	if (len)
		memcpy(dst, src, len);
}

/* Checks and placement of one out-of-order packet; false: not placeable, dropped. */
static bool
ooo_place(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	const struct roce_hdrs *h = c->h;
	uint16_t f = c->f;
	uint16_t ext = roce_opcode_info(h->bth.opcode)->ext;
	uint32_t len = c->rx->len, psn = c->rx->psn;
	struct roce_ooo_desc *d = roce_ooo_desc_at(qp, psn);
	uint8_t *dst = NULL;
	bool len_ok;

	if (!(f & ROCE_OPF_LAST))
		len_ok = len == qp->mtu && !h->bth.pad;
	else if (!(f & ROCE_OPF_FIRST))
		len_ok = len >= 1 && len <= qp->mtu;
	else
		len_ok = len <= qp->mtu;
	if (!len_ok || (d->valid && d->psn != psn))
		return false;
	if (f & ROCE_OPF_WRITE) {
		/* a standard MIDDLE/LAST does not say where it goes; with immediate it completes a
		 * receive WQE */
		if (!(ext & ROCE_EXT_RETH) || (f & ROCE_OPF_IMM) ||
		    !(qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE))
			return false;
		if ((f & ROCE_OPF_FIRST) &&
		    ((f & ROCE_OPF_LAST) ? h->reth.dlen != len : h->reth.dlen <= len))
			return false;
		if ((f & ROCE_OPF_FIRST) && h->reth.dlen &&
		    !roce_mr_remote(qp->pd, h->reth.rkey, h->reth.va, h->reth.dlen,
				    IBV_ACCESS_REMOTE_WRITE))
			return false;
		if (len) {
			dst = roce_mr_remote(qp->pd, h->reth.rkey, h->reth.va, len,
					     IBV_ACCESS_REMOTE_WRITE);
			if (!dst)
				return false;
			roce_ooo_write_guarded(qp, dst, c->rx->payload, len, roce_psn_add(psn, 1));
		}
	} else if ((f & ROCE_OPF_SEND) && (ext & ROCE_EXT_SPETH) && !(f & ROCE_OPF_INV)) {
		/* the receive WQE by its sequence number, posted but not yet reached */
		uint32_t k = h->speth.wqe_seq - qp->resp.rwqe_seq;
		const struct roce_recv_wqe *w;

		if (k >= qp->rq.prod - qp->rq.cons)
			return false;
		w = &qp->rq.wqe[(qp->rq.cons + k) & (qp->rq.size - 1)];
		if (h->speth.offset > w->length || len > w->length - h->speth.offset ||
		    ((f & ROCE_OPF_FIRST) && h->speth.offset != 0))
			return false;
		if (roce_sge_scatter(qp->pd, w->sge, w->num_sge, h->speth.offset, c->rx->payload,
				     len) < 0)
			return false;
	} else {
		return false; /* READ/atomic requests execute in order only */
	}
	*d = (struct roce_ooo_desc){
	    .valid = true,
	    .se = h->bth.se,
	    .sl = c->rx->pkt.l2.has_vlan ? net_vlan_pcp(c->rx->pkt.l2.vlan_tci) : 0,
	    .f = f,
	    .psn = psn,
	    .len = len,
	    .imm = h->imm,
	    .va = h->reth.va,
	    .rkey = h->reth.rkey,
	    .dlen = h->reth.dlen,
	    .dst = dst,
	    .wqe_seq = h->speth.wqe_seq,
	    .off = h->speth.offset,
	};
	qp->resp.ooo_n++;
	if (roce_psn_cmp(psn, qp->resp.ooo_hi) >= 0 || qp->resp.ooo_n == 1)
		qp->resp.ooo_hi = roce_psn_add(psn, 1);
	return true;
}

/*
 * Send a RACK or SACK now: ePSN - 1 in the BTH, @p psn received in the
 * NTETH, with the run of PSNs placed right before it (up to 255), so the
 * next notice makes good a lost one. A VRP ACK's run covers the tolerated
 * losses among them too (docs/wire.md).
 */
static void
resp_notice(struct roce_qp *qp, enum roce_rx_notice n, uint32_t psn)
{
	struct roce_pkt p = qp->tmpl;
	bool rack = n == ROCE_NOTICE_RACK;
	uint32_t run = 0;

	while (qp->ooo && run < 255) {
		uint32_t q = roce_psn_add(psn, ROCE_PSN_MASK - run); /* psn - run - 1 */
		const struct roce_ooo_desc *d = roce_ooo_desc_at(qp, q);

		if (roce_psn_cmp(q, qp->resp.epsn) < 0)
			break;
		/* VRP: a loss the mode tolerated is reported too: the sender must not resend it */
		if ((!d->valid || d->psn != q) && !((qp->rec->flags & ROCE_REC_F_TOLERATE) &&
						    qp->rec->rx_tolerated(qp, qp->rec_priv, q)))
			break;
		run++;
	}

	roce_bth_init(qp, &p,
		      rack			 ? ROCE_XOP_RACK
		      : n == ROCE_NOTICE_VRP_ACK ? ROCE_XOP_VRP_ACK
						 : ROCE_XOP_SACK,
		      roce_psn_add(qp->resp.epsn, ROCE_PSN_MASK));
	p.h.aeth.syndrome = ack_syndrome();
	p.h.aeth.msn = qp->resp.msn;
	p.h.nt_psn = psn;
	p.h.nt_run = (uint8_t)run;
	/* refused by the port: the next notice or the sender's timer covers it */
	if (roce_tx_pkt(qp, &p, 0, false) == 0)
		roce_qp_stat(qp,
			     rack			? ROCE_STAT_TX_RACKS
			     : n == ROCE_NOTICE_VRP_ACK ? ROCE_STAT_TX_VRP_ACKS
							: ROCE_STAT_TX_SACKS,
			     1);
}

/*
 * VRP: send the NACKs the mode has pending (VRP §3.1, the NACK tag): each
 * names a PSN and the run of PSNs right before it that must be resent, with
 * the cumulative ACK (ePSN - 1) in the BTH, as a VRP ACK. A NACK the port
 * refuses or the path loses is made good by the sender's timer.
 */
void
roce_resp_vrp_nacks(struct roce_qp *qp)
{
	uint32_t psn, run;

	if (!(qp->rec->flags & ROCE_REC_F_TOLERATE))
		return;
	while (qp->rec->rx_nack(qp, qp->rec_priv, qp->resp.epsn, &psn, &run)) {
		struct roce_pkt p = qp->tmpl;

		roce_bth_init(qp, &p, ROCE_XOP_VRP_NACK,
			      roce_psn_add(qp->resp.epsn, ROCE_PSN_MASK));
		p.h.aeth.syndrome = ack_syndrome();
		p.h.aeth.msn = qp->resp.msn;
		p.h.nt_psn = psn;
		p.h.nt_run = (uint8_t)run;
		if (roce_tx_pkt(qp, &p, 0, false) == 0)
			roce_qp_stat(qp, ROCE_STAT_TX_VRP_NACKS, 1);
	}
}

enum resp_state
roce_resp_place(struct resp_ctx *c)
{
	struct roce_qp *qp = c->qp;
	bool placed = is_rc(c) && qp->ooo && ooo_place(c);
	enum roce_rx_notice n;

	roce_qp_stat(qp, placed ? ROCE_STAT_RX_OOO_PLACED : ROCE_STAT_RX_OOO_UNPLACED, 1);
	n = qp->rec->rx_placed
		? qp->rec->rx_placed(qp, qp->rec_priv, qp->resp.epsn, c->rx->psn, placed)
		: ROCE_NOTICE_NONE;
	if (qp->rec->flags & ROCE_REC_F_TOLERATE) {
		/* VRP: a WRITE's first packet makes its message known; tolerated holes complete */
		if (placed && (c->f & ROCE_OPF_WRITE) && (c->f & ROCE_OPF_FIRST)) {
			struct roce_vrp_wr w;

			qp->rec->rx_msg(qp, qp->rec_priv, qp->resp.epsn, c->rx->psn,
					c->h->reth.dlen, roce_resp_vrp_wr(qp, c->h, &w));
		}
		roce_ooo_advance(qp);
	}
	if (n != ROCE_NOTICE_NONE)
		resp_notice(qp, n, c->rx->psn);
	roce_resp_vrp_nacks(qp);
	return RESP_DONE;
}

/*
 * VRP (ROCE_REC_F_TOLERATE): a WRITE message ended. Publish its loss record
 * (roce_qp_vrp_loss) and count it in the per-message loss histogram.
 */
/*
 * VRP: tell the requester what the WRITE message ending at @p last_psn lost:
 * a VRP LOSS summary (0xE3, docs/wire.md) with the message's loss record in
 * its VLETH, sent before the ACK that covers the message, so the requester's
 * completion can carry it (roce_poll_cq_ex). Only on a QP running vrp, which
 * both sides negotiated: a standard peer never gets one. A summary the port
 * refuses or the path loses leaves that completion without a map.
 */
static void
resp_vrp_summary(struct roce_qp *qp, uint32_t last_psn, const struct roce_vrp_loss *l)
{
	struct roce_pkt p = qp->tmpl;

	roce_bth_init(qp, &p, ROCE_XOP_VRP_LOSS, last_psn);
	p.h.aeth.syndrome = ack_syndrome();
	p.h.aeth.msn = l->msn;
	memset(&p.h.vl, 0, sizeof(p.h.vl));
	p.h.vl.len = l->len;
	p.h.vl.lost_pkts = l->lost_pkts;
	p.h.vl.lost_bytes = (uint32_t)l->lost_bytes; /* <= len, a 32-bit RETH length */
	p.h.vl.n_holes = (uint8_t)l->n_holes;
	p.h.vl.flags = l->holes_truncated ? ROCE_VLETH_F_TRUNC : 0;
	for (uint32_t i = 0; i < l->n_holes && i < ROCE_VLETH_HOLES; i++) {
		p.h.vl.holes[i].off = (uint32_t)l->holes[i].off;
		p.h.vl.holes[i].len = (uint32_t)l->holes[i].len;
	}
	roce_qp_stat(qp,
		     roce_tx_pkt(qp, &p, 0, false) == 0 ? ROCE_STAT_TX_VRP_SUMMARIES
							: ROCE_STAT_TX_VRP_SUM_UNSENT,
		     1);
}

void
roce_resp_vrp_msg_end(struct roce_qp *qp, uint32_t last_psn)
{
	struct roce_resp_state *r = &qp->resp;
	uint32_t n = r->vrp_cur.lost_pkts;

	if (!(qp->rec->flags & ROCE_REC_F_TOLERATE))
		return;
	r->vrp_cur.msn = r->msn;
	r->vrp_cur.len = r->wr_len;
	r->vrp_last = r->vrp_cur;
	r->vrp_have_last = true;
	memset(&r->vrp_cur, 0, sizeof(r->vrp_cur));
	resp_vrp_summary(qp, last_psn, &r->vrp_last);
	roce_qp_stat(qp, ROCE_STAT_RX_VRP_MSGS, 1);
	roce_qp_stat(qp,
		     n == 0   ? ROCE_STAT_RX_VRP_HIST_0
		     : n == 1 ? ROCE_STAT_RX_VRP_HIST_1
		     : n < 4  ? ROCE_STAT_RX_VRP_HIST_2
		     : n < 16 ? ROCE_STAT_RX_VRP_HIST_4
			      : ROCE_STAT_RX_VRP_HIST_16,
		     1);
}

/*
 * VRP: ePSN reached a loss the mode tolerated. It belongs to the WRITE in
 * progress (its first packet is critical, so the engine knows the message):
 * zero-fill its bytes in the target memory (overwriting what was there,
 * docs/vrp.md), count them and record the hole. False: not a WRITE in
 * progress or outside it (a broken stream), the caller fails the QP.
 */
static bool
vrp_fill_hole(struct roce_qp *qp)
{
	static const uint8_t zeros[ROCE_MAX_MTU];
	struct roce_resp_state *r = &qp->resp;
	struct roce_vrp_loss *l = &r->vrp_cur;
	uint32_t len;
	uint8_t *dst;

	if (r->msg != ROCE_MSG_WRITE || r->wr_off >= r->wr_len)
		return false;
	len = r->wr_len - r->wr_off < qp->mtu ? r->wr_len - r->wr_off : qp->mtu;
	dst =
	    roce_mr_remote(qp->pd, r->wr_rkey, r->wr_va + r->wr_off, len, IBV_ACCESS_REMOTE_WRITE);
	if (!dst)
		return false;
	if (r->ooo_n)
		roce_ooo_write_guarded(qp, dst, zeros, len, roce_psn_add(r->epsn, 1));
	else
		memset(dst, 0, len);
	if (l->n_holes && l->holes[l->n_holes - 1].off + l->holes[l->n_holes - 1].len == r->wr_off)
		l->holes[l->n_holes - 1].len += len;
	else if (l->n_holes < ROCE_VRP_HOLES)
		l->holes[l->n_holes++] = (struct roce_vrp_hole){r->wr_off, len};
	else
		l->holes_truncated = true;
	l->lost_pkts++;
	l->lost_bytes += len;
	r->wr_off += len;
	roce_qp_stat(qp, ROCE_STAT_RX_VRP_TOLERATED, 1);
	roce_qp_stat(qp, ROCE_STAT_RX_VRP_ZERO_BYTES, len);
	if (r->wr_off == r->wr_len) { /* not reached: the last packet is critical */
		r->msn = roce_psn_add(r->msn, 1);
		r->msg = ROCE_MSG_NONE;
		roce_resp_vrp_msg_end(qp, r->epsn);
	}
	return true;
}

/* Complete one placed packet in order (the checks of CHECK_OP_SEQ and RKEY, then COMPLETE). */
static bool
ooo_complete(struct roce_qp *qp, const struct roce_ooo_desc *d)
{
	struct roce_resp_state *r = &qp->resp;
	uint8_t kind = op_msg_kind(d->f);
	bool seq_ok = r->msg == ROCE_MSG_NONE ? (d->f & ROCE_OPF_FIRST) != 0
					      : kind == r->msg && !(d->f & ROCE_OPF_FIRST);

	if (!seq_ok)
		return false;
	if (kind == ROCE_MSG_WRITE) {
		if (d->f & ROCE_OPF_FIRST) {
			r->wr_va = d->va;
			r->wr_rkey = d->rkey;
			r->wr_len = d->dlen;
			r->wr_off = 0;
		} else if (d->va != r->wr_va + r->wr_off || d->rkey != r->wr_rkey) {
			return false;
		}
		if (r->wr_off + d->len > r->wr_len ||
		    ((d->f & ROCE_OPF_LAST) && r->wr_off + d->len != r->wr_len))
			return false;
		r->wr_off += d->len;
	} else {
		if (d->wqe_seq != r->rwqe_seq || d->off != r->recv_off || !rq_head(qp))
			return false;
		r->recv_off += d->len;
	}
	roce_qp_stat(qp, ROCE_STAT_RX_REQ_PKTS, 1);
	roce_qp_stat(qp, ROCE_STAT_RX_REQ_BYTES, d->len);
	r->msg = (d->f & ROCE_OPF_LAST) ? ROCE_MSG_NONE : kind;
	if (d->f & ROCE_OPF_LAST) {
		r->msn = roce_psn_add(r->msn, 1);
		if (kind == ROCE_MSG_WRITE)
			roce_resp_vrp_msg_end(qp, d->psn);
		if (kind == ROCE_MSG_SEND) {
			struct ibv_wc wc;
			bool imm = d->f & ROCE_OPF_IMM;

			memset(&wc, 0, sizeof(wc));
			wc.opcode = IBV_WC_RECV;
			wc.byte_len = r->recv_off;
			wc.wc_flags = imm ? IBV_WC_WITH_IMM : 0;
			wc.imm_data = imm ? htobe32(d->imm) : 0;
			wc.src_qp = qp->attr.dest_qp_num;
			wc.pkey_index = qp->attr.pkey_index;
			wc.sl = d->sl;
			roce_resp_recv_cqe(qp, rq_head(qp), IBV_WC_SUCCESS, &wc, d->se);
		}
	}
	return true;
}

/*
 * ePSN moved: complete, in PSN order, the packets the mode says were already
 * placed from there on (IBTA: completions in order). Returns how many.
 */
uint32_t
roce_ooo_advance(struct roce_qp *qp)
{
	struct roce_resp_state *r = &qp->resp;
	uint32_t n, i;

	if (!qp->ooo || !qp->rec->rx_advance)
		return 0;
	n = qp->rec->rx_advance(qp, qp->rec_priv, r->epsn);
	for (i = 0; i < n; i++) {
		struct roce_ooo_desc *d = roce_ooo_desc_at(qp, r->epsn);

		if ((!d->valid || d->psn != r->epsn) && (qp->rec->flags & ROCE_REC_F_TOLERATE) &&
		    qp->rec->rx_tolerated(qp, qp->rec_priv, r->epsn)) {
			/* VRP: a tolerated loss, zero-filled (no descriptor to forget) */
			if (!vrp_fill_hole(qp)) {
				qp_log(qp, ROCE_LOG_WARNING,
				       "PSN 0x%06x: a tolerated loss outside an RDMA WRITE",
				       r->epsn);
				roce_qp_stat(qp, ROCE_STAT_RX_INV_REQ, 1);
				roce_resp_queue_nak(qp, ROCE_AETH_NAK, ROCE_NAK_INVALID_REQ,
						    r->epsn);
				r->fatal = true;
				break;
			}
			r->epsn = roce_psn_add(r->epsn, 1);
			continue;
		}
		if (!d->valid || d->psn != r->epsn || !ooo_complete(qp, d)) {
			/* placed out of order, but out of the opcode sequence in order */
			qp_log(qp, ROCE_LOG_WARNING,
			       "PSN 0x%06x placed out of order breaks the message sequence",
			       r->epsn);
			roce_qp_stat(qp, ROCE_STAT_RX_INV_REQ, 1);
			roce_resp_queue_nak(qp, ROCE_AETH_NAK, ROCE_NAK_INVALID_REQ, r->epsn);
			r->fatal = true;
			break;
		}
		d->valid = false;
		r->ooo_n--;
		r->ack_psn = r->epsn;
		r->epsn = roce_psn_add(r->epsn, 1);
		r->unacked++;
	}
	return i;
}
