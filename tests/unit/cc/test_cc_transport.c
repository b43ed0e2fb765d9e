/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cc in the engine, over the deterministic in-memory wire (tr_harness):
 * ECT(0) on data when an ECN CC runs, CE marks at the NP answered by CNPs at
 * the configured interval (dcqcn) or BECN-flagged ACKs (dcqcn-p, dctcp),
 * counters that reconcile across both ends, and the transfer byte-exact.
 * The harness clock is fake (it jumps to the next engine deadline), so the
 * counts are exact.
 */
#include <math.h>

#include "cc.h"
#include "net_hdr.h"
#include "roce_int.h"
#include "roce_pkt.h"
#include "rw_test.h"
#include "tr_harness.h"

#define A(w) (&(w)->side[TR_A])
#define B(w) (&(w)->side[TR_B])
#define LEN (1u << 20)

static void
write_and_check(struct tr_wire *w)
{
	struct ibv_wc wc;

	tr_fill(A(w), 0, LEN, 77);
	CHECK_EQ(tr_post_send(A(w), IBV_WR_RDMA_WRITE, 1, 0, LEN, 0, IBV_SEND_SIGNALED), 0);
	tr_run(w, 5000000);
	CHECK_EQ(tr_poll_cq(A(w), false, &wc, 1), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK(memcmp(A(w)->buf, B(w)->buf, LEN) == 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_RX_REQ_BYTES), LEN);
}

/* ECN of the first frame A queues, with the wire holding every frame. */
static int
first_frame_ecn(const char *cc, bool cfg_ecn)
{
	struct tr_opts o = {.cc = cc, .no_ecn = !cfg_ecn};
	struct tr_wire w;
	struct roce_pkt p;
	int ecn = -1;

	tr_init(&w, &o);
	w.capture_only = true;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 4096, 0, IBV_SEND_SIGNALED);
	tr_run(&w, 10);
	if (w.q[TR_A].head && roce_parse(w.q[TR_A].head->data, w.q[TR_A].head->len, &p, 0) == 0)
		ecn = net_tos_ecn(p.l3.tos);
	tr_fini(&w);
	return ecn;
}

static void
test_ect0_when_ecn_cc(void)
{
	CHECK_EQ(cc_register_all(), 0);
	CHECK_EQ(first_frame_ecn("none", false), NET_ECN_NOT_ECT);
	CHECK_EQ(first_frame_ecn("dcqcn", false), NET_ECN_ECT0);
	CHECK_EQ(first_frame_ecn("dcqcn-p", false), NET_ECN_ECT0);
	CHECK_EQ(first_frame_ecn("dctcp", false), NET_ECN_ECT0);
	CHECK_EQ(first_frame_ecn("timely", false), NET_ECN_NOT_ECT);
	CHECK_EQ(first_frame_ecn("none", true), NET_ECN_ECT0); /* cfg.ecn alone, as before */
}

static void
test_dcqcn_cnp(void)
{
	struct tr_opts o = {.cc = "dcqcn"};
	struct tr_wire w;

	tr_init(&w, &o);
	/* 10 requests marked CE: they reach B together, so the 50 us NP interval allows one CNP */
	tr_rule(&w, TR_A, TR_REQ, -1, TR_MARK_CE, 10);
	write_and_check(&w);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_ECN_CE), 10);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_CNPS), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RX_CNPS), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_BECN_ACKS), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES), 1);
	/* the rate then climbs back on the timer as the paced transfer goes on */
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_CC_INCREASES) >= 1);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_RATE_BLOCKED) +
		  tr_dev_stat(A(&w), ROCE_STAT_CC_BLOCKED) >=
	      1);
	struct roce_cc_info ci;

	CHECK_EQ(roce_qp_cc_info(A(&w)->qp, &ci), 0);
	CHECK(ci.rate_bps > 0 && ci.rate_bps <= (double)cc_line_rate());
	printf("dcqcn: %llu CNP, %llu decreases, %llu increases, rate now %.3f Gb/s\n",
	       (unsigned long long)tr_dev_stat(A(&w), ROCE_STAT_RX_CNPS),
	       (unsigned long long)tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES),
	       (unsigned long long)tr_dev_stat(A(&w), ROCE_STAT_CC_INCREASES), ci.rate_bps / 1e9);
	tr_fini(&w);
}

