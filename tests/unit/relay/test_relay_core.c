/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of pfc-relay's DPDK-free core: queues, scheduler, pacer, PFC generation, relay,
 * config. */
#include <errno.h>

#include "relay_config.h"
#include "relay_core.h"
#include "rw_test.h"

#define MS 1000000ull
#define G1 1000000000ull

static struct relay_path_cfg
cfg(void)
{
	struct relay_path_cfg c = {
	    .slots = 64,
	    .limit_bytes = 10000,
	    .rate_bps = 0,
	    .burst_ns = 0,
	    .lossless = 1u << 3,
	    .wd_on = false,
	    .wd_detect_ns = 100 * MS,
	    .wd_restore_ns = 100 * MS,
	    .wd_action = PFC_WD_DROP,
	};
	return c;
}

static struct pfc_frame
pfc(uint8_t prio, uint16_t q)
{
	struct pfc_frame f = {.opcode = PFC_OPCODE, .enable = (uint8_t)(1u << prio)};

	f.quanta[prio] = q;
	return f;
}

static int tag[256]; /* frames are pointers to these */

static void
test_queue_accounting_and_limit(void)
{
	struct relay_path p;
	struct relay_path_cfg c = cfg();
	void *out[8];
	uint32_t lens[8];
	uint8_t pr[8];

	CHECK_EQ(relay_path_init(&p, &c), 0);
	CHECK_EQ(relay_enqueue(&p, 3, &tag[0], 4000, 0), RELAY_ENQ_OK);
	CHECK_EQ(relay_enqueue(&p, 3, &tag[1], 4000, 0), RELAY_ENQ_OK);
	/* 8000 + 4000 > 10000: tail drop, counted as buffer_full (no PFC generation) */
	CHECK_EQ(relay_enqueue(&p, 3, &tag[2], 4000, 0), RELAY_ENQ_DROP);
	CHECK_EQ(relay_enqueue(&p, 3, &tag[3], 2000, 0), RELAY_ENQ_OK);
	CHECK_EQ(relay_q_bytes(&p, 3), 10000);
	CHECK_EQ(p.q[3].st.drops[RELAY_DROP_BUFFER_FULL], 1);
	CHECK_EQ(p.q[3].st.drop_bytes, 4000);
	CHECK_EQ(p.q[3].st.hwm_bytes, 10000);
	/* other priorities have their own limit */
	CHECK_EQ(relay_enqueue(&p, 0, &tag[4], 9000, 0), RELAY_ENQ_OK);
	CHECK_EQ(relay_queued(&p), 4);
	CHECK_EQ(relay_dequeue(&p, 0, out, lens, pr, 8), 4);
	CHECK_EQ(relay_queued(&p), 0);
	CHECK_EQ(relay_q_bytes(&p, 3), 0);
	CHECK_EQ(p.q[3].st.deq_bytes, 10000);
	CHECK_EQ(p.q[3].st.hwm_bytes, 10000); /* the high-water mark stays */
	relay_path_free(&p);

	/* more frames than slots: counted separately */
	c.slots = 2;
	CHECK_EQ(relay_path_init(&p, &c), 0);
	CHECK_EQ(relay_enqueue(&p, 1, &tag[0], 10, 0), RELAY_ENQ_OK);
	CHECK_EQ(relay_enqueue(&p, 1, &tag[1], 10, 0), RELAY_ENQ_OK);
	CHECK_EQ(relay_enqueue(&p, 1, &tag[2], 10, 0), RELAY_ENQ_DROP);
	CHECK_EQ(p.q[1].st.drops[RELAY_DROP_QUEUE_SLOTS], 1);
	relay_path_free(&p);
	c.gen_pfc = true;
	c.xoff_bytes = 100;
	c.xon_bytes = 100; /* xon must be below xoff */
	CHECK_EQ(relay_path_init(&p, &c), -EINVAL);
}

