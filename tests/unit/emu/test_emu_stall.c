/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: the host-stall detector and the own-share exclusion (emu_stall.h), on
 * made-up clock readings: exact counts, no timing. */
#include "emu_stall.h"
#include "rw_test.h"

/* off-CPU time = wall - CPU - asked sleep; a stall only above the threshold */
static void
test_detector(void)
{
	struct emu_stall s;

	emu_stall_init(&s, 5000);
	CHECK(!emu_stall_check(&s, 1000000, 500)); /* the first check has nothing to compare */
	CHECK_EQ(s.checks, 1);
	/* 10 us of wall, 10 us of CPU: on the CPU throughout */
	CHECK(!emu_stall_check(&s, 1010000, 10500));
	/* 10 us of wall, 5 us of CPU: 5 us off, not above the threshold */
	CHECK(!emu_stall_check(&s, 1020000, 15500));
	/* 10 us of wall, 4.999 us of CPU: 5.001 us off, a stall ending at this check */
	CHECK(emu_stall_check(&s, 1030000, 20499));
	CHECK_EQ(s.stalls, 1);
	CHECK_EQ(s.off_ns, 5001);
	CHECK_EQ(s.max_off_ns, 5001);
	CHECK_EQ(s.end_ns, 1030000);
	/* 1 ms off the CPU of which the loop asked to sleep 995 us: 5 us involuntary, no stall */
	emu_stall_asked(&s, 900000);
	emu_stall_asked(&s, 95000);
	CHECK(!emu_stall_check(&s, 2030000, 20499));
	CHECK_EQ(s.asked_ns, 0); /* a check consumes the sleep asked before it */
	/* the same without the sleep asked: a 1 ms stall */
	CHECK(emu_stall_check(&s, 3030000, 20499));
	CHECK_EQ(s.stalls, 2);
	CHECK_EQ(s.off_ns, 5001 + 1000000);
	CHECK_EQ(s.max_off_ns, 1000000);
	CHECK_EQ(s.end_ns, 3030000);
	/* the thread's CPU time ran faster than the wall (clock granularity): no stall */
	CHECK(!emu_stall_check(&s, 3031000, 30499));
	/* a wall clock that did not move: nothing judged, the readings still advance */
	CHECK(!emu_stall_check(&s, 3031000, 40499));
	CHECK_EQ(s.cpu0, 40499);
	CHECK_EQ(s.checks, 8);
	CHECK_EQ(s.stalls, 2);
}

/*
 * The exclusion, as the loop drives it: frames due every 10 us, released by a check
 * at each release; a 100 us stall before the release at t=200 us. Every release is
 * either in the own share or excluded, exactly once.
 */
static void
test_exclusion(void)
{
	struct emu_stall s;
	struct emu_stall_own o = {0};
	uint64_t own = 0, samples = 0, cpu = 0, due = 0;

	emu_stall_init(&s, EMU_STALL_NS);
	for (uint64_t now = 10000; now <= 100000; now += 10000) { /* on time: all count */
		cpu += 10000;
		emu_stall_check(&s, now, cpu);
		emu_stall_own_sync(&o, &s);
		due += 10000;
		own += emu_stall_own_counts(&o, due);
		samples++;
		emu_stall_own_after(&o, now, due + 10000);
	}
	CHECK_EQ(own, 10);
	CHECK_EQ(o.excluded, 0);
	/* the thread is off the CPU from 100 to 200 us: the release at 200 us finds the ten
	 * frames due at 110..200 us; the nine due before the check's time waited through
	 * the stall, the one due at 200 us did not (release error 0) */
	CHECK(emu_stall_check(&s, 200000, cpu));
	emu_stall_own_sync(&o, &s);
	CHECK(o.catching_up);
	for (due = 110000; due <= 200000; due += 10000) {
		own += emu_stall_own_counts(&o, due);
		samples++;
	}
	emu_stall_own_after(&o, 200000, 210000); /* nothing overdue left: catch-up ends */
	CHECK(!o.catching_up);
	CHECK_EQ(o.excluded, 9);
	CHECK_EQ(own, 11);
	/* a frame due after the stall's end counts again */
	cpu += 10000;
	CHECK(!emu_stall_check(&s, 210000, cpu));
	emu_stall_own_sync(&o, &s);
	own += emu_stall_own_counts(&o, 210000);
	samples++;
	CHECK_EQ(own, 12);
	/* a second stall whose backlog the line cannot clear at once (a full TX buffer):
	 * the release at 400 us leaves frames still overdue, so the next release's frames,
	 * due before it, are excluded too, until a release finds nothing overdue */
	CHECK(emu_stall_check(&s, 400000, cpu));
	emu_stall_own_sync(&o, &s);
	own += emu_stall_own_counts(&o, 300000);
	samples++;
	emu_stall_own_after(&o, 400000, 310000); /* 310 us still in the line */
	CHECK(o.catching_up);
	cpu += 2000;
	CHECK(!emu_stall_check(&s, 402000, cpu));
	emu_stall_own_sync(&o, &s); /* no new stall: the end found by catch-up stays */
	CHECK_EQ(o.end_ns, 400000);
	own += emu_stall_own_counts(&o, 310000); /* excluded: due before 400 us */
	own += emu_stall_own_counts(&o, 401000); /* fell due after 400 us: counts */
	samples += 2;
	emu_stall_own_after(&o, 402000, 410000);
	CHECK(!o.catching_up);
	CHECK_EQ(own, 13);
	CHECK_EQ(o.excluded, 11);
	CHECK_EQ(own + o.excluded, samples);
	CHECK_EQ(s.stalls, 2);
	CHECK_EQ(s.off_ns, 100000 + 190000); /* wall minus CPU time of the two stalls */
	CHECK_EQ(s.max_off_ns, 190000);
}

RW_TEST_MAIN(RW_TEST(test_detector), RW_TEST(test_exclusion))
