/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_qp.c
 * Queue pairs: creation, the QP number table, and the IBTA QP state machine
 * (IBTA Vol. 1 ch. 10, QP states and transitions; the required and optional
 * attributes of each transition are IBTA's, as the ibv_modify_qp man page
 * lists them).
 *
 *   RESET -> INIT -> RTR -> RTS <-> SQD,  RTS -> SQE -> RTS (UC/UD),
 *   any -> RESET, any -> ERR (ERR flushes both queues).
 *
 * roce_modify_qp() validates the transition, the masks and every value
 * before it changes anything; then the entry handler of the new state runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_int.h"
#include "roce_psn_bitmap.h"

/* ------------------------------------------------------------------------- */
/* Names and small predicates                                                */
/* ------------------------------------------------------------------------- */

static const char *const qp_state_names[] = {
    [IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
    [IBV_QPS_RTS] = "RTS",     [IBV_QPS_SQD] = "SQD",	[IBV_QPS_SQE] = "SQE",
    [IBV_QPS_ERR] = "ERR",
};

const char *
roce_qp_state_name(enum ibv_qp_state s)
{
	return (unsigned int)s < ROCE_ARRAY_SIZE(qp_state_names) ? qp_state_names[s] : "UNKNOWN";
}

bool
roce_qp_can_receive(const struct roce_qp *qp)
{
	return qp->state == IBV_QPS_RTR || qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_SQD ||
	       qp->state == IBV_QPS_SQE;
}

bool
roce_qp_can_send(const struct roce_qp *qp)
{
	return qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_SQD;
}

bool
roce_pkey_match(uint16_t a, uint16_t b)
{
	/* the low 15 bits name the partition; the top bit is full membership */
	return (a & 0x7fff) == (b & 0x7fff) && (a & 0x7fff) != 0 && ((a | b) & 0x8000);
}

uint32_t
roce_qp_num(const struct roce_qp *qp)
{
	return qp->qpn;
}

enum ibv_qp_state
roce_qp_state(const struct roce_qp *qp)
{
	return qp->state;
}

void
roce_qp_psns(const struct roce_qp *qp, uint32_t *sq_psn, uint32_t *una, uint32_t *epsn)
{
	/* read from another thread (telemetry) while the engine runs: one load each */
	*sq_psn = __atomic_load_n(&qp->req.psn, __ATOMIC_RELAXED);
	*una = __atomic_load_n(&qp->comp.una, __ATOMIC_RELAXED);
	*epsn = __atomic_load_n(&qp->resp.epsn, __ATOMIC_RELAXED);
}

void *
roce_qp_context(const struct roce_qp *qp)
{
	return qp->context;
}

uint32_t
roce_qp_mtu(const struct roce_qp *qp)
{
	return qp->mtu;
}

void
roce_qp_stats(const struct roce_qp *qp, struct roce_stats *out)
{
	*out = qp->stats;
}

struct roce_qp *
roce_qp_lookup(struct roce_dev *dev, uint32_t qpn)
{
	uint32_t i = qpn - dev->cfg.first_qpn;

	if (qpn < dev->cfg.first_qpn || i >= dev->cfg.max_qp)
		return NULL;
	return dev->qp_tbl[i];
}

/* ------------------------------------------------------------------------- */
/* Creation and destruction                                                  */
/* ------------------------------------------------------------------------- */

static int
qp_cap_check(const struct ibv_qp_cap *cap)
{
	if (cap->max_send_wr > ROCE_MAX_QP_WR || cap->max_recv_wr > ROCE_MAX_QP_WR ||
	    cap->max_send_sge > ROCE_MAX_SGE || cap->max_recv_sge > ROCE_MAX_SGE ||
	    cap->max_inline_data > ROCE_MAX_INLINE)
		return -EINVAL;
	return 0;
}

static int
qp_queues_alloc(struct roce_qp *qp, const struct ibv_qp_cap *cap)
{
	struct roce_sq *sq = &qp->sq;
	struct roce_rq *rq = &qp->rq;

	sq->max_wr = cap->max_send_wr;
	sq->max_sge = cap->max_send_sge ? cap->max_send_sge : 1;
	sq->max_inline = cap->max_inline_data;
	sq->size = roce_pow2_at_least(sq->max_wr ? sq->max_wr : 1);
	sq->wqe = calloc(sq->size, sizeof(*sq->wqe));
	sq->sge = calloc((size_t)sq->size * sq->max_sge, sizeof(*sq->sge));
	sq->inl = sq->max_inline ? calloc(sq->size, sq->max_inline) : NULL;
	rq->max_wr = cap->max_recv_wr;
	rq->max_sge = cap->max_recv_sge ? cap->max_recv_sge : 1;
	rq->size = roce_pow2_at_least(rq->max_wr ? rq->max_wr : 1);
	rq->wqe = calloc(rq->size, sizeof(*rq->wqe));
	rq->sge = calloc((size_t)rq->size * rq->max_sge, sizeof(*rq->sge));
	if (!sq->wqe || !sq->sge || (sq->max_inline && !sq->inl) || !rq->wqe || !rq->sge)
		return -ENOMEM;
	for (uint32_t i = 0; i < sq->size; i++) {
		sq->wqe[i].sge = &sq->sge[(size_t)i * sq->max_sge];
		sq->wqe[i].inl = sq->inl ? &sq->inl[(size_t)i * sq->max_inline] : NULL;
	}
	for (uint32_t i = 0; i < rq->size; i++)
		rq->wqe[i].sge = &rq->sge[(size_t)i * rq->max_sge];
	return 0;
}

static int
qp_plugins_alloc(struct roce_qp *qp)
{
	const struct roce_dev_cfg *cfg = &qp->dev->cfg;

	qp->rec = roce_recovery_find(cfg->recovery);
	qp->vrp_tol = cfg->vrp;
	qp->cc = roce_cc_find(cfg->cc);
	qp->rec_priv = calloc(1, qp->rec->priv_size ? qp->rec->priv_size : 1);
	qp->cc_priv = calloc(1, qp->cc->priv_size ? qp->cc->priv_size : 1);
	return qp->rec_priv && qp->cc_priv ? 0 : -ENOMEM;
}

static void
qp_free(struct roce_qp *qp)
{
	free(qp->sq.wqe);
	free(qp->sq.sge);
	free(qp->sq.inl);
	free(qp->rq.wqe);
	free(qp->rq.sge);
	free(qp->rec_priv);
	free(qp->cc_priv);
	free(qp->ooo);
	free(qp->rd_ooo);
	free(qp->comp.vrp_sum);
	roce_rtt_free(qp);
	roce_fec_free(qp);
	free(qp);
}

static int
qpn_alloc(struct roce_dev *dev, uint32_t *idx)
{
	/* round robin, so a destroyed QPN is not reused while its packets may linger */
	for (uint32_t n = 0; n < dev->cfg.max_qp; n++) {
		uint32_t i = (dev->qp_next + n) % dev->cfg.max_qp;

		if (!dev->qp_tbl[i]) {
			dev->qp_next = (i + 1) % dev->cfg.max_qp;
			*idx = i;
			return 0;
		}
	}
	return -ENOMEM;
}

static void qp_reset(struct roce_qp *qp);

static int
qp_init_attr_check(struct roce_pd *pd, const struct ibv_qp_init_attr *ia)
{
	struct roce_cq *scq, *rcq;

	if (!ia || ia->srq)
		return -EINVAL;
	if (ia->qp_type != IBV_QPT_RC && ia->qp_type != IBV_QPT_UC && ia->qp_type != IBV_QPT_UD)
		return -EINVAL;
	scq = (struct roce_cq *)(void *)ia->send_cq;
	rcq = (struct roce_cq *)(void *)ia->recv_cq;
	if (!scq || !rcq || scq->dev != pd->dev || rcq->dev != pd->dev)
		return -EINVAL;
	return qp_cap_check(&ia->cap);
}

struct roce_qp *
roce_create_qp(struct roce_pd *pd, struct ibv_qp_init_attr *ia)
{
	struct roce_dev *dev = pd->dev;
	struct roce_qp *qp;
	uint32_t idx;
	int rc;

	rc = qp_init_attr_check(pd, ia);
	if (rc < 0 || qpn_alloc(dev, &idx) < 0) {
		errno = rc < 0 ? EINVAL : ENOMEM;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->dev = dev;
	if (qp_queues_alloc(qp, &ia->cap) < 0 || qp_plugins_alloc(qp) < 0) {
		qp_free(qp);
		errno = ENOMEM;
		return NULL;
	}
	qp->pd = pd;
	qp->scq = (struct roce_cq *)(void *)ia->send_cq;
	qp->rcq = (struct roce_cq *)(void *)ia->recv_cq;
	qp->context = ia->qp_context;
	qp->qpn = dev->cfg.first_qpn + idx;
	qp->type = ia->qp_type;
	qp->sq_sig_all = ia->sq_sig_all != 0;
	qp->cap = ia->cap;
	qp->window = dev->cfg.window_pkts;
	if (roce_rtt_alloc(qp) < 0) {
		qp_free(qp);
		errno = ENOMEM;
		return NULL;
	}
	qp->attr.port_num = 1;
	qp->attr.path_mtu = IBV_MTU_1024;
	qp->mtu = dev->cfg.mtu; /* UD: the port MTU; RC/UC: set by RTR */
	qp->pkey = dev->cfg.pkey[0];
	qp_reset(qp);
	pd->refs++;
	qp->scq->refs++;
	qp->rcq->refs++;
	dev->qp_tbl[idx] = qp;
	dev->nqp++;
	return qp;
}

static void
qp_unlink(struct roce_qp *qp)
{
	struct roce_dev *dev = qp->dev;

	dev->qp_tbl[qp->qpn - dev->cfg.first_qpn] = NULL;
	dev->nqp--;
	qp->pd->refs--;
	qp->scq->refs--;
	qp->rcq->refs--;
}

int
roce_destroy_qp(struct roce_qp *qp)
{
	qp_unlink(qp);
	qp_free(qp);
	return 0;
}

void
roce_qp_destroy_all(struct roce_dev *dev)
{
	for (uint32_t i = 0; i < dev->cfg.max_qp; i++)
		if (dev->qp_tbl[i])
			roce_destroy_qp(dev->qp_tbl[i]);
}

/* ------------------------------------------------------------------------- */
/* Transition table (IBTA ch. 10; ibv_modify_qp man page)                    */
/* ------------------------------------------------------------------------- */

enum { QT_RC, QT_UC, QT_UD, QT__COUNT };

struct qp_trans {
	bool valid;
	uint32_t req[QT__COUNT]; /**< required attributes besides IBV_QP_STATE */
	uint32_t opt[QT__COUNT]; /**< optional attributes */
};

#define RC_UC_INIT_ATTRS (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define UD_INIT_ATTRS (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)
#define UC_RTS_OPT                                                                                 \
	(IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |        \
	 IBV_QP_RATE_LIMIT)
#define RC_RTS_OPT (UC_RTS_OPT | IBV_QP_MIN_RNR_TIMER)
#define UD_RTS_OPT (IBV_QP_CUR_STATE | IBV_QP_QKEY | IBV_QP_RATE_LIMIT)
#define UC_RTR_ATTRS (IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define RC_SQD_OPT                                                                                 \
	(IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |     \
	 IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |        \
	 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC)
#define UC_SQD_OPT                                                                                 \
	(IBV_QP_PKEY_INDEX | IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |                   \
	 IBV_QP_PATH_MIG_STATE)

/* Every state may go to RESET and to ERR with no attribute but the state. */
#define TO_RESET_ERR [IBV_QPS_RESET] = {.valid = true}, [IBV_QPS_ERR] = {.valid = true}

static const struct qp_trans qp_trans_tbl[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] =
    {
	[IBV_QPS_RESET] =
	    {
		TO_RESET_ERR,
		[IBV_QPS_INIT] = {.valid = true,
				  .req = {RC_UC_INIT_ATTRS, RC_UC_INIT_ATTRS, UD_INIT_ATTRS}},
	    },
	[IBV_QPS_INIT] =
	    {
		TO_RESET_ERR,
		[IBV_QPS_INIT] = {.valid = true,
				  .opt = {RC_UC_INIT_ATTRS, RC_UC_INIT_ATTRS, UD_INIT_ATTRS}},
		[IBV_QPS_RTR] = {.valid = true,
				 .req = {UC_RTR_ATTRS | IBV_QP_MAX_DEST_RD_ATOMIC |
					     IBV_QP_MIN_RNR_TIMER,
					 UC_RTR_ATTRS, 0},
				 .opt = {IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
					 IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
					 IBV_QP_PKEY_INDEX | IBV_QP_QKEY}},
	    },
	[IBV_QPS_RTR] =
	    {
		TO_RESET_ERR,
		[IBV_QPS_RTS] = {.valid = true,
				 .req = {IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
					 IBV_QP_SQ_PSN, IBV_QP_SQ_PSN},
				 .opt = {RC_RTS_OPT, UC_RTS_OPT, UD_RTS_OPT}},
	    },
	[IBV_QPS_RTS] =
	    {
		TO_RESET_ERR,
		[IBV_QPS_RTS] = {.valid = true, .opt = {RC_RTS_OPT, UC_RTS_OPT, UD_RTS_OPT}},
		[IBV_QPS_SQD] = {.valid = true,
				 .opt = {IBV_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_EN_SQD_ASYNC_NOTIFY,
					 IBV_QP_EN_SQD_ASYNC_NOTIFY}},
	    },
	[IBV_QPS_SQD] =
	    {
		TO_RESET_ERR,
		[IBV_QPS_RTS] = {.valid = true, .opt = {RC_RTS_OPT, UC_RTS_OPT, UD_RTS_OPT}},
		[IBV_QPS_SQD] = {.valid = true,
				 .opt = {RC_SQD_OPT, UC_SQD_OPT, IBV_QP_PKEY_INDEX | IBV_QP_QKEY}},
	    },
	[IBV_QPS_SQE] =
	    {
		TO_RESET_ERR,
		/* SQE exists for UC and UD only (RC send errors go to ERR) */
		[IBV_QPS_RTS] = {.valid = true,
				 .opt = {0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS,
					 IBV_QP_CUR_STATE | IBV_QP_QKEY}},
	    },
	[IBV_QPS_ERR] =
	    {
		TO_RESET_ERR,
	    },
};

/* Attributes this engine does not implement (automatic path migration). */
#define QP_ATTR_UNSUPPORTED (IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE)

static int
qp_type_index(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? QT_RC : t == IBV_QPT_UC ? QT_UC : QT_UD;
}

/* Is cur -> next legal for this QP type, with exactly the allowed masks? */
static int
qp_trans_check(const struct roce_qp *qp, enum ibv_qp_state cur, enum ibv_qp_state next,
	       uint32_t mask)
{
	const struct qp_trans *t;
	int ti = qp_type_index(qp->type);
	uint32_t attrs = mask & ~(uint32_t)IBV_QP_STATE;

	if ((unsigned int)cur > IBV_QPS_ERR || (unsigned int)next > IBV_QPS_ERR)
		return -EINVAL;
	t = &qp_trans_tbl[cur][next];
	if (!t->valid || (cur == IBV_QPS_SQE && qp->type == IBV_QPT_RC && next == IBV_QPS_RTS))
		return -EINVAL;
	if ((attrs & t->req[ti]) != t->req[ti])
		return -EINVAL; /* a required attribute is missing */
	if (attrs & ~(t->req[ti] | t->opt[ti]))
		return -EINVAL; /* an attribute not allowed in this transition */
	if (attrs & QP_ATTR_UNSUPPORTED)
		return -EINVAL;
	return 0;
}

#define QP_ACCESS_ALL                                                                              \
	(unsigned int)(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		       IBV_ACCESS_REMOTE_ATOMIC)

/* Range checks of every attribute present in @p mask. */
static int
qp_attr_check(const struct roce_qp *qp, const struct ibv_qp_attr *a, uint32_t mask)
{
	const struct roce_dev_cfg *cfg = &qp->dev->cfg;

	if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != qp->state)
		return -EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index >= cfg->pkey_count)
		return -EINVAL;
	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if ((mask & IBV_QP_ACCESS_FLAGS) && (a->qp_access_flags & ~QP_ACCESS_ALL))
		return -EINVAL;
	if ((mask & IBV_QP_PATH_MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096 ||
					 (128u << a->path_mtu) > cfg->mtu))
		return -EINVAL;
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > ROCE_QPN_MASK)
		return -EINVAL;
	if (((mask & IBV_QP_RQ_PSN) && a->rq_psn > ROCE_PSN_MASK) ||
	    ((mask & IBV_QP_SQ_PSN) && a->sq_psn > ROCE_PSN_MASK))
		return -EINVAL;
	if (((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > ROCE_MAX_INIT_RD_ATOMIC) ||
	    ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > ROCE_MAX_RD_ATOMIC))
		return -EINVAL;
	if (((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > ROCE_MAX_TIMER_CODE) ||
	    ((mask & IBV_QP_TIMEOUT) && a->timeout > ROCE_MAX_TIMER_CODE))
		return -EINVAL;
	if (((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > ROCE_MAX_RETRY_CNT) ||
	    ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > ROCE_RNR_RETRY_INFINITE))
		return -EINVAL;
	return 0;
}

