/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_fec_int.h
 * FEC in the engine, private to lib/roce: the limits of the hold-back and the
 * idle flush, and what roce_fec.c (registry, transmit) and roce_fec_hold.c
 * (the receive hold-back and its deadline) call of each other.
 */
#ifndef ROCE_FEC_INT_H
#define ROCE_FEC_INT_H

#include "roce_fec.h"
#include "roce_int.h"

#define FEC_HOLD_MIN 512u  /**< held-packet ring: at least this many slots */
#define FEC_HOLD_MAX 4096u /**< and at most */
#define FEC_HOLD_SPAN_MAX_NS                                                                       \
	100000000ull		   /**< the block-fill part of a deadline: at most 100 ms          \
				    */
#define FEC_IDLE_MIN_NS 50000ull   /**< sender idle flush: at least 50 us */
#define FEC_IDLE_MAX_NS 2000000ull /**< and at most 2 ms */
#define FEC_GAP_MAX_NS 2000000ull  /**< inter-packet gap samples are capped at 2 ms (a pause) */
/** A hold's silence deadline is at least this: twice the sender's longest idle-flush wait */
#define FEC_HOLD_SILENCE_MIN_NS (4 * FEC_IDLE_MAX_NS)
/*
 * The observed-stall part of the hold margin (roce_fec_hold_ns): a silence between
 * two received packets of a stream longer than FEC_GAP_MAX_NS and at most
 * FEC_STALL_MAX_NS is a stall (longer: the sender stopped - no data, a
 * retransmit timeout); the margin is at least FEC_STALL_K times the longest
 * stall of the last one to two FEC_STALL_WINDOW_NS.
 */
#define FEC_STALL_MAX_NS 50000000ull	  /**< 50 ms; FEC_STALL_K x this = 100 ms */
#define FEC_STALL_WINDOW_NS 5000000000ull /**< 5 s */
#define FEC_STALL_K 2u

/* roce_fec.c */
void roce_fec_rate_sample(struct roce_fec_rate *r, uint64_t now, uint32_t span);
void roce_fec_stall_sample(struct roce_fec_hold *h, uint64_t now);
uint64_t roce_fec_stall(const struct roce_fec_hold *h);
uint64_t roce_fec_rate_gap(const struct roce_fec_rate *r);
void roce_fec_emit_now(void *arg, const uint8_t *frame, size_t len);

/* roce_fec_hold.c */
uint32_t roce_fec_expected(const struct roce_qp *qp, int stream);
uint64_t roce_fec_hold_ns(const struct roce_qp *qp, const struct roce_fec_hold *h);

#endif /* ROCE_FEC_INT_H */
