/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests: the shared bottleneck of lossy-emu --workers N (emu_bneck.h) with an
 * injected clock. One deterministic input (arrival time, length, ECN, flow), admitted
 * by one worker and by N workers (each flow on one worker, each worker admitting its
 * frames in bursts under the lock, the queue advanced only by worker 0), must give
 * the same verdict and departure time for every packet, the same PFC frames (time
 * and quanta) and the same counters. The negative control runs one private queue per
 * worker (what N copies of the one-worker path would do) and must differ. Also the
 * software spread's 5-tuple hash (emu_spread.h) and N threads admitting at once.
 */
#include <pthread.h>
#include <string.h>

#include "emu_bneck.h"
#include "emu_rng.h"
#include "emu_spread.h"
#include "net_frame.h"
#include "rw_test.h"

#define NPKT 6000
#define NFLOW 8
#define MAXW 4
#define MAXEV 4096

struct arrival {
	uint64_t t;
	uint32_t len;
	uint8_t ecn;
	uint8_t flow;
};
struct outcome {
	uint8_t verdict[NPKT];
	uint64_t dep[NPKT];
	uint64_t ev_t[MAXEV]; /**< XOFF and refreshes: the decision time; XON: 0 */
	uint64_t ev_b[MAXEV]; /**< the backlog when the frame was decided */
	uint16_t ev_q[MAXEV];
	uint32_t nev;
	const struct emu_bneck *cur; /**< the queue the next PFC frame comes from */
	struct emu_counters ec;
	uint64_t max_bytes, xoff_at, xon_at;
};

static struct arrival in[NPKT];

/* Bursts above the rate, then gaps: the queue fills, marks, pauses and drains. */
static void
make_input(void)
{
	struct emu_rng r;
	uint64_t t = 1000;

	emu_rng_seed(&r, 42, 0);
	for (int i = 0; i < NPKT; i++) {
		uint64_t x = emu_rng_u64(&r);

		/* 1 Gbit/s link, frames 64..1500 B every 0..800 ns in bursts of 300 (about
		 * twice the rate), then 1.5 ms of silence: the queue fills and drains */
		t += (x & 0x3ff) * 800 / 1024 + ((i % 300) == 299 ? 1500000 : 0);
		in[i].t = t;
		in[i].len = 64 + (uint32_t)((x >> 12) % 1437);
		in[i].ecn = (x >> 24) % 4 == 0 ? 0 : 2; /* a quarter not ECT */
		in[i].flow = (uint8_t)((x >> 32) % NFLOW);
	}
}

/* 1 Gbit/s, 200 kB; RED 20..120 kB up to 20 %; PFC XOFF at 150 kB, XON at 60 kB, sent
 * on a 100 Gbit/s port (0xffff quanta = 336 us: a refresh every 168 us of a pause) */
static const struct emu_shaper_params qp = {.rate_bps = 1000000000, .limit_bytes = 200000};
static const struct emu_red_params rp = {
    .enabled = true, .kmin_bytes = 20000, .kmax_bytes = 120000, .pmax = 0.2};
static const struct emu_pfcgen_params pp = {
    .enabled = true, .xoff_bytes = 150000, .xon_bytes = 60000, .prio = 3, .link_bps = 100000000000};

static void
record(void *ctx, const struct emu_pfc_action *a)
{
	struct outcome *o = ctx;

	if (o->nev < MAXEV) {
		o->ev_q[o->nev] = a->quanta;
		o->ev_t[o->nev] = a->quanta ? o->cur->pfc.gen.last_xoff_ns : 0;
		o->ev_b[o->nev] = o->cur->q.q_bytes;
		o->nev++;
	}
}

/*
 * Run the input through @p nq queues (1: the shared one; nq == nw > 1: the negative
 * control, a private queue per worker) with @p nw workers. Worker w takes the flows f
 * with f % nw == w and admits its frames in arrival order, each at its arrival time
 * (the injected clock), taking the lock once per run of up to 32 consecutive frames
 * of its own (a burst). Worker 0 also advances every queue every @p poll_ns ns, at
 * the time of its poll, between the admissions due before and after it.
 */
