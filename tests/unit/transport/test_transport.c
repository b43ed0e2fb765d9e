/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport engine, lossless wire: every operation, segmentation at each MTU,
 * pad, immediate data, SGE lists, inline, signaling, solicited events,
 * UC and UD, the QP state machine and the receive-dispatch drops.
 */
#include <endian.h>
#include <errno.h>

#include "net_bytes.h"
#include "roce_cc.h"
#include "roce_gsi.h"
#include "roce_icrc.h"
#include "roce_pkt.h"
#include "rw_test.h"
#include "tr_harness.h"

#define RUN(w) tr_run((w), 1000000)

static struct tr_side *
A(struct tr_wire *w)
{
	return &w->side[TR_A];
}

static struct tr_side *
B(struct tr_wire *w)
{
	return &w->side[TR_B];
}

static void
expect_wc(struct tr_side *s, bool recv, uint64_t wr_id, enum ibv_wc_status st,
	  enum ibv_wc_opcode op)
{
	struct ibv_wc wc;

	CHECK_EQ(tr_poll_cq(s, recv, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.status, st);
	if (st == IBV_WC_SUCCESS)
		CHECK_EQ(wc.opcode, op);
}

/* ---- basic operations ---- */

static void
t_send_recv(void)
{
	struct tr_wire w;
	struct ibv_wc wc;

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 100, 1);
	CHECK_EQ(tr_post_recv(B(&w), 7, 4096, 1000), 0);
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 100, 0, IBV_SEND_SIGNALED), 0);
	RUN(&w);
	CHECK_EQ(tr_poll_cq(B(&w), true, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, 7);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.byte_len, 100);
	CHECK_EQ(wc.qp_num, roce_qp_num(B(&w)->qp));
	CHECK_EQ(wc.src_qp, roce_qp_num(A(&w)->qp));
	CHECK_EQ(wc.wc_flags, 0);
	CHECK_MEM(B(&w)->buf + 4096, A(&w)->buf, 100);
	CHECK_EQ(tr_poll_cq(A(&w), false, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_SEND);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
	CHECK(tr_dev_stat(B(&w), ROCE_STAT_TX_ACKS) >= 1);
	tr_fini(&w);
}

static void
t_write_read(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 20000, 2);
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 20000, 100000, IBV_SEND_SIGNALED), 0);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	CHECK_MEM(B(&w)->buf + 100000, A(&w)->buf, 20000);

	tr_fill(B(&w), 300000, 30000, 3);
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_READ, 2, 200000, 30000, 300000, IBV_SEND_SIGNALED),
		 0);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	CHECK_MEM(A(&w)->buf + 200000, B(&w)->buf + 300000, 30000);
	CHECK_EQ(tr_poll_cq(B(&w), true, NULL, 0), 0);
	tr_fini(&w);
}

static void
t_segmentation_each_mtu(void)
{
	for (enum ibv_mtu m = IBV_MTU_256; m <= IBV_MTU_4096; m++) {
		uint32_t mtu = 128u << m;
		uint32_t sizes[] = {0, 1, mtu - 1, mtu, mtu + 1, 3 * mtu, 3 * mtu + 5};
		struct tr_opts o = {.mtu = m};
		struct tr_wire w;

		tr_init(&w, &o);
		for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint32_t len = sizes[i], npk = len ? (len + mtu - 1) / mtu : 1;
			uint64_t before = tr_dev_stat(A(&w), ROCE_STAT_TX_REQ_PKTS);
			struct ibv_wc wc;

			tr_fill(A(&w), 0, len, i + m);
			tr_post_recv(B(&w), i, 65536, len + 10);
			tr_post_send(A(&w), IBV_WR_SEND, i, 0, len, 0, IBV_SEND_SIGNALED);
			RUN(&w);
			CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_REQ_PKTS) - before, npk);
			CHECK_EQ(tr_poll_cq(B(&w), true, &wc, 1), 1);
			CHECK_EQ(wc.byte_len, len);
			CHECK_MEM(B(&w)->buf + 65536, A(&w)->buf, len);
			expect_wc(A(&w), false, i, IBV_WC_SUCCESS, IBV_WC_SEND);

			before = tr_dev_stat(A(&w), ROCE_STAT_TX_REQ_PKTS);
			tr_fill(A(&w), 0, len, i + 100 + m);
			tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 100 + i, 0, len, 200000, 0);
			RUN(&w);
			CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_REQ_PKTS) - before, npk);
			CHECK_MEM(B(&w)->buf + 200000, A(&w)->buf, len);

			tr_fill(B(&w), 400000, len, i + 200 + m);
			tr_post_send(A(&w), IBV_WR_RDMA_READ, 200 + i, 500000, len, 400000, 0);
			RUN(&w);
			CHECK_MEM(A(&w)->buf + 500000, B(&w)->buf + 400000, len);
		}
		CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
		tr_fini(&w);
	}
}

/* The last packet carries pad bytes up to a multiple of 4; the payload arrives without them. */
static void
t_pad(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	w.capture_only = true;
	for (uint32_t len = 1; len <= 8; len++) {
		struct roce_pkt p;

		tr_fill(A(&w), 0, len, len);
		tr_post_send(A(&w), IBV_WR_RDMA_WRITE, len, 0, len, 1000 * len, 0);
		RUN(&w);
		CHECK_EQ(w.q[TR_A].count, 1);
		CHECK_EQ(roce_parse(w.q[TR_A].head->data, w.q[TR_A].head->len, &p, 0), 0);
		CHECK_EQ(p.h.bth.pad, (4 - len % 4) % 4);
		CHECK_EQ(p.payload_len, len);
		tr_deliver_one(&w, TR_A);
		CHECK_MEM(B(&w)->buf + 1000 * len, A(&w)->buf, len);
		w.capture_only = false;
		RUN(&w);
		w.capture_only = true;
	}
	tr_fini(&w);
}

