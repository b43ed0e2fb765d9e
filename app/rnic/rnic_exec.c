/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-exec: run an unmodified libibverbs program on rnic0, the rnic's device
 * inside the program's own process (lib/verbs, docs/verbs.md).
 *
 *   rnic-exec <EAL args> -- <device options> -- COMMAND [ARGS...]
 *
 * The device options are the rnic's own (rnic_config.c's table), less the
 * benchmark options, which belong to COMMAND. rnic-exec checks them, puts
 * them and the EAL arguments into the environment the library reads
 * (ROCEWAN_VERBS_EAL, ROCEWAN_VERBS_ARGS), adds the library to LD_PRELOAD and
 * execs COMMAND.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rnic_config.h"

#define VERBS_LIB_REL "../../lib/verbs/librocewan-verbs.so"

/* The table's benchmark options (long name, perftest letter): COMMAND's business. */
static const struct {
	const char *name;
	char letter;
} bench_opts[] = {
    {"size", 's'},	 {"iters", 'n'},      {"duration", 'D'},    {"qp", 'q'},
    {"all", 'a'},	 {"tx-depth", 't'},   {"rx-depth", 'r'},    {"bidirectional", 'b'},
    {"connection", 'c'}, {"gid-index", 'x'},  {"report_gbits", 0},  {"port", 'p'},
    {"outs", 'o'},	 {"qp-timeout", 'u'}, {"inline_size", 'I'}, {"atomic_type", 'A'},
    {"rate_limit", 0},	 {"chk", 0},	      {"flows", 0},	    {"flow-cdf", 0},
    {"load", 0},	 {"ib-dev", 'd'},     {"ib-port", 'i'},	    {"CPU-freq", 'F'},
    {"events", 'e'},	 {"post_list", 'l'},  {"cq-mod", 'Q'},	    {"rdma_cm", 'R'},
};

static void
usage(FILE *f)
{
	fputs("Usage: rnic-exec <EAL args> -- <device options> -- COMMAND [ARGS...]\n"
	      "Run an unmodified libibverbs program (perftest, ibv_rc_pingpong, your own) on\n"
	      "rnic0: the rnic's RoCEv2 device, in the program's process on the DPDK port of\n"
	      "the EAL args (docs/verbs.md). rnic0 is listed beside any real device.\n\n"
	      "EAL args: as the rnic's (e.g. --no-huge -m 512 --vdev "
	      "net_af_packet0,iface=veth0);\n"
	      "  EAL runs --in-memory with a file prefix of its own unless told otherwise.\n"
	      "Device options: the rnic's options (rnic -- --help) that are not benchmark\n"
	      "  options: --ip (required), --ip6, --gw, --gw6, --vlan, --pcp, --dscp, --tclass,\n"
	      "  --mtu, --link-rate, --recovery, --fec*, --max-ooo, --vrp-*, --cc, --cc-param,\n"
	      "  --rto*, --max-inflight, --loss-window*, --pfc*, --lossless, --seed,\n"
	      "  --busy-poll, --own-mac, --trace, and --json FILE (the device's counters when\n"
	      "  COMMAND exits; %p in FILE is its process id).\n"
	      "Options:\n"
	      "  --shconf     EAL with a shared configuration (for dpdk-dumpcap) instead of\n"
	      "               --in-memory (give --file-prefix too)\n"
	      "  --help       this text\n\n"
	      "Environment set for COMMAND (the library reads them; set them yourself to use\n"
	      "it without rnic-exec): LD_PRELOAD (the library added first),\n"
	      "ROCEWAN_VERBS_EAL (the EAL args), ROCEWAN_VERBS_ARGS (the device options),\n"
	      "ROCEWAN_VERBS_SHCONF=1 (--shconf). Arguments are split on blanks.\n"
	      "ROCEWAN_VERBS_LIB overrides the library's path.\n",
	      f);
}

static int
refuse_bench(const char *a)
{
	const char *n = a[0] == '-' && a[1] == '-' ? a + 2 : NULL;
	size_t len = n ? strcspn(n, "=") : 0;

	for (size_t i = 0; i < sizeof(bench_opts) / sizeof(bench_opts[0]); i++) {
		bool hit = n ? strlen(bench_opts[i].name) == len &&
				   strncmp(n, bench_opts[i].name, len) == 0
			     : a[0] == '-' && bench_opts[i].letter &&
				   a[1] == bench_opts[i].letter && a[2] == 0;

		if (hit) {
			fprintf(
			    stderr,
			    "rnic-exec: %s is a benchmark option: it belongs to COMMAND (e.g. "
			    "ib_write_bw -s 4096); the rnic's built-in modes take it (rnic <EAL "
			    "args> -- --ip A.B.C.D/N write_bw %s ...)\n",
			    a, a);
			return -1;
		}
	}
	return 0;
}