static void
run(struct outcome *o, unsigned nw, unsigned nq, uint64_t poll_ns)
{
	struct emu_bneck b[MAXW];
	uint64_t poll = poll_ns, end = in[NPKT - 1].t + 100000000; /* drain 100 ms */
	int i = 0;

	memset(o, 0, sizeof(*o));
	for (unsigned q = 0; q < nq; q++) {
		CHECK_EQ(emu_bneck_init(&b[q], NPKT, nw > 1), 0);
		o->cur = &b[q];
		emu_bneck_configure(&b[q], &qp, &rp, &pp, 7, NULL, record, o);
	}
	while (i < NPKT || poll <= end) {
		if (i < NPKT && in[i].t <= poll) {
			unsigned w = in[i].flow % nw, burst = 0;
			struct emu_bneck *q = &b[nq == 1 ? 0 : w];

			emu_bneck_lock(q);
			o->cur = q;
			while (i < NPKT && in[i].t <= poll && in[i].flow % nw == w && burst < 32) {
				uint64_t dep = 0;

				o->verdict[i] = (uint8_t)emu_bneck_admit(
				    q, in[i].t, in[i].len, in[i].ecn, &dep, record, o);
				o->dep[i] = dep;
				i++;
				burst++;
			}
			emu_bneck_unlock(q);
			continue;
		}
		for (unsigned q = 0; q < nq; q++) {
			emu_bneck_lock(&b[q]);
			o->cur = &b[q];
			emu_bneck_advance(&b[q], poll, record, o);
			emu_bneck_unlock(&b[q]);
		}
		poll += poll_ns;
	}
	for (unsigned q = 0; q < nq; q++) {
		for (unsigned c = 0; c < EMU_CNT__COUNT; c++)
			o->ec.v[c] += b[q].ec.v[c];
		if (b[q].max_bytes > o->max_bytes)
			o->max_bytes = b[q].max_bytes;
		o->xoff_at += b[q].xoff_at_bytes;
		o->xon_at += b[q].xon_at_bytes;
		emu_bneck_free(&b[q]);
	}
}

static struct outcome one, many, ctl;

static void
check_same(const struct outcome *a, const struct outcome *b)
{
	uint32_t diff = 0;

	for (int i = 0; i < NPKT; i++)
		diff += a->verdict[i] != b->verdict[i] || a->dep[i] != b->dep[i];
	CHECK_EQ(diff, 0);
	CHECK_EQ(a->nev, b->nev);
	CHECK(memcmp(a->ev_q, b->ev_q, sizeof(a->ev_q)) == 0);
	CHECK(memcmp(a->ev_t, b->ev_t, sizeof(a->ev_t)) == 0);
	CHECK(memcmp(a->ev_b, b->ev_b, sizeof(a->ev_b)) == 0);
	CHECK(memcmp(&a->ec, &b->ec, sizeof(a->ec)) == 0);
	CHECK_EQ(a->max_bytes, b->max_bytes);
	CHECK_EQ(a->xoff_at, b->xoff_at);
	CHECK_EQ(a->xon_at, b->xon_at);
}

static void
test_n_workers_equal_one(void)
{
	uint32_t drops = 0, marks = 0;

	make_input();
	run(&one, 1, 1, 5000);
	/* the input exercises every decision: drops, marks, pauses and resumes */
	for (int i = 0; i < NPKT; i++) {
		drops += one.verdict[i] == EMU_BNECK_DROP;
		marks += one.verdict[i] == EMU_BNECK_MARK;
	}
	CHECK(drops > 50);
	CHECK(marks > 200);
	CHECK(one.ec.v[EMU_CNT_PFC_XOFF] > 5);
	CHECK_EQ(one.ec.v[EMU_CNT_PFC_XON], one.ec.v[EMU_CNT_PFC_XOFF]);
	CHECK(one.max_bytes <= qp.limit_bytes);
	CHECK_EQ(one.ec.v[EMU_CNT_ENQUEUED] + one.ec.v[EMU_CNT_DROP_QUEUE], NPKT);
	CHECK_EQ(one.ec.v[EMU_CNT_DROP_QUEUE], drops);
	CHECK_EQ(one.ec.v[EMU_CNT_ECN_MARK_RED], marks);
	printf("  one worker: %u drops, %u marks, %" PRIu64 " XOFF, %" PRIu64 " XON, max %" PRIu64
	       " B\n",
	       drops, marks, one.ec.v[EMU_CNT_PFC_XOFF], one.ec.v[EMU_CNT_PFC_XON], one.max_bytes);
	/* two and four workers, the queue advanced on other schedules (one of them
	 * slower than a frame time, one every 10 ms): the same decisions */
	run(&many, 2, 1, 1700);
	check_same(&one, &many);
	run(&many, 4, 1, 7300);
	check_same(&one, &many);
	run(&many, 3, 1, 10000000);
	check_same(&one, &many);
	CHECK(one.ec.v[EMU_CNT_PFC_REFRESH] > 0);
	/* a flow's packets leave in their order: departures never go back within a flow */
	for (int f = 0; f < NFLOW; f++) {
		uint64_t last = 0;
		uint32_t back = 0;

		for (int i = 0; i < NPKT; i++) {
			if (in[i].flow != f || many.verdict[i] == EMU_BNECK_DROP)
				continue;
			back += many.dep[i] < last;
			last = many.dep[i];
		}
		CHECK_EQ(back, 0);
	}
}

