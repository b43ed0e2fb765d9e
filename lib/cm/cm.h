/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file cm.h
 * The IB connection manager (IBTA Vol. 1 ch. 12), DPDK-free: the communication state
 * machine of 12.9 (figures 93-95: connection establishment, 12.9.6 release, 12.11 SIDR)
 * as an enum plus a switch, over a fixed-size table of connection IDs.
 *
 * Seams: an ops table sends MADs and reports events; the clock is injected (now(), ns);
 * the owner calls cm_rx() for every MAD QP1 receives and cm_tick() to fire timers.
 * Events are delivered after the state change, so the event callback may call back into
 * the CM (cm_accept, cm_rtu, cm_reject, cm_disconnect, cm_destroy ...).
 *
 * Timers (12.7.x): a REQ waits 2 x packet life time + the REQ's remote CM response
 * timeout (4.096 us x 2^t); a REP waits 2 x PLT + the REQ's local CM response timeout;
 * a DREQ waits 2 x PLT + the REQ's remote CM response timeout; each is resent up to
 * max CM retries times. An MRA replaces the wait by 2 x PLT + its service timeout. On
 * exhaustion the REQ/REP side sends REJ (Timeout, 4) and reports CM_EV_TIMEOUT; the DREQ
 * side enters TIMEWAIT. TIMEWAIT lasts 2 x PLT + the local ACK timeout, then IDLE (freed).
 *
 * Lifetime: after CM_EV_REJ_RCVD, CM_EV_TIMEOUT, CM_EV_SIDR_REP_RCVD and
 * CM_EV_TIMEWAIT_EXIT the ID is already free (state IDLE) when the event is delivered: its
 * fields may be read during the callback, not after. After cm_destroy() no event names it.
 */
#ifndef RW_CM_H
#define RW_CM_H

#include <stddef.h>
#include <stdint.h>

#include "cm_msg.h"

#define CM_MAX_IDS 256u /* connection IDs in one CM (table size) */
#define CM_MAX_LISTENS 16u

/** States of a connection ID (IBTA Vol. 1 12.9, figures 93-95; 12.11 for SIDR). */
enum cm_state {
	CM_IDLE = 0,
	CM_LISTEN,
	CM_REQ_SENT,
	CM_REQ_RCVD,
	CM_MRA_REQ_SENT,
	CM_MRA_REQ_RCVD,
	CM_REP_SENT,
	CM_REP_RCVD,
	CM_MRA_REP_SENT,
	CM_MRA_REP_RCVD,
	CM_ESTABLISHED,
	CM_DREQ_SENT,
	CM_DREQ_RCVD,
	CM_TIMEWAIT,
	CM_SIDR_REQ_SENT,
	CM_SIDR_REQ_RCVD,
	CM_STATE_COUNT
};

/** Events reported through cm_ops.event. */
enum cm_event_type {
	CM_EV_REQ_RCVD = 1,  /* a new passive ID (from a listener); msg = the REQ */
	CM_EV_MRA_RCVD,	     /* informational; msg = the MRA */
	CM_EV_REP_RCVD,	     /* active side; answer with cm_rtu() (or cm_reject()) */
	CM_EV_ESTABLISHED,   /* passive side got the RTU; msg = the RTU */
	CM_EV_REJ_RCVD,	     /* msg = the REJ; the ID is back in IDLE */
	CM_EV_DREQ_RCVD,     /* the DREP was sent automatically; the ID is in TIMEWAIT */
	CM_EV_DREP_RCVD,     /* the ID is in TIMEWAIT */
	CM_EV_TIMEWAIT_EXIT, /* the ID is IDLE; it is freed unless held (see cm_destroy) */
	CM_EV_TIMEOUT,	     /* retries exhausted (REQ, REP or SIDR_REQ); REJ sent if any */
	CM_EV_SIDR_REQ_RCVD, /* a new passive SIDR ID; answer with cm_sidr_rep() */
	CM_EV_SIDR_REP_RCVD, /* msg = the SIDR_REP; the ID is freed after the event */
};

/** Where a MAD goes / came from: the peer's QP1 (remote QPN 1, Q_Key 0x80010000). */
struct cm_dest {
	uint8_t gid[16]; /* the peer port's GID (IPv4-mapped for RoCEv2 over IPv4) */
	uint32_t qpn;	 /* MAD_GSI_QPN */
	uint32_t qkey;	 /* MAD_GSI_QKEY */
	uint16_t pkey;	 /* MAD_DEFAULT_PKEY */
};