/* Join argv[from..to) with blanks; -1 if an argument holds a blank (the split would differ). */
static int
join(char **argv, int from, int to, char *out, size_t len)
{
	size_t o = 0;

	out[0] = 0;
	for (int i = from; i < to; i++) {
		if (strpbrk(argv[i], " \t\n")) {
			fprintf(stderr, "rnic-exec: argument \"%s\" holds a blank\n", argv[i]);
			return -1;
		}
		int n = snprintf(out + o, len - o, "%s%s", o ? " " : "", argv[i]);

		if (n < 0 || (size_t)n >= len - o) {
			fprintf(stderr, "rnic-exec: arguments too long\n");
			return -1;
		}
		o += (size_t)n;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	int d1 = -1, d2 = -1;
	bool shconf = false;
	static char eal[8192], dev[8192], lib[PATH_MAX], pre[PATH_MAX * 2];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			if (d1 < 0)
				d1 = i;
			else if (d2 < 0) {
				d2 = i;
				break;
			}
		} else if (d1 < 0 &&
			   (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)) {
			usage(stdout);
			return 0;
		}
	}
	for (int i = d1 + 1; d1 >= 0 && i < (d2 < 0 ? argc : d2); i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
	if (d1 < 0 || d2 < 0 || d2 + 1 >= argc) {
		fprintf(stderr, "rnic-exec: expected <EAL args> -- <device options> -- COMMAND "
				"[ARGS...] (see --help)\n");
		return 2;
	}
	/* the device options: benchmark options refused, the rest parsed by the rnic's table */
	char *pargv[256];
	int pargc = 0;

	pargv[pargc++] = "rnic";
	for (int i = d1 + 1; i < d2; i++) {
		if (strcmp(argv[i], "--shconf") == 0) {
			shconf = true;
			continue;
		}
		if (refuse_bench(argv[i]) < 0)
			return 2;
		if (pargc >= 250) {
			fprintf(stderr, "rnic-exec: too many device options\n");
			return 2;
		}
		pargv[pargc++] = argv[i];
	}
	pargv[pargc++] = "write_bw"; /* the table wants a mode; the device ignores it */
	pargv[pargc] = NULL;
	struct rnic_params *p = calloc(1, sizeof(*p));
	char err[512];

	if (!p)
		return 1;
	int rc = rnic_parse_args(pargc, pargv, p, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "rnic-exec: %s\n", err);
		return 2;
	}
	if (rc > 0)
		return 0;
	bool has_ip = false;

	for (int i = 1; i < pargc; i++)
		has_ip |= strcmp(pargv[i], "--ip") == 0 || strncmp(pargv[i], "--ip=", 5) == 0;
	if (!has_ip) {
		fprintf(stderr, "rnic-exec: --ip A.B.C.D/N is required (rnic0's address)\n");
		return 2;
	}
	if (p->lcores != 1) {
		fprintf(stderr, "rnic-exec: option --lcores %u: rnic0 runs one lcore\n", p->lcores);
		return 2;
	}
	free(p);
	/* pargv without "rnic" and the mode, --shconf dropped */
	if (join(argv, 1, d1, eal, sizeof(eal)) < 0 ||
	    join(pargv, 1, pargc - 1, dev, sizeof(dev)) < 0)
		return 2;
	const char *envlib = getenv("ROCEWAN_VERBS_LIB");

	if (envlib && envlib[0]) {
		snprintf(lib, sizeof(lib), "%s", envlib);
	} else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n <= 0) {
			fprintf(stderr, "rnic-exec: /proc/self/exe: %s\n", strerror(errno));
			return 1;
		}
		self[n] = 0;
		snprintf(lib, sizeof(lib), "%s/%s", dirname(self), VERBS_LIB_REL);
	}
	char *real = realpath(lib, NULL);

	if (!real) {
		fprintf(stderr, "rnic-exec: the verbs library %s: %s (build it: ninja -C build)\n",
			lib, strerror(errno));
		return 1;
	}
	const char *old = getenv("LD_PRELOAD");
	const char *asan = "";
#if defined(__SANITIZE_ADDRESS__)
	/* an AddressSanitizer build: its library is instrumented, and ASan's runtime must come
	 * first in the process, also in an uninstrumented COMMAND (Debian's perftest) */
	Dl_info di;
	extern void __asan_init(void);

	if (dladdr((void *)__asan_init, &di) && di.dli_fname && di.dli_fname[0] == '/')
		asan = di.dli_fname;
#endif
	snprintf(pre, sizeof(pre), "%s%s%s%s%s", asan, asan[0] ? " " : "", real,
		 old && old[0] ? " " : "", old ? old : "");
	free(real);
	if (setenv("LD_PRELOAD", pre, 1) || setenv("ROCEWAN_VERBS_EAL", eal, 1) ||
	    setenv("ROCEWAN_VERBS_ARGS", dev, 1) ||
	    (shconf ? setenv("ROCEWAN_VERBS_SHCONF", "1", 1) : unsetenv("ROCEWAN_VERBS_SHCONF"))) {
		fprintf(stderr, "rnic-exec: setenv: %s\n", strerror(errno));
		return 1;
	}
	execvp(argv[d2 + 1], argv + d2 + 1);
	fprintf(stderr, "rnic-exec: %s: %s\n", argv[d2 + 1], strerror(errno));
	return 127;
}
