/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file test_fec.c
 * lib/fec: encoder -> in-memory wire with deterministic drops -> decoder.
 * Every rebuilt frame is compared byte for byte (headers, payload, ICRC) with
 * the frame that was dropped; every loss the code cannot fill must be reported
 * unrecoverable, exactly. RS repairs are checked against ISA-L's own encode
 * and decode (the standard "survivor rows, invert, multiply" procedure), an
 * implementation independent of lib/fec's syndrome decoder. With
 * RW_FEC_VECTORS=path the XOR vectors for tests/python/test_fec_ref.py are
 * written.
 */
#include <isa-l/erasure_code.h>

#include "fec.h"
#include "fec_adapt.h"
#include "net_bytes.h"
#include "roce_icrc.h"
#include "roce_pkt.h"
#include "rw_test.h"

#define MAXF 4096

struct wf {
	uint8_t *b;
	size_t n;
	int kind; /* 0 data, 1 repair, 2 negotiation */
	uint32_t psn;
	int stream;
};

struct wire {
	struct wf f[MAXF];
	int n;
};

static void
wire_add(struct wire *w, const uint8_t *b, size_t n)
{
	struct fec_pkt pk;
	struct wf *f = &w->f[w->n++];

	f->b = malloc(n);
	memcpy(f->b, b, n);
	f->n = n;
	if (fec_parse(b, n, &pk, true) == 0) {
		f->kind = pk.frh.type == FEC_T_COMMIT || pk.frh.type == FEC_T_PROPOSE ? 2 : 1;
		f->psn = pk.psn;
		f->stream = pk.frh.stream;
	} else {
		struct roce_pkt p;

		f->kind = 0;
		roce_parse(b, n, &p, 0);
		f->psn = p.h.bth.psn;
		f->stream = (roce_opcode_info(p.h.bth.opcode)->flags & ROCE_OPF_REQ) ? 0 : 1;
	}
}

static void
wire_free(struct wire *w)
{
	for (int i = 0; i < w->n; i++)
		free(w->f[i].b);
	w->n = 0;
}

static void
emit_cb(void *arg, const uint8_t *b, size_t n)
{
	wire_add(arg, b, n);
}

static uint32_t rng = 12345;
static uint32_t
rnd(void)
{
	rng = rng * 1103515245u + 12345u;
	return rng >> 8;
}

