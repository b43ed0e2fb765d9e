/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file fec.c
 * The FEC encoder and decoder (docs/fec.md).
 *
 * Blocks and interleaving (LoWAR, Zuo et al., slides "Methodology" and
 * "Goodput Improvement": one repair per K data, interleaving depth D): a
 * stream's PSNs are laid on a grid that starts at an anchor PSN. A group is
 * K x D consecutive PSNs; member i of block j of a group is PSN
 * group_base + j + i * D, so a burst of up to D consecutive losses hits D
 * different blocks. XOR mode has R = 1 (all coefficients 1), RS mode D = 1 and
 * R rows of ISA-L's Cauchy matrix.
 *
 * Coding units (LoWAR slide "Buffer-based Update-style Calculation"): each
 * block keeps R accumulators of one symbol each, updated as each frame leaves
 * (encoder) or arrives (decoder). At the decoder an accumulator holds the
 * repair plus the code of the received members, which over GF(2^8) is the code
 * of the missing members only; e missing members are solved from e such
 * syndromes (XOR: e = 1, the syndrome is the frame).
 */
#include "fec.h"

#include <isa-l/erasure_code.h>
#include <stdlib.h>
#include <string.h>

#include "net_bytes.h"
#include "net_hdr.h"
#include "roce_hdr.h"
#include "roce_pkt.h"
#include "roce_psn.h"

/* fec_wire.c */
int fec_symbol_info(const uint8_t *frame, size_t len, int *stream, uint32_t *psn, uint16_t *l3_off,
		    uint32_t *dlen, uint16_t voff[8], uint8_t vval[8], int *nv);
int fec_build_frame(uint8_t *buf, size_t cap, const uint8_t *tmpl, uint16_t l3_off, int ver,
		    bool udp_csum, uint8_t opcode, uint32_t dqpn, uint32_t psn,
		    const struct fec_frh *h, const uint8_t *payload, uint32_t plen);

#define FEC_X_NAME(e, n, d) n,
const char *const fec_enc_stat_names[FEC_ES_NSTATS] = {FEC_ENC_STATS_LIST(FEC_X_NAME)};
const char *const fec_dec_stat_names[FEC_DS_NSTATS] = {FEC_DEC_STATS_LIST(FEC_X_NAME)};
#undef FEC_X_NAME

#define HDR_MAX (FEC_L2_MAX + NET_IPV6_HLEN + NET_UDP_HLEN)
#define GRID_REANCHOR (1u << 22) /* re-anchor a grid this far from its anchor (PSN wrap) */

/* ---- coefficients and the fold shared by encoder and decoder ---- */

struct fec_code {
	struct fec_params p;
	uint8_t coef[FEC_R_MAX][FEC_K_MAX];	   /**< repair row r, member i */
	uint8_t gtbls[32 * FEC_K_MAX * FEC_R_MAX]; /**< ISA-L tables of the R parity rows */
};

static void
code_init(struct fec_code *c, const struct fec_params *p)
{
	uint8_t a[(FEC_K_MAX + FEC_R_MAX) * FEC_K_MAX];

	c->p = *p;
	if (p->mode != FEC_MODE_RS) {
		memset(c->coef, 1, sizeof(c->coef));
		return;
	}
	/* rows k..k+r-1 of ISA-L's Cauchy matrix are the parity rows (every square
	 * submatrix of a Cauchy matrix is invertible: any r losses are solvable) */
	gf_gen_cauchy1_matrix(a, p->k + p->r, p->k);
	for (int r = 0; r < p->r; r++)
		memcpy(c->coef[r], a + (p->k + r) * p->k, p->k);
	ec_init_tables(p->k, p->r, a + p->k * p->k, c->gtbls);
}

static bool
params_eq(const struct fec_params *a, const struct fec_params *b)
{
	return a->mode == b->mode && a->k == b->k && a->d == b->d && a->r == b->r;
}

static void
xor_into(uint8_t *restrict dst, const uint8_t *restrict src, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t a, b;

		memcpy(&a, dst + i, 8);
		memcpy(&b, src + i, 8);
		a ^= b;
		memcpy(dst + i, &a, 8);
	}
	for (; i < n; i++)
		dst[i] ^= src[i];
}

/*
 * acc[r] ^= coef[r][i] * (len16 | data with the variant bytes zeroed), for all
 * R rows: the update step of a coding unit.
 */
