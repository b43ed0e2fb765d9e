/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file oob_tcp.c
 * Out-of-band TCP channel: see oob_tcp.h.
 */
#define _GNU_SOURCE
#include "oob_tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define OOB_DEF_CONNECT_MS 5000
#define OOB_DEF_RETRY_MS 100
#define OOB_DEF_IO_MS 10000

void
oob_conn_init(struct oob_conn *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->timeout_ms = OOB_DEF_IO_MS;
}

int
oob_fail(struct oob_conn *c, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	c->last_rc = rc;
	return rc;
}

static int64_t
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left before @p deadline for poll(); -1 when there is none. */
static int
left_ms(int64_t deadline)
{
	if (deadline < 0)
		return -1;
	int64_t l = deadline - now_ms();
	if (l < 0)
		return 0;
	return l > 0x7fffffff ? 0x7fffffff : (int)l;
}

static void
fmt_peer(const struct sockaddr *sa, char *out, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		port = ntohs(in->sin_port);
		snprintf(out, len, "%s:%u", ip, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		port = ntohs(in6->sin6_port);
		snprintf(out, len, "[%s]:%u", ip, port);
	} else {
		snprintf(out, len, "?");
	}
}

static int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -1;
	return 0;
}

/* One non-blocking connect attempt to one address; returns fd or -errno (ETIMEDOUT). */
static int
connect_one(const struct addrinfo *ai, int timeout_ms)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (set_nonblock(fd) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return -e;
	}
	int64_t deadline = now_ms() + timeout_ms;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int r = poll(&p, 1, left_ms(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
		if (r == 0) {
			close(fd);
			return -ETIMEDOUT;
		}
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
			soerr = errno;
		if (soerr) {
			close(fd);
			return -soerr;
		}
		return fd;
	}
}

int
oob_connect(struct oob_conn *c, const char *host, uint16_t port,
	    const struct oob_connect_opts *opts)
{
	struct oob_connect_opts o = {0};
	if (opts)
		o = *opts;
	int cto = o.connect_timeout_ms > 0 ? o.connect_timeout_ms : OOB_DEF_CONNECT_MS;
	int delay = o.retry_delay_ms > 0 ? o.retry_delay_ms : OOB_DEF_RETRY_MS;
	int retries = o.retries > 0 ? o.retries : 0;

	oob_conn_init(c);
	c->timeout_ms = o.io_timeout_ms == 0 ? OOB_DEF_IO_MS : o.io_timeout_ms;
	if (!host || !*host)
		return oob_fail(c, OOB_ERR_ARG, "cannot connect: no server address given");
	if (strchr(host, ':'))
		snprintf(c->peer, sizeof(c->peer), "[%s]:%u", host, port);
	else
		snprintf(c->peer, sizeof(c->peer), "%s:%u", host, port);

	char service[8];
	snprintf(service, sizeof(service), "%u", port);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	int g = getaddrinfo(host, service, &hints, &res);
	if (g != 0)
		return oob_fail(c, OOB_ERR_SYS, "cannot connect to %s: %s", c->peer,
				gai_strerror(g));

	int last = 0;
	for (int attempt = 0; attempt <= retries; attempt++) {
		if (attempt > 0)
			usleep((useconds_t)delay * 1000);
		for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
			int fd = connect_one(ai, cto);
			if (fd >= 0) {
				c->fd = fd;
				fmt_peer(ai->ai_addr, c->peer, sizeof(c->peer));
				freeaddrinfo(res);
				return OOB_OK;
			}
			last = -fd;
		}
		/* Only a server not (yet) there is worth another try. */
		if (last != ECONNREFUSED && last != ETIMEDOUT && last != EHOSTUNREACH &&
		    last != ENETUNREACH)
			break;
	}
	freeaddrinfo(res);
	if (last == ETIMEDOUT)
		return oob_fail(c, OOB_ERR_TIMEOUT, "cannot connect to %s: timed out after %d ms",
				c->peer, cto);
	return oob_fail(c, OOB_ERR_SYS, "cannot connect to %s: %s", c->peer, strerror(last));
}

int
oob_listen(struct oob_listener *l, const char *bind_addr, uint16_t port, char *err, size_t errlen)
{
	l->fd = -1;
	l->port = 0;
	l->wait = NULL;
	l->wait_arg = NULL;
	char service[8];
	snprintf(service, sizeof(service), "%u", port);
	struct addrinfo hints = {
	    .ai_flags = AI_PASSIVE,
	    .ai_family = bind_addr ? AF_UNSPEC : AF_INET,
	    .ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res = NULL;
	int g = getaddrinfo(bind_addr, service, &hints, &res);
	if (g != 0) {
		snprintf(err, errlen, "cannot listen on %s:%u: %s", bind_addr ? bind_addr : "*",
			 port, gai_strerror(g));
		return OOB_ERR_SYS;
	}
	int last = 0;
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			last = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 1) < 0 ||
		    set_nonblock(fd) < 0) {
			last = errno;
			close(fd);
			continue;
		}
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
			if (ss.ss_family == AF_INET)
				l->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
			else if (ss.ss_family == AF_INET6)
				l->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		}
		l->fd = fd;
		freeaddrinfo(res);
		return OOB_OK;
	}
	freeaddrinfo(res);
	snprintf(err, errlen, "cannot listen on %s:%u: %s", bind_addr ? bind_addr : "*", port,
		 strerror(last));
	return OOB_ERR_SYS;
}

