/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: the PFC generator (pfc_gen): hysteresis, refresh timing, XON, parameters. */
#include "pfc.h"
#include "pfc_gen.h"
#include "rw_test.h"

#define GBPS 1000000000ull

static void
test_frames_level(void)
{
	struct pfc_gen g;
	/* 1 Gb/s, 0xffff quanta: 33.55392 ms of pause, refreshed every 16.77696 ms */
	const uint64_t refresh = 16776960;

	CHECK_EQ(pfc_gen_init(&g, 128, 16, 0, GBPS), 0);
	CHECK_EQ(g.quanta, PFC_GEN_MAX_QUANTA);
	CHECK_EQ(g.pause_ns, 2 * refresh);
	CHECK_EQ(g.refresh_ns, refresh);
	CHECK_EQ(pfc_gen_poll(&g, 0, 127), PFC_GEN_NONE);
	CHECK_EQ(pfc_gen_deadline(&g), UINT64_MAX);
	CHECK_EQ(pfc_gen_poll(&g, 10, 128), PFC_GEN_XOFF);
	CHECK_EQ(pfc_gen_quanta(&g, PFC_GEN_XOFF), 0xffff);
	CHECK_EQ(pfc_gen_deadline(&g), 10 + refresh);
	CHECK_EQ(pfc_gen_poll(&g, 20, 1000), PFC_GEN_NONE);	   /* paused already */
	CHECK_EQ(pfc_gen_poll(&g, 9 + refresh, 17), PFC_GEN_NONE); /* above xon, before refresh */
	CHECK_EQ(pfc_gen_poll(&g, 10 + refresh, 17), PFC_GEN_REFRESH);
	CHECK_EQ(pfc_gen_poll(&g, 11 + refresh, 16), PFC_GEN_XON);
	CHECK_EQ(pfc_gen_quanta(&g, PFC_GEN_XON), 0);
	CHECK(!g.pausing);
	CHECK_EQ(pfc_gen_poll(&g, 12 + refresh, 16), PFC_GEN_NONE);  /* one XON only */
	CHECK_EQ(pfc_gen_poll(&g, 13 + refresh, 127), PFC_GEN_NONE); /* hysteresis */
	CHECK_EQ(pfc_gen_poll(&g, 14 + refresh, 500), PFC_GEN_XOFF);
	CHECK_EQ(g.n_xoff, 2);
	CHECK_EQ(g.n_refresh, 1);
	CHECK_EQ(g.n_xon, 1);
	/* a clock that steps back (another lcore's TSC, a caller bug) never refreshes early */
	CHECK_EQ(pfc_gen_poll(&g, 1, 500), PFC_GEN_NONE);
}

static void
test_params(void)
{
	struct pfc_gen g;

	CHECK_EQ(pfc_gen_init(&g, 16, 16, 0, GBPS), -1); /* xon must be below xoff */
	CHECK_EQ(pfc_gen_init(&g, 16, 0, 0, 0), -1);
	CHECK_EQ(pfc_gen_init(&g, 16, 0, 1000, 10 * GBPS), 0);
	CHECK_EQ(g.pause_ns, 51200); /* 1000 * 512 bit / 10 Gbit/s */
	CHECK_EQ(pfc_gen_poll(&g, 0, 16), PFC_GEN_XOFF);
	CHECK_EQ(pfc_gen_quanta(&g, PFC_GEN_REFRESH), 1000);
	CHECK_EQ(pfc_gen_poll(&g, 1, 0), PFC_GEN_XON); /* xon 0: only an empty level resumes */
}

RW_TEST_MAIN(RW_TEST(test_frames_level), RW_TEST(test_params))
