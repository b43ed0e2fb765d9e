/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file test_oob_keyline.c
 * perftest's key line and ibv_rc_pingpong's message: the formatter gives the
 * captured bytes exactly, the parser gives the captured fields back, and
 * every kind of malformed line is refused with a message naming the field.
 */
#include <string.h>

#include "oob_test_util.h"
#include "perftest_xchg.h"
#include "pingpong_xchg.h"
#include "rw_test.h"

#ifndef OOB_VEC_DIR
#define OOB_VEC_DIR "."
#endif

static struct vec_msg vec[64];
static int nvec;

static const struct vec_msg *
frame(int f)
{
	for (int i = 0; i < nvec; i++)
		if (vec[i].frame == f)
			return &vec[i];
	return NULL;
}

/* The capture's client (10.9.0.3) and server (10.9.0.2) QP details. */
static struct perftest_dest
cap_client(void)
{
	struct perftest_dest d = {.lid = 0,
				  .out_reads = 1,
				  .qpn = 0x11,
				  .psn = 0x52e51e,
				  .rkey = 0x203,
				  .vaddr = 0x556fa0ce7000ull,
				  .srqn = 0};
	d.gid[10] = 0xff;
	d.gid[11] = 0xff;
	d.gid[12] = 10;
	d.gid[13] = 9;
	d.gid[14] = 0;
	d.gid[15] = 3;
	return d;
}

static struct perftest_dest
cap_server(void)
{
	struct perftest_dest d = cap_client();
	d.psn = 0x65b02a;
	d.rkey = 0x273;
	d.vaddr = 0x564fd4bb9000ull;
	d.gid[15] = 2;
	return d;
}

static void
t_load_vectors(void)
{
	nvec = vec_load(OOB_VEC_DIR "/rxe_write_bw_4096.vec", vec, 64);
	CHECK_EQ(nvec, 30);
	CHECK(frame(14) && frame(14)->len == 108 && frame(14)->side == 'C');
	CHECK(frame(15) && frame(15)->len == 108 && frame(15)->side == 'S');
}

static void
t_format_equals_capture(void)
{
	uint8_t buf[PERFTEST_KEY_LEN_GID + 8];
	char err[200];
	struct perftest_dest c = cap_client(), s = cap_server();
	if (!frame(14) || !frame(15))
		return;
	memset(buf, 0xaa, sizeof(buf));
	CHECK_EQ(perftest_format_dest(&c, 0, buf, sizeof(buf), err, sizeof(err)), 108);
	CHECK_MEM(buf, frame(14)->data, 108);
	CHECK_EQ(buf[108], 0xaa); /* nothing past the line */
	CHECK_EQ(perftest_format_dest(&s, 0, buf, sizeof(buf), err, sizeof(err)), 108);
	CHECK_MEM(buf, frame(15)->data, 108);
	/* every later key line of each side repeats the first */
	for (int i = 0; i < nvec; i++)
		if (vec[i].len == 108)
			CHECK_MEM(vec[i].data,
				  vec[i].side == 'C' ? frame(14)->data : frame(15)->data, 108);
	/* exact text */
	CHECK(memcmp(frame(14)->data,
		     "0000:0001:000011:52e51e:00000203:0000556fa0ce7000:00:00:00:00:00:00:00:00:"
		     "00:00:ff:ff:0a:09:00:03:00000000:",
		     108) == 0);
	/* buffer too small */
	CHECK_EQ(perftest_format_dest(&c, 0, buf, 107, err, sizeof(err)), OOB_ERR_ARG);
}

static void
t_parse_capture(void)
{
	struct perftest_dest d, want;
	char err[200];
	if (!frame(14) || !frame(15))
		return;
	CHECK_EQ(perftest_parse_dest(frame(14)->data, 108, 0, &d, err, sizeof(err)), OOB_OK);
	want = cap_client();
	CHECK(memcmp(&d, &want, sizeof(d)) == 0);
	CHECK_EQ(d.qpn, 0x11);
	CHECK_EQ(d.psn, 0x52e51e);
	CHECK_EQ(d.rkey, 0x203);
	CHECK_EQ(d.vaddr, 0x556fa0ce7000ll);
	CHECK_EQ(d.out_reads, 1);
	CHECK_EQ(d.gid[10], 0xff);
	CHECK_EQ(d.gid[12], 10);
	CHECK_EQ(d.gid[15], 3);
	CHECK_EQ(perftest_parse_dest(frame(15)->data, 108, 0, &d, err, sizeof(err)), OOB_OK);
	want = cap_server();
	CHECK(memcmp(&d, &want, sizeof(d)) == 0);
	CHECK_EQ(d.psn, 0x65b02a);
	CHECK_EQ(d.vaddr, 0x564fd4bb9000ll);
}

