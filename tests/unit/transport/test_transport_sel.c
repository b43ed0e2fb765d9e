/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The selective loss recoveries, Go-Back-ONE ("gbone") and IRN ("irn"),
 * through the transport harness with deterministic drops. Every scenario
 * runs for both modes; data are compared byte by byte after every transfer,
 * and the counters that say how the loss was repaired are exact.
 */
#include <stdlib.h>
#include <string.h>

#include "roce_pkt.h"
#include "roce_rtt.h"
#include "rw_test.h"
#include "tr_harness.h"

#define RUN(w) tr_run((w), 1000000)
#define PSN0 0x100 /* the harness's start PSN */
#define MTU 1024u
#define MS 1000000ull

static const char *mode;

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

static bool
is_gbone(void)
{
	return strcmp(mode, "gbone") == 0;
}

static void
sel_init(struct tr_wire *w, struct tr_opts *o)
{
	struct tr_opts d = {0};

	if (!o)
		o = &d;
	o->recovery = mode;
	/* the figures below are worked out with a 10 ms floor, not the 500 us default */
	if (!o->rto_min_ns)
		o->rto_min_ns = 10 * MS;
	tr_init(w, o);
}

static void
expect_wc(struct tr_side *s, bool recv, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	CHECK_EQ(tr_poll_cq(s, recv, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.status, st);
}

/* RACKs (gbone) or SACKs (irn) the receiver B sent / the sender A received. */
static uint64_t
notices_sent(struct tr_wire *w)
{
	return tr_dev_stat(B(w), is_gbone() ? ROCE_STAT_TX_RACKS : ROCE_STAT_TX_SACKS);
}

static uint64_t
notices_rcvd(struct tr_wire *w)
{
	return tr_dev_stat(A(w), is_gbone() ? ROCE_STAT_RX_RACKS : ROCE_STAT_RX_SACKS);
}

/* Nothing of the other mode's notice, no go-back NAK, no duplicate, no timeout. */
static void
expect_clean_repair(struct tr_wire *w)
{
	CHECK_EQ(tr_dev_stat(B(w), is_gbone() ? ROCE_STAT_TX_SACKS : ROCE_STAT_TX_RACKS), 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_TX_NAK_SEQ), 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_RX_SPURIOUS), 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_RX_DUP_REQ), 0);
	CHECK_EQ(tr_dev_stat(A(w), ROCE_STAT_TIMEOUTS), 0);
}

/* One lost packet in a 10-packet WRITE: one notice per later packet, one retransmission. */
static void
t_single_loss(void)
{
	struct tr_wire w;

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 10 * MTU, 1);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 10 * MTU);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_OOO_PLACED), 6); /* PSNs 4..9 */
	CHECK_EQ(notices_sent(&w), 6);
	CHECK_EQ(notices_rcvd(&w), 6);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_HOLES), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RETX_QUEUE_HWM), 1);
	expect_clean_repair(&w);
	tr_fini(&w);
}

/* k = 4 consecutive losses: exactly those 4 are resent, one hole. */
static void
t_consecutive_losses(void)
{
	struct tr_wire w;

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 12 * MTU, 2);
	for (int i = 2; i < 6; i++)
		tr_rule(&w, TR_A, TR_REQ, PSN0 + i, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 12 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 12 * MTU);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_OOO_PLACED), 6); /* PSNs 6..11 */
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_HOLES), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 4);
	expect_clean_repair(&w);
	tr_fini(&w);
}

/*
 * A lost notice: the next one covers it (Go-Back-ONE: "covered by the next
 * RACK"). Its NTETH run says the receiver also has the PSNs right before the
 * one it names, so the PSN the lost notice reported is not resent either.
 */
static void
t_lost_notice(void)
{
	struct tr_wire w;

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 10 * MTU, 3);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 1);
	tr_rule(&w, TR_B, is_gbone() ? TR_RACK : TR_SACK, PSN0 + 5, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 10 * MTU);
	CHECK_EQ(w.dropped, 2);
	CHECK_EQ(notices_sent(&w), 6);
	CHECK_EQ(notices_rcvd(&w), 5);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1); /* PSN 3 only */
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_SPURIOUS), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	tr_fini(&w);
}

/*
 * A lost retransmission. Go-Back-ONE's Algorithm 1 queues a hole once per
 * RACK range and leaves a lost resend to the RTO; both modes here find it
 * lost before the timer once a notice names new data sent after the
 * retransmission (beyond the papers): WRITE 2 is posted after PSN 3 was
 * resent. No timeout, exactly one detection, two resends of PSN 3.
 */
static void
t_lost_retransmission(void)
{
	struct tr_wire w;

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 12 * MTU, 4);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 2); /* the original and its first resend */
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 8 * MTU, 0, 0);
	while (tr_deliver_one(&w, TR_A))
		;
	while (tr_deliver_one(&w, TR_B)) /* the notices: PSN 3 resent, and lost */
		;
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(w.dropped, 2);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 8 * MTU, 4 * MTU, 8 * MTU, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 12 * MTU);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 2);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_SPURIOUS), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RETX_LOST_DETECT), 1);
	tr_fini(&w);
}

/*
 * A lost retransmission while a newer one has left since. PSN 1 is lost
 * with its first resend (sent at snd_nxt 16); WRITE 2 (PSNs 16-23) leaves;
 * then PSN 10, lost once, is resent at snd_nxt 24. The
 * notices for 16-23 report PSNs first sent after PSN 1's resend, so it was
 * lost: queued again at once. Compared with the latest resend only (PSN
 * 10's, snd_nxt 24: no notice is past it) the rule saw nothing and PSN 1
 * waited for the timer; at 1 % loss both ways a newer resend leaves within
 * every round trip, so every lost resend did. No timeout, one detection,
 * three resends, data intact, no duplicate.
 */
