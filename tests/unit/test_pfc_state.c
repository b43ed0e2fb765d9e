/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: per-priority pause timers (reload, XON, expiry, lossless set, PAUSE) and the
 * watchdog. */
#include "pfc.h"
#include "pfc_state.h"
#include "rw_test.h"

#define GBPS 1000000000ull
#define MS 1000000ull

static struct pfc_frame
frame(uint16_t op, uint8_t en, unsigned prio, uint16_t quanta)
{
	struct pfc_frame f;

	memset(&f, 0, sizeof(f));
	f.opcode = op;
	f.enable = en;
	for (unsigned n = 0; n < PFC_NUM_PRIO; n++)
		f.quanta[n] = (op == PAUSE_OPCODE || n == prio) ? quanta : 0;
	return f;
}

static void
test_xoff_expiry_and_reload(void)
{
	struct pfc_pause p;
	/* 0xffff quanta at 10 Gb/s = 65535 * 512 / 1e10 s = 3355.392 us */
	struct pfc_frame x = frame(PFC_OPCODE, 1 << 3, 3, 0xffff);

	pfc_pause_init(&p, 10 * GBPS, 1 << 3, false);
	CHECK(!pfc_pause_blocked(&p, 3, 0));
	CHECK_EQ(pfc_pause_rx(&p, &x, 1000), 1 << 3);
	CHECK(pfc_pause_blocked(&p, 3, 1000));
	CHECK(!pfc_pause_blocked(&p, 4, 1000)); /* only priority 3 */
	CHECK_EQ(pfc_pause_next_expiry(&p), 1000 + 3355392);
	CHECK(pfc_pause_blocked(&p, 3, 1000 + 3355391));
	CHECK(!pfc_pause_blocked(&p, 3, 1000 + 3355392)); /* resumes at the deadline */
	CHECK_EQ(pfc_pause_total_ns(&p, 3, 9 * MS), 3355392);
	CHECK_EQ(p.pauses[3], 1);
	/* a refresh reloads from its arrival; it does not add */
	pfc_pause_rx(&p, &x, 10 * MS);
	pfc_pause_rx(&p, &x, 11 * MS);
	CHECK_EQ(pfc_pause_next_expiry(&p), 11 * MS + 3355392);
	CHECK_EQ(p.pauses[3], 2); /* one continuous pause */
	CHECK_EQ(p.rx_xoff[3], 3);
}

static void
test_xon_lossy_and_pause(void)
{
	struct pfc_pause p;
	struct pfc_frame x = frame(PFC_OPCODE, 1 << 3, 3, 100),
			 on = frame(PFC_OPCODE, 1 << 3, 3, 0);
	struct pfc_frame lossy = frame(PFC_OPCODE, 1 << 1, 1, 0xffff);
	struct pfc_frame pause = frame(PAUSE_OPCODE, 0xff, 0, 0xffff);

	pfc_pause_init(&p, 1 * GBPS, (1 << 3) | (1 << 4), false);
	pfc_pause_rx(&p, &x, 0);
	CHECK(pfc_pause_blocked(&p, 3, 10));
	CHECK_EQ(pfc_pause_rx(&p, &on, 20), 1 << 3); /* XON: at once */
	CHECK(!pfc_pause_blocked(&p, 3, 20));
	CHECK_EQ(pfc_pause_total_ns(&p, 3, 1000), 20);
	CHECK_EQ(p.rx_xon[3], 1);
	/* lossy priority 1: never paused, counted as ignored */
	CHECK_EQ(pfc_pause_rx(&p, &lossy, 30), 0);
	CHECK(!pfc_pause_blocked(&p, 1, 31));
	CHECK_EQ(p.rx_ignored, 1);
	/* 802.3x PAUSE: ignored unless accepted; then it pauses every lossless priority */
	CHECK_EQ(pfc_pause_rx(&p, &pause, 40), 0);
	p.pause_ok = true;
	CHECK_EQ(pfc_pause_rx(&p, &pause, 50), (1 << 3) | (1 << 4));
	CHECK_EQ(pfc_pause_mask(&p, 51), (1 << 3) | (1 << 4));
	/* e[4] = 1 with time 0 resumes 4; 3's enable bit is clear, so 3 stays paused */
	struct pfc_frame other = frame(PFC_OPCODE, 1 << 4, 3, 0xffff);
	CHECK_EQ(pfc_pause_rx(&p, &other, 60), 1 << 4);
	CHECK(!pfc_pause_blocked(&p, 4, 61));
	CHECK(pfc_pause_blocked(&p, 3, 61));
}

static void
test_watchdog(void)
{
	struct pfc_wd w;

	pfc_wd_init(&w, 200 * MS, 200 * MS, PFC_WD_DROP);
	/* short pauses never trip it */
	CHECK_EQ(pfc_wd_step(&w, true, 1 * MS), PFC_WD_OK);
	CHECK_EQ(pfc_wd_step(&w, false, 150 * MS), PFC_WD_OK);
	CHECK_EQ(pfc_wd_step(&w, true, 160 * MS), PFC_WD_OK);
	CHECK_EQ(pfc_wd_step(&w, true, 359 * MS), PFC_WD_OK);
	/* a storm: paused continuously for 200 ms (refreshed by PFC) */
	pfc_wd_on_pfc(&w, 350 * MS);
	CHECK_EQ(pfc_wd_step(&w, true, 360 * MS), PFC_WD_STORM);
	CHECK(pfc_wd_ignores_pfc(&w));
	CHECK_EQ(w.storms, 1);
	/* PFC keeps coming: stays in storm */
	pfc_wd_on_pfc(&w, 500 * MS);
	CHECK_EQ(pfc_wd_step(&w, true, 650 * MS), PFC_WD_STORM);
	/* no PFC for 200 ms: restored */
	CHECK_EQ(pfc_wd_step(&w, false, 700 * MS), PFC_WD_OK);
	CHECK_EQ(w.restores, 1);
	CHECK_EQ(pfc_wd_action_parse("forward"), PFC_WD_FORWARD);
	CHECK_EQ(pfc_wd_action_parse("nuke"), -1);
	/* a clock at 0 or running backwards never declares a storm by wrapping around */
	pfc_wd_init(&w, 200 * MS, 200 * MS, PFC_WD_DROP);
	CHECK_EQ(pfc_wd_step(&w, true, 0), PFC_WD_OK);
	CHECK_EQ(pfc_wd_step(&w, true, 0), PFC_WD_OK);
	pfc_wd_init(&w, 200 * MS, 200 * MS, PFC_WD_DROP);
	CHECK_EQ(pfc_wd_step(&w, true, 500 * MS), PFC_WD_OK); /* pause starts at 500 ms */
	CHECK_EQ(pfc_wd_step(&w, true, 400 * MS), PFC_WD_OK); /* went backwards: no wrap */
	CHECK_EQ(w.storms, 0);
	pfc_wd_init(&w, MS, MS, PFC_WD_ALERT);
	pfc_wd_step(&w, true, 1);
	CHECK_EQ(pfc_wd_step(&w, true, 2 * MS), PFC_WD_STORM);
	CHECK(!pfc_wd_ignores_pfc(&w)); /* alert only counts */
}

RW_TEST_MAIN(RW_TEST(test_xoff_expiry_and_reload), RW_TEST(test_xon_lossy_and_pause),
	     RW_TEST(test_watchdog))
