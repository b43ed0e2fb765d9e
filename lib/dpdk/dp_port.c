/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* program_invocation_short_name */
#endif
#include "dp_port.h"

#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pdump.h>

volatile bool dp_quit;

#define DP_AF_PACKET_MAC_OFF 66 /* where tpacket_rcv puts an Ethernet frame in a V2 slot */

/* af_packet's ring frame: its devarg framesz, 2048 B when not given (DPDK 22.11). */
static uint32_t
af_packet_framesz(const struct rte_eth_dev_info *di)
{
	const struct rte_devargs *da = di->device ? rte_dev_devargs(di->device) : NULL;
	const char *a = da ? da->args : NULL, *p;

	for (p = a; p != NULL && (p = strstr(p, "framesz=")) != NULL; p++)
		if (p == a || p[-1] == ',')
			return (uint32_t)strtoul(p + 8, NULL, 0);
	return 2048;
}

/* MTU of the kernel interface behind a PMD (af_packet, af_xdp, tap), 0 if none. */
static unsigned
kernel_mtu(uint32_t if_index)
{
	char name[IF_NAMESIZE], path[64 + IF_NAMESIZE];
	unsigned mtu = 0;
	FILE *f;

	if (!if_index || !if_indextoname(if_index, name))
		return 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%u", &mtu) != 1)
		mtu = 0;
	fclose(f);
	return mtu;
}

static void
on_signal(int sig)
{
	(void)sig;
	dp_quit = true;
}

void
dp_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static bool dp_pdump_on;

static int
dp_mp_probe(const struct rte_mp_msg *msg, const void *peer)
{
	(void)msg;
	(void)peer;
	return 0;
}

bool
dp_pdump_init(void)
{
	const char *prog = program_invocation_short_name;
	bool shared;

	/*
	 * rte_pdump_init() succeeds without a multi-process channel too (it ignores
	 * ENOTSUP), so whether a capture can attach is asked of the channel itself:
	 * --no-shconf (and --in-memory, which implies it) refuse every action. A
	 * --no-huge heap is anonymous memory a secondary cannot map.
	 */
	shared = rte_mp_action_register("rw_pdump_probe", dp_mp_probe) == 0;
	if (shared)
		rte_mp_action_unregister("rw_pdump_probe");
	shared = shared && rte_eal_has_hugepages();
	if (rte_pdump_init() < 0) {
		fprintf(stderr, "%s: warning: packet capture unavailable (rte_pdump_init: %s)\n",
			prog, rte_strerror(rte_errno));
		return false;
	}
	dp_pdump_on = true;
	return shared;
}

int
dp_eal_start(int eal_argc, char **argv, char *err, size_t errlen)
{
	if (rte_eal_init(eal_argc, argv) < 0) {
		snprintf(err, errlen, "EAL initialisation failed: %s", rte_strerror(rte_errno));
		return -1;
	}
	dp_pdump_init();
	dp_signals_install();
	return 0;
}

#define ERR(fmt, ...) snprintf(err, errlen, fmt, ##__VA_ARGS__)

