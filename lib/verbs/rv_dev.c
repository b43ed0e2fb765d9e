/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rv_dev.c
 * rnic0 inside the application's process: the configuration from the
 * environment (parsed by the rnic's own option table, rnic_config.c), EAL
 * started from a thread of the library's own (rte_eal_init pins its caller:
 * the application's threads keep their CPU affinity), port 0 and its engine
 * opened as the rnic opens them (rnic_setup.c), then the same thread drives
 * the engine while the application does not (it blocks in ibv_get_cq_event,
 * sleeps or spins on memory), with an idle back-off. At exit (and on SIGINT /
 * SIGTERM with the default action) the counters go to --json and EAL is
 * cleaned up.
 *
 * Environment (docs/verbs.md; rnic-exec sets them):
 *   ROCEWAN_VERBS_ARGS   device options, the rnic's (e.g. "--ip 10.0.0.1/24 --recovery irn")
 *   ROCEWAN_VERBS_EAL    EAL arguments (e.g. "--no-huge -m 512 --vdev net_af_packet0,iface=v0")
 *   ROCEWAN_VERBS_SHCONF 1: EAL with a shared configuration (for dpdk-dumpcap), not --in-memory
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "cc.h"
#include "dp_port.h"
#include "fec_roce.h"
#include "mad.h"
#include "net_hdr.h"
#include "rnic_metrics.h"
#include "rnic_setup.h"
#include "rnic_trace.h"
#include "rv_cmep.h"
#include "rv_int.h"
#include "rw_json.h"

struct rv_dev rv = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define RV_MAX_ARGS 128
#define RV_NAP_MIN_US 8
#define RV_NAP_MAX_US 1000
#define RV_APP_ACTIVE_NS 20000 /* an application call advanced the engine this recently */

static __thread bool in_eal;
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cv = PTHREAD_COND_INITIALIZER;
static bool start_done;
static char runtime_dir[512];

bool
rv_in_eal(void)
{
	return in_eal;
}

/* Split @p s on blanks into argv[from..]; returns the new count (at most RV_MAX_ARGS - 1). */
static int
split_args(char *s, char **argv, int from)
{
	int n = from;

	for (char *save = NULL, *t = strtok_r(s, " \t\n", &save); t && n < RV_MAX_ARGS - 2;
	     t = strtok_r(NULL, " \t\n", &save))
		argv[n++] = t;
	argv[n] = NULL;
	return n;
}

/* --json FILE: %p becomes the process id. */
static void
expand_json(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = in; *p && o + 1 < len; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			o += (size_t)snprintf(out + o, len - o, "%ld", (long)getpid());
			p++;
		} else {
			out[o++] = *p;
		}
		if (o >= len)
			o = len - 1;
	}
	out[o] = 0;
}

int
rv_dev_config(void)
{
	static bool done;
	static int rc;
	char *argv[RV_MAX_ARGS];
	static char buf[4096];
	const char *env = getenv("ROCEWAN_VERBS_ARGS");
	int argc, save_optind = optind, save_opterr = opterr, save_optopt = optopt;
	char *save_optarg = optarg;

	if (done)
		return rc;
	done = true;
	snprintf(buf, sizeof(buf), "%s", env ? env : "");
	argv[0] = "rnic";
	argc = split_args(buf, argv, 1);
	argv[argc++] = "write_bw"; /* the table wants a mode; the device ignores it */
	argv[argc] = NULL;
	optind = 1;
	int prc = rnic_parse_args(argc, argv, &rv.prm, rv.err, sizeof(rv.err));
	optind = save_optind;
	opterr = save_opterr;
	optopt = save_optopt;
	optarg = save_optarg;
	if (prc != 0) {
		if (prc > 0)
			snprintf(rv.err, sizeof(rv.err), "ROCEWAN_VERBS_ARGS asked for help");
		rc = EINVAL;
		return rc;
	}
	if (!env || !strstr(env, "--ip")) {
		snprintf(rv.err, sizeof(rv.err),
			 "rnic0 needs its address: ROCEWAN_VERBS_ARGS=\"--ip A.B.C.D/N ...\" "
			 "(rnic-exec sets it; docs/verbs.md)");
		rc = EINVAL;
		return rc;
	}
	roce_fec_register(&fec_roce_codec);
	if (cc_register_all() < 0 ||
	    (strcmp(rv.prm.cc, "none") != 0 &&
	     cc_set_params(rv.prm.cc, rv.prm.cc_param, rv.err, sizeof(rv.err)) < 0)) {
		rc = EINVAL;
		return rc;
	}
	if (rv.prm.lcores != 1) {
		snprintf(rv.err, sizeof(rv.err), "option --lcores: rnic0 runs one lcore");
		rc = EINVAL;
		return rc;
	}
	if (rv.prm.json[0])
		expand_json(rv.prm.json, rv.json, sizeof(rv.json));
	rv.configured = true;
	return 0;
}

