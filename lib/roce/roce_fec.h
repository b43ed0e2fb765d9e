/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_fec.h
 * The FEC seam: lib/roce runs forward error correction on an RC QP through
 * this ops table; lib/fec implements it (fec_roce.c, `fec_roce_codec`), the
 * app registers it once (roce_fec_register) and turns FEC on per QP
 * (roce_qp_set_fec), after both peers advertised it (docs/fec.md).
 *
 * What the engine does with it (roce_xmit.c, roce_recv.c):
 *  - transmit: every frame a FEC QP sends goes through tx() first; the codec
 *    codes request packets and READ responses (not ACKs, not retransmissions)
 *    and emits its repairs right after the frame that completed a block
 *    (LoWAR, Zuo et al., "Buffer-based Update-style Calculation"). When the
 *    requester stops (nothing to send, window full) the engine calls
 *    tx_flush() so the open blocks' repairs leave at once;
 *  - receive: every frame for a FEC QP goes through rx(): data frames are
 *    folded in, repairs may rebuild a missing frame (ICRC recomputed), which
 *    the engine then receives as if it came from the wire;
 *  - hold-back (LoWAR "packet reordering and draining"): a request packet
 *    after a hole in the PSN stream is kept by the engine, not given to the
 *    transport, until the hole is rebuilt (then it is drained in order), the
 *    codec reports the hole unrecoverable, or the deadline passes (block
 *    fill time + margin); only then does the transport see the gap and send
 *    its loss signal (NAK / RACK / SACK), i.e. falls back to its own mode.
 */
#ifndef ROCE_FEC_H
#define ROCE_FEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Called for each frame a codec produces (copy it: the buffer is reused). */
typedef void (*roce_fec_emit_fn)(void *arg, const uint8_t *frame, size_t len);

/** What the codec learned about a PSN of a stream (0 requests, 1 READ responses). */
enum roce_fec_event {
	ROCE_FEC_EV_REBUILT = 1,       /**< rebuilt and handed to deliver() */
	ROCE_FEC_EV_UNRECOVERABLE = 2, /**< lost for the code: the transport must recover it */
};
typedef void (*roce_fec_event_fn)(void *arg, enum roce_fec_event ev, int stream, uint32_t psn);

/** rx() results (>= 0); a negative value is a refused (hostile, malformed) FEC frame. */
enum roce_fec_rx {
	ROCE_FEC_RX_PASS = 0,	  /**< not coded: deliver it */
	ROCE_FEC_RX_DATA = 1,	  /**< a coded data frame, folded in: deliver it */
	ROCE_FEC_RX_CONSUMED = 2, /**< a FEC frame: not for the transport */
};

/** Per-QP codec counters the engine exports (ROCE_STAT_FEC_*). */
struct roce_fec_info {
	uint64_t covered;		       /**< data frames coded (sender) */
	uint64_t repairs_sent;		       /**< repair frames emitted */
	uint64_t repairs_rx;		       /**< repair frames accepted */
	uint64_t unneeded;		       /**< repairs of blocks that lost nothing */
	uint64_t rebuilt;		       /**< frames rebuilt */
	uint64_t unrecoverable;		       /**< missing frames the code could not fill */
	uint8_t mode, k, d, r;		       /**< current parameters (sender side) */
	uint8_t dec_mode, dec_k, dec_d, dec_r; /**< the peer's, as the decoder follows them */
	int8_t adapt_level;	 /**< --fec-adapt: the receiver's policy level (-1: off) */
	uint32_t adapt_loss_ppm; /**< its loss estimate, fraction x 1e6 */
};

struct roce_fec_ops {
	const char *name; /**< "fec" */
	/** Codec state for one QP from a parameter string ("xor:32,4"); NULL + @p err if invalid.
	 */
	void *(*create)(const char *params, char *err, size_t errlen);
	void (*destroy)(void *st);
	/**
	 * A frame about to leave: frames for @p pre go before it, for @p post
	 * after it (called during the call). Returns 1 if it was coded, 2 if it
	 * was a retransmission coded on a new grid (tx_recode), else 0.
	 */
	int (*tx)(void *st, const uint8_t *frame, size_t len, roce_fec_emit_fn pre,
		  roce_fec_emit_fn post, void *arg);
	/** The sender paused: emit the repairs of the open blocks now. */
	void (*tx_flush)(void *st, roce_fec_emit_fn emit, void *arg);
	/** A received frame (ICRC checked for data, checked here for FEC frames). ::roce_fec_rx. */
	int (*rx)(void *st, const uint8_t *frame, size_t len, roce_fec_emit_fn deliver,
		  roce_fec_event_fn ev, void *arg);
	/** Give up every open block with a hole (the hold-back deadline). */
	void (*rx_flush)(void *st, roce_fec_event_fn ev, void *arg);
	/** PSNs a block's members span (K x D): the hold-back deadline scales with it. */
	uint32_t (*span)(void *st);
	void (*info)(void *st, struct roce_fec_info *out);
	/**
	 * Optional (NULL: never): code retransmissions on a new grid (on for a Go-Back-N
	 * sender, whose go-back rounds are contiguous PSN ranges), or not.
	 */
	void (*tx_recode)(void *st, bool on);
	/**
	 * Optional (--fec-adapt, the receiver's policy): one packet of the
	 * peer's coded request stream received (@p lost false) or found
	 * missing by the decoder (rebuilt or not).
	 */
	void (*adapt_sample)(void *st, bool lost, uint32_t psn);
	/** Optional: @p run consecutive PSNs of that stream were missing (a gap on arrival). */
	void (*adapt_gap)(void *st, uint32_t run);
	/** Optional: the policy decides at @p now (+1 up, -1 down, 0). */
	int (*adapt_decide)(void *st, uint64_t now, uint64_t hold_ns);
	/**
	 * Optional: the PROPOSE of the policy's current parameters toward the
	 * peer, built into @p out from @p tmpl (a frame this QP sends the
	 * peer); its length, or <= 0.
	 */
	int (*adapt_propose)(void *st, const uint8_t *tmpl, size_t tmpl_len, uint32_t dqpn,
			     uint8_t *out, size_t cap);
};

/** Register the codec (once, before roce_qp_set_fec). -EINVAL if incomplete. */
int roce_fec_register(const struct roce_fec_ops *ops);
/** The registered codec, or NULL: FEC cannot be turned on. */
const struct roce_fec_ops *roce_fec_codec(void);

#endif /* ROCE_FEC_H */
