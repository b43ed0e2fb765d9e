/* SPDX-License-Identifier: BSD-3-Clause */
#include "rnic_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "emu_units.h"
#include "fec.h"
#include "net_arp.h"
#include "net_nd.h"
#include "pfc_tx.h"
#include "roce_params.h"
#include "roce_recovery.h"
#include "roce_verbs.h"
#include "rw_json.h"
#include "rw_opts.h"

static const char *const mode_names[RNIC_MODE__COUNT] = {
    [RNIC_MODE_NONE] = "none",
    [RNIC_MODE_WRITE_BW] = "write_bw",
    [RNIC_MODE_SEND_BW] = "send_bw",
    [RNIC_MODE_READ_BW] = "read_bw",
    [RNIC_MODE_ATOMIC_BW] = "atomic_bw",
    [RNIC_MODE_WRITE_LAT] = "write_lat",
    [RNIC_MODE_SEND_LAT] = "send_lat",
    [RNIC_MODE_READ_LAT] = "read_lat",
    [RNIC_MODE_RC_PINGPONG] = "rc_pingpong",
};

const char *
rnic_mode_name(enum rnic_mode m)
{
	return m < RNIC_MODE__COUNT ? mode_names[m] : "?";
}

bool
rnic_mode_is_bw(enum rnic_mode m)
{
	return m >= RNIC_MODE_WRITE_BW && m <= RNIC_MODE_ATOMIC_BW;
}

uint32_t
rnic_initial_psn(const struct rnic_params *p, unsigned int qp)
{
	/* server and client differ (1 vs 2), QPs step by 2: no two start alike */
	return (uint32_t)((p->seed + (p->server[0] ? 1 : 2) + 2 * qp) * 2654435761u) & 0xffffff;
}

/*
 * The table's types: lib/common/rw_opts' own, then the rnic's (converted by
 * apply_opt()), which keep perftest's number syntax and the rnic's messages.
 */
enum {
	T_STR = RW_OPT_STR,
	T_HELP = RW_OPT_HELP,
	T_IGNORED = RW_OPT_IGNORED,
	T_REFUSED = RW_OPT_REFUSED,
	T_FLAG = RW_OPT_BOOL, /* bool: set by its presence, or =true/false (yes/no, 1/0) */
	T_NUM = RW_OPT_APP,   /* uint32_t or uint64_t (by size): decimal, 0x hex, 0 octal, K/M/G */
	T_VLAN,		      /* int: T_NUM in min..max, or -1 */
	T_CHOICE,	      /* arg: the "|"-separated names; size 0: enum rnic_conn */
	T_IP4,		      /* uint32_t, host order; --ip also sets the prefix */
	T_IP6,		      /* uint8_t[16]; --ip6 also takes a prefix */
	T_VERSION,	      /* print the version and stop */
};

#define OFF(f) offsetof(struct rnic_params, f)
#define SZ(f) sizeof(((struct rnic_params *)0)->f)

/*
 * One row per option: the single source of parsing and --help (rnic_params_json
 * dumps the result). Columns: name, type, field, size, default, min, max,
 * argument in --help (NULL: a flag), help, perftest's letter.
 */
