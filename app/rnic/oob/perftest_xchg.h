/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file perftest_xchg.h
 * perftest's out-of-band TCP exchange, byte-compatible with the unmodified
 * Debian 12 perftest 4.5+0.17 binaries (which report version "6.06").
 *
 * Every message is answered by a same-sized one: the client writes first and
 * then reads, the server reads first and then writes (perftest's
 * ctx_xchg_data / ctx_hand_shake). The session ends with both sides writing
 * "done\0" unprompted. Per test type the order is (N = -q, sizes = the one -s
 * or, with -a, 2^1..2^23; K(i) = a key-line exchange of QP i, K0 = of QP 0):
 *
 *   all:        version(16) page-size(4) cache-line(4) mtu(2)
 *   write/read/atomic_bw:
 *               K(0..N-1) [connect] K(0..N-1) K0
 *      not -b:  client: traffic per size; both: K0 report(5x8) K0 done
 *      -b:      per size: K0 traffic [-a: K0] report;  then K0 done
 *   send_bw:    K(0..N-1) [connect] K0 K(0..N-1)
 *               per size: [server or -b: post receives] K0 traffic
 *                         [-b: report] [-a: K0];  then K0 done
 *   write_lat:  K0 K0 [connect] K0 K0; traffic per size; no close, no "done"
 *   read_lat, atomic_lat:
 *               K0 K0 [connect] K0 K0; client: traffic per size; K0 done
 *   send_lat:   K0 [connect] K0 K0; per size: [post receives] K0 traffic; K0 done
 *
 * docs/perftest-exchange.md explains every field. A later main() either
 * drives a struct perftest_session (perftest_client_handshake() /
 * perftest_server_handshake() up to the traffic, perftest_session_finish()
 * after it, with hooks for the local actions) or calls the single-step
 * functions below itself in the documented order.
 *
 * Every parser rejects malformed peer input (wrong size, bad or upper-case
 * hex, missing separators or terminator, values out of range, a different
 * version) with a message naming what was expected; nothing is ever written
 * past a caller's buffer.
 */
#ifndef RW_PERFTEST_XCHG_H
#define RW_PERFTEST_XCHG_H

#include <stddef.h>
#include <stdint.h>

#include "oob_tcp.h"
#include "perftest_caps.h"

#define PERFTEST_VERSION "6.06"
#define PERFTEST_PORT 18515
#define PERFTEST_VERSION_LEN 16	     /**< char version[16], zero-padded */
#define PERFTEST_KEY_LEN_GID 108     /**< KEY_MSG_SIZE_GID: RoCE, or IB with -x */
#define PERFTEST_KEY_LEN 59	     /**< KEY_MSG_SIZE: IB without a GID */
#define PERFTEST_KEY_MSG_BIN_LEN 56u /**< -R: the binary key message over rdma_cm */
#define PERFTEST_MTU_LEN 2	     /**< "%d" of enum ibv_mtu plus NUL (peer >= 5.31) */
#define PERFTEST_DONE_LEN 5	     /**< "done" plus NUL */
#define PERFTEST_MAX_QPS 64
#define PERFTEST_RUN_ALL_MIN_LOG2 1 /**< -a: sizes 2^1 .. 2^23 */
#define PERFTEST_RUN_ALL_MAX_LOG2 23
#define PERFTEST_MAX_STEPS (8 + 3 * PERFTEST_MAX_QPS + 5 * PERFTEST_RUN_ALL_MAX_LOG2 + 8)

enum perftest_test {
	PERFTEST_WRITE_BW,
	PERFTEST_SEND_BW,
	PERFTEST_READ_BW,
	PERFTEST_ATOMIC_BW,
	PERFTEST_WRITE_LAT,
	PERFTEST_SEND_LAT,
	PERFTEST_READ_LAT,
	PERFTEST_ATOMIC_LAT,
	PERFTEST_N_TESTS,
};

enum perftest_role {
	PERFTEST_CLIENT, /**< given a server name; writes first */
	PERFTEST_SERVER, /**< listens; reads first */
};