static void
fold(const struct fec_code *c, uint8_t **acc, unsigned i, const uint8_t *data, uint32_t dlen,
     const uint16_t *voff, const uint8_t *vval, int nv)
{
	uint8_t lh = (uint8_t)(dlen >> 8), ll = (uint8_t)dlen;

	if (c->p.mode == FEC_MODE_XOR) {
		acc[0][0] ^= lh;
		acc[0][1] ^= ll;
		xor_into(acc[0] + 2, data, dlen);
		for (int v = 0; v < nv; v++)
			acc[0][2 + voff[v]] ^= vval[v];
		return;
	}
	{
		uint8_t *dst[FEC_R_MAX];

		for (int r = 0; r < c->p.r; r++)
			dst[r] = acc[r] + 2;
		ec_encode_data_update((int)dlen, c->p.k, c->p.r, (int)i, (uint8_t *)c->gtbls,
				      (uint8_t *)data, dst);
	}
	for (int r = 0; r < c->p.r; r++) {
		uint8_t g = c->coef[r][i];

		acc[r][0] ^= gf_mul(g, lh);
		acc[r][1] ^= gf_mul(g, ll);
		for (int v = 0; v < nv; v++)
			acc[r][2 + voff[v]] ^= gf_mul(g, vval[v]);
	}
}

static uint8_t *
sym_alloc(void)
{
	return aligned_alloc(64, (FEC_SYM_MAX + 63) & ~63u);
}

/* ---- encoder ---- */

struct enc_block {
	uint64_t mask; /**< members folded in */
	uint32_t len;  /**< longest symbol folded in */
	uint8_t *acc[FEC_R_MAX];
};

struct enc_stream {
	bool active, need_commit, pending;
	struct fec_params np; /**< pending parameters */
	struct fec_code code;
	uint32_t anchor, group_base, next, fill;
	uint32_t hi;	    /**< the highest PSN coded + 1: below it, a frame is a retransmission */
	uint32_t block_ids; /**< id of block 0 of the current group */
	struct enc_block blk[FEC_D_MAX];
	uint8_t tmpl[HDR_MAX]; /**< Ethernet/IP/UDP of the last frame coded */
	uint16_t l3_off;
	uint8_t ver;
	bool udp_csum;
	uint32_t dqpn;
};

struct fec_enc {
	struct fec_params p;
	bool recode; /**< code retransmissions on a new grid (fec_enc_set_recode) */
	struct enc_stream s[FEC_NSTREAMS];
	uint64_t st[FEC_ES_NSTATS];
	uint8_t out[FEC_FRAME_MAX];
};

struct fec_enc *
fec_enc_create(const struct fec_params *p)
{
	struct fec_enc *e;

	if (fec_params_check(p) != 0 || p->mode == FEC_MODE_OFF)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->p = *p;
	for (int s = 0; s < FEC_NSTREAMS; s++)
		code_init(&e->s[s].code, p);
	return e;
}

void
fec_enc_free(struct fec_enc *e)
{
	if (!e)
		return;
	for (int s = 0; s < FEC_NSTREAMS; s++)
		for (int j = 0; j < FEC_D_MAX; j++)
			for (int r = 0; r < FEC_R_MAX; r++)
				free(e->s[s].blk[j].acc[r]);
	free(e);
}

void
fec_enc_params(const struct fec_enc *e, struct fec_params *p)
{
	*p = e->s[FEC_STREAM_REQ].code.p;
}

uint64_t
fec_enc_stat(const struct fec_enc *e, enum fec_enc_stat s)
{
	return (unsigned)s < FEC_ES_NSTATS ? e->st[s] : 0;
}

static void
enc_emit(struct fec_enc *e, struct enc_stream *s, int stream, uint8_t opcode, uint32_t psn,
	 const struct fec_frh *h, const uint8_t *payload, uint32_t plen, fec_emit_fn emit,
	 void *arg)
{
	int n = fec_build_frame(e->out, sizeof(e->out), s->tmpl, s->l3_off, s->ver, s->udp_csum,
				opcode, s->dqpn, psn, h, payload, plen);

	(void)stream;
	if (n < 0) { /* cannot happen: FEC_FRAME_MAX holds the largest repair */
		e->st[FEC_ES_BAD_FRAME]++;
		return;
	}
	e->st[FEC_ES_OVERHEAD] += (unsigned)n;
	if (emit)
		emit(arg, e->out, (size_t)n);
}

/* The repairs of block j (all R rows), then the block is empty again. */
static void
enc_emit_block(struct fec_enc *e, int stream, unsigned j, fec_emit_fn emit, void *arg)
{
	struct enc_stream *s = &e->s[stream];
	struct enc_block *b = &s->blk[j];
	const struct fec_params *p = &s->code.p;
	uint64_t full = p->k == 64 ? ~0ull : (1ull << p->k) - 1;

	for (int r = 0; r < p->r; r++) {
		struct fec_frh h = {
		    .type = p->mode == FEC_MODE_XOR ? FEC_T_XOR : FEC_T_RS,
		    .stream = (uint8_t)stream,
		    .p = *p,
		    .row = (uint8_t)r,
		    .len_code = net_get_be16(b->acc[r]),
		    .block_id = s->block_ids + j,
		    .anchor = s->anchor,
		    .mask = b->mask,
		};

		enc_emit(e, s, stream, FEC_OP_REPAIR, roce_psn_add(s->group_base, j), &h,
			 b->acc[r] + 2, b->len - 2, emit, arg);
		e->st[FEC_ES_REPAIRS]++;
		if (b->mask != full)
			e->st[FEC_ES_PARTIAL]++;
		memset(b->acc[r], 0, b->len);
	}
	b->mask = 0;
	b->len = 0;
}

