/* SPDX-License-Identifier: BSD-3-Clause */
#include "rnic_cdf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
rnic_cdf_parse(struct rnic_cdf *c, const char *text, const char *name, char *err, size_t errlen)
{
	const char *p = text;
	unsigned line = 0;

	memset(c, 0, sizeof(*c));
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char buf[256], *s, *end;
		double size, pct;

		line++;
		if (len >= sizeof(buf)) {
			snprintf(err, errlen, "%s:%u: line longer than %zu characters", name, line,
				 sizeof(buf) - 1);
			return -EINVAL;
		}
		memcpy(buf, p, len);
		buf[len] = 0;
		p = eol ? eol + 1 : p + len;
		if ((s = strchr(buf, '#')))
			*s = 0;
		s = buf;
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (!*s)
			continue;
		size = strtod(s, &end);
		if (end == s || !(size >= 1) || !isfinite(size)) {
			snprintf(err, errlen,
				 "%s:%u: \"%s\": expected SIZE_BYTES PERCENT with a size >= 1",
				 name, line, s);
			return -EINVAL;
		}
		s = end;
		pct = strtod(s, &end);
		while (*end == ' ' || *end == '\t' || *end == '\r')
			end++;
		if (end == s || *end || !(pct >= 0 && pct <= 100)) {
			snprintf(err, errlen, "%s:%u: expected a percent in 0..100 after the size",
				 name, line);
			return -EINVAL;
		}
		if (c->n == RNIC_CDF_MAX_POINTS) {
			snprintf(err, errlen, "%s:%u: more than %d points", name, line,
				 RNIC_CDF_MAX_POINTS);
			return -EINVAL;
		}
		if (c->n && (size <= c->size[c->n - 1] || pct < c->pct[c->n - 1])) {
			snprintf(err, errlen,
				 "%s:%u: sizes must increase and percents must not decrease", name,
				 line);
			return -EINVAL;
		}
		c->size[c->n] = size;
		c->pct[c->n] = pct;
		c->n++;
	}
	if (c->n == 0 || c->pct[c->n - 1] != 100) {
		snprintf(err, errlen, "%s: the last point must have percent 100 (%s)", name,
			 c->n ? "it does not" : "no points");
		return -EINVAL;
	}
	return 0;
}

int
rnic_cdf_load(struct rnic_cdf *c, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text;
	long n;
	int rc;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || n > 1 << 20 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		snprintf(err, errlen, "%s: not a regular file of at most 1 MiB", path);
		return -EINVAL;
	}
	text = malloc((size_t)n + 1);
	if (!text) {
		fclose(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	if (fread(text, 1, (size_t)n, f) != (size_t)n) {
		free(text);
		fclose(f);
		snprintf(err, errlen, "%s: read error", path);
		return -EIO;
	}
	text[n] = 0;
	fclose(f);
	rc = rnic_cdf_parse(c, text, path, err, errlen);
	free(text);
	return rc;
}

uint64_t
rnic_cdf_sample(const struct rnic_cdf *c, double u)
{
	double x = u * 100, s = c->size[0];

	for (unsigned i = 1; i < c->n; i++) {
		if (x < c->pct[i]) {
			double lo = c->pct[i - 1], hi = c->pct[i];

			s = x <= lo ? c->size[i - 1]
				    : c->size[i - 1] +
					  (x - lo) / (hi - lo) * (c->size[i] - c->size[i - 1]);
			break;
		}
		s = c->size[i];
	}
	if (x < c->pct[0])
		s = c->size[0];
	return s < 1 ? 1 : (uint64_t)llround(s);
}

double
rnic_cdf_mean(const struct rnic_cdf *c)
{
	/* mass pct[0] at size[0], then uniform between consecutive points */
	double m = c->pct[0] / 100 * c->size[0];

	for (unsigned i = 1; i < c->n; i++)
		m += (c->pct[i] - c->pct[i - 1]) / 100 * (c->size[i] + c->size[i - 1]) / 2;
	return m;
}

uint64_t
rnic_cdf_max(const struct rnic_cdf *c)
{
	return (uint64_t)llround(c->size[c->n - 1]);
}