/* ---- the progress thread ---- */

unsigned int
rv_progress_locked(void)
{
	rv.app_poll_ns = rnic_now_ns(&rv.port);
	unsigned int n = rnic_port_poll(&rv.port);

	rv_cmep_tick_locked();
	return n;
}

int
rv_resolve_locked(const union ibv_gid *gid, uint8_t mac[6])
{
	uint32_t ip;

	if (net_mapped_to_ip4(gid->raw, &ip))
		return rnic_port_resolve(&rv.port, ip, mac, 3000);
	return rnic_port_resolve6(&rv.port, gid->raw, mac, 3000);
}

static void
nap(uint64_t us)
{
	struct timespec ts = {.tv_sec = (time_t)(us / 1000000),
			      .tv_nsec = (long)(us % 1000000) * 1000};

	nanosleep(&ts, NULL);
}

/*
 * Drive the engine while the application does not: RX, timers (retransmit,
 * ACK, pacing, FEC hold) and TX. Idle, the naps grow from 8 us to 1 ms but end
 * by the engine's next timer; a busy engine (roce_dev_busy) is polled again
 * at once.
 */
static void
progress_loop(void)
{
	uint64_t sleep_us = RV_NAP_MIN_US;

	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* this thread's sleeps end on time */
	while (!rv.stop) {
		uint64_t now = rnic_now_ns(&rv.port), d = UINT64_MAX;
		unsigned int work = 0;
		bool busy = false;

		if (rv.prm.busy_poll || now - rv.app_poll_ns > RV_APP_ACTIVE_NS) {
			rv_lock();
			work = rnic_port_poll(&rv.port);
			rv_cmep_tick_locked(); /* the CM's resend and TIMEWAIT timers */
			busy = roce_dev_busy(rv.port.dev);
			if (!work && !busy)
				d = roce_dev_next_deadline(rv.port.dev);
			rv_unlock();
		}
		if (work || busy || rv.prm.busy_poll) {
			rv.progress_polls += work != 0;
			sleep_us = RV_NAP_MIN_US;
			if (!work)
				sched_yield();
			continue;
		}
		now = rnic_now_ns(&rv.port);
		uint64_t us = sleep_us;

		if (d != UINT64_MAX)
			us = d > now ? (d - now) / 1000 : 0;
		if (us > sleep_us)
			us = sleep_us;
		rv.progress_sleeps++;
		if (us)
			nap(us);
		else
			sched_yield();
		if (sleep_us < RV_NAP_MAX_US)
			sleep_us *= 2;
	}
}

static void *
dev_thread(void *arg)
{
	char **argv = arg;
	int argc = 0;
	struct rnic_setup su = {.cq_event = rv_cq_event};

	while (argv[argc])
		argc++;
	in_eal = true;
	int save_optind = optind, save_opterr = opterr, save_optopt = optopt;
	char *save_optarg = optarg;
	int rc = rte_eal_init(argc, argv);

	optind = save_optind;
	opterr = save_opterr;
	optopt = save_optopt;
	optarg = save_optarg;
	if (rc >= 0)
		dp_pdump_init(); /* dpdk-dumpcap can attach (docs/capture.md) */
	if (rc < 0) {
		snprintf(rv.err, sizeof(rv.err), "EAL initialisation failed: %s",
			 rte_strerror(rte_errno));
		rv.start_err = ENODEV;
	} else if (rnic_setup_port(&rv.port, &rv.prm, &su, rv.err, sizeof(rv.err)) < 0) {
		/* EAL ran: leave nothing of it behind (the program goes on without rnic0) */
		char dir[sizeof(runtime_dir)];

		snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
		dp_eal_cleanup();
		rmdir(dir);
		rv.start_err = ENODEV;
	} else {
		snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
		/* EUI-64 from the MAC (RFC 4291 appendix A): U/L bit flipped, ff:fe inserted */
		const uint8_t *m = rv.port.mac;
		uint8_t g[8] = {(uint8_t)(m[0] ^ 2), m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};

		rv.guid = 0;
		for (int i = 0; i < 8; i++)
			rv.guid = (rv.guid << 8) | g[i];
		rnic_metrics_set_port(&rv.port);
		rnic_metrics_ready();
		rv.up = true;
	}
	in_eal = false;
	pthread_mutex_lock(&start_mu);
	start_done = true;
	pthread_cond_broadcast(&start_cv);
	pthread_mutex_unlock(&start_mu);
	if (rv.up)
		progress_loop();
	return NULL;
}

