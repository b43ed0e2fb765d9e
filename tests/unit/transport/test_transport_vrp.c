/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --recovery vrp (VRP, Denis, LIP RR-2000-11) through the transport harness
 * with deterministic drops: a tolerated loss is zero-filled in the target and
 * never retransmitted, an intolerable one is NACKed and retransmitted, and
 * the loss the receiver reports is exact. Every byte of the target is checked
 * after every transfer: the data of packets that arrived, zeros where a loss
 * was tolerated (the target was filled with 0xA5 before).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "roce_pkt.h"
#include "rw_test.h"
#include "tr_harness.h"

#define RUN(w) tr_run((w), 1000000)
#define PSN0 0x100 /* the harness's start PSN */
#define MTU 1024u

static struct tr_side *
A(struct tr_wire *w)
{
	return &w->side[TR_A];
}

static struct tr_side *
B(struct tr_wire *w)
{
	return &w->side[TR_B];
}

static void
vinit(struct tr_wire *w, uint32_t loss_bp, uint32_t window, uint64_t burst, unsigned int ncrit,
      const struct vrp_range *crit)
{
	struct tr_opts o = {.recovery = "vrp"};
	struct vrp_tolerance t = {
	    .loss_bp = loss_bp, .window = window, .max_burst = burst, .n_critical = ncrit};
	const char *err = NULL;

	tr_init(w, &o);
	for (unsigned int i = 0; i < ncrit; i++)
		t.critical[i] = crit[i];
	CHECK_EQ(roce_qp_set_vrp(B(w)->qp, &t, &err), 0);
	memset(B(w)->buf, 0xa5, 64 * MTU);
}

static void
expect_wc(struct tr_side *s, bool recv, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	CHECK_EQ(tr_poll_cq(s, recv, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.status, st);
}

/* Packets [0, n) of a WRITE at offset 0: those in @p lost read as zeros, the others as sent. */
static void
expect_data(struct tr_wire *w, uint32_t n, uint64_t lost)
{
	static const uint8_t zeros[MTU];

	for (uint32_t i = 0; i < n; i++) {
		if (lost >> i & 1)
			CHECK_MEM(B(w)->buf + i * MTU, zeros, MTU);
		else
			CHECK_MEM(B(w)->buf + i * MTU, A(w)->buf + i * MTU, MTU);
	}
	CHECK_EQ(B(w)->buf[n * MTU], 0xa5); /* nothing after the message */
}

static uint64_t
stat(struct tr_wire *w, int side, enum roce_stat id)
{
	return tr_dev_stat(&w->side[side], id);
}

/*
 * The requester's summary of a message (its send completion, from the VRP
 * LOSS summary, docs/wire.md 0xE3) equals the responder's loss map, field by
 * field.
 */
static void
expect_same_map(const struct roce_vrp_loss *req, const struct roce_vrp_loss *resp)
{
	CHECK_EQ(req->msn, resp->msn);
	CHECK_EQ(req->len, resp->len);
	CHECK_EQ(req->lost_pkts, resp->lost_pkts);
	CHECK_EQ(req->lost_bytes, resp->lost_bytes);
	CHECK_EQ(req->n_holes, resp->n_holes);
	CHECK_EQ(req->holes_truncated, resp->holes_truncated);
	for (uint32_t i = 0; i < resp->n_holes && i < ROCE_VRP_HOLES; i++) {
		CHECK_EQ(req->holes[i].off, resp->holes[i].off);
		CHECK_EQ(req->holes[i].len, resp->holes[i].len);
	}
}

/* One 20-packet WRITE, drops by PSN offset; returns after the run. */
static void
write20(struct tr_wire *w, const int *drops, int ndrops)
{
	tr_fill(A(w), 0, 20 * MTU, 7);
	for (int i = 0; i < ndrops; i++)
		tr_rule(w, TR_A, TR_REQ, PSN0 + drops[i], TR_DROP, 1);
	tr_post_send(A(w), IBV_WR_RDMA_WRITE, 1, 0, 20 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(w);
	expect_wc(A(w), false, 1, IBV_WC_SUCCESS);
}

/* A loss within tolerance: no NACK, no retransmission, zeros in place, reported exactly. */
static void
t_tolerated(void)
{
	struct tr_wire w;
	struct roce_vrp_loss l;
	const int d[] = {5};

	vinit(&w, 1000, 20, VRP_BURST_UNLIMITED, 0, NULL); /* 10 % of 20: 2 losses */
	write20(&w, d, 1);
	expect_data(&w, 20, 1ull << 5);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 0);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_TX_VRP_NACKS), 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_ZERO_BYTES), MTU);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_MSGS), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_HIST_1), 1);
	/* PSN 6 is placed, shows the hole, which is tolerated at once: 7..19 arrive in order */
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_TX_VRP_ACKS), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_ACKS), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_OOO_PLACED), 1);
	CHECK_EQ(roce_qp_vrp_loss(B(&w)->qp, &l), 0);
	CHECK_EQ(l.len, 20 * MTU);
	CHECK_EQ(l.lost_pkts, 1);
	CHECK_EQ(l.lost_bytes, MTU);
	CHECK_EQ(l.n_holes, 1);
	CHECK_EQ(l.holes[0].off, 5 * MTU);
	CHECK_EQ(l.holes[0].len, MTU);
	tr_fini(&w);
}

/* Two losses in a window that allows one: the second is NACKed (rate) and resent. */
static void
t_beyond_rate(void)
{
	struct tr_wire w;
	struct roce_vrp_loss l;
	const int d[] = {3, 8};

	vinit(&w, 500, 20, VRP_BURST_UNLIMITED, 0, NULL); /* 5 % of 20: 1 loss */
	write20(&w, d, 2);
	expect_data(&w, 20, 1ull << 3);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACK_RATE), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACKED), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_TX_VRP_NACKS), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_NACKS), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(roce_qp_vrp_loss(B(&w)->qp, &l), 0);
	CHECK_EQ(l.lost_pkts, 1);
	CHECK_EQ(l.holes[0].off, 3 * MTU);
	tr_fini(&w);
}

/* A run of 2 with at most 1 consecutive (1024 B): the second of the run is NACKed. */
static void
t_consecutive(void)
{
	struct tr_wire w;
	const int d[] = {4, 5};

	vinit(&w, 5000, 20, MTU, 0, NULL);
	write20(&w, d, 2);
	expect_data(&w, 20, 1ull << 4);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACK_CONS), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED), 1);
	tr_fini(&w);
}

/* A loss inside a critical range is always resent, even at 50 % tolerance. */
static void
t_critical(void)
{
	struct tr_wire w;
	const struct vrp_range c[] = {{6 * MTU + 100, 10}};
	const int d[] = {6, 10};

	vinit(&w, 5000, 20, VRP_BURST_UNLIMITED, 1, c);
	write20(&w, d, 2);
	expect_data(&w, 20, 1ull << 10);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACK_CRIT), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED), 1);
	tr_fini(&w);
}

