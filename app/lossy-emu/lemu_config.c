/* SPDX-License-Identifier: BSD-3-Clause */
/* lossy-emu options: one table drives the command line, --config, --help and --json. */
#include "lemu_config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu_rng.h"
#include "emu_units.h"
#include "rw_json.h"

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

enum opt_type { T_SPEC, T_U32, T_U64, T_FLAG, T_STR, T_RATE, T_TIME, T_CONFIG, T_HELP };

/* One row per option: the single source of parsing, --help and the JSON dump. */
struct opt_def {
	const char *name;
	enum opt_type type;
	size_t off;       /* offset in struct lemu_params; T_SPEC: the direction */
	size_t size;      /* T_STR capacity */
	const char *def;  /* default as text (NULL: none) */
	uint64_t min, max;
	const char *arg;  /* argument name for --help, NULL for flags */
	const char *help;
};

#define OFF(f) offsetof(struct lemu_params, f)
#define SZ(f) sizeof(((struct lemu_params *)0)->f)

static const struct opt_def opts[] = {
	{"both", T_SPEC, LEMU_NDIR, 0, NULL, 0, 0, "SPEC",
	 "impairment SPEC of both directions (tc-netem grammar, see docs/lossy-emu.md)"},
	{"a2b", T_SPEC, LEMU_A2B, 0, "", 0, 0, "SPEC",
	 "SPEC of port A -> port B; replaces what an earlier --both set"},
	{"b2a", T_SPEC, LEMU_B2A, 0, "", 0, 0, "SPEC",
	 "SPEC of port B -> port A; replaces what an earlier --both set"},
	{"seed", T_U64, OFF(seed), 0, NULL, 0, UINT64_MAX, "N",
	 "seed of every random draw (same seed + same input = same drops); default: from the clock, printed"},
	{"json", T_STR, OFF(json), SZ(json), "", 0, 0, "FILE",
	 "write counters and delay error (rocewan/1) to FILE at exit"},
	{"config", T_CONFIG, OFF(config), SZ(config), "", 0, 0, "FILE",
	 "read \"key = value\" lines (keys: these option names) at this point of the command line"},
	{"busy-poll", T_FLAG, OFF(busy_poll), 0, "false", 0, 0, NULL,
	 "never sleep when idle (benchmarks); default: idle back-off bounded by the next release"},
	{"mbuf-size", T_U32, OFF(mbuf_size), 0, "4608", 256, 65000, "BYTES",
	 "mbuf data room = largest frame forwarded (af_packet framesz=F needs >= F - 32)"},
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

static const struct opt_def *
find_opt(const char *name, size_t len)
{
	for (size_t i = 0; i < N_OPTS; i++)
		if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
			return &opts[i];
	return NULL;
}

static void
list_opts(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_OPTS && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", opts[i].name);
}

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
		return fail(err, errlen, "%s: SPEC longer than %d characters", ctx,
			    EMU_SPEC_MAX_LEN - 1);
	rc = emu_spec_parse(&s, text, msg, sizeof(msg));
	if (rc < 0)
		return fail(err, errlen, "%s: %s", ctx, msg);
	for (unsigned d = 0; d < LEMU_NDIR; d++) {
		if (dir != LEMU_NDIR && dir != d)
			continue;
		p->spec[d] = s;
		snprintf(p->spec_text[d], sizeof(p->spec_text[d]), "%s", text);
	}
	return 0;
}

static int
parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"1", "true", "yes", "on"};
	static const char *const no[] = {"0", "false", "no", "off"};

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return *out = true, 0;
		if (strcasecmp(v, no[i]) == 0)
			return *out = false, 0;
	}
	return -EINVAL;
}

static int apply_opt(const struct opt_def *o, const char *val, struct lemu_params *p,
		     const char *ctx, char *err, size_t errlen, int depth);

static void
defaults_into(struct lemu_params *p)
{
	char err[64];

	for (size_t i = 0; i < N_OPTS; i++)
		if (opts[i].def != NULL && opts[i].type != T_CONFIG)
			apply_opt(&opts[i], opts[i].def, p, opts[i].name, err, sizeof(err), 0);
}

void
lemu_params_defaults(struct lemu_params *p)
{
	memset(p, 0, sizeof(*p));
	defaults_into(p);
}

