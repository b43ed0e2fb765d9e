/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file perftest_plan.c
 * perftest 6.06's exchange, the plan: which messages a test exchanges in which
 * order (perftest_plan_build), and the test names and defaults it starts from.
 * See perftest_xchg.h and docs/perftest-exchange.md.
 * Written from the observed wire format; no perftest code is used.
 */
#include "perftest_xchg.h"

#include <stdio.h>
#include <string.h>

static const char *const test_names[PERFTEST_N_TESTS] = {
    [PERFTEST_WRITE_BW] = "write_bw",	[PERFTEST_SEND_BW] = "send_bw",
    [PERFTEST_READ_BW] = "read_bw",	[PERFTEST_ATOMIC_BW] = "atomic_bw",
    [PERFTEST_WRITE_LAT] = "write_lat", [PERFTEST_SEND_LAT] = "send_lat",
    [PERFTEST_READ_LAT] = "read_lat",	[PERFTEST_ATOMIC_LAT] = "atomic_lat",
};

const char *
perftest_test_name(enum perftest_test t)
{
	return (unsigned)t < PERFTEST_N_TESTS ? test_names[t] : "?";
}

int
perftest_test_is_bw(enum perftest_test t)
{
	return t == PERFTEST_WRITE_BW || t == PERFTEST_SEND_BW || t == PERFTEST_READ_BW ||
	       t == PERFTEST_ATOMIC_BW;
}

void
perftest_params_default(struct perftest_params *p, enum perftest_test t, enum perftest_role r)
{
	memset(p, 0, sizeof(*p));
	p->test = t;
	p->role = r;
	p->num_qps = 1;
	p->size = perftest_test_is_bw(t) ? 65536 : 2;
	if (t == PERFTEST_ATOMIC_BW || t == PERFTEST_ATOMIC_LAT)
		p->size = 8;
	p->mtu = 3; /* IBV_MTU_1024 */
	p->cycle_buffer = 4096;
	p->cache_line = 64;
	p->version = PERFTEST_VERSION;
}

struct plan_b {
	struct perftest_step *s;
	size_t max, n;
	int phase2;
	int overflow;
};

static void
add(struct plan_b *b, enum perftest_step_kind k, enum perftest_dest_why why, unsigned qp,
    uint64_t size)
{
	if (b->n >= b->max) {
		b->overflow = 1;
		return;
	}
	struct perftest_step *st = &b->s[b->n++];
	memset(st, 0, sizeof(*st));
	st->kind = k;
	st->why = why;
	st->qp = qp;
	st->size = size;
	st->after_handshake = b->phase2;
}

static void
add_dests(struct plan_b *b, unsigned n, enum perftest_dest_why why)
{
	for (unsigned i = 0; i < n; i++)
		add(b, PERFTEST_STEP_DEST, why, i, 0);
}

static void
sync0(struct plan_b *b, enum perftest_dest_why why)
{
	add(b, PERFTEST_STEP_DEST, why, 0, 0);
}