static void
enc_commit(struct fec_enc *e, int stream, fec_emit_fn emit, void *arg)
{
	struct enc_stream *s = &e->s[stream];
	struct fec_frh h = {
	    .type = FEC_T_COMMIT,
	    .stream = (uint8_t)stream,
	    .p = s->code.p,
	    .anchor = s->anchor,
	};

	enc_emit(e, s, stream, FEC_OP_NEGOTIATE, s->anchor, &h, NULL, 0, emit, arg);
	e->st[FEC_ES_COMMITS]++;
	s->need_commit = false;
}

/* Close the open group: repairs of its partial blocks; the next frame starts a new grid. */
static void
enc_flush_stream(struct fec_enc *e, int stream, fec_emit_fn emit, void *arg)
{
	struct enc_stream *s = &e->s[stream];

	if (!s->active || s->fill == 0)
		return;
	for (unsigned j = 0; j < s->code.p.d; j++)
		if (s->blk[j].mask)
			enc_emit_block(e, stream, j, emit, arg);
	s->block_ids += s->code.p.d;
	s->fill = 0;
	s->anchor = s->group_base = s->next;
	s->need_commit = true;
}

void
fec_enc_set_recode(struct fec_enc *e, bool on)
{
	e->recode = on;
}

int
fec_enc_flush(struct fec_enc *e, fec_emit_fn emit, void *arg)
{
	for (int s = 0; s < FEC_NSTREAMS; s++)
		enc_flush_stream(e, s, emit, arg);
	return 0;
}

int
fec_enc_set_params(struct fec_enc *e, const struct fec_params *p)
{
	if (fec_params_check(p) != 0 || p->mode == FEC_MODE_OFF)
		return -1;
	for (int s = 0; s < FEC_NSTREAMS; s++) {
		e->s[s].np = *p;
		e->s[s].pending = true;
	}
	return 0;
}

int
fec_enc_rx_negotiate(struct fec_enc *e, const uint8_t *frame, size_t len)
{
	struct fec_pkt pk;

	if (fec_parse(frame, len, &pk, true) < 0 || pk.frh.type != FEC_T_PROPOSE ||
	    fec_enc_set_params(e, &pk.frh.p) < 0) {
		e->st[FEC_ES_BAD_PROPOSALS]++;
		return -1;
	}
	e->st[FEC_ES_PROPOSALS]++;
	return 0;
}

static bool
enc_block_alloc(struct enc_block *b, int r)
{
	for (int i = 0; i < r; i++) {
		if (!b->acc[i]) {
			b->acc[i] = sym_alloc();
			if (!b->acc[i])
				return false;
			memset(b->acc[i], 0, FEC_SYM_MAX);
		}
	}
	return true;
}

