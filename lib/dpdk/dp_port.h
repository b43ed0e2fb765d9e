/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file dp_port.h
 * DPDK plumbing shared by rnic, lossy-emu and pfc-relay: port bring-up, mempool
 * sizing, idle back-off, signal handling. The only place the three apps call
 * rte_eth_dev_configure & co.
 */
#ifndef DP_PORT_H
#define DP_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

/** Port configuration; zeroed fields take the defaults shown. */
struct dp_port_cfg {
	uint16_t port_id;
	uint16_t nb_queues;	  /**< RX = TX queues, one per lcore (1) */
	uint16_t nb_rxd;	  /**< RX descriptors (1024) */
	uint16_t nb_txd;	  /**< TX descriptors (1024) */
	uint32_t mtu;		  /**< L3 MTU to request (0: leave the PMD's default) */
	bool promisc;		  /**< promiscuous mode (a bump-in-the-wire needs it) */
	struct rte_mempool *pool; /**< RX mempool (required) */
};

/** What dp_port_start() found out about the port. */
struct dp_port_info {
	char name[RTE_ETH_NAME_MAX_LEN];
	char driver[32];
	struct rte_ether_addr mac;
	uint32_t speed_mbps; /**< reported link speed (virtual PMDs report a fixed 10G) */
	uint32_t max_rx_pktlen;
	/**
	 * Frames this long or longer may have been cut by the port (0: it never cuts).
	 * DPDK 22.11's af_packet PMD copies at most its ring frame (devarg framesz) less
	 * the kernel's TPACKET_V2 header of each frame and hands a longer frame on cut,
	 * with no flag: net_frame_rx_cut() tells such a frame by its IP length.
	 */
	uint32_t rx_cut_len;
	uint16_t mtu;
};

/**
 * Configure, set up queues and start a port. On error returns a negative errno
 * and writes one line naming the port, the step and the reason into @p err.
 */
int dp_port_start(const struct dp_port_cfg *cfg, struct dp_port_info *info, char *err,
		  size_t errlen);

/** Stop and close a port (ignores errors: used on the way out). */
void dp_port_stop(uint16_t port_id);

/**
 * The way out of a DPDK program: stop and close every port, then rte_eal_cleanup(),
 * except when one of them was a net_memif port. Closing a memif port leaves its control
 * channel's interrupt callback to be unregistered later by EAL's interrupt thread; when
 * the peer's disconnect message came in at that moment, the thread ran the callback on
 * memory rte_eal_cleanup() was unmapping (SIGSEGV in rte_intr_fd_get() on
 * eal-intr-thread, main thread in rte_mem_unmap(): an rnic read_bw exit, 1 in 3).
 * The same race is in the close itself when both ends close at once (SIGSEGV after
 * the cleanup was left out: write_bw over memif). So a memif client (devarg
 * role=client) first waits up to 500 ms for its server to close (link down: the
 * interrupt thread took the channel down itself), then closes; and with memif the
 * process exits without the cleanup (DPDK 22.11 has no way to wait for that thread):
 * the ports are closed (a memif server's socket file is removed) and the kernel frees
 * the rest.
 */
void dp_eal_cleanup(void);

/**
 * dp_eal_cleanup() in two halves, for a program that stops and closes its own ports
 * (lossy-emu, pfc-relay): call this before the first stop; it returns true when a port is
 * net_memif, after a memif client has let its server close first (as above).
 */
bool dp_memif_quiesce(void);

/** The second half: after every port is closed, rte_eal_cleanup() unless @p memif. */
void dp_eal_finish(bool memif);

/**
 * Create a packet mempool of at least @p n mbufs with @p data_room bytes of data
 * each (RTE_PKTMBUF_HEADROOM added), on the caller's socket; @p err as above.
 */
struct rte_mempool *dp_pool_create(const char *name, uint32_t n, uint16_t data_room, char *err,
				   size_t errlen);