/* 0 % tolerance: every loss NACKed and resent, byte-exact: reliable delivery. */
static void
t_zero_tolerance(void)
{
	struct tr_wire w;
	struct roce_vrp_loss l;
	const int d[] = {3, 7, 8, 15};

	vinit(&w, 0, 0, VRP_BURST_UNLIMITED, 0, NULL);
	write20(&w, d, 4);
	expect_data(&w, 20, 0);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 4);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACKED), 4);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED), 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_ZERO_BYTES), 0);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_HIST_0), 1);
	CHECK_EQ(roce_qp_vrp_loss(B(&w)->qp, &l), 0);
	CHECK_EQ(l.lost_pkts, 0);
	tr_fini(&w);
}

/* The first packet lost: its RETH places the message, so it is NACKed and resent. */
static void
t_first_lost(void)
{
	struct tr_wire w;
	const int d[] = {0};

	vinit(&w, 5000, 20, VRP_BURST_UNLIMITED, 0, NULL);
	write20(&w, d, 1);
	expect_data(&w, 20, 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACK_UNKNOWN), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED), 0);
	tr_fini(&w);
}

/*
 * The last packet of a message lost: nothing later shows it alone, the
 * sender's timer resends it (VRP §3.2.1); behind a second message, the
 * receiver NACKs it (critical) when the next message's first packet arrives.
 */
static void
t_last_lost(void)
{
	struct tr_wire w;
	const int d[] = {19};

	vinit(&w, 5000, 20, VRP_BURST_UNLIMITED, 0, NULL);
	write20(&w, d, 1);
	expect_data(&w, 20, 0);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 1);
	tr_fini(&w);

	vinit(&w, 5000, 20, VRP_BURST_UNLIMITED, 0, NULL);
	tr_fill(A(&w), 0, 8 * MTU, 8);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 4 * MTU, 0, IBV_SEND_SIGNALED);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 4 * MTU, 4 * MTU, 4 * MTU, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	expect_data(&w, 8, 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACK_CRIT), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_MSGS), 2);
	tr_fini(&w);
}

/* The NACK itself lost: the sender's timer resends what no VRP ACK reported. */
static void
t_nack_lost(void)
{
	struct tr_wire w;
	const int d[] = {5};

	vinit(&w, 0, 0, VRP_BURST_UNLIMITED, 0, NULL);
	tr_rule(&w, TR_B, TR_VRP_NACK, PSN0 + 5, TR_DROP, 1);
	write20(&w, d, 1);
	expect_data(&w, 20, 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_TX_VRP_NACKS), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_NACKS), 0);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 1); /* the VRP ACKs reported 6..19 */
	tr_fini(&w);
}

/*
 * A NACKed packet whose retransmission is lost too (drop the original and the
 * first resend), at 0 %: the receiver NACKs it once; the sender finds the
 * resend lost when a VRP ACK names a PSN sent after it (WRITE 2, posted after
 * the resend) and resends it once more: exactly one re-request, no timeout,
 * byte-exact.
 */
static void
t_retx_lost(void)
{
	struct tr_wire w;

	vinit(&w, 0, 0, VRP_BURST_UNLIMITED, 0, NULL);
	tr_fill(A(&w), 0, 12 * MTU, 4);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 2); /* the original and its first resend */
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 8 * MTU, 0, 0);
	while (tr_deliver_one(&w, TR_A))
		;
	while (tr_deliver_one(&w, TR_B)) /* the NACK: PSN 3 resent, and lost */
		;
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(w.dropped, 2);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 8 * MTU, 4 * MTU, 8 * MTU, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	expect_data(&w, 12, 0);
	CHECK_EQ(w.dropped, 2);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RETX_LOST_DETECT), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 2);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_TX_VRP_NACKS), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACKED), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED), 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_SPURIOUS), 0);
	tr_fini(&w);
}

/*
 * The timer resends only what was not reported. PSN 3 is critical and lost
 * with its resend; nothing is sent after the resend, so the timer repairs it.
 * PSN 8, a loss tolerated while ePSN waited at 3, is reported by the VRP ACKs'
 * run (docs/wire.md) and is not resent: one timeout, PSN 3 sent three times
 * and nothing else resent, zeros at 8.
 */
static void
t_rto_unreported_only(void)
{
	struct tr_wire w;
	const struct vrp_range c[] = {{3 * MTU, 1}};

	vinit(&w, 500, 20, VRP_BURST_UNLIMITED, 1, c); /* 1 loss in 20, packet 3 critical */
	tr_fill(A(&w), 0, 20 * MTU, 5);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 2);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 8, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 20 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	expect_data(&w, 20, 1ull << 8);
	CHECK_EQ(w.dropped, 3);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 2);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACK_CRIT), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_ZERO_BYTES), MTU);
	tr_fini(&w);
}

/* WRITE with immediate: the receive completion, then the loss record of that message. */
static void
t_write_imm_loss(void)
{
	struct tr_wire w;
	struct roce_vrp_loss l;

	vinit(&w, 2000, 10, VRP_BURST_UNLIMITED, 0, NULL); /* 2 of 10 */
	tr_fill(A(&w), 0, 10 * MTU, 9);
	tr_post_recv(B(&w), 77, 0, 0);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 2, TR_DROP, 1);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 6, TR_DROP, 1);
	tr_post_imm(A(&w), IBV_WR_RDMA_WRITE_WITH_IMM, 1, 0, 10 * MTU, 0, 0x1234);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	expect_wc(B(&w), true, 77, IBV_WC_SUCCESS);
	expect_data(&w, 10, 1ull << 2 | 1ull << 6);
	CHECK_EQ(roce_qp_vrp_loss(B(&w)->qp, &l), 0);
	CHECK_EQ(l.lost_pkts, 2);
	CHECK_EQ(l.lost_bytes, 2 * MTU);
	CHECK_EQ(l.n_holes, 2);
	CHECK_EQ(l.holes[1].off, 6 * MTU);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_HIST_2), 1);
	tr_fini(&w);
}

/*
 * The extended work completion (roce_poll_cq_ex): rdma-core's ibv_wc first and
 * unchanged, then the loss map of the WRITE with immediate. Two messages on
 * the same QP: the first loses packets 1 and 2 (one merged hole) and 6 of 10,
 * the second nothing; a SEND's completion carries no map. A gbone QP's
 * completion neither.
 */
