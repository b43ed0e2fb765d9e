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
	struct roce_wc_ex ex[4];
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
	tr_fini(&w);
}

/* Negative control: the same drops under gbone are all resent (no tolerance without vrp). */
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
    {"tolerated", t_tolerated},		  {"beyond_rate", t_beyond_rate},
    {"consecutive", t_consecutive},	  {"critical", t_critical},
    {"zero_tolerance", t_zero_tolerance}, {"first_lost", t_first_lost},
    {"last_lost", t_last_lost},		  {"nack_lost", t_nack_lost},
    {"retx_lost", t_retx_lost},		  {"rto_unreported_only", t_rto_unreported_only},
    {"write_imm_loss", t_write_imm_loss}, {"wc_ex", t_wc_ex},
    {"negative_gbone", t_negative_gbone}, {"refused", t_refused},
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
