/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the rnic command line: perftest letters, defaults, errors that name the option. */
#include <errno.h>
#include <math.h>

#include "rnic_config.h"
#include "rw_json.h"
#include "rw_test.h"

static int
parse(struct rnic_params *p, char *err, const char *line)
{
	char buf[512], *argv[32];
	int argc = 0;

	snprintf(buf, sizeof(buf), "rnic %s", line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	err[0] = 0;
	return rnic_parse_args(argc, argv, p, err, 256);
}

static void
test_defaults_and_perftest_letters(void)
{
	struct rnic_params p;
	char err[256];

	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 write_bw"), 0);
	CHECK_EQ(p.mode, RNIC_MODE_WRITE_BW);
	CHECK_EQ(p.size, 65536);
	CHECK_EQ(p.iters, 5000);
	CHECK_EQ(p.mtu, 1024);
	CHECK_EQ(p.tcp_port, 18515);
	CHECK_EQ(p.prefix, 24);
	CHECK_EQ(p.ip, 0x0a000001);
	CHECK_EQ(p.vlan, -1);
	CHECK_EQ(p.dscp, 26);
	CHECK(p.server[0] == 0);
	CHECK(strcmp(p.recovery, "gbn") == 0);
	CHECK_EQ(p.max_ooo, 0);
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 --recovery gbone --max-ooo 4096 write_bw"), 0);
	CHECK(strcmp(p.recovery, "gbone") == 0);
	CHECK_EQ(p.max_ooo, 4096);
	CHECK_EQ(parse(&p, err,
		       "--ip 10.0.0.1/24 --recovery=IRN --rto-low 800 --rto-high 2480 write_bw"),
		 0);
	CHECK(strcmp(p.recovery, "irn") == 0);
	CHECK_EQ(p.rto_low_us, 800);
	CHECK_EQ(p.rto_high_us, 2480);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --recovery gbtwo write_bw") < 0);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --max-ooo 65537 write_bw") < 0);
	CHECK_EQ(parse(&p, err,
		       "--ip=10.0.0.1/16 -s 4096 -n 20 -m 4096 -q 2 -x 0 -c UC -p 9999 "
		       "--report_gbits -t 64 write_bw 10.0.0.2"),
		 0);
	CHECK_EQ(p.size, 4096);
	CHECK_EQ(p.iters, 20);
	CHECK_EQ(p.mtu, 4096);
	CHECK_EQ(p.num_qps, 2);
	CHECK_EQ(p.conn, RNIC_CONN_UC);
	CHECK_EQ(p.tcp_port, 9999);
	CHECK(p.report_gbits);
	CHECK(strcmp(p.server, "10.0.0.2") == 0);
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 -s64K --out_json_file=/tmp/r.json send_bw"), 0);
	CHECK_EQ(p.size, 65536);
	CHECK(strcmp(p.json, "/tmp/r.json") == 0);
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 -d rxe0 -F atomic_bw"), 0); /* ignored options */
	CHECK_EQ(p.size, 8);
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 --ip6 fd00::1 -x 1 --vlan 100 --pcp 5 read_bw h"),
		 0);
	CHECK(p.has_ip6);
	CHECK_EQ(p.ip6_prefix, 64); /* the default */
	CHECK(!p.has_gw6);
	CHECK_EQ(
	    parse(&p, err, "--ip 10.0.0.1/24 --ip6 fd00:1::11/48 --gw6 fd00:1:0:7::1 write_bw"), 0);
	CHECK_EQ(p.ip6_prefix, 48);
	CHECK(p.has_gw6);
	CHECK_EQ(p.gw6[7], 7);
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 --ip6 fd00:1::11 --gw6 fe80::1 write_bw"), 0);
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 --ip6 fd00::1 -x 1 --vlan 100 --pcp 5 read_bw h"),
		 0);
	CHECK_EQ(p.vlan, 100);
	CHECK_EQ(p.pcp, 5);
}

