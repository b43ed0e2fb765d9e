/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lossy-emu: a two-port DPDK bump-in-the-wire that impairs each direction
 * with its own netem-style pipeline (docs/lossy-emu.md). This file is the
 * process: arguments, EAL, mempools sized from the SPEC, ports, lcores, and
 * the reports at exit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mempool.h>

#include "dp_port.h"
#include "lemu_app.h"
#include "lemu_droplog.h"
#include "lemu_metrics.h"

struct lemu_app lemu_app = {.ctl_lock = PTHREAD_MUTEX_INITIALIZER};

#define LEMU_DEFAULT_LINK_BPS 10000000000ull
#define LEMU_PFC_RING 1024

/* ---- lcores ---------------------------------------------------------------------- */

struct lemu_worker {
	struct lemu_dir *dirs[LEMU_NDIR];
	unsigned n;
	bool main_lcore; /* also prints --stats-interval tables */
};

/*
 * --stall-detect: one host-stall detector per lcore (lib/emu/emu_stall.h), shared by
 * the directions it serves; each direction checks it right before each release, and
 * the loop tells it the sleeps the idle back-off asked for.
 */
static struct emu_stall stall_det[LEMU_NDIR];

static int
worker_main(void *arg)
{
	struct lemu_worker *w = arg;
	uint64_t every = (uint64_t)lemu_app.prm.stats_s * 1000000000u;
	uint64_t next_print = lemu_now_ns() + every;
	struct dp_backoff b;
	struct emu_stall *sd = w->dirs[0]->sd;

	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* 1 us: sleeps end on time */
	dp_backoff_init(&b, lemu_app.prm.busy_poll);
	while (!dp_quit) {
		uint64_t now = lemu_now_ns(), next = UINT64_MAX, nx;
		uint32_t work = 0;

		for (unsigned i = 0; i < w->n; i++) {
			work += lemu_dir_poll(w->dirs[i], now, &nx);
			if (nx < next)
				next = nx;
		}
		dp_backoff_until(&b, work, lemu_now_ns(), next); /* never past the next release */
		if (unlikely(sd != NULL))
			emu_stall_asked(sd, (uint64_t)b.slept_us * 1000u);
		if (unlikely(w->main_lcore && every && now >= next_print)) {
			lemu_report_table(&lemu_app, stdout);
			next_print = now + every;
		}
	}
	return 0;
}

/* ---- memory -------------------------------------------------------------------- */

static uint64_t
mb(uint64_t bytes)
{
	return (bytes + (1u << 20) - 1) >> 20;
}

/*
 * The one-line EAL-memory error after a pool could not be allocated: which
 * SPEC needs what, and the EAL option that gives it in the memory mode the EAL
 * runs in (dp_mem_advice: -m with --no-huge, free hugepages otherwise).
 */
static void
memory_error(const struct lemu_app *app, const uint64_t need[LEMU_NDIR], const char *why)
{
	uint64_t sum = need[0] + need[1];
	unsigned big = need[1] > need[0];
	char adv[320];

	dp_mem_advice(sum / 20 * 21, adv,
		      sizeof(adv)); /* each pool's ring and a little more: 5 % */
	fprintf(stderr,
		"lossy-emu: EAL memory too small: %s SPEC \"%s\" needs %" PRIu64
		" MB of mbufs (%u x %" PRIu64 " B)%s%s%s%" PRIu64
		" MB, and allocating them failed (%s); %s; or lower --mbufs / --mbuf-size\n",
		lemu_dir_name(big), app->prm.spec_text[big], mb(need[big]), app->pool_mbufs[big],
		app->mbuf_bytes, need[!big] ? " and " : "", need[!big] ? lemu_dir_name(!big) : "",
		need[!big] ? " needs " : "; total ", need[!big] ? mb(need[!big]) : mb(sum), why,
		adv);
}

/*
 * Size each direction's pool from its SPEC and allocate it. No check of the
 * heap's free bytes first: with hugepages (DPDK's default dynamic memory mode)
 * the heap starts nearly empty and grows as allocations need it, so only the
 * allocation itself can tell whether the memory is there.
 */
static int
make_pools(struct lemu_app *app, struct rte_mempool *pool[LEMU_NDIR],
	   struct rte_mempool *txpool[LEMU_NDIR])
{
	static const char *const names[LEMU_NDIR] = {"lemu_a2b", "lemu_b2a"};
	static const char *const txnames[LEMU_NDIR] = {"lemu_tx_a2b", "lemu_tx_b2a"};
	uint32_t slack = app->prm.rxd + app->prm.txd + LEMU_TX_MAX + LEMU_CTRL_MAX + LEMU_PFC_RING +
			 2 * 512 /* mempool caches */;
	uint64_t need[LEMU_NDIR];
	char err[512];

