/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file cc_params.c
 * Parameters of every lib/cc algorithm: defaults with their source (one
 * table, also the --help text and docs/cc.md), --cc-param parsing, the WAN
 * profile, the line rate and registration with the engine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc.h"

static uint64_t line_bps = 10000000000ull;

void
cc_set_line_rate(uint64_t bps)
{
	if (bps)
		line_bps = bps;
}

uint64_t
cc_line_rate(void)
{
	return line_bps;
}

/* DCQCN: Zhu et al. 2015 and the sources in rnic_peers §3 (docs/cc.md) */
struct cc_dcqcn_params cc_dcqcn_prm = {
    .g = 1.0 / 256,	      /* DCQCN-p (Wang et al.) Table 3 (DCQCN), Zhu et al. 2015 */
    .alpha0 = 1.0,	      /* NVIDIA INITIAL_ALPHA_VALUE 1023 (Q10) = 1.0 */
    .alpha_timer_us = 55,     /* Zhu et al. 2015 K; HPCC ns-3 AlphaResumInterval 55 us */
    .timer_us = 55,	      /* DCQCN-p (Wang et al.) Tables 2-3 (DCQCN): time threshold 55 us */
    .byte_counter = 10485760, /* DCQCN-p (Wang et al.) Tables 2-3: byte threshold 10 MiB */
    .f = 5,		      /* DCQCN-p (Wang et al.) Table 3, Zhu et al. 2015: F = 5 */
    .rai = 40,		      /* Mb/s: Zhu et al. 2015 (DCQCN-p Table 3: "40 Gbit/s") */
    .rhai = 200,	      /* Mb/s: bobzhuyb/ns3-rdma mix/config.txt with RATE_AI 40 */
    .min_rate_mbps = 100,     /* bobzhuyb/ns3-rdma and HPCC ns-3 MinRate 100 Mb/s */
    .dec_interval_us = 4,     /* NVIDIA RATE_REDUCE_MONITOR_PERIOD 4 us; HPCC ns-3 4 us */
    .cnp_interval_us = 50,    /* Zhu et al. 2015 N = 50 us; DCQCN-p Table 3 (DCQCN) */
    .hyper = 1,
    .ratios = false,
    .becn_ack = 0,
};

/* DCQCN-p: DCQCN-p (Wang et al.) §2.1 and Tables 2-3 */
struct cc_dcqcn_params cc_dcqcnp_prm = {
    .g = 1.0 / 16,	      /* Table 3 (DCQCN-p) */
    .alpha0 = 1.0,	      /* pseudo-code line 4: "a starts at 1" */
    .alpha_timer_us = 0,      /* alpha moves with the increase timer (lines 12-15) */
    .timer_us = 55,	      /* Tables 2-3, §3.1: 55 us */
    .byte_counter = 10485760, /* Tables 2-3, §3.1: 10 MiB */
    .f = 5,		      /* Table 3 */
    .rai = 0.2,		      /* Table 3 / §3.2: R_ai = 0.2, read as a ratio (interpretation) */
    .rhai = 0.8,	      /* §3.2: R_hai = 0.8, read as a ratio (interpretation) */
    .min_rate_mbps = 100,     /* not in the seed: DCQCN's floor */
    .dec_interval_us = 4,     /* not valued in the seed: NVIDIA's 4 us monitor period */
    .cnp_interval_us = 0,     /* Table 3: a CNP per marked packet */
    .hyper = 0,		      /* §2.1: hyper increase can be ignored */
    .ratios = true,
    .becn_ack = 1, /* §2.1: RC answers CE with a BECN-flagged ACK */
};

struct cc_dctcp_params cc_dctcp_prm = {
    .g = 1.0 / 16,  /* Alizadeh et al. 2010 §3.1; HPCC ns-3 run.py --cc dctcp */
    .init_cwnd = 0, /* 0: start at the QP window (line rate, like every other CC) */
    .min_cwnd = 2,
};

struct cc_timely_params cc_timely_prm = {
    .alpha = 0.875, /* HPCC ns-3 TimelyAlpha */
    .beta = 0.8,    /* HPCC ns-3 TimelyBeta; Mittal et al. 2015 */
    .t_low_us = 50, /* HPCC ns-3 / bobzhuyb timely branch */
    .t_high_us = 500,
    .min_rtt_us = 20,
    .delta_mbps = 10, /* bobzhuyb timely branch Delta 10 Mb/s */
    .hai_n = 5,	      /* HPCC ns-3: HAI after 5 consecutive increases */
    .min_rate_mbps = 100,
    .base_rtt = 0, /* Mittal et al. 2015: thresholds on the absolute RTT */
    .queue_signal = 0,
};