static const struct rw_opt opts[] = {
    /* identity */
    {"ip", T_IP4, OFF(ip), 0, NULL, 0, 0, "A.B.C.D/N",
     "the rnic's IPv4 address and prefix (GID ::ffff:A.B.C.D); required"},
    {"ip6", T_IP6, OFF(ip6), 0, NULL, 0, 0, "ADDR[/N]",
     "IPv6 address (adds an IPv6 GID) and on-link prefix (default /64)"},
    {"gw", T_IP4, OFF(gw), 0, NULL, 0, 0, "A.B.C.D", "next hop for peers off the subnet"},
    {"gw6", T_IP6, OFF(gw6), 0, NULL, 0, 0, "ADDR",
     "IPv6 next hop for peers off --ip6's prefix (link-local or in the prefix)"},
    {"vlan", T_VLAN, OFF(vlan), SZ(vlan), "-1", 0, 4094, "N",
     "802.1Q VLAN ID for RoCE traffic (-1: untagged)"},
    {"pcp", T_NUM, OFF(pcp), SZ(pcp), "3", 0, 7, "N", "802.1p priority in the VLAN tag"},
    {"dscp", T_NUM, OFF(dscp), SZ(dscp), "26", 0, 63, "N",
     "DSCP of RoCE packets (26 = AF31, priority 3)"},
    /* perftest */
    {"size", T_NUM, OFF(size), SZ(size), "65536", 1, 1ull << 31, "N", "message size in bytes", 's'},
    {"iters", T_NUM, OFF(iters), SZ(iters), "5000", 1, 100000000, "N", "iterations (messages)",
     'n'},
    {"duration", T_NUM, OFF(duration_s), SZ(duration_s), "0", 0, 86400, "N",
     "run for this many seconds instead of -n", 'D'},
    {"mtu", T_NUM, OFF(mtu), SZ(mtu), "1024", 256, 4096, "N",
     "path MTU: 256, 512, 1024, 2048 or 4096", 'm'},
    {"qp", T_NUM, OFF(num_qps), SZ(num_qps), "1", 1, 64, "N",
     "number of QPs (at most 64: perftest's MAX_QPS, RNIC_MAX_QPS)", 'q'},
    {"all", T_FLAG, OFF(all_sizes), 0, NULL, 0, 0, NULL, "run sizes 2 B .. 8 MiB", 'a'},
    {"tx-depth", T_NUM, OFF(tx_depth), SZ(tx_depth), "128", 1, 65536, "N", "send queue depth", 't'},
    {"rx-depth", T_NUM, OFF(rx_depth), SZ(rx_depth), "512", 1, 65536, "N", "receive queue depth",
     'r'},
    {"bidirectional", T_FLAG, OFF(bidirectional), 0, NULL, 0, 0, NULL,
     "bidirectional, as perftest -b: both sides run the requester at once (bandwidth modes); the "
     "result row adds both directions, --json has each",
     'b'},
    {"connection", T_CHOICE, OFF(conn), 0, "RC", 0, 0, "RC|UC|UD", "transport", 'c'},
    {"gid-index", T_NUM, OFF(gid_index), SZ(gid_index), "0", 0, 255, "N",
     "GID index (0: IPv4-mapped ::ffff:A.B.C.D, 1: --ip6 if given)", 'x'},
    {"tclass", T_NUM, OFF(tclass), SZ(tclass), "0", 0, 255, "N",
     "IP traffic class; nonzero overrides --dscp (DSCP = tclass >> 2)"},
    {"report_gbits", T_FLAG, OFF(report_gbits), 0, NULL, 0, 0, NULL, "report Gb/s instead of MB/s"},
    {"port", T_NUM, OFF(tcp_port), SZ(tcp_port), "18515", 1, 65535, "N",
     "TCP port of perftest's exchange", 'p'},
    {"outs", T_NUM, OFF(outs), SZ(outs), "16", 1, 256, "N",
     "outstanding RDMA READs / atomics per QP", 'o'},
    {"qp-timeout", T_NUM, OFF(qp_timeout), SZ(qp_timeout), "14", 1, 31, "N",
     "local ACK timeout: 4.096 us * 2^N", 'u'},
    {"inline_size", T_NUM, OFF(inline_size), SZ(inline_size), "0", 0, 1024, "N", "inline data size",
     'I'},
    {"atomic_type", T_CHOICE, OFF(atomic_type), SZ(atomic_type), "FETCH_AND_ADD", 0, 0,
     "CMP_AND_SWAP|FETCH_AND_ADD", "atomic operation for atomic_bw", 'A'},
    /* project */
    {"json", T_STR, OFF(json), SZ(json), "", 0, 0, "FILE", "write results (rocewan/1) to FILE"},
    {"out_json_file", T_STR, OFF(json), SZ(json), NULL, 0, 0, "FILE", "alias of --json (perftest)"},
    {"trace", T_STR, OFF(trace), SZ(trace), "", 0, 0, "FILE",
     "write each retransmitted PSN and, at the receiver, each missing PSN that arrived to FILE "
     "(CSV, CLOCK_MONOTONIC ns, as lossy-emu's --drop-log); default: off"},
    {"metrics", T_STR, OFF(metrics), SZ(metrics), "", 0, 0, "ADDR:PORT",
     "serve Prometheus metrics (text format 0.0.4) at http://ADDR:PORT/metrics while running, "
     "e.g. 0.0.0.0:9101 (docs/metrics.md); default: off"},
    {"metrics-file", T_STR, OFF(metrics_file), SZ(metrics_file), "", 0, 0, "PATH",
     "write the same metrics to PATH every --metrics-interval and at exit (replaced by rename, "
     "for node_exporter's textfile collector); default: off"},
    {"metrics-interval", T_STR, OFF(metrics_interval), SZ(metrics_interval), "1s", 0, 0, "TIME",
     "rewrite period of --metrics-file, a time (ms, s) from 10ms to 3600s"},
    {"recovery", T_CHOICE, OFF(recovery), SZ(recovery), "gbn", 0, 0,
     "gbn|gbone|irn|vrp|fec+gbn|fec+gbone|fec+irn",
     "loss recovery: gbn (IBTA Go-Back-N), gbone (Go-Back-ONE: RACK + receiver bitmap), "
     "irn (IRN selective repeat with SACK), vrp (VRP: RDMA WRITEs tolerate the loss --vrp-* "
     "allow, zero-filled, docs/vrp.md); an rnic peer must ask for the same mode (negotiated in "
     "perftest's version exchange); a standard perftest peer and rc_pingpong get gbn. fec+MODE: "
     "LoWAR's FEC (--fec) under MODE, which recovers what the code cannot; only if the peer rnic "
     "asks for FEC too, else one line and MODE alone (docs/fec.md)"},
    {"fec", T_STR, OFF(fec), SZ(fec), "xor:32,4", 0, 0, "CODE",
     "FEC code of --recovery fec+MODE: xor:K,D (one XOR repair per K packets, interleaving depth "
     "D: a burst of up to D losses is rebuilt) or rs:K,R (Reed-Solomon, any R losses of K); "
     "default xor:32,4: 3.1 % overhead (docs/fec.md says why)"},
    {"fec-hold", T_STR, OFF(fec_hold), SZ(fec_hold), "200us", 0, 0, "TIME",
     "FEC: how long past two block-fill times (at least 8 ms) the receiver withholds a hole's "
     "loss signal (NAK/RACK/SACK) waiting for its repair, a time (us, ms, s); at least twice the "
     "longest stall (2-50 ms silence) it saw in the last 5-10 s (docs/fec.md)"},
    {"fec-adapt", T_FLAG, OFF(fec_adapt), 0, NULL, 0, 0, NULL,
     "FEC receiver: propose the peer's code from the loss seen, one level at a time along "
     "xor:32,4 > xor:16,4 > rs:32,2 > rs:32,4 > rs:16,4 (PROPOSE frames; docs/fec.md); default: "
     "off, the peer keeps its --fec"},
    {"max-ooo", T_NUM, OFF(max_ooo), SZ(max_ooo), "0", 0, 65536, "N",
     "gbone/irn: PSNs the receiver places ahead of the expected one (0: --max-inflight, at most "
     "65536)"},
    {"vrp-loss", T_STR, OFF(vrp_loss), SZ(vrp_loss), "0", 0, 0, "PCT",
     "vrp receiver: loss in percent (0..100, e.g. 2.5) a WRITE message may lose over any "
     "--vrp-window packets; lost packets read as zeros; 0: reliable"},
    {"vrp-window", T_NUM, OFF(vrp_window), SZ(vrp_window), "64", 1, 65536, "N",
     "vrp receiver: the history window of --vrp-loss in packets (VRP's default 64; a shorter "
     "message is judged over its own length)"},
    {"vrp-max-burst", T_STR, OFF(vrp_max_burst), SZ(vrp_max_burst), "", 0, 0, "BYTES",
     "vrp receiver: most consecutive bytes a message may lose (e.g. 4096, 8k; whole MTU packets, "
     "rounded down); default: no bound"},
    {"vrp-critical", T_STR, OFF(vrp_critical), SZ(vrp_critical), "", 0, 0, "OFF:LEN[,...]",
     "vrp receiver: byte ranges of every WRITE message never lost (at most 14; the first and last "
     "packets are always critical); default: none"},
    {"vrp-wr", T_STR, OFF(vrp_wr_spec), SZ(vrp_wr_spec), "", 0, 0, "SPEC[/SPEC...]",
     "vrp sender: a tolerance carried by each WRITE message (VTETH, docs/vrp.md), message i "
     "taking SPEC i mod n; SPEC: comma-separated loss=PCT, window=N, burst=BYTES, crit=OFF:LEN "
     "(up to 4), or qp (the receiver's --vrp-* apply); e.g. \"loss=0/loss=10,crit=0:64\""},
    {"rto-low", T_NUM, OFF(rto_low_us), SZ(rto_low_us), "0", 0, 100000000, "N",
     "irn: RTO_low in us, while fewer than 3 packets are outstanding; with --link-rate also the "
     "RTT "
     "of IRN's one-BDP in-flight cap (0: from the measured RTT, RTT + 4 D, and the cap from the "
     "least RTT sample; --rto fixed: RTO_high)"},
    {"rto-high", T_NUM, OFF(rto_high_us), SZ(rto_high_us), "0", 0, 100000000, "N",
     "irn: RTO_high in us (0: the engine's timer, adaptive RTT + max(4 D, --rto-min) or the -u "
     "timer with --rto fixed)"},
    {"cc", T_CHOICE, OFF(cc), SZ(cc), "none", 0, 0, "none|dcqcn|dcqcn-p|dctcp|timely",
     "congestion control (lib/cc, docs/cc.md): ECN ones mark data ECT(0) and answer CE with "
     "CNPs (dcqcn) or BECN-flagged ACKs (dcqcn-p, dctcp); the loss window (--loss-window) is "
     "under every one"},
    {"cc-param", T_STR, OFF(cc_param), SZ(cc_param), "", 0, 0, "LIST",
     "name=value,... parameters of --cc, e.g. profile=wan,timer_us=300 (rnic --cc-param help "
     "lists each with its default)"},
    {"rto", T_CHOICE, OFF(rto), SZ(rto), "adaptive", 0, 0, "adaptive|fixed",
     "RC retransmit timer: adaptive = Jacobson/Karn from in-band RTT samples (RTT + max(4 D, "
     "--rto-min), at least the third largest recent sample; -u gives the first value), fixed = "
     "IBTA's 4.096 us * 2^u from every ACK (docs/transport.md)"},
    {"rto-min", T_STR, OFF(rto_min), SZ(rto_min), "500us", 0, 0, "TIME",
     "adaptive RTO hard floor, a time (us, ms, s): the least margin above the smoothed RTT "
     "(timeout = RTT + max(4 D, this), at least the stall allowance's)"},
    {"rto-stall-memory", T_STR, OFF(rto_stall), SZ(rto_stall), "2s", 0, 0, "TIME",
     "adaptive RTO stall allowance: the timeout is also at least the least RTT + the third "
     "largest recent sample excess over it (a stall seen 3 times), halved every TIME "
     "(0: off; e.g. 1s)"},
    {"rto-max", T_STR, OFF(rto_max), SZ(rto_max), "1s", 0, 0, "TIME",
     "adaptive RTO ceiling, also caps the doubling after each expiry"},
    {"max-inflight", T_NUM, OFF(max_inflight), SZ(max_inflight), "65536", 1, 8388608, "N",
     "packets in flight per QP (size it for the path's BDP)"},
    {"loss-window", T_CHOICE, OFF(loss_window), SZ(loss_window), "on", 0, 0, "on|off",
     "loss-reactive window under --max-inflight, whatever --cc: halved per loss episode (floored "
     "by the delivery of a recent clean round trip), restarted small after a timeout, grown by "
     "one packet per window (docs/transport.md)"},
    {"loss-window-init", T_NUM, OFF(loss_window_init), SZ(loss_window_init), "10", 0, 8388608, "N",
     "initial loss-reactive window (packets), grown in slow start until --max-inflight, a "
     "loss with a queue signal or the first CNP/ECN echo; 0 starts at --max-inflight (docs/cc.md)"},
    {"busy-poll", T_FLAG, OFF(busy_poll), 0, NULL, 0, 0, NULL,
     "never sleep when idle (benchmarks)"},
    {"own-mac", T_FLAG, OFF(own_mac), 0, NULL, 0, 0, NULL,
     "a MAC of its own (the port's, locally administered, last bit flipped), port promiscuous: "
     "a kernel sharing the interface (af_packet) drops RoCE frames as not its own at once "
     "instead of routing each one"},
    {"lcores", T_NUM, OFF(lcores), SZ(lcores), "1", 1, 64, "N",
     "lcores serving QPs in the bw modes (QPs round-robin; each lcore one RX/TX queue: EAL -l with "
     "as many lcores, the port as many queues, e.g. af_packet qpairs=N; needs -q >= N)"},
    {"seed", T_NUM, OFF(seed), SZ(seed), "1", 0, UINT64_MAX, "N",
     "seed of the initial PSNs (each QP, each side its own) and of the --flows draws (sizes from "
     "--flow-cdf, --load arrivals); keys do not depend on it"},
    {"rate_limit", T_STR, OFF(rate_limit), SZ(rate_limit), "0", 0, 0, "GBPS",
     "pace each QP's requests to this many Gb/s of frames (IBV_QP_RATE_LIMIT; 0 = line rate)"},
    {"chk", T_FLAG, OFF(chk), 0, NULL, 0, 0, NULL,
     "rc_pingpong server: check that each received message has 0 at every 4 KiB page start, "
     "as ibv_rc_pingpong -c sends (the rnic client always does; it checks every echo itself)"},
    /* flow workload (write_bw client) */
    {"flows", T_NUM, OFF(flows), SZ(flows), "0", 0, 10000000, "N",
     "write_bw: run N flows (one RDMA WRITE each, on an idle QP of -q if any) and report "
     "per-flow completion times"},
    {"flow-cdf", T_STR, OFF(flow_cdf), SZ(flow_cdf), "", 0, 0, "FILE",
     "flow sizes from a CDF file (lines \"SIZE_BYTES PERCENT\", linear interpolation); else -s"},
    {"load", T_NUM, OFF(load_pct), SZ(load_pct), "0", 0, 100, "N",
     "Poisson flow arrivals at this % of --link-rate (0: each flow starts when the last ends)"},
    {"link-rate", T_STR, OFF(link_rate), SZ(link_rate), "0", 0, 0, "GBPS",
     "link rate in Gb/s that --load refers to (default: --rate_limit), PFC pause quanta "
     "are timed at (default: the port's reported speed) and irn's one-BDP cap uses (default: "
     "no cap)"},
    /* 802.1Qbb PFC */
    {"pfc", T_CHOICE, OFF(pfc), SZ(pfc), "on", 0, 0, "on|off",
     "obey received PFC: stop sending RoCE frames of a paused lossless priority"},
    {"lossless", T_STR, OFF(lossless), SZ(lossless), "", 0, 0, "LIST",
     "lossless priorities that obey PFC, e.g. 3 or 3,4 (default: the rnic's own priority, "
     "--pcp with --vlan, else --dscp >> 3)"},
    {"pfc-xoff", T_NUM, OFF(pfc_xoff), SZ(pfc_xoff), "0", 0, 1u << 20, "FRAMES",
     "send PFC XOFF for the --lossless priorities when the receive backlog reaches FRAMES "
     "(0: never send PFC). The backlog is the PMD's RX queue count where it has one, else the "
     "frames read in back-to-back full RX bursts (docs/pfc.md)"},
    {"pfc-xon", T_NUM, OFF(pfc_xon), SZ(pfc_xon), "31", 0, 1u << 20, "FRAMES",
     "send XON when the backlog is down to FRAMES (below --pfc-xoff; 31: one RX burst not full)"},
    {"pfc-quanta", T_NUM, OFF(pfc_quanta), SZ(pfc_quanta), "65535", 1, 65535, "N",
     "pause time of each XOFF the rnic sends, in 512-bit quanta at --link-rate; refreshed at half"},
    {"slow-rx-us", T_NUM, OFF(slow_rx_us), SZ(slow_rx_us), "0", 0, 100000, "N",
     "test aid: sleep N us after each RX burst that returned frames, a receive path that falls "
     "behind (for --pfc-xoff tests)"},
    /* perftest options accepted and ignored, and refused ones */
    {"ib-dev", T_IGNORED, 0, 0, NULL, 0, 0, "X", "ignored: the device is the DPDK port", 'd'},
    {"ib-port", T_IGNORED, 0, 0, NULL, 0, 0, "X", "ignored", 'i'},
    {"CPU-freq", T_IGNORED, 0, 0, NULL, 0, 0, NULL, "ignored", 'F'},
    {"events", T_IGNORED, 0, 0, NULL, 0, 0, NULL, "ignored: the rnic always polls", 'e'},
    {"post_list", T_IGNORED, 0, 0, NULL, 0, 0, "X", "ignored", 'l'},
    {"cq-mod", T_IGNORED, 0, 0, NULL, 0, 0, "X", "ignored", 'Q'},
    {"rdma_cm", T_REFUSED, 0, 0, NULL, 0, 0, NULL,
     "refused: RDMA CM is not supported yet; use the default TCP exchange", 'R'},
    {"version", T_VERSION, 0, 0, NULL, 0, 0, NULL, "print the version and stop", 'V'},
    {"help", T_HELP, 0, 0, NULL, 0, 0, NULL, "print this help and stop", 'h'},
};