static void
test_scheduler_round_robin_skips_paused(void)
{
	struct relay_path p;
	struct relay_path_cfg c = cfg();
	struct pfc_frame f = pfc(3, 0xffff);
	void *out[16];
	uint32_t lens[16];
	uint8_t pr[16];
	unsigned n;

	c.rate_bps = G1;
	c.burst_ns = 1000 * MS; /* pacing does not limit this test */
	c.lossless = (1u << 3) | (1u << 4);
	CHECK_EQ(relay_path_init(&p, &c), 0);
	for (int i = 0; i < 3; i++) {
		relay_enqueue(&p, 0, &tag[i], 100, 0);
		relay_enqueue(&p, 3, &tag[10 + i], 100, 0);
		relay_enqueue(&p, 4, &tag[20 + i], 100, 0);
	}
	/* PFC on priority 3: 65535 quanta at 1G = 33.55 ms */
	CHECK_EQ(relay_pfc_rx(&p, &f, 0), 1u << 3);
	CHECK(relay_prio_blocked(&p, 3, 1 * MS));
	CHECK(!relay_prio_blocked(&p, 4, 1 * MS));
	n = relay_dequeue(&p, 1 * MS, out, lens, pr, 16);
	CHECK_EQ(n, 6);
	/* round robin 0,4,0,4,0,4 and FIFO within each priority; nothing of 3 */
	CHECK(out[0] == &tag[0] && out[1] == &tag[20] && out[2] == &tag[1] && out[3] == &tag[21]);
	for (unsigned i = 0; i < n; i++)
		CHECK(pr[i] != 3);
	/* XON (time 0) resumes at once */
	f = pfc(3, 0);
	relay_pfc_rx(&p, &f, 2 * MS);
	CHECK(!relay_prio_blocked(&p, 3, 2 * MS));
	n = relay_dequeue(&p, 2 * MS, out, lens, pr, 16);
	CHECK_EQ(n, 3);
	CHECK(out[0] == &tag[10] && out[2] == &tag[12]);
	/* a lossy priority ignores PFC */
	relay_enqueue(&p, 0, &tag[5], 100, 3 * MS);
	f = pfc(0, 0xffff);
	CHECK_EQ(relay_pfc_rx(&p, &f, 3 * MS), 0);
	CHECK_EQ(relay_dequeue(&p, 3 * MS, out, lens, pr, 16), 1);
	/* the pause expires by itself: 100 quanta at 1G = 51.2 us */
	relay_enqueue(&p, 3, &tag[6], 100, 4 * MS);
	f = pfc(3, 100);
	relay_pfc_rx(&p, &f, 4 * MS);
	CHECK_EQ(relay_dequeue(&p, 4 * MS + 51000, out, lens, pr, 16), 0);
	CHECK_EQ(relay_next_event(&p, 4 * MS + 51000), 4 * MS + 51200);
	CHECK_EQ(relay_dequeue(&p, 4 * MS + 51200, out, lens, pr, 16), 1);
	/* an expired pause on an empty queue is no reason to wake up (no busy polling) */
	f = pfc(4, 100);
	relay_pfc_rx(&p, &f, 5 * MS);
	CHECK_EQ(relay_next_event(&p, 5 * MS), 5 * MS + 51200);
	CHECK_EQ(relay_next_event(&p, 6 * MS), UINT64_MAX);
	{
		struct relay_pfc_out po;
		void *fl[4];

		relay_tick(&p, 6 * MS, &po, fl, 4);
		CHECK_EQ(p.pause.until_ns[4], 0);
		CHECK_EQ(relay_next_event(&p, 6 * MS), UINT64_MAX);
	}
	relay_path_free(&p);
}

static void
test_pacer(void)
{
	struct relay_path p;
	struct relay_path_cfg c = cfg();
	void *out[16];
	uint32_t lens[16];
	uint8_t pr[16];

	c.rate_bps = G1;
	c.burst_ns = 0;
	c.limit_bytes = 1 << 20;
	CHECK_EQ(relay_path_init(&p, &c), 0);
	for (int i = 0; i < 10; i++)
		relay_enqueue(&p, 0, &tag[i], 976, 0); /* 976 + 24 = 1000 B = 8 us at 1G */
	CHECK_EQ(relay_dequeue(&p, 1000 * MS, out, lens, pr, 16), 1);
	CHECK_EQ(relay_next_event(&p, 1000 * MS), 1000 * MS + 8000);
	CHECK_EQ(relay_dequeue(&p, 1000 * MS + 7999, out, lens, pr, 16), 0);
	CHECK_EQ(relay_dequeue(&p, 1000 * MS + 8000, out, lens, pr, 16), 1);
	/* a frame the PMD refused goes back to the head and its time is refunded */
	relay_requeue_head(&p, pr[0], out[0], lens[0]);
	CHECK_EQ(p.pacer.next_ns, 1000 * MS + 8000);
	CHECK_EQ(relay_dequeue(&p, 1000 * MS + 8000, out, lens, pr, 16), 1);
	CHECK(out[0] == &tag[1]);
	/* 80 us later: 10 frames' worth of time, but burst 0 gives no idle credit */
	CHECK_EQ(relay_dequeue(&p, 1000 * MS + 96000, out, lens, pr, 16), 1);
	relay_path_free(&p);
	/* a 40 us burst allowance: 5 frames of credit plus the one starting now */
	c.burst_ns = 40000;
	CHECK_EQ(relay_path_init(&p, &c), 0);
	for (int i = 0; i < 10; i++)
		relay_enqueue(&p, 0, &tag[i], 976, 0);
	CHECK_EQ(relay_dequeue(&p, 1000 * MS, out, lens, pr, 16), 6);
	relay_path_free(&p);
}

