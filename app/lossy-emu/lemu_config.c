/* SPDX-License-Identifier: BSD-3-Clause */
/* lossy-emu options: one table drives the command line, --config, --help and --json. */
#include "lemu_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu_rng.h"
#include "emu_units.h"
#include "rw_json.h"
#include "rw_opts.h"

static const char *const dir_names[LEMU_NDIR] = {"a2b", "b2a"};

const char *
lemu_dir_name(unsigned d)
{
	return d < LEMU_NDIR ? dir_names[d] : "both";
}

int
lemu_dir_parse(const char *s)
{
	if (strcmp(s, "a2b") == 0)
		return LEMU_A2B;
	if (strcmp(s, "b2a") == 0)
		return LEMU_B2A;
	if (strcmp(s, "both") == 0)
		return LEMU_NDIR;
	return -1;
}

/* The table's types: the library's, then lossy-emu's own (converted by apply_opt()). */
enum {
	T_U32 = RW_OPT_U32,
	T_STR = RW_OPT_STR,
	T_FLAG = RW_OPT_BOOL,
	T_CONFIG = RW_OPT_CONFIG,
	T_HELP = RW_OPT_HELP,
	T_SPEC = RW_OPT_APP, /* off: the direction, LEMU_NDIR for both */
	T_SEED,		     /* uint64_t that also marks the seed as given */
	T_RATE,
	T_TIME,
};

#define OFF(f) offsetof(struct lemu_params, f)
#define SZ(f) sizeof(((struct lemu_params *)0)->f)