static void
test_cnp_dscp(void)
{
	struct tr_opts o = {.cc = "dcqcn"};
	struct tr_wire w;
	struct roce_pkt p;
	bool seen = false;

	tr_init(&w, &o);
	tr_rule(&w, TR_A, TR_REQ, -1, TR_MARK_CE, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 1024, 0, IBV_SEND_SIGNALED);
	w.capture_only = true;
	tr_run(&w, 10);
	tr_deliver_one(&w, TR_A);
	tr_poll(&w);
	for (struct tr_frame *f = w.q[TR_B].head; f; f = f->next)
		if (roce_parse(f->data, f->len, &p, 0) == 0 && p.h.bth.opcode == ROCE_OP_CNP) {
			CHECK_EQ(p.l3.tos >> 2, 48);
			CHECK_EQ(p.h.bth.becn, 1);
			seen = true;
		}
	CHECK(seen);
	tr_fini(&w);
}

static void
test_dcqcnp_becn_ack(void)
{
	struct tr_opts o = {.cc = "dcqcn-p"};
	struct tr_wire w;

	tr_init(&w, &o);
	tr_rule(&w, TR_A, TR_REQ, -1, TR_MARK_CE, 10);
	write_and_check(&w);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_ECN_CE), 10);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_CNPS), 0); /* RC: BECN-flagged ACKs instead */
	CHECK(tr_dev_stat(B(&w), ROCE_STAT_TX_BECN_ACKS) >= 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RX_BECN_ACKS),
		 tr_dev_stat(B(&w), ROCE_STAT_TX_BECN_ACKS));
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES) >= 1);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES) <=
	      tr_dev_stat(A(&w), ROCE_STAT_RX_BECN_ACKS));
	tr_fini(&w);
}

static void
test_dctcp_window(void)
{
	struct tr_opts o = {.cc = "dctcp"};
	struct tr_wire w;
	struct roce_cc_info ci;

	tr_init(&w, &o);
	tr_rule(&w, TR_A, TR_REQ, -1, TR_MARK_CE, 200);
	write_and_check(&w);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_ECN_CE), 200);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RX_BECN_ACKS),
		 tr_dev_stat(B(&w), ROCE_STAT_TX_BECN_ACKS));
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES) >= 1);
	CHECK_EQ(roce_qp_cc_info(A(&w)->qp, &ci), 0);
	CHECK(ci.window >= 2 && ci.alpha > 0);
	tr_fini(&w);
}

/*
 * A window CC cut below what is in flight must still let the go-back round
 * repair a loss: its gate sees the PSNs between una and the retransmission,
 * not the whole flight (a DCTCP QP ran out of retries in the ECN bench).
 */
static void
test_dctcp_loss_after_cut(void)
{
	struct tr_opts o = {.cc = "dctcp", .psn_set = true, .sq_psn = 0x100, .rq_psn = 0x100};
	struct tr_wire w;

	tr_init(&w, &o);
	tr_rule(&w, TR_A, TR_REQ, -1, TR_MARK_CE, 400);
	tr_rule(&w, TR_A, TR_REQ, 0x100 + 700, TR_DROP, 1);
	write_and_check(&w);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES) >= 1);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS) >= 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RETRY_EXC), 0);
	tr_fini(&w);
}

static void
test_no_marks_no_change(void)
{
	/* the lossless, unmarked path: no CNP, no rate change, no pacing stall */
	const char *ccs[] = {"dcqcn", "dcqcn-p", "dctcp", "timely"};

	for (unsigned int i = 0; i < 4; i++) {
		struct tr_opts o = {.cc = ccs[i]};
		struct tr_wire w;

		tr_init(&w, &o);
		write_and_check(&w);
		CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES), 0);
		CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_CC_BLOCKED), 0);
		CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_CNPS), 0);
		CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
		tr_fini(&w);
	}
}

