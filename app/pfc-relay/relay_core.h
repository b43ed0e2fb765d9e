/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file relay_core.h
 * The PFC-Relay's protocol logic, without DPDK (docs/pfc-relay.md): per-priority
 * byte-accounted FIFOs, the egress scheduler that skips paused priorities, the
 * egress pacer, the Local-side XOFF/XON generator, the watchdog glue and the
 * Local -> Remote relay decision. Frames are opaque pointers (mbufs in the app,
 * anything in the unit tests); times are nanoseconds of any monotonic clock.
 *
 * One relay has two paths (Swing, Chen et al., TPDS 2023; docs/pfc-relay.md):
 *   RELAY_L2R: Local ingress -> Remote egress. Small queues with native PFC
 *              toward the local switch (XOFF at --xoff, XON at --xon).
 *   RELAY_R2L: Remote ingress -> Local egress. One BDP per priority: absorbs
 *              what the far sender had in flight when the relayed PFC arrived.
 * Each path's pause state (struct pfc_pause) belongs to its *egress* port: PFC
 * received on the Local port pauses R2L, PFC received on the Remote port
 * pauses L2R.
 */
#ifndef RELAY_CORE_H
#define RELAY_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pfc.h"
#include "pfc_state.h"

/** Preamble + SFD (8) + inter-frame gap (12) + FCS (4): what a frame costs on the wire. */
#define RELAY_WIRE_OVERHEAD 24

enum relay_path_id {
	RELAY_L2R, /**< Local port in, Remote port out */
	RELAY_R2L, /**< Remote port in, Local port out */
	RELAY_NPATH
};

const char *relay_path_name(unsigned p);

/**
 * Drop reasons, each with a counter per (path, priority): one list gives the
 * enum, the names and the JSON/telemetry keys.
 */
#define RELAY_DROPS(X)                                                                             \
	X(BUFFER_FULL, "buffer_full")	  /* R2L: the one-BDP buffer was full */                   \
	X(HEADROOM_FULL, "headroom_full") /* L2R: above xoff + headroom */                         \
	X(WATCHDOG, "watchdog")		  /* flushed or refused in a drop-action storm */          \
	X(QUEUE_SLOTS, "queue_slots")	  /* more frames than queue slots (mbufs) */

enum relay_drop {
#define RELAY_DROP_ENUM(e, n) RELAY_DROP_##e,
	RELAY_DROPS(RELAY_DROP_ENUM)
#undef RELAY_DROP_ENUM
	    RELAY_DROP__COUNT
};

const char *relay_drop_name(unsigned d);

/** Counters of one (path, priority) queue. */
struct relay_qstats {
	uint64_t enq_pkts, enq_bytes;
	uint64_t deq_pkts, deq_bytes;
	uint64_t hwm_bytes; /**< queue high-water mark */
	uint64_t drops[RELAY_DROP__COUNT];
	uint64_t drop_bytes;
};

/** A FIFO of frames with byte accounting. */
struct relay_q {
	void **slot;
	uint32_t *len;
	uint32_t mask; /**< slots - 1 (power of two) */
	uint32_t head, tail;
	uint64_t bytes;
	struct relay_qstats st;
};

/** Egress pacer: a virtual clock with a burst allowance (no physical rate on veth). */
struct relay_pacer {
	uint64_t rate_bps;
	uint64_t burst_ns; /**< credit that may accumulate while idle */
	uint64_t next_ns;  /**< earliest time the next frame may start */
};

/** Local-side PFC generation state of one priority (802.1Qbb XOFF/XON with refresh). */
struct relay_xoff {
	bool sent;	     /**< XOFF in force toward the local switch */
	uint64_t refresh_ns; /**< re-send XOFF at this time while above xon */
	uint64_t xoff_sent, xon_sent, refreshes;
};

