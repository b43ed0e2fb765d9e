/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host's release-error floor: what any busy-polling program on this CPU
 * could achieve. It schedules an event every PERIOD ns for DUR seconds and
 * busy-waits for each one, like a delay line releasing packets; the lateness
 * of an event is the time the thread was kept from running (interrupts, the
 * hypervisor, other tasks). bench/emu/run.sh runs it on the forwarder's CPU
 * just before and after the delay-accuracy row, so the emulator's p99 can be
 * read against the floor measured in the same run (docs/performance.md).
 *
 *   host_jitter [DUR_S [PERIOD_NS]]     prints one JSON object
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	double dur = argc > 1 ? strtod(argv[1], NULL) : 5.0;
	long period = argc > 2 ? strtol(argv[2], NULL, 10) : 10000;
	uint64_t n, next, *late;

	if (argc > 3 || !(dur > 0 && dur <= 600) || period < 1000 || period > 100000000) {
		fprintf(stderr,
			"usage: host_jitter [DUR_S (0..600] [PERIOD_NS 1000..100000000]]\n");
		return 2;
	}
	n = (uint64_t)(dur * 1e9 / (double)period);
	late = malloc(n * sizeof(*late));
	if (!late) {
		fprintf(stderr, "host_jitter: cannot allocate %llu samples\n",
			(unsigned long long)n);
		return 1;
	}
	next = now_ns() + (uint64_t)period;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t t;

		while ((t = now_ns()) < next)
			;
		late[i] = t - next;
		next += (uint64_t)period; /* after a stall, the events it covered are all late, as a
					     delay line's packets would be */
	}
	qsort(late, n, sizeof(*late), cmp_u64);
	printf("{\"events\": %llu, \"period_ns\": %ld, \"late_us\": {\"p50\": %.2f, \"p99\": %.2f, "
	       "\"p999\": %.2f, \"max\": %.1f}}\n",
	       (unsigned long long)n, period, (double)late[n / 2] / 1e3,
	       (double)late[n * 99 / 100] / 1e3, (double)late[n * 999 / 1000] / 1e3,
	       (double)late[n - 1] / 1e3);
	free(late);
	return 0;
}
