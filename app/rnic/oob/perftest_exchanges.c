/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file perftest_exchanges.c
 * perftest 6.06's exchange, the raw exchanges: each message (version and
 * capabilities, page and cache-line sizes, MTU, key line, report, "done") written
 * and read in the client's or server's order over oob_tcp, with its checks. See
 * perftest_xchg.h and docs/perftest-exchange.md.
 * Written from the observed wire format; no perftest code is used.
 */
#include "perftest_xchg.h"

#include <stdio.h>
#include <string.h>

#include "net_bytes.h"

int
perftest_xchg_raw(struct oob_conn *c, enum perftest_role r, const void *mine, void *theirs,
		  size_t n, const char *what, int timeout_ms)
{
	int rc;
	if (r == PERFTEST_CLIENT) {
		rc = oob_write_full(c, mine, n, what);
		if (!rc)
			rc = oob_read_full_timeout(c, theirs, n, what, timeout_ms);
	} else {
		rc = oob_read_full_timeout(c, theirs, n, what, timeout_ms);
		if (!rc)
			rc = oob_write_full(c, mine, n, what);
	}
	return rc;
}

/* The peer's bytes as a C-escaped string for messages. */
static void
escape(const uint8_t *b, size_t n, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 5 < outlen; i++) {
		if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"' && b[i] != '\\')
			out[o++] = (char)b[i];
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", b[i]);
	}
	out[o] = '\0';
}

int
perftest_xchg_version(struct oob_conn *c, enum perftest_role r, const char *version,
		      char remote[PERFTEST_VERSION_LEN + 1])
{
	return perftest_xchg_version_caps(c, r, version, NULL, remote, NULL, NULL);
}

int
perftest_xchg_version_caps(struct oob_conn *c, enum perftest_role r, const char *version,
			   const struct perftest_caps *mine, char remote[PERFTEST_VERSION_LEN + 1],
			   struct perftest_caps *theirs, int *has_caps)
{
	uint8_t msg[PERFTEST_VERSION_LEN] = {0}, in[PERFTEST_VERSION_LEN];
	const char *want = version ? version : PERFTEST_VERSION;
	size_t wl = strlen(want);
	struct perftest_caps got;
	char cerr[200];
	if (wl == 0 || wl >= PERFTEST_VERSION_LEN)
		return oob_fail(c, OOB_ERR_ARG,
				"perftest version string \"%s\" does not fit 16 bytes", want);
	if (mine && wl > PERFTEST_CAPS_MAX_VER)
		return oob_fail(c, OOB_ERR_ARG,
				"perftest version string \"%s\" leaves no room for the capability "
				"record (at most %d characters)",
				want, PERFTEST_CAPS_MAX_VER);
	memcpy(msg, want, wl);
	if (mine)
		perftest_caps_encode(mine, msg + PERFTEST_CAPS_OFF);
	remote[0] = '\0';
	if (has_caps)
		*has_caps = 0;
	int rc =
	    perftest_xchg_raw(c, r, msg, in, sizeof(in), "the perftest version", c->timeout_ms);
	if (rc)
		return rc;
	size_t len = 0;
	while (len < sizeof(in) && in[len])
		len++;
	int bad = len == sizeof(in);
	for (size_t i = 0; i < len; i++)
		if (in[i] < 0x20 || in[i] >= 0x7f)
			bad = 1;
	char shown[4 * PERFTEST_VERSION_LEN + 1];
	escape(in, bad ? sizeof(in) : len, shown, sizeof(shown));
	if (bad)
		return oob_fail(c, OOB_ERR_PROTO,
				"malformed perftest version from %s: \"%s\", expected \"%s\" "
				"zero-padded to 16 bytes",
				c->peer, shown, want);
	/* the padding: NULs (perftest) or an rnic's capability record */
	int dec = perftest_caps_decode(in, len, &got, cerr, sizeof(cerr));
	if (dec < 0) {
		escape(in, sizeof(in), shown, sizeof(shown));
		return oob_fail(c, OOB_ERR_PROTO, "malformed perftest version from %s: \"%s\": %s",
				c->peer, shown, cerr);
	}
	memcpy(remote, in, len);
	remote[len] = '\0';
	if (strcmp(remote, want) != 0)
		return oob_fail(c, OOB_ERR_PROTO,
				"perftest version mismatch: %s sent \"%s\", expected \"%s\" "
				"(only that version's exchange is implemented)",
				c->peer, shown, want);
	if (dec == 1 && theirs)
		*theirs = got;
	if (has_caps)
		*has_caps = dec == 1;
	return OOB_OK;
}

static uint64_t
dbl_bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u;
}

