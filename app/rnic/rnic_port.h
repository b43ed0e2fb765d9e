/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_port.h
 * The rnic's data path on one DPDK port: receive bursts dispatched to ARP,
 * ICMP echo, MAC control (PFC/PAUSE) or the RoCEv2 engine; frames from the
 * engine batched into TX bursts; peers' MACs resolved by ARP. Every frame that
 * is not handled is counted by reason.
 *
 * The port's state and counters, and the API the rest of the rnic uses. The
 * header needs no DPDK (mbufs, mempools and rings are opaque here), so the
 * DPDK-free core (rnic_core.h) and its unit test share the struct. Who does
 * what:
 *   rnic_rx.c        frame classification and dispatch (core)
 *   rnic_neigh.c     ARP, ICMP echo, IPv6 ND and ICMPv6 echo (core)
 *   rnic_pfc.c       PFC obeyed and sent: the decisions (core)
 *   rnic_steer.c     --lcores: which lcore owns a frame (core)
 *   rnic_counters.c  port counters: sum, text, JSON (core)
 *   rnic_poll.c      the poll loop: RX bursts, lcore rings, idle back-off (DPDK)
 *   rnic_port.c      clock, TX batching, the engine's ops table (DPDK)
 */
#ifndef RNIC_PORT_H
#define RNIC_PORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "net_arp.h"
#include "net_nd.h"
#include "pfc.h"
#include "pfc_gen.h"
#include "pfc_tx.h"
#include "roce_verbs.h"

struct dp_backoff;
struct rte_mbuf;
struct rte_mempool;
struct rte_ring;

#define RNIC_BURST 32
#define RNIC_TX_TRIES 8 /**< rte_eth_tx_burst calls per flush before the rest waits */
#define RNIC_RX_EARLY (4 * RNIC_BURST) /**< frames the pre-TX RX check may set aside */