/*
 * TIMELY through the engine (Mittal et al., SIGCOMM 2015, Algorithm 1): one
 * 1 KiB WRITE per round on the fake clock; B's ACK is held back D us before A
 * sees it, so the engine's RTT sampler (roce_rtt.h, Karn's rule) hands TIMELY
 * exactly D. The rates below are worked by hand from Algorithm 1 with the
 * defaults (alpha 0.875, beta 0.8, T_low 50 us, T_high 500 us, min_rtt 20 us,
 * delta 10 Mb/s = 0.001 of the 10 Gb/s line, HAI after 5 negative gradients):
 *   100: the first sample only seeds prev_rtt: 1.0
 *   1000 > T_high: 1 x (1 - 0.8 (1 - 500/1000)) = 0.6   (rtt_diff 0.875 x 900 = 787.5)
 *   1000 > T_high: 0.6 x 0.6 = 0.36                      (rtt_diff 787.5 / 8 = 98.4375)
 *   400: rtt_diff 98.4375/8 - 0.875 x 600 = -512.6953125 <= 0: + delta = 0.361
 *   380, 360, 340, 320: still negative: 0.362, 0.363, 0.364, 0.365 (5 in a row)
 *   300: the 6th negative gradient: HAI, + 5 delta = 0.370
 *   300: rtt_diff -20.01503586769104/8 < 0: HAI again: 0.375
 *   320: rtt_diff -2.50187948346138/8 + 0.875 x 20 = 17.187265064567327,
 *        gradient / 20 us = 0.8593632532283664: 0.375 (1 - 0.8 x 0.859...) = 0.1171910240...
 *   40 < T_low: + delta = 0.1181910240...
 * The rate is then the pacer's: a run at a lower rate takes longer on the
 * same fake clock (checked at the end).
 */
static void
test_timely_rtt_through_engine(void)
{
	static const uint32_t rtt_us[] = {100, 1000, 1000, 400, 380, 360,
					  340, 320,  300,  300, 320, 40};
	static const double want[] = {1.0,
				      0.6,
				      0.36,
				      0.361,
				      0.362,
				      0.363,
				      0.364,
				      0.365,
				      0.370,
				      0.375,
				      0.11719102403149008,
				      0.11819102403149008};
	struct tr_opts o = {.cc = "timely", .rto_fixed = true}; /* IBTA 67 ms: no timer fires */
	struct tr_wire w;
	struct roce_cc_info ci;
	struct ibv_wc wc;
	const unsigned int n = sizeof(rtt_us) / sizeof(rtt_us[0]);

	CHECK_EQ(cc_register_all(), 0);
	tr_init(&w, &o);
	w.capture_only = true;
	tr_fill(A(&w), 0, n * 1024, 99);
	for (unsigned int i = 0; i < n; i++) {
		w.now = (uint64_t)(i + 1) * 10000000; /* 10 ms apart: the pacer never holds */
		CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, i, i * 1024, 1024, i * 1024,
				      IBV_SEND_SIGNALED),
			 0);
		tr_run(&w, 100);
		CHECK_EQ(w.q[TR_A].count, 1);
		CHECK(tr_deliver_one(&w, TR_A));
		tr_poll(&w);
		CHECK_EQ(w.q[TR_B].count, 1); /* B's ACK, held on the wire */
		w.now += (uint64_t)rtt_us[i] * 1000;
		CHECK(tr_deliver_one(&w, TR_B));
		tr_poll(&w);
		CHECK_EQ(tr_poll_cq(A(&w), false, &wc, 1), 1);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(roce_qp_cc_info(A(&w)->qp, &ci), 0);
		CHECK_EQ(ci.rtt_ns, (uint64_t)rtt_us[i] * 1000);
		CHECK(fabs(ci.rate_bps / (double)cc_line_rate() - want[i]) < 1e-12);
	}
	CHECK_MEM(A(&w)->buf, B(&w)->buf, n * 1024);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RTT_SAMPLES), n);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES), 3);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_CC_INCREASES), 8);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
	tr_fini(&w);
}

