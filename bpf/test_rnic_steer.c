/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Classification test of rnic_steer.o without any NIC: every frame goes through
 * BPF_PROG_TEST_RUN and the per-class counter it bumped is checked. No AF_XDP
 * socket sits in xsks_map here, so a steered frame also counts no_xsk and
 * comes back XDP_PASS (the redirect itself is exercised by tests/netns).
 * Needs root (CAP_BPF) like every BPF load; fails, never skips, without it.
 *
 *   test_rnic_steer build/bpf/rnic_steer.o
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "rnic_steer.h"

static const char *const stat_names[] = RNIC_STEER_STAT_NAMES;
static int prog_fd, cfg_fd, stats_fd, ncpu, failures;

#define RNIC_IP "10.77.0.11"
#define KERNEL_IP "10.77.0.1"

struct frame {
	unsigned char b[256];
	size_t n;
};

static void
put(struct frame *f, const void *p, size_t n)
{
	memcpy(f->b + f->n, p, n);
	f->n += n;
}

static void
put16(struct frame *f, unsigned v)
{
	unsigned char b[2] = {(unsigned char)(v >> 8), (unsigned char)v};

	put(f, b, 2);
}

static void
put_ip(struct frame *f, const char *ip)
{
	struct in_addr a;

	inet_pton(AF_INET, ip, &a);
	put(f, &a, 4);
}

static void
eth(struct frame *f, unsigned type, int vlans)
{
	static const unsigned char dst[6] = {0x02, 0, 0, 0, 0, 1}, src[6] = {0x02, 0, 0, 0, 0, 2};

	f->n = 0;
	put(f, dst, 6);
	put(f, src, 6);
	for (int i = 0; i < vlans; i++) {
		put16(f, i == 0 && vlans == 2 ? 0x88a8 : 0x8100);
		put16(f, 3u << 13 | 100u); /* PCP 3, VID 100 */
	}
	put16(f, type);
}

static void
ip4(struct frame *f, unsigned proto, const char *dst, unsigned frag, int opt_words)
{
	put16(f, (0x40u | (5u + (unsigned)opt_words)) << 8);
	put16(f, 20u + 4u * (unsigned)opt_words + 8u + 16u);
	put16(f, 1);
	put16(f, frag);
	unsigned char ttl_proto[2] = {64, (unsigned char)proto};
	put(f, ttl_proto, 2);
	put16(f, 0);
	put_ip(f, "10.77.0.2");
	put_ip(f, dst);
	for (int i = 0; i < opt_words; i++)
		put16(f, 0x0101), put16(f, 0x0101); /* NOP options */
}

static void
ip6_udp(struct frame *f, unsigned next)
{
	put16(f, 0x6000);
	put16(f, 0);
	put16(f, 24);
	unsigned char nh[2] = {(unsigned char)next, 64};
	put(f, nh, 2);
	for (int i = 0; i < 32; i++)
		put(f, "\x01", 1);
}

static void
l4(struct frame *f, unsigned sport, unsigned dport)
{
	put16(f, sport);
	put16(f, dport);
	put16(f, 24);
	put16(f, 0);
	for (int i = 0; i < 16; i++)
		put(f, "\0", 1);
}

static void
arp(struct frame *f, unsigned op, const char *tpa, int vlans)
{
	static const unsigned char mac[6] = {0x02, 0, 0, 0, 0, 2}, zero[6] = {0};

	eth(f, 0x0806, vlans);
	put16(f, 1);
	put16(f, 0x0800);
	put(f, "\x06\x04", 2);
	put16(f, op);
	put(f, mac, 6);
	put_ip(f, "10.77.0.2");
	put(f, zero, 6);
	put_ip(f, tpa);
}

static void
pad(struct frame *f)
{
	while (f->n < 60)
		put(f, "\0", 1);
}

static unsigned long long
stat(__u32 k)
{
	__u64 v[512];
	unsigned long long sum = 0;

	if (bpf_map_lookup_elem(stats_fd, &k, v)) {
		fprintf(stderr, "test_rnic_steer: reading rnic_stats[%u]: %s\n", k, strerror(errno));
		exit(1);
	}
	for (int c = 0; c < ncpu; c++)
		sum += v[c];
	return sum;
}

static void
set_ip(const char *ip)
{
	struct rnic_steer_cfg cfg = {0};
	__u32 key = 0;

	if (ip)
		inet_pton(AF_INET, ip, &cfg.ip4);
	if (bpf_map_update_elem(cfg_fd, &key, &cfg, BPF_ANY)) {
		fprintf(stderr, "test_rnic_steer: updating rnic_cfg: %s\n", strerror(errno));
		exit(1);
	}
}