static void
t_lost_retx_busy(void)
{
	struct tr_wire w;

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 24 * MTU, 6);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 1, TR_DROP, 2); /* the original and its first resend */
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 10, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 16 * MTU, 0, 0);
	while (tr_deliver_one(&w, TR_A)) /* PSNs 0-15 but 1 and 10 */
		;
	/* the notices up to the one that makes A resend PSN 1 (and lose it) */
	while (tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS) == 0 && tr_deliver_one(&w, TR_B))
		;
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(w.dropped, 3);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 16 * MTU, 8 * MTU, 16 * MTU, IBV_SEND_SIGNALED);
	tr_poll(&w);
	/* the other notices: PSN 10 is resent, after WRITE 2 */
	while (tr_deliver_one(&w, TR_B))
		;
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 2);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RETX_LOST_DETECT), 0);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 24 * MTU);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RETX_LOST_DETECT), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 3);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_SPURIOUS), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DUP_REQ), 0);
	tr_fini(&w);
}

/*
 * The last packet of a message lost. Alone it is found by the timer; with a
 * second SEND behind it, that SEND is placed out of order into its own
 * receive WQE (SPETH) and its notice repairs the first at once. Receive
 * completions stay in order.
 */
static void
t_lost_last_packet(void)
{
	struct tr_wire w;
	struct ibv_wc wc[4];

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 4 * MTU, 5);
	tr_post_recv(B(&w), 1, 0, 8 * MTU);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 4 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	expect_wc(B(&w), true, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 4 * MTU);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(notices_sent(&w), 0);

	/* SEND 2 (PSNs 4..7, last lost) then SEND 3 (8..11) behind it */
	tr_fill(A(&w), 0, 8 * MTU, 6);
	tr_post_recv(B(&w), 2, 16 * MTU, 4 * MTU);
	tr_post_recv(B(&w), 3, 32 * MTU, 4 * MTU);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 7, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_SEND, 2, 0, 4 * MTU, 0, IBV_SEND_SIGNALED);
	tr_post_send(A(&w), IBV_WR_SEND, 3, 4 * MTU, 4 * MTU - 100, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	expect_wc(A(&w), false, 3, IBV_WC_SUCCESS);
	CHECK_EQ(tr_poll_cq(B(&w), true, wc, 4), 2);
	CHECK_EQ(wc[0].wr_id, 2);
	CHECK_EQ(wc[0].byte_len, 4 * MTU);
	CHECK_EQ(wc[1].wr_id, 3);
	CHECK_EQ(wc[1].byte_len, 4 * MTU - 100);
	CHECK_MEM(B(&w)->buf + 16 * MTU, A(&w)->buf, 4 * MTU);
	CHECK_MEM(B(&w)->buf + 32 * MTU, A(&w)->buf + 4 * MTU, 4 * MTU - 100);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_OOO_PLACED), 4);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1); /* only the first part's */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 2);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_SPURIOUS), 0);
	tr_fini(&w);
}

/*
 * A hole at the bitmap limit: with --max-ooo 4 and PSN 2 lost, PSNs 3..5
 * (distance 1..3) are placed and PSN 6 (distance 4) is the first dropped as
 * bitmap-full, as are 7..9. The RACK/SACK repairs 2, the timer the rest
 * (two expiries: the head, then the go-back).
 */
static void
t_bitmap_limit(void)
{
	struct tr_wire w;
	struct tr_opts o = {.max_ooo = 4};

	sel_init(&w, &o);
	tr_fill(A(&w), 0, 10 * MTU, 7);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 2, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 10 * MTU);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_OOO_PLACED), 3);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_OOO_FULL), 4);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 5); /* 2, then 6..9 */
	/*
	 * the first expiry resends 6 alone; its ACK covers 6 alone, so the
	 * verdict waits for the next ACK (F-RTO's, t_rto_frto_sel); none comes,
	 * and the second expiry goes back for 7..9
	 */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 2);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_SPURIOUS), 0);
	tr_fini(&w);
}

/* Reordering without loss: placed, notified, never retransmitted. */
static void
t_reorder_no_loss(void)
{
	struct tr_wire w;

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 10 * MTU, 8);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DELAY, 1); /* 3 arrives after 4 */
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 6, TR_DELAY, 1); /* 6 after 7 */
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 10 * MTU);
	CHECK_EQ(w.delayed, 2);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_OOO_PLACED), 2);
	CHECK_EQ(notices_sent(&w), 2);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
	expect_clean_repair(&w);
	tr_fini(&w);
}

/*
 * A READ response lost mid-stream: the later responses are placed at once
 * by their PSN offset, the gap shows (implied NAK) and only the hole is read
 * again (one response, not the rest of the READ). Then two holes in one
 * READ: each is re-read alone, the second as soon as the first is filled.
 */
