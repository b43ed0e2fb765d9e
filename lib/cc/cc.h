/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file cc.h
 * lib/cc: congestion controls for the engine's seam (roce_cc.h), pure C
 * without DPDK. Each algorithm is a small state machine over events (CNP,
 * bytes sent, timer, ECN echo, RTT sample) that a unit test can replay, and
 * a roce_cc_ops wrapper that paces or windows a QP with it.
 *
 *   dcqcn     DCQCN RP + NP (Zhu et al., SIGCOMM 2015; parameters docs/cc.md)
 *   dcqcn-p   DCQCN-p (Wang et al., J. HFUT 2025), §2.1 pseudo-code, Tables 2-3
 *   dctcp     DCTCP window with ECN-echo fraction, g = 1/16 (Alizadeh et al. 2010)
 *   timely    TIMELY RTT gradient (Mittal et al., SIGCOMM 2015)
 *
 * Start-up only (not thread safe): cc_register_all(), then
 * cc_set_params() per algorithm and cc_set_line_rate(), then QPs.
 */
#ifndef RW_CC_H
#define RW_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "roce_cc.h"

/** Register every lib/cc algorithm with the engine. 0 or a negative errno. */
int cc_register_all(void);

/**
 * Set parameters of @p algo from "name=value,name=value" (profile=wan first,
 * whatever its place). 0, or -EINVAL with one line in @p err.
 */
int cc_set_params(const char *algo, const char *spec, char *err, size_t errlen);

/** The line rate rates are fractions of (bit/s; default 10 Gb/s). */
void cc_set_line_rate(uint64_t bps);
uint64_t cc_line_rate(void);

/** Print every parameter of every algorithm with default and source. */
void cc_params_help(FILE *f);

/** The algorithms, for tests and the option table ("dcqcn|dcqcn-p|dctcp|timely"). */
extern struct roce_cc_ops cc_dcqcn, cc_dcqcn_p, cc_dctcp, cc_timely;
#define RW_CC_NAMES "none|dcqcn|dcqcn-p|dctcp|timely"

/* ------------------------------------------------------------------------- */
/* DCQCN and DCQCN-p reaction point (rates are fractions of the line rate)   */
/* ------------------------------------------------------------------------- */

struct cc_dcqcn_params {
	double g;	       /**< alpha gain */
	double alpha0;	       /**< alpha at start */
	double alpha_timer_us; /**< alpha decays every this long without a CNP (DCQCN) */
	double timer_us;       /**< rate-increase timer T */
	double byte_counter;   /**< rate-increase byte counter B (bytes) */
	double f;	       /**< F: fast-recovery events before additive increase */
	double rai;  /**< additive increase (Mb/s; a fraction of the line rate if ratios) */
	double rhai; /**< hyper increase (same unit) */
	double min_rate_mbps;	/**< floor (Mb/s) */
	double dec_interval_us; /**< at most one decrease per this long */
	double cnp_interval_us; /**< NP: at most one CNP per QP per this long (0: every mark) */
	double hyper;		/**< 1: hyper increase when both T and B reach F */
	double becn_ack;	/**< NP: 1 = BECN-flagged ACK instead of a CNP (RC) */
	bool ratios;		/**< rai/rhai are fractions of the line rate (DCQCN-p Table 3) */
};

struct cc_dcqcn_state {
	double rc, rt, alpha;
	uint32_t t, b;	     /**< increase events of the timer and of the byte counter */
	uint64_t bytes;	     /**< sent since the last byte-counter event */
	uint64_t timer_at;   /**< next rate-increase timer expiry (0: off) */
	uint64_t alpha_at;   /**< next alpha-decay expiry (DCQCN) */
	uint64_t last_cnp;   /**< time of the last CNP (0: none yet) */
	uint64_t last_timer; /**< time of the last timer event */
	bool cnp_seen;
	bool active; /**< below full rate (DCQCN-p: the flow is "registered") */
	uint64_t decreases, increases, held;
};

/** DCQCN (Zhu et al. 2015, Fig. 6 RP state machine). */
void cc_dcqcn_init(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p);
/** A CNP arrived: returns true if it decreased the rate. */
bool cc_dcqcn_cnp(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, uint64_t now);
/** One rate-increase event (the timer's if @p timer, else the byte counter's). */
void cc_dcqcn_increase(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, bool timer);
/** Run timers and the byte counter at @p now after @p bytes more were sent. */
void cc_dcqcn_advance(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, uint64_t now,
		      uint64_t bytes);

