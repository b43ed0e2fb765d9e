/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file oob_tcp.h
 * The out-of-band TCP channel perftest and ibv_rc_pingpong use to swap QP
 * details: connect (with a per-attempt timeout and optional retries), listen
 * and accept one peer, and whole-message reads and writes with a deadline.
 *
 * Every failure leaves a one-line human message in the connection (or in the
 * caller's buffer for the listener), e.g.
 *   "cannot connect to 10.0.0.2:18515: Connection refused"
 *   "timed out after 5000 ms waiting for the peer's key line (got 3 of 108 bytes)
 * from 10.0.0.2:18515" Plain POSIX sockets, no DPDK. A connection is used by one thread at a time.
 */
#ifndef RW_OOB_TCP_H
#define RW_OOB_TCP_H

#include <stddef.h>
#include <stdint.h>

#define OOB_ERR_LEN 256
#define OOB_PEER_LEN 64

/** Result codes (negative); 0 is success. */
enum oob_rc {
	OOB_OK = 0,
	OOB_ERR_SYS = -1,     /**< a socket call failed (message has strerror) */
	OOB_ERR_TIMEOUT = -2, /**< the deadline passed */
	OOB_ERR_EOF = -3,     /**< the peer closed (or reset) the connection */
	OOB_ERR_PROTO = -4,   /**< the peer sent something malformed or unexpected */
	OOB_ERR_ARG = -5,     /**< bad argument from the caller */
	OOB_ERR_STOPPED = -6, /**< the listener's wait hook asked to stop (e.g. Ctrl-C) */
};

struct oob_conn;

/**
 * A message transport in place of the TCP stream (perftest -R: RDMA SEND/RECV on a
 * channel QP, app/rnic/rnic_cm_chan.h): each oob_write_full() is one message and each
 * oob_read_full*() takes exactly one message of the size asked for (another size is a
 * protocol error). Both return enum oob_rc and set the connection's error on failure.
 */
struct oob_msg_ops {
	int (*write)(void *arg, struct oob_conn *c, const void *buf, size_t n, const char *what);
	int (*read)(void *arg, struct oob_conn *c, void *buf, size_t n, const char *what,
		    int timeout_ms);
};

/** One connected TCP stream to the peer. */
struct oob_conn {
	int fd;			 /**< -1 when closed */
	int timeout_ms;		 /**< deadline for one read or write; <= 0 waits forever */
	char peer[OOB_PEER_LEN]; /**< "10.0.0.2:18515" or "[fe80::1]:18515" */
	size_t got;		 /**< bytes a failed read did receive */
	int last_rc;		 /**< enum oob_rc of the last failure */
	char err[OOB_ERR_LEN];	 /**< message of the last failure */
	/**
	 * Optional (cleared by connect/accept; set it afterwards): called over
	 * and over while a read waits for the peer, instead of sleeping in
	 * poll(), so that the caller serves other work meanwhile (the rnic's
	 * port: the peer may need our ARP/ND answer before it can reply). A
	 * nonzero return stops the read with OOB_ERR_STOPPED.
	 */
	int (*wait)(void *arg);
	void *wait_arg;
	/** Set: messages go through these instead of fd (which stays -1). */
	const struct oob_msg_ops *msg;
	void *msg_arg;
};

/** A listening socket waiting for one peer. */
struct oob_listener {
	int fd;
	uint16_t port; /**< the bound port (useful with port 0) */
	/**
	 * Optional (oob_listen clears it): called over and over while no peer
	 * has connected, instead of sleeping in poll(), so that the caller can
	 * serve other work meanwhile (the rnic answers ARP, ND and ping on its
	 * port) and pace itself; a nonzero return stops oob_accept with
	 * OOB_ERR_STOPPED.
	 */
	int (*wait)(void *arg);
	void *wait_arg;
};

/** Connect options; zero-initialise for the defaults. */
struct oob_connect_opts {
	int connect_timeout_ms; /**< per attempt; <= 0: 5000 */
	int retries;		/**< extra attempts after a refused/timed-out one (perftest: 0) */
	int retry_delay_ms;	/**< pause between attempts; <= 0: 100 */
	int io_timeout_ms;	/**< becomes conn->timeout_ms; 0: 10000, < 0: none */
};

/** Marks @p c closed without touching any descriptor. */
void oob_conn_init(struct oob_conn *c);

/**
 * Connects to @p host (name or address) : @p port. On failure @p c->err says
 * e.g. "cannot connect to 10.0.0.2:18515: Connection refused".
 * @return OOB_OK or a negative enum oob_rc.
 */
int oob_connect(struct oob_conn *c, const char *host, uint16_t port,
		const struct oob_connect_opts *opts);

/**
 * Binds and listens on @p bind_addr (NULL: any IPv4 address, as perftest
 * does by default) : @p port (0: any free port, see l->port), SO_REUSEADDR.
 */
int oob_listen(struct oob_listener *l, const char *bind_addr, uint16_t port, char *err,
	       size_t errlen);

/**
 * Waits up to @p accept_timeout_ms (<= 0: forever) for one peer and fills
 * @p c (its I/O deadline @p io_timeout_ms, as in oob_connect_opts).
 */
int oob_accept(struct oob_listener *l, struct oob_conn *c, int accept_timeout_ms,
	       int io_timeout_ms);

void oob_listener_close(struct oob_listener *l);

/** Writes all @p n bytes or fails; @p what names the message for errors. */
int oob_write_full(struct oob_conn *c, const void *buf, size_t n, const char *what);

/**
 * Reads exactly @p n bytes within c->timeout_ms (one deadline for the whole
 * message) or fails with OOB_ERR_TIMEOUT / OOB_ERR_EOF / OOB_ERR_SYS; c->got
 * then tells how many did arrive.
 */
int oob_read_full(struct oob_conn *c, void *buf, size_t n, const char *what);

/** Same with an explicit deadline (<= 0: forever), e.g. while the peer runs traffic. */
int oob_read_full_timeout(struct oob_conn *c, void *buf, size_t n, const char *what,
			  int timeout_ms);

/** Records failure @p rc with a printf-style message in @p c; returns @p rc. */
int oob_fail(struct oob_conn *c, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Closes the descriptor (idempotent). */
void oob_close(struct oob_conn *c);

#endif /* RW_OOB_TCP_H */
