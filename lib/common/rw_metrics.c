/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rw_metrics.c
 * Prometheus text format 0.0.4 and its two outlets (rw_metrics.h). HTTP is
 * libmicrohttpd's (its internal polling thread, connection timeout and
 * limit); nothing here runs on a data-path lcore.
 */
#include "rw_metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { ST_STARTING, ST_READY, ST_STOPPING };

struct rw_metrics {
	struct rw_metrics_cfg cfg;
	char *file;
	struct MHD_Daemon *mhd;
	unsigned int port;
	int state;	      /* atomic */
	pthread_mutex_t lock; /* one render at a time (server and file threads) */
	struct rw_prom doc;   /* under lock */
	pthread_t file_thr;
	int file_thr_on;
	pthread_mutex_t wake_lock;
	pthread_cond_t wake;
	int quit; /* under wake_lock */
};

static const char CONTENT_TYPE[] = "text/plain; version=0.0.4; charset=utf-8";

/* ---- the text format ------------------------------------------------------------- */

static void
put(struct rw_prom *p, const char *s, size_t n)
{
	if (p->oom)
		return;
	if (p->len + n + 1 > p->cap) {
		size_t cap = p->cap ? p->cap : 16384;
		char *b;

		while (cap < p->len + n + 1)
			cap *= 2;
		b = realloc(p->buf, cap);
		if (!b) {
			p->oom = 1;
			return;
		}
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

static void
puts_(struct rw_prom *p, const char *s)
{
	put(p, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3))) putf(struct rw_prom *p, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	put(p, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void
rw_prom_reset(struct rw_prom *p)
{
	p->len = 0;
	p->oom = 0;
	if (p->buf)
		p->buf[0] = '\0';
}

void
rw_prom_free(struct rw_prom *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

void
rw_prom_head(struct rw_prom *p, const char *name, const char *type, const char *help)
{
	/* HELP escapes backslash and line feed (exposition format 0.0.4) */
	puts_(p, "# HELP ");
	puts_(p, name);
	put(p, " ", 1);
	for (const char *c = help ? help : ""; *c; c++) {
		if (*c == '\\')
			put(p, "\\\\", 2);
		else if (*c == '\n')
			put(p, "\\n", 2);
		else
			put(p, c, 1);
	}
	putf(p, "\n# TYPE %s %s\n", name, type);
}

static void
sample_name(struct rw_prom *p, const char *name, const char *labels)
{
	puts_(p, name);
	if (labels && *labels) {
		put(p, "{", 1);
		puts_(p, labels);
		put(p, "}", 1);
	}
}

void
rw_prom_u64(struct rw_prom *p, const char *name, const char *labels, uint64_t v)
{
	sample_name(p, name, labels);
	putf(p, " %" PRIu64 "\n", v);
}

void
rw_prom_f64(struct rw_prom *p, const char *name, const char *labels, double v)
{
	sample_name(p, name, labels);
	if (v != v)
		puts_(p, " NaN\n");
	else
		putf(p, " %.17g\n", v);
}

char *
rw_prom_label(char *out, size_t outlen, const char *key, const char *value)
{
	size_t n = strlen(out);

	if (n && n + 1 < outlen)
		out[n++] = ',';
	for (const char *c = key; *c && n + 1 < outlen; c++)
		out[n++] = *c;
	if (n + 2 < outlen) {
		out[n++] = '=';
		out[n++] = '"';
	}
	for (const char *c = value ? value : ""; *c && n + 3 < outlen; c++) {
		if (*c == '\\' || *c == '"' || *c == '\n') {
			out[n++] = '\\';
			out[n++] = *c == '\n' ? 'n' : *c;
		} else {
			out[n++] = *c;
		}
	}
	if (n + 1 < outlen)
		out[n++] = '"';
	out[n < outlen ? n : outlen - 1] = '\0';
	return out;
}

/* replace the word @p from (between '_' or the ends) of @p s by @p to */
static void
replace_word(char *s, size_t cap, const char *from, const char *to)
{
	size_t fl = strlen(from);
	char *hit = strstr(s, from);

	if (!hit || (hit != s && hit[-1] != '_') || (hit[fl] != '\0' && hit[fl] != '_'))
		return;
	char rest[160];

	snprintf(rest, sizeof(rest), "%s", hit + fl);
	*hit = '\0';
	strncat(s, to, cap - strlen(s) - 1);
	strncat(s, rest, cap - strlen(s) - 1);
}

double
rw_prom_name(char *out, size_t outlen, const char *prefix, const char *name, int counter)
{
	char tmp[160];
	double scale = 1;
	size_t n = strlen(name);

	snprintf(tmp, sizeof(tmp), "%s", name);
	if (n > 3 && strcmp(name + n - 3, "_ns") == 0) {
		tmp[n - 3] = '\0';
		strncat(tmp, "_seconds", sizeof(tmp) - strlen(tmp) - 1);
		scale = 1e-9;
	}
	replace_word(tmp, sizeof(tmp), "for_us", "for_this_host");
	replace_word(tmp, sizeof(tmp), "summary", "report");
	snprintf(out, outlen, "%s%s%s", prefix, tmp, counter ? "_total" : "");
	return scale;
}

/* ---- the document ---------------------------------------------------------------- */

void
rw_metrics_render(struct rw_metrics *m, struct rw_prom *p)
{
	rw_prom_reset(p);
	m->cfg.fill(p, m->cfg.arg);
}

static int
write_file(struct rw_metrics *m)
{
	char tmp[4200];
	FILE *f;
	int rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", m->file);
	pthread_mutex_lock(&m->lock);
	rw_metrics_render(m, &m->doc);
	if (m->doc.oom) {
		pthread_mutex_unlock(&m->lock);
		return -ENOMEM;
	}
	f = fopen(tmp, "w");
	if (!f) {
		rc = -errno;
	} else {
		if (fwrite(m->doc.buf, 1, m->doc.len, f) != m->doc.len)
			rc = -EIO;
		if (fclose(f) != 0 && !rc)
			rc = -EIO;
		/* rename: a reader sees the old document or the new one, never a part */
		if (!rc && rename(tmp, m->file) != 0)
			rc = -errno;
		if (rc)
			unlink(tmp);
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static void *
file_main(void *arg)
{
	struct rw_metrics *m = arg;
	unsigned int iv = m->cfg.interval_ms ? m->cfg.interval_ms : RW_METRICS_DEFAULT_INTERVAL_MS;
	int warned = 0;

	pthread_mutex_lock(&m->wake_lock);
	while (!m->quit) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += iv / 1000;
		ts.tv_nsec += (long)(iv % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&m->wake, &m->wake_lock, &ts);
		if (m->quit)
			break;
		if (__atomic_load_n(&m->state, __ATOMIC_ACQUIRE) != ST_READY)
			continue;
		pthread_mutex_unlock(&m->wake_lock);
		int rc = write_file(m);

		if (rc < 0 && !warned) {
			fprintf(stderr, "metrics: cannot write %s: %s (retrying every %u ms)\n",
				m->file, strerror(-rc), iv);
			warned = 1;
		}
		pthread_mutex_lock(&m->wake_lock);
	}
	pthread_mutex_unlock(&m->wake_lock);
	return NULL;
}

/* ---- HTTP (libmicrohttpd) -------------------------------------------------------- */

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned int status, const char *body, size_t len)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == MHD_HTTP_OK ? CONTENT_TYPE : "text/plain; charset=utf-8");
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(r, "Retry-After", "1");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	   const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	static const char starting[] = "starting: the counters are not published yet\n";
	static const char stopping[] = "stopping: the program is shutting down\n";
	static const char not_found[] = "not found: the metrics are at /metrics\n";
	static const char bad_method[] = "method not allowed: GET /metrics\n";
	static const char no_mem[] = "out of memory building the document\n";
	static int first;
	struct rw_metrics *m = cls;
	enum MHD_Result ret;
	int st;

	(void)version;
	(void)upload;
	if (*con_cls == NULL) { /* the headers: wait for the end of any body */
		*con_cls = &first;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* a body is read and ignored */
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		struct MHD_Response *r = MHD_create_response_from_buffer(
		    sizeof(bad_method) - 1, (void *)bad_method, MHD_RESPMEM_PERSISTENT);

		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, "Allow", "GET, HEAD");
		ret = MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (strcmp(url, "/metrics") != 0)
		return reply(c, MHD_HTTP_NOT_FOUND, not_found, sizeof(not_found) - 1);
	st = __atomic_load_n(&m->state, __ATOMIC_ACQUIRE);
	if (st == ST_STARTING)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, starting, sizeof(starting) - 1);
	if (st == ST_STOPPING)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, stopping, sizeof(stopping) - 1);
	pthread_mutex_lock(&m->lock);
	/* rw_metrics_stop() sets STOPPING before it takes the lock for the last time */
	if (__atomic_load_n(&m->state, __ATOMIC_ACQUIRE) != ST_READY) {
		pthread_mutex_unlock(&m->lock);
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, stopping, sizeof(stopping) - 1);
	}
	rw_metrics_render(m, &m->doc);
	if (m->doc.oom)
		ret = reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, no_mem, sizeof(no_mem) - 1);
	else
		ret = reply(c, MHD_HTTP_OK, m->doc.buf, m->doc.len);
	pthread_mutex_unlock(&m->lock);
	return ret;
}

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "metrics: %s", msg);
}

