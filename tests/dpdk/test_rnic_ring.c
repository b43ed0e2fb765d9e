/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two rnic data paths (app/rnic: the core and its DPDK shell, + the lib/roce engine) in one
 * process, on two net_ring ports. Between them the test is the wire: it moves
 * frames from A's TX ring to B's RX ring and back, and can drop chosen frames.
 * Checks ARP resolution, ICMP echo, and RC WRITE/SEND/READ/atomics with and
 * without loss, comparing the transferred buffers.
 */
#include <arpa/inet.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>

#include "dp_port.h"
#include "net_bytes.h"
#include "rnic_port.h"
#include "roce_pkt.h"
#include "rw_test.h"

struct side {
	struct rnic_port port;
	struct rte_ring *rx, *tx; /* the port's own RX and TX rings */
	struct roce_pd *pd;
	struct roce_cq *cq;
	struct roce_qp *qp;
	struct roce_mr *mr;
	uint8_t *buf;
};

static struct side A, B;
static struct rte_mempool *pool;
static uint64_t wire_frames, wire_dropped;
static unsigned drop_every; /* drop every Nth RoCE frame A -> B (0: none) */

#define BUF_SIZE (1u << 20)

/* Move frames src.tx -> dst.rx, dropping some RoCE frames on the A->B direction. */
static unsigned
shuttle(struct side *src, struct side *dst, bool lossy)
{
	struct rte_mbuf *m[64];
	unsigned n = rte_ring_dequeue_burst(src->tx, (void **)m, 64, NULL), kept = 0;

	for (unsigned i = 0; i < n; i++) {
		struct roce_pkt p;
		wire_frames++;
		if (lossy && drop_every &&
		    roce_parse(rte_pktmbuf_mtod(m[i], uint8_t *), m[i]->data_len, &p,
			       ROCE_PARSE_NO_ICRC) == 0 &&
		    wire_frames % drop_every == 0) {
			wire_dropped++;
			rte_pktmbuf_free(m[i]);
			continue;
		}
		m[kept++] = m[i];
	}
	unsigned q = rte_ring_enqueue_burst(dst->rx, (void **)m, kept, NULL);
	if (q < kept)
		rte_pktmbuf_free_bulk(m + q, kept - q);
	return n;
}

static unsigned
run_once(void)
{
	unsigned w = rnic_port_poll(&A.port) + rnic_port_poll(&B.port);
	w += shuttle(&A, &B, true) + shuttle(&B, &A, false);
	return w;
}

