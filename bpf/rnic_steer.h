/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared between the XDP program (rnic_steer.bpf.c) and user space
 * (rnic-xdp-cfg, test_rnic_steer): the layout of the two maps the program
 * owns besides xsks_map.
 */
#ifndef RNIC_STEER_H
#define RNIC_STEER_H

#define RNIC_STEER_ROCE_PORT 4791

/* rnic_cfg: BPF_MAP_TYPE_ARRAY, one entry at key 0. */
struct rnic_steer_cfg {
	__u32 ip4;   /* the rnic's IPv4 address, network byte order; 0 = none */
	__u32 flags; /* reserved, 0 */
};

/* rnic_stats: BPF_MAP_TYPE_PERCPU_ARRAY of __u64 frame counters, one per class. */
enum rnic_steer_stat {
	RNIC_STEER_ROCE4,  /* IPv4 UDP dport 4791 -> AF_XDP */
	RNIC_STEER_ROCE6,  /* IPv6 UDP dport 4791 -> AF_XDP */
	RNIC_STEER_ARP,    /* ARP whose target IP is the rnic's -> AF_XDP */
	RNIC_STEER_ICMP4,  /* IPv4 ICMP to the rnic's IP -> AF_XDP */
	RNIC_STEER_MACCTL, /* ethertype 0x8808 (PAUSE / PFC) -> AF_XDP */
	RNIC_STEER_PASS,   /* everything else -> kernel */
	RNIC_STEER_NO_XSK, /* steered, but no AF_XDP socket on that queue: passed to the kernel */
	RNIC_STEER_NSTATS
};

#define RNIC_STEER_STAT_NAMES \
	{"roce4", "roce6", "arp", "icmp4", "macctl", "pass", "no_xsk"}

#endif
