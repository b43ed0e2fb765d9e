/* SPDX-License-Identifier: BSD-3-Clause */
/* The RDMA IP CM service (IBTA Vol. 1 Annex A11), as Linux's cma.c formats it. */
#include "ip_cm.h"

#include <string.h>

#include "net_bytes.h"

int
ip_cm_sid_split(uint64_t sid, uint16_t *port_space, uint16_t *port)
{
	if ((sid & IP_CM_SID_MASK) != IP_CM_SID_BASE)
		return -IP_CM_E_SID;
	if (port_space)
		*port_space = (uint16_t)(sid >> 16);
	if (port)
		*port = (uint16_t)sid;
	return 0;
}

void
ip_cm_hdr_build(uint8_t p[IP_CM_HDR_SIZE], const struct ip_cm_hdr *h)
{
	p[0] = h->cma_version;
	p[1] = (uint8_t)(h->ip_version << 4);
	net_put_be16(p + 2, h->src_port);
	memcpy(p + 4, h->src_ip, 16);
	memcpy(p + 20, h->dst_ip, 16);
}

int
ip_cm_hdr_parse(const uint8_t *p, size_t len, struct ip_cm_hdr *h)
{
	if (len < IP_CM_HDR_SIZE)
		return -IP_CM_E_SHORT;
	h->cma_version = p[0];
	h->ip_version = p[1] >> 4;
	h->src_port = net_get_be16(p + 2);
	memcpy(h->src_ip, p + 4, 16);
	memcpy(h->dst_ip, p + 20, 16);
	if (h->cma_version != IP_CM_VERSION)
		return -IP_CM_E_VERSION;
	if (h->ip_version != 4 && h->ip_version != 6)
		return -IP_CM_E_IP_VERSION;
	return 0;
}

void
ip_cm_set_ipv4(uint8_t out[16], const uint8_t v4[4])
{
	memset(out, 0, 12);
	memcpy(out + 12, v4, 4);
}

int
ip_cm_compose(uint8_t *out, size_t out_len, uint16_t port_space, const struct ip_cm_hdr *h,
	      const uint8_t *app, size_t app_len)
{
	size_t off = ip_cm_app_offset(port_space);

	if (out_len < off || app_len > out_len - off)
		return -1;
	memset(out, 0, out_len);
	if (off)
		ip_cm_hdr_build(out, h);
	if (app_len)
		memcpy(out + off, app, app_len);
	return (int)app_len;
}