enum { P_DCQCN, P_DCQCNP, P_DCTCP, P_TIMELY };

struct cc_param {
	int algo;
	const char *name;
	size_t off;
	double min, max;
	const char *help;
};

#define DQ(f) offsetof(struct cc_dcqcn_params, f)
#define DT(f) offsetof(struct cc_dctcp_params, f)
#define TM(f) offsetof(struct cc_timely_params, f)

static const struct cc_param params[] = {
#define DQ_ROWS(A)                                                                                 \
	{A, "g", DQ(g), 0, 1, "alpha gain"}, {A, "alpha0", DQ(alpha0), 0, 1, "alpha at start"},    \
	    {A, "alpha_timer_us", DQ(alpha_timer_us), 0, 1e7, "alpha decay period (0: off)"},      \
	    {A, "timer_us", DQ(timer_us), 0, 1e7, "rate-increase timer T (us)"},                   \
	    {A, "byte_counter", DQ(byte_counter),                                                  \
	     0, 1e12,		"rate-increase byte counter B (bytes, 0: off)"},                   \
	    {A, "f", DQ(f), 0, 1000, "F: fast-recovery events"},                                   \
	    {A, "rai", DQ(rai),                                                                    \
	     0, 1e6,   "additive increase (dcqcn: Mb/s; dcqcn-p: ratio of line rate)"},            \
	    {A, "rhai", DQ(rhai), 0, 1e6, "hyper increase (same unit as rai)"},                    \
	    {A, "min_rate_mbps", DQ(min_rate_mbps), 0, 1e6, "minimum rate (Mb/s)"},                \
	    {A,                                                                                    \
	     "dec_interval_us",                                                                    \
	     DQ(dec_interval_us),                                                                  \
	     0,                                                                                    \
	     1e7,                                                                                  \
	     "at most one decrease per interval (us)"},                                            \
	    {A,                                                                                    \
	     "cnp_interval_us",                                                                    \
	     DQ(cnp_interval_us),                                                                  \
	     0,                                                                                    \
	     1e7,                                                                                  \
	     "NP: minimum CNP interval per QP (us, 0: every mark)"},                               \
	    {A, "hyper", DQ(hyper), 0, 1, "1: hyper increase when T and B both reach F"},          \
	{                                                                                          \
		A, "becn_ack", DQ(becn_ack), 0, 1,                                                 \
		    "NP (RC): 1 = BECN-flagged ACK instead of a CNP"                               \
	}
    DQ_ROWS(P_DCQCN),
    DQ_ROWS(P_DCQCNP),
    {P_DCTCP, "g", DT(g), 0, 1, "alpha gain"},
    {P_DCTCP, "init_cwnd", DT(init_cwnd), 0, 1 << 21, "initial window (packets, 0: the QP window)"},
    {P_DCTCP, "min_cwnd", DT(min_cwnd), 1, 1 << 21, "minimum window (packets)"},
    {P_TIMELY, "alpha", TM(alpha), 0, 1, "EWMA weight of the RTT difference"},
    {P_TIMELY, "beta", TM(beta), 0, 1, "multiplicative decrease"},
    {P_TIMELY, "t_low_us", TM(t_low_us), 0, 1e7, "T_low (us)"},
    {P_TIMELY, "t_high_us", TM(t_high_us), 0, 1e7, "T_high (us)"},
    {P_TIMELY, "min_rtt_us", TM(min_rtt_us), 0.001, 1e7, "minimum RTT, the gradient's scale (us)"},
    {P_TIMELY, "delta_mbps", TM(delta_mbps), 0, 1e6, "additive step delta (Mb/s)"},
    {P_TIMELY, "hai_n", TM(hai_n), 0, 1000, "N: negative-gradient samples before HAI"},
    {P_TIMELY, "min_rate_mbps", TM(min_rate_mbps), 0, 1e6, "minimum rate (Mb/s)"},
    {P_TIMELY, "base_rtt", TM(base_rtt), 0, 1, "1: T_low/T_high against RTT - least measured RTT"},
    {P_TIMELY, "queue_signal", TM(queue_signal), 0, 1000,
     "N: N samples in a row above T_low end the loss window's slow start (base_rtt only; 0: off)"},
};

static const char *const algo_names[] = {"dcqcn", "dcqcn-p", "dctcp", "timely"};