/* ------------------------------------------------------------------------- */
/* Addressing                                                                */
/* ------------------------------------------------------------------------- */

/* The peer MAC of a connected QP: set explicitly, or asked of the app. */
static int
qp_peer_mac(struct roce_qp *qp, const struct ibv_ah_attr *ah, uint8_t mac[6])
{
	struct roce_dev *dev = qp->dev;

	if (qp->remote_mac_set) {
		memcpy(mac, qp->remote_mac, 6);
		return 0;
	}
	if (dev->ops.resolve_mac && dev->ops.resolve_mac(dev->ctx, &ah->grh.dgid, mac) == 0)
		return 0;
	return -EHOSTUNREACH;
}

/* Frame template of a connected QP for the path in @p ah (validated, not yet applied). */
static int
qp_path_tmpl(struct roce_qp *qp, const struct ibv_ah_attr *ah, uint32_t dest_qpn,
	     struct roce_pkt *tmpl)
{
	static const uint8_t no_mac[6];
	uint8_t mac[6];
	int rc;

	/* the attributes first (EINVAL), the peer's MAC second (EHOSTUNREACH) */
	if (roce_tmpl_init(qp->dev, tmpl, ah, no_mac) < 0)
		return -EINVAL;
	rc = qp_peer_mac(qp, ah, mac);
	if (rc < 0) {
		qp_log(qp, ROCE_LOG_ERR, "no MAC for the peer GID: call roce_qp_set_remote_mac()");
		return rc;
	}
	memcpy(tmpl->l2.dst, mac, sizeof(mac));
	tmpl->udp.sport = roce_path_sport(ah->grh.flow_label, qp->qpn, dest_qpn);
	return 0;
}

