/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file test_vrp.c
 * lib/vrp: the incremental anticipation receiver (A. Denis, "Variable
 * Reliability Protocol", LIP RR-2000-11, §2.3.4 / §3.2.2) against the two
 * worked examples of §2.3.5, rebuilt from the narrative (the figures are not
 * in the text), and against hand-computed traces. Every trace is also checked
 * by a brute-force oracle written independently of the incremental code
 * (every window of W packets, every consecutive run, every critical packet,
 * loss_cnt recounted from the cells), and a negative control shows that the
 * oracle rejects a state with one tolerated loss too many.
 */
#include "rw_test.h"
#include "vrp.h"

#define MTU 1024u
#define NMAX 4096

struct ev {
	uint32_t idx;
	enum vrp_decision d;
	enum vrp_nack_reason r;
	uint32_t loss_cnt;  /* rx->loss_cnt right after the step */
	uint32_t cons_loss; /* rx->cons_loss right after the step */
};

struct trace {
	struct vrp_rx rx;
	uint8_t cell[NMAX];
	struct ev ev[NMAX];
	unsigned nev;
};

static void
rec_gap(void *ctx, uint32_t idx, enum vrp_decision d, enum vrp_nack_reason r)
{
	struct trace *t = ctx;
	if (t->nev < NMAX)
		t->ev[t->nev++] = (struct ev){idx, d, r, t->rx.loss_cnt, t->rx.cons_loss};
}

static void
tr_init_params(struct trace *t, uint32_t w, uint32_t l, uint32_t c, uint32_t npkts)
{
	const char *err = NULL;
	struct vrp_params p = {.window = w, .max_loss = l, .max_cons = c};
	memset(t, 0, sizeof(*t));
	CHECK_EQ(vrp_rx_init(&t->rx, &p, (uint64_t)npkts * MTU, MTU, t->cell, &err), 0);
}

static void
tr_init_tol(struct trace *t, const struct vrp_tolerance *tol, uint64_t len)
{
	const char *err = NULL;
	struct vrp_params p;
	memset(t, 0, sizeof(*t));
	CHECK_EQ(vrp_tolerance_to_params(tol, len, MTU, &p, t->cell, &err), 0);
	CHECK_EQ(vrp_rx_init(&t->rx, &p, len, MTU, t->cell, &err), 0);
}

static struct vrp_rx_out
arrive(struct trace *t, uint32_t idx)
{
	struct vrp_rx_out o;
	vrp_rx_packet(&t->rx, idx, &o, rec_gap, t);
	return o;
}

/* Arrivals a..b (inclusive) in order. */
static struct vrp_rx_out
arrive_range(struct trace *t, uint32_t a, uint32_t b)
{
	struct vrp_rx_out o = {0};
	for (uint32_t i = a; i <= b; i++)
		o = arrive(t, i);
	return o;
}

static bool
is_tol(const struct trace *t, uint32_t i)
{
	return (t->cell[i] & (VRP_CELL_VALID | VRP_CELL_RECEIVED)) == VRP_CELL_VALID;
}

static bool
is_waiting(const struct trace *t, uint32_t i)
{
	return (t->cell[i] & VRP_CELL_WAITING) != 0;
}

/*
 * The oracle, independent of the incremental code: over cells[0..n) (only
 * those below next_exp are decided), no window of w consecutive packets holds
 * more than l tolerated losses, no run of tolerated losses is longer than c,
 * no required packet is a tolerated loss. Returns true if the state keeps the
 * tolerance.
 */
static bool
oracle_ok(const uint8_t *cell, uint32_t n, uint32_t w, uint32_t l, uint32_t c)
{
	for (uint32_t s = 0; s < n; s++) {
		uint32_t cnt = 0;
		for (uint32_t k = s; k < n && k < s + w; k++)
			if ((cell[k] & (VRP_CELL_VALID | VRP_CELL_RECEIVED)) == VRP_CELL_VALID)
				cnt++;
		if (cnt > l)
			return false;
	}
	uint32_t run = 0;
	for (uint32_t k = 0; k < n; k++) {
		bool lost = (cell[k] & (VRP_CELL_VALID | VRP_CELL_RECEIVED)) == VRP_CELL_VALID;
		if (lost && (cell[k] & VRP_CELL_REQUIRED))
			return false;
		run = lost ? run + 1 : 0;
		if (run > c)
			return false;
	}
	return true;
}

/* loss_cnt recounted: tolerated losses among the window packets preceding next_exp. */
static uint32_t
recount(const struct trace *t)
{
	uint32_t cnt = 0, ne = t->rx.next_exp, w = t->rx.p.window;
	for (uint32_t k = ne > w ? ne - w : 0; k < ne; k++)
		cnt += is_tol(t, k);
	return cnt;
}

static void
check_oracle(const struct trace *t)
{
	CHECK(oracle_ok(t->cell, t->rx.npkts, t->rx.p.window, t->rx.p.max_loss, t->rx.p.max_cons));
	CHECK_EQ(t->rx.loss_cnt, recount(t));
}

/*
 * §2.3.5, first example: "The window size is 6, the maximum loss rate is one
 * packet per window. The loss of packet 2 was allowed. loss_cnt is 1. Packet
 * 7 arrives, packet 6 is lost ... loss_cnt is now 2, which is not allowed. We
 * send a NACK and continue the history window update. loss_cnt is then only 1
 * because packet 6 is not lost: it has to arrive."
 */
static void
test_paper_example_rate(void)
{
	static struct trace t;
	struct vrp_rx_out o;

	tr_init_params(&t, 6, 1, UINT32_MAX, 12);
	arrive_range(&t, 0, 1);
	o = arrive_range(&t, 3, 5);
	CHECK_EQ(t.nev, 1);
	CHECK_EQ(t.ev[0].idx, 2);
	CHECK_EQ(t.ev[0].d, VRP_TOLERATE);
	CHECK_EQ(t.rx.loss_cnt, 1); /* "loss_cnt is 1" */
	CHECK_EQ(t.rx.next_exp, 6);
	CHECK_EQ(t.rx.wait_point, 6);
	CHECK_EQ(o.cum_ack, 6);

	o = arrive(&t, 7); /* "Packet 7 arrives, packet 6 is lost" */
	CHECK_EQ(o.arrival, VRP_ARR_NEW);
	CHECK_EQ(t.nev, 2);
	CHECK_EQ(t.ev[1].idx, 6);
	CHECK_EQ(t.ev[1].d, VRP_NACK);
	CHECK_EQ(t.ev[1].r, VRP_NR_RATE);
	CHECK_EQ(t.ev[1].loss_cnt, 1); /* "loss_cnt is then only 1" */
	CHECK_EQ(o.nacked, 1);
	CHECK_EQ(o.tolerated, 0);
	CHECK(o.single_ack);
	CHECK_EQ(o.cum_ack, 6); /* waiting for 6 */
	CHECK(is_waiting(&t, 6));
	CHECK(is_tol(&t, 2));
	CHECK_EQ(t.rx.loss_cnt, 1); /* packet 1 left, packet 7 entered: "a valid state" */
	CHECK_EQ(t.rx.next_exp, 8);
	check_oracle(&t);

	/* The NACKed packet arrives: no loss variable changes, wait_point moves. */
	o = arrive(&t, 6);
	CHECK_EQ(o.arrival, VRP_ARR_RETRANS);
	CHECK_EQ(o.cum_ack, 8);
	CHECK_EQ(t.rx.loss_cnt, 1);
	o = arrive_range(&t, 8, 11);
	CHECK(o.complete);
	CHECK_EQ(o.cum_ack, 12);
	CHECK_EQ(t.rx.st.tolerated, 1);
	CHECK_EQ(t.rx.st.nacks, 1);
	CHECK_EQ(t.rx.st.nack_rate, 1);
	CHECK_EQ(t.rx.st.retrans, 1);

	struct vrp_range h[4];
	uint64_t bytes = 0;
	CHECK_EQ(vrp_rx_loss_map(&t.rx, h, 4, &bytes), 1);
	CHECK_EQ(h[0].off, 2 * MTU);
	CHECK_EQ(h[0].len, MTU);
	CHECK_EQ(bytes, MTU);
	check_oracle(&t);
}

/*
 * §2.3.5, second example: "The window size is 6, the maximum loss rate is two
 * packets per window, the maximum consecutive losses number is set to 1. For
 * some reason, 3 packets are lost in a row. We receive packet 10." Packet 3
 * was lost before (allowed: "Packet 3 leaves the window and lost packet 9
 * enters the window, so loss_cnt does not change").
 */
static void
test_paper_example_cons(void)
{
	static struct trace t;
	struct vrp_rx_out o;

	tr_init_params(&t, 6, 2, 1, 14);
	arrive_range(&t, 0, 2);
	arrive_range(&t, 4, 6);
	CHECK_EQ(t.nev, 1);
	CHECK_EQ(t.ev[0].idx, 3);
	CHECK_EQ(t.ev[0].d, VRP_TOLERATE);
	CHECK_EQ(t.rx.loss_cnt, 1);

	o = arrive(&t, 10);
	CHECK_EQ(t.nev, 4);
	/* 7: "Everything is ok, the loss is allowed." (1 left, received) */
	CHECK_EQ(t.ev[1].idx, 7);
	CHECK_EQ(t.ev[1].d, VRP_TOLERATE);
	CHECK_EQ(t.ev[1].loss_cnt, 2);
	CHECK_EQ(t.ev[1].cons_loss, 1);
	/* 8: "not allowed, since cons_loss would be 2 ... NACK for packet 8, we
	 * reset cons_loss ... and we do not increment loss_cnt." */
	CHECK_EQ(t.ev[2].idx, 8);
	CHECK_EQ(t.ev[2].d, VRP_NACK);
	CHECK_EQ(t.ev[2].r, VRP_NR_CONS);
	CHECK_EQ(t.ev[2].loss_cnt, 2);
	CHECK_EQ(t.ev[2].cons_loss, 0);
	/* 9: "Packet 3 leaves the window and lost packet 9 enters the window, so
	 * loss_cnt does not change. The loss of packet 9 is allowed, thanks to
	 * the anticipative algorithm." */
	CHECK_EQ(t.ev[3].idx, 9);
	CHECK_EQ(t.ev[3].d, VRP_TOLERATE);
	CHECK_EQ(t.ev[3].loss_cnt, 2);
	CHECK_EQ(t.ev[3].cons_loss, 1);
	/* "The final state is valid ... wait_point will be updated when we will
	 * receive packet 8." */
	CHECK_EQ(o.tolerated, 2);
	CHECK_EQ(o.nacked, 1);
	CHECK_EQ(o.cum_ack, 8);
	CHECK_EQ(t.rx.wait_point, 8);
	CHECK_EQ(t.rx.next_exp, 11);
	CHECK_EQ(t.rx.loss_cnt, 2); /* 4 left (received), 10 entered */
	check_oracle(&t);

	o = arrive(&t, 8);
	CHECK_EQ(o.arrival, VRP_ARR_RETRANS);
	CHECK_EQ(o.cum_ack, 11); /* "set to the next outstanding packet (or next_exp)" */
	o = arrive_range(&t, 11, 13);
	CHECK(o.complete);
	struct vrp_range h[4];
	CHECK_EQ(vrp_rx_loss_map(&t.rx, h, 4, NULL), 3); /* 3, 7, 9 */
	CHECK_EQ(h[0].off, 3 * MTU);
	CHECK_EQ(h[1].off, 7 * MTU);
	CHECK_EQ(h[2].off, 9 * MTU);
	check_oracle(&t);
}

/* The percent/bytes -> packets translation (§2.4.4), rounded down. */
static void
test_tolerance_translation(void)
{
	struct vrp_tolerance tol = {.window = 6, .max_burst = VRP_BURST_UNLIMITED};
	struct vrp_params p;
	static uint8_t cell[NMAX];
	const char *err = NULL;

	tol.loss_bp = 1667; /* 1 of 6 */
	CHECK_EQ(vrp_tolerance_to_params(&tol, 12 * MTU, MTU, &p, cell, &err), 0);
	CHECK_EQ(p.max_loss, 1);
	CHECK_EQ(p.max_cons, UINT32_MAX);
	tol.loss_bp = 1600; /* the paper's "16%" of 6 is 0.96 packet: rounded down */
	CHECK_EQ(vrp_tolerance_to_params(&tol, 12 * MTU, MTU, &p, cell, &err), 0);
	CHECK_EQ(p.max_loss, 0);
	tol.loss_bp = 3334;
	tol.max_burst = 1500; /* one whole packet */
	CHECK_EQ(vrp_tolerance_to_params(&tol, 12 * MTU, MTU, &p, cell, &err), 0);
	CHECK_EQ(p.max_loss, 2);
	CHECK_EQ(p.max_cons, 1);
	/* A message shorter than the window is judged over its own length. */
	struct vrp_tolerance s = {.loss_bp = 1000, .max_burst = VRP_BURST_UNLIMITED};
	CHECK_EQ(vrp_tolerance_to_params(&s, 10 * MTU, MTU, &p, cell, &err), 0);
	CHECK_EQ(p.window, 10);
	CHECK_EQ(p.max_loss, 1);
	CHECK_EQ(vrp_tolerance_to_params(&s, 9 * MTU, MTU, &p, cell, &err), 0);
	CHECK_EQ(p.max_loss, 0);
	/* Critical byte ranges flag every packet they touch. */
	s.n_critical = 2;
	s.critical[0] = (struct vrp_range){0, 1};
	s.critical[1] = (struct vrp_range){3 * MTU - 1, 2};
	CHECK_EQ(vrp_tolerance_to_params(&s, 10 * MTU, MTU, &p, cell, &err), 0);
	CHECK_EQ(cell[0], VRP_CELL_REQUIRED);
	CHECK_EQ(cell[1], 0);
	CHECK_EQ(cell[2], VRP_CELL_REQUIRED);
	CHECK_EQ(cell[3], VRP_CELL_REQUIRED);
	CHECK_EQ(cell[4], 0);
	/* Refused with one clear error. */
	s.critical[1] = (struct vrp_range){10 * MTU - 1, 2};
	err = NULL;
	CHECK_EQ(vrp_tolerance_to_params(&s, 10 * MTU, MTU, &p, cell, &err), -1);
	CHECK(err != NULL);
	s.critical[1] = (struct vrp_range){5, 0};
	CHECK_EQ(vrp_tolerance_to_params(&s, 10 * MTU, MTU, &p, cell, &err), -1);
	s.n_critical = VRP_CRITICAL_MAX + 1;
	CHECK_EQ(vrp_tolerance_to_params(&s, 10 * MTU, MTU, &p, cell, &err), -1);
	s.n_critical = 0;
	s.loss_bp = 10001;
	CHECK_EQ(vrp_tolerance_to_params(&s, 10 * MTU, MTU, &p, cell, &err), -1);
	s.loss_bp = 0;
	s.window = VRP_WINDOW_MAX + 1;
	CHECK_EQ(vrp_tolerance_to_params(&s, 10 * MTU, MTU, &p, cell, &err), -1);
	s.window = 0;
	CHECK_EQ(vrp_tolerance_to_params(&s, 10 * MTU, 0, &p, cell, &err), -1);
	CHECK_EQ(vrp_npkts(0, MTU), 1);
	CHECK_EQ(vrp_npkts(MTU + 1, MTU), 2);
}

/* 10 % over a window of 20 = 2 losses per window; one loss: tolerated, zeros, reported. */
static void
test_loss_within_tolerance(void)
{
	static struct trace t;
	struct vrp_tolerance tol = {
	    .loss_bp = 1000, .window = 20, .max_burst = VRP_BURST_UNLIMITED};
	struct vrp_rx_out o;

	tr_init_tol(&t, &tol, 40 * MTU - 100); /* last packet short: 924 bytes */
	arrive_range(&t, 0, 4);
	o = arrive(&t, 6);
	CHECK_EQ(o.tolerated, 1);
	CHECK_EQ(o.nacked, 0);
	CHECK_EQ(o.cum_ack, 7); /* a tolerated loss is valid: the cumulative ACK passes it */
	o = arrive_range(&t, 7, 39);
	CHECK(o.complete);
	CHECK_EQ(t.rx.st.nacks, 0);
	CHECK_EQ(t.rx.st.retrans, 0);
	CHECK_EQ(t.rx.st.tolerated, 1);
	CHECK_EQ(t.rx.st.tolerated_bytes, MTU);
	struct vrp_range h[2];
	uint64_t bytes;
	CHECK_EQ(vrp_rx_loss_map(&t.rx, h, 2, &bytes), 1);
	CHECK_EQ(h[0].off, 5 * MTU);
	CHECK_EQ(h[0].len, MTU);
	CHECK_EQ(bytes, MTU);
	check_oracle(&t);
}

/* Same tolerance (2 per window of 20): the third loss inside one window is NACKed. */
static void
test_loss_beyond_window(void)
{
	static struct trace t;
	struct vrp_tolerance tol = {
	    .loss_bp = 1000, .window = 20, .max_burst = VRP_BURST_UNLIMITED};

	tr_init_tol(&t, &tol, 40 * MTU);
	/* drop 5, 10, 15, 26, 29, 31 */
	arrive_range(&t, 0, 4);
	arrive_range(&t, 6, 9);
	arrive_range(&t, 11, 14);
	arrive_range(&t, 16, 25);
	arrive_range(&t, 27, 28);
	arrive(&t, 30);
	arrive_range(&t, 32, 39);
	CHECK_EQ(t.nev, 6);
	CHECK_EQ(t.ev[0].idx, 5);
	CHECK_EQ(t.ev[0].d, VRP_TOLERATE);
	CHECK_EQ(t.ev[1].idx, 10);
	CHECK_EQ(t.ev[1].d, VRP_TOLERATE);
	CHECK_EQ(t.ev[1].loss_cnt, 2);
	/* window 0..15 holds 5, 10 and 15: one too many */
	CHECK_EQ(t.ev[2].idx, 15);
	CHECK_EQ(t.ev[2].d, VRP_NACK);
	CHECK_EQ(t.ev[2].r, VRP_NR_RATE);
	/* window 7..26: 10 and 26 (15 is waiting, not lost) */
	CHECK_EQ(t.ev[3].idx, 26);
	CHECK_EQ(t.ev[3].d, VRP_TOLERATE);
	/* window 10..29: 10, 26, 29 */
	CHECK_EQ(t.ev[4].idx, 29);
	CHECK_EQ(t.ev[4].d, VRP_NACK);
	CHECK_EQ(t.ev[4].r, VRP_NR_RATE);
	/* window 12..31: 26, 31 */
	CHECK_EQ(t.ev[5].idx, 31);
	CHECK_EQ(t.ev[5].d, VRP_TOLERATE);
	CHECK_EQ(t.rx.wait_point, 15);
	check_oracle(&t);
	CHECK(!arrive(&t, 29).complete);
	CHECK_EQ(t.rx.wait_point, 15);
	struct vrp_rx_out o = arrive(&t, 15);
	CHECK(o.complete);
	CHECK_EQ(o.cum_ack, 40);
	CHECK_EQ(t.rx.st.nack_rate, 2);
	CHECK_EQ(t.rx.st.tolerated, 4);
	check_oracle(&t);
}

/* 20 % of 20 = 4 per window; max burst 2048 bytes = 2 packets. */
static void
test_consecutive_beyond_max(void)
{
	static struct trace t;
	struct vrp_tolerance tol = {.loss_bp = 2000, .window = 20, .max_burst = 2 * MTU};

	tr_init_tol(&t, &tol, 30 * MTU);
	CHECK_EQ(t.rx.p.max_cons, 2);
	arrive_range(&t, 0, 4);
	arrive_range(&t, 9, 29); /* 5, 6, 7, 8 lost in a row */
	CHECK_EQ(t.nev, 4);
	CHECK_EQ(t.ev[0].d, VRP_TOLERATE);
	CHECK_EQ(t.ev[1].d, VRP_TOLERATE);
	CHECK_EQ(t.ev[2].idx, 7);
	CHECK_EQ(t.ev[2].d, VRP_NACK);
	CHECK_EQ(t.ev[2].r, VRP_NR_CONS);
	/* 7 is virtually received: the run restarts at 8 */
	CHECK_EQ(t.ev[3].idx, 8);
	CHECK_EQ(t.ev[3].d, VRP_TOLERATE);
	CHECK_EQ(t.ev[3].cons_loss, 1);
	check_oracle(&t);
	CHECK(arrive(&t, 7).complete);
	CHECK_EQ(t.rx.st.nack_cons, 1);
	struct vrp_range h[4];
	uint64_t bytes;
	CHECK_EQ(vrp_rx_loss_map(&t.rx, h, 4, &bytes), 2); /* 5..6 merged, 8 */
	CHECK_EQ(h[0].off, 5 * MTU);
	CHECK_EQ(h[0].len, 2 * MTU);
	CHECK_EQ(h[1].off, 8 * MTU);
	CHECK_EQ(bytes, 3 * MTU);
	check_oracle(&t);
}

/* Critical ranges: never tolerated, even with 50 % allowed; first packet lost. */
static void
test_critical_range(void)
{
	static struct trace t;
	struct vrp_tolerance tol = {
	    .loss_bp = 5000, .window = 10, .max_burst = VRP_BURST_UNLIMITED};

	tol.n_critical = 2;
	tol.critical[0] = (struct vrp_range){0, 64};	  /* the message header */
	tol.critical[1] = (struct vrp_range){5100, 1000}; /* packets 4 and 5 */
	tr_init_tol(&t, &tol, 10 * MTU);
	/* drop 0, 5, 7 */
	arrive_range(&t, 1, 4);
	CHECK_EQ(t.nev, 1);
	CHECK_EQ(t.ev[0].idx, 0);
	CHECK_EQ(t.ev[0].d, VRP_NACK);
	CHECK_EQ(t.ev[0].r, VRP_NR_CRITICAL);
	CHECK_EQ(t.rx.wait_point, 0);
	arrive(&t, 6);
	arrive_range(&t, 8, 9);
	CHECK_EQ(t.nev, 3);
	CHECK_EQ(t.ev[1].idx, 5);
	CHECK_EQ(t.ev[1].r, VRP_NR_CRITICAL);
	CHECK_EQ(t.ev[2].idx, 7);
	CHECK_EQ(t.ev[2].d, VRP_TOLERATE);
	CHECK_EQ(t.rx.st.nack_critical, 2);
	/* The NACK for 5 was itself lost: the sender's timeout resends 5 first. */
	CHECK(!arrive(&t, 5).complete);
	CHECK_EQ(t.rx.wait_point, 0);
	struct vrp_rx_out o = arrive(&t, 0);
	CHECK(o.complete);
	CHECK_EQ(o.cum_ack, 10);
	CHECK(oracle_ok(t.cell, t.rx.npkts, t.rx.p.window, t.rx.p.max_loss, t.rx.p.max_cons));
	for (uint32_t i = 0; i < t.rx.npkts; i++)
		if (t.cell[i] & VRP_CELL_REQUIRED)
			CHECK(t.cell[i] & VRP_CELL_RECEIVED);
}

/* First packet lost, not critical: decided as soon as packet 1 shows the hole. */
static void
test_first_packet_lost(void)
{
	static struct trace t;
	struct vrp_tolerance tol = {
	    .loss_bp = 1000, .window = 10, .max_burst = VRP_BURST_UNLIMITED};

	tr_init_tol(&t, &tol, 10 * MTU);
	struct vrp_rx_out o = arrive(&t, 1);
	CHECK_EQ(o.tolerated, 1);
	CHECK_EQ(o.cum_ack, 2);
	CHECK(is_tol(&t, 0));
	CHECK(arrive_range(&t, 2, 9).complete);
	check_oracle(&t);
}

/*
 * Last packet lost: no later packet shows the hole, so nothing is decided and
 * the message is not complete; the sender's retransmission timeout (§3.2.1)
 * resends it. Last two lost and only the last resent: the one before is then
 * decided like any other hole.
 */
static void
test_last_packet_lost(void)
{
	static struct trace t;
	struct vrp_tolerance tol = {
	    .loss_bp = 1000, .window = 10, .max_burst = VRP_BURST_UNLIMITED};
	struct vrp_rx_out o;

	tr_init_tol(&t, &tol, 10 * MTU);
	o = arrive_range(&t, 0, 8);
	CHECK(!o.complete);
	CHECK_EQ(o.cum_ack, 9);
	CHECK_EQ(t.nev, 0);
	CHECK_EQ(vrp_rx_loss_map(&t.rx, NULL, 0, NULL), 0);
	o = arrive(&t, 9);
	CHECK(o.complete);
	CHECK_EQ(t.rx.st.tolerated, 0);

	tr_init_tol(&t, &tol, 10 * MTU);
	arrive_range(&t, 0, 7);
	o = arrive(&t, 9); /* 8 and 9 lost, 9 resent on timeout */
	CHECK(o.complete);
	CHECK_EQ(o.tolerated, 1);
	struct vrp_range h[1];
	CHECK_EQ(vrp_rx_loss_map(&t.rx, h, 1, NULL), 1);
	CHECK_EQ(h[0].off, 8 * MTU);
	/* After completion everything is discarded. */
	CHECK_EQ(arrive(&t, 8).arrival, VRP_ARR_COMPLETE);
	check_oracle(&t);
}

/* 0 %: every loss is NACKed; the data ends up complete and nothing is zero-filled. */
static void
test_zero_tolerance_is_reliable(void)
{
	static struct trace t;
	struct vrp_tolerance tol = {.loss_bp = 0, .max_burst = VRP_BURST_UNLIMITED};
	static const uint32_t order[] = {0, 1, 2, 5, 6, 7, 8, 10, 11, 3, 12, 4, 9, 13, 14, 15};

	tr_init_tol(&t, &tol, 16 * MTU);
	CHECK_EQ(t.rx.p.max_loss, 0);
	struct vrp_rx_out o = {0};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		o = arrive(&t, order[i]);
		CHECK_EQ(o.tolerated, 0);
		CHECK_EQ(t.rx.loss_cnt, 0);
	}
	CHECK(o.complete);
	CHECK_EQ(t.rx.st.nacks, 3);
	CHECK_EQ(t.rx.st.nack_rate, 3);
	CHECK_EQ(t.rx.st.tolerated, 0);
	CHECK_EQ(vrp_rx_loss_map(&t.rx, NULL, 0, NULL), 0);
	for (uint32_t i = 0; i < 16; i++)
		CHECK(t.cell[i] & VRP_CELL_RECEIVED);

	/* A zero burst means the same through the consecutive bound. */
	struct vrp_tolerance b = {.loss_bp = 5000, .max_burst = 0};
	tr_init_tol(&t, &b, 8 * MTU);
	arrive(&t, 0);
	arrive(&t, 2);
	CHECK_EQ(t.ev[0].r, VRP_NR_CONS);
}

