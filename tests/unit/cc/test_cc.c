/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cc on replayed event sequences, against rates computed by hand.
 *
 * The DCQCN-p paper's Fig. 4 (Wang et al., §2.3) counts "rounds": one scheduling round is
 * one rate-increase (timer) event, and a congestion mark in a round is a CNP.
 * The replay below drives the state machines with exactly that: a CNP or a
 * timer increase per round, rounds 1 and 2 at full rate.
 */
#include <errno.h>
#include <math.h>

#include "cc.h"
#include "rw_test.h"

#define US 1000ull
#define NEAR(a, b) (fabs((a) - (b)) < 1e-12)

/* 'C' = a CNP in that round, 'I' = an increase event; rounds count from 1. */
static int
replay(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, bool dcqcnp, const char *ev,
       double *rc_at, int max_rounds)
{
	uint64_t t_round = (uint64_t)(p->timer_us * US);

	if (dcqcnp)
		cc_dcqcnp_init(s, p);
	else
		cc_dcqcn_init(s, p);
	for (int r = 1; r <= max_rounds; r++) {
		char e = r <= (int)strlen(ev) ? ev[r - 1] : 'I';
		uint64_t now = (uint64_t)r * t_round;

		if (e == 'C')
			dcqcnp ? cc_dcqcnp_cnp(s, p, now) : cc_dcqcn_cnp(s, p, now);
		else if (e == 'I')
			dcqcnp ? cc_dcqcnp_increase(s, p, true) : cc_dcqcn_increase(s, p, true);
		if (rc_at)
			rc_at[r] = s->rc;
		if (r > (int)strlen(ev) && s->rc >= 1.0)
			return r; /* back at full rate */
	}
	return -1;
}

static void
test_dcqcnp_fig4_single(void)
{
	struct cc_dcqcn_params p = cc_dcqcnp_prm;
	struct cc_dcqcn_state s;
	double rc[64];

	/* rounds 1-2 at full rate, congestion in round 3 */
	int full = replay(&s, &p, true, "..C", rc, 60);

	CHECK(NEAR(rc[1], 1.0) && NEAR(rc[2], 1.0));
	CHECK(NEAR(rc[3], 0.5));   /* Fig. 4: (3, 0.5) */
	CHECK(NEAR(rc[4], 0.75));  /* (4, 0.75) */
	CHECK(NEAR(rc[5], 0.875)); /* (5, 0.875) */
	CHECK(NEAR(rc[6], 0.9375));
	CHECK(NEAR(rc[7], 0.96875));
	CHECK(NEAR(rc[8], 0.984375)); /* five fast recoveries (F = 5) */
	CHECK_EQ(full, 9); /* (9, 1): additive increase with R_ai = 0.2 overshoots to 1 */
	CHECK(NEAR(rc[9], 1.0));
	CHECK(NEAR(s.rt, 0.0)); /* "Rt is set to 0": the flow is deregistered */
	CHECK(!s.active);
	CHECK_EQ(s.decreases, 1);
	CHECK_EQ(s.increases, 6);
	printf("dcqcn-p, one congestion event: Rc = 1 again in round %d\n", full);
}

static void
test_dcqcnp_fig4_consecutive(void)
{
	struct cc_dcqcn_params p = cc_dcqcnp_prm;
	struct cc_dcqcn_state s;
	double rc[64];
	int full2 = replay(&s, &p, true, "..CC", rc, 60);

	/* hand: Rc .5, .25, FR x5 to .4921875, AI: .59609375, .748046875, .9240234375, 1 */
	CHECK(NEAR(rc[4], 0.25));
	CHECK(NEAR(rc[9], 0.4921875));
	CHECK(NEAR(rc[12], 0.9240234375));
	CHECK_EQ(full2, 13);
	int full3 = replay(&s, &p, true, "..CCC", rc, 60);

	CHECK(NEAR(rc[5], 0.125));
	CHECK(NEAR(rc[14], 0.862255859375));
	CHECK_EQ(full3, 15);
	/* DCQCN-p (Wang et al.): "9 to 10 rounds", counted from the last decrease */
	CHECK_EQ(full2 - 4, 9);
	CHECK_EQ(full3 - 5, 10);
	/* decrease - increase - decrease: the seed says 6; this reading gives 8 (from the last
	 * decrease) */
	int fdid = replay(&s, &p, true, "..CIC", rc, 60);

	CHECK(NEAR(rc[4], 0.75));
	CHECK(NEAR(s.alpha, 1.0) == false);
	CHECK_EQ(fdid, 13);
	printf("dcqcn-p: 2 decreases -> %d rounds, 3 -> %d, decrease-increase-decrease -> %d "
	       "(after the last decrease; seed: 9-10, 9-10, 6)\n",
	       full2 - 4, full3 - 5, fdid - 5);
}

