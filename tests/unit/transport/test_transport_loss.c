/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC reliability with deterministic faults: Go-Back-N after a NAK, the
 * transport timer, lost ACKs, duplicates, lost READ responses, atomic replay,
 * retry_cnt exhaustion, reordering and PSN wrap-around.
 */
#include <endian.h>
#include <errno.h>

#include "roce_lwin.h"
#include "roce_pkt.h"
#include "rw_test.h"
#include "tr_harness.h"

#define RUN(w) tr_run((w), 1000000)
#define PSN0 0x100 /* the harness's start PSN */

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
expect_wc(struct tr_side *s, bool recv, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	CHECK_EQ(tr_poll_cq(s, recv, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.status, st);
}

/* A lost packet in the middle: one NAK (not one per later packet), go back N, correct data. */
static void
t_loss_nak_go_back_n(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 10 * 1024, 1);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * 1024, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 10 * 1024);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_NAK_SEQ), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_OOS), 6); /* PSNs 4..9 */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RX_NAK_SEQ), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 7); /* PSNs 3..9 again */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DUP_REQ), 0);
	tr_fini(&w);
}

/* The same PSN lost three times: NAK, then timeouts repair it. */
static void
t_loss_repeated(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 8 * 1024, 2);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 2, TR_DROP, 3); /* PSN 2 and its first 2 retransmits */
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 8 * 1024, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 8 * 1024);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS) >= 1);
	tr_fini(&w);
}

/* Losing the last packet leaves nothing to trigger a NAK: the transport timer recovers. */
static void
t_loss_last_packet_timeout(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 4096, 3);
	tr_post_recv(B(&w), 1, 0, 8192);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 4096, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	expect_wc(B(&w), true, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 4096);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_NAK_SEQ), 0);
	/* adaptive RTO: the zero-delay wire's samples are below the floor */
	CHECK(w.now >= ROCE_DEFAULT_RTO_MIN_NS);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RTO_EXPIRIES), 1);
	tr_fini(&w);
}

/* A lost ACK: the timer resends, the responder sees duplicates, re-ACKs, places nothing twice. */
static void
t_loss_ack(void)
{
	struct tr_wire w;
	struct ibv_wc wc[4];

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 3000, 4);
	tr_post_recv(B(&w), 1, 0, 4096);
	tr_post_recv(B(&w), 2, 4096, 4096);
	tr_rule(&w, TR_B, TR_ACK, -1, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 3000, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_EQ(tr_poll_cq(B(&w), true, wc, 4), 1); /* one receive completion, not two */
	CHECK_EQ(wc[0].wr_id, 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	/* adaptive RTO: the expiry resends the head alone, and B's ACK of it covers all 3 */
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DUP_REQ), 1);
	CHECK(tr_dev_stat(B(&w), ROCE_STAT_TX_ACKS) >= 2);
	/* the WRITE_WITH_IMM variant: one completion, data intact */
	tr_rule(&w, TR_B, TR_ACK, -1, TR_DROP, 1);
	tr_post_imm(A(&w), IBV_WR_RDMA_WRITE_WITH_IMM, 2, 0, 3000, 100000, 7);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_EQ(tr_poll_cq(B(&w), true, wc, 4), 1);
	CHECK_EQ(wc[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK_MEM(B(&w)->buf + 100000, A(&w)->buf, 3000);
	tr_fini(&w);
}

/* Duplicated request packets on the wire: answered, never placed twice. */
static void
t_duplicate_requests(void)
{
	struct tr_wire w;
	struct ibv_wc wc[4];

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 2048, 5);
	tr_post_recv(B(&w), 1, 0, 4096);
	tr_post_recv(B(&w), 2, 4096, 4096);
	tr_rule(&w, TR_A, TR_REQ, PSN0, TR_DUP, 1);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 1, TR_DUP, 1);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 2048, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_EQ(tr_poll_cq(B(&w), true, wc, 4), 1);
	CHECK_EQ(wc[0].byte_len, 2048);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DUP_REQ), 2);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
	tr_fini(&w);
}

