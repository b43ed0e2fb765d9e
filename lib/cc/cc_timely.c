/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file cc_timely.c
 * TIMELY (Mittal et al., "TIMELY: RTT-based congestion control for the
 * datacenter", SIGCOMM 2015, Algorithm 1): per RTT sample
 *   new_rtt_diff = rtt - prev_rtt;  rtt_diff = (1 - a) rtt_diff + a new_rtt_diff
 *   gradient = rtt_diff / min_rtt
 *   rtt < T_low:   rate += delta
 *   rtt > T_high:  rate *= 1 - beta (1 - T_high / rtt)
 *   gradient <= 0: rate += N delta (N = 5 after hai_n consecutive such samples: HAI)
 *   else:          rate *= 1 - beta gradient
 * The samples come through roce_cc_ops.on_rtt from the engine's RTT sampler
 * (Karn's rule); without samples the rate stays at the line rate.
 *
 * profile=wan (base_rtt = 1; our interpretation, docs/cc.md): the thresholds
 * of Algorithm 1 lines 5 and 8 (and T_high / new_rtt in line 9) take the
 * queueing delay new_rtt - min_rtt, min_rtt the least sample the QP measured
 * (the base-RTT correction of TIMELY deployments and of Swift, Kumar et al.,
 * SIGCOMM 2020), and line 4's minRTT is that measured least RTT. With
 * queue_signal = N, N consecutive samples above T_low (a standing queue, not
 * one late ACK: HyStart's 8-sample filter, Ha and Rhee 2011) are handed to
 * the loss window as a congestion notification, so its slow start ends at a
 * standing queue as it does at a CNP (TIMELY has no ECN to end it).
 */
#include <string.h>

#include "cc.h"

static double
mbps(double v)
{
	return v * 1e6 / (double)cc_line_rate();
}

void
cc_timely_init(struct cc_timely_state *s, const struct cc_timely_params *p)
{
	(void)p;
	memset(s, 0, sizeof(*s));
	s->rate = 1.0;
}

bool
cc_timely_rtt(struct cc_timely_state *s, const struct cc_timely_params *p, uint64_t rtt_ns)
{
	double rtt = (double)rtt_ns, t_low = p->t_low_us * 1000, t_high = p->t_high_us * 1000;
	double old = s->rate, grad, scale = p->min_rtt_us * 1000;
	bool wan = p->base_rtt != 0, signal = false;

	s->last_rtt = rtt_ns;
	if (rtt_ns && (!s->min_rtt || rtt_ns < s->min_rtt))
		s->min_rtt = rtt_ns;
	if (!s->prev_rtt) {
		s->prev_rtt = rtt_ns; /* the first sample only seeds prev_rtt (and min_rtt) */
		return false;
	}
	/* Algorithm 1 lines 1-3 */
	s->rtt_diff = (1 - p->alpha) * s->rtt_diff + p->alpha * (rtt - (double)s->prev_rtt);
	s->prev_rtt = rtt_ns;
	if (wan) {
		/* the queueing delay stands for new_rtt in lines 5, 8 and 9 */
		s->qdelay = rtt_ns > s->min_rtt ? rtt_ns - s->min_rtt : 0;
		rtt = (double)s->qdelay;
		if (s->min_rtt)
			scale = (double)s->min_rtt;
		s->above = rtt > t_low ? s->above + 1 : 0;
		if (p->queue_signal >= 1 && s->above >= (uint32_t)p->queue_signal) {
			signal = true;
			s->queue_signals++;
		}
	}
	grad = s->rtt_diff / scale; /* line 4 */
	if (rtt < t_low) {	    /* lines 5-7 */
		s->rate += mbps(p->delta_mbps);
		s->neg_rounds = 0;
	} else if (rtt > t_high) { /* lines 8-10 */
		s->rate *= 1 - p->beta * (1 - t_high / rtt);
		s->neg_rounds = 0;
	} else if (grad <= 0) { /* lines 11-12, HAI */
		double n = s->neg_rounds >= p->hai_n ? 5 : 1;

		s->rate += n * mbps(p->delta_mbps);
		s->neg_rounds++;
	} else { /* lines 13-14 */
		s->rate *= 1 - p->beta * grad;
		s->neg_rounds = 0;
	}
	if (s->rate > 1)
		s->rate = 1;
	if (s->rate < mbps(p->min_rate_mbps))
		s->rate = mbps(p->min_rate_mbps);
	if (s->rate > old)
		s->increases++;
	else if (s->rate < old)
		s->decreases++;
	return signal;
}

/* ---- ops ---- */

struct timely_priv {
	struct cc_timely_state s;
	struct cc_pacer pace;
};

static void
tm_init(struct roce_qp *qp, void *priv)
{
	struct timely_priv *d = priv;

	(void)qp;
	memset(d, 0, sizeof(*d));
	cc_timely_init(&d->s, &cc_timely_prm);
}

static double
tm_rate(const struct timely_priv *d)
{
	return d->s.rate * (double)cc_line_rate();
}

static uint64_t
tm_tx_gate(struct roce_qp *qp, void *priv, uint64_t now, uint32_t bytes, uint32_t in_flight)
{
	struct timely_priv *d = priv;

	(void)qp;
	(void)bytes;
	(void)in_flight;
	return cc_pace_gate(&d->pace, now, tm_rate(d));
}

static void
tm_on_send(struct roce_qp *qp, void *priv, uint64_t now, uint32_t bytes, bool retx)
{
	struct timely_priv *d = priv;

	(void)qp;
	(void)retx;
	cc_pace_sent(&d->pace, now, bytes, tm_rate(d));
}

static void
tm_on_rtt(struct roce_qp *qp, void *priv, uint64_t now, uint64_t rtt_ns)
{
	struct timely_priv *d = priv;
	uint64_t inc0 = d->s.increases, dec0 = d->s.decreases;

	(void)now;
	if (cc_timely_rtt(&d->s, &cc_timely_prm, rtt_ns))
		roce_qp_cc_queue_signal(qp);
	if (d->s.increases != inc0)
		roce_qp_cc_changed(qp, true);
	if (d->s.decreases != dec0)
		roce_qp_cc_changed(qp, false);
}

static void
tm_on_ack(struct roce_qp *qp, void *priv, uint64_t now, uint32_t pkts)
{
	(void)qp;
	(void)priv;
	(void)now;
	(void)pkts;
}

static void
tm_on_loss(struct roce_qp *qp, void *priv, uint64_t now, enum roce_loss_kind kind)
{
	(void)qp;
	(void)priv;
	(void)now;
	(void)kind;
}

static void
tm_on_cnp(struct roce_qp *qp, void *priv, uint64_t now)
{
	(void)qp;
	(void)priv;
	(void)now;
}

static bool
tm_on_ecn_ce(struct roce_qp *qp, void *priv, uint64_t now)
{
	(void)qp;
	(void)priv;
	(void)now;
	return false; /* delay-based: no CNPs */
}

static void
tm_info(const struct roce_qp *qp, const void *priv, struct roce_cc_info *out)
{
	const struct timely_priv *d = priv;

	(void)qp;
	out->rate_bps = tm_rate(d);
	out->rtt_ns = d->s.last_rtt;
}

struct roce_cc_ops cc_timely = {
    .name = "timely",
    .priv_size = sizeof(struct timely_priv),
    .init = tm_init,
    .tx_gate = tm_tx_gate,
    .on_send = tm_on_send,
    .on_ack = tm_on_ack,
    .on_loss = tm_on_loss,
    .on_cnp = tm_on_cnp,
    .on_ecn_ce = tm_on_ecn_ce,
    .on_rtt = tm_on_rtt,
    .info = tm_info,
};