/* One row per option: the single source of parsing, --help and the JSON dump. */
static const struct rw_opt opts[] = {
    {"both", T_SPEC, LEMU_NDIR, 0, NULL, 0, 0, "SPEC",
     "impairment SPEC of both directions (tc-netem grammar, see docs/lossy-emu.md; extensions "
     "limit-bytes, red, pfc, jitter-no-reorder, corrupt-recompute, ctrl-delay, and the "
     "deterministic drops \"drop-psn QPN:PSN[:TIMES]\" (the RoCEv2 packets to QP QPN with PSN "
     "PSN, their first TIMES arrivals, default 1; repeatable), \"drop-nth N\" (every N-th "
     "RoCEv2 packet) and \"drop-mad KIND ORD[,ORD]...\" (the ORD-th MADs of KIND to QP1, "
     "e.g. cm-req 1 or cm-rep 1,3; repeatable))"},
    {"a2b", T_SPEC, LEMU_A2B, 0, "", 0, 0, "SPEC",
     "SPEC of port A -> port B; replaces what an earlier --both set"},
    {"b2a", T_SPEC, LEMU_B2A, 0, "", 0, 0, "SPEC",
     "SPEC of port B -> port A; replaces what an earlier --both set"},
    {"seed", T_SEED, OFF(seed), 0, NULL, 0, UINT64_MAX, "N",
     "seed of every random draw (same seed + same input = same drops); default: from the clock, "
     "printed"},
    {"json", T_STR, OFF(json), SZ(json), "", 0, 0, "FILE",
     "write counters and delay error (rocewan/1) to FILE at exit"},
    {"drop-log", T_STR, OFF(drop_log), SZ(drop_log), "", 0, 0, "FILE",
     "write one CSV line per dropped frame to FILE (CLOCK_MONOTONIC ns, direction, cause, "
     "QPN/PSN/opcode of RoCEv2 frames); default: none"},
    {"metrics", T_STR, OFF(metrics), SZ(metrics), "", 0, 0, "ADDR:PORT",
     "serve Prometheus metrics (text format 0.0.4) at http://ADDR:PORT/metrics while running, "
     "e.g. 0.0.0.0:9102 (docs/metrics.md); default: off"},
    {"metrics-file", T_STR, OFF(metrics_file), SZ(metrics_file), "", 0, 0, "PATH",
     "write the same metrics to PATH every --metrics-interval and at exit (replaced by rename, "
     "for node_exporter's textfile collector); default: off"},
    {"metrics-interval", T_TIME, OFF(metrics_every_ns), 0, "1s", 10000000, 3600000000000ull, "TIME",
     "rewrite period of --metrics-file"},
    {"config", T_CONFIG, OFF(config), SZ(config), "", 0, 0, "FILE",
     "read \"key = value\" lines (keys: these option names) at this point of the command line"},
    {"busy-poll", T_FLAG, OFF(busy_poll), 0, "false", 0, 0, NULL,
     "never sleep when idle (benchmarks); default: idle back-off bounded by the next release"},
    {"stall-detect", T_FLAG, OFF(stall_detect), 0, "false", 0, 0, NULL,
     "before each release, measure the time off the CPU since the last check (wall minus "
     "thread CPU time, less the sleep asked for) and report the release error of frames no "
     "such host stall delayed beside the total (delay_err_us own_*), and time each RX/TX PMD "
     "call (stall_detect; benchmarks: one clock_gettime system call per releasing loop)"},
    {"mbuf-size", T_U32, OFF(mbuf_size), 0, "4608", 256, 65000, "BYTES",
     "mbuf data room = largest frame forwarded (af_packet framesz=F needs >= F - 32)"},
    {"min-frame", T_U32, OFF(min_frame), 0, "0", 0, 65000, "BYTES",
     "size each pool for a delay line full of frames this small (plus 24 B of preamble, gap "
     "and FCS on the wire): the packet rate at --link-rate x the longest delay; 60 sizes it for "
     "minimum frames (e.g. a null-port benchmark); 0: frames of --mbuf-size (bulk RoCE)"},
    {"mbufs", T_U32, OFF(mbufs), 0, "0", 0, LEMU_MBUFS_MAX, "N",
     "mbufs per direction (0: sized from the SPEC: delay x rate / mbuf-size + queue limit)"},
    {"burst", T_U32, OFF(burst), 0, "32", 1, 256, "N", "RX/TX burst size"},
    {"port-a", T_U32, OFF(port_a), 0, "0", 0, 1023, "ID", "DPDK port of side A"},
    {"port-b", T_U32, OFF(port_b), 0, "1", 0, 1023, "ID", "DPDK port of side B"},
    {"rxd", T_U32, OFF(rxd), 0, "1024", 32, 16384, "N", "RX descriptors per port"},
    {"txd", T_U32, OFF(txd), 0, "1024", 32, 16384, "N", "TX descriptors per port"},
    {"mtu", T_U32, OFF(mtu), 0, "0", 0, 65000, "BYTES",
     "set the ports' MTU (0: leave it; af_packet then follows the interface's MTU)"},
    {"link-rate", T_RATE, OFF(link_bps), 0, "0", 0, UINT64_MAX, "RATE",
     "port rate for mbuf sizing and PFC pause time (0: the port's reported speed, else 10gbit)"},
    {"tx-coalesce", T_TIME, OFF(coalesce_ns), 0, "20us", 0, 1000000000, "TIME",
     "hold released frames up to TIME to send fuller TX bursts under load (0: send at once)"},
    {"stats-interval", T_U32, OFF(stats_s), 0, "0", 0, 86400, "SECONDS",
     "also print the counter table every SECONDS (0: only at exit)"},
    {"workers", T_U32, OFF(workers), 0, "1", 1, 16, "N",
     "workers per direction, each on its own RX and TX queue: flows spread by their 5-tuple "
     "(RoCEv2: the UDP source port too) with the port's RSS, af_packet's fanout hash (give its "
     "vdev qpairs=N) or, on ports with neither (memif, net_ring, net_null), worker 0 spreads "
     "them in software; one bottleneck (rate, limit, RED, PFC) per direction whatever N; "
     "needs N lcores (2N + 1: one per worker; 1 keeps the plan of docs/lossy-emu.md)"},
    {"help", T_HELP, 0, 0, NULL, 0, 0, NULL, "print this help and exit"},
};

#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

void
lemu_spec_text(const struct emu_spec *s, char *buf, size_t len)
{
	if (emu_spec_format(s, buf, len) < 0)
		snprintf(buf, len, "?");
}

static int
set_spec(struct lemu_params *p, unsigned dir, const char *text, const char *ctx, char *err,
	 size_t errlen)
{
	struct emu_spec s;
	char msg[256];
	int rc;

	if (strlen(text) >= EMU_SPEC_MAX_LEN)
		return rw_opts_err(err, errlen, "%s: SPEC longer than %d characters", ctx,
				   EMU_SPEC_MAX_LEN - 1);
	rc = emu_spec_parse(&s, text, msg, sizeof(msg));
	if (rc < 0)
		return rw_opts_err(err, errlen, "%s: %s", ctx, msg);
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		if (dir != LEMU_NDIR && dir != d)
			continue;
		p->spec[d] = s;
		snprintf(p->spec_text[d], sizeof(p->spec_text[d]), "%s", text);
	}
	return 0;
}

