/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lossy-emu's DPDK-free parts: the delay line (FIFO and heap
 * layouts, clamping, bounded reordering, layout changes with packets in
 * flight), the release-error histogram, and the configuration (option order,
 * --config file:line errors, pool sizing from the SPEC).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "emu_rng.h"
#include "lemu_config.h"
#include "lemu_delay.h"
#include "lemu_hist.h"
#include "lemu_stats.h"
#include "rw_test.h"

#define P(x) ((void *)(uintptr_t)(x))
#define I(p) ((unsigned)(uintptr_t)(p))

/* Pop everything, checking that exit times never decrease; returns the count. */
static unsigned
drain_sorted(struct lemu_dl *dl, unsigned *order, unsigned max)
{
	void *out[64];
	uint64_t t[64], last = 0;
	unsigned n = 0, k;

	while ((k = lemu_dl_pop_due(dl, UINT64_MAX, out, t, 64)) > 0) {
		for (unsigned i = 0; i < k; i++) {
			CHECK(t[i] >= last);
			last = t[i];
			if (order && n < max)
				order[n] = I(out[i]);
			n++;
		}
	}
	return n;
}

static void
test_fifo_basic(void)
{
	struct lemu_dl dl;
	void *out[8];
	uint64_t t[8];

	CHECK_EQ(lemu_dl_init(&dl, 4, false), 0);
	CHECK_EQ(lemu_dl_next(&dl), UINT64_MAX);
	CHECK_EQ(lemu_dl_push(&dl, 100, P(1)), 100);
	CHECK_EQ(lemu_dl_push(&dl, 200, P(2)), 200);
	/* earlier than the tail: clamped, never reordered */
	CHECK_EQ(lemu_dl_push(&dl, 150, P(3)), 200);
	CHECK_EQ(lemu_dl_push(&dl, 300, P(4)), 300);
	CHECK_EQ(lemu_dl_push(&dl, 400, P(5)), UINT64_MAX); /* full */
	CHECK_EQ(lemu_dl_next(&dl), 100);
	CHECK_EQ(lemu_dl_pop_due(&dl, 99, out, t, 8), 0);
	CHECK_EQ(lemu_dl_pop_due(&dl, 200, out, t, 8), 3);
	CHECK_EQ(I(out[0]), 1);
	CHECK_EQ(I(out[1]), 2);
	CHECK_EQ(I(out[2]), 3);
	/* wrap around the ring */
	for (unsigned i = 0; i < 3; i++)
		CHECK(lemu_dl_push(&dl, 500 + i, P(10 + i)) != UINT64_MAX);
	CHECK_EQ(lemu_dl_count(&dl), 4);
	CHECK_EQ(lemu_dl_pop_due(&dl, 1000, out, t, 8), 4);
	CHECK_EQ(I(out[0]), 4);
	CHECK_EQ(I(out[3]), 12);
	lemu_dl_free(&dl);
}

static void
test_heap_order(void)
{
	enum { N = 5000 };
	struct lemu_dl dl;
	struct emu_rng r;
	unsigned order[N];

	emu_rng_seed(&r, 7, 1);
	CHECK_EQ(lemu_dl_init(&dl, N, true), 0);
	for (unsigned i = 0; i < N; i++)
		lemu_dl_push(&dl, 1000000 + emu_rng_below(&r, 100000), P(i));
	/* equal times leave in push order */
	CHECK_EQ(drain_sorted(&dl, order, N), N);
	lemu_dl_free(&dl);
	CHECK_EQ(lemu_dl_init(&dl, 16, true), 0);
	for (unsigned i = 0; i < 10; i++)
		lemu_dl_push(&dl, 42, P(i));
	CHECK_EQ(drain_sorted(&dl, order, 10), 10);
	for (unsigned i = 0; i < 10; i++)
		CHECK_EQ(order[i], i);
	lemu_dl_free(&dl);
}