/* Run one frame; expect exactly counter `want` (+ no_xsk when steered). */
static void
expect(const char *what, struct frame *f, enum rnic_steer_stat want)
{
	unsigned long long before[RNIC_STEER_NSTATS], after;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .repeat = 1);
	int ok = 1;

	pad(f);
	o.data_size_in = (__u32)f->n;
	for (__u32 k = 0; k < RNIC_STEER_NSTATS; k++)
		before[k] = stat(k);
	if (bpf_prog_test_run_opts(prog_fd, &o)) {
		fprintf(stderr, "FAIL %s: BPF_PROG_TEST_RUN: %s\n", what, strerror(errno));
		failures++;
		return;
	}
	if (o.retval != XDP_PASS) {
		fprintf(stderr, "FAIL %s: verdict %u, want XDP_PASS (%u) with no socket\n", what,
			o.retval, XDP_PASS);
		ok = 0;
	}
	for (__u32 k = 0; k < RNIC_STEER_NSTATS; k++) {
		unsigned long long d = (after = stat(k)) - before[k];
		unsigned long long w = k == (__u32)want ||
				       (k == RNIC_STEER_NO_XSK && want != RNIC_STEER_PASS);

		if (d != w) {
			fprintf(stderr, "FAIL %s: counter %s moved by %llu, want %llu\n", what,
				stat_names[k], d, w);
			ok = 0;
		}
	}
	if (!ok)
		failures++;
	else
		printf("ok   %-52s -> %s\n", what, stat_names[want]);
}