static void
t_read_response_lost(void)
{
	struct tr_wire w;

	sel_init(&w, NULL);
	tr_fill(B(&w), 64 * MTU, 8 * MTU, 9);
	tr_rule(&w, TR_B, TR_READ_RESP, PSN0 + 3, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_READ, 1, 0, 8 * MTU, 64 * MTU, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(A(&w)->buf, B(&w)->buf + 64 * MTU, 8 * MTU);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RX_OOO_PLACED), 4); /* responses 4..7 */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_READ_REPLAYS), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_READ_RESP), 8 + 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	tr_fini(&w);

	sel_init(&w, NULL);
	tr_fill(B(&w), 64 * MTU, 8 * MTU - 300, 16);
	tr_rule(&w, TR_B, TR_READ_RESP, PSN0 + 2, TR_DROP, 1);
	tr_rule(&w, TR_B, TR_READ_RESP, PSN0 + 5, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_READ, 1, 0, 8 * MTU - 300, 64 * MTU, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(A(&w)->buf, B(&w)->buf + 64 * MTU, 8 * MTU - 300);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RX_OOO_PLACED), 4); /* 3, 4, 6, 7 */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 2);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_READ_RESP), 8 + 2);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	/* a WRITE behind a READ whose responses are in flight: no spurious READ */
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_READ_REPLAYS), 2);
	tr_fini(&w);

	/* a WRITE right behind a READ, one WRITE packet lost: the notices name an ePSN
	 * past the READ while its responses are on their way: no READ is resent */
	sel_init(&w, NULL);
	tr_fill(B(&w), 64 * MTU, 4 * MTU, 17);
	tr_fill(A(&w), 16 * MTU, 4 * MTU, 10);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 5, TR_DROP, 1); /* WRITE PSNs 4..7: lose 5 */
	tr_post_send(A(&w), IBV_WR_RDMA_READ, 1, 0, 4 * MTU, 64 * MTU, 0);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 16 * MTU, 4 * MTU, 128 * MTU, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_MEM(A(&w)->buf, B(&w)->buf + 64 * MTU, 4 * MTU);
	CHECK_MEM(B(&w)->buf + 128 * MTU, A(&w)->buf + 16 * MTU, 4 * MTU);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_READ_REPLAYS), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_SPURIOUS), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	tr_fini(&w);
}

/*
 * The overwrite hazard (Go-Back-ONE IV.D, after IRN): message 1 loses its
 * second packet, message 2 writes the same remote bytes and is placed
 * before the retransmission arrives. The stale packet of message 1 must not
 * overwrite message 2: the remote buffer ends as message 2 wrote it.
 */
static void
t_stale_no_overwrite(void)
{
	struct tr_wire w;

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 4 * MTU, 11);	      /* message 1 */
	tr_fill(A(&w), 8 * MTU, 4 * MTU, 12); /* message 2 */
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 1, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 4 * MTU, 0, 0);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 8 * MTU, 4 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf + 8 * MTU, 4 * MTU);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_OOO_GUARDED), MTU);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	expect_clean_repair(&w);

	/* the same with message 1's packet overtaken, not lost: placed after message 2's */
	tr_fill(A(&w), 0, 4 * MTU, 13);
	tr_fill(A(&w), 8 * MTU, 4 * MTU, 14);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 10, TR_DELAY, 1); /* message 1's 3rd packet after 11 */
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 3, 0, 4 * MTU, 0, 0);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 4, 8 * MTU, 4 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 4, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf + 8 * MTU, 4 * MTU);
	tr_fini(&w);
}

/* Losses across the PSN wrap: placed, notified and resent modulo 2^24. */
static void
t_psn_wrap(void)
{
	struct tr_wire w;
	struct tr_opts o = {.psn_set = true, .sq_psn = 0xfffffd, .rq_psn = 0xfffffe};

	sel_init(&w, &o);
	tr_fill(A(&w), 0, 10 * MTU, 15);
	tr_rule(&w, TR_A, TR_REQ, 0xffffff, TR_DROP, 1);
	tr_rule(&w, TR_A, TR_REQ, 0x000001, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 10 * MTU);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_HOLES), 2);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 2);
	expect_clean_repair(&w);
	tr_fini(&w);
}

/*
 * Random loss, duplication and reordering both ways over many messages:
 * WRITEs, SENDs and READs. Every WR completes once, in order, and every
 * byte is where it belongs.
 */
static void
t_random_soak(void)
{
	struct tr_wire w;
	struct ibv_wc wc[64];
	int sends = 0, recvs = 0, nsend = 0;

	sel_init(&w, NULL);
	/* TR_SEL_SEED runs other seeds */
	tr_random_faults(&w, getenv("TR_SEL_SEED") ? strtoull(getenv("TR_SEL_SEED"), NULL, 0) : 42,
			 30, 5, 20);
	for (int i = 0; i < 64; i++)
		tr_post_recv(B(&w), (uint64_t)i, (uint32_t)(512 * MTU + i * 8 * MTU), 8 * MTU);
	for (int i = 0; i < 64; i++) {
		uint32_t len = (uint32_t)(1 + (i * 1777) % (6 * MTU)),
			 off = (uint32_t)(i * 8 * MTU);
		enum ibv_wr_opcode op = i % 4 == 3 ? IBV_WR_RDMA_READ
					: (i % 2)  ? IBV_WR_SEND
						   : IBV_WR_RDMA_WRITE;

		if (op == IBV_WR_RDMA_READ)
			tr_fill(B(&w), off, len, (uint32_t)(100 + i));
		else
			tr_fill(A(&w), off, len, (uint32_t)(100 + i));
		nsend += op == IBV_WR_SEND;
		tr_post_send(A(&w), op, (uint64_t)i, off, len, off, IBV_SEND_SIGNALED);
	}
	RUN(&w);
	while (tr_poll_cq(A(&w), false, wc, 1) == 1) {
		CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
		CHECK_EQ(wc[0].wr_id, (uint64_t)sends);
		sends++;
	}
	while (tr_poll_cq(B(&w), true, wc, 1) == 1) {
		CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
		CHECK_EQ(wc[0].wr_id, (uint64_t)recvs);
		recvs++;
	}
	CHECK_EQ(sends, 64);
	CHECK_EQ(recvs, nsend);
	for (int i = 0, k = 0; i < 64; i++) {
		uint32_t len = (uint32_t)(1 + (i * 1777) % (6 * MTU)),
			 off = (uint32_t)(i * 8 * MTU);

		if (i % 4 == 3)
			CHECK_MEM(A(&w)->buf + off, B(&w)->buf + off, len);
		else if (i % 2)
			CHECK_MEM(B(&w)->buf + 512 * MTU + (k++) * 8 * MTU, A(&w)->buf + off, len);
		else
			CHECK_MEM(B(&w)->buf + off, A(&w)->buf + off, len);
	}
	CHECK(tr_dev_stat(B(&w), ROCE_STAT_RX_OOO_PLACED) > 0);
	CHECK(w.dropped > 0);
	tr_fini(&w);
}