/* gap N: a reordered packet overtakes at most N packets, in both layouts */
static void
test_reorder_bound(void)
{
	for (int heap = 0; heap <= 1; heap++) {
		struct lemu_dl dl;
		unsigned order[32];

		CHECK_EQ(lemu_dl_init(&dl, 64, heap), 0);
		/* ten packets that arrived together, each leaving at 10 ms */
		for (unsigned i = 0; i < 10; i++)
			lemu_dl_push(&dl, 10000000, P(i));
		/* a reordered one at time 0 with gap 3 lands behind packet 6 */
		lemu_dl_push_reorder(&dl, 0, 3, P(100));
		CHECK_EQ(drain_sorted(&dl, order, 32), 11);
		CHECK_EQ(order[7], 100);
		CHECK_EQ(order[6], 6);
		CHECK_EQ(order[8], 7);
		lemu_dl_free(&dl);

		/* when the reference packet left already, it goes out at once */
		CHECK_EQ(lemu_dl_init(&dl, 64, heap), 0);
		lemu_dl_push(&dl, 100, P(1));
		lemu_dl_push(&dl, 5000, P(2));
		CHECK_EQ(lemu_dl_push_reorder(&dl, 1000, 1, P(3)), 1000);
		CHECK_EQ(drain_sorted(&dl, order, 32), 3);
		CHECK_EQ(order[0], 1);
		CHECK_EQ(order[1], 3);
		CHECK_EQ(order[2], 2);
		lemu_dl_free(&dl);
	}
}

/* Layout changes keep every packet and the order. */
static void
test_layout_change(void)
{
	enum { N = 100 };
	struct lemu_dl dl;
	unsigned order[N];
	void *out[N];

	CHECK_EQ(lemu_dl_init(&dl, N, false), 0);
	/* make the ring wrap: push 60, pop 50, push 80 more */
	for (unsigned i = 0; i < 60; i++)
		lemu_dl_push(&dl, i, P(i));
	CHECK_EQ(lemu_dl_pop_due(&dl, 49, out, NULL, N), 50);
	for (unsigned i = 60; i < 140; i++)
		lemu_dl_push(&dl, i, P(i));
	CHECK_EQ(lemu_dl_count(&dl), 90);
	lemu_dl_set_heap(&dl, true);
	lemu_dl_push(&dl, 55, P(1000)); /* the heap takes out-of-order times */
	lemu_dl_set_heap(&dl, false);
	CHECK_EQ(drain_sorted(&dl, order, N), 91);
	CHECK_EQ(order[0], 50);
	CHECK_EQ(order[5], 55);
	CHECK_EQ(order[6], 1000);
	CHECK_EQ(order[90], 139);
	lemu_dl_free(&dl);
}

static void
test_hist(void)
{
	struct lemu_hist h;
	uint64_t lo, w, prev_lo = 0;

	/* buckets are contiguous and increasing */
	for (unsigned i = 0; i < LEMU_HIST_BUCKETS; i++) {
		lemu_hist_bucket_range(i, &lo, &w);
		if (i > 0)
			CHECK(lo > prev_lo);
		CHECK_EQ(lemu_hist_bucket(lo), i);
		CHECK_EQ(lemu_hist_bucket(lo + w - 1), i);
		prev_lo = lo;
		if (lo > UINT64_MAX / 4)
			break;
	}
	CHECK_EQ(lemu_hist_bucket(UINT64_MAX), LEMU_HIST_BUCKETS - 1);
	lemu_hist_reset(&h);
	CHECK_EQ(lemu_hist_quantile(&h, 0.5), 0);
	for (uint64_t v = 1; v <= 100000; v++)
		lemu_hist_add(&h, v * 1000); /* 1 us .. 100 ms */
	CHECK_EQ(h.max, 100000000);
	double p50 = (double)lemu_hist_quantile(&h, 0.5),
	       p99 = (double)lemu_hist_quantile(&h, 0.99);
	printf("  hist p50 %.0f (50e6) p99 %.0f (99e6)\n", p50, p99);
	CHECK(p50 > 50e6 * (1 - 1. / 32) && p50 < 50e6 * (1 + 1. / 32));
	CHECK(p99 > 99e6 * (1 - 1. / 32) && p99 < 99e6 * (1 + 1. / 32));
	CHECK_EQ(lemu_hist_quantile(&h, 1.0), 100000000);
}