/* A data frame: opcode, PSN, payload length; IPv4 or IPv6; ip_id increments per frame. */
static int
mk_frame(uint8_t *buf, uint8_t opcode, uint32_t psn, uint32_t plen, int ver, uint16_t ip_id)
{
	struct roce_pkt p;
	uint8_t pl[4096];

	memset(&p, 0, sizeof(p));
	memcpy(p.l2.dst, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(p.l2.src, "\x02\x00\x00\x00\x00\x01", 6);
	p.l3.version = (uint8_t)ver;
	p.l3.ttl = 64;
	p.l3.tos = 0x68;
	p.l3.ip_id = ip_id;
	if (ver == 4) {
		net_ip4_to_mapped(0x0a000001, p.l3.src);
		net_ip4_to_mapped(0x0a000002, p.l3.dst);
	} else {
		memset(p.l3.src, 0x20, 16);
		memset(p.l3.dst, 0x21, 16);
		p.l3.flow_label = 0x12345;
	}
	p.udp.sport = 0xc123;
	p.h.bth.opcode = opcode;
	p.h.bth.pkey = 0xffff;
	p.h.bth.dqpn = 0x11;
	p.h.bth.psn = psn & 0xffffff;
	p.h.reth.va = 0x1000;
	p.h.reth.rkey = 0x42;
	p.h.reth.dlen = plen;
	p.h.aeth.msn = 7;
	for (uint32_t i = 0; i < plen; i++)
		pl[i] = (uint8_t)rnd();
	return roce_build(buf, 4352, &p, pl, plen, 0);
}

struct rx {
	struct wire delivered;
	uint32_t rebuilt_psn[256], unrec_psn[256];
	int nrebuilt, nunrec;
};

static void
deliver_cb(void *arg, const uint8_t *b, size_t n)
{
	struct rx *rx = arg;

	wire_add(&rx->delivered, b, n);
}

static void
ev_cb(void *arg, enum fec_event ev, int stream, uint32_t psn)
{
	struct rx *rx = arg;

	(void)stream;
	if (ev == FEC_EV_REBUILT)
		rx->rebuilt_psn[rx->nrebuilt++] = psn;
	else
		rx->unrec_psn[rx->nunrec++] = psn;
}

static const uint8_t ops[] = {0x04, 0x0a, 0x00, 0x01, 0x02, 0x06, 0x07, 0x08};

static struct wire g_pre, g_post;
static void
pre_cb(void *arg, const uint8_t *b, size_t n)
{
	(void)arg;
	wire_add(&g_pre, b, n);
}
static void
post_cb(void *arg, const uint8_t *b, size_t n)
{
	(void)arg;
	wire_add(&g_post, b, n);
}

/* Encode one frame, appending pre frames, the frame, post frames to @p w. */
static void
encode(struct fec_enc *e, struct wire *w, const uint8_t *b, size_t n)
{
	g_pre.n = g_post.n = 0;
	fec_enc_frame(e, b, n, pre_cb, post_cb, NULL);
	for (int i = 0; i < g_pre.n; i++)
		w->f[w->n++] = g_pre.f[i];
	wire_add(w, b, n);
	for (int i = 0; i < g_post.n; i++)
		w->f[w->n++] = g_post.f[i];
	g_pre.n = g_post.n = 0;
}

/* Make @p n frames starting at @p psn (stream 0 unless resp), encode into @p w. */
static void
make_stream(struct fec_enc *e, struct wire *w, int n, uint32_t psn, int ver, bool resp_too)
{
	uint8_t buf[4352];
	uint32_t rpsn = 0x500000;

	for (int i = 0; i < n; i++) {
		uint8_t op = ops[rnd() % sizeof(ops)];
		uint32_t plen =
		    (op == 0x04 || op == 0x0a || op == 0x02 || op == 0x08) ? rnd() % 1025 : 1024;
		int len = mk_frame(buf, op, psn + (uint32_t)i, plen, ver, (uint16_t)(0x100 + i));

		CHECK(len > 0);
		encode(e, w, buf, (size_t)len);
		if (resp_too) { /* a READ response after every request: the other PSN stream */
			len = mk_frame(buf, i % 5 == 4 ? 0x0f : 0x0e, rpsn++,
				       i % 5 == 4 ? 77 : 1024, ver, (uint16_t)(0x8000 + i));
			CHECK(len > 0);
			encode(e, w, buf, (size_t)len);
		}
	}
}

typedef bool (*drop_fn)(const struct wf *f, void *arg);

/* Deliver @p w to @p d except what @p drop says; returns the number of data frames dropped. */
static int
deliver(struct fec_dec *d, struct wire *w, drop_fn drop, void *darg, struct rx *rx,
	struct wire *dropped)
{
	int nd = 0;

	for (int i = 0; i < w->n; i++) {
		struct wf *f = &w->f[i];

		if (drop && drop(f, darg)) {
			if (f->kind == 0) {
				nd++;
				wire_add(dropped, f->b, f->n);
			}
			continue;
		}
		fec_dec_frame(d, f->b, f->n, deliver_cb, ev_cb, rx);
	}
	return nd;
}

/* Each rebuilt frame equals exactly one dropped frame, byte for byte. */
static int
count_exact(const struct wire *rebuilt, const struct wire *dropped)
{
	int ok = 0;

	for (int i = 0; i < rebuilt->n; i++)
		for (int j = 0; j < dropped->n; j++)
			if (rebuilt->f[i].n == dropped->f[j].n &&
			    memcmp(rebuilt->f[i].b, dropped->f[j].b, dropped->f[j].n) == 0)
				ok++;
	return ok;
}

/* drop data frames of stream 0 whose PSN is in a list; optionally repairs by first PSN */
struct drops {
	uint32_t data[64];
	int nd;
	uint32_t rep[16];
	int nr;
	int stream;
};

static bool
drop_list(const struct wf *f, void *arg)
{
	struct drops *d = arg;

	if (f->stream != d->stream)
		return false;
	if (f->kind == 0) {
		for (int i = 0; i < d->nd; i++)
			if (f->psn == d->data[i])
				return true;
	} else if (f->kind == 1) {
		for (int i = 0; i < d->nr; i++)
			if (f->psn == d->rep[i])
				return true;
	}
	return false;
}

struct result {
	int dropped, rebuilt, exact, unrec;
};

static struct result
run_case(struct fec_params p, int n, uint32_t base, int ver, bool resp, struct drops *dr)
{
	struct fec_enc *e = fec_enc_create(&p);
	struct fec_dec *d = fec_dec_create(0);
	static struct wire w, dropped;
	static struct rx rx;
	struct result res;

	memset(&rx, 0, sizeof(rx));
	CHECK(e && d);
	make_stream(e, &w, n, base, ver, resp);
	res.dropped = deliver(d, &w, drop_list, dr, &rx, &dropped);
	fec_dec_flush(d, ev_cb, &rx);
	res.rebuilt = rx.delivered.n;
	res.exact = count_exact(&rx.delivered, &dropped);
	res.unrec = rx.nunrec;
	CHECK_EQ(fec_dec_stat(d, FEC_DS_REBUILT), res.rebuilt);
	CHECK_EQ(fec_dec_stat(d, FEC_DS_REBUILD_BAD), 0);
	CHECK_EQ(fec_dec_stat(d, FEC_DS_BAD), 0);
	CHECK_EQ(fec_dec_stat(d, FEC_DS_LOST_UNREC), res.unrec);
	CHECK_EQ(rx.nrebuilt, res.rebuilt);
	wire_free(&w);
	wire_free(&dropped);
	wire_free(&rx.delivered);
	fec_enc_free(e);
	fec_dec_free(d);
	return res;
}

static const struct fec_params X8_1 = {FEC_MODE_XOR, 8, 1, 1};
static const struct fec_params X32_4 = {FEC_MODE_XOR, 32, 4, 1};

static void
test_params(void)
{
	struct fec_params p;
	char err[160], buf[32];

	CHECK_EQ(fec_params_parse("xor:32,4", &p, err, sizeof(err)), 0);
	CHECK(p.mode == FEC_MODE_XOR && p.k == 32 && p.d == 4 && p.r == 1);
	CHECK_EQ(fec_params_parse("rs:32,4", &p, err, sizeof(err)), 0);
	CHECK(p.mode == FEC_MODE_RS && p.k == 32 && p.d == 1 && p.r == 4);
	fec_params_format(&p, buf, sizeof(buf));
	CHECK(strcmp(buf, "rs:32,4") == 0);
	CHECK_EQ(fec_params_parse("xor:65,1", &p, err, sizeof(err)), -1);
	CHECK_EQ(fec_params_parse("xor:0,1", &p, err, sizeof(err)), -1);
	CHECK_EQ(fec_params_parse("xor:8,17", &p, err, sizeof(err)), -1);
	CHECK_EQ(fec_params_parse("rs:8,9", &p, err, sizeof(err)), -1);
	CHECK_EQ(fec_params_parse("rs:8", &p, err, sizeof(err)), -1);
	CHECK_EQ(fec_params_parse("xor:8,4x", &p, err, sizeof(err)), -1);
	CHECK_EQ(fec_params_parse("lt:8,4", &p, err, sizeof(err)), -1);
	p = FEC_PARAMS_DEFAULT;
	fec_params_format(&p, buf, sizeof(buf));
	CHECK(strcmp(buf, "xor:32,4") == 0);
}

/* No loss: every block clean, nothing rebuilt, overhead = 1 repair per K. */
static void
test_no_loss(void)
{
	struct drops dr = {.nd = 0};
	struct result r = run_case(X32_4, 256, 100, 4, false, &dr);

	CHECK_EQ(r.rebuilt, 0);
	CHECK_EQ(r.unrec, 0);
}

static void
test_single_loss(void)
{
	for (int ver = 4; ver <= 6; ver += 2) {
		struct drops dr = {.data = {103}, .nd = 1};
		struct result r = run_case(X8_1, 64, 100, ver, false, &dr);

		CHECK_EQ(r.dropped, 1);
		CHECK_EQ(r.rebuilt, 1);
		CHECK_EQ(r.exact, 1);
		CHECK_EQ(r.unrec, 0);
		/* the default, one loss in each of the 8 blocks of 2 groups */
		struct drops d2 = {.data = {100, 105, 110, 115, 228, 229, 230, 231}, .nd = 8};

		r = run_case(X32_4, 256, 100, ver, false, &d2);
		CHECK_EQ(r.dropped, 8);
		CHECK_EQ(r.rebuilt, 8);
		CHECK_EQ(r.exact, 8);
		CHECK_EQ(r.unrec, 0);
	}
}

/* PSN wrap inside a block */
static void
test_psn_wrap(void)
{
	struct drops dr = {.data = {0xfffffe, 0x000001}, .nd = 2};
	struct result r = run_case(X32_4, 128, 0xffffe0, 4, false, &dr);

	CHECK_EQ(r.rebuilt, 2);
	CHECK_EQ(r.exact, 2);
	CHECK_EQ(r.unrec, 0);
}

static void
test_two_losses_one_block(void)
{
	struct drops dr = {.data = {101, 104}, .nd = 2};
	struct result r = run_case(X8_1, 64, 100, 4, false, &dr);

	CHECK_EQ(r.dropped, 2);
	CHECK_EQ(r.rebuilt, 0);
	CHECK_EQ(r.unrec, 2);
}

static void
test_burst_interleave(void)
{
	/* xor:8,4: a burst of 4 consecutive frames hits 4 blocks: all rebuilt */
	struct fec_params p = {FEC_MODE_XOR, 8, 4, 1};
	struct drops dr = {.data = {110, 111, 112, 113}, .nd = 4};
	struct result r = run_case(p, 64, 100, 4, false, &dr);

	CHECK_EQ(r.rebuilt, 4);
	CHECK_EQ(r.exact, 4);
	CHECK_EQ(r.unrec, 0);
	/* a burst of 5 > D: block of 110 loses 110 and 114: those 2 fall back, 3 rebuilt */
	struct drops d5 = {.data = {110, 111, 112, 113, 114}, .nd = 5};

	r = run_case(p, 64, 100, 4, false, &d5);
	CHECK_EQ(r.rebuilt, 3);
	CHECK_EQ(r.exact, 3);
	CHECK_EQ(r.unrec, 2);
	/* without interleaving the same burst of 4 is 1 block with 4 losses */
	r = run_case(X8_1, 64, 100, 4, false, &dr);
	CHECK_EQ(r.rebuilt, 0);
	CHECK(r.unrec >= 4);
}

static void
test_repair_lost(void)
{
	/* block 100..107 loses 103 and its repair (BTH PSN = first member 100) */
	struct drops dr = {.data = {103}, .nd = 1, .rep = {100}, .nr = 1};
	struct result r = run_case(X8_1, 64, 100, 4, false, &dr);

	CHECK_EQ(r.rebuilt, 0);
	CHECK_EQ(r.unrec, 1);
	/* only the repair lost: nothing to do, nothing reported */
	struct drops d2 = {.rep = {100}, .nr = 1};

	r = run_case(X8_1, 64, 100, 4, false, &d2);
	CHECK_EQ(r.rebuilt, 0);
	CHECK_EQ(r.unrec, 0);
}

static void
test_rs(void)
{
	static const int ks[] = {8, 32};
	static const int rs[] = {1, 2, 4};

	for (int a = 0; a < 2; a++) {
		for (int b = 0; b < 3; b++) {
			struct fec_params p = {FEC_MODE_RS, (uint8_t)ks[a], 1, (uint8_t)rs[b]};
			struct drops dr = {.nd = 0};
			struct result r;

			/* R losses spread over the block: rebuilt */
			for (int i = 0; i < rs[b]; i++)
				dr.data[dr.nd++] = 200 + (uint32_t)(i * (ks[a] / rs[b]));
			r = run_case(p, 4 * ks[a], 200, 4, false, &dr);
			CHECK_EQ(r.rebuilt, rs[b]);
			CHECK_EQ(r.exact, rs[b]);
			CHECK_EQ(r.unrec, 0);
			/* R + 1: falls back, all R + 1 reported */
			dr.data[dr.nd++] = 200 + (uint32_t)ks[a] - 1;
			r = run_case(p, 4 * ks[a], 200, 6, false, &dr);
			CHECK_EQ(r.rebuilt, 0);
			CHECK_EQ(r.unrec, rs[b] + 1);
			/* R - 1 data lost and one repair lost: still rebuilt */
			if (rs[b] > 1) {
				struct drops d3 = {.nd = 0, .rep = {200}, .nr = 0};

				for (int i = 0; i < rs[b] - 1; i++)
					d3.data[d3.nd++] = 201 + (uint32_t)i;
				r = run_case(p, 4 * ks[a], 200, 4, false, &d3);
				CHECK_EQ(r.rebuilt, rs[b] - 1);
				CHECK_EQ(r.exact, rs[b] - 1);
			}
		}
	}
	/* a burst of 4 consecutive frames: XOR 32,4 fills it, RS 32,4 too, XOR 32,1 cannot */
	struct drops burst = {.data = {300, 301, 302, 303}, .nd = 4};
	struct fec_params rs4 = {FEC_MODE_RS, 32, 1, 4};
	struct result r = run_case(rs4, 128, 288, 4, false, &burst);

	CHECK_EQ(r.rebuilt, 4);
	CHECK_EQ(r.exact, 4);
}

static void
test_read_response(void)
{
	/* requests and READ responses interleaved: two streams, each with a loss */
	struct drops dr = {.data = {0x500003}, .nd = 1, .stream = 1};
	struct result r = run_case(X8_1, 64, 100, 4, true, &dr);

	CHECK_EQ(r.dropped, 1);
	CHECK_EQ(r.rebuilt, 1);
	CHECK_EQ(r.exact, 1);
	CHECK_EQ(r.unrec, 0);
}

/*
 * --fec-adapt's policy (fec_adapt.h) on a deterministic loss pattern, one
 * packet every 10 us, a decision after each, hold (4 RTTs) 10 ms: clean, then
 * 1 % periodic loss (every 100th packet), then clean again, then one run of 5
 * consecutive losses. The changes and the packets they happen at are exact.
 */
#define AD_MAX 16
struct ad_log {
	unsigned n;
	uint32_t at[AD_MAX];
	int dir[AD_MAX];
	unsigned level[AD_MAX];
};

static void
ad_run(struct fec_adapt *a, struct ad_log *lg, uint32_t *pkt, uint32_t n, uint32_t every,
       uint32_t run)
{
	for (uint32_t i = 0; i < n; i++, (*pkt)++) {
		bool lost = (every && i % every == every - 1) || i < run;
		int dir;

		fec_adapt_sample(a, lost, *pkt);
		if (run && i == run) /* the packet after the burst shows the gap */
			fec_adapt_gap(a, run);
		dir = fec_adapt_decide(a, (uint64_t)*pkt * 10000u, 10000000u);
		if (dir && lg->n < AD_MAX) {
			lg->at[lg->n] = *pkt;
			lg->dir[lg->n] = dir;
			lg->level[lg->n++] = a->level;
		}
	}
}

static void
test_adapt_policy(void)
{
	static const struct fec_params want_p[FEC_ADAPT_LEVELS] = {{FEC_MODE_XOR, 32, 4, 1},
								   {FEC_MODE_XOR, 16, 4, 1},
								   {FEC_MODE_RS, 32, 1, 2},
								   {FEC_MODE_RS, 32, 1, 4},
								   {FEC_MODE_RS, 16, 1, 4}};
	struct fec_adapt a;
	struct ad_log lg = {0};
	uint32_t pkt = 1, up, down;

	for (unsigned l = 0; l < FEC_ADAPT_LEVELS; l++) {
		const struct fec_params *p = fec_adapt_params(l);

		CHECK(p && p->mode == want_p[l].mode && p->k == want_p[l].k &&
		      p->d == want_p[l].d && p->r == want_p[l].r && fec_params_check(p) == 0);
		CHECK_EQ(fec_adapt_level_of(p), (int)l);
		fec_adapt_thresholds(l, &up, &down);
		CHECK(l + 1 == FEC_ADAPT_LEVELS || up > down); /* hysteresis */
	}
	CHECK(fec_adapt_params(FEC_ADAPT_LEVELS) == NULL);
	fec_adapt_init(&a, 0);
	ad_run(&a, &lg, &pkt, 5000, 0, 0); /* clean: nothing moves */
	CHECK_EQ(lg.n, 0);
	ad_run(&a, &lg, &pkt, 20000, 100, 0); /* 1 %: up, one level per hold/4 */
	ad_run(&a, &lg, &pkt, 30000, 0, 0);   /* clean: down, one level per hold */
	ad_run(&a, &lg, &pkt, 5000, 0, 5);    /* a burst of 5 > D = 4 at level 0 */
	/* up at window ends (1024 packets) as the estimate passes 2e-3, 5e-3 and
	 * 1e-2; down two windows below the level's "down" and >= hold after the
	 * last change; the burst of 5 moves up at once, at the packet after it */
	static const uint32_t at[] = {6144, 7168, 13312, 28672, 30720, 32768, 55006, 59392};
	static const unsigned lv[] = {1, 2, 3, 2, 1, 0, 1, 0};

	CHECK_EQ(lg.n, 8);
	for (unsigned i = 0; i < lg.n && i < 8; i++) {
		CHECK_EQ(lg.at[i], at[i]);
		CHECK_EQ(lg.level[i], lv[i]);
	}
	CHECK_EQ(a.st[FEC_AD_UP_LOSS], 3);
	CHECK_EQ(a.st[FEC_AD_UP_BURST], 1);
	CHECK_EQ(a.st[FEC_AD_DOWN], 4);
	CHECK_EQ(a.st[FEC_AD_LOST], 200 + 5);
	CHECK_EQ(a.st[FEC_AD_SAMPLES], 60000);
}

static void
test_param_change(void)
{
	/* xor:8,2 for 40 frames, a PROPOSE of xor:4,4 from the receiver; the next group uses it */
	struct fec_params p0 = {FEC_MODE_XOR, 8, 2, 1}, p1 = {FEC_MODE_XOR, 4, 4, 1}, q;
	struct fec_enc *e = fec_enc_create(&p0);
	struct fec_dec *d = fec_dec_create(0);
	static struct wire w, dropped;
	static struct rx rx;
	uint8_t nb[256], tmpl[4352];
	struct fec_frh h = {.type = FEC_T_PROPOSE, .p = p1};
	int tl, n;
	struct drops dr = {.data = {103, 130, 140, 141, 142, 143}, .nd = 6};

	memset(&rx, 0, sizeof(rx));
	make_stream(e, &w, 20, 100, 4, false); /* 100..119: one group of 16 + 4 */
	tl = mk_frame(tmpl, 0x11, 5, 0, 4, 1); /* an ACK as the template of the reverse path */
	n = fec_build_negotiate(nb, sizeof(nb), tmpl, (size_t)tl, 0x11, 0, &h);
	CHECK(n > 0);
	CHECK_EQ(fec_enc_rx_negotiate(e, nb, (size_t)n), 0);
	fec_enc_params(e, &q);
	CHECK_EQ(q.k, 8); /* not yet: the group 116..131 is open */
	make_stream(e, &w, 60, 120, 4, false);
	fec_enc_params(e, &q);
	CHECK(q.k == 4 && q.d == 4);
	CHECK_EQ(fec_enc_stat(e, FEC_ES_COMMITS), 2);
	deliver(d, &w, drop_list, &dr, &rx, &dropped);
	fec_dec_params(d, 0, &q);
	CHECK(q.k == 4 && q.d == 4);
	/* 103 (old grid), 130 (old grid, last group), 140..143 (new grid: D = 4 blocks) */
	CHECK_EQ(rx.delivered.n, 6);
	CHECK_EQ(count_exact(&rx.delivered, &dropped), 6);
	CHECK_EQ(fec_dec_stat(d, FEC_DS_COMMITS), 2);
	/* a bad proposal is refused and counted */
	h.p.k = 0;
	n = fec_build_negotiate(nb, sizeof(nb), tmpl, (size_t)tl, 0x11, 0, &h);
	CHECK_EQ(fec_enc_rx_negotiate(e, nb, (size_t)n), -1);
	CHECK_EQ(fec_enc_stat(e, FEC_ES_BAD_PROPOSALS), 1);
	wire_free(&w);
	wire_free(&dropped);
	wire_free(&rx.delivered);
	fec_enc_free(e);
	fec_dec_free(d);
}

/* XOR -> RS at a group boundary (fec_enc_set_params): two losses in one RS block rebuilt */
static void
test_mode_change(void)
{
	struct fec_params p0 = {FEC_MODE_XOR, 8, 2, 1}, p1 = {FEC_MODE_RS, 8, 1, 2}, q;
	struct fec_enc *e = fec_enc_create(&p0);
	struct fec_dec *d = fec_dec_create(0);
	static struct wire w, dropped;
	static struct rx rx;
	struct drops dr = {.data = {105, 140, 141}, .nd = 3};

	memset(&rx, 0, sizeof(rx));
	make_stream(e, &w, 24, 100, 4, false); /* 100..115 one group; 116..123 open */
	CHECK_EQ(fec_enc_set_params(e, &p1), 0);
	make_stream(e, &w, 32, 124, 4, false); /* 124..131 closes the XOR group; RS from 132 */
	fec_enc_params(e, &q);
	CHECK(q.mode == FEC_MODE_RS && q.r == 2);
	deliver(d, &w, drop_list, &dr, &rx, &dropped);
	fec_dec_params(d, 0, &q);
	CHECK(q.mode == FEC_MODE_RS && q.k == 8 && q.r == 2);
	CHECK_EQ(rx.delivered.n, 3);
	CHECK_EQ(count_exact(&rx.delivered, &dropped), 3);
	CHECK_EQ(rx.nunrec, 0);
	wire_free(&w);
	wire_free(&dropped);
	wire_free(&rx.delivered);
	fec_enc_free(e);
	fec_dec_free(d);
}

static void
test_flush_partial(void)
{
	struct fec_enc *e = fec_enc_create(&X32_4);
	struct fec_dec *d = fec_dec_create(0);
	static struct wire w, dropped;
	static struct rx rx;
	struct drops dr = {.data = {105, 130}, .nd = 2};

	memset(&rx, 0, sizeof(rx));
	make_stream(e, &w, 10, 100, 4, false);
	fec_enc_flush(e, emit_cb, &w); /* 4 partial repairs */
	CHECK_EQ(fec_enc_stat(e, FEC_ES_PARTIAL), 4);
	make_stream(e, &w, 40, 110, 4, false); /* a new grid from 110, announced by a COMMIT */
	CHECK_EQ(fec_enc_stat(e, FEC_ES_COMMITS), 2);
	fec_enc_flush(e, emit_cb, &w); /* the end of the burst: 130's block is partial too */
	CHECK_EQ(fec_enc_stat(e, FEC_ES_PARTIAL), 8);
	deliver(d, &w, drop_list, &dr, &rx, &dropped);
	fec_dec_flush(d, ev_cb, &rx);
	CHECK_EQ(rx.delivered.n, 2);
	CHECK_EQ(count_exact(&rx.delivered, &dropped), 2);
	CHECK_EQ(rx.nunrec, 0);
	wire_free(&w);
	wire_free(&dropped);
	wire_free(&rx.delivered);
	fec_enc_free(e);
	fec_dec_free(d);
}

/* Routers change TTL and ECN of the frames that arrive: the rebuilt one is still exact. */
static void
test_variant_fields(void)
{
	struct fec_enc *e = fec_enc_create(&X8_1);
	struct fec_dec *d = fec_dec_create(0);
	static struct wire w, dropped;
	static struct rx rx;
	struct drops dr = {.data = {102}, .nd = 1};

	memset(&rx, 0, sizeof(rx));
	make_stream(e, &w, 16, 100, 4, false);
	for (int i = 0; i < w.n; i++) {
		struct wf *f = &w.f[i];

		if (f->kind == 0 && f->psn != 102) {
			f->b[14 + 8] -= 3;			  /* TTL */
			net_ip_set_ecn(f->b + 14, i & 1 ? 3 : 1); /* CE / ECT(1) */
			net_ip4_fix_csum(f->b + 14);
		}
	}
	deliver(d, &w, drop_list, &dr, &rx, &dropped);
	CHECK_EQ(rx.delivered.n, 1);
	CHECK_EQ(count_exact(&rx.delivered, &dropped), 1);
	wire_free(&w);
	wire_free(&dropped);
	wire_free(&rx.delivered);
	fec_enc_free(e);
	fec_dec_free(d);
}

/* Hostile repairs: refused with a count, never a crash, never a wrong frame delivered. */
static void
test_hostile(void)
{
	struct fec_enc *e = fec_enc_create(&X8_1);
	struct fec_dec *d = fec_dec_create(4);
	static struct wire w, dropped;
	static struct rx rx;
	struct drops dr = {.data = {101}, .nd = 1};
	int rep = -1;

	memset(&rx, 0, sizeof(rx));
	make_stream(e, &w, 8, 100, 4, false);
	for (int i = 0; i < w.n; i++)
		if (w.f[i].kind == 1)
			rep = i;
	CHECK(rep >= 0);
	{
		uint8_t b[4352];
		struct wf *f = &w.f[rep];
		size_t frh = 14 + 20 + 8 + 12;
		static const struct {
			int off;
			uint8_t val;
		} bad[] = {{0, 9}, {0, 2}, {2, 0}, {3, 0}, {3, 65}, {4, 17},
			   {5, 2}, {6, 1}, {7, 1}, {1, 2}, {16, 1}, {20, 0xff}};

		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			memcpy(b, f->b, f->n);
			b[frh + (size_t)bad[k].off] = bad[k].val;
			roce_icrc_put(b + f->n - 4, roce_icrc_calc(b + 14, f->n - 4 - 14, 4));
			CHECK(fec_dec_frame(d, b, f->n, deliver_cb, ev_cb, &rx) < 0);
		}
		CHECK_EQ(fec_dec_stat(d, FEC_DS_BAD), sizeof(bad) / sizeof(bad[0]));
		/* bad ICRC */
		memcpy(b, f->b, f->n);
		b[f->n - 1] ^= 1;
		CHECK_EQ(fec_dec_frame(d, b, f->n, deliver_cb, ev_cb, &rx), -FEC_E_ICRC);
		/* every truncation */
		for (size_t n = 0; n < f->n; n++)
			CHECK(fec_dec_frame(d, f->b, n, deliver_cb, ev_cb, &rx) <= 0 ||
			      n >= f->n - 4);
	}
	/* a forged payload with a valid ICRC: the rebuilt frame fails lib/roce's ICRC */
	{
		struct wf *f = &w.f[rep];

		f->b[14 + 20 + 8 + 12 + FEC_FRH_LEN + 100] ^= 0x5a;
		roce_icrc_put(f->b + f->n - 4, roce_icrc_calc(f->b + 14, f->n - 4 - 14, 4));
	}
	deliver(d, &w, drop_list, &dr, &rx, &dropped);
	CHECK_EQ(rx.delivered.n, 0);
	CHECK_EQ(fec_dec_stat(d, FEC_DS_REBUILD_BAD), 1);
	CHECK_EQ(rx.nunrec, 1);
	wire_free(&w);
	wire_free(&dropped);
	wire_free(&rx.delivered);
	fec_enc_free(e);
	fec_dec_free(d);
}