static void *
algo_struct(int a)
{
	switch (a) {
	case P_DCQCN:
		return &cc_dcqcn_prm;
	case P_DCQCNP:
		return &cc_dcqcnp_prm;
	case P_DCTCP:
		return &cc_dctcp_prm;
	default:
		return &cc_timely_prm;
	}
}

/*
 * profile=wan: NVIDIA's WAN setting of the rate-increase timer, RPG_TIME_RESET
 * 5000 us for 50-400 km (rnic_peers §3.1). The alpha timer and the decrease
 * interval are stretched to the same 5 ms so that a 10-40 ms feedback loop is
 * not cut a thousand times per round trip: that part is our scaling, not a
 * published value (docs/cc.md).
 */
static void
profile_wan(int a)
{
	if (a == P_DCQCN || a == P_DCQCNP) {
		struct cc_dcqcn_params *p = algo_struct(a);

		p->timer_us = 5000;
		if (a == P_DCQCN)
			p->alpha_timer_us = 5000;
		p->dec_interval_us = 5000;
	} else if (a == P_TIMELY) {
		/*
		 * Thresholds on the queueing delay (base_rtt, docs/cc.md): T_low
		 * 5 ms is above this host's millisecond scheduling stalls, T_high
		 * 25 ms a queue well below a WAN bottleneck's buffer (2 MB at
		 * 200 Mb/s: 80 ms). Our choice, not a published value. The queue
		 * signal needs 8 samples in a row above T_low, as HyStart's delay
		 * test takes the least of 8 samples (Ha and Rhee 2011).
		 */
		cc_timely_prm.t_low_us = 5000;
		cc_timely_prm.t_high_us = 25000;
		cc_timely_prm.base_rtt = 1;
		cc_timely_prm.queue_signal = 8; /* HyStart's 8 samples (Ha and Rhee 2011) */
	}
}

int
cc_set_params(const char *algo, const char *spec, char *err, size_t errlen)
{
	char buf[512], *save = NULL, *tok;
	int a = -1;

	for (int i = 0; i < 4; i++)
		if (strcmp(algo, algo_names[i]) == 0)
			a = i;
	if (a < 0) {
		snprintf(err, errlen, "--cc-param: --cc %s has no parameters", algo);
		return -EINVAL;
	}
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "--cc-param: too long");
		return -EINVAL;
	}
	/* the profile first, wherever it is written */
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strncmp(tok, "profile=", 8) != 0)
			continue;
		if (strcmp(tok + 8, "wan") == 0) {
			profile_wan(a);
		} else if (strcmp(tok + 8, "dc") != 0) {
			snprintf(err, errlen, "--cc-param: profile \"%s\" is not one of dc|wan",
				 tok + 8);
			return -EINVAL;
		}
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		const struct cc_param *p = NULL;
		double v;

		if (!eq) {
			snprintf(err, errlen, "--cc-param: \"%s\" is not name=value", tok);
			return -EINVAL;
		}
		*eq = 0;
		if (strcmp(tok, "profile") == 0)
			continue;
		for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++)
			if (params[i].algo == a && strcmp(params[i].name, tok) == 0)
				p = &params[i];
		if (!p) {
			snprintf(err, errlen, "--cc-param: %s has no parameter \"%s\" (see --help)",
				 algo, tok);
			return -EINVAL;
		}
		v = strtod(eq + 1, &end);
		if (end == eq + 1 || *end || !(v >= p->min && v <= p->max)) {
			snprintf(err, errlen, "--cc-param: %s=%s is not a number in %g..%g", tok,
				 eq + 1, p->min, p->max);
			return -EINVAL;
		}
		*(double *)(void *)((char *)algo_struct(a) + p->off) = v;
	}
	cc_dcqcn.becn_ack = cc_dcqcn_prm.becn_ack != 0;
	cc_dcqcn_p.becn_ack = cc_dcqcnp_prm.becn_ack != 0;
	return 0;
}

void
cc_params_help(FILE *f)
{
	fprintf(
	    f,
	    "--cc-param name=value,... (profile=wan|dc first; defaults and sources: docs/cc.md)\n");
	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		const struct cc_param *p = &params[i];

		fprintf(f, "  %-8s %-16s %-10g %s\n", algo_names[p->algo], p->name,
			*(double *)(void *)((char *)algo_struct(p->algo) + p->off), p->help);
	}
}

int
cc_register_all(void)
{
	struct roce_cc_ops *all[] = {&cc_dcqcn, &cc_dcqcn_p, &cc_dctcp, &cc_timely};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		int rc = roce_cc_register(all[i]);

		if (rc < 0 && rc != -EEXIST)
			return rc;
	}
	return 0;
}