#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

/* perftest's numbers: strtoull's bases (0x hex, 0 octal), a K/M/G suffix for sizes */
static int
parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end) {
		/* perftest accepts K/M/G suffixes for sizes */
		if (!errno && end[1] == 0 && (*end == 'K' || *end == 'k'))
			x <<= 10;
		else if (!errno && end[1] == 0 && (*end == 'M' || *end == 'm'))
			x <<= 20;
		else if (!errno && end[1] == 0 && (*end == 'G' || *end == 'g'))
			x <<= 30;
		else
			return -EINVAL;
	}
	*v = x;
	return 0;
}

static int
apply_ip4(const struct rw_opt *o, const char *val, struct rnic_params *p, const char *ctx,
	  char *err, size_t errlen)
{
	char buf[64], *slash;
	struct in_addr a;
	uint64_t pre = 32;

	snprintf(buf, sizeof(buf), "%s", val);
	slash = strchr(buf, '/');
	if (slash) {
		*slash = 0;
		if (parse_u64(slash + 1, &pre) < 0 || pre > 32 || pre == 0)
			return rw_opts_err(err, errlen, "%s: prefix \"/%s\" must be 1..32", ctx,
					   slash + 1);
	}
	if (inet_pton(AF_INET, buf, &a) != 1)
		return rw_opts_err(err, errlen, "%s: \"%s\" is not an IPv4 address (A.B.C.D%s)",
				   ctx, val, o->off == OFF(ip) ? "/N" : "");
	*(uint32_t *)((char *)p + o->off) = ntohl(a.s_addr);
	if (o->off == OFF(ip))
		p->prefix = slash ? (uint8_t)pre : 24;
	return 0;
}