static void
test_xoff_xon_refresh(void)
{
	struct relay_path p;
	struct relay_path_cfg c = cfg();
	struct relay_pfc_out po;
	void *fl[8], *out[64];
	uint32_t lens[64];
	uint8_t pr[64];
	struct pfc_frame rf = pfc(3, 0xffff);

	c.rate_bps = G1;
	c.burst_ns = 1000 * MS;
	c.gen_pfc = true;
	c.xoff_bytes = 3000;
	c.xon_bytes = 1000;
	c.limit_bytes = 5000; /* xoff + headroom */
	c.xoff_quanta = 1000;
	c.ingress_bps = G1; /* 1000 quanta at 1G = 512 us: refresh every 256 us */
	CHECK_EQ(relay_path_init(&p, &c), 0);
	relay_pfc_rx(&p, &rf, 0); /* the egress is paused for 33.5 ms: the queue fills */
	relay_enqueue(&p, 3, &tag[0], 2000, 0);
	relay_tick(&p, 0, &po, fl, 8);
	CHECK_EQ(po.enable, 0);
	relay_enqueue(&p, 3, &tag[1], 1000, 10);
	relay_tick(&p, 10, &po, fl, 8);
	CHECK_EQ(po.enable, 1u << 3);
	CHECK_EQ(po.quanta[3], 1000);
	relay_tick(&p, 1000, &po, fl, 8);
	CHECK_EQ(po.enable, 0); /* nothing new before the refresh time */
	CHECK_EQ(relay_next_event(&p, 1000), 10 + 256000);
	relay_tick(&p, 10 + 256000, &po, fl, 8);
	CHECK_EQ(po.enable, 1u << 3); /* refresh before the pause runs out */
	CHECK_EQ(po.quanta[3], 1000);
	/* headroom: above xoff + headroom the frame is dropped as headroom_full */
	CHECK_EQ(relay_enqueue(&p, 3, &tag[2], 2000, 300000), RELAY_ENQ_OK);
	CHECK_EQ(relay_enqueue(&p, 3, &tag[3], 1, 300000), RELAY_ENQ_DROP);
	CHECK_EQ(p.q[3].st.drops[RELAY_DROP_HEADROOM_FULL], 1);
	/* resume, drain to <= xon: XON (time 0) */
	rf = pfc(3, 0);
	relay_pfc_rx(&p, &rf, 400000);
	CHECK_EQ(relay_dequeue(&p, 400000, out, lens, pr, 2), 2); /* 2000 + 1000 out, 2000 left */
	relay_tick(&p, 400000, &po, fl, 8);
	CHECK_EQ(po.enable, 0);
	CHECK_EQ(relay_dequeue(&p, 400000, out, lens, pr, 1), 1);
	relay_tick(&p, 400001, &po, fl, 8);
	CHECK_EQ(po.enable, 1u << 3);
	CHECK_EQ(po.quanta[3], 0);
	CHECK_EQ(p.xo[3].xoff_sent, 1);
	CHECK_EQ(p.xo[3].refreshes, 1);
	CHECK_EQ(p.xo[3].xon_sent, 1);
	relay_path_free(&p);
}

static void
test_relay_convert(void)
{
	struct pfc_frame f = {.opcode = PFC_OPCODE, .enable = 0x38};
	uint16_t q[8];

	f.quanta[3] = 1000;
	f.quanta[4] = 0;      /* XON stays XON */
	f.quanta[5] = 0xffff; /* lossy: not relayed */
	/* 10G -> 1G: the same duration is a tenth of the quanta, rounded up */
	CHECK_EQ(relay_convert(&f, 0x18, 10 * G1, G1, q), 0x18);
	CHECK_EQ(q[3], 100);
	CHECK_EQ(q[4], 0);
	CHECK_EQ(q[5], 0);
	/* 1G -> 10G saturates at 0xffff */
	f.quanta[3] = 7000;
	relay_convert(&f, 0x08, G1, 10 * G1, q);
	CHECK_EQ(q[3], 0xffff);
	f.quanta[3] = 1001;
	relay_convert(&f, 0x08, 10 * G1, G1, q);
	CHECK_EQ(q[3], 101);
	/* equal rates: unchanged */
	relay_convert(&f, 0x08, G1, G1, q);
	CHECK_EQ(q[3], 1001);
	CHECK_EQ(relay_convert(&f, 0, G1, G1, q), 0);
}