/*
 * IRN timers (fake clock): RTO_low while fewer than 3 packets are
 * outstanding, RTO_high otherwise. The timer is chosen when it is armed
 * (first send after idle, progress, a retry).
 */
static void
t_irn_rto_low_high(void)
{
	struct tr_wire w;
	struct tr_opts o = {.rto_low_ns = 1000000, .rto_high_ns = 40000000};

	if (is_gbone())
		return;
	/* a lone packet lost: RTO_low */
	sel_init(&w, &o);
	tr_fill(A(&w), 0, 100, 18);
	tr_post_recv(B(&w), 1, 0, MTU);
	tr_rule(&w, TR_A, TR_REQ, PSN0, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 100, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(B(&w), true, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 100);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK(w.now >= 1000000 && w.now < 40000000);
	tr_fini(&w);

	/* 5 packets outstanding when the timer is re-armed, their notices lost: RTO_high */
	sel_init(&w, &o);
	tr_fill(A(&w), 0, 10 * MTU, 19);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 5, TR_DROP, 1);
	tr_rule(&w, TR_B, TR_SACK, -1, TR_DROP, 4);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 10 * MTU);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	/*
	 * No SACK arrived: the first expiry resends una alone (sel_tx_lost_head);
	 * its ACK covers 6..9 too, so nothing more is resent (before the
	 * head-first rule: every PSN from una, 4 of them for nothing).
	 */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_SPURIOUS), 0);
	CHECK(w.now >= 40000000);
	tr_fini(&w);
}

/* IRN's in-flight cap: one BDP = 1 Gb/s x 100 us (RTO_low as the RTT) = 12 packets of 1 KiB. */
static void
t_irn_bdp_cap(void)
{
	struct tr_wire w;
	struct tr_opts o = {.rto_low_ns = 100000, .link_bps = 1000000000};

	if (is_gbone())
		return;
	sel_init(&w, &o);
	w.capture_only = true;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 40 * MTU, 0, IBV_SEND_SIGNALED);
	tr_run(&w, 1000);
	CHECK_EQ(w.q[TR_A].count, 12);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_WINDOW_FULL) >= 1);
	w.capture_only = false;
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	tr_fini(&w);
}

/*
 * One single-packet WRITE whose request takes @p out ns and whose ACK @p back
 * ns (the wire has no delay of its own): one RTT sample of out + back.
 */
static void
sel_round_trip(struct tr_wire *w, uint32_t off, uint64_t out, uint64_t back)
{
	CHECK_EQ(tr_post_send(A(w), IBV_WR_RDMA_WRITE, off, off, 512, off, IBV_SEND_SIGNALED), 0);
	w->now += out;
	CHECK(tr_deliver_one(w, TR_A));
	w->now += back;
	CHECK(tr_deliver_one(w, TR_B));
	tr_poll(w);
	expect_wc(A(w), false, off, IBV_WC_SUCCESS);
}

/*
 * IRN's timers from the measured RTT (no --rto-low/--rto-high), floor
 * --rto-min 20 ms. Two 10 ms samples: RTT 10, D = (7 x 5 + 0)/8 = 4.375 ms.
 * RTO_high = RTT + max(4 D, floor) = 30 ms; RTO_low = RTT + 4 D = 27.5 ms.
 * A lone lost packet is resent at send + 27.5 ms; its resend lost too, the
 * next resend comes 55 ms later (RTO_low doubled with the engine's
 * timeout, 60 ms). With 5 packets outstanding and the notices lost: 30 ms.
 */
static void
t_irn_rto_measured(void)
{
	struct tr_opts o = {.rto_min_ns = 20000000};
	struct tr_wire w;
	uint64_t t;

	if (is_gbone())
		return;
	sel_init(&w, &o);
	tr_fill(A(&w), 0, 16 * MTU, 21);
	sel_round_trip(&w, 0, 5000000, 5000000);
	sel_round_trip(&w, 512, 5000000, 5000000);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 2, TR_DROP, 2); /* the packet and its first resend */
	t = w.now;
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 3, 1024, 512, 1024, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(roce_dev_next_deadline(A(&w)->dev), t + 27500000);
	w.now = t + 27500000;
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(roce_dev_next_deadline(A(&w)->dev), t + 27500000 + 55000000);
	w.now = t + 27500000 + 55000000;
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 2);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 2);
	RUN(&w);
	expect_wc(A(&w), false, 3, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 1536);
	tr_fini(&w);

	/* 5 outstanding, the 6th of 10 lost and its SACKs lost: RTO_high, 30 ms after the send */
	sel_init(&w, &o);
	tr_fill(A(&w), 0, 16 * MTU, 22);
	sel_round_trip(&w, 0, 5000000, 5000000);
	sel_round_trip(&w, 512, 5000000, 5000000);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 7, TR_DROP, 1);
	tr_rule(&w, TR_B, TR_SACK, -1, TR_DROP, 4);
	t = w.now;
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 3, 2 * MTU, 10 * MTU, 2 * MTU,
			      IBV_SEND_SIGNALED),
		 0);
	/*
	 * Armed at the first send (1 outstanding): RTO_low. The ACK of PSNs 2..6
	 * re-arms it with 5 outstanding: RTO_high = 10 + 20 = 30 ms from the send
	 * (RTO_low would now be 10 + 15.3125).
	 */
	CHECK_EQ(roce_dev_next_deadline(A(&w)->dev), t + 27500000);
	w.now = t + 5000000;
	while (tr_deliver_one(&w, TR_A))
		;
	w.now += 20000; /* B's delayed ACK (20 us) */
	tr_poll(&w);
	w.now = t + 10000000; /* M = 10 ms: RTT 10, D 3.828125, 4 D under the floor */
	while (tr_deliver_one(&w, TR_B))
		;
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(roce_dev_next_deadline(A(&w)->dev), t + 30000000);
	RUN(&w);
	expect_wc(A(&w), false, 3, IBV_WC_SUCCESS);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK_MEM(B(&w)->buf + 2 * MTU, A(&w)->buf + 2 * MTU, 10 * MTU);
	tr_fini(&w);

	/* --rto fixed: both are the -u timer (4.096 us x 2^14) */
	o.rto_fixed = true;
	sel_init(&w, &o);
	tr_fill(A(&w), 0, 16 * MTU, 23);
	sel_round_trip(&w, 0, 5000000, 5000000);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 1, TR_DROP, 1);
	t = w.now;
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 512, 512, 512, IBV_SEND_SIGNALED), 0);
	CHECK_EQ(roce_dev_next_deadline(A(&w)->dev), t + (4096ull << 14));
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 1024);
	tr_fini(&w);
}