int
rw_metrics_check_listen(const char *s, char *err, size_t errlen)
{
	char addr[64];
	const char *colon = s ? strrchr(s, ':') : NULL;
	struct in_addr a;
	char *end;
	long port;

	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(addr)) {
		snprintf(err, errlen, "--metrics %s: expected ADDR:PORT, e.g. 0.0.0.0:9101",
			 s ? s : "");
		return -1;
	}
	memcpy(addr, s, (size_t)(colon - s));
	addr[colon - s] = '\0';
	if (inet_pton(AF_INET, addr, &a) != 1) {
		snprintf(err, errlen, "--metrics %s: '%s' is not an IPv4 address", s, addr);
		return -1;
	}
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port < 0 || port > 65535) {
		snprintf(err, errlen, "--metrics %s: port must be 0-65535", s);
		return -1;
	}
	return 0;
}

static int
start_http(struct rw_metrics *m, char *err, size_t errlen)
{
	struct sockaddr_in sa;
	const char *colon = strrchr(m->cfg.listen, ':');
	char addr[64];
	const union MHD_DaemonInfo *info;

	if (rw_metrics_check_listen(m->cfg.listen, err, errlen) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	memcpy(addr, m->cfg.listen, (size_t)(colon - m->cfg.listen));
	addr[colon - m->cfg.listen] = '\0';
	inet_pton(AF_INET, addr, &sa.sin_addr);
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	m->mhd = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG, ntohs(sa.sin_port),
	    NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)RW_METRICS_CLIENT_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)RW_METRICS_MAX_CLIENTS,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	if (!m->mhd) {
		snprintf(err, errlen, "--metrics %s: cannot listen (address in use or not local?)",
			 m->cfg.listen);
		return -1;
	}
	info = MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_BIND_PORT);
	m->port = info ? info->port : ntohs(sa.sin_port);
	return 0;
}

