/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_cm.h
 * The rnic's CM endpoint: one IB connection manager (lib/cm cm.h) on a port's QP1
 * (lib/roce roce_gsi.h), shared by the rnic's built-in perftest modes (-R) and the
 * librdmacm interposer (lib/verbs). It owns:
 *
 *  - the wiring: QP1's MAD handler feeds cm_rx() (CM class MADs; any other class goes to
 *    the user's on_other_mad, else it is left unclaimed and QP1 counts it), the CM's
 *    send_mad goes out through roce_gsi_send() from the GID that matches the peer's
 *    family (index 0 IPv4, 1 IPv6);
 *  - the clock (rnic_now_ns of the port) and the timers: rnic_cm_init() sets port->cm,
 *    and rnic_port_poll() then calls rnic_cm_poll(), which calls cm_tick() when a
 *    deadline is due (and at least every 1 ms);
 *  - address and route resolution (IBTA Vol. 1 Annex A11 for the IP addressing): the
 *    peer's IP is its GID (IPv4 as ::ffff:a.b.c.d), the next hop's MAC comes from the
 *    rnic's ARP / ND (rnic_neigh_resolve), the path MTU is the port's (-m) in the IB
 *    MTU encoding; rnic_cm_path() fills a REQ's primary path from it;
 *  - the "cm" object of --json.
 *
 * DPDK-free apart from the port it is given; one endpoint per port (lcore 0's device
 * with --lcores: QP1's frames go to lcore 0).
 */
#ifndef RNIC_CM_H
#define RNIC_CM_H

#include <stdint.h>

#include "cm.h"
#include "roce_gsi.h"

struct rnic_port;
struct rw_json;
struct rnic_cm;

/** The endpoint's user: CM events and the MADs of other classes. */
struct rnic_cm_user {
	/** A CM event on @p id (cm.h's rules: the callback may call back into ep->cm). */
	void (*event)(void *ctx, struct rnic_cm *ep, struct cm_id *id, const struct cm_event *ev);
	/** Optional: a MAD of another class (e.g. vendor). Return 0 if taken, else unclaimed. */
	int (*on_other_mad)(void *ctx, struct rnic_cm *ep, const uint8_t *mad,
			    const struct roce_gsi_src *src);
};

/** The endpoint's own counters (the CM's are ep->cm.cnt). */
struct rnic_cm_counters {
	uint64_t rx_cm;		     /**< CM class MADs handed to cm_rx() */
	uint64_t rx_other_taken;     /**< other classes taken by on_other_mad */
	uint64_t rx_other_unclaimed; /**< other classes nobody took (QP1 counts "unclaimed") */
	uint64_t tx_no_gid;	     /**< a MAD to a family without a local GID (no --ip6) */
	uint64_t ticks;		     /**< cm_tick() calls */
};

/** A resolved route to a peer. */
struct rnic_cm_route {
	uint8_t sgid[16];	 /**< our GID (IPv4-mapped or IPv6) */
	unsigned int sgid_index; /**< 0 (IPv4) or 1 (IPv6) */
	uint8_t dgid[16];	 /**< the peer's GID */
	uint8_t mac[6];		 /**< the next hop's MAC */
	uint8_t path_mtu;	 /**< IB MTU encoding (1 = 256 ... 5 = 4096) */
	uint32_t mtu;		 /**< the same in bytes */
};

struct rnic_cm {
	struct cm cm; /**< the connection manager (listen/connect/accept ... on it) */
	struct rnic_port *port;
	struct roce_dev *dev;
	const struct rnic_cm_user *user;
	void *user_ctx;
	uint64_t next_tick; /**< when rnic_cm_poll() calls cm_tick() next */
	struct rnic_cm_counters cnt;
};

/**
 * Start the endpoint on @p port (its device's QP1 handler is replaced): comm IDs and
 * TIDs from @p seed, the CA GUID from the port's MAC (EUI-64). @p ep is large: embed
 * it or allocate it once. Returns 0.
 */
int rnic_cm_init(struct rnic_cm *ep, struct rnic_port *port, uint64_t seed,
		 const struct rnic_cm_user *user, void *user_ctx);
/** Give QP1 back its no-CM handler. IDs still in use are not announced. */
void rnic_cm_fini(struct rnic_cm *ep);
/** From the poll loop: fire the CM's timers when due. */
void rnic_cm_poll(struct rnic_cm *ep);
/** Re-arm the timer check now (after cm_connect/cm_accept/... armed a new timer). */
static inline void
rnic_cm_kick(struct rnic_cm *ep)
{
	ep->next_tick = 0;
}
/** The endpoint's clock (ns). */
uint64_t rnic_cm_now(const struct rnic_cm *ep);

/**
 * Route to the peer whose address is @p ip (16 bytes: IPv4-mapped ::ffff:a.b.c.d, or
 * IPv6): 0, or -EAGAIN while ARP/ND is under way (call again; at most one request per
 * 100 ms goes out), or -EAFNOSUPPORT (IPv6 without --ip6).
 */
int rnic_cm_resolve(struct rnic_cm *ep, const uint8_t ip[16], struct rnic_cm_route *r);
/** A REQ's primary path for @p r (GIDs, hop limit 64, local ACK timeout @p ack_timeout). */
void rnic_cm_path(const struct rnic_cm_route *r, uint8_t ack_timeout, struct cm_path *p);
/** The CM destination (the peer's QP1) of @p r. */
void rnic_cm_dest(const struct rnic_cm_route *r, struct cm_dest *d);

/** IB MTU encoding of @p bytes (256 -> 1 ... 4096 -> 5; below 256: 1). */
uint8_t rnic_cm_ib_mtu(uint32_t bytes);

/** The "cm" object of --json: the CM's counters and the endpoint's. */
void rnic_cm_json(struct rw_json *w, const struct rnic_cm *ep);

#endif