struct cm_id;

/** One event. @p msg is the parsed message that caused it (NULL for timer events). */
struct cm_event {
	enum cm_event_type type;
	const struct cm_msg *msg;
	void *listen_ctx; /* for REQ_RCVD/SIDR_REQ_RCVD: cm_listen's ctx */
};

struct cm_ops {
	/** Send one 256-byte MAD to @p dst. Return 0, or <0 (counted as a tx error). */
	int (*send_mad)(void *ctx, const struct cm_dest *dst, const uint8_t mad[MAD_SIZE]);
	/** Report @p ev on @p id. */
	void (*event)(void *ctx, struct cm_id *id, const struct cm_event *ev);
	/** The clock, in nanoseconds, monotonic. */
	uint64_t (*now)(void *ctx);
	/** Optional: every state transition, with the stimulus (e.g. "rx REQ", "timer"). */
	void (*trace)(void *ctx, const struct cm_id *id, enum cm_state from, enum cm_state to,
		      const char *why);
};

struct cm_config {
	uint64_t local_ca_guid;
	uint64_t seed;		  /* comm IDs and TIDs derive from it (--seed determinism) */
	uint8_t packet_life_time; /* IB time encoding; 0 is allowed */
	uint32_t max_ids;	  /* 0 or > CM_MAX_IDS: CM_MAX_IDS */
};

/* Drop causes (counters.drop[]) */
enum cm_drop {
	CM_DROP_SHORT = 0, /* truncated MAD */
	CM_DROP_BASE_VERSION,
	CM_DROP_CLASS, /* not the CM class */
	CM_DROP_CLASS_VERSION,
	CM_DROP_METHOD,
	CM_DROP_ATTR,	      /* unknown attribute ID */
	CM_DROP_MALFORMED,    /* a length field out of range */
	CM_DROP_NO_LISTENER,  /* REQ/SIDR_REQ for no listened service: REJ/SIDR_REP sent */
	CM_DROP_STALE_ID,     /* REP/RTU/DREP/MRA/REJ/SIDR_REP naming no ID of ours;
			       * a DREQ naming none is counted here and answered by DREP */
	CM_DROP_OUT_OF_STATE, /* a known ID, a message its state does not take */
	CM_DROP_NO_RESOURCES, /* REQ beyond capacity: REJ (No resources) sent */
	CM_DROP_UNSUPPORTED,  /* LAP/APR: refused (APR "unsupported") */
	CM_DROP_DUPLICATE,    /* a duplicate that needs no resend (e.g. REQ in REQ_RCVD) */
	CM_DROP_COUNT
};

/* Per-attribute counter index: attr_id - MAD_ATTR_CM_REQ (REQ 0 ... APR 10) */
#define CM_ATTR_COUNT 11u

struct cm_counters {
	uint64_t rx[CM_ATTR_COUNT]; /* parsed CM MADs by attribute */
	uint64_t tx[CM_ATTR_COUNT]; /* sent, retries included */
	uint64_t tx_err;	    /* send_mad returned < 0 */
	uint64_t retries;	    /* resends on a timer (REQ, REP, DREQ, SIDR_REQ) */
	uint64_t timeouts;	    /* retries exhausted */
	uint64_t dup_resends;	    /* MRA/REP/RTU/DREP resent for a duplicate */
	uint64_t drop[CM_DROP_COUNT];
	uint64_t ids_alloc, ids_free; /* ids in use = alloc - free */
	uint64_t established;
};

/** A connection ID. Fields are read-only for the user except user_ctx. */
struct cm_id {
	enum cm_state state;
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint64_t service_id;
	struct cm_dest dest;
	void *user_ctx;
	/* --- internal --- */
	uint8_t in_use, held, passive, retries_left;
	uint8_t max_cm_retries, local_resp_timeout, remote_resp_timeout, ack_timeout;
	uint32_t remote_qpn;
	uint64_t remote_ca_guid;
	uint64_t tid;		     /* TID of the exchange (REQ's, or DREQ's) */
	uint64_t deadline;	     /* 0: no timer */
	uint64_t wait_ns;	     /* the current wait per attempt */
	uint8_t last_mad[MAD_SIZE];  /* last REQ/REP/DREQ/SIDR_REQ, for retries/duplicates */
	uint8_t reply_mad[MAD_SIZE]; /* last MRA/RTU/DREP/REJ, for duplicates */
	uint8_t has_reply;
};

