/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file oob_test_util.c
 * See oob_test_util.h.
 */
#include "oob_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
hexv(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
vec_load(const char *path, struct vec_msg *out, size_t max)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int n = 0;
	if (!f) {
		fprintf(stderr, "cannot open test vectors %s\n", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		int frame;
		char side;
		char hex[600];
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%d %c %599s", &frame, &side, hex) != 3 || (size_t)n >= max)
			goto bad;
		size_t hl = strlen(hex);
		if (hl % 2 || hl / 2 > VEC_MAX_MSG)
			goto bad;
		out[n].frame = frame;
		out[n].side = side;
		out[n].len = hl / 2;
		for (size_t i = 0; i < hl / 2; i++) {
			int a = hexv(hex[2 * i]), b = hexv(hex[2 * i + 1]);
			if (a < 0 || b < 0)
				goto bad;
			out[n].data[i] = (uint8_t)(a << 4 | b);
		}
		n++;
	}
	fclose(f);
	return n;
bad:
	fprintf(stderr, "bad test vector line in %s: %s", path, line);
	fclose(f);
	return -1;
}

void
peer_init(struct fake_peer *p)
{
	memset(p, 0, sizeof(*p));
	p->mismatch = -1;
	p->io_timeout_ms = 3000;
	p->lst.fd = -1;
}

void
peer_add(struct fake_peer *p, enum peer_op op, const void *data, size_t len)
{
	if (p->nacts >= PEER_MAX_ACTS)
		abort();
	p->acts[p->nacts].op = op;
	p->acts[p->nacts].data = data;
	p->acts[p->nacts].len = len;
	p->nacts++;
}

void
peer_sleep(struct fake_peer *p, int ms)
{
	peer_add(p, PEER_SLEEP, NULL, 0);
	p->acts[p->nacts - 1].ms = ms;
}

static void *
peer_main(void *arg)
{
	struct fake_peer *p = arg;
	struct oob_conn c;
	int rc;
	if (p->is_server) {
		rc = oob_accept(&p->lst, &c, 5000, p->io_timeout_ms);
		oob_listener_close(&p->lst);
	} else {
		struct oob_connect_opts o = test_connect_opts(p->io_timeout_ms);
		rc = oob_connect(&c, "127.0.0.1", p->port, &o);
	}
	if (rc) {
		p->failed = 1;
		snprintf(p->err, sizeof(p->err), "%s", c.err);
		return NULL;
	}
	for (size_t i = 0; i < p->nacts; i++) {
		const struct peer_act *a = &p->acts[i];
		uint8_t buf[256];
		switch (a->op) {
		case PEER_SEND:
			rc = oob_write_full(&c, a->data, a->len, "scripted bytes");
			break;
		case PEER_EXPECT:
			rc = a->len <= sizeof(buf)
				 ? oob_read_full(&c, buf, a->len, "scripted bytes")
				 : OOB_ERR_ARG;
			if (!rc && a->data && memcmp(buf, a->data, a->len) && p->mismatch < 0) {
				p->mismatch = (int)i;
				fprintf(stderr, "fake peer: action %zu: bytes differ\n  got:  ", i);
				for (size_t k = 0; k < a->len; k++)
					fprintf(stderr, "%02x", buf[k]);
				fprintf(stderr, "\n  want: ");
				for (size_t k = 0; k < a->len; k++)
					fprintf(stderr, "%02x", a->data[k]);
				fprintf(stderr, "\n");
			}
			break;
		case PEER_SLEEP:
			usleep((useconds_t)a->ms * 1000);
			rc = 0;
			break;
		case PEER_CLOSE:
			oob_close(&c);
			p->done_acts = i + 1;
			return NULL;
		}
		if (rc) {
			p->failed = 1;
			snprintf(p->err, sizeof(p->err), "action %zu: %s", i, c.err);
			break;
		}
		p->done_acts = i + 1;
	}
	oob_close(&c);
	return NULL;
}

int
peer_start_server(struct fake_peer *p)
{
	char err[OOB_ERR_LEN];
	p->is_server = 1;
	if (oob_listen(&p->lst, "127.0.0.1", 0, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	p->port = p->lst.port;
	return pthread_create(&p->th, NULL, peer_main, p);
}

int
peer_start_client(struct fake_peer *p, uint16_t port)
{
	p->is_server = 0;
	p->port = port;
	return pthread_create(&p->th, NULL, peer_main, p);
}

void
peer_join(struct fake_peer *p)
{
	pthread_join(p->th, NULL);
	if (p->failed)
		fprintf(stderr, "fake peer: %s\n", p->err);
}

struct oob_connect_opts
test_connect_opts(int io_timeout_ms)
{
	struct oob_connect_opts o = {
	    .connect_timeout_ms = 2000,
	    .retries = 20,
	    .retry_delay_ms = 25,
	    .io_timeout_ms = io_timeout_ms,
	};
	return o;
}

int
show_err(const char *who, int rc, const struct oob_conn *c)
{
	if (rc)
		fprintf(stderr, "%s: rc %d: %s\n", who, rc, c->err);
	return rc;
}