static void
t_immediate(void)
{
	struct tr_wire w;
	struct ibv_wc wc;

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 5000, 4);
	tr_post_recv(B(&w), 1, 0, 8192);
	tr_post_recv(B(&w), 2, 0, 0);
	CHECK_EQ(tr_post_imm(A(&w), IBV_WR_SEND_WITH_IMM, 10, 0, 3000, 0, 0xdeadbeef), 0);
	CHECK_EQ(tr_post_imm(A(&w), IBV_WR_RDMA_WRITE_WITH_IMM, 11, 0, 5000, 50000, 0x01020304), 0);
	RUN(&w);
	CHECK_EQ(tr_poll_cq(B(&w), true, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, 1);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.byte_len, 3000);
	CHECK(wc.wc_flags & IBV_WC_WITH_IMM);
	CHECK_EQ(be32toh(wc.imm_data), 0xdeadbeef);
	CHECK_EQ(tr_poll_cq(B(&w), true, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, 2);
	CHECK_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK_EQ(wc.byte_len, 5000);
	CHECK(wc.wc_flags & IBV_WC_WITH_IMM);
	CHECK_EQ(be32toh(wc.imm_data), 0x01020304);
	CHECK_MEM(B(&w)->buf + 50000, A(&w)->buf, 5000);
	expect_wc(A(&w), false, 10, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(A(&w), false, 11, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	tr_fini(&w);
}

static void
t_multi_sge(void)
{
	struct tr_wire w;
	struct ibv_sge s[3], r[3];
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rw, *rbad;
	struct ibv_wc wc;
	uint8_t expect[3000];

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 10000, 5);
	/* gather 1000 + 1 + 1999 bytes from three places */
	s[0] = (struct ibv_sge){(uintptr_t)A(&w)->buf + 100, 1000, A(&w)->mr->lkey};
	s[1] = (struct ibv_sge){(uintptr_t)A(&w)->buf + 5000, 1, A(&w)->mr->lkey};
	s[2] = (struct ibv_sge){(uintptr_t)A(&w)->buf + 7000, 1999, A(&w)->mr->lkey};
	memcpy(expect, A(&w)->buf + 100, 1000);
	memcpy(expect + 1000, A(&w)->buf + 5000, 1);
	memcpy(expect + 1001, A(&w)->buf + 7000, 1999);
	/* scatter into 7 + 1500 + 2000 bytes */
	r[0] = (struct ibv_sge){(uintptr_t)B(&w)->buf + 10, 7, B(&w)->mr->lkey};
	r[1] = (struct ibv_sge){(uintptr_t)B(&w)->buf + 3000, 1500, B(&w)->mr->lkey};
	r[2] = (struct ibv_sge){(uintptr_t)B(&w)->buf + 9000, 2000, B(&w)->mr->lkey};
	rw = (struct ibv_recv_wr){.wr_id = 3, .sg_list = r, .num_sge = 3};
	CHECK_EQ(roce_post_recv(B(&w)->qp, &rw, &rbad), 0);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 4;
	wr.sg_list = s;
	wr.num_sge = 3;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	CHECK_EQ(roce_post_send(A(&w)->qp, &wr, &bad), 0);
	RUN(&w);
	CHECK_EQ(tr_poll_cq(B(&w), true, &wc, 1), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, 3000);
	CHECK_MEM(B(&w)->buf + 10, expect, 7);
	CHECK_MEM(B(&w)->buf + 3000, expect + 7, 1500);
	CHECK_MEM(B(&w)->buf + 9000, expect + 1507, 1493);
	/* READ scattered into two local SGEs */
	tr_fill(B(&w), 20000, 3000, 6);
	s[0] = (struct ibv_sge){(uintptr_t)A(&w)->buf + 40000, 1234, A(&w)->mr->lkey};
	s[1] = (struct ibv_sge){(uintptr_t)A(&w)->buf + 60000, 1766, A(&w)->mr->lkey};
	wr.wr_id = 5;
	wr.num_sge = 2;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)B(&w)->buf + 20000;
	wr.wr.rdma.rkey = B(&w)->mr->rkey;
	CHECK_EQ(roce_post_send(A(&w)->qp, &wr, &bad), 0);
	RUN(&w);
	CHECK_MEM(A(&w)->buf + 40000, B(&w)->buf + 20000, 1234);
	CHECK_MEM(A(&w)->buf + 60000, B(&w)->buf + 21234, 1766);
	/* too many SGEs */
	wr.num_sge = 5;
	CHECK_EQ(roce_post_send(A(&w)->qp, &wr, &bad), -EINVAL);
	CHECK(bad == &wr);
	/* a bad lkey is posted and completes with a local QP operation error, as on rxe */
	while (tr_poll_cq(A(&w), false, &wc, 1) == 1)
		;
	s[0].lkey ^= 0x100;
	wr.num_sge = 1;
	wr.wr_id = 6;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	CHECK_EQ(roce_post_send(A(&w)->qp, &wr, &bad), 0);
	RUN(&w);
	expect_wc(A(&w), false, 6, IBV_WC_LOC_QP_OP_ERR, IBV_WC_RDMA_WRITE);
	tr_fini(&w);
	/* a receive whose lkey is bad: LOC_PROT_ERR there, NAK remote operational error to
	 * the sender; a good key with a range past the MR: local protection error */
	tr_init(&w, NULL);
	r[0] = (struct ibv_sge){(uintptr_t)B(&w)->buf, 64, B(&w)->mr->lkey ^ 0x100};
	rw = (struct ibv_recv_wr){.wr_id = 7, .sg_list = r, .num_sge = 1};
	CHECK_EQ(roce_post_recv(B(&w)->qp, &rw, &rbad), 0);
	s[0] = (struct ibv_sge){(uintptr_t)A(&w)->buf, 64, A(&w)->mr->lkey};
	wr = (struct ibv_send_wr){.wr_id = 8,
				  .sg_list = s,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED};
	CHECK_EQ(roce_post_send(A(&w)->qp, &wr, &bad), 0);
	RUN(&w);
	expect_wc(B(&w), true, 7, IBV_WC_LOC_QP_OP_ERR, IBV_WC_RECV);
	expect_wc(A(&w), false, 8, IBV_WC_REM_OP_ERR, IBV_WC_SEND);
	tr_fini(&w);
	tr_init(&w, NULL);
	/* a good WRITE first (with TR_TX_BUF, a loan that comes back in a frame) */
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 10, 0, 100, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 10, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	s[0] = (struct ibv_sge){(uintptr_t)A(&w)->buf + A(&w)->buf_size - 8, 64, A(&w)->mr->lkey};
	wr = (struct ibv_send_wr){.wr_id = 9,
				  .sg_list = s,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED};
	CHECK_EQ(roce_post_send(A(&w)->qp, &wr, &bad), 0);
	RUN(&w);
	expect_wc(A(&w), false, 9, IBV_WC_LOC_PROT_ERR, IBV_WC_SEND);
	tr_fini(&w);
}

static void
t_inline(void)
{
	struct tr_wire w;
	struct ibv_wc wc;
	uint8_t data[256];

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 256, 7);
	memcpy(data, A(&w)->buf, 256);
	tr_post_recv(B(&w), 1, 0, 1024);
	CHECK_EQ(
	    tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 200, 0, IBV_SEND_INLINE | IBV_SEND_SIGNALED), 0);
	memset(A(&w)->buf, 0xee, 256); /* inline data was copied at post time */
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 0, 256, 8192, IBV_SEND_INLINE), 0);
	RUN(&w);
	CHECK_EQ(tr_poll_cq(B(&w), true, &wc, 1), 1);
	CHECK_MEM(B(&w)->buf, data, 200);
	CHECK(B(&w)->buf[8192] == 0xee && B(&w)->buf[8192 + 255] == 0xee);
	/* more than max_inline_data (256) */
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_SEND, 3, 0, 257, 0, IBV_SEND_INLINE), -EINVAL);
	/* inline READ is meaningless */
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_READ, 4, 0, 8, 0, IBV_SEND_INLINE), -EINVAL);
	tr_fini(&w);
}

static void
t_atomics(void)
{
	struct tr_wire w;
	uint64_t v;

	tr_init(&w, NULL);
	v = 100;
	memcpy(B(&w)->buf + 64, &v, 8);
	CHECK_EQ(tr_post_atomic(A(&w), IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0, 64, 5, 0), 0);
	CHECK_EQ(tr_post_atomic(A(&w), IBV_WR_ATOMIC_CMP_AND_SWP, 2, 8, 64, 105, 7), 0);
	CHECK_EQ(tr_post_atomic(A(&w), IBV_WR_ATOMIC_CMP_AND_SWP, 3, 16, 64, 1, 9), 0);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	expect_wc(A(&w), false, 3, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	memcpy(&v, A(&w)->buf, 8);
	CHECK_EQ(v, 100);
	memcpy(&v, A(&w)->buf + 8, 8);
	CHECK_EQ(v, 105);
	memcpy(&v, A(&w)->buf + 16, 8);
	CHECK_EQ(v, 7); /* compare failed: no swap */
	memcpy(&v, B(&w)->buf + 64, 8);
	CHECK_EQ(v, 7);
	/* misaligned remote address: the responder NAKs an invalid request */
	CHECK_EQ(tr_post_atomic(A(&w), IBV_WR_ATOMIC_FETCH_AND_ADD, 4, 0, 68, 1, 0), 0);
	RUN(&w);
	expect_wc(A(&w), false, 4, IBV_WC_REM_INV_REQ_ERR, 0);
	tr_fini(&w);
}

/* ---- completions ---- */

static void
t_signaling(void)
{
	struct tr_wire w;
	struct ibv_wc wc[8];

	tr_init(&w, NULL);
	for (int i = 0; i < 6; i++)
		tr_post_send(A(&w), IBV_WR_RDMA_WRITE, (uint64_t)i, 0, 100, 0,
			     i % 3 == 2 ? IBV_SEND_SIGNALED : 0);
	RUN(&w);
	CHECK_EQ(tr_poll_cq(A(&w), false, wc, 8), 2);
	CHECK_EQ(wc[0].wr_id, 2);
	CHECK_EQ(wc[1].wr_id, 5);
	tr_fini(&w);

	struct tr_opts o = {.sq_sig_all = true};

	tr_init(&w, &o);
	for (int i = 0; i < 3; i++)
		tr_post_send(A(&w), IBV_WR_RDMA_WRITE, (uint64_t)i, 0, 100, 0, 0);
	RUN(&w);
	CHECK_EQ(tr_poll_cq(A(&w), false, wc, 8), 3);
	tr_fini(&w);
}

static void
t_solicited_event(void)
{
	struct tr_wire w;
	struct ibv_wc wc[4];

	tr_init(&w, NULL);
	for (int i = 0; i < 3; i++)
		tr_post_recv(B(&w), (uint64_t)i, (uint32_t)i * 4096, 4096);
	roce_req_notify_cq(B(&w)->rcq, 1);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 10, 0, 0);
	RUN(&w);
	CHECK_EQ(B(&w)->cq_events, 0); /* not solicited */
	tr_post_send(A(&w), IBV_WR_SEND, 2, 0, 3000, 0, IBV_SEND_SOLICITED);
	RUN(&w);
	CHECK_EQ(B(&w)->cq_events, 1);
	tr_post_send(A(&w), IBV_WR_SEND, 3, 0, 10, 0, IBV_SEND_SOLICITED);
	RUN(&w);
	CHECK_EQ(B(&w)->cq_events, 1); /* disarmed after one event */
	CHECK_EQ(tr_poll_cq(B(&w), true, wc, 4), 3);
	roce_req_notify_cq(A(&w)->scq, 0);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 4, 0, 10, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	CHECK_EQ(A(&w)->cq_events, 1);
	tr_fini(&w);
}

