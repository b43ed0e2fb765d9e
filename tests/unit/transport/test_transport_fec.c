/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FEC in the engine (roce_fec.c, roce_fec_hold.c + lib/fec behind roce_fec.h) through the
 * transport harness with deterministic drops: LoWAR's XOR code with
 * interleaving and the Reed-Solomon mode, each under fec+gbn, fec+gbone and
 * fec+irn. Every transfer is compared byte for byte; the counters that say
 * how a loss was repaired (rebuilt, held back, released to the transport,
 * retransmitted, NAKed) are exact.
 *
 * Grid (docs/fec.md): the first coded PSN anchors it; with K, D block j of a
 * group holds the PSNs base + j + i*D, i = 0..K-1.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fec.h"
#include "fec_roce.h"
#include "roce_fec.h"
#include "roce_opcode.h"
#include "roce_pkt.h"
#include "rw_test.h"
#include "tr_harness.h"

#define RUN(w) tr_run((w), 1000000)
#define PSN0 0x100 /* the harness's start PSN */
#define MTU 1024u

static const char *mode; /* base recovery mode */

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
fec_init(struct tr_wire *w, const char *fec)
{
	struct tr_opts o = {0};

	o.recovery = mode;
	o.fec = fec;
	tr_init(w, &o);
}

static void
expect_wc(struct tr_side *s, bool recv, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	CHECK_EQ(tr_poll_cq(s, recv, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.status, st);
}

/* Loss signals of any mode the receiver B sent. */
static uint64_t
loss_signals(struct tr_wire *w)
{
	return tr_dev_stat(B(w), ROCE_STAT_TX_NAK_SEQ) + tr_dev_stat(B(w), ROCE_STAT_TX_RACKS) +
	       tr_dev_stat(B(w), ROCE_STAT_TX_SACKS);
}

/* A WRITE of @p npkts packets from A to B with the request PSNs in @p drop lost once. */
static void
write_with_drops(struct tr_wire *w, uint32_t npkts, const uint32_t *drop, unsigned ndrop,
		 uint32_t seed)
{
	tr_fill(A(w), 0, npkts * MTU, seed);
	for (unsigned i = 0; i < ndrop; i++)
		tr_rule(w, TR_A, TR_REQ, PSN0 + drop[i], TR_DROP, 1);
	tr_post_send(A(w), IBV_WR_RDMA_WRITE, 1, 0, npkts * MTU, 0, IBV_SEND_SIGNALED);
	RUN(w);
	expect_wc(A(w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(w)->buf, A(w)->buf, npkts * MTU);
}

/*
 * Every hold ends in exactly one counted outcome: rebuilt, filled by the
 * packet itself (late, or a retransmission), or released (unrecoverable,
 * deadline, ring full), or dropped by a reset.
 */
static void
expect_holds_reconcile(struct tr_wire *w)
{
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_WITHHELD),
		 tr_dev_stat(B(w), ROCE_STAT_FEC_HOLD_REPAIRED) +
		     tr_dev_stat(B(w), ROCE_STAT_FEC_HOLD_FILLED) +
		     tr_dev_stat(B(w), ROCE_STAT_FEC_RELEASE_UNREC) +
		     tr_dev_stat(B(w), ROCE_STAT_FEC_RELEASE_DEADLINE) +
		     tr_dev_stat(B(w), ROCE_STAT_FEC_RELEASE_PROGRESS) +
		     tr_dev_stat(B(w), ROCE_STAT_FEC_RELEASE_FULL) +
		     tr_dev_stat(B(w), ROCE_STAT_FEC_HOLD_RESET));
}

/* Everything a loss repaired by FEC alone must leave: no loss signal, no resend. */
static void
expect_fec_only(struct tr_wire *w, uint64_t rebuilt)
{
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_REBUILT), rebuilt);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_UNRECOVERABLE), 0);
	CHECK_EQ(tr_dev_stat(A(w), ROCE_STAT_TX_RETX_PKTS), 0);
	CHECK_EQ(tr_dev_stat(A(w), ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(loss_signals(w), 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_RX_OOS), 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_RELEASE_DEADLINE), 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_RELEASE_PROGRESS), 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_RELEASE_UNREC), 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_RELEASE_FULL), 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_RX_REFUSED), 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_HOLD_FILLED), 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_REBUILT_AFTER_RELEASE), 0);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_REBUILT_DUP), 0);
	expect_holds_reconcile(w);
}

