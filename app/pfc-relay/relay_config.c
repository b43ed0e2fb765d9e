/* SPDX-License-Identifier: BSD-3-Clause */
/* pfc-relay options: one table drives the command line, --help and --json. */
#include "relay_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "emu_units.h"
#include "relay_core.h"
#include "rw_json.h"
#include "rw_opts.h"

/* The table's types: the library's, then the relay's own (converted by apply_opt()). */
enum {
	T_U32 = RW_OPT_U32,
	T_STR = RW_OPT_STR,
	T_HELP = RW_OPT_HELP,
	T_RATE = RW_OPT_APP,
	T_TIME,
	T_SIZE,
	T_BUFFER, /* a size or "auto" (0) */
	T_PRIOS,
	T_TRUST,
	T_WD,
	T_FLAG, /* stricter than RW_OPT_BOOL: only true/false/1/0, as documented */
};

#define OFF(f) offsetof(struct relay_params, f)
#define SZ(f) sizeof(((struct relay_params *)0)->f)

static const struct rw_opt opts[] = {
    {"local", T_U32, OFF(local_port), 0, "0", 0, 1023, "PORT",
     "DPDK port facing the local datacenter switch"},
    {"remote", T_U32, OFF(remote_port), 0, "1", 0, 1023, "PORT", "DPDK port facing the long link"},
    {"link-rate", T_RATE, OFF(link_bps), 0, NULL, 1, 0, "RATE",
     "rate of both ports (required): pacing, pause quanta, BDP; e.g. 10gbit"},
    {"local-rate", T_RATE, OFF(local_bps), 0, "0", 0, 0, "RATE",
     "rate of the Local port (0: --link-rate)"},
    {"remote-rate", T_RATE, OFF(remote_bps), 0, "0", 0, 0, "RATE",
     "rate of the Remote port (0: --link-rate)"},
    {"rtt", T_TIME, OFF(rtt_ns), 0, NULL, 1, 10000000000ull, "TIME",
     "round-trip time of the long link (required), e.g. 20ms"},
    {"buffer", T_BUFFER, OFF(buffer_bytes), 0, "auto", 1, 0, "BYTES|auto",
     "Remote-ingress buffer per priority (auto: remote rate x RTT + 10 % + 4 frames)"},
    {"lossless", T_PRIOS, OFF(lossless), 0, "3", 0, 0, "P[,P...]",
     "lossless priorities (0..7): obey, relay and generate PFC for these"},
    {"trust", T_TRUST, OFF(trust), 0, "dscp", 0, 0, "dscp|pcp",
     "classify data by IP DSCP (prio = DSCP >> 3) or by the VLAN PCP"},
    {"xoff", T_SIZE, OFF(xoff_bytes), 0, "64kb", 1, 0, "BYTES",
     "Local-ingress bytes per priority at which XOFF goes to the local switch"},
    {"xon", T_SIZE, OFF(xon_bytes), 0, "32kb", 0, 0, "BYTES",
     "Local-ingress bytes per priority at which XON goes to the local switch"},
    {"headroom", T_SIZE, OFF(headroom_bytes), 0, "128kb", 1, 0, "BYTES",
     "Local-ingress bytes accepted above --xoff (local switch's reaction); beyond: dropped"},
    {"pause-quanta", T_U32, OFF(pause_quanta), 0, "65535", 1, 65535, "N",
     "pause time of the XOFF frames the relay originates (refreshed every half of it)"},
    {"watchdog", T_WD, 0, 0, "detect=200ms,restore=200ms,action=drop", 0, 0,
     "detect=T,restore=T,action=A|off",
     "PFC watchdog per (port, priority), SONiC semantics; A: drop, forward or alert"},
    {"json", T_STR, OFF(json), SZ(json), "", 0, 0, "FILE",
     "write configuration and counters (rocewan/1) to FILE at exit"},
    {"stats-json", T_STR, OFF(stats_json), SZ(stats_json), "", 0, 0, "FILE",
     "rewrite FILE with the same document every --stats-interval while running"},
    {"stats-interval", T_TIME, OFF(stats_interval_ns), 0, "1s", 1000000, 3600000000000ull, "TIME",
     "period of --stats-json"},
    {"metrics", T_STR, OFF(metrics), SZ(metrics), "", 0, 0, "ADDR:PORT",
     "serve Prometheus metrics (text format 0.0.4) at http://ADDR:PORT/metrics while running, "
     "e.g. 0.0.0.0:9103 (docs/metrics.md); default: off"},
    {"metrics-file", T_STR, OFF(metrics_file), SZ(metrics_file), "", 0, 0, "PATH",
     "write the same metrics to PATH every --metrics-interval and at exit (replaced by rename, "
     "for node_exporter's textfile collector); default: off"},
    {"metrics-interval", T_TIME, OFF(metrics_every_ns), 0, "1s", 10000000, 3600000000000ull, "TIME",
     "rewrite period of --metrics-file"},
    {"busy-poll", T_FLAG, OFF(busy_poll), 0, "false", 0, 0, NULL,
     "never sleep when idle (benchmarks, latency); default: idle back-off"},
    {"idle-max", T_TIME, OFF(idle_max_ns), 0, "100us", 10000, 10000000, "TIME",
     "longest idle sleep: bounds how late a PFC frame is seen when idle"},
    {"burst", T_U32, OFF(burst), 0, "32", 1, 256, "N", "RX/TX burst size"},
    {"pace-burst", T_TIME, OFF(pace_burst_ns), 0, "20us", 0, 1000000000, "TIME",
     "egress pacer: sending credit kept while idle"},
    {"mbuf-size", T_U32, OFF(mbuf_size), 0, "2048", 256, 65000, "BYTES",
     "mbuf data room = largest frame relayed"},
    {"mbufs", T_U32, OFF(mbufs), 0, "0", 0, 4u << 20, "N",
     "mbufs in the pool (0: sized from the buffers: bytes / 256 + rings)"},
    {"rxd", T_U32, OFF(rxd), 0, "1024", 32, 16384, "N", "RX descriptors per port"},
    {"txd", T_U32, OFF(txd), 0, "1024", 32, 16384, "N", "TX descriptors per port"},
    {"mtu", T_U32, OFF(mtu), 0, "0", 0, 65000, "BYTES", "set the ports' MTU (0: leave it)"},
    {"help", T_HELP, 0, 0, NULL, 0, 0, NULL, "print this help and exit"},
};

