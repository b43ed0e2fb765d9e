/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: rate shaper departure times (exact) and queue limits. */
#include <math.h>

#include "emu_shaper.h"
#include "rw_test.h"

static struct emu_counters cnt;

static void
test_exact_integer_rate(void)
{
	/* 1 Gbit/s, 1000 B + 24 B overhead = 8192 bit = 8192 ns per packet */
	struct emu_shaper_params p = {.rate_bps = 1000000000, .overhead = 24};
	struct emu_shaper s;
	uint64_t dep = 0;

	emu_counters_reset(&cnt);
	CHECK_EQ(emu_shaper_init(&s, &p, &cnt), 0);
	CHECK_EQ(emu_shaper_tx_ns(&p, 1000), 8192);
	for (int k = 1; k <= 5; k++) {
		CHECK_EQ(emu_shaper_enqueue(&s, 0, 1000, &dep), EMU_SHAPER_ACCEPT);
		CHECK_EQ(dep, 8192 * k);
	}
	CHECK_EQ(emu_shaper_backlog_pkts(&s), 5);
	CHECK_EQ(emu_shaper_backlog_bytes(&s), 5000);
	/* arrival while busy: queued behind the last one */
	CHECK_EQ(emu_shaper_enqueue(&s, 30000, 1000, &dep), EMU_SHAPER_ACCEPT);
	CHECK_EQ(dep, 8192 * 6);
	/* arrival after the link went idle: starts at its arrival */
	CHECK_EQ(emu_shaper_enqueue(&s, 1000000, 1000, &dep), EMU_SHAPER_ACCEPT);
	CHECK_EQ(dep, 1000000 + 8192);
	/* arrival exactly at the last departure: back to back, no gap */
	CHECK_EQ(emu_shaper_enqueue(&s, 1008192, 1000, &dep), EMU_SHAPER_ACCEPT);
	CHECK_EQ(dep, 1008192 + 8192);
	CHECK_EQ(cnt.v[EMU_CNT_ENQUEUED], 8);
}