static void
t_fence_and_rd_atomic_limit(void)
{
	struct tr_opts o = {.max_rd_atomic = 1};
	struct tr_wire w;
	struct ibv_wc wc[8];

	tr_init(&w, &o);
	tr_fill(B(&w), 0, 40000, 8);
	for (int i = 0; i < 4; i++)
		tr_post_send(A(&w), IBV_WR_RDMA_READ, (uint64_t)i, (uint32_t)i * 10000, 10000,
			     (uint32_t)i * 10000, IBV_SEND_SIGNALED);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 9, 0, 40000, 100000,
		     IBV_SEND_SIGNALED | IBV_SEND_FENCE);
	RUN(&w);
	CHECK_EQ(tr_poll_cq(A(&w), false, wc, 8), 5);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
	CHECK_MEM(A(&w)->buf, B(&w)->buf, 40000);
	/* the fenced WRITE sent the data the READs had fetched */
	CHECK_MEM(B(&w)->buf + 100000, B(&w)->buf, 40000);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_RD_ATOMIC_BLOCKED) >= 1);
	tr_fini(&w);
}

/* ---- errors ---- */

static void
check_remote_error(enum ibv_wr_opcode op, uint32_t roff, uint32_t len, bool bad_rkey,
		   unsigned int mr_access, unsigned int qp_access, enum ibv_wc_status want)
{
	struct tr_opts o = {.access = qp_access};
	struct tr_wire w;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct roce_mr *mr;
	uint8_t *snapshot = malloc(TR_BUF_SIZE);

	tr_init(&w, &o);
	/* a small MR of B: 4 KiB in the middle of B's buffer */
	mr = roce_reg_mr(B(&w)->pd, B(&w)->buf + 65536, 4096, mr_access);
	tr_fill(B(&w), 0, TR_BUF_SIZE, 9);
	memcpy(snapshot, B(&w)->buf, TR_BUF_SIZE);
	tr_fill(A(&w), 0, 8192, 10);
	sge = (struct ibv_sge){(uintptr_t)A(&w)->buf, len, A(&w)->mr->lkey};
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)B(&w)->buf + 65536 + roff;
		wr.wr.atomic.rkey = bad_rkey ? mr->rkey + 1 : mr->rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)B(&w)->buf + 65536 + roff;
		wr.wr.rdma.rkey = bad_rkey ? mr->rkey ^ 0x100 : mr->rkey;
	}
	CHECK_EQ(roce_post_send(A(&w)->qp, &wr, &bad), 0);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 0, 10, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, want, 0);
	expect_wc(A(&w), false, 2, IBV_WC_WR_FLUSH_ERR, 0);
	CHECK_EQ(roce_qp_state(A(&w)->qp), IBV_QPS_ERR);
	CHECK_EQ(roce_qp_state(B(&w)->qp), IBV_QPS_ERR);
	CHECK_MEM(B(&w)->buf, snapshot, TR_BUF_SIZE); /* responder memory untouched */
	free(snapshot);
	tr_fini(&w);
}

static void
t_remote_access_errors(void)
{
	const unsigned int lw = IBV_ACCESS_LOCAL_WRITE, wr = IBV_ACCESS_REMOTE_WRITE,
			   rd = IBV_ACCESS_REMOTE_READ, at = IBV_ACCESS_REMOTE_ATOMIC;
	const unsigned int rw = lw | wr | rd | at, qpa = wr | rd | at;

	/* wrong rkey */
	check_remote_error(IBV_WR_RDMA_WRITE, 0, 100, true, rw, qpa, IBV_WC_REM_ACCESS_ERR);
	check_remote_error(IBV_WR_RDMA_READ, 0, 100, true, rw, qpa, IBV_WC_REM_ACCESS_ERR);
	check_remote_error(IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, true, rw, qpa, IBV_WC_REM_ACCESS_ERR);
	/* out of bounds: past the end, multi-packet */
	check_remote_error(IBV_WR_RDMA_WRITE, 2048, 4096, false, rw, qpa, IBV_WC_REM_ACCESS_ERR);
	check_remote_error(IBV_WR_RDMA_READ, 4000, 100, false, rw, qpa, IBV_WC_REM_ACCESS_ERR);
	check_remote_error(IBV_WR_ATOMIC_FETCH_AND_ADD, 4096, 8, false, rw, qpa,
			   IBV_WC_REM_ACCESS_ERR);
	/* missing MR access flag */
	check_remote_error(IBV_WR_RDMA_WRITE, 0, 100, false, lw | rd | at, qpa,
			   IBV_WC_REM_ACCESS_ERR);
	check_remote_error(IBV_WR_RDMA_READ, 0, 100, false, lw | wr | at, qpa,
			   IBV_WC_REM_ACCESS_ERR);
	check_remote_error(IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, false, lw | wr | rd, qpa,
			   IBV_WC_REM_ACCESS_ERR);
	/* operation not enabled on the responder QP */
	check_remote_error(IBV_WR_RDMA_WRITE, 0, 100, false, rw, rd, IBV_WC_REM_INV_REQ_ERR);
}

static void
t_recv_too_small(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	tr_post_recv(B(&w), 1, 0, 100);
	tr_post_recv(B(&w), 2, 0, 100);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 3000, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(B(&w), true, 1, IBV_WC_LOC_LEN_ERR, 0);
	expect_wc(B(&w), true, 2, IBV_WC_WR_FLUSH_ERR, 0);
	expect_wc(A(&w), false, 1, IBV_WC_REM_INV_REQ_ERR, 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_LEN_ERR), 1);
	tr_fini(&w);
}

static void
t_rnr_then_recv(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 3000, 11);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 3000, 0, IBV_SEND_SIGNALED);
	/* deliver the three packets: the first gets an RNR NAK, the others are dropped */
	for (int i = 0; i < 3; i++)
		tr_deliver_one(&w, TR_A);
	tr_poll(&w);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_NAK_RNR), 1);
	tr_deliver_one(&w, TR_B);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RX_NAK_RNR), 1);
	tr_post_recv(B(&w), 5, 8192, 4096);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(B(&w), true, 5, IBV_WC_SUCCESS, IBV_WC_RECV);
	CHECK_MEM(B(&w)->buf + 8192, A(&w)->buf, 3000);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_RNR_RETRIES) >= 1);
	CHECK(w.now >= roce_rnr_timer_ns(1)); /* waited at least min_rnr_timer */
	tr_fini(&w);
}

static void
t_rnr_retry_exhausted(void)
{
	struct tr_opts o = {.rnr_retry = 2};
	struct tr_wire w;

	tr_init(&w, &o);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 100, 0, IBV_SEND_SIGNALED);
	tr_post_send(A(&w), IBV_WR_SEND, 2, 0, 100, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_RNR_RETRY_EXC_ERR, 0);
	expect_wc(A(&w), false, 2, IBV_WC_WR_FLUSH_ERR, 0);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_NAK_RNR), 3); /* first try + 2 retries */
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RNR_RETRY_EXC), 1);
	tr_fini(&w);
}

/* ---- state machine ---- */