int
main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct frame f;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: test_rnic_steer PATH/rnic_steer.o\n");
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "test_rnic_steer: loading BPF needs root (CAP_BPF); CI runs as root\n");
		return 1;
	}
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0 || ncpu > 512) {
		fprintf(stderr, "test_rnic_steer: %d possible CPUs, allowed 1..512\n", ncpu);
		return 1;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "test_rnic_steer: opening %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "test_rnic_steer: loading %s (verifier): %s\n", argv[1], strerror(-err));
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "rnic_steer");
	if (!prog || !bpf_object__find_map_by_name(obj, "xsks_map")) {
		fprintf(stderr, "test_rnic_steer: %s lacks program rnic_steer or map xsks_map\n",
			argv[1]);
		return 1;
	}
	prog_fd = bpf_program__fd(prog);
	cfg_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "rnic_cfg"));
	stats_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "rnic_stats"));

	/* Unconfigured: RoCE and MAC control only. */
	arp(&f, 1, RNIC_IP, 0);
	expect("ARP request for rnic IP, no rnic_cfg", &f, RNIC_STEER_PASS);
	eth(&f, 0x0800, 0), ip4(&f, 1, RNIC_IP, 0, 0), l4(&f, 0x0800, 0);
	expect("ICMP to rnic IP, no rnic_cfg", &f, RNIC_STEER_PASS);
	eth(&f, 0x0800, 0), ip4(&f, 17, RNIC_IP, 0, 0), l4(&f, 49152, 4791);
	expect("IPv4 UDP 4791, no rnic_cfg", &f, RNIC_STEER_ROCE4);

	set_ip(RNIC_IP);
	arp(&f, 1, RNIC_IP, 0);
	expect("ARP request for rnic IP", &f, RNIC_STEER_ARP);
	arp(&f, 2, RNIC_IP, 0);
	expect("ARP reply to rnic IP", &f, RNIC_STEER_ARP);
	arp(&f, 1, RNIC_IP, 1);
	expect("ARP request for rnic IP, 802.1Q", &f, RNIC_STEER_ARP);
	arp(&f, 1, KERNEL_IP, 0);
	expect("ARP request for kernel IP", &f, RNIC_STEER_PASS);
	arp(&f, 2, KERNEL_IP, 0);
	expect("ARP reply to kernel IP", &f, RNIC_STEER_PASS);
	arp(&f, 1, RNIC_IP, 0), f.n = 14 + 20;
	expect("ARP truncated before target IP (padded)", &f, RNIC_STEER_PASS);

	eth(&f, 0x0800, 0), ip4(&f, 17, RNIC_IP, 0, 0), l4(&f, 49152, 4791);
	expect("IPv4 UDP 4791", &f, RNIC_STEER_ROCE4);
	eth(&f, 0x0800, 0), ip4(&f, 17, "10.77.0.99", 0, 0), l4(&f, 1234, 4791);
	expect("IPv4 UDP 4791 to another IP", &f, RNIC_STEER_ROCE4);
	eth(&f, 0x0800, 1), ip4(&f, 17, RNIC_IP, 0, 0), l4(&f, 49152, 4791);
	expect("IPv4 UDP 4791, 802.1Q", &f, RNIC_STEER_ROCE4);
	eth(&f, 0x0800, 2), ip4(&f, 17, RNIC_IP, 0, 0), l4(&f, 49152, 4791);
	expect("IPv4 UDP 4791, QinQ", &f, RNIC_STEER_ROCE4);
	eth(&f, 0x0800, 0), ip4(&f, 17, RNIC_IP, 0, 2), l4(&f, 49152, 4791);
	expect("IPv4 with options, UDP 4791", &f, RNIC_STEER_ROCE4);
	eth(&f, 0x0800, 0), ip4(&f, 17, RNIC_IP, 0x2000, 0), l4(&f, 49152, 4791);
	expect("IPv4 first fragment (MF), UDP 4791", &f, RNIC_STEER_ROCE4);
	eth(&f, 0x0800, 0), ip4(&f, 17, RNIC_IP, 0x0010, 0), l4(&f, 49152, 4791);
	expect("IPv4 non-first fragment", &f, RNIC_STEER_PASS);
	eth(&f, 0x0800, 0), ip4(&f, 17, RNIC_IP, 0, 0), l4(&f, 4791, 4792);
	expect("IPv4 UDP sport 4791 dport 4792", &f, RNIC_STEER_PASS);
	eth(&f, 0x0800, 0), ip4(&f, 6, RNIC_IP, 0, 0), l4(&f, 40000, 4791);
	expect("IPv4 TCP dport 4791", &f, RNIC_STEER_PASS);
	eth(&f, 0x0800, 0), ip4(&f, 6, KERNEL_IP, 0, 0), l4(&f, 40000, 18515);
	expect("IPv4 TCP 18515 (perftest exchange)", &f, RNIC_STEER_PASS);
	eth(&f, 0x0800, 0), ip4(&f, 6, KERNEL_IP, 0, 0), l4(&f, 40000, 22);
	expect("IPv4 TCP 22 (ssh)", &f, RNIC_STEER_PASS);
	eth(&f, 0x0800, 0), ip4(&f, 17, KERNEL_IP, 0, 0), l4(&f, 5353, 53);
	expect("IPv4 UDP 53", &f, RNIC_STEER_PASS);
	eth(&f, 0x0800, 0), ip4(&f, 1, RNIC_IP, 0, 0), l4(&f, 0x0800, 0);
	expect("ICMP echo to rnic IP", &f, RNIC_STEER_ICMP4);
	eth(&f, 0x0800, 1), ip4(&f, 1, RNIC_IP, 0, 0), l4(&f, 0x0800, 0);
	expect("ICMP echo to rnic IP, 802.1Q", &f, RNIC_STEER_ICMP4);
	eth(&f, 0x0800, 0), ip4(&f, 1, KERNEL_IP, 0, 0), l4(&f, 0x0800, 0);
	expect("ICMP echo to kernel IP", &f, RNIC_STEER_PASS);
	eth(&f, 0x0800, 0), ip4(&f, 17, RNIC_IP, 0, 0), f.n -= 0, f.n = 14 + 20 + 2;
	expect("IPv4 UDP truncated before dport (padded with 0)", &f, RNIC_STEER_PASS);

	eth(&f, 0x86dd, 0), ip6_udp(&f, 17), l4(&f, 49152, 4791);
	expect("IPv6 UDP 4791", &f, RNIC_STEER_ROCE6);
	eth(&f, 0x86dd, 1), ip6_udp(&f, 17), l4(&f, 49152, 4791);
	expect("IPv6 UDP 4791, 802.1Q", &f, RNIC_STEER_ROCE6);
	eth(&f, 0x86dd, 0), ip6_udp(&f, 6), l4(&f, 49152, 4791);
	expect("IPv6 TCP 4791", &f, RNIC_STEER_PASS);
	eth(&f, 0x86dd, 0), ip6_udp(&f, 58), l4(&f, 0x8700, 0);
	expect("IPv6 ICMPv6 (neighbour discovery)", &f, RNIC_STEER_PASS);

	eth(&f, 0x8808, 0), put16(&f, 0x0101), put16(&f, 0x00ff);
	expect("PFC (0x8808, opcode 0x0101)", &f, RNIC_STEER_MACCTL);
	eth(&f, 0x8808, 0), put16(&f, 0x0001), put16(&f, 0xffff);
	expect("PAUSE (0x8808, opcode 0x0001)", &f, RNIC_STEER_MACCTL);
	eth(&f, 0x88cc, 0);
	expect("LLDP", &f, RNIC_STEER_PASS);
	eth(&f, 0x8100, 0), f.n = 14;
	expect("802.1Q tag truncated (padded with 0)", &f, RNIC_STEER_PASS);

	set_ip(NULL);
	arp(&f, 1, RNIC_IP, 0);
	expect("ARP request for rnic IP after --clear", &f, RNIC_STEER_PASS);

	bpf_object__close(obj);
	if (failures) {
		fprintf(stderr, "test_rnic_steer: %d case(s) failed\n", failures);
		return 1;
	}
	printf("test_rnic_steer: all cases passed\n");
	return 0;
}
