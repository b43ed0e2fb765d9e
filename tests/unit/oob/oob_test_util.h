/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file oob_test_util.h
 * Helpers for the oob unit tests: the captured test vectors and a scripted
 * fake peer (a thread that sends and expects bytes) on 127.0.0.1.
 */
#ifndef RW_OOB_TEST_UTIL_H
#define RW_OOB_TEST_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "oob_tcp.h"

#define VEC_MAX_MSG 128

/** One captured TCP payload. */
struct vec_msg {
	int frame;
	char side; /* 'C' or 'S' */
	size_t len;
	uint8_t data[VEC_MAX_MSG];
};

/** Loads "<frame> <C|S> <hex>" lines; returns the count or -1. */
int vec_load(const char *path, struct vec_msg *out, size_t max);

enum peer_op {
	PEER_SEND,   /* write data[len] */
	PEER_EXPECT, /* read len bytes; compare with data unless data is NULL */
	PEER_SLEEP,  /* ms */
	PEER_CLOSE,  /* close the socket (and stop) */
};

struct peer_act {
	enum peer_op op;
	const uint8_t *data;
	size_t len;
	int ms;
};

#define PEER_MAX_ACTS 128

/** A scripted fake peer running in its own thread. */
struct fake_peer {
	struct peer_act acts[PEER_MAX_ACTS];
	size_t nacts;
	int is_server; /* accept on lst, else connect to port */
	struct oob_listener lst;
	uint16_t port; /* where to connect when !is_server */
	int io_timeout_ms;
	/* results */
	size_t done_acts; /* actions completed */
	int mismatch;	  /* index of the first EXPECT that differed, or -1 */
	int failed;	  /* an I/O error stopped the script */
	char err[OOB_ERR_LEN + 32];
	pthread_t th;
};

void peer_init(struct fake_peer *p);
void peer_add(struct fake_peer *p, enum peer_op op, const void *data, size_t len);
void peer_sleep(struct fake_peer *p, int ms);

/** Starts a fake server listening on 127.0.0.1 (port in p->lst.port). */
int peer_start_server(struct fake_peer *p);
/** Starts a fake client connecting to 127.0.0.1:@p port. */
int peer_start_client(struct fake_peer *p, uint16_t port);
void peer_join(struct fake_peer *p);

/** Connect options for tests: short timeouts. */
struct oob_connect_opts test_connect_opts(int io_timeout_ms);

/** Lists the message of @p c when @p rc is an error; returns rc. */
int show_err(const char *who, int rc, const struct oob_conn *c);

#endif /* RW_OOB_TEST_UTIL_H */