/*
 * TIMELY profile=wan through the engine, as above (one 1 KiB WRITE per round,
 * B's ACK held D ms): T_low 5 ms and T_high 25 ms against the queueing delay
 * q = D - least D so far, the gradient over that least D (docs/cc.md). The
 * QP starts in the loss window's slow start (10 packets, the rnic's default);
 * queue_signal=2: two samples in a row above T_low are a queue signal.
 * Worked by hand (rtt_diff in ns, delta 0.001 of the 10 Gb/s line):
 *   20 ms  seeds (min 20)                                        1.0
 *   21 ms  q 1 < T_low: + delta, clamped at the line              1.0
 *   18 ms  min 18, q 0: clamped                                   1.0
 *   50 ms  q 32 > T_high: x (1 - 0.8 (1 - 25/32)) = x 0.825         0.825   (1st above)
 *   30 ms  q 12, rtt_diff -14039306.640625 <= 0: + delta          0.826   queue signal
 *   32 ms  q 14, rtt_diff -4913.330078125 <= 0: + delta            0.827   queue signal
 *   40 ms  q 22, rtt_diff 6999385.833740234375 > 0:
 *          x (1 - 0.8 x 6999385.833740234375 / 18e6)               0.5697336851  signal
 *   23 ms  q 5 (not above T_low), rtt_diff < 0: + delta            0.5707336851
 * (the rtt_diff sequence is test_cc.c's test_timely_wan's, 20 ms lower). The
 * first queue signal (30 ms) ends the loss window's slow start at its 10
 * packets (ssthresh = cwnd, as a CNP would); before it ssthresh is unset.
 */
static void
test_timely_wan_through_engine(void)
{
	static const uint32_t rtt_ms[] = {20, 21, 18, 50, 30, 32, 40, 23};
	const double cut = 1 - 0.8 * 6999385.833740234375 / 18e6;
	const double want[] = {1.0,   1.0,   1.0,	  0.825,
			       0.826, 0.827, 0.827 * cut, 0.827 * cut + 0.001};
	struct tr_opts o = {.cc = "timely", .rto_fixed = true, .loss_window_init = 10};
	struct cc_timely_params save = cc_timely_prm;
	struct tr_wire w;
	struct roce_cc_info ci;
	struct ibv_wc wc;
	char err[160];
	const unsigned int n = sizeof(rtt_ms) / sizeof(rtt_ms[0]);

	CHECK_EQ(cc_register_all(), 0);
	CHECK_EQ(cc_set_params("timely", "profile=wan,queue_signal=2", err, sizeof(err)), 0);
	tr_init(&w, &o);
	w.capture_only = true;
	CHECK_EQ(A(&w)->qp->lwin.cwnd, 10);
	CHECK_EQ(A(&w)->qp->lwin.ssthresh, UINT32_MAX);
	tr_fill(A(&w), 0, n * 1024, 98);
	for (unsigned int i = 0; i < n; i++) {
		w.now = (uint64_t)(i + 1) * 1000000000; /* 1 s apart: the pacer never holds */
		CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, i, i * 1024, 1024, i * 1024,
				      IBV_SEND_SIGNALED),
			 0);
		tr_run(&w, 100);
		CHECK_EQ(w.q[TR_A].count, 1);
		CHECK(tr_deliver_one(&w, TR_A));
		tr_poll(&w);
		CHECK_EQ(w.q[TR_B].count, 1);
		w.now += (uint64_t)rtt_ms[i] * 1000000;
		CHECK(tr_deliver_one(&w, TR_B));
		tr_poll(&w);
		CHECK_EQ(tr_poll_cq(A(&w), false, &wc, 1), 1);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(roce_qp_cc_info(A(&w)->qp, &ci), 0);
		CHECK_EQ(ci.rtt_ns, (uint64_t)rtt_ms[i] * 1000000);
		CHECK(fabs(ci.rate_bps / (double)cc_line_rate() - want[i]) < 1e-12);
		/* slow start until the second queueing delay in a row above T_low (i = 4) */
		CHECK_EQ(A(&w)->qp->lwin.ssthresh, i < 4 ? UINT32_MAX : 10u);
		CHECK_EQ(A(&w)->qp->lwin.cwnd, 10); /* one packet in flight: never window-limited */
	}
	CHECK(fabs(want[6] - 0.5697336851) < 1e-10);
	CHECK_MEM(A(&w)->buf, B(&w)->buf, n * 1024);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RTT_SAMPLES), n);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES), 2);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_CC_INCREASES), 3);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	tr_fini(&w);
	cc_timely_prm = save;

	/* negative control: the datacenter profile never signals, slow start goes on */
	tr_init(&w, &o);
	w.capture_only = true;
	for (unsigned int i = 0; i < 3; i++) {
		w.now = (uint64_t)(i + 1) * 1000000000;
		tr_post_send(A(&w), IBV_WR_RDMA_WRITE, i, 0, 1024, 0, IBV_SEND_SIGNALED);
		tr_run(&w, 100);
		tr_deliver_one(&w, TR_A);
		tr_poll(&w);
		w.now += 50000000; /* 50 ms: far above T_high 500 us */
		tr_deliver_one(&w, TR_B);
		tr_poll(&w);
	}
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RTT_SAMPLES), 3);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES), 2);
	CHECK_EQ(A(&w)->qp->lwin.ssthresh, UINT32_MAX);
	tr_fini(&w);
}