int
fec_enc_frame(struct fec_enc *e, const uint8_t *frame, size_t len, fec_emit_fn pre,
	      fec_emit_fn post, void *arg)
{
	uint16_t l3_off, voff[8];
	uint8_t vval[8];
	uint32_t psn, dlen, span, o, j, i;
	int stream, nv, rc;
	struct enc_stream *s;
	struct enc_block *b;
	int32_t dist;

	rc = fec_symbol_info(frame, len, &stream, &psn, &l3_off, &dlen, voff, vval, &nv);
	if (rc < 0) {
		e->st[rc == -2 ? FEC_ES_TOO_LONG : FEC_ES_NOT_COVERED]++;
		return FEC_ENC_PASS;
	}
	s = &e->s[stream];
	if (!s->active) {
		s->active = true;
		s->anchor = s->group_base = s->next = s->hi = psn;
		s->need_commit = true;
	}
	dist = roce_psn_diff(psn, s->next);
	if (dist < 0 && !e->recode) {
		e->st[FEC_ES_RESEND]++;
		return FEC_ENC_PASS;
	}
	/* recode: a go-back starts a new grid at its first PSN; what follows up to
	 * the highest PSN coded is coded on it as retransmissions */
	if (e->recode && roce_psn_diff(psn, s->hi) < 0)
		e->st[FEC_ES_RECODED]++;
	if (dist != 0) {
		/* a PSN jump (coding started mid-stream, frames not given to us): new grid */
		enc_flush_stream(e, stream, pre, arg);
		s->anchor = s->group_base = s->next = psn;
		s->need_commit = true;
	}
	if (s->fill == 0) {
		/* at a group boundary: new parameters or a re-anchor take effect here */
		if (s->pending) {
			s->pending = false;
			if (!params_eq(&s->np, &s->code.p)) {
				code_init(&s->code, &s->np);
				s->anchor = s->group_base;
				s->need_commit = true;
			}
		}
		if ((uint32_t)roce_psn_diff(s->group_base, s->anchor) >= GRID_REANCHOR) {
			s->anchor = s->group_base;
			s->need_commit = true;
		}
	}
	/* the template of the repairs: this frame's Ethernet/IP/UDP headers */
	s->l3_off = l3_off;
	s->ver = (frame[l3_off] >> 4) == 6 ? 6 : 4;
	{
		uint16_t ihl = s->ver == 4 ? NET_IPV4_HLEN : NET_IPV6_HLEN;
		const uint8_t *udp = frame + l3_off + ihl;

		if ((size_t)l3_off + ihl + NET_UDP_HLEN > sizeof(s->tmpl)) {
			e->st[FEC_ES_NOT_COVERED]++;
			return FEC_ENC_PASS;
		}
		memcpy(s->tmpl, frame, (size_t)l3_off + ihl + NET_UDP_HLEN);
		s->udp_csum = udp[6] || udp[7];
		s->dqpn = net_get_be24(udp + NET_UDP_HLEN + 5);
	}
	if (s->need_commit)
		enc_commit(e, stream, pre, arg);

	span = (uint32_t)s->code.p.k * s->code.p.d;
	o = (uint32_t)roce_psn_diff(psn, s->group_base);
	j = o % s->code.p.d;
	i = o / s->code.p.d;
	if (o >= span) { /* cannot happen: the group closes at span */
		e->st[FEC_ES_BAD_FRAME]++;
		return FEC_ENC_PASS;
	}
	b = &s->blk[j];
	if (!enc_block_alloc(b, s->code.p.r)) {
		e->st[FEC_ES_BAD_FRAME]++;
		return FEC_ENC_PASS;
	}
	fold(&s->code, b->acc, i, frame + l3_off, dlen, voff, vval, nv);
	b->mask |= 1ull << i;
	if (b->len < 2 + dlen)
		b->len = 2 + dlen;
	s->next = roce_psn_add(psn, 1);
	if (roce_psn_diff(s->next, s->hi) > 0)
		s->hi = s->next;
	s->fill++;
	e->st[FEC_ES_COVERED]++;
	if (i == (uint32_t)s->code.p.k - 1u) {
		enc_emit_block(e, stream, j, post, arg);
		if (j == (uint32_t)s->code.p.d - 1u) {
			s->group_base = roce_psn_add(s->group_base, span);
			s->block_ids += s->code.p.d;
			s->fill = 0;
		}
	}
	return FEC_ENC_CODED;
}

/* ---- decoder ---- */

#define DONE_RING 64
#define PSN_NONE 0xffffffffu

struct dec_slot {
	bool used, mask_known, have_tmpl;
	uint8_t stream, rep; /**< rep: repair rows folded in */
	struct fec_params p;
	uint32_t anchor, first, len;
	uint64_t have, mask, seq;
	uint8_t *acc[FEC_R_MAX];
	uint8_t tmpl[HDR_MAX]; /**< Ethernet/IP/UDP of the repair: the rebuilt frame's */
	uint16_t l3_off;
	uint8_t ver;
	bool udp_csum;
};

struct dec_stream {
	bool known;
	uint32_t anchor;
	struct fec_code code;
	uint32_t
	    done[DONE_RING]; /**< first PSNs of blocks finished (complete, rebuilt, given up) */
	unsigned done_pos;
};

struct fec_dec {
	unsigned nslots;
	uint64_t seq;
	struct dec_slot *slots;
	struct dec_stream s[FEC_NSTREAMS];
	uint64_t st[FEC_DS_NSTATS];
	uint8_t *scratch[FEC_R_MAX];
	uint8_t out[FEC_FRAME_MAX];
};

struct fec_dec *
fec_dec_create(unsigned nslots)
{
	struct fec_dec *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->nslots = nslots ? nslots : 4 * FEC_D_MAX;
	d->slots = calloc(d->nslots, sizeof(*d->slots));
	if (!d->slots) {
		free(d);
		return NULL;
	}
	for (int r = 0; r < FEC_R_MAX; r++) {
		d->scratch[r] = sym_alloc();
		if (!d->scratch[r]) {
			fec_dec_free(d);
			return NULL;
		}
	}
	for (int s = 0; s < FEC_NSTREAMS; s++)
		for (int k = 0; k < DONE_RING; k++)
			d->s[s].done[k] = PSN_NONE;
	return d;
}

