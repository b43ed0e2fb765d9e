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
#include <rte_spinlock.h>

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
 * The lcore plan of --workers W with L lcores (-l): with L >= 2W + 1 each worker polls
 * on its own lcore and the main lcore only waits; with W + 1 <= L < 2W + 1, W lcores
 * each run worker k of both directions; with L = W the main lcore runs the first pair.
 * W = 1 is the plan of docs/lossy-emu.md: 3 lcores one per direction, 2 one worker for
 * both, 1 the main lcore for both.
 */
enum lemu_plan {
	LEMU_PLAN_OWN,	     /* one lcore per worker */
	LEMU_PLAN_PAIRS,     /* one lcore per pair (worker k of a2b and b2a), main waits */
	LEMU_PLAN_PAIRS_MAIN /* the same, the main lcore runs pair 0 */
};

static enum lemu_plan
lcore_plan(unsigned lcores, unsigned w)
{
	if (lcores >= 2 * w + 1)
		return LEMU_PLAN_OWN;
	return lcores >= w + 1 ? LEMU_PLAN_PAIRS : LEMU_PLAN_PAIRS_MAIN;
}

/* The lcore slot (stall detector) of worker @p k of direction @p d in plan @p p. */
static unsigned
lcore_slot(enum lemu_plan p, unsigned d, unsigned k, unsigned w)
{
	return p == LEMU_PLAN_OWN ? d * w + k : k;
}

/*
 * --stall-detect: one host-stall detector per lcore (lib/emu/emu_stall.h), shared by
 * the directions it serves; each direction checks it right before each release, and
 * the loop tells it the sleeps the idle back-off asked for.
 */
static struct emu_stall stall_det[LEMU_NDIR * LEMU_WORKERS_MAX];

/* --workers > 1 on a port without RSS or fanout: its one TX queue's lock */
static rte_spinlock_t tx_lock[LEMU_NDIR];

/*
 * How a port spreads flows over W workers: af_packet's kernel fanout hash over its
 * qpairs sockets, the NIC's RSS, or (neither) one queue that worker 0 reads and
 * spreads in software (emu_spread.h); with W = 1 nothing (one queue, as always).
 * Returns the queues to configure, or 0 after printing why the port cannot serve W
 * workers (one line, naming the fix).
 */
