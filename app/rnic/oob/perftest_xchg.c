/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file perftest_xchg.c
 * perftest 6.06's TCP exchange: see perftest_xchg.h and docs/perftest-exchange.md.
 * Written from the observed wire format; no perftest code is used.
 */
#include "perftest_xchg.h"

#include <stdio.h>
#include <string.h>

static const char *const test_names[PERFTEST_N_TESTS] = {
	[PERFTEST_WRITE_BW] = "write_bw",   [PERFTEST_SEND_BW] = "send_bw",
	[PERFTEST_READ_BW] = "read_bw",     [PERFTEST_ATOMIC_BW] = "atomic_bw",
	[PERFTEST_WRITE_LAT] = "write_lat", [PERFTEST_SEND_LAT] = "send_lat",
	[PERFTEST_READ_LAT] = "read_lat",   [PERFTEST_ATOMIC_LAT] = "atomic_lat",
};

const char *perftest_test_name(enum perftest_test t)
{
	return (unsigned)t < PERFTEST_N_TESTS ? test_names[t] : "?";
}

int perftest_test_is_bw(enum perftest_test t)
{
	return t == PERFTEST_WRITE_BW || t == PERFTEST_SEND_BW || t == PERFTEST_READ_BW ||
	       t == PERFTEST_ATOMIC_BW;
}

void perftest_params_default(struct perftest_params *p, enum perftest_test t,
			     enum perftest_role r)
{
	memset(p, 0, sizeof(*p));
	p->test = t;
	p->role = r;
	p->num_qps = 1;
	p->size = perftest_test_is_bw(t) ? 65536 : 2;
	if (t == PERFTEST_ATOMIC_BW || t == PERFTEST_ATOMIC_LAT)
		p->size = 8;
	p->mtu = 3; /* IBV_MTU_1024 */
	p->cycle_buffer = 4096;
	p->cache_line = 64;
	p->version = PERFTEST_VERSION;
}

/* ------------------------------------------------------------------ plan */

struct plan_b {
	struct perftest_step *s;
	size_t max, n;
	int phase2;
	int overflow;
};

static void add(struct plan_b *b, enum perftest_step_kind k, enum perftest_dest_why why,
		unsigned qp, uint64_t size)
{
	if (b->n >= b->max) {
		b->overflow = 1;
		return;
	}
	struct perftest_step *st = &b->s[b->n++];
	memset(st, 0, sizeof(*st));
	st->kind = k;
	st->why = why;
	st->qp = qp;
	st->size = size;
	st->after_handshake = b->phase2;
}

static void add_dests(struct plan_b *b, unsigned n, enum perftest_dest_why why)
{
	for (unsigned i = 0; i < n; i++)
		add(b, PERFTEST_STEP_DEST, why, i, 0);
}

static void sync0(struct plan_b *b, enum perftest_dest_why why)
{
	add(b, PERFTEST_STEP_DEST, why, 0, 0);
}

