/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_cc.h
 * Pluggable congestion control, selected per QP by name. Events go in (bytes
 * sent, ACKs, losses, CNPs, ECN-CE marks at the receiver); a send gate comes
 * out: the requester asks tx_gate() before every packet and waits until the
 * time it returns (pacing) or until the next event (window).
 * "none" is always present; lib/cc registers the real algorithms.
 * Callbacks run inside the engine and must not call roce_* verbs.
 */
#ifndef ROCE_CC_H
#define ROCE_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_recovery.h"

struct roce_qp;
struct roce_cc_info;

/** tx_gate(): wait for an event (ACK, CNP) rather than a time. */
#define ROCE_CC_WAIT_EVENT UINT64_MAX

struct roce_cc_ops {
	const char *name;
	size_t priv_size; /**< per-QP state, zeroed and passed as @p priv */

	/** The QP reached RTS or was reset: (re)initialise @p priv. */
	void (*init)(struct roce_qp *qp, void *priv);

	/**
	 * May a packet of @p bytes (payload) leave at @p now, with
	 * @p in_flight packets unacknowledged? Return a time <= now to send,
	 * a later time to pace, or ROCE_CC_WAIT_EVENT.
	 */
	uint64_t (*tx_gate)(struct roce_qp *qp, void *priv, uint64_t now, uint32_t bytes,
			    uint32_t in_flight);
	/** A request packet of @p bytes payload left (retx: a retransmission). */
	void (*on_send)(struct roce_qp *qp, void *priv, uint64_t now, uint32_t bytes, bool retx);
	/** @p pkts packets were newly acknowledged. */
	void (*on_ack)(struct roce_qp *qp, void *priv, uint64_t now, uint32_t pkts);
	/** Loss was detected (NAK, implied NAK, timeout, RNR). */
	void (*on_loss)(struct roce_qp *qp, void *priv, uint64_t now, enum roce_loss_kind kind);
	/** A CNP arrived for this QP (requester side). */
	void (*on_cnp)(struct roce_qp *qp, void *priv, uint64_t now);
	/**
	 * Receiver side: a request packet arrived with ECN CE. Return true to
	 * send a CNP to the requester now (rate limiting is the CC's job).
	 */
	bool (*on_ecn_ce)(struct roce_qp *qp, void *priv, uint64_t now);
	/** Called on every roce_dev_poll() for timer-driven algorithms (may be NULL). */
	void (*on_poll)(struct roce_qp *qp, void *priv, uint64_t now);
	/** One in-band RTT sample of @p rtt_ns (Karn's rule applied; may be NULL). roce_rtt.h */
	void (*on_rtt)(struct roce_qp *qp, void *priv, uint64_t now, uint64_t rtt_ns);

	/* Optional hooks (may be NULL) */
	/** An ACK with the BTH BECN bit (ECN echo) acknowledged @p pkts packets. */
	void (*on_becn)(struct roce_qp *qp, void *priv, uint64_t now, uint32_t pkts);
	/**
	 * Earliest time on_poll must run (UINT64_MAX: none), so the idle back-off
	 * never sleeps through a CC timer (roce_dev_next_deadline includes it).
	 */
	uint64_t (*next_deadline)(const struct roce_qp *qp, const void *priv);
	/** Current state for counters, telemetry and traces. */
	void (*info)(const struct roce_qp *qp, const void *priv, struct roce_cc_info *out);
	/** The algorithm reacts to ECN: mark the QP's data ECT(0). */
	bool ecn;
	/** Receiver side: echo CE as a BECN-flagged ACK (RC) instead of a CNP. */
	bool becn_ack;
};

/** A CC's current state (roce_qp_cc_info). Fields an algorithm lacks are 0. */
struct roce_cc_info {
	const char *name;  /**< the QP's CC (roce_cc_ops.name): what it runs, "none" included */
	double rate_bps;   /**< pacing rate (0: not rate based or line rate) */
	uint32_t window;   /**< window in packets (0: not window based) */
	double alpha;	   /**< DCQCN/DCTCP alpha */
	uint64_t rtt_ns;   /**< last RTT sample (TIMELY) */
	double target_bps; /**< DCQCN target rate */
	uint32_t
	    loss_window; /**< the RC in-flight limit now: QP window and loss window (roce_lwin.h) */
};

/** Count a rate/window decrease (or increase) of the QP's CC (roce_stats). */
void roce_qp_cc_changed(struct roce_qp *qp, bool increase);
/**
 * A delay-based CC saw a standing queue (TIMELY profile=wan): the loss window
 * takes it as a congestion notification, as a CNP or a BECN-flagged ACK
 * (roce_lwin_on_ecn: slow start ends, no growth this round trip).
 */
void roce_qp_cc_queue_signal(struct roce_qp *qp);
/** The CC state of a QP: 0, or -ENOTSUP if its CC has no info hook (name and loss_window are set
 * anyway). */
int roce_qp_cc_info(const struct roce_qp *qp, struct roce_cc_info *out);

/** Register an implementation (before creating QPs). -EEXIST, -ENOSPC or -EINVAL. */
int roce_cc_register(const struct roce_cc_ops *ops);
/** Find an implementation by name, or NULL. "none" is always present. */
const struct roce_cc_ops *roce_cc_find(const char *name);

/** No congestion control: always send, never CNP. */
extern const struct roce_cc_ops roce_cc_none;

/** Path MTU of a QP in bytes (for rate <-> packet conversions). */
uint32_t roce_qp_mtu(const struct roce_qp *qp);

#endif /* ROCE_CC_H */