int
perftest_plan_build(const struct perftest_params *p, struct perftest_step *steps, size_t max,
		    size_t *n, char *err, size_t errlen)
{
	struct plan_b b = {.s = steps, .max = max};
	const unsigned N = p->num_qps;
	const int client = p->role == PERFTEST_CLIENT;
	uint64_t sizes[PERFTEST_RUN_ALL_MAX_LOG2 + 1];
	unsigned nsizes = 0;

	*n = 0;
	if ((unsigned)p->test >= PERFTEST_N_TESTS) {
		snprintf(err, errlen, "unknown perftest test type %d", (int)p->test);
		return OOB_ERR_ARG;
	}
	if (p->role != PERFTEST_CLIENT && p->role != PERFTEST_SERVER) {
		snprintf(err, errlen, "unknown perftest role %d", (int)p->role);
		return OOB_ERR_ARG;
	}
	if (p->rdma_cm) {
		snprintf(err, errlen,
			 "perftest -R (rdma_cm) is not supported: its data exchange runs over "
			 "RDMA CM instead of TCP");
		return OOB_ERR_ARG;
	}
	if (N < 1 || N > PERFTEST_MAX_QPS) {
		snprintf(err, errlen, "number of QPs %u out of range 1..%u", N, PERFTEST_MAX_QPS);
		return OOB_ERR_ARG;
	}
	if (!perftest_test_is_bw(p->test) && (N != 1 || p->duplex)) {
		snprintf(err, errlen, "%s takes neither -q > 1 nor -b",
			 perftest_test_name(p->test));
		return OOB_ERR_ARG;
	}
	if (p->mtu < 1 || p->mtu > 5) {
		snprintf(err, errlen, "local MTU %d is not an ibv_mtu value 1..5", p->mtu);
		return OOB_ERR_ARG;
	}
	if (p->run_all) {
		for (unsigned i = PERFTEST_RUN_ALL_MIN_LOG2; i <= PERFTEST_RUN_ALL_MAX_LOG2; i++)
			sizes[nsizes++] = (uint64_t)1 << i;
	} else {
		sizes[nsizes++] = p->size;
	}

	add(&b, PERFTEST_STEP_VERSION, 0, 0, 0);
	add(&b, PERFTEST_STEP_SYSDATA, 0, 0, 0);
	add(&b, PERFTEST_STEP_MTU, 0, 0, 0);

	switch (p->test) {
	case PERFTEST_WRITE_BW:
	case PERFTEST_READ_BW:
	case PERFTEST_ATOMIC_BW:
		add_dests(&b, N, PERFTEST_WHY_QP_INFO);
		add(&b, PERFTEST_STEP_CONNECT, 0, 0, 0);
		add_dests(&b, N, PERFTEST_WHY_QP_AGAIN);
		sync0(&b, PERFTEST_WHY_AFTER_RTR);
		if (!p->duplex) {
			b.phase2 = 1;
			if (client)
				for (unsigned i = 0; i < nsizes; i++)
					add(&b, PERFTEST_STEP_TRAFFIC, 0, 0, sizes[i]);
			sync0(&b, PERFTEST_WHY_CLIENT_DONE);
			add(&b, PERFTEST_STEP_REPORT, 0, 0, 0);
		} else {
			for (unsigned i = 0; i < nsizes; i++) {
				sync0(&b, PERFTEST_WHY_PRE_RUN);
				b.phase2 = 1;
				add(&b, PERFTEST_STEP_TRAFFIC, 0, 0, sizes[i]);
				if (p->run_all)
					sync0(&b, PERFTEST_WHY_POST_RUN);
				add(&b, PERFTEST_STEP_REPORT, 0, 0, 0);
			}
		}
		sync0(&b, PERFTEST_WHY_CLOSE);
		add(&b, PERFTEST_STEP_DONE, 0, 0, 0);
		break;
	case PERFTEST_SEND_BW:
		add_dests(&b, N, PERFTEST_WHY_QP_INFO);
		add(&b, PERFTEST_STEP_CONNECT, 0, 0, 0);
		sync0(&b, PERFTEST_WHY_AFTER_RTR);
		add_dests(&b, N, PERFTEST_WHY_QP_AGAIN);
		for (unsigned i = 0; i < nsizes; i++) {
			if (!client || p->duplex)
				add(&b, PERFTEST_STEP_POST_RECV, 0, 0, sizes[i]);
			sync0(&b, PERFTEST_WHY_PRE_RUN);
			b.phase2 = 1;
			add(&b, PERFTEST_STEP_TRAFFIC, 0, 0, sizes[i]);
			if (p->duplex)
				add(&b, PERFTEST_STEP_REPORT, 0, 0, 0);
			if (p->run_all)
				sync0(&b, PERFTEST_WHY_POST_RUN);
		}
		sync0(&b, PERFTEST_WHY_CLOSE);
		add(&b, PERFTEST_STEP_DONE, 0, 0, 0);
		break;
	case PERFTEST_WRITE_LAT:
		sync0(&b, PERFTEST_WHY_INITIAL);
		add_dests(&b, N, PERFTEST_WHY_QP_INFO);
		add(&b, PERFTEST_STEP_CONNECT, 0, 0, 0);
		add_dests(&b, N, PERFTEST_WHY_QP_AGAIN);
		sync0(&b, PERFTEST_WHY_AFTER_RTR);
		b.phase2 = 1;
		for (unsigned i = 0; i < nsizes; i++)
			add(&b, PERFTEST_STEP_TRAFFIC, 0, 0, sizes[i]);
		/* 6.06's ib_write_lat just closes the socket: no sync, no "done". */
		break;
	case PERFTEST_READ_LAT:
	case PERFTEST_ATOMIC_LAT:
		sync0(&b, PERFTEST_WHY_INITIAL);
		add_dests(&b, N, PERFTEST_WHY_QP_INFO);
		add(&b, PERFTEST_STEP_CONNECT, 0, 0, 0);
		add_dests(&b, N, PERFTEST_WHY_QP_AGAIN);
		sync0(&b, PERFTEST_WHY_AFTER_RTR);
		b.phase2 = 1;
		if (client)
			for (unsigned i = 0; i < nsizes; i++)
				add(&b, PERFTEST_STEP_TRAFFIC, 0, 0, sizes[i]);
		sync0(&b, PERFTEST_WHY_CLOSE);
		add(&b, PERFTEST_STEP_DONE, 0, 0, 0);
		break;
	case PERFTEST_SEND_LAT:
		add_dests(&b, N, PERFTEST_WHY_QP_INFO);
		add(&b, PERFTEST_STEP_CONNECT, 0, 0, 0);
		sync0(&b, PERFTEST_WHY_AFTER_RTR);
		add_dests(&b, N, PERFTEST_WHY_QP_AGAIN);
		for (unsigned i = 0; i < nsizes; i++) {
			add(&b, PERFTEST_STEP_POST_RECV, 0, 0, sizes[i]);
			sync0(&b, PERFTEST_WHY_PRE_RUN);
			b.phase2 = 1;
			add(&b, PERFTEST_STEP_TRAFFIC, 0, 0, sizes[i]);
		}
		sync0(&b, PERFTEST_WHY_CLOSE);
		add(&b, PERFTEST_STEP_DONE, 0, 0, 0);
		break;
	default:
		break;
	}
	if (b.overflow) {
		snprintf(err, errlen, "perftest plan needs more than %zu steps", max);
		return OOB_ERR_ARG;
	}
	*n = b.n;
	return OOB_OK;
}