static void
t_no_gid_form(void)
{
	uint8_t buf[PERFTEST_KEY_LEN];
	char err[200];
	struct perftest_dest d = {.lid = 0x1a,
				  .out_reads = 0x10,
				  .qpn = 0xabcdef,
				  .psn = 1,
				  .rkey = 0xdeadbeef,
				  .vaddr = 0x7f0012345678ull,
				  .srqn = 7},
			     got;
	CHECK_EQ(perftest_format_dest(&d, 1, buf, sizeof(buf), err, sizeof(err)), 59);
	CHECK(memcmp(buf, "001a:0010:abcdef:000001:deadbeef:00007f0012345678:00000007", 59) == 0);
	CHECK_EQ(perftest_parse_dest(buf, 59, 1, &got, err, sizeof(err)), OOB_OK);
	CHECK(memcmp(&got, &d, sizeof(d)) == 0);
	/* a GID line is not a no-GID line and vice versa */
	CHECK_EQ(perftest_parse_dest(buf, 59, 0, &got, err, sizeof(err)), OOB_ERR_PROTO);
}

static void
t_format_range(void)
{
	uint8_t buf[PERFTEST_KEY_LEN_GID];
	char err[200];
	struct perftest_dest d = cap_client();
	d.qpn = 0x1000000;
	CHECK_EQ(perftest_format_dest(&d, 0, buf, sizeof(buf), err, sizeof(err)), OOB_ERR_ARG);
	CHECK(strstr(err, "24 bits") != NULL);
	d = cap_client();
	d.lid = 0x10000;
	CHECK_EQ(perftest_format_dest(&d, 0, buf, sizeof(buf), err, sizeof(err)), OOB_ERR_ARG);
	d = cap_client();
	d.psn = 0xffffff;
	d.rkey = 0xffffffff;
	d.vaddr = ~0ull;
	CHECK_EQ(perftest_format_dest(&d, 0, buf, sizeof(buf), err, sizeof(err)), 108);
}

/* A copy of the captured line with one byte changed must be refused. */
static int
parse_mut(size_t at, uint8_t v, char *err, size_t errlen)
{
	uint8_t m[108];
	struct perftest_dest d;
	memcpy(m, frame(14)->data, 108);
	m[at] = v;
	return perftest_parse_dest(m, 108, 0, &d, err, errlen);
}

static void
t_parse_malformed(void)
{
	char err[200];
	struct perftest_dest d;
	memset(&d, 0x5a, sizeof(d));
	struct perftest_dest before = d;
	if (!frame(14))
		return;
	/* wrong sizes */
	CHECK_EQ(perftest_parse_dest(frame(14)->data, 107, 0, &d, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "107 bytes, expected 108") != NULL);
	CHECK_EQ(perftest_parse_dest(frame(14)->data, 0, 0, &d, err, sizeof(err)), OOB_ERR_PROTO);
	/* non-hex digit in the QPN */
	CHECK_EQ(parse_mut(12, 'g', err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "QPN") && strstr(err, "'g'") && strstr(err, "hex"));
	/* upper-case hex is not what perftest prints */
	CHECK_EQ(parse_mut(21, 'E', err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "PSN") != NULL);
	/* a missing separator */
	CHECK_EQ(parse_mut(4, '-', err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "':'") && strstr(err, "LID"));
	/* unterminated (no NUL at the end) */
	CHECK_EQ(parse_mut(107, 'x', err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "NUL") != NULL);
	/* NUL in the middle */
	CHECK_EQ(parse_mut(60, 0, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "GID byte") != NULL);
	/* a space instead of a digit, binary junk */
	CHECK_EQ(parse_mut(0, ' ', err, sizeof(err)), OOB_ERR_PROTO);
	CHECK_EQ(parse_mut(40, 0xff, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "VADDR") && strstr(err, "0xff"));
	/* the SRQN field */
	CHECK_EQ(parse_mut(100, 'z', err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "SRQN") != NULL);
	/* nothing was written to d on failure */
	CHECK(memcmp(&d, &before, sizeof(d)) == 0);
	/* every single-byte change is either refused or parses to different values */
	unsigned refused = 0;
	for (size_t at = 0; at < 108; at++) {
		if (parse_mut(at, 'G', err, sizeof(err)) == OOB_ERR_PROTO)
			refused++;
	}
	CHECK_EQ(refused, 108);
}