static void
test_errors_name_the_option(void)
{
	struct rnic_params p;
	char err[256];

	CHECK(parse(&p, err, "write_bw") < 0);
	CHECK(strstr(err, "--ip") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24") < 0);
	CHECK(strstr(err, "no mode") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 write_bww") < 0);
	CHECK(strstr(err, "unknown mode \"write_bww\"") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 -m 1000 write_bw") < 0);
	CHECK(strstr(err, "--mtu") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 -m 8192 write_bw") < 0);
	CHECK(strstr(err, "256..4096") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.300/24 write_bw") < 0);
	CHECK(strstr(err, "not an IPv4 address") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/40 write_bw") < 0);
	CHECK(strstr(err, "prefix") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 -c XRC write_bw") < 0);
	CHECK(strstr(err, "RC|UC|UD") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 -R write_bw") == -ENOTSUP);
	CHECK(strstr(err, "RDMA CM") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --bogus write_bw") < 0);
	CHECK(strstr(err, "--bogus") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 -s") < 0);
	CHECK(strstr(err, "needs a value") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 -s abc write_bw") < 0);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 -c UD write_bw") < 0);
	CHECK(strstr(err, "UD") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 -c UC read_bw") < 0);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 -x 1 write_bw") < 0);
	CHECK(strstr(err, "--ip6") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --gw 10.0.1.1 write_bw") < 0);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --ip6 fd00::1/129 write_bw") < 0);
	CHECK(strstr(err, "the prefix length after / must be 1..128") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --ip6 fd00::1/ write_bw") < 0);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --ip6 fd00::1/6x write_bw") < 0);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --ip6 fd00::1 --gw6 fd00::2/64 write_bw") < 0);
	CHECK(strstr(err, "give the address alone, without /N") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --gw6 fe80::1 write_bw") < 0);
	CHECK(strstr(err, "--gw6 needs --ip6") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --ip6 fd00:1::11/64 --gw6 fd00:2::1 write_bw") < 0);
	CHECK(strstr(err, "is not on-link") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 write_bw a b") < 0);
	CHECK(strstr(err, "unexpected argument \"b\"") != NULL);
}

static void
test_json_dump(void)
{
	struct rnic_params p;
	char err[256], *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	struct rw_json w;

	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 -s 4096 write_bw 10.0.0.2"), 0);
	rw_json_init(&w, f);
	rw_doc_begin(&w, "rnic");
	rnic_params_json(&p, &w);
	rw_doc_results(&w, true, p.seed);
	CHECK_EQ(rw_doc_end(&w), 0);
	fclose(f);
	CHECK(strstr(out, "\"size_bytes\": 4096") != NULL);
	CHECK(strstr(out, "\"role\": \"client\"") != NULL);
	CHECK(strstr(out, "\"ip\": \"10.0.0.1\"") != NULL);
	free(out);
}

/* Wang (NJUPT), Table I: WebSearch flow sizes (bytes, cumulative percent). */
static const char websearch[] = "# WebSearch\n10 4\n100 7\n1000 10\n10000 15\n"
				"100000 60\n1000000 75\n10000000 100\n";

static void
test_cdf_sampling(void)
{
	struct rnic_cdf c;
	char err[256];
	double sum = 0;
	uint64_t below_1k = 0;
	const int n = 200000;

	CHECK_EQ(rnic_cdf_parse(&c, websearch, "ws", err, sizeof(err)), 0);
	CHECK_EQ(c.n, 7);
	CHECK_EQ(rnic_cdf_max(&c), 10000000);
	/* points and interpolation */
	CHECK_EQ(rnic_cdf_sample(&c, 0.0), 10);
	CHECK_EQ(rnic_cdf_sample(&c, 0.035), 10);
	CHECK_EQ(rnic_cdf_sample(&c, 0.055), 55);	  /* halfway 10..100 */
	CHECK_EQ(rnic_cdf_sample(&c, 0.375), 55000);	  /* halfway 10 KB..100 KB */
	CHECK_EQ(rnic_cdf_sample(&c, 0.999999), 9999964); /* 1e6 + 24.9999/25 x 9e6 */
	/* the mean of many draws matches the analytic mean; the CDF at 1 KB is 10 % */
	uint64_t s = 12345;
	for (int i = 0; i < n; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t v = rnic_cdf_sample(&c, (double)(s >> 11) * 0x1.0p-53);
		sum += (double)v;
		below_1k += v <= 1000;
	}
	double mean = rnic_cdf_mean(&c);
	CHECK(fabs(mean - 1482543.4) < 1); /* sum of segment mass x segment midpoint */
	CHECK(fabs(sum / n - mean) / mean < 0.02);
	CHECK(fabs((double)below_1k / n - 0.10) < 0.005);
}

static void
test_cdf_errors(void)
{
	struct rnic_cdf c;
	char err[256];

	CHECK(rnic_cdf_parse(&c, "10 5\n5 50\n", "f", err, sizeof(err)) < 0);
	CHECK(strstr(err, "f:2:") && strstr(err, "increase"));
	CHECK(rnic_cdf_parse(&c, "10 5\n100 50\n", "f", err, sizeof(err)) < 0);
	CHECK(strstr(err, "last point must have percent 100") != NULL);
	CHECK(rnic_cdf_parse(&c, "10 5\nabc 50\n", "f", err, sizeof(err)) < 0);
	CHECK(strstr(err, "f:2:") != NULL);
	CHECK(rnic_cdf_parse(&c, "10 500\n", "f", err, sizeof(err)) < 0);
	CHECK(strstr(err, "percent in 0..100") != NULL);
	CHECK(rnic_cdf_parse(&c, "", "f", err, sizeof(err)) < 0);
	CHECK(rnic_cdf_load(&c, "/nonexistent/cdf", err, sizeof(err)) < 0);
	CHECK(strstr(err, "/nonexistent/cdf") != NULL);
}

static void
test_flow_and_rate_options(void)
{
	struct rnic_params p;
	char err[256];

	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 --rate_limit 0.95 --flows 100 -s 1M write_bw h"),
		 0);
	CHECK(fabs(p.rate_gbps - 0.95) < 1e-9);
	CHECK(fabs(p.link_gbps - 0.95) < 1e-9);
	CHECK_EQ(p.flows, 100);
	CHECK_EQ(p.flow_max, 1 << 20);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --rate_limit fast write_bw") < 0);
	CHECK(strstr(err, "--rate_limit") && strstr(err, "Gb/s"));
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --flows 10 --load 50 write_bw") < 0);
	CHECK(strstr(err, "--link-rate") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --flows 10 send_bw") < 0);
	CHECK(strstr(err, "write_bw") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --load 50 write_bw") < 0);
	CHECK(strstr(err, "--flows") != NULL);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --flows 5 --flow-cdf /nonexistent write_bw") < 0);
	CHECK(strstr(err, "--flow-cdf") && strstr(err, "/nonexistent"));
}

static void
test_pfc_options(void)
{
	struct rnic_params p;
	char err[256];

	/* default: obey PFC on the rnic's own priority, DSCP 26 >> 3 = 3 */
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 write_bw"), 0);
	CHECK(p.pfc_on);
	CHECK_EQ(p.own_prio, 3);
	CHECK_EQ(p.lossless_mask, 1 << 3);
	CHECK(p.pfc_link_gbps == 0);
	/* --vlan: the PCP is the priority; --tclass overrides --dscp */
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 --vlan 7 --pcp 5 write_bw"), 0);
	CHECK_EQ(p.own_prio, 5);
	CHECK_EQ(p.lossless_mask, 1 << 5);
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 --tclass 192 write_bw"), 0); /* DSCP 48 */
	CHECK_EQ(p.own_prio, 6);
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 --pfc off --lossless 3,4 --link-rate 1 write_bw"),
		 0);
	CHECK(!p.pfc_on);
	CHECK_EQ(p.lossless_mask, (1 << 3) | (1 << 4));
	CHECK(fabs(p.pfc_link_gbps - 1) < 1e-9);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --lossless 9 write_bw") < 0);
	CHECK(strstr(err, "--lossless") && strstr(err, "0..7"));
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --pfc maybe write_bw") < 0);
	CHECK(strstr(err, "--pfc") && strstr(err, "on|off"));
	/* sending PFC: off by default; XON below XOFF; one lcore */
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 write_bw"), 0);
	CHECK_EQ(p.pfc_xoff, 0);
	CHECK_EQ(p.pfc_xon, 31);
	CHECK_EQ(p.pfc_quanta, 65535);
	CHECK_EQ(p.slow_rx_us, 0);
	CHECK_EQ(parse(&p, err,
		       "--ip 10.0.0.1/24 --pfc-xoff 64 --pfc-xon 8 --pfc-quanta 1000 "
		       "--slow-rx-us 300 write_bw"),
		 0);
	CHECK_EQ(p.pfc_xoff, 64);
	CHECK_EQ(p.pfc_xon, 8);
	CHECK_EQ(p.pfc_quanta, 1000);
	CHECK_EQ(p.slow_rx_us, 300);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --pfc-xoff 31 write_bw") < 0);
	CHECK(strstr(err, "--pfc-xon: 31 frames must be below --pfc-xoff 31"));
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 --pfc-xoff 64 --lcores 2 -q 2 write_bw"), 0);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --pfc-quanta 0 write_bw") < 0);
	CHECK(strstr(err, "--pfc-quanta"));
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 --pfc-xon 100 write_bw"),
		 0); /* unused without xoff */
}

/* --rto adaptive|fixed, --rto-min / --rto-max as times, with one clear error each. */
static void
test_rto_options(void)
{
	struct rnic_params p;
	char err[256];

	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 write_bw"), 0);
	CHECK(strcmp(p.rto, "adaptive") == 0); /* the default: docs/transport.md */
	CHECK_EQ(p.rto_min_ns, 500000);	       /* 500 us: the stall allowance covers the stalls */
	CHECK_EQ(p.rto_max_ns, 1000000000);
	CHECK_EQ(p.rto_stall_ns, 2000000000ull);
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 --rto-stall-memory 0s write_bw"), 0);
	CHECK_EQ(p.rto_stall_ns, 0); /* no allowance */
	CHECK_EQ(parse(&p, err, "--ip 10.0.0.1/24 --rto-stall-memory 500ms write_bw"), 0);
	CHECK_EQ(p.rto_stall_ns, 500000000);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --rto-stall-memory 2h write_bw") < 0);
	CHECK(strstr(err, "--rto-stall-memory"));
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --rto-stall-memory x write_bw") < 0);
	CHECK(strstr(err, "--rto-stall-memory"));
	CHECK_EQ(
	    parse(&p, err, "--ip 10.0.0.1/24 --rto fixed --rto-min 800us --rto-max 2.5s write_bw"),
	    0);
	CHECK(strcmp(p.rto, "fixed") == 0);
	CHECK_EQ(p.rto_min_ns, 800000);
	CHECK_EQ(p.rto_max_ns, 2500000000ull);
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --rto sometimes write_bw") < 0);
	CHECK(strstr(err, "--rto") && strstr(err, "adaptive|fixed"));
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --rto-min 5 write_bw") < 0); /* no unit: refused */
	CHECK(strstr(err, "--rto-min"));
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --rto-min 0us write_bw") < 0);
	CHECK(strstr(err, "--rto-min"));
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --rto-max 2h write_bw") < 0);
	CHECK(strstr(err, "--rto-max"));
	CHECK(parse(&p, err, "--ip 10.0.0.1/24 --rto-min 2s --rto-max 1s write_bw") < 0);
	CHECK(strstr(err, "above --rto-max"));
}

/* -b: only where perftest has it, and where each side can count what it receives */
static void
test_bidirectional_options(void)
{
	struct rnic_params b;
	char err[256];

	CHECK_EQ(parse(&b, err, "--ip 10.0.0.1/24 -b write_bw"), 0);
	CHECK(b.bidirectional);
	CHECK_EQ(parse(&b, err, "--ip 10.0.0.1/24 -b -D 2 write_bw"), 0);
	CHECK(parse(&b, err, "--ip 10.0.0.1/24 -b read_lat") < 0 &&
	      strstr(err, "-b runs in the bandwidth"));
	CHECK(parse(&b, err, "--ip 10.0.0.1/24 -b --flows 3 write_bw 10.0.0.2") < 0 &&
	      strstr(err, "--flows"));
	CHECK(parse(&b, err, "--ip 10.0.0.1/24 -b -D 2 send_bw") < 0 &&
	      strstr(err, "-n instead of -D"));
}

/* --seed: its help names what the code seeds (PSNs, --flows draws), nothing else */
static void
test_seed(void)
{
	struct rnic_params a, b;
	char err[256], *help = NULL, *line;
	size_t len = 0;
	FILE *f = open_memstream(&help, &len);

	CHECK_EQ(parse(&a, err, "--ip 10.0.0.1/24 --seed 7 -q 2 write_bw"), 0);
	CHECK_EQ(parse(&b, err, "--ip 10.0.0.1/24 --seed 8 -q 2 write_bw"), 0);
	CHECK(rnic_initial_psn(&a, 0) != rnic_initial_psn(&b, 0));
	CHECK(rnic_initial_psn(&a, 0) != rnic_initial_psn(&a, 1));
	CHECK(rnic_initial_psn(&a, 1) <= 0xffffff);
	CHECK_EQ(parse(&b, err, "--ip 10.0.0.1/24 --seed 7 -q 2 write_bw 10.0.0.2"), 0);
	CHECK(rnic_initial_psn(&a, 0) != rnic_initial_psn(&b, 0)); /* server and client differ */
	CHECK_EQ(parse(&b, err, "--ip 10.0.0.2/24 --seed 7 -q 2 write_bw"), 0);
	CHECK_EQ(rnic_initial_psn(&a, 1), rnic_initial_psn(&b, 1)); /* same seed, same PSN */
	CHECK(f != NULL);
	rnic_print_help(f);
	fclose(f);
	line = strstr(help, "--seed");
	CHECK(line != NULL);
	if (line) {
		char *nl = strstr(line, "\n  -"); /* the entry ends where the next option starts */

		if (nl)
			*nl = 0;
		CHECK(strstr(line, "PSN") != NULL && strstr(line, "--flows") != NULL);
		CHECK(strstr(line, "drops") == NULL && strstr(line, "keys and") == NULL);
	}
	free(help);
}

RW_TEST_MAIN(RW_TEST(test_defaults_and_perftest_letters), RW_TEST(test_seed),
	     RW_TEST(test_bidirectional_options), RW_TEST(test_pfc_options),
	     RW_TEST(test_rto_options), RW_TEST(test_errors_name_the_option),
	     RW_TEST(test_json_dump), RW_TEST(test_cdf_sampling), RW_TEST(test_cdf_errors),
	     RW_TEST(test_flow_and_rate_options))
