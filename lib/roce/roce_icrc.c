/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce_icrc.h"

#include <isa-l/crc.h>
#include <string.h>

#include "../net/net_hdr.h"
#include "roce_hdr.h"

uint32_t
roce_icrc_calc(const uint8_t *ip, size_t len, int ip_ver)
{
	uint8_t h[8 + 60 + NET_UDP_HLEN + ROCE_BTH_LEN]; /* IPv4 with options: up to 60 B */
	uint8_t *p = h + 8;
	size_t iphl, hl;
	uint32_t crc;

	if (len == 0)
		return 0;
	/* IPv4 options are hashed as they are: only the fixed fields are variant */
	iphl = ip_ver == 4 ? (size_t)(ip[0] & 0x0f) * 4 : NET_IPV6_HLEN;
	hl = iphl + NET_UDP_HLEN + ROCE_BTH_LEN;
	if (len < hl || iphl < NET_IPV4_HLEN)
		return 0;
	memset(h, 0xff, 8);
	memcpy(p, ip, hl);
	if (ip_ver == 4) {
		p[1] = 0xff;	      /* TOS */
		p[8] = 0xff;	      /* TTL */
		p[10] = p[11] = 0xff; /* header checksum */
	} else {
		p[0] |= 0x0f;		   /* traffic class (high nibble) */
		p[1] = p[2] = p[3] = 0xff; /* traffic class (low nibble), flow label */
		p[7] = 0xff;		   /* hop limit */
	}
	p[iphl + 6] = p[iphl + 7] = 0xff;  /* UDP checksum */
	p[iphl + NET_UDP_HLEN + 4] = 0xff; /* BTH resv8a: FECN, BECN, resv6 */
	crc = crc32_gzip_refl(0, h, (uint64_t)(8 + hl));
	return crc32_gzip_refl(crc, (uint8_t *)(uintptr_t)(ip + hl), (uint64_t)(len - hl));
}
