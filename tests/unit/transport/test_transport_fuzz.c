/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz-style robustness: random and mutated frames into devices whose QPs are
 * in RTS. Valid frames of every kind (requests and responses) are captured
 * from a real exchange, then mutated: bit flips anywhere, header fields set to
 * hostile values with the ICRC recomputed so that the transport itself (not
 * only the parser) sees them, truncation, and pure noise. Nothing may crash
 * (this test also runs under ASan/UBSan), every frame must be accounted for,
 * and memory outside the responder's MR must stay untouched.
 */
#include <stdlib.h>

#include "net_bytes.h"
#include "roce_icrc.h"
#include "roce_pkt.h"
#include "rw_test.h"
#include "tr_harness.h"

#define GUARD 4096u
#define CORPUS_MAX 512
#define ITERATIONS 40000 /* TR_FUZZ_ITERATIONS and TR_FUZZ_SEED override, for longer runs */

struct corpus {
	uint8_t *f[CORPUS_MAX];
	size_t len[CORPUS_MAX];
	unsigned int n;
};

static void
corpus_take(struct corpus *c, struct tr_wire *w, int dir)
{
	for (struct tr_frame *f = w->q[dir].head; f && c->n < CORPUS_MAX; f = f->next) {
		c->f[c->n] = malloc(f->len);
		memcpy(c->f[c->n], f->data, f->len);
		c->len[c->n++] = f->len;
	}
}

/* Requests of every opcode from A, and B's responses to them. */
static void
corpus_build(struct corpus *c, struct tr_wire *w)
{
	struct tr_side *a = &w->side[TR_A], *b = &w->side[TR_B];
	uint32_t base = GUARD; /* inside B's MR */

	for (int i = 0; i < 4; i++)
		tr_post_recv(b, (uint64_t)i, base + 100000, 10000);
	w->capture_only = true;
	CHECK_EQ(tr_post_send(a, IBV_WR_SEND, 1, base, 3000, 0, 0), 0);
	CHECK_EQ(tr_post_imm(a, IBV_WR_SEND_WITH_IMM, 2, base, 100, 0, 5), 0);
	CHECK_EQ(tr_post_send(a, IBV_WR_RDMA_WRITE, 3, base, 2500, base, 0), 0);
	CHECK_EQ(tr_post_imm(a, IBV_WR_RDMA_WRITE_WITH_IMM, 4, base, 10, base + 8, 6), 0);
	CHECK_EQ(tr_post_send(a, IBV_WR_RDMA_READ, 5, base, 3000, base, 0), 0);
	CHECK_EQ(tr_post_atomic(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 6, base, base + 64, 1, 0), 0);
	CHECK_EQ(tr_post_atomic(a, IBV_WR_ATOMIC_CMP_AND_SWP, 7, base, base + 64, 1, 2), 0);
	tr_run(w, 1000);
	corpus_take(c, w, TR_A);
	while (tr_deliver_one(w, TR_A))
		;
	tr_poll(w);
	corpus_take(c, w, TR_B);
	while (tr_deliver_one(w, TR_B))
		;
	w->capture_only = false;
	tr_run(w, 100000);
}

/* Overwrite a header field of a parsed frame with a hostile value, keep the ICRC valid. */
static void
mutate_field(uint8_t *f, size_t len, uint64_t *rng, const struct tr_wire *w)
{
	const struct tr_side *b = &w->side[TR_B];
	uint64_t mr_end = (uintptr_t)b->buf + b->buf_size - GUARD;
	struct roce_pkt p;
	uint8_t *bth, *ext;
	uint64_t r = tr_rand(rng);

	if (roce_parse(f, len, &p, ROCE_PARSE_NO_ICRC) != 0)
		return;
	bth = f + p.bth_off;
	ext = bth + ROCE_BTH_LEN;
	switch (r % 10) {
	case 0: /* any opcode, keeping the length: the parser or the QP must reject mismatches */
		bth[0] = (uint8_t)(r >> 8);
		break;
	case 1: /* PSN near the expected one */
		net_put_be24(bth + 9, (p.h.bth.psn + (uint32_t)(r >> 8) % 9 - 4) & 0xffffff);
		break;
	case 2: /* pad count and flags */
		bth[1] = (uint8_t)((bth[1] & 0x0f) | ((r >> 8) & 0xf0));
		bth[8] ^= 0x80;
		break;
	case 3: /* RETH / AtomicETH VA: anywhere, or just past B's MR */
		if (p.payload_off - p.bth_off >= ROCE_BTH_LEN + 8)
			net_put_be64(ext, (r & 1) ? r >> 1 : mr_end - (r >> 8) % 64);
		break;
	case 4: /* R_Key */
		if (p.payload_off - p.bth_off >= ROCE_BTH_LEN + 12)
			net_put_be32(ext + 8, (uint32_t)(r >> 8));
		break;
	case 5: /* DMA length */
		if (p.payload_off - p.bth_off >= ROCE_BTH_LEN + 16)
			net_put_be32(ext + 12, (r & 1) ? (uint32_t)(r >> 8) : 0xffffffffu);
		break;
	case 6: /* AETH syndrome and MSN */
		ext[0] = (uint8_t)(r >> 8);
		break;
	default: /* a few random bytes after the BTH */
		for (int i = 0; i < 3; i++) {
			size_t span = p.frame_len - ROCE_ICRC_LEN - p.bth_off - ROCE_BTH_LEN;

			if (span)
				ext[tr_rand(rng) % span] ^= (uint8_t)(1u << (tr_rand(rng) % 8));
		}
		break;
	}
	roce_icrc_update(f, &p);
}

