/* SPDX-License-Identifier: BSD-3-Clause */
/* The 5-tuple hash of the software spread (emu_spread.h). */
#include "emu_spread.h"

#include <string.h>

#include "emu_rng.h"

/* Fold @p n bytes into the running key (8 at a time, splitmix64 mixing). */
static uint64_t
fold(uint64_t k, const uint8_t *p, size_t n)
{
	while (n > 0) {
		uint64_t w = 0;
		size_t c = n < 8 ? n : 8;

		memcpy(&w, p, c);
		k ^= w;
		k = emu_splitmix64(&k);
		p += c;
		n -= c;
	}
	return k;
}

uint32_t
emu_spread_hash(const uint8_t *f, size_t len, const struct net_frame *fr)
{
	const uint8_t *ip;
	uint64_t k = 0x5eed;
	bool ports;

	if (!fr->ip || !fr->ip_version_ok || fr->ntags > 1)
		return 0;
	ip = f + fr->l3_off;
	if ((ip[0] >> 4) == 4) {
		/* more fragments or a fragment offset: no ports in every fragment */
		uint16_t frag = (uint16_t)(ip[6] << 8 | ip[7]);

		k = fold(k, ip + 12, 8);
		ports = (frag & 0x3fff) == 0;
	} else {
		k = fold(k, ip + 8, 32);
		ports = true;
	}
	k = fold(k, &fr->proto, 1);
	if (ports && fr->l4_off != 0 && (fr->proto == 17 || fr->proto == 6) &&
	    (size_t)fr->l4_off + 4 <= len)
		k = fold(k, f + fr->l4_off, 4);
	return (uint32_t)(k >> 32);
}
