/* SPDX-License-Identifier: BSD-3-Clause */
/* pfc-relay options: one table drives the command line, --help and --json. */
#include "relay_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "emu_units.h"
#include "relay_core.h"
#include "rw_json.h"

enum opt_type { T_U32, T_RATE, T_TIME, T_SIZE, T_BUFFER, T_PRIOS, T_TRUST, T_WD, T_STR, T_FLAG,
		T_HELP };

struct opt_def {
	const char *name;
	enum opt_type type;
	size_t off;
	size_t size;     /* T_STR capacity */
	const char *def; /* default as text (NULL: required or none) */
	uint64_t min, max;
	const char *arg;
	const char *help;
};

#define OFF(f) offsetof(struct relay_params, f)
#define SZ(f) sizeof(((struct relay_params *)0)->f)

static const struct opt_def opts[] = {
	{"local", T_U32, OFF(local_port), 0, "0", 0, 1023, "PORT",
	 "DPDK port facing the local datacenter switch"},
	{"remote", T_U32, OFF(remote_port), 0, "1", 0, 1023, "PORT",
	 "DPDK port facing the long link"},
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

__attribute__((format(printf, 3, 4))) static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

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
		return fail(err, errlen, "%s: value too long", ctx);
	snprintf(buf, sizeof(buf), "%s", v);
	p->wd_on = true;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t ns;
		int a;

		if (eq == NULL)
			return fail(err, errlen,
				    "%s: \"%s\" is not key=value (keys: detect, restore, action; or "
				    "\"off\")", ctx, tok);
		*eq++ = '\0';
		if (strcmp(tok, "detect") == 0 || strcmp(tok, "restore") == 0) {
			if (emu_parse_time(eq, &ns) < 0 || ns == 0 || ns > 60000000000ull)
				return fail(err, errlen,
					    "%s: %s=\"%s\" is not a time in 1ns..60s (%s)", ctx, tok,
					    eq, EMU_TIME_UNITS);
			*(tok[0] == 'd' ? &p->wd_detect_ns : &p->wd_restore_ns) = ns;
		} else if (strcmp(tok, "action") == 0) {
			a = pfc_wd_action_parse(eq);
			if (a < 0)
				return fail(err, errlen,
					    "%s: action=\"%s\" is not drop, forward or alert", ctx, eq);
			p->wd_action = (enum pfc_wd_action)a;
		} else {
			return fail(err, errlen,
				    "%s: unknown key \"%s\" (keys: detect, restore, action; or \"off\")",
				    ctx, tok);
		}
	}
	return 0;
}

static int
apply_opt(const struct opt_def *o, const char *val, struct relay_params *p, const char *ctx,
	  char *err, size_t errlen)
{
	void *f = (char *)p + o->off;
	uint64_t v;
	int rc;

	switch (o->type) {
	case T_U32:
		rc = emu_parse_uint(val, o->max, &v);
		if (rc < 0 || v < o->min)
			return fail(err, errlen, "%s: \"%s\" is not an integer in %" PRIu64 "..%" PRIu64,
				    ctx, val, o->min, o->max);
		*(uint32_t *)f = (uint32_t)v;
		return 0;
	case T_RATE:
		if (strcmp(val, "0") == 0 && o->min == 0) {
			*(uint64_t *)f = 0;
			return 0;
		}
		rc = emu_parse_rate(val, &v);
		if (rc < 0 || v == 0)
			return fail(err, errlen, "%s: \"%s\" %s (a rate above 0: %s)", ctx, val,
				    rc < 0 ? emu_err_str(rc) : "is zero", EMU_RATE_UNITS);
		*(uint64_t *)f = v;
		return 0;
	case T_TIME:
		rc = emu_parse_time(val, &v);
		if (rc < 0 || v < o->min || v > o->max)
			return fail(err, errlen, "%s: \"%s\" %s (a time in %" PRIu64 "ns..%" PRIu64
				    "ns: %s)", ctx, val, rc < 0 ? emu_err_str(rc) : "is out of range",
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
			return fail(err, errlen, "%s: \"%s\" %s (a size%s: %s%s)", ctx, val,
				    rc < 0 ? emu_err_str(rc) : "is too small",
				    o->min ? " above 0" : "", EMU_SIZE_UNITS,
				    o->type == T_BUFFER ? ", or auto" : "");
		*(uint64_t *)f = v;
		return 0;
	case T_PRIOS:
		if (relay_parse_prio_list(val, (uint8_t *)f) < 0)
			return fail(err, errlen,
				    "%s: \"%s\" is not a list of priorities 0..7 separated by commas "
				    "(e.g. 3 or 3,4)", ctx, val);
		return 0;
	case T_TRUST:
		if (strcmp(val, "dscp") == 0)
			p->trust = PFC_TRUST_DSCP;
		else if (strcmp(val, "pcp") == 0)
			p->trust = PFC_TRUST_PCP;
		else
			return fail(err, errlen, "%s: \"%s\" is not dscp or pcp", ctx, val);
		return 0;
	case T_WD:
		return parse_wd(val, p, ctx, err, errlen);
	case T_STR:
		if (strlen(val) >= o->size)
			return fail(err, errlen, "%s: value longer than %zu characters", ctx,
				    o->size - 1);
		snprintf((char *)f, o->size, "%s", val);
		return 0;
	case T_FLAG:
		if (strcmp(val, "true") == 0 || strcmp(val, "1") == 0)
			*(bool *)f = true;
		else if (strcmp(val, "false") == 0 || strcmp(val, "0") == 0)
			*(bool *)f = false;
		else
			return fail(err, errlen, "%s: \"%s\" is not true/false", ctx, val);
		return 0;
	case T_HELP:
		return 1;
	}
	return -EINVAL;
}

void
relay_params_defaults(struct relay_params *p)
{
	char err[64];

	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < N_OPTS; i++)
		if (opts[i].def != NULL)
			apply_opt(&opts[i], opts[i].def, p, opts[i].name, err, sizeof(err));
}

