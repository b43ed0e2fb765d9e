/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file cc_dcqcn.c
 * DCQCN (Zhu et al., "Congestion control for large-scale RDMA deployments",
 * SIGCOMM 2015) and DCQCN-p (Wang, Huang, Qiu, Guo, "Design of
 * efficient congestion control method based on RDMA", 2025, §2.1), reaction
 * point and notification point, as rates that are fractions of the line rate.
 *
 * Both share DCQCN-p's (Wang et al.) equations (2)-(8):
 *   decrease (CNP):   Rt = Rc (2), Rc = Rc (1 - a/2) (3), a = a (1 - g) + g (4)
 *   fast recovery:    Rc = (Rc + Rt) / 2                          (5)
 *   additive:         Rt = Rt + R_ai, Rc = (Rc + Rt) / 2          (6)(7)
 *   hyper:            R_ai replaced by R_hai (T and B both >= F)
 *   DCQCN alpha:      a = a (1 - g) every alpha timer without a CNP (8)
 * Interpretations (docs/cc.md):
 *  - the stage of an increase event is chosen by the events counted BEFORE it
 *    (fast recovery while max(T, B) < F), as ns-3's DCQCN does; this is what
 *    puts DCQCN-p's (Wang et al.) Fig. 4 point (9, 1) at the 9th round;
 *  - Rt is not clamped to the line rate: Rc is, and the flow is at full rate
 *    (DCQCN-p: "deregistered", Rt = 0) once (Rc + Rt) / 2 reaches 1; Fig. 4
 *    plots Rt above 1 (its axis runs to 1.4).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "cc.h"

static double
frac(const struct cc_dcqcn_params *p, double v)
{
	return p->ratios ? v : v * 1e6 / (double)cc_line_rate();
}

static double
min_rate(const struct cc_dcqcn_params *p)
{
	return p->min_rate_mbps * 1e6 / (double)cc_line_rate();
}

static void
full_rate(struct cc_dcqcn_state *s, bool deregister)
{
	s->rc = 1.0;
	if (deregister)
		s->rt = 0; /* DCQCN-p (Wang et al.) Fig. 4 text: Rt = 0, the flow is deregistered */
	s->active = false;
	s->timer_at = 0;
}

/* ---- shared increase rule ---- */

static void
increase(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, bool timer, bool dcqcnp)
{
	uint32_t before_max = s->t > s->b ? s->t : s->b;
	uint32_t before_min = s->t < s->b ? s->t : s->b;
	double f = p->f;

	if (!s->active)
		return;
	if (timer)
		s->t++;
	else
		s->b++;
	if (before_max < f) {
		/* fast recovery, eq. (5); DCQCN-p lines 24-25 */
		s->rc = (s->rc + s->rt) / 2;
	} else if (p->hyper != 0 && before_min >= f) {
		/* hyper increase (DCQCN: i * R_hai with i = min(T, B) - F + 1; DCQCN-p line 31) */
		double i = dcqcnp ? 1.0 : (double)(before_min - (uint32_t)f + 1);

		s->rt += i * frac(p, p->rhai);
		s->rc = (s->rc + s->rt) / 2;
	} else {
		/* additive increase, eq. (6)(7); DCQCN-p lines 27-29 */
		s->rt += frac(p, p->rai);
		s->rc = (s->rc + s->rt) / 2;
	}
	s->increases++;
	if (s->rc >= 1.0)
		full_rate(s, dcqcnp);
}

static void
decrease(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, uint64_t now)
{
	double floor = min_rate(p);

	s->t = s->b = 0;
	s->bytes = 0;
	s->rt = s->rc;			    /* (2) */
	s->rc = s->rc * (1 - s->alpha / 2); /* (3) */
	if (s->rc < floor)
		s->rc = floor;
	s->alpha = (1 - p->g) * s->alpha + p->g; /* (4) */
	s->active = true;
	s->decreases++;
	s->last_cnp = now;
	s->cnp_seen = true;
}

/* ---- DCQCN ---- */

void
cc_dcqcn_init(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p)
{
	memset(s, 0, sizeof(*s));
	s->rc = 1.0;
	s->rt = 1.0;
	s->alpha = p->alpha0;
}

bool
cc_dcqcn_cnp(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, uint64_t now)
{
	/* at most one decrease per dec_interval (NVIDIA rate_reduce_monitor_period) */
	if (s->cnp_seen && now - s->last_cnp < (uint64_t)(p->dec_interval_us * 1000)) {
		s->held++;
		return false;
	}
	decrease(s, p, now);
	s->timer_at = now + (uint64_t)(p->timer_us * 1000);
	s->alpha_at = now + (uint64_t)(p->alpha_timer_us * 1000);
	return true;
}

void
cc_dcqcn_increase(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, bool timer)
{
	increase(s, p, timer, false);
}

/* Byte counter and timer events, and (DCQCN) the alpha decay, up to @p now. */
static void
advance(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, uint64_t now, uint64_t bytes,
	bool dcqcnp)
{
	uint64_t tperiod = (uint64_t)(p->timer_us * 1000);
	uint64_t aperiod = (uint64_t)(p->alpha_timer_us * 1000);

	if (!dcqcnp && s->alpha_at && aperiod) {
		/* (8): alpha decays once per alpha timer without a CNP, also at full rate */
		for (int i = 0; now >= s->alpha_at && i < 4096; i++) {
			s->alpha *= 1 - p->g;
			s->alpha_at += aperiod;
		}
		if (now >= s->alpha_at)
			s->alpha_at = now + aperiod;
	}
	if (!s->active)
		return;
	s->bytes += bytes;
	while (s->active && p->byte_counter > 0 && (double)s->bytes >= p->byte_counter) {
		s->bytes -= (uint64_t)p->byte_counter;
		if (dcqcnp)
			cc_dcqcnp_increase(s, p, false);
		else
			increase(s, p, false, false);
	}
	while (s->active && s->timer_at && tperiod && now >= s->timer_at) {
		s->last_timer = s->timer_at;
		s->timer_at += tperiod;
		if (dcqcnp)
			cc_dcqcnp_increase(s, p, true);
		else
			increase(s, p, true, false);
	}
}

void
cc_dcqcn_advance(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, uint64_t now,
		 uint64_t bytes)
{
	advance(s, p, now, bytes, false);
}

/* ---- DCQCN-p (DCQCN-p (Wang et al.) §2.1) ---- */

void
cc_dcqcnp_init(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p)
{
	memset(s, 0, sizeof(*s));
	s->rc = 1.0; /* line 3: "Rc starts at 1, the first full-rate ratio" */
	s->rt = 0;
	s->alpha = p->alpha0; /* line 4: "a starts at 1" */
}

bool
cc_dcqcnp_cnp(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, uint64_t now)
{
	uint64_t gap = now - s->last_cnp;
	uint64_t dec = (uint64_t)(p->dec_interval_us * 1000);
	uint64_t tperiod = (uint64_t)(p->timer_us * 1000);
	bool first = !s->cnp_seen;

	/* lines 1-8: decrease on the first CNP or one more than the decrease interval later */
	if (!first && gap <= dec) {
		s->held++; /* line 7: RateHold() */
		return false;
	}
	uint64_t last_cnp = s->last_cnp;

	decrease(s, p, now); /* lines 2-5 */
	if (!first && gap < tperiod) {
		/*
		 * Lines 16-18: between the decrease and the increase interval, the
		 * newest timer threshold is compensated by (T_latest timer event -
		 * T_latest CNP), then RateDecrease() is followed by RateIncrease().
		 */
		uint64_t comp = s->last_timer > last_cnp ? s->last_timer - last_cnp : 0;

		s->timer_at = now + (comp < tperiod ? tperiod - comp : 0);
		cc_dcqcnp_increase(s, p, true);
	} else {
		s->timer_at = now + tperiod;
	}
	return true;
}

void
cc_dcqcnp_increase(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, bool timer)
{
	if (!s->active)
		return;
	if (timer) {
		/* lines 12-15: alpha and g adjusted together on a timer event */
		double a = s->alpha, d = (1 - p->g) * a;

		if (a <= 0.5)
			a = fmin(a - 1.0 / 25, d);
		else
			a = fmax(a - 1.0 / 40, d);
		s->alpha = a < 0 ? 0 : a;
	}
	increase(s, p, timer, true);
}

void
cc_dcqcnp_advance(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, uint64_t now,
		  uint64_t bytes)
{
	advance(s, p, now, bytes, true);
}

/* ---- the engine's ops (roce_cc.h) ---- */

struct dcqcn_priv {
	struct cc_dcqcn_state s;
	struct cc_pacer pace;
	uint64_t np_last; /**< NP: time of the last CNP requested */
	bool np_any;
	bool p; /**< DCQCN-p */
};

static const struct cc_dcqcn_params *
prm_of(const struct dcqcn_priv *d)
{
	return d->p ? &cc_dcqcnp_prm : &cc_dcqcn_prm;
}

static void
dq_init_common(void *priv, bool p)
{
	struct dcqcn_priv *d = priv;

	memset(d, 0, sizeof(*d));
	d->p = p;
	if (p)
		cc_dcqcnp_init(&d->s, &cc_dcqcnp_prm);
	else
		cc_dcqcn_init(&d->s, &cc_dcqcn_prm);
}

static void
dq_init(struct roce_qp *qp, void *priv)
{
	(void)qp;
	dq_init_common(priv, false);
}

static void
dqp_init(struct roce_qp *qp, void *priv)
{
	(void)qp;
	dq_init_common(priv, true);
}

static double
dq_rate_bps(const struct dcqcn_priv *d)
{
	return d->s.active ? d->s.rc * (double)cc_line_rate() : 0;
}

static uint64_t
dq_tx_gate(struct roce_qp *qp, void *priv, uint64_t now, uint32_t bytes, uint32_t in_flight)
{
	struct dcqcn_priv *d = priv;

	(void)qp;
	(void)bytes;
	(void)in_flight;
	return cc_pace_gate(&d->pace, now, dq_rate_bps(d));
}

/* Count the rate changes the state machine made since @p inc0 / @p dec0. */
static void
dq_count(struct roce_qp *qp, const struct dcqcn_priv *d, uint64_t inc0, uint64_t dec0)
{
	for (uint64_t i = inc0; i < d->s.increases; i++)
		roce_qp_cc_changed(qp, true);
	for (uint64_t i = dec0; i < d->s.decreases; i++)
		roce_qp_cc_changed(qp, false);
}

static void
dq_advance(struct roce_qp *qp, struct dcqcn_priv *d, uint64_t now, uint64_t bytes)
{
	uint64_t inc0 = d->s.increases, dec0 = d->s.decreases;

	if (d->p)
		cc_dcqcnp_advance(&d->s, prm_of(d), now, bytes);
	else
		cc_dcqcn_advance(&d->s, prm_of(d), now, bytes);
	dq_count(qp, d, inc0, dec0);
}

static void
dq_on_send(struct roce_qp *qp, void *priv, uint64_t now, uint32_t bytes, bool retx)
{
	struct dcqcn_priv *d = priv;

	(void)retx;
	cc_pace_sent(&d->pace, now, bytes, dq_rate_bps(d));
	dq_advance(qp, d, now, bytes);
}

static void
dq_on_ack(struct roce_qp *qp, void *priv, uint64_t now, uint32_t pkts)
{
	(void)qp;
	(void)priv;
	(void)now;
	(void)pkts;
}

static void
dq_on_loss(struct roce_qp *qp, void *priv, uint64_t now, enum roce_loss_kind kind)
{
	/* losses are the loss-reactive window's (roce_lwin.h); DCQCN reacts to CNPs */
	(void)qp;
	(void)priv;
	(void)now;
	(void)kind;
}

static void
dq_on_cnp(struct roce_qp *qp, void *priv, uint64_t now)
{
	struct dcqcn_priv *d = priv;
	uint64_t inc0 = d->s.increases, dec0 = d->s.decreases;

	if (d->p)
		cc_dcqcnp_cnp(&d->s, prm_of(d), now);
	else
		cc_dcqcn_cnp(&d->s, prm_of(d), now);
	dq_count(qp, d, inc0, dec0);
}

/* NP: a CNP per QP at most every cnp_interval (DCQCN: 50 us; DCQCN-p: every mark). */
static bool
dq_on_ecn_ce(struct roce_qp *qp, void *priv, uint64_t now)
{
	struct dcqcn_priv *d = priv;
	uint64_t iv = (uint64_t)(prm_of(d)->cnp_interval_us * 1000);

	(void)qp;
	if (iv && d->np_any && now - d->np_last < iv)
		return false;
	d->np_any = true;
	d->np_last = now;
	return true;
}

static void
dq_on_poll(struct roce_qp *qp, void *priv, uint64_t now)
{
	dq_advance(qp, priv, now, 0);
}

static uint64_t
dq_next_deadline(const struct roce_qp *qp, const void *priv)
{
	const struct dcqcn_priv *d = priv;
	uint64_t t = UINT64_MAX;

	(void)qp;
	if (d->s.active && d->s.timer_at)
		t = d->s.timer_at;
	if (!d->p && d->s.alpha_at && d->s.alpha > 1e-6 && d->s.alpha_at < t)
		t = d->s.alpha_at;
	return t;
}

static void
dq_info(const struct roce_qp *qp, const void *priv, struct roce_cc_info *out)
{
	const struct dcqcn_priv *d = priv;

	(void)qp;
	out->rate_bps = d->s.rc * (double)cc_line_rate();
	out->target_bps = d->s.rt * (double)cc_line_rate();
	out->alpha = d->s.alpha;
}

struct roce_cc_ops cc_dcqcn = {
    .name = "dcqcn",
    .priv_size = sizeof(struct dcqcn_priv),
    .init = dq_init,
    .tx_gate = dq_tx_gate,
    .on_send = dq_on_send,
    .on_ack = dq_on_ack,
    .on_loss = dq_on_loss,
    .on_cnp = dq_on_cnp,
    .on_ecn_ce = dq_on_ecn_ce,
    .on_poll = dq_on_poll,
    .next_deadline = dq_next_deadline,
    .info = dq_info,
    .ecn = true,
};

struct roce_cc_ops cc_dcqcn_p = {
    .name = "dcqcn-p",
    .priv_size = sizeof(struct dcqcn_priv),
    .init = dqp_init,
    .tx_gate = dq_tx_gate,
    .on_send = dq_on_send,
    .on_ack = dq_on_ack,
    .on_loss = dq_on_loss,
    .on_cnp = dq_on_cnp,
    .on_ecn_ce = dq_on_ecn_ce,
    .on_poll = dq_on_poll,
    .next_deadline = dq_next_deadline,
    .info = dq_info,
    .ecn = true,
    .becn_ack = true, /* DCQCN-p §2.1 (Fig. 2 text): RC answers CE with a BECN ACK */
};
