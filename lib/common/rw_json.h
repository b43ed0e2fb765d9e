/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rw_json.h
 * The project's one results convention ("rocewan/1") and a small streaming
 * JSON writer. Every binary's --json FILE writes:
 *
 *   {
 *     "schema": "rocewan/1",
 *     "app": "rnic",                 // binary name
 *     "version": "v0.1-12-gabcdef",  // git describe at build time
 *     "started_utc": "2026-11-22T10:00:00Z",
 *     "config": { ...full effective configuration... },
 *     "seed": 42,                    // null when the run is not randomised
 *     "results": { ...units in key names: goodput_gbps, delay_err_us... }
 *   }
 *
 * rw_doc_begin() writes everything up to and including the "config" key, the
 * caller writes the config object, then rw_doc_results() writes "seed" and
 * opens "results", and rw_doc_end() closes both. DPDK-free; no allocation.
 */
#ifndef RW_JSON_H
#define RW_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define RW_SCHEMA "rocewan/1"
#define RW_MAX_DEPTH 16

/** Writer state; one per output file. */
struct rw_json {
	FILE *f;
	int depth;
	bool need_comma[RW_MAX_DEPTH];
	bool after_key;
	int err; /**< sticky: first errno seen (or EINVAL for misuse) */
};

void rw_json_init(struct rw_json *w, FILE *f);
void rw_obj_begin(struct rw_json *w, const char *key); /**< key NULL inside arrays / at top */
void rw_obj_end(struct rw_json *w);
void rw_arr_begin(struct rw_json *w, const char *key);
void rw_arr_end(struct rw_json *w);
void rw_str(struct rw_json *w, const char *key, const char *v); /**< v NULL writes null */
void rw_int(struct rw_json *w, const char *key, int64_t v);
void rw_uint(struct rw_json *w, const char *key, uint64_t v);
/** Finite doubles with up to 9 significant digits; NaN/inf become null. */
void rw_dbl(struct rw_json *w, const char *key, double v);
void rw_bool(struct rw_json *w, const char *key, bool v);
void rw_null(struct rw_json *w, const char *key);

/** The git version compiled into the binaries ("unknown" outside a checkout). */
const char *rw_version(void);

/** Open the envelope and the "config" object. */
void rw_doc_begin(struct rw_json *w, const char *app);
/** Close "config", write "seed" (has_seed false: null) and open "results". */
void rw_doc_results(struct rw_json *w, bool has_seed, uint64_t seed);
/** Close "results" and the document; returns 0 or the sticky error (negative errno). */
int rw_doc_end(struct rw_json *w);

#endif /* RW_JSON_H */