/* No loss: every data packet coded, one repair per block, nothing rebuilt or held. */
static void
t_clean(void)
{
	struct tr_wire w;

	fec_init(&w, "xor:8,2");
	write_with_drops(&w, 64, NULL, 0, 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_COVERED), 64);
	/* 4 groups of 2 blocks: 8 repairs and one COMMIT (the grid's anchor) */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_FRAMES), 8 + 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_RX_FRAMES), 8 + 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_WITHHELD), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_HELD), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_DROPPED), 0);
	expect_fec_only(&w, 0);
	tr_fini(&w);
}

/* One loss in each of several blocks of the default xor:32,4: all rebuilt, zero resends. */
static void
t_one_loss_per_block(void)
{
	static const uint32_t drop[] = {5, 38, 71, 104, 130, 255};

	static const uint32_t apart[] = {5, 130, 259, 390};
	struct tr_wire w;

	/* overlapping holes: one hold covers several, each ends repaired */
	fec_init(&w, "xor:32,4");
	write_with_drops(&w, 256, drop, 6, 2);
	expect_fec_only(&w, 6);
	CHECK(tr_dev_stat(B(&w), ROCE_STAT_FEC_WITHHELD) >= 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_HOLD_REPAIRED),
		 tr_dev_stat(B(&w), ROCE_STAT_FEC_WITHHELD));
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), 256);
	tr_fini(&w);

	/* one loss per group, each repaired before the next: four holds, and exactly the
	 * packets between a loss and its block's repair held (LoWAR's reordering) */
	fec_init(&w, "xor:32,4");
	write_with_drops(&w, 512, apart, 4, 14);
	expect_fec_only(&w, 4);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_WITHHELD), 4);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_HOLD_REPAIRED), 4);
	/* 6..125, 131..254, 260..383, 391..510 */
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_HELD), 120 + 124 + 124 + 120);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), 512);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_COVERED), 512);
	tr_fini(&w);
}

/* The last packet of a message lost: the idle flush sends the partial block's repair. */
static void
t_tail_loss(void)
{
	static const uint32_t drop[] = {19};
	struct tr_wire w;

	fec_init(&w, "xor:32,4");
	write_with_drops(&w, 20, drop, 1, 3);
	expect_fec_only(&w, 1);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_FLUSHES) >= 1);
	tr_fini(&w);
}

/* B's trace events of @p kind for PSN0 + @p off. */
static unsigned
trace_count(struct tr_wire *w, enum roce_trace_kind kind, uint32_t off)
{
	unsigned n = 0;

	for (unsigned i = 0; i < B(w)->ntrace && i < TR_MAX_TRACE; i++)
		n += B(w)->trace[i].kind == kind && B(w)->trace[i].psn == PSN0 + off;
	return n;
}

static unsigned
trace_kind(struct tr_side *s, enum roce_trace_kind kind)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->ntrace && i < TR_MAX_TRACE; i++)
		n += s->trace[i].kind == kind;
	return n;
}

/*
 * The loss -> repair trace (docs/loss-trace.md) says what repaired each hole:
 * a rebuilt PSN is one fec_rebuilt at B (and nothing else: no retx at A, no
 * rx_late), a hole FEC could not fill one rx_late when its resend arrives,
 * and a hole filled while its hold kept the later packets back (here a
 * reordered packet) one rx_late from the shim, since the responder never saw
 * a later PSN.
 */