/* Negative control: a private queue per worker is not one bottleneck. */
static void
test_private_queues_differ(void)
{
	uint32_t diff = 0;

	make_input();
	run(&one, 1, 1, 5000);
	run(&ctl, 2, 2, 5000);
	for (int i = 0; i < NPKT; i++)
		diff += one.verdict[i] != ctl.verdict[i];
	CHECK(diff > 100);
	CHECK(ctl.ec.v[EMU_CNT_DROP_QUEUE] < one.ec.v[EMU_CNT_DROP_QUEUE]);
	CHECK(ctl.ec.v[EMU_CNT_PFC_XOFF] != one.ec.v[EMU_CNT_PFC_XOFF]);
	printf("  private queues: %" PRIu64 " drops vs %" PRIu64 " shared, %u verdicts differ\n",
	       ctl.ec.v[EMU_CNT_DROP_QUEUE], one.ec.v[EMU_CNT_DROP_QUEUE], diff);
}

/* An admission stamped before the latest time the queue saw is taken at that time. */
static void
test_clock_never_goes_back(void)
{
	struct emu_bneck b;
	uint64_t d1 = 0, d2 = 0;
	const struct emu_shaper_params q = {.rate_bps = 1000000000};
	const struct emu_red_params r = {0};
	const struct emu_pfcgen_params p = {0};

	CHECK_EQ(emu_bneck_init(&b, 16, true), 0);
	emu_bneck_configure(&b, &q, &r, &p, 1, NULL, NULL, NULL);
	CHECK_EQ(emu_bneck_admit(&b, 100000, 1000, 0, &d1, NULL, NULL), EMU_BNECK_PASS);
	CHECK_EQ(d1, 100000 + 8000);
	/* idle link again at 200 us; a worker then admits a frame it stamped at 150 us */
	emu_bneck_advance(&b, 200000, NULL, NULL);
	CHECK_EQ(emu_bneck_backlog_bytes(&b), 0);
	CHECK_EQ(emu_bneck_admit(&b, 150000, 1000, 0, &d2, NULL, NULL), EMU_BNECK_PASS);
	CHECK_EQ(d2, 200000 + 8000);
	CHECK_EQ(emu_bneck_next(&b), 208000);
	emu_bneck_free(&b);
}

/* A run-time change keeps the backlog; dropping pfc while pausing sends an XON. */
static void
test_configure(void)
{
	struct emu_bneck b;
	struct outcome o;
	uint64_t dep = 0;
	const struct emu_red_params r = {0};
	const struct emu_pfcgen_params none = {0};

	memset(&o, 0, sizeof(o));
	o.cur = &b;
	CHECK_EQ(emu_bneck_init(&b, 64, false), 0);
	emu_bneck_configure(&b, &qp, &r, &pp, 1, NULL, record, &o);
	for (int i = 0; i < 11; i++)
		CHECK_EQ(emu_bneck_admit(&b, 0, 15000, 0, &dep, record, &o), EMU_BNECK_PASS);
	CHECK_EQ(o.nev, 1); /* XOFF at 150000 B */
	CHECK_EQ(o.ev_q[0], EMU_PFC_XOFF_QUANTA);
	CHECK_EQ(b.xoff_at_bytes, 150000);
	emu_bneck_configure(&b, &qp, &r, &none, 1, &o, record, &o);
	CHECK_EQ(o.nev, 2);
	CHECK_EQ(o.ev_q[1], 0);
	CHECK_EQ(emu_bneck_backlog_bytes(&b), 165000);
	CHECK(b.tag == &o);
	/* no rate any more: the backlog leaves the accounting */
	emu_bneck_configure(&b, &(struct emu_shaper_params){0}, &r, &none, 1, NULL, record, &o);
	CHECK_EQ(emu_bneck_backlog_bytes(&b), 0);
	CHECK_EQ(b.n, 0);
	emu_bneck_free(&b);
}