/* ---- the way out ---- */

/*
 * No capability exchange (docs/verbs.md): each side runs its own --recovery. A
 * mismatch shows in what the peer's receiver sends back once a packet is lost:
 * Go-Back-N answers a gap with a sequence-error NAK (IBTA's go-back), Go-Back-ONE
 * with RACKs, IRN with SACKs. The answer that does not fit this side's mode names
 * the peer's. NULL: no mismatch seen (also when nothing was lost).
 */
static const char *
recovery_mismatch(const struct roce_stats *ds, char *buf, size_t len)
{
	const char *mine = rv.prm.rec.ops->name, *peer = NULL;

	if (strcmp(mine, "gbn") != 0 && strcmp(mine, "vrp") != 0 && ds->v[ROCE_STAT_RX_NAK_SEQ])
		peer = "gbn (sequence-error NAKs)";
	else if (strcmp(mine, "gbone") != 0 && ds->v[ROCE_STAT_RX_RACKS])
		peer = "gbone (RACKs)";
	else if (strcmp(mine, "irn") != 0 && ds->v[ROCE_STAT_RX_SACKS])
		peer = "irn (SACKs)";
	if (!peer)
		return NULL;
	snprintf(buf, len,
		 "--recovery %s here, but the peer's receiver answers as %s: give both sides the "
		 "same --recovery",
		 mine, peer);
	return buf;
}

