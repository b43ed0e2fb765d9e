/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every congestion control with every loss recovery, per QP (each --cc works per QP
 * with every recovery mode), over the deterministic in-memory wire (tr_harness,
 * fake clock): seeded random drops, duplicates and reordering both ways, and the first
 * requests marked CE. For each pair, asserted exactly:
 *   - every WR completes once, successfully, in order, and every byte is where it belongs;
 *   - each request packet is sent for the first time exactly once (tx_req_packets), whatever
 *     was lost and resent;
 *   - the loss was repaired (retransmissions, or FEC rebuilds under fec+gbn);
 *   - the 8 CE marks reached the responder; an ECN CC (dcqcn, dcqcn-p, dctcp) got CNPs or
 *     BECN ACKs and cut its rate or window; none and TIMELY got no ECN feedback (and none
 *     never cut); TIMELY took RTT samples.
 * FEC runs under gbn as fec+gbn with xor:8,2, its codec registered as the rnic does.
 */
#include <stdio.h>
#include <string.h>

#include "cc.h"
#include "fec_roce.h"
#include "rw_test.h"
#include "tr_harness.h"

#define A(w) (&(w)->side[TR_A])
#define B(w) (&(w)->side[TR_B])
#define MTU 1024u
#define NWR 24
#define SLOT (8 * MTU)
#define RECV_BASE (256 * MTU)
#define SEED 7

static const char *const ccs[] = {"none", "dcqcn", "dcqcn-p", "dctcp", "timely"};
static const struct {
	const char *name, *recovery, *fec;
} recs[] = {
    {"gbn", "gbn", NULL}, {"gbone", "gbone", NULL},	 {"irn", "irn", NULL},
    {"vrp", "vrp", NULL}, {"fec+gbn", "gbn", "xor:8,2"},
};

static uint32_t
wr_len(int i)
{
	return (uint32_t)(1 + (i * 2011) % (6 * MTU));
}

static void
one_pair(const char *cc, const char *rec_name, const char *recovery, const char *fec)
{
	struct tr_opts o = {.cc = cc, .recovery = recovery, .fec = fec};
	struct tr_wire w;
	struct ibv_wc wc;
	uint64_t first_sends = 0;
	unsigned fail0 = rw_t_fail;
	int sends = 0, recvs = 0, nsend = 0;

	tr_init(&w, &o);
	tr_random_faults(&w, SEED, 20, 5, 20);
	tr_rule(&w, TR_A, TR_REQ, -1, TR_MARK_CE, 8);
	for (int i = 0; i < NWR; i++)
		tr_post_recv(B(&w), (uint64_t)i, RECV_BASE + (uint32_t)i * SLOT, SLOT);
	for (int i = 0; i < NWR; i++) {
		uint32_t len = wr_len(i), off = (uint32_t)i * SLOT;
		enum ibv_wr_opcode op = i % 3 == 2 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;

		tr_fill(A(&w), off, len, (uint32_t)(300 + i));
		nsend += op == IBV_WR_SEND;
		first_sends += (len + MTU - 1) / MTU;
		CHECK_EQ(tr_post_send(A(&w), op, (uint64_t)i, off, len, off, IBV_SEND_SIGNALED), 0);
	}
	tr_run(&w, 20000000);
	while (tr_poll_cq(A(&w), false, &wc, 1) == 1) {
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, (uint64_t)sends);
		sends++;
	}
	while (tr_poll_cq(B(&w), true, &wc, 1) == 1) {
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, (uint64_t)recvs);
		recvs++;
	}
	CHECK_EQ(sends, NWR);
	CHECK_EQ(recvs, nsend);
	for (int i = 0, k = 0; i < NWR; i++) {
		uint32_t len = wr_len(i), off = (uint32_t)i * SLOT;

		if (i % 3 == 2)
			CHECK_MEM(B(&w)->buf + RECV_BASE + (uint32_t)(k++) * SLOT, A(&w)->buf + off,
				  len);
		else
			CHECK_MEM(B(&w)->buf + off, A(&w)->buf + off, len);
	}
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_REQ_PKTS), first_sends);
	CHECK(w.dropped > 0); /* the faults did happen, and something repaired them */
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS) +
		  tr_dev_stat(B(&w), ROCE_STAT_FEC_REBUILT) >
	      0);

	uint64_t ce = tr_dev_stat(B(&w), ROCE_STAT_RX_ECN_CE),
		 fb = tr_dev_stat(A(&w), ROCE_STAT_RX_CNPS) +
		      tr_dev_stat(A(&w), ROCE_STAT_RX_BECN_ACKS);
	bool ecn_cc = strcmp(cc, "none") && strcmp(cc, "timely");

	/* the harness sends ECT(0) under every CC (cfg.ecn), so all 8 marks reach B (seeded) */
	CHECK_EQ(ce, 8);
	if (ecn_cc) { /* the NP answered and the algorithm cut */
		CHECK(fb > 0);
		CHECK(tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES) > 0);
	} else { /* no ECN feedback for a CC that does not use it */
		CHECK_EQ(fb, 0);
	}
	if (!strcmp(cc, "none"))
		CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES), 0);
	/* the recovery mode really ran: selective modes place out of order, gbn never does,
	 * and FEC rebuilt what it could */
	uint64_t ooo = tr_dev_stat(B(&w), ROCE_STAT_RX_OOO_PLACED);
	if (!strcmp(recovery, "gbn"))
		CHECK_EQ(ooo, 0);
	else
		CHECK(ooo > 0);
	if (fec)
		CHECK(tr_dev_stat(B(&w), ROCE_STAT_FEC_REBUILT) > 0);
	else
		CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_FEC_REBUILT), 0);
	if (!strcmp(cc, "timely"))
		CHECK(tr_dev_stat(A(&w), ROCE_STAT_RTT_SAMPLES) > 0);
	printf("  %-8s x %-7s retx %4llu  ce %2llu  cnp/becn %2llu  cc -%llu +%llu  %s\n", rec_name,
	       cc, (unsigned long long)tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS),
	       (unsigned long long)ce, (unsigned long long)fb,
	       (unsigned long long)tr_dev_stat(A(&w), ROCE_STAT_CC_DECREASES),
	       (unsigned long long)tr_dev_stat(A(&w), ROCE_STAT_CC_INCREASES),
	       rw_t_fail == fail0 ? "ok" : "FAILED");
	tr_fini(&w);
}

static void
t_every_cc_with_every_recovery(void)
{
	CHECK_EQ(cc_register_all(), 0);
	roce_fec_register(&fec_roce_codec);
	for (size_t r = 0; r < sizeof(recs) / sizeof(recs[0]); r++)
		for (size_t c = 0; c < sizeof(ccs) / sizeof(ccs[0]); c++)
			one_pair(ccs[c], recs[r].name, recs[r].recovery, recs[r].fec);
}

RW_TEST_MAIN(RW_TEST(t_every_cc_with_every_recovery))
