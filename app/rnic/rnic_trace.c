/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_trace.c
 * --trace FILE: see rnic_trace.h.
 */
#include "rnic_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static FILE *trace_f;
static char *trace_buf;

int
rnic_trace_open(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		int e = errno;

		snprintf(err, errlen, "--trace %s: cannot open: %s", path, strerror(e));
		return -e;
	}
	trace_buf = malloc(1u << 20);
	if (trace_buf)
		setvbuf(f, trace_buf, _IOFBF, 1u << 20);
	fprintf(f, "# rnic trace; clock CLOCK_MONOTONIC ns (as lossy-emu's --drop-log); "
		   "qpn = local QP, dqpn = its peer QP, decimal\n"
		   "time_ns,event,qpn,dqpn,psn\n");
	trace_f = f;
	return 0;
}

void
rnic_trace_event(void *ctx, const struct roce_trace_event *ev)
{
	struct timespec ts;

	(void)ctx;
	if (!trace_f)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(trace_f, "%" PRIu64 ",%s,%" PRIu32 ",%" PRIu32 ",%" PRIu32 "\n",
		(uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
		roce_trace_kind_name(ev->kind), ev->qpn, ev->dqpn, ev->psn);
}

int
rnic_trace_close(void)
{
	int rc = 0;

	if (!trace_f)
		return 0;
	if (fclose(trace_f) != 0)
		rc = -errno;
	trace_f = NULL;
	free(trace_buf);
	trace_buf = NULL;
	return rc;
}
