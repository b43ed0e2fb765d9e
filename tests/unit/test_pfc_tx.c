/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: the transmit gate and overshoot meter of a software PFC port (pfc_tx). */
#include "pfc.h"
#include "pfc_tx.h"
#include "rw_test.h"

#define GBPS 1000000000ull
#define MS 1000000ull

static struct pfc_frame
pfc(unsigned prio, uint16_t quanta)
{
	struct pfc_frame f;

	memset(&f, 0, sizeof(f));
	f.opcode = PFC_OPCODE;
	f.enable = (uint8_t)(1u << prio);
	f.quanta[prio] = quanta;
	return f;
}

static void
test_gate_and_overshoot(void)
{
	struct pfc_tx t;
	struct pfc_frame x3 = pfc(3, 0xffff), on3 = pfc(3, 0);

	/* 1 Gb/s: 0xffff quanta = 65535 * 512 ns = 33.55392 ms */
	pfc_tx_init(&t, GBPS, 1 << 3, true);
	CHECK(!pfc_tx_hold(&t, 3, 0));
	/* two frames before an RX check that finds nothing: not charged to anything */
	pfc_tx_sent(&t, 3, 1000, 10);
	pfc_tx_sent(&t, 3, 1000, 11);
	pfc_tx_rx_done(&t);
	/* three frames, then the check that finds the XOFF: its window (they may have left after
	 * it) */
	pfc_tx_sent(&t, 3, 1100, 20);
	pfc_tx_sent(&t, 3, 1100, 21);
	pfc_tx_sent(&t, 0, 500, 22); /* another priority: never charged */
	pfc_tx_sent(&t, 3, 1100, 23);
	CHECK_EQ(pfc_tx_rx(&t, &x3, 30), 1 << 3);
	pfc_tx_rx_done(&t);
	CHECK_EQ(t.pauses, 1);
	CHECK_EQ(t.rx_xoff, 1);
	CHECK_EQ(t.xoff_window_bytes, 3300);
	CHECK_EQ(t.xoff_window_max_bytes, 3300);
	CHECK_EQ(t.xoff_window_max_frames, 3);
	CHECK_EQ(t.overshoot_bytes, 0);
	CHECK(pfc_tx_hold(&t, 3, 31));
	CHECK(!pfc_tx_hold(&t, 0, 31));
	CHECK(!pfc_tx_hold(&t, 4, 31));
	/* a frame committed before the pause was known and handed over now: overshoot too */
	pfc_tx_sent(&t, 3, 1000, 32);
	pfc_tx_sent(&t, 3, 1000, 33);
	CHECK_EQ(t.overshoot_bytes, 2000);
	CHECK_EQ(t.overshoot_max_bytes, 2000);
	CHECK_EQ(t.overshoot_max_frames, 2);
	/* a refresh charges nothing and is not a new pause */
	CHECK_EQ(pfc_tx_rx(&t, &x3, 10 * MS), 0);
	pfc_tx_rx_done(&t);
	CHECK_EQ(t.pauses, 1);
	CHECK_EQ(t.rx_xoff, 2);
	CHECK_EQ(t.overshoot_bytes, 2000);
	CHECK_EQ(t.xoff_window_bytes, 3300);
	/* the refresh reloaded the timer from its arrival: 10 ms + 33.55392 ms */
	CHECK(pfc_tx_hold(&t, 3, 10 * MS + 33553919));
	CHECK(!pfc_tx_hold(&t, 3, 10 * MS + 33553920));
	CHECK_EQ(pfc_tx_next_expiry(&t), UINT64_MAX); /* expired by the look above */
	/* XON resumes at once */
	CHECK_EQ(pfc_tx_rx(&t, &x3, 50 * MS), 1 << 3);
	pfc_tx_rx_done(&t);
	CHECK_EQ(pfc_tx_next_expiry(&t), 50 * MS + 33553920);
	CHECK_EQ(pfc_tx_rx(&t, &on3, 51 * MS), 0);
	CHECK_EQ(t.rx_xon, 1);
	CHECK(!pfc_tx_hold(&t, 3, 51 * MS));
	CHECK_EQ(pfc_tx_next_expiry(&t), UINT64_MAX);
	/* the second pause had no overshoot: the max stays the first pause's */
	CHECK_EQ(t.pauses, 2);
	CHECK_EQ(t.cur_bytes[3], 0);
	CHECK_EQ(t.overshoot_max_bytes, 2000);
	CHECK_EQ(t.xoff_window_bytes, 3300); /* nothing was sent between the checks */
	/* paused time: 30 ns .. 10 ms + 33.55392 ms, then 50 ms .. 51 ms */
	CHECK_EQ(pfc_pause_total_ns(&t.pause, 3, 60 * MS), 10 * MS + 33553920 - 30 + 1 * MS);
}