static void
t_wc_ex(void)
{
	struct tr_wire w;
	struct roce_wc_ex ex[4], sx[4];
	struct roce_vrp_loss peer;
	struct ibv_wc plain;

	_Static_assert(offsetof(struct roce_wc_ex, wc) == 0, "ibv_wc first");
	vinit(&w, 3000, 10, VRP_BURST_UNLIMITED, 0, NULL); /* 3 of 10 */
	tr_fill(A(&w), 0, 20 * MTU, 3);
	tr_post_recv(B(&w), 71, 0, 0);
	tr_post_recv(B(&w), 72, 0, 0);
	tr_post_recv(B(&w), 73, 30 * MTU, 64);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 1, TR_DROP, 1);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 2, TR_DROP, 1);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 6, TR_DROP, 1);
	tr_post_imm(A(&w), IBV_WR_RDMA_WRITE_WITH_IMM, 1, 0, 10 * MTU, 0, 0x11);
	tr_post_imm(A(&w), IBV_WR_RDMA_WRITE_WITH_IMM, 2, 10 * MTU, 10 * MTU, 10 * MTU, 0x22);
	tr_post_send(A(&w), IBV_WR_SEND, 3, 20 * MTU, 64, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	CHECK_EQ(roce_poll_cq_ex(B(&w)->rcq, 4, ex), 3);
	CHECK_EQ(ex[0].wc.wr_id, 71);
	CHECK_EQ(ex[0].wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(ex[0].wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK_EQ(ex[0].wc.byte_len, 10 * MTU);
	CHECK_EQ(ex[0].wc.imm_data, htobe32(0x11));
	CHECK(ex[0].vrp_valid);
	CHECK_EQ(ex[0].vrp.len, 10 * MTU);
	CHECK_EQ(ex[0].vrp.lost_pkts, 3);
	CHECK_EQ(ex[0].vrp.lost_bytes, 3 * MTU);
	CHECK_EQ(ex[0].vrp.n_holes, 2);
	CHECK_EQ(ex[0].vrp.holes[0].off, MTU);
	CHECK_EQ(ex[0].vrp.holes[0].len, 2 * MTU);
	CHECK_EQ(ex[0].vrp.holes[1].off, 6 * MTU);
	CHECK_EQ(ex[0].vrp.holes[1].len, MTU);
	CHECK(!ex[0].vrp.holes_truncated);
	CHECK_EQ(ex[1].wc.wr_id, 72);
	CHECK_EQ(ex[1].wc.imm_data, htobe32(0x22));
	CHECK(ex[1].vrp_valid);
	CHECK_EQ(ex[1].vrp.len, 10 * MTU);
	CHECK_EQ(ex[1].vrp.lost_pkts, 0);
	CHECK_EQ(ex[1].vrp.n_holes, 0);
	CHECK_EQ(ex[2].wc.wr_id, 73);
	CHECK_EQ(ex[2].wc.opcode, IBV_WC_RECV);
	CHECK(!ex[2].vrp_valid);
	CHECK_EQ(ex[2].vrp.lost_bytes, 0);
	expect_data(&w, 20, 1ull << 1 | 1ull << 2 | 1ull << 6);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 0);
	/* the requester's completions carry the responder's maps (VRP LOSS summaries) */
	CHECK_EQ(roce_poll_cq_ex(A(&w)->scq, 4, sx), 3);
	CHECK_EQ(sx[0].wc.wr_id, 1);
	CHECK_EQ(sx[0].wc.opcode, IBV_WC_RDMA_WRITE);
	CHECK_EQ(sx[0].wc.byte_len, 10 * MTU);
	CHECK(sx[0].vrp_valid);
	expect_same_map(&sx[0].vrp, &ex[0].vrp);
	CHECK_EQ(sx[0].vrp.lost_pkts, 3);
	CHECK_EQ(sx[1].wc.wr_id, 2);
	CHECK(sx[1].vrp_valid);
	expect_same_map(&sx[1].vrp, &ex[1].vrp);
	CHECK_EQ(sx[2].wc.wr_id, 3);
	CHECK_EQ(sx[2].wc.opcode, IBV_WC_SEND);
	CHECK(!sx[2].vrp_valid);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_TX_VRP_SUMMARIES), 2);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_SUMMARIES), 2);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_SUM_DROP), 0);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_SUM_MISSING), 0);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_PEER_LOST_PKTS), 3);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_PEER_LOST_BYTES), 3 * MTU);
	CHECK_EQ(roce_qp_vrp_peer_loss(A(&w)->qp, &peer), 0);
	expect_same_map(&peer, &ex[1].vrp);
	tr_fini(&w);

	/* no tolerance mode: plain completions, roce_poll_cq and roce_poll_cq_ex agree */
	tr_init(&w, &(struct tr_opts){.recovery = "gbone"});
	tr_fill(A(&w), 0, 4 * MTU, 2);
	tr_post_recv(B(&w), 81, 0, 0);
	tr_post_recv(B(&w), 82, 0, 0);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 1, TR_DROP, 1);
	tr_post_imm(A(&w), IBV_WR_RDMA_WRITE_WITH_IMM, 1, 0, 4 * MTU, 0, 0x33);
	tr_post_imm(A(&w), IBV_WR_RDMA_WRITE_WITH_IMM, 2, 0, MTU, 0, 0x44);
	RUN(&w);
	CHECK_EQ(roce_poll_cq_ex(B(&w)->rcq, 1, ex), 1);
	CHECK_EQ(ex[0].wc.wr_id, 81);
	CHECK(!ex[0].vrp_valid);
	CHECK_EQ(ex[0].vrp.lost_pkts, 0);
	CHECK_EQ(tr_poll_cq(B(&w), true, &plain, 1), 1);
	CHECK_EQ(plain.wr_id, 82);
	CHECK_EQ(plain.imm_data, htobe32(0x44));
	CHECK_EQ(roce_poll_cq_ex(B(&w)->rcq, 4, ex), 0);
	CHECK_EQ(roce_poll_cq_ex(B(&w)->rcq, -1, ex), -EINVAL);
	/* nor on the requester's side: no summary is sent outside vrp */
	CHECK_EQ(roce_poll_cq_ex(A(&w)->scq, 4, sx), 2);
	CHECK(!sx[0].vrp_valid && !sx[1].vrp_valid);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_TX_VRP_SUMMARIES), 0);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_SUM_MISSING), 0);
	CHECK_EQ(roce_qp_vrp_peer_loss(A(&w)->qp, &peer), -ENOENT);
	tr_fini(&w);
}

/* ---- tolerance per work request (roce_post_send_vrp, VTETH on the FIRST, docs/vrp.md) ---- */