/** One path: eight queues toward an egress port, its pause state and watchdogs. */
struct relay_path {
	struct relay_q q[PFC_NUM_PRIO];
	uint64_t limit_bytes;		/**< per priority: drop above (BDP or xoff+headroom) */
	struct pfc_pause pause;		/**< PFC received on the egress port */
	struct pfc_wd wd[PFC_NUM_PRIO]; /**< per (egress port, priority) */
	bool wd_on;
	struct relay_pacer pacer;
	uint8_t rr; /**< scheduler: next priority to look at */
	/* L2R only: native PFC toward the local switch */
	bool gen_pfc;
	uint64_t xoff_bytes, xon_bytes;
	uint16_t xoff_quanta; /**< quanta of the XOFF frames we originate */
	uint64_t refresh_ns;  /**< re-send period (half the pause time) */
	struct relay_xoff xo[PFC_NUM_PRIO];
	/* PFC relay counters (R2L's pause = PFC from the local switch, relayed to Remote) */
	uint64_t pfc_relayed; /**< frames re-originated on the other port */
	uint64_t pfc_relayed_prio[PFC_NUM_PRIO];
	uint64_t pfc_bad;		       /**< MAC Control frames that did not parse */
	uint64_t wd_ignored_pfc[PFC_NUM_PRIO]; /**< PFC ignored because of a storm */
	uint64_t tx_while_storm[PFC_NUM_PRIO];
};

/** Path settings; the queue storage is allocated by relay_path_init(). */
struct relay_path_cfg {
	uint32_t slots; /**< frames each priority queue can hold (rounded up to 2^n) */
	uint64_t limit_bytes;
	uint64_t rate_bps; /**< egress rate: pacing and pause quanta */
	uint64_t burst_ns; /**< pacer burst allowance */
	uint8_t lossless;
	bool wd_on;
	uint64_t wd_detect_ns, wd_restore_ns;
	enum pfc_wd_action wd_action;
	bool gen_pfc; /**< originate XOFF/XON for this path's ingress queues */
	uint64_t xoff_bytes, xon_bytes;
	uint16_t xoff_quanta;
	uint64_t ingress_bps; /**< rate of the port the XOFF goes out of (refresh period) */
};

/** Allocate and initialise; returns 0 or -ENOMEM / -EINVAL. */
int relay_path_init(struct relay_path *p, const struct relay_path_cfg *c);
void relay_path_free(struct relay_path *p);

/** Outcome of relay_enqueue(). */
enum relay_enq {
	RELAY_ENQ_OK,
	RELAY_ENQ_DROP, /**< the caller frees the frame; the reason was counted */
};

/**
 * Queue @p frame of @p len bytes on priority @p prio at @p now_ns. Drops when
 * the priority's bytes would exceed the limit, when no slot is left, or when
 * the egress watchdog is in a drop-action storm.
 */
enum relay_enq relay_enqueue(struct relay_path *p, unsigned prio, void *frame, uint32_t len,
			     uint64_t now_ns);

/** True if the egress may not send priority @p prio now (PFC in force, not overridden). */
bool relay_prio_blocked(struct relay_path *p, unsigned prio, uint64_t now_ns);

/**
 * Scheduler + pacer: take up to @p max frames that may leave now, round robin
 * over the priorities, skipping paused and empty ones, each charged to the
 * pacer at its wire length (frame + RELAY_WIRE_OVERHEAD). Returns the count;
 * frames, lengths and priorities in @p out, @p lens, @p prios.
 */
unsigned relay_dequeue(struct relay_path *p, uint64_t now_ns, void **out, uint32_t *lens,
		       uint8_t *prios, unsigned max);

/**
 * Put back a frame the TX port did not take, at the head of its queue, and
 * refund the pacer. Call in reverse dequeue order to keep FIFO order.
 */
void relay_requeue_head(struct relay_path *p, unsigned prio, void *frame, uint32_t len);

/**
 * A PFC frame arrived on this path's egress port (parsed by pfc_parse).
 * Applies it to the pause state except for priorities whose watchdog ignores
 * PFC; feeds the watchdogs. Returns the lossless priorities it touched and
 * still obeyed (what the relay re-originates when this is the Local port).
 */
uint8_t relay_pfc_rx(struct relay_path *p, const struct pfc_frame *f, uint64_t now_ns);

/**
 * The relay decision (Swing): the frame that goes out of the Remote port for
 * a PFC frame received on the Local port. Only the priorities in @p obeyed
 * are kept; each time is converted from @p from_bps to @p to_bps with
 * pfc_quanta_convert (0 stays 0: XON relays as XON). Returns the enable
 * vector (0: nothing to relay) and fills @p quanta.
 */