static void
test_lossy_and_off(void)
{
	struct pfc_tx t;
	struct pfc_frame x5 = pfc(5, 0xffff), x3 = pfc(3, 0xffff);

	pfc_tx_init(&t, GBPS, 1 << 3, true);
	pfc_tx_sent(&t, 5, 1000, 1);
	CHECK_EQ(pfc_tx_rx(&t, &x5, 2), 0); /* priority 5 is lossy: no effect */
	CHECK_EQ(t.rx_ignored, 1);
	CHECK(!pfc_tx_hold(&t, 5, 3));
	CHECK(!pfc_tx_hold(&t, 3, 3));
	CHECK_EQ(t.overshoot_bytes, 0);
	/* 3,5 lossless: both pause, each charged its own priority's window */
	pfc_tx_init(&t, GBPS, (1 << 3) | (1 << 5), true);
	pfc_tx_sent(&t, 5, 700, 1);
	pfc_tx_sent(&t, 3, 900, 1);
	CHECK_EQ(pfc_tx_rx(&t, &x5, 2), 1 << 5);
	CHECK_EQ(t.xoff_window_bytes, 700);
	CHECK(pfc_tx_hold(&t, 5, 3));
	CHECK(!pfc_tx_hold(&t, 3, 3));
	/* obey off: PFC is counted and ignored */
	pfc_tx_init(&t, GBPS, 1 << 3, false);
	CHECK_EQ(pfc_tx_rx(&t, &x3, 1), 0);
	CHECK(!pfc_tx_hold(&t, 3, 2));
	CHECK_EQ(t.rx_ignored, 1);
	CHECK_EQ(t.rx_xoff, 0);
	/* 802.3x PAUSE is not obeyed by a PFC port (802.3 Annex 31D) */
	struct pfc_frame pz;
	memset(&pz, 0, sizeof(pz));
	pz.opcode = PAUSE_OPCODE;
	pz.enable = 0xff;
	for (int i = 0; i < 8; i++)
		pz.quanta[i] = 100;
	pfc_tx_init(&t, GBPS, 0xff, true);
	CHECK_EQ(pfc_tx_rx(&t, &pz, 1), 0);
	CHECK(!pfc_tx_hold(&t, 3, 2));
}

static void
test_prio_list(void)
{
	uint8_t m = 0;
	char why[128];

	CHECK_EQ(pfc_prio_list_parse("3", &m, why, sizeof(why)), 0);
	CHECK_EQ(m, 1 << 3);
	CHECK_EQ(pfc_prio_list_parse("3,4", &m, why, sizeof(why)), 0);
	CHECK_EQ(m, (1 << 3) | (1 << 4));
	CHECK_EQ(pfc_prio_list_parse("0,7", &m, why, sizeof(why)), 0);
	CHECK_EQ(m, 0x81);
	CHECK_EQ(pfc_prio_list_parse("8", &m, why, sizeof(why)), -1);
	CHECK(strstr(why, "0..7") != NULL);
	CHECK_EQ(pfc_prio_list_parse("3,", &m, why, sizeof(why)), -1);
	CHECK_EQ(pfc_prio_list_parse("", &m, why, sizeof(why)), -1);
	CHECK_EQ(pfc_prio_list_parse("34", &m, why, sizeof(why)), -1);
	CHECK_EQ(pfc_prio_list_parse("3,3", &m, why, sizeof(why)), -1);
	CHECK(strstr(why, "twice") != NULL);
}

RW_TEST_MAIN(RW_TEST(test_gate_and_overshoot), RW_TEST(test_lossy_and_off), RW_TEST(test_prio_list))
