#include "rw_test.h"
static void t(void){CHECK(1);}
RW_TEST_MAIN(RW_TEST(t))