static void
test_dcqcn_fig4_counts(void)
{
	struct cc_dcqcn_params p = cc_dcqcn_prm;
	struct cc_dcqcn_state s;
	double rc[1200];

	/* DCQCN at the paper's 40 Gb/s with R_ai = 40 Mb/s (Zhu et al.): hand-computed single event
	 */
	cc_set_line_rate(40000000000ull);
	p.alpha_timer_us = 0;
	int full1 = replay(&s, &p, false, "..C", rc, 1100);

	CHECK(NEAR(rc[3], 0.5) && NEAR(rc[8], 0.984375));
	CHECK(NEAR(rc[9], (0.984375 + 1.001) / 2));
	CHECK_EQ(full1, 11); /* Rt 1.003 in round 11: (0.99734375 + 1.003) / 2 >= 1 */
	int full2 = replay(&s, &p, false, "..CC", rc, 1100);
	int full3 = replay(&s, &p, false, "..CCC", rc, 1100);
	int fdid = replay(&s, &p, false, "..CIC", rc, 1100);
	/* Table 3 printed literally: R_ai = 40 Gbit/s on a 40 Gb/s line is a ratio of 1 */
	p.rai = 40000;
	int l2 = replay(&s, &p, false, "..CC", rc, 1100);
	int l3 = replay(&s, &p, false, "..CCC", rc, 1100);
	int ldid = replay(&s, &p, false, "..CIC", rc, 1100);

	CHECK(full2 > 0 && full3 > 0 && fdid > 0 && l2 > 0 && l3 > 0 && ldid > 0);
	printf("dcqcn (g 1/256, F 5, R_ai 40 Mb/s at 40 Gb/s): 1 decrease -> round %d, 2 -> %d "
	       "rounds, "
	       "3 -> %d, d-i-d -> %d (after the last decrease; seed: 11-13, 9)\n",
	       full1, full2 - 4, full3 - 5, fdid - 5);
	printf("dcqcn (R_ai read as 40 Gbit/s = 1.0): 2 -> %d rounds, 3 -> %d, d-i-d -> %d\n",
	       l2 - 4, l3 - 5, ldid - 5);
	cc_set_line_rate(10000000000ull);
}

static void
test_dcqcn_timers_and_counters(void)
{
	struct cc_dcqcn_params p = cc_dcqcn_prm;
	struct cc_dcqcn_state s;
	uint64_t t0 = 1000 * US;

	cc_dcqcn_init(&s, &p);
	CHECK(cc_dcqcn_cnp(&s, &p, t0));
	CHECK(NEAR(s.rc, 0.5) && NEAR(s.rt, 1.0) && NEAR(s.alpha, 1.0));
	/* a second CNP within the 4 us decrease interval is held */
	CHECK(!cc_dcqcn_cnp(&s, &p, t0 + 3 * US));
	CHECK_EQ(s.held, 1);
	/* one alpha period (55 us) without a CNP: alpha = (1 - 1/256); the timer fires too */
	cc_dcqcn_advance(&s, &p, t0 + 55 * US, 0);
	CHECK(NEAR(s.alpha, 1 - 1.0 / 256));
	CHECK_EQ(s.t, 1);
	CHECK(NEAR(s.rc, 0.75));
	/* the byte counter: 10 MiB sent is one B event */
	cc_dcqcn_advance(&s, &p, t0 + 60 * US, 10485760);
	CHECK_EQ(s.b, 1);
	CHECK(NEAR(s.rc, 0.875));
	/* a decrease halves less once alpha decayed, and never goes below the minimum rate */
	struct cc_dcqcn_params q = p;

	q.min_rate_mbps = 9000; /* 0.9 of 10 Gb/s */
	CHECK(cc_dcqcn_cnp(&s, &q, t0 + 100 * US));
	CHECK(NEAR(s.rc, 0.9));
	CHECK_EQ(s.t, 0);
	CHECK_EQ(s.b, 0);
}