static void
test_watchdog_drop_and_forward(void)
{
	struct relay_path p;
	struct relay_path_cfg c = cfg();
	struct relay_pfc_out po;
	struct pfc_frame f = pfc(3, 0xffff);
	void *fl[8], *out[8];
	uint32_t lens[8];
	uint8_t pr[8];
	uint64_t t;

	c.wd_on = true;
	c.rate_bps = G1;
	c.burst_ns = 1 * MS;
	CHECK_EQ(relay_path_init(&p, &c), 0);
	relay_enqueue(&p, 3, &tag[0], 100, 0);
	relay_enqueue(&p, 3, &tag[1], 100, 0);
	/* a storm: XOFF refreshed every 10 ms */
	for (t = 1 * MS; t < 101 * MS; t += 10 * MS) {
		CHECK_EQ(relay_pfc_rx(&p, &f, t), 1u << 3);
		CHECK_EQ(relay_tick(&p, t, &po, fl, 8), 0);
	}
	CHECK_EQ(p.wd[3].state, PFC_WD_OK);
	relay_pfc_rx(&p, &f, 101 * MS);
	/* paused for detect (100 ms): storm; drop flushes the queue */
	CHECK_EQ(relay_tick(&p, 101 * MS, &po, fl, 8), 2);
	CHECK(fl[0] == &tag[0] && fl[1] == &tag[1]);
	CHECK_EQ(p.wd[3].state, PFC_WD_STORM);
	CHECK_EQ(p.q[3].st.drops[RELAY_DROP_WATCHDOG], 2);
	CHECK_EQ(relay_enqueue(&p, 3, &tag[2], 100, 101 * MS), RELAY_ENQ_DROP);
	/* PFC is ignored during the storm, but keeps it from restoring */
	CHECK_EQ(relay_pfc_rx(&p, &f, 150 * MS), 0);
	CHECK_EQ(p.wd_ignored_pfc[3], 1);
	relay_tick(&p, 160 * MS, &po, fl, 8);
	CHECK_EQ(p.wd[3].state, PFC_WD_STORM);
	relay_tick(&p, 249 * MS, &po, fl, 8);
	CHECK_EQ(p.wd[3].state, PFC_WD_STORM);
	relay_tick(&p, 250 * MS, &po, fl, 8); /* 100 ms without PFC: restored */
	CHECK_EQ(p.wd[3].state, PFC_WD_OK);
	CHECK_EQ(p.wd[3].restores, 1);
	CHECK_EQ(relay_enqueue(&p, 3, &tag[3], 100, 251 * MS), RELAY_ENQ_OK);
	relay_path_free(&p);

	/* forward: the queue is transmitted although PFC keeps arriving */
	c.wd_action = PFC_WD_FORWARD;
	CHECK_EQ(relay_path_init(&p, &c), 0);
	relay_enqueue(&p, 3, &tag[0], 100, 0);
	for (t = 1 * MS; t <= 101 * MS; t += 10 * MS) {
		relay_pfc_rx(&p, &f, t);
		relay_tick(&p, t, &po, fl, 8);
	}
	CHECK_EQ(p.wd[3].state, PFC_WD_STORM);
	CHECK(!relay_prio_blocked(&p, 3, 101 * MS));
	CHECK_EQ(relay_dequeue(&p, 101 * MS, out, lens, pr, 8), 1);
	CHECK_EQ(p.tx_while_storm[3], 1);
	CHECK_EQ(p.q[3].st.drops[RELAY_DROP_WATCHDOG], 0);
	relay_path_free(&p);

	/* alert: counts the storm, PFC is still honoured */
	c.wd_action = PFC_WD_ALERT;
	CHECK_EQ(relay_path_init(&p, &c), 0);
	relay_enqueue(&p, 3, &tag[0], 100, 0);
	for (t = 1 * MS; t <= 101 * MS; t += 10 * MS) {
		relay_pfc_rx(&p, &f, t);
		relay_tick(&p, t, &po, fl, 8);
	}
	CHECK_EQ(p.wd[3].storms, 1);
	CHECK(relay_prio_blocked(&p, 3, 101 * MS));
	CHECK_EQ(relay_dequeue(&p, 101 * MS, out, lens, pr, 8), 0);
	relay_path_free(&p);
}