/* Duplicates, late tolerated packets, stale and hostile indices. */
static void
test_late_dup_invalid(void)
{
	static struct trace t;
	struct vrp_rx_out o;

	/* A tolerated loss is valid, so wait_point passes it; a late copy is taken
	 * only while an earlier NACKed packet holds wait_point back (§3.2.2). */
	tr_init_params(&t, 6, 2, UINT32_MAX, 14);
	t.cell[1] = VRP_CELL_REQUIRED;
	arrive(&t, 0);
	arrive(&t, 2);
	arrive(&t, 4); /* 1 NACKed (critical), 3 tolerated */
	CHECK(is_waiting(&t, 1));
	CHECK_EQ(t.rx.loss_cnt, 1);
	CHECK_EQ(t.rx.wait_point, 1);
	o = arrive(&t, 3); /* late, still in the history window: taken, loss_cnt back to 0 */
	CHECK_EQ(o.arrival, VRP_ARR_LATE);
	CHECK(o.place);
	CHECK_EQ(t.rx.loss_cnt, 0);
	CHECK_EQ(t.rx.st.tolerated_bytes, 0);
	check_oracle(&t);
	arrive(&t, 5);
	arrive_range(&t, 7, 8);	  /* 6 tolerated */
	arrive_range(&t, 10, 12); /* 9 tolerated (window 4..9: 6, 9); 6 leaves at 12 */
	CHECK_EQ(t.rx.st.tolerated, 3);
	CHECK_EQ(t.rx.loss_cnt, 1);
	o = arrive(&t, 6); /* late, out of the history window: taken, counter untouched */
	CHECK_EQ(o.arrival, VRP_ARR_LATE);
	CHECK_EQ(t.rx.loss_cnt, 1);
	check_oracle(&t);
	o = arrive(&t, 6);
	CHECK_EQ(o.arrival, VRP_ARR_DUP);
	CHECK(!o.place);
	CHECK_EQ(o.cum_ack, 1);
	o = arrive(&t, 1);
	CHECK_EQ(o.arrival, VRP_ARR_RETRANS);
	CHECK_EQ(o.cum_ack, 13);
	o = arrive(&t, 9); /* below wait_point: discarded, stays a reported hole */
	CHECK_EQ(o.arrival, VRP_ARR_BELOW);
	CHECK(!o.place);
	o = arrive(&t, 14);
	CHECK_EQ(o.arrival, VRP_ARR_INVALID);
	o = arrive(&t, UINT32_MAX);
	CHECK_EQ(o.arrival, VRP_ARR_INVALID);
	CHECK_EQ(o.cum_ack, 13);
	CHECK_EQ(t.rx.st.invalid, 2);
	CHECK_EQ(t.rx.st.dup, 1);
	CHECK_EQ(t.rx.st.below, 1);
	CHECK_EQ(t.rx.st.late, 2);
	CHECK_EQ(t.rx.next_exp, 13);
	CHECK(arrive(&t, 13).complete);
	struct vrp_range h[2];
	CHECK_EQ(vrp_rx_loss_map(&t.rx, h, 2, NULL), 1);
	CHECK_EQ(h[0].off, 9 * MTU);
	check_oracle(&t);

	struct vrp_params bad = {.window = 0, .max_loss = 1, .max_cons = 1};
	const char *err = NULL;
	CHECK_EQ(vrp_rx_init(&t.rx, &bad, MTU, MTU, t.cell, &err), -1);
	CHECK(err != NULL);
}

