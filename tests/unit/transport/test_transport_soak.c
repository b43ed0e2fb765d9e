/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale and chaos: a window of 10,000 packets in flight, the window limit,
 * and a seeded soak of mixed WRITE / SEND / READ / atomic traffic over a wire
 * that drops, duplicates and reorders a few percent of the frames in both
 * directions. Every WR must complete exactly once, successfully, with the
 * right data; atomics must have been executed exactly once and in order.
 */
#include <stdio.h>
#include <stdlib.h>

#include "roce_pkt.h"
#include "rw_test.h"
#include "tr_harness.h"

#ifdef TR_WITH_FEC
#include "fec_roce.h"

/* the transport_soak_fec build: the soaks with FEC on (TR_FEC="xor:8,2", docs/fec.md) */
__attribute__((constructor)) static void
soak_fec_register(void)
{
	roce_fec_register(&fec_roce_codec);
}
#endif

#define RUN(w) tr_run((w), 10000000)

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

/* 10,000 packets leave before the first ACK comes back (a WAN bandwidth-delay product). */
static void
t_large_window(void)
{
	const uint32_t npkts = 10000, len = npkts * 1024;
	struct tr_opts o = {.buf_size = 11u << 20, .mtu = IBV_MTU_1024};
	struct tr_wire w;
	struct ibv_wc wc;

	tr_init(&w, &o);
	tr_fill(A(&w), 0, len, 1);
	w.capture_only = true;
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, len, 0, IBV_SEND_SIGNALED), 0);
	RUN(&w);
	CHECK_EQ(w.q[TR_A].count, npkts); /* all of them in flight at once */
	/* lose one in the middle: one NAK, go back 5,000 */
	tr_discard_one(&w, TR_A);
	for (uint32_t i = 1; i < 5000; i++)
		tr_deliver_one(&w, TR_A);
	tr_discard_one(&w, TR_A);
	w.capture_only = false;
	RUN(&w);
	CHECK_EQ(tr_poll_cq(A(&w), false, &wc, 1), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, len);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_NAK_SEQ), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), npkts);
	tr_fini(&w);
}

/* A small window caps the packets in flight; the transfer still completes. */
static void
t_window_limit(void)
{
	struct tr_opts o = {.window = 100};
	struct tr_wire w;
	struct ibv_wc wc;

	tr_init(&w, &o);
	tr_fill(A(&w), 0, 500 * 1024, 2);
	w.capture_only = true;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 500 * 1024, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	CHECK_EQ(w.q[TR_A].count, 100);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_WINDOW_FULL) >= 1);
	w.capture_only = false;
	RUN(&w);
	CHECK_EQ(tr_poll_cq(A(&w), false, &wc, 1), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 500 * 1024);
	CHECK(w.max_queued[TR_A] <= 100);
	tr_fini(&w);
}

/* ---- soak ---- */

#define SOAK_SLOTS 96
#define SOAK_SLOT 8192u
#define SOAK_COUNTER_OFF (SOAK_SLOTS * SOAK_SLOT)	 /* B: the shared FAA counter */
#define SOAK_RESULT_OFF (SOAK_COUNTER_OFF + 64)		 /* A: one atomic result per slot */
#define SOAK_RECV_OFF (SOAK_RESULT_OFF + 8 * SOAK_SLOTS) /* B: receive buffers */

struct soak_wr {
	enum ibv_wr_opcode op;
	uint32_t len;
	uint64_t add;	   /* FAA */
	unsigned int done; /* completions seen */
};

/* B's buffer for the n-th SEND of a round */
static uint32_t
recv_off(unsigned int n)
{
	return SOAK_RECV_OFF + n * SOAK_SLOT;
}

static enum ibv_wr_opcode
soak_pick(uint64_t *rng)
{
	static const enum ibv_wr_opcode ops[] = {IBV_WR_RDMA_WRITE, IBV_WR_SEND, IBV_WR_RDMA_READ,
						 IBV_WR_ATOMIC_FETCH_AND_ADD};

	return ops[tr_rand(rng) % 4];
}

