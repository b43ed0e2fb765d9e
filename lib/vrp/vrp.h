/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file vrp.h
 * The VRP receiver algorithm as a pure-C core: per-message
 * loss tolerance and the incremental anticipation algorithm of A. Denis,
 * "Variable Reliability Protocol: A protocol with a tunable loss tolerance
 * for high performance over a WAN" (LIP RR-2000-11), §2.3.4 "New receiver
 * algorithm" and §3.2.2 "Receiver / Data processing". No DPDK, no engine
 * state: the caller feeds the arrival of each packet of one message (its
 * index inside the message, 0..npkts-1) and gets, per missing packet, a
 * decision: tolerate (zero-fill and report) or NACK (must be retransmitted).
 * docs/vrp.md has the algorithm as implemented, the choices made where the
 * paper is ambiguous, and what is not done (engine, wire, completions).
 */
#ifndef VRP_H
#define VRP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VRP_WINDOW_DEFAULT 64 /**< history window (VRP §2.5.3 "We chose a default size of 64") */
#define VRP_WINDOW_MAX 65536  /**< largest history window accepted */
#define VRP_CRITICAL_MAX 20   /**< critical byte ranges per message */
#define VRP_BURST_UNLIMITED UINT64_MAX /**< no bound on consecutive loss (bytes) */
#define VRP_LOSS_BP_MAX 10000u	       /**< 100 % in basis points */

/** One byte range [off, off + len) of a message. */
struct vrp_range {
	uint64_t off;
	uint64_t len;
};

/**
 * The application's per-message tolerance, in bytes and percent (VRP §2.4.4:
 * "we propose to give all loss tolerance parameters in bytes and not in
 * packets"). All zero except window = the reliable case (0 % loss).
 */
struct vrp_tolerance {
	uint32_t loss_bp; /**< tolerated loss over the window, basis points (0..10000 = 0..100 %) */
	uint32_t window;  /**< history window in packets (0 = VRP_WINDOW_DEFAULT) */
	uint64_t max_burst;  /**< largest consecutive loss in bytes (VRP_BURST_UNLIMITED = none) */
	unsigned n_critical; /**< entries used in critical[] */
	struct vrp_range critical[VRP_CRITICAL_MAX]; /**< byte ranges never lost (e.g. a header) */
};

/**
 * The same tolerance in packets, as the receiver's algorithm uses it (VRP
 * §3.1 tags LOSS_RATE / CONS_LOSS / CRITICAL_INTERVAL, translated by the
 * sender). Critical packets are flagged in the cell array (VRP_CELL_REQUIRED).
 */
struct vrp_params {
	uint32_t window;   /**< history window (packets), >= 1 */
	uint32_t max_loss; /**< tolerated losses among the window packets preceding next_exp */
	uint32_t max_cons; /**< tolerated consecutive losses (UINT32_MAX = none) */
};

/* Per-packet cell (VRP §2.3.4: "received", "valid", "waiting"; §3.2.2: "required"). */
#define VRP_CELL_RECEIVED 0x01u /**< the packet's data was placed */
#define VRP_CELL_VALID 0x02u	/**< received, or an allowable loss */
#define VRP_CELL_WAITING 0x04u	/**< NACKed: it has to arrive */
#define VRP_CELL_REQUIRED 0x08u /**< critical: never tolerated */

/** What the receiver decided for one missing packet. */
enum vrp_decision {
	VRP_TOLERATE = 1, /**< allowable loss: zero-fill, report in the loss map */
	VRP_NACK = 2,	  /**< intolerable: NACK, it must be retransmitted */
};

/** Why a missing packet was NACKed (the first reason that applies). */
enum vrp_nack_reason {
	VRP_NR_NONE = 0,
	VRP_NR_CRITICAL = 1, /**< the packet overlaps a critical range */
	VRP_NR_CONS = 2,     /**< cons_loss would exceed max_cons */
	VRP_NR_RATE = 3,     /**< loss_cnt would exceed max_loss */
};

/** What happened to an arriving packet. */
enum vrp_arrival {
	VRP_ARR_NEW = 1,      /**< at or beyond next_exp: placed; the gap before it was decided */
	VRP_ARR_RETRANS = 2,  /**< was waiting (NACKed): placed, no loss counter changes */
	VRP_ARR_LATE = 3,     /**< was a tolerated loss at or above wait_point: placed anyway */
	VRP_ARR_DUP = 4,      /**< already received: discarded */
	VRP_ARR_BELOW = 5,    /**< below wait_point and not received: discarded (§3.2.2) */
	VRP_ARR_INVALID = 6,  /**< index outside the message: refused */
	VRP_ARR_COMPLETE = 7, /**< the message was already complete: discarded */
};