/* Exact loss map of one receive completion: @p n holes {off, len} in packets of the message. */
static void
expect_map(const struct roce_wc_ex *ex, uint64_t wr_id, uint32_t imm, uint32_t npk, uint32_t lost,
	   unsigned int n, const uint32_t (*holes)[2])
{
	CHECK_EQ(ex->wc.wr_id, wr_id);
	CHECK_EQ(ex->wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(ex->wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK_EQ(ex->wc.imm_data, htobe32(imm));
	CHECK_EQ(ex->wc.byte_len, npk * MTU);
	CHECK(ex->vrp_valid);
	CHECK_EQ(ex->vrp.len, npk * MTU);
	CHECK_EQ(ex->vrp.lost_pkts, lost);
	CHECK_EQ(ex->vrp.lost_bytes, (uint64_t)lost * MTU);
	CHECK_EQ(ex->vrp.n_holes, n);
	for (unsigned int i = 0; i < n && i < ex->vrp.n_holes; i++) {
		CHECK_EQ(ex->vrp.holes[i].off, (uint64_t)holes[i][0] * MTU);
		CHECK_EQ(ex->vrp.holes[i].len, (uint64_t)holes[i][1] * MTU);
	}
}

/*
 * One QP, five WRITE-with-immediate messages of 10 packets, each with its own
 * tolerance; the receiving QP's is 30 % over 10 packets (3 losses). Drops by
 * message-relative index:
 *   M1 WR 30 %/10, critical [3*MTU+100, +8): drops 2, 3, 6 -> 2, 6 tolerated, 3 NACKed (critical)
 *   M2 no WR tolerance (the QP's 30 %):       drops 2, 5    -> both tolerated
 *   M3 WR 0 % (a critical message):           drops 4, 7    -> both NACKed (rate), nothing lost
 *   M4 WR burst 1024 B (1 packet), QP's 30 %: drops 3, 4, 5 -> 3, 5 tolerated, 4 NACKed
 * (consecutive) M5 WR critical [0, 10*MTU) only:          drop 5        -> NACKed (critical)
 * despite the QP's 30 %
 */
static void
t_wr_mixed(void)
{
	struct tr_wire w;
	struct roce_wc_ex ex[8], sx[8];
	struct ibv_wc wc;
	const struct roce_vrp_wr m1 = {.set = ROCE_VRP_WR_LOSS | ROCE_VRP_WR_WINDOW,
				       .loss_bp = 3000,
				       .window = 10,
				       .n_critical = 1,
				       .critical = {{3 * MTU + 100, 8}}};
	const struct roce_vrp_wr m3 = {.set = ROCE_VRP_WR_LOSS, .loss_bp = 0};
	const struct roce_vrp_wr m4 = {.set = ROCE_VRP_WR_BURST, .max_burst = 1024};
	const struct roce_vrp_wr m5 = {.n_critical = 1, .critical = {{0, 10 * MTU}}};
	const struct roce_vrp_wr *tol[5] = {&m1, NULL, &m3, &m4, &m5};
	const int drops[] = {2,	     3,	     6,	     10 + 2, 10 + 5, 20 + 4,
			     20 + 7, 30 + 3, 30 + 4, 30 + 5, 40 + 5};
	const uint32_t h1[][2] = {{2, 1}, {6, 1}}, h2[][2] = {{2, 1}, {5, 1}};
	const uint32_t h4[][2] = {{3, 1}, {5, 1}};

	vinit(&w, 3000, 10, VRP_BURST_UNLIMITED, 0, NULL);
	tr_fill(A(&w), 0, 50 * MTU, 11);
	for (int i = 0; i < 5; i++)
		tr_post_recv(B(&w), 100 + i, 0, 0);
	for (size_t i = 0; i < sizeof(drops) / sizeof(drops[0]); i++)
		tr_rule(&w, TR_A, TR_REQ, PSN0 + drops[i], TR_DROP, 1);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(tr_post_vrp(A(&w), IBV_WR_RDMA_WRITE_WITH_IMM, 1 + i, i * 10 * MTU,
				     10 * MTU, i * 10 * MTU, 0x50 + i, tol[i]),
			 0);
	RUN(&w);
	CHECK_EQ(roce_poll_cq_ex(B(&w)->rcq, 8, ex), 5);
	expect_map(&ex[0], 100, 0x50, 10, 2, 2, h1);
	expect_map(&ex[1], 101, 0x51, 10, 2, 2, h2);
	expect_map(&ex[2], 102, 0x52, 10, 0, 0, NULL);
	expect_map(&ex[3], 103, 0x53, 10, 2, 2, h4);
	expect_map(&ex[4], 104, 0x54, 10, 0, 0, NULL);
	/* each send completion carries exactly its message's map, from the responder */
	CHECK_EQ(roce_poll_cq_ex(A(&w)->scq, 8, sx), 5);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(sx[i].wc.wr_id, 1 + (uint64_t)i);
		CHECK_EQ(sx[i].wc.status, IBV_WC_SUCCESS);
		CHECK(sx[i].vrp_valid);
		expect_same_map(&sx[i].vrp, &ex[i].vrp);
	}
	CHECK_EQ(tr_poll_cq(A(&w), false, &wc, 1), 0);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_PEER_LOST_PKTS), 6);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_PEER_LOST_BYTES), 6 * MTU);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_SUM_MISSING), 0);
	expect_data(&w, 50,
		    1ull << 2 | 1ull << 6 | 1ull << 12 | 1ull << 15 | 1ull << 33 | 1ull << 35);
	/*
	 * The 5 packets the tolerances refuse are NACKed (critical 3 and 45, rate 24 and 27,
	 * consecutive 34). A WRITE-with-immediate LAST is not self-placing (docs/wire.md): the
	 * LASTs of M1-M4 (PSNs 9, 19, 29, 39) reach B while ePSN waits at a NACKed PSN, are
	 * dropped, and are NACKed (critical) when the next message's first packet shows them
	 * missing; M5's LAST (49) has nothing after it: one timeout resends exactly it.
	 */
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 5 + 4 + 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED), 6);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_ZERO_BYTES), 6 * MTU);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACKED), 5 + 4);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACK_CRIT), 2 + 4);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACK_RATE), 2);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACK_CONS), 1);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_NACK_UNKNOWN), 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_WR_MSGS), 4);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_BAD_TOL), 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_MSGS), 5);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_HIST_0), 2);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_HIST_2), 3);
	tr_fini(&w);

	/* negative control: the same posts on a QP whose receiver is reliable (gbn fallback) */
	tr_init(&w, &(struct tr_opts){.recovery = "gbn"});
	tr_fill(A(&w), 0, 50 * MTU, 11);
	for (int i = 0; i < 5; i++)
		tr_post_recv(B(&w), 100 + i, 0, 0);
	for (size_t i = 0; i < sizeof(drops) / sizeof(drops[0]); i++)
		tr_rule(&w, TR_A, TR_REQ, PSN0 + drops[i], TR_DROP, 1);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(tr_post_vrp(A(&w), IBV_WR_RDMA_WRITE_WITH_IMM, 1 + i, i * 10 * MTU,
				     10 * MTU, i * 10 * MTU, 0x50 + i, tol[i]),
			 0);
	RUN(&w);
	CHECK_EQ(roce_poll_cq_ex(B(&w)->rcq, 8, ex), 5);
	CHECK_EQ(roce_poll_cq_ex(A(&w)->scq, 8, sx), 5);
	for (int i = 0; i < 5; i++)
		CHECK(!ex[i].vrp_valid && !sx[i].vrp_valid);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_TX_VRP_SUMMARIES), 0);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_SUMMARIES), 0);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 50 * MTU);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_WR_MSGS), 0);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED), 0);
	tr_fini(&w);
}

/*
 * Seeded random drops (both directions, ACKs and NACKs too) over 24 messages
 * of 16 packets that alternate four tolerances on one QP. After the run,
 * every message's loss map obeys its own tolerance: no hole in a critical
 * range (its first and last packets, and the WR's range), at most max_loss
 * losses in any window, no run longer than max_cons, nothing lost at 0 %;
 * the target holds the data outside the holes and zeros inside. The same
 * seed run again gives the same maps.
 */