int
dp_port_start(const struct dp_port_cfg *cfg, struct dp_port_info *info, char *err, size_t errlen)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info di;
	struct rte_eth_link link;
	uint16_t q, nq = cfg->nb_queues ? cfg->nb_queues : 1;
	uint16_t nrx = cfg->nb_rxd ? cfg->nb_rxd : 1024, ntx = cfg->nb_txd ? cfg->nb_txd : 1024;
	int rc;

	memset(info, 0, sizeof(*info));
	if (!rte_eth_dev_is_valid_port(cfg->port_id)) {
		ERR("port %u does not exist (%u ports found; give them with --vdev or a PCI "
		    "address)",
		    cfg->port_id, rte_eth_dev_count_avail());
		return -ENODEV;
	}
	rte_eth_dev_get_name_by_port(cfg->port_id, info->name);
	rc = rte_eth_dev_info_get(cfg->port_id, &di);
	if (rc < 0) {
		ERR("port %u (%s): cannot read device info: %s", cfg->port_id, info->name,
		    strerror(-rc));
		return rc;
	}
	snprintf(info->driver, sizeof(info->driver), "%s", di.driver_name);
	info->max_rx_pktlen = di.max_rx_pktlen;
	/*
	 * af_packet (DPDK 22.11): the kernel (tpacket_rcv, TPACKET_V2) puts the MAC header
	 * TPACKET_ALIGN(32 + sizeof(sockaddr_ll) + 16) - 14 = 66 bytes into each ring frame
	 * (devarg framesz) and cuts whatever does not fit after it.
	 */
	if (strcmp(di.driver_name, "net_af_packet") == 0) {
		uint32_t fsz = af_packet_framesz(&di);

		if (fsz > DP_AF_PACKET_MAC_OFF)
			info->rx_cut_len = fsz - DP_AF_PACKET_MAC_OFF;
	}
	if (nq > di.max_rx_queues || nq > di.max_tx_queues) {
		ERR("port %u (%s, %s): %u queues requested, the driver allows %u RX / %u TX",
		    cfg->port_id, info->name, di.driver_name, nq, di.max_rx_queues,
		    di.max_tx_queues);
		return -EINVAL;
	}
	memset(&conf, 0, sizeof(conf));
	if (nq > 1 && di.flow_type_rss_offloads) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
		    di.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
	}
	rc = rte_eth_dev_configure(cfg->port_id, nq, nq, &conf);
	if (rc < 0) {
		ERR("port %u (%s): configure with %u queues failed: %s", cfg->port_id, info->name,
		    nq, strerror(-rc));
		return rc;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(cfg->port_id, &nrx, &ntx);
	if (rc < 0) {
		ERR("port %u (%s): descriptor counts rejected: %s", cfg->port_id, info->name,
		    strerror(-rc));
		return rc;
	}
	if (cfg->mtu) {
		uint16_t cur = 0;

		/*
		 * Only ever raise the MTU: af_packet/af_xdp apply it to the kernel
		 * interface, and shrinking a lab's interface would break the next user.
		 */
		rte_eth_dev_get_mtu(cfg->port_id, &cur);
		if (cur < cfg->mtu) {
			rc = rte_eth_dev_set_mtu(cfg->port_id, (uint16_t)cfg->mtu);
			/*
			 * af_packet reports a 1518-byte maximum whatever its framesz and
			 * refuses set_mtu, yet receives and sends whatever the kernel
			 * interface carries: trust the kernel MTU when it is big enough.
			 */
			if (rc < 0 && kernel_mtu(di.if_index) >= cfg->mtu)
				rc = 0;
			/*
			 * net_memif (DPDK 22.11) has no set_mtu, yet carries frames of any
			 * length: a frame longer than its buffer (devarg bsize, 2 KiB by
			 * default) spans chained descriptors, and RX copies it into one
			 * mbuf when the pool's data room holds it (docs/testbed.md, memif).
			 */
			if (rc == -ENOTSUP && strcmp(di.driver_name, "net_memif") == 0)
				rc = 0;
			if (rc < 0) {
				ERR("port %u (%s): MTU %u is needed but the port has %u and "
				    "refused to "
				    "raise it (%s); raise the interface MTU (e.g. ip link set IF "
				    "mtu %u)",
				    cfg->port_id, info->name, cfg->mtu, cur, strerror(-rc),
				    cfg->mtu);
				return -EMSGSIZE;
			}
		}
	}
	for (q = 0; q < nq; q++) {
		rc = rte_eth_rx_queue_setup(cfg->port_id, q, nrx,
					    rte_eth_dev_socket_id(cfg->port_id), NULL, cfg->pool);
		if (rc < 0) {
			ERR("port %u (%s): RX queue %u setup failed: %s", cfg->port_id, info->name,
			    q, strerror(-rc));
			return rc;
		}
		rc = rte_eth_tx_queue_setup(cfg->port_id, q, ntx,
					    rte_eth_dev_socket_id(cfg->port_id), NULL);
		if (rc < 0) {
			ERR("port %u (%s): TX queue %u setup failed: %s", cfg->port_id, info->name,
			    q, strerror(-rc));
			return rc;
		}
	}
	rc = rte_eth_dev_start(cfg->port_id);
	if (rc < 0) {
		ERR("port %u (%s): start failed: %s", cfg->port_id, info->name, strerror(-rc));
		return rc;
	}
	if (cfg->promisc)
		rte_eth_promiscuous_enable(cfg->port_id); /* virtual PMDs may say ENOTSUP: fine */
	rte_eth_macaddr_get(cfg->port_id, &info->mac);
	rte_eth_dev_get_mtu(cfg->port_id, &info->mtu);
	if (rte_eth_link_get_nowait(cfg->port_id, &link) == 0)
		info->speed_mbps = link.link_speed;
	return 0;
}

