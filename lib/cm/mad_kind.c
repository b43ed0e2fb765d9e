/* SPDX-License-Identifier: BSD-3-Clause */
/* MAD kinds: class and CM attribute (IBTA Vol. 1 table 132, table 200). */
#include "mad_kind.h"

#include <string.h>

#include "mad.h"
#include "net_bytes.h"

static const char *const kind_names[MAD_KIND__COUNT] = {
    [MAD_KIND_CM_REQ] = "cm-req",	    [MAD_KIND_CM_MRA] = "cm-mra",
    [MAD_KIND_CM_REJ] = "cm-rej",	    [MAD_KIND_CM_REP] = "cm-rep",
    [MAD_KIND_CM_RTU] = "cm-rtu",	    [MAD_KIND_CM_DREQ] = "cm-dreq",
    [MAD_KIND_CM_DREP] = "cm-drep",	    [MAD_KIND_CM_SIDR_REQ] = "cm-sidr-req",
    [MAD_KIND_CM_SIDR_REP] = "cm-sidr-rep", [MAD_KIND_CM_LAP] = "cm-lap",
    [MAD_KIND_CM_APR] = "cm-apr",	    [MAD_KIND_CM_OTHER] = "cm-other",
    [MAD_KIND_VENDOR] = "vendor",	    [MAD_KIND_OTHER] = "other",
};

enum mad_kind
mad_kind_of(uint8_t mgmt_class, uint16_t attr_id)
{
	if (mgmt_class == MAD_CLASS_CM) {
		/* REQ (0x10) .. APR (0x1A) are consecutive in table 200 and in the enum */
		if (attr_id >= MAD_ATTR_CM_REQ && attr_id <= MAD_ATTR_CM_APR)
			return (enum mad_kind)(MAD_KIND_CM_REQ + (attr_id - MAD_ATTR_CM_REQ));
		return MAD_KIND_CM_OTHER;
	}
	/* vendor-specific: range 1 (0x09-0x0F) and range 2 with OUI (0x30-0x4F), table 132 */
	if ((mgmt_class >= 0x09 && mgmt_class <= 0x0f) ||
	    (mgmt_class >= MAD_CLASS_VENDOR2_FIRST && mgmt_class <= MAD_CLASS_VENDOR2_LAST))
		return MAD_KIND_VENDOR;
	return MAD_KIND_OTHER;
}

enum mad_kind
mad_kind_of_bytes(const uint8_t *p, size_t len)
{
	if (len < 18)
		return MAD_KIND_OTHER;
	return mad_kind_of(p[1], net_get_be16(p + 16));
}

const char *
mad_kind_name(enum mad_kind k)
{
	return (unsigned int)k < MAD_KIND__COUNT ? kind_names[k] : NULL;
}

int
mad_kind_from_name(const char *name)
{
	for (int k = 0; k < MAD_KIND__COUNT; k++)
		if (strcmp(name, kind_names[k]) == 0)
			return k;
	return -1;
}
