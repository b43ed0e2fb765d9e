/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mad_kind.h
 * One classification of a MAD by management class and, for the Communication
 * Management class, by attribute (IBTA Vol. 1 table 132, table 200): the key of
 * QP1's per-type counters and of the lossy-emu's drop-mad rule. DPDK-free.
 */
#ifndef RW_MAD_KIND_H
#define RW_MAD_KIND_H

#include <stddef.h>
#include <stdint.h>

enum mad_kind {
	MAD_KIND_CM_REQ = 0,
	MAD_KIND_CM_MRA,
	MAD_KIND_CM_REJ,
	MAD_KIND_CM_REP,
	MAD_KIND_CM_RTU,
	MAD_KIND_CM_DREQ,
	MAD_KIND_CM_DREP,
	MAD_KIND_CM_SIDR_REQ,
	MAD_KIND_CM_SIDR_REP,
	MAD_KIND_CM_LAP,
	MAD_KIND_CM_APR,
	MAD_KIND_CM_OTHER, /**< CM class, any other attribute (ClassPortInfo, ...) */
	MAD_KIND_VENDOR,   /**< vendor-specific classes (0x09-0x0F, 0x30-0x4F) */
	MAD_KIND_OTHER,	   /**< every other class */
	MAD_KIND__COUNT
};

/** Kind of a MAD of class @p mgmt_class and attribute @p attr_id (host order). */
enum mad_kind mad_kind_of(uint8_t mgmt_class, uint16_t attr_id);
/** Kind of the MAD bytes at @p p (@p len of them; fewer than 18: MAD_KIND_OTHER). */
enum mad_kind mad_kind_of_bytes(const uint8_t *p, size_t len);
/** Lower-case name ("cm-req", "cm-other", "vendor", "other"); NULL when out of range. */
const char *mad_kind_name(enum mad_kind k);
/** Kind named @p name (mad_kind_name's spelling), or -1. */
int mad_kind_from_name(const char *name);

#endif