static void
t_pingpong_msg(void)
{
	uint8_t buf[PINGPONG_MSG_LEN + 4];
	char err[200];
	struct pingpong_dest d = {.lid = 0, .qpn = 0x11, .psn = 0x8d6f45}, got;
	d.gid[10] = 0xff;
	d.gid[11] = 0xff;
	d.gid[12] = 0x7f;
	d.gid[15] = 1;
	memset(buf, 0xaa, sizeof(buf));
	CHECK_EQ(pingpong_format_dest(&d, buf, sizeof(buf), err, sizeof(err)), 52);
	/* what rdma-core 44's ibv_rc_pingpong -g 1 sent for these values */
	CHECK(memcmp(buf, "0000:000011:8d6f45:00000000000000000000ffff7f000001", 52) == 0);
	CHECK_EQ(buf[52], 0xaa);
	CHECK_EQ(pingpong_parse_dest(buf, 52, &got, err, sizeof(err)), OOB_OK);
	CHECK(memcmp(&got, &d, sizeof(d)) == 0);
	/* malformed */
	CHECK_EQ(pingpong_parse_dest(buf, 51, &got, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "expected 52") != NULL);
	buf[7] = 'x';
	CHECK_EQ(pingpong_parse_dest(buf, 52, &got, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "QPN") != NULL);
	buf[7] = '0';
	buf[51] = '0';
	CHECK_EQ(pingpong_parse_dest(buf, 52, &got, err, sizeof(err)), OOB_ERR_PROTO);
	CHECK(strstr(err, "NUL") != NULL);
	buf[51] = 0;
	buf[18] = ' ';
	CHECK_EQ(pingpong_parse_dest(buf, 52, &got, err, sizeof(err)), OOB_ERR_PROTO);
	d.qpn = 0x1000000;
	CHECK_EQ(pingpong_format_dest(&d, buf, sizeof(buf), err, sizeof(err)), OOB_ERR_ARG);
}

static void
t_plan_shapes(void)
{
	struct perftest_params p;
	struct perftest_step st[PERFTEST_MAX_STEPS];
	size_t n;
	char err[200];
	/* the captured write_bw client: 3 prologue, DEST, CONNECT, DEST, DEST, TRAFFIC,
	 * DEST, REPORT, DEST, DONE */
	perftest_params_default(&p, PERFTEST_WRITE_BW, PERFTEST_CLIENT);
	CHECK_EQ(perftest_plan_build(&p, st, PERFTEST_MAX_STEPS, &n, err, sizeof(err)), OOB_OK);
	CHECK_EQ(n, 12);
	CHECK_EQ(st[3].kind, PERFTEST_STEP_DEST);
	CHECK_EQ(st[4].kind, PERFTEST_STEP_CONNECT);
	CHECK_EQ(st[7].kind, PERFTEST_STEP_TRAFFIC);
	CHECK_EQ(st[9].kind, PERFTEST_STEP_REPORT);
	CHECK_EQ(st[11].kind, PERFTEST_STEP_DONE);
	/* refusals */
	p.rdma_cm = 1;
	CHECK_EQ(perftest_plan_build(&p, st, PERFTEST_MAX_STEPS, &n, err, sizeof(err)),
		 OOB_ERR_ARG);
	CHECK(strstr(err, "-R") != NULL);
	perftest_params_default(&p, PERFTEST_SEND_LAT, PERFTEST_SERVER);
	p.num_qps = 2;
	CHECK_EQ(perftest_plan_build(&p, st, PERFTEST_MAX_STEPS, &n, err, sizeof(err)),
		 OOB_ERR_ARG);
	perftest_params_default(&p, PERFTEST_WRITE_BW, PERFTEST_SERVER);
	p.num_qps = PERFTEST_MAX_QPS + 1;
	CHECK_EQ(perftest_plan_build(&p, st, PERFTEST_MAX_STEPS, &n, err, sizeof(err)),
		 OOB_ERR_ARG);
	/* the largest plan fits */
	perftest_params_default(&p, PERFTEST_SEND_BW, PERFTEST_SERVER);
	p.num_qps = PERFTEST_MAX_QPS;
	p.run_all = 1;
	p.duplex = 1;
	CHECK_EQ(perftest_plan_build(&p, st, PERFTEST_MAX_STEPS, &n, err, sizeof(err)), OOB_OK);
	/* and a too-small array is refused, not overrun */
	CHECK_EQ(perftest_plan_build(&p, st, 10, &n, err, sizeof(err)), OOB_ERR_ARG);
}

RW_TEST_MAIN(RW_TEST(t_load_vectors), RW_TEST(t_format_equals_capture), RW_TEST(t_parse_capture),
	     RW_TEST(t_no_gid_form), RW_TEST(t_format_range), RW_TEST(t_parse_malformed),
	     RW_TEST(t_pingpong_msg), RW_TEST(t_plan_shapes))