/*
 * IRN's one-BDP cap from the least RTT sample (no --rto-low): before a
 * sample no cap (all 40 packets leave); after samples of 300 us and 100 us,
 * 1 Gb/s x 100 us / 1 KiB = 12 packets.
 */
static void
t_irn_bdp_measured(void)
{
	struct tr_opts o = {.link_bps = 1000000000};
	struct tr_wire w;

	if (is_gbone())
		return;
	sel_init(&w, &o);
	tr_fill(A(&w), 0, 48 * MTU, 24);
	w.capture_only = true;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 40 * MTU, 0, IBV_SEND_SIGNALED);
	tr_run(&w, 1000);
	CHECK_EQ(w.q[TR_A].count, 40);
	w.capture_only = false;
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	tr_fini(&w);

	sel_init(&w, &o);
	tr_fill(A(&w), 0, 48 * MTU, 25);
	sel_round_trip(&w, 0, 150000, 150000);
	sel_round_trip(&w, 512, 50000, 50000);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RTT_SAMPLES), 2);
	w.capture_only = true;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 4 * MTU, 40 * MTU, 4 * MTU, IBV_SEND_SIGNALED);
	tr_run(&w, 1000);
	CHECK_EQ(w.q[TR_A].count, 12);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_WINDOW_FULL) >= 1);
	w.capture_only = false;
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf + 4 * MTU, A(&w)->buf + 4 * MTU, 40 * MTU);
	tr_fini(&w);
}

/*
 * The loss-recovery trace (roce_dev_ops.trace): the sender reports each resent PSN,
 * the receiver each missing PSN when it arrives, also when it is placed out of
 * order (a second hole repaired before the first).
 */
static void
t_trace(void)
{
	struct tr_opts o = {.trace = true};
	struct tr_wire w;
	unsigned n2 = 0, n5 = 0, other = 0, nretx = 0;

	sel_init(&w, &o);
	tr_fill(A(&w), 0, 10 * MTU, 4);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 10 * MTU);
	CHECK_EQ(A(&w)->ntrace, 1);
	CHECK(A(&w)->ntrace && A(&w)->trace[0].kind == ROCE_TRACE_RETX &&
	      A(&w)->trace[0].psn == PSN0 + 3);
	CHECK_EQ(B(&w)->ntrace, 1);
	CHECK(B(&w)->ntrace && B(&w)->trace[0].kind == ROCE_TRACE_RX_LATE &&
	      B(&w)->trace[0].psn == PSN0 + 3);
	tr_fini(&w);

	/* PSN 2 lost twice, PSN 5 once: each reported missing-and-arrived exactly once */
	sel_init(&w, &o);
	tr_fill(A(&w), 0, 10 * MTU, 5);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 2, TR_DROP, 2);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 5, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 10 * MTU);
	for (unsigned i = 0; i < B(&w)->ntrace && i < TR_MAX_TRACE; i++) {
		const struct roce_trace_event *e = &B(&w)->trace[i];

		n2 += e->kind == ROCE_TRACE_RX_LATE && e->psn == PSN0 + 2;
		n5 += e->kind == ROCE_TRACE_RX_LATE && e->psn == PSN0 + 5;
		other += e->psn != PSN0 + 2 && e->psn != PSN0 + 5;
	}
	CHECK_EQ(n2, 1);
	CHECK_EQ(n5, 1);
	CHECK_EQ(other, 0);
	for (unsigned i = 0; i < A(&w)->ntrace && i < TR_MAX_TRACE; i++)
		nretx += A(&w)->trace[i].kind == ROCE_TRACE_RETX;
	CHECK_EQ(nretx, tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS));
	tr_fini(&w);
}

/* Deliver every frame side @p dir has queued; returns how many. */
static unsigned int
deliver_all(struct tr_wire *w, int dir)
{
	unsigned int n = 0;

	while (tr_deliver_one(w, dir))
		n++;
	return n;
}

/*
 * Adaptive RTO, a path of 10 ms each way: 16 samples of exactly 20 ms give
 * RTT 20 ms and D = 10 x (7/8)^15 ms, so 4 D is under the 10 ms floor and
 * the timeout is RTT + 10 = 30 ms, less than the 2 RTT in which a hole at
 * una can be repaired by a notice (the notice takes one RTT to come back,
 * the resend one more RTT to be acknowledged).
 */