static void
test_dcqcn_hyper(void)
{
	struct cc_dcqcn_params p = cc_dcqcn_prm;
	struct cc_dcqcn_state s;

	cc_set_line_rate(10000000000ull);
	cc_dcqcn_init(&s, &p);
	cc_dcqcn_cnp(&s, &p, 1000 * US);
	s.rc = 0.1; /* a low rate, so increases do not reach the line */
	s.rt = 0.1;
	for (int i = 0; i < 5; i++) {
		cc_dcqcn_increase(&s, &p, true);
		cc_dcqcn_increase(&s, &p, false);
	}
	/* T = B = 5: the next event is hyper, i = min(T, B) - F + 1 = 1: Rt += 200 Mb/s = 0.02 */
	double rt = s.rt, rc = s.rc;

	cc_dcqcn_increase(&s, &p, true);
	CHECK(NEAR(s.rt, rt + 0.02));
	CHECK(NEAR(s.rc, (rc + rt + 0.02) / 2));
	/* T = 6, B = 5: still min 5 -> i = 1; then B = 6 -> i = 2 */
	rt = s.rt;
	cc_dcqcn_increase(&s, &p, false);
	CHECK(NEAR(s.rt, rt + 0.02));
	rt = s.rt;
	cc_dcqcn_increase(&s, &p, true);
	CHECK(NEAR(s.rt, rt + 2 * 0.02));
}

static void
test_dcqcnp_alpha_and_compensation(void)
{
	struct cc_dcqcn_params p = cc_dcqcnp_prm;
	struct cc_dcqcn_state s;

	cc_dcqcnp_init(&s, &p);
	CHECK(cc_dcqcnp_cnp(&s, &p, 100 * US));
	/* lines 12-15 above 0.5: a = max(a - 1/40, (1 - g) a) = max(0.975, 0.9375) */
	cc_dcqcnp_increase(&s, &p, true);
	CHECK(NEAR(s.alpha, 0.975));
	/* at or below 0.5: a = min(a - 1/25, (1 - g) a) */
	s.alpha = 0.5;
	cc_dcqcnp_increase(&s, &p, true);
	CHECK(NEAR(s.alpha, 0.46));
	s.alpha = 0.01;
	cc_dcqcnp_increase(&s, &p, true);
	CHECK(NEAR(s.alpha, 0.0)); /* never negative */
	/* a CNP within the decrease interval is held (RateHold) */
	cc_dcqcnp_init(&s, &p);
	CHECK(cc_dcqcnp_cnp(&s, &p, 100 * US));
	CHECK(!cc_dcqcnp_cnp(&s, &p, 103 * US));
	CHECK_EQ(s.held, 1);
	CHECK(NEAR(s.rc, 0.5));
	/* between the decrease and the increase interval: decrease, then increase (line 18) */
	s.last_timer = 0;
	CHECK(cc_dcqcnp_cnp(&s, &p, 130 * US));
	/* decrease: Rt = 0.5, Rc = 0.25, a stays 1; increase (FR): Rc = 0.375, a = 0.975 */
	CHECK(NEAR(s.rt, 0.5));
	CHECK(NEAR(s.rc, 0.375));
	CHECK(NEAR(s.alpha, 0.975));
	CHECK_EQ(s.t, 1);
	CHECK_EQ(s.timer_at,
		 130 * US + 55 * US); /* no timer event since the last CNP: no compensation */
	/* with a timer event 10 us after the last CNP the next threshold is 10 us shorter */
	s.last_timer = 140 * US;
	CHECK(cc_dcqcnp_cnp(&s, &p, 160 * US));
	CHECK_EQ(s.timer_at, 160 * US + 45 * US);
	/* the byte counter: 10 MiB is one B event */
	cc_dcqcnp_init(&s, &p);
	cc_dcqcnp_cnp(&s, &p, 100 * US);
	cc_dcqcnp_advance(&s, &p, 101 * US, 10485760);
	CHECK_EQ(s.b, 1);
	CHECK(NEAR(s.rc, 0.75));
	CHECK(NEAR(s.alpha, 1.0)); /* byte events do not move alpha (only lines 9-15) */
}

