/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file fec.h
 * Packet-level forward error correction over a stream of RoCEv2 frames:
 * LoWAR's XOR code (Zuo et al., "LoWAR: Enhancing RDMA over Lossy WANs with
 * Transparent Error Correction", slides "Buffer-based Update-style
 * Calculation", "Repair Header (RH) Extension") and a Reed-Solomon mode on
 * ISA-L's erasure code. Pure C, no DPDK. docs/fec.md has the design,
 * docs/wire.md the byte layout of the repair and negotiation packets.
 *
 * The encoder sees each covered frame once as it leaves and folds it into the
 * block's coding units (R accumulators of one symbol each: no block
 * buffering). The decoder folds each received frame into the same
 * accumulators, adds the repair, and what is left is the code of the missing
 * frames only (a syndrome): one missing frame per repair row is solved.
 *
 * Covered frames: RC/UC request packets and RDMA READ responses (two PSN
 * streams, each coded on its own), never ACKs, CNPs or the FEC packets
 * themselves. The coded symbol of a frame is its 16-bit length followed by
 * the frame from the IP header to the end of the ICRC with the fields a router
 * may change (the ones the ICRC masks: IPv4 TOS/TTL/checksum, IPv6 traffic
 * class/flow label/hop limit, UDP checksum) set to zero.
 */
#ifndef FEC_H
#define FEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fec_wire.h"

/** Called for each frame the encoder or decoder produces. */
typedef void (*fec_emit_fn)(void *arg, const uint8_t *frame, size_t len);

/* ---- counters (X-macro: enum, names, descriptions in one list) ---- */
#define FEC_ENC_STATS_LIST(X)                                                                      \
	X(COVERED, "fec_data_covered", "data frames coded into a block")                           \
	X(NOT_COVERED, "fec_not_covered", "frames not coded: ACK, CNP, other opcodes")             \
	X(RESEND, "fec_resend_not_covered", "retransmitted frames (PSN already coded)")            \
	X(RECODED, "fec_resend_recoded", "retransmissions coded (go-back rounds, new grid)")       \
	X(TOO_LONG, "fec_too_long", "frames longer than FEC_DATA_MAX, not coded")                  \
	X(BAD_FRAME, "fec_bad_frame", "frames the encoder could not parse")                        \
	X(REPAIRS, "fec_repairs_sent", "repair frames emitted")                                    \
	X(PARTIAL, "fec_partial_repairs", "repair frames of a block flushed before K")             \
	X(COMMITS, "fec_commits_sent", "negotiation COMMIT frames emitted")                        \
	X(PROPOSALS, "fec_proposals_rx", "negotiation PROPOSE frames accepted")                    \
	X(BAD_PROPOSALS, "fec_proposals_bad", "negotiation frames refused")                        \
	X(OVERHEAD, "fec_overhead_bytes", "bytes of repair and negotiation frames emitted")

#define FEC_DEC_STATS_LIST(X)                                                                      \
	X(DATA, "fec_data_seen", "covered data frames folded into a block")                        \
	X(NO_ANCHOR, "fec_data_no_anchor", "data frames before the stream's grid was known")       \
	X(DUP, "fec_data_dup", "data frames already folded in (duplicates), ignored")              \
	X(REPAIRS, "fec_repairs_rx", "repair frames accepted")                                     \
	X(BAD, "fec_repairs_bad", "FEC frames refused (parse, ICRC, FRH range, length)")           \
	X(UNNEEDED, "fec_repairs_unneeded", "repairs of a block that lost nothing")                \
	X(STALE, "fec_repairs_stale", "repairs that disagree with the block (mask, late)")         \
	X(REBUILT, "fec_rebuilt", "frames rebuilt and delivered")                                  \
	X(REBUILD_BAD, "fec_rebuild_bad", "rebuilt frames refused (ICRC, length, PSN)")            \
	X(CLEAN, "fec_blocks_clean", "blocks complete without loss")                               \
	X(UNRECOVERABLE, "fec_blocks_unrecoverable", "blocks with losses the code cannot fill")    \
	X(LOST_UNREC, "fec_frames_unrecoverable", "missing frames in unrecoverable blocks")        \
	X(EVICTED, "fec_blocks_evicted", "open blocks dropped for lack of a slot")                 \
	X(COMMITS, "fec_commits_rx", "negotiation COMMIT frames accepted")

#define FEC_X_ENUM(e, n, d) FEC_ES_##e,
enum fec_enc_stat { FEC_ENC_STATS_LIST(FEC_X_ENUM) FEC_ES_NSTATS };
#undef FEC_X_ENUM
#define FEC_X_ENUM(e, n, d) FEC_DS_##e,
enum fec_dec_stat { FEC_DEC_STATS_LIST(FEC_X_ENUM) FEC_DS_NSTATS };
#undef FEC_X_ENUM

