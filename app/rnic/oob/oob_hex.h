/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file oob_hex.h
 * The hex digits of the text exchanges: perftest's key line and
 * ibv_rc_pingpong's message both write fixed-width lower-case hex fields.
 */
#ifndef OOB_HEX_H
#define OOB_HEX_H

#include <stdint.h>

/** Writes @p v as @p width lower-case hex digits, no NUL; returns @p width. */
static inline int
oob_put_hex(uint8_t *out, uint64_t v, unsigned width)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned i = 0; i < width; i++)
		out[width - 1 - i] = (uint8_t)digits[(v >> (4 * i)) & 0xf];
	return (int)width;
}

#endif /* OOB_HEX_H */
