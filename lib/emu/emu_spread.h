/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_spread.h
 * The software spread of lossy-emu --workers N on ports that hash nothing
 * themselves (memif, net_ring, net_null, net_pcap): which worker a frame
 * belongs to, from its 5-tuple.
 *
 * The key is the IPv4/IPv6 source and destination address, the protocol and,
 * for UDP and TCP, the source and destination port: for RoCEv2 (UDP to 4791,
 * IBTA Annex A17.2.1) the UDP source port is the entropy RNICs set per QP, so
 * the QPs of one host pair spread over the workers like flows over ECMP paths.
 * IPv4 fragments are keyed without ports (a later fragment carries none), so
 * all fragments of a datagram go to one worker. Frames that are not IP (ARP,
 * PFC and PAUSE, a third VLAN tag) all go to worker 0. One frame always maps
 * to the same worker, so a flow keeps its order.
 *
 * DPDK-free.
 */
#ifndef EMU_SPREAD_H
#define EMU_SPREAD_H

#include <stddef.h>
#include <stdint.h>

#include "net_frame.h"

/** The 5-tuple hash of a classified frame (0 for frames that are not IP). */
uint32_t emu_spread_hash(const uint8_t *f, size_t len, const struct net_frame *fr);

/** Worker of a frame with hash @p h among @p n (n >= 1): a multiply, no division. */
static inline unsigned
emu_spread_worker(uint32_t h, unsigned n)
{
	return (unsigned)(((uint64_t)h * n) >> 32);
}

#endif /* EMU_SPREAD_H */