int
roce_qp_set_remote_mac(struct roce_qp *qp, const uint8_t mac[6])
{
	if (qp->type == IBV_QPT_UD)
		return -EINVAL;
	memcpy(qp->remote_mac, mac, 6);
	qp->remote_mac_set = true;
	memcpy(qp->tmpl.l2.dst, mac, 6); /* effective at once once the path exists */
	return 0;
}

/* ------------------------------------------------------------------------- */
/* State entry handlers                                                      */
/* ------------------------------------------------------------------------- */

/* RESET: empty queues without completions, all protocol state to zero. */
static void
qp_reset(struct roce_qp *qp)
{
	qp->sq.prod = qp->sq.cons = 0;
	qp->rq.prod = qp->rq.cons = 0;
	roce_req_reset(qp);
	roce_comp_reset(qp);
	roce_resp_reset(qp);
	memset(qp->rec_priv, 0, qp->rec->priv_size);
	memset(qp->cc_priv, 0, qp->cc->priv_size);
	roce_lwin_init(&qp->lwin);
	roce_fec_reset(qp);
}

static void
qp_apply_attrs(struct roce_qp *qp, const struct ibv_qp_attr *a, uint32_t mask)
{
	struct ibv_qp_attr *q = &qp->attr;

	if (mask & IBV_QP_PKEY_INDEX) {
		q->pkey_index = a->pkey_index;
		qp->pkey = qp->dev->cfg.pkey[a->pkey_index];
	}
	if (mask & IBV_QP_PORT)
		q->port_num = a->port_num;
	if (mask & IBV_QP_ACCESS_FLAGS)
		q->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_QKEY)
		q->qkey = a->qkey;
	if (mask & IBV_QP_AV)
		q->ah_attr = a->ah_attr;
	if (mask & IBV_QP_PATH_MTU) {
		q->path_mtu = a->path_mtu;
		qp->mtu = 128u << a->path_mtu;
	}
	if (mask & IBV_QP_DEST_QPN)
		q->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		q->rq_psn = a->rq_psn;
	if (mask & IBV_QP_SQ_PSN)
		q->sq_psn = a->sq_psn;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_TIMEOUT)
		q->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		q->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		q->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		q->en_sqd_async_notify = a->en_sqd_async_notify;
	if (mask & IBV_QP_RATE_LIMIT) {
		q->rate_limit = a->rate_limit;
		qp->rate_kbps = a->rate_limit; /* verbs: kbit/s, 0 = unlimited */
	}
}