static void
test_np_cnp_interval(void)
{
	unsigned char priv[256];
	int n = 0;

	CHECK(cc_dcqcn.priv_size <= sizeof(priv));
	cc_dcqcn.init(NULL, priv);
	/* DCQCN NP: marks every 10 us for 200 us, at most one CNP per 50 us */
	for (uint64_t t = 0; t < 200; t += 10)
		n += cc_dcqcn.on_ecn_ce(NULL, priv, 1000 * US + t * US);
	CHECK_EQ(n, 4); /* at 0, 50, 100, 150 us */
	/* DCQCN-p: a CNP per marked packet */
	cc_dcqcn_p.init(NULL, priv);
	n = 0;
	for (uint64_t t = 0; t < 200; t += 10)
		n += cc_dcqcn_p.on_ecn_ce(NULL, priv, 1000 * US + t * US);
	CHECK_EQ(n, 20);
	CHECK(cc_dcqcn.ecn && cc_dcqcn_p.ecn && cc_dctcp.ecn && !cc_timely.ecn);
	CHECK(!cc_dcqcn.becn_ack && cc_dcqcn_p.becn_ack && cc_dctcp.becn_ack);
}

static void
test_dctcp(void)
{
	struct cc_dctcp_params p = cc_dctcp_prm;
	struct cc_dctcp_state s;

	p.init_cwnd = 100;
	cc_dctcp_init(&s, &p, 1000);
	CHECK(NEAR(s.cwnd, 100) && NEAR(s.alpha, 1.0));
	s.flight = 100; /* what the transmit gate saw in flight */
	/* a window of 100 ACKed packets, 50 echoed CE: F = 0.5 */
	cc_dctcp_ack(&s, &p, 60, 30, 1000);
	CHECK(NEAR(s.cwnd, 100)); /* the window is not over yet */
	cc_dctcp_ack(&s, &p, 40, 20, 1000);
	CHECK(NEAR(s.alpha, 15.0 / 16 + 0.5 / 16));   /* 0.96875 */
	CHECK(NEAR(s.cwnd, 100 * (1 - 0.96875 / 2))); /* 51.5625 */
	/* a clean window (51 packets): alpha decays, +1 packet */
	cc_dctcp_ack(&s, &p, 51, 0, 1000);
	CHECK(NEAR(s.alpha, 0.96875 * 15 / 16));
	CHECK(NEAR(s.cwnd, 52.5625));
	CHECK_EQ(s.decreases, 1);
	CHECK_EQ(s.increases, 1);
	/* every packet marked for long: alpha -> 1, the window falls to its minimum */
	for (int i = 0; i < 200; i++)
		cc_dctcp_ack(&s, &p, 1000, 1000, 1000);
	CHECK(NEAR(s.cwnd, p.min_cwnd));
	CHECK(s.alpha > 0.99);

	/* uncapped (the engine's start) and nothing in flight when the first ACK came: that
	 * ACK ends the window (Linux tcp_dctcp), it is not 2^21 packets long */
	p.init_cwnd = 0;
	cc_dctcp_init(&s, &p, 1u << 21);
	s.flight = 0;
	cc_dctcp_ack(&s, &p, 8, 8, 1u << 21);
	CHECK_EQ(s.decreases, 1);
	/* a window is fixed when it begins: still nothing in flight, so one ACK again */
	s.flight = 10;
	cc_dctcp_ack(&s, &p, 1, 1, 1u << 21);
	CHECK_EQ(s.decreases, 2);
	CHECK(NEAR(s.cwnd, 5)); /* the flight cut in half (alpha stays 1: every packet marked) */
	/* this one began with 10 in flight, capped by cwnd 5: it ends at the 5th packet */
	cc_dctcp_ack(&s, &p, 4, 4, 1u << 21);
	CHECK_EQ(s.decreases, 2);
	cc_dctcp_ack(&s, &p, 1, 1, 1u << 21);
	CHECK_EQ(s.decreases, 3);
}