/*
 * TIMELY's rate paces the wire: after an RTT above T_high the next burst of
 * packets leaves spaced by its wire time at the lowered rate, on the fake clock.
 */
static void
test_timely_paces(void)
{
	struct tr_opts o = {.cc = "timely", .rto_fixed = true, .no_loss_window = true};
	struct tr_wire w;
	struct roce_cc_info ci;
	uint64_t t0;

	CHECK_EQ(cc_register_all(), 0);
	tr_init(&w, &o);
	w.capture_only = true;
	/* two single-packet rounds: RTT 100 us, then 1000 us: rate 0.6 of the line */
	for (unsigned int i = 0; i < 2; i++) {
		w.now = (uint64_t)(i + 1) * 10000000;
		tr_post_send(A(&w), IBV_WR_RDMA_WRITE, i, 0, 1024, 0, IBV_SEND_SIGNALED);
		tr_run(&w, 100);
		tr_deliver_one(&w, TR_A);
		tr_poll(&w);
		w.now += i ? 1000000 : 100000;
		tr_deliver_one(&w, TR_B);
		tr_poll(&w);
	}
	CHECK_EQ(roce_qp_cc_info(A(&w)->qp, &ci), 0);
	CHECK(fabs(ci.rate_bps / (double)cc_line_rate() - 0.6) < 1e-12);
	/*
	 * 100 packets of 1 KiB at 6 Gb/s: a gap of (1024 + 62) x 8 / 6e9 s = 1448 ns
	 * each (cc_pace.c). The bucket was idle, so it starts CC_PACE_BURST_NS
	 * (50 us) back: packet k leaves at t0 once 50000 - (k - 1) 1448 >= 0, that is
	 * 35 packets at t0; then one more every 1448 ns. (The loss window is off:
	 * its slow start would hold the flight at 10 packets first.)
	 */
	w.now = 30000000;
	t0 = w.now;
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 9, 0, 100 * 1024, 0, IBV_SEND_SIGNALED), 0);
	tr_run(&w, 1000);
	CHECK_EQ(w.q[TR_A].count, 35);
	w.now = t0 + 35 * 1448 - 50000 - 1; /* 1 ns before the 36th packet's time */
	tr_run(&w, 1000);
	CHECK_EQ(w.q[TR_A].count, 35);
	w.now++;
	tr_run(&w, 1000);
	CHECK_EQ(w.q[TR_A].count, 36);
	w.now += 10 * 1448;
	tr_run(&w, 1000);
	CHECK_EQ(w.q[TR_A].count, 46);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
	tr_fini(&w);
}

RW_TEST_MAIN(RW_TEST(test_ect0_when_ecn_cc), RW_TEST(test_dcqcn_cnp), RW_TEST(test_cnp_dscp),
	     RW_TEST(test_dcqcnp_becn_ack), RW_TEST(test_dctcp_window),
	     RW_TEST(test_dctcp_loss_after_cut), RW_TEST(test_no_marks_no_change),
	     RW_TEST(test_timely_rtt_through_engine), RW_TEST(test_timely_wan_through_engine),
	     RW_TEST(test_timely_paces))
