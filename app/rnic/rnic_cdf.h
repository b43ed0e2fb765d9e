/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_cdf.h
 * Flow-size distributions for the rnic's flow workload: a CDF file (one point
 * per line, "SIZE_BYTES PERCENT", sizes and percents increasing, the last
 * percent 100; '#' starts a comment) and sampling from it by linear
 * interpolation between its points, as Wang (NJUPT) Table I and the HPCC/ns-3
 * traffic generators use it. A draw u in [0, 100) below the first point's
 * percent returns the first size. No DPDK.
 */
#ifndef RNIC_CDF_H
#define RNIC_CDF_H

#include <stddef.h>
#include <stdint.h>

#define RNIC_CDF_MAX_POINTS 128

struct rnic_cdf {
	unsigned n;
	double size[RNIC_CDF_MAX_POINTS]; /**< bytes, strictly increasing */
	double pct[RNIC_CDF_MAX_POINTS];  /**< cumulative percent, non-decreasing, last = 100 */
};

/**
 * Load @p path. Returns 0, or -errno with "FILE:LINE: what is wrong" in @p err
 * (unreadable file, bad number, decreasing size or percent, last percent not
 * 100, too many points).
 */
int rnic_cdf_load(struct rnic_cdf *c, const char *path, char *err, size_t errlen);

/** Parse from a string (same format; @p name labels errors). */
int rnic_cdf_parse(struct rnic_cdf *c, const char *text, const char *name, char *err,
		   size_t errlen);

/** Size for a uniform draw @p u in [0, 1), rounded to whole bytes (at least 1). */
uint64_t rnic_cdf_sample(const struct rnic_cdf *c, double u);

/** Mean flow size in bytes under linear interpolation. */
double rnic_cdf_mean(const struct rnic_cdf *c);

/** Largest size in the distribution. */
uint64_t rnic_cdf_max(const struct rnic_cdf *c);

#endif /* RNIC_CDF_H */
