/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file perftest_caps.c
 * The capability record in perftest's version padding: see perftest_caps.h
 * and docs/perftest-exchange.md ("Capability record").
 */
#include "perftest_caps.h"

#include <stdio.h>
#include <string.h>

/* Wire-stable: a name's bit is its index. Append only. */
const char *const perftest_caps_recovery_names[PERFTEST_CAPS_NAMES] = {
    "gbn",   /* IBTA Go-Back-N */
    "gbone", /* Go-Back-ONE (Wang, NJUPT; docs/references.md) */
    "irn",   /* IRN selective repeat (Swing, Chen et al., TPDS 2023, sec. 2.1) */
    "vrp",   /* VRP loss-tolerant delivery (Denis, LIP RR-2000-11; docs/vrp.md) */
};

const char *const perftest_caps_cc_names[PERFTEST_CAPS_NAMES] = {
    "none", "dcqcn", "dcqcn-p", "dctcp", "timely",
};

int
perftest_caps_index(const char *const names[PERFTEST_CAPS_NAMES], const char *name)
{
	for (int i = 0; name && i < PERFTEST_CAPS_NAMES; i++)
		if (names[i] && strcmp(names[i], name) == 0)
			return i;
	return -1;
}

/* Bytes 5..15 of the version message; offsets below are within the record. */
enum {
	R_MAGIC0, /* 'r' */
	R_MAGIC1, /* 'w' */
	R_VERSION,
	R_RECOVERY, /* bitmap */
	R_REQ,	    /* low nibble: recovery index, high nibble: CC index (0xf: none) */
	R_CC,	    /* bitmap */
	R_FEC,	    /* bitmap */
	R_VRP,	    /* bitmap */
	R_PARAM0,
	R_PARAM1,
	R_CSUM, /* makes the 11 bytes sum to 0 mod 256 */
};

void
perftest_caps_encode(const struct perftest_caps *c, uint8_t out[PERFTEST_CAPS_LEN])
{
	uint8_t sum = 0;

	out[R_MAGIC0] = PERFTEST_CAPS_MAGIC0;
	out[R_MAGIC1] = PERFTEST_CAPS_MAGIC1;
	out[R_VERSION] = c->version;
	out[R_RECOVERY] = c->recovery;
	out[R_REQ] = (uint8_t)((c->cc_req & 0xf) << 4 | (c->recovery_req & 0xf));
	out[R_CC] = c->cc;
	out[R_FEC] = c->fec;
	out[R_VRP] = c->vrp;
	out[R_PARAM0] = c->param[0];
	out[R_PARAM1] = c->param[1];
	for (int i = 0; i < R_CSUM; i++)
		sum = (uint8_t)(sum + out[i]);
	out[R_CSUM] = (uint8_t)(0x100 - sum);
}

int
perftest_caps_decode(const uint8_t msg[16], size_t len, struct perftest_caps *c, char *err,
		     size_t errlen)
{
	const uint8_t *r = msg + PERFTEST_CAPS_OFF;
	size_t first = 16;
	uint8_t sum = 0;

	for (size_t i = len + 1; i < 16; i++)
		if (msg[i]) {
			first = i;
			break;
		}
	if (first == 16)
		return 0; /* NUL padding: a standard perftest */
	if (len > PERFTEST_CAPS_MAX_VER || first < PERFTEST_CAPS_OFF ||
	    r[R_MAGIC0] != PERFTEST_CAPS_MAGIC0 || r[R_MAGIC1] != PERFTEST_CAPS_MAGIC1) {
		snprintf(err, errlen,
			 "non-zero padding byte %zu (0x%02x) in the version message, and no "
			 "capability record (\"rw\" at bytes 5-6 after a version of at most 4 "
			 "characters)",
			 first, msg[first]);
		return -1;
	}
	for (int i = 0; i < PERFTEST_CAPS_LEN; i++)
		sum = (uint8_t)(sum + r[i]);
	if (sum != 0) {
		snprintf(
		    err, errlen,
		    "garbled capability record: bytes 5-15 sum to 0x%02x, expected 0 (checksum "
		    "byte 15 = 0x%02x)",
		    sum, r[R_CSUM]);
		return -1;
	}
	if (r[R_VERSION] == 0) {
		snprintf(err, errlen, "capability record version 0 (byte 7), expected 1 or later");
		return -1;
	}
	memset(c, 0, sizeof(*c));
	c->version = r[R_VERSION];
	c->recovery = r[R_RECOVERY];
	c->recovery_req = r[R_REQ] & 0xf;
	c->cc_req = r[R_REQ] >> 4;
	c->cc = r[R_CC];
	c->fec = r[R_FEC];
	c->vrp = r[R_VRP];
	c->param[0] = r[R_PARAM0];
	c->param[1] = r[R_PARAM1];
	if (c->recovery_req != PERFTEST_CAPS_NONE &&
	    (c->recovery_req >= PERFTEST_CAPS_NAMES || !(c->recovery >> c->recovery_req & 1))) {
		snprintf(
		    err, errlen,
		    "capability record requests recovery mode %u (byte 9) that its bitmap 0x%02x "
		    "(byte 8) does not offer",
		    c->recovery_req, c->recovery);
		return -1;
	}
	if (c->cc_req != PERFTEST_CAPS_NONE &&
	    (c->cc_req >= PERFTEST_CAPS_NAMES || !(c->cc >> c->cc_req & 1))) {
		snprintf(
		    err, errlen,
		    "capability record requests congestion control %u (byte 9) that its bitmap "
		    "0x%02x (byte 10) does not offer",
		    c->cc_req, c->cc);
		return -1;
	}
	return 1;
}

