/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pingpong_xchg.c
 * ibv_rc_pingpong's TCP exchange: see pingpong_xchg.h.
 */
#include "pingpong_xchg.h"

#include <stdio.h>
#include <string.h>

#include "oob_hex.h"

static const uint8_t done_msg[PINGPONG_DONE_LEN] = {'d', 'o', 'n', 'e', '\0'};

int
pingpong_format_dest(const struct pingpong_dest *d, uint8_t *out, size_t outlen, char *err,
		     size_t errlen)
{
	if (outlen < PINGPONG_MSG_LEN) {
		snprintf(err, errlen, "pingpong buffer of %zu bytes is smaller than %d", outlen,
			 PINGPONG_MSG_LEN);
		return OOB_ERR_ARG;
	}
	if (d->lid > 0xffff || d->qpn > 0xffffff || d->psn > 0xffffff) {
		snprintf(err, errlen,
			 "QP details out of range for ibv_rc_pingpong (LID 0x%x: 16 bits; QPN "
			 "0x%x, PSN 0x%x: 24 bits)",
			 d->lid, d->qpn, d->psn);
		return OOB_ERR_ARG;
	}
	uint8_t *p = out;
	oob_put_hex(p, d->lid, 4);
	p += 4;
	*p++ = ':';
	oob_put_hex(p, d->qpn, 6);
	p += 6;
	*p++ = ':';
	oob_put_hex(p, d->psn, 6);
	p += 6;
	*p++ = ':';
	for (int i = 0; i < 16; i++) {
		oob_put_hex(p, d->gid[i], 2);
		p += 2;
	}
	*p++ = '\0';
	return (int)(p - out);
}

static int
hexval(uint8_t ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

int
pingpong_parse_dest(const uint8_t *msg, size_t len, struct pingpong_dest *d, char *err,
		    size_t errlen)
{
	static const struct {
		unsigned off, width;
		const char *name;
	} f[] = {{0, 4, "LID"}, {5, 6, "QPN"}, {12, 6, "PSN"}, {19, 32, "GID"}};
	struct pingpong_dest t;
	uint64_t v[3] = {0};

	if (len != PINGPONG_MSG_LEN) {
		snprintf(err, errlen, "malformed ibv_rc_pingpong message: %zu bytes, expected %d",
			 len, PINGPONG_MSG_LEN);
		return OOB_ERR_PROTO;
	}
	memset(&t, 0, sizeof(t));
	for (unsigned k = 0; k < 4; k++) {
		for (unsigned i = 0; i < f[k].width; i++) {
			unsigned at = f[k].off + i;
			int hv = hexval(msg[at]);
			if (hv < 0) {
				snprintf(err, errlen,
					 "malformed ibv_rc_pingpong message: %s has byte 0x%02x at "
					 "byte %u, expected %u lower-case hex digits",
					 f[k].name, msg[at], at, f[k].width);
				return OOB_ERR_PROTO;
			}
			if (k < 3)
				v[k] = (v[k] << 4) | (unsigned)hv;
			else if (i % 2 == 0)
				t.gid[i / 2] = (uint8_t)(hv << 4);
			else
				t.gid[i / 2] |= (uint8_t)hv;
		}
		unsigned end = f[k].off + f[k].width;
		uint8_t want = k < 3 ? ':' : '\0';
		if (msg[end] != want) {
			snprintf(err, errlen,
				 "malformed ibv_rc_pingpong message: expected %s after %s at byte "
				 "%u, got 0x%02x",
				 want ? "':'" : "the terminating NUL", f[k].name, end, msg[end]);
			return OOB_ERR_PROTO;
		}
	}
	t.lid = (uint32_t)v[0];
	t.qpn = (uint32_t)v[1];
	t.psn = (uint32_t)v[2];
	*d = t;
	return OOB_OK;
}

static int
read_dest(struct oob_conn *c, struct pingpong_dest *remote)
{
	uint8_t msg[PINGPONG_MSG_LEN];
	char perr[160];
	int rc = oob_read_full(c, msg, sizeof(msg), "the peer's ibv_rc_pingpong address");
	if (rc)
		return rc;
	if (pingpong_parse_dest(msg, sizeof(msg), remote, perr, sizeof(perr)))
		return oob_fail(c, OOB_ERR_PROTO, "%s from %s", perr, c->peer);
	return OOB_OK;
}

static int
write_dest(struct oob_conn *c, const struct pingpong_dest *local)
{
	uint8_t msg[PINGPONG_MSG_LEN];
	char perr[160];
	if (pingpong_format_dest(local, msg, sizeof(msg), perr, sizeof(perr)) < 0)
		return oob_fail(c, OOB_ERR_ARG, "%s", perr);
	return oob_write_full(c, msg, sizeof(msg), "our ibv_rc_pingpong address");
}

int
pingpong_client_exchange(struct oob_conn *c, const struct pingpong_dest *local,
			 struct pingpong_dest *remote)
{
	int rc = write_dest(c, local);
	if (!rc)
		rc = read_dest(c, remote);
	if (!rc)
		rc = oob_write_full(c, done_msg, sizeof(done_msg), "\"done\"");
	return rc;
}

int
pingpong_server_exchange(struct oob_conn *c, const struct pingpong_dest *local,
			 struct pingpong_dest *remote,
			 int (*connect_qp)(void *arg, const struct pingpong_dest *remote),
			 void *arg)
{
	uint8_t got[PINGPONG_DONE_LEN];
	int rc = read_dest(c, remote);
	if (rc)
		return rc;
	if (connect_qp && connect_qp(arg, remote))
		return oob_fail(c, OOB_ERR_ARG, "connecting the local QP failed");
	rc = write_dest(c, local);
	if (rc)
		return rc;
	rc = oob_read_full(c, got, sizeof(got), "the client's \"done\"");
	if (rc)
		return rc;
	if (memcmp(got, done_msg, sizeof(got)) != 0)
		return oob_fail(c, OOB_ERR_PROTO,
				"expected \"done\\0\" from %s, got bytes %02x %02x %02x %02x %02x",
				c->peer, got[0], got[1], got[2], got[3], got[4]);
	return OOB_OK;
}