/*
 * Selective recovery: descriptors of the packets placed ahead of ePSN, one
 * per PSN of the out-of-order span (--max-ooo, default the window). Without
 * them (no memory) nothing is placed out of order: the mode's retransmissions
 * still deliver every packet in order.
 */
static void
qp_ooo_alloc(struct roce_qp *qp)
{
	uint32_t span = qp->dev->cfg.max_ooo ? qp->dev->cfg.max_ooo : qp->window;
	uint32_t size = 1;

	if (span > ROCE_PSN_BITMAP_BITS)
		span = ROCE_PSN_BITMAP_BITS;
	qp->max_ooo = span;
	if (qp->type != IBV_QPT_RC || !(qp->rec->flags & ROCE_REC_F_PLACE)) {
		free(qp->ooo); /* a mode that places nothing (any more) */
		free(qp->rd_ooo);
		qp->ooo = NULL;
		qp->rd_ooo = NULL;
		qp->ooo_size = 0;
		return;
	}
	if (!qp->rd_ooo)
		qp->rd_ooo = malloc(sizeof(*qp->rd_ooo));
	if (qp->rd_ooo)
		roce_psn_bitmap_init(qp->rd_ooo, qp->comp.una);
	while (size < span)
		size <<= 1;
	if (qp->ooo && qp->ooo_size == size) {
		memset(qp->ooo, 0, sizeof(*qp->ooo) * size);
		return;
	}
	free(qp->ooo);
	qp->ooo = calloc(size, sizeof(*qp->ooo));
	qp->ooo_size = qp->ooo ? size : 0;
	if (!qp->ooo)
		qp_log(qp, ROCE_LOG_WARNING, "no memory for %u out-of-order descriptors", size);
}

