/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_params.h
 * Every limit and default of the transport engine in one place, plus the two
 * IBTA time encodings (ACK timeout, RNR timer). Changing a number here is the
 * only way to change a limit; nothing else open-codes one.
 */
#ifndef ROCE_PARAMS_H
#define ROCE_PARAMS_H

#include <stdint.h>

/* ---- QP numbers (QP0 does not exist on RoCE, QP1 is the GSI) ---- */
#define ROCE_GSI_QPN 1u	     /**< reserved: packets to it are dropped and counted */
#define ROCE_FIRST_QPN 0x11u /**< first QPN handed out by roce_create_qp() */
#define ROCE_QPN_MASK 0xffffffu

/* ---- object counts (defaults of struct roce_dev_cfg, and hard maxima) ---- */
#define ROCE_DEFAULT_MAX_QP 256u
#define ROCE_MAX_QP 65536u
#define ROCE_DEFAULT_MAX_CQ 256u
#define ROCE_DEFAULT_MAX_MR 1024u
#define ROCE_MAX_MR (1u << 20) /**< the key carries the index in 24 bits */
#define ROCE_DEFAULT_MAX_PD 64u
#define ROCE_DEFAULT_MAX_AH 1024u
#define ROCE_MAX_GID 16u  /**< GID table size (sgid_index range) */
#define ROCE_MAX_PKEY 16u /**< P_Key table size (pkey_index range) */

/* ---- queues ---- */
#define ROCE_MAX_QP_WR 65536u	/**< send or receive WQEs per QP */
#define ROCE_MAX_SGE 16u	/**< scatter/gather entries per WQE */
#define ROCE_MAX_INLINE 1024u	/**< IBV_SEND_INLINE bytes per WQE */
#define ROCE_MAX_CQE (1u << 22) /**< completions per CQ */
#define ROCE_MAX_RD_ATOMIC 16u	/**< max_dest_rd_atomic: responder resources per QP */
/** max_rd_atomic: READs / atomics a requester keeps outstanding (a counter, no state per
 * slot). As rxe's max_qp_init_rd_atom: perftest gives its QP the peer's responder
 * resources as max_rd_atomic, 128 against rxe (the initiator depth
 * must not exceed the responder's resources, which is the peer's business). */
#define ROCE_MAX_INIT_RD_ATOMIC 128u

/* ---- messages and packets ---- */
#define ROCE_MIN_MTU 256u
#define ROCE_MAX_MTU 4096u
/**
 * Largest message. IBTA allows 2^31, but at a 256-byte MTU that is 2^23 PSNs,
 * the whole PSN comparison window; 2^30 keeps one message within 2^22 PSNs.
 */
#define ROCE_MAX_MSG_SIZE (1u << 30)
#define ROCE_ATOMIC_SIZE 8u   /**< atomics operate on one aligned 64-bit word */
#define ROCE_UD_GRH_LEN 40u   /**< GRH space at the head of a UD receive buffer */
#define ROCE_MAX_HDR_LEN 160u /**< Ethernet + VLAN + IPv6 + UDP + BTH + largest ext headers */
#define ROCE_MAX_FRAME (ROCE_MAX_MTU + ROCE_MAX_HDR_LEN) /**< transmit scratch buffer */

/* ---- reliability (RC) ---- */
/**
 * Packets (PSNs) a requester may have unacknowledged. rxe uses 128, far too
 * small for a WAN bandwidth-delay product (10 Gb/s x 100 ms / 1 KiB = 122k).
 */
#define ROCE_DEFAULT_WINDOW_PKTS 65536u
/** DSCP of CNPs: NVIDIA firmware default CNP_DSCP (mlxconfig, CX-5), priority 6. */
#define ROCE_DEFAULT_CNP_DSCP 48u
/** Window ceiling: window + one largest message must stay below 2^23 PSNs. */
#define ROCE_MAX_WINDOW_PKTS (1u << 21)
#define ROCE_DEFAULT_ACKREQ_EVERY 64u	 /**< requester sets AckReq at least every N packets */
#define ROCE_DEFAULT_ACK_EVERY 16u	 /**< responder ACKs at least every N packets */
#define ROCE_DEFAULT_ACK_DELAY_NS 20000u /**< responder ACKs an idle flow after this delay */
#define ROCE_DEFAULT_TX_BURST 64u	 /**< packets per QP per requester/responder run */
#define ROCE_MAX_RETRY_CNT 7u		 /**< IBTA 3-bit retry_cnt (7 means seven retries) */
#define ROCE_RNR_RETRY_INFINITE 7u	 /**< rnr_retry 7: retry forever (IBTA) */
#define ROCE_MAX_TIMER_CODE 31u		 /**< timeout and min_rnr_timer are 5-bit codes */
/**
 * Adaptive RTO floor and ceiling (roce_rtt.h; docs/transport.md explains the
 * choice). The floor is the least margin above the smoothed RTT: a peer or
 * emulator descheduled for a few ms on a shared 2-core host must not look
 * like a loss (each spurious expiry is a go-back-N round of the window).
 */
