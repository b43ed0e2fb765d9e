/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rv_cmep.h
 * The connection manager endpoint of rnic0 inside librocewan-verbs.so: one struct cm
 * (lib/cm) wired to the device's QP1 (roce_gsi_set_ops / roce_gsi_send), the port's
 * clock, and timers fired from the progress thread. Every call holds rv.lock.
 */
#ifndef RV_CMEP_H
#define RV_CMEP_H

#include "cm.h"

/** The event sink (rv_cm.c): called under rv.lock from cm_rx/cm_tick/cm_* calls. */
typedef void (*rv_cmep_event_fn)(struct cm_id *id, const struct cm_event *ev);

/** Start the endpoint once (the device must be up): 0 or an errno. Under rv.lock. */
int rv_cmep_start_locked(rv_cmep_event_fn fn);
/** The CM, or NULL before rv_cmep_start_locked. */
struct cm *rv_cmep(void);
/** Fire due CM timers (the progress thread, under rv.lock). */
void rv_cmep_tick_locked(void);

/** Live rdma_cm ids, and QPs made by rdma_create_qp (a program may destroy them with
 * ibv_destroy_qp) (rv_cm.c; --json "rdma_cm"). */
void rv_cm_counts(uint64_t *ids, uint64_t *qps);

#endif
