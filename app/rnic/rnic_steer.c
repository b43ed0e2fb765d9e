/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_steer.c
 * --lcores: the lcore that owns a frame (rnic_core.h). Lcore l owns the QPNs
 * ROCE_FIRST_QPN + l * RNIC_QPN_SPAN and up; a RoCEv2 frame goes to the owner
 * of its BTH destination QPN, every other frame to lcore 0, which answers ARP,
 * ICMP and ND and reads PFC.
 */
#include "rnic_core.h"

#include "roce_verbs.h"

unsigned int
rnic_steer_owner(const struct rnic_steer *s, uint32_t qpn)
{
	uint32_t l = (qpn - ROCE_FIRST_QPN) / RNIC_QPN_SPAN;

	return qpn >= ROCE_FIRST_QPN && l < s->n ? l : 0;
}

unsigned int
rnic_steer_frame(const struct rnic_steer *s, const struct net_frame *fr)
{
	return fr->kind == NET_FRAME_ROCE && fr->has_bth ? rnic_steer_owner(s, fr->bth_dqpn) : 0;
}