#define ROCE_DEFAULT_FEC_HOLD_NS 200000ull  /* 200 us: FEC hold-back margin (roce_fec.c) */
#define ROCE_MAX_FEC_HOLD_NS 10000000000ull /* 10 s */
/* --fec-adapt: no level down within this of a change (4 RTTs of 25 ms) unless 4 x SRTT is known */
#define ROCE_DEFAULT_FEC_ADAPT_HOLD_NS 100000000ull
/*
 * --rto-min: the user's hard floor of the margin. A 10 ms default is 5 RTT at 2 ms,
 * 2.5 times the 1.0-1.5 RTT tail target. 500 us keeps RTT + floor within 1.25 RTT
 * at 2 ms; the host's stalls are covered by the learned stall allowance
 * (ROCE_DEFAULT_RTO_STALL_NS, roce_rtt.c) instead of a constant sized for them.
 */
#define ROCE_DEFAULT_RTO_MIN_NS 500000ull	/* 500 us */
#define ROCE_DEFAULT_RTO_STALL_NS 2000000000ull /* 2 s: the stall allowance's half-life */
/** Adaptive RTO: an expiry backs the timeout off to at least this (roce_rtt_est_backoff). */
#define ROCE_RTO_BACKOFF_MIN_NS 10000000ull   /* 10 ms */
#define ROCE_DEFAULT_RTO_MAX_NS 1000000000ull /* 1 s */
#define ROCE_RTO_MIN_LIMIT_NS 1000ull	      /**< smallest --rto-min: 1 us */
/** Adaptive RTO: a refused transmit path with no refusal for this long is no longer held. */
#define ROCE_TX_HELD_STALE_NS 20000000ull      /* 20 ms */
#define ROCE_RTO_MAX_LIMIT_NS 3600000000000ull /**< largest --rto-max: one hour */

/* ---- addressing defaults ---- */
#define ROCE_DEFAULT_HOP_LIMIT 64u
#define ROCE_DEFAULT_MTU 4096u /**< port (active) MTU: caps path_mtu and UD messages */

/* ---- logging: at most this many log lines per second per device ---- */
#define ROCE_LOG_PER_SEC 50u

#define ROCE_NS_PER_SEC 1000000000ull

/**
 * Local ACK timeout (IBTA ch. 9.7, requester transport timer; the QP's
 * `timeout` attribute): 4.096 us x 2^timeout; code 0 disables the timer.
 * Returns nanoseconds, 0 for "infinite".
 */
static inline uint64_t
roce_ack_timeout_ns(uint8_t timeout)
{
	if (timeout == 0 || timeout > ROCE_MAX_TIMER_CODE)
		return 0;
	return 4096ull << timeout;
}

/**
 * RNR NAK timer field (the 5-bit AETH timer code of an RNR NAK, IBTA ch. 9.7;
 * the QP's `min_rnr_timer`): the minimum time a requester waits after an RNR
 * NAK before retrying. Returns nanoseconds.
 */
static inline uint64_t
roce_rnr_timer_ns(uint8_t code)
{
	/* in units of 10 us: 0 means 655.36 ms, 1 means 0.01 ms, ... 31 means 491.52 ms */
	static const uint32_t ten_us[ROCE_MAX_TIMER_CODE + 1] = {
	    65536, 1,	 2,    3,    4,	   6,	  8,	 12,	16,    24,    32,
	    48,	   64,	 96,   128,  192,  256,	  384,	 512,	768,   1024,  1536,
	    2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
	};

	return (uint64_t)ten_us[code & ROCE_MAX_TIMER_CODE] * 10000u;
}

#endif /* ROCE_PARAMS_H */
