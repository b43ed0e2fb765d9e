/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_gsi.h
 * QP1 on the rnic: every device's GSI (lib/roce roce_gsi.h) gets its initial PSN from
 * --seed and, until a connection manager registers, a handler that counts each MAD
 * and leaves it unclaimed (no CM: counted as the drop "unclaimed"). The counters go
 * to --json ("gsi") and the Prometheus metrics (rocewan_rnic_gsi_*). DPDK-free.
 */
#ifndef RNIC_GSI_H
#define RNIC_GSI_H

#include <stdint.h>

#include "roce_gsi.h"

struct roce_dev;
struct rw_json;
struct rw_prom;

/** QP1's first PSN for --seed @p seed (24 bits; the same seed, the same PSN). */
uint32_t rnic_gsi_psn(uint64_t seed);
/** Give @p dev's QP1 its PSN and the no-CM handler. */
void rnic_gsi_attach(struct roce_dev *dev, uint64_t seed);
/** Give @p dev's QP1 the no-CM handler back (a CM endpoint let go of it, rnic_cm.h). */
void rnic_gsi_release(struct roce_dev *dev);
/** QP1's counters of @p n devices (one per lcore), summed. */
void rnic_gsi_sum(struct roce_dev *const *devs, unsigned int n, struct roce_gsi_stats *out);
/** The "gsi" object of --json. */
void rnic_gsi_json(struct rw_json *w, const struct roce_gsi_stats *st);
/** The rocewan_rnic_gsi_* metrics. */
void rnic_gsi_prom(struct rw_prom *p, const struct roce_gsi_stats *st);

#endif