/** One QP's details as carried in the key line (struct pingpong_dest). */
struct perftest_dest {
	uint32_t lid;	    /**< 16 bits; 0 on RoCE */
	uint32_t out_reads; /**< 16 bits: -o / device max_qp_rd_atom for read and atomic, else 1 */
	uint32_t qpn;	    /**< 24 bits */
	uint32_t psn;	    /**< 24 bits, perftest draws lrand48() & 0xffffff */
	uint32_t rkey;
	uint64_t vaddr;	 /**< the buffer the peer may write/read (remote address) */
	uint8_t gid[16]; /**< raw GID bytes, e.g. ::ffff:10.9.0.3 */
	uint32_t srqn;	 /**< XRC/DC only, else 0 */
};

/** The bandwidth report (struct bw_report_data), sent as big-endian 8-byte values. */
struct perftest_report {
	uint64_t size;	     /**< message size in bytes (with -a: the last size) */
	uint64_t iters;	     /**< iterations (peer version >= 5.33: 8 bytes) */
	double bw_peak;	     /**< MiB/s, or Gb/s (1e9 bit/s) with --report_gbits */
	double bw_avg;	     /**< same unit */
	double msg_rate_avg; /**< Mpps */
	/* only with --report-per-port: */
	double bw_avg_p1, msg_rate_avg_p1, bw_avg_p2, msg_rate_avg_p2;
};

/** The perftest options that change what is exchanged. */
struct perftest_params {
	enum perftest_test test;
	enum perftest_role role;
	unsigned num_qps;    /**< -q (latency tests: must be 1) */
	int duplex;	     /**< -b (bandwidth tests only) */
	int run_all;	     /**< -a */
	uint64_t size;	     /**< -s; labels the traffic step when not -a */
	int no_gid;	     /**< 1: the 59-byte line of IB without a GID; RoCE always has one */
	int report_per_port; /**< --report-per-port: 4 more report values */
	int rdma_cm;	     /**< -R: refused (the data exchange then runs over RDMA CM, not TCP) */
	int mtu;	     /**< local active MTU as enum ibv_mtu, 1 (256) .. 5 (4096) */
	uint32_t cycle_buffer; /**< sysconf(_SC_PAGESIZE), 4096 */
	uint32_t cache_line;   /**< cache line size, 64 */
	const char *version;   /**< NULL: PERFTEST_VERSION; the peer must send the same */
	const struct perftest_caps *caps; /**< our capability record for the version padding
					       (rnic); NULL: NUL padding, as perftest */
	int wait_timeout_ms;		  /**< deadline of exchanges after the handshake, when the
					       peer may be running its traffic; <= 0: forever */
};

/** Kinds of step of a session plan. */
enum perftest_step_kind {
	PERFTEST_STEP_VERSION,	 /**< 16-byte version string */
	PERFTEST_STEP_SYSDATA,	 /**< 4-byte page size, then 4-byte cache line size */
	PERFTEST_STEP_MTU,	 /**< 2-byte MTU */
	PERFTEST_STEP_DEST,	 /**< one key-line exchange of QP .qp */
	PERFTEST_STEP_CONNECT,	 /**< local: bring the QPs to RTR/RTS (hook) */
	PERFTEST_STEP_POST_RECV, /**< local: post receives for .size (hook), before the sync */
	PERFTEST_STEP_TRAFFIC,	 /**< local: run one size (hook) */
	PERFTEST_STEP_REPORT,	 /**< 5 (or 9) 8-byte report values */
	PERFTEST_STEP_DONE,	 /**< "done\0" both ways */
};

/** Why a key-line exchange happens (for messages and documentation only). */
enum perftest_dest_why {
	PERFTEST_WHY_QP_INFO,	  /**< first exchange of each QP's details */
	PERFTEST_WHY_INITIAL,	  /**< latency tests' extra leading exchange */
	PERFTEST_WHY_QP_AGAIN,	  /**< the per-QP exchange repeated after connecting */
	PERFTEST_WHY_AFTER_RTR,	  /**< "an additional handshake after moving QPs to RTR" */
	PERFTEST_WHY_PRE_RUN,	  /**< sync before a run (send tests: receives are posted) */
	PERFTEST_WHY_POST_RUN,	  /**< sync after a run (-a) */
	PERFTEST_WHY_CLIENT_DONE, /**< bw, not -b: the client finished its traffic */
	PERFTEST_WHY_CLOSE,	  /**< ctx_close_connection's exchange before "done" */
};

