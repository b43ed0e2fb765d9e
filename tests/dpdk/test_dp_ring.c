/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK data-path test: two ports made from rings and wired crosswise (A's TX is
 * B's RX and the other way round), brought up by lib/dpdk's dp_port_start.
 * RoCEv2 frames built into mbufs by the adapter cross and parse back intact,
 * PFC frames cross, and the idle back-off sleeps only when idle.
 */
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>

#include "dp_port.h"
#include "pfc.h"
#include "roce_mbuf.h"
#include "rw_test.h"

static uint16_t port_a, port_b;
static struct rte_mempool *pool;

static void
fill(struct roce_pkt *p, uint32_t psn)
{
	memset(p, 0, sizeof(*p));
	p->l2.src[0] = 2, p->l2.dst[0] = 2, p->l2.dst[5] = 1;
	p->l3.version = 4;
	p->l3.ttl = 64;
	net_ip4_to_mapped(0x0a000001, p->l3.src);
	net_ip4_to_mapped(0x0a000002, p->l3.dst);
	p->udp.sport = roce_udp_sport(0x11, 0x12);
	p->h.bth.opcode = ROCE_OP_RC_BASE + ROCE_OP_WRITE_ONLY;
	p->h.bth.pkey = 0xffff;
	p->h.bth.dqpn = 0x12;
	p->h.bth.psn = psn;
	p->h.reth = (struct roce_reth){0x1000, 7, 1000};
}

static void
test_roce_over_ring(void)
{
	enum { N = 64 };
	struct rte_mbuf *tx[N], *rx[N];
	struct roce_pkt p, q;
	uint8_t payload[1000];
	unsigned got = 0, good = 0;

	for (int i = 0; i < N; i++) {
		tx[i] = rte_pktmbuf_alloc(pool);
		CHECK(tx[i] != NULL);
		memset(payload, i, sizeof(payload));
		fill(&p, 100 + (uint32_t)i);
		CHECK(roce_mbuf_build(tx[i], &p, payload, sizeof(payload), 0) > 0);
	}
	CHECK_EQ(rte_eth_tx_burst(port_a, 0, tx, N), N);
	for (int tries = 0; tries < 100 && got < N; tries++)
		got += rte_eth_rx_burst(port_b, 0, rx + got, (uint16_t)(N - got));
	CHECK_EQ(got, N);
	for (unsigned i = 0; i < got; i++) {
		if (roce_mbuf_parse(rx[i], &q, 0) == 0 && q.h.bth.psn == 100 + i &&
		    rte_pktmbuf_mtod(rx[i], uint8_t *)[q.payload_off + 999] == (uint8_t)i)
			good++;
		rte_pktmbuf_free(rx[i]);
	}
	CHECK_EQ(good, N);
	/* nothing leaks into the other direction */
	CHECK_EQ(rte_eth_rx_burst(port_a, 0, rx, N), 0);
}

static void
test_pfc_over_ring(void)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool), *r = NULL;
	uint16_t quanta[8] = {0, 0, 0, 0xffff};
	struct pfc_frame f;
	uint8_t src[6] = {2, 0, 0, 0, 0, 9};
	int n;

	n = pfc_build(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m), src, 1 << 3, quanta);
	CHECK_EQ(n, 60);
	m->data_len = m->pkt_len = (uint32_t)n;
	CHECK_EQ(rte_eth_tx_burst(port_b, 0, &m, 1), 1);
	CHECK_EQ(rte_eth_rx_burst(port_a, 0, &r, 1), 1);
	if (!r)
		return;
	CHECK_EQ(pfc_parse(rte_pktmbuf_mtod(r, uint8_t *), rte_pktmbuf_data_len(r), &f), 0);
	CHECK_EQ(f.enable, 1 << 3);
	CHECK_EQ(f.quanta[3], 0xffff);
	rte_pktmbuf_free(r);
}

static void
test_chained_mbuf_refused(void)
{
	struct rte_mbuf *a = rte_pktmbuf_alloc(pool), *b = rte_pktmbuf_alloc(pool);
	struct roce_pkt q;

	rte_pktmbuf_append(a, 64);
	rte_pktmbuf_append(b, 64);
	CHECK_EQ(rte_pktmbuf_chain(a, b), 0);
	CHECK_EQ(roce_mbuf_parse(a, &q, 0), -NET_E_INVAL);
	rte_pktmbuf_free(a);
}

static void
test_backoff(void)
{
	struct dp_backoff b;

	dp_backoff_init(&b, false);
	for (int i = 0; i < 200; i++)
		dp_backoff_step(&b, 0);
	CHECK(b.sleeps > 0);
	CHECK_EQ(b.sleep_us, b.max_us); /* grew to the cap while idle */
	dp_backoff_step(&b, 5);
	CHECK_EQ(b.sleep_us, b.min_us);
	CHECK_EQ(b.idle, 0);
	dp_backoff_init(&b, true);
	for (int i = 0; i < 200; i++)
		dp_backoff_step(&b, 0);
	CHECK_EQ(b.sleeps, 0); /* --busy-poll never sleeps */
}

static void
test_bad_port(void)
{
	struct dp_port_cfg cfg = {.port_id = 77, .pool = pool};
	struct dp_port_info info;
	char err[256] = "";

	CHECK_EQ(dp_port_start(&cfg, &info, err, sizeof(err)), -ENODEV);
	CHECK(strstr(err, "port 77 does not exist") != NULL);
}

static int
setup(void)
{
	char *eal[] = {"test_dp_ring",
		       "--no-huge",
		       "-m",
		       "256",
		       "--no-shconf",
		       "--no-pci",
		       "--log-level=lib.eal:error",
		       NULL};
	struct rte_ring *r1, *r2;
	struct dp_port_cfg cfg = {.nb_rxd = 512, .nb_txd = 512};
	struct dp_port_info info;
	char err[256];

	if (rte_eal_init(7, eal) < 0) {
		fprintf(stderr, "EAL init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	pool = dp_pool_create("test", 4096, 2048, err, sizeof(err));
	r1 = rte_ring_create("a2b", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	r2 = rte_ring_create("b2a", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!pool || !r1 || !r2)
		return -1;
	/* A receives from b2a and sends into a2b; B the other way round */
	int a = rte_eth_from_rings("ring_a", &r2, 1, &r1, 1, 0);
	int b = rte_eth_from_rings("ring_b", &r1, 1, &r2, 1, 0);
	if (a < 0 || b < 0)
		return -1;
	port_a = (uint16_t)a, port_b = (uint16_t)b;
	cfg.pool = pool;
	cfg.port_id = port_a;
	if (dp_port_start(&cfg, &info, err, sizeof(err)) < 0)
		return fprintf(stderr, "%s\n", err), -1;
	cfg.port_id = port_b;
	if (dp_port_start(&cfg, &info, err, sizeof(err)) < 0)
		return fprintf(stderr, "%s\n", err), -1;
	printf("ports %u (%s) and %u (%s) up, driver %s\n", port_a, "ring_a", port_b, "ring_b",
	       info.driver);
	return 0;
}

static void
test_setup(void)
{
	CHECK_EQ(setup(), 0);
}

RW_TEST_MAIN(RW_TEST(test_setup), RW_TEST(test_roce_over_ring), RW_TEST(test_pfc_over_ring),
	     RW_TEST(test_chained_mbuf_refused), RW_TEST(test_backoff), RW_TEST(test_bad_port))
