/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: tc(8) value syntax (emu_units). */
#include <math.h>

#include "emu_units.h"
#include "rw_test.h"

static uint64_t
t_ns(const char *s)
{
	uint64_t v = 12345;

	CHECK_EQ(emu_parse_time(s, &v), 0);
	return v;
}

static void
test_time(void)
{
	uint64_t v;

	CHECK_EQ(t_ns("10ms"), 10000000);
	CHECK_EQ(t_ns("500us"), 500000);
	CHECK_EQ(t_ns("1.5s"), 1500000000);
	CHECK_EQ(t_ns("2sec"), 2000000000);
	CHECK_EQ(t_ns("3secs"), 3000000000);
	CHECK_EQ(t_ns("7msec"), 7000000);
	CHECK_EQ(t_ns("7msecs"), 7000000);
	CHECK_EQ(t_ns("250usec"), 250000);
	CHECK_EQ(t_ns("100ns"), 100);
	CHECK_EQ(t_ns("100nsec"), 100);
	CHECK_EQ(t_ns("10MS"), 10000000); /* units are case-insensitive, as in tc */
	CHECK_EQ(t_ns("0.5us"), 500);
	CHECK_EQ(t_ns("1e3us"), 1000000);
	CHECK_EQ(t_ns(".25ms"), 250000);
	CHECK_EQ(t_ns("0"), 0);	    /* bare zero is unambiguous */
	CHECK_EQ(t_ns("0.4ns"), 0); /* rounded to the nearest ns */
	CHECK_EQ(t_ns("0.6ns"), 1);
	CHECK_EQ(emu_parse_time("10", &v), -EMU_E_NEED_UNIT);
	CHECK_EQ(emu_parse_time("10xs", &v), -EMU_E_BAD_UNIT);
	CHECK_EQ(emu_parse_time("10 ms", &v), -EMU_E_BAD_UNIT);
	CHECK_EQ(emu_parse_time("-1ms", &v), -EMU_E_NEGATIVE);
	CHECK_EQ(emu_parse_time("ms", &v), -EMU_E_BAD_NUMBER);
	CHECK_EQ(emu_parse_time("abc", &v), -EMU_E_BAD_NUMBER);
	CHECK_EQ(emu_parse_time("0x10ms", &v), -EMU_E_BAD_UNIT); /* no hex */
	CHECK_EQ(emu_parse_time("inf", &v), -EMU_E_BAD_NUMBER);
	CHECK_EQ(emu_parse_time("nan", &v), -EMU_E_BAD_NUMBER);
	CHECK_EQ(emu_parse_time("", &v), -EMU_E_EMPTY);
	CHECK_EQ(emu_parse_time(NULL, &v), -EMU_E_EMPTY);
	CHECK_EQ(emu_parse_time("1e300s", &v), -EMU_E_RANGE);
}

static uint64_t
sz(const char *s)
{
	uint64_t v = 12345;

	CHECK_EQ(emu_parse_size(s, &v), 0);
	return v;
}

static void
test_size(void)
{
	uint64_t v;

	/* tc_util.c get_size(): k/kb = 1024, m/mb = 1024^2, g/gb = 1024^3, kbit = 128 B */
	CHECK_EQ(sz("64kb"), 65536);
	CHECK_EQ(sz("64k"), 65536);
	CHECK_EQ(sz("2mb"), 2097152);
	CHECK_EQ(sz("2m"), 2097152);
	CHECK_EQ(sz("400KB"), 409600);
	CHECK_EQ(sz("1g"), 1073741824);
	CHECK_EQ(sz("1gb"), 1073741824);
	CHECK_EQ(sz("1kbit"), 128);
	CHECK_EQ(sz("1mbit"), 131072);
	CHECK_EQ(sz("1gbit"), 134217728);
	CHECK_EQ(sz("1500"), 1500);
	CHECK_EQ(sz("1500b"), 1500);
	CHECK_EQ(sz("1.5kb"), 1536);
	CHECK_EQ(emu_parse_size("10xb", &v), -EMU_E_BAD_UNIT);
	CHECK_EQ(emu_parse_size("10kib", &v), -EMU_E_BAD_UNIT); /* tc has no IEC sizes */
	CHECK_EQ(emu_parse_size("-10kb", &v), -EMU_E_NEGATIVE);
	CHECK_EQ(emu_parse_size("kb", &v), -EMU_E_BAD_NUMBER);
	CHECK_EQ(emu_parse_size("1e20gb", &v), -EMU_E_RANGE);
}

static uint64_t
rt(const char *s)
{
	uint64_t v = 12345;

	CHECK_EQ(emu_parse_rate(s, &v), 0);
	return v;
}

static void
test_rate(void)
{
	uint64_t v;

	/* tc_util.c suffixes[]: SI for *bit, IEC for *ibit, bytes for *bps */
	CHECK_EQ(rt("100mbit"), 100000000);
	CHECK_EQ(rt("1gbit"), 1000000000);
	CHECK_EQ(rt("10Gbit"), 10000000000);
	CHECK_EQ(rt("1tbit"), 1000000000000);
	CHECK_EQ(rt("64kbit"), 64000);
	CHECK_EQ(rt("1kibit"), 1024);
	CHECK_EQ(rt("1mibit"), 1048576);
	CHECK_EQ(rt("1gibit"), 1073741824);
	CHECK_EQ(rt("1000"), 1000);
	CHECK_EQ(rt("1000bit"), 1000);
	CHECK_EQ(rt("1bps"), 8);
	CHECK_EQ(rt("1kbps"), 8000);
	CHECK_EQ(rt("1mbps"), 8000000); /* megaBYTES per second, as tc */
	CHECK_EQ(rt("1MBps"), 8000000);
	CHECK_EQ(rt("1gbps"), 8000000000);
	CHECK_EQ(rt("1kibps"), 8192);
	CHECK_EQ(rt("2.5gbit"), 2500000000);
	CHECK_EQ(emu_parse_rate("100mbits", &v), -EMU_E_BAD_UNIT);
	CHECK_EQ(emu_parse_rate("10%", &v), -EMU_E_UNSUPPORTED);
	CHECK_EQ(emu_parse_rate("fast", &v), -EMU_E_BAD_NUMBER);
	CHECK_EQ(emu_parse_rate("-1gbit", &v), -EMU_E_NEGATIVE);
	CHECK_EQ(emu_parse_rate("2pbit", &v), -EMU_E_BAD_UNIT);
	CHECK_EQ(emu_parse_rate("2000tbit", &v), -EMU_E_RANGE);
}

