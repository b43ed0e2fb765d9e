/* SPDX-License-Identifier: BSD-3-Clause */
#include "tr_harness.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_pkt.h"

#define TR_QKEY 0x11111111u
#define TR_ALL_ACCESS                                                                              \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |               \
	 IBV_ACCESS_REMOTE_ATOMIC)

uint64_t
tr_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- ops ---- */

static void queue_frame(struct tr_wire *w, int dir, const uint8_t *data, size_t len);

static bool
rule_matches(const struct tr_rule *r, int dir, const struct roce_pkt *p)
{
	uint16_t f = roce_opcode_info(p->h.bth.opcode)->flags;
	bool m;

	if (r->count <= 0 || (r->dir >= 0 && r->dir != dir))
		return false;
	/* a RACK/SACK rule names the PSN it reports received (NTETH), not its BTH PSN */
	if (r->psn >= 0 && (uint32_t)r->psn != ((r->match == TR_RACK || r->match == TR_SACK ||
						 r->match == TR_VRP_NACK)
						    ? p->h.nt_psn
						    : p->h.bth.psn))
		return false;
	switch (r->match) {
	case TR_REQ:
		m = f & ROCE_OPF_REQ;
		break;
	case TR_RESP:
		m = f & ROCE_OPF_RESP;
		break;
	case TR_ACK:
		m = f & ROCE_OPF_ACK;
		break;
	case TR_READ_RESP:
		m = (f & ROCE_OPF_RESP) && (f & ROCE_OPF_READ);
		break;
	case TR_ATOMIC_ACK:
		m = (f & ROCE_OPF_RESP) && (f & ROCE_OPF_ATOMIC);
		break;
	case TR_RACK:
		m = p->h.bth.opcode == ROCE_XOP_RACK;
		break;
	case TR_SACK:
		m = p->h.bth.opcode == ROCE_XOP_SACK;
		break;
	case TR_FEC:
		m = p->h.bth.opcode == ROCE_XOP_FEC_REPAIR;
		break;
	case TR_VRP_NACK:
		m = p->h.bth.opcode == ROCE_XOP_VRP_NACK;
		break;
	case TR_VRP_LOSS:
		m = p->h.bth.opcode == ROCE_XOP_VRP_LOSS;
		break;
	default:
		m = true;
		break;
	}
	return m;
}

/* A TR_REFUSE rule for this frame: the port refuses it (its count spent by one). */
static bool
tr_refused(struct tr_wire *w, int dir, const uint8_t *frame, size_t len)
{
	struct roce_pkt p;

	if (roce_parse(frame, len, &p, ROCE_PARSE_NO_ICRC) != 0)
		return false;
	for (int i = 0; i < w->nrules; i++) {
		struct tr_rule *r = &w->rules[i];

		if (r->action == TR_REFUSE && rule_matches(r, dir, &p)) {
			r->count--;
			return true;
		}
	}
	return false;
}

/* The fault to apply to a frame: a rule first, then the random model. */
static int
fault_for(struct tr_wire *w, int dir, uint8_t *frame, size_t len)
{
	struct roce_pkt p;

	if (roce_parse(frame, len, &p, ROCE_PARSE_NO_ICRC) == 0) {
		for (int i = 0; i < w->nrules; i++) {
			struct tr_rule *r = &w->rules[i];

			if (r->action != TR_REFUSE && rule_matches(r, dir, &p)) {
				r->count--;
				if (r->action == TR_MARK_CE) {
					net_ip_set_ecn(frame + p.l3_off, NET_ECN_CE);
					return -1;
				}
				return (int)r->action;
			}
		}
	}
	if (w->p_drop + w->p_dup + w->p_reorder) {
		unsigned int x = (unsigned int)(tr_rand(&w->rng) % 1000);

		if (x < w->p_drop)
			return TR_DROP;
		if (x < w->p_drop + w->p_dup)
			return TR_DUP;
		if (x < w->p_drop + w->p_dup + w->p_reorder)
			return TR_DELAY;
	}
	return -1;
}