static int
parse(struct lemu_params *p, char *err, size_t errlen, int argc, const char **argv)
{
	lemu_params_defaults(p);
	return lemu_parse_args(argc, (char **)argv, p, err, errlen);
}

static void
test_options(void)
{
	struct lemu_params p;
	char err[512];
	const char *a1[] = {"x", "--both", "delay 10ms", "--a2b", "loss 1%", "--seed=7"};
	const char *a2[] = {"x", "--a2b", "loss 1%", "--both", "delay 10ms"};
	const char *a3[] = {"x", "--a2b", "loss 1% gap"};
	const char *a4[] = {"x", "delay 10ms"};
	const char *a5[] = {"x", "--busy-poll", "--burst", "0"};
	const char *a6[] = {"x", "--mtu", "9000"};

	CHECK_EQ(parse(&p, err, sizeof(err), 6, a1), 0);
	CHECK_EQ(p.spec[LEMU_A2B].delay.delay_ns, 0); /* --a2b replaced what --both set */
	CHECK(p.spec[LEMU_A2B].impair.loss.p > 0.0099);
	CHECK_EQ(p.spec[LEMU_B2A].delay.delay_ns, 10000000);
	CHECK(p.seed_set && p.seed == 7);
	CHECK(lemu_dir_seed(&p, 0) != lemu_dir_seed(&p, 1));
	CHECK_EQ(parse(&p, err, sizeof(err), 5, a2), 0);
	CHECK_EQ(p.spec[LEMU_A2B].delay.delay_ns, 10000000); /* later --both wins */
	CHECK(p.spec[LEMU_A2B].impair.loss.p == 0);
	CHECK(parse(&p, err, sizeof(err), 3, a3) < 0);
	printf("  %s\n", err);
	CHECK(strncmp(err, "--a2b: ", 7) == 0);
	CHECK(parse(&p, err, sizeof(err), 2, a4) < 0);
	CHECK(strstr(err, "\"delay 10ms\"") != NULL);
	CHECK(parse(&p, err, sizeof(err), 4, a5) < 0);
	CHECK(strstr(err, "--burst") && strstr(err, "\"0\""));
	CHECK_EQ(parse(&p, err, sizeof(err), 3, a6), 0);
	CHECK(lemu_configure(&p, err, sizeof(err)) < 0); /* 9000 + 18 > 4608 */
	CHECK(strstr(err, "--mbuf-size") != NULL);
	lemu_params_defaults(&p);
	CHECK_EQ(lemu_configure(&p, err, sizeof(err)), 0);
	CHECK(p.seed_set); /* drawn */
	CHECK_EQ(p.mbuf_size, 4608);
	CHECK_EQ(p.burst, 32);
	CHECK_EQ(p.workers, 1); /* one worker per direction unless asked */
}

/* --workers N: 1..16 (LEMU_WORKERS_MAX of the data path), anything else refused */
static void
test_workers_option(void)
{
	struct lemu_params p;
	char err[512];
	const char *ok[] = {"x", "--workers", "16"};
	const char *zero[] = {"x", "--workers", "0"};
	const char *big[] = {"x", "--workers", "17"};
	const char *word[] = {"x", "--workers=two"};

	CHECK_EQ(parse(&p, err, sizeof(err), 3, ok), 0);
	CHECK_EQ(p.workers, 16);
	CHECK(parse(&p, err, sizeof(err), 3, zero) < 0);
	CHECK(strstr(err, "--workers") && strstr(err, "\"0\""));
	CHECK(parse(&p, err, sizeof(err), 3, big) < 0);
	CHECK(strstr(err, "\"17\"") != NULL);
	CHECK(parse(&p, err, sizeof(err), 2, word) < 0);
	printf("  %s\n", err);
}

