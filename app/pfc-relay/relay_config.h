/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file relay_config.h
 * pfc-relay's configuration: one typed params struct, one option table (name,
 * type, default, help) from which the command line, --help and the JSON dump of
 * the effective configuration are generated, and relay_configure() that
 * validates everything and derives the effective values (port rates, buffer).
 * The generic parsing is lib/common's rw_opts; rates, times, sizes, priority
 * lists, trust and watchdog strings are converted here. DPDK-free: the EAL
 * arguments are split off before this parser runs.
 *
 *   pfc-relay <EAL args> -- --local PORT --remote PORT --link-rate RATE
 *             [--local-rate RATE --remote-rate RATE] --rtt TIME
 *             [--buffer BYTES|auto] [--lossless 3[,4...]] [--trust dscp|pcp]
 *             [--xoff BYTES --xon BYTES] [--headroom BYTES]
 *             [--watchdog detect=200ms,restore=200ms,action=drop|forward|alert|off]
 *             [--json FILE] [--stats-json FILE] [--busy-poll] [--help]
 */
#ifndef RELAY_CONFIG_H
#define RELAY_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pfc.h"
#include "pfc_state.h"

struct rw_json;

/** Every setting of one run; defaults come from the option table. */
struct relay_params {
	uint32_t local_port, remote_port;
	uint64_t link_bps;		/**< --link-rate: both ports unless overridden */
	uint64_t local_bps, remote_bps; /**< per-port overrides (0: --link-rate) */
	uint64_t rtt_ns;		/**< RTT of the long link */
	uint64_t buffer_bytes;		/**< per-priority Remote-ingress buffer; 0 = auto */
	uint8_t lossless;		/**< bit n = priority n */
	enum pfc_trust trust;
	uint64_t xoff_bytes, xon_bytes; /**< Local-ingress thresholds per priority */
	uint64_t headroom_bytes;	/**< above xoff before Local-ingress drops */
	uint32_t pause_quanta;		/**< quanta of the XOFF frames the relay originates */
	bool wd_on;
	uint64_t wd_detect_ns, wd_restore_ns;
	enum pfc_wd_action wd_action;
	char json[256];
	char stats_json[256];
	char metrics[64];	   /**< --metrics ADDR:PORT, "" = off */
	char metrics_file[256];	   /**< --metrics-file PATH, "" = off */
	uint64_t metrics_every_ns; /**< --metrics-interval */
	uint64_t stats_interval_ns;
	bool busy_poll;
	uint64_t idle_max_ns; /**< longest idle sleep (bounds the PFC relay delay) */
	uint32_t burst;
	uint64_t pace_burst_ns; /**< pacer credit after idle */
	uint32_t mbuf_size, mbufs, rxd, txd, mtu;
	/* derived by relay_configure() */
	uint64_t eff_local_bps, eff_remote_bps;
	uint64_t eff_buffer_bytes;
	bool buffer_auto;
	uint64_t bdp_bytes; /**< remote rate x RTT */
};

void relay_params_defaults(struct relay_params *p);

/**
 * Parse the application arguments (argv[0] is not an option). Returns 0 to
 * run, 1 when --help was printed, or -EINVAL with one line in @p err naming
 * the option, the bad value and what is allowed.
 */
int relay_parse_args(int argc, char **argv, struct relay_params *p, char *err, size_t errlen);

/**
 * The whole command line "pfc-relay <EAL args> -- <options>": parses what
 * follows "--" as relay_parse_args(); without "--" only looks for --help/-h.
 * @p eal_argc gets the count of arguments before "--" (argc: no "--").
 */
int relay_parse_main(int argc, char **argv, struct relay_params *p, int *eal_argc, char *err,
		     size_t errlen);

/** Cross-option checks and derived values; nothing starts unless this returns 0. */
int relay_configure(struct relay_params *p, char *err, size_t errlen);

void relay_print_help(FILE *f);

/** The full effective configuration, for the "config" object of --json. */
void relay_params_json(const struct relay_params *p, struct rw_json *w);

/** "3,4" -> mask; -1 on a bad list. */
int relay_parse_prio_list(const char *s, uint8_t *mask);

#endif /* RELAY_CONFIG_H */