#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

int
relay_parse_prio_list(const char *s, uint8_t *mask)
{
	uint8_t m = 0;

	if (*s == '\0')
		return -1;
	for (;;) {
		if (*s < '0' || *s > '7' || (s[1] != ',' && s[1] != '\0'))
			return -1;
		m |= (uint8_t)(1u << (*s - '0'));
		if (s[1] == '\0')
			break;
		s += 2;
	}
	*mask = m;
	return 0;
}

/* "detect=200ms,restore=200ms,action=drop" (any order, any subset) or "off". */
static int
parse_wd(const char *v, struct relay_params *p, const char *ctx, char *err, size_t errlen)
{
	char buf[128], *save = NULL, *tok;

	if (strcmp(v, "off") == 0) {
		p->wd_on = false;
		return 0;
	}
	if (strlen(v) >= sizeof(buf))
		return rw_opts_err(err, errlen, "%s: value too long", ctx);
	snprintf(buf, sizeof(buf), "%s", v);
	p->wd_on = true;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t ns;
		int a;

		if (eq == NULL)
			return rw_opts_err(err, errlen,
					   "%s: \"%s\" is not key=value (keys: detect, restore, "
					   "action; or \"off\")",
					   ctx, tok);
		*eq++ = '\0';
		if (strcmp(tok, "detect") == 0 || strcmp(tok, "restore") == 0) {
			if (emu_parse_time(eq, &ns) < 0 || ns == 0 || ns > 60000000000ull)
				return rw_opts_err(err, errlen,
						   "%s: %s=\"%s\" is not a time in 1ns..60s (%s)",
						   ctx, tok, eq, EMU_TIME_UNITS);
			*(tok[0] == 'd' ? &p->wd_detect_ns : &p->wd_restore_ns) = ns;
		} else if (strcmp(tok, "action") == 0) {
			a = pfc_wd_action_parse(eq);
			if (a < 0)
				return rw_opts_err(err, errlen,
						   "%s: action=\"%s\" is not drop, "
						   "forward or alert",
						   ctx, eq);
			p->wd_action = (enum pfc_wd_action)a;
		} else {
			return rw_opts_err(err, errlen,
					   "%s: unknown key \"%s\" (keys: detect, restore, "
					   "action; or \"off\")",
					   ctx, tok);
		}
	}
	return 0;
}