static void
test_config_file(void)
{
	char path[] = "/tmp/lemu-test-XXXXXX", err[512];
	struct lemu_params p;
	FILE *f;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	fputs("# comment\n\n  seed = 99  \na2b = \"delay 5ms  loss 2%\"  # trailing comment\n"
	      "busy-poll = yes\nb2a=rate 1gbit\n",
	      f);
	fclose(f);
	lemu_params_defaults(&p);
	CHECK_EQ(lemu_config_file(path, &p, err, sizeof(err)), 0);
	CHECK(p.seed == 99 && p.busy_poll);
	CHECK_EQ(p.spec[LEMU_A2B].delay.delay_ns, 5000000);
	CHECK_EQ(p.spec[LEMU_B2A].queue.rate_bps, 1000000000);
	CHECK(strcmp(p.config, path) == 0);

	f = fopen(path, "w");
	fputs("seed = 1\nb2a = delay 5ms\na2b = delay 5ms loss 101%\n", f);
	fclose(f);
	CHECK(lemu_config_file(path, &p, err, sizeof(err)) < 0);
	printf("  %s\n", err);
	CHECK(strstr(err, ":3: a2b: ") && strstr(err, "101%"));
	f = fopen(path, "w");
	fputs("seed = 1\nfrobnicate = 3\n", f);
	fclose(f);
	CHECK(lemu_config_file(path, &p, err, sizeof(err)) < 0);
	CHECK(strstr(err, ":2: unknown key \"frobnicate\"") != NULL);
	f = fopen(path, "w");
	fputs("config = /etc/other\n", f);
	fclose(f);
	CHECK(lemu_config_file(path, &p, err, sizeof(err)) < 0);
	f = fopen(path, "w");
	fputs("a2b delay 5ms\n", f);
	fclose(f);
	CHECK(lemu_config_file(path, &p, err, sizeof(err)) < 0);
	CHECK(strstr(err, ":1: ") && strstr(err, "key = value"));
	unlink(path);
	CHECK(lemu_config_file(path, &p, err, sizeof(err)) < 0);
	CHECK(strstr(err, "cannot open") != NULL);
}

static void
test_pool_sizing(void)
{
	struct emu_spec s;
	struct lemu_pool_need n;
	char msg[256];

	/* 100 ms at 10 Gbit/s = 125 MB of frames: 27127 mbufs of 4608 B */
	CHECK_EQ(emu_spec_parse(&s, "delay 100ms", msg, sizeof(msg)), 0);
	lemu_pool_need(&s, 10000000000ull, 4608, 0, &n);
	CHECK_EQ(n.line_pkts, (125000000 + 4607) / 4608);
	CHECK_EQ(n.queue_pkts, 0);
	CHECK(!n.capped);
	/* the SPEC's rate wins over the link; the queue limit is added */
	CHECK_EQ(emu_spec_parse(&s, "delay 100ms rate 1gbit limit 500", msg, sizeof(msg)), 0);
	lemu_pool_need(&s, 10000000000ull, 4608, 1000, &n);
	CHECK_EQ(n.line_pkts, (12500000 + 4607) / 4608);
	CHECK_EQ(n.queue_pkts, 500);
	CHECK_EQ(n.mbufs, 2713 + 500 + 1000);
	CHECK_EQ(emu_spec_parse(&s, "", msg, sizeof(msg)), 0);
	lemu_pool_need(&s, 10000000000ull, 4608, 1000, &n);
	CHECK_EQ(n.mbufs, LEMU_MBUFS_MIN); /* no delay, no rate: the floor */
	/* jitter: the largest draw counts (normal clips at 4 sigma) */
	CHECK_EQ(emu_spec_parse(&s, "delay 10ms 5ms distribution normal", msg, sizeof(msg)), 0);
	lemu_pool_need(&s, 10000000000ull, 1000, 0, &n);
	CHECK_EQ(n.max_delay_ns, 30000000);
	/* the packet rate: 10 ms at 10 Gbit/s of 60 B frames (84 B on the wire) */
	CHECK_EQ(emu_spec_parse(&s, "delay 10ms", msg, sizeof(msg)), 0);
	lemu_pool_need(&s, 10000000000ull, 60 + LEMU_WIRE_OVERHEAD, 0, &n);
	CHECK_EQ(n.line_bytes, 12500000);
	CHECK_EQ(n.line_pkts, (12500000 + 83) / 84);
	CHECK_EQ(n.mbufs, (12500000 + 83) / 84);
	CHECK(!n.capped);
	/* a huge BDP is capped (lossy-emu refuses it) */
	CHECK_EQ(emu_spec_parse(&s, "delay 10s", msg, sizeof(msg)), 0);
	lemu_pool_need(&s, 100000000000ull, 1000, 0, &n);
	CHECK(n.capped && n.mbufs == LEMU_MBUFS_MAX);
}