static struct roce_qp *
new_qp(struct tr_side *s, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
	    .send_cq = roce_cq_ibv(s->scq),
	    .recv_cq = roce_cq_ibv(s->rcq),
	    .qp_type = type,
	    .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};

	return roce_create_qp(s->pd, &ia);
}

static int
fq_tx(void *ctx, const uint8_t *frame, size_t len)
{
	(void)ctx, (void)frame, (void)len;
	return 0;
}

static uint64_t
fq_now(void *ctx)
{
	(void)ctx;
	return 0;
}

/* roce_dev_cfg.first_qpn: the default keeps ROCE_FIRST_QPN; a device per lcore gets its range */
static void
t_first_qpn(void)
{
	static const struct roce_dev_ops ops = {.tx = fq_tx, .now_ns = fq_now};
	struct roce_dev_cfg cfg;
	struct ibv_qp_init_attr ia;

	roce_dev_cfg_init(&cfg);
	CHECK_EQ(cfg.first_qpn, ROCE_FIRST_QPN);
	for (uint32_t first = ROCE_FIRST_QPN; first <= ROCE_FIRST_QPN + 0x1000; first += 0x1000) {
		cfg.first_qpn = first;
		struct roce_dev *dev = roce_dev_create(&cfg, &ops, NULL);
		CHECK(dev != NULL);
		struct roce_pd *pd = roce_pd_alloc(dev);
		struct roce_cq *cq = roce_create_cq(dev, 16);
		CHECK(pd != NULL && cq != NULL);
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = ia.recv_cq = roce_cq_ibv(cq);
		ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		ia.qp_type = IBV_QPT_RC;
		struct roce_qp *q0 = roce_create_qp(pd, &ia), *q1 = roce_create_qp(pd, &ia);
		CHECK(q0 != NULL && q1 != NULL);
		CHECK_EQ(roce_qp_num(q0), first);
		CHECK_EQ(roce_qp_num(q1), first + 1);
		roce_dev_destroy(dev);
	}
	cfg.first_qpn = 1; /* QPN 1 is GSI's, 0 SMI's */
	CHECK(roce_dev_create(&cfg, &ops, NULL) == NULL);
	cfg.first_qpn = 0xffffff - 10; /* the range would pass 0xfffffe */
	CHECK(roce_dev_create(&cfg, &ops, NULL) == NULL);
}

static void
t_qp_state_machine(void)
{
	struct tr_wire w;
	struct ibv_qp_attr a, q;
	struct ibv_qp_init_attr ia;
	struct roce_qp *qp;
	const int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	const int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	const int rts_mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	const int ud_init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;

	tr_init(&w, NULL);
	qp = new_qp(A(&w), IBV_QPT_RC);
	CHECK(qp != NULL);
	CHECK_EQ(roce_qp_state(qp), IBV_QPS_RESET);
	CHECK(roce_qp_num(qp) >= ROCE_FIRST_QPN);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR; /* RESET -> RTR is illegal */
	CHECK_EQ(roce_modify_qp(qp, &a, rtr_mask), -EINVAL);
	a.qp_state = IBV_QPS_RTS;
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE), -EINVAL);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), -EINVAL);
	CHECK_EQ(roce_modify_qp(qp, &a, init_mask | IBV_QP_SQ_PSN), -EINVAL); /* not allowed */
	CHECK_EQ(roce_modify_qp(qp, &a, init_mask | IBV_QP_QKEY), -EINVAL);   /* UD only */
	a.port_num = 2;
	CHECK_EQ(roce_modify_qp(qp, &a, init_mask), -EINVAL);
	a.port_num = 1;
	a.pkey_index = ROCE_MAX_PKEY;
	CHECK_EQ(roce_modify_qp(qp, &a, init_mask), -EINVAL);
	a.pkey_index = 0;
	CHECK_EQ(roce_qp_state(qp), IBV_QPS_RESET); /* nothing changed */
	CHECK_EQ(roce_modify_qp(qp, &a, init_mask), 0);
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS), 0); /* INIT -> INIT */
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 1, 0, 0), 0); /* A's own QP is fine */

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = B(&w)->gid;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = roce_qp_num(B(&w)->qp);
	a.max_dest_rd_atomic = 4;
	CHECK_EQ(roce_modify_qp(qp, &a, rtr_mask & ~IBV_QP_DEST_QPN), -EINVAL);
	CHECK_EQ(roce_modify_qp(qp, &a, rtr_mask & ~IBV_QP_MIN_RNR_TIMER), -EINVAL);
	a.path_mtu = 6;
	CHECK_EQ(roce_modify_qp(qp, &a, rtr_mask), -EINVAL);
	a.path_mtu = IBV_MTU_4096;
	a.max_dest_rd_atomic = 17;
	CHECK_EQ(roce_modify_qp(qp, &a, rtr_mask), -EINVAL);
	a.max_dest_rd_atomic = 4;
	a.ah_attr.is_global = 0; /* RoCE needs the GRH fields */
	CHECK_EQ(roce_modify_qp(qp, &a, rtr_mask), -EINVAL);
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.sgid_index = 3;
	CHECK_EQ(roce_modify_qp(qp, &a, rtr_mask), -EINVAL);
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.dgid.raw[0] = 0xfd; /* IPv6 peer from an IPv4 GID */
	CHECK_EQ(roce_modify_qp(qp, &a, rtr_mask), -EINVAL);
	a.ah_attr.grh.dgid.raw[0] = 0;
	a.ah_attr.grh.dgid.raw[15] ^= 0x40; /* unknown to resolve_mac */
	CHECK_EQ(roce_modify_qp(qp, &a, rtr_mask), -EHOSTUNREACH);
	CHECK_EQ(roce_qp_set_remote_mac(qp, B(&w)->mac), 0);
	CHECK_EQ(roce_modify_qp(qp, &a, rtr_mask), 0);
	CHECK_EQ(roce_qp_state(qp), IBV_QPS_RTR);
	CHECK_EQ(roce_qp_set_recovery(qp, "gbn"), -EINVAL); /* too late */

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 8;
	CHECK_EQ(roce_modify_qp(qp, &a, rts_mask), -EINVAL);
	a.retry_cnt = 7;
	CHECK_EQ(roce_modify_qp(qp, &a, rts_mask & ~IBV_QP_SQ_PSN), -EINVAL);
	a.sq_psn = 0x1000000;
	CHECK_EQ(roce_modify_qp(qp, &a, rts_mask), -EINVAL);
	a.sq_psn = 0xfffff0;
	a.max_rd_atomic = 2;
	CHECK_EQ(roce_modify_qp(qp, &a, rts_mask), 0);
	CHECK_EQ(roce_query_qp(qp, &q, 0, &ia), 0);
	CHECK_EQ(q.qp_state, IBV_QPS_RTS);
	CHECK_EQ(q.sq_psn, 0xfffff0);
	CHECK_EQ(q.path_mtu, IBV_MTU_4096);
	CHECK_EQ(q.max_rd_atomic, 2);
	CHECK_EQ(q.max_dest_rd_atomic, 4);
	CHECK_EQ(q.dest_qp_num, roce_qp_num(B(&w)->qp));
	CHECK_EQ(ia.qp_type, IBV_QPT_RC);
	CHECK(ia.send_cq == roce_cq_ibv(A(&w)->scq));
	/* RTS -> RTS with an optional attribute, and one not allowed there */
	a.min_rnr_timer = 5;
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_MIN_RNR_TIMER), 0);
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_TIMEOUT), -EINVAL);
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_ALT_PATH), -EINVAL); /* APM not implemented */
	/* RTS -> SQD -> SQD (timeout allowed there) -> RTS */
	a.qp_state = IBV_QPS_SQD;
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE), 0);
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT), 0);
	CHECK_EQ(roce_query_qp(qp, &q, 0, NULL), 0);
	CHECK_EQ(q.sq_draining, 0);
	a.qp_state = IBV_QPS_RTS;
	a.cur_qp_state = IBV_QPS_RTS; /* wrong current state */
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE), -EINVAL);
	a.cur_qp_state = IBV_QPS_SQD;
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
	/* RTS -> SQE is not a user transition; RTS -> INIT neither */
	a.qp_state = IBV_QPS_SQE;
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE), -EINVAL);
	a.qp_state = IBV_QPS_INIT;
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE), -EINVAL);
	/* any -> ERR -> RESET -> INIT */
	a.qp_state = IBV_QPS_ERR;
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE), -EINVAL);
	a.qp_state = IBV_QPS_RESET;
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	CHECK_EQ(roce_modify_qp(qp, &a, init_mask), 0);
	CHECK_EQ(roce_qp_set_recovery(qp, "gbn"), 0);
	CHECK_EQ(roce_qp_set_recovery(qp, "nonesuch"), -ENOENT);
	CHECK_EQ(roce_qp_set_cc(qp, "none"), 0);
	CHECK_EQ(roce_destroy_qp(qp), 0);

	/* UD: Q_Key at INIT, nothing but the state at RTR */
	qp = new_qp(A(&w), IBV_QPT_UD);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	CHECK_EQ(roce_modify_qp(qp, &a, init_mask), -EINVAL); /* access flags: not for UD */
	CHECK_EQ(roce_modify_qp(qp, &a, ud_init_mask), 0);
	a.qp_state = IBV_QPS_RTR;
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV), -EINVAL);
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	CHECK_EQ(roce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	CHECK_EQ(roce_destroy_qp(qp), 0);

	/* posting before RTS fails; receive WRs are fine from INIT */
	qp = new_qp(A(&w), IBV_QPT_RC);
	{
		struct ibv_sge sge = {(uintptr_t)A(&w)->buf, 8, A(&w)->mr->lkey};
		struct ibv_send_wr *bad, wr = {.sg_list = &sge, .num_sge = 1};
		struct ibv_recv_wr rw = {.sg_list = &sge, .num_sge = 1}, *rbad;

		wr.opcode = IBV_WR_SEND;
		CHECK_EQ(roce_post_recv(qp, &rw, &rbad), -EINVAL); /* RESET */
		a.qp_state = IBV_QPS_INIT;
		CHECK_EQ(roce_modify_qp(qp, &a, init_mask), 0);
		CHECK_EQ(roce_post_send(qp, &wr, &bad), -EINVAL);
		CHECK(bad == &wr);
		CHECK_EQ(roce_post_recv(qp, &rw, &rbad), 0);
		sge.lkey ^= 0x100; /* bad lkey: posted, checked when a message lands (rxe's way) */
		CHECK_EQ(roce_post_recv(qp, &rw, &rbad), 0);
	}
	CHECK_EQ(roce_destroy_cq(A(&w)->scq), -EBUSY);
	CHECK_EQ(roce_pd_dealloc(A(&w)->pd), -EBUSY);
	CHECK_EQ(roce_destroy_qp(qp), 0);
	tr_fini(&w);
}