/* The relay's own types; rw_opts converts the rest. */
static int
apply_opt(const struct rw_opt *o, const char *val, void *obj, const char *ctx, char *err,
	  size_t errlen)
{
	struct relay_params *p = obj;
	void *f = (char *)p + o->off;
	uint64_t v;
	int rc;

	switch (o->type) {
	case T_RATE:
		if (strcmp(val, "0") == 0 && o->min == 0) {
			*(uint64_t *)f = 0;
			return 0;
		}
		rc = emu_parse_rate(val, &v);
		if (rc < 0 || v == 0)
			return rw_opts_err(err, errlen, "%s: \"%s\" %s (a rate above 0: %s)", ctx,
					   val, rc < 0 ? emu_err_str(rc) : "is zero",
					   EMU_RATE_UNITS);
		*(uint64_t *)f = v;
		return 0;
	case T_TIME:
		rc = emu_parse_time(val, &v);
		if (rc < 0 || v < o->min || v > o->max)
			return rw_opts_err(err, errlen,
					   "%s: \"%s\" %s (a time in %" PRIu64 "ns..%" PRIu64
					   "ns: %s)",
					   ctx, val, rc < 0 ? emu_err_str(rc) : "is out of range",
					   o->min, o->max, EMU_TIME_UNITS);
		*(uint64_t *)f = v;
		return 0;
	case T_BUFFER:
		if (strcmp(val, "auto") == 0) {
			*(uint64_t *)f = 0;
			return 0;
		}
		/* fall through */
	case T_SIZE:
		rc = emu_parse_size(val, &v);
		if (rc < 0 || v < o->min)
			return rw_opts_err(err, errlen, "%s: \"%s\" %s (a size%s: %s%s)", ctx, val,
					   rc < 0 ? emu_err_str(rc) : "is too small",
					   o->min ? " above 0" : "", EMU_SIZE_UNITS,
					   o->type == T_BUFFER ? ", or auto" : "");
		*(uint64_t *)f = v;
		return 0;
	case T_PRIOS:
		if (relay_parse_prio_list(val, (uint8_t *)f) < 0)
			return rw_opts_err(err, errlen,
					   "%s: \"%s\" is not a list of priorities 0..7 "
					   "separated by commas (e.g. 3 or 3,4)",
					   ctx, val);
		return 0;
	case T_TRUST:
		if (strcmp(val, "dscp") == 0)
			p->trust = PFC_TRUST_DSCP;
		else if (strcmp(val, "pcp") == 0)
			p->trust = PFC_TRUST_PCP;
		else
			return rw_opts_err(err, errlen, "%s: \"%s\" is not dscp or pcp", ctx, val);
		return 0;
	case T_WD:
		return parse_wd(val, p, ctx, err, errlen);
	case T_FLAG:
		if (strcmp(val, "true") == 0 || strcmp(val, "1") == 0)
			*(bool *)f = true;
		else if (strcmp(val, "false") == 0 || strcmp(val, "0") == 0)
			*(bool *)f = false;
		else
			return rw_opts_err(err, errlen, "%s: \"%s\" is not true/false", ctx, val);
		return 0;
	}
	return -EINVAL;
}

static const char usage[] =
    "usage: pfc-relay <EAL args> -- --local PORT --remote PORT --link-rate RATE --rtt TIME "
    "[options]\n"
    "The Swing PFC-Relay (docs/pfc-relay.md): PFC received on the Local port is relayed\n"
    "at once out of the Remote port (own source MAC, quanta converted between the port\n"
    "rates); the Remote-ingress buffer holds one BDP per priority; toward the local\n"
    "switch it is a normal PFC device (XOFF/XON thresholds, headroom).\n"
    "Options:\n";

static const struct rw_opts relay_opts = {
    .opt = opts,
    .n = N_OPTS,
    .apply = apply_opt,
    .usage = usage,
    .footer = "Telemetry: /pfc_relay/stats (dpdk-telemetry.py -f PREFIX).\n",
    .help_width = 28,
    .list_prefix = "--",
};

void
relay_params_defaults(struct relay_params *p)
{
	memset(p, 0, sizeof(*p));
	rw_opts_defaults(&relay_opts, p);
}

int
relay_parse_args(int argc, char **argv, struct relay_params *p, char *err, size_t errlen)
{
	return rw_opts_parse_args(&relay_opts, argc, argv, p, err, errlen);
}

int
relay_parse_main(int argc, char **argv, struct relay_params *p, int *eal_argc, char *err,
		 size_t errlen)
{
	return rw_opts_parse_main(&relay_opts, argc, argv, p, eal_argc, err, errlen);
}

