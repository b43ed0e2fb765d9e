/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_units.h
 * tc(8) value syntax: times, sizes, rates, percentages and plain integers.
 *
 * The unit tables follow iproute2's tc code (tc_util.c get_size/get_rate64,
 * utils.c get_time64, parse_percent), which is what users paste:
 *   - sizes:  b or bare = bytes; k/kb = 1024 B; m/mb = 1024^2 B; g/gb = 1024^3 B;
 *             kbit = 1024/8 B; mbit = 1024^2/8 B; gbit = 1024^3/8 B (binary
 *             multiples, as tc's code does, although tc(8) words it "Kilobytes").
 *   - rates:  bit or bare = bit/s; kbit/mbit/gbit/tbit = 10^3/6/9/12 bit/s;
 *             kibit/mibit/gibit/tibit = 2^10/20/30/40 bit/s; bps = BYTES/s and
 *             kbps/mbps/gbps/tbps (10^n bytes/s), kibps/... (2^n bytes/s).
 *             "mbps" is megaBYTES per second, exactly as in tc.
 *   - times:  s/sec/secs, ms/msec/msecs, us/usec/usecs, ns/nsec/nsecs.
 *             A bare number is rejected (EMU_E_NEED_UNIT), except "0": tc(8)
 *             documents a bare number as microseconds but modern tc's netem
 *             parser (get_time64) reads it as nanoseconds, so we refuse to guess.
 *   - probabilities: "P%" or a bare "P", both in percent, 0..100.
 * Units are case-insensitive, as in tc. Numbers are decimal: digits, an
 * optional fraction and exponent; no sign, hex, inf or nan.
 *
 * Every parser returns 0 or a negated ::emu_err saying what was wrong:
 * EMPTY, BAD_NUMBER (no number in front), BAD_UNIT (unknown suffix),
 * NEED_UNIT, NEGATIVE, RANGE.
 */
#ifndef EMU_UNITS_H
#define EMU_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu_err.h"

/** Allowed units, for error messages. */
#define EMU_TIME_UNITS "s, sec, ms, msec, us, usec, ns, nsec"
#define EMU_SIZE_UNITS "b, k/kb, m/mb, g/gb (x1024), kbit, mbit, gbit"
#define EMU_RATE_UNITS                                                                             \
	"bit, kbit, mbit, gbit, tbit, kibit..tibit, bps, kbps, mbps, gbps, tbps (bytes/s), "       \
	"kibps..tibps"
#define EMU_PROB_UNITS "0%..100%"

/** Largest time accepted: 2^62 ns (about 146 years). */
#define EMU_TIME_MAX_NS (UINT64_C(1) << 62)
/** Largest size accepted: 2^48 bytes. */
#define EMU_SIZE_MAX (UINT64_C(1) << 48)
/** Largest rate accepted: 2^50 bit/s (about 1.1 Pbit/s). */
#define EMU_RATE_MAX_BPS (UINT64_C(1) << 50)

/** Time to nanoseconds, rounded to the nearest ns. */
int emu_parse_time(const char *s, uint64_t *ns);

/** Size to bytes, rounded to the nearest byte. */
int emu_parse_size(const char *s, uint64_t *bytes);

/** Rate to bits per second, rounded to the nearest bit/s. */
int emu_parse_rate(const char *s, uint64_t *bps);

/** Percentage ("25%", "25") to a probability in [0, 1]. */
int emu_parse_prob(const char *s, double *p);

/** Unsigned decimal integer in [0, max]. */
int emu_parse_uint(const char *s, uint64_t max, uint64_t *v);

/** Signed decimal integer (optional + or -) in [min, max]. */
int emu_parse_int(const char *s, int64_t min, int64_t max, int64_t *v);

/**
 * True if @p s starts like a number (a digit, or '.' followed by a digit; with
 * @p allow_sign also '-' or '+' before it). This is how netem's grammar tells an
 * optional numeric argument from the next keyword.
 */
bool emu_looks_numeric(const char *s, bool allow_sign);

/**
 * Writers: the shortest exact form with the largest unit that divides the
 * value ("10ms", "64kb", "100mbit", "25%"). Return snprintf()'s value.
 */
int emu_format_time(char *buf, size_t len, uint64_t ns);
int emu_format_size(char *buf, size_t len, uint64_t bytes);
int emu_format_rate(char *buf, size_t len, uint64_t bps);
int emu_format_prob(char *buf, size_t len, double p);

#endif /* EMU_UNITS_H */
