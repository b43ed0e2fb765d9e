#include "rw_test.h"
static void t0(void) { CHECK(1); }
RW_TEST_MAIN(RW_TEST(t0))
