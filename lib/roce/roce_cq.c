/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_cq.c
 * Completion queues: a ring of struct ibv_wc per CQ, polled by the user, with
 * optional arming (roce_req_notify_cq) reported through ops->cq_event. Beside
 * it, from the first completion that carries one, a ring of VRP loss maps
 * (docs/vrp.md), read through roce_poll_cq_ex.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_int.h"

struct roce_cq *
roce_create_cq(struct roce_dev *dev, int cqe)
{
	struct roce_cq *cq;

	if (cqe < 1 || (uint32_t)cqe > ROCE_MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	if (dev->ncq >= dev->cfg.max_cq) {
		errno = ENOMEM;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	cq->size = roce_pow2_at_least((uint32_t)cqe);
	cq->ring = calloc(cq->size, sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->dev = dev;
	roce_list_add_tail(&dev->cqs, &cq->node);
	dev->ncq++;
	return cq;
}

static void
cq_free(struct roce_cq *cq)
{
	roce_list_del(&cq->node);
	cq->dev->ncq--;
	free(cq->loss);
	free(cq->ring);
	free(cq);
}

int
roce_destroy_cq(struct roce_cq *cq)
{
	if (cq->refs)
		return -EBUSY;
	cq_free(cq);
	return 0;
}

void
roce_cq_destroy_all(struct roce_dev *dev)
{
	while (dev->cqs.next != &dev->cqs)
		cq_free(roce_container_of(dev->cqs.next, struct roce_cq, node));
}

int
roce_poll_cq(struct roce_cq *cq, int n, struct ibv_wc *wc)
{
	int i = 0;

	if (n < 0 || (n && !wc))
		return -EINVAL;
	while (i < n && cq->cons != cq->prod) {
		wc[i++] = cq->ring[cq->cons & (cq->size - 1)];
		cq->cons++;
	}
	return i;
}

int
roce_poll_cq_ex(struct roce_cq *cq, int n, struct roce_wc_ex *wc)
{
	int i = 0;

	if (n < 0 || (n && !wc))
		return -EINVAL;
	while (i < n && cq->cons != cq->prod) {
		uint32_t k = cq->cons & (cq->size - 1);

		wc[i].wc = cq->ring[k];
		if (cq->loss)
			wc[i].vrp = cq->loss[k];
		else
			memset(&wc[i].vrp, 0, sizeof(wc[i].vrp));
		wc[i].vrp_valid = cq->loss && cq->loss[k].len;
		i++;
		cq->cons++;
	}
	return i;
}

int
roce_req_notify_cq(struct roce_cq *cq, int solicited_only)
{
	cq->armed = solicited_only ? ROCE_CQ_ARM_SOLICITED : ROCE_CQ_ARM_NEXT;
	return 0;
}

unsigned int
roce_cq_count(const struct roce_cq *cq)
{
	return cq->prod - cq->cons;
}

/* Does this completion fire an armed CQ? Solicited arming also fires on errors. */
static bool
cq_event_due(const struct roce_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	switch (cq->armed) {
	case ROCE_CQ_ARM_NEXT:
		return true;
	case ROCE_CQ_ARM_SOLICITED:
		return solicited || wc->status != IBV_WC_SUCCESS;
	default:
		return false;
	}
}

void
roce_cq_push(struct roce_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	roce_cq_push_loss(cq, wc, solicited, NULL);
}

void
roce_cq_push_loss(struct roce_cq *cq, const struct ibv_wc *wc, bool solicited,
		  const struct roce_vrp_loss *loss)
{
	struct roce_dev *dev = cq->dev;
	uint32_t k = cq->prod & (cq->size - 1);

	if (roce_unlikely(cq->prod - cq->cons >= cq->size)) {
		/* IBTA: CQ overrun is a CQ error; we keep the CQ usable and count the loss */
		roce_dev_stat(dev, ROCE_STAT_CQ_OVERFLOW, 1);
		roce_log(dev, ROCE_LOG_ERR, "CQ overflow (%u entries): wr_id %llu lost", cq->size,
			 (unsigned long long)wc->wr_id);
		return;
	}
	/* the loss ring exists from the first completion that carries a loss map on */
	if (loss && !cq->loss) {
		cq->loss = calloc(cq->size, sizeof(*cq->loss));
		if (!cq->loss)
			roce_log(dev, ROCE_LOG_ERR,
				 "no memory for the CQ's VRP loss maps: wr_id %llu reports none",
				 (unsigned long long)wc->wr_id);
	}
	cq->ring[k] = *wc;
	if (cq->loss) {
		if (loss)
			cq->loss[k] = *loss;
		else
			memset(&cq->loss[k], 0, sizeof(cq->loss[k]));
	}
	cq->prod++;
	if (cq_event_due(cq, wc, solicited)) {
		cq->armed = ROCE_CQ_DISARMED;
		if (dev->ops.cq_event)
			dev->ops.cq_event(dev->ctx, cq);
	}
}

const char *
roce_wc_status_str(enum ibv_wc_status status)
{
	static const char *const names[] = {
#define WC_NAME(s) [s] = #s
	    WC_NAME(IBV_WC_SUCCESS),	       WC_NAME(IBV_WC_LOC_LEN_ERR),
	    WC_NAME(IBV_WC_LOC_QP_OP_ERR),     WC_NAME(IBV_WC_LOC_EEC_OP_ERR),
	    WC_NAME(IBV_WC_LOC_PROT_ERR),      WC_NAME(IBV_WC_WR_FLUSH_ERR),
	    WC_NAME(IBV_WC_MW_BIND_ERR),       WC_NAME(IBV_WC_BAD_RESP_ERR),
	    WC_NAME(IBV_WC_LOC_ACCESS_ERR),    WC_NAME(IBV_WC_REM_INV_REQ_ERR),
	    WC_NAME(IBV_WC_REM_ACCESS_ERR),    WC_NAME(IBV_WC_REM_OP_ERR),
	    WC_NAME(IBV_WC_RETRY_EXC_ERR),     WC_NAME(IBV_WC_RNR_RETRY_EXC_ERR),
	    WC_NAME(IBV_WC_LOC_RDD_VIOL_ERR),  WC_NAME(IBV_WC_REM_INV_RD_REQ_ERR),
	    WC_NAME(IBV_WC_REM_ABORT_ERR),     WC_NAME(IBV_WC_INV_EECN_ERR),
	    WC_NAME(IBV_WC_INV_EEC_STATE_ERR), WC_NAME(IBV_WC_FATAL_ERR),
	    WC_NAME(IBV_WC_RESP_TIMEOUT_ERR),  WC_NAME(IBV_WC_GENERAL_ERR),
#undef WC_NAME
	};

	if ((unsigned int)status < ROCE_ARRAY_SIZE(names) && names[status])
		return names[status];
	return "IBV_WC_UNKNOWN";
}
