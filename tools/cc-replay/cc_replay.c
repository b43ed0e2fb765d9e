/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file cc_replay.c
 * Replays DCQCN-p's (Wang et al., J. HFUT 2025) Fig. 4 scenarios through
 * lib/cc's DCQCN and DCQCN-p state machines and prints Rc, Rt and alpha per
 * scheduling round as JSON (./testbed reproduce dcqcn-p-recovery). One round
 * is one rate-increase (timer) event, a congestion mark in a round is one
 * CNP (§2.3), as tests/unit/cc/test_cc.c replays them; rounds 1-2 run at
 * full rate. The DCQCN side runs at 40 Gb/s (the paper's link) with the
 * algorithm's defaults (docs/cc.md), the alpha timer off (rounds are timer
 * events only), once with R_ai = 40 Mb/s (Zhu et al.) and once with Table
 * 3's literal "40 Gbit/s".
 *
 * Usage: cc-replay [max_rounds]   (default 60)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc.h"

#define US 1000ull

static const char *const scenarios[] = {"..C", "..CC", "..CCC", "..CIC"};

/* 'C' = a CNP in that round, 'I' or past the end = a timer increase event. */
static void
replay(const char *algo, const char *label, const struct cc_dcqcn_params *p, bool dcqcnp,
       const char *ev, int max_rounds, bool first)
{
	struct cc_dcqcn_state s;
	uint64_t t_round = (uint64_t)(p->timer_us * US);
	int full = -1, n = (int)strlen(ev);

	if (dcqcnp)
		cc_dcqcnp_init(&s, p);
	else
		cc_dcqcn_init(&s, p);
	printf("%s{\"algo\": \"%s\", \"params\": \"%s\", \"scenario\": \"%s\", \"rounds\": [",
	       first ? "" : ",\n ", algo, label, ev);
	for (int r = 1; r <= max_rounds; r++) {
		char e = r <= n ? ev[r - 1] : 'I';
		uint64_t now = (uint64_t)r * t_round;

		if (e == 'C')
			dcqcnp ? cc_dcqcnp_cnp(&s, p, now) : cc_dcqcn_cnp(&s, p, now);
		else if (e == 'I')
			dcqcnp ? cc_dcqcnp_increase(&s, p, true) : cc_dcqcn_increase(&s, p, true);
		printf("%s[%d, \"%c\", %.10g, %.10g, %.10g]", r > 1 ? ", " : "", r, e, s.rc, s.rt,
		       s.alpha);
		if (r > n && s.rc >= 1.0) {
			full = r;
			break;
		}
	}
	/* rounds after the last decrease ('C') until Rc is 1 again */
	int last_c = 0;

	for (int i = 0; i < n; i++)
		if (ev[i] == 'C')
			last_c = i + 1;
	printf("], \"full_round\": %d, \"rounds_after_last_decrease\": %d}", full,
	       full > 0 ? full - last_c : -1);
}

int
main(int argc, char **argv)
{
	int max_rounds = argc > 1 ? atoi(argv[1]) : 60;
	bool first = true;

	if (max_rounds < 1 || max_rounds > 100000) {
		fprintf(stderr, "cc-replay: max_rounds must be 1..100000\n");
		return 2;
	}
	cc_set_line_rate(40000000000ull);
	printf("[");
	for (unsigned int i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		struct cc_dcqcn_params p = cc_dcqcnp_prm;

		replay("dcqcn-p", "defaults (R_ai 0.2, R_hai 0.8 as ratios, g 1/16, F 5)", &p, true,
		       scenarios[i], max_rounds, first);
		first = false;
		p = cc_dcqcn_prm;
		p.alpha_timer_us = 0;
		replay("dcqcn", "R_ai 40 Mb/s at 40 Gb/s (Zhu et al.)", &p, false, scenarios[i],
		       max_rounds, false);
		p.rai = 40000;
		replay("dcqcn", "R_ai 40 Gb/s (Table 3 literal)", &p, false, scenarios[i],
		       max_rounds, false);
	}
	printf("]\n");
	return 0;
}