static const struct opt_def *
find_opt(const char *name, size_t len)
{
	for (size_t i = 0; i < N_OPTS; i++)
		if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
			return &opts[i];
	return NULL;
}

int
relay_parse_args(int argc, char **argv, struct relay_params *p, char *err, size_t errlen)
{
	char ctx[64], names[600];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *eq, *val = NULL;
		const struct opt_def *o;
		int rc;

		if (strcmp(a, "-h") == 0) {
			relay_print_help(stdout);
			return 1;
		}
		if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
			return fail(err, errlen,
				    "unexpected argument \"%s\": options start with -- (EAL options go "
				    "before the \"--\" separator)", a);
		name = a + 2;
		eq = strchr(name, '=');
		o = find_opt(name, eq ? (size_t)(eq - name) : strlen(name));
		if (o == NULL) {
			size_t used = 0;

			names[0] = '\0';
			for (size_t k = 0; k < N_OPTS; k++)
				used += (size_t)snprintf(names + used, sizeof(names) - used, "%s--%s",
							 k ? ", " : "", opts[k].name);
			return fail(err, errlen, "unknown option \"%s\" (options: %s)", a, names);
		}
		snprintf(ctx, sizeof(ctx), "--%s", o->name);
		if (o->type == T_HELP) {
			relay_print_help(stdout);
			return 1;
		}
		if (eq) {
			val = eq + 1;
		} else if (o->type == T_FLAG) {
			val = "true";
		} else {
			if (i + 1 >= argc)
				return fail(err, errlen, "%s needs a value (%s)", ctx, o->arg);
			val = argv[++i];
		}
		rc = apply_opt(o, val, p, ctx, err, errlen);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
relay_configure(struct relay_params *p, char *err, size_t errlen)
{
	if (p->local_port == p->remote_port)
		return fail(err, errlen, "--local and --remote are both port %u: give two ports",
			    p->local_port);
	if (p->link_bps == 0 && (p->local_bps == 0 || p->remote_bps == 0))
		return fail(err, errlen,
			    "--link-rate is required (or both --local-rate and --remote-rate), "
			    "e.g. --link-rate 10gbit");
	if (p->rtt_ns == 0)
		return fail(err, errlen, "--rtt is required: the long link's round-trip time, e.g. "
			    "--rtt 20ms");
	if (p->lossless == 0)
		return fail(err, errlen, "--lossless: give at least one priority 0..7");
	if (p->xon_bytes >= p->xoff_bytes)
		return fail(err, errlen, "--xon %" PRIu64 " must be below --xoff %" PRIu64 " bytes",
			    p->xon_bytes, p->xoff_bytes);
	p->eff_local_bps = p->local_bps ? p->local_bps : p->link_bps;
	p->eff_remote_bps = p->remote_bps ? p->remote_bps : p->link_bps;
	p->bdp_bytes = relay_bdp_bytes(p->eff_remote_bps, p->rtt_ns);
	p->buffer_auto = p->buffer_bytes == 0;
	p->eff_buffer_bytes = p->buffer_auto
				      ? relay_auto_buffer(p->eff_remote_bps, p->rtt_ns, p->mbuf_size)
				      : p->buffer_bytes;
	if (p->eff_buffer_bytes < p->mbuf_size)
		return fail(err, errlen,
			    "--buffer %" PRIu64 " is smaller than one frame (--mbuf-size %u)",
			    p->eff_buffer_bytes, p->mbuf_size);
	if (p->mtu != 0 && p->mtu + 18 > p->mbuf_size)
		return fail(err, errlen,
			    "--mtu %u does not fit --mbuf-size %u: frames need MTU + 18 bytes; raise "
			    "--mbuf-size to %u", p->mtu, p->mbuf_size, p->mtu + 18);
	return 0;
}

void
relay_print_help(FILE *f)
{
	fputs("usage: pfc-relay <EAL args> -- --local PORT --remote PORT --link-rate RATE --rtt TIME "
	      "[options]\n"
	      "The Swing PFC-Relay (docs/pfc-relay.md): PFC received on the Local port is relayed\n"
	      "at once out of the Remote port (own source MAC, quanta converted between the port\n"
	      "rates); the Remote-ingress buffer holds one BDP per priority; toward the local\n"
	      "switch it is a normal PFC device (XOFF/XON thresholds, headroom).\n"
	      "Options:\n",
	      f);
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt_def *o = &opts[i];
		char left[64];

		snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(f, "  %-28s %s", left, o->help);
		if (o->def && o->type != T_FLAG && o->def[0])
			fprintf(f, " [%s]", o->def);
		fputc('\n', f);
	}
	fputs("Telemetry: /pfc_relay/stats (dpdk-telemetry.py -f PREFIX).\n", f);
}

void
relay_params_json(const struct relay_params *p, struct rw_json *w)
{
	char key[40], buf[32];

	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt_def *o = &opts[i];
		const void *f = (const char *)p + o->off;

		snprintf(key, sizeof(key), "%s%s", o->name,
			 o->type == T_RATE ? "_bps" : o->type == T_TIME ? "_ns"
				: o->type == T_SIZE || o->type == T_BUFFER ? "_bytes" : "");
		for (char *c = key; *c; c++)
			if (*c == '-')
				*c = '_';
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
