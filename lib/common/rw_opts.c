/* SPDX-License-Identifier: BSD-3-Clause */
/* Option tables: command line, config file and --help from one row per option. */
#include "rw_opts.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
rw_opts_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const struct rw_opt *
find_opt(const struct rw_opts *t, const char *name, size_t len)
{
	for (size_t i = 0; i < t->n; i++)
		if (strlen(t->opt[i].name) == len && strncmp(t->opt[i].name, name, len) == 0)
			return &t->opt[i];
	return NULL;
}

static const struct rw_opt *
find_letter(const struct rw_opts *t, int c)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->opt[i].letter != 0 && t->opt[i].letter == c)
			return &t->opt[i];
	return NULL;
}

/* perftest's conventions: short letters, and a "-x" is an option, not an argument */
static bool
has_letters(const struct rw_opts *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->opt[i].letter != 0)
			return true;
	return false;
}

void
rw_opts_names(const struct rw_opts *t, const char *prefix, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < t->n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s%s", i ? ", " : "", prefix,
					 t->opt[i].name);
}

void
rw_opts_json_key(const struct rw_opt *o, const char *suffix, char *buf, size_t len)
{
	/* JSON keys use underscores (docs/results.md) */
	snprintf(buf, len, "%s%s", o->name, suffix);
	for (char *c = buf; *c; c++)
		if (*c == '-')
			*c = '_';
}