/* RTR: the responder starts at rq_psn (IBTA: ePSN is initialised from the RQ PSN). */
static void
qp_enter_rtr(struct roce_qp *qp)
{
	roce_resp_reset(qp);
	roce_fec_reset(qp);
	qp_ooo_alloc(qp);
	qp->rec->init(qp, qp->rec_priv);
}

/* RTS from RTR: the requester starts at sq_psn with full retry budgets. */
static void
qp_enter_rts(struct roce_qp *qp, enum ibv_qp_state from)
{
	if (from != IBV_QPS_RTR)
		return; /* SQD/SQE -> RTS: resume where the requester stopped */
	roce_req_reset(qp);
	roce_comp_reset(qp);
	roce_rtt_reset(qp);
	roce_lwin_init(&qp->lwin);
	roce_lwin_slow_start(&qp->lwin, qp->dev->cfg.loss_window_init);
	qp->cc->init(qp, qp->cc_priv);
}

/* SQD drains: started WQEs finish, no new one starts (roce_req.c checks the state). */
static bool
qp_sq_draining(const struct roce_qp *qp)
{
	const struct roce_sq *sq = &qp->sq;

	if (sq->cons != qp->req.next)
		return true;
	return qp->req.next != sq->prod &&
	       sq->wqe[qp->req.next & (sq->size - 1)].state != ROCE_WQE_POSTED;
}