/* A lost READ response in the middle: the next response implies a NAK, re-read from that PSN. */
static void
t_read_lost_response(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	tr_fill(B(&w), 0, 8 * 1024, 6);
	tr_rule(&w, TR_B, TR_READ_RESP, PSN0 + 3, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_READ, 1, 0, 8 * 1024, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(A(&w)->buf, B(&w)->buf, 8 * 1024);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_IMPLIED_NAKS), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_READ_REPLAYS), 1);
	/* the re-read asked only for PSNs 3..7: 5 more responses */
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_READ_RESP), 8 + 5);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	tr_fini(&w);
}

/* The last READ response lost: the timer re-reads; a READ request lost: the same. */
static void
t_read_lost_last_and_request(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	tr_fill(B(&w), 0, 4096, 7);
	tr_rule(&w, TR_B, TR_READ_RESP, PSN0 + 3, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_READ, 1, 0, 4096, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(A(&w)->buf, B(&w)->buf, 4096);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);

	tr_fill(B(&w), 10000, 3000, 8);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 4, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_READ, 2, 10000, 3000, 10000, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_MEM(A(&w)->buf + 10000, B(&w)->buf + 10000, 3000);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 2);
	tr_fini(&w);
}

/* A WRITE then a READ; the WRITE's data lost: the READ's response implies the NAK. */
static void
t_write_then_read_loss(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 2048, 9);
	tr_fill(B(&w), 50000, 1024, 10);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 1, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 2048, 0, IBV_SEND_SIGNALED);
	tr_post_send(A(&w), IBV_WR_RDMA_READ, 2, 60000, 1024, 50000, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 2048);
	CHECK_MEM(A(&w)->buf + 60000, B(&w)->buf + 50000, 1024);
	tr_fini(&w);
}

/* A lost ATOMIC ACKNOWLEDGE: the duplicate is answered from the cache, not executed again. */
static void
t_atomic_replay(void)
{
	struct tr_wire w;
	uint64_t v = 1000;

	tr_init(&w, NULL);
	memcpy(B(&w)->buf + 8, &v, 8);
	tr_rule(&w, TR_B, TR_ATOMIC_ACK, -1, TR_DROP, 2);
	tr_post_atomic(A(&w), IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0, 8, 5, 0);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	memcpy(&v, B(&w)->buf + 8, 8);
	CHECK_EQ(v, 1005); /* added once */
	memcpy(&v, A(&w)->buf, 8);
	CHECK_EQ(v, 1000); /* the original value, replayed */
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_ATOMIC_REPLAYS), 2);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 2);
	/* compare-and-swap replay: the swap happens once, the old value comes back */
	tr_rule(&w, TR_B, TR_ATOMIC_ACK, -1, TR_DROP, 1);
	tr_post_atomic(A(&w), IBV_WR_ATOMIC_CMP_AND_SWP, 2, 16, 8, 1005, 1);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	memcpy(&v, B(&w)->buf + 8, 8);
	CHECK_EQ(v, 1);
	memcpy(&v, A(&w)->buf + 16, 8);
	CHECK_EQ(v, 1005);
	tr_fini(&w);
}

/*
 * A peer that never answers: retry_cnt retries, then RETRY_EXC_ERR and flushes.
 * Each timeout restarts the loss-reactive window at ROCE_LWIN_MIN (4) packets,
 * so a go-back round resends 4 of the 5; without it, all 5.
 */
static void
retry_exceeded(bool loss_window)
{
	struct tr_opts o = {.retry_cnt = 2, .timeout = 10, .no_loss_window = !loss_window};
	struct tr_wire w;
	struct ibv_wc wc;

	tr_init(&w, &o);
	tr_rule(&w, TR_A, TR_ANY, -1, TR_DROP, 1000000);
	tr_post_recv(A(&w), 9, 0, 64);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 3000, 0, 0);
	tr_post_send(A(&w), IBV_WR_SEND, 2, 0, 100, 0, IBV_SEND_SIGNALED);
	tr_post_send(A(&w), IBV_WR_RDMA_READ, 3, 0, 100, 0, 0);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_RETRY_EXC_ERR); /* unsignaled, but an error */
	expect_wc(A(&w), false, 2, IBV_WC_WR_FLUSH_ERR);
	expect_wc(A(&w), false, 3, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(tr_poll_cq(A(&w), false, &wc, 1), 0);
	expect_wc(A(&w), true, 9, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(roce_qp_state(A(&w)->qp), IBV_QPS_ERR);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 3); /* 2 retries, the third expiry fails */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RETRY_EXC), 1);
	/*
	 * 5 request packets (3 WRITE, 1 SEND, 1 READ). Adaptive RTO: the first
	 * expiry resends the head alone (gbn_tx_lost), the second, with no
	 * progress between, goes back.
	 */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1 + (loss_window ? ROCE_LWIN_MIN : 5));
	/* the first expiry cuts; the later ones, in the same episode, restart small and keep
	 * ssthresh */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_LWIN_CUTS), loss_window ? 1 : 0);
	tr_fini(&w);
}