/* Many blocks, few slots: memory stays bounded, evictions are counted as unrecoverable. */
static void
test_bounded(void)
{
	struct fec_params p = {FEC_MODE_XOR, 8, 16, 1};
	struct fec_enc *e = fec_enc_create(&p);
	struct fec_dec *d = fec_dec_create(4);
	static struct wire w, dropped;
	static struct rx rx;
	struct drops dr = {.data = {100, 101, 102, 103, 104, 105}, .nd = 6};

	memset(&rx, 0, sizeof(rx));
	make_stream(e, &w, 256, 100, 4, false);
	deliver(d, &w, drop_list, &dr, &rx, &dropped);
	fec_dec_flush(d, ev_cb, &rx);
	CHECK(fec_dec_stat(d, FEC_DS_EVICTED) > 0);
	CHECK_EQ(rx.delivered.n + rx.nunrec, 6);
	CHECK_EQ(count_exact(&rx.delivered, &dropped), rx.delivered.n);
	wire_free(&w);
	wire_free(&dropped);
	wire_free(&rx.delivered);
	fec_enc_free(e);
	fec_dec_free(d);
}

/*
 * RS against ISA-L's own routines: the encoder's repairs equal ec_encode_data
 * over the K symbols; erasing R symbols and decoding with ISA-L's standard
 * procedure (survivor rows of the encode matrix, gf_invert_matrix,
 * ec_encode_data) gives the originals back.
 */
