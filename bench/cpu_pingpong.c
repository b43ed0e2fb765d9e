/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How far apart two CPUs are: the round trip of one cache line bounced between
 * a thread pinned to each. On the project's 2-vCPU VM it is bimodal, about
 * 60 ns or about 330 ns from one minute to the next: the hypervisor places the
 * two vCPUs on cores that share a cache, or on cores that do not. Every
 * baseline that moves data between two pinned processes (testpmd txonly ->
 * rxonly over memif, rnic <-> rnic) follows it, by up to 10x.
 * bench/testbed/memif.py runs it at the start of each round and reports it
 * beside the round's figures (docs/performance.md, "The pacer's catch-up").
 *
 *   cpu_pingpong [CPU_A CPU_B [ROUND_TRIPS]]   prints one JSON object
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t line __attribute__((aligned(64)));
static uint64_t trips = 1000000;

static int
pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

/* the peer answers each odd value with the next even one */
static void *
peer(void *arg)
{
	if (pin(*(int *)arg) != 0) {
		fprintf(stderr, "cpu_pingpong: cannot run on CPU %d\n", *(int *)arg);
		exit(2);
	}
	for (uint64_t i = 1; i < 2 * trips; i += 2) {
		while (line != i)
			;
		line = i + 1;
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	int a = argc > 2 ? atoi(argv[1]) : 0, b = argc > 2 ? atoi(argv[2]) : 1;
	struct timespec t0, t1;
	pthread_t t;
	double ns;

	if (argc > 3)
		trips = strtoull(argv[3], NULL, 10);
	if (trips == 0 || pin(a) != 0) {
		fprintf(stderr, "usage: cpu_pingpong [CPU_A CPU_B [ROUND_TRIPS>0]] (CPUs this "
				"process may use)\n");
		return 2;
	}
	line = 0;
	if (pthread_create(&t, NULL, peer, &b) != 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = 0; i < 2 * trips; i += 2) {
		while (line != i)
			;
		line = i + 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(t, NULL);
	ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	printf("{\"cpu_a\": %d, \"cpu_b\": %d, \"round_trips\": %llu, \"round_trip_ns\": %.1f}\n",
	       a, b, (unsigned long long)trips, ns / (double)trips);
	return 0;
}