static void
write_json(void)
{
	struct rw_json w;
	struct roce_stats ds;
	FILE *f;

	if (!rv.json[0] || !(f = fopen(rv.json, "w"))) {
		if (rv.json[0])
			fprintf(stderr, "rnic0: --json %s: %s\n", rv.json, strerror(errno));
		return;
	}
	rw_json_init(&w, f);
	rw_doc_begin(&w, "rnic-exec");
	/* the device's options (the rnic's table, less its benchmark options) */
	rw_str(&w, "device_args", getenv("ROCEWAN_VERBS_ARGS"));
	rw_str(&w, "eal_args", getenv("ROCEWAN_VERBS_EAL"));
	rw_uint(&w, "mtu", rv.prm.mtu);
	rw_str(&w, "recovery", rv.prm.recovery);
	rw_str(&w, "cc", rv.prm.cc);
	rw_doc_results(&w, true, rv.prm.seed);
	/* no capability exchange: the mode each side was given (docs/verbs.md) */
	rw_str(&w, "recovery_used", rv.prm.rec.ops->name);
	rw_str(&w, "cc_used", rv.prm.cc);
	rw_uint(&w, "pid", (uint64_t)getpid());
	roce_dev_stats(rv.port.dev, &ds);
	char why[256];

	rw_str(&w, "recovery_mismatch", recovery_mismatch(&ds, why, sizeof(why)));
	rw_obj_begin(&w, "device_counters");
	for (int i = 0; i < ROCE_STAT__COUNT; i++)
		rw_uint(&w, roce_stat_name((enum roce_stat)i), ds.v[i]);
	rw_obj_end(&w);
	rw_obj_begin(&w, "port_counters");
#define RV_CNT_JSON(name, help) rw_uint(&w, #name, rv.port.cnt.name);
	RNIC_PORT_COUNTERS(RV_CNT_JSON)
#undef RV_CNT_JSON
	rw_obj_end(&w);
	rw_obj_begin(&w, "verbs_calls");
	rw_uint(&w, "post_send", rv.calls_post_send);
	rw_uint(&w, "wr_complete", rv.calls_wr_complete);
	rw_uint(&w, "post_recv", rv.calls_post_recv);
	rw_uint(&w, "poll_cq", rv.calls_poll_cq);
	rw_uint(&w, "cq_events", rv.calls_cq_events);
	rw_obj_end(&w);
	rw_obj_begin(&w, "progress");
	rw_uint(&w, "polls_with_work", rv.progress_polls);
	rw_uint(&w, "idle_sleeps", rv.progress_sleeps);
	rw_obj_end(&w);
	struct cm *cm = rv_cmep();
	uint64_t ids, qps;

	rv_cm_counts(&ids, &qps);
	rw_obj_begin(&w, "rdma_cm"); /* librdmacm's entry points (rv_cm.c) and the CM under them */
	rw_uint(&w, "ids_live", ids);
	rw_uint(&w, "qps_created", qps);
	rw_uint(&w, "cm_ids_in_use", cm ? cm_ids_in_use(cm) : 0);
	rw_uint(&w, "cm_ids_alloc", cm ? cm->cnt.ids_alloc : 0);
	rw_uint(&w, "cm_ids_free", cm ? cm->cnt.ids_free : 0);
	rw_uint(&w, "cm_established", cm ? cm->cnt.established : 0);
	rw_uint(&w, "cm_retries", cm ? cm->cnt.retries : 0);
	rw_uint(&w, "cm_timeouts", cm ? cm->cnt.timeouts : 0);
	rw_uint(&w, "cm_tx_err", cm ? cm->cnt.tx_err : 0);
	for (unsigned int i = 0; i < CM_ATTR_COUNT; i++) {
		char k[32];

		snprintf(k, sizeof(k), "rx_%s", cm_attr_name((uint16_t)(MAD_ATTR_CM_REQ + i)));
		rw_uint(&w, k, cm ? cm->cnt.rx[i] : 0);
		snprintf(k, sizeof(k), "tx_%s", cm_attr_name((uint16_t)(MAD_ATTR_CM_REQ + i)));
		rw_uint(&w, k, cm ? cm->cnt.tx[i] : 0);
	}
	for (int i = 0; i < CM_DROP_COUNT; i++) {
		char k[40];

		snprintf(k, sizeof(k), "drop_%s", cm_drop_name((enum cm_drop)i));
		rw_uint(&w, k, cm ? cm->cnt.drop[i] : 0);
	}
	rw_obj_end(&w);
	rw_obj_begin(&w, "mempool");
	rw_uint(&w, "size", rv.port.pool->size);
	rw_uint(&w, "in_use", rte_mempool_in_use_count(rv.port.pool));
	rw_obj_end(&w);
	if (rw_doc_end(&w) < 0 || fclose(f) != 0)
		fprintf(stderr, "rnic0: --json %s: write failed\n", rv.json);
}

/* the device's way out, under the lock: --json, the trace, EAL, its runtime directory */
static void
dev_release_locked(void)
{
	struct roce_stats ds;
	char why[256];

	rnic_port_flush(&rv.port);
	roce_dev_stats(rv.port.dev, &ds);
	if (recovery_mismatch(&ds, why, sizeof(why)))
		fprintf(stderr, "rnic0: %s\n", why);
	write_json();
	rnic_metrics_stop(); /* the file's final values, before the port goes */
	rnic_trace_close();
	dp_eal_cleanup();
	/* EAL leaves its (empty) runtime directory behind: no trace of the prefix after exit */
	if (runtime_dir[0])
		rmdir(runtime_dir);
	rv.up = false;
}

static volatile bool stopped;

/* exit(): the progress thread joins, then the device is released */
static void
dev_stop(void)
{
	if (!rv.up || rv.forked || stopped)
		return;
	stopped = true;
	rv.stop = true;
	pthread_join(rv.thread, NULL);
	rv_lock();
	dev_release_locked();
	rv_unlock();
}

/*
 * SIGINT / SIGTERM with the default action: the signal may have interrupted a
 * verb of this very thread inside the lock, and the progress thread may wait
 * for that lock, so no join: the lock is taken (or found held by this thread,
 * whose verb never resumes), the device released, and the default action
 * ends the process with the progress thread still parked on the lock.
 */