/** DCQCN-p (DCQCN-p (Wang et al.), §2.1 pseudo-code lines 1-31). */
void cc_dcqcnp_init(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p);
bool cc_dcqcnp_cnp(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, uint64_t now);
void cc_dcqcnp_increase(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, bool timer);
void cc_dcqcnp_advance(struct cc_dcqcn_state *s, const struct cc_dcqcn_params *p, uint64_t now,
		       uint64_t bytes);

/* ------------------------------------------------------------------------- */
/* DCTCP                                                                      */
/* ------------------------------------------------------------------------- */

struct cc_dctcp_params {
	double g;	  /**< alpha gain (1/16) */
	double init_cwnd; /**< packets (0: the QP window) */
	double min_cwnd;  /**< packets */
};

struct cc_dctcp_state {
	double cwnd, alpha;
	uint32_t acked, marked; /**< this observation window */
	uint32_t win_end;	/**< packets acknowledged until the window closes (0: unset) */
	uint32_t flight;	/**< packets in flight at the last send decision */
	bool cut_in_window;
	uint64_t decreases, increases;
};

void cc_dctcp_init(struct cc_dctcp_state *s, const struct cc_dctcp_params *p, uint32_t max_cwnd);
/** @p pkts newly acknowledged, @p marked of them echoed CE. */
void cc_dctcp_ack(struct cc_dctcp_state *s, const struct cc_dctcp_params *p, uint32_t pkts,
		  uint32_t marked, uint32_t max_cwnd);

/* ------------------------------------------------------------------------- */
/* TIMELY                                                                     */
/* ------------------------------------------------------------------------- */

struct cc_timely_params {
	double alpha; /**< EWMA weight of the new RTT difference */
	double beta;  /**< multiplicative decrease factor */
	double t_low_us, t_high_us, min_rtt_us;
	double delta_mbps; /**< additive step (Mb/s) */
	double hai_n;	   /**< N: consecutive negative-gradient samples before HAI (N * delta) */
	double min_rate_mbps; /**< floor (Mb/s) */
	/**
	 * 1 (profile=wan): T_low/T_high are compared with the queueing delay
	 * rtt - (least RTT measured on the QP), and the gradient is scaled by
	 * that measured least RTT instead of min_rtt_us (docs/cc.md).
	 */
	double base_rtt;
	/**
	 * N > 0 (profile=wan: 8): N consecutive samples whose queueing delay is
	 * above T_low (base_rtt mode) are a queue signal to the loss window
	 * (roce_qp_cc_queue_signal: slow start ends, no growth this round trip),
	 * and so is every further one until a sample falls to T_low. 0: off.
	 */
	double queue_signal;
};

struct cc_timely_state {
	double rate, rtt_diff;
	uint64_t prev_rtt, last_rtt;
	uint64_t min_rtt; /**< least sample seen (ns; base_rtt mode) */
	uint64_t qdelay;  /**< last queueing delay, last_rtt - min_rtt (ns; base_rtt mode) */
	uint32_t neg_rounds;
	uint32_t above; /**< consecutive samples with the queueing delay above T_low */
	uint64_t decreases, increases;
	uint64_t queue_signals; /**< samples that raised the queue signal */
};

void cc_timely_init(struct cc_timely_state *s, const struct cc_timely_params *p);
/** One RTT sample. Returns true if it raises the queue signal (p->queue_signal only). */
bool cc_timely_rtt(struct cc_timely_state *s, const struct cc_timely_params *p, uint64_t rtt_ns);

/* ------------------------------------------------------------------------- */
/* Pacing: a token bucket in the engine's clock (TSC ns)                      */
/* ------------------------------------------------------------------------- */

struct cc_pacer {
	uint64_t next; /**< earliest time of the next packet */
};

/** Wire bytes besides the payload: Ethernet + FCS 18, IPv4 20, UDP 8, BTH 12, ICRC 4. */
#define CC_PKT_OVERHEAD 62u
/** Burst allowed after an idle or late poll (ns). */
#define CC_PACE_BURST_NS 50000u

/** Time a packet may leave (<= now: at once). @p rate_bps 0 or >= line: never paced. */
uint64_t cc_pace_gate(const struct cc_pacer *p, uint64_t now, double rate_bps);
void cc_pace_sent(struct cc_pacer *p, uint64_t now, uint32_t bytes, double rate_bps);

/** Parameters in effect (for tests and the trace). */
extern struct cc_dcqcn_params cc_dcqcn_prm, cc_dcqcnp_prm;
extern struct cc_dctcp_params cc_dctcp_prm;
extern struct cc_timely_params cc_timely_prm;

#endif /* RW_CC_H */