static void
t_trace(void)
{
	static const uint32_t apart[] = {5, 130};
	static const uint32_t same[] = {2, 6}; /* xor:8,2: both in block 0 */
	struct tr_opts o = {0};
	struct tr_wire w;

	o.recovery = mode;
	o.trace = true;
	o.fec = "xor:32,4";
	tr_init(&w, &o);
	write_with_drops(&w, 512, apart, 2, 21);
	expect_fec_only(&w, 2);
	CHECK_EQ(B(&w)->ntrace, 2);
	CHECK_EQ(trace_count(&w, ROCE_TRACE_FEC_REBUILT, 5), 1);
	CHECK_EQ(trace_count(&w, ROCE_TRACE_FEC_REBUILT, 130), 1);
	CHECK_EQ(A(&w)->ntrace, 0);
	CHECK(B(&w)->ntrace == 2 && B(&w)->trace[0].qpn == roce_qp_num(B(&w)->qp) &&
	      B(&w)->trace[0].psn == PSN0 + 5);
	tr_fini(&w);

	o.fec = "xor:8,2";
	tr_init(&w, &o);
	write_with_drops(&w, 32, same, 2, 22);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_UNRECOVERABLE), 2);
	CHECK_EQ(trace_kind(B(&w), ROCE_TRACE_FEC_REBUILT), 0);
	CHECK_EQ(trace_count(&w, ROCE_TRACE_RX_LATE, 2), 1);
	CHECK_EQ(trace_count(&w, ROCE_TRACE_RX_LATE, 6), 1);
	CHECK(trace_kind(A(&w), ROCE_TRACE_RETX) >= 2);
	tr_fini(&w);

	o.fec = "xor:32,4";
	tr_init(&w, &o);
	tr_fill(A(&w), 0, 64 * MTU, 23);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 5, TR_DELAY, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 64 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 64 * MTU);
	/* the late original filled its hold: nothing rebuilt, resent or signalled */
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_HOLD_FILLED), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_WITHHELD), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_REBUILT), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
	CHECK_EQ(loss_signals(&w), 0);
	CHECK_EQ(B(&w)->ntrace, 1);
	CHECK_EQ(trace_count(&w, ROCE_TRACE_RX_LATE, 5), 1);
	tr_fini(&w);
}

/* Two losses in one XOR block: nothing rebuilt, both reported, the base mode resends them. */
static void
t_two_losses_one_block(void)
{
	static const uint32_t drop[] = {2, 6}; /* xor:8,2: members 0,2,4,..: block 0 */
	struct tr_wire w;

	fec_init(&w, "xor:8,2");
	write_with_drops(&w, 32, drop, 2, 4);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_REBUILT), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_UNRECOVERABLE), 2);
	expect_holds_reconcile(&w);
	CHECK(tr_dev_stat(B(&w), ROCE_STAT_FEC_RELEASE_UNREC) >= 1);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS) >= 2);
	CHECK(loss_signals(&w) >= 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), 32);
	tr_fini(&w);
}

/* A burst of D consecutive losses hits D blocks once each: all rebuilt. */
static void
t_burst_d(void)
{
	static const uint32_t drop[] = {9, 10, 11, 12};
	struct tr_wire w;

	fec_init(&w, "xor:8,4");
	write_with_drops(&w, 64, drop, 4, 5);
	expect_fec_only(&w, 4);
	tr_fini(&w);
}

/* A burst of D + 1: one block is hit twice and falls back; the rest are rebuilt. */
static void
t_burst_d_plus_1(void)
{
	static const uint32_t drop[] = {8, 9, 10, 11, 12}; /* 8 and 12: block 0 */
	struct tr_wire w;

	fec_init(&w, "xor:8,4");
	write_with_drops(&w, 64, drop, 5, 6);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_UNRECOVERABLE), 2);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_REBUILT) +
		     tr_dev_stat(B(&w), ROCE_STAT_FEC_UNRECOVERABLE),
		 5);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS) >= 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), 64);
	tr_fini(&w);
}

/*
 * The repair of a block with a loss is lost too: the hold ends, the base mode
 * resends. It ends by PSN progress, not at a deadline: PSN0+27
 * (the hole PSN0+3 + 1.5 groups of xor:8,2) was sent after the lost repair
 * (fec_hold_reach), so the hole will not be rebuilt. The packets after it are
 * held as after any release (under gbn the go-back round's ACK skips them).
 */
static void
t_repair_lost(void)
{
	static const uint32_t drop[] = {3}; /* xor:8,2: block 1 of group 0, first member PSN0+1 */
	struct tr_wire w;

	fec_init(&w, "xor:8,2");
	tr_rule(&w, TR_A, TR_FEC, PSN0 + 1, TR_DROP, 1);
	write_with_drops(&w, 32, drop, 1, 7);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_REBUILT), 0);
	CHECK(tr_dev_stat(B(&w), ROCE_STAT_FEC_WITHHELD) >= 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_HOLD_REPAIRED), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_RELEASE_PROGRESS), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_RELEASE_DEADLINE), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_RELEASE_UNREC), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	if (strcmp(mode, "gbn") == 0)
		CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_NAK_SEQ), 1);
	expect_holds_reconcile(&w);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS) >= 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), 32);
	tr_fini(&w);
}

