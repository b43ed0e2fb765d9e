/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_trace.h
 * Loss-recovery trace events: an optional roce_dev_ops.trace callback sees
 * each one (the rnic's --trace writes them to a file, joined with the
 * lossy-emu's --drop-log by python/rocewan/trace.py). With no callback the
 * cost is one predictable branch at the places below, which are already
 * off the fast path (a retransmission, an acceptance after a gap).
 *
 * Not the state-machine transition trace (roce_trace() in roce_int.h, log
 * level ROCE_LOG_TRACE): these are per-PSN recovery events for a program.
 *
 * Events (the engine emits the first two today; the others are reserved for
 * the modes and lib/fec to emit through roce_trace_loss() with the same fields):
 *  - RETX: the requester (re)transmitted request PSN @p psn again;
 *  - RX_LATE: the responder accepted PSN @p psn in order after a later PSN
 *    of the QP had already arrived, i.e. @p psn was missing at the receiver
 *    and has now arrived (with Go-Back-N this includes the PSNs after the
 *    hole that were discarded and resent);
 *  - RACK_SENT, SACK_SENT: a Go-Back-ONE RACK / IRN SACK left (@p psn: the
 *    PSN it reports);
 *  - FEC_REBUILT: the receiver rebuilt @p psn from FEC repair data;
 *  - RTO: the requester's retransmit timer expired with @p psn the oldest
 *    unacknowledged PSN;
 *  - RTO_SPURIOUS: the expiry that resent @p psn was found spurious
 *    (the rto_spurious counter: the 3/4-RTT rule or F-RTO's test);
 *  - RTO_GOBACK: after a head-first expiry (--rto adaptive), the recovery
 *    resent every unreported PSN from @p psn on (the verdict that the
 *    expiry was not spurious, or a second expiry without progress).
 */
#ifndef ROCE_TRACE_H
#define ROCE_TRACE_H

#include <stdint.h>

struct roce_qp;

enum roce_trace_kind {
	ROCE_TRACE_RETX = 1,
	ROCE_TRACE_RX_LATE,
	ROCE_TRACE_RACK_SENT,
	ROCE_TRACE_SACK_SENT,
	ROCE_TRACE_FEC_REBUILT,
	ROCE_TRACE_RTO,
	ROCE_TRACE_RTO_SPURIOUS,
	ROCE_TRACE_RTO_GOBACK,
};

/** One event, as the callback receives it. */
struct roce_trace_event {
	enum roce_trace_kind kind;
	uint32_t qpn;  /**< the local QP */
	uint32_t dqpn; /**< its peer QP (the destination QPN of its requests) */
	uint32_t psn;
	uint64_t now_ns; /**< the engine's clock (roce_dev_ops.now_ns) */
};

/** "retx", "rx_late", "rack_sent", "sack_sent", "fec_rebuilt", "rto", "rto_spurious",
 * "rto_goback", or "?". */
const char *roce_trace_kind_name(enum roce_trace_kind k);

/** Emit @p kind for @p qp and @p psn if the device has a trace callback. */
void roce_trace_loss(struct roce_qp *qp, enum roce_trace_kind kind, uint32_t psn);

#endif /* ROCE_TRACE_H */