/* A SPEC with a larger limit grows the ring with packets in it (wrapped): order kept. */
static void
test_ring_grows(void)
{
	struct emu_bneck b;
	const struct emu_red_params r = {0};
	const struct emu_pfcgen_params p = {0};
	struct emu_shaper_params q = {.rate_bps = 8000000, .limit_pkts = 1000}; /* 1 us / B */
	uint64_t dep = 0, last = 0, t = 0;
	uint32_t pass = 0;

	CHECK_EQ(emu_bneck_init(&b, 100000, false), 0);
	emu_bneck_configure(&b, &q, &r, &p, 1, NULL, NULL, NULL);
	CHECK_EQ(b.mask + 1, 1024);
	/* 700 through, 600 of them departed: the head is past the middle of the ring */
	for (int i = 0; i < 700; i++)
		pass += emu_bneck_admit(&b, 0, 100, 0, &dep, NULL, NULL) != EMU_BNECK_DROP;
	emu_bneck_advance(&b, 600 * 100000, NULL, NULL);
	CHECK_EQ(b.n, 100);
	for (int i = 0; i < 900; i++) /* 100 + 900 = the limit, the ring wraps */
		pass +=
		    emu_bneck_admit(&b, 600 * 100000, 100, 0, &dep, NULL, NULL) != EMU_BNECK_DROP;
	CHECK_EQ(pass, 1600);
	CHECK_EQ(b.n, 1000);
	q.limit_pkts = 5000;
	emu_bneck_configure(&b, &q, &r, &p, 1, &q, NULL, NULL);
	CHECK_EQ(b.mask + 1, 8192);
	CHECK_EQ(b.n, 1000);
	for (int i = 0; i < 4000; i++)
		pass +=
		    emu_bneck_admit(&b, 600 * 100000, 100, 0, &dep, NULL, NULL) != EMU_BNECK_DROP;
	CHECK_EQ(pass, 5600);
	CHECK_EQ(emu_bneck_backlog_bytes(&b), 500000);
	/* the FIFO in departure order: each departure leaves exactly one packet */
	for (uint32_t k = 0; b.n > 0; k++) {
		uint64_t next = emu_bneck_next(&b);

		CHECK(next > last);
		last = next;
		t = next;
		emu_bneck_advance(&b, t, NULL, NULL);
		if (k > 6000)
			break;
	}
	CHECK_EQ(b.ec.v[EMU_CNT_DEQUEUED], 5600);
	CHECK_EQ(t, dep);
	emu_bneck_free(&b);
}

/* N threads admitting at once through the lock: the counts reconcile exactly. */
struct thr {
	struct emu_bneck *b;
	uint32_t n, pass;
};

static void *
admit_thread(void *arg)
{
	struct thr *t = arg;

	for (uint32_t i = 0; i < t->n; i += 8) {
		emu_bneck_lock(t->b);
		for (uint32_t k = 0; k < 8; k++) {
			uint64_t dep;

			t->pass +=
			    emu_bneck_admit(t->b, 0, 100, 0, &dep, NULL, NULL) != EMU_BNECK_DROP;
		}
		emu_bneck_unlock(t->b);
	}
	return NULL;
}

