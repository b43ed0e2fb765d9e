/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_cm_chan.h
 * A message channel over an RC QP connected through the rnic's CM endpoint
 * (rnic_cm.h): what perftest's -R opens before its test QPs, and sends its version,
 * parameter and key messages over as RDMA SEND/RECV, one message per SEND
 * (docs/rdma-cm.md). DPDK-free: the owner polls the port (which runs the engine and the
 * CM's timers) and calls rnic_cm_chan_poll().
 *
 * Connection (IBTA Vol. 1 12.9.5 over the RDMA IP CM Service, Annex A11): the active
 * side sends a REQ for RDMA_PS_TCP and the port with the IP CM header, its QPN and the
 * PSN it receives at; the passive side answers the REQ_RCVD with a REP carrying its own;
 * each side sends at the PSN the other named (the active side at the REP's starting PSN,
 * the passive side at the REQ's, as Linux's cm.c) and receives at its own. The values
 * rdma_cm sends are used: CM response timeouts 20, max CM retries 15, retry and RNR
 * retry 7, local ACK timeout 19, hop limit 64.
 */
#ifndef RNIC_CM_CHAN_H
#define RNIC_CM_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include "rnic_cm.h"

#define RNIC_CHAN_MSG_MAX 256u /**< largest message (perftest's are at most 108 bytes) */
#define RNIC_CHAN_RECVS 16u    /**< receives kept posted */

enum rnic_chan_state {
	RNIC_CHAN_IDLE = 0,
	RNIC_CHAN_CONNECTING, /**< REQ sent, or REP sent: waiting for REP / RTU */
	RNIC_CHAN_UP,	      /**< established: messages flow */
	RNIC_CHAN_CLOSED,     /**< DREQ/DREP done, or the peer disconnected */
	RNIC_CHAN_FAILED,     /**< REJ, timeout, or a completion error (see why) */
};

struct roce_pd;
struct roce_cq;
struct roce_qp;
struct roce_mr;

struct rnic_cm_chan {
	struct rnic_cm *ep;
	struct roce_pd *pd;
	struct roce_cq *scq, *rcq;
	struct roce_qp *qp;
	struct roce_mr *mr;
	uint8_t *buf; /**< RNIC_CHAN_RECVS receive slots, then one send slot */
	struct cm_id *id;
	enum rnic_chan_state state;
	int active;
	uint32_t psn; /**< the PSN we receive at (named in our REQ / REP) */
	struct rnic_cm_route route;
	uint8_t resources, depth; /**< responder resources / initiator depth (perftest: 0 / 0) */
	/* received messages not yet taken, in order */
	uint8_t rxq[RNIC_CHAN_RECVS][RNIC_CHAN_MSG_MAX];
	uint32_t rxlen[RNIC_CHAN_RECVS];
	unsigned int rxhead, rxn;
	unsigned int sends_out; /**< SENDs not completed yet */
	uint64_t tx_msgs, rx_msgs;
	char why[160];
};

/** Create the QP, CQs and buffer on @p ep's device; @p psn (24 bits) is ours. 0 or -errno. */
int rnic_cm_chan_create(struct rnic_cm_chan *ch, struct rnic_cm *ep, uint32_t psn);
/** Free everything (after a disconnect, or at once). */
void rnic_cm_chan_destroy(struct rnic_cm_chan *ch);
/** The QPN of the channel's QP. */
uint32_t rnic_cm_chan_qpn(const struct rnic_cm_chan *ch);

/**
 * Active side: a REQ for service RDMA_PS_TCP @p port over route @p r, the IP CM header
 * naming @p src_ip / @p dst_ip (16 bytes each, IPv4-mapped or IPv6) and @p src_port.
 * 0 or -errno.
 */
int rnic_cm_chan_connect(struct rnic_cm_chan *ch, const struct rnic_cm_route *r, uint16_t port,
			 uint16_t src_port);
/** Passive side, on CM_EV_REQ_RCVD @p id with the REQ @p req: accept on this channel. */
int rnic_cm_chan_accept(struct rnic_cm_chan *ch, struct cm_id *id, const struct cm_req *req);
/** Give every CM event of ch->id to the channel (from the rnic_cm_user.event callback). */
void rnic_cm_chan_event(struct rnic_cm_chan *ch, struct cm_id *id, const struct cm_event *ev);
/** Reap completions, queue received messages, repost receives. Returns completions seen. */
unsigned int rnic_cm_chan_poll(struct rnic_cm_chan *ch);
/** Send one message of @p n bytes (1..RNIC_CHAN_MSG_MAX). 0, -ENOTCONN, -EAGAIN, -EMSGSIZE. */
int rnic_cm_chan_send(struct rnic_cm_chan *ch, const void *msg, size_t n);
/**
 * Take the next received message into @p out (@p cap bytes): its length, 0 if none has
 * arrived, or -EMSGSIZE if it is longer than @p cap (it is dropped).
 */
int rnic_cm_chan_recv(struct rnic_cm_chan *ch, void *out, size_t cap);
/** DREQ (ESTABLISHED only); the channel becomes CLOSED on the DREP. 0 or -errno. */
int rnic_cm_chan_disconnect(struct rnic_cm_chan *ch);

#endif
