/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file net_bytes.h
 * Unaligned big-endian loads and stores. Every header accessor in lib/net and
 * lib/roce goes through these, so no parser ever dereferences a packed struct
 * at an unaligned address and every read is bounded by the caller's length.
 */
#ifndef NET_BYTES_H
#define NET_BYTES_H

#include <stdint.h>

static inline uint16_t
net_get_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t
net_get_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t
net_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t
net_get_be64(const uint8_t *p)
{
	return (uint64_t)net_get_be32(p) << 32 | net_get_be32(p + 4);
}

static inline void
net_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
net_put_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void
net_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void
net_put_be64(uint8_t *p, uint64_t v)
{
	net_put_be32(p, (uint32_t)(v >> 32));
	net_put_be32(p + 4, (uint32_t)v);
}

#endif /* NET_BYTES_H */
