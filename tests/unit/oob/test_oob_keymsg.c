/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file test_oob_keymsg.c
 * perftest -R's 56-byte binary key message: the formatter gives the bytes an rxe <-> rxe
 * `ib_write_bw -R` capture carries (the client's test-QP message), the parser gives its
 * fields back and ignores the uninitialised padding (a later message of the same run),
 * the all-zero messages before the test QP exists parse as zeros, and a wrong length or
 * a field out of range is refused with a message naming it.
 */
#include <string.h>

#include "perftest_xchg.h"
#include "rw_test.h"

/* the client's (10.9.1.3) key message of its test QP, from the capture */
static const char client_hex[] = "0000000000000001000000120086176800000305000000000000557a50a1a000"
				 "00000000000000000000ffff0a0901030000000000000001";
/* the same QP in the closing sync: the padding holds stack bytes */
static const char client_late_hex[] =
    "00000000000000010000001200861768000003057a5500000000557a50a1a000"
    "00000000000000000000ffff0a0901030000000000000001";

static void
unhex(const char *h, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		sscanf(h + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
}

static struct perftest_dest
client_dest(void)
{
	struct perftest_dest d = {.lid = 0,
				  .out_reads = 1,
				  .qpn = 0x12,
				  .psn = 0x861768,
				  .rkey = 0x305,
				  .vaddr = 0x0000557a50a1a000ull,
				  .srqn = 0};
	const uint8_t gid[16] = {[10] = 0xff, [11] = 0xff, [12] = 10, [13] = 9, [14] = 1, [15] = 3};

	memcpy(d.gid, gid, 16);
	return d;
}

static void
test_format_is_the_capture(void)
{
	uint8_t want[PERFTEST_KEY_MSG_BIN_LEN], got[PERFTEST_KEY_MSG_BIN_LEN];
	struct perftest_dest d = client_dest();
	char err[160];

	unhex(client_hex, want, sizeof(want));
	CHECK_EQ(perftest_format_dest_bin(&d, 1, got, err, sizeof(err)), 56);
	CHECK(memcmp(got, want, sizeof(want)) == 0);
}

static void
test_parse_the_capture(void)
{
	uint8_t m[PERFTEST_KEY_MSG_BIN_LEN];
	struct perftest_dest d, want = client_dest();
	uint32_t gi = 99;
	char err[160];

	unhex(client_late_hex, m, sizeof(m));
	CHECK_EQ(perftest_parse_dest_bin(m, sizeof(m), &d, &gi, err, sizeof(err)), OOB_OK);
	CHECK_EQ(d.qpn, want.qpn);
	CHECK_EQ(d.psn, want.psn);
	CHECK_EQ(d.rkey, want.rkey);
	CHECK_EQ(d.vaddr, want.vaddr);
	CHECK_EQ(d.out_reads, 1);
	CHECK(memcmp(d.gid, want.gid, 16) == 0);
	CHECK_EQ(gi, 1);
	/* all zero: the exchanges before the test QP exists */
	memset(m, 0, sizeof(m));
	CHECK_EQ(perftest_parse_dest_bin(m, sizeof(m), &d, NULL, err, sizeof(err)), OOB_OK);
	CHECK_EQ(d.qpn, 0);
	CHECK_EQ(d.vaddr, 0);
}

static void
test_refused(void)
{
	uint8_t m[PERFTEST_KEY_MSG_BIN_LEN + 1];
	struct perftest_dest d = client_dest();
	char err[160];

	unhex(client_hex, m, PERFTEST_KEY_MSG_BIN_LEN);
	CHECK_EQ(perftest_parse_dest_bin(m, 55, &d, NULL, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "55 bytes, expected 56") != NULL);
	CHECK_EQ(perftest_parse_dest_bin(m, 57, &d, NULL, err, sizeof(err)), OOB_ERR_PROTO);
	m[8] = 0x01; /* QPN 0x01000012: over 24 bits */
	CHECK_EQ(perftest_parse_dest_bin(m, 56, &d, NULL, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "QPN 0x1000012") != NULL);
	d = client_dest();
	d.psn = 0x1000000;
	CHECK_EQ(perftest_format_dest_bin(&d, 1, m, err, sizeof(err)), OOB_ERR_ARG);
	CHECK(strstr(err, "PSN 0x1000000") != NULL);
}

RW_TEST_MAIN(RW_TEST(test_format_is_the_capture), RW_TEST(test_parse_the_capture),
	     RW_TEST(test_refused))