struct rw_metrics *
rw_metrics_start(const struct rw_metrics_cfg *cfg, char *err, size_t errlen)
{
	struct rw_metrics *m;
	int http = cfg->listen && *cfg->listen, file = cfg->file && *cfg->file;

	if (errlen)
		err[0] = '\0';
	if (!http && !file)
		return NULL;
	if (file && strlen(cfg->file) > 4000) {
		snprintf(err, errlen, "--metrics-file: path too long");
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "metrics: out of memory");
		return NULL;
	}
	m->cfg = *cfg;
	m->state = ST_STARTING;
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->wake_lock, NULL);
	pthread_cond_init(&m->wake, NULL);
	if (http && start_http(m, err, errlen) < 0)
		goto fail;
	if (file) {
		m->file = strdup(cfg->file);
		if (!m->file || pthread_create(&m->file_thr, NULL, file_main, m) != 0) {
			snprintf(err, errlen, "--metrics-file %s: cannot start the writer thread",
				 cfg->file);
			goto fail;
		}
		m->file_thr_on = 1;
	}
	if (http && cfg->prog)
		printf("%s: metrics at http://%.*s:%u/metrics\n", cfg->prog,
		       (int)(strrchr(cfg->listen, ':') - cfg->listen), cfg->listen,
		       rw_metrics_port(m));
	return m;
fail:
	if (m->mhd)
		MHD_stop_daemon(m->mhd);
	free(m->file);
	free(m);
	return NULL;
}

unsigned int
rw_metrics_port(const struct rw_metrics *m)
{
	return m && m->mhd ? m->port : 0;
}

void
rw_metrics_ready(struct rw_metrics *m)
{
	if (m)
		__atomic_store_n(&m->state, ST_READY, __ATOMIC_RELEASE);
}

void
rw_metrics_stop(struct rw_metrics *m)
{
	int was;

	if (!m)
		return;
	was = __atomic_exchange_n(&m->state, ST_STOPPING, __ATOMIC_ACQ_REL);
	if (m->file_thr_on) {
		pthread_mutex_lock(&m->wake_lock);
		m->quit = 1;
		pthread_cond_signal(&m->wake);
		pthread_mutex_unlock(&m->wake_lock);
		pthread_join(m->file_thr, NULL);
		/* the values at exit, once the data path stopped (they match --json) */
		if (was == ST_READY) {
			int rc = write_file(m);

			if (rc < 0)
				fprintf(stderr, "metrics: cannot write %s: %s\n", m->file,
					strerror(-rc));
		}
	}
	if (m->mhd)
		MHD_stop_daemon(m->mhd);
	rw_prom_free(&m->doc);
	pthread_cond_destroy(&m->wake);
	pthread_mutex_destroy(&m->wake_lock);
	pthread_mutex_destroy(&m->lock);
	free(m->file);
	free(m);
}