int perftest_plan_build(const struct perftest_params *p, struct perftest_step *steps,
			size_t max, size_t *n, char *err, size_t errlen)
{
	struct plan_b b = {.s = steps, .max = max};
	const unsigned N = p->num_qps;
	const int client = p->role == PERFTEST_CLIENT;
	uint64_t sizes[PERFTEST_RUN_ALL_MAX_LOG2 + 1];
	unsigned nsizes = 0;

	*n = 0;
	if ((unsigned)p->test >= PERFTEST_N_TESTS) {
		snprintf(err, errlen, "unknown perftest test type %d", (int)p->test);
		return OOB_ERR_ARG;
	}
	if (p->role != PERFTEST_CLIENT && p->role != PERFTEST_SERVER) {
		snprintf(err, errlen, "unknown perftest role %d", (int)p->role);
		return OOB_ERR_ARG;
	}
	if (p->rdma_cm) {
		snprintf(err, errlen,
			 "perftest -R (rdma_cm) is not supported: its data exchange runs over "
			 "RDMA CM instead of TCP");
		return OOB_ERR_ARG;
	}
	if (N < 1 || N > PERFTEST_MAX_QPS) {
		snprintf(err, errlen, "number of QPs %u out of range 1..%u", N, PERFTEST_MAX_QPS);
		return OOB_ERR_ARG;
	}
	if (!perftest_test_is_bw(p->test) && (N != 1 || p->duplex)) {
		snprintf(err, errlen, "%s takes neither -q > 1 nor -b",
			 perftest_test_name(p->test));
		return OOB_ERR_ARG;
	}
	if (p->mtu < 1 || p->mtu > 5) {
		snprintf(err, errlen, "local MTU %d is not an ibv_mtu value 1..5", p->mtu);
		return OOB_ERR_ARG;
	}
	if (p->run_all) {
		for (unsigned i = PERFTEST_RUN_ALL_MIN_LOG2; i <= PERFTEST_RUN_ALL_MAX_LOG2; i++)
			sizes[nsizes++] = (uint64_t)1 << i;
	} else {
		sizes[nsizes++] = p->size;
	}

	add(&b, PERFTEST_STEP_VERSION, 0, 0, 0);
	add(&b, PERFTEST_STEP_SYSDATA, 0, 0, 0);
	add(&b, PERFTEST_STEP_MTU, 0, 0, 0);

	switch (p->test) {
	case PERFTEST_WRITE_BW:
	case PERFTEST_READ_BW:
	case PERFTEST_ATOMIC_BW:
		add_dests(&b, N, PERFTEST_WHY_QP_INFO);
		add(&b, PERFTEST_STEP_CONNECT, 0, 0, 0);
		add_dests(&b, N, PERFTEST_WHY_QP_AGAIN);
		sync0(&b, PERFTEST_WHY_AFTER_RTR);
		if (!p->duplex) {
			b.phase2 = 1;
			if (client)
				for (unsigned i = 0; i < nsizes; i++)
					add(&b, PERFTEST_STEP_TRAFFIC, 0, 0, sizes[i]);
			sync0(&b, PERFTEST_WHY_CLIENT_DONE);
			add(&b, PERFTEST_STEP_REPORT, 0, 0, 0);
		} else {
			for (unsigned i = 0; i < nsizes; i++) {
				sync0(&b, PERFTEST_WHY_PRE_RUN);
				b.phase2 = 1;
				add(&b, PERFTEST_STEP_TRAFFIC, 0, 0, sizes[i]);
				if (p->run_all)
					sync0(&b, PERFTEST_WHY_POST_RUN);
				add(&b, PERFTEST_STEP_REPORT, 0, 0, 0);
			}
		}
		sync0(&b, PERFTEST_WHY_CLOSE);
		add(&b, PERFTEST_STEP_DONE, 0, 0, 0);
		break;
	case PERFTEST_SEND_BW:
		add_dests(&b, N, PERFTEST_WHY_QP_INFO);
		add(&b, PERFTEST_STEP_CONNECT, 0, 0, 0);
		sync0(&b, PERFTEST_WHY_AFTER_RTR);
		add_dests(&b, N, PERFTEST_WHY_QP_AGAIN);
		for (unsigned i = 0; i < nsizes; i++) {
			if (!client || p->duplex)
				add(&b, PERFTEST_STEP_POST_RECV, 0, 0, sizes[i]);
			sync0(&b, PERFTEST_WHY_PRE_RUN);
			b.phase2 = 1;
			add(&b, PERFTEST_STEP_TRAFFIC, 0, 0, sizes[i]);
			if (p->duplex)
				add(&b, PERFTEST_STEP_REPORT, 0, 0, 0);
			if (p->run_all)
				sync0(&b, PERFTEST_WHY_POST_RUN);
		}
		sync0(&b, PERFTEST_WHY_CLOSE);
		add(&b, PERFTEST_STEP_DONE, 0, 0, 0);
		break;
	case PERFTEST_WRITE_LAT:
		sync0(&b, PERFTEST_WHY_INITIAL);
		add_dests(&b, N, PERFTEST_WHY_QP_INFO);
		add(&b, PERFTEST_STEP_CONNECT, 0, 0, 0);
		add_dests(&b, N, PERFTEST_WHY_QP_AGAIN);
		sync0(&b, PERFTEST_WHY_AFTER_RTR);
		b.phase2 = 1;
		for (unsigned i = 0; i < nsizes; i++)
			add(&b, PERFTEST_STEP_TRAFFIC, 0, 0, sizes[i]);
		/* 6.06's ib_write_lat just closes the socket: no sync, no "done". */
		break;
	case PERFTEST_READ_LAT:
	case PERFTEST_ATOMIC_LAT:
		sync0(&b, PERFTEST_WHY_INITIAL);
		add_dests(&b, N, PERFTEST_WHY_QP_INFO);
		add(&b, PERFTEST_STEP_CONNECT, 0, 0, 0);
		add_dests(&b, N, PERFTEST_WHY_QP_AGAIN);
		sync0(&b, PERFTEST_WHY_AFTER_RTR);
		b.phase2 = 1;
		if (client)
			for (unsigned i = 0; i < nsizes; i++)
				add(&b, PERFTEST_STEP_TRAFFIC, 0, 0, sizes[i]);
		sync0(&b, PERFTEST_WHY_CLOSE);
		add(&b, PERFTEST_STEP_DONE, 0, 0, 0);
		break;
	case PERFTEST_SEND_LAT:
		add_dests(&b, N, PERFTEST_WHY_QP_INFO);
		add(&b, PERFTEST_STEP_CONNECT, 0, 0, 0);
		sync0(&b, PERFTEST_WHY_AFTER_RTR);
		add_dests(&b, N, PERFTEST_WHY_QP_AGAIN);
		for (unsigned i = 0; i < nsizes; i++) {
			add(&b, PERFTEST_STEP_POST_RECV, 0, 0, sizes[i]);
			sync0(&b, PERFTEST_WHY_PRE_RUN);
			b.phase2 = 1;
			add(&b, PERFTEST_STEP_TRAFFIC, 0, 0, sizes[i]);
		}
		sync0(&b, PERFTEST_WHY_CLOSE);
		add(&b, PERFTEST_STEP_DONE, 0, 0, 0);
		break;
	default:
		break;
	}
	if (b.overflow) {
		snprintf(err, errlen, "perftest plan needs more than %zu steps", max);
		return OOB_ERR_ARG;
	}
	*n = b.n;
	return OOB_OK;
}