static int
op_tx(void *ctx, const uint8_t *frame, size_t len)
{
	struct tr_side *s = ctx;
	struct tr_wire *w = s->w;
	uint8_t *copy;
	int fault;

	if (s->paused)
		return ROCE_TX_PAUSED;
	if (s->refuse_tx > 0) {
		s->refuse_tx--;
		return -ENOBUFS;
	}
	if (tr_refused(w, s->idx, frame, len))
		return -ENOBUFS;
	if (s->lend && frame == s->lend)
		s->lend_used++;
	w->sent++;
	copy = malloc(len);
	memcpy(copy, frame, len);
	fault = fault_for(w, s->idx, copy, len);
	if (fault == TR_DROP) {
		w->dropped++;
	} else if (fault == TR_DUP) {
		w->duplicated++;
		queue_frame(w, s->idx, copy, len);
		queue_frame(w, s->idx, copy, len);
	} else if (fault == TR_DELAY && !w->held[s->idx]) {
		struct tr_frame *f = calloc(1, sizeof(*f));

		w->delayed++;
		f->data = malloc(len);
		memcpy(f->data, copy, len);
		f->len = len;
		w->held[s->idx] = f;
	} else {
		queue_frame(w, s->idx, copy, len);
	}
	free(copy);
	return 0;
}

static uint64_t
op_now(void *ctx)
{
	return ((struct tr_side *)ctx)->w->now;
}

void (*tr_log_hook)(int side, enum roce_log_level level, const char *msg);

static void
op_log(void *ctx, enum roce_log_level level, const char *msg)
{
	if (tr_log_hook)
		tr_log_hook(((struct tr_side *)ctx)->idx, level, msg);
	if (getenv("TR_LOG"))
		fprintf(stderr, "[%c%d] %s\n", 'A' + ((struct tr_side *)ctx)->idx, level, msg);
}

static void
op_cq_event(void *ctx, struct roce_cq *cq)
{
	(void)cq;
	((struct tr_side *)ctx)->cq_events++;
}

static int
op_resolve(void *ctx, const union ibv_gid *gid, uint8_t mac[6])
{
	struct tr_side *s = ctx;
	struct tr_side *peer = &s->w->side[!s->idx];

	if (memcmp(gid->raw, peer->gid.raw, 16) != 0)
		return -ENOENT;
	memcpy(mac, peer->mac, 6);
	return 0;
}

/* tr_opts.trace: keep the engine's loss-recovery trace events (roce_trace.h) */
static void
op_trace(void *ctx, const struct roce_trace_event *ev)
{
	struct tr_side *s = ctx;

	if (s->ntrace < TR_MAX_TRACE)
		s->trace[s->ntrace] = *ev;
	s->ntrace++;
}

static const struct roce_dev_ops tr_ops = {
    .tx = op_tx,
    .now_ns = op_now,
    .log = op_log,
    .cq_event = op_cq_event,
    .resolve_mac = op_resolve,
};

/*
 * Zero-copy transmit (TR_TX_BUF=1): lend one buffer, poisoned at every loan, so a
 * frame that comes back in it holds only what the engine wrote for that frame
 * (a payload gathered for a refused frame must be gathered again).
 */
static uint8_t *
op_tx_buf(void *ctx, size_t len)
{
	struct tr_side *s = ctx;

	if (len > ROCE_MAX_FRAME)
		return NULL;
	s->lend_calls++;
	memset(s->lend, 0xa5, ROCE_MAX_FRAME);
	return s->lend;
}

static const struct roce_dev_ops tr_ops_lend = {
    .tx = op_tx,
    .now_ns = op_now,
    .log = op_log,
    .cq_event = op_cq_event,
    .resolve_mac = op_resolve,
    .tx_buf = op_tx_buf,
};

/* ---- queues ---- */

static void
queue_push(struct tr_queue *q, struct tr_frame *f)
{
	f->next = NULL;
	if (q->tail)
		q->tail->next = f;
	else
		q->head = f;
	q->tail = f;
	q->count++;
}

static struct tr_frame *
queue_pop(struct tr_queue *q)
{
	struct tr_frame *f = q->head;

	if (!f)
		return NULL;
	q->head = f->next;
	if (!q->head)
		q->tail = NULL;
	q->count--;
	return f;
}

static void
queue_frame(struct tr_wire *w, int dir, const uint8_t *data, size_t len)
{
	struct tr_frame *f = calloc(1, sizeof(*f));

	f->data = malloc(len);
	memcpy(f->data, data, len);
	f->len = len;
	queue_push(&w->q[dir], f);
	if (w->held[dir]) {
		/* the held frame goes behind the one that just passed it */
		queue_push(&w->q[dir], w->held[dir]);
		w->held[dir] = NULL;
	}
	if (w->q[dir].count > w->max_queued[dir])
		w->max_queued[dir] = w->q[dir].count;
}

