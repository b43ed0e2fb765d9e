/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_dev.c
 * The device: configuration, object tables, logging, and the poll loop that
 * fires each QP's timers and lets it transmit.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_int.h"
#include "roce_psn_bitmap.h"

void
roce_dev_cfg_init(struct roce_dev_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->gid_count = 1;
	cfg->pkey[0] = ROCE_DEFAULT_PKEY;
	cfg->pkey_count = 1;
	cfg->hop_limit = ROCE_DEFAULT_HOP_LIMIT;
	cfg->mtu = ROCE_DEFAULT_MTU;
	cfg->max_qp = ROCE_DEFAULT_MAX_QP;
	cfg->first_qpn = ROCE_FIRST_QPN;
	cfg->max_cq = ROCE_DEFAULT_MAX_CQ;
	cfg->max_mr = ROCE_DEFAULT_MAX_MR;
	cfg->max_pd = ROCE_DEFAULT_MAX_PD;
	cfg->max_ah = ROCE_DEFAULT_MAX_AH;
	cfg->window_pkts = ROCE_DEFAULT_WINDOW_PKTS;
	cfg->loss_window = true;
	cfg->cnp_dscp = ROCE_DEFAULT_CNP_DSCP;
	cfg->ackreq_every = ROCE_DEFAULT_ACKREQ_EVERY;
	cfg->ack_every = ROCE_DEFAULT_ACK_EVERY;
	cfg->ack_delay_ns = ROCE_DEFAULT_ACK_DELAY_NS;
	cfg->tx_burst = ROCE_DEFAULT_TX_BURST;
	cfg->check_dst_mac = true;
	cfg->rto_mode = ROCE_RTO_ADAPTIVE;
	cfg->rto_min_ns = ROCE_DEFAULT_RTO_MIN_NS;
	cfg->rto_max_ns = ROCE_DEFAULT_RTO_MAX_NS;
	cfg->rto_stall_ns = ROCE_DEFAULT_RTO_STALL_NS;
	snprintf(cfg->recovery, sizeof(cfg->recovery), "%s", roce_recovery_gbn.name);
	cfg->vrp.max_burst = VRP_BURST_UNLIMITED; /* with 0 % loss: reliable */
	snprintf(cfg->cc, sizeof(cfg->cc), "%s", roce_cc_none.name);
	cfg->log_level = ROCE_LOG_DEBUG;
}

void
roce_log(struct roce_dev *dev, enum roce_log_level level, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!dev->ops.log || level > dev->cfg.log_level)
		return;
	/* peers can trigger most messages: at most ROCE_LOG_PER_SEC per second */
	if (dev->now - dev->log_window >= ROCE_NS_PER_SEC) {
		dev->log_window = dev->now;
		dev->log_count = 0;
	}
	if (dev->log_count++ >= ROCE_LOG_PER_SEC)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dev->ops.log(dev->ctx, level, msg);
}

void
roce_trace(const struct roce_qp *qp, const char *machine, uint32_t psn, const char *from,
	   const char *to)
{
	char msg[128];

	if (!qp->dev->ops.log)
		return;
	snprintf(msg, sizeof(msg), "qp 0x%06x: %s PSN 0x%06x: %s -> %s", qp->qpn, machine, psn,
		 from, to);
	qp->dev->ops.log(qp->dev->ctx, ROCE_LOG_TRACE, msg);
}

static bool
mtu_valid(uint32_t mtu)
{
	return mtu >= ROCE_MIN_MTU && mtu <= ROCE_MAX_MTU && (mtu & (mtu - 1)) == 0;
}

#define CFG_CHECK(dev, cond, ...)                                                                  \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			roce_log((dev), ROCE_LOG_ERR, "roce_dev_cfg: " __VA_ARGS__);               \
			return -EINVAL;                                                            \
		}                                                                                  \
	} while (0)