static void
qp_enter(struct roce_qp *qp, enum ibv_qp_state from, enum ibv_qp_state to)
{
	qp->state = to;
	qp->attr.qp_state = to;
	switch (to) {
	case IBV_QPS_RESET:
		qp_reset(qp);
		break;
	case IBV_QPS_INIT:
		break;
	case IBV_QPS_RTR:
		qp_enter_rtr(qp);
		break;
	case IBV_QPS_RTS:
		qp_enter_rts(qp, from);
		break;
	case IBV_QPS_SQD:
	case IBV_QPS_SQE:
	case IBV_QPS_ERR:
		/* SQD needs no action; SQE and ERR come via roce_qp_to_sqe/_to_err */
		break;
	default:
		break;
	}
}

int
roce_modify_qp(struct roce_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	uint32_t mask = (uint32_t)attr_mask;
	enum ibv_qp_state cur = qp->state;
	enum ibv_qp_state next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	struct roce_pkt tmpl;
	bool new_path;
	int rc;

	if (!attr)
		return -EINVAL;
	qp->dev->now = qp->dev->ops.now_ns(qp->dev->ctx);
	rc = qp_trans_check(qp, cur, next, mask);
	if (rc == 0)
		rc = qp_attr_check(qp, attr, mask);
	if (rc < 0) {
		qp_log(qp, ROCE_LOG_WARNING, "modify %s -> %s with mask 0x%x rejected",
		       roce_qp_state_name(cur), roce_qp_state_name(next), mask);
		return rc;
	}
	new_path = (mask & IBV_QP_AV) && qp->type != IBV_QPT_UD;
	if (new_path) {
		uint32_t dqpn = (mask & IBV_QP_DEST_QPN) ? attr->dest_qp_num : qp->attr.dest_qp_num;

		rc = qp_path_tmpl(qp, &attr->ah_attr, dqpn, &tmpl);
		if (rc < 0)
			return rc;
	}
	/* validated: from here on nothing fails */
	if (next == IBV_QPS_ERR) {
		qp_apply_attrs(qp, attr, mask);
		roce_qp_to_err(qp);
		return 0;
	}
	qp_apply_attrs(qp, attr, mask);
	if (new_path)
		qp->tmpl = tmpl;
	if (next != cur || next == IBV_QPS_RESET)
		qp_enter(qp, cur, next);
	return 0;
}

