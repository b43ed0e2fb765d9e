/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file lemu_dir.h
 * The data path of one direction (port in -> port out), the only code that
 * touches rte_mbuf. Per poll:
 *
 *   0. adopt a newly published config (atomic pointer, no lock)
 *   1. bottleneck queue: packets whose departure time has come move on
 *   2. RX burst; per frame:
 *        MAC control (EtherType 0x8808) -> control TX list (skips everything)
 *        stage 1 (lib/emu emu_impair): loss, duplicate, CE (netem ecn), corrupt
 *        bottleneck queue (emu_shaper + emu_red + emu_pfcgen) -> departure time
 *   3. PFC generation from the backlog; frames go to the peer direction, whose
 *      TX port is this direction's RX port, through an SP/SC ring
 *   4. delay line (lemu_delay): packets leave the queue at their departure
 *      time and the line at departure + delay (+ jitter), reordered ones
 *      bounded by gap; due packets are released into the TX buffer and their
 *      release error (actual - intended) goes into a histogram
 *   5. TX: control frames first (the peer's PFC, forwarded MAC control), then
 *      data in order; what the port does not take waits for the next poll.
 *      Under load released frames wait up to --tx-coalesce (20 us) for a full
 *      burst: one af_packet sendto() per frame would halve the forwarding
 *      rate. A frame never waits when nothing else is due within the window.
 *
 * With --workers N a direction is N of these, one per worker lcore (struct
 * lemu_dir is one worker's share): each has its own RX queue (or, on a port
 * without RSS or fanout, a ring worker 0 fills by the 5-tuple hash, emu_spread.h),
 * TX queue (or a lock on the port's one), loss/duplicate/corrupt/delay draws,
 * delay line and counters, and all of them admit into the direction's one
 * bottleneck (lib/emu emu_bneck.h: rate, limit, RED, PFC). docs/lossy-emu.md,
 * "Workers".
 */
#ifndef LEMU_DIR_H
#define LEMU_DIR_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "dp_clock.h"
#include "emu_bneck.h"
#include "emu_counters.h"
#include "emu_dist.h"
#include "emu_impair.h"
#include "emu_pfcgen.h"
#include "emu_red.h"
#include "emu_rules.h"
#include "emu_shaper.h"
#include "emu_spec.h"
#include "emu_stall.h"
#include "lemu_delay.h"
#include "lemu_hist.h"
#include "lemu_stats.h"

#define LEMU_BURST_MAX 256
#define LEMU_TX_MAX 512			   /**< data frames waiting for the TX port */
#define LEMU_CTRL_MAX 128		   /**< control frames waiting for the TX port */
#define LEMU_FREE_MAX 64		   /**< mbufs of frames stored compact, freed in bulk */
#define LEMU_WORKERS_MAX 16		   /**< --workers: per direction */
#define LEMU_PEND_MAX (2 * LEMU_BURST_MAX) /**< frames of one burst (and copies) to admit */

/** The emulator's clock (lib/dpdk dp_clock), ns since lemu_clock_init(). */
extern struct dp_clock lemu_clk;

void lemu_clock_init(void);

static inline uint64_t
lemu_now_ns(void)
{
	return dp_clock_now(&lemu_clk);
}

/** This thread's CPU time, ns (--stall-detect; a system call: not in the vDSO). */
static inline uint64_t
lemu_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/**
 * One direction's configuration, immutable once published. The control
 * plane allocates it and keeps it until exit; the data path only reads it.
 */
struct lemu_dir_cfg {
	struct emu_spec spec;
	uint64_t seed;
	char text[EMU_SPEC_MAX_LEN]; /**< effective SPEC (emu_spec_format) */
	struct lemu_dir_cfg *older;  /**< list of every config, freed at exit */
};

/** Bottleneck queue entry. */
struct lemu_qent {
	struct rte_mbuf *m;
	uint64_t dep_ns;
	uint32_t len;
	uint32_t flags; /**< EMU_V_REORDER */
};

/** A frame of this RX burst waiting for the bottleneck (admitted in one lock hold). */
struct lemu_pend {
	struct rte_mbuf *m;
	uint8_t *ip; /**< its IP header (CE mark), NULL if not IP */
	uint32_t flags;
};

struct lemu_dir {
	unsigned id;		 /**< enum lemu_dir_id */
	unsigned widx, nworkers; /**< this worker of the direction's --workers */
	uint16_t rx_port, tx_port;
	uint16_t rx_queue, tx_queue;
	struct emu_bneck *bn;	 /**< the direction's one bottleneck (every worker's) */
	rte_spinlock_t *tx_lock; /**< the TX port's one queue, shared (NULL: our own queue) */
	struct rte_ring
	    *spread_in; /**< software spread: our frames from worker 0 (NULL: RX queue) */
	struct rte_ring *const *spread_out; /**< worker 0, software spread: rings of workers 1.. */
	struct lemu_pend pend[LEMU_PEND_MAX];
	uint16_t npend;
	uint16_t burst;
	uint32_t rx_cut_len;	  /**< rx_port may cut frames this long (dp_port_info), 0: never */
	struct rte_mempool *pool; /**< RX pool of rx_port; duplicates and PFC come from it too */
	struct rte_mempool *tx_pool;  /**< lemu_dir_args::tx_pool */
	uint32_t empty_polls;	      /**< RX polls in a row that returned nothing */
	bool pool_short;	      /**< the pool held fewer than one burst when last looked at */
	uint64_t link_bps;	      /**< rate of rx_port (PFC quanta) */
	struct rte_ether_addr rx_mac; /**< source of the PFC frames we generate */
	struct rte_ring *pfc_out;     /**< our PFC frames -> the peer sends them on our rx_port */
	struct rte_ring *pfc_in;      /**< the peer's PFC frames, sent first on our tx_port */

	/* configuration hand-off: control stores want, data path stores applied */
	const struct lemu_dir_cfg *want;
	const struct lemu_dir_cfg *applied;
	const struct lemu_dir_cfg *cur; /**< data path only */

	/* models (lib/emu), rebuilt from cur; the queue's (shaper, RED, PFC) are in bn */
	struct emu_impair im;
	struct emu_dist dist;
	struct emu_rules
	    rules; /**< drop-psn / drop-nth of cur (counts restart with a SPEC change) */
	bool has_rules;
	bool has_queue, has_delay, corrupt_recompute;
	uint64_t ctrl_delay_ns; /**< ctrl-delay: MAC control frames take this delay (0: bypass) */
	uint32_t gap;

	/* this worker's packets in the bottleneck, in admission order (power-of-two ring) */
	struct lemu_qent *qr;
	uint32_t qmask, qhead, qn;
	/* delay line; small frames wait in it as copies in cr (lemu_delay.h), their mbufs
	 * go back to the pool in bulk from fb[] */
	struct lemu_dl dl;
	struct lemu_cr cr;
	struct rte_mbuf *fb[LEMU_FREE_MAX];
	uint16_t nfb;

	/* TX */
	struct rte_mbuf *ctrl[LEMU_CTRL_MAX];
	uint8_t ctrl_fwd[LEMU_CTRL_MAX]; /**< 1: forwarded (counts as tx_pkts), 0: peer PFC */
	uint16_t nctrl;
	struct rte_mbuf *tx[LEMU_TX_MAX]; /**< mbufs, or compact handles (lemu_cr_is) */
	uint16_t ntx;
	uint64_t tx_first_ns; /**< when the oldest frame in tx[] was released */
	uint64_t coalesce_ns; /**< send once it waited this long, or tx[] holds a burst */

	/* counters (data path writes, others read) */
	uint64_t stat[LEMU_ST__COUNT];
	struct emu_counters ec;
	struct lemu_hist derr; /**< release error, ns */
	/* --stall-detect (NULL: off): the detector of this direction's lcore, checked just
	 * before each release (emu_stall.h); a frame a measured host stall delayed is left out
	 * of derr_own, the emulator's own share of the release error */
	struct emu_stall *sd;
	struct emu_stall_own own;
	struct lemu_hist derr_own; /**< release error of frames no measured stall delayed, ns */
	struct lemu_hist rx_call;  /**< --stall-detect: duration of each rte_eth_rx_burst(), ns */
	struct lemu_hist tx_call;  /**< --stall-detect: duration of each rte_eth_tx_burst(), ns */
	uint64_t tx_due[LEMU_TX_MAX]; /**< --stall-detect: intended exit of each frame in tx[] */
	struct lemu_hist derr_tx;     /**< --stall-detect: the TX call that took the frame
				       * returned, less its intended exit, ns (release error
				       * at the port, TX call included) */
	uint64_t tx_done_ns;	      /**< --stall-detect: when the last TX call returned */
	uint64_t bursts_prev[EMU_LOSS_BURST_BUCKETS]; /**< loss runs of replaced configs */
};

/** Static wiring of one worker of a direction. */
struct lemu_dir_args {
	unsigned id;
	unsigned widx, nworkers;
	uint16_t rx_port, tx_port, burst;
	uint16_t rx_queue, tx_queue;
	struct emu_bneck *bn; /**< initialised (emu_bneck_init); configured by worker 0's init */
	rte_spinlock_t *tx_lock;
	struct rte_ring *spread_in;
	struct rte_ring *const *spread_out;
	uint32_t rx_cut_len; /**< dp_port_info::rx_cut_len of rx_port */
	struct rte_mempool *pool;
	/** mbufs for the compact frames released to the TX port (materialize); no port's RX draws
	 * from it */
	struct rte_mempool *tx_pool;
	uint32_t capacity; /**< packets the queue and the delay line must hold (pool size) */
	uint64_t link_bps;
	uint64_t coalesce_ns;		   /**< TX coalescing window (--tx-coalesce) */
	struct rte_ring *pfc_out, *pfc_in; /**< pfc_in: worker 0 only */
	const struct lemu_dir_cfg *cfg;	   /**< first configuration */
	struct emu_stall *sd;		   /**< --stall-detect: its lcore's detector (NULL: off) */
};

/** Allocate the queue and delay line and apply the first config. 0 or -errno. */
int lemu_dir_init(struct lemu_dir *d, const struct lemu_dir_args *a);

/** Free every packet still held and the arrays (after the lcores stopped). */
void lemu_dir_free(struct lemu_dir *d);

/** Control: publish @p c; the data path adopts it at its next poll. */
static inline void
lemu_dir_publish(struct lemu_dir *d, const struct lemu_dir_cfg *c)
{
	__atomic_store_n(&d->want, c, __ATOMIC_RELEASE);
}

/** Control: has the data path adopted @p c? */
static inline bool
lemu_dir_adopted(const struct lemu_dir *d, const struct lemu_dir_cfg *c)
{
	return __atomic_load_n(&d->applied, __ATOMIC_ACQUIRE) == c;
}

/** Control: the config in force. */
static inline const struct lemu_dir_cfg *
lemu_dir_current(const struct lemu_dir *d)
{
	return __atomic_load_n(&d->applied, __ATOMIC_ACQUIRE);
}

/**
 * Data path: one poll at @p now_ns (lemu_now_ns()). Returns the packets moved
 * (0 = idle) and stores in @p next_ns the time something is due next
 * (UINT64_MAX: nothing pending).
 */
uint32_t lemu_dir_poll(struct lemu_dir *d, uint64_t now_ns, uint64_t *next_ns);

/**
 * Counter values of a direction, summed over its @p n workers @p ws (racy but untorn
 * reads; exact once the data path stopped); the bottleneck's counted once.
 */
void lemu_dir_snapshot(const struct lemu_dir *ws, unsigned n, uint64_t out[LEMU_ST__COUNT]);

/** One worker's own counters (no bottleneck, no port): rx_pkts, tx_pkts, in_flight, ... */
void lemu_dir_snapshot_worker(const struct lemu_dir *d, uint64_t out[LEMU_ST__COUNT]);

/** Loss-run histogram over the whole run and every worker: out[i] = runs of i+1 losses. */
void lemu_dir_loss_bursts(const struct lemu_dir *ws, unsigned n,
			  uint64_t out[EMU_LOSS_BURST_BUCKETS]);

/** Worker @p w's seed of the direction seed @p seed (worker 0: the seed itself). */
uint64_t lemu_worker_seed(uint64_t seed, unsigned w);

/** Close open loss runs so they count (call once the data path stopped). */
void lemu_dir_finish(struct lemu_dir *d);

#endif /* LEMU_DIR_H */
