/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-xdp-cfg: configure and inspect the rnic_steer XDP program that DPDK's
 * af_xdp PMD attached to an interface (xdp_prog=rnic_steer.o).
 *
 *   rnic-xdp-cfg IFACE --ip A.B.C.D   steer ARP/ICMP for this IPv4 to the rnic
 *   rnic-xdp-cfg IFACE --clear        steer no ARP/ICMP (RoCE and MAC control only)
 *   rnic-xdp-cfg IFACE --stats        print the per-class frame counters as JSON
 *
 * Run it in the interface's network namespace (ip netns exec NS ...).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "rnic_steer.h"

static const char *const stat_names[] = RNIC_STEER_STAT_NAMES;

static int
usage(void)
{
	fprintf(stderr, "usage: rnic-xdp-cfg IFACE --ip A.B.C.D | --clear | --stats\n");
	return 2;
}

/* fd of the map called `name` used by the XDP program attached to ifindex, or -1. */
static int
find_map(const char *ifname, unsigned int ifindex, const char *name)
{
	__u32 prog_id = 0, map_ids[16], nmaps;
	struct bpf_prog_info pinfo;
	__u32 plen = sizeof(pinfo);
	int pfd, err;

	err = bpf_xdp_query_id((int)ifindex, 0, &prog_id);
	if (err || !prog_id) {
		fprintf(stderr, "rnic-xdp-cfg: %s has no XDP program attached (%s); start the rnic "
			"with --vdev net_af_xdp0,iface=%s,xdp_prog=rnic_steer.o first\n",
			ifname, err ? strerror(-err) : "none", ifname);
		return -1;
	}
	pfd = bpf_prog_get_fd_by_id(prog_id);
	if (pfd < 0) {
		fprintf(stderr, "rnic-xdp-cfg: XDP program id %u on %s: %s\n", prog_id, ifname,
			strerror(errno));
		return -1;
	}
	memset(&pinfo, 0, sizeof(pinfo));
	pinfo.nr_map_ids = 16;
	pinfo.map_ids = (__u64)(unsigned long)map_ids;
	err = bpf_obj_get_info_by_fd(pfd, &pinfo, &plen);
	close(pfd);
	if (err) {
		fprintf(stderr, "rnic-xdp-cfg: XDP program id %u on %s: no info: %s\n", prog_id,
			ifname, strerror(errno));
		return -1;
	}
	nmaps = pinfo.nr_map_ids < 16 ? pinfo.nr_map_ids : 16;
	for (__u32 i = 0; i < nmaps; i++) {
		struct bpf_map_info minfo;
		__u32 mlen = sizeof(minfo);
		int mfd = bpf_map_get_fd_by_id(map_ids[i]);

		if (mfd < 0)
			continue;
		memset(&minfo, 0, sizeof(minfo));
		if (!bpf_obj_get_info_by_fd(mfd, &minfo, &mlen) && !strcmp(minfo.name, name))
			return mfd;
		close(mfd);
	}
	fprintf(stderr, "rnic-xdp-cfg: the XDP program on %s (id %u, \"%s\") has no map %s; "
		"it is not rnic_steer.o\n", ifname, prog_id, pinfo.name, name);
	return -1;
}

int
main(int argc, char **argv)
{
	unsigned int ifindex;
	int fd;

	if (argc < 3 || (strcmp(argv[2], "--stats") && strcmp(argv[2], "--clear") &&
			 strcmp(argv[2], "--ip")))
		return usage();
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex) {
		fprintf(stderr, "rnic-xdp-cfg: no interface %s in this network namespace\n", argv[1]);
		return 1;
	}

	if (!strcmp(argv[2], "--stats")) {
		int ncpu = libbpf_num_possible_cpus();
		__u64 *v;

		if (ncpu <= 0)
			return 1;
		fd = find_map(argv[1], ifindex, "rnic_stats");
		if (fd < 0)
			return 1;
		v = calloc((size_t)ncpu, sizeof(*v));
		if (!v)
			return 1;
		printf("{");
		for (__u32 k = 0; k < RNIC_STEER_NSTATS; k++) {
			unsigned long long sum = 0;

			if (bpf_map_lookup_elem(fd, &k, v) == 0)
				for (int c = 0; c < ncpu; c++)
					sum += v[c];
			printf("%s\"%s\": %llu", k ? ", " : "", stat_names[k], sum);
		}
		printf("}\n");
		free(v);
		close(fd);
		return 0;
	}

	struct rnic_steer_cfg cfg = {0};
	__u32 key = 0;

	if (!strcmp(argv[2], "--ip")) {
		struct in_addr a;

		if (argc < 4 || inet_pton(AF_INET, argv[3], &a) != 1 || a.s_addr == 0) {
			fprintf(stderr, "rnic-xdp-cfg: --ip needs a non-zero dotted IPv4 address, got "
				"'%s'\n", argc < 4 ? "" : argv[3]);
			return 2;
		}
		cfg.ip4 = a.s_addr;
	}
	fd = find_map(argv[1], ifindex, "rnic_cfg");
	if (fd < 0)
		return 1;
	if (bpf_map_update_elem(fd, &key, &cfg, BPF_ANY)) {
		fprintf(stderr, "rnic-xdp-cfg: updating rnic_cfg on %s: %s\n", argv[1],
			strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}
