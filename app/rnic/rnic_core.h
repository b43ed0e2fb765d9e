/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_core.h
 * The rnic's DPDK-free core: what a received frame is and who handles it, the
 * neighbour protocols (ARP, IPv6 ND, ICMP/ICMPv6 echo), the PFC decisions, the
 * lcore that owns a frame, and the port counters. The DPDK shell (rnic_poll.c,
 * rnic_port.c) moves mbufs and calls in here; the unit test
 * (tests/unit/rnic/test_rnic_core.c) drives the same functions without EAL.
 *
 * Two functions are the core's way out, supplied by the shell (rnic_port.c)
 * or by a test: rnic_now_ns() (rnic_port.h), the clock, and
 * rnic_port_tx_ctrl(), which queues a control frame.
 */
#ifndef RNIC_CORE_H
#define RNIC_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "net_frame.h"
#include "pfc_gen.h"
#include "rnic_port.h"

/* ---- supplied by the shell ---- */

/**
 * Queue a control frame (ARP, ND, ICMP, PFC: priority 0xff, never paused by
 * PFC) for TX. 0, or a negative errno if it could not be queued (counted by
 * the shell).
 */
int rnic_port_tx_ctrl(struct rnic_port *p, const uint8_t *frame, size_t len);

/* ---- frame classification and dispatch (rnic_rx.c) ---- */

/**
 * lib/net's classifier under the rnic's L2 rule: a frame is the rnic's only
 * untagged or with one 802.1Q tag (what it sends); any other tag stack is
 * NET_FRAME_OTHER.
 */
enum net_frame_kind rnic_classify(const uint8_t *f, size_t len, struct net_frame *fr);

/**
 * Handle one received frame at @p now: ARP, ICMP echo, ND / ICMPv6 and PFC are
 * answered or applied here; everything else is counted by reason. Returns true
 * for a RoCEv2 frame (UDP 4791), which the caller hands to the engine; the
 * engine checks the rest. An ICMP echo request is answered in place (@p f is
 * rewritten).
 */
bool rnic_rx_frame(struct rnic_port *p, uint8_t *f, size_t len, uint64_t now);

/**
 * rnic_rx_frame() for a frame rnic_classify() already classified into @p fr:
 * the poll loop classifies each frame once, and a RoCEv2 frame's @p fr goes on
 * to the engine with it (roce_dev_rx_burst_classified).
 */
bool rnic_rx_classified(struct rnic_port *p, uint8_t *f, size_t len, const struct net_frame *fr,
			uint64_t now);

/* ---- neighbours: ARP, ND, echo (rnic_neigh.c) ---- */

/** An ARP frame: answer a request for our address, learn (RFC 826 merge step), count. */
void rnic_neigh_arp_rx(struct rnic_port *p, const uint8_t *f, size_t len);

/** An IPv4 ICMP frame: answer an echo request to our address in place. */
void rnic_neigh_icmp_rx(struct rnic_port *p, uint8_t *f, size_t len);

/** An ICMPv6 frame: learn from an NA, answer an NS or echo request for our address. */
void rnic_neigh_icmp6_rx(struct rnic_port *p, uint8_t *f, size_t len);

/** Next hop of an IPv4 peer (host order): itself on-link, else the gateway. */
uint32_t rnic_neigh_next_hop(const struct rnic_port *p, uint32_t ip);

/** Send one ARP request for @p target (host order); counted when queued. */
void rnic_neigh_arp_request(struct rnic_port *p, uint32_t target);

/**
 * The MAC of the next hop toward @p gid (IPv4-mapped or IPv6): 0 from the
 * neighbour tables, else -EAGAIN after at most one ARP request / Neighbor
 * Solicitation per 100 ms; -EAFNOSUPPORT for IPv6 without --ip6.
 */
int rnic_neigh_resolve(struct rnic_port *p, const uint8_t gid[16], uint8_t mac[6]);

/* ---- PFC (rnic_pfc.c) ---- */

/** A MAC control frame at @p now: PFC updates the pause timers (PAUSE is ignored). */
void rnic_pfc_rx(struct rnic_port *p, const uint8_t *f, size_t len, uint64_t now);

/** Copy the PFC meter's counters into the port's (what telemetry and --json read). */
void rnic_pfc_sync_counters(struct rnic_port *p, uint64_t now);

/**
 * --pfc-xoff at @p now with this lcore's receive backlog @p level (frames).
 * With --lcores, lcore 0 decides for the largest backlog the lcores published
 * and the others only publish theirs. Returns the length of the PFC frame
 * written into @p f (XOFF, refresh or XON, *@p ev says which) that must go out
 * at once, or 0.
 */
int rnic_pfc_send_poll(struct rnic_port *p, uint64_t now, uint32_t level, uint8_t *f, size_t cap,
		       enum pfc_gen_event *ev);

/** Count the PFC frame rnic_pfc_send_poll() built once it is sent. */
void rnic_pfc_send_count(struct rnic_port *p, enum pfc_gen_event ev);

/* ---- --lcores steering (rnic_steer.c) ---- */

/**
 * The lcore a frame classified by rnic_classify() belongs to: a RoCEv2 frame
 * with a BTH by its destination QPN, every other frame lcore 0 (ARP, ICMP, ND,
 * PFC).
 */
unsigned int rnic_steer_frame(const struct rnic_steer *s, const struct net_frame *fr);

#endif /* RNIC_CORE_H */