uint8_t relay_convert(const struct pfc_frame *f, uint8_t obeyed, uint64_t from_bps, uint64_t to_bps,
		      uint16_t quanta[PFC_NUM_PRIO]);

/** What relay_tick() asks the caller to send out of the ingress port. */
struct relay_pfc_out {
	uint8_t enable; /**< 0: nothing */
	uint16_t quanta[PFC_NUM_PRIO];
};

/**
 * Periodic work at @p now_ns: watchdog steps (a drop-action storm flushes the
 * priority's queue: @p flushed receives the frames to free, up to @p max),
 * and, when gen_pfc, XOFF/XON/refresh decisions into @p out. Returns the
 * number of flushed frames.
 */
unsigned relay_tick(struct relay_path *p, uint64_t now_ns, struct relay_pfc_out *out,
		    void **flushed, unsigned max);

/** Earliest time relay_dequeue() or relay_tick() may have work, UINT64_MAX if none. */
uint64_t relay_next_event(const struct relay_path *p, uint64_t now_ns);

/** Frames queued on every priority. */
uint32_t relay_queued(const struct relay_path *p);

/** Bytes queued on @p prio. */
static inline uint64_t
relay_q_bytes(const struct relay_path *p, unsigned prio)
{
	return p->q[prio].bytes;
}

/** Per (path, priority) counters, for telemetry and --json: one list, one order. */
#define RELAY_PSTATS(X)                                                                            \
	X(ENQ_PKTS, "enq_pkts")                                                                    \
	X(ENQ_BYTES, "enq_bytes")                                                                  \
	X(DEQ_PKTS, "tx_pkts")                                                                     \
	X(DEQ_BYTES, "tx_bytes")                                                                   \
	X(QUEUED_BYTES, "queued_bytes")                                                            \
	X(HWM_BYTES, "hwm_bytes")                                                                  \
	X(DROP_BUFFER_FULL, "drop_buffer_full")                                                    \
	X(DROP_HEADROOM_FULL, "drop_headroom_full")                                                \
	X(DROP_WATCHDOG, "drop_watchdog")                                                          \
	X(DROP_QUEUE_SLOTS, "drop_queue_slots")                                                    \
	X(DROP_BYTES, "drop_bytes")                                                                \
	X(PFC_RX_XOFF, "pfc_rx_xoff")                                                              \
	X(PFC_RX_XON, "pfc_rx_xon")                                                                \
	X(PAUSES, "pauses")                                                                        \
	X(PAUSED_NS, "paused_ns")                                                                  \
	X(PAUSED_NOW, "paused_now")                                                                \
	X(PFC_RELAYED, "pfc_relayed")                                                              \
	X(XOFF_SENT, "xoff_sent")                                                                  \
	X(XOFF_REFRESH, "xoff_refreshes")                                                          \
	X(XON_SENT, "xon_sent")                                                                    \
	X(WD_STORMS, "wd_storms")                                                                  \
	X(WD_RESTORES, "wd_restores")                                                              \
	X(WD_IN_STORM, "wd_in_storm")                                                              \
	X(WD_IGNORED_PFC, "wd_ignored_pfc")                                                        \
	X(TX_WHILE_STORM, "tx_while_storm")

enum relay_pstat {
#define RELAY_PSTAT_ENUM(e, n) RELAY_PS_##e,
	RELAY_PSTATS(RELAY_PSTAT_ENUM)
#undef RELAY_PSTAT_ENUM
	    RELAY_PS__COUNT
};

const char *relay_pstat_name(unsigned i);

/** Counters of (path @p p, priority @p prio) at @p now_ns into @p v[RELAY_PS__COUNT]. */
void relay_prio_stats(struct relay_path *p, unsigned prio, uint64_t now_ns, uint64_t *v);

/** rate x RTT in bytes, rounded up. */
uint64_t relay_bdp_bytes(uint64_t rate_bps, uint64_t rtt_ns);

/**
 * One-BDP buffer of the Swing relay: rate x RTT, plus 10 % and 4 frames of
 * @p frame_bytes as margin for PFC processing and TX-burst overshoot
 * (docs/pfc-relay.md: the queue is C x the time paused in the last 2D). Returns bytes.
 */
uint64_t relay_auto_buffer(uint64_t rate_bps, uint64_t rtt_ns, uint32_t frame_bytes);

#endif /* RELAY_CORE_H */