static void
test_timely(void)
{
	struct cc_timely_params p = cc_timely_prm;
	struct cc_timely_state s;

	cc_set_line_rate(10000000000ull); /* delta 10 Mb/s = 0.001 */
	cc_timely_init(&s, &p);
	s.rate = 0.5;
	cc_timely_rtt(&s, &p, 30 * US); /* the first sample only seeds */
	CHECK(NEAR(s.rate, 0.5));
	cc_timely_rtt(&s, &p, 40 * US); /* < T_low: additive */
	CHECK(NEAR(s.rate, 0.501));
	/* > T_high: rate *= 1 - beta (1 - T_high / rtt) = 1 - 0.8 * 0.5 */
	cc_timely_rtt(&s, &p, 1000 * US);
	CHECK(NEAR(s.rate, 0.501 * 0.6));
	/* in band with a rising RTT: gradient = rtt_diff / min_rtt */
	double r;

	cc_timely_init(&s, &p);
	s.rate = 0.5;
	cc_timely_rtt(&s, &p, 100 * US);
	cc_timely_rtt(&s, &p, 110 * US); /* new diff 10 us: rtt_diff = 0.875 * 10 us, grad 0.4375 */
	CHECK(NEAR(s.rtt_diff, 8750));
	CHECK(NEAR(s.rate, 0.5 * (1 - 0.8 * 0.4375)));
	/* falling RTT: additive; after hai_n (5) such samples, 5 delta per sample */
	r = s.rate;
	for (int i = 0; i < 20; i++)
		cc_timely_rtt(&s, &p, (uint64_t)(110 - 2 * (i + 1)) * US);
	CHECK(s.rate > r);
	CHECK(s.neg_rounds >= 5);
	double before = s.rate;

	cc_timely_rtt(&s, &p, 60 * US); /* still falling, in band: HAI */
	CHECK(NEAR(s.rate, before + 5 * 0.001));
}

/*
 * TIMELY profile=wan (base_rtt, queue_signal; docs/cc.md): T_low 5 ms and
 * T_high 25 ms are compared with the queueing delay q = rtt - least RTT seen,
 * and the gradient is scaled by that least RTT. Line 10 Gb/s: delta 10 Mb/s
 * = 0.001. Worked by hand (alpha 0.875, beta 0.8), rtt_diff in ns:
 *   40 ms  seeds: prev 40, min 40                                rate 0.5
 *   41 ms  q 1 ms < T_low: +delta; rtt_diff 875000               rate 0.501
 *   38 ms  new min 38, q 0: +delta; rtt_diff -2515625            rate 0.502
 *          (the datacenter profile would cut here: 38 ms > 500 us)
 * The queue signal needs queue_signal samples in a row above T_low: the
 * profile's 8 is checked, the trace runs with 2.
 *   70 ms  q 32 ms > T_high: x (1 - 0.8 (1 - 25/32)) = x 0.825     rate 0.41415   (1st above)
 *          rtt_diff 0.125 (-2515625) + 0.875 32e6 = 27685546.875
 *   50 ms  q 12 ms in band; rtt_diff -14039306.640625 <= 0: +delta rate 0.41515   signal
 *   52 ms  q 14 ms; rtt_diff -4913.330078125 <= 0: +delta          rate 0.41615   signal
 *   60 ms  q 22 ms; rtt_diff 6999385.833740234375 > 0:
 *          x (1 - 0.8 rtt_diff / 38e6)                             rate 0.3548280...  signal
 *   43 ms  q 5 ms (not above T_low: no signal, not below: band);
 *          rtt_diff 0.125 6999385.83... - 0.875 17e6 < 0: +delta   rate 0.3558280...
 * 3 queue signals (50, 52, 60: the 2nd-4th above in a row), 2 decreases,
 * 5 increases.
 */