/*
 * The receiver stalls (descheduled, as on the shared 2-vCPU host) with a hole
 * held and the block's repair waiting in its receive ring; it wakes 20 ms
 * later, longer than any time-based deadline, and reads its backlog before
 * its timers run (rnic_poll.c). The hold must survive: the deadline counts
 * silence after the last packet held, and packets, not time, show that a
 * repair is overdue (fec_hold_reach). The first version's deadline (hold
 * start + two block-fill times + margin) expired at this poll: a NAK / RACK /
 * SACK and a go-back or resend for a hole the next frames rebuild.
 */
static void
t_receiver_stall(void)
{
	struct tr_wire w;

	fec_init(&w, "xor:8,2");
	tr_fill(A(&w), 0, 32 * MTU, 14);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 1);
	w.capture_only = true;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 32 * MTU, 0, IBV_SEND_SIGNALED);
	tr_run(&w, 1000);
	/* the COMMIT, PSN0 .. PSN0+2, then PSN0+4, +5 held behind the hole */
	for (int i = 0; i < 6; i++)
		tr_deliver_one(&w, TR_A);
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_WITHHELD), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_HELD), 2);
	w.now += 20000000; /* B stalls for 20 ms */
	tr_deliver_one(&w, TR_A);
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_HELD), 3);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_RELEASE_DEADLINE), 0);
	CHECK_EQ(loss_signals(&w), 0);
	w.capture_only = false;
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 32 * MTU);
	expect_fec_only(&w, 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_HOLD_REPAIRED), 1);
	tr_fini(&w);
}

/*
 * The sender stalls (A's poll loop descheduled 15-34 ms on the loaded 2-core
 * host, docs/reproductions.md lowar-memif) in the middle of a block with a hole
 * open: B sees silence, and the block's repair leaves only when A wakes.
 * xor:8,2: PSN0+3 is lost, block 1 (PSN0+1, +3, .., +15) has its repair after
 * PSN0+15. B holds PSN0+4, +5; A sends nothing for @p stall_ns. Before it,
 * with no hole, B has seen a silence of @p seen_ns between PSN0+1 and PSN0+2
 * (0: none). Returns with the rest delivered, the transfer checked.
 */
static void
sender_stall(struct tr_wire *w, uint64_t seen_ns, uint64_t stall_ns, uint32_t seed)
{
	struct tr_opts o = {0};

	o.recovery = mode;
	o.fec = "xor:8,2";
	o.timeout = 16; /* A's first timeout 268 ms: none within the stalls */
	tr_init(w, &o);
	w->now = 1000000; /* the receive-gap samples take time 0 for "none yet" */
	tr_fill(A(w), 0, 32 * MTU, seed);
	tr_rule(w, TR_A, TR_REQ, PSN0 + 3, TR_DROP, 1);
	w->capture_only = true;
	tr_post_send(A(w), IBV_WR_RDMA_WRITE, 1, 0, 32 * MTU, 0, IBV_SEND_SIGNALED);
	tr_run(w, 1000);
	/* the COMMIT, PSN0, PSN0+1 */
	for (int i = 0; i < 3; i++)
		tr_deliver_one(w, TR_A);
	tr_poll(w);
	w->now += seen_ns; /* an earlier stall, no hole open */
	/* PSN0+2, then PSN0+4, +5 held behind the hole */
	for (int i = 0; i < 3; i++)
		tr_deliver_one(w, TR_A);
	tr_poll(w);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_WITHHELD), 1);
	CHECK_EQ(tr_dev_stat(B(w), ROCE_STAT_FEC_HELD), 2);
	w->now += stall_ns; /* A stalls before the block's repair; B polls */
	tr_poll(w);
	w->capture_only = false;
	RUN(w);
	expect_wc(A(w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(w)->buf, A(w)->buf, 32 * MTU);
	expect_holds_reconcile(w);
}

/*
 * Once B has seen a 12 ms stall, a 25 ms one (longer than the 8.2 ms floor
 * + margin of the first version) does not end the hold: the margin is
 * FEC_STALL_K x the stall seen (24 ms). The repair rebuilds the hole, no loss
 * signal, no resend. Before the fix: the hold was released at 8.2 ms of
 * silence (fec_release_deadline 1), B sent a NAK / RACK / SACK, and the
 * repair then rebuilt the released hole (fec_rebuilt_after_release 1).
 */
static void
t_sender_stall_seen(void)
{
	struct tr_wire w;

	sender_stall(&w, 12000000, 25000000, 16);
	expect_fec_only(&w, 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_HOLD_REPAIRED), 1);
	tr_fini(&w);
}