/* Decimal digits only: no sign, space or base prefix a strtoull would let in. */
static int
parse_dec(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	if (*s == '\0')
		return -EINVAL;
	for (; *s; s++) {
		uint64_t d = (uint64_t)(*s - '0');

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	if (x > max)
		return -ERANGE;
	*v = x;
	return 0;
}

int
rw_opts_uint(const struct rw_opt *o, const char *val, uint64_t *v, const char *ctx, char *err,
	     size_t errlen)
{
	if (parse_dec(val, o->max, v) < 0 || *v < o->min)
		return rw_opts_err(err, errlen,
				   "%s: \"%s\" is not an integer in %" PRIu64 "..%" PRIu64, ctx,
				   val, o->min, o->max);
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

static int read_file(const struct rw_opts *t, const char *path, void *obj, char *err,
		     size_t errlen);

/* Converts @val for option @o into @obj; @in_file: read from a config file. */
static int
apply_opt(const struct rw_opts *t, const struct rw_opt *o, const char *val, void *obj,
	  const char *ctx, char *err, size_t errlen, bool in_file)
{
	void *f = (char *)obj + o->off;
	uint64_t v;
	bool b;
	int rc;

	switch (o->type) {
	case RW_OPT_U32:
	case RW_OPT_U64:
		rc = rw_opts_uint(o, val, &v, ctx, err, errlen);
		if (rc < 0)
			return rc;
		if (o->type == RW_OPT_U32)
			*(uint32_t *)f = (uint32_t)v;
		else
			*(uint64_t *)f = v;
		return 0;
	case RW_OPT_STR:
		if (strlen(val) >= o->size)
			return rw_opts_err(err, errlen, "%s: value longer than %zu characters", ctx,
					   o->size - 1);
		snprintf((char *)f, o->size, "%s", val);
		return 0;
	case RW_OPT_BOOL:
		if (parse_bool(val, &b) < 0)
			return rw_opts_err(err, errlen,
					   "%s: \"%s\" is not a boolean (true/false, yes/no, 1/0)",
					   ctx, val);
		*(bool *)f = b;
		return 0;
	case RW_OPT_CONFIG:
		/* one level: a file that names another is a loop waiting to happen */
		if (in_file)
			return rw_opts_err(err, errlen, "%s: a config file cannot include another",
					   ctx);
		rc = read_file(t, val, obj, err, errlen);
		if (rc == 0)
			snprintf((char *)f, o->size, "%s", val);
		return rc;
	case RW_OPT_HELP:
		return 1;
	case RW_OPT_IGNORED:
		if (o->letter)
			fprintf(stderr, "%s: warning: option --%s (-%c) is accepted and ignored\n",
				t->prog, o->name, o->letter);
		else
			fprintf(stderr, "%s: warning: option --%s is accepted and ignored\n",
				t->prog, o->name);
		return 0;
	case RW_OPT_REFUSED:
		rw_opts_err(err, errlen, "%s: %s", ctx, o->help);
		return -ENOTSUP;
	}
	if (o->type >= RW_OPT_APP && t->apply != NULL)
		return t->apply(o, val, obj, ctx, err, errlen);
	return rw_opts_err(err, errlen, "%s: option of unknown type %d", ctx, o->type);
}

void
rw_opts_defaults(const struct rw_opts *t, void *obj)
{
	char err[64];

	/* the table's own defaults are valid; a config default would read a file */
	for (size_t i = 0; i < t->n; i++)
		if (t->opt[i].def != NULL && t->opt[i].type != RW_OPT_CONFIG)
			apply_opt(t, &t->opt[i], t->opt[i].def, obj, t->opt[i].name, err,
				  sizeof(err), false);
}

static void
unknown_opt(const struct rw_opts *t, const char *a, char *err, size_t errlen)
{
	char names[1024];

	if (t->list_prefix == NULL) {
		rw_opts_err(err, errlen, "unknown option \"%s\" (see --help)", a);
		return;
	}
	rw_opts_names(t, t->list_prefix, names, sizeof(names));
	rw_opts_err(err, errlen, "unknown option \"%s\" (options: %s)", a, names);
}

/*
 * The option argument @a names: "--name", "--name=value", and in a table with
 * letters "-x" or "-xVALUE". *@val gets an attached value or NULL. NULL with
 * @err set for an unknown option, or with err[0] == 0 for a positional argument.
 */
static const struct rw_opt *
arg_opt(const struct rw_opts *t, const char *a, const char **val, char *err, size_t errlen)
{
	const struct rw_opt *o;
	const char *eq;

	err[0] = '\0';
	*val = NULL;
	if (strncmp(a, "--", 2) == 0 && a[2] != '\0') {
		eq = strchr(a + 2, '=');
		o = find_opt(t, a + 2, eq ? (size_t)(eq - (a + 2)) : strlen(a + 2));
		if (o == NULL)
			unknown_opt(t, a, err, errlen);
		else if (eq)
			*val = eq + 1;
		return o;
	}
	if (a[0] == '-' && a[1] != '\0' && has_letters(t)) {
		o = find_letter(t, a[1]);
		if (o == NULL)
			unknown_opt(t, a, err, errlen);
		else if (a[2] != '\0')
			*val = a + 2;
		return o;
	}
	if (t->positional == NULL || (a[0] == '-' && a[1] != '\0'))
		rw_opts_err(err, errlen,
			    "unexpected argument \"%s\": options start with -- (EAL options go "
			    "before the \"--\" separator)",
			    a);
	return NULL;
}

int
rw_opts_parse_args(const struct rw_opts *t, int argc, char **argv, void *obj, char *err,
		   size_t errlen)
{
	unsigned npos = 0;

	for (int i = 1; i < argc; i++) {
		const char *val;
		const struct rw_opt *o;
		char ctx[96];
		int rc;

		if (strcmp(argv[i], "-h") == 0) {
			rw_opts_help(t, stdout);
			return 1;
		}
		o = arg_opt(t, argv[i], &val, err, errlen);
		if (o == NULL && err[0] != '\0')
			return -EINVAL;
		if (o == NULL) {
			rc = t->positional(npos++, argv[i], obj, err, errlen);
			if (rc != 0)
				return rc;
			continue;
		}
		if (o->type == RW_OPT_HELP) {
			rw_opts_help(t, stdout);
			return 1;
		}
		snprintf(ctx, sizeof(ctx), "%s--%s", t->ctx_prefix ? t->ctx_prefix : "", o->name);
		if (val)
			;
		else if (o->arg == NULL)
			val = "true";
		else if (i + 1 < argc)
			val = argv[++i];
		else
			return rw_opts_err(err, errlen, "%s needs a value (%s)", ctx, o->arg);
		rc = apply_opt(t, o, val, obj, ctx, err, errlen, false);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
rw_opts_parse_main(const struct rw_opts *t, int argc, char **argv, void *obj, int *eal_argc,
		   char *err, size_t errlen)
{
	int sep;

	for (sep = 1; sep < argc; sep++)
		if (strcmp(argv[sep], "--") == 0)
			break;
	if (sep < argc) {
		*eal_argc = sep;
		/* argv[sep], the "--", stands where the parser expects argv[0] */
		return rw_opts_parse_args(t, argc - sep, argv + sep, obj, err, errlen);
	}
	*eal_argc = argc;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			rw_opts_help(t, stdout);
			return 1;
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

/* One "key = value" line (comment already cut); 0 for a blank one. */
static int
file_line(const struct rw_opts *t, char *line, const char *path, unsigned lineno, void *obj,
	  char *err, size_t errlen)
{
	char *eq, *key = trim(line), *val, ctx[320], names[1024];
	const struct rw_opt *o;
	size_t vl;

	if (*key == '\0')
		return 0;
	eq = strchr(key, '=');
	if (eq == NULL)
		return rw_opts_err(err, errlen, "%s:%u: \"%s\" is not \"key = value\"", path,
				   lineno, key);
	*eq = '\0';
	key = trim(key);
	val = trim(eq + 1);
	vl = strlen(val);
	if (vl >= 2 && val[0] == '"' && val[vl - 1] == '"') {
		val[vl - 1] = '\0';
		val++;
	}
	o = find_opt(t, key, strlen(key));
	if (o == NULL || o->type == RW_OPT_HELP) {
		rw_opts_names(t, "", names, sizeof(names));
		return rw_opts_err(err, errlen, "%s:%u: unknown key \"%s\" (keys: %s)", path,
				   lineno, key, names);
	}
	snprintf(ctx, sizeof(ctx), "%s:%u: %s", path, lineno, o->name);
	return apply_opt(t, o, val, obj, ctx, err, errlen, true);
}

static int
read_file(const struct rw_opts *t, const char *path, void *obj, char *err, size_t errlen)
{
	size_t cap = t->line_max + 2; /* the newline and the NUL */
	char *line = malloc(cap);
	unsigned lineno = 0;
	FILE *f;
	int rc = 0;

	if (line == NULL) {
		rw_opts_err(err, errlen, "--config %s: out of memory", path);
		return -ENOMEM;
	}
	f = fopen(path, "r");
	if (f == NULL) {
		rc =
		    rw_opts_err(err, errlen, "--config %s: cannot open: %s", path, strerror(errno));
		goto out_free;
	}
	while (rc == 0 && fgets(line, (int)cap, f) != NULL) {
		char *hash;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			rc = rw_opts_err(err, errlen, "%s:%u: line longer than %zu characters",
					 path, lineno, t->line_max);
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		rc = file_line(t, line, path, lineno, obj, err, errlen);
	}
	if (rc == 0 && ferror(f))
		rc = rw_opts_err(err, errlen, "%s: read error: %s", path, strerror(errno));
	fclose(f);
out_free:
	free(line);
	return rc;
}

int
rw_opts_file(const struct rw_opts *t, const char *path, void *obj, char *err, size_t errlen)
{
	return read_file(t, path, obj, err, errlen);
}

/*
 * Print @text as the help column: words wrapped at RW_OPTS_HELP_COLS, each
 * continuation line indented to column @indent. The cursor is at column @col
 * (past @indent when the option's name overflowed its column). A word longer
 * than the line is printed whole, never split.
 */
static void
help_wrap(FILE *f, const char *text, int indent, int col)
{
	while (*text) {
		size_t w;

		while (*text == ' ')
			text++;
		w = strcspn(text, " ");
		if (w == 0)
			break;
		if (col > indent && col + 1 + (int)w > RW_OPTS_HELP_COLS) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		}
		fprintf(f, " %.*s", (int)w, text);
		col += 1 + (int)w;
		text += w;
	}
	fputc('\n', f);
}

void
rw_opts_help(const struct rw_opts *t, FILE *f)
{
	bool letters = has_letters(t);

	fputs(t->usage, f);
	for (size_t i = 0; i < t->n; i++) {
		const struct rw_opt *o = &t->opt[i];
		char left[96], text[1024];

		if (letters)
			snprintf(left, sizeof(left), "%c%c%c --%s%s%s", o->letter ? '-' : ' ',
				 o->letter ? o->letter : ' ', o->letter ? ',' : ' ', o->name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		/* flags (no argument) say their default in the help text */
		if (o->arg && o->def && o->def[0])
			snprintf(text, sizeof(text), "%s [%s]", o->help, o->def);
		else
			snprintf(text, sizeof(text), "%s", o->help);
		fprintf(f, "  %-*s", t->help_width, left);
		help_wrap(
		    f, text, 2 + t->help_width,
		    2 + ((int)strlen(left) > t->help_width ? (int)strlen(left) : t->help_width));
	}
	if (t->footer)
		fputs(t->footer, f);
}
