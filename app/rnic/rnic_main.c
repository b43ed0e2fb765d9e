/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic: a userspace RoCEv2 RNIC on a DPDK port, with perftest-compatible modes.
 *
 *   rnic <EAL args> -- --ip A.B.C.D/N [options] <mode> [server]
 *
 * Control plane (this file): EAL and port bring-up, the verbs objects, the
 * out-of-band exchange with the peer (perftest's TCP protocol, app/rnic/oob),
 * QP bring-up, then the measurement loop (rnic_bench.c), results and counters.
 * Data plane: the DPDK-free core (rnic_core.h: dispatch, neighbours, PFC,
 * steering), its DPDK shell (rnic_poll.c, rnic_port.c) and lib/roce (the engine).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_ring.h>

#include "cc.h"
#include "dp_port.h"
#include "fec.h"
#include "fec_roce.h"
#include "net_hdr.h"
#include "rnic_app.h"
#include "rnic_bench.h"
#include "rnic_config.h"
#include "rnic_gsi.h"
#include "rnic_lcores.h"
#include "rnic_metrics.h"
#include "rnic_oob.h"
#include "rnic_port.h"
#include "rnic_setup.h"
#include "rnic_tel.h"
#include "rnic_trace.h"
#include "rw_json.h"

#define MAX_BUF (64u << 20)

static void
cc_trace_tick(void *arg)
{
	struct rnic_ctx *c = arg;
	uint64_t now = rnic_now_ns(&c->port);
	unsigned int nq = c->prm.num_qps < RNIC_CC_TRACE_QPS ? c->prm.num_qps : RNIC_CC_TRACE_QPS;

	if (now < c->cct_next || c->ncct + nq > RNIC_CC_TRACE_MAX * RNIC_CC_TRACE_QPS)
		return;
	if (!c->cct_t0)
		c->cct_t0 = now;
	c->cct_next = now + RNIC_CC_TRACE_NS;
	for (unsigned int q = 0; q < nq; q++) {
		struct rnic_cc_sample *s = &c->cct[c->ncct];
		struct roce_cc_info ci;

		if (!c->qp[q] || roce_qp_state(c->qp[q]) != IBV_QPS_RTS)
			continue;
		(void)roce_qp_cc_info(c->qp[q], &ci); /* -ENOTSUP (none): the loss window only */
		s->t_s = (float)((now - c->cct_t0) / 1e9);
		s->qpn = roce_qp_num(c->qp[q]);
		s->rate_gbps = (float)(ci.rate_bps / 1e9);
		s->target_gbps = (float)(ci.target_bps / 1e9);
		s->cc_window = ci.window;
		s->loss_window = ci.loss_window;
		s->alpha = (float)ci.alpha;
		s->rtt_us = (float)(ci.rtt_ns / 1e3);
		c->ncct++;
	}
}

static void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("rnic: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void
setup_port(struct rnic_ctx *c)
{
	struct rnic_setup su = {0};
	char err[512];

	if (rnic_setup_port(&c->port, &c->prm, &su, err, sizeof(err)) < 0)
		die("%s", err);
	c->nl = c->prm.lcores;
	c->lport[0] = &c->port;
	if (c->nl > 1) {
		/* one queue, device and ring per lcore; QPN ranges name the owner */
		c->steer.n = c->nl;
		for (unsigned int l = 0; l < c->nl; l++) {
			struct rnic_port *lp = l ? &c->xport[l] : &c->port;
			char rn[32];

			if (l) {
				*lp =
				    c->port; /* same addresses and PFC set-up; nothing owned yet */
				memset(&lp->cnt, 0, sizeof(lp->cnt));
				lp->queue = (uint16_t)l;
				su.dc.first_qpn = ROCE_FIRST_QPN + l * RNIC_QPN_SPAN;
				lp->dev = roce_dev_create(&su.dc, &su.ops, lp);
				if (!lp->dev)
					die("cannot create the RoCE device of lcore %u", l);
				rnic_gsi_attach(lp->dev, c->prm.seed);
			}
			snprintf(rn, sizeof(rn), "rnic_steer%u", l);
			c->steer.ring[l] =
			    rte_ring_create(rn, 4096, (int)rte_socket_id(), RING_F_SC_DEQ);
			if (!c->steer.ring[l])
				die("cannot create the dispatch ring of lcore %u: %s", l,
				    rte_strerror(rte_errno));
			c->steer.port[l] = lp;
			c->lport[l] = lp;
			lp->steer = &c->steer;
			lp->lcore_idx = l;
		}
	}
	printf("rnic: port 0 %s (%s) MAC %02x:%02x:%02x:%02x:%02x:%02x, link %u Mb/s\n",
	       su.info.name, su.info.driver, su.dc.mac[0], su.dc.mac[1], su.dc.mac[2], su.dc.mac[3],
	       su.dc.mac[4], su.dc.mac[5], su.info.speed_mbps);
}

static void
setup_objects(struct rnic_ctx *c)
{
	const struct rnic_params *p = &c->prm;
	uint32_t slots = p->tx_depth > p->rx_depth ? p->tx_depth : p->rx_depth;
	static const enum ibv_qp_type qpt[] = {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD};
	struct ibv_qp_init_attr ia;

	/* flows write at offset 0 on both sides: one buffer of the largest flow */
	uint64_t msz = p->flows ? p->flow_max : p->size;

	c->buf_size = (size_t)(msz < 4096 ? 4096 : msz) * (p->flows ? 1 : slots < 16 ? slots : 16);
	if (c->buf_size > MAX_BUF)
		c->buf_size = msz > MAX_BUF ? msz : MAX_BUF;
	c->buf = aligned_alloc(4096, (c->buf_size + 4095) & ~(size_t)4095);
	if (!c->buf)
		die("cannot allocate a %zu-byte buffer", c->buf_size);
	memset(c->buf, 0x5a, c->buf_size);
	/* --lcores: every lcore's device has its PD, CQ and an MR of the same buffer */
	for (unsigned int l = 0; l < c->nl; l++) {
		struct roce_dev *dev = c->lport[l]->dev;

		c->lpd[l] = roce_pd_alloc(dev);
		c->lcq[l] =
		    roce_create_cq(dev, (int)((p->tx_depth + p->rx_depth) * p->num_qps + 64));
		c->lmr[l] = c->lpd[l]
				? roce_reg_mr(c->lpd[l], c->buf, c->buf_size,
					      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
				: NULL;
		if (!c->lpd[l] || !c->lcq[l] || !c->lmr[l])
			die("cannot create PD/CQ/MR (%zu-byte buffer)", c->buf_size);
	}
	c->pd = c->lpd[0];
	c->cq = c->lcq[0];
	c->mr = c->lmr[0];
	memset(&ia, 0, sizeof(ia));
	ia.cap.max_send_wr = p->tx_depth;
	ia.cap.max_recv_wr = p->rx_depth;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = p->inline_size;
	ia.qp_type = qpt[p->conn];
	for (unsigned int i = 0; i < p->num_qps; i++) {
		struct perftest_dest *d = &c->run.local[i];
		unsigned int l = i % c->nl; /* QPs round-robin over the lcores */

		ia.send_cq = roce_cq_ibv(c->lcq[l]);
		ia.recv_cq = roce_cq_ibv(c->lcq[l]);
		c->qp[i] = roce_create_qp(c->lpd[l], &ia);
		if (!c->qp[i])
			die("cannot create QP %u of %u (send depth %u, receive depth %u)", i + 1,
			    p->num_qps, p->tx_depth, p->rx_depth);
		rnic_tel_add_qp(c->qp[i], ia.qp_type);
		rnic_metrics_add_qp(c->qp[i], ia.qp_type);
		c->psn[i] = rnic_initial_psn(p, i);
		memset(d, 0, sizeof(*d));
		d->qpn = roce_qp_num(c->qp[i]);
		d->psn = c->psn[i];
		d->rkey = c->lmr[l]->rkey;
		d->vaddr = c->lmr[l]->iova;
		d->out_reads = (p->mode == RNIC_MODE_READ_BW || p->mode == RNIC_MODE_READ_LAT ||
				p->mode == RNIC_MODE_ATOMIC_BW)
				   ? p->outs
				   : 1;
		if (p->gid_index == 1)
			memcpy(d->gid, p->ip6, 16);
		else
			net_ip4_to_mapped(p->ip, d->gid);
	}
}

static const char *
gid_str(const uint8_t gid[16])
{
	static char s[INET6_ADDRSTRLEN];

	return inet_ntop(AF_INET6, gid, s, sizeof(s)) ? s : "?";
}

static const char *
ip4_str(uint32_t ip)
{
	static char s[INET_ADDRSTRLEN];
	struct in_addr in = {.s_addr = htonl(ip)};

	return inet_ntop(AF_INET, &in, s, sizeof(s)) ? s : "?";
}

static int
connect_qp(void *arg, unsigned int qi, const struct perftest_dest *remote, int mtu_enum_peer)
{
	struct rnic_ctx *c = arg;
	struct roce_qp *qp = c->qp[qi];
	const struct rnic_params *p = &c->prm;
	struct ibv_qp_attr a;
	uint8_t mac[6];
	uint32_t peer_ip;
	int rc;

	if (net_mapped_to_ip4(remote->gid, &peer_ip) != (p->gid_index == 0))
		die("the peer's GID %s is %s but ours (-x %u) is %s: use the same family on both "
		    "sides "
		    "(rnic -x 0 = IPv4-mapped, -x 1 = --ip6)",
		    gid_str(remote->gid), p->gid_index ? "IPv4-mapped" : "IPv6", p->gid_index,
		    p->gid_index ? "IPv6" : "IPv4-mapped");
	if (p->gid_index == 0) {
		rc = rnic_port_resolve(&c->port, peer_ip, mac, 3000);
		if (rc < 0) {
			char peer[INET_ADDRSTRLEN], via[INET_ADDRSTRLEN];

			snprintf(peer, sizeof(peer), "%s", ip4_str(peer_ip));
			if (c->port.gw && !net_same_subnet(peer_ip, c->port.ip, c->port.prefix)) {
				snprintf(via, sizeof(via), "%s", ip4_str(c->port.gw));
				die("the gateway %s (--gw, next hop to peer %s) does not answer "
				    "ARP on "
				    "the DPDK port (3 s)",
				    via, peer);
			}
			if (!net_same_subnet(peer_ip, c->port.ip, c->port.prefix))
				die("peer %s is not in our subnet (--ip %s/%u) and does not answer "
				    "ARP "
				    "on the DPDK port (3 s): give --gw with the next hop's address",
				    peer, ip4_str(c->port.ip), c->port.prefix);
			die("peer %s does not answer ARP on the DPDK port (3 s)", peer);
		}
	} else if (rnic_port_resolve6(&c->port, remote->gid, mac, 3000) < 0) {
		bool on_link = net_ip6_on_link(remote->gid, c->port.ip6, c->port.ip6_prefix);
		char peer[INET6_ADDRSTRLEN];

		snprintf(peer, sizeof(peer), "%s", gid_str(remote->gid));
		if (!on_link && c->port.has_gw6)
			die("the gateway %s (--gw6, next hop to peer %s) does not answer IPv6 "
			    "neighbour "
			    "solicitations on the DPDK port (3 s)",
			    gid_str(c->port.gw6), peer);
		if (!on_link)
			die("peer %s is not on-link (--ip6 %s/%u) and does not answer IPv6 "
			    "neighbour "
			    "solicitations on the DPDK port (3 s): give --gw6 with the next hop's "
			    "address",
			    peer, gid_str(c->port.ip6), c->port.ip6_prefix);
		die("peer %s does not answer IPv6 neighbour solicitations on the DPDK port (3 s)",
		    peer);
	}
	/* the recovery negotiated in the version step (rnic_oob.c), gbn against a standard peer */
	if (p->conn == RNIC_CONN_RC && c->run.caps.recovery[0] &&
	    (rc = roce_qp_set_recovery(qp, c->run.caps.recovery)) != 0)
		die("cannot set recovery \"%s\" on QP %u: %s", c->run.caps.recovery, qi,
		    strerror(-rc));
	/* FEC: only when both rnics asked for it (the capability record's FEC bit) */
	if (p->conn == RNIC_CONN_RC && c->run.caps.fec) {
		char why[160];

		if ((rc = roce_qp_set_fec(qp, p->fec, why, sizeof(why))) != 0)
			die("cannot turn FEC %s on for QP %u: %s", p->fec, qi,
			    why[0] ? why : strerror(-rc));
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = RNIC_UD_QKEY;
	a.qp_access_flags =
	    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	rc = roce_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				(p->conn == RNIC_CONN_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
	if (rc)
		die("QP RESET->INIT failed: %s", strerror(rc > 0 ? rc : -rc));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = (enum ibv_mtu)mtu_enum_peer; /* the smaller of both sides' MTU */
	a.dest_qp_num = remote->qpn;
	a.rq_psn = remote->psn;
	a.max_dest_rd_atomic = (uint8_t)(p->outs > 16 ? 16 : p->outs);
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	memcpy(a.ah_attr.grh.dgid.raw, remote->gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)p->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.traffic_class = (uint8_t)p->tclass;
	int mask = IBV_QP_STATE;
	if (p->conn != RNIC_CONN_UD)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (p->conn == RNIC_CONN_RC)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	rc = roce_modify_qp(qp, &a, mask);
	if (rc == 0 && p->conn != RNIC_CONN_UD)
		rc = roce_qp_set_remote_mac(qp, mac);
	if (rc)
		die("QP INIT->RTR failed: %s", strerror(rc > 0 ? rc : -rc));
	if (p->conn == RNIC_CONN_UD) { /* UD sends name the peer in every WR: an AH and its QPN */
		struct rnic_bench_qp *q = &c->run.bench.q[qi];

		q->ah = roce_create_ah(c->lpd[qi % c->nl], &a.ah_attr, mac);
		if (!q->ah)
			die("cannot create the UD address handle: %s", strerror(errno));
		q->remote_qpn = remote->qpn;
		if (qi == 0) {
			c->run.bench.ah = q->ah;
			c->run.bench.remote_qpn = q->remote_qpn;
		}
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->run.cm_psns ? c->run.cm_sq_psn[qi] : c->psn[qi]; /* -R: the peer's */
	a.timeout = (uint8_t)p->qp_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = (uint8_t)(p->outs > 16 ? 16 : p->outs);
	a.rate_limit = (uint32_t)(p->rate_gbps * 1e6); /* verbs: kbit/s */
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN | (a.rate_limit ? IBV_QP_RATE_LIMIT : 0);
	if (p->conn == RNIC_CONN_RC)
		mask |=
		    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	rc = roce_modify_qp(qp, &a, mask);
	if (rc)
		die("QP RTR->RTS failed: %s", strerror(rc > 0 ? rc : -rc));
	return 0;
}

int
main(int argc, char **argv)
{
	static struct rnic_ctx c;
	struct roce_stats st;
	char err[512], err2[512];
	int n, rc;

	/* --help and bad options are answered before EAL starts */
	for (n = 1; n < argc && strcmp(argv[n], "--") != 0; n++)
		;
	for (int i = n; i < argc; i++) {
		/* rnic -- --cc-param help: every lib/cc parameter with its default */
		if ((strcmp(argv[i], "--cc-param") == 0 && i + 1 < argc &&
		     strcmp(argv[i + 1], "help") == 0) ||
		    strcmp(argv[i], "--cc-param=help") == 0) {
			cc_params_help(stdout);
			return 0;
		}
	}
	if (n < argc) {
		rc = rnic_parse_args(argc - n, argv + n, &c.prm, err, sizeof(err));
		if (rc == 1)
			return 0;
		if (rc < 0) {
			fprintf(stderr, "rnic: %s\n", err);
			return 2;
		}
		roce_fec_register(&fec_roce_codec); /* --recovery fec+MODE (docs/fec.md) */
		if (cc_register_all() < 0 ||
		    (strcmp(c.prm.cc, "none") != 0 &&
		     cc_set_params(c.prm.cc, c.prm.cc_param, err, sizeof(err)) < 0)) {
			fprintf(stderr, "rnic: %s\n", err);
			return 2;
		}
		if (strcmp(c.prm.cc, "none") == 0 && c.prm.cc_param[0]) {
			fprintf(stderr, "rnic: option --cc-param: --cc none has no parameters\n");
			return 2;
		}
		if (c.prm.lcores > 1 && (!rnic_mode_is_bw(c.prm.mode) || c.prm.flows ||
					 c.prm.all_sizes || c.prm.bidirectional)) {
			fprintf(stderr,
				"rnic: option --lcores %u: several lcores run the bandwidth "
				"modes (write_bw, send_bw, read_bw, atomic_bw) without --flows, "
				"-a or -b; this run needs --lcores 1\n",
				c.prm.lcores);
			return 2;
		}
		if (c.prm.lcores > RNIC_MAX_LCORES || c.prm.lcores > c.prm.num_qps) {
			fprintf(stderr,
				"rnic: option --lcores %u: at most %d lcores and at most one "
				"per QP (-q %u; allowed: 1..%u)\n",
				c.prm.lcores, RNIC_MAX_LCORES, c.prm.num_qps,
				c.prm.num_qps < RNIC_MAX_LCORES ? c.prm.num_qps : RNIC_MAX_LCORES);
			return 2;
		}
		if (c.prm.num_qps > 1 && !rnic_mode_is_bw(c.prm.mode)) {
			fprintf(stderr,
				"rnic: option -q %u: several QPs run in the bandwidth modes "
				"(write_bw, send_bw, read_bw, atomic_bw) and --flows; %s "
				"runs one (allowed: 1)\n",
				c.prm.num_qps, rnic_mode_name(c.prm.mode));
			return 2;
		}
		if (c.prm.num_qps > RNIC_MAX_QPS) {
			fprintf(stderr,
				"rnic: option -q %u: at most %d QPs (perftest's limit too)\n",
				c.prm.num_qps, RNIC_MAX_QPS);
			return 2;
		}
	} else {
		/* "rnic --help" as lossy-emu and pfc-relay answer it (rw_opts_parse_main) */
		for (int i = 1; i < argc; i++)
			if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
				rnic_print_help(stdout);
				return 0;
			}
		fprintf(stderr,
			"rnic: missing \"--\" between EAL arguments and rnic options "
			"(rnic <EAL args> -- --ip A.B.C.D/N <mode> [server]; see -- --help)\n");
		return 2;
	}
	if (rnic_metrics_start(&c.prm, err, sizeof(err)) < 0) {
		fprintf(stderr, "rnic: %s\n", err);
		return 2;
	}
	if (rte_eal_init(n, argv) < 0)
		die("EAL initialisation failed: %s", rte_strerror(rte_errno));
	dp_pdump_init(); /* dpdk-dumpcap can attach (docs/capture.md) */
	if (rte_lcore_count() < c.prm.lcores)
		die("--lcores %u needs %u EAL lcores, the EAL has %u (give e.g. -l 0-%u)",
		    c.prm.lcores, c.prm.lcores, rte_lcore_count(), c.prm.lcores - 1);
	dp_signals_install();
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0,
	      0); /* 1 us: idle sleeps end on time (pacing, ACKs) */
	setup_port(&c);
	if (rnic_tel_register(&c.port) < 0)
		fprintf(stderr, "rnic: warning: telemetry commands not registered\n");
	rnic_metrics_set_port(&c.port);
	setup_objects(&c);
	rnic_metrics_ready();

	/* out-of-band: perftest's TCP exchange (kernel network stack), then the traffic */
	c.run.bench = (struct rnic_bench){.port = &c.port,
					  .prm = &c.prm,
					  .cq = c.cq,
					  .qp = c.qp[0],
					  .mr = c.mr,
					  .buf = c.buf,
					  .buf_size = c.buf_size,
					  .server = !c.prm.server[0],
					  .nqps = c.prm.num_qps};
	for (unsigned int i = 0; i < c.prm.num_qps; i++) {
		c.run.bench.q[i].qp = c.qp[i];
		c.run.bench.q[i].mr = c.lmr[i % c.nl];
	}
	c.run.connect_qp = connect_qp;
	c.run.connect_arg = &c;
	if (c.prm.json[0] && c.nl <= 1 && c.prm.server[0]) { /* the client: the requester */
		c.cct = calloc((size_t)RNIC_CC_TRACE_MAX * RNIC_CC_TRACE_QPS, sizeof(*c.cct));
		if (c.cct) {
			c.port.tick = cc_trace_tick;
			c.port.tick_arg = &c;
		}
	}
	if (c.nl > 1) {
		c.lc.n = c.nl;
		c.lc.steer = &c.steer;
		for (unsigned int l = 0; l < c.nl; l++)
			c.lc.w[l].bench =
			    (struct rnic_bench){.port = c.lport[l],
						.prm = &c.prm,
						.cq = c.lcq[l],
						.mr = c.lmr[l],
						.buf = c.buf,
						.buf_size = c.buf_size,
						.server = !c.prm.server[0],
						.nqps = (c.prm.num_qps - l + c.nl - 1) / c.nl};
		c.run.lc = &c.lc;
	}
	if (c.prm.mode == RNIC_MODE_RC_PINGPONG) {
		rc = rnic_oob_run_pingpong(&c.run, &c.prm, err, sizeof(err));
	} else {
		rnic_bench_print_header(stdout, &c.prm);
		rc = rnic_oob_run(&c.run, &c.prm, err, sizeof(err));
	}
	rnic_lcores_stop(&c.lc); /* workers serve until the exchange ended */
	if (rc < 0) {
		fprintf(stderr, "rnic: %s\n", err);
		rnic_report_counters(&c, &st);
		if (c.prm.json[0] && rnic_report_json(&c, &st, err, err2, sizeof(err2)) < 0)
			die("%s", err2);
		rnic_metrics_stop();
		rnic_trace_close();
		return 1;
	}
	c.local_res = c.run.res;
	if (c.prm.bidirectional && rnic_mode_is_bw(c.prm.mode)) {
		/* perftest -b (print_full_bw_report): one row, this side's figures plus the peer's
		 */
		double k = c.prm.report_gbits ? 1e9 / 8 / 1048576.0 : 1.0;

		c.run.res.bw_peak_mbps += c.run.peer_report.bw_peak * k;
		c.run.res.bw_avg_mbps += c.run.peer_report.bw_avg * k;
		c.run.res.msg_rate_mpps += c.run.peer_report.msg_rate_avg;
	} else if (c.run.bench.server && rnic_mode_is_bw(c.prm.mode) &&
		   c.prm.mode != RNIC_MODE_SEND_BW) {
		/* like perftest's server: print what the requester measured */
		double k = c.prm.report_gbits ? 1e9 / 8 / 1048576.0 : 1.0;
		c.run.res.size = c.run.peer_report.size;
		c.run.res.iters = c.run.peer_report.iters;
		c.run.res.bw_peak_mbps = c.run.peer_report.bw_peak * k;
		c.run.res.bw_avg_mbps = c.run.peer_report.bw_avg * k;
		c.run.res.msg_rate_mpps = c.run.peer_report.msg_rate_avg;
	}
	if (c.prm.mode != RNIC_MODE_RC_PINGPONG) {
		if (!(c.run.bench.server && !rnic_mode_is_bw(c.prm.mode) &&
		      c.prm.mode != RNIC_MODE_SEND_LAT))
			rnic_bench_print_row(stdout, &c.prm, &c.run.res);
		rnic_bench_print_footer(stdout);
	}
	if (c.prm.bidirectional && rnic_mode_is_bw(c.prm.mode))
		fprintf(stderr,
			"rnic: -b: this side sent %" PRIu64 " messages (%.2f MB/s), the peer "
			"reports %" PRIu64 " (%.2f MB/s)%s\n",
			c.local_res.iters, c.local_res.bw_avg_mbps,
			(uint64_t)c.run.peer_report.iters,
			c.run.peer_report.bw_avg * (c.prm.report_gbits ? 1e9 / 8 / 1048576.0 : 1.0),
			c.prm.mode == RNIC_MODE_SEND_BW ? "" : "; the row adds both");
	if (c.prm.bidirectional && c.prm.mode == RNIC_MODE_SEND_BW)
		fprintf(stderr,
			"rnic: -b: this side received %" PRIu64 " messages; the row adds "
			"both sides' sending\n",
			c.run.res_rx.iters);
	if (c.run.res.errors)
		fprintf(stderr, "rnic: %" PRIu64 " completion error(s), first: %s\n",
			c.run.res.errors, roce_wc_status_str(c.run.res.first_error));
	rnic_report_counters(&c, &st);
	rnic_report_vrp(&c, &st);
	if (c.prm.json[0] && rnic_report_json(&c, &st, NULL, err, sizeof(err)) < 0)
		die("%s", err);
	rnic_metrics_stop();
	if (rnic_trace_close() < 0)
		fprintf(stderr, "rnic: --trace %s: write failed\n", c.prm.trace);
	/* every port stopped before cleanup, no cleanup after memif (dp_eal_cleanup()) */
	dp_eal_cleanup();
	return rc < 0 || c.run.res.errors ? 1 : 0;
}