static struct roce_rtt_info
sel_rtt_20ms(struct tr_wire *w)
{
	struct roce_rtt_info r;

	for (uint32_t i = 0; i < 16; i++)
		sel_round_trip(w, i * 512, 10 * MS, 10 * MS);
	CHECK_EQ(roce_qp_rtt(A(w)->qp, &r), 0);
	CHECK_EQ(r.samples, 16);
	CHECK_EQ(r.srtt_ns, 20 * MS);
	CHECK(4 * r.rttvar_ns < 10 * MS);
	CHECK_EQ(r.rto_ns, 30 * MS);
	return r;
}

/*
 * The cause of the spurious adaptive-RTO expiries under gbone/irn
 * (docs/transport.md section 5.2). A 10-packet WRITE loses its first
 * packet P (= una). The notices reach A one RTT after the send and A resends
 * P at once; the resend's ACK comes one more RTT later, at t0 + 40 ms. The
 * timer was armed at t0 from P's first send and was not re-armed when P was
 * resent, so it fired at t0 + 30 ms with the repair in flight: a spurious
 * expiry, which resent every PSN no notice reported and doubled the timeout.
 * A resend of una re-arms the timer from the resend (Linux TCP re-arms its
 * RTO when it retransmits the head): the deadline becomes t0 + 20 + 30 ms.
 */
static void
t_rto_resend_rearms(void)
{
	struct tr_wire w;
	struct roce_rtt_info r;
	uint32_t p = PSN0 + 16;
	uint64_t t0;

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 64 * MTU, 31);
	r = sel_rtt_20ms(&w);
	tr_rule(&w, TR_A, TR_REQ, p, TR_DROP, 1);
	t0 = w.now;
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 7, 16 * MTU, 10 * MTU, 16 * MTU,
			      IBV_SEND_SIGNALED),
		 0);
	tr_poll(&w);
	CHECK_EQ(w.q[TR_A].count, 9); /* P dropped */
	/* IRN: armed at the first send, 1 packet outstanding: RTO_low = RTT + 4 D */
	CHECK_EQ(roce_dev_next_deadline(A(&w)->dev),
		 t0 + (is_gbone() ? 30 * MS : r.srtt_ns + 4 * r.rttvar_ns));
	w.now = t0 + 10 * MS;
	CHECK_EQ(deliver_all(&w, TR_A), 9);
	tr_poll(&w);
	CHECK_EQ(notices_sent(&w), 9);
	w.now = t0 + 20 * MS;
	CHECK_EQ(deliver_all(&w, TR_B), 9);
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1); /* P, resent at t0 + 20 */
	CHECK_EQ(w.q[TR_A].count, 1);
	/* the timer times the resend: RTO after it, not after P's first send */
	CHECK_EQ(roce_dev_next_deadline(A(&w)->dev), t0 + 50 * MS);
	w.now = t0 + 30 * MS;
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(deliver_all(&w, TR_A), 1);
	tr_poll(&w);
	w.now = t0 + 40 * MS;
	CHECK(deliver_all(&w, TR_B) >= 1);
	tr_poll(&w);
	expect_wc(A(&w), false, 7, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 16 * 512);			   /* the round trips */
	CHECK_MEM(B(&w)->buf + 16 * MTU, A(&w)->buf + 16 * MTU, 10 * MTU); /* the WRITE */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RTO_SPURIOUS), 0);
	expect_clean_repair(&w);
	CHECK_EQ(roce_dev_next_deadline(A(&w)->dev), UINT64_MAX); /* nothing outstanding */
	tr_fini(&w);
}

/*
 * Karn's rule starved the estimator under the selective modes: while a
 * hole holds una back, every cumulative ACK covers a resend and gives no
 * sample, so a backed-off timeout stayed doubled (at --rto-max after a few
 * expiries at 10 % loss). A RACK/SACK names the PSN whose arrival sent it:
 * if that PSN was sent once, the notice is a sample (roce_rtt_noticed).
 * Here an expiry doubles the timeout to 60 ms and the repair of that loss
 * ends the back-off (t_rto_backoff_ends_on_repair); the next burst loses its
 * first packet, and its 9 notices (20 ms each) are samples before the hole
 * is repaired. The cumulative ACK that names a noticed PSN gives no second
 * sample.
 */