/* 3 Gbit/s, 1000 B: 8000/3 ns each; dep_k = floor(8000 k / 3) exactly, no drift. */
static void
test_exact_fractional_rate(void)
{
	struct emu_shaper_params p = {.rate_bps = 3000000000};
	struct emu_shaper s;
	uint64_t dep = 0, bad = 0;
	const uint64_t n = 1000000;

	emu_counters_reset(&cnt);
	CHECK_EQ(emu_shaper_init(&s, &p, &cnt), 0);
	CHECK_EQ(emu_shaper_tx_ns(&p, 1000), 2666);
	for (uint64_t k = 1; k <= n; k++) {
		/* arrivals every 1000 ns, faster than service */
		emu_shaper_enqueue(&s, (k - 1) * 1000, 1000, &dep);
		bad += dep != k * 8000 / 3;
		emu_shaper_dequeue(&s, 1000);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(dep, 2666666666);
	/* realised rate: n * 8000 bit / dep ns */
	CHECK(fabs((double)n * 8000. / ((double)dep * 1e-9) / 3e9 - 1.) < 1e-9);
	CHECK_EQ(emu_shaper_backlog_pkts(&s), 0);
	CHECK_EQ(cnt.v[EMU_CNT_DEQUEUED], n);
	/* netem truncates each packet to 2666 ns: 1e6 packets would end 666,666 ns early */
}

static void
test_overheads_and_cells(void)
{
	struct emu_shaper_params p = {
	    .rate_bps = 8000000, .overhead = 0, .cell_size = 48, .cell_overhead = 5};

	/* tc-netem(8) ATM example: 50 B -> 2 cells of 48 + 5 = 106 B */
	CHECK_EQ(emu_shaper_wire_len(&p, 50), 106);
	CHECK_EQ(emu_shaper_wire_len(&p, 48), 53);
	CHECK_EQ(emu_shaper_wire_len(&p, 49), 106);
	CHECK_EQ(emu_shaper_tx_ns(&p, 50), 106000); /* 1 B = 1 us at 8 Mbit/s */
	p.cell_size = 0;
	p.overhead = -14; /* strip the Ethernet header */
	CHECK_EQ(emu_shaper_wire_len(&p, 64), 50);
	CHECK_EQ(emu_shaper_wire_len(&p, 10), 0);
	CHECK_EQ(emu_shaper_tx_ns(&p, 10), 0);
	p.overhead = 24; /* preamble + SFD + IFG + FCS */
	CHECK_EQ(emu_shaper_wire_len(&p, 1500), 1524);
	p.rate_bps = 0;
	CHECK_EQ(emu_shaper_tx_ns(&p, 1500), 0);
}

static void
test_no_rate(void)
{
	struct emu_shaper_params p = {.limit_pkts = 1000};
	struct emu_shaper s;
	uint64_t dep = 0;

	emu_counters_reset(&cnt);
	CHECK_EQ(emu_shaper_init(&s, &p, &cnt), 0);
	CHECK_EQ(emu_shaper_enqueue(&s, 12345, 1500, &dep), EMU_SHAPER_ACCEPT);
	CHECK_EQ(dep, 12345);
}

static void
test_limits(void)
{
	struct emu_shaper_params p = {.rate_bps = 1000000000, .limit_pkts = 3};
	struct emu_shaper s;
	uint64_t dep = 0;

	emu_counters_reset(&cnt);
	CHECK_EQ(emu_shaper_init(&s, &p, &cnt), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(emu_shaper_enqueue(&s, 0, 100, &dep), EMU_SHAPER_ACCEPT);
	CHECK_EQ(emu_shaper_enqueue(&s, 0, 100, &dep), EMU_SHAPER_DROP); /* qlen >= limit */
	CHECK_EQ(cnt.v[EMU_CNT_DROP_QUEUE], 1);
	CHECK_EQ(emu_shaper_backlog_pkts(&s), 3);
	emu_shaper_dequeue(&s, 100);
	CHECK_EQ(emu_shaper_enqueue(&s, 0, 100, &dep), EMU_SHAPER_ACCEPT);
	/* a dropped packet does not consume link time: 4 accepted -> 4 * 800 ns */
	CHECK_EQ(dep, 3200);

	/* bfifo rule: admit iff backlog + len <= limit-bytes */
	p.limit_pkts = 0;
	p.limit_bytes = 3000;
	emu_counters_reset(&cnt);
	CHECK_EQ(emu_shaper_init(&s, &p, &cnt), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(emu_shaper_enqueue(&s, 0, 1000, &dep), EMU_SHAPER_ACCEPT);
	CHECK_EQ(emu_shaper_enqueue(&s, 0, 1, &dep), EMU_SHAPER_DROP);
	emu_shaper_dequeue(&s, 1000);
	CHECK_EQ(emu_shaper_enqueue(&s, 0, 1001, &dep), EMU_SHAPER_DROP);
	CHECK_EQ(emu_shaper_enqueue(&s, 0, 1000, &dep), EMU_SHAPER_ACCEPT);
	CHECK_EQ(emu_shaper_backlog_bytes(&s), 3000);
	CHECK_EQ(cnt.v[EMU_CNT_DROP_QUEUE], 2);
	emu_shaper_dequeue(&s, 1000);
	emu_shaper_dequeue(&s, 1000);
	emu_shaper_dequeue(&s, 1000);
	emu_shaper_dequeue(&s, 1000); /* extra dequeue is ignored */
	CHECK_EQ(emu_shaper_backlog_bytes(&s), 0);
	CHECK_EQ(emu_shaper_backlog_pkts(&s), 0);
	CHECK_EQ(emu_shaper_init(&s, &p, NULL), -EMU_E_INVAL);
	p.cell_size = 10;
	p.cell_overhead = -10;
	CHECK_EQ(emu_shaper_init(&s, &p, &cnt), -EMU_E_RANGE);
}

RW_TEST_MAIN(RW_TEST(test_exact_integer_rate), RW_TEST(test_exact_fractional_rate),
	     RW_TEST(test_overheads_and_cells), RW_TEST(test_no_rate), RW_TEST(test_limits))
