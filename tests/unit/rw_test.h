/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rw_test.h
 * A minimal unit-test harness: CHECK* record a failure with file:line and go
 * on; each test file ends with RW_TEST_MAIN listing its cases. The last line
 * printed is "N passed, N failed" (counted per check), and the exit code is
 * non-zero on any failure or if no check ran at all.
 */
#ifndef RW_TEST_H
#define RW_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned rw_t_pass, rw_t_fail;
static const char *rw_t_case;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (cond) {                                                                        \
			rw_t_pass++;                                                               \
		} else {                                                                           \
			rw_t_fail++;                                                               \
			fprintf(stderr, "%s:%d: [%s] check failed: %s\n", __FILE__, __LINE__,      \
				rw_t_case, #cond);                                                 \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		long long rw_a_ = (long long)(a), rw_b_ = (long long)(b);                          \
		if (rw_a_ == rw_b_) {                                                              \
			rw_t_pass++;                                                               \
		} else {                                                                           \
			rw_t_fail++;                                                               \
			fprintf(stderr, "%s:%d: [%s] %s == %s failed: %lld != %lld\n", __FILE__,   \
				__LINE__, rw_t_case, #a, #b, rw_a_, rw_b_);                        \
		}                                                                                  \
	} while (0)

#define CHECK_MEM(a, b, n) CHECK(memcmp((a), (b), (n)) == 0)

typedef void (*rw_test_fn)(void);
struct rw_test_case {
	const char *name;
	rw_test_fn fn;
};

#define RW_TEST(fn)                                                                                \
	{                                                                                          \
#fn, fn                                                                            \
	}

#define RW_TEST_MAIN(...)                                                                          \
	int main(void)                                                                             \
	{                                                                                          \
		static const struct rw_test_case cases[] = {__VA_ARGS__};                          \
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {                    \
			unsigned f0 = rw_t_fail;                                                   \
			rw_t_case = cases[i].name;                                                 \
			cases[i].fn();                                                             \
			printf("%-40s %s\n", cases[i].name, rw_t_fail == f0 ? "ok" : "FAIL");      \
		}                                                                                  \
		printf("%u passed, %u failed\n", rw_t_pass, rw_t_fail);                            \
		return (rw_t_fail || rw_t_pass == 0) ? 1 : 0;                                      \
	}

#endif /* RW_TEST_H */