/*
 * The negative control: with no stall seen before, a silence too short to be
 * one, or one longer than FEC_STALL_MAX_NS (a sender that stopped, which does
 * not count), a stall past 8.2 ms ends the hold at its deadline, and the repair that comes after it
 * rebuilds a hole already given to the base mode.
 */
static void
t_sender_stall_unseen(void)
{
	/* none; 1 ms (below FEC_GAP_MAX_NS, not a stall); 51 ms (a stop) */
	static const uint64_t seen[] = {0, 1000000, 51000000};

	for (size_t i = 0; i < sizeof(seen) / sizeof(seen[0]); i++) {
		struct tr_wire w;

		sender_stall(&w, seen[i], 25000000, 17);
		CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_RELEASE_DEADLINE), 1);
		CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_REBUILT), 1);
		CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_REBUILT_AFTER_RELEASE), 1);
		CHECK(loss_signals(&w) >= 1);
		tr_fini(&w);
	}
}

/*
 * The sender's idle flush after a stall: A, paced (--rate_limit 8 Mb/s, a
 * 1 KiB packet per ~1 ms), is descheduled for 5 ms in the middle of a block;
 * when it wakes it has a packet to send. The flush is checked after the QP's
 * run (roce_fec_idle_flush), so A sends and does not flush at that poll: the
 * block goes on filling. Checked before the run (the first version), every
 * such wake-up closed the open blocks with partial repairs and started a new
 * grid (this test then fails: one flush at the wake-up poll).
 */
static void
t_flush_after_stall(void)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS, .rate_limit = 8000};
	struct tr_wire w;
	uint64_t sent;

	fec_init(&w, "xor:8,2");
	CHECK_EQ(roce_modify_qp(A(&w)->qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT), 0);
	tr_fill(A(&w), 0, 24 * MTU, 15);
	w.capture_only = true;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 24 * MTU, 0, IBV_SEND_SIGNALED);
	tr_run(&w, 1000);
	sent = tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_COVERED);
	CHECK(sent >= 1 && sent < 8); /* paced: the first block is open */
	w.now +=
	    5000000; /* A stalls 5 ms: past its flush deadline, and its pacer allows a packet */
	tr_poll(&w);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_COVERED) > sent);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_FLUSHES), 0);
	w.capture_only = false;
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 24 * MTU);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_COVERED), 24);
	expect_fec_only(&w, 0);
	tr_fini(&w);
}

/*
 * The port refuses frames (ops->tx -ENOBUFS, a full TX ring: at 5-7 Gb/s over
 * memif tens of thousands of times a run). xor:8,2: block 0 holds PSN 0, 2,
 * .., 14, block 1 PSN 1, 3, .., 15.
 *  - The data frame that closes block 0 (PSN 14) is refused once, and PSN 4 of
 *    block 0 is lost: the retry sends the coded frame and then block 0's
 *    repair, which rebuilds PSN 4. Before the fix the repair was dropped with
 *    the refused frame (fec_tx_dropped), and under fec+gbn the retry of PSN 14
 *    also started a new grid (partial repairs of the open blocks): PSN 4 was
 *    unrecoverable and the base mode resent it (a NAK under gbn).
 *  - Block 1's repair itself is refused once, and PSN 5 is lost: the repair
 *    waits in the queue and leaves on the next transmit or poll. Before the fix
 *    it was dropped.
 * No loss signal, no retransmission, nothing dropped at A, data byte-exact.
 */
static void
t_tx_refused(void)
{
	static const uint32_t drop0[] = {4};
	static const uint32_t drop1[] = {5};
	struct tr_wire w;

	fec_init(&w, "xor:8,2");
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 14, TR_REFUSE, 1);
	write_with_drops(&w, 32, drop0, 1, 16);
	CHECK_EQ(w.rules[0].count, 0); /* the refusal happened */
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_TX_ERRORS) >= 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_DROPPED), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_COVERED), 32);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_RECODED), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_FRAMES), 4 + 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), 32);
	expect_fec_only(&w, 1);
	tr_fini(&w);

	fec_init(&w, "xor:8,2");
	tr_rule(&w, TR_A, TR_FEC, PSN0 + 1, TR_REFUSE, 1); /* a repair names block j at base + j */
	write_with_drops(&w, 32, drop1, 1, 17);
	CHECK_EQ(w.rules[0].count, 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_DROPPED), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_FRAMES), 4 + 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_RX_FRAMES), 4 + 1);
	expect_fec_only(&w, 1);
	tr_fini(&w);
}