/* -------------------------------------------------------------- key line */

static int put_hex(uint8_t *out, uint64_t v, unsigned width)
{
	static const char digits[] = "0123456789abcdef";
	for (unsigned i = 0; i < width; i++)
		out[width - 1 - i] = (uint8_t)digits[(v >> (4 * i)) & 0xf];
	return (int)width;
}

int perftest_format_dest(const struct perftest_dest *d, int no_gid, uint8_t *out,
			 size_t outlen, char *err, size_t errlen)
{
	size_t need = no_gid ? PERFTEST_KEY_LEN : PERFTEST_KEY_LEN_GID;
	if (outlen < need) {
		snprintf(err, errlen, "key line buffer of %zu bytes is smaller than %zu", outlen,
			 need);
		return OOB_ERR_ARG;
	}
	if (d->lid > 0xffff || d->out_reads > 0xffff || d->qpn > 0xffffff ||
	    d->psn > 0xffffff) {
		snprintf(err, errlen,
			 "QP details out of range for perftest's key line (LID 0x%x, out_reads "
			 "0x%x: 16 bits; QPN 0x%x, PSN 0x%x: 24 bits)",
			 d->lid, d->out_reads, d->qpn, d->psn);
		return OOB_ERR_ARG;
	}
	uint8_t *p = out;
	p += put_hex(p, d->lid, 4);
	*p++ = ':';
	p += put_hex(p, d->out_reads, 4);
	*p++ = ':';
	p += put_hex(p, d->qpn, 6);
	*p++ = ':';
	p += put_hex(p, d->psn, 6);
	*p++ = ':';
	p += put_hex(p, d->rkey, 8);
	*p++ = ':';
	p += put_hex(p, d->vaddr, 16);
	*p++ = ':';
	if (!no_gid) {
		for (int i = 0; i < 16; i++) {
			p += put_hex(p, d->gid[i], 2);
			*p++ = ':';
		}
	}
	p += put_hex(p, d->srqn, 8);
	if (!no_gid)
		*p++ = ':';
	*p++ = '\0';
	return (int)(p - out);
}