	/* the delay line in packets: frames of --mbuf-size, or the packet rate at --min-frame */
	uint32_t frame =
	    app->prm.min_frame ? app->prm.min_frame + LEMU_WIRE_OVERHEAD : app->prm.mbuf_size;

	app->mbuf_bytes = dp_mbuf_footprint(app->prm.mbuf_size);
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		struct lemu_pool_need pn;

		lemu_pool_need(&app->prm.spec[d], app->link_bps[d], frame, slack, &pn);
		app->pool_mbufs[d] = app->prm.mbufs ? app->prm.mbufs : pn.mbufs;
		app->line_bytes[d] = pn.line_bytes;
		app->line_pkts[d] = pn.line_pkts;
		need[d] = (uint64_t)app->pool_mbufs[d] * app->mbuf_bytes;
		if (pn.capped && !app->prm.mbufs) {
			/* a pool too small for delay x rate would cap the rate silently: refuse */
			char adv[320];
			unsigned __int128 full =
			    (unsigned __int128)(pn.line_pkts + pn.queue_pkts + slack) *
			    app->mbuf_bytes;

			dp_mem_advice((uint64_t)full, adv, sizeof(adv));
			fprintf(stderr,
				"lossy-emu: %s: the delay line (%" PRIu64
				" MB at %.3g Gbit/s x %.3g ms) "
				"needs %" PRIu64 " mbufs of frames of %u B, above the limit of %u "
				"(%" PRIu64
				" MB of EAL memory); lower the delay or the rate, or size "
				"for larger frames (--min-frame, --mbuf-size); %s\n",
				lemu_dir_name(d), mb(pn.line_bytes), (double)pn.rate_bps / 1e9,
				(double)pn.max_delay_ns / 1e6, pn.line_pkts + pn.queue_pkts + slack,
				frame, LEMU_MBUFS_MAX, mb((uint64_t)full), adv);
			return -E2BIG;
		}
	}
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		/*
		 * The largest per-lcore cache (the slack above counts it): a release after a
		 * pause of the loop frees and takes hundreds of mbufs at once, and a smaller
		 * cache then cycles them through the pool's ring, all cold (issue 17).
		 */
		pool[d] = dp_pool_create_cache(
		    names[d], app->pool_mbufs[d], (uint16_t)app->prm.mbuf_size,
		    app->pool_mbufs[d] >= 4096 ? RTE_MEMPOOL_CACHE_MAX_SIZE : 32, err, sizeof(err));
		if (pool[d] == NULL) {
			memory_error(app, need, rte_strerror(rte_errno));
			return -ENOMEM;
		}
		/*
		 * The compact frames' mbufs at release (lemu_dir.c materialize): one TX
		 * batch, the TX ring the port may hold them in, and the caches. Apart from
		 * the RX pool, so that a delay line holding every RX mbuf cannot starve
		 * the release that would free them. 128 B of data: LEMU_CR_MAXLEN.
		 */
		txpool[d] =
		    dp_pool_create_cache(txnames[d], LEMU_TX_MAX + app->prm.txd + 2 * 32 * 4,
					 LEMU_CR_MAXLEN, 32, err, sizeof(err));
		if (txpool[d] == NULL) {
			fprintf(stderr, "lossy-emu: %s\n", err);
			return -ENOMEM;
		}
	}
	return 0;
}

/* ---- main ------------------------------------------------------------------------ */

static uint64_t
port_rate(uint16_t port, uint64_t forced)
{
	struct rte_eth_link link;

	if (forced)
		return forced;
	if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_speed != 0 &&
	    link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		return (uint64_t)link.link_speed * 1000000u;
	return LEMU_DEFAULT_LINK_BPS;
}