int
roce_query_qp(struct roce_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
	      struct ibv_qp_init_attr *init_attr)
{
	(void)attr_mask; /* everything is cheap to report */
	if (!attr)
		return -EINVAL;
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->cap = qp->cap;
	attr->sq_draining = qp->state == IBV_QPS_SQD && qp_sq_draining(qp);
	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = qp->context;
		init_attr->send_cq = roce_cq_ibv(qp->scq);
		init_attr->recv_cq = roce_cq_ibv(qp->rcq);
		init_attr->cap = qp->cap;
		init_attr->qp_type = qp->type;
		init_attr->sq_sig_all = qp->sq_sig_all;
	}
	return 0;
}

/* ------------------------------------------------------------------------- */
/* Internal transitions                                                      */
/* ------------------------------------------------------------------------- */

void
roce_qp_to_err(struct roce_qp *qp)
{
	if (qp->state == IBV_QPS_ERR)
		return;
	qp_log(qp, ROCE_LOG_INFO, "%s -> ERR", roce_qp_state_name(qp->state));
	qp->state = IBV_QPS_ERR;
	qp->attr.qp_state = IBV_QPS_ERR;
	/* IBTA: in the Error state outstanding and new WRs complete with flush errors */
	roce_comp_flush(qp);
	roce_resp_flush(qp);
	qp->req.rto_at = qp->req.rnr_at = qp->req.wake_at = 0;
	qp->resp.ack_at = 0;
	qp->resp.ack_now = qp->resp.nak_pending = false;
	for (uint32_t i = 0; i < ROCE_MAX_RD_ATOMIC; i++)
		qp->resp.res[i].pending = false;
}

