/* SPDX-License-Identifier: BSD-3-Clause */
/* The common MAD header (IBTA Vol. 1 13.4.2). */
#include "mad.h"

#include "net_bytes.h"

int
mad_hdr_parse(const uint8_t *p, size_t len, struct mad_hdr *h)
{
	if (len < MAD_SIZE)
		return -MAD_E_SHORT;
	h->base_version = p[0];
	h->mgmt_class = p[1];
	h->class_version = p[2];
	h->method = p[3];
	h->status = net_get_be16(p + 4);
	h->class_specific = net_get_be16(p + 6);
	h->tid = net_get_be64(p + 8);
	h->attr_id = net_get_be16(p + 16);
	/* bytes 18-19 are reserved */
	h->attr_mod = net_get_be32(p + 20);
	if (h->base_version != MAD_BASE_VERSION)
		return -MAD_E_BASE_VERSION;
	return 0;
}

void
mad_hdr_build(uint8_t *p, const struct mad_hdr *h)
{
	p[0] = h->base_version;
	p[1] = h->mgmt_class;
	p[2] = h->class_version;
	p[3] = h->method;
	net_put_be16(p + 4, h->status);
	net_put_be16(p + 6, h->class_specific);
	net_put_be64(p + 8, h->tid);
	net_put_be16(p + 16, h->attr_id);
	net_put_be16(p + 18, 0);
	net_put_be32(p + 20, h->attr_mod);
}