static int
apply_ip6(const struct rw_opt *o, const char *val, struct rnic_params *p, const char *ctx,
	  char *err, size_t errlen)
{
	char a[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(val, '/');
	unsigned long n = 64;
	char *end;

	snprintf(a, sizeof(a), "%.*s", slash ? (int)(slash - val) : (int)strlen(val), val);
	if (inet_pton(AF_INET6, a, (char *)p + o->off) != 1)
		return rw_opts_err(err, errlen, "%s: \"%s\" is not an IPv6 address", ctx, val);
	if (slash && (o->off != OFF(ip6) || !slash[1] || (n = strtoul(slash + 1, &end, 10), *end) ||
		      n < 1 || n > 128))
		return rw_opts_err(err, errlen, "%s: \"%s\": %s", ctx, val,
				   o->off == OFF(ip6) ? "the prefix length after / must be 1..128"
						      : "give the address alone, without /N");
	if (o->off == OFF(ip6)) {
		p->has_ip6 = true;
		p->ip6_prefix = (uint8_t)n;
	} else {
		p->has_gw6 = true;
	}
	return 0;
}

/* The rnic's own types; rw_opts converts the rest. */
static int
apply_opt(const struct rw_opt *o, const char *val, void *obj, const char *ctx, char *err,
	  size_t errlen)
{
	struct rnic_params *p = obj;
	void *f = (char *)p + o->off;
	uint64_t v;

	switch (o->type) {
	case T_VLAN:
		if (strcmp(val, "-1") == 0) {
			p->vlan = -1;
			return 0;
		}
		/* fall through */
	case T_NUM:
		if (parse_u64(val, &v) < 0 || v < o->min || v > o->max)
			return rw_opts_err(err, errlen,
					   "%s: \"%s\" is not a number in %" PRIu64 "..%" PRIu64,
					   ctx, val, o->min, o->max);
		if (o->type == T_VLAN)
			p->vlan = (int)v;
		else if (o->size == sizeof(uint32_t))
			*(uint32_t *)f = (uint32_t)v;
		else
			*(uint64_t *)f = v;
		return 0;
	case T_CHOICE: {
		const char *c = o->arg;
		int idx = 0;
		size_t n = strlen(val);

		while (c) {
			const char *bar = strchr(c, '|');
			size_t len = bar ? (size_t)(bar - c) : strlen(c);

			if (len == n && strncasecmp(c, val, n) == 0) {
				if (o->size)
					snprintf((char *)f, o->size, "%.*s", (int)len, c);
				else
					*(enum rnic_conn *)f = (enum rnic_conn)idx;
				return 0;
			}
			c = bar ? bar + 1 : NULL;
			idx++;
		}
		return rw_opts_err(err, errlen, "%s: \"%s\" is not one of %s", ctx, val, o->arg);
	}
	case T_IP4:
		return apply_ip4(o, val, p, ctx, err, errlen);
	case T_IP6:
		return apply_ip6(o, val, p, ctx, err, errlen);
	case T_VERSION:
		printf("rnic %s (perftest-compatible, version string 6.06)\n", rw_version());
		return 1;
	}
	return rw_opts_err(err, errlen, "%s: option of unknown type %d", ctx, o->type);
}

static int
parse_mode(const char *s, enum rnic_mode *m)
{
	for (int i = 1; i < RNIC_MODE__COUNT; i++)
		if (strcmp(s, mode_names[i]) == 0) {
			*m = (enum rnic_mode)i;
			return 0;
		}
	return -EINVAL;
}

/* The arguments that are not options: the mode, then the server's address. */
static int
positional(unsigned idx, const char *a, void *obj, char *err, size_t errlen)
{
	struct rnic_params *p = obj;

	if (idx == 0) {
		if (parse_mode(a, &p->mode) < 0)
			return rw_opts_err(
			    err, errlen,
			    "unknown mode \"%s\" (expected write_bw, send_bw, read_bw, "
			    "atomic_bw, write_lat, send_lat, read_lat or rc_pingpong)",
			    a);
		return 0;
	}
	if (idx == 1) {
		if (strlen(a) >= sizeof(p->server))
			return rw_opts_err(err, errlen, "server name too long");
		snprintf(p->server, sizeof(p->server), "%s", a);
		return 0;
	}
	return rw_opts_err(err, errlen, "unexpected argument \"%s\" after the server address", a);
}

static const char usage[] =
    "Usage: rnic <EAL args> -- --ip A.B.C.D/N [options] <mode> [server]\n"
    "A userspace RoCEv2 RNIC on a DPDK port. Modes (perftest-compatible):\n"
    "  write_bw send_bw read_bw atomic_bw write_lat send_lat read_lat rc_pingpong\n"
    "With a server address the rnic is the client; without, it waits for one.\n\n"
    "Options:\n";

static const struct rw_opts rnic_opts = {
    .opt = opts,
    .n = N_OPTS,
    .apply = apply_opt,
    .usage = usage,
    .help_width = 30,
    .list_prefix = NULL, /* about 70 names: "(see --help)" */
    .positional = positional,
    .ctx_prefix = "option ",
    .prog = "rnic",
};

void
rnic_params_defaults(struct rnic_params *p)
{
	memset(p, 0, sizeof(*p));
	/* a numeric row must point at a field of its width (a wider store would corrupt the next)
	 */
	for (size_t i = 0; i < N_OPTS; i++)
		if ((opts[i].type == T_NUM || opts[i].type == T_VLAN) &&
		    opts[i].size != sizeof(uint32_t) && opts[i].size != sizeof(uint64_t))
			abort();
	rw_opts_defaults(&rnic_opts, p);
}

int
rnic_parse_args(int argc, char **argv, struct rnic_params *p, char *err, size_t errlen)
{
	int rc;

	rnic_params_defaults(p);
	rc = rw_opts_parse_args(&rnic_opts, argc, argv, p, err, errlen);
	if (rc != 0)
		return rc;
	return rnic_configure(p, err, errlen);
}

/* A rate in Gb/s (perftest's --rate_limit unit): a non-negative number, at most 1000. */
static int
parse_gbps(const char *opt, const char *s, double *v, char *err, size_t errlen)
{
	char *end;

	*v = strtod(s, &end);
	if (end == s || *end || !(*v >= 0 && *v <= 1000)) {
		snprintf(err, errlen,
			 "option --%s: \"%s\" is not a rate in Gb/s (0..1000, e.g. 0.95)", opt, s);
		return -EINVAL;
	}
	return 0;
}

/*
 * --recovery, resolved once: the "fec+" prefix off, the mode's ops from lib/roce's
 * registry (the option's choices are its modes).
 */
static int
resolve_recovery(struct rnic_params *p, char *err, size_t errlen)
{
	static const char pfx[] = "fec+";

	p->rec.fec = strncmp(p->recovery, pfx, sizeof(pfx) - 1) == 0;
	p->rec.ops = roce_recovery_find(p->recovery + (p->rec.fec ? sizeof(pfx) - 1 : 0));
	if (!p->rec.ops) {
		snprintf(err, errlen, "option --recovery: \"%s\": no such mode in lib/roce",
			 p->recovery);
		return -EINVAL;
	}
	return 0;
}

/* VRP: the mode gives up tolerated losses (ROCE_REC_F_TOLERATE) */
static bool
recovery_is_vrp(const struct rnic_params *p)
{
	return (p->rec.ops->flags & ROCE_REC_F_TOLERATE) != 0;
}

/* --rto-min / --rto-max: times in the netem grammar's units, within the engine's limits. */
static int
parse_rto(struct rnic_params *p, char *err, size_t errlen)
{
	if (emu_parse_time(p->rto_min, &p->rto_min_ns) < 0 ||
	    p->rto_min_ns < ROCE_RTO_MIN_LIMIT_NS || p->rto_min_ns > ROCE_RTO_MAX_LIMIT_NS) {
		snprintf(err, errlen,
			 "option --rto-min: \"%s\" is not a time from 1us to 3600s "
			 "(e.g. 5ms)",
			 p->rto_min);
		return -EINVAL;
	}
	if (emu_parse_time(p->rto_max, &p->rto_max_ns) < 0 ||
	    p->rto_max_ns < ROCE_RTO_MIN_LIMIT_NS || p->rto_max_ns > ROCE_RTO_MAX_LIMIT_NS) {
		snprintf(err, errlen,
			 "option --rto-max: \"%s\" is not a time from 1us to 3600s "
			 "(e.g. 1s)",
			 p->rto_max);
		return -EINVAL;
	}
	if (emu_parse_time(p->rto_stall, &p->rto_stall_ns) < 0 ||
	    p->rto_stall_ns > ROCE_RTO_MAX_LIMIT_NS) {
		snprintf(err, errlen,
			 "option --rto-stall-memory: \"%s\" is not a time from 0 to 3600s "
			 "(e.g. 2s)",
			 p->rto_stall);
		return -EINVAL;
	}
	if (p->rto_min_ns > p->rto_max_ns) {
		snprintf(err, errlen, "--rto-min %s is above --rto-max %s", p->rto_min, p->rto_max);
		return -EINVAL;
	}
	return 0;
}

/* --vrp-*: the receiver's loss tolerance (vrp.h), checked as lib/vrp would. */
static int
parse_vrp(struct rnic_params *p, char *err, size_t errlen)
{
	struct vrp_tolerance *t = &p->vrp;
	char *end, buf[sizeof(p->vrp_critical)], *save = NULL;
	double pct = strtod(p->vrp_loss, &end);

	memset(t, 0, sizeof(*t));
	if (!p->vrp_loss[0] || *end || !(pct >= 0 && pct <= 100)) {
		snprintf(err, errlen,
			 "option --vrp-loss: \"%s\" is not a percentage 0..100 (e.g. 2.5)",
			 p->vrp_loss);
		return -EINVAL;
	}
	t->loss_bp = (uint32_t)(pct * 100.0 + 0.5);
	t->window = p->vrp_window;
	t->max_burst = VRP_BURST_UNLIMITED;
	if (p->vrp_max_burst[0] && emu_parse_size(p->vrp_max_burst, &t->max_burst) < 0) {
		snprintf(err, errlen,
			 "option --vrp-max-burst: \"%s\" is not a size in bytes (e.g. 4096, 8k)",
			 p->vrp_max_burst);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", p->vrp_critical);
	for (char *r = strtok_r(buf, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(r, ':');
		struct vrp_range *c = &t->critical[t->n_critical];

		if (t->n_critical >= ROCE_VRP_QP_CRITICAL) {
			snprintf(err, errlen, "option --vrp-critical: more than %d ranges",
				 ROCE_VRP_QP_CRITICAL);
			return -EINVAL;
		}
		if (!colon || (*colon = 0, emu_parse_size(r, &c->off) < 0) ||
		    emu_parse_size(colon + 1, &c->len) < 0 || c->len == 0) {
			snprintf(err, errlen,
				 "option --vrp-critical: \"%s\" is not OFF:LEN[,...] with LEN "
				 "> 0 (e.g. 0:64,4096:128)",
				 p->vrp_critical);
			return -EINVAL;
		}
		t->n_critical++;
	}
	if (!recovery_is_vrp(p) &&
	    (t->loss_bp || p->vrp_max_burst[0] || t->n_critical || p->vrp_window != 64)) {
		snprintf(err, errlen, "options --vrp-*: need --recovery vrp");
		return -EINVAL;
	}
	return 0;
}

/* One --vrp-wr SPEC (comma-separated key=value, or "qp") into @p w. */
static int
parse_vrp_wr_one(char *spec, struct roce_vrp_wr *w)
{
	char *save = NULL;

	memset(w, 0, sizeof(*w));
	if (strcmp(spec, "qp") == 0)
		return 0;
	for (char *kv = strtok_r(spec, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *val = strchr(kv, '='), *end;

		if (!val)
			return -EINVAL;
		*val++ = 0;
		if (strcmp(kv, "loss") == 0) {
			double pct = strtod(val, &end);

			if (!*val || *end || !(pct >= 0 && pct <= 100))
				return -EINVAL;
			w->loss_bp = (uint32_t)(pct * 100.0 + 0.5);
			w->set |= ROCE_VRP_WR_LOSS;
		} else if (strcmp(kv, "window") == 0) {
			unsigned long n = strtoul(val, &end, 10);

			if (!*val || *end || n < 1 || n > 65535)
				return -EINVAL;
			w->window = (uint32_t)n;
			w->set |= ROCE_VRP_WR_WINDOW;
		} else if (strcmp(kv, "burst") == 0) {
			if (emu_parse_size(val, &w->max_burst) < 0)
				return -EINVAL;
			w->set |= ROCE_VRP_WR_BURST;
		} else if (strcmp(kv, "crit") == 0) {
			char *colon = strchr(val, ':');
			struct vrp_range *c = &w->critical[w->n_critical];

			if (w->n_critical >= ROCE_VRP_WR_CRITICAL || !colon)
				return -EINVAL;
			*colon = 0;
			if (emu_parse_size(val, &c->off) < 0 ||
			    emu_parse_size(colon + 1, &c->len) < 0 || c->len == 0)
				return -EINVAL;
			w->n_critical++;
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

/* --vrp-wr: the sender's per-message tolerances (roce_post_send_vrp, docs/vrp.md). */
static int
parse_vrp_wr(struct rnic_params *p, char *err, size_t errlen)
{
	char buf[sizeof(p->vrp_wr_spec)], *save = NULL;

	p->n_vrp_wr = 0;
	if (!p->vrp_wr_spec[0])
		return 0;
	if (!recovery_is_vrp(p)) {
		snprintf(err, errlen, "option --vrp-wr: needs --recovery vrp");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", p->vrp_wr_spec);
	for (char *s = strtok_r(buf, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
		if (p->n_vrp_wr >= RNIC_VRP_WR_MAX ||
		    parse_vrp_wr_one(s, &p->vrp_wr[p->n_vrp_wr]) < 0) {
			snprintf(err, errlen,
				 "option --vrp-wr: \"%s\" is not SPEC[/SPEC...] (at most %d; SPEC: "
				 "loss=PCT,window=N,burst=BYTES,crit=OFF:LEN (up to %d) or qp)",
				 p->vrp_wr_spec, RNIC_VRP_WR_MAX, ROCE_VRP_WR_CRITICAL);
			return -EINVAL;
		}
		/* with one message size (-s), a range that does not fit is refused here */
		for (unsigned int i = 0; !p->all_sizes && i < p->vrp_wr[p->n_vrp_wr].n_critical;
		     i++) {
			const struct vrp_range *r = &p->vrp_wr[p->n_vrp_wr].critical[i];

			if (r->off >= p->size || r->len > p->size - r->off) {
				snprintf(err, errlen,
					 "option --vrp-wr: critical range %" PRIu64 ":%" PRIu64
					 " is not inside a %" PRIu64 "-byte message (-s)",
					 r->off, r->len, p->size);
				return -EINVAL;
			}
		}
		p->n_vrp_wr++;
	}
	if (p->n_vrp_wr == 0) {
		snprintf(err, errlen, "option --vrp-wr: \"%s\" names no tolerance", p->vrp_wr_spec);
		return -EINVAL;
	}
	return 0;
}

static int
configure_flows(struct rnic_params *p, char *err, size_t errlen)
{
	char why[320];

	p->flow_max = p->size;
	if (!p->flows) {
		if (p->flow_cdf[0] || p->load_pct) {
			snprintf(err, errlen, "--flow-cdf and --load need --flows N");
			return -EINVAL;
		}
		return 0;
	}
	if (p->mode != RNIC_MODE_WRITE_BW || p->conn != RNIC_CONN_RC) {
		snprintf(err, errlen, "--flows works with write_bw over RC (got %s over %s)",
			 rnic_mode_name(p->mode), p->conn == RNIC_CONN_UC ? "UC" : "UD");
		return -EINVAL;
	}
	if (p->load_pct && p->link_gbps == 0) {
		snprintf(
		    err, errlen,
		    "--load %u%% needs a link rate: give --link-rate GBPS or --rate_limit GBPS",
		    p->load_pct);
		return -EINVAL;
	}
	if (p->flow_cdf[0]) {
		if (rnic_cdf_load(&p->cdf, p->flow_cdf, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "option --flow-cdf: %s", why);
			return -EINVAL;
		}
		p->flow_max = rnic_cdf_max(&p->cdf);
		if (p->flow_max > (1ull << 30)) {
			snprintf(err, errlen,
				 "option --flow-cdf: largest flow %" PRIu64 " B exceeds 1 GiB",
				 p->flow_max);
			return -EINVAL;
		}
	}
	return 0;
}

static int
configure_pfc(struct rnic_params *p, char *err, size_t errlen)
{
	char why[160];
	uint32_t dscp = p->tclass ? p->tclass >> 2 : p->dscp;

	p->pfc_on = strcmp(p->pfc, "on") == 0;
	/* the priority the rnic's frames carry: PCP trust when tagged, else pfc.h's DSCP >> 3 table
	 */
	p->own_prio = (uint8_t)(p->vlan >= 0 ? p->pcp : dscp >> 3);
	p->lossless_mask = (uint8_t)(1u << p->own_prio);
	if (p->lossless[0] &&
	    pfc_prio_list_parse(p->lossless, &p->lossless_mask, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "option --lossless: %s", why);
		return -EINVAL;
	}
	if (p->pfc_xoff && p->pfc_xon >= p->pfc_xoff) {
		snprintf(err, errlen,
			 "option --pfc-xon: %u frames must be below --pfc-xoff %u "
			 "(hysteresis: XON only once the backlog fell under XOFF)",
			 p->pfc_xon, p->pfc_xoff);
		return -EINVAL;
	}
	return 0;
}

/* --recovery fec+MODE and --fec: the code's parameters checked now. */
static int
configure_fec(struct rnic_params *p, char *err, size_t errlen)
{
	struct fec_params fp;
	char why[160];

	int bad = fec_params_parse(p->fec, &fp, why, sizeof(why)) < 0;

	if (bad || fp.mode == FEC_MODE_OFF) { /* fp is not set when the parse failed */
		snprintf(err, errlen, "option --fec: \"%s\": %s (xor:K,D or rs:K,R, e.g. xor:32,4)",
			 p->fec, bad ? why : "off is not a code");
		return -EINVAL;
	}
	if (emu_parse_time(p->fec_hold, &p->fec_hold_ns) < 0 || p->fec_hold_ns == 0 ||
	    p->fec_hold_ns > ROCE_MAX_FEC_HOLD_NS) {
		snprintf(err, errlen,
			 "option --fec-hold: \"%s\" is not a time from 1us to 10s "
			 "(e.g. 200us)",
			 p->fec_hold);
		return -EINVAL;
	}
	if (p->rec.fec && p->conn != RNIC_CONN_RC) {
		snprintf(err, errlen, "--recovery %s needs -c RC (FEC rides on RC's PSNs)",
			 p->recovery);
		return -EINVAL;
	}
	return 0;
}

int
rnic_configure(struct rnic_params *p, char *err, size_t errlen)
{
	p->loss_window_on = strcmp(p->loss_window, "on") == 0;
	if (resolve_recovery(p, err, errlen) < 0)
		return -EINVAL;
	if (p->mode == RNIC_MODE_NONE) {
		snprintf(err, errlen,
			 "no mode given (write_bw, send_bw, read_bw, atomic_bw, write_lat, "
			 "send_lat, read_lat, rc_pingpong)");
		return -EINVAL;
	}
	if (p->ip == 0) {
		snprintf(err, errlen, "--ip A.B.C.D/N is required: the rnic owns an IPv4 address");
		return -EINVAL;
	}
	if (p->mtu & (p->mtu - 1)) {
		snprintf(err, errlen, "option --mtu: %u is not one of 256, 512, 1024, 2048, 4096",
			 p->mtu);
		return -EINVAL;
	}
	if (p->gw && !net_same_subnet(p->ip, p->gw, p->prefix)) {
		snprintf(err, errlen, "option --gw: next hop is not inside --ip's /%u subnet",
			 p->prefix);
		return -EINVAL;
	}
	if (p->has_gw6 && !p->has_ip6) {
		snprintf(err, errlen, "--gw6 needs --ip6 (the rnic's own IPv6 address)");
		return -EINVAL;
	}
	if (p->has_gw6 && !net_ip6_on_link(p->gw6, p->ip6, p->ip6_prefix)) {
		char g[INET6_ADDRSTRLEN], a[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, p->gw6, g, sizeof(g));
		inet_ntop(AF_INET6, p->ip6, a, sizeof(a));
		snprintf(err, errlen,
			 "--gw6 %s is not on-link: it must be link-local (fe80::/10) or "
			 "in --ip6 %s/%u",
			 g, a, p->ip6_prefix);
		return -EINVAL;
	}
	if (p->gid_index > (p->has_ip6 ? 1u : 0u)) {
		snprintf(err, errlen, "option --gid-index: %u does not exist (0 = IPv4-mapped%s)",
			 p->gid_index, p->has_ip6 ? ", 1 = --ip6" : "; give --ip6 for index 1");
		return -EINVAL;
	}
	if (p->conn == RNIC_CONN_UD && p->mode != RNIC_MODE_SEND_BW &&
	    p->mode != RNIC_MODE_SEND_LAT) {
		snprintf(err, errlen, "-c UD works with send_bw and send_lat only (%s needs RC%s)",
			 rnic_mode_name(p->mode),
			 p->mode == RNIC_MODE_WRITE_BW || p->mode == RNIC_MODE_WRITE_LAT ? " or UC"
											 : "");
		return -EINVAL;
	}
	if (p->conn == RNIC_CONN_UC &&
	    (p->mode == RNIC_MODE_READ_BW || p->mode == RNIC_MODE_READ_LAT ||
	     p->mode == RNIC_MODE_ATOMIC_BW)) {
		snprintf(err, errlen, "-c UC cannot do %s (UC has no READ or atomics)",
			 rnic_mode_name(p->mode));
		return -EINVAL;
	}
	if (p->conn == RNIC_CONN_UD && p->size > p->mtu) {
		snprintf(err, errlen, "-c UD: message size %" PRIu64 " exceeds the MTU %u", p->size,
			 p->mtu);
		return -EINVAL;
	}
	if (p->chk && p->mode != RNIC_MODE_RC_PINGPONG) {
		snprintf(err, errlen,
			 "--chk is an rc_pingpong option (%s checks nothing per message)",
			 rnic_mode_name(p->mode));
		return -EINVAL;
	}
	if (p->bidirectional && !rnic_mode_is_bw(p->mode)) {
		snprintf(err, errlen,
			 "-b runs in the bandwidth modes (write_bw, send_bw, read_bw, "
			 "atomic_bw), as perftest's -b; not in %s",
			 rnic_mode_name(p->mode));
		return -EINVAL;
	}
	if (p->bidirectional && p->flows) {
		snprintf(err, errlen,
			 "-b with --flows: the flow workload runs one way (client to "
			 "server); drop -b");
		return -EINVAL;
	}
	if (p->bidirectional && p->mode == RNIC_MODE_SEND_BW && p->duration_s) {
		snprintf(err, errlen,
			 "send_bw -b counts -n messages each way (each side must know "
			 "how many receives to expect); use -n instead of -D");
		return -EINVAL;
	}
	if (p->mode == RNIC_MODE_ATOMIC_BW)
		p->size = 8;
	if (parse_gbps("rate_limit", p->rate_limit, &p->rate_gbps, err, errlen) < 0 ||
	    parse_gbps("link-rate", p->link_rate, &p->link_gbps, err, errlen) < 0)
		return -EINVAL;
	if (configure_fec(p, err, errlen) < 0)
		return -EINVAL;
	if (parse_vrp(p, err, errlen) < 0)
		return -EINVAL;
	if (parse_vrp_wr(p, err, errlen) < 0)
		return -EINVAL;
	if (parse_rto(p, err, errlen) < 0)
		return -EINVAL;
	uint64_t mi_ns;

	if (emu_parse_time(p->metrics_interval, &mi_ns) < 0 || mi_ns < 10000000ull ||
	    mi_ns > 3600000000000ull) {
		snprintf(err, errlen,
			 "option --metrics-interval: \"%s\" is not a time from 10ms to 3600s",
			 p->metrics_interval);
		return -EINVAL;
	}
	p->metrics_interval_ms = (uint32_t)(mi_ns / 1000000u);
	p->pfc_link_gbps = p->link_gbps; /* only an explicit --link-rate times PFC quanta */
	if (p->link_gbps == 0)
		p->link_gbps = p->rate_gbps;
	if (configure_pfc(p, err, errlen) < 0)
		return -EINVAL;
	return configure_flows(p, err, errlen);
}

void
rnic_print_help(FILE *f)
{
	rw_opts_help(&rnic_opts, f);
}

void
rnic_params_json(const struct rnic_params *p, struct rw_json *w)
{
	static const char *const conn[] = {"RC", "UC", "UD"};
	char ip[INET6_ADDRSTRLEN];
	struct in_addr a;

	rw_str(w, "mode", rnic_mode_name(p->mode));
	rw_str(w, "role", p->server[0] ? "client" : "server");
	rw_str(w, "server", p->server[0] ? p->server : NULL);
	a.s_addr = htonl(p->ip);
	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	rw_str(w, "ip", ip);
	rw_uint(w, "prefix", p->prefix);
	if (p->has_ip6) {
		inet_ntop(AF_INET6, p->ip6, ip, sizeof(ip));
		rw_str(w, "ip6", ip);
		rw_uint(w, "ip6_prefix", p->ip6_prefix);
		if (p->has_gw6) {
			inet_ntop(AF_INET6, p->gw6, ip, sizeof(ip));
			rw_str(w, "gw6", ip);
		} else {
			rw_null(w, "gw6");
		}
	} else {
		rw_null(w, "ip6");
	}
	rw_int(w, "vlan", p->vlan);
	rw_uint(w, "pcp", p->pcp);
	rw_uint(w, "dscp", p->dscp);
	rw_uint(w, "size_bytes", p->size);
	rw_uint(w, "iters", p->iters);
	rw_uint(w, "duration_s", p->duration_s);
	rw_uint(w, "mtu_bytes", p->mtu);
	rw_uint(w, "num_qps", p->num_qps);
	rw_bool(w, "all_sizes", p->all_sizes);
	rw_uint(w, "tx_depth", p->tx_depth);
	rw_uint(w, "rx_depth", p->rx_depth);
	rw_bool(w, "bidirectional", p->bidirectional);
	rw_str(w, "connection", conn[p->conn]);
	rw_uint(w, "gid_index", p->gid_index);
	rw_uint(w, "tclass", p->tclass);
	rw_uint(w, "tcp_port", p->tcp_port);
	rw_uint(w, "outs", p->outs);
	rw_uint(w, "qp_timeout", p->qp_timeout);
	rw_uint(w, "inline_size_bytes", p->inline_size);
	rw_str(w, "atomic_type", p->atomic_type);
	rw_str(w, "trace", p->trace[0] ? p->trace : NULL);
	rw_str(w, "recovery", p->recovery);
	rw_str(w, "fec", p->rec.fec ? p->fec : NULL);
	rw_uint(w, "fec_hold_ns", p->fec_hold_ns);
	rw_bool(w, "fec_adapt", p->fec_adapt);
	rw_uint(w, "max_ooo", p->max_ooo);
	rw_uint(w, "vrp_loss_bp", p->vrp.loss_bp);
	rw_uint(w, "vrp_window", p->vrp_window);
	rw_str(w, "vrp_max_burst", p->vrp_max_burst[0] ? p->vrp_max_burst : NULL);
	rw_str(w, "vrp_critical", p->vrp_critical[0] ? p->vrp_critical : NULL);
	rw_str(w, "vrp_wr", p->vrp_wr_spec[0] ? p->vrp_wr_spec : NULL);
	rw_uint(w, "rto_low_us", p->rto_low_us);
	rw_uint(w, "rto_high_us", p->rto_high_us);
	rw_str(w, "cc", p->cc);
	rw_str(w, "cc_param", p->cc_param);
	rw_str(w, "rto", p->rto);
	rw_uint(w, "rto_min_ns", p->rto_min_ns);
	rw_uint(w, "rto_max_ns", p->rto_max_ns);
	rw_uint(w, "rto_stall_ns", p->rto_stall_ns);
	rw_uint(w, "max_inflight_pkts", p->max_inflight);
	rw_bool(w, "loss_window", p->loss_window_on);
	rw_uint(w, "loss_window_init_pkts", p->loss_window_init);
	rw_bool(w, "busy_poll", p->busy_poll);
	rw_bool(w, "own_mac", p->own_mac);
	rw_bool(w, "chk", p->chk);
	rw_uint(w, "lcores", p->lcores);
	rw_dbl(w, "rate_limit_gbps", p->rate_gbps);
	rw_uint(w, "flows", p->flows);
	rw_str(w, "flow_cdf", p->flow_cdf[0] ? p->flow_cdf : NULL);
	rw_uint(w, "load_pct", p->load_pct);
	rw_dbl(w, "link_rate_gbps", p->link_gbps);
	rw_bool(w, "pfc", p->pfc_on);
	rw_arr_begin(w, "lossless");
	for (unsigned n = 0; n < 8; n++)
		if (p->lossless_mask & (1u << n))
			rw_uint(w, NULL, n);
	rw_arr_end(w);
	rw_uint(w, "priority", p->own_prio);
	rw_uint(w, "pfc_xoff", p->pfc_xoff);
	rw_uint(w, "pfc_xon", p->pfc_xon);
	rw_uint(w, "pfc_quanta", p->pfc_quanta);
	rw_uint(w, "slow_rx_us", p->slow_rx_us);
}

void
rnic_params_dev_cfg(const struct rnic_params *p, const uint8_t mac[6], struct roce_dev_cfg *dc)
{
	roce_dev_cfg_init(dc);
	memcpy(dc->mac, mac, 6);
	net_ip4_to_mapped(p->ip, dc->gid[0].raw);
	dc->gid_count = 1;
	if (p->has_ip6) {
		memcpy(dc->gid[1].raw, p->ip6, 16);
		dc->gid_count = 2;
	}
	dc->vlan = p->vlan >= 0;
	dc->vlan_id = (uint16_t)(p->vlan < 0 ? 0 : p->vlan);
	dc->pcp = p->pcp;
	dc->dscp = p->tclass ? (uint8_t)(p->tclass >> 2) : p->dscp;
	dc->mtu = p->mtu;
	dc->window_pkts = p->max_inflight;
	dc->loss_window = p->loss_window_on;
	dc->loss_window_init = p->loss_window_init;
	snprintf(dc->recovery, sizeof(dc->recovery), "%s", p->rec.ops->name);
	dc->fec_hold_ns = p->fec_hold_ns;
	dc->fec_adapt = p->fec_adapt;
	dc->max_ooo = p->max_ooo;
	dc->vrp = p->vrp;
	dc->rto_low_ns = (uint64_t)p->rto_low_us * 1000u;
	dc->rto_high_ns = (uint64_t)p->rto_high_us * 1000u;
	/*
	 * IRN's one-BDP cap: only an explicit --link-rate (as PFC's quanta), not
	 * the --rate_limit fallback. Capped at one BDP of the pacer's own rate,
	 * every loss stalls new data for about a round trip until its repair is
	 * acknowledged: 0.65 of the lossless goodput at 0.1 % loss in the testbed
	 * (docs/transport.md §5.1).
	 */
	dc->link_bps = (uint64_t)(p->pfc_link_gbps * 1e9);
	snprintf(dc->cc, sizeof(dc->cc), "%s", p->cc);
	dc->rto_mode = strcmp(p->rto, "fixed") == 0 ? ROCE_RTO_FIXED : ROCE_RTO_ADAPTIVE;
	dc->rto_min_ns = p->rto_min_ns;
	dc->rto_max_ns = p->rto_max_ns;
	dc->rto_stall_ns = p->rto_stall_ns;
}