struct cm_listen {
	uint64_t service_id, mask;
	void *ctx;
	uint8_t in_use;
};

struct cm {
	struct cm_config cfg;
	const struct cm_ops *ops;
	void *ctx;
	uint64_t rng;
	struct cm_counters cnt;
	struct cm_listen listens[CM_MAX_LISTENS];
	struct cm_id ids[CM_MAX_IDS];
};

/** Initialise @p cm (the struct is large: embed it or allocate it once). */
void cm_init(struct cm *cm, const struct cm_config *cfg, const struct cm_ops *ops, void *ctx);

/** Name of a state ("REQ_SENT") / event ("REP_RCVD") / drop cause ("stale_id"). */
const char *cm_state_name(enum cm_state s);
const char *cm_event_name(enum cm_event_type e);
const char *cm_drop_name(enum cm_drop d);

/** Listen: REQs/SIDR_REQs whose service ID & @p mask == @p service_id & @p mask.
 *  Returns a listen handle >= 0, or -ENOSPC / -EADDRINUSE. */
int cm_listen(struct cm *cm, uint64_t service_id, uint64_t mask, void *ctx);
void cm_listen_cancel(struct cm *cm, int handle);

/**
 * Active side: send a REQ (12.9.5.1, IDLE -> REQ_SENT). The CM fills local comm ID,
 * local CA GUID; the rest comes from @p req (service ID, QPN, PSN, timeouts, retries,
 * primary path, private data). Returns 0 and *@p out, or -ENOSPC (table full).
 */
int cm_connect(struct cm *cm, const struct cm_req *req, const struct cm_dest *dst, void *user_ctx,
	       struct cm_id **out);
/** Passive side, after CM_EV_REQ_RCVD: send MRA for the REQ (REQ_RCVD -> MRA_REQ_SENT). */
int cm_mra(struct cm *cm, struct cm_id *id, uint8_t service_timeout, const uint8_t *pd,
	   size_t pd_len);
/** Passive side: accept with a REP (REQ_RCVD/MRA_REQ_SENT -> REP_SENT). The CM fills
 *  the comm IDs and local CA GUID. */
int cm_accept(struct cm *cm, struct cm_id *id, const struct cm_rep *rep);
/** Active side after CM_EV_REP_RCVD: send RTU (REP_RCVD/MRA_REP_SENT -> ESTABLISHED). */
int cm_rtu(struct cm *cm, struct cm_id *id, const uint8_t *pd, size_t pd_len);
/** Reject (REQ_RCVD, MRA_REQ_SENT, REP_RCVD, MRA_REP_SENT -> IDLE) with @p reason. */
int cm_reject(struct cm *cm, struct cm_id *id, uint16_t reason, const uint8_t *ari, size_t ari_len,
	      const uint8_t *pd, size_t pd_len);
/** Send DREQ (ESTABLISHED -> DREQ_SENT, 12.9.6). */
int cm_disconnect(struct cm *cm, struct cm_id *id, const uint8_t *pd, size_t pd_len);
/**
 * Release @p id. In ESTABLISHED a DREQ is sent first; in REQ_SENT/REP_SENT/REQ_RCVD a REJ
 * (Consumer defined / Timeout). The slot is reused after TIMEWAIT (no event follows).
 */
void cm_destroy(struct cm *cm, struct cm_id *id);

/** SIDR (12.11): send a SIDR_REQ (IDLE -> SIDR_REQ_SENT), retried like a REQ. */
int cm_sidr_req(struct cm *cm, const struct cm_sidr_req *req, const struct cm_dest *dst,
		uint8_t timeout, uint8_t max_retries, void *user_ctx, struct cm_id **out);
/** Answer a CM_EV_SIDR_REQ_RCVD with a SIDR_REP; the passive ID is freed. */
int cm_sidr_rep(struct cm *cm, struct cm_id *id, const struct cm_sidr_rep *rep);

/**
 * One MAD QP1 received from @p src (its GID, QPN 1...). Every outcome is counted:
 * returns 0 if it was taken, or -(1 + enum cm_drop) if it was dropped.
 */
int cm_rx(struct cm *cm, const struct cm_dest *src, const uint8_t *mad, size_t len);

/** Fire due timers. Returns the next deadline (ns), or 0 if none is armed. */
uint64_t cm_tick(struct cm *cm);

/** IDs in use (not IDLE or held in TIMEWAIT). */
uint32_t cm_ids_in_use(const struct cm *cm);

#endif