struct perftest_step {
	enum perftest_step_kind kind;
	enum perftest_dest_why why; /**< DEST only */
	unsigned qp;		    /**< DEST only */
	uint64_t size;		    /**< POST_RECV, TRAFFIC */
	int after_handshake;	    /**< 1 from the first traffic on: wait_timeout_ms applies */
};

struct perftest_session;

/** Local actions a session calls at the right moments; any may be NULL. */
struct perftest_hooks {
	void *arg;
	/** QPs to RTR/RTS using s->remote[0..num_qps-1] and s->mtu. */
	int (*connect_qps)(void *arg, const struct perftest_session *s);
	/** Post the receives for @p size (send tests) before the peer may send. */
	int (*post_recv)(void *arg, const struct perftest_session *s, uint64_t size);
	/** Run one size; fill @p rep (bw tests) with what to report to the peer. */
	int (*run_traffic)(void *arg, const struct perftest_session *s, uint64_t size,
			   struct perftest_report *rep);
};

/** State of one perftest conversation. */
struct perftest_session {
	struct oob_conn *conn;
	struct perftest_params p;
	const struct perftest_dest *local; /**< [num_qps] */
	struct perftest_dest *remote;	   /**< [num_qps], filled by the exchanges */
	uint8_t remote_seen[PERFTEST_MAX_QPS];
	char remote_version[PERFTEST_VERSION_LEN + 1];
	int remote_has_caps;		  /**< the peer's version carried a capability record */
	struct perftest_caps remote_caps; /**< it, decoded (perftest_caps.h) */
	uint32_t remote_cycle_buffer, remote_cache_line;
	uint32_t cycle_buffer, cache_line;    /**< max of both sides, as perftest uses them */
	int remote_mtu;			      /**< enum ibv_mtu value the peer sent */
	int mtu;			      /**< the MTU to use: min of both sides */
	struct perftest_report local_report;  /**< last one sent */
	struct perftest_report remote_report; /**< last one received (a 6.06 server's
						   is uninitialised memory) */
	unsigned n_reports;
	struct perftest_step plan[PERFTEST_MAX_STEPS];
	size_t nsteps, pos;
};

const char *perftest_test_name(enum perftest_test t); /**< "write_bw", ... */
int perftest_test_is_bw(enum perftest_test t);

/** Defaults: 1 QP, size 65536 (bw) / 2 (lat), MTU 1024, page 4096, cache line 64. */
void perftest_params_default(struct perftest_params *p, enum perftest_test t, enum perftest_role r);

/**
 * Builds the step list for @p p (see the table at the top).
 * @return OOB_OK, or OOB_ERR_ARG with @p err set (e.g. -R, -q > 1 on a
 * latency test, -b on a latency test, more than PERFTEST_MAX_QPS QPs).
 */
int perftest_plan_build(const struct perftest_params *p, struct perftest_step *steps, size_t max,
			size_t *n, char *err, size_t errlen);

/* ---- the key line ---- */

/**
 * Formats @p d as perftest's key line, including the terminating NUL:
 * "%04x:%04x:%06x:%06x:%08x:%016llx:" then the 16 GID bytes as "%02x:" then
 * "%08x:" (108 bytes), or without the GID and trailing ':' (59 bytes).
 * Values wider than their field (LID, out_reads > 16 bits, QPN, PSN > 24
 * bits) are refused: perftest would overflow its buffer.
 * @return bytes written (108 or 59) or OOB_ERR_ARG.
 */
int perftest_format_dest(const struct perftest_dest *d, int no_gid, uint8_t *out, size_t outlen,
			 char *err, size_t errlen);

/**
 * Parses exactly one key line of @p len bytes (108, or 59 with @p no_gid):
 * lower-case hex digits of the exact widths, ':' at their places, NUL last.
 * @return OOB_OK or OOB_ERR_PROTO with @p err naming the offending field.
 */
int perftest_parse_dest(const uint8_t *msg, size_t len, int no_gid, struct perftest_dest *d,
			char *err, size_t errlen);

/**
 * -R (rdma_cm): @p d and @p gid_index as perftest's 56-byte binary key message (every
 * field big-endian, the padding at 20..23 zero). QPN or PSN over 24 bits is refused.
 * @return 56 or OOB_ERR_ARG.
 */