/* X(name, help): port-level counters beside the engine's own (roce_stats.h). */
#define RNIC_PORT_COUNTERS(X)                                                                      \
	X(polls, "data-path poll iterations")                                                      \
	X(poll_gap_max_ns, "longest time between two polls (ns): back-off sleeps, and the stalls " \
			   "a loaded host imposes")                                                \
	X(poll_busy_max_ns, "longest single poll (ns)")                                            \
	X(rx_frames, "frames received on the port")                                                \
	X(rx_bursts, "RX bursts that returned frames (rx_frames / rx_bursts = mean burst)")        \
	X(rx_roce, "RoCEv2 frames handed to the engine")                                           \
	X(rx_arp_req, "ARP requests for our address answered")                                     \
	X(rx_arp_reply, "ARP replies learned")                                                     \
	X(rx_arp_other, "ARP frames not for us")                                                   \
	X(rx_icmp_echo, "ICMP echo requests answered")                                             \
	X(rx_icmp6_echo, "ICMPv6 echo requests answered (--ip6)")                                  \
	X(rx_pfc, "PFC / PAUSE frames received")                                                   \
	X(rx_not_for_us, "IPv4/IPv6 frames to another address or protocol")                        \
	X(rx_ip_malformed, "IPv4/IPv6 frames cut inside the IP or UDP header, with a wrong "       \
			   "version nibble or an IHL below 5 or past the frame")                   \
	X(rx_other, "frames of another EtherType")                                                 \
	X(rx_cut, "frames the port cut (longer than its af_packet ring frame: the IP length "      \
		  "says more than arrived), dropped")                                              \
	X(rx_multiseg, "multi-segment frames dropped (MTU larger than the mbufs)")                 \
	X(rx_linger, "duplicate requests re-acknowledged after rc_pingpong ended (the peer "       \
		     "resent a message whose last ACK was lost: no closing handshake, the rnic "   \
		     "lingers)")                                                                   \
	X(tx_frames, "frames sent")                                                                \
	X(tx_bursts, "TX flushes that sent frames (tx_frames / tx_bursts = mean burst)")           \
	X(tx_drop_nombuf, "frames dropped: mempool empty")                                         \
	X(tx_drop_full, "control frames (ARP, ND, ICMP, PFC) dropped: TX ring full (RoCE frames "  \
			"are held instead)")                                                       \
	X(tx_ring_full, "flushes that left frames batched because the TX ring was full (sent "     \
			"later, never dropped)")                                                   \
	X(tx_ring_held, "times the engine was told to hold a frame because the TX ring was full "  \
			"(back-pressure)")                                                         \
	X(arp_requests_sent, "ARP requests sent to resolve peers")                                 \
	X(rx_nd_solicit, "IPv6 neighbour solicitations for our address answered")                  \
	X(rx_nd_advert, "IPv6 neighbour advertisements learned")                                   \
	X(rx_nd_other, "ICMPv6 frames not handled (other types, not for us, invalid)")             \
	X(nd_solicits_sent, "IPv6 neighbour solicitations sent to resolve peers")                  \
	X(pfc_rx_xoff, "PFC frames that paused or re-paused a lossless priority")                  \
	X(pfc_rx_xon, "PFC frames that resumed a lossless priority (time 0)")                      \
	X(pfc_rx_ignored, "PFC/PAUSE frames ignored (lossy priorities only, PAUSE, --pfc off)")    \
	X(pfc_rx_bad, "MAC control frames that are not valid PFC/PAUSE")                           \
	X(pfc_pauses, "pauses started (a priority went from running to paused)")                   \
	X(pfc_rx_early, "PFC frames found by the RX check before a TX burst")                      \
	X(pfc_fanout, "--lcores: PFC frames handed to the other lcores' transmit gates")           \
	X(tx_paused_ns, "time the rnic's own priority was paused by PFC (ns)")                     \
	X(tx_pfc_held, "times the engine was told to hold a frame (its priority paused)")          \
	X(tx_rx_behind_held, "lossless frames held because the pre-TX RX check had no room left")  \
	X(pfc_overshoot_bytes,                                                                     \
	  "data bytes of a paused priority handed to the PMD after the XOFF was read (committed)") \
	X(pfc_overshoot_frames,                                                                    \
	  "data frames of a paused priority handed to the PMD after the XOFF was read")            \
	X(pfc_overshoot_max_bytes, "largest overshoot of a single pause (bytes)")                  \
	X(pfc_overshoot_max_frames, "largest overshoot of a single pause (frames)")                \
	X(pfc_xoff_window_bytes,                                                                   \
	  "data handed to the PMD between the RX check before an XOFF and the one that read it")   \
	X(pfc_xoff_window_max_frames, "largest such window of a single pause (frames)")            \
	X(pfc_sent_xoff, "--pfc-xoff: XOFF frames sent (the receive backlog reached --pfc-xoff)")  \
	X(pfc_sent_refresh,                                                                        \
	  "--pfc-xoff: XOFF frames re-sent at half the pause time while still behind")             \
	X(pfc_sent_xon, "--pfc-xoff: XON frames sent (the backlog fell to --pfc-xon)")             \
	X(rx_backlog_max, "--pfc-xoff: largest receive backlog seen (frames)")                     \
	X(rx_slow_sleeps, "--slow-rx-us: sleeps after an RX burst (test aid)")                     \
	X(rx_handoff,                                                                              \
	  "--lcores: frames from this lcore's RX queue handed to another lcore's ring")            \
	X(rx_handoff_drop, "--lcores: frames dropped because the owner's ring was full")           \
	X(rx_from_ring, "--lcores: frames other lcores handed to this one")

struct rnic_port_counters {
#define RNIC_CNT_FIELD(name, help) uint64_t name;
	RNIC_PORT_COUNTERS(RNIC_CNT_FIELD)
#undef RNIC_CNT_FIELD
};

#define RNIC_MAX_LCORES 16
#define RNIC_QPN_SPAN                                                                              \
	0x1000u /**< QPNs per lcore's device: lcore l owns ROCE_FIRST_QPN + l * span .. */