static void
test_stat_names(void)
{
	static const char *const required[] = {
	    "rx_pkts",	 "tx_pkts",    "rx_bytes",   "tx_bytes",  "drop_loss", "drop_queue",
	    "corrupted", "ecn_marked", "duplicated", "reordered", "pfc_sent"};

	for (size_t r = 0; r < sizeof(required) / sizeof(required[0]); r++) {
		bool found = false;

		for (unsigned i = 0; i < LEMU_ST__COUNT; i++)
			found |= strcmp(lemu_stat_name(i), required[r]) == 0;
		CHECK(found);
	}
	CHECK(lemu_stat_name(LEMU_ST__COUNT) == NULL);
	for (unsigned i = 0; i < LEMU_ST__COUNT; i++)
		CHECK(lemu_stat_help(i) && lemu_stat_help(i)[0]);
}

/*
 * The compact store: handles carry the length and the first unit, frames of up to 64 B
 * take one unit and up to 128 B two (never split by the ring's end), a full ring refuses,
 * and units freed out of order (heap layout) come back only once every older one is free.
 */
static void
test_compact_store(void)
{
	struct lemu_cr c;
	uint8_t f[LEMU_CR_MAXLEN];
	void *h[8];

	for (unsigned i = 0; i < sizeof(f); i++)
		f[i] = (uint8_t)(i * 7 + 1);
	CHECK_EQ(lemu_cr_init(&c, 4), 0); /* 2 units a frame: 8 units */
	CHECK_EQ(c.mask, 7);
	CHECK(lemu_cr_put(&c, f, 0) == NULL);
	CHECK(lemu_cr_put(&c, f, LEMU_CR_MAXLEN + 1) == NULL);
	h[0] = lemu_cr_put(&c, f, 64);	/* units 0 */
	h[1] = lemu_cr_put(&c, f, 65);	/* units 1-2 */
	h[2] = lemu_cr_put(&c, f, 128); /* units 3-4 */
	h[3] = lemu_cr_put(&c, f, 1);	/* unit 5 */
	for (unsigned i = 0; i < 4; i++)
		CHECK(h[i] != NULL && lemu_cr_is(h[i]));
	CHECK(!lemu_cr_is(&c)); /* an aligned pointer is not a handle */
	CHECK_EQ(lemu_cr_len(h[0]), 64);
	CHECK_EQ(lemu_cr_len(h[1]), 65);
	CHECK_EQ(lemu_cr_len(h[2]), 128);
	CHECK_EQ(lemu_cr_len(h[3]), 1);
	CHECK(lemu_cr_data(&c, h[1]) == c.buf + 64);
	CHECK(lemu_cr_data(&c, h[3]) == c.buf + 5 * 64);
	CHECK(memcmp(lemu_cr_data(&c, h[2]), f, 128) == 0);
	CHECK(memcmp(lemu_cr_data(&c, h[1]), f, 65) == 0);
	CHECK_EQ(lemu_cr_used(&c), 6);
	/* units 6-7 are free, but a 2-unit frame there fits: takes 6-7 */
	h[4] = lemu_cr_put(&c, f, 100);
	CHECK(h[4] != NULL && lemu_cr_data(&c, h[4]) == c.buf + 6 * 64);
	CHECK(lemu_cr_put(&c, f, 10) == NULL); /* full */
	/* out of order: freeing h[1] frees nothing while h[0] holds unit 0 */
	lemu_cr_release(&c, h[1]);
	CHECK_EQ(lemu_cr_used(&c), 8);
	CHECK(lemu_cr_put(&c, f, 10) == NULL);
	lemu_cr_release(&c, h[0]); /* units 0-2 back */
	CHECK_EQ(lemu_cr_used(&c), 5);
	h[5] = lemu_cr_put(&c, f, 64); /* unit 0 (ring order: wr 8 -> unit 0) */
	CHECK(h[5] != NULL && lemu_cr_data(&c, h[5]) == c.buf);
	h[6] = lemu_cr_put(&c, f, 128); /* units 1-2 */
	CHECK(h[6] != NULL && lemu_cr_data(&c, h[6]) == c.buf + 64);
	CHECK(lemu_cr_put(&c, f, 1) == NULL); /* full again */
	lemu_cr_release(&c, h[2]);
	lemu_cr_release(&c, h[3]);
	lemu_cr_release(&c, h[4]); /* units 3-7 back: 3 used */
	CHECK_EQ(lemu_cr_used(&c), 3);
	h[7] = lemu_cr_put(&c, f, 64); /* unit 3 */
	CHECK(h[7] != NULL && lemu_cr_data(&c, h[7]) == c.buf + 3 * 64);
	CHECK(lemu_cr_put(&c, f, 80) != NULL); /* units 4-5 */
	CHECK(lemu_cr_put(&c, f, 80) != NULL); /* units 6-7: up to the end, not across */
	CHECK(lemu_cr_put(&c, f, 1) == NULL);
	lemu_cr_free(&c);

	/* a 2-unit frame at the last unit: that unit is skipped, the frame takes 0-1 */
	CHECK_EQ(lemu_cr_init(&c, 4), 0);
	for (unsigned i = 0; i < 7; i++)
		h[i] = lemu_cr_put(&c, f, 64); /* units 0-6 */
	for (unsigned i = 0; i < 3; i++)
		lemu_cr_release(&c, h[i]);
	CHECK_EQ(lemu_cr_used(&c), 4);
	h[7] = lemu_cr_put(&c, f, 128);
	CHECK(h[7] != NULL && lemu_cr_data(&c, h[7]) == c.buf);
	CHECK(memcmp(lemu_cr_data(&c, h[7]), f, 128) == 0);
	CHECK_EQ(lemu_cr_used(&c), 7); /* units 3-6, the skipped 7, 0-1 */
	for (unsigned i = 3; i < 7; i++)
		lemu_cr_release(&c, h[i]);
	CHECK_EQ(lemu_cr_used(&c), 2); /* the read side passed over the skipped unit */
	lemu_cr_release(&c, h[7]);
	CHECK_EQ(lemu_cr_used(&c), 0);
	lemu_cr_free(&c);
	CHECK(c.buf == NULL);
}

RW_TEST_MAIN(RW_TEST(test_fifo_basic), RW_TEST(test_heap_order), RW_TEST(test_reorder_bound),
	     RW_TEST(test_layout_change), RW_TEST(test_hist), RW_TEST(test_options),
	     RW_TEST(test_workers_option), RW_TEST(test_config_file), RW_TEST(test_pool_sizing),
	     RW_TEST(test_stat_names), RW_TEST(test_compact_store))