/* Reads @p width lower-case hex digits at @p msg + *off, then expects @p sep. */
static int get_hex(const uint8_t *msg, size_t *off, unsigned width, char sep, uint64_t *v,
		   const char *field, char *err, size_t errlen)
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

int perftest_parse_dest(const uint8_t *msg, size_t len, int no_gid, struct perftest_dest *d,
			char *err, size_t errlen)
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
#define FIELD(w, sep, name, dst)                                                         \
	do {                                                                             \
		rc = get_hex(msg, &off, (w), (sep), &v, (name), err, errlen);            \
		if (rc)                                                                  \
			return rc;                                                       \
		dst = v;                                                                 \
	} while (0)
	FIELD(4, ':', "LID", t.lid);
	FIELD(4, ':', "out_reads", t.out_reads);
	FIELD(6, ':', "QPN", t.qpn);
	FIELD(6, ':', "PSN", t.psn);
	FIELD(8, ':', "RKEY", t.rkey);
	FIELD(16, ':', "VADDR", t.vaddr);
	if (!no_gid) {
		static const char *const gname[16] = {
			"GID byte 0",  "GID byte 1",  "GID byte 2",  "GID byte 3",
			"GID byte 4",  "GID byte 5",  "GID byte 6",  "GID byte 7",
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

/* ------------------------------------------------------------- exchanges */

int perftest_xchg_raw(struct oob_conn *c, enum perftest_role r, const void *mine, void *theirs,
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
static void escape(const uint8_t *b, size_t n, char *out, size_t outlen)
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

int perftest_xchg_version(struct oob_conn *c, enum perftest_role r, const char *version,
			  char remote[PERFTEST_VERSION_LEN + 1])
{
	return perftest_xchg_version_caps(c, r, version, NULL, remote, NULL, NULL);
}

int perftest_xchg_version_caps(struct oob_conn *c, enum perftest_role r, const char *version,
			       const struct perftest_caps *mine,
			       char remote[PERFTEST_VERSION_LEN + 1],
			       struct perftest_caps *theirs, int *has_caps)
{
	uint8_t msg[PERFTEST_VERSION_LEN] = {0}, in[PERFTEST_VERSION_LEN];
	const char *want = version ? version : PERFTEST_VERSION;
	size_t wl = strlen(want);
	struct perftest_caps got;
	char cerr[200];
	if (wl == 0 || wl >= PERFTEST_VERSION_LEN)
		return oob_fail(c, OOB_ERR_ARG, "perftest version string \"%s\" does not fit 16 bytes",
				want);
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
	int rc = perftest_xchg_raw(c, r, msg, in, sizeof(in), "the perftest version",
				   c->timeout_ms);
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

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

static uint64_t get_be64(const uint8_t *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

static uint64_t dbl_bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u;
}

static double bits_dbl(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

#define SYSDATA_MAX (1u << 30)

int perftest_xchg_sysdata(struct oob_conn *c, enum perftest_role r, uint32_t cycle_buffer,
			  uint32_t cache_line, uint32_t *rem_cycle_buffer,
			  uint32_t *rem_cache_line)
{
	uint8_t mine[4], theirs[4];
	put_be32(mine, cycle_buffer);
	int rc = perftest_xchg_raw(c, r, mine, theirs, 4, "the page size (cycle buffer)",
				   c->timeout_ms);
	if (rc)
		return rc;
	uint32_t cb = get_be32(theirs);
	if (cb == 0 || cb > SYSDATA_MAX)
		return oob_fail(c, OOB_ERR_PROTO,
				"bad page size (cycle buffer) %u from %s, expected 1..%u "
				"(e.g. 00 00 10 00 for 4096)",
				cb, c->peer, SYSDATA_MAX);
	put_be32(mine, cache_line);
	rc = perftest_xchg_raw(c, r, mine, theirs, 4, "the cache line size", c->timeout_ms);
	if (rc)
		return rc;
	uint32_t cl = get_be32(theirs);
	if (cl == 0 || cl > SYSDATA_MAX)
		return oob_fail(c, OOB_ERR_PROTO,
				"bad cache line size %u from %s, expected 1..%u (e.g. 00 00 00 40 "
				"for 64)",
				cl, c->peer, SYSDATA_MAX);
	*rem_cycle_buffer = cb;
	*rem_cache_line = cl;
	return OOB_OK;
}

int perftest_xchg_mtu(struct oob_conn *c, enum perftest_role r, int mtu, int *remote_mtu)
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

int perftest_xchg_dest(struct oob_conn *c, enum perftest_role r, int no_gid,
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

int perftest_xchg_report(struct oob_conn *c, enum perftest_role r, int per_port,
			 const struct perftest_report *local, struct perftest_report *remote,
			 int timeout_ms)
{
	static const char *const names[9] = {
		"the report's size",     "the report's iterations",
		"the report's bw_peak",  "the report's bw_avg",
		"the report's msgRate",  "the report's port-1 bw_avg",
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
		put_be64(m, mine[i]);
		int rc = perftest_xchg_raw(c, r, m, t, 8, names[i], timeout_ms);
		if (rc)
			return rc;
		theirs[i] = get_be64(t);
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

int perftest_xchg_done(struct oob_conn *c, int timeout_ms)
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

/* -------------------------------------------------------------- sessions */

int perftest_session_init(struct perftest_session *s, struct oob_conn *c,
			  const struct perftest_params *p, const struct perftest_dest *local,
			  struct perftest_dest *remote)
{
	char err[OOB_ERR_LEN];
	memset(s, 0, sizeof(*s));
	s->conn = c;
	s->p = *p;
	if (!s->p.version)
		s->p.version = PERFTEST_VERSION;
	s->local = local;
	s->remote = remote;
	s->mtu = p->mtu;
	s->cycle_buffer = p->cycle_buffer;
	s->cache_line = p->cache_line;
	int rc = perftest_plan_build(p, s->plan, PERFTEST_MAX_STEPS, &s->nsteps, err, sizeof(err));
	if (rc)
		return oob_fail(c, rc, "%s", err);
	if (!local || !remote)
		return oob_fail(c, OOB_ERR_ARG, "perftest session needs local and remote QP arrays");
	for (unsigned i = 0; i < p->num_qps; i++)
		memset(&remote[i], 0, sizeof(remote[i]));
	return OOB_OK;
}

static const char *why_text(enum perftest_dest_why w)
{
	switch (w) {
	case PERFTEST_WHY_QP_INFO:
		return "QP details";
	case PERFTEST_WHY_INITIAL:
		return "initial sync";
	case PERFTEST_WHY_QP_AGAIN:
		return "QP details (again, after connecting)";
	case PERFTEST_WHY_AFTER_RTR:
		return "sync after RTR";
	case PERFTEST_WHY_PRE_RUN:
		return "sync before the run";
	case PERFTEST_WHY_POST_RUN:
		return "sync after the run";
	case PERFTEST_WHY_CLIENT_DONE:
		return "sync: client finished";
	case PERFTEST_WHY_CLOSE:
		return "closing sync";
	}
	return "key line";
}

int perftest_session_step(struct perftest_session *s, const struct perftest_hooks *h)
{
	static const struct perftest_hooks none = {0};
	struct oob_conn *c = s->conn;
	const struct perftest_params *p = &s->p;
	if (!h)
		h = &none;
	if (s->pos >= s->nsteps)
		return OOB_OK;
	const struct perftest_step *st = &s->plan[s->pos];
	int tmo = st->after_handshake ? p->wait_timeout_ms : c->timeout_ms;
	int rc = OOB_OK;

	switch (st->kind) {
	case PERFTEST_STEP_VERSION:
		rc = perftest_xchg_version_caps(c, p->role, p->version, p->caps, s->remote_version,
						&s->remote_caps, &s->remote_has_caps);
		break;
	case PERFTEST_STEP_SYSDATA:
		rc = perftest_xchg_sysdata(c, p->role, p->cycle_buffer, p->cache_line,
					   &s->remote_cycle_buffer, &s->remote_cache_line);
		if (!rc) {
			if (s->remote_cycle_buffer > s->cycle_buffer)
				s->cycle_buffer = s->remote_cycle_buffer;
			if (s->remote_cache_line > s->cache_line)
				s->cache_line = s->remote_cache_line;
		}
		break;
	case PERFTEST_STEP_MTU:
		rc = perftest_xchg_mtu(c, p->role, p->mtu, &s->remote_mtu);
		if (!rc)
			s->mtu = s->remote_mtu < p->mtu ? s->remote_mtu : p->mtu;
		break;
	case PERFTEST_STEP_DEST: {
		char what[96];
		struct perftest_dest got;
		snprintf(what, sizeof(what), "the key line of QP %u (%s)", st->qp,
			 why_text(st->why));
		rc = perftest_xchg_dest(c, p->role, p->no_gid, &s->local[st->qp], &got, what, tmo);
		if (rc)
			break;
		if (s->remote_seen[st->qp] && memcmp(&got, &s->remote[st->qp], sizeof(got))) {
			rc = oob_fail(c, OOB_ERR_PROTO,
				      "%s: QP %u's details changed from QPN 0x%06x PSN 0x%06x to "
				      "QPN 0x%06x PSN 0x%06x (or another field) since the first "
				      "exchange",
				      c->peer, st->qp, s->remote[st->qp].qpn, s->remote[st->qp].psn,
				      got.qpn, got.psn);
			break;
		}
		s->remote[st->qp] = got;
		s->remote_seen[st->qp] = 1;
		break;
	}
	case PERFTEST_STEP_CONNECT:
		if (h->connect_qps && h->connect_qps(h->arg, s))
			rc = oob_fail(c, OOB_ERR_ARG, "connecting the local QPs failed");
		break;
	case PERFTEST_STEP_POST_RECV:
		if (h->post_recv && h->post_recv(h->arg, s, st->size))
			rc = oob_fail(c, OOB_ERR_ARG, "posting receives for size %llu failed",
				      (unsigned long long)st->size);
		break;
	case PERFTEST_STEP_TRAFFIC:
		memset(&s->local_report, 0, sizeof(s->local_report));
		if (h->run_traffic && h->run_traffic(h->arg, s, st->size, &s->local_report))
			rc = oob_fail(c, OOB_ERR_ARG, "the traffic run for size %llu failed",
				      (unsigned long long)st->size);
		break;
	case PERFTEST_STEP_REPORT:
		rc = perftest_xchg_report(c, p->role, p->report_per_port, &s->local_report,
					  &s->remote_report, tmo);
		if (!rc)
			s->n_reports++;
		break;
	case PERFTEST_STEP_DONE:
		rc = perftest_xchg_done(c, tmo);
		break;
	}
	if (rc == OOB_OK)
		s->pos++;
	return rc;
}

static int run_until(struct perftest_session *s, const struct perftest_hooks *h, int phase2)
{
	while (s->pos < s->nsteps && (phase2 || !s->plan[s->pos].after_handshake)) {
		int rc = perftest_session_step(s, h);
		if (rc)
			return rc;
	}
	return OOB_OK;
}

int perftest_client_handshake(struct perftest_session *s, const struct perftest_hooks *h)
{
	if (s->p.role != PERFTEST_CLIENT)
		return oob_fail(s->conn, OOB_ERR_ARG, "perftest_client_handshake on a server session");
	return run_until(s, h, 0);
}

int perftest_server_handshake(struct perftest_session *s, const struct perftest_hooks *h)
{
	if (s->p.role != PERFTEST_SERVER)
		return oob_fail(s->conn, OOB_ERR_ARG, "perftest_server_handshake on a client session");
	return run_until(s, h, 0);
}

int perftest_session_finish(struct perftest_session *s, const struct perftest_hooks *h)
{
	return run_until(s, h, 1);
}

int perftest_session_run(struct perftest_session *s, const struct perftest_hooks *h)
{
	return run_until(s, h, 1);
}
