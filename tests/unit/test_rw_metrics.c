/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/common/rw_metrics: the text format (HELP/TYPE, escaping,
 * names under promtool's rules), the HTTP states on a real socket (503 while
 * starting, 200 when ready, 404 / 405, nothing once stopped), a client that
 * sends nothing not blocking another, and the file written at stop.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "rw_metrics.h"
#include "rw_test.h"

static unsigned fills;

static void
fill(struct rw_prom *p, void *arg)
{
	(void)arg;
	fills++;
	rw_prom_head(p, "rocewan_test_frames_total", "counter", "frames \\ seen\nsecond line");
	rw_prom_u64(p, "rocewan_test_frames_total", "dir=\"a2b\"", 42);
	rw_prom_head(p, "rocewan_test_rate_bytes_per_second", "gauge", "a rate");
	rw_prom_f64(p, "rocewan_test_rate_bytes_per_second", NULL, 1.5);
}

static void
test_text(void)
{
	struct rw_prom p = {0};
	char lab[64] = "", name[128];

	fill(&p, NULL);
	CHECK(!p.oom);
	CHECK(strstr(p.buf, "# HELP rocewan_test_frames_total frames \\\\ seen\\nsecond line\n") !=
	      NULL);
	CHECK(strstr(p.buf, "# TYPE rocewan_test_frames_total counter\n") != NULL);
	CHECK(strstr(p.buf, "rocewan_test_frames_total{dir=\"a2b\"} 42\n") != NULL);
	CHECK(strstr(p.buf, "rocewan_test_rate_bytes_per_second 1.5\n") != NULL);
	rw_prom_label(lab, sizeof(lab), "qp", "17");
	rw_prom_label(lab, sizeof(lab), "name", "a\"b\\c\nd");
	CHECK(strcmp(lab, "qp=\"17\",name=\"a\\\"b\\\\c\\nd\"") == 0);
	CHECK(rw_prom_name(name, sizeof(name), "rw_", "tx_paused_ns", 1) == 1e-9);
	CHECK(strcmp(name, "rw_tx_paused_seconds_total") == 0);
	CHECK(rw_prom_name(name, sizeof(name), "rw_", "rx_drop_not_for_us", 1) == 1);
	CHECK(strcmp(name, "rw_rx_drop_not_for_this_host_total") == 0);
	rw_prom_name(name, sizeof(name), "rw_", "vrp_summary_missing", 1);
	CHECK(strcmp(name, "rw_vrp_report_missing_total") == 0);
	rw_prom_name(name, sizeof(name), "rw_", "vrp_summaries_sent", 0);
	CHECK(strcmp(name, "rw_vrp_summaries_sent") == 0); /* only the whole word */
	rw_prom_free(&p);
}

static void
test_bad_listen(void)
{
	char err[256];
	struct rw_metrics_cfg c = {.fill = fill};
	const char *bad[] = {
	    "9101", ":80", "1.2.3:80", "1.2.3.4:", "1.2.3.4:65536", "1.2.3.4:x", "host:80"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c.listen = bad[i];
		CHECK(rw_metrics_start(&c, err, sizeof(err)) == NULL);
		CHECK(strstr(err, "--metrics") != NULL);
	}
	c.listen = NULL; /* nothing asked for: no error */
	CHECK(rw_metrics_start(&c, err, sizeof(err)) == NULL);
	CHECK(err[0] == '\0');
}

static int
dial(unsigned port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct timeval tv = {.tv_sec = 30};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* status code of "METHOD PATH", the body in @p body (may be NULL); -1: no connection */
static int
request(unsigned port, const char *method, const char *path, char *body, size_t blen)
{
	char req[256], buf[65536];
	size_t n = 0;
	ssize_t r;
	int fd = dial(port), code = -1;

	if (fd < 0)
		return -1;
	snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: x\r\n\r\n", method, path);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		return -1;
	}
	while (n + 1 < sizeof(buf) && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	close(fd);
	if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1)
		return -1;
	if (body) {
		const char *b = strstr(buf, "\r\n\r\n");

		snprintf(body, blen, "%s", b ? b + 4 : "");
	}
	return code;
}

