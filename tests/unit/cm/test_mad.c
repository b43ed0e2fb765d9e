/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: the common MAD header (lib/cm/mad). */
#include "mad.h"
#include "rw_test.h"

static void
test_hdr_roundtrip(void)
{
	uint8_t m[MAD_SIZE] = {0};
	struct mad_hdr h = {.base_version = 1,
			    .mgmt_class = MAD_CLASS_CM,
			    .class_version = MAD_CLASS_CM_VERSION,
			    .method = MAD_METHOD_SEND,
			    .tid = 0x0102030405060708ull,
			    .attr_id = MAD_ATTR_CM_REQ},
		       g;

	mad_hdr_build(m, &h);
	/* IBTA Vol. 1 figure 144: byte offsets of the fields */
	CHECK_EQ(m[0], 1);
	CHECK_EQ(m[1], 0x07);
	CHECK_EQ(m[2], 2);
	CHECK_EQ(m[3], 0x03);
	CHECK_EQ(m[8], 0x01);
	CHECK_EQ(m[15], 0x08);
	CHECK_EQ(m[16], 0x00);
	CHECK_EQ(m[17], 0x10);
	CHECK_EQ(mad_hdr_parse(m, sizeof(m), &g), 0);
	CHECK_EQ(g.tid, h.tid);
	CHECK_EQ(g.attr_id, MAD_ATTR_CM_REQ);
	CHECK_EQ(mad_hdr_parse(m, MAD_SIZE - 1, &g), -MAD_E_SHORT);
	m[0] = 2;
	CHECK_EQ(mad_hdr_parse(m, sizeof(m), &g), -MAD_E_BASE_VERSION);
}

RW_TEST_MAIN(RW_TEST(test_hdr_roundtrip))