static void
frame_free(struct tr_frame *f)
{
	free(f->data);
	free(f);
}

bool
tr_deliver_one(struct tr_wire *w, int dir)
{
	struct tr_frame *f = queue_pop(&w->q[dir]);

	if (!f)
		return false;
	w->delivered++;
	roce_dev_rx(w->side[!dir].dev, f->data, f->len);
	frame_free(f);
	return true;
}

bool
tr_discard_one(struct tr_wire *w, int dir)
{
	struct tr_frame *f = queue_pop(&w->q[dir]);

	if (!f)
		return false;
	frame_free(f);
	return true;
}

void
tr_poll(struct tr_wire *w)
{
	roce_dev_poll(w->side[TR_A].dev, w->now);
	roce_dev_poll(w->side[TR_B].dev, w->now);
}

static bool
release_held(struct tr_wire *w)
{
	for (int d = 0; d < 2; d++) {
		if (w->held[d]) {
			queue_push(&w->q[d], w->held[d]);
			w->held[d] = NULL;
			return true;
		}
	}
	return false;
}

unsigned int
tr_run(struct tr_wire *w, unsigned int max_steps)
{
	unsigned int steps = 0;

	while (steps++ < max_steps) {
		bool moved = false;
		uint64_t t;

		if (!w->capture_only) {
			moved |= tr_deliver_one(w, TR_A);
			moved |= tr_deliver_one(w, TR_B);
		}
		tr_poll(w);
		if (moved || roce_dev_busy(w->side[TR_A].dev) || roce_dev_busy(w->side[TR_B].dev))
			continue;
		if (w->capture_only)
			break;
		if (w->q[TR_A].count || w->q[TR_B].count || release_held(w))
			continue; /* frames on the wire: time stands still until they land */
		t = roce_dev_next_deadline(w->side[TR_A].dev);
		if (roce_dev_next_deadline(w->side[TR_B].dev) < t)
			t = roce_dev_next_deadline(w->side[TR_B].dev);
		if (t == UINT64_MAX)
			break;
		w->now = t > w->now ? t : w->now + 1;
	}
	return steps;
}

/* ---- set-up ---- */

static void
side_gid(union ibv_gid *gid, int idx, bool ipv6)
{
	memset(gid, 0, sizeof(*gid));
	if (ipv6) {
		gid->raw[0] = 0xfd;
		gid->raw[15] = (uint8_t)(idx + 1);
	} else {
		net_ip4_to_mapped(0x0a000001u + (uint32_t)idx, gid->raw);
	}
}

