/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file perftest_keyline.c
 * perftest 6.06's exchange, the key line: one QP's destination (LID, outstanding
 * reads, QPN, PSN, rkey, address, GID, SRQN) formatted and parsed as perftest's
 * colon-separated hex text. See perftest_xchg.h and docs/perftest-exchange.md.
 * Written from the observed wire format; no perftest code is used.
 */
#include "perftest_xchg.h"

#include <stdio.h>
#include <string.h>

#include "oob_hex.h"

int
perftest_format_dest(const struct perftest_dest *d, int no_gid, uint8_t *out, size_t outlen,
		     char *err, size_t errlen)
{
	size_t need = no_gid ? PERFTEST_KEY_LEN : PERFTEST_KEY_LEN_GID;
	if (outlen < need) {
		snprintf(err, errlen, "key line buffer of %zu bytes is smaller than %zu", outlen,
			 need);
		return OOB_ERR_ARG;
	}
	if (d->lid > 0xffff || d->out_reads > 0xffff || d->qpn > 0xffffff || d->psn > 0xffffff) {
		snprintf(err, errlen,
			 "QP details out of range for perftest's key line (LID 0x%x, out_reads "
			 "0x%x: 16 bits; QPN 0x%x, PSN 0x%x: 24 bits)",
			 d->lid, d->out_reads, d->qpn, d->psn);
		return OOB_ERR_ARG;
	}
	uint8_t *p = out;
	p += oob_put_hex(p, d->lid, 4);
	*p++ = ':';
	p += oob_put_hex(p, d->out_reads, 4);
	*p++ = ':';
	p += oob_put_hex(p, d->qpn, 6);
	*p++ = ':';
	p += oob_put_hex(p, d->psn, 6);
	*p++ = ':';
	p += oob_put_hex(p, d->rkey, 8);
	*p++ = ':';
	p += oob_put_hex(p, d->vaddr, 16);
	*p++ = ':';
	if (!no_gid) {
		for (int i = 0; i < 16; i++) {
			p += oob_put_hex(p, d->gid[i], 2);
			*p++ = ':';
		}
	}
	p += oob_put_hex(p, d->srqn, 8);
	if (!no_gid)
		*p++ = ':';
	*p++ = '\0';
	return (int)(p - out);
}

/* Reads @p width lower-case hex digits at @p msg + *off, then expects @p sep. */
static int
get_hex(const uint8_t *msg, size_t *off, unsigned width, char sep, uint64_t *v, const char *field,
	char *err, size_t errlen)
{
	uint64_t x = 0;
	for (unsigned i = 0; i < width; i++) {
		uint8_t ch = msg[*off + i];
		unsigned dv;
		if (ch >= '0' && ch <= '9')
			dv = (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			dv = (unsigned)(ch - 'a' + 10);
		else {
			if (ch >= 0x20 && ch < 0x7f)
				snprintf(err, errlen,
					 "malformed perftest key line: %s has '%c' at byte %zu, "
					 "expected %u lower-case hex digits",
					 field, ch, *off + i, width);
			else
				snprintf(err, errlen,
					 "malformed perftest key line: %s has byte 0x%02x at byte "
					 "%zu, expected %u lower-case hex digits",
					 field, ch, *off + i, width);
			return OOB_ERR_PROTO;
		}
		x = (x << 4) | dv;
	}
	*off += width;
	uint8_t got = msg[*off];
	if (got != (uint8_t)sep) {
		if (sep)
			snprintf(err, errlen,
				 "malformed perftest key line: expected ':' after %s at byte %zu, "
				 "got 0x%02x",
				 field, *off, got);
		else
			snprintf(err, errlen,
				 "malformed perftest key line: expected the terminating NUL after "
				 "%s at byte %zu, got 0x%02x",
				 field, *off, got);
		return OOB_ERR_PROTO;
	}
	(*off)++;
	*v = x;
	return OOB_OK;
}

int
perftest_parse_dest(const uint8_t *msg, size_t len, int no_gid, struct perftest_dest *d, char *err,
		    size_t errlen)
{
	size_t need = no_gid ? PERFTEST_KEY_LEN : PERFTEST_KEY_LEN_GID;
	struct perftest_dest t;
	size_t off = 0;
	uint64_t v;
	int rc;

	if (len != need) {
		snprintf(err, errlen, "malformed perftest key line: %zu bytes, expected %zu", len,
			 need);
		return OOB_ERR_PROTO;
	}
	memset(&t, 0, sizeof(t));
#define FIELD(w, sep, name, dst)                                                                   \
	do {                                                                                       \
		rc = get_hex(msg, &off, (w), (sep), &v, (name), err, errlen);                      \
		if (rc)                                                                            \
			return rc;                                                                 \
		dst = v;                                                                           \
	} while (0)
	FIELD(4, ':', "LID", t.lid);
	FIELD(4, ':', "out_reads", t.out_reads);
	FIELD(6, ':', "QPN", t.qpn);
	FIELD(6, ':', "PSN", t.psn);
	FIELD(8, ':', "RKEY", t.rkey);
	FIELD(16, ':', "VADDR", t.vaddr);
	if (!no_gid) {
		static const char *const gname[16] = {
		    "GID byte 0",  "GID byte 1",  "GID byte 2",	 "GID byte 3",
		    "GID byte 4",  "GID byte 5",  "GID byte 6",	 "GID byte 7",
		    "GID byte 8",  "GID byte 9",  "GID byte 10", "GID byte 11",
		    "GID byte 12", "GID byte 13", "GID byte 14", "GID byte 15",
		};
		for (int i = 0; i < 16; i++)
			FIELD(2, ':', gname[i], t.gid[i]);
		FIELD(8, ':', "SRQN", t.srqn);
		if (msg[off] != '\0') {
			snprintf(err, errlen,
				 "malformed perftest key line: expected the terminating NUL at "
				 "byte %zu, got 0x%02x",
				 off, msg[off]);
			return OOB_ERR_PROTO;
		}
		off++;
	} else {
		FIELD(8, '\0', "SRQN", t.srqn);
	}
#undef FIELD
	if (off != need) {
		snprintf(err, errlen, "malformed perftest key line: parsed %zu of %zu bytes", off,
			 need);
		return OOB_ERR_PROTO;
	}
	*d = t;
	return OOB_OK;
}