void
fec_dec_free(struct fec_dec *d)
{
	if (!d)
		return;
	for (unsigned n = 0; n < d->nslots; n++)
		for (int r = 0; r < FEC_R_MAX; r++)
			free(d->slots[n].acc[r]);
	for (int r = 0; r < FEC_R_MAX; r++)
		free(d->scratch[r]);
	free(d->slots);
	free(d);
}

void
fec_dec_params(const struct fec_dec *d, int stream, struct fec_params *p)
{
	if (stream < 0 || stream >= FEC_NSTREAMS || !d->s[stream].known)
		*p = (struct fec_params){0, 0, 0, 0};
	else
		*p = d->s[stream].code.p;
}

uint64_t
fec_dec_stat(const struct fec_dec *d, enum fec_dec_stat s)
{
	return (unsigned)s < FEC_DS_NSTATS ? d->st[s] : 0;
}

static bool
done_has(const struct dec_stream *s, uint32_t first)
{
	for (int k = 0; k < DONE_RING; k++)
		if (s->done[k] == first)
			return true;
	return false;
}

static void
slot_free(struct fec_dec *d, struct dec_slot *sl)
{
	struct dec_stream *s = &d->s[sl->stream];

	s->done[s->done_pos++ % DONE_RING] = sl->first;
	for (int r = 0; r < sl->p.r; r++)
		if (sl->acc[r])
			memset(sl->acc[r], 0, sl->len);
	sl->used = false;
}

static uint32_t
member_psn(const struct dec_slot *sl, unsigned i)
{
	return roce_psn_add(sl->first, i * sl->p.d);
}

/* Give up on a block: its holes go to retransmission. */
static void
slot_give_up(struct fec_dec *d, struct dec_slot *sl, fec_event_fn ev, void *arg)
{
	uint64_t missing;

	if (sl->mask_known) {
		missing = sl->mask & ~sl->have;
	} else if (sl->have) {
		int hi = 63 - __builtin_clzll(sl->have);

		missing = (hi == 63 ? ~0ull : (2ull << hi) - 1) & ~sl->have;
	} else {
		missing = 0;
	}
	if (missing) {
		d->st[FEC_DS_UNRECOVERABLE]++;
		d->st[FEC_DS_LOST_UNREC] += (unsigned)__builtin_popcountll(missing);
		for (unsigned i = 0; i < 64; i++)
			if ((missing >> i & 1) && ev)
				ev(arg, FEC_EV_UNRECOVERABLE, sl->stream, member_psn(sl, i));
	}
	slot_free(d, sl);
}

static struct dec_slot *
slot_find(struct fec_dec *d, int stream, uint32_t first)
{
	for (unsigned n = 0; n < d->nslots; n++)
		if (d->slots[n].used && d->slots[n].stream == stream && d->slots[n].first == first)
			return &d->slots[n];
	return NULL;
}

static struct dec_slot *
slot_alloc(struct fec_dec *d, int stream, uint32_t first, const struct fec_params *p,
	   uint32_t anchor, fec_event_fn ev, void *arg)
{
	struct dec_slot *sl = NULL, *old = NULL;

	for (unsigned n = 0; n < d->nslots; n++) {
		struct dec_slot *x = &d->slots[n];

		/* blocks two groups behind the new one are over: their repair is not coming */
		if (x->used && x->stream == stream &&
		    roce_psn_diff(first, x->first) > 2 * (int32_t)(x->p.k * x->p.d))
			slot_give_up(d, x, ev, arg);
		if (!x->used) {
			if (!sl)
				sl = x;
		} else if (!old || x->seq < old->seq) {
			old = x;
		}
	}
	if (!sl) {
		d->st[FEC_DS_EVICTED]++;
		slot_give_up(d, old, ev, arg);
		sl = old;
	}
	for (int r = 0; r < p->r; r++) {
		if (!sl->acc[r]) {
			sl->acc[r] = sym_alloc();
			if (!sl->acc[r])
				return NULL;
			memset(sl->acc[r], 0, FEC_SYM_MAX);
		}
	}
	sl->used = true;
	sl->mask_known = sl->have_tmpl = false;
	sl->stream = (uint8_t)stream;
	sl->rep = 0;
	sl->p = *p;
	sl->anchor = anchor;
	sl->first = first;
	sl->len = 0;
	sl->have = sl->mask = 0;
	sl->seq = ++d->seq;
	return sl;
}

/*
 * A rebuilt symbol back to a frame: the repair's Ethernet header, the coded
 * region, the variant fields from the repair's IP header, IPv4 header checksum
 * and (if the repair has one) the UDP checksum recomputed; then the whole
 * frame is checked by roce_parse() with the ICRC recomputed by lib/roce
 * (roce_icrc_calc) and compared with the rebuilt one, and the PSN with the
 * member's. Returns the frame length or -1.
 */