#define RND_MSGS 24
#define RND_PKTS 16

static void
wr_random_run(uint64_t seed, uint64_t *lostmask, uint64_t *tolerated, uint64_t *missing)
{
	struct tr_wire w;
	struct roce_wc_ex ex[RND_MSGS], sx[RND_MSGS];
	uint64_t valid = 0, peer_pkts = 0, peer_bytes = 0;
	static const uint8_t zeros[MTU];
	/* {loss_bp, window, max_burst, crit_off, crit_len}: 25 %/8 + header; 0 %; 50 %/16 burst 1;
	 * the QP's (20 %/16, unlimited burst) */
	const struct roce_vrp_wr tol[4] = {
	    {.set = ROCE_VRP_WR_LOSS | ROCE_VRP_WR_WINDOW,
	     .loss_bp = 2500,
	     .window = 8,
	     .n_critical = 1,
	     .critical = {{5 * MTU, 64}}},
	    {.set = ROCE_VRP_WR_LOSS, .loss_bp = 0},
	    {.set = ROCE_VRP_WR_LOSS | ROCE_VRP_WR_BURST, .loss_bp = 5000, .max_burst = MTU},
	    {.set = 0},
	};
	const uint32_t max_loss[4] = {2, 0, 8, 3}, win[4] = {8, 16, 16, 16};
	const uint32_t max_cons[4] = {99, 0, 1, 99};
	int got;

	vinit(&w, 2000, 16, VRP_BURST_UNLIMITED, 0, NULL);
	memset(B(&w)->buf, 0xa5, RND_MSGS * RND_PKTS * MTU + MTU);
	tr_fill(A(&w), 0, RND_MSGS * RND_PKTS * MTU, 5);
	tr_random_faults(&w, seed, 60, 0, 0); /* 6 % of the frames */
	for (int i = 0; i < RND_MSGS; i++)
		tr_post_recv(B(&w), 200 + i, 0, 0);
	for (int i = 0; i < RND_MSGS; i++)
		CHECK_EQ(tr_post_vrp(A(&w), IBV_WR_RDMA_WRITE_WITH_IMM, 1 + i, i * RND_PKTS * MTU,
				     RND_PKTS * MTU, i * RND_PKTS * MTU, i,
				     i % 4 == 3 ? NULL : &tol[i % 4]),
			 0);
	RUN(&w);
	got = roce_poll_cq_ex(B(&w)->rcq, RND_MSGS, ex);
	CHECK_EQ(got, RND_MSGS);
	*tolerated = stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED);
	for (int i = 0; i < got; i++) {
		int k = i % 4;
		uint64_t lost = 0;
		uint32_t run = 0, cnt = 0;
		const uint8_t *dst = B(&w)->buf + i * RND_PKTS * MTU;
		const uint8_t *src = A(&w)->buf + i * RND_PKTS * MTU;

		CHECK_EQ(ex[i].wc.wr_id, 200 + (uint64_t)i);
		CHECK_EQ(ex[i].wc.status, IBV_WC_SUCCESS);
		CHECK(ex[i].vrp_valid);
		CHECK(!ex[i].vrp.holes_truncated);
		for (uint32_t h = 0; h < ex[i].vrp.n_holes; h++) {
			CHECK_EQ(ex[i].vrp.holes[h].off % MTU, 0);
			CHECK_EQ(ex[i].vrp.holes[h].len % MTU, 0);
			for (uint64_t b = ex[i].vrp.holes[h].off;
			     b < ex[i].vrp.holes[h].off + ex[i].vrp.holes[h].len; b += MTU)
				lost |= 1ull << (b / MTU);
		}
		CHECK_EQ((uint32_t)__builtin_popcountll(lost), ex[i].vrp.lost_pkts);
		lostmask[i] = lost;
		/* critical: the first and last packets, and tolerance 0's WR range (packet 5) */
		CHECK_EQ(lost & (1ull | 1ull << (RND_PKTS - 1)), 0);
		if (k == 0)
			CHECK_EQ(lost & (1ull << 5), 0);
		for (uint32_t q = 0; q < RND_PKTS; q++) {
			bool l = lost >> q & 1;

			run = l ? run + 1 : 0;
			CHECK(run <= max_cons[k]);
			cnt += l;
			if (q >= win[k])
				cnt -= (uint32_t)(lost >> (q - win[k]) & 1);
			CHECK(cnt <= max_loss[k]);
			CHECK_MEM(dst + q * MTU, l ? zeros : src + q * MTU, MTU);
		}
	}
	/*
	 * The requester's side: the summaries that crossed the lossy wire give
	 * exactly the responder's maps; a lost one leaves its completion without
	 * a map, counted. Every message ended once, so B sent 24.
	 */
	CHECK_EQ(roce_poll_cq_ex(A(&w)->scq, RND_MSGS, sx), RND_MSGS);
	for (int i = 0; i < RND_MSGS; i++) {
		CHECK_EQ(sx[i].wc.wr_id, 1 + (uint64_t)i);
		CHECK_EQ(sx[i].wc.status, IBV_WC_SUCCESS);
		if (!sx[i].vrp_valid)
			continue;
		valid++;
		peer_pkts += sx[i].vrp.lost_pkts;
		peer_bytes += sx[i].vrp.lost_bytes;
		expect_same_map(&sx[i].vrp, &ex[i].vrp);
	}
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_TX_VRP_SUMMARIES), RND_MSGS);
	*missing = stat(&w, TR_A, ROCE_STAT_VRP_SUM_MISSING);
	CHECK_EQ(valid + *missing, RND_MSGS);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_SUMMARIES) -
		     stat(&w, TR_A, ROCE_STAT_RX_VRP_SUM_DROP),
		 valid);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_PEER_LOST_PKTS), peer_pkts);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_PEER_LOST_BYTES), peer_bytes);
	tr_fini(&w);
}

static void
t_wr_random(void)
{
	uint64_t a[RND_MSGS], b[RND_MSGS], ta, tb, ma, mb;

	wr_random_run(0x5eed13, a, &ta, &ma);
	wr_random_run(0x5eed13, b, &tb, &mb);
	CHECK_EQ(ta, tb);
	CHECK_EQ(ma, mb);
	CHECK(ma > 0); /* the seed does lose a summary on the way back */
	printf("  wr_random: %llu tolerated, %llu summaries lost on the wire\n",
	       (unsigned long long)ta, (unsigned long long)ma);
	CHECK(ta > 0); /* the seed does drop tolerable packets */
	for (int i = 0; i < RND_MSGS; i++) {
		CHECK_EQ(a[i], b[i]);
		if (i % 4 == 1)
			CHECK_EQ(a[i], 0); /* 0 %: reliable */
	}
}

