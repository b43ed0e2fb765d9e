/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rw_opts.h
 * The option table behind the apps' command lines. An app declares each
 * option once (name, type, field of its params struct, default, range, help);
 * from that table this library parses the command line ("--name=value",
 * "--name value", flags, -h/--help; perftest's "-s 4096" / "-s4096" letters
 * and positional arguments for the apps that have them), reads "key = value"
 * config files with file:line errors, prints --help and lists the option
 * names of an "unknown option" error. Aliases are rows that share a field.
 *
 * The library converts the types every app has (integers in a range, strings,
 * booleans); an app's own types (SPEC strings, rates with tc units, priority
 * lists ...) start at RW_OPT_APP and go to the table's apply() hook, so each
 * app's table stays one readable row per option.
 *
 * DPDK-free. Errors are -EINVAL (or -ENOMEM) with one line in @p err that
 * names the option (or file:line), the bad value and what is allowed.
 */
#ifndef RW_OPTS_H
#define RW_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** The types the library converts; an app numbers its own from RW_OPT_APP. */
enum rw_opt_type {
	RW_OPT_U32,	/**< uint32_t, decimal digits only, in [min, max] */
	RW_OPT_U64,	/**< uint64_t, likewise */
	RW_OPT_STR,	/**< char[size] */
	RW_OPT_BOOL,	/**< bool: true/false, yes/no, on/off, 1/0, any case */
	RW_OPT_CONFIG,	/**< read FILE's "key = value" lines here; char[size] keeps FILE */
	RW_OPT_HELP,	/**< print the help and stop */
	RW_OPT_IGNORED, /**< accepted for compatibility: a warning on stderr, nothing set */
	RW_OPT_REFUSED, /**< known but not supported: an error that quotes the help line */
	RW_OPT_APP,	/**< first type of the app's own, converted by rw_opts.apply */
};

/** One option: the single source of its parsing, default and help line. */
struct rw_opt {
	const char *name;  /**< long name without "--"; also the config-file key */
	int type;	   /**< enum rw_opt_type or an app type >= RW_OPT_APP */
	size_t off;	   /**< field offset in the params struct (app types: any use) */
	size_t size;	   /**< RW_OPT_STR, RW_OPT_CONFIG: capacity of the field */
	const char *def;   /**< default as text, set by rw_opts_defaults(); NULL: none */
	uint64_t min, max; /**< range of the value (integers; app types: any use) */
	const char *arg;   /**< argument name in --help; NULL: a flag ("--name" = "true") */
	const char *help;  /**< one line; " [def]" is appended for non-empty defaults */
	int letter;	   /**< short option ("-s 4096", "-s4096"); 0: none */
};

/**
 * Converts @p val for an app type and stores it in @p obj. @p ctx names the
 * option for the message ("--rate" or "file:3: rate"). Returns 0 or a negative
 * errno with @p err set (rw_opts_err() formats it).
 */
typedef int (*rw_opt_apply_fn)(const struct rw_opt *o, const char *val, void *obj, const char *ctx,
			       char *err, size_t errlen);

/**
 * An app's whole option table and how its messages look. list_prefix NULL:
 * an unknown option's error says "(see --help)" instead of listing the names.
 */
struct rw_opts {
	const struct rw_opt *opt;
	size_t n;
	rw_opt_apply_fn apply;	 /**< app types; NULL if the table has none */
	const char *usage;	 /**< --help text before the option lines */
	const char *footer;	 /**< --help text after them ("" or NULL: none) */
	int help_width;		 /**< width of the "--name ARG" column of --help */
	const char *list_prefix; /**< before each name in "unknown option" ("" or "--") */
	size_t line_max;	 /**< longest config-file line, newline excluded */
	/**
	 * Arguments that are not options (no leading '-', or "-" alone), counted
	 * from 0; NULL: such an argument is an error. Returns 0 or a negative
	 * errno with @p err set.
	 */
	int (*positional)(unsigned idx, const char *arg, void *obj, char *err, size_t errlen);
	const char *ctx_prefix; /**< before "--name" in messages ("option "); NULL: none */
	const char *prog;	/**< program name of RW_OPT_IGNORED's warning */
};

/** Sets every option that has a default (config options excepted). */
void rw_opts_defaults(const struct rw_opts *t, void *obj);

/**
 * Parses the app's arguments; argv[0] is not an option. Options apply in
 * order. Returns 0, 1 when -h/--help printed the help on stdout, or a
 * negative errno with @p err set.
 */
int rw_opts_parse_args(const struct rw_opts *t, int argc, char **argv, void *obj, char *err,
		       size_t errlen);

/**
 * The app's half of "prog <EAL args> -- <app options>": parses what follows
 * the first "--". Without one, only prints the help if -h/--help is among the
 * arguments. @p eal_argc gets the count before "--" (argc when there is none).
 * Returns as rw_opts_parse_args().
 */
int rw_opts_parse_main(const struct rw_opts *t, int argc, char **argv, void *obj, int *eal_argc,
		       char *err, size_t errlen);

/**
 * Applies a "key = value" file: '#' starts a comment, blank lines are
 * skipped, values may be double-quoted; a config option inside the file is
 * refused. Errors name FILE:LINE.
 */
int rw_opts_file(const struct rw_opts *t, const char *path, void *obj, char *err, size_t errlen);

/** Writes t->usage, one line per option, then t->footer. */
/** --help wraps each option's text at this column (continuations indented) */
#define RW_OPTS_HELP_COLS 100

void rw_opts_help(const struct rw_opts *t, FILE *f);

/** "PREFIXa, PREFIXb, ..." of every option name, cut to @p len. */
void rw_opts_names(const struct rw_opts *t, const char *prefix, char *buf, size_t len);

/**
 * Converts a decimal integer in [o->min, o->max] (for app types that store
 * one with a side effect). The error names @p ctx, the value and the range.
 */
int rw_opts_uint(const struct rw_opt *o, const char *val, uint64_t *v, const char *ctx, char *err,
		 size_t errlen);

/** JSON key of an option: its name with '-' as '_', then @p suffix ("_ns"...). */
void rw_opts_json_key(const struct rw_opt *o, const char *suffix, char *buf, size_t len);

/** Formats one line into @p err; returns -EINVAL, for "return rw_opts_err(...)". */
__attribute__((format(printf, 3, 4))) int rw_opts_err(char *err, size_t errlen, const char *fmt,
						      ...);

#endif /* RW_OPTS_H */