static int
rebuild_frame(struct fec_dec *d, const struct dec_slot *sl, const uint8_t *sym, uint32_t psn)
{
	uint32_t dlen = net_get_be16(sym);
	uint16_t ihl = sl->ver == 4 ? NET_IPV4_HLEN : NET_IPV6_HLEN;
	const uint8_t *t = sl->tmpl + sl->l3_off;
	uint8_t *ip = d->out + sl->l3_off;
	size_t flen = sl->l3_off + dlen, out;
	struct roce_pkt p;
	struct net_l3 l3;
	int stream;

	if (dlen < (uint32_t)ihl + NET_UDP_HLEN + ROCE_BTH_LEN + ROCE_ICRC_LEN ||
	    2 + dlen > sl->len || flen > sizeof(d->out))
		return -1;
	memcpy(d->out, sl->tmpl, sl->l3_off);
	memcpy(ip, sym + 2, dlen);
	if ((ip[0] >> 4) != sl->ver)
		return -1;
	if (sl->ver == 4) {
		if ((ip[0] & 0x0f) != 5)
			return -1;
		ip[1] = t[1];
		ip[8] = t[8];
		net_ip4_fix_csum(ip);
	} else {
		ip[0] = (uint8_t)((ip[0] & 0xf0) | (t[0] & 0x0f));
		ip[1] = t[1];
		ip[2] = t[2];
		ip[3] = t[3];
		ip[7] = t[7];
	}
	out = flen < NET_ETH_MIN_FRAME ? NET_ETH_MIN_FRAME : flen;
	memset(d->out + flen, 0, out - flen);
	if (sl->udp_csum) {
		if (net_l3_parse(ip, dlen, sl->ver == 4 ? NET_ETHERTYPE_IPV4 : NET_ETHERTYPE_IPV6,
				 &l3) < 0 ||
		    l3.payload_len < NET_UDP_HLEN || (size_t)ihl + l3.payload_len > dlen)
			return -1;
		net_put_be16(ip + ihl + 6, net_udp_csum(&l3, ip + ihl, l3.payload_len));
	}
	if (roce_parse(d->out, out, &p, 0) < 0 || p.frame_len != flen || p.h.bth.psn != psn)
		return -1;
	stream = (roce_opcode_info(p.h.bth.opcode)->flags & ROCE_OPF_REQ) ? FEC_STREAM_REQ
									  : FEC_STREAM_RESP;
	if (stream != sl->stream)
		return -1;
	return (int)out;
}

static void
slot_try_decode(struct fec_dec *d, struct dec_slot *sl, fec_emit_fn deliver, fec_event_fn ev,
		void *arg)
{
	uint64_t missing;
	int e, nrep, rows[FEC_R_MAX], miss[FEC_R_MAX];
	uint8_t *out[FEC_R_MAX];

	if (!sl->mask_known)
		return;
	missing = sl->mask & ~sl->have;
	e = __builtin_popcountll(missing);
	nrep = __builtin_popcount(sl->rep);
	if (e == 0) {
		d->st[FEC_DS_UNNEEDED] += (unsigned)nrep;
		d->st[FEC_DS_CLEAN]++;
		slot_free(d, sl);
		return;
	}
	if (e > nrep) {
		if (nrep == sl->p.r)
			slot_give_up(d, sl, ev, arg);
		return; /* more repairs may come */
	}
	for (int n = 0, r = 0; r < sl->p.r && n < e; r++)
		if (sl->rep >> r & 1)
			rows[n++] = r;
	for (int n = 0, i = 0; i < 64 && n < e; i++)
		if (missing >> i & 1)
			miss[n++] = i;
	if (sl->p.mode == FEC_MODE_XOR) {
		out[0] = sl->acc[0]; /* the syndrome is the missing symbol */
	} else {
		/* S_rows = A x_miss with A[a][b] = coef[rows[a]][miss[b]]: x = A^-1 S */
		uint8_t a[(FEC_K_MAX + FEC_R_MAX) * FEC_K_MAX], m[FEC_R_MAX * FEC_R_MAX],
		    inv[FEC_R_MAX * FEC_R_MAX], tb[32 * FEC_R_MAX * FEC_R_MAX];
		uint8_t *src[FEC_R_MAX];

		gf_gen_cauchy1_matrix(a, sl->p.k + sl->p.r, sl->p.k);
		for (int x = 0; x < e; x++)
			for (int y = 0; y < e; y++)
				m[x * e + y] = a[(sl->p.k + rows[x]) * sl->p.k + miss[y]];
		if (gf_invert_matrix(m, inv, e) != 0) {
			slot_give_up(d, sl, ev, arg);
			return;
		}
		ec_init_tables(e, e, inv, tb);
		for (int x = 0; x < e; x++) {
			src[x] = sl->acc[rows[x]];
			out[x] = d->scratch[x];
		}
		ec_encode_data((int)sl->len, e, e, tb, src, out);
	}
	for (int x = 0; x < e; x++) {
		uint32_t psn = member_psn(sl, (unsigned)miss[x]);
		int n = rebuild_frame(d, sl, out[x], psn);

		if (n < 0) {
			d->st[FEC_DS_REBUILD_BAD]++;
			d->st[FEC_DS_UNRECOVERABLE]++;
			d->st[FEC_DS_LOST_UNREC]++;
			if (ev)
				ev(arg, FEC_EV_UNRECOVERABLE, sl->stream, psn);
			continue;
		}
		d->st[FEC_DS_REBUILT]++;
		if (deliver)
			deliver(arg, d->out, (size_t)n);
		if (ev)
			ev(arg, FEC_EV_REBUILT, sl->stream, psn);
	}
	d->st[FEC_DS_UNNEEDED] += (unsigned)(nrep - e);
	slot_free(d, sl);
}

