/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's and completer's transition trace (roce_dev_cfg.log_level =
 * ROCE_LOG_TRACE), as rxe logs each state: the exact transitions of a
 * one-packet WRITE and its ACK, the NAK path when a packet is lost, and no
 * trace line at the default level.
 */
#include "rw_test.h"
#include "tr_harness.h"

#define RUN(w) tr_run((w), 1000000)
#define MAXLINES 256

static char lines[2][MAXLINES][128];
static unsigned int nlines[2], nother;

static void
capture(int side, enum roce_log_level level, const char *msg)
{
	if (level != ROCE_LOG_TRACE) {
		nother++;
		return;
	}
	if (nlines[side] < MAXLINES)
		snprintf(lines[side][nlines[side]], sizeof(lines[0][0]), "%s", msg);
	nlines[side]++;
}

static void
reset(void)
{
	memset(nlines, 0, sizeof(nlines));
	nother = 0;
	tr_log_hook = capture;
}

/* the lines of @p side that contain @p machine, with the "qp Q: " prefix cut */
static unsigned int
pick(int side, const char *machine, const char **out, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nlines[side] && i < MAXLINES; i++) {
		const char *m = strstr(lines[side][i], machine);

		if (m && n < max)
			out[n++] = m;
	}
	return n;
}

static void
expect(int side, const char *machine, const char *const *want, unsigned int n)
{
	const char *got[MAXLINES];
	unsigned int k = pick(side, machine, got, MAXLINES);

	CHECK_EQ(k, n);
	for (unsigned int i = 0; i < n && i < k; i++)
		if (strcmp(got[i], want[i]) != 0) {
			CHECK(strcmp(got[i], want[i]) == 0);
			fprintf(stderr, "  line %u: got \"%s\", want \"%s\"\n", i, got[i], want[i]);
		}
}

static struct tr_opts
opts(enum roce_log_level level)
{
	struct tr_opts o = {.log_level = level, .psn_set = true, .sq_psn = 0x100, .rq_psn = 0x200};

	return o;
}

/* IBTA 9.7.5.1 (responder) and 9.7.5.2 (completer), one valid packet each */
static void
t_write_one(void)
{
	static const char *const resp[] = {
	    "responder PSN 0x000100: CHECK_PSN -> CHECK_OP_SEQ",
	    "responder PSN 0x000100: CHECK_OP_SEQ -> CHECK_OP",
	    "responder PSN 0x000100: CHECK_OP -> CHECK_LENGTH",
	    "responder PSN 0x000100: CHECK_LENGTH -> CHECK_RKEY",
	    "responder PSN 0x000100: CHECK_RKEY -> EXECUTE",
	    "responder PSN 0x000100: EXECUTE -> COMPLETE",
	    "responder PSN 0x000100: COMPLETE -> ACK",
	    "responder PSN 0x000100: ACK -> DONE",
	};
	static const char *const comp[] = {
	    "completer PSN 0x000100: CHECK_PSN -> CLASSIFY",
	    "completer PSN 0x000100: CLASSIFY -> ACK",
	    "completer PSN 0x000100: ACK -> PROGRESS",
	    "completer PSN 0x000100: PROGRESS -> DONE",
	};
	struct tr_opts o = opts(ROCE_LOG_TRACE);
	struct tr_wire w;

	reset();
	tr_init(&w, &o);
	tr_fill(&w.side[TR_A], 0, 100, 1);
	CHECK_EQ(tr_post_send(&w.side[TR_A], IBV_WR_RDMA_WRITE, 1, 0, 100, 4096, IBV_SEND_SIGNALED),
		 0);
	RUN(&w);
	CHECK_MEM(w.side[TR_B].buf + 4096, w.side[TR_A].buf, 100);
	expect(TR_B, "responder", resp, 8);
	expect(TR_A, "completer", comp, 4);
	expect(TR_A, "responder", NULL, 0);
	expect(TR_B, "completer", NULL, 0);
	tr_fini(&w);
	tr_log_hook = NULL;
}

static const char *const exec_path[] = {
    "CHECK_PSN -> CHECK_OP_SEQ", "CHECK_OP_SEQ -> CHECK_OP",
    "CHECK_OP -> CHECK_LENGTH",	 "CHECK_LENGTH -> CHECK_RKEY",
    "CHECK_RKEY -> EXECUTE",	 "EXECUTE -> COMPLETE",
    "COMPLETE -> ACK",		 "ACK -> DONE",
};

/*
 * The first of three packets lost: the responder NAKs the gap once (C9-107)
 * and drops the rest of it, the completer goes back (NAK_SEQ, RETRY) and the
 * three resent packets execute in order; one coalesced ACK for the last.
 */
