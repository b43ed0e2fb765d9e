/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: PFC generation hysteresis, refresh timing and XON. */
#include "emu_pfcgen.h"
#include "pfc.h"
#include "rw_test.h"

#define XOFF 102400u	     /* 100kb */
#define XON 51200u	     /* 50kb */
#define LINK 100000000000ull /* 100 Gbit/s */

static struct emu_counters cnt;

static struct emu_pfcgen
make(void)
{
	struct emu_pfcgen_params p = {
	    .enabled = true, .xoff_bytes = XOFF, .xon_bytes = XON, .prio = 3, .link_bps = LINK};
	struct emu_pfcgen g;

	emu_counters_reset(&cnt);
	CHECK_EQ(emu_pfcgen_init(&g, &p, &cnt), 0);
	return g;
}

static void
test_sequence(void)
{
	struct emu_pfcgen g = make();
	struct emu_pfc_action a;
	/* 0xffff quanta * 512 bit / 100 Gbit/s = 335,539.2 ns; refresh at half */
	const uint64_t pause = 335539, refresh = pause / 2, t0 = 2000;

	CHECK_EQ(g.gen.pause_ns, pause);
	CHECK_EQ(g.gen.refresh_ns, refresh);
	CHECK_EQ(g.gen.pause_ns, pfc_quanta_to_ns(0xffff, LINK));
	CHECK(!emu_pfcgen_poll(&g, 0, 0, &a));
	CHECK(!emu_pfcgen_poll(&g, 1000, XOFF - 1, &a)); /* below xoff: nothing */
	CHECK_EQ(emu_pfcgen_deadline(&g), UINT64_MAX);
	CHECK(emu_pfcgen_poll(&g, t0, XOFF, &a)); /* reaches xoff: XOFF */
	CHECK(a.send && a.prio == 3 && a.quanta == 0xffff);
	CHECK_EQ(emu_pfcgen_state(&g), EMU_PFC_PAUSING);
	CHECK_EQ(emu_pfcgen_deadline(&g), t0 + refresh);
	CHECK(!emu_pfcgen_poll(&g, t0 + 1000, XOFF + 5000, &a)); /* already paused */
	CHECK(!emu_pfcgen_poll(&g, t0 + refresh - 1, XOFF, &a));
	CHECK(emu_pfcgen_poll(&g, t0 + refresh, XOFF, &a)); /* refresh at pause / 2 */
	CHECK(a.quanta == 0xffff);
	CHECK_EQ(emu_pfcgen_deadline(&g), t0 + 2 * refresh);
	/* between xon and xoff: still paused (hysteresis), refresh continues */
	CHECK(!emu_pfcgen_poll(&g, t0 + refresh + 10, XON + 1, &a));
	CHECK(emu_pfcgen_poll(&g, t0 + 2 * refresh + 5, XON + 1, &a));
	CHECK(a.quanta == 0xffff);
	/* down to xon: XON (quanta 0) once */
	CHECK(emu_pfcgen_poll(&g, t0 + 2 * refresh + 100, XON, &a));
	CHECK(a.send && a.quanta == 0 && a.prio == 3);
	CHECK_EQ(emu_pfcgen_state(&g), EMU_PFC_RUNNING);
	CHECK(!emu_pfcgen_poll(&g, t0 + 2 * refresh + 200, XON, &a));
	CHECK(!emu_pfcgen_poll(&g, t0 + 2 * refresh + 300, XOFF - 1, &a)); /* running: below xoff */
	CHECK(emu_pfcgen_poll(&g, t0 + 2 * refresh + 400, XOFF + 1, &a));  /* pause again */
	CHECK(a.quanta == 0xffff);
	CHECK_EQ(cnt.v[EMU_CNT_PFC_XOFF], 2);
	CHECK_EQ(cnt.v[EMU_CNT_PFC_REFRESH], 2);
	CHECK_EQ(cnt.v[EMU_CNT_PFC_XON], 1);
	CHECK_EQ(strcmp(emu_pfc_state_name(EMU_PFC_PAUSING), "pausing"), 0);
}

/* A 10 ms congestion episode polled every 1 us: the pause never lapses. */
static void
test_never_lapses(void)
{
	struct emu_pfcgen g = make();
	struct emu_pfc_action a;
	uint64_t last = 0, max_gap = 0, frames = 0;

	for (uint64_t t = 0; t <= 10000000; t += 1000) {
		if (emu_pfcgen_poll(&g, t, XOFF * 2, &a)) {
			if (frames++)
				max_gap = t - last > max_gap ? t - last : max_gap;
			last = t;
		}
	}
	CHECK(max_gap < g.gen.pause_ns);
	CHECK(max_gap >= g.gen.refresh_ns);
	/* first XOFF at 0, then one every ceil(refresh / 1 us) us */
	CHECK_EQ(frames, 1 + 10000000 / 168000);
	CHECK_EQ(cnt.v[EMU_CNT_PFC_XON], 0);
}

static void
test_params(void)
{
	struct emu_pfcgen_params p = {
	    .enabled = true, .xoff_bytes = 100, .xon_bytes = 100, .prio = 3, .link_bps = LINK};
	struct emu_pfcgen g;
	struct emu_pfc_action a;

	CHECK_EQ(emu_pfcgen_init(&g, &p, &cnt), -EMU_E_RANGE); /* xon must be < xoff */
	p.xon_bytes = 0;
	p.prio = 8;
	CHECK_EQ(emu_pfcgen_init(&g, &p, &cnt), -EMU_E_RANGE);
	p.prio = 7;
	p.link_bps = 0;
	CHECK_EQ(emu_pfcgen_init(&g, &p, &cnt), -EMU_E_RANGE);
	p.link_bps = 10000000000ull; /* 10G: 0xffff quanta = 3.355 ms */
	p.quanta = 1000;
	CHECK_EQ(emu_pfcgen_init(&g, &p, &cnt), 0);
	CHECK_EQ(g.gen.pause_ns, 51200); /* 1000 * 512 bit / 10 Gbit/s */
	CHECK(emu_pfcgen_poll(&g, 0, 100, &a) && a.quanta == 1000 && a.prio == 7);
	p.enabled = false;
	CHECK_EQ(emu_pfcgen_init(&g, &p, &cnt), 0);
	CHECK(!emu_pfcgen_poll(&g, 0, 1 << 30, &a));
	CHECK_EQ(emu_pfcgen_init(&g, &p, NULL), -EMU_E_INVAL);
}

RW_TEST_MAIN(RW_TEST(test_sequence), RW_TEST(test_never_lapses), RW_TEST(test_params))