static unsigned
port_spread(uint16_t port, char side, unsigned w, const char **how)
{
	struct rte_eth_dev_info di;

	*how = "none";
	if (w == 1)
		return 1;
	if (rte_eth_dev_info_get(port, &di) != 0) {
		fprintf(stderr, "lossy-emu: port %c (%u): cannot read its device info\n", side,
			port);
		return 0;
	}
	if (strcmp(di.driver_name, "net_af_packet") == 0) {
		/* each qpair is a socket of one PACKET_FANOUT group (hash mode): a queue per
		 * worker, no more (frames hashed to a queue no worker reads would be lost) */
		if (di.max_rx_queues != w) {
			fprintf(stderr,
				"lossy-emu: --workers %u: port %c (%u, net_af_packet) has %u queue "
				"pair(s), the workers need %u, one each: give its vdev qpairs=%u "
				"(e.g. --vdev net_af_packet0,iface=IF,qpairs=%u)\n",
				w, side, port, di.max_rx_queues, w, w, w);
			return 0;
		}
		*how = "fanout";
		return w;
	}
	/* net_null reports RSS but hashes nothing (each queue makes its own frames) */
	if ((di.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP)) &&
	    strcmp(di.driver_name, "net_null") != 0) {
		if (di.max_rx_queues < w || di.max_tx_queues < w) {
			fprintf(
			    stderr,
			    "lossy-emu: --workers %u: port %c (%u, %s) has %u RX / %u TX queues, "
			    "the workers need %u of each: lower --workers to %u\n",
			    w, side, port, di.driver_name, di.max_rx_queues, di.max_tx_queues, w,
			    di.max_rx_queues < di.max_tx_queues ? di.max_rx_queues
								: di.max_tx_queues);
			return 0;
		}
		*how = "rss";
		return w;
	}
	*how = "software";
	return 1;
}

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
	uint32_t w = app->prm.workers;
	uint32_t slack = w * (app->prm.rxd + app->prm.txd + LEMU_TX_MAX + LEMU_CTRL_MAX) +
			 LEMU_PFC_RING + (w + 1) * 512 /* mempool caches */;
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
		 * cache then cycles them through the pool's ring, all cold (perf, memif chain).
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
		txpool[d] = dp_pool_create_cache(
		    txnames[d], w * (LEMU_TX_MAX + app->prm.txd) + (w + 1) * 32 * 4, LEMU_CR_MAXLEN,
		    32, err, sizeof(err));
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
	static struct rte_ring *spring[LEMU_NDIR][LEMU_WORKERS_MAX];
	static struct lemu_worker wk[LEMU_NDIR * LEMU_WORKERS_MAX];
	uint16_t port[LEMU_NDIR];
	bool started[LEMU_NDIR] = {false}, bn_ok[LEMU_NDIR] = {false};
	unsigned dir_ok[LEMU_NDIR] = {0}, nq[LEMU_NDIR] = {1, 1}, W;
	bool hw[LEMU_NDIR];
	enum lemu_plan plan;
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
	W = app->workers = prm->workers;
	if (app->lcores < W) {
		fprintf(
		    stderr,
		    "lossy-emu: --workers %u needs at least %u lcores (EAL -l 0-%u; %u give each "
		    "worker its own), the EAL has %u\n",
		    W, W, W - 1, 2 * W + 1, app->lcores);
		status = 2;
		goto out;
	}
	plan = lcore_plan(app->lcores, W);
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
		nq[d] = port_spread(port[d], (char)('A' + d), W, &app->spread[d]);
		if (nq[d] == 0) {
			status = 2;
			goto out;
		}
		hw[d] = strcmp(app->spread[d], "software") != 0;
	}

	/* 3. mempools sized from the SPEC, then the ports */
	if (make_pools(app, pool, txpool) < 0)
		goto out;
	uint32_t cut_len[LEMU_NDIR] = {0};

	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		struct dp_port_cfg pc = {.port_id = port[d],
					 .nb_queues = (uint16_t)nq[d],
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
		/* with several workers any of them may emit (under the bottleneck's lock) */
		ring[d] = rte_ring_create(name, LEMU_PFC_RING, (int)rte_socket_id(),
					  W > 1 ? RING_F_SC_DEQ : RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ring[d] == NULL) {
			fprintf(stderr, "lossy-emu: cannot create ring %s: %s\n", name,
				rte_strerror(rte_errno));
			goto out;
		}
	}
	/* the software spread: a ring per worker 1.., as large as the pool (never full) */
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		for (unsigned k = 1; !hw[d] && k < W; k++) {
			char name[32];

			snprintf(name, sizeof(name), "lemu_sp_%s_%u", lemu_dir_name(d), k);
			spring[d][k] =
			    rte_ring_create(name, app->pool_mbufs[d], (int)rte_socket_id(),
					    RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
			if (spring[d][k] == NULL) {
				fprintf(stderr, "lossy-emu: cannot create ring %s: %s\n", name,
					rte_strerror(rte_errno));
				goto out;
			}
		}
		rte_spinlock_init(&tx_lock[d]);
	}
	for (unsigned i = 0; i < LEMU_NDIR * LEMU_WORKERS_MAX; i++)
		emu_stall_init(&stall_det[i], EMU_STALL_NS);
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		struct lemu_dir_cfg *c = lemu_cfg_new(app, d, &prm->spec[d]);

		app->dir[d] = calloc(W, sizeof(*app->dir[d]));
		if (c == NULL || app->dir[d] == NULL ||
		    emu_bneck_init(&app->bn[d], app->pool_mbufs[d], W > 1) < 0) {
			fprintf(stderr, "lossy-emu: %s: cannot allocate the workers\n",
				lemu_dir_name(d));
			goto out;
		}
		bn_ok[d] = true;
		for (unsigned k = 0; k < W; k++) {
			struct lemu_dir_args a = {
			    .id = d,
			    .widx = k,
			    .nworkers = W,
			    .rx_port = port[d],
			    .tx_port = port[!d],
			    .rx_queue = (uint16_t)(hw[d] ? k : 0),
			    .tx_queue = (uint16_t)(hw[!d] ? k : 0),
			    .bn = &app->bn[d],
			    .tx_lock = !hw[!d] && W > 1 ? &tx_lock[!d] : NULL,
			    .spread_in = !hw[d] && k > 0 ? spring[d][k] : NULL,
			    .spread_out = !hw[d] && k == 0 && W > 1 ? spring[d] : NULL,
			    .burst = (uint16_t)prm->burst,
			    .rx_cut_len = cut_len[d],
			    .pool = pool[d],
			    .tx_pool = txpool[d],
			    .capacity = app->pool_mbufs[d],
			    .link_bps = app->link_bps[d],
			    .coalesce_ns = prm->coalesce_ns,
			    .pfc_out = ring[d],
			    .pfc_in =
				k == 0 ? ring[!d] : NULL, /* the peer's PFC: worker 0 sends it */
			    .cfg = c,
			    /* the lcore plan of step 5 */
			    .sd =
				!prm->stall_detect ? NULL : &stall_det[lcore_slot(plan, d, k, W)]};

			if ((rc = lemu_dir_init(&app->dir[d][k], &a)) < 0) {
				fprintf(stderr,
					"lossy-emu: %s: cannot allocate the queue and delay line\n",
					lemu_dir_name(d));
				goto out;
			}
			dir_ok[d]++;
		}
		printf("lossy-emu: %s: %s\n", lemu_dir_name(d), c->text);
		if (W > 1)
			printf("lossy-emu: %s: %u workers, flows spread by %s\n", lemu_dir_name(d),
			       W,
			       strcmp(app->spread[d], "software") == 0
				   ? "worker 0 in software (5-tuple hash)"
			       : strcmp(app->spread[d], "fanout") == 0
				   ? "the kernel's af_packet fanout hash"
				   : "the port's RSS");
	}
	printf("lossy-emu: seed %" PRIu64 "; %u lcore(s); %s; Ctrl-C to stop\n", prm->seed,
	       app->lcores, prm->busy_poll ? "busy polling" : "idle back-off");
	fflush(stdout);
	pthread_mutex_lock(&app->ctl_lock);
	app->running = true;
	pthread_mutex_unlock(&app->ctl_lock);
	lemu_metrics_ready();

	/* 5. lcores (lcore_plan): W = 1: one per direction with >= 3, else one worker (or
	 * main) for both */
	memset(wk, 0, sizeof(wk));
	app->fwd_start_ns = lemu_now_ns();
	if (plan == LEMU_PLAN_OWN) {
		RTE_LCORE_FOREACH_WORKER(lcore)
		{
			if (nworkers == LEMU_NDIR * W)
				break;
			wk[nworkers].dirs[0] = &app->dir[nworkers / W][nworkers % W];
			wk[nworkers].n = 1;
			rte_eal_remote_launch(worker_main, &wk[nworkers], lcore);
			nworkers++;
		}
	} else {
		for (unsigned k = 0; k < W; k++) {
			wk[k].dirs[0] = &app->dir[LEMU_A2B][k];
			wk[k].dirs[1] = &app->dir[LEMU_B2A][k];
			wk[k].n = 2;
		}
		RTE_LCORE_FOREACH_WORKER(lcore)
		{
			unsigned k = nworkers + (plan == LEMU_PLAN_PAIRS_MAIN);

			if (k == W)
				break;
			rte_eal_remote_launch(worker_main, &wk[k], lcore);
			nworkers++;
		}
	}
	if (plan == LEMU_PLAN_PAIRS_MAIN) {
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
		for (unsigned k = 0; k < W; k++)
			lemu_dir_finish(&app->dir[d][k]);
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
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		for (unsigned k = 0; k < dir_ok[d]; k++)
			lemu_dir_free(&app->dir[d][k]);
		for (unsigned k = 1; k < LEMU_WORKERS_MAX; k++) {
			void *m;

			while (spring[d][k] && rte_ring_dequeue(spring[d][k], &m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(spring[d][k]);
		}
		if (bn_ok[d])
			emu_bneck_free(&app->bn[d]);
		free(app->dir[d]);
	}
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