static void
side_init(struct tr_wire *w, int idx, const struct tr_opts *o)
{
	struct tr_side *s = &w->side[idx];
	struct roce_dev_cfg cfg;
	struct ibv_qp_init_attr ia;

	s->w = w;
	s->idx = idx;
	memcpy(s->mac, (uint8_t[6]){0x02, 0, 0, 0, 0, (uint8_t)(idx + 1)}, 6);
	side_gid(&s->gid, idx, o->ipv6);
	roce_dev_cfg_init(&cfg);
	memcpy(cfg.mac, s->mac, 6);
	cfg.gid[0] = s->gid;
	cfg.max_qp = 8;
	cfg.vlan = o->vlan;
	cfg.vlan_id = 100;
	cfg.pcp = 3;
	cfg.dscp = 26;
	cfg.ecn = !o->no_ecn;
	if (o->log_level)
		cfg.log_level = o->log_level;
	cfg.loss_window = !o->no_loss_window;
	cfg.loss_window_init = o->loss_window_init;
	if (o->cc)
		snprintf(cfg.cc, sizeof(cfg.cc), "%s", o->cc);
	if (o->recovery)
		snprintf(cfg.recovery, sizeof(cfg.recovery), "%s", o->recovery);
	cfg.max_ooo = o->max_ooo;
	cfg.link_bps = o->link_bps;
	cfg.rto_low_ns = o->rto_low_ns;
	cfg.fec_adapt = o->fec_adapt;
	cfg.rto_high_ns = o->rto_high_ns;
	cfg.rto_mode = o->rto_fixed ? ROCE_RTO_FIXED : ROCE_RTO_ADAPTIVE;
	if (o->rto_min_ns)
		cfg.rto_min_ns = o->rto_min_ns;
	if (o->rto_max_ns)
		cfg.rto_max_ns = o->rto_max_ns;
	if (o->rto_stall_ns)
		cfg.rto_stall_ns = o->rto_stall_ns;
	if (o->no_rto_stall)
		cfg.rto_stall_ns = 0;
	if (getenv("TR_TX_BUF") && atoi(getenv("TR_TX_BUF")))
		s->lend = malloc(ROCE_MAX_FRAME);
	struct roce_dev_ops ops = s->lend ? tr_ops_lend : tr_ops;

	if (o->trace)
		ops.trace = op_trace;
	s->dev = roce_dev_create(&cfg, &ops, s);
	s->pd = roce_pd_alloc(s->dev);
	s->buf_size = o->buf_size ? o->buf_size : TR_BUF_SIZE;
	s->buf = aligned_alloc(64, s->buf_size);
	memset(s->buf, 0, s->buf_size);
	s->mr =
	    roce_reg_mr(s->pd, s->buf + o->mr_guard, s->buf_size - 2 * o->mr_guard, TR_ALL_ACCESS);
	s->scq = roce_create_cq(s->dev, o->cqe ? (int)o->cqe : 65536);
	s->rcq = roce_create_cq(s->dev, o->cqe ? (int)o->cqe : 65536);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = roce_cq_ibv(s->scq);
	ia.recv_cq = roce_cq_ibv(s->rcq);
	ia.qp_type = s->type = o->type ? o->type : IBV_QPT_RC;
	ia.sq_sig_all = o->sq_sig_all;
	ia.cap.max_send_wr = o->max_send_wr ? o->max_send_wr : 1024;
	ia.cap.max_recv_wr = o->max_recv_wr ? o->max_recv_wr : 1024;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = o->max_sge ? o->max_sge : 4;
	ia.cap.max_inline_data = o->max_inline ? o->max_inline : 256;
	s->qp = roce_create_qp(s->pd, &ia);
	if (o->fec && roce_qp_set_fec(s->qp, o->fec, NULL, 0) != 0)
		abort();
	if (o->window)
		roce_qp_set_window(s->qp, o->window);
}

static void
side_connect(struct tr_wire *w, int idx, const struct tr_opts *o)
{
	struct tr_side *s = &w->side[idx], *peer = &w->side[!idx];
	enum ibv_qp_type type = o->type ? o->type : IBV_QPT_RC;
	struct ibv_qp_attr a;
	int mask;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags =
	    o->access ? o->access
		      : IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	a.qkey = TR_QKEY;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	if (roce_modify_qp(s->qp, &a, mask))
		abort();

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (type != IBV_QPT_UD) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = peer->gid;
		a.ah_attr.grh.hop_limit = 64;
		a.path_mtu = o->mtu ? o->mtu : IBV_MTU_1024;
		a.dest_qp_num = roce_qp_num(peer->qp);
		a.rq_psn = o->psn_set ? (idx ? o->sq_psn : o->rq_psn) : 0x100;
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = o->min_rnr_timer ? o->min_rnr_timer : 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (type == IBV_QPT_RC)
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if (roce_modify_qp(s->qp, &a, mask))
		abort();

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = o->psn_set ? (idx ? o->rq_psn : o->sq_psn) : 0x100;
	a.timeout = o->timeout ? o->timeout : 14;
	a.retry_cnt = o->retry_cnt ? o->retry_cnt : 7;
	a.rnr_retry = o->rnr_retry ? o->rnr_retry : 7;
	a.max_rd_atomic = o->max_rd_atomic ? o->max_rd_atomic : 16;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (type == IBV_QPT_RC)
		mask |=
		    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	if (roce_modify_qp(s->qp, &a, mask))
		abort();
}

void
tr_init(struct tr_wire *w, const struct tr_opts *o)
{
	static const struct tr_opts none;

	if (!o)
		o = &none;
	memset(w, 0, sizeof(*w));
	w->opts = *o;
	side_init(w, TR_A, o);
	side_init(w, TR_B, o);
	side_connect(w, TR_A, o);
	side_connect(w, TR_B, o);
	for (int i = 0; i < 2 && w->side[i].type == IBV_QPT_UD; i++) {
		struct tr_side *s = &w->side[i], *peer = &w->side[!i];
		struct ibv_ah_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.is_global = 1;
		attr.grh.dgid = peer->gid;
		attr.grh.hop_limit = 64;
		s->ah = roce_create_ah(s->pd, &attr, peer->mac);
	}
}