static void
t_modify_err_flushes(void)
{
	struct tr_wire w;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
	struct ibv_wc wc[16];

	tr_init(&w, NULL);
	w.capture_only = true;
	for (int i = 0; i < 4; i++) {
		tr_post_recv(A(&w), 100 + (uint64_t)i, 0, 64);
		tr_post_send(A(&w), IBV_WR_RDMA_WRITE, (uint64_t)i, 0, 5000, 0, 0);
	}
	RUN(&w); /* sent, never acknowledged */
	CHECK_EQ(roce_modify_qp(A(&w)->qp, &a, IBV_QP_STATE), 0);
	CHECK_EQ(tr_poll_cq(A(&w), false, wc, 16), 4);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(wc[i].wr_id, (uint64_t)i);
		CHECK_EQ(wc[i].status, IBV_WC_WR_FLUSH_ERR); /* unsignaled, but flushed */
	}
	CHECK_EQ(tr_poll_cq(A(&w), true, wc, 16), 4);
	CHECK_EQ(wc[3].wr_id, 103);
	CHECK_EQ(wc[3].status, IBV_WC_WR_FLUSH_ERR);
	/* WRs posted in ERR complete at once with a flush error */
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_SEND, 9, 0, 10, 0, 0), 0);
	CHECK_EQ(tr_post_recv(A(&w), 109, 0, 10), 0);
	expect_wc(A(&w), false, 9, IBV_WC_WR_FLUSH_ERR, 0);
	expect_wc(A(&w), true, 109, IBV_WC_WR_FLUSH_ERR, 0);
	tr_fini(&w);
}

static void
t_sqd_drains(void)
{
	struct tr_wire w;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_SQD}, q;
	struct ibv_wc wc[4];

	tr_init(&w, NULL);
	w.capture_only = true;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 100, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	CHECK_EQ(roce_modify_qp(A(&w)->qp, &a, IBV_QP_STATE), 0);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 0, 100, 0, IBV_SEND_SIGNALED);
	roce_query_qp(A(&w)->qp, &q, 0, NULL);
	CHECK_EQ(q.sq_draining, 1);
	w.capture_only = false;
	RUN(&w);
	roce_query_qp(A(&w)->qp, &q, 0, NULL);
	CHECK_EQ(q.sq_draining, 0);
	CHECK_EQ(tr_poll_cq(A(&w), false, wc, 4), 1); /* WR 2 waits for RTS */
	a.qp_state = IBV_QPS_RTS;
	CHECK_EQ(roce_modify_qp(A(&w)->qp, &a, IBV_QP_STATE), 0);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	tr_fini(&w);
}

/* ---- UC and UD ---- */

static void
t_uc(void)
{
	struct tr_opts o = {.type = IBV_QPT_UC};
	struct tr_wire w;
	struct ibv_wc wc[4];

	tr_init(&w, &o);
	tr_fill(A(&w), 0, 20000, 12);
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_READ, 1, 0, 8, 0, 0), -EINVAL);
	tr_post_recv(B(&w), 1, 0, 8192);
	tr_post_recv(B(&w), 2, 8192, 8192);
	/* message 1: 3 packets, the middle one lost; message 2 intact */
	tr_rule(&w, TR_A, TR_REQ, 0x101, TR_DROP, 1);
	tr_post_send(A(&w), IBV_WR_SEND, 10, 0, 3000, 0, IBV_SEND_SIGNALED);
	tr_post_send(A(&w), IBV_WR_SEND, 11, 4000, 2500, 0, IBV_SEND_SIGNALED);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 12, 10000, 5000, 100000, IBV_SEND_SIGNALED);
	RUN(&w);
	/* UC completes on transmission */
	CHECK_EQ(tr_poll_cq(A(&w), false, wc, 4), 3);
	/* only message 2 arrived, into the first receive WQE (reused after the loss) */
	CHECK_EQ(tr_poll_cq(B(&w), true, wc, 4), 1);
	CHECK_EQ(wc[0].wr_id, 1);
	CHECK_EQ(wc[0].byte_len, 2500);
	CHECK_MEM(B(&w)->buf, A(&w)->buf + 4000, 2500);
	CHECK_MEM(B(&w)->buf + 100000, A(&w)->buf + 10000, 5000);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_UC_MSG_DROP), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_ACKS), 0);
	tr_fini(&w);
}

static void
t_ud(void)
{
	for (int v6 = 0; v6 <= 1; v6++) {
		struct tr_opts o = {.type = IBV_QPT_UD, .ipv6 = v6};
		struct tr_wire w;
		struct ibv_wc wc;
		const uint8_t *grh;

		tr_init(&w, &o);
		tr_fill(A(&w), 0, 1024, 13);
		tr_post_recv(B(&w), 1, 0, 2048);
		/* tr_post_imm sets no AH: a UD send without one is refused */
		CHECK_EQ(tr_post_imm(A(&w), IBV_WR_SEND_WITH_IMM, 1, 0, 1000, 0, 42), -EINVAL);
		CHECK_EQ(tr_post_send(A(&w), IBV_WR_SEND, 2, 0, 1000, 0, IBV_SEND_SIGNALED), 0);
		RUN(&w);
		expect_wc(A(&w), false, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
		CHECK_EQ(tr_poll_cq(B(&w), true, &wc, 1), 1);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.byte_len, ROCE_UD_GRH_LEN + 1000);
		CHECK(wc.wc_flags & IBV_WC_GRH);
		CHECK_EQ(wc.src_qp, roce_qp_num(A(&w)->qp));
		CHECK_MEM(B(&w)->buf + ROCE_UD_GRH_LEN, A(&w)->buf, 1000);
		grh = B(&w)->buf;
		if (v6) {
			CHECK_EQ(grh[0] >> 4, 6);
			CHECK_MEM(grh + 8, A(&w)->gid.raw, 16); /* source address */
		} else {
			CHECK_EQ(grh[0], 0); /* first 20 bytes unused for IPv4 */
			CHECK_EQ(grh[20], 0x45);
			CHECK_MEM(grh + 32, A(&w)->gid.raw + 12, 4);
		}
		/* larger than the port MTU */
		CHECK_EQ(tr_post_send(A(&w), IBV_WR_SEND, 3, 0, 5000, 0, 0), -EINVAL);
		CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 3, 0, 10, 0, 0), -EINVAL);
		/* Q_Key mismatch: dropped and counted */
		{
			struct ibv_qp_attr a = {.qkey = 0x2222};

			CHECK_EQ(roce_modify_qp(B(&w)->qp, &a, IBV_QP_QKEY), 0);
			tr_post_recv(B(&w), 4, 0, 2048);
			tr_post_send(A(&w), IBV_WR_SEND, 4, 0, 100, 0, 0);
			RUN(&w);
			CHECK_EQ(tr_poll_cq(B(&w), true, &wc, 1), 0);
			CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DROP_BAD_QKEY), 1);
		}
		/* no receive WQE: dropped silently (UD has no RNR) */
		tr_fini(&w);
	}
}

