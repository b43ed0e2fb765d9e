/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file lemu_droplog.c
 * --drop-log: see lemu_droplog.h.
 */
#include "lemu_droplog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lemu_config.h"
#include "net_frame.h"

FILE *lemu_droplog_f;
static char *droplog_buf;

int
lemu_droplog_open(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		int e = errno;

		snprintf(err, errlen, "--drop-log %s: cannot open: %s", path, strerror(e));
		return -e;
	}
	droplog_buf = malloc(1u << 20);
	if (droplog_buf != NULL)
		setvbuf(f, droplog_buf, _IOFBF, 1u << 20);
	fprintf(f, "# lossy-emu drop log; clock CLOCK_MONOTONIC ns (as the rnic's --trace); "
		   "qpn = destination QP, psn, opcode decimal, empty if not RoCEv2\n"
		   "time_ns,dir,cause,qpn,psn,opcode,len\n");
	lemu_droplog_f = f;
	return 0;
}

void
lemu_droplog_frame(unsigned dir, const char *cause, const uint8_t *f, uint32_t len)
{
	struct timespec ts;
	struct net_frame fr;
	uint64_t ns;

	if (lemu_droplog_f == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (f != NULL && net_frame_classify(f, len, &fr) == NET_FRAME_ROCE && fr.has_bth)
		fprintf(lemu_droplog_f,
			"%" PRIu64 ",%s,%s,%" PRIu32 ",%" PRIu32 ",%u,%" PRIu32 "\n", ns,
			lemu_dir_name(dir), cause, fr.bth_dqpn, fr.bth_psn, (unsigned)fr.bth_op,
			len);
	else
		fprintf(lemu_droplog_f, "%" PRIu64 ",%s,%s,,,,%" PRIu32 "\n", ns,
			lemu_dir_name(dir), cause, len);
}

int
lemu_droplog_close(void)
{
	int rc = 0;

	if (lemu_droplog_f == NULL)
		return 0;
	if (fclose(lemu_droplog_f) != 0)
		rc = -errno;
	lemu_droplog_f = NULL;
	free(droplog_buf);
	droplog_buf = NULL;
	return rc;
}