static void
t_retry_exceeded(void)
{
	retry_exceeded(true);
	retry_exceeded(false);
}

/*
 * PSN 2 overtaken by PSN 3: 3 is dropped with a NAK(2); then 2 arrives and 4
 * finds 3 missing, so GBN NAKs again (3). Both gaps are repaired by going back.
 */
static void
t_reorder(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 6 * 1024, 11);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 2, TR_DELAY, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 6 * 1024, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 6 * 1024);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_NAK_SEQ), 2);
	CHECK_EQ(w.delayed, 1);
	tr_fini(&w);
}

/* PSNs wrap from 0xffffff to 0 in the middle of messages, with a loss at the wrap. */
static void
t_psn_wrap(void)
{
	struct tr_opts o = {.psn_set = true, .sq_psn = 0xfffffd, .rq_psn = 0xfffffe};
	struct tr_wire w;

	tr_init(&w, &o);
	tr_fill(A(&w), 0, 8 * 1024, 12);
	tr_fill(B(&w), 100000, 8 * 1024, 13);
	tr_rule(&w, TR_A, TR_REQ, 0, TR_DROP, 1);
	tr_rule(&w, TR_B, TR_READ_RESP, 0xffffff, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 8 * 1024, 0, IBV_SEND_SIGNALED);
	tr_post_send(B(&w), IBV_WR_RDMA_WRITE, 2, 100000, 8 * 1024, 200000, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	expect_wc(B(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 8 * 1024);
	CHECK_MEM(A(&w)->buf + 200000, B(&w)->buf + 100000, 8 * 1024);
	tr_post_send(A(&w), IBV_WR_RDMA_READ, 3, 300000, 8 * 1024, 100000, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 3, IBV_WC_SUCCESS);
	CHECK_MEM(A(&w)->buf + 300000, B(&w)->buf + 100000, 8 * 1024);
	tr_fini(&w);
}

/* An RNR NAK while later packets are in flight: they are dropped quietly, one NAK only. */
static void
t_rnr_with_pipeline(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 10000, 14);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 3000, 0, IBV_SEND_SIGNALED);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 3000, 7000, 50000, IBV_SEND_SIGNALED);
	for (int i = 0; i < 11; i++)
		tr_deliver_one(&w, TR_A);
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_NAK_RNR), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_NAK_SEQ), 0);
	tr_post_recv(B(&w), 1, 0, 4096);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 3000);
	CHECK_MEM(B(&w)->buf + 50000, A(&w)->buf + 3000, 7000);
	tr_fini(&w);
}

/* A requester whose QP went to ERR gets nothing placed by stale packets later. */
static void
t_stale_after_error(void)
{
	struct tr_wire w;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

	tr_init(&w, NULL);
	w.capture_only = true;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 3000, 0, 0);
	RUN(&w);
	CHECK_EQ(roce_modify_qp(B(&w)->qp, &a, IBV_QP_STATE), 0);
	while (tr_deliver_one(&w, TR_A))
		;
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DROP_QP_STATE), 3);
	tr_fini(&w);
}

/*
 * The loss-recovery trace (roce_dev_ops.trace, roce_trace.h) of the Go-Back-N
 * case above: the sender reports each retransmitted PSN, the receiver each PSN
 * accepted after a later one had arrived; a device without the op reports nothing.
 */