extern const char *const fec_enc_stat_names[FEC_ES_NSTATS];
extern const char *const fec_dec_stat_names[FEC_DS_NSTATS];

/* ---- encoder ---- */
struct fec_enc;

/** NULL if @p p is invalid or memory is short. */
struct fec_enc *fec_enc_create(const struct fec_params *p);
void fec_enc_free(struct fec_enc *e);
/**
 * Code retransmissions too (for a Go-Back-N sender): a frame whose PSN was
 * already coded closes the open group (partial repairs) and starts a new grid
 * anchored at it, announced by a COMMIT, so the go-back round that follows is
 * protected like new data. Off by default: a selective sender's retransmissions
 * are scattered PSNs and pass uncoded (fec_resend_not_covered).
 */
void fec_enc_set_recode(struct fec_enc *e, bool on);

/** Return values of fec_enc_frame() (>= 0). */
enum fec_enc_rc {
	FEC_ENC_PASS = 0,  /**< not coded (counted why) */
	FEC_ENC_CODED = 1, /**< coded */
};

/**
 * Code one frame as it leaves. @p emit gets, in order, what the caller sends:
 * first a COMMIT that must go before this frame (at a new grid), then, after
 * the frame itself, the repairs of a block this frame completed: @p pre gets
 * the frames to send before @p frame, @p post the ones to send after it.
 * Returns ::fec_enc_rc.
 */
int fec_enc_frame(struct fec_enc *e, const uint8_t *frame, size_t len, fec_emit_fn pre,
		  fec_emit_fn post, void *arg);
/** Emit the repairs of the open blocks now (end of a burst); the next frame starts a new grid. */
int fec_enc_flush(struct fec_enc *e, fec_emit_fn emit, void *arg);
/** New parameters, effective at the next group boundary (announced by a COMMIT). */
int fec_enc_set_params(struct fec_enc *e, const struct fec_params *p);
/** A PROPOSE frame from the receiver: 0 (accepted, applied as fec_enc_set_params) or -1. */
int fec_enc_rx_negotiate(struct fec_enc *e, const uint8_t *frame, size_t len);
void fec_enc_params(const struct fec_enc *e, struct fec_params *p);
uint64_t fec_enc_stat(const struct fec_enc *e, enum fec_enc_stat s);

/* ---- decoder ---- */
struct fec_dec;

enum fec_event {
	FEC_EV_REBUILT = 1, /**< the frame with this PSN was rebuilt and delivered */
	FEC_EV_UNRECOVERABLE =
	    2, /**< the frame with this PSN is lost for the code: retransmission */
};
typedef void (*fec_event_fn)(void *arg, enum fec_event ev, int stream, uint32_t psn);

/**
 * @p nslots open blocks at most (memory: nslots x R x FEC_SYM_MAX bytes,
 * allocated as blocks open); 0 = 4 x FEC_D_MAX.
 */
struct fec_dec *fec_dec_create(unsigned nslots);
void fec_dec_free(struct fec_dec *d);

/** Return values of fec_dec_frame() (>= 0). */
enum fec_dec_rc {
	FEC_DEC_PASS = 0, /**< not a covered frame: deliver it, FEC has nothing to say */
	FEC_DEC_DATA = 1, /**< a covered data frame: deliver it (it was folded in) */
	FEC_DEC_CONSUMED =
	    2, /**< a FEC frame: do not deliver (rebuilt frames went to @p deliver) */
	FEC_DEC_PROPOSE =
	    3, /**< a PROPOSE for this side's encoder: give it to fec_enc_rx_negotiate() */
};

/**
 * One received frame (ICRC already verified by the caller for data frames;
 * FEC frames are verified here). Rebuilt frames go to @p deliver, byte-exact
 * as sent (Ethernet header, TOS/TTL/flow label taken from the repair), events
 * to @p ev (either may be NULL). Returns ::fec_dec_rc or a negative ::fec_err
 * (a refused FEC frame, counted).
 */
int fec_dec_frame(struct fec_dec *d, const uint8_t *frame, size_t len, fec_emit_fn deliver,
		  fec_event_fn ev, void *arg);
/** Declare every open block with a hole unrecoverable (end of a stream / hold-back deadline). */
void fec_dec_flush(struct fec_dec *d, fec_event_fn ev, void *arg);
/** The parameters the decoder last learned for @p stream (mode 0 if none). */
void fec_dec_params(const struct fec_dec *d, int stream, struct fec_params *p);
uint64_t fec_dec_stat(const struct fec_dec *d, enum fec_dec_stat s);

#endif /* FEC_H */