void
roce_qp_to_sqe(struct roce_qp *qp)
{
	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)
		return;
	qp_log(qp, ROCE_LOG_INFO, "%s -> SQE", roce_qp_state_name(qp->state));
	qp->state = IBV_QPS_SQE;
	qp->attr.qp_state = IBV_QPS_SQE;
	roce_comp_flush(qp);
}

/* ------------------------------------------------------------------------- */
/* Plug-in selection                                                         */
/* ------------------------------------------------------------------------- */

static int
qp_swap_priv(void **priv, size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (!p)
		return -ENOMEM;
	free(*priv);
	*priv = p;
	return 0;
}

int
roce_qp_set_recovery(struct roce_qp *qp, const char *name)
{
	const struct roce_recovery_ops *ops = roce_recovery_find(name);

	if (!ops)
		return -ENOENT;
	if (qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_INIT)
		return -EINVAL;
	if (qp_swap_priv(&qp->rec_priv, ops->priv_size) < 0)
		return -ENOMEM;
	qp->rec = ops;
	return 0;
}

int
roce_qp_set_vrp(struct roce_qp *qp, const struct vrp_tolerance *tol, const char **err)
{
	uint8_t cell[2];
	struct vrp_params p;

	*err = NULL;
	if (!tol || tol->n_critical > ROCE_VRP_QP_CRITICAL) {
		*err = "at most 14 critical ranges (the first and last packets are critical too)";
		return -EINVAL;
	}
	/* the per-message checks (ranges inside the message) come when a message arrives */
	struct vrp_tolerance t = *tol;

	t.n_critical = 0;
	if (vrp_tolerance_to_params(&t, 1, qp->mtu ? qp->mtu : 1, &p, cell, err) < 0)
		return -EINVAL;
	qp->vrp_tol = *tol;
	return 0;
}

int
roce_qp_vrp_loss(const struct roce_qp *qp, struct roce_vrp_loss *out)
{
	if (!qp->resp.vrp_have_last)
		return -ENOENT;
	*out = qp->resp.vrp_last;
	return 0;
}

int
roce_qp_vrp_peer_loss(const struct roce_qp *qp, struct roce_vrp_loss *out)
{
	if (!qp->comp.vrp_have_peer_last)
		return -ENOENT;
	*out = qp->comp.vrp_peer_last;
	return 0;
}

int
roce_qp_set_cc(struct roce_qp *qp, const char *name)
{
	const struct roce_cc_ops *ops = roce_cc_find(name);

	if (!ops)
		return -ENOENT;
	if (qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_INIT)
		return -EINVAL;
	if (qp_swap_priv(&qp->cc_priv, ops->priv_size) < 0)
		return -ENOMEM;
	qp->cc = ops;
	return 0;
}

int
roce_qp_set_window(struct roce_qp *qp, uint32_t pkts)
{
	uint32_t old = qp->window;

	if (pkts < 1 || pkts > ROCE_MAX_WINDOW_PKTS)
		return -EINVAL;
	qp->window = pkts;
	if (roce_rtt_alloc(qp) < 0) { /* the send-stamp ring covers the window */
		qp->window = old;
		return -ENOMEM;
	}
	return 0;
}