static void
t_write_lost(void)
{
	static char want_r[28][96], want_c[13][96];
	const char *wr[28], *wc[13];
	static const char *const comp_nak[] = {
	    "CHECK_PSN -> CLASSIFY", "CLASSIFY -> NAK_SEQ", "NAK_SEQ -> PROGRESS",
	    "PROGRESS -> RETRY",     "RETRY -> DONE",
	};
	static const char *const comp_ack[] = {"CHECK_PSN -> CLASSIFY", "CLASSIFY -> ACK",
					       "ACK -> PROGRESS", "PROGRESS -> DONE"};
	struct tr_opts o = opts(ROCE_LOG_TRACE);
	struct tr_wire w;
	unsigned int n = 0;

	snprintf(want_r[n++], 96, "responder PSN 0x000101: CHECK_PSN -> NAK_SEQ");
	snprintf(want_r[n++], 96, "responder PSN 0x000101: NAK_SEQ -> DONE");
	snprintf(want_r[n++], 96, "responder PSN 0x000102: CHECK_PSN -> DROP");
	snprintf(want_r[n++], 96, "responder PSN 0x000102: DROP -> DONE");
	for (unsigned int psn = 0x100; psn <= 0x102; psn++)
		for (unsigned int k = 0; k < 8; k++)
			snprintf(want_r[n++], 96, "responder PSN 0x%06x: %s", psn, exec_path[k]);
	for (unsigned int k = 0; k < 5; k++)
		snprintf(want_c[k], 96, "completer PSN 0x000100: %s", comp_nak[k]);
	/*
	 * The NAK cuts the loss-reactive window to its minimum, 4 packets (roce_lwin.h),
	 * and AckReq goes out at least every half window: the go-back round is ACKed at
	 * 0x101 and at its last packet 0x102.
	 */
	for (unsigned int k = 0; k < 4; k++)
		snprintf(want_c[5 + k], 96, "completer PSN 0x000101: %s", comp_ack[k]);
	for (unsigned int k = 0; k < 4; k++)
		snprintf(want_c[9 + k], 96, "completer PSN 0x000102: %s", comp_ack[k]);
	for (unsigned int k = 0; k < 28; k++)
		wr[k] = want_r[k];
	for (unsigned int k = 0; k < 13; k++)
		wc[k] = want_c[k];

	reset();
	tr_init(&w, &o);
	tr_rule(&w, TR_A, TR_REQ, 0x100, TR_DROP, 1);
	tr_fill(&w.side[TR_A], 0, 3000, 2);
	CHECK_EQ(
	    tr_post_send(&w.side[TR_A], IBV_WR_RDMA_WRITE, 1, 0, 3000, 8192, IBV_SEND_SIGNALED), 0);
	RUN(&w);
	CHECK_MEM(w.side[TR_B].buf + 8192, w.side[TR_A].buf, 3000);
	CHECK_EQ(n, 28);
	expect(TR_B, "responder", wr, 28);
	expect(TR_A, "completer", wc, 13);
	tr_fini(&w);
	tr_log_hook = NULL;
}

/* negative control: the default level traces nothing, other messages still pass */
static void
t_default_silent(void)
{
	struct tr_opts o = opts(0);
	struct tr_wire w;

	reset();
	tr_init(&w, &o);
	tr_rule(&w, TR_A, TR_REQ, 0x100, TR_DROP, 1);
	tr_fill(&w.side[TR_A], 0, 3000, 3);
	CHECK_EQ(
	    tr_post_send(&w.side[TR_A], IBV_WR_RDMA_WRITE, 1, 0, 3000, 8192, IBV_SEND_SIGNALED), 0);
	RUN(&w);
	CHECK_MEM(w.side[TR_B].buf + 8192, w.side[TR_A].buf, 3000);
	CHECK_EQ(nother, 0);
	/* a WRITE past the peer's MR: the responder's and completer's usual lines */
	CHECK_EQ(tr_post_send(&w.side[TR_A], IBV_WR_RDMA_WRITE, 2, 0, 100, w.side[TR_B].buf_size,
			      IBV_SEND_SIGNALED),
		 0);
	RUN(&w);
	CHECK(nother > 0);
	CHECK_EQ(nlines[TR_A] + nlines[TR_B], 0);
	tr_fini(&w);
	tr_log_hook = NULL;
}

RW_TEST_MAIN(RW_TEST(t_write_one), RW_TEST(t_write_lost), RW_TEST(t_default_silent))
