/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the text and key-line parsers a user or a peer can
 * reach: the lossy-emu's netem SPEC (command line, config file, telemetry
 * /lossy_emu/set), the rnic's flow-size CDF files, perftest's and
 * ibv_rc_pingpong's TCP key lines (from any peer that connects), the
 * capability record in perftest's version padding, and the --lossless
 * priority list. The first input byte picks the parser, the rest
 * is its text. Besides "no crash, no sanitizer report", each parser's own
 * promise is checked:
 *  - SPEC: what parses formats to a SPEC that parses again to the same text
 *    (emu_spec_format's "reads back to the same values");
 *  - class (MATCH => SPEC): the same round trip through emu_class_format;
 *  - CDF: draws stay in [1, largest size] and grow with the uniform draw;
 *  - key lines: what parses formats back and parses to the same fields;
 *  - capability record: what decodes encodes back to the same 11 bytes, and
 *    negotiating with it never fails except for a recovery mismatch.
 * Built with clang -fsanitize=fuzzer,address,undefined by scripts/fuzz.sh.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emu_class.h"
#include "emu_spec.h"
#include "oob_tcp.h"
#include "perftest_caps.h"
#include "perftest_xchg.h"
#include "pfc_tx.h"
#include "pingpong_xchg.h"
#include "rnic_cdf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
spec(const char *text)
{
	static struct emu_spec a, b;
	static char f1[4096], f2[4096];
	char msg[256];

	if (emu_spec_parse(&a, text, msg, sizeof(msg)) != 0)
		return;
	if (emu_spec_format(&a, f1, sizeof(f1)) < 0)
		abort(); /* every SPEC that parses has a text form */
	if (emu_spec_parse(&b, f1, msg, sizeof(msg)) != 0)
		abort(); /* ... which parses again */
	if (emu_spec_format(&b, f2, sizeof(f2)) < 0 || strcmp(f1, f2) != 0)
		abort(); /* ... to the same values */
}

static void
cdf(const char *text)
{
	static struct rnic_cdf c;
	char err[256];
	uint64_t prev = 0, max;

	if (rnic_cdf_parse(&c, text, "fuzz", err, sizeof(err)) != 0)
		return;
	max = rnic_cdf_max(&c);
	for (int i = 0; i < 64; i++) {
		uint64_t s = rnic_cdf_sample(&c, i / 64.0);

		if (s < 1 || s > max || s < prev)
			abort();
		prev = s;
	}
	if (!isfinite(rnic_cdf_mean(&c)))
		abort();
}

static void
perftest_line(const uint8_t *d, size_t n, int no_gid)
{
	struct perftest_dest a, b;
	uint8_t out[128];
	char err[256];
	int len;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (perftest_parse_dest(d, n, no_gid, &a, err, sizeof(err)) != OOB_OK)
		return;
	len = perftest_format_dest(&a, no_gid, out, sizeof(out), err, sizeof(err));
	if (len < 0 ||
	    perftest_parse_dest(out, (size_t)len, no_gid, &b, err, sizeof(err)) != OOB_OK)
		abort();
	if (a.lid != b.lid || a.out_reads != b.out_reads || a.qpn != b.qpn || a.psn != b.psn ||
	    a.rkey != b.rkey || a.vaddr != b.vaddr || a.srqn != b.srqn ||
	    memcmp(a.gid, b.gid, sizeof(a.gid)) != 0)
		abort();
}

static void
pingpong_line(const uint8_t *d, size_t n)
{
	struct pingpong_dest a, b;
	uint8_t out[PINGPONG_MSG_LEN];
	char err[256];
	int len;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (pingpong_parse_dest(d, n, &a, err, sizeof(err)) != OOB_OK)
		return;
	len = pingpong_format_dest(&a, out, sizeof(out), err, sizeof(err));
	if (len < 0 || pingpong_parse_dest(out, (size_t)len, &b, err, sizeof(err)) != OOB_OK ||
	    memcmp(&a, &b, sizeof(a)) != 0)
		abort();
}

static void
caps_record(const uint8_t *d, size_t n)
{
	struct perftest_caps a, local;
	struct perftest_caps_result res;
	uint8_t msg[16] = {0}, out[PERFTEST_CAPS_LEN];
	char err[256];
	size_t len = 0;

	memcpy(msg, d, n < 16 ? n : 16);
	while (len < 16 && msg[len])
		len++;
	if (len == 16 || perftest_caps_decode(msg, len, &a, err, sizeof(err)) != 1)
		return;
	perftest_caps_encode(&a, out);
	/* params and fields round-trip; the request nibbles too */
	if (memcmp(out, msg + PERFTEST_CAPS_OFF, sizeof(out)) != 0)
		abort();
	memset(&local, 0, sizeof(local));
	local.version = PERFTEST_CAPS_VERSION;
	local.recovery = 0x07;
	local.recovery_req = a.recovery_req;
	if (perftest_caps_negotiate(&local, &a, "fuzz", "fuzz", &res, err, sizeof(err)) != 0)
		abort(); /* the same request never fails */
	if (res.extensions && !(a.recovery >> a.recovery_req & 1))
		abort(); /* a mode the peer does not offer is never used */
}

/* MATCH => SPEC: what parses formats, and the format parses back to the same text */
static void
class_text(const char *text)
{
	static struct emu_class a, b;
	static char f1[2 * EMU_SPEC_MAX_LEN], f2[2 * EMU_SPEC_MAX_LEN];
	char msg[256];

	if (emu_class_parse(&a, text, msg, sizeof(msg)) != 0)
		return;
	if (emu_class_format(&a, f1, sizeof(f1)) < 0)
		abort();
	if (emu_class_parse(&b, f1, msg, sizeof(msg)) != 0)
		abort();
	if (emu_class_format(&b, f2, sizeof(f2)) < 0 || strcmp(f1, f2) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	uint8_t mask;
	char why[160];

	if (size < 1)
		return 0;
	text = malloc(size); /* the rest, NUL-terminated, for the string parsers */
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	switch (data[0] % 8) {
	case 0:
		spec(text);
		break;
	case 1:
		cdf(text);
		break;
	case 2:
		perftest_line(data + 1, size - 1, 0);
		break;
	case 3:
		perftest_line(data + 1, size - 1, 1);
		break;
	case 4:
		pingpong_line(data + 1, size - 1);
		break;
	case 6:
		caps_record(data + 1, size - 1);
		break;
	case 7:
		class_text(text);
		break;
	default:
		if (pfc_prio_list_parse(text, &mask, why, sizeof(why)) == 0 && mask == 0)
			abort(); /* a list that parses names at least one priority */
		break;
	}
	free(text);
	return 0;
}