static void
test_rs_isal_reference(void)
{
	enum { K = 8, R = 3 };
	struct fec_params p = {FEC_MODE_RS, K, 1, R};
	struct fec_enc *e = fec_enc_create(&p);
	static struct wire w;
	static uint8_t sym[K + R][FEC_SYM_MAX], ref[R][FEC_SYM_MAX];
	uint8_t a[(K + R) * K], g[32 * K * R], *dp[K + R], *rp[R];
	int nsym = 0, nrep = 0, stream;
	uint32_t psn, maxlen = 0;

	make_stream(e, &w, K, 400, 4, false);
	memset(sym, 0, sizeof(sym));
	for (int i = 0; i < w.n; i++) {
		struct fec_pkt pk;

		if (w.f[i].kind == 0) {
			int n = fec_symbol(w.f[i].b, w.f[i].n, sym[nsym++], &stream, &psn);

			if ((uint32_t)n > maxlen)
				maxlen = (uint32_t)n;
		} else if (w.f[i].kind == 1 && fec_parse(w.f[i].b, w.f[i].n, &pk, true) == 0) {
			net_put_be16(sym[K + pk.frh.row], pk.frh.len_code);
			memcpy(sym[K + pk.frh.row] + 2, w.f[i].b + pk.payload_off, pk.payload_len);
			nrep++;
		}
	}
	CHECK_EQ(nsym, K);
	CHECK_EQ(nrep, R);
	gf_gen_cauchy1_matrix(a, K + R, K);
	ec_init_tables(K, R, a + K * K, g);
	for (int i = 0; i < K; i++)
		dp[i] = sym[i];
	for (int r = 0; r < R; r++)
		rp[r] = ref[r];
	ec_encode_data((int)maxlen, K, R, g, dp, rp);
	for (int r = 0; r < R; r++)
		CHECK_MEM(ref[r], sym[K + r], maxlen);
	/* erase data 1, 4, 6; decode from the survivors (data 0,2,3,5,7 and the 3 repairs) */
	{
		static const int lost[R] = {1, 4, 6};
		int surv[K], ns = 0;
		uint8_t b[K * K], inv[K * K], dm[R * K], t[32 * K * R];
		static uint8_t outb[R][FEC_SYM_MAX];
		uint8_t *src[K], *out[R];

		for (int i = 0; i < K + R && ns < K; i++) {
			bool l = false;

			for (int x = 0; x < R; x++)
				l |= lost[x] == i;
			if (!l)
				surv[ns++] = i;
		}
		for (int r = 0; r < K; r++)
			memcpy(b + r * K, a + surv[r] * K, K);
		CHECK_EQ(gf_invert_matrix(b, inv, K), 0);
		for (int x = 0; x < R; x++)
			memcpy(dm + x * K, inv + lost[x] * K, K);
		ec_init_tables(K, R, dm, t);
		for (int r = 0; r < K; r++)
			src[r] = sym[surv[r]];
		for (int x = 0; x < R; x++)
			out[x] = outb[x];
		ec_encode_data((int)maxlen, K, R, t, src, out);
		for (int x = 0; x < R; x++)
			CHECK_MEM(outb[x], sym[lost[x]], maxlen);
	}
	wire_free(&w);
	fec_enc_free(e);
}