static size_t
make_frame(uint8_t *out, const struct corpus *c, uint64_t *rng, const struct tr_wire *w)
{
	const unsigned int k = (unsigned int)(tr_rand(rng) % c->n);
	size_t len = c->len[k];
	uint64_t r = tr_rand(rng);

	memcpy(out, c->f[k], len);
	switch (r % 8) {
	case 0: /* bit flips anywhere: mostly ICRC or header errors */
		for (unsigned int i = 0; i < 1 + r % 4; i++)
			out[tr_rand(rng) % len] ^= (uint8_t)(1u << (tr_rand(rng) % 8));
		return len;
	case 1: /* truncated */
		return (size_t)(tr_rand(rng) % len);
	case 2: /* noise of any length, sometimes behind a valid Ethernet/IP/UDP prefix */
		len = (size_t)(tr_rand(rng) % 1600);
		for (size_t i = (r & 8) ? 42 : 0; i < len; i++)
			out[i] = (uint8_t)tr_rand(rng);
		return len;
	default: /* field mutations with a valid ICRC: the transport checks see them */
		for (unsigned int i = 0; i < 1 + (r >> 8) % 3; i++)
			mutate_field(out, len, rng, w);
		return len;
	}
}

static void
guards_set(struct tr_side *s)
{
	memset(s->buf, 0xa5, GUARD);
	memset(s->buf + s->buf_size - GUARD, 0x5a, GUARD);
}

static bool
guards_ok(const struct tr_side *s)
{
	for (uint32_t i = 0; i < GUARD; i++)
		if (s->buf[i] != 0xa5 || s->buf[s->buf_size - GUARD + i] != 0x5a)
			return false;
	return true;
}

static const char *fuzz_recovery; /* NULL: gbn */