/*
 * A new grid anchored at @p anchor (a COMMIT, or a repair naming it): the
 * blocks of another grid that start at or after the anchor hold PSNs the new
 * grid codes again (a go-back re-anchor, fec_enc_set_recode); they are given
 * up and forgotten, so the new blocks with the same first PSN start empty.
 */
static void
dec_regrid(struct fec_dec *d, int stream, uint32_t anchor, fec_event_fn ev, void *arg)
{
	struct dec_stream *s = &d->s[stream];

	for (unsigned n = 0; n < d->nslots; n++) {
		struct dec_slot *x = &d->slots[n];

		if (x->used && x->stream == stream && x->anchor != anchor &&
		    roce_psn_diff(x->first, anchor) >= 0)
			slot_give_up(d, x, ev, arg);
	}
	for (int k = 0; k < DONE_RING; k++)
		if (s->done[k] != PSN_NONE && roce_psn_diff(s->done[k], anchor) >= 0)
			s->done[k] = PSN_NONE;
}

static void
dec_adopt(struct fec_dec *d, int stream, const struct fec_params *p, uint32_t anchor,
	  fec_event_fn ev, void *arg)
{
	struct dec_stream *s = &d->s[stream];

	if (s->known && s->anchor != anchor)
		dec_regrid(d, stream, anchor, ev, arg);
	if (!s->known || !params_eq(&s->code.p, p))
		code_init(&s->code, p);
	s->known = true;
	s->anchor = anchor;
}

static int
dec_fec_frame(struct fec_dec *d, const uint8_t *frame, const struct fec_pkt *pk,
	      fec_emit_fn deliver, fec_event_fn ev, void *arg)
{
	const struct fec_frh *h = &pk->frh;
	struct dec_stream *s = &d->s[h->stream];
	struct dec_slot *sl;
	uint32_t span = (uint32_t)h->p.k * h->p.d, o;
	uint8_t *acc;

	if (h->type == FEC_T_COMMIT) {
		dec_adopt(d, h->stream, &h->p, h->anchor, ev, arg);
		d->st[FEC_DS_COMMITS]++;
		return FEC_DEC_CONSUMED;
	}
	if (h->type == FEC_T_PROPOSE)
		return FEC_DEC_PROPOSE;
	/* a repair: its first member sits in row 0 of a group of the grid it names */
	o = (pk->psn - h->anchor) & ROCE_PSN_MASK;
	if (o % span >= h->p.d) {
		d->st[FEC_DS_BAD]++;
		return -FEC_E_FRH;
	}
	if (!s->known || s->anchor != h->anchor || !params_eq(&s->code.p, &h->p))
		dec_adopt(d, h->stream, &h->p, h->anchor, ev, arg); /* a COMMIT was lost: resync */
	sl = slot_find(d, h->stream, pk->psn);
	if (!sl) {
		if (done_has(s, pk->psn)) {
			d->st[FEC_DS_UNNEEDED]++;
			return FEC_DEC_CONSUMED;
		}
		sl = slot_alloc(d, h->stream, pk->psn, &h->p, h->anchor, ev, arg);
		if (!sl) {
			d->st[FEC_DS_EVICTED]++;
			return FEC_DEC_CONSUMED;
		}
	}
	if (!params_eq(&sl->p, &h->p) || sl->anchor != h->anchor ||
	    (sl->mask_known && sl->mask != h->mask) || (sl->have & ~h->mask) ||
	    (sl->rep >> h->row & 1)) {
		d->st[FEC_DS_STALE]++;
		return FEC_DEC_CONSUMED;
	}
	sl->mask = h->mask;
	sl->mask_known = true;
	acc = sl->acc[h->row];
	acc[0] ^= (uint8_t)(h->len_code >> 8);
	acc[1] ^= (uint8_t)h->len_code;
	xor_into(acc + 2, frame + pk->payload_off, pk->payload_len);
	if (sl->len < 2 + pk->payload_len)
		sl->len = 2 + pk->payload_len;
	sl->rep |= (uint8_t)(1u << h->row);
	if (!sl->have_tmpl) {
		uint16_t ihl = pk->ip_ver == 4 ? NET_IPV4_HLEN : NET_IPV6_HLEN;
		const uint8_t *udp = frame + pk->l3_off + ihl;

		if ((size_t)pk->l3_off + ihl + NET_UDP_HLEN <= sizeof(sl->tmpl)) {
			memcpy(sl->tmpl, frame, (size_t)pk->l3_off + ihl + NET_UDP_HLEN);
			sl->l3_off = pk->l3_off;
			sl->ver = pk->ip_ver;
			sl->udp_csum = udp[6] || udp[7];
			sl->have_tmpl = true;
		}
	}
	d->st[FEC_DS_REPAIRS]++;
	if (sl->have_tmpl)
		slot_try_decode(d, sl, deliver, ev, arg);
	return FEC_DEC_CONSUMED;
}

