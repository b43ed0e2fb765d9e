/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file cc_dctcp.c
 * DCTCP (Alizadeh et al., "Data Center TCP", SIGCOMM 2010) as a window of
 * packets: the NP echoes every CE mark (a BECN-flagged ACK on RC, a CNP on
 * UC), the RP estimates the marked fraction F once per window of
 * acknowledged packets, alpha = (1 - g) alpha + g F with g = 1/16 (§3.1 eq.
 * (1)), and cuts cwnd = cwnd (1 - alpha / 2) once in a window with marks, else
 * grows it by one packet per window (eq. (2), and the RTT-based window of the
 * rate-based DCTCP in HPCC's ns-3, rdma-hw.cc HandleAckDctcp).
 */
#include <string.h>

#include "cc.h"
#include "roce_params.h"

/*
 * Packets of one observation window: what was in flight when it began (one RTT's
 * worth), at most cwnd. As Linux's tcp_dctcp (the window ends when snd_una passes the
 * snd_nxt it started at), nothing in flight makes the next ACK end it: falling back to
 * cwnd instead, which starts uncapped (ROCE_MAX_WINDOW_PKTS), left a QP whose first ACK
 * found an empty pipe observing 2^21 packets before its first reaction, so a run full
 * of echoed marks made no cut at all.
 */
static uint32_t
window_pkts(const struct cc_dctcp_state *s)
{
	double w = s->flight < s->cwnd ? s->flight : s->cwnd;

	return w < 1 ? 1 : (uint32_t)w;
}

void
cc_dctcp_init(struct cc_dctcp_state *s, const struct cc_dctcp_params *p, uint32_t max_cwnd)
{
	memset(s, 0, sizeof(*s));
	s->cwnd = p->init_cwnd > 0 && p->init_cwnd < max_cwnd ? p->init_cwnd : max_cwnd;
	s->alpha = 1.0; /* DCTCP starts at alpha = 1 (Linux tcp_dctcp dctcp_alpha_on_init) */
	s->win_end = 0; /* set by the first ACK: a window is what is in flight (one RTT) */
}

void
cc_dctcp_ack(struct cc_dctcp_state *s, const struct cc_dctcp_params *p, uint32_t pkts,
	     uint32_t marked, uint32_t max_cwnd)
{
	double f;

	double base;

	if (!s->win_end)
		s->win_end = window_pkts(s);
	s->acked += pkts;
	s->marked += marked;
	if (s->acked < s->win_end)
		return;
	/* a window of ACKs observed: F, alpha, and one reaction */
	f = s->acked ? (double)s->marked / s->acked : 0;
	if (f > 1)
		f = 1;
	s->alpha = (1 - p->g) * s->alpha + p->g * f;
	if (s->marked) {
		/* cut what was really in flight: a window far above it would never bind */
		base = s->flight && s->flight < s->cwnd ? s->flight : s->cwnd;
		s->cwnd = base * (1 - s->alpha / 2);
		if (s->cwnd < p->min_cwnd)
			s->cwnd = p->min_cwnd;
		s->decreases++;
	} else if (s->cwnd < max_cwnd) {
		s->cwnd += 1;
		if (s->cwnd > max_cwnd)
			s->cwnd = max_cwnd;
		s->increases++;
	}
	s->acked = s->marked = 0;
	s->win_end = window_pkts(s);
}

/* ---- ops ---- */

struct dctcp_priv {
	struct cc_dctcp_state s;
	uint32_t max;
};

static void
dt_init(struct roce_qp *qp, void *priv)
{
	struct dctcp_priv *d = priv;

	(void)qp;
	/* no cap of its own: the QP window and the loss window bound it (roce_qp_window) */
	d->max = ROCE_MAX_WINDOW_PKTS;
	cc_dctcp_init(&d->s, &cc_dctcp_prm, d->max);
}

static uint64_t
dt_tx_gate(struct roce_qp *qp, void *priv, uint64_t now, uint32_t bytes, uint32_t in_flight)
{
	struct dctcp_priv *d = priv;

	(void)qp;
	(void)bytes;
	d->s.flight = in_flight;
	/* window algorithms are enforced on in-flight packets */
	return in_flight < (uint32_t)d->s.cwnd || in_flight == 0 ? now : ROCE_CC_WAIT_EVENT;
}

static void
dt_on_send(struct roce_qp *qp, void *priv, uint64_t now, uint32_t bytes, bool retx)
{
	(void)qp;
	(void)priv;
	(void)now;
	(void)bytes;
	(void)retx;
}

static void
dt_feed(struct roce_qp *qp, struct dctcp_priv *d, uint32_t pkts, uint32_t marked)
{
	uint64_t inc0 = d->s.increases, dec0 = d->s.decreases;

	cc_dctcp_ack(&d->s, &cc_dctcp_prm, pkts, marked, d->max);
	if (d->s.increases != inc0)
		roce_qp_cc_changed(qp, true);
	if (d->s.decreases != dec0)
		roce_qp_cc_changed(qp, false);
}

static void
dt_on_ack(struct roce_qp *qp, void *priv, uint64_t now, uint32_t pkts)
{
	(void)now;
	dt_feed(qp, priv, pkts, 0);
}

/* The ACK's packets were counted by on_ack just before: only the marks are added. */
static void
dt_on_becn(struct roce_qp *qp, void *priv, uint64_t now, uint32_t pkts)
{
	(void)now;
	dt_feed(qp, priv, 0, pkts ? pkts : 1);
}

static void
dt_on_cnp(struct roce_qp *qp, void *priv, uint64_t now)
{
	(void)now;
	dt_feed(qp, priv, 0, 1); /* UC: a CNP per marked packet */
}

static void
dt_on_loss(struct roce_qp *qp, void *priv, uint64_t now, enum roce_loss_kind kind)
{
	(void)qp;
	(void)priv;
	(void)now;
	(void)kind;
}

/* NP: DCTCP echoes every mark */
static bool
dt_on_ecn_ce(struct roce_qp *qp, void *priv, uint64_t now)
{
	(void)qp;
	(void)priv;
	(void)now;
	return true;
}

static void
dt_info(const struct roce_qp *qp, const void *priv, struct roce_cc_info *out)
{
	const struct dctcp_priv *d = priv;

	(void)qp;
	out->window = (uint32_t)d->s.cwnd;
	out->alpha = d->s.alpha;
}

struct roce_cc_ops cc_dctcp = {
    .name = "dctcp",
    .priv_size = sizeof(struct dctcp_priv),
    .init = dt_init,
    .tx_gate = dt_tx_gate,
    .on_send = dt_on_send,
    .on_ack = dt_on_ack,
    .on_loss = dt_on_loss,
    .on_cnp = dt_on_cnp,
    .on_ecn_ce = dt_on_ecn_ce,
    .on_becn = dt_on_becn,
    .info = dt_info,
    .ecn = true,
    .becn_ack = true,
};
