/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rv_int.h
 * Inside the verbs library (librocewan-verbs.so, docs/verbs.md): the one
 * device of the process (rnic0: EAL, port 0, the roce_dev engine and its
 * progress thread, rv_dev.c) and the verbs objects laid out as rdma-core 44's
 * libibverbs lays them out (rv_verbs.c).
 */
#ifndef RV_INT_H
#define RV_INT_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "rnic_config.h"
#include "rnic_port.h"

#define RV_EXPORT __attribute__((visibility("default")))

/** The process's rnic0. Every engine call holds @c lock. */
struct rv_dev {
	pthread_mutex_t lock;
	volatile pthread_t owner; /**< the thread holding @c lock (0: none): signal handling */
	bool configured;	  /**< the environment parsed (rv_dev_config) */
	bool up;		  /**< EAL, port and engine running */
	bool forked;		  /**< this is a child of fork(): the device stayed in the parent */
	int start_err;		  /**< errno of a failed start (0: not tried or fine) */
	char err[512];		  /**< why the configuration or the start failed */
	struct rnic_params prm;
	struct rnic_port port;
	pthread_t thread;	       /**< EAL's main lcore, then the progress loop */
	volatile bool stop;	       /**< the progress thread leaves */
	volatile uint64_t app_poll_ns; /**< last time an application call advanced the engine */
	uint64_t progress_polls;       /**< the progress thread's polls that moved frames */
	uint64_t progress_sleeps;      /**< its idle sleeps */
	/* which entry points the program used (--json "verbs_calls"), counted under the lock */
	uint64_t calls_post_send;   /**< ibv_post_send (context ops) */
	uint64_t calls_wr_complete; /**< ibv_wr_complete (struct ibv_qp_ex) */
	uint64_t calls_post_recv;
	uint64_t calls_poll_cq;
	uint64_t calls_cq_events; /**< completion events written to a channel */
	uint64_t guid;		  /**< node GUID (EUI-64 from the port MAC) */
	char json[300];		  /**< --json FILE with %p expanded ("" none) */
};

extern struct rv_dev rv;

/**
 * Parse the configuration from the environment (ROCEWAN_VERBS_ARGS, ...)
 * once. 0, or an errno with the reason in rv.err.
 */
int rv_dev_config(void);
/** Start EAL, the port and the engine once (rv_dev_config first). 0 or an errno. */
int rv_dev_start(void);
/** The engine's cq_event op (rv_verbs.c): a CQ armed by req_notify got a completion. */
void rv_cq_event(void *ctx, struct roce_cq *cq);

/*
 * The QP seam of rnic0, for a connection layer in lib/verbs (a librdmacm interposer): the
 * same code as ibv_create_qp / ibv_create_qp_ex and ibv_modify_qp on an rnic0 object,
 * without the dispatch to the real libibverbs.
 */
/** True if @p c is rnic0's context (an object of it is rnic0's). */
bool rv_is_rnic0(const struct ibv_context *c);
/** Create an RC / UC / UD QP on rnic0's PD @p pd; @p send_ops: IBV_QP_EX_WITH_* (0: none).
 * ia->cap gets the capacities granted. NULL with errno on failure. */
struct ibv_qp *rv_qp_create(struct ibv_pd *pd, struct ibv_qp_init_attr *ia, uint64_t send_ops);
/** ibv_modify_qp on rnic0 (IBTA Vol. 1 10.3 transitions, lib/roce/roce_qp.c). To RTR with
 * IBV_QP_AV on RC/UC it first resolves the peer's MAC (ARP / ND, up to 3 s: EHOSTUNREACH).
 * 0 or a positive errno. */
int rv_qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask);

/** An address vector without a GRH but with a DLID becomes the GRH of the peer at that
 * host part of rnic0's /16 (the port's LID is the low 16 bits of --ip). false: left as
 * it was (no DLID, a multicast LID, or rnic0 has no LID). */
bool rv_av_from_lid(struct ibv_ah_attr *ah);

/** True while the calling thread is inside EAL's initialisation (plugins may call verbs). */
bool rv_in_eal(void);

static inline void
rv_lock(void)
{
	pthread_mutex_lock(&rv.lock);
	rv.owner = pthread_self();
}

static inline void
rv_unlock(void)
{
	rv.owner = 0;
	pthread_mutex_unlock(&rv.lock);
}

/** One engine step from an application call (RX, timers, TX), under the lock. */
unsigned int rv_progress_locked(void);

/** Resolve the MAC of the next hop to @p gid (ARP / ND, up to 3 s), under the lock. 0 or -errno. */
int rv_resolve_locked(const union ibv_gid *gid, uint8_t mac[6]);

#endif /* RV_INT_H */