static int read_file(const char *path, struct lemu_params *p, char *err, size_t errlen,
		     int depth);

static int
apply_opt(const struct opt_def *o, const char *val, struct lemu_params *p, const char *ctx,
	  char *err, size_t errlen, int depth)
{
	void *f = (char *)p + o->off;
	uint64_t v;
	bool b;
	int rc;

	switch (o->type) {
	case T_SPEC:
		return set_spec(p, (unsigned)o->off, val, ctx, err, errlen);
	case T_U32:
	case T_U64:
		rc = emu_parse_uint(val, o->max, &v);
		if (rc < 0 || v < o->min)
			return fail(err, errlen, "%s: \"%s\" is not an integer in %" PRIu64 "..%" PRIu64,
				    ctx, val, o->min, o->max);
		if (o->type == T_U32)
			*(uint32_t *)f = (uint32_t)v;
		else
			*(uint64_t *)f = v;
		if (o->off == OFF(seed))
			p->seed_set = true;
		return 0;
	case T_RATE:
		if (strcmp(val, "0") == 0) {
			*(uint64_t *)f = 0;
			return 0;
		}
		rc = emu_parse_rate(val, &v);
		if (rc < 0)
			return fail(err, errlen, "%s: \"%s\" %s (a rate: %s)", ctx, val,
				    emu_err_str(rc), EMU_RATE_UNITS);
		*(uint64_t *)f = v;
		return 0;
	case T_TIME:
		rc = emu_parse_time(val, &v);
		if (rc < 0 || v > o->max)
			return fail(err, errlen, "%s: \"%s\" %s (a time up to 1s: %s)", ctx, val,
				    rc < 0 ? emu_err_str(rc) : "is too long", EMU_TIME_UNITS);
		*(uint64_t *)f = v;
		return 0;
	case T_FLAG:
		if (parse_bool(val, &b) < 0)
			return fail(err, errlen, "%s: \"%s\" is not a boolean (true/false, yes/no, 1/0)",
				    ctx, val);
		*(bool *)f = b;
		return 0;
	case T_STR:
		if (strlen(val) >= o->size)
			return fail(err, errlen, "%s: value longer than %zu characters", ctx,
				    o->size - 1);
		snprintf((char *)f, o->size, "%s", val);
		return 0;
	case T_CONFIG:
		if (depth > 0)
			return fail(err, errlen, "%s: a config file cannot include another", ctx);
		rc = read_file(val, p, err, errlen, depth + 1);
		if (rc == 0)
			snprintf((char *)f, o->size, "%s", val);
		return rc;
	case T_HELP:
		return 1;
	}
	return -EINVAL;
}

int
lemu_parse_args(int argc, char **argv, struct lemu_params *p, char *err, size_t errlen)
{
	char names[512], ctx[64];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *eq, *val = NULL;
		const struct opt_def *o;
		int rc;

		if (strcmp(a, "-h") == 0) {
			lemu_print_help(stdout);
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
			list_opts(names, sizeof(names));
			return fail(err, errlen, "unknown option \"%s\" (options: %s)", a, names);
		}
		snprintf(ctx, sizeof(ctx), "--%s", o->name);
		if (eq) {
			val = eq + 1;
		} else if (o->type == T_FLAG) {
			val = "true";
		} else if (o->type != T_HELP) {
			if (i + 1 >= argc)
				return fail(err, errlen, "%s needs a value (%s)", ctx, o->arg);
			val = argv[++i];
		}
		if (o->type == T_HELP) {
			lemu_print_help(stdout);
			return 1;
		}
		rc = apply_opt(o, val, p, ctx, err, errlen, 0);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int
read_file(const char *path, struct lemu_params *p, char *err, size_t errlen, int depth)
{
	char line[EMU_SPEC_MAX_LEN + 256], ctx[320], names[512];
	FILE *f = fopen(path, "r");
	unsigned lineno = 0;
	int rc = 0;

	if (f == NULL)
		return fail(err, errlen, "--config %s: cannot open: %s", path, strerror(errno));
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *hash, *eq, *key, *val;
		size_t vl;
		const struct opt_def *o;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			rc = fail(err, errlen, "%s:%u: line longer than %zu characters", path, lineno,
				  sizeof(line) - 2);
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		key = trim(line);
		if (*key == '\0')
			continue;
		eq = strchr(key, '=');
		if (eq == NULL) {
			rc = fail(err, errlen, "%s:%u: \"%s\" is not \"key = value\"", path, lineno, key);
			break;
		}
		*eq = '\0';
		key = trim(key);
		val = trim(eq + 1);
		vl = strlen(val);
		if (vl >= 2 && val[0] == '"' && val[vl - 1] == '"') {
			val[vl - 1] = '\0';
			val++;
		}
		o = find_opt(key, strlen(key));
		if (o == NULL || o->type == T_HELP) {
			list_opts(names, sizeof(names));
			rc = fail(err, errlen, "%s:%u: unknown key \"%s\" (keys: %s)", path, lineno, key,
				  names);
			break;
		}
		snprintf(ctx, sizeof(ctx), "%s:%u: %s", path, lineno, o->name);
		rc = apply_opt(o, val, p, ctx, err, errlen, depth);
	}
	if (rc == 0 && ferror(f))
		rc = fail(err, errlen, "%s: read error: %s", path, strerror(errno));
	fclose(f);
	return rc;
}