void
dp_port_stop(uint16_t port_id)
{
	rte_eth_dev_stop(port_id);
	rte_eth_dev_close(port_id);
}

/* A memif client's port: it waits for its server to close first (dp_eal_cleanup()). */
static bool
memif_client(const struct rte_eth_dev_info *di)
{
	const struct rte_devargs *da = di->device ? rte_dev_devargs(di->device) : NULL;

	return da != NULL && da->args != NULL && strstr(da->args, "role=client") != NULL;
}

bool
dp_memif_quiesce(void)
{
	struct rte_eth_dev_info di;
	struct rte_eth_link link;
	bool memif = false;
	uint16_t pid;

	RTE_ETH_FOREACH_DEV(pid)
	{
		if (rte_eth_dev_info_get(pid, &di) != 0 || di.driver_name == NULL ||
		    strcmp(di.driver_name, "net_memif") != 0)
			continue;
		memif = true;
		/*
		 * Both ends closing at once is the race: our close frees the control
		 * channel while EAL's interrupt thread handles the peer's disconnect on it.
		 * A client lets its server close first (up to 500 ms): once the link is
		 * down, the interrupt thread has taken the channel down itself.
		 */
		for (int i = 0; i < 50 && memif_client(&di); i++) {
			if (rte_eth_link_get_nowait(pid, &link) != 0 ||
			    link.link_status == RTE_ETH_LINK_DOWN)
				break;
			rte_delay_us_sleep(10000);
		}
	}
	return memif;
}

void
dp_eal_finish(bool memif)
{
	if (dp_pdump_on) {
		rte_pdump_uninit();
		dp_pdump_on = false;
	}
	if (!memif)
		rte_eal_cleanup();
}

void
dp_eal_cleanup(void)
{
	bool memif = dp_memif_quiesce();
	uint16_t pid;

	RTE_ETH_FOREACH_DEV(pid)
	dp_port_stop(pid);
	dp_eal_finish(memif);
}

uint64_t
dp_mbuf_footprint(uint32_t data_room)
{
	struct rte_mempool_objsz sz;
	uint32_t elt = (uint32_t)(sizeof(struct rte_mbuf) + RTE_PKTMBUF_HEADROOM + data_room);

	rte_mempool_calc_obj_size(elt, 0, &sz);
	return sz.total_size;
}

static uint64_t
mb_up(uint64_t bytes)
{
	return (bytes + (1u << 20) - 1) >> 20;
}

/* "HugePages_Free" and "Hugepagesize" (bytes) of /proc/meminfo; 0 if unknown. */
static void
host_hugepages(uint64_t *free_pages, uint64_t *page_bytes)
{
	char line[128];
	unsigned long long v;
	FILE *f = fopen("/proc/meminfo", "r");

	*free_pages = *page_bytes = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "HugePages_Free: %llu", &v) == 1)
			*free_pages = v;
		else if (sscanf(line, "Hugepagesize: %llu kB", &v) == 1)
			*page_bytes = v * 1024;
	}
	fclose(f);
}