static void
t_ud_no_recv_and_small_buffer(void)
{
	struct tr_opts o = {.type = IBV_QPT_UD};
	struct tr_wire w;

	tr_init(&w, &o);
	tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 100, 0, 0);
	RUN(&w);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_NO_RECV_WQE), 1);
	tr_post_recv(B(&w), 2, 0, 100); /* 40 + 100 does not fit */
	tr_post_recv(B(&w), 3, 0, 140);
	tr_post_send(A(&w), IBV_WR_SEND, 2, 0, 100, 0, 0);
	tr_post_send(A(&w), IBV_WR_SEND, 3, 0, 100, 0, 0);
	RUN(&w);
	expect_wc(B(&w), true, 2, IBV_WC_LOC_LEN_ERR, 0);
	expect_wc(B(&w), true, 3, IBV_WC_SUCCESS, IBV_WC_RECV);
	CHECK_EQ(roce_qp_state(B(&w)->qp), IBV_QPS_RTS);
	tr_fini(&w);
}

/* ---- addressing ---- */

static void
t_ipv6_vlan(void)
{
	struct tr_opts o = {.ipv6 = true, .vlan = true, .mtu = IBV_MTU_4096};
	struct tr_wire w;
	struct roce_pkt p;

	tr_init(&w, &o);
	w.capture_only = true;
	tr_fill(A(&w), 0, 10000, 14);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 10000, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	CHECK_EQ(roce_parse(w.q[TR_A].head->data, w.q[TR_A].head->len, &p, 0), 0);
	CHECK(p.l2.has_vlan);
	CHECK_EQ(net_vlan_vid(p.l2.vlan_tci), 100);
	CHECK_EQ(net_vlan_pcp(p.l2.vlan_tci), 3);
	CHECK_EQ(p.l3.version, 6);
	CHECK_EQ(net_tos_dscp(p.l3.tos), 26);
	CHECK_EQ(net_tos_ecn(p.l3.tos), NET_ECN_ECT0);
	CHECK(p.udp.sport >= 0xc000);
	CHECK_EQ(p.h.bth.dqpn, roce_qp_num(B(&w)->qp));
	w.capture_only = false;
	RUN(&w);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 10000);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	tr_fini(&w);
}

/* Frames for the wrong QP, partition, source or with a bad ICRC are counted and dropped. */
static void
t_dispatch_drops(void)
{
	struct tr_wire w;
	struct roce_pkt p;
	uint8_t f[2048];
	size_t len;

	tr_init(&w, NULL);
	w.capture_only = true;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 100, 0, 0);
	RUN(&w);
	len = w.q[TR_A].head->len;
	memcpy(f, w.q[TR_A].head->data, len);
	CHECK_EQ(roce_parse(f, len, &p, 0), 0);

	/* bad ICRC */
	f[len - 1] ^= 1;
	CHECK_EQ(roce_dev_rx(B(&w)->dev, f, len), ROCE_STAT_RX_DROP_ICRC);
	f[len - 1] ^= 1;
	/* wrong destination QP, and the GSI QP */
	p.h.bth.dqpn = 0x5555;
	CHECK(roce_build(f, sizeof(f), &p, NULL, p.payload_len, 0) > 0);
	CHECK_EQ(roce_dev_rx(B(&w)->dev, f, len), ROCE_STAT_RX_DROP_BAD_QPN);
	p.h.bth.dqpn = ROCE_GSI_QPN; /* QP1 takes it, and counts an RC opcode as its own drop */
	roce_build(f, sizeof(f), &p, NULL, p.payload_len, 0);
	CHECK_EQ(roce_dev_rx(B(&w)->dev, f, len), 0);
	{
		struct roce_gsi_stats gs;

		roce_gsi_stats(B(&w)->dev, &gs);
		CHECK_EQ(gs.rx_total, 1);
		CHECK_EQ(gs.drop[ROCE_GSI_DROP_BAD_OPCODE], 1);
	}
	/* another partition */
	p.h.bth.dqpn = roce_qp_num(B(&w)->qp);
	p.h.bth.pkey = 0x8001;
	roce_build(f, sizeof(f), &p, NULL, p.payload_len, 0);
	CHECK_EQ(roce_dev_rx(B(&w)->dev, f, len), ROCE_STAT_RX_DROP_BAD_PKEY);
	/* a limited member talking to a full member is fine: 0x7fff matches 0xffff */
	p.h.bth.pkey = 0x7fff;
	roce_build(f, sizeof(f), &p, NULL, p.payload_len, 0);
	CHECK_EQ(roce_dev_rx(B(&w)->dev, f, len), 0);
	/* a UC opcode for an RC QP */
	p.h.bth.pkey = 0xffff;
	p.h.bth.opcode = ROCE_OP_UC_BASE + ROCE_OP_WRITE_ONLY;
	roce_build(f, sizeof(f), &p, NULL, p.payload_len, 0);
	CHECK_EQ(roce_dev_rx(B(&w)->dev, f, len), ROCE_STAT_RX_DROP_BAD_TRANSPORT);
	/* another source address */
	p.h.bth.opcode = ROCE_OP_RC_BASE + ROCE_OP_WRITE_ONLY;
	p.l3.src[15] = 99;
	roce_build(f, sizeof(f), &p, NULL, p.payload_len, 0);
	CHECK_EQ(roce_dev_rx(B(&w)->dev, f, len), ROCE_STAT_RX_DROP_BAD_SRC);
	/* not our IP / MAC */
	p.l3.src[15] = A(&w)->gid.raw[15];
	p.l3.dst[15] = 99;
	roce_build(f, sizeof(f), &p, NULL, p.payload_len, 0);
	CHECK_EQ(roce_dev_rx(B(&w)->dev, f, len), ROCE_STAT_RX_DROP_NOT_FOR_US);
	p.l3.dst[15] = B(&w)->gid.raw[15];
	p.l2.dst[0] = 0x0a;
	roce_build(f, sizeof(f), &p, NULL, p.payload_len, 0);
	CHECK_EQ(roce_dev_rx(B(&w)->dev, f, len), ROCE_STAT_RX_DROP_NOT_FOR_US);
	/* truncated */
	CHECK_EQ(roce_dev_rx(B(&w)->dev, f, 30), ROCE_STAT_RX_DROP_MALFORMED);
	CHECK_EQ(roce_dev_parse_errors(B(&w)->dev, NET_E_TRUNC_IP), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DROP_ICRC), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DROP_BAD_QPN), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_DROP_BAD_PKEY), 1);
	tr_fini(&w);
}

/* ops->tx may refuse frames (a full ring): the engine keeps them and retries on poll. */
static void
t_tx_backpressure(void)
{
	struct tr_wire w;

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 50000, 15);
	A(&w)->refuse_tx = 3;
	B(&w)->refuse_tx = 2;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 50000, 0, IBV_SEND_SIGNALED);
	tr_post_send(A(&w), IBV_WR_RDMA_READ, 2, 100000, 20000, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, 50000);
	CHECK_MEM(A(&w)->buf + 100000, B(&w)->buf, 20000);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_TX_ERRORS) >= 3);
	tr_fini(&w);
}