int
lemu_config_file(const char *path, struct lemu_params *p, char *err, size_t errlen)
{
	int rc = read_file(path, p, err, errlen, 1);

	if (rc == 0)
		snprintf(p->config, sizeof(p->config), "%s", path);
	return rc;
}

int
lemu_configure(struct lemu_params *p, char *err, size_t errlen)
{
	if (p->port_a == p->port_b)
		return fail(err, errlen, "--port-a and --port-b are both %u: give two ports",
			    p->port_a);
	if (p->mtu != 0 && p->mtu + 18 > p->mbuf_size)
		return fail(err, errlen,
			    "--mtu %u does not fit --mbuf-size %u: frames need MTU + 18 bytes "
			    "(Ethernet + VLAN); raise --mbuf-size to %u",
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
	fputs("usage: lossy-emu <EAL args> -- [options]\n"
		"A two-port DPDK bump-in-the-wire: port A <-> port B, each direction with its own\n"
		"impairment pipeline: loss/dup/corrupt -> bottleneck queue (rate, limit, RED/ECN,\n"
		"PFC) -> delay line -> TX. SPEC is tc-netem's grammar plus extensions, e.g.\n"
		"  --a2b \"delay 20ms 2ms distribution normal loss gemodel 1% 25% rate 1gbit\"\n"
		"Options (also \"key = value\" lines of --config FILE, applied in order):\n",
	      f);
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt_def *o = &opts[i];
		char left[48];

		snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(f, "  %-24s %s", left, o->help);
		if (o->def && o->type != T_SPEC && o->type != T_FLAG && o->def[0])
			fprintf(f, " [%s]", o->def);
		fputc('\n', f);
	}
	fputs("SPEC keywords: limit delay distribution loss (random|gemodel|state) ecn duplicate\n"
		"  corrupt reorder gap rate seed; extensions: limit-bytes red jitter-no-reorder\n"
		"  corrupt-recompute pfc. Run-time control: DPDK telemetry /lossy_emu/set \"a2b,SPEC\",\n"
		"  /lossy_emu/get, /lossy_emu/stats (dpdk-telemetry.py -f PREFIX).\n",
	      f);
}

void
lemu_params_json(const struct lemu_params *p, struct rw_json *w)
{
	char buf[EMU_SPEC_MAX_LEN], key[32];

	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt_def *o = &opts[i];
		const void *f = (const char *)p + o->off;

		/* JSON keys use underscores (docs/results.md); rates are in bit/s */
		snprintf(key, sizeof(key), "%s%s", o->name,
			 o->type == T_RATE ? "_bps" : o->type == T_TIME ? "_ns" : "");
		for (char *c = key; *c; c++)
			if (*c == '-')
				*c = '_';
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
		case T_U64:
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
lemu_pool_need(const struct emu_spec *s, uint64_t link_bps, uint32_t mbuf_size, uint32_t slack,
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
	out->line_pkts = (uint64_t)((bits / 8 + mbuf_size - 1) / mbuf_size);
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
