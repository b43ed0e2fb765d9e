/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_opts_dump.c
 * The rnic's command line without EAL: parses its arguments as
 * `rnic <EAL args> -- ARGS` would (rnic_parse_args) and prints every parsed
 * field as JSON, or the error line and exit code 2. Drives the argument
 * corpus of tests/python/test_rnic_opts.py, so a parser change that moves
 * any value, message or exit code shows up as a diff.
 */
#include <stdio.h>

#include "rnic_config.h"
#include "rw_json.h"

int
main(int argc, char **argv)
{
	struct rnic_params p;
	struct rw_json w;
	char err[512];
	int rc;

	err[0] = '\0';
	rc = rnic_parse_args(argc, argv, &p, err, sizeof(err));
	if (rc == 1)
		return 0;
	if (rc < 0) {
		printf("error %d: %s\n", rc, err);
		return 2;
	}
	rw_json_init(&w, stdout);
	rw_obj_begin(&w, NULL);
	rnic_params_json(&p, &w);
	/* the fields rnic_params_json leaves out */
	rw_str(&w, "json", p.json);
	rw_uint(&w, "seed", p.seed);
	rw_bool(&w, "report_gbits", p.report_gbits);
	rw_str(&w, "rate_limit", p.rate_limit);
	rw_str(&w, "link_rate", p.link_rate);
	rw_dbl(&w, "pfc_link_gbps", p.pfc_link_gbps);
	rw_str(&w, "rto_min", p.rto_min);
	rw_str(&w, "rto_max", p.rto_max);
	rw_str(&w, "lossless_text", p.lossless);
	rw_uint(&w, "lossless_mask", p.lossless_mask);
	rw_uint(&w, "gw", p.gw);
	rw_uint(&w, "flow_max", p.flow_max);
	rw_obj_end(&w);
	putchar('\n');
	return 0;
}