/* Vectors for the independent Python XOR check (tests/python/test_fec_ref.py). */
static void
test_write_vectors(void)
{
	const char *path = getenv("RW_FEC_VECTORS");
	struct fec_params p = {FEC_MODE_XOR, 8, 2, 1};
	struct fec_enc *e;
	static struct wire w;
	FILE *f;

	if (!path) {
		CHECK(1);
		return;
	}
	rng = 12345; /* the same frames whatever ran before */
	/* XOR 8,2 over IPv4 (requests across the PSN wrap, READ responses), then over IPv6 */
	e = fec_enc_create(&p);
	make_stream(e, &w, 32, 0xfffff0, 4, true);
	fec_enc_free(e);
	e = fec_enc_create(&p);
	make_stream(e, &w, 16, 0x000010, 6, false);
	fec_enc_flush(e, emit_cb, &w);
	fec_enc_free(e);
	/* RS 8,3 over IPv4 */
	p = (struct fec_params){FEC_MODE_RS, 8, 1, 3};
	e = fec_enc_create(&p);
	make_stream(e, &w, 16, 0x000200, 4, false);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f) {
		/* pcap: the python test reads it with Scapy's rdpcap */
		uint32_t gh[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};

		fwrite(gh, 4, 6, f);
		for (int i = 0; i < w.n; i++) {
			uint32_t rh[4] = {0, (uint32_t)i, (uint32_t)w.f[i].n, (uint32_t)w.f[i].n};

			fwrite(rh, 4, 4, f);
			fwrite(w.f[i].b, 1, w.f[i].n, f);
		}
		fclose(f);
	}
	wire_free(&w);
	fec_enc_free(e);
}

RW_TEST_MAIN(RW_TEST(test_params), RW_TEST(test_adapt_policy), RW_TEST(test_no_loss),
	     RW_TEST(test_single_loss), RW_TEST(test_psn_wrap), RW_TEST(test_two_losses_one_block),
	     RW_TEST(test_burst_interleave), RW_TEST(test_repair_lost), RW_TEST(test_rs),
	     RW_TEST(test_read_response), RW_TEST(test_param_change), RW_TEST(test_mode_change),
	     RW_TEST(test_flush_partial), RW_TEST(test_variant_fields), RW_TEST(test_hostile),
	     RW_TEST(test_bounded), RW_TEST(test_rs_isal_reference), RW_TEST(test_write_vectors))