/*
 * The port refuses a coded data frame for 5 ms (its ring full while the host
 * is busy): past the idle-flush time, yet the sender is not idle. xor:8,2, PSN 5
 * refused at every try until the ring drains. No idle flush may close the open
 * blocks then: its partial repairs would leave before PSN 5 and B would
 * "rebuild" PSN 5 from them, then receive the original as a duplicate (what
 * 225 of the 234 rebuilt frames of a memif run with 9 losses were), and the grid
 * would restart. With the fix: no flush, nothing rebuilt, no duplicate, two
 * full repairs and the COMMIT; without it a flush during the refusal, partial
 * repairs, PSN 5 rebuilt and received twice.
 */
static void
t_no_flush_while_refused(void)
{
	struct tr_wire w;

	fec_init(&w, "xor:8,2");
	tr_fill(A(&w), 0, 16 * MTU, 18);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 5, TR_REFUSE, 1000000);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 16 * MTU, 0, IBV_SEND_SIGNALED);
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_COVERED), 6); /* 0..5 coded, 5 refused */
	for (int ms = 1; ms <= 5; ms++) {
		w.now += 1000000;
		tr_poll(&w);
	}
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_FLUSHES), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_COVERED), 6);
	w.rules[0].count = 0; /* the ring drains */
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 16 * MTU);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_COVERED), 16);
	/* two full repairs and the COMMIT, no partial repair (the end-of-message
	 * flush finds both blocks closed and sends nothing) */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_FRAMES), 2 + 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_DROPPED), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DUP_REQ), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), 16);
	expect_fec_only(&w, 0);
	tr_fini(&w);
}

/* Reed-Solomon: R losses in one block rebuilt; R + 1 fall back. */
static void
t_rs(void)
{
	static const uint32_t r_loss[] = {1, 4, 6};
	static const uint32_t r1_loss[] = {17, 18, 20, 23};
	struct tr_wire w;

	fec_init(&w, "rs:8,3");
	write_with_drops(&w, 32, r_loss, 3, 8);
	expect_fec_only(&w, 3);
	tr_fini(&w);

	fec_init(&w, "rs:8,3");
	write_with_drops(&w, 32, r1_loss, 4, 9);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_REBUILT), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_UNRECOVERABLE), 4);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS) >= 4);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), 32);
	tr_fini(&w);
}

/* A SEND (receive WQE) with a loss: rebuilt, the receive completion carries every byte. */
static void
t_send(void)
{
	struct tr_wire w;
	struct ibv_wc wc;

	fec_init(&w, "xor:4,2");
	tr_fill(A(&w), 0, 16 * MTU, 10);
	tr_post_recv(B(&w), 7, 0, 16 * MTU);
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 6, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 16 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_EQ(tr_poll_cq(B(&w), true, &wc, 1), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, 16 * MTU);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 16 * MTU);
	expect_fec_only(&w, 1);
	tr_fini(&w);
}

/*
 * fec+gbn codes its go-back rounds (fec_enc_set_recode): block 0 loses two
 * members (PSN 2, 6: falls back, one NAK, one go-back from PSN 2), block 1
 * too (PSN 11, 13), and PSN 11 is lost again in the go-back round, where the
 * new grid anchored at PSN 2 rebuilds it: no second NAK. Selective modes resend
 * single PSNs, which stay uncoded.
 */
static void
t_goback_coded(void)
{
	static const uint32_t drop[] = {2, 6, 13};
	struct tr_wire w;

	fec_init(&w, "xor:8,2");
	tr_rule(&w, TR_A, TR_REQ, PSN0 + 11, TR_DROP, 2);
	write_with_drops(&w, 32, drop, 3, 12);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), 32);
	expect_holds_reconcile(&w);
	if (strcmp(mode, "gbn") != 0) {
		CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_RECODED), 0);
		tr_fini(&w);
		return;
	}
	/* one NAK, one go-back round (PSN 2..23 in the harness's window), all of it
	 * coded; without the recode: 2 NAKs, 45 retransmissions, nothing rebuilt */
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_NAK_SEQ), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 22);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_TX_RECODED), 22);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_REBUILT), 1); /* PSN 11, in the go-back round */
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_HOLD_REPAIRED), 1);
	tr_fini(&w);
}