static double
bits_dbl(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

#define SYSDATA_MAX (1u << 30)

int
perftest_xchg_sysdata(struct oob_conn *c, enum perftest_role r, uint32_t cycle_buffer,
		      uint32_t cache_line, uint32_t *rem_cycle_buffer, uint32_t *rem_cache_line)
{
	uint8_t mine[4], theirs[4];
	net_put_be32(mine, cycle_buffer);
	int rc =
	    perftest_xchg_raw(c, r, mine, theirs, 4, "the page size (cycle buffer)", c->timeout_ms);
	if (rc)
		return rc;
	uint32_t cb = net_get_be32(theirs);
	if (cb == 0 || cb > SYSDATA_MAX)
		return oob_fail(c, OOB_ERR_PROTO,
				"bad page size (cycle buffer) %u from %s, expected 1..%u "
				"(e.g. 00 00 10 00 for 4096)",
				cb, c->peer, SYSDATA_MAX);
	net_put_be32(mine, cache_line);
	rc = perftest_xchg_raw(c, r, mine, theirs, 4, "the cache line size", c->timeout_ms);
	if (rc)
		return rc;
	uint32_t cl = net_get_be32(theirs);
	if (cl == 0 || cl > SYSDATA_MAX)
		return oob_fail(c, OOB_ERR_PROTO,
				"bad cache line size %u from %s, expected 1..%u (e.g. 00 00 00 40 "
				"for 64)",
				cl, c->peer, SYSDATA_MAX);
	*rem_cycle_buffer = cb;
	*rem_cache_line = cl;
	return OOB_OK;
}

int
perftest_xchg_mtu(struct oob_conn *c, enum perftest_role r, int mtu, int *remote_mtu)
{
	uint8_t mine[PERFTEST_MTU_LEN], theirs[PERFTEST_MTU_LEN];
	if (mtu < 1 || mtu > 5)
		return oob_fail(c, OOB_ERR_ARG, "local MTU %d is not an ibv_mtu value 1..5", mtu);
	mine[0] = (uint8_t)('0' + mtu);
	mine[1] = '\0';
	int rc = perftest_xchg_raw(c, r, mine, theirs, sizeof(theirs), "the MTU", c->timeout_ms);
	if (rc)
		return rc;
	if (theirs[0] < '1' || theirs[0] > '5' || theirs[1] != '\0')
		return oob_fail(c, OOB_ERR_PROTO,
				"bad MTU from %s: bytes %02x %02x, expected an ibv_mtu digit "
				"'1'..'5' and a NUL (e.g. \"3\" for 1024)",
				c->peer, theirs[0], theirs[1]);
	*remote_mtu = theirs[0] - '0';
	return OOB_OK;
}

int
perftest_xchg_dest(struct oob_conn *c, enum perftest_role r, int no_gid,
		   const struct perftest_dest *local, struct perftest_dest *remote,
		   const char *what, int timeout_ms)
{
	uint8_t mine[PERFTEST_KEY_LEN_GID], theirs[PERFTEST_KEY_LEN_GID];
	char perr[160];
	int n = perftest_format_dest(local, no_gid, mine, sizeof(mine), perr, sizeof(perr));
	if (n < 0)
		return oob_fail(c, OOB_ERR_ARG, "%s", perr);
	int rc = perftest_xchg_raw(c, r, mine, theirs, (size_t)n, what ? what : "the key line",
				   timeout_ms);
	if (rc)
		return rc;
	if (perftest_parse_dest(theirs, (size_t)n, no_gid, remote, perr, sizeof(perr)))
		return oob_fail(c, OOB_ERR_PROTO, "%s from %s", perr, c->peer);
	return OOB_OK;
}

int
perftest_xchg_report(struct oob_conn *c, enum perftest_role r, int per_port,
		     const struct perftest_report *local, struct perftest_report *remote,
		     int timeout_ms)
{
	static const char *const names[9] = {
	    "the report's size",	   "the report's iterations",
	    "the report's bw_peak",	   "the report's bw_avg",
	    "the report's msgRate",	   "the report's port-1 bw_avg",
	    "the report's port-1 msgRate", "the report's port-2 bw_avg",
	    "the report's port-2 msgRate",
	};
	uint64_t mine[9] = {
	    local->size,
	    local->iters,
	    dbl_bits(local->bw_peak),
	    dbl_bits(local->bw_avg),
	    dbl_bits(local->msg_rate_avg),
	    dbl_bits(local->bw_avg_p1),
	    dbl_bits(local->msg_rate_avg_p1),
	    dbl_bits(local->bw_avg_p2),
	    dbl_bits(local->msg_rate_avg_p2),
	};
	uint64_t theirs[9] = {0};
	unsigned n = per_port ? 9 : 5;
	for (unsigned i = 0; i < n; i++) {
		uint8_t m[8], t[8];
		net_put_be64(m, mine[i]);
		int rc = perftest_xchg_raw(c, r, m, t, 8, names[i], timeout_ms);
		if (rc)
			return rc;
		theirs[i] = net_get_be64(t);
	}
	remote->size = theirs[0];
	remote->iters = theirs[1];
	remote->bw_peak = bits_dbl(theirs[2]);
	remote->bw_avg = bits_dbl(theirs[3]);
	remote->msg_rate_avg = bits_dbl(theirs[4]);
	remote->bw_avg_p1 = bits_dbl(theirs[5]);
	remote->msg_rate_avg_p1 = bits_dbl(theirs[6]);
	remote->bw_avg_p2 = bits_dbl(theirs[7]);
	remote->msg_rate_avg_p2 = bits_dbl(theirs[8]);
	return OOB_OK;
}

int
perftest_xchg_done(struct oob_conn *c, int timeout_ms)
{
	static const uint8_t done[PERFTEST_DONE_LEN] = {'d', 'o', 'n', 'e', '\0'};
	uint8_t theirs[PERFTEST_DONE_LEN];
	int rc = oob_write_full(c, done, sizeof(done), "\"done\"");
	if (rc)
		return rc;
	rc = oob_read_full_timeout(c, theirs, sizeof(theirs), "the peer's \"done\"", timeout_ms);
	if (rc)
		return rc;
	if (memcmp(theirs, done, sizeof(done)) != 0) {
		char shown[4 * PERFTEST_DONE_LEN + 1];
		escape(theirs, sizeof(theirs), shown, sizeof(shown));
		return oob_fail(c, OOB_ERR_PROTO, "expected \"done\\0\" from %s, got \"%s\"",
				c->peer, shown);
	}
	return OOB_OK;
}
