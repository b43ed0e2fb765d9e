/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pingpong_xchg.h
 * rdma-core's ibv_rc_pingpong (Debian 12: rdma-core 44) TCP exchange, both
 * roles, byte-compatible. Default port 18515.
 *
 * The message is "%04x:%06x:%06x:%s" of LID, QPN, PSN and the GID as 32 hex
 * digits (the 16 raw bytes in order; all zero without -g), NUL-terminated:
 * always 52 bytes. The order:
 *
 *   client: connect; write its 52 bytes; read the server's 52; write "done\0"; close
 *   server: accept; read 52; [connect its QP to RTR/RTS]; write its 52;
 *           read "done\0"; close
 *
 * The server therefore brings its QP up before answering, and (like the real
 * one, which posts its receives before it even listens) must have its
 * receives posted by then: the client starts sending right after "done".
 */
#ifndef RW_PINGPONG_XCHG_H
#define RW_PINGPONG_XCHG_H

#include <stddef.h>
#include <stdint.h>

#include "oob_tcp.h"

#define PINGPONG_PORT 18515
#define PINGPONG_MSG_LEN 52 /**< sizeof "0000:000000:000000:" + 32 hex digits */
#define PINGPONG_DONE_LEN 5

struct pingpong_dest {
	uint32_t lid;	 /**< 16 bits */
	uint32_t qpn;	 /**< 24 bits */
	uint32_t psn;	 /**< 24 bits */
	uint8_t gid[16]; /**< raw GID; all zero when the peer runs without -g */
};

/**
 * Formats @p d into 52 bytes (NUL included); refuses LID > 16 bits, QPN or
 * PSN > 24 bits. @return PINGPONG_MSG_LEN or OOB_ERR_ARG.
 */
int pingpong_format_dest(const struct pingpong_dest *d, uint8_t *out, size_t outlen, char *err,
			 size_t errlen);

/** Parses exactly 52 bytes strictly (lower-case hex, fixed widths, NUL last). */
int pingpong_parse_dest(const uint8_t *msg, size_t len, struct pingpong_dest *d, char *err,
			size_t errlen);

/** The client side on a connected @p c: write, read, write "done". */
int pingpong_client_exchange(struct oob_conn *c, const struct pingpong_dest *local,
			     struct pingpong_dest *remote);

/**
 * The server side on an accepted @p c: read the client's details, call
 * @p connect_qp (may be NULL) with them, write ours, read "done".
 */
int pingpong_server_exchange(struct oob_conn *c, const struct pingpong_dest *local,
			     struct pingpong_dest *remote,
			     int (*connect_qp)(void *arg, const struct pingpong_dest *remote),
			     void *arg);

#endif /* RW_PINGPONG_XCHG_H */