void
dp_mem_advice(uint64_t need_bytes, char *buf, size_t len)
{
	struct rte_malloc_socket_stats st;
	uint64_t pages, page_bytes, m;

	memset(&st, 0, sizeof(st));
	rte_malloc_get_socket_stats((int)rte_socket_id(), &st);
	/* what the heap has, what is missing, 32 MB of headroom, rounded up to 64 MB */
	m = st.heap_totalsz_bytes +
	    (need_bytes > st.heap_freesz_bytes ? need_bytes - st.heap_freesz_bytes : 0);
	m = (mb_up(m) + 32 + 63) / 64 * 64;
	if (!rte_eal_has_hugepages()) {
		snprintf(buf, len,
			 "EAL runs without hugepages (--no-huge) on a fixed heap of %" PRIu64
			 " MB (%" PRIu64 " MB free): give EAL more with -m %" PRIu64,
			 mb_up(st.heap_totalsz_bytes), st.heap_freesz_bytes >> 20, m);
		return;
	}
	host_hugepages(&pages, &page_bytes);
	if (page_bytes == 0) {
		snprintf(buf, len,
			 "EAL runs on hugepages: reserve more (scripts/hugepages.sh), "
			 "or run with --no-huge -m %" PRIu64,
			 m);
		return;
	}
	snprintf(buf, len,
		 "EAL runs on hugepages and the host has %" PRIu64 " x %" PRIu64
		 " MB free (%" PRIu64 " MB; this needs %" PRIu64
		 " pages): reserve more (scripts/hugepages.sh: ROCEWAN_HUGEPAGES=N), raise -m / "
		 "--socket-mem / --socket-limit if given, or run with --no-huge -m %" PRIu64,
		 pages, page_bytes >> 20, pages * page_bytes >> 20,
		 (need_bytes + page_bytes - 1) / page_bytes, m);
}

struct rte_mempool *
dp_pool_create(const char *name, uint32_t n, uint16_t data_room, char *err, size_t errlen)
{
	return dp_pool_create_cache(name, n, data_room, n >= 4096 ? 256 : 32, err, errlen);
}

struct rte_mempool *
dp_pool_create_cache(const char *name, uint32_t n, uint16_t data_room, uint32_t cache, char *err,
		     size_t errlen)
{
	struct rte_mempool *mp;

	mp = rte_pktmbuf_pool_create(
	    name, n, cache, 0, (uint16_t)(data_room + RTE_PKTMBUF_HEADROOM), (int)rte_socket_id());
	if (!mp) {
		uint64_t need = (uint64_t)n * dp_mbuf_footprint(data_room);
		int e = rte_errno;
		char adv[320];

		dp_mem_advice(need, adv, sizeof(adv));
		ERR("cannot allocate mempool \"%s\": %u mbufs of %u bytes need %" PRIu64
		    " MB of EAL memory (%s); %s",
		    name, n, data_room, mb_up(need), rte_strerror(e), adv);
	}
	return mp;
}

void
dp_backoff_init(struct dp_backoff *b, bool busy_poll)
{
	memset(b, 0, sizeof(*b));
	b->spins = 64;
	b->min_us = 10;
	b->max_us = 500;
	b->sleep_us = b->min_us;
	b->busy_poll = busy_poll;
}

void
dp_backoff_step(struct dp_backoff *b, uint32_t work)
{
	struct timespec ts;

	b->slept_us = 0;
	if (work || b->busy_poll) {
		b->idle = 0;
		b->sleep_us = b->min_us;
		return;
	}
	if (++b->idle < b->spins)
		return;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)b->sleep_us * 1000;
	nanosleep(&ts, NULL);
	b->slept_us = b->sleep_us;
	b->sleeps++;
	if (b->sleep_us < b->max_us)
		b->sleep_us = b->sleep_us * 2 > b->max_us ? b->max_us : b->sleep_us * 2;
}

void
dp_backoff_until(struct dp_backoff *b, uint32_t work, uint64_t now_ns, uint64_t next_ns)
{
	uint64_t left;
	uint32_t save;

	if (work || b->busy_poll || next_ns == UINT64_MAX) {
		dp_backoff_step(b, work);
		return;
	}
	left = next_ns > now_ns ? next_ns - now_ns : 0;
	if (left < DP_SPIN_NS || (left - DP_WAKE_NS) / 1000 < b->min_us) {
		dp_backoff_step(b, 1); /* due soon: keep polling */
		return;
	}
	/* lower the ceiling to the time left, for this step only */
	save = b->max_us;
	if ((left - DP_WAKE_NS) / 1000 < b->max_us)
		b->max_us = (uint32_t)((left - DP_WAKE_NS) / 1000);
	if (b->sleep_us > b->max_us)
		b->sleep_us = b->max_us;
	dp_backoff_step(b, 0);
	b->max_us = save;
}
