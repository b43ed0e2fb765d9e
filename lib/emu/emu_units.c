/* SPDX-License-Identifier: BSD-3-Clause */
#include "emu_units.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct unit {
	const char *name;
	double scale;
};

/* tc_util.c get_size(): binary multiples; "kbit" is 1024/8 bytes. */
static const struct unit size_units[] = {
    {"", 1.},
    {"b", 1.},
    {"k", 1024.},
    {"kb", 1024.},
    {"m", 1024. * 1024.},
    {"mb", 1024. * 1024.},
    {"g", 1024. * 1024. * 1024.},
    {"gb", 1024. * 1024. * 1024.},
    {"kbit", 1024. / 8.},
    {"mbit", 1024. * 1024. / 8.},
    {"gbit", 1024. * 1024. * 1024. / 8.},
    {NULL, 0.},
};

/* tc_util.c suffixes[] (get_rate64), in bit/s; a bare number is bit/s. */
static const struct unit rate_units[] = {
    {"", 1.},
    {"bit", 1.},
    {"kibit", 1024.},
    {"kbit", 1e3},
    {"mibit", 1024. * 1024.},
    {"mbit", 1e6},
    {"gibit", 1024. * 1024. * 1024.},
    {"gbit", 1e9},
    {"tibit", 1024. * 1024. * 1024. * 1024.},
    {"tbit", 1e12},
    {"bps", 8.},
    {"kibps", 8. * 1024.},
    {"kbps", 8e3},
    {"mibps", 8. * 1024. * 1024.},
    {"mbps", 8e6},
    {"gibps", 8. * 1024. * 1024. * 1024.},
    {"gbps", 8e9},
    {"tibps", 8. * 1024. * 1024. * 1024. * 1024.},
    {"tbps", 8e12},
    {NULL, 0.},
};

/* utils.c get_time64(), in ns; no bare number (see emu_units.h). */
static const struct unit time_units[] = {
    {"s", 1e9},	    {"sec", 1e9},  {"secs", 1e9}, {"ms", 1e6},	  {"msec", 1e6},
    {"msecs", 1e6}, {"us", 1e3},   {"usec", 1e3}, {"usecs", 1e3}, {"ns", 1.},
    {"nsec", 1.},   {"nsecs", 1.}, {NULL, 0.},
};

/*
 * Length of the decimal number at the start of @p s (digits, optional
 * fraction, optional exponent), 0 if there is none. Hand-scanned so that
 * strtod's hex, inf and nan forms are never accepted.
 */
static size_t
number_len(const char *s)
{
	size_t i = 0, digits = 0;

	while (isdigit((unsigned char)s[i])) {
		i++;
		digits++;
	}
	if (s[i] == '.') {
		i++;
		while (isdigit((unsigned char)s[i])) {
			i++;
			digits++;
		}
	}
	if (digits == 0)
		return 0;
	if (s[i] == 'e' || s[i] == 'E') {
		size_t j = i + 1;

		if (s[j] == '+' || s[j] == '-')
			j++;
		if (isdigit((unsigned char)s[j])) {
			while (isdigit((unsigned char)s[j]))
				j++;
			i = j;
		}
	}
	return i;
}

/* Parse "NUMBER[unit]" into value * scale(unit). */
static int
parse_scaled(const char *s, const struct unit *units, double *out, const char **unit_out)
{
	char num[64];
	size_t n;
	double v;

	if (s == NULL || *s == '\0')
		return -EMU_E_EMPTY;
	if (*s == '-')
		return number_len(s + 1) ? -EMU_E_NEGATIVE : -EMU_E_BAD_NUMBER;
	n = number_len(s);
	if (n == 0 || n >= sizeof(num))
		return -EMU_E_BAD_NUMBER;
	memcpy(num, s, n);
	num[n] = '\0';
	v = strtod(num, NULL);
	if (!isfinite(v))
		return -EMU_E_RANGE;
	if (unit_out)
		*unit_out = s + n;
	for (const struct unit *u = units; u->name; u++) {
		if (strcasecmp(u->name, s + n) == 0) {
			*out = v * u->scale;
			return 0;
		}
	}
	return -EMU_E_BAD_UNIT;
}

int
emu_parse_time(const char *s, uint64_t *ns)
{
	const char *unit = NULL;
	double v;
	int rc = parse_scaled(s, time_units, &v, &unit);

	if (rc == -EMU_E_BAD_UNIT && unit && *unit == '\0') {
		/* bare number: only an exact zero is unambiguous */
		if (strtod(s, NULL) != 0.)
			return -EMU_E_NEED_UNIT;
		v = 0.;
		rc = 0;
	}
	if (rc)
		return rc;
	if (v > (double)EMU_TIME_MAX_NS)
		return -EMU_E_RANGE;
	*ns = (uint64_t)floor(v + 0.5);
	return 0;
}