int
oob_accept(struct oob_listener *l, struct oob_conn *c, int accept_timeout_ms, int io_timeout_ms)
{
	oob_conn_init(c);
	c->timeout_ms = io_timeout_ms == 0 ? OOB_DEF_IO_MS : io_timeout_ms;
	if (l->fd < 0)
		return oob_fail(c, OOB_ERR_ARG, "accept: not listening");
	int64_t deadline = accept_timeout_ms > 0 ? now_ms() + accept_timeout_ms : -1;
	for (;;) {
		struct pollfd p = {.fd = l->fd, .events = POLLIN};
		int r = poll(&p, 1, l->wait ? 0 : left_ms(deadline));
		if (r < 0 && errno == EINTR && !l->wait)
			continue;
		if (r < 0 && errno != EINTR)
			return oob_fail(c, OOB_ERR_SYS, "accept on port %u: %s", l->port,
					strerror(errno));
		if (r <= 0 && l->wait) {
			if (l->wait(l->wait_arg))
				return oob_fail(c, OOB_ERR_STOPPED,
						"stopped while waiting for a client "
						"on port %u",
						l->port);
			if (deadline < 0 || now_ms() < deadline)
				continue;
			r = 0;
		}
		if (r == 0)
			return oob_fail(c, OOB_ERR_TIMEOUT,
					"no client connected to port %u within %d ms", l->port,
					accept_timeout_ms);
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
				continue;
			return oob_fail(c, OOB_ERR_SYS, "accept on port %u: %s", l->port,
					strerror(errno));
		}
		c->fd = fd;
		fmt_peer((struct sockaddr *)&ss, c->peer, sizeof(c->peer));
		return OOB_OK;
	}
}

void
oob_listener_close(struct oob_listener *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

int
oob_write_full(struct oob_conn *c, const void *buf, size_t n, const char *what)
{
	const uint8_t *p = buf;
	size_t done = 0;
	if (c->msg)
		return c->msg->write(c->msg_arg, c, buf, n, what);
	if (c->fd < 0)
		return oob_fail(c, OOB_ERR_ARG, "cannot send %s: not connected", what);
	int64_t deadline = c->timeout_ms > 0 ? now_ms() + c->timeout_ms : -1;
	while (done < n) {
		ssize_t w = send(c->fd, p + done, n - done, MSG_NOSIGNAL);
		if (w > 0) {
			done += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pf = {.fd = c->fd, .events = POLLOUT};
			int r = poll(&pf, 1, left_ms(deadline));
			if (r < 0 && errno != EINTR)
				return oob_fail(c, OOB_ERR_SYS, "sending %s to %s: %s", what,
						c->peer, strerror(errno));
			if (r == 0)
				return oob_fail(c, OOB_ERR_TIMEOUT,
						"timed out after %d ms sending %s to %s",
						c->timeout_ms, what, c->peer);
			continue;
		}
		if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
			return oob_fail(c, OOB_ERR_EOF, "peer %s closed the connection before %s",
					c->peer, what);
		return oob_fail(c, OOB_ERR_SYS, "sending %s to %s: %s", what, c->peer,
				w < 0 ? strerror(errno) : "short write");
	}
	return OOB_OK;
}

int
oob_read_full_timeout(struct oob_conn *c, void *buf, size_t n, const char *what, int timeout_ms)
{
	uint8_t *p = buf;
	c->got = 0;
	if (c->msg)
		return c->msg->read(c->msg_arg, c, buf, n, what, timeout_ms);
	if (c->fd < 0)
		return oob_fail(c, OOB_ERR_ARG, "cannot read %s: not connected", what);
	int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : -1;
	while (c->got < n) {
		ssize_t r = recv(c->fd, p + c->got, n - c->got, 0);
		if (r > 0) {
			c->got += (size_t)r;
			continue;
		}
		if (r == 0)
			return oob_fail(c, OOB_ERR_EOF,
					"peer %s closed the connection while we waited for %s "
					"(got %zu of %zu bytes)",
					c->peer, what, c->got, n);
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd pf = {.fd = c->fd, .events = POLLIN};
			int pr = poll(&pf, 1, c->wait ? 0 : left_ms(deadline));
			if (pr < 0 && errno != EINTR)
				return oob_fail(c, OOB_ERR_SYS, "reading %s from %s: %s", what,
						c->peer, strerror(errno));
			if (pr <= 0 && c->wait) {
				if (c->wait(c->wait_arg))
					return oob_fail(c, OOB_ERR_STOPPED,
							"stopped while waiting for "
							"%s from %s",
							what, c->peer);
				if (deadline < 0 || now_ms() < deadline)
					continue;
				pr = 0;
			}
			if (pr == 0)
				return oob_fail(c, OOB_ERR_TIMEOUT,
						"timed out after %d ms waiting for %s "
						"(got %zu of %zu bytes) from %s",
						timeout_ms, what, c->got, n, c->peer);
			continue;
		}
		if (errno == ECONNRESET)
			return oob_fail(c, OOB_ERR_EOF,
					"peer %s reset the connection while we waited for %s "
					"(got %zu of %zu bytes)",
					c->peer, what, c->got, n);
		return oob_fail(c, OOB_ERR_SYS, "reading %s from %s: %s", what, c->peer,
				strerror(errno));
	}
	return OOB_OK;
}

int
oob_read_full(struct oob_conn *c, void *buf, size_t n, const char *what)
{
	return oob_read_full_timeout(c, buf, n, what, c->timeout_ms);
}

void
oob_close(struct oob_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