/*
 * IBV_QP_RATE_LIMIT's catch-up (roce_req.c, REQ_PACE_CATCHUP_NS). A paced at
 * 10 Gb/s (one 1 KiB packet per 868 ns on the wire) sends a 12 MiB WRITE; no
 * frame is delivered and the clock moves only when the test moves it, so what
 * A sends at one instant is exactly what its pacer allows.
 *  - at the start: the 200 us burst (231 packets);
 *  - after its loop was away 3 ms with the WRITE waiting (descheduled): the
 *    3 ms it missed, at once (3456 packets); before the catch-up credit the
 *    burst only (231: the rate then fell by the time the scheduler took);
 *  - after 20 ms away: 5 ms, the cap (5761), not 20 ms.
 * Negative controls, each the 200 us burst, not 3 ms: a QP that ran out of
 * work and got a new WRITE 3 ms later (idle time earns no credit), and a QP
 * whose port was PFC-paused for 3 ms (ROCE_TX_PAUSED: a NIC's rate limiter
 * loses paused time too; a 5 ms burst after every XON would refill the
 * buffer the pause protected).
 */
static uint64_t
sent_now(struct tr_wire *w)
{
	uint64_t n = tr_dev_stat(A(w), ROCE_STAT_TX_REQ_PKTS), m;

	for (;;) {
		tr_poll(w);
		m = tr_dev_stat(A(w), ROCE_STAT_TX_REQ_PKTS);
		if (m == n)
			return n;
		n = m;
	}
}

static void
t_pace_catchup(void)
{
	const uint32_t npk = 12288, len = npk * 1024;
	const uint64_t gap = (1024 + 62) * 8000000ull / 10000000; /* ns a packet at 10 Gb/s */
	struct tr_opts o = {.buf_size = 2 * len,
			    .window = 2 * npk,
			    .no_loss_window = true,
			    .rto_fixed = true,
			    .timeout = 20};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS, .rate_limit = 10000000};
	struct tr_wire w;
	uint64_t s0, s1, s2;

	CHECK_EQ(gap, 868);
	tr_init(&w, &o);
	CHECK_EQ(roce_modify_qp(A(&w)->qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT), 0);
	tr_fill(A(&w), 0, len, 21);
	w.capture_only = true;
	w.now += 1000000000; /* past any pacing time the bring-up left */
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, len, 0, IBV_SEND_SIGNALED), 0);
	s0 = sent_now(&w);
	CHECK_EQ(s0, 200000 / gap + 1);
	w.now += 3000000; /* A's loop away 3 ms, the WRITE waiting */
	s1 = sent_now(&w);
	/* the pacing time stood s0 gaps after now - 200 us: all up to now + 3 ms goes */
	CHECK_EQ(s1 - s0, (3000000 - (s0 * gap - 200000)) / gap + 1);
	w.now += 20000000; /* away 20 ms: the catch-up stops at 5 ms */
	s2 = sent_now(&w);
	CHECK_EQ(s2 - s1, 5000000 / gap + 1);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_RATE_BLOCKED) >= 3);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
	w.capture_only = false;
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, len);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_REQ_PKTS), npk);

	/* negative control: out of work, then a new WRITE 3 ms later */
	w.now += 3000000;
	w.capture_only = true;
	s0 = tr_dev_stat(A(&w), ROCE_STAT_TX_REQ_PKTS);
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 2, 0, len, 0, IBV_SEND_SIGNALED), 0);
	s1 = sent_now(&w);
	CHECK_EQ(s1 - s0, 200000 / gap + 1);

	/* negative control: the same WRITE, its port paused 3 ms by PFC, then released */
	A(&w)->paused = true;
	w.now += 3000000;
	CHECK_EQ(sent_now(&w), s1);
	A(&w)->paused = false;
	s2 = sent_now(&w);
	CHECK_EQ(s2 - s1, 200000 / gap + 1);
	CHECK(tr_dev_stat(A(&w), ROCE_STAT_TX_ERRORS) > 0);
	w.capture_only = false;
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	CHECK_MEM(B(&w)->buf, A(&w)->buf, len);
	tr_fini(&w);
}

/* A congestion control that asks for a CNP on every CE mark, to test the plumbing. */
static unsigned int cnps_seen;

static bool
cc_test_on_ecn_ce(struct roce_qp *qp, void *priv, uint64_t now)
{
	(void)qp;
	(void)priv;
	(void)now;
	return true;
}

static void
cc_test_on_cnp(struct roce_qp *qp, void *priv, uint64_t now)
{
	(void)qp;
	(void)priv;
	(void)now;
	cnps_seen++;
}

static void
t_ecn_cnp(void)
{
	static struct roce_cc_ops test_cc;
	struct tr_opts o = {.cc = "test-cnp"};
	struct tr_wire w;

	test_cc = roce_cc_none;
	test_cc.name = "test-cnp";
	test_cc.on_ecn_ce = cc_test_on_ecn_ce;
	test_cc.on_cnp = cc_test_on_cnp;
	CHECK_EQ(roce_cc_register(&test_cc), 0);
	CHECK_EQ(roce_cc_register(&test_cc), -EEXIST);
	tr_init(&w, &o);
	tr_rule(&w, TR_A, TR_REQ, 0x101, TR_MARK_CE, 1);
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 5000, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_ECN_CE), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_CNPS), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RX_CNPS), 1);
	CHECK_EQ(cnps_seen, 1);
	tr_fini(&w);
}

/* ACKs: at once for AckReq, every ack_every packets, else after ack_delay_ns of quiet. */
static void
t_ack_coalescing(void)
{
	const struct roce_dev_cfg *cfg;
	struct tr_wire w;
	struct roce_pkt p;
	uint32_t n;

	tr_init(&w, NULL);
	cfg = roce_dev_config(B(&w)->dev);
	n = cfg->ack_every + 4;
	w.capture_only = true;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, (n + 1) * 1024, 0, IBV_SEND_SIGNALED);
	tr_run(&w, 1000);
	/* two packets without AckReq: no ACK yet, one after the delay */
	tr_deliver_one(&w, TR_A);
	tr_deliver_one(&w, TR_A);
	tr_poll(&w);
	CHECK_EQ(w.q[TR_B].count, 0);
	CHECK_EQ(roce_dev_next_deadline(B(&w)->dev), w.now + cfg->ack_delay_ns);
	w.now += cfg->ack_delay_ns;
	tr_poll(&w);
	CHECK_EQ(w.q[TR_B].count, 1);
	CHECK_EQ(roce_parse(w.q[TR_B].head->data, w.q[TR_B].head->len, &p, 0), 0);
	CHECK_EQ(p.h.bth.opcode, ROCE_OP_RC_BASE + ROCE_OP_ACK);
	CHECK_EQ(p.h.bth.psn, 0x101);
	CHECK_EQ(roce_aeth_type(p.h.aeth.syndrome), ROCE_AETH_ACK);
	tr_discard_one(&w, TR_B);
	/* ack_every packets: an ACK without waiting */
	for (uint32_t i = 0; i < cfg->ack_every; i++)
		tr_deliver_one(&w, TR_A);
	CHECK_EQ(w.q[TR_B].count, 1);
	roce_parse(w.q[TR_B].head->data, w.q[TR_B].head->len, &p, 0);
	CHECK_EQ(p.h.bth.psn, 0x101 + cfg->ack_every);
	tr_discard_one(&w, TR_B);
	/* the last packet asks for an ACK (AckReq) and gets one at once */
	while (w.q[TR_A].count > 1)
		tr_deliver_one(&w, TR_A);
	CHECK_EQ(w.q[TR_B].count, 0);
	roce_parse(w.q[TR_A].head->data, w.q[TR_A].head->len, &p, 0);
	CHECK_EQ(p.h.bth.ackreq, 1);
	tr_deliver_one(&w, TR_A);
	CHECK_EQ(w.q[TR_B].count, 1);
	w.capture_only = false;
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	tr_fini(&w);
}

/*
 * A message longer than the window asks for an ACK before the window fills
 * (every window / 2 packets): a responder that ACKs only on AckReq, like
 * Linux rxe, would otherwise leave every window to a retransmit timeout.
 */
