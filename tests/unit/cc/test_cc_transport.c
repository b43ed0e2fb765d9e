/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cc in the engine, over the deterministic in-memory wire (tr_harness):
 * ECT(0) on data when an ECN CC runs, CE marks at the NP answered by CNPs at
 * the configured interval (dcqcn) or BECN-flagged ACKs (dcqcn-p, dctcp),
 * counters that reconcile across both ends, and the transfer byte-exact.
 * The harness clock is fake (it jumps to the next engine deadline), so the
 * counts are exact.
 */
#include "cc.h"
#include "net_hdr.h"
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
	CHECK_EQ(rw_cc_register_all(), 0);
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
	CHECK(ci.rate_bps > 0 && ci.rate_bps <= (double)rw_cc_line_rate());
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

RW_TEST_MAIN(RW_TEST(test_ect0_when_ecn_cc), RW_TEST(test_dcqcn_cnp), RW_TEST(test_cnp_dscp),
	     RW_TEST(test_dcqcnp_becn_ack), RW_TEST(test_dctcp_window),
	     RW_TEST(test_dctcp_loss_after_cut), RW_TEST(test_no_marks_no_change))