/*
 * Seeded random traces (fixed seed: the same every run). After every arrival
 * loss_cnt equals the recount and the oracle holds; NACKed packets are resent
 * later, some twice, some tolerated ones arrive late. Every message completes.
 */
static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void
test_random_traces_keep_tolerance(void)
{
	static struct trace t;
	static uint32_t resend[NMAX * 4];
	unsigned bad_inc = 0, bad_oracle = 0, incomplete = 0, decided = 0;

	for (int round = 0; round < 400; round++) {
		uint32_t n = 1 + rnd(300), w = 1 + rnd(40), l = rnd(w + 1), c = 1 + rnd(4);
		if (rnd(4) == 0)
			c = UINT32_MAX;
		tr_init_params(&t, w, l, c, n);
		for (uint32_t i = 0; i < n; i++)
			if (rnd(20) == 0)
				t.cell[i] |= VRP_CELL_REQUIRED;
		unsigned drop_pct = rnd(40), nres = 0;
		bool complete = false;
		for (uint32_t i = 0; i < n || nres || t.rx.next_exp < n; i++) {
			uint32_t idx;
			if (i < n) {
				idx = i;
				if (rnd(100) < drop_pct)
					continue;
			} else if (nres == 0) {
				idx = n - 1; /* tail lost: the sender's timeout resends it */
			} else {
				uint32_t k = rnd(nres); /* resend a NACKed packet, any order */
				idx = resend[k];
				if (rnd(3) == 0)
					continue; /* this copy (or the NACK) lost: resent later */
				resend[k] = resend[--nres];
				if (rnd(5) == 0 && nres < NMAX * 4 - 1)
					resend[nres++] = idx; /* and sometimes duplicated */
			}
			unsigned ev0 = t.nev;
			struct vrp_rx_out o = arrive(&t, idx);
			complete |= o.complete;
			for (unsigned e = ev0; e < t.nev; e++) {
				decided++;
				if (t.ev[e].d == VRP_NACK && nres < NMAX * 4)
					resend[nres++] = t.ev[e].idx;
				if (t.ev[e].d == VRP_TOLERATE && rnd(10) == 0 && nres < NMAX * 4)
					resend[nres++] = t.ev[e].idx; /* a late copy */
			}
			if (t.rx.loss_cnt != recount(&t))
				bad_inc++;
			if (!oracle_ok(t.cell, t.rx.next_exp, w, l, c))
				bad_oracle++;
		}
		if (!complete || t.rx.wait_point != n)
			incomplete++;
	}
	CHECK_EQ(bad_inc, 0);
	CHECK_EQ(bad_oracle, 0);
	CHECK_EQ(incomplete, 0);
	CHECK(decided > 1000); /* the sweep did exercise the algorithm */
}