static void
test_http_states_and_file(void)
{
	char err[256], body[4096], path[] = "/tmp/rw_metrics_test_XXXXXX", file[64];
	int tmpfd = mkstemp(path);
	struct rw_metrics_cfg c = {
	    .listen = "127.0.0.1:0", .file = file, .interval_ms = 3600000, .fill = fill};
	struct rw_metrics *m;
	unsigned port, before = fills;
	int idle;
	FILE *f;

	CHECK(tmpfd >= 0);
	close(tmpfd);
	unlink(path);
	snprintf(file, sizeof(file), "%s.prom", path);
	m = rw_metrics_start(&c, err, sizeof(err));
	CHECK(m != NULL);
	if (!m) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	port = rw_metrics_port(m);
	CHECK(port > 0);
	/* starting: a clear error, and the app's counters are not read */
	CHECK_EQ(request(port, "GET", "/metrics", body, sizeof(body)), 503);
	CHECK(strstr(body, "starting") != NULL);
	CHECK_EQ(fills, before);
	rw_metrics_ready(m);
	/* a client that connects and sends nothing does not hold up the next one */
	idle = dial(port);
	CHECK(idle >= 0);
	CHECK_EQ(request(port, "GET", "/metrics", body, sizeof(body)), 200);
	CHECK(strstr(body, "rocewan_test_frames_total{dir=\"a2b\"} 42\n") != NULL);
	CHECK_EQ(request(port, "HEAD", "/metrics", NULL, 0), 200);
	CHECK_EQ(request(port, "GET", "/", body, sizeof(body)), 404);
	CHECK(strstr(body, "/metrics") != NULL);
	CHECK_EQ(request(port, "GET", "/metrics/x", NULL, 0), 404);
	CHECK_EQ(request(port, "POST", "/metrics", NULL, 0), 405);
	CHECK_EQ(request(port, "DELETE", "/metrics", NULL, 0), 405);
	if (idle >= 0)
		close(idle);
	/* no file yet (the interval is an hour); stop writes it once, then nothing listens */
	CHECK(access(file, F_OK) != 0);
	rw_metrics_stop(m);
	CHECK_EQ(request(port, "GET", "/metrics", NULL, 0), -1);
	f = fopen(file, "r");
	CHECK(f != NULL);
	if (f) {
		size_t n = fread(body, 1, sizeof(body) - 1, f);

		body[n] = '\0';
		fclose(f);
		CHECK(strstr(body, "# TYPE rocewan_test_frames_total counter\n") != NULL);
		unlink(file);
	}
	snprintf(body, sizeof(body), "%s.tmp", file);
	CHECK(access(body, F_OK) != 0); /* the temporary was renamed, not left */
	rw_metrics_stop(NULL);		/* no-op */
}

static void
test_stop_before_ready_writes_nothing(void)
{
	char err[256], file[] = "/tmp/rw_metrics_test_nr_XXXXXX";
	int fd = mkstemp(file);
	struct rw_metrics_cfg c = {.file = file, .interval_ms = 10, .fill = fill};
	struct rw_metrics *m;
	unsigned before = fills;

	CHECK(fd >= 0);
	close(fd);
	unlink(file);
	m = rw_metrics_start(&c, err, sizeof(err));
	CHECK(m != NULL);
	usleep(50000);
	rw_metrics_stop(m); /* never ready: the counters were never published */
	CHECK_EQ(fills, before);
	CHECK(access(file, F_OK) != 0);
}

RW_TEST_MAIN(RW_TEST(test_text), RW_TEST(test_bad_listen), RW_TEST(test_http_states_and_file),
	     RW_TEST(test_stop_before_ready_writes_nothing))