static void
test_threads(void)
{
	struct emu_bneck b;
	struct thr t[4];
	pthread_t th[4];
	const struct emu_shaper_params q = {.rate_bps = 1000, .limit_pkts = 5000};
	const struct emu_red_params r = {0};
	const struct emu_pfcgen_params p = {0};
	uint32_t pass = 0;

	CHECK_EQ(emu_bneck_init(&b, 8192, true), 0);
	emu_bneck_configure(&b, &q, &r, &p, 1, NULL, NULL, NULL);
	for (int i = 0; i < 4; i++) {
		t[i] = (struct thr){&b, 4000, 0};
		CHECK_EQ(pthread_create(&th[i], NULL, admit_thread, &t[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		pass += t[i].pass;
	}
	/* nothing departs at 1 kbit/s within time 0: exactly the limit gets in */
	CHECK_EQ(pass, 5000);
	CHECK_EQ(b.ec.v[EMU_CNT_ENQUEUED], 5000);
	CHECK_EQ(b.ec.v[EMU_CNT_DROP_QUEUE], 16000 - 5000);
	CHECK_EQ(b.n, 5000);
	emu_bneck_free(&b);
}

/* ---- software spread ---------------------------------------------------------------- */

static size_t
udp4(uint8_t *f, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint16_t frag)
{
	memset(f, 0, 64);
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = 0;
	f[17] = 50;
	f[20] = (uint8_t)(frag >> 8);
	f[21] = (uint8_t)frag;
	f[22] = 64;
	f[23] = 17;
	for (int i = 0; i < 4; i++) {
		f[26 + i] = (uint8_t)(src >> (24 - 8 * i));
		f[30 + i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	f[34] = (uint8_t)(sport >> 8);
	f[35] = (uint8_t)sport;
	f[36] = (uint8_t)(dport >> 8);
	f[37] = (uint8_t)dport;
	f[39] = 30;
	return 64;
}

static unsigned
worker_of(const uint8_t *f, size_t len, unsigned n)
{
	struct net_frame fr;

	net_frame_classify(f, len, &fr);
	return emu_spread_worker(emu_spread_hash(f, len, &fr), n);
}

static void
test_spread(void)
{
	uint8_t f[64], g[64];
	unsigned count[2] = {0, 0};
	size_t n;

	/* RoCEv2 QPs of one host pair differ only in the UDP source port (entropy) */
	for (unsigned sp = 0; sp < 64; sp++) {
		n = udp4(f, 0x0a000001, 0x0a000002, (uint16_t)(0xc000 + sp), 4791, 0);
		count[worker_of(f, n, 2)]++;
		/* the same 5-tuple always goes to the same worker (payload, TTL aside) */
		memcpy(g, f, n);
		g[22] = 3;
		g[60] = 0xab;
		CHECK_EQ(worker_of(g, n, 2), worker_of(f, n, 2));
		CHECK(worker_of(f, n, 4) < 4);
	}
	CHECK(count[0] >= 16 && count[1] >= 16);
	printf("  64 UDP source ports over 2 workers: %u / %u\n", count[0], count[1]);
	/* the source port matters, the destination port too */
	n = udp4(f, 1, 2, 1000, 4791, 0);
	CHECK_EQ(emu_spread_hash(f, n, &(struct net_frame){0}), 0); /* unclassified: 0 */
	/* later IPv4 fragments carry no ports: every fragment keyed by addresses alone */
	n = udp4(f, 0x0a000001, 0x0a000002, 1234, 4791, 0x2000); /* MF, offset 0 */
	udp4(g, 0x0a000001, 0x0a000002, 0x9999, 0x7777, 0x00b9); /* offset 185 */
	{
		struct net_frame a, c;

		net_frame_classify(f, n, &a);
		net_frame_classify(g, n, &c);
		CHECK_EQ(emu_spread_hash(f, n, &a), emu_spread_hash(g, n, &c));
	}
	/* not IP (ARP, PFC): worker 0 */
	memset(f, 0, sizeof(f));
	f[12] = 0x88;
	f[13] = 0x08;
	CHECK_EQ(worker_of(f, 60, 4), 0);
	f[12] = 0x08;
	f[13] = 0x06;
	CHECK_EQ(worker_of(f, 60, 4), 0);
	CHECK_EQ(emu_spread_worker(UINT32_MAX, 3), 2);
	CHECK_EQ(emu_spread_worker(0, 3), 0);
}

RW_TEST_MAIN(RW_TEST(test_n_workers_equal_one), RW_TEST(test_private_queues_differ),
	     RW_TEST(test_clock_never_goes_back), RW_TEST(test_configure), RW_TEST(test_ring_grows),
	     RW_TEST(test_threads), RW_TEST(test_spread))
