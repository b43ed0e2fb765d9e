/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ip_cm.h
 * The RDMA IP CM Service (IBTA Vol. 1 Annex A11) as Linux's rdma_cm speaks it
 * (drivers/infiniband/core/cma.c: cma_format_hdr, cma_get_net_info, struct cma_hdr):
 *
 *  - service ID = 0x0000000001000000 | port_space << 16 | port
 *    (RDMA_PS_TCP 0x0106 port 18515 -> 0x0000000001064853);
 *  - a 36-byte header at the start of the REQ's (and SIDR_REQ's) private data:
 *      byte 0      CMA version (0x00)
 *      byte 1      IP version in bits 7:4 (4 or 6), bits 3:0 zero
 *      bytes 2-3   source port (the active side's), big endian
 *      bytes 4-19  source IP
 *      bytes 20-35 destination IP
 *    an IPv4 address is the last 4 of the 16 bytes, the first 12 zero (cma.c's
 *    union cma_ip_addr: pad[3] then addr; not ::ffff:a.b.c.d);
 *  - the application's private data follows, untouched: 92 - 36 = 56 bytes in a REQ,
 *    216 - 36 = 180 in a SIDR_REQ. REP, REJ, RTU, DREQ, DREP carry no header.
 *  - RDMA_PS_IB has no header at all: the application owns all 92 bytes.
 */
#ifndef RW_IP_CM_H
#define RW_IP_CM_H

#include <stddef.h>
#include <stdint.h>

#define IP_CM_SID_BASE 0x0000000001000000ull
#define IP_CM_SID_MASK 0xffffffffff000000ull /* the part naming the IP CM service */
#define IP_CM_PS_TCP 0x0106u
#define IP_CM_PS_UDP 0x0111u
#define IP_CM_PS_IPOIB 0x0002u
#define IP_CM_PS_IB 0x013fu
#define IP_CM_VERSION 0x00u
#define IP_CM_HDR_SIZE 36u

/** The IP CM private-data header, host order. Addresses are 16 bytes as on the wire. */
struct ip_cm_hdr {
	uint8_t cma_version; /* IP_CM_VERSION */
	uint8_t ip_version;  /* 4 or 6 */
	uint16_t src_port;
	uint8_t src_ip[16]; /* IPv4: bytes 12-15, 0-11 zero */
	uint8_t dst_ip[16];
};

enum ip_cm_err {
	IP_CM_OK = 0,
	IP_CM_E_SHORT = 1,	/* private data shorter than 36 bytes */
	IP_CM_E_VERSION = 2,	/* CMA version not 0 */
	IP_CM_E_IP_VERSION = 3, /* IP version neither 4 nor 6 */
	IP_CM_E_SID = 4,	/* service ID not of the IP CM service */
};

/** Service ID of @p port in @p port_space. */
static inline uint64_t
ip_cm_service_id(uint16_t port_space, uint16_t port)
{
	return IP_CM_SID_BASE | (uint64_t)port_space << 16 | port;
}

/** Split an IP CM service ID: 0 or -IP_CM_E_SID. Either out pointer may be NULL. */
int ip_cm_sid_split(uint64_t sid, uint16_t *port_space, uint16_t *port);

/** Whether a REQ/SIDR_REQ in @p port_space carries the 36-byte header (all but PS_IB). */
static inline int
ip_cm_has_hdr(uint16_t port_space)
{
	return port_space != IP_CM_PS_IB;
}

/** Write @p h as 36 bytes at @p p. */
void ip_cm_hdr_build(uint8_t p[IP_CM_HDR_SIZE], const struct ip_cm_hdr *h);
/** Parse the header from @p len private-data bytes at @p p: 0 or -enum ip_cm_err. */
int ip_cm_hdr_parse(const uint8_t *p, size_t len, struct ip_cm_hdr *h);

/** Put an IPv4 address (network order bytes a.b.c.d) into a 16-byte header field. */
void ip_cm_set_ipv4(uint8_t out[16], const uint8_t v4[4]);

/**
 * Compose REQ/SIDR_REQ private data: the header (unless @p port_space is PS_IB), then
 * @p app_len bytes of @p app. @p out holds @p out_len bytes (CM_REQ_PD or CM_SIDR_REQ_PD);
 * the rest is zeroed. Returns the application room used, or -1 if @p app_len does not fit
 * (56 for a REQ, 180 for a SIDR_REQ, all of @p out_len for PS_IB).
 */
int ip_cm_compose(uint8_t *out, size_t out_len, uint16_t port_space, const struct ip_cm_hdr *h,
		  const uint8_t *app, size_t app_len);

/** The application's bytes of received REQ private data: offset 36, or 0 for PS_IB. */
static inline size_t
ip_cm_app_offset(uint16_t port_space)
{
	return ip_cm_has_hdr(port_space) ? IP_CM_HDR_SIZE : 0;
}

#endif