/* roce_post_send_vrp refuses a bad tolerance at the WR, and posts nothing from it on. */
static void
t_wr_refused(void)
{
	struct tr_wire w;
	struct ibv_sge sge;
	struct ibv_send_wr wr[2], *bad = NULL;
	struct roce_vrp_wr v;
	struct ibv_wc wc;

	tr_init(&w, &(struct tr_opts){.recovery = "vrp"});
	sge = (struct ibv_sge){(uintptr_t)A(&w)->buf, 4 * MTU, A(&w)->mr->lkey};
	memset(wr, 0, sizeof(wr));
	for (int i = 0; i < 2; i++) {
		wr[i].wr_id = 1 + i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)B(&w)->buf;
		wr[i].wr.rdma.rkey = B(&w)->mr->rkey;
	}
	wr[0].next = &wr[1];
	for (int c = 0; c < 7; c++) {
		memset(&v, 0, sizeof(v));
		switch (c) {
		case 0:
			v.set = 1u << 3;
			break; /* unknown bit */
		case 1:
			v.set = ROCE_VRP_WR_LOSS, v.loss_bp = 10001;
			break; /* > 100 % */
		case 2:
			v.set = ROCE_VRP_WR_WINDOW, v.window = 65536;
			break; /* window */
		case 3:
			v.n_critical = ROCE_VRP_WR_CRITICAL + 1;
			break; /* too many */
		case 4:
			v.n_critical = 1, v.critical[0] = (struct vrp_range){MTU, 0};
			break;
		case 5:
			v.n_critical = 1, v.critical[0] = (struct vrp_range){4 * MTU, 1};
			break;
		default:
			v.n_critical = 1, v.critical[0] = (struct vrp_range){MTU, 3 * MTU + 1};
			break;
		}
		for (unsigned int i = 0; i < v.n_critical && i < ROCE_VRP_WR_CRITICAL; i++)
			if (c == 3)
				v.critical[i] = (struct vrp_range){0, 1};
		bad = NULL;
		CHECK_EQ(roce_post_send_vrp(A(&w)->qp, wr, &v, &bad), -EINVAL);
		CHECK(bad == &wr[0]);
	}
	RUN(&w);
	CHECK_EQ(tr_poll_cq(A(&w), false, &wc, 1), 0);
	/* the last range byte of the message is accepted; a SEND in the chain ignores it */
	v = (struct roce_vrp_wr){.n_critical = 1, .critical = {{MTU, 3 * MTU}}};
	wr[1].opcode = IBV_WR_SEND;
	tr_post_recv(B(&w), 9, 8 * MTU, 4 * MTU);
	CHECK_EQ(roce_post_send_vrp(A(&w)->qp, wr, &v, &bad), 0);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_WR_MSGS), 1);
	tr_fini(&w);
}

/* Rewrite the VTETH of the first queued 0xE2 frame from A (hostile peer); true if found. */
static bool
mangle_vteth(struct tr_wire *w, void (*fn)(struct roce_vteth *))
{
	for (struct tr_frame *f = w->q[TR_A].head; f; f = f->next) {
		struct roce_pkt p;

		if (roce_parse(f->data, f->len, &p, 0) != 0 ||
		    p.h.bth.opcode != ROCE_XOP_WRITE_FIRST_VRP)
			continue;
		fn(&p.h.vt);
		CHECK_EQ(roce_build(f->data, f->len, &p, f->data + p.payload_off, p.payload_len,
				    ROCE_BUILD_KEEP_PAD),
			 (int)p.frame_len);
		return true;
	}
	return false;
}

static void
vt_many(struct roce_vteth *v)
{
	v->n_crit = 200;
}

static void
vt_outside(struct roce_vteth *v)
{
	v->crit[0].off = 0xfffffff0u;
}

/*
 * A VTETH the receiver must refuse (more ranges than it holds; a range
 * outside the message): counted, and the message is delivered reliably:
 * the 50 % it asked for is not granted, every loss is resent.
 */
static void
t_wr_bad_vteth(void)
{
	void (*fns[2])(struct roce_vteth *) = {vt_many, vt_outside};

	for (int c = 0; c < 2; c++) {
		struct tr_wire w;
		const struct roce_vrp_wr v = {.set = ROCE_VRP_WR_LOSS,
					      .loss_bp = 5000,
					      .n_critical = 1,
					      .critical = {{0, 8}}};

		vinit(&w, 5000, 16, VRP_BURST_UNLIMITED, 0, NULL);
		tr_fill(A(&w), 0, 16 * MTU, 2);
		tr_rule(&w, TR_A, TR_REQ, PSN0 + 4, TR_DROP, 1);
		tr_rule(&w, TR_A, TR_REQ, PSN0 + 9, TR_DROP, 1);
		/* the QP window holds the whole message, so its FIRST is queued at once */
		CHECK_EQ(tr_post_vrp(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 16 * MTU, 0, 1, &v), 0);
		CHECK(mangle_vteth(&w, fns[c]));
		RUN(&w);
		expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
		CHECK_MEM(B(&w)->buf, A(&w)->buf, 16 * MTU);
		CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_BAD_TOL), 1);
		CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED), 0);
		CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 2);
		CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TIMEOUTS), 0);
		tr_fini(&w);
	}
}

/*
 * The requester's side of the wire: under vrp a WRITE posted with a tolerance
 * starts with 0xE2 and its VTETH says exactly what was posted; a WRITE posted
 * without one starts with the standard FIRST; a one-packet WRITE (ONLY) carries
 * none. Under gbn (the fallback against a standard peer) no 0xE2 at all.
 */