static int
make_side(struct side *s, const char *name, uint32_t ip, uint8_t last)
{
	char rn[32], err[256];
	struct dp_port_cfg cfg = {.nb_rxd = 1024, .nb_txd = 1024, .pool = pool};
	struct dp_port_info info;
	struct roce_dev_cfg dc;
	int id;

	snprintf(rn, sizeof(rn), "%s_rx", name);
	s->rx = rte_ring_create(rn, 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(rn, sizeof(rn), "%s_tx", name);
	s->tx = rte_ring_create(rn, 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!s->rx || !s->tx)
		return -1;
	id = rte_eth_from_rings(name, &s->rx, 1, &s->tx, 1, 0);
	if (id < 0)
		return -1;
	cfg.port_id = (uint16_t)id;
	if (dp_port_start(&cfg, &info, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	memset(&s->port, 0, sizeof(s->port));
	s->port.port_id = (uint16_t)id;
	s->port.pool = pool;
	s->port.ip = ip;
	s->port.prefix = 24;
	s->port.vlan_tci = -1;
	uint8_t mac[6] = {0x02, 0, 0, 0, 0, last};
	memcpy(s->port.mac, mac, 6);
	net_neigh_init(&s->port.neigh);
	roce_dev_cfg_init(&dc);
	memcpy(dc.mac, mac, 6);
	net_ip4_to_mapped(ip, dc.gid[0].raw);
	dc.gid_count = 1;
	dc.mtu = 1024;
	s->port.dev = roce_dev_create(&dc, &rnic_port_ops, &s->port);
	if (!s->port.dev)
		return -1;
	s->pd = roce_pd_alloc(s->port.dev);
	s->cq = roce_create_cq(s->port.dev, 4096);
	s->buf = aligned_alloc(4096, BUF_SIZE);
	memset(s->buf, 0, BUF_SIZE);
	s->mr = roce_reg_mr(s->pd, s->buf, BUF_SIZE,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	struct ibv_qp_init_attr ia = {
	    .send_cq = roce_cq_ibv(s->cq),
	    .recv_cq = roce_cq_ibv(s->cq),
	    .cap = {.max_send_wr = 1024, .max_recv_wr = 1024, .max_send_sge = 4, .max_recv_sge = 4},
	    .qp_type = IBV_QPT_RC};
	s->qp = roce_create_qp(s->pd, &ia);
	return (s->pd && s->cq && s->mr && s->qp) ? 0 : -1;
}

static int
connect_qp(struct side *s, struct side *peer, uint8_t peer_mac[6])
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags =
	    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (roce_modify_qp(s->qp, &a,
			   IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = roce_qp_num(peer->qp);
	a.rq_psn = 1000;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	net_ip4_to_mapped(peer->port.ip, a.ah_attr.grh.dgid.raw);
	a.ah_attr.grh.hop_limit = 64;
	if (roce_modify_qp(s->qp, &a,
			   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	if (roce_qp_set_remote_mac(s->qp, peer_mac))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1000;
	a.timeout = 10; /* 4 ms */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	return roce_modify_qp(s->qp, &a,
			      IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Poll both sides until @p cq has @p n completions or 5 s pass. */
static int
wait_wc(struct side *s, int n, struct ibv_wc *wc)
{
	int got = 0;
	/*
	 * A hang guard, not a timing claim: a run takes ~0.4 s alone, and a
	 * loaded 2-core host stretched it past the old 5 s guard ("3 != 4").
	 */
	uint64_t end = rte_get_tsc_cycles() + 120 * rte_get_tsc_hz();

	while (got < n && rte_get_tsc_cycles() < end) {
		got += roce_poll_cq(s->cq, n - got, wc + got);
		if (run_once() == 0)
			rte_delay_us_sleep(50);
	}
	return got;
}

static void
test_setup_and_arp(void)
{
	char *eal[] = {"test_rnic_ring",
		       "--no-huge",
		       "-m",
		       "512",
		       "--no-shconf",
		       "--no-pci",
		       "--log-level=lib.eal:error",
		       NULL};
	char err[256];
	uint8_t mac_a[6], mac_b[6];

	CHECK_EQ(rte_eal_init(7, eal) >= 0, 1);
	pool = dp_pool_create("rnic_test", 16384, 2048, err, sizeof(err));
	CHECK(pool != NULL);
	CHECK_EQ(make_side(&A, "rnic_a", 0x0a000001, 1), 0);
	CHECK_EQ(make_side(&B, "rnic_b", 0x0a000002, 2), 0);
	/* resolve each other by ARP across the test's wire */
	uint64_t end = rte_get_tsc_cycles() + 60 * rte_get_tsc_hz(); /* a hang guard */
	bool a_ok = false, b_ok = false;
	while ((!a_ok || !b_ok) && rte_get_tsc_cycles() < end) {
		if (!a_ok && rnic_port_resolve(&A.port, B.port.ip, mac_b, 1) == 0)
			a_ok = true;
		if (!b_ok && rnic_port_resolve(&B.port, A.port.ip, mac_a, 1) == 0)
			b_ok = true;
		run_once();
	}
	CHECK(a_ok && b_ok);
	CHECK_EQ(mac_b[5], 2);
	CHECK_EQ(mac_a[5], 1);
	CHECK(A.port.cnt.arp_requests_sent > 0);
	CHECK(B.port.cnt.rx_arp_req > 0);
	CHECK_EQ(connect_qp(&A, &B, mac_b), 0);
	CHECK_EQ(connect_qp(&B, &A, mac_a), 0);
	CHECK_EQ(roce_qp_state(A.qp), IBV_QPS_RTS);
}

static void
test_icmp_echo(void)
{
	/* a ping from a fake host to B's address is answered through the ring */
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool), *r[4];
	uint8_t *f = (uint8_t *)rte_pktmbuf_append(m, 14 + 20 + 16);
	struct net_l2 l2 = {.ethertype = NET_ETHERTYPE_IPV4};
	struct net_l3 l3 = {.version = 4, .ttl = 64, .proto = 1, .payload_len = 16};

	CHECK(f != NULL);
	if (!f)
		return;

	memcpy(l2.dst, B.port.mac, 6);
	l2.src[0] = 2, l2.src[5] = 0x99;
	net_l2_build(f, 14, &l2);
	net_ip4_to_mapped(0x0a0000fe, l3.src);
	net_ip4_to_mapped(B.port.ip, l3.dst);
	net_l3_build(f + 14, 20, &l3);
	memset(f + 34, 0, 16);
	f[34] = 8;
	net_put_be16(f + 36, net_csum_fold(net_csum_partial(f + 34, 16, 0)));
	CHECK_EQ(rte_ring_enqueue(B.rx, m), 0);
	rnic_port_poll(&B.port);
	unsigned n = rte_ring_dequeue_burst(B.tx, (void **)r, 4, NULL), replies = 0;
	for (unsigned i = 0; i < n; i++) {
		uint8_t *o = rte_pktmbuf_mtod(r[i], uint8_t *);
		/* other frames (a delayed ACK) may share the ring */
		if (net_get_be16(o + 12) == NET_ETHERTYPE_IPV4 && o[23] == 1) {
			CHECK_EQ(o[34], 0); /* echo reply */
			CHECK_EQ(o[5], 0x99);
			replies++;
		}
		rte_pktmbuf_free(r[i]);
	}
	CHECK_EQ(replies, 1);
	CHECK_EQ(B.port.cnt.rx_icmp_echo, 1);
}

static void
fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 2654435761u + seed) >> 13);
}

static void
do_write(size_t len, int count)
{
	struct ibv_wc wc[256];
	struct ibv_sge sge = {
	    .addr = (uintptr_t)A.buf, .length = (uint32_t)len, .lkey = A.mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	fill(A.buf, len, (uint32_t)len);
	memset(B.buf, 0, len);
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf;
	wr.wr.rdma.rkey = B.mr->rkey;
	for (int i = 0; i < count; i++) {
		wr.wr_id = (uint64_t)i;
		CHECK_EQ(roce_post_send(A.qp, &wr, &bad), 0);
	}
	int got = wait_wc(&A, count, wc);
	CHECK_EQ(got, count);
	for (int i = 0; i < got; i++)
		CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
	CHECK_MEM(B.buf, A.buf, len);
}

static void
test_write(void)
{
	do_write(1, 1);
	do_write(4096, 4);
	do_write(65536, 8);
	do_write(BUF_SIZE, 2);
}

static void
test_write_with_loss(void)
{
	struct roce_stats st;

	drop_every = 37;
	wire_dropped = 0;
	do_write(BUF_SIZE, 4);
	drop_every = 0;
	CHECK(wire_dropped > 10);
	roce_qp_stats(A.qp, &st);
	CHECK(st.v[ROCE_STAT_TX_RETX_PKTS] > 0);
	printf("loss: %llu frames dropped on the wire, %llu retransmitted\n",
	       (unsigned long long)wire_dropped, (unsigned long long)st.v[ROCE_STAT_TX_RETX_PKTS]);
}

static void
test_send_recv(void)
{
	struct ibv_wc wc[8];
	struct ibv_sge ss = {.addr = (uintptr_t)A.buf, .length = 10000, .lkey = A.mr->lkey};
	struct ibv_sge rs = {.addr = (uintptr_t)B.buf + 65536, .length = 16384, .lkey = B.mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 77, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_send_wr swr = {.wr_id = 5,
				  .sg_list = &ss,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(0xabcd)},
			   *sbad;

	fill(A.buf, 10000, 99);
	CHECK_EQ(roce_post_recv(B.qp, &rwr, &rbad), 0);
	CHECK_EQ(roce_post_send(A.qp, &swr, &sbad), 0);
	CHECK_EQ(wait_wc(&A, 1, wc), 1);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK_EQ(wait_wc(&B, 1, wc), 1);
	CHECK_EQ(wc[0].wr_id, 77);
	CHECK_EQ(wc[0].byte_len, 10000);
	CHECK(wc[0].wc_flags & IBV_WC_WITH_IMM);
	CHECK_EQ(ntohl(wc[0].imm_data), 0xabcd);
	CHECK_MEM(B.buf + 65536, A.buf, 10000);
}

static void
test_read_and_atomics(void)
{
	struct ibv_wc wc[4];
	struct ibv_sge sge = {.addr = (uintptr_t)A.buf, .length = 200000, .lkey = A.mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 1,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_READ,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	fill(B.buf, 200000, 7);
	memset(A.buf, 0, 200000);
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf;
	wr.wr.rdma.rkey = B.mr->rkey;
	CHECK_EQ(roce_post_send(A.qp, &wr, &bad), 0);
	CHECK_EQ(wait_wc(&A, 1, wc), 1);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK_MEM(A.buf, B.buf, 200000);

	uint64_t *remote = (uint64_t *)(B.buf + 8192);
	*remote = 40;
	sge.length = 8;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = (uintptr_t)remote;
	wr.wr.atomic.rkey = B.mr->rkey;
	wr.wr.atomic.compare_add = 2;
	CHECK_EQ(roce_post_send(A.qp, &wr, &bad), 0);
	CHECK_EQ(wait_wc(&A, 1, wc), 1);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK_EQ(*(uint64_t *)A.buf, 40);
	CHECK_EQ(*remote, 42);
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 42;
	wr.wr.atomic.swap = 1000;
	CHECK_EQ(roce_post_send(A.qp, &wr, &bad), 0);
	CHECK_EQ(wait_wc(&A, 1, wc), 1);
	CHECK_EQ(*remote, 1000);
}

static void
test_bad_rkey(void)
{
	struct ibv_wc wc[2];
	struct ibv_sge sge = {.addr = (uintptr_t)A.buf, .length = 64, .lkey = A.mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 9,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	uint8_t before[64];

	memcpy(before, B.buf + BUF_SIZE - 64, 64);
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf + BUF_SIZE - 32; /* runs past the MR */
	wr.wr.rdma.rkey = B.mr->rkey;
	CHECK_EQ(roce_post_send(A.qp, &wr, &bad), 0);
	CHECK_EQ(wait_wc(&A, 1, wc), 1);
	CHECK_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
	CHECK_MEM(B.buf + BUF_SIZE - 64, before, 64);
}

/*
 * A full TX ring pushes back on the engine instead of dropping. A's
 * TX ring is filled with placeholder frames, leaving 8 slots, then A sends a
 * 1 MiB WRITE (1024 packets at MTU 1024) and is polled alone: the ring takes
 * 8 frames, the batch fills, and the engine is told to hold its packets. Once
 * the placeholders are taken off, the transfer completes byte-exact and not a
 * single frame was dropped by the rnic.
 */
static void
test_tx_ring_full_backpressure(void)
{
	enum { ROOM = 8 };
	struct ibv_wc wc[4];
	struct ibv_sge sge = {.addr = (uintptr_t)A.buf, .length = BUF_SIZE, .lkey = A.mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 3,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	unsigned int cap = rte_ring_get_capacity(A.tx), filler = cap - ROOM;
	struct rte_mbuf **ph = calloc(filler, sizeof(*ph));
	uint64_t drop0 = A.port.cnt.tx_drop_full, held0 = A.port.cnt.tx_ring_held;
	uint64_t full0 = A.port.cnt.tx_ring_full;
	struct roce_stats st0, st;

	CHECK(ph != NULL);
	if (!ph)
		return;
	/* the wire is idle: nothing is left in A's TX ring from the earlier tests */
	while (run_once())
		;
	CHECK_EQ(rte_ring_count(A.tx), 0);
	CHECK_EQ(rte_pktmbuf_alloc_bulk(pool, ph, filler), 0);
	CHECK_EQ(rte_ring_enqueue_bulk(A.tx, (void **)ph, filler, NULL), filler);
	roce_qp_stats(A.qp, &st0);

	fill(A.buf, BUF_SIZE, 1234);
	memset(B.buf, 0, BUF_SIZE);
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf;
	wr.wr.rdma.rkey = B.mr->rkey;
	CHECK_EQ(roce_post_send(A.qp, &wr, &bad), 0);
	for (int i = 0; i < 20; i++)
		rnic_port_poll(&A.port);
	/* exactly ROOM frames reached the ring; a full batch waits; the engine holds the rest */
	CHECK_EQ(rte_ring_count(A.tx), cap);
	CHECK_EQ(A.port.ntx, RNIC_BURST);
	CHECK(A.port.cnt.tx_ring_held > held0);
	CHECK(A.port.cnt.tx_ring_full > full0);
	CHECK_EQ(A.port.cnt.tx_drop_full, drop0);
	roce_qp_stats(A.qp, &st);
	CHECK_EQ(st.v[ROCE_STAT_TX_REQ_PKTS] - st0.v[ROCE_STAT_TX_REQ_PKTS], ROOM + RNIC_BURST);

	/* the placeholders leave first (FIFO), then the wire runs again */
	CHECK_EQ(rte_ring_dequeue_bulk(A.tx, (void **)ph, filler, NULL), filler);
	rte_pktmbuf_free_bulk(ph, filler);
	free(ph);
	CHECK_EQ(wait_wc(&A, 1, wc), 1);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK_MEM(B.buf, A.buf, BUF_SIZE);
	CHECK_EQ(A.port.cnt.tx_drop_full, drop0);
	roce_qp_stats(A.qp, &st);
	/* every packet of the message went out at least once, none was lost by the rnic */
	CHECK_EQ(st.v[ROCE_STAT_TX_REQ_PKTS] - st0.v[ROCE_STAT_TX_REQ_PKTS], BUF_SIZE / 1024);
	printf("back-pressure: %llu holds, %llu partial flushes, %llu retransmissions\n",
	       (unsigned long long)(A.port.cnt.tx_ring_held - held0),
	       (unsigned long long)(A.port.cnt.tx_ring_full - full0),
	       (unsigned long long)(st.v[ROCE_STAT_TX_RETX_PKTS] - st0.v[ROCE_STAT_TX_RETX_PKTS]));
}

RW_TEST_MAIN(RW_TEST(test_setup_and_arp), RW_TEST(test_write), RW_TEST(test_icmp_echo),
	     RW_TEST(test_tx_ring_full_backpressure), RW_TEST(test_write_with_loss),
	     RW_TEST(test_send_recv), RW_TEST(test_read_and_atomics), RW_TEST(test_bad_rkey))
