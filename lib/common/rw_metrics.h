/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rw_metrics.h
 * Prometheus metrics of the three programs (docs/metrics.md): the text
 * exposition format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/),
 * served over HTTP by libmicrohttpd on its own thread (`--metrics ADDR:PORT`)
 * and written to a file for node_exporter's textfile collector
 * (`--metrics-file PATH`, rewritten by rename at an interval).
 *
 * The data path never calls anything here. The application's fill callback
 * runs on the server's or the file writer's thread and reads the counters the
 * data path publishes (aligned 64-bit words with one writer, read without a
 * lock, as the DPDK telemetry callbacks do); the two threads take turns under
 * one mutex that the data path never touches.
 *
 * States: STARTING (before rw_metrics_ready(): a scrape gets HTTP 503 and
 * "starting"), READY (200 and the document), STOPPING (rw_metrics_stop()
 * began: 503 "stopping"). Only GET and HEAD of /metrics are served (404 for
 * any other path, 405 for other methods); a client that sends nothing is
 * dropped after RW_METRICS_CLIENT_TIMEOUT_S.
 */
#ifndef RW_METRICS_H
#define RW_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define RW_METRICS_CLIENT_TIMEOUT_S 5 /**< idle or slow client dropped after this */
#define RW_METRICS_MAX_CLIENTS 16     /**< concurrent connections accepted */
#define RW_METRICS_DEFAULT_INTERVAL_MS 1000
#define RW_METRICS_MAX_QPS                                                                         \
	16 /**< per-QP series for the first this many QPs; the rest: qp="other" */

/** A document being built. */
struct rw_prom {
	char *buf;
	size_t len, cap;
	int oom; /**< an allocation failed: the document is incomplete (served as 500) */
};

void rw_prom_reset(struct rw_prom *p);
void rw_prom_free(struct rw_prom *p);
/** "# HELP name help" (escaped) and "# TYPE name type"; once per family, before its samples. */
void rw_prom_head(struct rw_prom *p, const char *name, const char *type, const char *help);
/** One sample "name{labels} value"; @p labels is "k=\"v\",..." (rw_prom_label) or NULL. */
void rw_prom_u64(struct rw_prom *p, const char *name, const char *labels, uint64_t v);
void rw_prom_f64(struct rw_prom *p, const char *name, const char *labels, double v);
/** Append k="v" (v escaped) to @p out (comma-separated); returns @p out. */
char *rw_prom_label(char *out, size_t outlen, const char *key, const char *value);

/**
 * The Prometheus name of a program's counter @p name: @p prefix, the name
 * with promtool's lint rules applied ("_ns" at the end becomes "_seconds",
 * "for_us" "for_this_host", a "summary" word "report"), and "_total" for a
 * counter. Returns the factor to apply to the value (1, or 1e-9 for ns).
 */
double rw_prom_name(char *out, size_t outlen, const char *prefix, const char *name, int counter);

typedef void (*rw_metrics_fill_fn)(struct rw_prom *p, void *arg);

struct rw_metrics_cfg {
	const char *listen;	  /**< "ADDR:PORT" (IPv4) or NULL/"": no HTTP server */
	const char *file;	  /**< path or NULL/"": no file */
	unsigned int interval_ms; /**< file rewrite interval (0: RW_METRICS_DEFAULT_INTERVAL_MS) */
	rw_metrics_fill_fn fill;
	void *arg;
	/** program name: with a server, "PROG: metrics at http://ADDR:PORT/metrics" on stdout */
	const char *prog;
};

struct rw_metrics;

/** Check "ADDR:PORT" (IPv4 dotted quad, port 0-65535). 0, or -1 with a message in @p err. */
int rw_metrics_check_listen(const char *s, char *err, size_t errlen);

/**
 * Start the HTTP server and/or the file writer in state STARTING. Returns
 * NULL with nothing started when neither is asked for (err empty) or on an
 * error (message in @p err: a bad address, a port in use).
 */
struct rw_metrics *rw_metrics_start(const struct rw_metrics_cfg *cfg, char *err, size_t errlen);
/** The port the server listens on (useful with port 0), 0 without a server. */
unsigned int rw_metrics_port(const struct rw_metrics *m);
/** The counters are published: serve them. */
void rw_metrics_ready(struct rw_metrics *m);
/**
 * Write the file one last time (the values at exit, when the data path has
 * stopped), refuse further scrapes, stop both threads, free. NULL: no-op.
 */
void rw_metrics_stop(struct rw_metrics *m);
/** Build the document once into @p p (tests, and the file writer). */
void rw_metrics_render(struct rw_metrics *m, struct rw_prom *p);

#endif /* RW_METRICS_H */
