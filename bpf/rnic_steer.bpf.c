// SPDX-License-Identifier: BSD-3-Clause
/*
 * XDP steering for an rnic sharing a NIC with the host's own networking.
 *
 * Loaded by DPDK's af_xdp PMD (--vdev net_af_xdp0,iface=IF,xdp_prog=rnic_steer.o),
 * which puts its AF_XDP socket for queue q at xsks_map[q]. Only what the rnic
 * needs goes to the socket:
 *   - UDP destination port 4791 (RoCEv2), IPv4 and IPv6;
 *   - ARP whose target protocol address is the rnic's IPv4 (rnic_cfg);
 *   - IPv4 ICMP addressed to the rnic's IPv4 (the rnic answers echo);
 *   - ethertype 0x8808, MAC control (802.3x PAUSE, 802.1Qbb PFC);
 * each behind up to two VLAN tags (802.1Q 0x8100, 802.1ad 0x88a8).
 * Everything else (the host's ARP, ssh, perftest's TCP exchange) is XDP_PASS.
 * With rnic_cfg unset (ip4 == 0) no ARP and no ICMP is steered.
 */
#include <linux/bpf.h>
#include <linux/types.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "rnic_steer.h"

#define ETH_HLEN 14
#define ETHERTYPE_IP4 0x0800
#define ETHERTYPE_ARP 0x0806
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88a8
#define ETHERTYPE_MACCTL 0x8808
#define ETHERTYPE_IP6 0x86dd
#define IPPROTO_ICMP4 1
#define IPPROTO_UDP4 17
#define IP4_FRAG_OFFSET_MASK 0x1fff
#define MAX_QUEUES 256

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rnic_steer_cfg);
} rnic_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RNIC_STEER_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} rnic_stats SEC(".maps");

static __always_inline void
count(__u32 stat)
{
	__u64 *c = bpf_map_lookup_elem(&rnic_stats, &stat);

	if (c)
		*c += 1; /* per-CPU slot: no atomic needed */
}

/* Big-endian 16/32-bit loads that never assume alignment. */
static __always_inline __u16
ld16(const __u8 *p)
{
	return (__u16)((__u16)p[0] << 8 | p[1]);
}

static __always_inline __u32
ld32n(const __u8 *p)
{
	__u32 v;

	__builtin_memcpy(&v, p, 4); /* stays in network order */
	return v;
}

static __always_inline int
udp_dport_is_roce(const __u8 *l4, const __u8 *end)
{
	if (l4 + 8 > end)
		return 0;
	return ld16(l4 + 2) == RNIC_STEER_ROCE_PORT;
}

/* The class of one frame: an RNIC_STEER_* counter index. */
static __always_inline __u32
classify(const __u8 *p, const __u8 *end, __u32 rnic_ip)
{
	__u16 type;
	int i;

	if (p + ETH_HLEN > end)
		return RNIC_STEER_PASS;
	type = ld16(p + 12);
	p += ETH_HLEN;
#pragma unroll
	for (i = 0; i < 2; i++) {
		if (type != ETHERTYPE_VLAN && type != ETHERTYPE_QINQ)
			break;
		if (p + 4 > end)
			return RNIC_STEER_PASS;
		type = ld16(p + 2);
		p += 4;
	}

	switch (type) {
	case ETHERTYPE_MACCTL:
		return RNIC_STEER_MACCTL;
	case ETHERTYPE_ARP:
		/* htype(2) ptype(2) hlen(1) plen(1) oper(2) sha(6) spa(4) tha(6) tpa(4) */
		if (!rnic_ip || p + 28 > end)
			return RNIC_STEER_PASS;
		if (ld16(p + 2) != ETHERTYPE_IP4 || p[4] != 6 || p[5] != 4)
			return RNIC_STEER_PASS;
		return ld32n(p + 24) == rnic_ip ? RNIC_STEER_ARP : RNIC_STEER_PASS;
	case ETHERTYPE_IP4: {
		__u32 ihl;

		if (p + 20 > end || (p[0] >> 4) != 4)
			return RNIC_STEER_PASS;
		ihl = (__u32)(p[0] & 0xf) * 4;
		if (ihl < 20)
			return RNIC_STEER_PASS;
		if (p[9] == IPPROTO_ICMP4)
			return rnic_ip && ld32n(p + 16) == rnic_ip ? RNIC_STEER_ICMP4
								   : RNIC_STEER_PASS;
		/* a non-first fragment carries no UDP header */
		if (p[9] != IPPROTO_UDP4 || (ld16(p + 6) & IP4_FRAG_OFFSET_MASK))
			return RNIC_STEER_PASS;
		return udp_dport_is_roce(p + ihl, end) ? RNIC_STEER_ROCE4 : RNIC_STEER_PASS;
	}
	case ETHERTYPE_IP6:
		/* UDP directly after the fixed header; extension headers are not walked */
		if (p + 40 > end || (p[0] >> 4) != 6 || p[6] != IPPROTO_UDP4)
			return RNIC_STEER_PASS;
		return udp_dport_is_roce(p + 40, end) ? RNIC_STEER_ROCE6 : RNIC_STEER_PASS;
	default:
		return RNIC_STEER_PASS;
	}
}

SEC("xdp")
int
rnic_steer(struct xdp_md *ctx)
{
	const __u8 *data = (const __u8 *)(long)ctx->data;
	const __u8 *end = (const __u8 *)(long)ctx->data_end;
	__u32 key = 0, cls;
	struct rnic_steer_cfg *cfg = bpf_map_lookup_elem(&rnic_cfg, &key);
	long act;

	cls = classify(data, end, cfg ? cfg->ip4 : 0);
	count(cls);
	if (cls == RNIC_STEER_PASS)
		return XDP_PASS;
	/* No socket on this queue (rnic not up, or on another queue): the kernel gets it. */
	act = bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
	if (act != XDP_REDIRECT)
		count(RNIC_STEER_NO_XSK);
	return (int)act;
}

char _license[] SEC("license") = "Dual BSD/GPL";