static void
t_wr_wire(void)
{
	const struct roce_vrp_wr v = {.set = ROCE_VRP_WR_LOSS | ROCE_VRP_WR_BURST,
				      .loss_bp = 1250,
				      .max_burst = VRP_BURST_UNLIMITED,
				      .n_critical = 2,
				      .critical = {{0, 64}, {2 * MTU + 1, 3}}};
	const struct roce_vrp_wr v1 = {.set = ROCE_VRP_WR_LOSS, .loss_bp = 5000};

	for (int vrp = 1; vrp >= 0; vrp--) {
		struct tr_wire w;
		uint8_t first[4] = {0};
		int n = 0, e2 = 0;

		tr_init(&w, &(struct tr_opts){.recovery = vrp ? "vrp" : "gbn"});
		tr_fill(A(&w), 0, 16 * MTU, 1);
		CHECK_EQ(tr_post_vrp(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 4 * MTU, 0, 0, &v), 0);
		CHECK_EQ(tr_post_vrp(A(&w), IBV_WR_RDMA_WRITE, 2, 0, 4 * MTU, 4 * MTU, 0, NULL), 0);
		CHECK_EQ(
		    tr_post_vrp(A(&w), IBV_WR_RDMA_WRITE_WITH_IMM, 3, 0, 4 * MTU, 8 * MTU, 9, &v),
		    0);
		/* one packet: a valid tolerance, never on the wire; a range past 64 B is refused */
		CHECK_EQ(tr_post_vrp(A(&w), IBV_WR_RDMA_WRITE, 4, 0, 64, 12 * MTU, 0, &v), -EINVAL);
		CHECK_EQ(tr_post_vrp(A(&w), IBV_WR_RDMA_WRITE, 4, 0, 64, 12 * MTU, 0, &v1), 0);
		tr_post_recv(B(&w), 5, 0, 0);
		for (struct tr_frame *f = w.q[TR_A].head; f; f = f->next) {
			struct roce_pkt p;
			uint32_t f_ = 0;

			if (roce_parse(f->data, f->len, &p, 0) != 0)
				continue;
			f_ = roce_opcode_info(p.h.bth.opcode)->flags;
			if (!(f_ & ROCE_OPF_WRITE) || !(f_ & ROCE_OPF_FIRST)) /* FIRST or ONLY */
				continue;
			if (n < 4)
				first[n] = p.h.bth.opcode;
			n++;
			if (p.h.bth.opcode != ROCE_XOP_WRITE_FIRST_VRP)
				continue;
			e2++;
			CHECK_EQ(p.h.vt.flags, ROCE_VTETH_F_LOSS | ROCE_VTETH_F_BURST);
			CHECK_EQ(p.h.vt.loss_bp, 1250);
			CHECK_EQ(p.h.vt.window, 0);
			CHECK_EQ(p.h.vt.max_burst, UINT32_MAX);
			CHECK_EQ(p.h.vt.n_crit, 2);
			CHECK_EQ(p.h.vt.crit[1].off, 2 * MTU + 1);
			CHECK_EQ(p.h.vt.crit[1].len, 3);
			CHECK_EQ(p.h.vt.crit[2].len, 0);
			CHECK_EQ(p.h.reth.dlen, 4 * MTU);
		}
		CHECK_EQ(n, 4);
		CHECK_EQ(first[0],
			 vrp ? ROCE_XOP_WRITE_FIRST_VRP : ROCE_OP_RC_BASE + ROCE_OP_WRITE_FIRST);
		CHECK_EQ(first[1], ROCE_OP_RC_BASE + ROCE_OP_WRITE_FIRST);
		CHECK_EQ(first[2],
			 vrp ? ROCE_XOP_WRITE_FIRST_VRP : ROCE_OP_RC_BASE + ROCE_OP_WRITE_FIRST);
		CHECK_EQ(first[3], ROCE_OP_RC_BASE + ROCE_OP_WRITE_ONLY);
		CHECK_EQ(e2, vrp ? 2 : 0);
		RUN(&w);
		for (int i = 1; i <= 4; i++)
			expect_wc(A(&w), false, (uint64_t)i, IBV_WC_SUCCESS);
		CHECK_MEM(B(&w)->buf, A(&w)->buf, 4 * MTU);
		CHECK_MEM(B(&w)->buf + 12 * MTU, A(&w)->buf, 64);
		CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_WR_MSGS), vrp ? 2 : 0);
		/* every WRITE (the one-packet ONLY too) gets a summary under vrp, none under gbn */
		CHECK_EQ(stat(&w, TR_B, ROCE_STAT_TX_VRP_SUMMARIES), vrp ? 4 : 0);
		CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_SUMMARIES), vrp ? 4 : 0);
		CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_SUM_MISSING), 0);
		tr_fini(&w);
	}
}

/* Negative control: the same drops under gbone are all resent (no tolerance without vrp). */
/*
 * What the requester sees of a plain WRITE (no receiver completion at all):
 * its send completion carries the responder's map. The summary of the first
 * message is dropped on the way back: that completion carries none, counted;
 * the second message's completion carries exactly its map, and
 * roce_qp_vrp_peer_loss() gives it.
 */
static void
t_summary_lost(void)
{
	struct tr_wire w;
	struct roce_wc_ex sx[4];
	struct roce_vrp_loss resp, peer;

	vinit(&w, 2000, 10, VRP_BURST_UNLIMITED, 0, NULL); /* 2 of 10 */
	tr_fill(A(&w), 0, 20 * MTU, 4);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 4, TR_DROP, 1);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 13, TR_DROP, 1);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 15, TR_DROP, 1);
	tr_rule(&w, TR_B, TR_VRP_LOSS, PSN0 + 9, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * MTU, 0, IBV_SEND_SIGNALED);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 10 * MTU, 10 * MTU, 10 * MTU, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_data(&w, 20, 1ull << 4 | 1ull << 13 | 1ull << 15);
	CHECK_EQ(roce_poll_cq_ex(A(&w)->scq, 4, sx), 2);
	CHECK_EQ(sx[0].wc.wr_id, 1);
	CHECK_EQ(sx[0].wc.status, IBV_WC_SUCCESS);
	CHECK(!sx[0].vrp_valid);
	CHECK_EQ(sx[0].vrp.lost_pkts, 0);
	CHECK_EQ(sx[1].wc.wr_id, 2);
	CHECK(sx[1].vrp_valid);
	CHECK_EQ(roce_qp_vrp_loss(B(&w)->qp, &resp), 0);
	expect_same_map(&sx[1].vrp, &resp);
	CHECK_EQ(sx[1].vrp.lost_pkts, 2);
	CHECK_EQ(sx[1].vrp.n_holes, 2);
	CHECK_EQ(sx[1].vrp.holes[0].off, 3 * MTU);
	CHECK_EQ(sx[1].vrp.holes[1].off, 5 * MTU);
	CHECK_EQ(roce_qp_vrp_peer_loss(A(&w)->qp, &peer), 0);
	expect_same_map(&peer, &resp);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_TX_VRP_SUMMARIES), 2);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_SUMMARIES), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_SUM_MISSING), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_PEER_LOST_PKTS), 2);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_PEER_LOST_BYTES), 2 * MTU);
	CHECK_EQ(stat(&w, TR_B, ROCE_STAT_RX_VRP_TOLERATED), 3);
	/* the summary acknowledges nothing: no retransmission, no timeout for the lost one */
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TX_RETX_PKTS), 0);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TIMEOUTS), 0);
	tr_fini(&w);
}

/* The first VRP LOSS summary queued from B, parsed; NULL if none is on the wire yet. */
static struct tr_frame *
find_summary(struct tr_wire *w, struct roce_pkt *p)
{
	for (struct tr_frame *f = w->q[TR_B].head; f; f = f->next)
		if (roce_parse(f->data, f->len, p, 0) == 0 && p->h.bth.opcode == ROCE_XOP_VRP_LOSS)
			return f;
	return NULL;
}

static void
vl_many_holes(struct roce_pkt *p)
{
	p->h.vl.n_holes = 9;
}

static void
vl_bytes_past_len(struct roce_pkt *p)
{
	p->h.vl.lost_bytes = p->h.vl.len + 1;
}

static void
vl_holes_disagree(struct roce_pkt *p)
{
	p->h.vl.holes[0].len += MTU; /* the map no longer sums to lost_bytes */
}

static void
vl_hole_outside(struct roce_pkt *p)
{
	p->h.vl.holes[0].off = p->h.vl.len - 8; /* runs past the message's end */
}

static void
vl_wrong_psn(struct roce_pkt *p)
{
	p->h.bth.psn -= 1; /* no WRITE ends there */
}

static void
vl_wrong_len(struct roce_pkt *p)
{
	p->h.vl.len += MTU;
}

