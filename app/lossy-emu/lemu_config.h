/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file lemu_config.h
 * lossy-emu's configuration: one typed params struct, one option table (name,
 * type, default, range, help) from which the command line, the --config file,
 * --help and the JSON dump of the effective configuration are generated, and
 * lemu_configure() that validates the whole. The generic parsing is
 * lib/common's rw_opts; SPEC, rate and time values are converted here.
 * DPDK-free: the EAL arguments are split off before this parser sees the rest.
 *
 *   lossy-emu <EAL args> -- [--both SPEC] [--a2b SPEC] [--b2a SPEC] [--seed N]
 *             [--json FILE] [--config FILE] [--busy-poll] [...] [--help]
 *
 * Options are applied in order, so "--both X --a2b Y" gives a2b Y and b2a X,
 * and options after --config FILE override the file. The SPEC of each
 * direction is parsed by lib/emu (emu_spec_parse()) as soon as it is given,
 * so an error names the option (or file:line) and the bad token.
 */
#ifndef LEMU_CONFIG_H
#define LEMU_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "emu_spec.h"

struct rw_json;

/** The two directions of the bump-in-the-wire. */
enum lemu_dir_id {
	LEMU_A2B, /**< port A (side A) in, port B out */
	LEMU_B2A, /**< port B in, port A out */
	LEMU_NDIR
};

const char *lemu_dir_name(unsigned d);
/** "a2b", "b2a" -> 0/1; "both" -> LEMU_NDIR; -1 otherwise. */
int lemu_dir_parse(const char *s);

/** Every setting of one run; defaults come from the option table. */
struct lemu_params {
	char spec_text[LEMU_NDIR][EMU_SPEC_MAX_LEN]; /**< as given ("" = no impairment) */
	struct emu_spec spec[LEMU_NDIR];	     /**< parsed, effective values */
	uint64_t seed;
	bool seed_set;		   /**< --seed given (else lemu_configure() draws one) */
	char json[256];		   /**< --json FILE, "" = none */
	char drop_log[256];	   /**< --drop-log FILE, "" = none */
	char metrics[64];	   /**< --metrics ADDR:PORT, "" = off */
	char metrics_file[256];	   /**< --metrics-file PATH, "" = off */
	uint64_t metrics_every_ns; /**< --metrics-interval */
	char config[256];	   /**< last --config FILE read, for the record */
	bool busy_poll;
	bool stall_detect;  /**< --stall-detect: release error with host stalls excluded */
	uint32_t mbuf_size; /**< data room per mbuf = largest frame forwarded */
	uint32_t mbufs;	    /**< mbufs per direction; 0 = sized from the SPEC */
	uint32_t min_frame; /**< smallest frame the pool sizing assumes (0: --mbuf-size) */
	uint32_t burst;	    /**< RX/TX burst size */
	uint32_t port_a, port_b;
	uint32_t rxd, txd;    /**< descriptors per queue */
	uint32_t mtu;	      /**< port MTU to set; 0 = leave the port's */
	uint64_t link_bps;    /**< port rate for sizing and PFC quanta; 0 = ask the port */
	uint64_t coalesce_ns; /**< hold released frames up to this long to fill a TX burst */
	uint32_t stats_s;     /**< print counters every N seconds; 0 = only at exit */
	uint32_t workers;     /**< workers (lcores) per direction, each on its own RX queue */
};

/** Defaults of every option. */
void lemu_params_defaults(struct lemu_params *p);

/**
 * Parse the application arguments (what follows "--"; argv[0] is not an
 * option). Returns 0 to run, 1 when --help was printed (exit 0), or a
 * negative errno with one line in @p err naming the option, file:line and
 * bad token.
 */
int lemu_parse_args(int argc, char **argv, struct lemu_params *p, char *err, size_t errlen);

/**
 * The whole command line "lossy-emu <EAL args> -- <options>": parses what
 * follows "--" as lemu_parse_args(); without "--" only looks for --help/-h.
 * @p eal_argc gets the count of arguments before "--".
 */
int lemu_parse_main(int argc, char **argv, struct lemu_params *p, int *eal_argc, char *err,
		    size_t errlen);

/**
 * Read a "key = value" file (keys are the long option names; # starts a
 * comment; values may be double-quoted). Errors name file:line.
 */
int lemu_config_file(const char *path, struct lemu_params *p, char *err, size_t errlen);

/** Cross-option checks; draws the seed when none was given. */
int lemu_configure(struct lemu_params *p, char *err, size_t errlen);

/** Seed of direction @p d: the SPEC's own "seed N" or one derived from --seed. */
uint64_t lemu_dir_seed(const struct lemu_params *p, unsigned d);

void lemu_print_help(FILE *f);

/** The full effective configuration, for the "config" object of --json. */
void lemu_params_json(const struct lemu_params *p, struct rw_json *w);

/** Effective SPEC text of a parsed spec ("" for none), via emu_spec_format(). */
void lemu_spec_text(const struct emu_spec *s, char *buf, size_t len);

/**
 * Mempool sizing of one direction: mbufs needed to fill the delay line at
 * the bottleneck rate (the SPEC's rate, else @p link_bps) for the longest
 * delay the SPEC can draw, assuming frames that take @p frame_bytes on the
 * wire each (--mbuf-size, or --min-frame + LEMU_WIRE_OVERHEAD: the packet
 * rate), plus the bottleneck queue's limit and @p slack for rings and bursts;
 * at least LEMU_MBUFS_MIN. Above LEMU_MBUFS_MAX, @c capped is set and the
 * caller refuses to start (a delay line too short for the configured delay x
 * rate would silently cap the rate).
 */
struct lemu_pool_need {
	uint64_t max_delay_ns; /**< delay + the jitter distribution's largest draw */
	uint64_t rate_bps;     /**< rate used */
	uint64_t line_bytes;   /**< delay line at that rate, bytes on the wire (rate x delay) */
	uint64_t line_pkts;    /**< delay line at that rate, frames of frame_bytes */
	uint64_t queue_pkts;   /**< bottleneck queue at its limit */
	uint32_t mbufs;	       /**< total (LEMU_MBUFS_MAX when capped) */
	bool capped;	       /**< above LEMU_MBUFS_MAX: refuse */
};

#define LEMU_MBUFS_MIN 4096u
#define LEMU_MBUFS_MAX (4u << 20)
#define LEMU_WIRE_OVERHEAD 24u /* preamble 8 + inter-frame gap 12 + FCS 4 */

void lemu_pool_need(const struct emu_spec *s, uint64_t link_bps, uint32_t frame_bytes,
		    uint32_t slack, struct lemu_pool_need *out);

#endif /* LEMU_CONFIG_H */