/**
 * dp_pool_create() with a per-lcore cache of @p cache mbufs (at most
 * RTE_MEMPOOL_CACHE_MAX_SIZE; dp_pool_create() takes 256, or 32 for small pools).
 */
struct rte_mempool *dp_pool_create_cache(const char *name, uint32_t n, uint16_t data_room,
					 uint32_t cache, char *err, size_t errlen);

/** EAL memory one mbuf of @p data_room bytes of data takes, mempool headers included. */
uint64_t dp_mbuf_footprint(uint32_t data_room);

/**
 * After an allocation of @p need_bytes of EAL memory failed: write one clause
 * into @p buf naming the EAL option that gives that memory in the memory mode
 * the EAL runs in. With --no-huge the heap is fixed by -m: "give EAL more
 * with -m N". With hugepages (DPDK's default, dynamic mode) the heap grows
 * from the free hugepages of the host on demand, so the clause names how many
 * are free and how many the need takes (scripts/hugepages.sh reserves them),
 * and --no-huge -m N as the way out.
 */
void dp_mem_advice(uint64_t need_bytes, char *buf, size_t len);

/**
 * Idle back-off for poll loops: after @c spins empty polls, sleep; sleeps grow
 * from @c min_us to @c max_us while idle and reset on the first packet. Several
 * DPDK processes can then share two cores. busy_poll disables sleeping.
 */
struct dp_backoff {
	uint32_t idle;
	uint32_t spins;
	uint32_t sleep_us;
	uint32_t min_us;
	uint32_t max_us;
	bool busy_poll;
	uint64_t sleeps;   /**< counter: how often the loop slept */
	uint32_t slept_us; /**< the sleep the last step asked for (0: it did not sleep) */
};

void dp_backoff_init(struct dp_backoff *b, bool busy_poll);
/** Call once per loop iteration with the work done (packets moved). */
void dp_backoff_step(struct dp_backoff *b, uint32_t work);

/**
 * dp_backoff_step() that never sleeps past @p next_ns (the loop's next timer:
 * a release, a pacing slot, a pause expiry), @p now_ns and @p next_ns on the
 * caller's clock (UINT64_MAX: no timer). Within DP_SPIN_NS of the deadline it
 * keeps polling; otherwise it wakes DP_WAKE_NS early, because nanosleep
 * overshoots.
 */
void dp_backoff_until(struct dp_backoff *b, uint32_t work, uint64_t now_ns, uint64_t next_ns);

#define DP_SPIN_NS 30000u /* closer than this to the next timer: do not sleep */
#define DP_WAKE_NS 20000u /* wake this early: nanosleep overshoots */

/** Set by SIGINT/SIGTERM once dp_signals_install() ran. */
extern volatile bool dp_quit;
void dp_signals_install(void);

/**
 * rte_eal_init() on an app's arguments before its "--", then dp_pdump_init()
 * and dp_signals_install(). Returns 0, or -1 with "EAL initialisation failed:
 * REASON" in @p err.
 */
int dp_eal_start(int eal_argc, char **argv, char *err, size_t errlen);

/**
 * DPDK's packet-capture framework (rte_pdump_init), right after rte_eal_init():
 * a secondary process (Debian's dpdk-dumpcap --file-prefix=PREFIX) can then
 * capture this process's ports, RX and TX, while it runs. It works only in a
 * primary with a shared configuration: hugepages, and neither --in-memory nor
 * --no-huge nor --no-shconf (docs/capture.md). Without one, the EAL has no
 * multi-process channel (rte_mp_action_register says ENOTSUP) and this does
 * nothing; it returns true when a capture can attach. A failure (no memory for
 * the framework's statistics) is a warning on stderr, never fatal: the program
 * runs, only uncapturable. dp_eal_finish() undoes it.
 */
bool dp_pdump_init(void);

#endif /* DP_PORT_H */