/* lossy-emu's own types; rw_opts converts the rest. */
static int
apply_opt(const struct rw_opt *o, const char *val, void *obj, const char *ctx, char *err,
	  size_t errlen)
{
	struct lemu_params *p = obj;
	uint64_t *f = (uint64_t *)((char *)p + o->off);
	uint64_t v;
	int rc;

	switch (o->type) {
	case T_SPEC:
		return set_spec(p, (unsigned)o->off, val, ctx, err, errlen);
	case T_SEED:
		rc = rw_opts_uint(o, val, &v, ctx, err, errlen);
		if (rc < 0)
			return rc;
		*f = v;
		p->seed_set = true;
		return 0;
	case T_RATE:
		if (strcmp(val, "0") == 0) {
			*f = 0;
			return 0;
		}
		rc = emu_parse_rate(val, &v);
		if (rc < 0)
			return rw_opts_err(err, errlen, "%s: \"%s\" %s (a rate: %s)", ctx, val,
					   emu_err_str(rc), EMU_RATE_UNITS);
		*f = v;
		return 0;
	case T_TIME:
		rc = emu_parse_time(val, &v);
		if (rc < 0 || v > o->max)
			return rw_opts_err(err, errlen, "%s: \"%s\" %s (a time up to 1s: %s)", ctx,
					   val, rc < 0 ? emu_err_str(rc) : "is too long",
					   EMU_TIME_UNITS);
		*f = v;
		return 0;
	}
	return -EINVAL;
}

static const char usage[] =
    "usage: lossy-emu <EAL args> -- [options]\n"
    "A two-port DPDK bump-in-the-wire: port A <-> port B, each direction with its own\n"
    "impairment pipeline: loss/dup/corrupt -> bottleneck queue (rate, limit, RED/ECN,\n"
    "PFC) -> delay line -> TX. SPEC is tc-netem's grammar plus extensions, e.g.\n"
    "  --a2b \"delay 20ms 2ms distribution normal loss gemodel 1% 25% rate 1gbit\"\n"
    "Options (also \"key = value\" lines of --config FILE, applied in order):\n";

static const char footer[] =
    "SPEC keywords: limit delay distribution loss (random|gemodel|state) ecn duplicate\n"
    "  corrupt reorder gap rate seed; extensions: limit-bytes red jitter-no-reorder\n"
    "  corrupt-recompute pfc. Run-time control: DPDK telemetry /lossy_emu/set \"a2b,SPEC\",\n"
    "  /lossy_emu/get, /lossy_emu/stats (dpdk-telemetry.py -f PREFIX).\n";

static const struct rw_opts lemu_opts = {
    .opt = opts,
    .n = N_OPTS,
    .apply = apply_opt,
    .usage = usage,
    .footer = footer,
    .help_width = 24,
    .list_prefix = "",
    /* a full SPEC plus room for its key; longer lines are refused, not cut */
    .line_max = EMU_SPEC_MAX_LEN + 254,
};

void
lemu_params_defaults(struct lemu_params *p)
{
	memset(p, 0, sizeof(*p));
	rw_opts_defaults(&lemu_opts, p);
}

int
lemu_parse_args(int argc, char **argv, struct lemu_params *p, char *err, size_t errlen)
{
	return rw_opts_parse_args(&lemu_opts, argc, argv, p, err, errlen);
}

int
lemu_parse_main(int argc, char **argv, struct lemu_params *p, int *eal_argc, char *err,
		size_t errlen)
{
	return rw_opts_parse_main(&lemu_opts, argc, argv, p, eal_argc, err, errlen);
}

int
lemu_config_file(const char *path, struct lemu_params *p, char *err, size_t errlen)
{
	int rc = rw_opts_file(&lemu_opts, path, p, err, errlen);

	if (rc == 0)
		snprintf(p->config, sizeof(p->config), "%s", path);
	return rc;
}