static void
t_trace_go_back_n(void)
{
	struct tr_opts o = {.trace = true};
	struct tr_wire w;
	uint32_t qa, qb;

	tr_init(&w, &o);
	qa = roce_qp_num(A(&w)->qp);
	qb = roce_qp_num(B(&w)->qp);
	tr_fill(A(&w), 0, 10 * 1024, 1);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * 1024, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 10 * 1024);
	/* sender: PSNs 3..9 resent, in order */
	CHECK_EQ(A(&w)->ntrace, 7);
	for (unsigned i = 0; i < 7 && i < A(&w)->ntrace; i++) {
		const struct roce_trace_event *e = &A(&w)->trace[i];

		CHECK_EQ(e->kind, ROCE_TRACE_RETX);
		CHECK_EQ(e->psn, PSN0 + 3 + i);
		CHECK_EQ(e->qpn, qa);
		CHECK_EQ(e->dqpn, qb);
	}
	/* receiver: 3..8 arrived after PSN 9 had (9 itself had arrived before: not late) */
	CHECK_EQ(B(&w)->ntrace, 6);
	for (unsigned i = 0; i < 6 && i < B(&w)->ntrace; i++) {
		const struct roce_trace_event *e = &B(&w)->trace[i];

		CHECK_EQ(e->kind, ROCE_TRACE_RX_LATE);
		CHECK_EQ(e->psn, PSN0 + 3 + i);
		CHECK_EQ(e->qpn, qb);
		CHECK_EQ(e->dqpn, qa);
	}
	/* the retransmission left before the late arrival, on the one clock of the wire */
	CHECK(A(&w)->ntrace && B(&w)->ntrace && A(&w)->trace[0].now_ns <= B(&w)->trace[0].now_ns);
	CHECK(strcmp(roce_trace_kind_name(ROCE_TRACE_RETX), "retx") == 0);
	CHECK(strcmp(roce_trace_kind_name(ROCE_TRACE_RX_LATE), "rx_late") == 0);
	tr_fini(&w);

	/* a second loss after the first was repaired: reported again */
	tr_init(&w, &o);
	tr_fill(A(&w), 0, 20 * 1024, 2);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 2, TR_DROP, 1);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 15, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 20 * 1024, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 20 * 1024);
	unsigned late2 = 0, late15 = 0;
	for (unsigned i = 0; i < B(&w)->ntrace && i < TR_MAX_TRACE; i++) {
		late2 += B(&w)->trace[i].psn == PSN0 + 2;
		late15 += B(&w)->trace[i].psn == PSN0 + 15;
	}
	CHECK_EQ(late2, 1);
	CHECK_EQ(late15, 1);
	tr_fini(&w);

	/* without the op: nothing */
	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 10 * 1024, 1);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * 1024, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	CHECK_EQ(A(&w)->ntrace + B(&w)->ntrace, 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 7);
	tr_fini(&w);
}

/* A lost last packet is resent on the timer; the receiver cannot know it was missing. */
static void
t_trace_tail_loss(void)
{
	struct tr_opts o = {.trace = true};
	struct tr_wire w;

	tr_init(&w, &o);
	tr_fill(A(&w), 0, 4096, 3);
	tr_post_recv(B(&w), 1, 0, 8192);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 4096, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(B(&w), true, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 4096);
	/* the expiry (una = PSN 3), then the resend; what follows is about the timer only */
	CHECK(A(&w)->ntrace >= 2);
	CHECK(A(&w)->ntrace >= 2 && A(&w)->trace[0].kind == ROCE_TRACE_RTO &&
	      A(&w)->trace[0].psn == PSN0 + 3);
	CHECK(A(&w)->ntrace >= 2 && A(&w)->trace[1].kind == ROCE_TRACE_RETX &&
	      A(&w)->trace[1].psn == PSN0 + 3);
	for (unsigned int i = 2; i < A(&w)->ntrace && i < TR_MAX_TRACE; i++)
		CHECK(A(&w)->trace[i].kind != ROCE_TRACE_RETX);
	CHECK_EQ(B(&w)->ntrace, 0);
	tr_fini(&w);
}

RW_TEST_MAIN(RW_TEST(t_loss_nak_go_back_n), RW_TEST(t_trace_go_back_n), RW_TEST(t_trace_tail_loss),
	     RW_TEST(t_loss_repeated), RW_TEST(t_loss_last_packet_timeout), RW_TEST(t_loss_ack),
	     RW_TEST(t_duplicate_requests), RW_TEST(t_read_lost_response),
	     RW_TEST(t_read_lost_last_and_request), RW_TEST(t_write_then_read_loss),
	     RW_TEST(t_atomic_replay), RW_TEST(t_retry_exceeded), RW_TEST(t_reorder),
	     RW_TEST(t_psn_wrap), RW_TEST(t_rnr_with_pipeline), RW_TEST(t_stale_after_error))