int
fec_dec_frame(struct fec_dec *d, const uint8_t *frame, size_t len, fec_emit_fn deliver,
	      fec_event_fn ev, void *arg)
{
	uint16_t l3_off, voff[8];
	uint8_t vval[8];
	uint32_t psn, dlen, span, o, g, first, i;
	int stream, nv, rc;
	struct fec_pkt pk;
	struct dec_stream *s;
	struct dec_slot *sl;
	uint64_t bit;

	/* data frames first: one header parse (roce_parse refuses the FEC opcodes) */
	rc = fec_symbol_info(frame, len, &stream, &psn, &l3_off, &dlen, voff, vval, &nv);
	if (rc == -2)
		return FEC_DEC_PASS; /* too long to be coded */
	if (rc < 0) {
		rc = fec_parse(frame, len, &pk, true);
		if (rc == 0)
			return dec_fec_frame(d, frame, &pk, deliver, ev, arg);
		if (rc == -FEC_E_NOT_FEC)
			return FEC_DEC_PASS;
		d->st[FEC_DS_BAD]++;
		return rc;
	}
	s = &d->s[stream];
	if (!s->known) {
		d->st[FEC_DS_NO_ANCHOR]++;
		return FEC_DEC_DATA;
	}
	span = (uint32_t)s->code.p.k * s->code.p.d;
	o = (psn - s->anchor) & ROCE_PSN_MASK;
	if (o >= (1u << 23)) { /* before the grid's anchor: an old frame */
		d->st[FEC_DS_NO_ANCHOR]++;
		return FEC_DEC_DATA;
	}
	g = o % span;
	first = (psn - g + g % s->code.p.d) & ROCE_PSN_MASK;
	i = g / s->code.p.d;
	bit = 1ull << i;
	sl = slot_find(d, stream, first);
	if (!sl) {
		if (done_has(s, first)) {
			d->st[FEC_DS_DUP]++;
			return FEC_DEC_DATA;
		}
		sl = slot_alloc(d, stream, first, &s->code.p, s->anchor, ev, arg);
		if (!sl) {
			d->st[FEC_DS_EVICTED]++;
			return FEC_DEC_DATA;
		}
	}
	if (!params_eq(&sl->p, &s->code.p) || sl->anchor != s->anchor || (sl->have & bit) ||
	    (sl->mask_known && !(sl->mask & bit))) {
		d->st[FEC_DS_DUP]++;
		return FEC_DEC_DATA;
	}
	fold(&s->code, sl->acc, i, frame + l3_off, dlen, voff, vval, nv);
	sl->have |= bit;
	if (sl->len < 2 + dlen)
		sl->len = 2 + dlen;
	d->st[FEC_DS_DATA]++;
	if (sl->mask_known) {
		if (sl->have_tmpl)
			slot_try_decode(d, sl, deliver, ev, arg);
	} else if (sl->have == (sl->p.k == 64 ? ~0ull : (1ull << sl->p.k) - 1)) {
		d->st[FEC_DS_CLEAN]++;
		slot_free(d, sl);
	}
	return FEC_DEC_DATA;
}

void
fec_dec_flush(struct fec_dec *d, fec_event_fn ev, void *arg)
{
	for (unsigned n = 0; n < d->nslots; n++)
		if (d->slots[n].used)
			slot_give_up(d, &d->slots[n], ev, arg);
}