static void
t_ackreq_within_window(void)
{
	struct tr_opts o = {.window = 8};
	struct tr_wire w;
	struct roce_pkt p;
	uint32_t i = 0, asked[8] = {0}, nasked = 0;

	tr_init(&w, &o);
	w.capture_only = true;
	tr_post_send(A(&w), IBV_WR_RDMA_WRITE, 1, 0, 64 * 1024, 0, IBV_SEND_SIGNALED);
	tr_run(&w, 1000);
	CHECK_EQ(w.q[TR_A].count, 8); /* the window */
	for (struct tr_frame *f = w.q[TR_A].head; f; f = f->next, i++) {
		CHECK_EQ(roce_parse(f->data, f->len, &p, 0), 0);
		if (p.h.bth.ackreq && nasked < 8)
			asked[nasked++] = i;
	}
	CHECK_EQ(nasked, 2);
	CHECK_EQ(asked[0], 3); /* the 4th and 8th packets of the middle of a message */
	CHECK_EQ(asked[1], 7);
	w.capture_only = false;
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TIMEOUTS), 0);
	tr_fini(&w);
}

/* A full CQ loses completions, counted; the QPs carry on. */
static void
t_cq_overflow(void)
{
	struct tr_opts o = {.cqe = 2};
	struct tr_wire w;
	struct ibv_wc wc[8];
	struct roce_stats st;

	tr_init(&w, &o);
	for (int i = 0; i < 5; i++)
		tr_post_send(A(&w), IBV_WR_RDMA_WRITE, (uint64_t)i, 0, 10, 0, IBV_SEND_SIGNALED);
	RUN(&w);
	CHECK_EQ(roce_cq_count(A(&w)->scq), 2);
	CHECK_EQ(tr_poll_cq(A(&w), false, wc, 8), 2);
	CHECK_EQ(wc[1].wr_id, 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_CQ_OVERFLOW), 3);
	roce_qp_stats(A(&w)->qp, &st);
	CHECK_EQ(st.v[ROCE_STAT_SEND_CQES], 5);
	CHECK_EQ(roce_qp_state(A(&w)->qp), IBV_QPS_RTS);
	tr_fini(&w);
}

/*
 * An out-of-sequence request the requester never sent (forged, or a stale copy)
 * reaches a responder that has everything: its NAK-PSN sequence error names the
 * responder's ePSN, which is the requester's next PSN, one past the last sent.
 * That NAK is valid (IBTA ch. 9.7): counted once at each end, nothing resent, no
 * bad response; the QP keeps working. A NAK one PSN further, and an ACK at the
 * next PSN, were never sent: bad responses (the live-QP netns test once counted
 * 513 of them for 512 forged frames: this NAK).
 */
static void
t_nak_seq_at_next_psn(void)
{
	struct tr_wire w;
	struct roce_pkt p;
	struct ibv_wc wc;
	uint8_t req[2048], nak[2048];
	size_t rlen, nlen;
	uint32_t psn;

	tr_init(&w, NULL);
	tr_fill(A(&w), 0, 100, 3);
	CHECK_EQ(tr_post_recv(B(&w), 1, 4096, 1000), 0);
	CHECK_EQ(tr_post_recv(B(&w), 2, 8192, 1000), 0);
	w.capture_only = true;
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_SEND, 1, 0, 100, 0, IBV_SEND_SIGNALED), 0);
	tr_run(&w, 1000);
	CHECK_EQ(w.q[TR_A].count, 1);
	rlen = w.q[TR_A].head->len;
	memcpy(req, w.q[TR_A].head->data, rlen);
	w.capture_only = false;
	RUN(&w);
	expect_wc(A(&w), false, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(B(&w), true, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	/* a copy of that request moved 2^22 PSNs ahead: out of sequence at B */
	CHECK_EQ(roce_parse(req, rlen, &p, ROCE_PARSE_NO_ICRC), 0);
	psn = p.h.bth.psn;
	net_put_be24(req + p.bth_off + 9, (psn + 0x400000) & 0xffffff);
	roce_icrc_update(req, &p);
	w.capture_only = true;
	roce_dev_rx(B(&w)->dev, req, rlen);
	tr_run(&w, 1000);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_OOS), 1);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_TX_NAK_SEQ), 1);
	CHECK_EQ(w.q[TR_B].count, 1);
	nlen = w.q[TR_B].head->len;
	memcpy(nak, w.q[TR_B].head->data, nlen);
	CHECK_EQ(roce_parse(nak, nlen, &p, ROCE_PARSE_NO_ICRC), 0);
	CHECK_EQ(p.h.bth.psn, (psn + 1) & 0xffffff); /* B's ePSN = A's next PSN */
	w.capture_only = false;
	RUN(&w);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RX_NAK_SEQ), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RX_BAD_RESP), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RETRIES), 0);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
	CHECK_EQ(roce_qp_state(A(&w)->qp), IBV_QPS_RTS);
	/* the same NAK one PSN further, and an ACK at the next PSN: never sent */
	net_put_be24(nak + p.bth_off + 9, (psn + 2) & 0xffffff);
	roce_icrc_update(nak, &p);
	roce_dev_rx(A(&w)->dev, nak, nlen);
	net_put_be24(nak + p.bth_off + 9, (psn + 1) & 0xffffff);
	nak[p.bth_off + ROCE_BTH_LEN] = 0x1f; /* AETH syndrome: ACK, credits invalid */
	roce_icrc_update(nak, &p);
	roce_dev_rx(A(&w)->dev, nak, nlen);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RX_BAD_RESP), 2);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_RX_NAK_SEQ), 1);
	/* the QP still works: the next SEND is the PSN B expects, accepted in order */
	tr_fill(A(&w), 0, 100, 4);
	CHECK_EQ(tr_post_send(A(&w), IBV_WR_SEND, 2, 0, 100, 0, IBV_SEND_SIGNALED), 0);
	RUN(&w);
	expect_wc(A(&w), false, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	CHECK_EQ(tr_poll_cq(B(&w), true, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, 2);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_MEM(B(&w)->buf + 8192, A(&w)->buf, 100);
	CHECK_EQ(tr_dev_stat(B(&w), ROCE_STAT_RX_OOS), 1);
	CHECK_EQ(tr_dev_stat(A(&w), ROCE_STAT_TX_RETX_PKTS), 0);
	tr_fini(&w);
}

static void
t_stat_names(void)
{
	for (int i = 0; i < ROCE_STAT__COUNT; i++) {
		CHECK(roce_stat_name((enum roce_stat)i) != NULL);
		CHECK(roce_stat_desc((enum roce_stat)i) != NULL);
	}
	CHECK(roce_stat_name(ROCE_STAT__COUNT) == NULL);
	CHECK(strcmp(roce_stat_name(ROCE_STAT_TX_PKTS), "tx_packets") == 0);
	CHECK(strcmp(roce_wc_status_str(IBV_WC_RETRY_EXC_ERR), "IBV_WC_RETRY_EXC_ERR") == 0);
}

RW_TEST_MAIN(RW_TEST(t_send_recv), RW_TEST(t_write_read), RW_TEST(t_segmentation_each_mtu),
	     RW_TEST(t_pad), RW_TEST(t_immediate), RW_TEST(t_multi_sge), RW_TEST(t_inline),
	     RW_TEST(t_atomics), RW_TEST(t_signaling), RW_TEST(t_solicited_event),
	     RW_TEST(t_fence_and_rd_atomic_limit), RW_TEST(t_remote_access_errors),
	     RW_TEST(t_recv_too_small), RW_TEST(t_rnr_then_recv), RW_TEST(t_rnr_retry_exhausted),
	     RW_TEST(t_qp_state_machine), RW_TEST(t_first_qpn), RW_TEST(t_modify_err_flushes),
	     RW_TEST(t_sqd_drains), RW_TEST(t_uc), RW_TEST(t_ud),
	     RW_TEST(t_ud_no_recv_and_small_buffer), RW_TEST(t_ipv6_vlan),
	     RW_TEST(t_dispatch_drops), RW_TEST(t_tx_backpressure), RW_TEST(t_pace_catchup),
	     RW_TEST(t_ecn_cnp), RW_TEST(t_ack_coalescing), RW_TEST(t_ackreq_within_window),
	     RW_TEST(t_cq_overflow), RW_TEST(t_nak_seq_at_next_psn), RW_TEST(t_stat_names))