int
lemu_configure(struct lemu_params *p, char *err, size_t errlen)
{
	if (p->port_a == p->port_b)
		return rw_opts_err(err, errlen, "--port-a and --port-b are both %u: give two ports",
				   p->port_a);
	if (p->mtu != 0 && p->mtu + 18 > p->mbuf_size)
		return rw_opts_err(err, errlen,
				   "--mtu %u does not fit --mbuf-size %u: frames need MTU + 18 "
				   "bytes (Ethernet + VLAN); raise --mbuf-size to %u",
				   p->mtu, p->mbuf_size, p->mtu + 18);
	if (!p->seed_set) {
		struct timespec ts;
		uint64_t x;

		clock_gettime(CLOCK_REALTIME, &ts);
		x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + (uint64_t)getpid();
		p->seed = emu_splitmix64(&x) >> 1; /* keep it printable as a JSON int */
		p->seed_set = true;
	}
	return 0;
}

uint64_t
lemu_dir_seed(const struct lemu_params *p, unsigned d)
{
	if (p->spec[d].seed_set)
		return p->spec[d].seed;
	return emu_rng_direction_seed(p->seed, d);
}

void
lemu_print_help(FILE *f)
{
	rw_opts_help(&lemu_opts, f);
}

void
lemu_params_json(const struct lemu_params *p, struct rw_json *w)
{
	char buf[EMU_SPEC_MAX_LEN], key[32];

	for (size_t i = 0; i < N_OPTS; i++) {
		const struct rw_opt *o = &opts[i];
		const void *f = (const char *)p + o->off;

		/* rates are in bit/s, times in ns */
		rw_opts_json_key(o,
				 o->type == T_RATE   ? "_bps"
				 : o->type == T_TIME ? "_ns"
						     : "",
				 key, sizeof(key));
		switch (o->type) {
		case T_SPEC:
			if (o->off < LEMU_NDIR) {
				lemu_spec_text(&p->spec[o->off], buf, sizeof(buf));
				rw_str(w, o->name, buf);
			}
			break;
		case T_U32:
			rw_uint(w, key, *(const uint32_t *)f);
			break;
		case T_SEED:
		case T_RATE:
		case T_TIME:
			rw_uint(w, key, *(const uint64_t *)f);
			break;
		case T_FLAG:
			rw_bool(w, key, *(const bool *)f);
			break;
		case T_STR:
		case T_CONFIG:
			rw_str(w, key, (const char *)f);
			break;
		case T_HELP:
			break;
		}
	}
}

void
lemu_pool_need(const struct emu_spec *s, uint64_t link_bps, uint32_t frame_bytes, uint32_t slack,
	       struct lemu_pool_need *out)
{
	const struct emu_dist_params *d = &s->delay;
	double spread = d->kind == EMU_DIST_UNIFORM ? 1.0 : EMU_DIST_CLIP;
	unsigned __int128 bits;
	uint64_t total;

	memset(out, 0, sizeof(*out));
	out->max_delay_ns = d->delay_ns + (uint64_t)(spread * (double)d->jitter_ns);
	out->rate_bps = s->queue.rate_bps ? s->queue.rate_bps : link_bps;
	bits = (unsigned __int128)out->max_delay_ns * out->rate_bps / 1000000000u;
	out->line_bytes = (uint64_t)(bits / 8);
	out->line_pkts = (uint64_t)((bits / 8 + frame_bytes - 1) / frame_bytes);
	if (s->queue.rate_bps) {
		/* the queue holds at most limit packets, or limit-bytes of minimum frames */
		uint64_t q = s->queue.limit_pkts ? s->queue.limit_pkts : UINT64_MAX;

		if (s->queue.limit_bytes && s->queue.limit_bytes / 60 + 1 < q)
			q = s->queue.limit_bytes / 60 + 1;
		/* an unlimited queue is bounded by the pool itself */
		out->queue_pkts = q == UINT64_MAX ? 0 : q;
	}
	total = out->line_pkts;
	total = total + out->queue_pkts < total ? UINT64_MAX : total + out->queue_pkts;
	total = total + slack < total ? UINT64_MAX : total + slack;
	if (total > LEMU_MBUFS_MAX) {
		total = LEMU_MBUFS_MAX;
		out->capped = true;
	}
	if (total < LEMU_MBUFS_MIN)
		total = LEMU_MBUFS_MIN;
	out->mbufs = (uint32_t)total;
}
