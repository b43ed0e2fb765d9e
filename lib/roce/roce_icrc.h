/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_icrc.h
 * RoCEv2 invariant CRC (IBTA Annex A17.3.3): CRC-32 in zlib's convention over
 *   8 bytes of 0xFF (stand-in for the LRH)
 *   | IP header with the variant fields set to all ones
 *     (IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label, hop limit)
 *   | UDP header with the checksum set to all ones
 *   | BTH with resv8a (FECN, BECN, resv6) set to all ones
 *   | everything after the BTH up to the ICRC.
 * The ICRC is stored least-significant byte first, as rxe and Scapy do.
 * The payload is never copied: a masked copy of the headers (at most 60 bytes)
 * is hashed, then the CRC is chained over the payload in place (ISA-L).
 */
#ifndef ROCE_ICRC_H
#define ROCE_ICRC_H

#include <stddef.h>
#include <stdint.h>

/**
 * ICRC of a RoCEv2 packet.
 * @param ip       start of the IPv4/IPv6 header
 * @param len      bytes from @p ip to the start of the ICRC field (ICRC excluded)
 * @param ip_ver   4 or 6
 * @return the CRC value (what the wire carries, read little-endian), or 0 if len
 *         is too short to hold IP + UDP + BTH (callers validate lengths first).
 */
uint32_t roce_icrc_calc(const uint8_t *ip, size_t len, int ip_ver);

/** Read the ICRC stored at @p p (little-endian). */
static inline uint32_t
roce_icrc_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/** Store an ICRC at @p p (little-endian). */
static inline void
roce_icrc_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

#endif /* ROCE_ICRC_H */