static void
test_timely_wan(void)
{
	struct cc_timely_params save = cc_timely_prm, p;
	struct cc_timely_state s;
	char err[160];
	double cut;
	const double MS = 1e6;

	cc_set_line_rate(10000000000ull);
	CHECK_EQ(cc_set_params("timely", "profile=wan", err, sizeof(err)), 0);
	p = cc_timely_prm;
	cc_timely_prm = save;
	CHECK(NEAR(p.t_low_us, 5000) && NEAR(p.t_high_us, 25000));
	CHECK(p.base_rtt == 1 && p.queue_signal == 8);
	p.queue_signal = 2;
	/* the rest is the datacenter profile's */
	CHECK(NEAR(p.alpha, 0.875) && NEAR(p.beta, 0.8) && NEAR(p.delta_mbps, 10));
	CHECK(NEAR(p.hai_n, 5) && NEAR(p.min_rate_mbps, 100));

	cc_timely_init(&s, &p);
	s.rate = 0.5;
	CHECK(!cc_timely_rtt(&s, &p, 40000 * US));
	CHECK(NEAR(s.rate, 0.5) && s.min_rtt == 40000 * US);
	CHECK(!cc_timely_rtt(&s, &p, 41000 * US));
	CHECK(NEAR(s.rate, 0.501) && NEAR(s.rtt_diff, 875000) && s.qdelay == 1000 * US);
	CHECK(!cc_timely_rtt(&s, &p, 38000 * US));
	CHECK(NEAR(s.rate, 0.502) && NEAR(s.rtt_diff, -2515625) && s.min_rtt == 38000 * US);
	CHECK_EQ(s.qdelay, 0);
	CHECK(!cc_timely_rtt(&s, &p, 70000 * US)); /* the first above T_low: no signal yet */
	CHECK_EQ(s.above, 1);
	CHECK(NEAR(s.rate, 0.502 * 0.825) && NEAR(s.rtt_diff, 27685546.875));
	CHECK_EQ(s.qdelay, 32000 * US);
	CHECK(cc_timely_rtt(&s, &p, 50000 * US));
	CHECK(NEAR(s.rate, 0.41515) && NEAR(s.rtt_diff, -14039306.640625));
	CHECK_EQ(s.neg_rounds, 1);
	CHECK(cc_timely_rtt(&s, &p, 52000 * US));
	CHECK(NEAR(s.rate, 0.41615) && NEAR(s.rtt_diff, -4913.330078125));
	CHECK(cc_timely_rtt(&s, &p, 60000 * US));
	cut = 1 - 0.8 * 6999385.833740234375 / (38 * MS);
	CHECK(fabs(s.rtt_diff - 6999385.833740234375) < 1e-6);
	CHECK(NEAR(s.rate, 0.41615 * cut));
	CHECK(fabs(s.rate - 0.3548280123) < 1e-10); /* 0.41615 x 0.8526445088 */
	CHECK_EQ(s.neg_rounds, 0);
	CHECK(!cc_timely_rtt(&s, &p, 43000 * US));
	CHECK(NEAR(s.rate, 0.41615 * cut + 0.001));
	CHECK_EQ(s.above, 0);
	CHECK_EQ(s.queue_signals, 3);
	CHECK_EQ(s.decreases, 2);
	CHECK_EQ(s.increases, 5);

	/* the same two samples with the datacenter profile: 41 ms > T_high 500 us */
	cc_timely_init(&s, &cc_timely_prm);
	s.rate = 0.5;
	CHECK(!cc_timely_rtt(&s, &cc_timely_prm, 40000 * US));
	CHECK(!cc_timely_rtt(&s, &cc_timely_prm, 41000 * US)); /* no queue signal in dc */
	CHECK(NEAR(s.rate, 0.5 * (1 - 0.8 * (1 - 500.0 / 41000))));
	CHECK_EQ(s.queue_signals, 0);

	/* the floor: q 80 ms cuts x 0.45 (1 - 0.8 (1 - 25/80)), 0.011 -> 0.00495 -> 0.01 */
	cc_timely_init(&s, &p);
	s.rate = 0.011;
	cc_timely_rtt(&s, &p, 40000 * US);
	CHECK(!cc_timely_rtt(&s, &p, 120000 * US)); /* one sample above T_low: no signal */
	CHECK(NEAR(s.rate, 0.01));
}