int perftest_format_dest_bin(const struct perftest_dest *d, uint32_t gid_index,
			     uint8_t out[PERFTEST_KEY_MSG_BIN_LEN], char *err, size_t errlen);

/**
 * Parses exactly one 56-byte binary key message (the padding, uninitialised in perftest,
 * is ignored); @p gid_index may be NULL. LID over 16 bits or QPN/PSN over 24 bits is
 * refused. @return OOB_OK or OOB_ERR_PROTO with @p err naming the problem.
 */
int perftest_parse_dest_bin(const uint8_t *msg, size_t len, struct perftest_dest *d,
			    uint32_t *gid_index, char *err, size_t errlen);

/* ---- single exchanges (client: write then read; server: read then write) ---- */

/** Exchanges @p n opaque bytes; @p timeout_ms <= 0 waits forever. */
int perftest_xchg_raw(struct oob_conn *c, enum perftest_role r, const void *mine, void *theirs,
		      size_t n, const char *what, int timeout_ms);

/**
 * The 16-byte version strings; the peer's must equal @p version (NULL: "6.06").
 * Its padding may hold an rnic's capability record, which is checked and
 * otherwise ignored; any other non-zero padding is refused.
 */
int perftest_xchg_version(struct oob_conn *c, enum perftest_role r, const char *version,
			  char remote[PERFTEST_VERSION_LEN + 1]);

/**
 * The same, with our capability record @p mine in the padding (NULL: NULs)
 * and the peer's decoded into @p theirs (may be NULL): *@p has_caps is 1 if
 * the peer sent one, 0 for NUL padding (a standard perftest).
 */
int perftest_xchg_version_caps(struct oob_conn *c, enum perftest_role r, const char *version,
			       const struct perftest_caps *mine,
			       char remote[PERFTEST_VERSION_LEN + 1], struct perftest_caps *theirs,
			       int *has_caps);

/** check_sys_data(): page size then cache line size, each a big-endian int. */
int perftest_xchg_sysdata(struct oob_conn *c, enum perftest_role r, uint32_t cycle_buffer,
			  uint32_t cache_line, uint32_t *rem_cycle_buffer,
			  uint32_t *rem_cache_line);

/** check_mtu(): "%d" of the local enum ibv_mtu (1..5) and a NUL. */
int perftest_xchg_mtu(struct oob_conn *c, enum perftest_role r, int mtu, int *remote_mtu);

/** One key-line exchange (ctx_hand_shake). */
int perftest_xchg_dest(struct oob_conn *c, enum perftest_role r, int no_gid,
		       const struct perftest_dest *local, struct perftest_dest *remote,
		       const char *what, int timeout_ms);

/** xchg_bw_reports(): size, iters, bw_peak, bw_avg, msgRate[, 4 per-port values]. */
int perftest_xchg_report(struct oob_conn *c, enum perftest_role r, int per_port,
			 const struct perftest_report *local, struct perftest_report *remote,
			 int timeout_ms);

/**
 * ctx_close_connection()'s tail: writes "done\0", then reads the peer's
 * "done\0" (6.06 always sends one before closing).
 */
int perftest_xchg_done(struct oob_conn *c, int timeout_ms);

/* ---- sessions ---- */

/**
 * Prepares a session over connected @p c. @p local and @p remote have
 * p->num_qps entries; @p remote is filled as the exchanges go.
 */
int perftest_session_init(struct perftest_session *s, struct oob_conn *c,
			  const struct perftest_params *p, const struct perftest_dest *local,
			  struct perftest_dest *remote);

/** Runs the next step. @return OOB_OK (see s->pos / s->nsteps) or an error in s->conn->err. */
int perftest_session_step(struct perftest_session *s, const struct perftest_hooks *h);

/** Runs the steps before the first traffic (version .. the pre-run sync) as the client. */
int perftest_client_handshake(struct perftest_session *s, const struct perftest_hooks *h);

/** The same as the server. */
int perftest_server_handshake(struct perftest_session *s, const struct perftest_hooks *h);

/** Runs the remaining steps: traffic hooks, syncs, reports, "done". */
int perftest_session_finish(struct perftest_session *s, const struct perftest_hooks *h);

/** All of it. */
int perftest_session_run(struct perftest_session *s, const struct perftest_hooks *h);

#endif /* RW_PERFTEST_XCHG_H */