static void
test_prob(void)
{
	double p = -1.;

	CHECK_EQ(emu_parse_prob("50%", &p), 0);
	CHECK(p == 0.5);
	CHECK_EQ(emu_parse_prob("50", &p), 0); /* iproute2 parse_percent(): % optional */
	CHECK(p == 0.5);
	CHECK_EQ(emu_parse_prob("0.001%", &p), 0);
	CHECK(fabs(p - 1e-5) < 1e-18);
	CHECK_EQ(emu_parse_prob("100%", &p), 0);
	CHECK(p == 1.);
	CHECK_EQ(emu_parse_prob("0%", &p), 0);
	CHECK(p == 0.);
	CHECK_EQ(emu_parse_prob("120%", &p), -EMU_E_RANGE);
	CHECK_EQ(emu_parse_prob("100.0001", &p), -EMU_E_RANGE);
	CHECK_EQ(emu_parse_prob("-1%", &p), -EMU_E_NEGATIVE);
	CHECK_EQ(emu_parse_prob("5%%", &p), -EMU_E_BAD_UNIT);
	CHECK_EQ(emu_parse_prob("5x", &p), -EMU_E_BAD_UNIT);
	CHECK_EQ(emu_parse_prob("%", &p), -EMU_E_BAD_NUMBER);
}

static void
test_integers(void)
{
	uint64_t u = 0;
	int64_t s = 0;

	CHECK_EQ(emu_parse_uint("1000", 5000, &u), 0);
	CHECK_EQ(u, 1000);
	CHECK_EQ(emu_parse_uint("5001", 5000, &u), -EMU_E_RANGE);
	CHECK_EQ(emu_parse_uint("18446744073709551615", UINT64_MAX, &u), 0);
	CHECK(u == UINT64_MAX);
	CHECK_EQ(emu_parse_uint("18446744073709551616", UINT64_MAX, &u), -EMU_E_RANGE);
	CHECK_EQ(emu_parse_uint("10.5", 100, &u), -EMU_E_BAD_UNIT);
	CHECK_EQ(emu_parse_uint("x", 100, &u), -EMU_E_BAD_NUMBER);
	CHECK_EQ(emu_parse_uint("-1", 100, &u), -EMU_E_NEGATIVE);
	CHECK_EQ(emu_parse_int("-14", -100, 100, &s), 0);
	CHECK_EQ(s, -14);
	CHECK_EQ(emu_parse_int("+24", -100, 100, &s), 0);
	CHECK_EQ(s, 24);
	CHECK_EQ(emu_parse_int("-101", -100, 100, &s), -EMU_E_RANGE);
	CHECK_EQ(emu_parse_int("--1", -100, 100, &s), -EMU_E_BAD_NUMBER);
	CHECK(emu_looks_numeric("25%", false));
	CHECK(emu_looks_numeric(".5", false));
	CHECK(!emu_looks_numeric("-14", false));
	CHECK(emu_looks_numeric("-14", true));
	CHECK(!emu_looks_numeric("gap", true));
	CHECK(!emu_looks_numeric(NULL, true));
}

static void
test_format(void)
{
	char b[64];

	emu_format_time(b, sizeof(b), 10000000);
	CHECK(strcmp(b, "10ms") == 0);
	emu_format_time(b, sizeof(b), 1500);
	CHECK(strcmp(b, "1500ns") == 0);
	emu_format_time(b, sizeof(b), 2000000000);
	CHECK(strcmp(b, "2s") == 0);
	emu_format_time(b, sizeof(b), 0);
	CHECK(strcmp(b, "0") == 0);
	emu_format_size(b, sizeof(b), 409600);
	CHECK(strcmp(b, "400kb") == 0);
	emu_format_size(b, sizeof(b), 1500);
	CHECK(strcmp(b, "1500b") == 0);
	emu_format_size(b, sizeof(b), 2097152);
	CHECK(strcmp(b, "2mb") == 0);
	emu_format_rate(b, sizeof(b), 100000000);
	CHECK(strcmp(b, "100mbit") == 0);
	emu_format_rate(b, sizeof(b), 2500000000);
	CHECK(strcmp(b, "2500mbit") == 0);
	emu_format_rate(b, sizeof(b), 1024);
	CHECK(strcmp(b, "1024bit") == 0);
	emu_format_prob(b, sizeof(b), 0.25);
	CHECK(strcmp(b, "25%") == 0);
	CHECK_EQ(strcmp(emu_err_name(-EMU_E_BAD_UNIT), "BAD_UNIT"), 0);
	CHECK_EQ(strcmp(emu_err_str(EMU_E_NEED_UNIT), "needs a unit"), 0);
	CHECK_EQ(strcmp(emu_err_name(999), "UNKNOWN"), 0);
}

RW_TEST_MAIN(RW_TEST(test_time), RW_TEST(test_size), RW_TEST(test_rate), RW_TEST(test_prob),
	     RW_TEST(test_integers), RW_TEST(test_format))
