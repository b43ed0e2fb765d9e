/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_plugin.c
 * Registries of loss recoveries and congestion controls (selected per QP by
 * name), and the "none" congestion control. Registration is a start-up
 * step: it is not thread safe and entries cannot be removed.
 */
#include <errno.h>
#include <string.h>

#include "roce_int.h"

#define ROCE_MAX_PLUGINS 16

/* ---- congestion control "none": always send, never CNP ---- */

static void
cc_none_init(struct roce_qp *qp, void *priv)
{
	(void)qp;
	(void)priv;
}

static uint64_t
cc_none_tx_gate(struct roce_qp *qp, void *priv, uint64_t now, uint32_t bytes, uint32_t in_flight)
{
	(void)qp;
	(void)priv;
	(void)bytes;
	(void)in_flight;
	return now;
}

static void
cc_none_on_send(struct roce_qp *qp, void *priv, uint64_t now, uint32_t bytes, bool retx)
{
	(void)qp;
	(void)priv;
	(void)now;
	(void)bytes;
	(void)retx;
}

static void
cc_none_on_ack(struct roce_qp *qp, void *priv, uint64_t now, uint32_t pkts)
{
	(void)qp;
	(void)priv;
	(void)now;
	(void)pkts;
}

static void
cc_none_on_loss(struct roce_qp *qp, void *priv, uint64_t now, enum roce_loss_kind kind)
{
	(void)qp;
	(void)priv;
	(void)now;
	(void)kind;
}

static void
cc_none_on_cnp(struct roce_qp *qp, void *priv, uint64_t now)
{
	(void)qp;
	(void)priv;
	(void)now;
}

static bool
cc_none_on_ecn_ce(struct roce_qp *qp, void *priv, uint64_t now)
{
	(void)qp;
	(void)priv;
	(void)now;
	return false;
}

const struct roce_cc_ops roce_cc_none = {
    .name = "none",
    .priv_size = 0,
    .init = cc_none_init,
    .tx_gate = cc_none_tx_gate,
    .on_send = cc_none_on_send,
    .on_ack = cc_none_on_ack,
    .on_loss = cc_none_on_loss,
    .on_cnp = cc_none_on_cnp,
    .on_ecn_ce = cc_none_on_ecn_ce,
    .on_poll = NULL,
};

/* ---- state and counters a CC reports ---- */

void
roce_qp_cc_changed(struct roce_qp *qp, bool increase)
{
	roce_qp_stat(qp, increase ? ROCE_STAT_CC_INCREASES : ROCE_STAT_CC_DECREASES, 1);
}

void
roce_qp_cc_queue_signal(struct roce_qp *qp)
{
	roce_lwin_on_ecn(&qp->lwin);
}

int
roce_qp_cc_info(const struct roce_qp *qp, struct roce_cc_info *out)
{
	memset(out, 0, sizeof(*out));
	out->name = qp->cc->name;
	out->loss_window = roce_qp_window(qp);
	if (!qp->cc->info)
		return -ENOTSUP;
	qp->cc->info(qp, qp->cc_priv, out);
	out->name = qp->cc->name;
	out->loss_window = roce_qp_window(qp);
	return 0;
}

/* ---- registries ---- */

static const struct roce_recovery_ops *recovery_tbl[ROCE_MAX_PLUGINS] = {
    &roce_recovery_gbn, &roce_recovery_gbone, &roce_recovery_irn, &roce_recovery_vrp};
static const struct roce_cc_ops *cc_tbl[ROCE_MAX_PLUGINS] = {&roce_cc_none};

int
roce_recovery_register(const struct roce_recovery_ops *ops)
{
	if (!ops || !ops->name || !ops->init || !ops->tx_sent || !ops->tx_acked || !ops->tx_lost ||
	    !ops->tx_next || !ops->rx_packet || !ops->rx_nak_sent)
		return -EINVAL;
	/* a mode that places out of order must take part in both halves of it */
	if ((ops->flags & ROCE_REC_F_PLACE) &&
	    (!ops->rx_placed || !ops->rx_advance || !ops->tx_notice))
		return -EINVAL;
	for (unsigned int i = 0; i < ROCE_MAX_PLUGINS; i++) {
		if (!recovery_tbl[i]) {
			recovery_tbl[i] = ops;
			return 0;
		}
		if (strcmp(recovery_tbl[i]->name, ops->name) == 0)
			return -EEXIST;
	}
	return -ENOSPC;
}

const struct roce_recovery_ops *
roce_recovery_find(const char *name)
{
	for (unsigned int i = 0; name && i < ROCE_MAX_PLUGINS && recovery_tbl[i]; i++)
		if (strcmp(recovery_tbl[i]->name, name) == 0)
			return recovery_tbl[i];
	return NULL;
}

int
roce_cc_register(const struct roce_cc_ops *ops)
{
	if (!ops || !ops->name || !ops->init || !ops->tx_gate || !ops->on_send || !ops->on_ack ||
	    !ops->on_loss || !ops->on_cnp || !ops->on_ecn_ce)
		return -EINVAL;
	for (unsigned int i = 0; i < ROCE_MAX_PLUGINS; i++) {
		if (!cc_tbl[i]) {
			cc_tbl[i] = ops;
			return 0;
		}
		if (strcmp(cc_tbl[i]->name, ops->name) == 0)
			return -EEXIST;
	}
	return -ENOSPC;
}

const struct roce_cc_ops *
roce_cc_find(const char *name)
{
	for (unsigned int i = 0; name && i < ROCE_MAX_PLUGINS && cc_tbl[i]; i++)
		if (strcmp(cc_tbl[i]->name, name) == 0)
			return cc_tbl[i];
	return NULL;
}

/* ---- engine services for recovery modes (roce_recovery.h) ---- */

void
roce_recovery_env(const struct roce_qp *qp, struct roce_recovery_env *env)
{
	const struct roce_dev_cfg *cfg = &qp->dev->cfg;

	env->now_ns = qp->dev->now;
	env->mtu = qp->mtu;
	env->window = qp->window;
	env->max_ooo = qp->max_ooo ? qp->max_ooo : qp->window;
	env->una = qp->comp.una;
	env->nxt = qp->req.psn;
	env->link_bps = cfg->link_bps;
	env->rto_low_ns = cfg->rto_low_ns;
	env->rto_high_ns = cfg->rto_high_ns;
	env->vrp = &qp->vrp_tol;
}

void
roce_recovery_count(struct roce_qp *qp, enum roce_stat id, uint64_t n)
{
	if ((unsigned int)id < ROCE_STAT__COUNT)
		roce_qp_stat(qp, id, n);
}

void
roce_recovery_count_max(struct roce_qp *qp, enum roce_stat id, uint64_t v)
{
	if ((unsigned int)id >= ROCE_STAT__COUNT)
		return;
	if (qp->stats.v[id] < v)
		qp->stats.v[id] = v;
	if (qp->dev->stats.v[id] < v)
		qp->dev->stats.v[id] = v;
}
