/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_setup.c
 * One rnic port and its RoCE device from the rnic's options: the mempool, the
 * DPDK port, addresses, neighbour tables, PFC, and the engine's configuration.
 * The rnic binary (rnic_main.c, which adds the --lcores devices) and the
 * verbs library (lib/verbs, which runs the device inside an application)
 * both open their device here.
 */
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_log.h>

#include "cc.h"
#include "dp_port.h"
#include "net_hdr.h"
#include "rnic_gsi.h"
#include "rnic_setup.h"
#include "rnic_trace.h"

/*
 * One frame per mbuf. af_packet needs its whole ring frame (framesz) to fit the
 * data room: 4352 B covers framesz up to 4 KiB (MTU <= 2048); a 4096-MTU RoCE
 * frame (~4.2 KB) needs framesz 8192, hence 9216-byte mbufs and fewer of them.
 */
#define MBUF_DATA_SMALL 4352
#define MBUF_DATA_XDP 3072 /* fits an MTU-2048 RoCE frame; 4 KiB UMEM chunks with headroom */
#define MBUF_DATA_JUMBO 9216
#define POOL_MBUFS_SMALL 16383
#define POOL_MBUFS_JUMBO 8191

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		return -1;                                                                         \
	} while (0)

int
rnic_setup_port(struct rnic_port *port, const struct rnic_params *prm, struct rnic_setup *out,
		char *err, size_t errlen)
{
	/* IP MTU for the largest RoCE frame: IPv6 + UDP + BTH + RETH/ImmDt + payload + ICRC */
	struct dp_port_cfg pc = {.port_id = 0,
				 .nb_queues = (uint16_t)prm->lcores,
				 .mtu = prm->mtu + 40 + 8 + 12 + 20 + 4};
	struct dp_port_info *info = &out->info;
	struct roce_dev_cfg *dc = &out->dc;
	char msg[512];

	if (rte_eth_dev_count_avail() == 0)
		FAIL(
		    "no DPDK port: give one with --vdev (e.g. net_af_packet0,iface=veth0) or a PCI "
		    "address");
	bool jumbo = prm->mtu > 2048;
	struct rte_eth_dev_info di;
	/* AF_XDP hands the mempool to the kernel as UMEM: its chunks are at most 4 KiB */
	bool xdp = rte_eth_dev_info_get(0, &di) == 0 && di.driver_name &&
		   strcmp(di.driver_name, "net_af_xdp") == 0;
	if (xdp && jumbo)
		FAIL("-m %u: an af_xdp port carries frames of at most ~3.5 KB (UMEM chunks are 4 "
		     "KiB); "
		     "use -m 2048 or less, or net_af_packet with framesz=8192 for MTU 4096",
		     prm->mtu);
	pc.pool = dp_pool_create("rnic_pool", jumbo ? POOL_MBUFS_JUMBO : POOL_MBUFS_SMALL,
				 jumbo ? MBUF_DATA_JUMBO
				 : xdp ? MBUF_DATA_XDP
				       : MBUF_DATA_SMALL,
				 msg, sizeof(msg));
	if (!pc.pool)
		FAIL("%s", msg);
	pc.promisc = prm->own_mac; /* frames to a MAC the interface does not own */
	if (dp_port_start(&pc, info, msg, sizeof(msg)) < 0)
		FAIL("%s", msg);
	if (prm->own_mac) {
		info->mac.addr_bytes[0] = (uint8_t)((info->mac.addr_bytes[0] | 0x02) & ~0x01);
		info->mac.addr_bytes[5] ^= 0x01;
	}
	memset(port, 0, sizeof(*port));
	port->port_id = 0;
	port->pool = pc.pool;
	port->rx_cut_len = info->rx_cut_len;
	port->ip = prm->ip;
	port->prefix = prm->prefix;
	port->gw = prm->gw;
	port->vlan_tci = prm->vlan < 0 ? -1 : (int)net_vlan_tci(prm->pcp, (uint16_t)prm->vlan);
	port->has_ip6 = prm->has_ip6;
	memcpy(port->ip6, prm->ip6, 16);
	port->ip6_prefix = prm->ip6_prefix;
	port->has_gw6 = prm->has_gw6;
	memcpy(port->gw6, prm->gw6, 16);
	net_neigh6_init(&port->neigh6);
	memcpy(port->mac, info->mac.addr_bytes, 6);
	net_neigh_init(&port->neigh);
	/* PFC quanta are 512 bit times at the link rate: --link-rate, else the PMD's speed */
	uint64_t pfc_bps = prm->pfc_link_gbps > 0 ? (uint64_t)(prm->pfc_link_gbps * 1e9)
			   : info->speed_mbps	  ? (uint64_t)info->speed_mbps * 1000000u
						  : 10000000000ull;
	rnic_port_pfc_init(port, prm->pfc_on, prm->lossless_mask, pfc_bps, prm->own_prio);
	/* lib/cc rates are fractions of the link: --link-rate, else the PMD's speed */
	cc_set_line_rate(pfc_bps);
	port->slow_rx_us = prm->slow_rx_us;
	if (prm->pfc_xoff &&
	    rnic_port_pfc_send_init(port, prm->pfc_xoff, prm->pfc_xon, (uint16_t)prm->pfc_quanta,
				    pfc_bps, prm->lossless_mask) < 0)
		FAIL("--pfc-xon %u must be below --pfc-xoff %u", prm->pfc_xon, prm->pfc_xoff);

	rnic_params_dev_cfg(prm, info->mac.addr_bytes, dc);
	/* EAL --log-level=rnic.roce:debug: every responder / completer transition (ROCE_LOG_TRACE)
	 */
	int roce_lt = rte_log_register_type_and_pick_level("rnic.roce", RTE_LOG_INFO);

	out->ops = rnic_port_ops;
	if (roce_lt >= 0 && rte_log_can_log((uint32_t)roce_lt, RTE_LOG_DEBUG))
		dc->log_level = ROCE_LOG_TRACE;
	if (prm->trace[0]) { /* --trace: the engine's loss-recovery events */
		if (rnic_trace_open(prm->trace, msg, sizeof(msg)) < 0)
			FAIL("%s", msg);
		out->ops.trace = rnic_trace_event;
	}
	if (out->cq_event)
		out->ops.cq_event = out->cq_event;
	port->dev = roce_dev_create(dc, &out->ops, port);
	if (!port->dev)
		FAIL("cannot create the RoCE device (MTU %u, window %u packets)", dc->mtu,
		     dc->window_pkts);
	rnic_gsi_attach(port->dev, prm->seed); /* QP1: PSN from --seed, the no-CM handler */
	return 0;
}