int
emu_parse_size(const char *s, uint64_t *bytes)
{
	double v;
	int rc = parse_scaled(s, size_units, &v, NULL);

	if (rc)
		return rc;
	if (v > (double)EMU_SIZE_MAX)
		return -EMU_E_RANGE;
	*bytes = (uint64_t)floor(v + 0.5);
	return 0;
}

int
emu_parse_rate(const char *s, uint64_t *bps)
{
	double v;
	int rc;

	if (s && strchr(s, '%'))
		return -EMU_E_UNSUPPORTED; /* tc's "% of device speed" needs a device */
	rc = parse_scaled(s, rate_units, &v, NULL);
	if (rc)
		return rc;
	if (v > (double)EMU_RATE_MAX_BPS)
		return -EMU_E_RANGE;
	*bps = (uint64_t)floor(v + 0.5);
	return 0;
}

int
emu_parse_prob(const char *s, double *p)
{
	static const struct unit pct[] = {{"", 0.01}, {"%", 0.01}, {NULL, 0.}};
	double v;
	int rc = parse_scaled(s, pct, &v, NULL);

	if (rc)
		return rc;
	/* iproute2 parse_percent(): value / 100 must lie in [0, 1] */
	if (v > 1.0)
		return -EMU_E_RANGE;
	*p = v;
	return 0;
}

int
emu_parse_uint(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (s == NULL || *s == '\0')
		return -EMU_E_EMPTY;
	if (*s == '-')
		return isdigit((unsigned char)s[1]) ? -EMU_E_NEGATIVE : -EMU_E_BAD_NUMBER;
	for (i = 0; s[i]; i++) {
		if (!isdigit((unsigned char)s[i]))
			return i == 0 ? -EMU_E_BAD_NUMBER : -EMU_E_BAD_UNIT;
		uint64_t d = (uint64_t)(s[i] - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -EMU_E_RANGE;
		x = x * 10 + d;
	}
	if (x > max)
		return -EMU_E_RANGE;
	*v = x;
	return 0;
}

int
emu_parse_int(const char *s, int64_t min, int64_t max, int64_t *v)
{
	bool neg = false;
	uint64_t mag;
	int64_t x;
	int rc;

	if (s == NULL || *s == '\0')
		return -EMU_E_EMPTY;
	if (*s == '-' || *s == '+') {
		neg = *s == '-';
		s++;
	}
	rc = emu_parse_uint(s, (uint64_t)INT64_MAX, &mag);
	if (rc == -EMU_E_NEGATIVE)
		rc = -EMU_E_BAD_NUMBER; /* "--5" */
	if (rc)
		return rc;
	x = neg ? -(int64_t)mag : (int64_t)mag;
	if (x < min || x > max)
		return -EMU_E_RANGE;
	*v = x;
	return 0;
}

bool
emu_looks_numeric(const char *s, bool allow_sign)
{
	if (s == NULL)
		return false;
	if (allow_sign && (*s == '-' || *s == '+'))
		s++;
	if (*s == '.')
		s++;
	return isdigit((unsigned char)*s);
}

int
emu_format_time(char *buf, size_t len, uint64_t ns)
{
	if (ns == 0)
		return snprintf(buf, len, "0");
	if (ns % 1000000000u == 0)
		return snprintf(buf, len, "%" PRIu64 "s", ns / 1000000000u);
	if (ns % 1000000u == 0)
		return snprintf(buf, len, "%" PRIu64 "ms", ns / 1000000u);
	if (ns % 1000u == 0)
		return snprintf(buf, len, "%" PRIu64 "us", ns / 1000u);
	return snprintf(buf, len, "%" PRIu64 "ns", ns);
}

int
emu_format_size(char *buf, size_t len, uint64_t bytes)
{
	if (bytes != 0 && bytes % (UINT64_C(1) << 30) == 0)
		return snprintf(buf, len, "%" PRIu64 "gb", bytes >> 30);
	if (bytes != 0 && bytes % (UINT64_C(1) << 20) == 0)
		return snprintf(buf, len, "%" PRIu64 "mb", bytes >> 20);
	if (bytes != 0 && bytes % 1024u == 0)
		return snprintf(buf, len, "%" PRIu64 "kb", bytes >> 10);
	return snprintf(buf, len, "%" PRIu64 "b", bytes);
}

int
emu_format_rate(char *buf, size_t len, uint64_t bps)
{
	static const struct {
		uint64_t div;
		const char *unit;
	} steps[] = {
	    {UINT64_C(1000000000000), "tbit"},
	    {UINT64_C(1000000000), "gbit"},
	    {UINT64_C(1000000), "mbit"},
	    {UINT64_C(1000), "kbit"},
	};

	for (size_t i = 0; bps != 0 && i < sizeof(steps) / sizeof(steps[0]); i++)
		if (bps % steps[i].div == 0)
			return snprintf(buf, len, "%" PRIu64 "%s", bps / steps[i].div,
					steps[i].unit);
	return snprintf(buf, len, "%" PRIu64 "bit", bps);
}

int
emu_format_prob(char *buf, size_t len, double p)
{
	return snprintf(buf, len, "%.12g%%", p * 100.);
}
