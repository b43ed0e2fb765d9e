/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_config.h
 * The rnic's configuration: one typed params struct, one option table (name,
 * type, default, range, help, perftest letter) in lib/common/rw_opts' form,
 * from which parsing and --help are generated (rnic_params_json dumps the
 * effective configuration), and one rnic_configure() that validates
 * everything. No DPDK: EAL arguments are split off before this parser sees the
 * rest. tests/golden/opts/rnic_args.* (tests/python/test_rnic_opts.py) records
 * what ~1000 argument vectors print and parse to.
 *
 * Command line: rnic <EAL args> -- --ip A.B.C.D/N [options] <mode> [options] [server]
 */
#ifndef RNIC_CONFIG_H
#define RNIC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_verbs.h"
#include "vrp.h"

#define RNIC_VRP_WR_MAX 8 /**< --vrp-wr: tolerances cycled per WRITE message */
#include <stdio.h>

#include "rnic_cdf.h"

struct rw_json;

/** perftest-compatible modes, plus rdma-core's ibv_rc_pingpong. */
enum rnic_mode {
	RNIC_MODE_NONE = 0,
	RNIC_MODE_WRITE_BW,
	RNIC_MODE_SEND_BW,
	RNIC_MODE_READ_BW,
	RNIC_MODE_ATOMIC_BW,
	RNIC_MODE_WRITE_LAT,
	RNIC_MODE_SEND_LAT,
	RNIC_MODE_READ_LAT,
	RNIC_MODE_RC_PINGPONG,
	RNIC_MODE__COUNT
};

const char *rnic_mode_name(enum rnic_mode m);
bool rnic_mode_is_bw(enum rnic_mode m);
struct rnic_params;
/** QP @p qp's initial send PSN (24 bits): what --seed sets, besides the --flows draws. */
uint32_t rnic_initial_psn(const struct rnic_params *p, unsigned int qp);

enum rnic_conn { RNIC_CONN_RC, RNIC_CONN_UC, RNIC_CONN_UD };

/** Every setting of one rnic run, defaults from the option table. */
/**
 * --recovery resolved once (rnic_configure()): the mode's ops (roce_recovery_find,
 * without the "fec+" prefix) and whether FEC codes over it. Everything downstream
 * (the device, the capability negotiation, the report) takes this value.
 */
struct roce_recovery_ops;
struct rnic_recovery {
	const struct roce_recovery_ops *ops; /**< the mode the engine runs */
	bool fec; /**< --recovery fec+MODE: FEC asked for (negotiated with the peer) */
};