static void
t_notice_rtt_sample(void)
{
	struct tr_opts o = {.no_loss_window = true}; /* the expiry would cut it to 3 packets */
	struct tr_wire w;
	struct roce_rtt_info r;
	uint32_t p = PSN0 + 17;
	uint64_t t0;

	sel_init(&w, &o);
	tr_fill(A(&w), 0, 64 * MTU, 32);
	sel_rtt_20ms(&w);
	/* a lone packet lost once: the timer expires, the timeout doubles */
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 16, TR_DROP, 1);
	CHECK_EQ(
	    tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 6, 8 * MTU, 512, 8 * MTU, IBV_SEND_SIGNALED), 0);
	w.now = roce_dev_next_deadline(A(&w)->dev);
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	w.now += 10 * MS;
	CHECK_EQ(deliver_all(&w, TR_A), 1);
	w.now += 10 * MS;
	CHECK_EQ(deliver_all(&w, TR_B), 1);
	tr_poll(&w);
	expect_wc(A(&w), false, 6, IBV_WC_SUCCESS);
	CHECK_EQ(roce_qp_rtt(A(&w)->qp, &r), 0);
	CHECK_EQ(r.samples, 16); /* the resend's ACK: ambiguous, no sample (Karn) */
	/* it can answer the resend (20 ms after it): a repair, the back-off ends */
	CHECK_EQ(r.backoffs, 0);
	CHECK_EQ(r.rto_ns, 30 * MS);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_KARN_SKIPPED), 1);

	/* 10 packets, the first lost: 9 notices, each a 20 ms sample */
	tr_rule(&w, TR_A, TR_REQ, p, TR_DROP, 1);
	t0 = w.now;
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 7, 16 * MTU, 10 * MTU, 16 * MTU,
			      IBV_SEND_SIGNALED),
		 0);
	tr_poll(&w);
	w.now = t0 + 10 * MS;
	CHECK_EQ(deliver_all(&w, TR_A), 9);
	tr_poll(&w);
	w.now = t0 + 20 * MS;
	CHECK_EQ(deliver_all(&w, TR_B), 9);
	tr_poll(&w);
	CHECK_EQ(roce_qp_rtt(A(&w)->qp, &r), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RTT_NOTICE_SAMPLES), 9);
	CHECK_EQ(r.samples, 25);
	CHECK_EQ(r.srtt_ns, 20 * MS);
	CHECK_EQ(r.backoffs, 0);
	CHECK_EQ(r.rto_ns, 30 * MS); /* RTT + the 10 ms floor */
	w.now = t0 + 30 * MS;
	CHECK_EQ(deliver_all(&w, TR_A), 1); /* the resend of P */
	tr_poll(&w);
	w.now = t0 + 40 * MS;
	CHECK(deliver_all(&w, TR_B) >= 1);
	tr_poll(&w);
	expect_wc(A(&w), false, 7, IBV_WC_SUCCESS);
	/* the cumulative ACK names P + 9, sampled already: no second sample, no Karn skip */
	CHECK_EQ(roce_qp_rtt(A(&w)->qp, &r), 0);
	CHECK_EQ(r.samples, 25);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_KARN_SKIPPED), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 2);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 16 * 512);
	CHECK_MEM(B(&w)->buf + 8 * MTU, A(&w)->buf + 8 * MTU, 512);
	CHECK_MEM(B(&w)->buf + 16 * MTU, A(&w)->buf + 16 * MTU, 10 * MTU);
	tr_fini(&w);
}

/*
 * A spurious expiry (the receiver's ACKs held back beyond RTT + --rto-min,
 * as a descheduled rnic holds them) costs one resend, not a window: the
 * first expiry resends una alone (sel_tx_lost_head, after F-RTO); the late
 * ACK covers the whole WRITE, so nothing more is resent, and the expiry is
 * counted spurious (the resend's ACK came within 3/4 of the least RTT).
 */
static void
t_rto_spurious_head_only(void)
{
	struct tr_wire w;
	uint64_t t0, due;

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 64 * MTU, 33);
	sel_rtt_20ms(&w);
	t0 = w.now;
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 7, 16 * MTU, 10 * MTU, 16 * MTU,
			      IBV_SEND_SIGNALED),
		 0);
	tr_poll(&w);
	w.now = t0 + 10 * MS;
	CHECK_EQ(deliver_all(&w, TR_A), 10);
	w.now += 20000; /* B's delayed ACK, if any */
	tr_poll(&w);
	CHECK(w.q[TR_B].count >= 1); /* held: not delivered before the timer */
	due = roce_dev_next_deadline(A(&w)->dev);
	CHECK(due > t0 + 20 * MS && due <= t0 + 30 * MS);
	w.now = due;
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1); /* una alone */
	CHECK_EQ(w.q[TR_A].count, 1);
	w.now = due + 1 * MS; /* the held ACK arrives */
	CHECK(deliver_all(&w, TR_B) >= 1);
	tr_poll(&w);
	expect_wc(A(&w), false, 7, IBV_WC_SUCCESS);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RTO_SPURIOUS), 1);
	RUN(&w); /* the resend reaches B: a duplicate, ACKed again */
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DUP_REQ), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK_MEM(B(&w)->buf + 16 * MTU, A(&w)->buf + 16 * MTU, 10 * MTU);
	tr_fini(&w);
}

/*
 * F-RTO's verdict before the go-back. B's ACKs, one
 * per packet, are held 16 ms past the expiry: later than 3/4 of the least
 * RTT, so by timing the first one could answer the head's resend. It covers
 * the head alone; the verdict waits for the next ACK, which acknowledges PSN
 * 1 from its one send before the resend: F-RTO finds the expiry spurious and
 * nothing more is resent. Deciding on the first ACK went back for PSNs 1..9
 * (10 resends, 9 duplicates at B) while the rest of the same burst showed
 * they had all arrived.
 */
static void
t_rto_frto_sel(void)
{
	struct tr_wire w;
	uint64_t t0, due;

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 64 * MTU, 35);
	sel_rtt_20ms(&w);
	t0 = w.now;
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 7, 16 * MTU, 10 * MTU, 16 * MTU,
			      IBV_SEND_SIGNALED),
		 0);
	tr_poll(&w);
	w.now = t0 + 10 * MS;
	for (int i = 0; i < 10; i++) {
		CHECK(tr_deliver_one(&w, TR_A));
		w.now += 50000; /* past B's delayed ACK: one ACK per packet */
		tr_poll(&w);
	}
	CHECK_EQ(w.q[TR_B].count, 10); /* held */
	due = roce_dev_next_deadline(A(&w)->dev);
	w.now = due;
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1); /* una alone */
	w.now = due + 16 * MS;
	CHECK(tr_deliver_one(&w, TR_B)); /* the head's ACK */
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK(tr_deliver_one(&w, TR_B)); /* PSN 1's, from its one send */
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RTO_SPURIOUS), 1);
	RUN(&w);
	expect_wc(A(&w), false, 7, IBV_WC_SUCCESS);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DUP_REQ), 1); /* the head's resend */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK_MEM(B(&w)->buf + 16 * MTU, A(&w)->buf + 16 * MTU, 10 * MTU);
	tr_fini(&w);
}