/*
 * --fec-adapt at B: a burst of 5 consecutive losses (more than D = 4 of
 * xor:32,4 repairs) moves B's policy one level up at once; B sends one
 * PROPOSE of xor:16,4, A applies it at its next group boundary and COMMITs
 * it, and B's decoder follows. The data is byte-exact.
 */
static void
t_adapt_burst(void)
{
	static const uint32_t drop[] = {40, 41, 42, 43, 44};
	struct tr_opts o = {0};
	struct roce_fec_info ia, ib;
	struct tr_wire w;

	o.recovery = mode;
	o.fec = "xor:32,4";
	o.fec_adapt = true;
	tr_init(&w, &o);
	write_with_drops(&w, 600, drop, 5, 13);
	/* the harness lets A send the whole first WRITE before B's PROPOSE
	 * arrives: the second one starts a group with the new parameters */
	tr_fill(A(&w), 0, 200 * MTU, 14);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 0, 200 * MTU, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 200 * MTU);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_ADAPT_UP), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_ADAPT_DOWN), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_ADAPT_PROPOSALS), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_ADAPT_FAILED), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_ADAPT_PROPOSALS), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_RX_REFUSED), 0);
	CHECK_EQ(roce_qp_fec_info(A(&w)->qp, &ia), 0);
	CHECK(ia.mode == FEC_MODE_XOR && ia.k == 16 && ia.d == 4);
	CHECK_EQ(ia.adapt_level, -1); /* A's own policy saw no stream */
	CHECK_EQ(roce_qp_fec_info(B(&w)->qp, &ib), 0);
	CHECK_EQ(ib.adapt_level, 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), 800);
	expect_holds_reconcile(&w);
	tr_fini(&w);
}

/* A READ response lost: B codes its READ responses, A rebuilds the missing one. */
static void
t_read_response(void)
{
	struct tr_wire w;

	fec_init(&w, "xor:4,2");
	tr_fill(B(&w), 0x10000, 16 * MTU, 11);
	tr_rule(&w, TR_B, TR_READ_RESP, PSN0 + 5, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_READ, 1, 0x10000, 16 * MTU, 0x10000, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(A(&w)->buf + 0x10000, B(&w)->buf + 0x10000, 16 * MTU);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_TX_COVERED), 16 + 0); /* the responses */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_REBUILT), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_UNRECOVERABLE), 0);
	/* held back at the requester: zero re-requests, no implied NAK; the
	 * responses after the hole (PSN0+6, +7) wait for block 1's repair after PSN0+7 */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_READ_RESP), 16);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_IMPLIED_NAKS), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_WITHHELD), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_HOLD_REPAIRED), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_HELD), 2);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_FEC_RELEASE_DEADLINE), 0);
	tr_fini(&w);
}

/* A FEC frame to a QP without FEC is counted and dropped, never executed. */
static void
t_fec_off_peer(void)
{
	struct tr_wire w;
	struct tr_opts o = {0};
	struct tr_frame *f;
	uint8_t rep[FEC_FRAME_MAX];
	size_t rlen = 0;

	o.recovery = mode;
	o.fec = "xor:4,1";
	tr_init(&w, &o);
	/* capture A's repair without delivering it */
	w.capture_only = true;
	tr_fill(A(&w), 0, 4 * MTU, 12);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 4 * MTU, 0, IBV_SEND_SIGNALED);
	tr_poll(&w);
	for (f = w.q[TR_A].head; f; f = f->next) {
		struct roce_pkt p;

		if (roce_parse(f->data, f->len, &p, 0) == 0 &&
		    p.h.bth.opcode == ROCE_XOP_FEC_REPAIR && f->len <= sizeof(rep)) {
			memcpy(rep, f->data, f->len);
			rlen = f->len;
		}
	}
	CHECK(rlen > 0);
	/* B without FEC */
	CHECK_EQ(roce_qp_set_fec(B(&w)->qp, "off", NULL, 0), -EINVAL); /* B is in RTS */
	tr_fini(&w);

	o.fec = NULL;
	tr_init(&w, &o);
	if (rlen) {
		uint64_t before = tr_dev_stat(B(&w), ROCE_STAT_RX_DROP_FEC_OFF);

		/* the captured frame names the old QP numbers: same numbering in a fresh pair */
		roce_dev_rx(B(&w)->dev, rep, rlen);
		CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DROP_FEC_OFF), before + 1);
		CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), 0);
	}
	tr_fini(&w);
}