/* Validate everything before anything is allocated from it. */
static int
dev_cfg_check(struct roce_dev *dev, const struct roce_dev_cfg *c)
{
	CFG_CHECK(dev, c->gid_count >= 1 && c->gid_count <= ROCE_MAX_GID,
		  "gid_count %u not in 1..%u", c->gid_count, ROCE_MAX_GID);
	CFG_CHECK(dev, c->pkey_count >= 1 && c->pkey_count <= ROCE_MAX_PKEY,
		  "pkey_count %u not in 1..%u", c->pkey_count, ROCE_MAX_PKEY);
	CFG_CHECK(dev, c->vlan_id <= 4095, "vlan_id %u not in 0..4095", c->vlan_id);
	CFG_CHECK(dev, c->pcp <= 7, "pcp %u not in 0..7", c->pcp);
	CFG_CHECK(dev, c->dscp <= 63, "dscp %u not in 0..63", c->dscp);
	CFG_CHECK(dev, mtu_valid(c->mtu), "mtu %u is not 256, 512, 1024, 2048 or 4096", c->mtu);
	CFG_CHECK(dev, c->max_qp >= 1 && c->max_qp <= ROCE_MAX_QP, "max_qp %u not in 1..%u",
		  c->max_qp, ROCE_MAX_QP);
	CFG_CHECK(dev, c->first_qpn >= 2 && c->first_qpn + c->max_qp - 1 < 0xffffffu,
		  "first_qpn %u: QPNs first_qpn..first_qpn+max_qp-1 must lie in 2..0xfffffe",
		  c->first_qpn);
	CFG_CHECK(dev, c->max_mr >= 1 && c->max_mr <= ROCE_MAX_MR, "max_mr %u not in 1..%u",
		  c->max_mr, ROCE_MAX_MR);
	CFG_CHECK(dev, c->max_cq >= 1 && c->max_pd >= 1 && c->max_ah >= 1,
		  "max_cq, max_pd and max_ah must be at least 1");
	CFG_CHECK(dev, c->window_pkts >= 1 && c->window_pkts <= ROCE_MAX_WINDOW_PKTS,
		  "window_pkts %u not in 1..%u", c->window_pkts, ROCE_MAX_WINDOW_PKTS);
	CFG_CHECK(dev, c->ackreq_every >= 1 && c->ack_every >= 1 && c->tx_burst >= 1,
		  "ackreq_every, ack_every and tx_burst must be at least 1");
	CFG_CHECK(dev, c->max_ooo <= ROCE_PSN_BITMAP_BITS, "max_ooo %u not in 0..%u", c->max_ooo,
		  ROCE_PSN_BITMAP_BITS);
	CFG_CHECK(dev, roce_recovery_find(c->recovery) != NULL, "unknown recovery \"%.16s\"",
		  c->recovery);
	CFG_CHECK(dev, roce_cc_find(c->cc) != NULL, "unknown cc \"%.16s\"", c->cc);
	CFG_CHECK(dev, c->rto_mode == ROCE_RTO_ADAPTIVE || c->rto_mode == ROCE_RTO_FIXED,
		  "rto_mode %u is not adaptive (0) or fixed (1)", c->rto_mode);
	CFG_CHECK(dev,
		  c->rto_min_ns >= ROCE_RTO_MIN_LIMIT_NS &&
		      c->rto_max_ns <= ROCE_RTO_MAX_LIMIT_NS && c->rto_min_ns <= c->rto_max_ns,
		  "rto_min_ns %llu / rto_max_ns %llu: need %llu <= min <= max <= %llu",
		  (unsigned long long)c->rto_min_ns, (unsigned long long)c->rto_max_ns,
		  ROCE_RTO_MIN_LIMIT_NS, ROCE_RTO_MAX_LIMIT_NS);
	CFG_CHECK(dev, c->rto_stall_ns <= ROCE_RTO_MAX_LIMIT_NS, "rto_stall_ns %llu above %llu",
		  (unsigned long long)c->rto_stall_ns, ROCE_RTO_MAX_LIMIT_NS);
	CFG_CHECK(dev, c->fec_hold_ns <= ROCE_MAX_FEC_HOLD_NS, "fec_hold_ns %llu above %llu",
		  (unsigned long long)c->fec_hold_ns, ROCE_MAX_FEC_HOLD_NS);
	return 0;
}

struct roce_dev *
roce_dev_create(const struct roce_dev_cfg *cfg, const struct roce_dev_ops *ops, void *ctx)
{
	struct roce_dev *dev;

	if (!cfg || !ops || !ops->tx || !ops->now_ns) {
		errno = EINVAL;
		return NULL;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		errno = ENOMEM;
		return NULL;
	}
	dev->ops = *ops;
	dev->ctx = ctx;
	dev->now = ops->now_ns(ctx);
	if (dev_cfg_check(dev, cfg) < 0) {
		free(dev);
		errno = EINVAL;
		return NULL;
	}
	dev->cfg = *cfg;
	roce_list_init(&dev->pds);
	roce_list_init(&dev->cqs);
	roce_list_init(&dev->ahs);
	dev->qp_tbl = calloc(cfg->max_qp, sizeof(*dev->qp_tbl));
	dev->mr_tbl = calloc(cfg->max_mr, sizeof(*dev->mr_tbl));
	if (!dev->qp_tbl || !dev->mr_tbl) {
		free(dev->qp_tbl);
		free(dev->mr_tbl);
		free(dev);
		errno = ENOMEM;
		return NULL;
	}
	return dev;
}

static void
pd_destroy_all(struct roce_dev *dev)
{
	while (dev->ahs.next != &dev->ahs) {
		struct roce_ah *ah = roce_container_of(dev->ahs.next, struct roce_ah, node);

		roce_list_del(&ah->node);
		free(ah);
	}
	while (dev->pds.next != &dev->pds) {
		struct roce_pd *pd = roce_container_of(dev->pds.next, struct roce_pd, node);

		roce_list_del(&pd->node);
		free(pd);
	}
}