/** Called once per missing packet, in order, as the history window moves over it. */
typedef void (*vrp_gap_fn)(void *ctx, uint32_t idx, enum vrp_decision d, enum vrp_nack_reason r);

/** Counters of one message. */
struct vrp_rx_stats {
	uint64_t tolerated;	  /**< losses tolerated (packets) */
	uint64_t tolerated_bytes; /**< bytes of tolerated losses still missing (zero-filled) */
	uint64_t nacks;		  /**< NACKs (all reasons) */
	uint64_t nack_critical;	  /**< ... because of a critical range */
	uint64_t nack_cons;	  /**< ... because of the consecutive bound */
	uint64_t nack_rate;	  /**< ... because of the window loss bound */
	uint64_t retrans;	  /**< NACKed packets that arrived */
	uint64_t late;		  /**< tolerated losses that arrived late and were placed */
	uint64_t dup;		  /**< duplicates discarded */
	uint64_t below;		  /**< arrivals below wait_point discarded */
	uint64_t invalid;	  /**< indices outside the message refused */
};

/** Receiver state of one message (VRP §2.3.4's incoming frame information block). */
struct vrp_rx {
	struct vrp_params p;
	uint64_t len;	     /**< message length in bytes */
	uint32_t mtu;	     /**< payload bytes per packet (all but the last) */
	uint32_t npkts;	     /**< packets in the message (>= 1) */
	uint32_t next_exp;   /**< VRP §2.3.4 next_exp */
	uint32_t wait_point; /**< VRP §2.3.4 wait_point: lowest waiting packet, or next_exp */
	uint32_t loss_cnt;   /**< VRP §2.3.4 loss_cnt */
	uint32_t cons_loss;  /**< VRP §2.3.4 cons_loss */
	uint8_t *cell;	     /**< npkts cells (caller's storage) */
	struct vrp_rx_stats st;
};

/** Result of one arrival: what to place and what to pack into the reply (VRP §3.1 tags). */
struct vrp_rx_out {
	enum vrp_arrival arrival;
	bool place;	    /**< copy the packet's data into the target */
	bool single_ack;    /**< pack SINGLE_ACK(idx) */
	uint32_t cum_ack;   /**< pack ACK(cum_ack): every packet below it is valid (wait_point) */
	uint32_t tolerated; /**< losses tolerated by this arrival */
	uint32_t nacked;    /**< NACKs packed by this arrival */
	bool complete;	    /**< wait_point reached the end: deliver (VRP §3.2.2 deliver_rsr) */
};

/** Packets in a message of len bytes at mtu payload bytes per packet (>= 1; 0 if mtu == 0). */
uint32_t vrp_npkts(uint64_t len, uint32_t mtu);

/**
 * Translate the application's tolerance for a message of len bytes into the
 * packet domain (VRP §2.4.4) and flag the critical packets in cell[0..npkts).
 * cell must hold vrp_npkts(len, mtu) bytes. Returns 0, or -1 with *err set to
 * one line for an invalid tolerance (window out of range, loss over 100 %,
 * a critical range outside the message, too many packets).
 */
int vrp_tolerance_to_params(const struct vrp_tolerance *tol, uint64_t len, uint32_t mtu,
			    struct vrp_params *p, uint8_t *cell, const char **err);

/**
 * Start receiving one message. cell (npkts bytes) may already carry
 * VRP_CELL_REQUIRED flags (vrp_tolerance_to_params); the other bits are
 * cleared. Returns 0, or -1 with *err set (bad params or sizes).
 */
int vrp_rx_init(struct vrp_rx *rx, const struct vrp_params *p, uint64_t len, uint32_t mtu,
		uint8_t *cell, const char **err);

/**
 * One data packet of the message arrived (VRP §3.2.2 "Data processing").
 * gap (may be NULL) is called for each missing packet the window passes.
 */
void vrp_rx_packet(struct vrp_rx *rx, uint32_t idx, struct vrp_rx_out *out, vrp_gap_fn gap,
		   void *ctx);

/** Byte range [*off, *off + *n) that packet idx carries. */
void vrp_pkt_bytes(const struct vrp_rx *rx, uint32_t idx, uint64_t *off, uint64_t *n);

/**
 * The loss map of the message: tolerated losses still missing, merged into
 * byte ranges in order. Writes at most max holes, returns the total count.
 * *bytes (may be NULL) gets the bytes missing.
 */
uint32_t vrp_rx_loss_map(const struct vrp_rx *rx, struct vrp_range *holes, uint32_t max,
			 uint64_t *bytes);

#endif /* VRP_H */