/**
 * --lcores > 1: one rnic_port (RX/TX queue, roce_dev) per lcore over the same
 * DPDK port. A RoCE frame belongs to the lcore whose QPN range holds its BTH
 * destination QPN; every other frame (ARP, ICMP, ND, PFC) to lcore 0. A frame
 * read from another lcore's queue goes through the owner's ring.
 */
struct rnic_steer {
	unsigned int n; /**< lcores */
	struct rnic_port *port[RNIC_MAX_LCORES];
	struct rte_ring *ring[RNIC_MAX_LCORES]; /**< frames for lcore l (MP enqueue, SC dequeue) */
	/**
	 * false while only the main lcore runs (bring-up): then lcore 0's poll
	 * also polls the other lcores' queues, rings and engines itself.
	 */
	volatile bool running;
};

struct rnic_cm;

struct rnic_port {
	uint16_t port_id;
	/** Called after every rnic_port_poll() when set (the --json CC trace, rnic_main.c). */
	void (*tick)(void *arg);
	void *tick_arg;
	/** The port's CM endpoint (rnic_cm.h), its timers polled by rnic_port_poll(); NULL: none */
	struct rnic_cm *cm;
	struct rnic_steer *steer; /**< NULL with one lcore */
	unsigned int lcore_idx;	  /**< index in steer */
	uint16_t queue;
	uint32_t rx_cut_len; /**< the port may cut frames this long (dp_port_info), 0: never */
	struct rte_mempool *pool;
	struct roce_dev *dev;
	uint8_t mac[6];
	uint32_t ip; /**< host order */
	uint8_t prefix;
	uint32_t gw;  /**< next hop, 0 = none */
	int vlan_tci; /**< -1 untagged */
	struct net_neigh neigh;
	uint64_t last_arp_ns;
	uint8_t ip6[16]; /**< --ip6 (GID index 1), valid if has_ip6 */
	bool has_ip6;
	uint8_t ip6_prefix; /**< on-link prefix of ip6 */
	uint8_t gw6[16];    /**< --gw6, valid if has_gw6 */
	bool has_gw6;
	struct net_neigh6 neigh6;
	uint64_t last_ns_ns;
	struct rte_mbuf *tx[RNIC_BURST];
	unsigned int ntx;
	uint8_t txprio[RNIC_BURST]; /**< priority of each batched RoCE frame, 0xff: control frame */
	uint16_t txlen[RNIC_BURST];
	struct rte_mbuf *tx_lent; /**< mbuf lent to the engine by ops->tx_buf, not sent yet */
	/* 802.1Qbb (docs/pfc.md): received PFC holds the engine's frames of a paused priority */
	struct pfc_classifier pfc_cls; /**< priority of a RoCE frame (PCP with --vlan, else DSCP) */
	struct pfc_tx pfc;
	uint8_t own_prio; /**< the priority of the rnic's RoCE traffic */
	/* --pfc-xoff: the rnic sends PFC when its own receive path falls behind (docs/pfc.md) */
	struct pfc_gen pfc_gen;
	bool pfc_send;
	uint8_t pfc_send_mask; /**< priorities the rnic's XOFF/XON name (--lossless) */
	bool rxq_count;	       /**< the PMD reports its RX queue's fill level */
	uint32_t rx_run;       /**< frames read in back-to-back full RX bursts */
	uint32_t rx_level_pub; /**< --lcores: this lcore's backlog, read by lcore 0 */
	uint32_t slow_rx_us;   /**< --slow-rx-us (test aid) */
	struct rte_mbuf
	    *rx_early[RNIC_RX_EARLY]; /**< frames taken by the RX check before a TX burst */
	unsigned int nrx_early;
	uint64_t last_poll_end_ns; /**< for poll_gap_max_ns */
	struct rnic_port_counters cnt;
};

/**
 * Set up PFC on the port: obey received PFC for the @p lossless priorities
 * (bit n = priority n) when @p obey, quanta at @p link_bps. Classification:
 * VLAN PCP when the port tags (vlan_tci >= 0), else DSCP >> 3 (pfc_classify).
 */