int
relay_configure(struct relay_params *p, char *err, size_t errlen)
{
	if (p->local_port == p->remote_port)
		return rw_opts_err(err, errlen,
				   "--local and --remote are both port %u: give two ports",
				   p->local_port);
	if (p->link_bps == 0 && (p->local_bps == 0 || p->remote_bps == 0))
		return rw_opts_err(err, errlen,
				   "--link-rate is required (or both --local-rate and "
				   "--remote-rate), e.g. --link-rate 10gbit");
	if (p->rtt_ns == 0)
		return rw_opts_err(err, errlen,
				   "--rtt is required: the long link's round-trip time, e.g. "
				   "--rtt 20ms");
	if (p->lossless == 0)
		return rw_opts_err(err, errlen, "--lossless: give at least one priority 0..7");
	if (p->xon_bytes >= p->xoff_bytes)
		return rw_opts_err(err, errlen,
				   "--xon %" PRIu64 " must be below --xoff %" PRIu64 " bytes",
				   p->xon_bytes, p->xoff_bytes);
	p->eff_local_bps = p->local_bps ? p->local_bps : p->link_bps;
	p->eff_remote_bps = p->remote_bps ? p->remote_bps : p->link_bps;
	p->bdp_bytes = relay_bdp_bytes(p->eff_remote_bps, p->rtt_ns);
	p->buffer_auto = p->buffer_bytes == 0;
	p->eff_buffer_bytes = p->buffer_auto
				  ? relay_auto_buffer(p->eff_remote_bps, p->rtt_ns, p->mbuf_size)
				  : p->buffer_bytes;
	if (p->eff_buffer_bytes < p->mbuf_size)
		return rw_opts_err(err, errlen,
				   "--buffer %" PRIu64 " is smaller than one frame "
				   "(--mbuf-size %u)",
				   p->eff_buffer_bytes, p->mbuf_size);
	if (p->mtu != 0 && p->mtu + 18 > p->mbuf_size)
		return rw_opts_err(err, errlen,
				   "--mtu %u does not fit --mbuf-size %u: frames need MTU + 18 "
				   "bytes; raise --mbuf-size to %u",
				   p->mtu, p->mbuf_size, p->mtu + 18);
	return 0;
}

void
relay_print_help(FILE *f)
{
	rw_opts_help(&relay_opts, f);
}

void
relay_params_json(const struct relay_params *p, struct rw_json *w)
{
	char key[40], buf[32];

	for (size_t i = 0; i < N_OPTS; i++) {
		const struct rw_opt *o = &opts[i];
		const void *f = (const char *)p + o->off;

		rw_opts_json_key(o,
				 o->type == T_RATE			    ? "_bps"
				 : o->type == T_TIME			    ? "_ns"
				 : o->type == T_SIZE || o->type == T_BUFFER ? "_bytes"
									    : "",
				 key, sizeof(key));
		switch (o->type) {
		case T_U32:
			rw_uint(w, key, *(const uint32_t *)f);
			break;
		case T_RATE:
		case T_TIME:
		case T_SIZE:
			rw_uint(w, key, *(const uint64_t *)f);
			break;
		case T_BUFFER:
			rw_uint(w, key, p->eff_buffer_bytes);
			rw_bool(w, "buffer_auto", p->buffer_auto);
			break;
		case T_PRIOS:
			rw_arr_begin(w, key);
			for (unsigned n = 0; n < PFC_NUM_PRIO; n++)
				if (p->lossless >> n & 1)
					rw_uint(w, NULL, n);
			rw_arr_end(w);
			break;
		case T_TRUST:
			rw_str(w, key, p->trust == PFC_TRUST_DSCP ? "dscp" : "pcp");
			break;
		case T_WD:
			rw_obj_begin(w, "watchdog");
			rw_bool(w, "enabled", p->wd_on);
			rw_uint(w, "detect_ns", p->wd_detect_ns);
			rw_uint(w, "restore_ns", p->wd_restore_ns);
			rw_str(w, "action", pfc_wd_action_name(p->wd_action));
			rw_obj_end(w);
			break;
		case T_STR:
			rw_str(w, key, (const char *)f);
			break;
		case T_FLAG:
			rw_bool(w, key, *(const bool *)f);
			break;
		case T_HELP:
			break;
		}
	}
	rw_uint(w, "local_rate_effective_bps", p->eff_local_bps);
	rw_uint(w, "remote_rate_effective_bps", p->eff_remote_bps);
	rw_uint(w, "bdp_bytes", p->bdp_bytes);
	snprintf(buf, sizeof(buf), "%.3f",
		 p->bdp_bytes ? (double)p->eff_buffer_bytes / (double)p->bdp_bytes : 0.);
	rw_dbl(w, "buffer_bdp", atof(buf));
}