struct rnic_params {
	enum rnic_mode mode;
	char server[256]; /**< empty: run as server */
	/* identity */
	uint32_t ip; /**< host order */
	uint8_t prefix;
	uint8_t ip6[16];
	bool has_ip6;
	uint8_t ip6_prefix; /**< --ip6 ADDR/N: the on-link prefix (default 64) */
	uint8_t gw6[16];    /**< --gw6: IPv6 next hop for peers off --ip6's prefix */
	bool has_gw6;
	uint32_t gw; /**< next hop, 0 = none (peers on-link) */
	int vlan;    /**< -1 = untagged */
	uint32_t pcp;
	uint32_t dscp;
	/* perftest options */
	uint64_t size;	      /**< -s */
	uint64_t iters;	      /**< -n */
	uint32_t duration_s;  /**< -D, 0 = use iters */
	uint32_t mtu;	      /**< -m */
	uint32_t num_qps;     /**< -q */
	bool all_sizes;	      /**< -a */
	uint32_t tx_depth;    /**< -t */
	uint32_t rx_depth;    /**< -r */
	bool bidirectional;   /**< -b */
	enum rnic_conn conn;  /**< -c */
	uint32_t gid_index;   /**< -x */
	uint32_t tclass;      /**< --tclass */
	bool report_gbits;    /**< --report_gbits */
	uint32_t tcp_port;    /**< -p */
	uint32_t outs;	      /**< -o: outstanding reads/atomics */
	uint32_t qp_timeout;  /**< -u: IBTA local ACK timeout exponent */
	uint32_t inline_size; /**< -I */
	char atomic_type[16]; /**< -A CMP_AND_SWAP | FETCH_AND_ADD */
	/* project options */
	char json[256];		   /**< --json (alias --out_json_file) */
	char trace[256];	   /**< --trace FILE: loss-recovery events ("" = off) */
	char metrics[64];	   /**< --metrics ADDR:PORT: Prometheus over HTTP ("" = off) */
	char metrics_file[256];	   /**< --metrics-file PATH: the same text, rewritten ("" = off) */
	char metrics_interval[24]; /**< --metrics-interval as given (a time: 1s) */
	uint32_t metrics_interval_ms; /**< parsed: rewrite period of --metrics-file */
	char recovery[16];	      /**< --recovery (may carry the "fec+" prefix) */
	struct rnic_recovery rec;     /**< --recovery resolved once, by rnic_configure() */
	char fec[24];		      /**< --fec xor:K,D | rs:K,R (docs/fec.md) */
	char fec_hold[16];	      /**< --fec-hold TIME */
	uint64_t fec_hold_ns;
	bool fec_adapt;		/**< --fec-adapt: the receiver's policy proposes the peer's code */
	uint32_t max_ooo;	/**< --max-ooo (gbone/irn), 0 = the window */
	char vrp_loss[16];	/**< --vrp-loss PCT as given */
	uint32_t vrp_window;	/**< --vrp-window N packets */
	char vrp_max_burst[24]; /**< --vrp-max-burst BYTES as given ("" = unlimited) */
	char vrp_critical[256]; /**< --vrp-critical OFF:LEN[,...] as given */
	struct vrp_tolerance vrp; /**< the four parsed (vrp.h) */
	/** --vrp-wr SPEC[/SPEC...]: per-message tolerances the sender cycles through */
	char vrp_wr_spec[256];
	struct roce_vrp_wr vrp_wr[RNIC_VRP_WR_MAX]; /**< the specs parsed */
	unsigned int n_vrp_wr;			    /**< 0: WRITEs carry none */
	uint32_t rto_low_us;			    /**< --rto-low (irn), 0 = RTO_high */
	uint32_t rto_high_us;			    /**< --rto-high (irn), 0 = the -u timer */
	char cc[16];				    /**< --cc */
	char rto[12];				    /**< --rto adaptive|fixed */
	char rto_min[24];			    /**< --rto-min as given (a time: 5ms) */
	char rto_max[24];			    /**< --rto-max as given */
	char rto_stall[24];			    /**< --rto-stall-memory as given */
	uint64_t rto_min_ns;			    /**< parsed --rto-min */
	uint64_t rto_max_ns;			    /**< parsed --rto-max */
	uint64_t rto_stall_ns;			    /**< parsed --rto-stall-memory (0: off) */
	char cc_param[256];			    /**< --cc-param name=value,... */
	uint32_t max_inflight;			    /**< --max-inflight packets per QP */
	bool loss_window_on;	   /**< --loss-window resolved by rnic_configure() */
	char loss_window[4];	   /**< --loss-window on|off */
	uint32_t loss_window_init; /**< --loss-window-init packets (0: start at --max-inflight) */
	bool busy_poll;
	bool own_mac;	     /**< --own-mac: a MAC apart from the kernel interface's */
	bool chk;	     /**< --chk: rc_pingpong server checks each received message */
	uint32_t lcores;     /**< QP-serving lcores */
	char rate_limit[24]; /**< --rate_limit as given (perftest: Gb/s) */
	double rate_gbps;    /**< parsed --rate_limit, 0 = unlimited */
	/* flow workload (rnic_flows.h) */
	uint64_t flows;	    /**< --flows: number of flows, 0 = perftest loop */
	char flow_cdf[256]; /**< --flow-cdf FILE: sizes from a CDF, else -s */
	uint32_t load_pct; /**< --load: Poisson arrivals at this % of the link, 0 = one at a time */
	char link_rate[24]; /**< --link-rate as given (Gb/s) */
	double link_gbps;   /**< rate --load refers to (default: --rate_limit) */
	uint64_t flow_max;  /**< largest flow size (bytes) */
	uint64_t seed;
	/* 802.1Qbb PFC (docs/pfc.md) */
	char pfc[4];	   /**< --pfc on|off: obey received PFC */
	char lossless[24]; /**< --lossless 3[,4]: as given, "" = the rnic's own priority */
	bool pfc_on;
	uint8_t lossless_mask; /**< bit n = priority n obeys PFC */
	uint8_t
	    own_prio; /**< priority of the rnic's RoCE frames: --pcp with --vlan, else DSCP >> 3 */
	double pfc_link_gbps; /**< --link-rate if given (quanta -> time), 0 = the port's speed */
	uint32_t pfc_xoff;    /**< --pfc-xoff: send XOFF at this RX backlog (frames), 0 = never */
	uint32_t pfc_xon;     /**< --pfc-xon: send XON at this backlog, < pfc_xoff */
	uint32_t pfc_quanta;  /**< --pfc-quanta: pause time of each XOFF sent */
	uint32_t slow_rx_us;  /**< --slow-rx-us: test aid, sleep after each RX burst */
	struct rnic_cdf cdf;  /**< loaded from flow_cdf by rnic_configure() */
};

/** Result of parsing: 0 run, 1 printed --help/--version (exit 0), <0 error (message in err). */
int rnic_parse_args(int argc, char **argv, struct rnic_params *p, char *err, size_t errlen);

/** Cross-option validation (also run by rnic_parse_args). */
int rnic_configure(struct rnic_params *p, char *err, size_t errlen);

void rnic_params_defaults(struct rnic_params *p);
void rnic_print_help(FILE *f);
/** The full effective configuration, for the "config" object of --json. */
void rnic_params_json(const struct rnic_params *p, struct rw_json *w);
/**
 * The RoCE device's configuration from the options (roce_dev_cfg_init() first), for
 * a port of MAC @p mac; the log level and the ops are the caller's.
 */
void rnic_params_dev_cfg(const struct rnic_params *p, const uint8_t mac[6],
			 struct roce_dev_cfg *dc);

#endif /* RNIC_CONFIG_H */