static const char *
req_name(uint8_t idx)
{
	const char *n = idx < PERFTEST_CAPS_NAMES ? perftest_caps_recovery_names[idx] : NULL;
	return n ? n : "a mode outside the capability table";
}

/* FEC: on when both records carry the bit; one line when this side asked alone. */
static void
fec_negotiate(const struct perftest_caps *local, const struct perftest_caps *remote,
	      const char *peer, struct perftest_caps_result *res, char *line, size_t linelen)
{
	res->fec = (local->fec & remote->fec & PERFTEST_CAPS_FEC) != 0;
	if (res->fec)
		res->extensions = true;
	else if (local->fec & PERFTEST_CAPS_FEC)
		snprintf(line, linelen,
			 "%s: the peer does not ask for FEC (capability record FEC bits 0x%02x): "
			 "running --recovery %s without FEC",
			 peer, remote->fec, res->recovery);
}

int
perftest_caps_negotiate(const struct perftest_caps *local, const struct perftest_caps *remote,
			const char *peer, const char *why, struct perftest_caps_result *res,
			char *line, size_t linelen)
{
	uint8_t lreq = local->recovery_req;

	memset(res, 0, sizeof(*res));
	snprintf(res->recovery, sizeof(res->recovery), "gbn");
	line[0] = '\0';
	if (!remote) {
		res->fell_back = lreq != 0; /* 0: gbn itself */
		if (res->fell_back || (local->fec & PERFTEST_CAPS_FEC))
			snprintf(line, linelen,
				 "%s: %s: falling back from --recovery %s%s to Go-Back-N "
				 "(gbn), no extension packets%s",
				 peer, why, (local->fec & PERFTEST_CAPS_FEC) ? "fec+" : "",
				 req_name(lreq),
				 (local->fec & PERFTEST_CAPS_FEC) ? ", no FEC" : "");
		return 0;
	}
	res->peer_has_caps = true;
	if (lreq != remote->recovery_req) {
		snprintf(line, linelen,
			 "recovery mismatch: this rnic asks for %s, the peer %s for %s: "
			 "give both rnics the same --recovery",
			 req_name(lreq), peer, req_name(remote->recovery_req));
		return -1;
	}
	if (lreq == PERFTEST_CAPS_NONE || !(local->recovery >> lreq & 1) ||
	    !(remote->recovery >> lreq & 1)) {
		res->fell_back = true;
		snprintf(line, linelen,
			 "%s: the peer's capability record (recovery modes 0x%02x) lacks "
			 "%s: falling back to Go-Back-N (gbn), no extension packets%s",
			 peer, remote->recovery, req_name(lreq),
			 (local->fec & PERFTEST_CAPS_FEC) ? ", no FEC" : "");
		return 0;
	}
	snprintf(res->recovery, sizeof(res->recovery), "%s", perftest_caps_recovery_names[lreq]);
	res->extensions = lreq != 0;
	fec_negotiate(local, remote, peer, res, line, linelen);
	return 0;
}