void
tr_reconnect(struct tr_wire *w)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};

	for (int i = 0; i < 2; i++)
		roce_modify_qp(w->side[i].qp, &a, IBV_QP_STATE);
	for (int i = 0; i < 2; i++)
		side_connect(w, i, &w->opts);
}

void
tr_fini(struct tr_wire *w)
{
	for (int d = 0; d < 2; d++) {
		while (tr_discard_one(w, d))
			;
		if (w->held[d])
			frame_free(w->held[d]);
		roce_dev_destroy(w->side[d].dev);
		free(w->side[d].buf);
		/* every loan ends in a frame or in a later loan; asked but never used is a bug */
		if (w->side[d].lend && w->side[d].lend_calls && !w->side[d].lend_used) {
			fprintf(stderr,
				"TR_TX_BUF: side %c lent %llu buffers, no frame came back in one\n",
				'A' + d, (unsigned long long)w->side[d].lend_calls);
			abort();
		}
		free(w->side[d].lend);
	}
	memset(w, 0, sizeof(*w));
}

void
tr_rule(struct tr_wire *w, int dir, enum tr_match match, int64_t psn, enum tr_action action,
	int count)
{
	if (w->nrules < TR_MAX_RULES)
		w->rules[w->nrules++] = (struct tr_rule){dir, match, psn, action, count};
}

void
tr_random_faults(struct tr_wire *w, uint64_t seed, unsigned int drop, unsigned int dup,
		 unsigned int reorder)
{
	w->rng = seed;
	w->p_drop = drop;
	w->p_dup = dup;
	w->p_reorder = reorder;
}

/* ---- work requests ---- */

int
tr_post_send(struct tr_side *s, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t loff, uint32_t len,
	     uint32_t roff, unsigned int flags)
{
	struct tr_side *peer = &s->w->side[!s->idx];
	struct ibv_sge sge = {(uintptr_t)(s->buf + loff), len, s->mr->lkey};
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = flags;
	if (s->type == IBV_QPT_UD) {
		wr.wr.ud.ah = roce_ah_ibv(s->ah);
		wr.wr.ud.remote_qpn = roce_qp_num(peer->qp);
		wr.wr.ud.remote_qkey = TR_QKEY;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)(peer->buf + roff);
		wr.wr.rdma.rkey = peer->mr->rkey;
	}
	return roce_post_send(s->qp, &wr, &bad);
}

int
tr_post_imm(struct tr_side *s, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t loff, uint32_t len,
	    uint32_t roff, uint32_t imm_host)
{
	return tr_post_vrp(s, op, wr_id, loff, len, roff, imm_host, NULL);
}

int
tr_post_vrp(struct tr_side *s, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t loff, uint32_t len,
	    uint32_t roff, uint32_t imm_host, const struct roce_vrp_wr *vrp)
{
	struct tr_side *peer = &s->w->side[!s->idx];
	struct ibv_sge sge = {(uintptr_t)(s->buf + loff), len, s->mr->lkey};
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htobe32(imm_host);
	wr.wr.rdma.remote_addr = (uintptr_t)(peer->buf + roff);
	wr.wr.rdma.rkey = peer->mr->rkey;
	return roce_post_send_vrp(s->qp, &wr, vrp, &bad);
}

int
tr_post_atomic(struct tr_side *s, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t loff,
	       uint32_t roff, uint64_t compare_add, uint64_t swap)
{
	struct tr_side *peer = &s->w->side[!s->idx];
	struct ibv_sge sge = {(uintptr_t)(s->buf + loff), 8, s->mr->lkey};
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)(peer->buf + roff);
	wr.wr.atomic.rkey = peer->mr->rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return roce_post_send(s->qp, &wr, &bad);
}

int
tr_post_recv(struct tr_side *s, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = {(uintptr_t)(s->buf + off), len, s->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad;

	return roce_post_recv(s->qp, &wr, &bad);
}

int
tr_poll_cq(struct tr_side *s, bool recv, struct ibv_wc *wc, int n)
{
	return roce_poll_cq(recv ? s->rcq : s->scq, n, wc);
}

uint64_t
tr_dev_stat(const struct tr_side *s, enum roce_stat id)
{
	struct roce_stats st;

	roce_dev_stats(s->dev, &st);
	return st.v[id];
}

void
tr_fill(struct tr_side *s, uint32_t off, uint32_t len, uint32_t seed)
{
	uint64_t st = seed;

	for (uint32_t i = 0; i < len; i++)
		s->buf[off + i] = (uint8_t)tr_rand(&st);
}