/* One round: SOAK_SLOTS WRs, slot i uses bytes [i * SOAK_SLOT, +len) on both sides. */
static void
soak_round(struct tr_wire *w, uint64_t *rng, unsigned int round, uint64_t *counter)
{
	struct soak_wr wr[SOAK_SLOTS];
	struct ibv_wc wc[64];
	const unsigned int sig = IBV_SEND_SIGNALED;
	uint64_t expect_counter = *counter;
	unsigned int recv_seen = 0, nsend = 0;
	int n;

	for (unsigned int i = 0; i < SOAK_SLOTS; i++) {
		uint32_t off = i * SOAK_SLOT;

		wr[i] = (struct soak_wr){.op = soak_pick(rng),
					 .len = 1 + (uint32_t)(tr_rand(rng) % SOAK_SLOT)};
		tr_fill(A(w), off, wr[i].len, round * 1000 + i);
		tr_fill(B(w), off, wr[i].len, round * 1000 + i + 500);
		switch (wr[i].op) {
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_READ:
			CHECK_EQ(tr_post_send(A(w), wr[i].op, i, off, wr[i].len, off, sig), 0);
			break;
		case IBV_WR_SEND:
			CHECK_EQ(tr_post_recv(B(w), i, recv_off(nsend++), SOAK_SLOT), 0);
			CHECK_EQ(tr_post_send(A(w), wr[i].op, i, off, wr[i].len, 0, sig), 0);
			break;
		default:
			wr[i].add = 1 + tr_rand(rng) % 1000;
			expect_counter += wr[i].add;
			CHECK_EQ(tr_post_atomic(A(w), wr[i].op, i, SOAK_RESULT_OFF + 8 * i,
						SOAK_COUNTER_OFF, wr[i].add, 0),
				 0);
			break;
		}
	}
	RUN(w);
	while ((n = tr_poll_cq(A(w), false, wc, 64)) > 0) {
		for (int k = 0; k < n; k++) {
			CHECK_EQ(wc[k].status, IBV_WC_SUCCESS);
			CHECK(wc[k].wr_id < SOAK_SLOTS);
			if (wc[k].wr_id < SOAK_SLOTS)
				wr[wc[k].wr_id].done++;
		}
	}
	while ((n = tr_poll_cq(B(w), true, wc, 64)) > 0) {
		for (int k = 0; k < n; k++) {
			uint64_t i = wc[k].wr_id;

			CHECK_EQ(wc[k].status, IBV_WC_SUCCESS);
			CHECK(i < SOAK_SLOTS && wr[i].op == IBV_WR_SEND);
			if (i >= SOAK_SLOTS)
				continue;
			CHECK_EQ(wc[k].byte_len, wr[i].len);
			CHECK_MEM(B(w)->buf + recv_off(recv_seen), A(w)->buf + i * SOAK_SLOT,
				  wr[i].len);
			recv_seen++;
		}
	}
	CHECK_EQ(recv_seen, nsend); /* every SEND received once, in order */
	for (unsigned int i = 0; i < SOAK_SLOTS; i++) {
		uint32_t off = i * SOAK_SLOT;

		CHECK_EQ(wr[i].done, 1); /* exactly once */
		if (wr[i].op == IBV_WR_RDMA_WRITE || wr[i].op == IBV_WR_RDMA_READ)
			CHECK_MEM(A(w)->buf + off, B(w)->buf + off, wr[i].len);
		if (wr[i].op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			uint64_t orig;

			/* executed in order and once: each saw the sum of the ones before */
			memcpy(&orig, A(w)->buf + SOAK_RESULT_OFF + 8 * i, 8);
			CHECK_EQ(orig, *counter);
			*counter += wr[i].add;
		}
	}
	memcpy(counter, B(w)->buf + SOAK_COUNTER_OFF, 8);
	CHECK_EQ(*counter, expect_counter);
}

static void
t_soak(void)
{
	struct tr_opts o = {.timeout = 8, .max_send_wr = 256, .max_recv_wr = 256};
	const char *env_seed = getenv("TR_SOAK_SEED"); /* for longer hunts; the test uses 42 */
	struct tr_wire w;
	uint64_t rng = 0x5eed, counter = 0;
	struct roce_stats a, b;

	o.fec = getenv("TR_FEC");
	tr_init(&w, &o);
	/* 3 % loss, 1 % duplication, 2 % reordering, both directions */
	tr_random_faults(&w, env_seed ? strtoull(env_seed, NULL, 0) : 42, 30, 10, 20);
	if (getenv("TR_SOAK_FAULTS")) /* "drop,dup,reorder" per mille */
		sscanf(getenv("TR_SOAK_FAULTS"), "%u,%u,%u", &w.p_drop, &w.p_dup, &w.p_reorder);
	for (unsigned int r = 0; r < 20; r++)
		soak_round(&w, &rng, r, &counter);
	CHECK_EQ(roce_qp_state(A(&w)->qp), IBV_QPS_RTS);
	CHECK_EQ(roce_qp_state(B(&w)->qp), IBV_QPS_RTS);
	roce_dev_stats(A(&w)->dev, &a);
	roce_dev_stats(B(&w)->dev, &b);
	/* with the fixed seed: the faults happened and every repair mechanism fired */
	if (!env_seed) {
		CHECK(w.dropped > 50 && w.duplicated > 10 && w.delayed > 20);
		CHECK(a.v[ROCE_STAT_TX_RETX_PKTS] > 0);
		CHECK(b.v[ROCE_STAT_TX_NAK_SEQ] > 0);
		CHECK(b.v[ROCE_STAT_RX_DUP_REQ] > 0);
		CHECK(a.v[ROCE_STAT_TIMEOUTS] > 0);
		CHECK(a.v[ROCE_STAT_IMPLIED_NAKS] > 0);
		CHECK(b.v[ROCE_STAT_RX_ATOMIC_REPLAYS] > 0);
		CHECK(b.v[ROCE_STAT_RX_READ_REPLAYS] > 0);
	}
	if (o.fec) /* FEC rebuilt some of the losses, and the rest still completed byte-exact */
		CHECK(b.v[ROCE_STAT_FEC_REBUILT] > 0 && a.v[ROCE_STAT_FEC_REBUILT] > 0);
	if (getenv("TR_STATS")) {
		for (int i = 0; i < ROCE_STAT__COUNT; i++)
			if (a.v[i] || b.v[i])
				printf("%-24s A %10llu  B %10llu\n",
				       roce_stat_name((enum roce_stat)i),
				       (unsigned long long)a.v[i], (unsigned long long)b.v[i]);
	}
	tr_fini(&w);
}

/* The same soak with a heavier 5 % loss and UC-like small MTU. */
static void
t_soak_mtu256(void)
{
	struct tr_opts o = {.timeout = 8, .mtu = IBV_MTU_256, .max_send_wr = 256};
	struct tr_wire w;
	uint64_t rng = 0xfeed, counter = 0;

	o.fec = getenv("TR_FEC");
	tr_init(&w, &o);
	tr_random_faults(&w, 7, 50, 10, 10);
	for (unsigned int r = 0; r < 2; r++)
		soak_round(&w, &rng, r, &counter);
	tr_fini(&w);
}

RW_TEST_MAIN(RW_TEST(t_large_window), RW_TEST(t_window_limit), RW_TEST(t_soak),
	     RW_TEST(t_soak_mtu256))