void rnic_port_pfc_init(struct rnic_port *p, bool obey, uint8_t lossless, uint64_t link_bps,
			uint8_t own_prio);

/**
 * Send PFC for the @p mask priorities when the receive backlog reaches @p xoff
 * frames (XON at @p xon), each XOFF asking for @p quanta at @p link_bps. The
 * backlog is rte_eth_rx_queue_count() where the PMD has it, else the frames read
 * in back-to-back full RX bursts. With --lcores, lcore 0 sends for the
 * largest backlog of all lcores. 0, or -EINVAL if xon >= xoff.
 */
int rnic_port_pfc_send_init(struct rnic_port *p, uint32_t xoff, uint32_t xon, uint16_t quanta,
			    uint64_t link_bps, uint8_t mask);

/** The roce_dev_ops the engine uses, with ctx = struct rnic_port *. */
extern const struct roce_dev_ops rnic_port_ops;

/** The lcore index that owns RoCE frames to @p qpn (0 for QPNs outside every range). */
unsigned int rnic_steer_owner(const struct rnic_steer *s, uint32_t qpn);

/** Add the port counters of @p p to @p sum (field by field). */
void rnic_port_counters_add(struct rnic_port_counters *sum, const struct rnic_port *p);

/*
 * A full RX burst means the ring still held at least a burst: the rnic has not
 * caught up. Frames read in back-to-back full bursts are a lower bound of the
 * backlog for PMDs that cannot report their ring's fill level.
 */
static inline void
rnic_port_rx_run_note(struct rnic_port *p, unsigned int got, unsigned int asked)
{
	p->rx_run = got == asked ? p->rx_run + got : got;
}

/**
 * --lcores: a PFC frame pauses the whole port, so every lcore's transmit gate
 * must see it. The lcore that read it hands the same mbuf (reference counted,
 * read-only) to every other lcore's ring; each applies it and frees its
 * reference. Frames taken from a ring are never handed on again.
 */
void rnic_port_pfc_fanout(struct rnic_port *p, struct rte_mbuf *m);

/** --slow-rx-us (test aid): a receive path that falls behind, after every read that got frames */
void rnic_port_slow_rx(struct rnic_port *p, unsigned int got);

/** One iteration: RX burst, dispatch, engine timers, TX flush. Returns frames moved. */
unsigned int rnic_port_poll(struct rnic_port *p);

/** Send any batched TX frames now. */
void rnic_port_flush(struct rnic_port *p);

/** Nanoseconds since boot from the TSC (lib/dpdk dp_clock; one clock per process). */
uint64_t rnic_now_ns(const struct rnic_port *p);

/**
 * Idle back-off for loops that drive the port: like dp_backoff_step(), but a
 * sleep never runs past the engine's next timer (pacing, ACK, retransmit), so
 * a rate-limited QP keeps its rate while the loop sleeps between packets.
 */
void rnic_port_idle(struct rnic_port *p, struct dp_backoff *bo, unsigned int work);

/**
 * Resolve the MAC of @p ip (host order): sends ARP requests (every 100 ms) and
 * polls the port until answered or @p timeout_ms passes. 0 or -ETIMEDOUT.
 */
int rnic_port_resolve(struct rnic_port *p, uint32_t ip, uint8_t mac[6], unsigned int timeout_ms);

/**
 * The same for an IPv6 peer (always on-link): Neighbor Solicitations every
 * 100 ms until an advertisement arrives. Needs has_ip6. 0 or -ETIMEDOUT.
 */
int rnic_port_resolve6(struct rnic_port *p, const uint8_t ip6[16], uint8_t mac[6],
		       unsigned int timeout_ms);

/**
 * Print the port counters that are nonzero, then the device's receive-dispatch
 * drops (rx_drop_*: counted before a QP is known, so in no QP's counters).
 */
void rnic_port_print_counters(const struct rnic_port *p, FILE *f);

struct rw_json;
/** Write "device_counters": every device-wide RoCE counter (roce_dev_stats). */
void rnic_port_json_device(const struct rnic_port *p, struct rw_json *w);

#endif /* RNIC_PORT_H */