static void
test_pacer(void)
{
	struct cc_pacer pc = {0};
	uint64_t now = 1000000;

	cc_set_line_rate(10000000000ull);
	/* 1 Gb/s: a 1000-byte packet + 62 bytes of headers is 8496 ns on the wire */
	CHECK_EQ(cc_pace_gate(&pc, now, 1e9), now);
	cc_pace_sent(&pc, now, 1000, 1e9);
	/* a fresh bucket may burst up to 50 us: next = now - 50 us + 8496 */
	CHECK_EQ(pc.next, now - CC_PACE_BURST_NS + 8496);
	for (int i = 0; i < 4; i++)
		cc_pace_sent(&pc, now, 1000, 1e9);
	CHECK_EQ(cc_pace_gate(&pc, now, 1e9), now); /* 5 x 8.5 us still inside the burst */
	cc_pace_sent(&pc, now, 1000, 1e9);
	CHECK_EQ(cc_pace_gate(&pc, now, 1e9),
		 now - CC_PACE_BURST_NS + 6 * 8496); /* the 7th waits */
	for (int i = 0; i < 10; i++)
		cc_pace_sent(&pc, now, 1000, 1e9);
	CHECK_EQ(cc_pace_gate(&pc, now, 1e9), now - CC_PACE_BURST_NS + 16 * 8496);
	/* at the line rate nothing is paced */
	CHECK_EQ(cc_pace_gate(&pc, now, 1e10), now);
	/* 10 Mb/s: 849.6 us per packet */
	pc.next = 0;
	cc_pace_sent(&pc, now, 1000, 1e7);
	cc_pace_sent(&pc, now, 1000, 1e7);
	CHECK_EQ(cc_pace_gate(&pc, now, 1e7), now - CC_PACE_BURST_NS + 2 * 849600);
}

static void
test_params(void)
{
	char err[160];
	struct cc_dcqcn_params save = cc_dcqcn_prm;

	CHECK_EQ(cc_set_params("dcqcn", "timer_us=300,f=1", err, sizeof(err)), 0);
	CHECK(NEAR(cc_dcqcn_prm.timer_us, 300) && NEAR(cc_dcqcn_prm.f, 1));
	/* the profile applies first, explicit values win wherever they are written */
	CHECK_EQ(cc_set_params("dcqcn", "dec_interval_us=100,profile=wan", err, sizeof(err)), 0);
	CHECK(NEAR(cc_dcqcn_prm.timer_us, 5000) && NEAR(cc_dcqcn_prm.dec_interval_us, 100));
	CHECK_EQ(cc_set_params("dcqcn", "nope=1", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "nope") != NULL);
	CHECK_EQ(cc_set_params("dcqcn", "g=2", err, sizeof(err)), -EINVAL);
	CHECK_EQ(cc_set_params("dcqcn", "g=x", err, sizeof(err)), -EINVAL);
	CHECK_EQ(cc_set_params("dcqcn", "g", err, sizeof(err)), -EINVAL);
	CHECK_EQ(cc_set_params("dcqcn", "profile=mars", err, sizeof(err)), -EINVAL);
	CHECK_EQ(cc_set_params("none", "g=0.1", err, sizeof(err)), -EINVAL);
	CHECK_EQ(cc_set_params("dcqcn", "becn_ack=1", err, sizeof(err)), 0);
	CHECK(cc_dcqcn.becn_ack);
	cc_dcqcn_prm = save;
	CHECK_EQ(cc_set_params("dcqcn", "", err, sizeof(err)), 0);
	CHECK(!cc_dcqcn.becn_ack);
	CHECK_EQ(cc_register_all(), 0);
	CHECK(roce_cc_find("dcqcn-p") == &cc_dcqcn_p);
	CHECK_EQ(cc_register_all(), 0); /* idempotent */
}

RW_TEST_MAIN(RW_TEST(test_dcqcnp_fig4_single), RW_TEST(test_dcqcnp_fig4_consecutive),
	     RW_TEST(test_dcqcn_fig4_counts), RW_TEST(test_dcqcn_timers_and_counters),
	     RW_TEST(test_dcqcn_hyper), RW_TEST(test_dcqcnp_alpha_and_compensation),
	     RW_TEST(test_np_cnp_interval), RW_TEST(test_dctcp), RW_TEST(test_timely),
	     RW_TEST(test_timely_wan), RW_TEST(test_pacer), RW_TEST(test_params))