int
main(int argc, char **argv)
{
	struct lemu_app *app = &lemu_app;
	struct lemu_params *prm = &app->prm;
	struct rte_mempool *pool[LEMU_NDIR] = {NULL}, *txpool[LEMU_NDIR] = {NULL};
	struct rte_ring *ring[LEMU_NDIR] = {NULL};
	struct lemu_worker wk[LEMU_NDIR];
	uint16_t port[LEMU_NDIR];
	bool started[LEMU_NDIR] = {false}, dir_ok[LEMU_NDIR] = {false};
	bool memif; /* a net_memif port: no rte_eal_cleanup() (dp_port.h) */
	char err[512];
	int eal_argc, rc, status = 1;
	unsigned lcore, nworkers = 0;

	/* 1. everything the user typed is checked before anything starts */
	lemu_params_defaults(prm);
	rc = lemu_parse_main(argc, argv, prm, &eal_argc, err, sizeof(err));
	if (rc == 1)
		return 0;
	if (rc < 0 || lemu_configure(prm, err, sizeof(err)) < 0) {
		fprintf(stderr, "lossy-emu: %s\n", err);
		return 2;
	}

	/* 2. metrics (their threads before the EAL: the process's CPU mask), EAL */
	if (lemu_metrics_start(app, err, sizeof(err)) < 0) {
		fprintf(stderr, "lossy-emu: %s\n", err);
		return 2;
	}
	if (lemu_ctl_telemetry_register() != 0)
		fprintf(stderr, "lossy-emu: warning: telemetry commands not registered\n");
	if (dp_eal_start(eal_argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "lossy-emu: %s\n", err);
		return 1;
	}
	lemu_clock_init();
	app->started_ns = lemu_now_ns();
	if (prm->drop_log[0] && lemu_droplog_open(prm->drop_log, err, sizeof(err)) < 0) {
		fprintf(stderr, "lossy-emu: %s\n", err);
		rte_eal_cleanup();
		return 1;
	}
	app->lcores = rte_lcore_count();
	port[LEMU_A2B] = (uint16_t)prm->port_a; /* a2b receives on A */
	port[LEMU_B2A] = (uint16_t)prm->port_b;
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		if (!rte_eth_dev_is_valid_port(port[d])) {
			fprintf(stderr,
				"lossy-emu: port %u does not exist (%u ports; give two with --vdev "
				"net_af_packet0,iface=IF or PCI addresses)\n",
				port[d], rte_eth_dev_count_avail());
			goto out;
		}
		app->link_bps[d] = port_rate(port[d], prm->link_bps);
	}

	/* 3. mempools sized from the SPEC, then the ports */
	if (make_pools(app, pool, txpool) < 0)
		goto out;
	uint32_t cut_len[LEMU_NDIR] = {0};

	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		struct dp_port_cfg pc = {.port_id = port[d],
					 .nb_queues = 1,
					 .nb_rxd = (uint16_t)prm->rxd,
					 .nb_txd = (uint16_t)prm->txd,
					 .mtu = prm->mtu,
					 .promisc = true,
					 .pool = pool[d]};
		struct dp_port_info info;

		if (dp_port_start(&pc, &info, err, sizeof(err)) < 0) {
			fprintf(stderr, "lossy-emu: %s\n", err);
			goto out;
		}
		started[d] = true;
		cut_len[d] = info.rx_cut_len;
		if (info.rx_cut_len)
			printf("lossy-emu: port %c hands frames of %u B or more on cut (its ring "
			       "frame): those its IP length shows cut are dropped (drop_cut)\n",
			       'A' + d, info.rx_cut_len);
		printf("lossy-emu: port %c = %u (%s, %s), %u mbufs of %u B for %s (%" PRIu64
		       " MB of memory; delay line %" PRIu64 " MB = %" PRIu64 " frames of %u B)\n",
		       'A' + d, port[d], info.name, info.driver, app->pool_mbufs[d], prm->mbuf_size,
		       lemu_dir_name(d), mb((uint64_t)app->pool_mbufs[d] * app->mbuf_bytes),
		       mb(app->line_bytes[d]), app->line_pkts[d],
		       prm->min_frame ? prm->min_frame + LEMU_WIRE_OVERHEAD : prm->mbuf_size);
	}

	/* 4. the two directions; each one's PFC leaves through the peer's TX port */
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		char name[32];

		snprintf(name, sizeof(name), "lemu_pfc_%s", lemu_dir_name(d));
		ring[d] = rte_ring_create(name, LEMU_PFC_RING, (int)rte_socket_id(),
					  RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ring[d] == NULL) {
			fprintf(stderr, "lossy-emu: cannot create ring %s: %s\n", name,
				rte_strerror(rte_errno));
			goto out;
		}
	}
	for (unsigned d = 0; d < LEMU_NDIR; d++)
		emu_stall_init(&stall_det[d], EMU_STALL_NS);
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		struct lemu_dir_cfg *c = lemu_cfg_new(app, d, &prm->spec[d]);
		struct lemu_dir_args a = {
		    .id = d,
		    .rx_port = port[d],
		    .tx_port = port[!d],
		    .burst = (uint16_t)prm->burst,
		    .rx_cut_len = cut_len[d],
		    .pool = pool[d],
		    .tx_pool = txpool[d],
		    .capacity = app->pool_mbufs[d],
		    .link_bps = app->link_bps[d],
		    .coalesce_ns = prm->coalesce_ns,
		    .pfc_out = ring[d],
		    .pfc_in = ring[!d],
		    .cfg = c,
		    /* the lcore plan of step 5: one per direction with >= 3 */
		    .sd = !prm->stall_detect ? NULL
			  : app->lcores >= 3 ? &stall_det[d]
					     : &stall_det[0]};

		if (c == NULL || (rc = lemu_dir_init(&app->dir[d], &a)) < 0) {
			fprintf(stderr, "lossy-emu: %s: cannot allocate the queue and delay line\n",
				lemu_dir_name(d));
			goto out;
		}
		dir_ok[d] = true;
		printf("lossy-emu: %s: %s\n", lemu_dir_name(d), c->text);
	}
	printf("lossy-emu: seed %" PRIu64 "; %u lcore(s); %s; Ctrl-C to stop\n", prm->seed,
	       app->lcores, prm->busy_poll ? "busy polling" : "idle back-off");
	fflush(stdout);
	pthread_mutex_lock(&app->ctl_lock);
	app->running = true;
	pthread_mutex_unlock(&app->ctl_lock);
	lemu_metrics_ready();

	/* 5. lcores: one per direction with >= 3, else one worker (or main) for both */
	memset(wk, 0, sizeof(wk));
	app->fwd_start_ns = lemu_now_ns();
	if (app->lcores >= 3) {
		RTE_LCORE_FOREACH_WORKER(lcore)
		{
			if (nworkers == LEMU_NDIR)
				break;
			wk[nworkers].dirs[0] = &app->dir[nworkers];
			wk[nworkers].n = 1;
			rte_eal_remote_launch(worker_main, &wk[nworkers], lcore);
			nworkers++;
		}
	} else {
		wk[0].dirs[0] = &app->dir[LEMU_A2B];
		wk[0].dirs[1] = &app->dir[LEMU_B2A];
		wk[0].n = 2;
		if (app->lcores == 2) {
			lcore = rte_get_next_lcore(-1, 1, 0);
			rte_eal_remote_launch(worker_main, &wk[0], lcore);
			nworkers = 1;
		}
	}
	if (nworkers == 0) {
		wk[0].main_lcore = true;
		worker_main(&wk[0]);
	} else {
		uint64_t every = (uint64_t)prm->stats_s * 1000000000u, next = lemu_now_ns() + every;
		struct timespec ts = {0, 50 * 1000 * 1000};

		while (!dp_quit) {
			nanosleep(&ts, NULL);
			if (every && lemu_now_ns() >= next) {
				lemu_report_table(app, stdout);
				next += every;
			}
		}
	}
	rte_eal_mp_wait_lcore();
	app->fwd_end_ns = lemu_now_ns();
	pthread_mutex_lock(&app->ctl_lock);
	app->running = false;
	pthread_mutex_unlock(&app->ctl_lock);

	/* 6. reports */
	for (unsigned d = 0; d < LEMU_NDIR; d++)
		lemu_dir_finish(&app->dir[d]);
	lemu_report_table(app, stdout);
	status = 0;
	if (prm->json[0]) {
		if (lemu_report_json(app, prm->json, err, sizeof(err)) < 0) {
			fprintf(stderr, "lossy-emu: %s\n", err);
			status = 1;
		} else {
			printf("lossy-emu: wrote %s\n", prm->json);
		}
	}
	fflush(stdout);
out:
	lemu_metrics_stop(); /* the final values, before the directions are freed */
	/* one reverse-order cleanup path */
	memif = dp_memif_quiesce(); /* before the first stop */
	for (unsigned d = 0; d < LEMU_NDIR; d++)
		if (started[d])
			rte_eth_dev_stop(port[d]);
	for (unsigned d = 0; d < LEMU_NDIR; d++)
		if (dir_ok[d])
			lemu_dir_free(&app->dir[d]);
	for (unsigned d = 0; d < LEMU_NDIR; d++)
		if (started[d])
			rte_eth_dev_close(port[d]);
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		rte_ring_free(ring[d]);
		rte_mempool_free(pool[d]);
		rte_mempool_free(txpool[d]);
	}
	lemu_ctl_free(app);
	if (lemu_droplog_close() < 0) { /* after the lcores stopped: no more writers */
		fprintf(stderr, "lossy-emu: --drop-log %s: write failed\n", prm->drop_log);
		status = 1;
	}
	dp_eal_finish(memif);
	return status;
}