/* Hostile repairs (every FRH byte flipped with a valid ICRC, truncations, bad ICRC): refused. */
static void
t_hostile_repairs(void)
{
	struct tr_wire w;
	struct tr_frame *f;
	uint8_t rep[FEC_FRAME_MAX], m[FEC_FRAME_MAX];
	size_t rlen = 0;
	struct roce_pkt p;
	uint64_t refused;

	fec_init(&w, "xor:4,1");
	w.capture_only = true;
	tr_fill(A(&w), 0, 8 * MTU, 13);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 8 * MTU, 0, IBV_SEND_SIGNALED);
	tr_poll(&w);
	for (f = w.q[TR_A].head; f && !rlen; f = f->next)
		if (roce_parse(f->data, f->len, &p, 0) == 0 &&
		    p.h.bth.opcode == ROCE_XOP_FEC_REPAIR && f->len <= sizeof(rep)) {
			memcpy(rep, f->data, f->len);
			rlen = f->len;
		}
	CHECK(rlen > 0);
	if (!rlen) {
		tr_fini(&w);
		return;
	}
	CHECK_EQ(roce_parse(rep, rlen, &p, 0), 0);
	/* every FRH byte, every bit: a valid ICRC, so only the FRH checks stand in the way */
	for (unsigned off = 0; off < ROCE_FRH_LEN; off++)
		for (unsigned bit = 0; bit < 8; bit++) {
			memcpy(m, rep, rlen);
			m[p.bth_off + ROCE_BTH_LEN + off] ^= (uint8_t)(1u << bit);
			roce_icrc_update(m, &p);
			roce_dev_rx(B(&w)->dev, m, rlen);
		}
	/* truncations and a bad ICRC */
	for (size_t cut = 14; cut < rlen; cut += 7)
		roce_dev_rx(B(&w)->dev, rep, cut);
	memcpy(m, rep, rlen);
	m[rlen - 1] ^= 1;
	roce_dev_rx(B(&w)->dev, m, rlen);
	refused = tr_dev_stat(B(&w), ROCE_STAT_FEC_RX_REFUSED);
	CHECK(refused >= 1);
	CHECK(tr_dev_stat(B(&w), ROCE_STAT_RX_DROP_ICRC) >= 1);
	/* nothing was executed on the strength of a hostile repair */
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_REBUILT), 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), 0);
	/* and the real transfer still completes, byte-exact */
	w.capture_only = false;
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 8 * MTU);
	tr_fini(&w);
}

/* Without a registered codec or with bad parameters, FEC cannot be turned on. */
static void
t_set_fec_errors(void)
{
	struct tr_wire w;
	struct tr_opts o = {0};
	char err[128];

	o.recovery = mode;
	tr_init(&w, &o);
	/* RTS: too late */
	CHECK_EQ(roce_qp_set_fec(A(&w)->qp, "xor:32,4", err, sizeof(err)), -EINVAL);
	tr_fini(&w);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
    RW_TEST(t_clean),
    RW_TEST(t_one_loss_per_block),
    RW_TEST(t_tail_loss),
    RW_TEST(t_two_losses_one_block),
    RW_TEST(t_burst_d),
    RW_TEST(t_burst_d_plus_1),
    RW_TEST(t_repair_lost),
    RW_TEST(t_rs),
    RW_TEST(t_send),
    RW_TEST(t_read_response),
    RW_TEST(t_fec_off_peer),
    RW_TEST(t_hostile_repairs),
    RW_TEST(t_set_fec_errors),
    RW_TEST(t_goback_coded),
    RW_TEST(t_adapt_burst),
    RW_TEST(t_receiver_stall),
    RW_TEST(t_sender_stall_seen),
    RW_TEST(t_sender_stall_unseen),
    RW_TEST(t_flush_after_stall),
    RW_TEST(t_trace),
    RW_TEST(t_tx_refused),
    RW_TEST(t_no_flush_while_refused),
};

int
main(void)
{
	static const char *const modes[] = {"gbn", "gbone", "irn"};

	if (roce_fec_register(&fec_roce_codec) != 0)
		return 1;
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		mode = modes[m];
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			unsigned f0 = rw_t_fail;

			rw_t_case = cases[i].name;
			cases[i].fn();
			printf("fec+%-6s %-30s %s\n", mode, cases[i].name,
			       rw_t_fail == f0 ? "ok" : "FAIL");
		}
	}
	printf("%u passed, %u failed\n", rw_t_pass, rw_t_fail);
	return (rw_t_fail || rw_t_pass == 0) ? 1 : 0;
}