static void
t_fuzz(void)
{
	struct tr_opts o = {
	    .mr_guard = GUARD, .buf_size = 256 * 1024, .timeout = 8, .recovery = fuzz_recovery};
	static uint8_t frame[4096];
	struct tr_wire w;
	struct corpus c = {.n = 0};
	const char *env_iter = getenv("TR_FUZZ_ITERATIONS"), *env_seed = getenv("TR_FUZZ_SEED");
	unsigned int iterations = env_iter ? (unsigned int)strtoul(env_iter, NULL, 0) : ITERATIONS;
	uint64_t rng = env_seed ? strtoull(env_seed, NULL, 0) : 0xf022, accepted = 0, rejected = 0;
	struct ibv_wc wc[64];
	struct roce_stats sb;

	tr_init(&w, &o);
	corpus_build(&c, &w);
	CHECK(c.n >= 12);
	if (c.n == 0)
		return;
	guards_set(&w.side[TR_A]);
	guards_set(&w.side[TR_B]);
	for (unsigned int i = 0; i < iterations; i++) {
		size_t len = make_frame(frame, &c, &rng, &w);
		int to = (tr_rand(&rng) % 4) ? TR_B : TR_A; /* requests mostly, responses too */

		if (roce_dev_rx(w.side[to].dev, frame, len) == 0)
			accepted++;
		else
			rejected++;
		if (i % 64 == 0) {
			/* let the engine answer, time pass, and start over when a QP gave up */
			w.now += 1000000;
			tr_poll(&w);
			while (tr_discard_one(&w, TR_A) || tr_discard_one(&w, TR_B))
				;
			for (int s = 0; s < 2; s++) {
				while (tr_poll_cq(&w.side[s], false, wc, 64) > 0)
					;
				while (tr_poll_cq(&w.side[s], true, wc, 64) > 0)
					;
			}
			if (roce_qp_state(w.side[TR_A].qp) != IBV_QPS_RTS ||
			    roce_qp_state(w.side[TR_B].qp) != IBV_QPS_RTS)
				tr_reconnect(&w);
			for (int k = 0; k < 2; k++)
				tr_post_recv(&w.side[TR_B], k, GUARD + 100000, 10000);
		}
	}
	CHECK(guards_ok(&w.side[TR_A]));
	CHECK(guards_ok(&w.side[TR_B]));
	roce_dev_stats(w.side[TR_B].dev, &sb);
	/* every frame was counted, and each kind of defence fired */
	CHECK(accepted > 1000 && rejected > 1000);
	CHECK(sb.v[ROCE_STAT_RX_DROP_ICRC] > 0);
	CHECK(sb.v[ROCE_STAT_RX_DROP_MALFORMED] > 0);
	CHECK(sb.v[ROCE_STAT_RX_BAD_RKEY] > 0);
	CHECK(sb.v[ROCE_STAT_RX_INV_REQ] > 0);
	CHECK(sb.v[ROCE_STAT_RX_OOS] + sb.v[ROCE_STAT_RX_DUP_REQ] > 0);
	CHECK(sb.v[ROCE_STAT_RX_PKTS] >= iterations / 2);
	if (fuzz_recovery) { /* the out-of-order placement saw both kinds */
		CHECK(sb.v[ROCE_STAT_RX_OOO_PLACED] > 0);
		CHECK(sb.v[ROCE_STAT_RX_OOO_UNPLACED] > 0);
	}
	/* and the pair still works afterwards (frames of the old incarnation discarded) */
	while (tr_discard_one(&w, TR_A) || tr_discard_one(&w, TR_B))
		;
	tr_reconnect(&w);
	for (int s = 0; s < 2; s++)
		while (tr_poll_cq(&w.side[s], false, wc, 64) > 0)
			;
	tr_fill(&w.side[TR_A], GUARD, 5000, 1);
	tr_post_send(&w.side[TR_A], IBV_WR_RDMA_WRITE, 99, GUARD, 5000, GUARD + 20000,
		     IBV_SEND_SIGNALED);
	tr_run(&w, 100000);
	CHECK_EQ(tr_poll_cq(&w.side[TR_A], false, wc, 1), 1);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK_MEM(w.side[TR_B].buf + GUARD + 20000, w.side[TR_A].buf + GUARD, 5000);
	for (unsigned int i = 0; i < c.n; i++)
		free(c.f[i]);
	tr_fini(&w);
}

/* Frames with random bytes only, of every length from 0 to 200, into an RC and a UD device. */
static void
t_noise(void)
{
	struct tr_opts o = {.type = IBV_QPT_UD};
	static uint8_t f[256];
	struct tr_wire w;
	uint64_t rng = 1;

	tr_init(&w, &o);
	for (int round = 0; round < 50; round++) {
		for (size_t len = 0; len <= 200; len++) {
			for (size_t i = 0; i < len; i++)
				f[i] = (uint8_t)tr_rand(&rng);
			CHECK(roce_dev_rx(w.side[TR_B].dev, f, len) > 0);
		}
	}
	CHECK_EQ(tr_dev_stat(&w.side[TR_B], ROCE_STAT_RX_PKTS), 50 * 201);
	tr_fini(&w);
}

/*
 * The same against the selective modes: their requests carry the extension
 * opcodes (self-placing WRITE, SPETH SENDs), and mutated PSNs reach the
 * out-of-order placement with hostile RETH/SPETH fields.
 */
static void
t_fuzz_gbone(void)
{
	fuzz_recovery = "gbone";
	t_fuzz();
	fuzz_recovery = NULL;
}

static void
t_fuzz_irn(void)
{
	fuzz_recovery = "irn";
	t_fuzz();
	fuzz_recovery = NULL;
}

RW_TEST_MAIN(RW_TEST(t_fuzz), RW_TEST(t_fuzz_gbone), RW_TEST(t_fuzz_irn), RW_TEST(t_noise))
