/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the results convention writer (lib/common/rw_json). */
#include <math.h>

#include "rw_json.h"
#include "rw_test.h"

static void
test_envelope(void)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	struct rw_json w;

	rw_json_init(&w, f);
	rw_doc_begin(&w, "rnic");
	rw_str(&w, "mode", "write_bw");
	rw_uint(&w, "size_bytes", 65536);
	rw_doc_results(&w, true, 42);
	rw_dbl(&w, "goodput_gbps", 9.5);
	rw_dbl(&w, "nan_value", NAN);
	rw_arr_begin(&w, "loss_bursts");
	rw_arr_begin(&w, NULL);
	rw_int(&w, NULL, 1);
	rw_int(&w, NULL, -7);
	rw_arr_end(&w);
	rw_arr_end(&w);
	rw_str(&w, "quoted", "a\"b\\c\n");
	rw_bool(&w, "ok", true);
	CHECK_EQ(rw_doc_end(&w), 0);
	fclose(f);
	CHECK(strstr(out, "\"schema\": \"rocewan/1\"") != NULL);
	CHECK(strstr(out, "\"app\": \"rnic\"") != NULL);
	CHECK(strstr(out, "\"version\": \"") != NULL);
	CHECK(strstr(out, "\"config\": {") != NULL);
	CHECK(strstr(out, "\"seed\": 42") != NULL);
	CHECK(strstr(out, "\"goodput_gbps\": 9.5") != NULL);
	CHECK(strstr(out, "\"nan_value\": null") != NULL);
	CHECK(strstr(out, "\"quoted\": \"a\\\"b\\\\c\\n\"") != NULL);
	CHECK(strstr(out, "1,\n") != NULL && strstr(out, "-7") != NULL);
	CHECK(out[n - 2] == '}');
	/* balanced braces */
	int depth = 0;
	for (size_t i = 0; i < n; i++)
		depth += (out[i] == '{' || out[i] == '[') - (out[i] == '}' || out[i] == ']');
	CHECK_EQ(depth, 0);
	free(out);
}

static void
test_misuse(void)
{
	struct rw_json w;
	FILE *f = fopen("/dev/null", "w");

	rw_json_init(&w, f);
	rw_obj_end(&w); /* nothing open */
	CHECK(w.err != 0);
	fclose(f);
}

RW_TEST_MAIN(RW_TEST(test_envelope), RW_TEST(test_misuse))
