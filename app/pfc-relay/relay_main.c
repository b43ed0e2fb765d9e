/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pfc-relay: the Swing PFC-Relay appliance (Chen et al., TPDS 2023; docs/pfc-relay.md). This
 * file is the process: arguments, EAL, mempool, ports, the poll loop with idle
 * back-off, and the reports at exit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "dp_port.h"
#include "emu_units.h"
#include "relay_app.h"
#include "relay_metrics.h"

struct relay_app relay_app;

static int
make_paths(struct relay_app *app)
{
	const struct relay_params *p = &app->prm;

	for (unsigned d = 0; d < RELAY_NPATH; d++) {
		bool l2r = d == RELAY_L2R;
		struct relay_path_cfg c = {
		    .slots = app->pool_mbufs,
		    .limit_bytes = l2r ? p->xoff_bytes + p->headroom_bytes : p->eff_buffer_bytes,
		    .rate_bps = l2r ? p->eff_remote_bps : p->eff_local_bps,
		    .burst_ns = p->pace_burst_ns,
		    .lossless = p->lossless,
		    .wd_on = p->wd_on,
		    .wd_detect_ns = p->wd_detect_ns,
		    .wd_restore_ns = p->wd_restore_ns,
		    .wd_action = p->wd_action,
		    .gen_pfc = l2r,
		    .xoff_bytes = p->xoff_bytes,
		    .xon_bytes = p->xon_bytes,
		    .xoff_quanta = (uint16_t)p->pause_quanta,
		    .ingress_bps = l2r ? p->eff_local_bps : p->eff_remote_bps,
		};
		int rc = relay_path_init(&app->path[d], &c);

		if (rc < 0) {
			fprintf(stderr, "pfc-relay: %s: cannot set up the queues: %s\n",
				relay_path_name(d), strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static uint32_t
pool_size(const struct relay_params *p)
{
	uint64_t nl = (uint64_t)__builtin_popcount(p->lossless);
	uint64_t bytes = nl * (p->eff_buffer_bytes + p->xoff_bytes + p->headroom_bytes);
	uint64_t n = bytes / 256 + 2ull * (p->rxd + p->txd) + 4096;

	if (p->mbufs)
		return p->mbufs;
	if (n < 8192)
		n = 8192;
	return n > (1u << 20) ? 1u << 20 : (uint32_t)n;
}

int
main(int argc, char **argv)
{
	struct relay_app *app = &relay_app;
	struct relay_params *prm = &app->prm;
	bool started[RELAY_NPORT] = {false}, paths = false;
	bool memif; /* a net_memif port: no rte_eal_cleanup() (dp_port.h) */
	char err[640], sz[32];
	int eal_argc, rc, status = 1;
	struct dp_backoff b;
	uint64_t next_stats;

	/* 1. everything the user typed is checked before anything starts */
	relay_params_defaults(prm);
	rc = relay_parse_main(argc, argv, prm, &eal_argc, err, sizeof(err));
	if (rc == 1)
		return 0;
	if (rc == 0 && eal_argc == argc) {
		fprintf(stderr, "pfc-relay: missing \"--\" and the relay options after the EAL "
				"arguments (--help lists them)\n");
		return 2;
	}
	if (rc < 0 || (rc = relay_configure(prm, err, sizeof(err))) < 0) {
		fprintf(stderr, "pfc-relay: %s\n", err);
		return 2;
	}

	/* 2. metrics (their threads before the EAL: the process's CPU mask), EAL */
	if (relay_metrics_start(app, err, sizeof(err)) < 0) {
		fprintf(stderr, "pfc-relay: %s\n", err);
		return 2;
	}
	if (relay_ctl_telemetry_register() != 0)
		fprintf(stderr, "pfc-relay: warning: telemetry command not registered\n");
	if (dp_eal_start(eal_argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "pfc-relay: %s\n", err);
		return 1;
	}
	/* the clock starts at 1 s: pfc_state reads time 0 as "unset" */
	dp_clock_init(&app->clk, rte_get_tsc_hz(), rte_rdtsc() - rte_get_tsc_hz());
	app->started_ns = relay_now_ns();
	app->port[RELAY_LOCAL].id = (uint16_t)prm->local_port;
	app->port[RELAY_REMOTE].id = (uint16_t)prm->remote_port;
	app->port[RELAY_LOCAL].rate_bps = prm->eff_local_bps;
	app->port[RELAY_REMOTE].rate_bps = prm->eff_remote_bps;
	for (unsigned i = 0; i < RELAY_NPORT; i++)
		if (!rte_eth_dev_is_valid_port(app->port[i].id)) {
			fprintf(stderr,
				"pfc-relay: --%s port %u does not exist (%u ports; give two with "
				"--vdev "
				"net_af_packet0,iface=IF or PCI addresses)\n",
				i == RELAY_LOCAL ? "local" : "remote", app->port[i].id,
				rte_eth_dev_count_avail());
			goto out;
		}

	/* 3. one mempool for both directions, then the ports */
	app->pool_mbufs = pool_size(prm);
	app->pool = dp_pool_create("relay_pool", app->pool_mbufs, (uint16_t)prm->mbuf_size, err,
				   sizeof(err));
	if (app->pool == NULL) {
		fprintf(stderr, "pfc-relay: %s; or lower --mbufs\n", err);
		goto out;
	}
	for (unsigned i = 0; i < RELAY_NPORT; i++) {
		struct dp_port_cfg pc = {.port_id = app->port[i].id,
					 .nb_queues = 1,
					 .nb_rxd = (uint16_t)prm->rxd,
					 .nb_txd = (uint16_t)prm->txd,
					 .mtu = prm->mtu,
					 .promisc = true,
					 .pool = app->pool};
		struct dp_port_info info;

		if (dp_port_start(&pc, &info, err, sizeof(err)) < 0) {
			fprintf(stderr, "pfc-relay: %s\n", err);
			goto out;
		}
		started[i] = true;
		app->port[i].mac = info.mac;
		app->port[i].rx_cut_len = info.rx_cut_len;
		emu_format_rate(sz, sizeof(sz), app->port[i].rate_bps);
		printf("pfc-relay: %s port %u (%s, %s) at %s\n",
		       i == RELAY_LOCAL ? "Local" : "Remote", app->port[i].id, info.name,
		       info.driver, sz);
	}
	if (make_paths(app) < 0)
		goto out;
	paths = true;
	pfc_classifier_init(&app->cls, prm->trust);
	printf("pfc-relay: Remote-ingress buffer %" PRIu64 " bytes per priority (%s; BDP = %" PRIu64
	       " bytes, %.2f BDP); Local xoff %" PRIu64 " xon %" PRIu64 " headroom %" PRIu64
	       "; %u mbufs\n",
	       prm->eff_buffer_bytes, prm->buffer_auto ? "auto: BDP + 10 % + 4 frames" : "--buffer",
	       prm->bdp_bytes, (double)prm->eff_buffer_bytes / (double)prm->bdp_bytes,
	       prm->xoff_bytes, prm->xon_bytes, prm->headroom_bytes, app->pool_mbufs);
	printf("pfc-relay: lossless 0x%02x, trust %s, watchdog %s; %s; Ctrl-C to stop\n",
	       prm->lossless, prm->trust == PFC_TRUST_DSCP ? "dscp" : "pcp",
	       prm->wd_on ? pfc_wd_action_name(prm->wd_action) : "off",
	       prm->busy_poll ? "busy polling" : "idle back-off");
	fflush(stdout);
	app->running = true;
	relay_metrics_ready();

	/* 4. one lcore polls both ports (the machine has two shared cores) */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	dp_backoff_init(&b, prm->busy_poll);
	b.max_us = (uint32_t)(prm->idle_max_ns / 1000);
	if (b.min_us > b.max_us)
		b.min_us = b.max_us;
	next_stats = relay_now_ns() + prm->stats_interval_ns;
	while (!dp_quit) {
		uint64_t next;
		uint32_t work = relay_dp_poll(app, &next);

		app->loops++;
		dp_backoff_until(&b, work, relay_now_ns(),
				 next); /* bounded by the next pacing/pause/refresh deadline */
		app->sleeps = b.sleeps; /* live in --stats-json too */
		if (unlikely(prm->stats_json[0] && relay_now_ns() >= next_stats)) {
			char tmp[300];

			snprintf(tmp, sizeof(tmp), "%s.tmp", prm->stats_json);
			if (relay_report_json(app, tmp, err, sizeof(err)) == 0)
				rename(tmp, prm->stats_json);
			next_stats = relay_now_ns() + prm->stats_interval_ns;
		}
	}
	app->running = false;

	/* 5. reports */
	relay_report_table(app, stdout);
	status = 0;
	if (prm->json[0]) {
		if (relay_report_json(app, prm->json, err, sizeof(err)) < 0) {
			fprintf(stderr, "pfc-relay: %s\n", err);
			status = 1;
		} else {
			printf("pfc-relay: wrote %s\n", prm->json);
		}
	}
	if (prm->stats_json[0] && relay_report_json(app, prm->stats_json, err, sizeof(err)) < 0)
		fprintf(stderr, "pfc-relay: %s\n", err);
	fflush(stdout);
out:
	relay_metrics_stop(); /* the final values, before the paths are freed */
	/* one reverse-order cleanup path */
	memif = dp_memif_quiesce(); /* before the first stop */
	for (unsigned i = 0; i < RELAY_NPORT; i++)
		if (started[i])
			rte_eth_dev_stop(app->port[i].id);
	if (paths) {
		relay_dp_drain(app);
		for (unsigned d = 0; d < RELAY_NPATH; d++)
			relay_path_free(&app->path[d]);
	}
	for (unsigned i = 0; i < RELAY_NPORT; i++)
		if (started[i])
			rte_eth_dev_close(app->port[i].id);
	rte_mempool_free(app->pool);
	dp_eal_finish(memif);
	return status;
}