static void
on_signal(int sig)
{
	if (rv.up && !rv.forked && !stopped) {
		stopped = true;
		rv.stop = true;
		if (!pthread_equal(rv.owner, pthread_self())) {
			struct timespec ts = {.tv_nsec = 1000000};

			/* a verb of another thread ends within its step; 2 s at most */
			for (int i = 0; i < 2000 && pthread_mutex_trylock(&rv.lock) != 0; i++)
				nanosleep(&ts, NULL);
		}
		dev_release_locked();
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
on_fork_child(void)
{
	/* the engine, its thread and the port stayed in the parent */
	rv.forked = true;
	pthread_mutex_init(&rv.lock, NULL);
}

int
rv_dev_start(void)
{
	static char *argv[RV_MAX_ARGS];
	static char buf[4096], prefix[64];
	int argc = 0;

	if (rv.forked) {
		snprintf(rv.err, sizeof(rv.err),
			 "rnic0 runs in the process that opened it first; a forked child "
			 "cannot use it (docs/verbs.md)");
		return ENODEV;
	}
	if (rv.up)
		return 0;
	if (rv.start_err)
		return rv.start_err;
	int rc = rv_dev_config();
	if (rc)
		return rc;
	/*
	 * --metrics / --metrics-file (docs/metrics.md): the server's threads start before
	 * the EAL's, so they keep the process's CPU mask, as in the rnic. The device's and
	 * the port's counters only: the program destroys its QPs while a scrape could read
	 * them, so no per-QP series here.
	 */
	if (rnic_metrics_start(&rv.prm, rv.err, sizeof(rv.err)) < 0) {
		rv.start_err = EINVAL;
		return rv.start_err;
	}
	const char *eal = getenv("ROCEWAN_VERBS_EAL");
	const char *shconf = getenv("ROCEWAN_VERBS_SHCONF");

	snprintf(buf, sizeof(buf), "%s", eal ? eal : "");
	argv[argc++] = "rnic0";
	argv[argc++] = "--log-level=lib.eal:error";
	argv[argc++] = "--no-telemetry";
	argc = split_args(buf, argv, argc);
	bool has_prefix = false, in_mem = false, no_huge = false;

	for (int i = 1; i < argc; i++) {
		has_prefix |= strncmp(argv[i], "--file-prefix", 13) == 0;
		in_mem |=
		    strcmp(argv[i], "--in-memory") == 0 || strcmp(argv[i], "--no-shconf") == 0;
		no_huge |= strcmp(argv[i], "--no-huge") == 0;
	}
	if (!has_prefix && argc < RV_MAX_ARGS - 3) {
		snprintf(prefix, sizeof(prefix), "rwverbs%ld", (long)getpid());
		argv[argc++] = "--file-prefix";
		argv[argc++] = prefix;
	}
	/* no shared files: --in-memory, or with --no-huge (legacy memory) --no-shconf */
	if (!in_mem && !(shconf && strcmp(shconf, "1") == 0) && argc < RV_MAX_ARGS - 2)
		argv[argc++] = no_huge ? "--no-shconf" : "--in-memory";
	argv[argc] = NULL;
	if (pthread_create(&rv.thread, NULL, dev_thread, argv) != 0) {
		snprintf(rv.err, sizeof(rv.err), "cannot start the device thread");
		rnic_metrics_stop();
		rv.start_err = EAGAIN;
		return rv.start_err;
	}
	pthread_mutex_lock(&start_mu);
	while (!start_done)
		pthread_cond_wait(&start_cv, &start_mu);
	pthread_mutex_unlock(&start_mu);
	if (!rv.up) {
		pthread_join(rv.thread, NULL);
		rnic_metrics_stop();
		if (!rv.start_err)
			rv.start_err = ENODEV;
		return rv.start_err;
	}
	atexit(dev_stop);
	pthread_atfork(NULL, NULL, on_fork_child);
	/* SIGINT / SIGTERM: clean up, then the default action (an application's own handler
	 * stays, and its exit() runs dev_stop) */
	int sigs[] = {SIGINT, SIGTERM};

	for (unsigned int i = 0; i < 2; i++) {
		struct sigaction old;

		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			signal(sigs[i], on_signal);
	}
	return 0;
}