/*
 * Negative control: the oracle must reject a state with one tolerated loss
 * too many. (1) Run the second §2.3.5 trace with a receiver that allows one
 * loss more per window (the off-by-one the tests must catch) and a receiver
 * that allows one more consecutive loss: the oracle, asked about the real
 * tolerance, rejects both. (2) Turn the one NACKed packet of the first
 * example into a tolerated loss: rejected.
 */
static void
test_negative_control(void)
{
	static struct trace t;

	tr_init_params(&t, 4, 2, UINT32_MAX, 12);
	/* a window of 4 with 3 losses: 1, 2, 4 dropped */
	arrive(&t, 0);
	arrive(&t, 3);
	arrive_range(&t, 5, 11);
	CHECK(oracle_ok(t.cell, 12, 4, 2, UINT32_MAX)); /* the correct receiver */
	CHECK(is_waiting(&t, 4));
	tr_init_params(&t, 4, 3, UINT32_MAX, 12); /* one loss too many allowed */
	arrive(&t, 0);
	arrive(&t, 3);
	arrive_range(&t, 5, 11);
	CHECK(!is_waiting(&t, 4));
	CHECK(!oracle_ok(t.cell, 12, 4, 2, UINT32_MAX));

	/* 7, 8, 9 lost in a row, at most one consecutive. */
	tr_init_params(&t, 6, 4, 1, 14);
	arrive_range(&t, 0, 6);
	arrive_range(&t, 10, 13);
	CHECK(oracle_ok(t.cell, 14, 6, 4, 1)); /* the correct receiver: 8 NACKed */
	CHECK(is_waiting(&t, 8));
	tr_init_params(&t, 6, 4, 2, 14); /* one consecutive loss too many allowed */
	arrive_range(&t, 0, 6);
	arrive_range(&t, 10, 13);
	CHECK(!oracle_ok(t.cell, 14, 6, 4, 1));

	tr_init_params(&t, 6, 1, UINT32_MAX, 12);
	arrive_range(&t, 0, 1);
	arrive_range(&t, 3, 5);
	arrive(&t, 7);
	CHECK(oracle_ok(t.cell, 12, 6, 1, UINT32_MAX));
	t.cell[6] = VRP_CELL_VALID; /* tolerate the NACKed one */
	CHECK(!oracle_ok(t.cell, 12, 6, 1, UINT32_MAX));

	/* A critical packet tolerated is rejected too. */
	uint8_t c[3] = {VRP_CELL_RECEIVED | VRP_CELL_VALID, VRP_CELL_VALID | VRP_CELL_REQUIRED,
			VRP_CELL_RECEIVED | VRP_CELL_VALID};
	CHECK(!oracle_ok(c, 3, 3, 3, 3));
}

RW_TEST_MAIN(RW_TEST(test_paper_example_rate), RW_TEST(test_paper_example_cons),
	     RW_TEST(test_tolerance_translation), RW_TEST(test_loss_within_tolerance),
	     RW_TEST(test_loss_beyond_window), RW_TEST(test_consecutive_beyond_max),
	     RW_TEST(test_critical_range), RW_TEST(test_first_packet_lost),
	     RW_TEST(test_last_packet_lost), RW_TEST(test_zero_tolerance_is_reliable),
	     RW_TEST(test_late_dup_invalid), RW_TEST(test_random_traces_keep_tolerance),
	     RW_TEST(test_negative_control))