void
roce_dev_destroy(struct roce_dev *dev)
{
	if (!dev)
		return;
	roce_qp_destroy_all(dev);
	roce_cq_destroy_all(dev);
	roce_mr_destroy_all(dev);
	pd_destroy_all(dev);
	free(dev->qp_tbl);
	free(dev->mr_tbl);
	free(dev);
}

/* ---- scheduling ---- */

void
roce_qp_run(struct roce_qp *qp)
{
	uint32_t budget = qp->dev->cfg.tx_burst;

	roce_resp_run(qp, &budget);
	budget = qp->dev->cfg.tx_burst;
	roce_req_run(qp, &budget);
}

static uint64_t
min_deadline(uint64_t a, uint64_t b)
{
	if (!b)
		return a;
	return b < a ? b : a;
}

uint64_t
roce_qp_next_deadline(const struct roce_qp *qp)
{
	uint64_t t = UINT64_MAX;

	t = min_deadline(t, qp->req.rto_at);
	t = min_deadline(t, qp->req.rnr_at);
	t = min_deadline(t, qp->req.wake_at);
	t = min_deadline(t, qp->resp.ack_at);
	if (qp->fec) {
		uint64_t f = roce_fec_next_deadline(qp);

		if (f < t)
			t = f;
	}
	if (qp->cc->next_deadline) {
		uint64_t c = qp->cc->next_deadline(qp, qp->cc_priv);

		if (c < t)
			t = c;
	}
	return t;
}

void
roce_qp_timers(struct roce_qp *qp)
{
	uint64_t now = qp->dev->now;

	if (qp->resp.ack_at && now >= qp->resp.ack_at)
		roce_resp_ack_timer(qp);
	if (qp->req.rnr_at && now >= qp->req.rnr_at)
		roce_comp_rnr_done(qp);
	/*
	 * Adaptive RTO: a poll whose receive burst moved una may not fire the
	 * timer; the next poll does, once the ACKs still queued behind that
	 * burst (a stalled sender wakes up to a backlog) have been read.
	 */
	if (qp->req.rto_defer)
		qp->req.rto_defer = false;
	else if (roce_rtt_tx_held(qp->dev))
		; /* the app refuses frames (PFC pause): a resend could not leave; see roce_rtt.c */
	else if (qp->req.rto_at && now >= qp->req.rto_at)
		roce_comp_timeout(qp);
	if (qp->req.wake_at && now >= qp->req.wake_at)
		qp->req.wake_at = 0;
	if (qp->cc->on_poll)
		qp->cc->on_poll(qp, qp->cc_priv, now);
	if (qp->fec)
		roce_fec_timers(qp);
}

bool
roce_qp_busy(struct roce_qp *qp)
{
	return roce_resp_busy(qp) || roce_req_busy(qp);
}

void
roce_dev_poll(struct roce_dev *dev, uint64_t now_ns)
{
	dev->now = now_ns;
	dev->tx_blocked = false;
	for (uint32_t i = 0; i < dev->cfg.max_qp; i++) {
		struct roce_qp *qp = dev->qp_tbl[i];

		if (!qp)
			continue;
		roce_qp_timers(qp);
		/* a timer may have moved the QP to ERR: run copes with every state */
		roce_qp_run(qp);
		/* after run: a sender that just sent is not idle (roce_fec.c) */
		if (qp->fec)
			roce_fec_idle_flush(qp);
	}
}

uint64_t
roce_dev_next_deadline(const struct roce_dev *dev)
{
	uint64_t t = UINT64_MAX;

	for (uint32_t i = 0; i < dev->cfg.max_qp; i++) {
		const struct roce_qp *qp = dev->qp_tbl[i];
		uint64_t q;

		if (!qp)
			continue;
		q = roce_qp_next_deadline(qp);
		if (q < t)
			t = q;
	}
	return t;
}

bool
roce_dev_busy(const struct roce_dev *dev)
{
	for (uint32_t i = 0; i < dev->cfg.max_qp; i++)
		if (dev->qp_tbl[i] && roce_qp_busy(dev->qp_tbl[i]))
			return true;
	return false;
}

/* ---- introspection ---- */

void
roce_dev_stats(const struct roce_dev *dev, struct roce_stats *out)
{
	*out = dev->stats;
}

uint64_t
roce_dev_parse_errors(const struct roce_dev *dev, int net_err)
{
	if (net_err < 0)
		net_err = -net_err;
	return net_err < NET_E__COUNT ? dev->parse_err[net_err] : 0;
}

const struct roce_dev_cfg *
roce_dev_config(const struct roce_dev *dev)
{
	return &dev->cfg;
}