/*
 * A late answer to an earlier resend of the head. The
 * path's least RTT is 10 ms, its smoothed RTT about 28 ms (a queue, or a
 * loaded host). PSN 0 of a WRITE is lost, the notices resend it (R0), a
 * second WRITE (PSNs 10-13) follows; B gets them all and its ACKs are held
 * past the timer, which resends PSN 0 again (R1: no test can find this
 * expiry spurious, PSN 0 was sent twice). The ACK of R0 comes 9 ms after R1:
 * later than 3/4 of the least RTT, so by that rule it could answer R1, and
 * it leaves 10-13 unacknowledged and unreported. The verdict waits (sooner
 * than 3/4 of the smoothed RTT); the next ACKs acknowledge 10-13 and nothing
 * more is resent. Deciding on that ACK resent 10-13, which B had.
 */
static void
t_rto_verdict_late(void)
{
	struct tr_wire w;
	struct roce_rtt_info r;
	uint64_t t0, due;

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 64 * MTU, 36);
	sel_round_trip(&w, 0, 5 * MS, 5 * MS);
	for (uint32_t i = 1; i < 17; i++)
		sel_round_trip(&w, i * 512, 15 * MS, 15 * MS);
	CHECK_EQ(roce_qp_rtt(A(&w)->qp, &r), 0);
	CHECK_EQ(r.min_rtt_ns, 10 * MS);
	CHECK(r.srtt_ns > 27 * MS && r.srtt_ns < 28 * MS);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 17, TR_DROP, 1); /* the WRITE's first PSN */
	t0 = w.now;
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 7, 16 * MTU, 10 * MTU, 16 * MTU, 0), 0);
	tr_poll(&w);
	w.now = t0 + 10 * MS;
	CHECK_EQ(deliver_all(&w, TR_A), 9);
	w.now = t0 + 20 * MS;
	CHECK(deliver_all(&w, TR_B) >= 3); /* the notices: R0 */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 1);
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 8, 32 * MTU, 4 * MTU, 32 * MTU,
			      IBV_SEND_SIGNALED),
		 0);
	tr_poll(&w);
	w.now = t0 + 30 * MS;
	for (int i = 0; i < 5; i++) { /* R0, then 10-13: one ACK each */
		CHECK(tr_deliver_one(&w, TR_A));
		w.now += 50000;
		tr_poll(&w);
	}
	CHECK_EQ(w.q[TR_B].count, 5); /* held */
	due = roce_dev_next_deadline(A(&w)->dev);
	w.now = due;
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 2); /* R1: PSN 0 alone */
	w.now = due + 9 * MS;
	CHECK(tr_deliver_one(&w, TR_B)); /* R0's ACK: 0-9 */
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 2);
	RUN(&w);
	expect_wc(A(&w), false, 8, IBV_WC_SUCCESS);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 2);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DUP_REQ), 1); /* R1 */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK_MEM(B(&w)->buf + 16 * MTU, A(&w)->buf + 16 * MTU, 10 * MTU);
	CHECK_MEM(B(&w)->buf + 32 * MTU, A(&w)->buf + 32 * MTU, 4 * MTU);
	tr_fini(&w);
}

/*
 * The head-first expiry's verdict (sel_tx_acked): the first ACK that can
 * answer the head's resend comes when everything sent before the resend that
 * arrived has been reported, so the PSNs still unreported are lost too. Here
 * PSN 0 and the tail 7..9 of a 10-packet WRITE are lost and so is every
 * notice: one expiry resends 0, its ACK (up to 7) sends 7..9 at once.
 */
static void
t_rto_head_then_tail(void)
{
	struct tr_wire w;

	sel_init(&w, NULL);
	tr_fill(A(&w), 0, 10 * MTU, 34);
	tr_rule(&w, TR_A, TR_REQ, PSN0, TR_DROP, 1);
	for (int i = 7; i < 10; i++)
		tr_rule(&w, TR_A, TR_REQ, PSN0 + i, TR_DROP, 1);
	tr_rule(&w, TR_B, is_gbone() ? TR_RACK : TR_SACK, -1, TR_DROP, 100);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 10 * MTU);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 4);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DUP_REQ), 0);
	tr_fini(&w);
}

static const struct rw_test_case cases[] = {
    RW_TEST(t_single_loss),
    RW_TEST(t_consecutive_losses),
    RW_TEST(t_lost_notice),
    RW_TEST(t_lost_retransmission),
    RW_TEST(t_lost_retx_busy),
    RW_TEST(t_lost_last_packet),
    RW_TEST(t_bitmap_limit),
    RW_TEST(t_reorder_no_loss),
    RW_TEST(t_read_response_lost),
    RW_TEST(t_stale_no_overwrite),
    RW_TEST(t_psn_wrap),
    RW_TEST(t_random_soak),
    RW_TEST(t_irn_rto_low_high),
    RW_TEST(t_irn_rto_measured),
    RW_TEST(t_irn_bdp_measured),
    RW_TEST(t_irn_bdp_cap),
    RW_TEST(t_trace),
    RW_TEST(t_rto_resend_rearms),
    RW_TEST(t_notice_rtt_sample),
    RW_TEST(t_rto_spurious_head_only),
    RW_TEST(t_rto_frto_sel),
    RW_TEST(t_rto_verdict_late),
    RW_TEST(t_rto_head_then_tail),
};

/* RW_TEST_MAIN, once per mode */
int
main(void)
{
	static const char *const modes[] = {"gbone", "irn"};

	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		mode = modes[m];
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			unsigned f0 = rw_t_fail;

			rw_t_case = cases[i].name;
			cases[i].fn();
			printf("%-6s %-34s %s\n", mode, cases[i].name,
			       rw_t_fail == f0 ? "ok" : "FAIL");
		}
	}
	printf("%u passed, %u failed\n", rw_t_pass, rw_t_fail);
	return (rw_t_fail || rw_t_pass == 0) ? 1 : 0;
}
