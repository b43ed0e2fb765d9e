/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mad.h
 * The common MAD header (IBTA Vol. 1 13.4.2, "Management Datagram Format") and the
 * constants of the classes QP1 carries on the rnic: the Communication Management class
 * (ch. 12, class 0x07) and the rnic's vendor class. DPDK-free; every accessor is bounded
 * by the caller's length and goes through net_bytes.h.
 *
 * A MAD is exactly 256 bytes (13.4.1); the common header is its first 24.
 */
#ifndef RW_MAD_H
#define RW_MAD_H

#include <stddef.h>
#include <stdint.h>

#define MAD_SIZE 256u
#define MAD_HDR_SIZE 24u
#define MAD_DATA_SIZE (MAD_SIZE - MAD_HDR_SIZE)

/* QP1, the General Services Interface (IBTA Vol. 1 13.5.1; Q_Key 0x80010000 per 10.2.4 /
 * 13.5.1.1) */
#define MAD_GSI_QPN 1u
#define MAD_GSI_QKEY 0x80010000u
#define MAD_DEFAULT_PKEY 0xffffu

#define MAD_BASE_VERSION 1u

/* Management classes (IBTA Vol. 1 table 132) */
#define MAD_CLASS_CM 0x07u
#define MAD_CLASS_CM_VERSION 2u
/* Vendor-specific class range 2 (0x30-0x4F) carries an OUI (13.4.9.2, table 134) */
#define MAD_CLASS_VENDOR2_FIRST 0x30u
#define MAD_CLASS_VENDOR2_LAST 0x4fu

/* Methods (13.4.5, table 138); bit 7 is the response bit */
#define MAD_METHOD_GET 0x01u
#define MAD_METHOD_SET 0x02u
#define MAD_METHOD_SEND 0x03u
#define MAD_METHOD_GET_RESP 0x81u
#define MAD_METHOD_RESP_BIT 0x80u

/* CM attribute IDs (IBTA Vol. 1 table 200, 12.6) */
#define MAD_ATTR_CLASS_PORT_INFO 0x0001u
#define MAD_ATTR_CM_REQ 0x0010u
#define MAD_ATTR_CM_MRA 0x0011u
#define MAD_ATTR_CM_REJ 0x0012u
#define MAD_ATTR_CM_REP 0x0013u
#define MAD_ATTR_CM_RTU 0x0014u
#define MAD_ATTR_CM_DREQ 0x0015u
#define MAD_ATTR_CM_DREP 0x0016u
#define MAD_ATTR_CM_SIDR_REQ 0x0017u
#define MAD_ATTR_CM_SIDR_REP 0x0018u
#define MAD_ATTR_CM_LAP 0x0019u
#define MAD_ATTR_CM_APR 0x001au

/** The common MAD header, host order (IBTA Vol. 1 figure 144). */
struct mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

/* Parse errors; the GSI counts each one as its own drop cause. */
enum mad_err {
	MAD_OK = 0,
	MAD_E_SHORT = 1,	/* fewer than 256 bytes */
	MAD_E_BASE_VERSION = 2, /* base version is not 1 */
};

/** Parse the common header of @p len bytes at @p p: 0 or -enum mad_err. */
int mad_hdr_parse(const uint8_t *p, size_t len, struct mad_hdr *h);
/** Write @p h as the first 24 bytes of @p p (which holds MAD_SIZE bytes). */
void mad_hdr_build(uint8_t *p, const struct mad_hdr *h);

#endif
