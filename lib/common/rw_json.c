/* SPDX-License-Identifier: BSD-3-Clause */
#include "rw_json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <time.h>

#include "rw_version.h"

void
rw_json_init(struct rw_json *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->need_comma[0] = false;
	w->after_key = false;
	w->err = 0;
}

static void
put_string(struct rw_json *w, const char *s)
{
	fputc('"', w->f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", w->f);
			break;
		case '\\':
			fputs("\\\\", w->f);
			break;
		case '\n':
			fputs("\\n", w->f);
			break;
		case '\t':
			fputs("\\t", w->f);
			break;
		default:
			if (*p < 0x20)
				fprintf(w->f, "\\u%04x", *p);
			else
				fputc(*p, w->f);
		}
	}
	fputc('"', w->f);
}

/* Comma, newline, indentation and "key": before every value. */
static void
prefix(struct rw_json *w, const char *key)
{
	if (w->need_comma[w->depth])
		fputc(',', w->f);
	if (w->depth > 0) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	if (key) {
		put_string(w, key);
		fputs(": ", w->f);
	}
	w->need_comma[w->depth] = true;
	if (ferror(w->f) && !w->err)
		w->err = errno ? errno : EIO;
}

static void
open_(struct rw_json *w, const char *key, char c)
{
	prefix(w, key);
	fputc(c, w->f);
	if (w->depth + 1 >= RW_MAX_DEPTH) {
		w->err = w->err ? w->err : EINVAL;
		return;
	}
	w->need_comma[++w->depth] = false;
}

static void
close_(struct rw_json *w, char c)
{
	if (w->depth == 0) {
		w->err = w->err ? w->err : EINVAL;
		return;
	}
	w->depth--;
	fputc('\n', w->f);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->f);
	fputc(c, w->f);
}

void
rw_obj_begin(struct rw_json *w, const char *key)
{
	open_(w, key, '{');
}

void
rw_obj_end(struct rw_json *w)
{
	close_(w, '}');
}

void
rw_arr_begin(struct rw_json *w, const char *key)
{
	open_(w, key, '[');
}

void
rw_arr_end(struct rw_json *w)
{
	close_(w, ']');
}

void
rw_str(struct rw_json *w, const char *key, const char *v)
{
	prefix(w, key);
	if (v)
		put_string(w, v);
	else
		fputs("null", w->f);
}

void
rw_int(struct rw_json *w, const char *key, int64_t v)
{
	prefix(w, key);
	fprintf(w->f, "%" PRId64, v);
}

void
rw_uint(struct rw_json *w, const char *key, uint64_t v)
{
	prefix(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

void
rw_dbl(struct rw_json *w, const char *key, double v)
{
	prefix(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.9g", v);
	else
		fputs("null", w->f);
}

void
rw_bool(struct rw_json *w, const char *key, bool v)
{
	prefix(w, key);
	fputs(v ? "true" : "false", w->f);
}

void
rw_null(struct rw_json *w, const char *key)
{
	prefix(w, key);
	fputs("null", w->f);
}

const char *
rw_version(void)
{
	return RW_GIT_VERSION;
}

void
rw_doc_begin(struct rw_json *w, const char *app)
{
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	rw_obj_begin(w, NULL);
	rw_str(w, "schema", RW_SCHEMA);
	rw_str(w, "app", app);
	rw_str(w, "version", rw_version());
	rw_str(w, "started_utc", ts);
	rw_obj_begin(w, "config");
}

void
rw_doc_results(struct rw_json *w, bool has_seed, uint64_t seed)
{
	rw_obj_end(w);
	if (has_seed)
		rw_uint(w, "seed", seed);
	else
		rw_null(w, "seed");
	rw_obj_begin(w, "results");
}

int
rw_doc_end(struct rw_json *w)
{
	rw_obj_end(w);
	rw_obj_end(w);
	fputc('\n', w->f);
	if (fflush(w->f) != 0 && !w->err)
		w->err = errno ? errno : EIO;
	return -w->err;
}