static void
test_auto_buffer(void)
{
	/* 10 Gbit/s x 20 ms = 25 MB; + 10 % + 4 frames */
	CHECK_EQ(relay_bdp_bytes(10 * G1, 20 * MS), 25000000);
	CHECK_EQ(relay_auto_buffer(10 * G1, 20 * MS, 2048), 25000000 + 2500000 + 4 * 2048);
	CHECK_EQ(relay_bdp_bytes(1, 1), 1); /* rounded up */
}

static int
parse(const char *const *args, int n, struct relay_params *p, char *err)
{
	char *argv[32];
	int rc;

	argv[0] = (char *)"pfc-relay";
	for (int i = 0; i < n; i++)
		argv[i + 1] = (char *)args[i];
	relay_params_defaults(p);
	rc = relay_parse_args(n + 1, argv, p, err, 256);
	return rc < 0 ? rc : relay_configure(p, err, 256);
}

static void
test_config(void)
{
	struct relay_params p;
	char err[256];
	const char *ok[] = {"--link-rate", "10gbit",	 "--remote-rate",
			    "1gbit",	   "--rtt",	 "20ms",
			    "--lossless",  "3,4",	 "--trust",
			    "pcp",	   "--watchdog", "action=forward,detect=400ms"};
	const char *no_rtt[] = {"--link-rate", "10gbit"};
	const char *bad_wd[] = {"--link-rate", "1gbit",	     "--rtt",
				"1ms",	       "--watchdog", "detect=fast"};
	const char *bad_buf[] = {"--link-rate", "1gbit", "--rtt", "1ms", "--buffer", "lots"};
	const char *wd_off[] = {"--link-rate", "1gbit", "--rtt",    "1ms",
				"--watchdog",  "off",	"--buffer", "1mb"};
	uint8_t m;

	CHECK_EQ(parse(ok, 12, &p, err), 0);
	CHECK_EQ(p.eff_local_bps, 10 * G1);
	CHECK_EQ(p.eff_remote_bps, G1);
	CHECK_EQ(p.bdp_bytes, 2500000);
	CHECK(p.buffer_auto);
	CHECK_EQ(p.eff_buffer_bytes, relay_auto_buffer(G1, 20 * MS, p.mbuf_size));
	CHECK_EQ(p.lossless, 0x18);
	CHECK_EQ(p.trust, PFC_TRUST_PCP);
	CHECK(p.wd_on);
	CHECK_EQ(p.wd_action, PFC_WD_FORWARD);
	CHECK_EQ(p.wd_detect_ns, 400 * MS);
	CHECK_EQ(p.wd_restore_ns, 200 * MS); /* SONiC default kept */
	CHECK_EQ(parse(no_rtt, 2, &p, err), -EINVAL);
	CHECK(strstr(err, "--rtt is required") != NULL);
	CHECK_EQ(parse(bad_wd, 6, &p, err), -EINVAL);
	CHECK(strstr(err, "--watchdog: detect=\"fast\"") != NULL);
	CHECK_EQ(parse(bad_buf, 6, &p, err), -EINVAL);
	CHECK(strstr(err, "--buffer") != NULL && strstr(err, "auto") != NULL);
	CHECK_EQ(parse(wd_off, 8, &p, err), 0);
	CHECK(!p.wd_on);
	CHECK(!p.buffer_auto);
	CHECK_EQ(p.eff_buffer_bytes, 1 << 20);
	CHECK_EQ(relay_parse_prio_list("0,7", &m), 0);
	CHECK_EQ(m, 0x81);
	CHECK_EQ(relay_parse_prio_list("3,", &m), -1);
	CHECK_EQ(relay_parse_prio_list("34", &m), -1);
	CHECK_EQ(relay_parse_prio_list("", &m), -1);
}

RW_TEST_MAIN(RW_TEST(test_queue_accounting_and_limit),
	     RW_TEST(test_scheduler_round_robin_skips_paused), RW_TEST(test_pacer),
	     RW_TEST(test_xoff_xon_refresh), RW_TEST(test_relay_convert),
	     RW_TEST(test_watchdog_drop_and_forward), RW_TEST(test_auto_buffer),
	     RW_TEST(test_config))
