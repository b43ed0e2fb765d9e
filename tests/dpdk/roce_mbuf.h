/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_mbuf.h
 * A test's adapter between rte_mbuf and the DPDK-free wire layer
 * (test_dp_ring.c builds and parses RoCE frames in mbufs with it). Frames are
 * single-segment; a chained mbuf is refused with -NET_E_INVAL.
 */
#ifndef ROCE_MBUF_H
#define ROCE_MBUF_H

#include <rte_mbuf.h>

#include "roce_pkt.h"

/** Parse a received frame. */
static inline int
roce_mbuf_parse(const struct rte_mbuf *m, struct roce_pkt *p, unsigned flags)
{
	if (unlikely(!rte_pktmbuf_is_contiguous(m)))
		return -NET_E_INVAL;
	return roce_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), p, flags);
}

/**
 * Build a frame into an empty mbuf; payload may already sit at
 * rte_pktmbuf_mtod(m) + roce_hdr_len(p). Sets data_len/pkt_len.
 */
static inline int
roce_mbuf_build(struct rte_mbuf *m, struct roce_pkt *p, const void *payload, uint32_t len,
		unsigned flags)
{
	int n = roce_build(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m) + m->data_len, p,
			   payload, len, flags);

	if (n > 0)
		m->data_len = m->pkt_len = (uint32_t)n;
	return n;
}

#endif /* ROCE_MBUF_H */