/*
 * A hostile or broken summary (a peer that lies about its map) never
 * reaches a completion: each is dropped and counted, the completion carries
 * no map and the requester's totals stay at zero. The unmangled control run
 * takes it.
 */
static void
t_summary_bad(void)
{
	void (*fns[])(struct roce_pkt *) = {
	    NULL,	  vl_many_holes, vl_bytes_past_len, vl_holes_disagree, vl_hole_outside,
	    vl_wrong_psn, vl_wrong_len};

	for (size_t c = 0; c < sizeof(fns) / sizeof(fns[0]); c++) {
		struct tr_wire w;
		struct roce_wc_ex sx[2];
		struct roce_pkt p;
		struct tr_frame *f;
		int steps = 0;

		vinit(&w, 2000, 10, VRP_BURST_UNLIMITED, 0, NULL);
		tr_fill(A(&w), 0, 10 * MTU, 6);
		tr_rule(&w, TR_A, TR_REQ, PSN0 + 4, TR_DROP, 1);
		tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * MTU, 0, IBV_SEND_SIGNALED);
		/* deliver the requests one by one until B has queued its summary */
		while (!(f = find_summary(&w, &p)) && steps++ < 64) {
			tr_deliver_one(&w, TR_A);
			tr_poll(&w);
		}
		CHECK(f != NULL);
		if (!f) {
			tr_fini(&w);
			continue;
		}
		if (fns[c]) {
			fns[c](&p);
			CHECK_EQ(roce_build(f->data, f->len, &p, NULL, 0, 0), (int)p.frame_len);
		}
		RUN(&w);
		CHECK_EQ(roce_poll_cq_ex(A(&w)->scq, 2, sx), 1);
		CHECK_EQ(sx[0].wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(sx[0].vrp_valid, fns[c] == NULL);
		CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_SUMMARIES), 1);
		CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_SUM_DROP), fns[c] ? 1 : 0);
		CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_SUM_MISSING), fns[c] ? 1 : 0);
		CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_PEER_LOST_PKTS), fns[c] ? 0 : 1);
		CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_BAD_RESP), 0);
		expect_data(&w, 10, 1ull << 4);
		tr_fini(&w);
	}
}

/*
 * A VRP LOSS summary to a QP that does not run vrp (a forged one: the
 * responder sends none outside vrp) is dropped and counted; the WRITE
 * completes as usual, without a map.
 */
static void
t_summary_not_vrp(void)
{
	struct tr_wire w;
	struct roce_wc_ex sx[2];
	struct roce_pkt p;
	uint8_t *buf;
	int len;

	tr_init(&w, &(struct tr_opts){.recovery = "gbn"});
	tr_fill(A(&w), 0, 4 * MTU, 8);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 4 * MTU, 0, IBV_SEND_SIGNALED);
	while (w.q[TR_A].count) {
		tr_deliver_one(&w, TR_A);
		tr_poll(&w);
	}
	/* B's ACK, rewritten into a summary of the whole WRITE (PSN 3, 1 packet lost) */
	CHECK(w.q[TR_B].head != NULL);
	if (!w.q[TR_B].head) {
		tr_fini(&w);
		return;
	}
	CHECK_EQ(roce_parse(w.q[TR_B].head->data, w.q[TR_B].head->len, &p, 0), 0);
	p.h.bth.opcode = ROCE_XOP_VRP_LOSS;
	p.h.bth.psn = PSN0 + 3;
	memset(&p.h.vl, 0, sizeof(p.h.vl));
	p.h.vl = (struct roce_vleth){
	    .len = 4 * MTU, .lost_pkts = 1, .lost_bytes = MTU, .n_holes = 1, .holes = {{MTU, MTU}}};
	buf = malloc(ROCE_MAX_FRAME);
	len = roce_build(buf, ROCE_MAX_FRAME, &p, NULL, 0, 0);
	CHECK(len > 0);
	free(w.q[TR_B].head->data);
	w.q[TR_B].head->data = buf;
	w.q[TR_B].head->len = (size_t)len;
	/* the ACK is gone: the timer resends, B ACKs the duplicate, the WRITE completes */
	RUN(&w);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_SUMMARIES), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_RX_VRP_SUM_DROP), 1);
	CHECK_EQ(stat(&w, TR_A, ROCE_STAT_VRP_PEER_LOST_PKTS), 0);
	CHECK_EQ(roce_poll_cq_ex(A(&w)->scq, 2, sx), 1);
	CHECK_EQ(sx[0].wc.status, IBV_WC_SUCCESS);
	CHECK(!sx[0].vrp_valid);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 4 * MTU);
	tr_fini(&w);
}

static void
t_negative_gbone(void)
{
	struct tr_wire w;
	struct tr_opts o = {.recovery = "gbone"};

	tr_init(&w, &o);
	tr_fill(A(&w), 0, 20 * MTU, 7);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 5, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 20 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 20 * MTU);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_VRP_TOLERATED), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	tr_fini(&w);
}

/* Bad tolerances are refused with one line. */
static void
t_refused(void)
{
	struct tr_wire w;
	struct vrp_tolerance t = {.loss_bp = 10001, .max_burst = VRP_BURST_UNLIMITED};
	const char *err = NULL;

	tr_init(&w, &(struct tr_opts){.recovery = "vrp"});
	CHECK_EQ(roce_qp_set_vrp(B(&w)->qp, &t, &err), -EINVAL);
	CHECK(err != NULL);
	t.loss_bp = 100;
	t.n_critical = VRP_CRITICAL_MAX - 1;
	CHECK_EQ(roce_qp_set_vrp(B(&w)->qp, &t, &err), -EINVAL);
	tr_fini(&w);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
    {"tolerated", t_tolerated},
    {"beyond_rate", t_beyond_rate},
    {"consecutive", t_consecutive},
    {"critical", t_critical},
    {"zero_tolerance", t_zero_tolerance},
    {"first_lost", t_first_lost},
    {"last_lost", t_last_lost},
    {"nack_lost", t_nack_lost},
    {"retx_lost", t_retx_lost},
    {"rto_unreported_only", t_rto_unreported_only},
    {"write_imm_loss", t_write_imm_loss},
    {"wc_ex", t_wc_ex},
    {"negative_gbone", t_negative_gbone},
    {"refused", t_refused},
    {"wr_mixed", t_wr_mixed},
    {"wr_random", t_wr_random},
    {"wr_refused", t_wr_refused},
    {"wr_bad_vteth", t_wr_bad_vteth},
    {"wr_wire", t_wr_wire},
    {"summary_lost", t_summary_lost},
    {"summary_bad", t_summary_bad},
    {"summary_not_vrp", t_summary_not_vrp},
};

int
main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned f0 = rw_t_fail;

		rw_t_case = cases[i].name;
		cases[i].fn();
		printf("%-34s %s\n", cases[i].name, rw_t_fail == f0 ? "ok" : "FAIL");
	}
	printf("%u passed, %u failed\n", rw_t_pass, rw_t_fail);
	return (rw_t_fail || rw_t_pass == 0) ? 1 : 0;
}
