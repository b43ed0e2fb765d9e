/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loss-reactive window (lib/roce/roce_lwin.h) on replayed event
 * sequences: una/nxt PSNs, acknowledgements and losses, against windows
 * computed by hand from the rules in the header.
 */
#include "roce_lwin.h"
#include "roce_psn.h"
#include "rw_test.h"

#define WIN 1000u

/* One clean round: @p n packets sent from *una, all acknowledged. */
static void
clean_round(struct roce_lwin *w, uint32_t *una, uint32_t n)
{
	uint32_t nxt = roce_psn_add(*una, n);

	/* the ACK that starts the round sees nxt, the one that ends it passes it */
	roce_lwin_on_ack(w, WIN, *una, nxt, 0);
	*una = nxt;
	roce_lwin_on_ack(w, WIN, *una, roce_psn_add(nxt, n), n);
}

static void
test_lossless_never_binds(void)
{
	struct roce_lwin w;
	uint32_t una = 0;

	roce_lwin_init(&w);
	CHECK_EQ(roce_lwin_window(&w, WIN), WIN);
	for (int i = 0; i < 50; i++)
		clean_round(&w, &una, 700);
	CHECK_EQ(roce_lwin_window(&w, WIN), WIN);
	/* the QP window may change; an uncut lwin follows it */
	CHECK_EQ(roce_lwin_window(&w, 64), 64);
	CHECK_EQ(roce_lwin_delivered(&w), 700);
}

static void
test_first_cut_halves_without_history(void)
{
	struct roce_lwin w;

	roce_lwin_init(&w);
	/* no clean round yet: a NAK with 800 in flight halves to 400 */
	CHECK(roce_lwin_on_loss(&w, WIN, 100, 900, false));
	CHECK_EQ(roce_lwin_window(&w, WIN), 400);
	/* the same episode (una below the recover point 900) does not cut again */
	CHECK(!roce_lwin_on_loss(&w, WIN, 150, 900, false));
	CHECK_EQ(roce_lwin_window(&w, WIN), 400);
	/* a new episode: in flight 300 < cwnd 400, so the base is 300 -> 150 */
	CHECK(roce_lwin_on_loss(&w, WIN, 900, 1200, false));
	CHECK_EQ(roce_lwin_window(&w, WIN), 150);
	/* never below ROCE_LWIN_MIN */
	CHECK(roce_lwin_on_loss(&w, WIN, 1200, 1202, false));
	CHECK_EQ(roce_lwin_window(&w, WIN), ROCE_LWIN_MIN);
}

static void
test_delivery_floor(void)
{
	struct roce_lwin w;
	uint32_t una = 0;

	roce_lwin_init(&w);
	clean_round(&w, &una, 600); /* the path delivered 600 in a round trip */
	clean_round(&w, &una, 650);
	CHECK_EQ(roce_lwin_delivered(&w), 650);
	/* random loss with 700 in flight: half is 350, the floor keeps 650 */
	CHECK(roce_lwin_on_loss(&w, WIN, una, una + 700, false));
	CHECK_EQ(roce_lwin_window(&w, WIN), 650);
	/* the floor never raises: 200 in flight, cwnd 650 -> base 200, floor capped at 200 */
	CHECK(roce_lwin_on_loss(&w, WIN, una + 700, una + 900, false));
	CHECK_EQ(roce_lwin_window(&w, WIN), 200);
}

static void
test_lossy_rounds_age_out(void)
{
	struct roce_lwin w;
	uint32_t una = 0;

	roce_lwin_init(&w);
	clean_round(&w, &una, 500); /* the next round ends at una + 500 */
	uint32_t end = roce_psn_add(una, 500);
	/* ROCE_LWIN_ROUNDS rounds, each with a loss signalled in it: the 500 ages out */
	for (int i = 0; i < ROCE_LWIN_ROUNDS; i++) {
		roce_lwin_on_loss(&w, WIN, una, end, false);
		CHECK_EQ(roce_lwin_delivered(&w), 500); /* the clean round is still in the filter */
		una = end;
		end = roce_psn_add(una, 10);
		roce_lwin_on_ack(&w, WIN, una, end, 10);
	}
	CHECK_EQ(roce_lwin_delivered(&w), 0);
}

static void
test_additive_increase(void)
{
	struct roce_lwin w;

	roce_lwin_init(&w);
	w.clean_since_cut = true; /* as after a clean round trip (no delivery floor here) */
	CHECK(roce_lwin_on_loss(&w, WIN, 0, 20, false)); /* cwnd 10, ssthresh 20 - 20/8 = 18 */
	CHECK_EQ(roce_lwin_window(&w, WIN), 10);
	CHECK_EQ(w.ssthresh, 18);
	roce_lwin_on_ack(&w, WIN, 9, 20, 9);
	CHECK_EQ(roce_lwin_window(&w, WIN), 18); /* slow start, capped at ssthresh */
	roce_lwin_on_ack(&w, WIN, 26, 40, 17);
	CHECK_EQ(roce_lwin_window(&w, WIN), 18); /* additive: 17 of 18 */
	roce_lwin_on_ack(&w, WIN, 27, 40, 1);
	CHECK_EQ(roce_lwin_window(&w, WIN), 19); /* a window acknowledged: +1 */
	roce_lwin_on_ack(&w, WIN, 65, 80, 38);
	CHECK_EQ(roce_lwin_window(&w, WIN), 20); /* 38 = 19 + 19: +1, then 19 of 20 */
	/* back at the QP window it follows the QP window again */
	roce_lwin_on_ack(&w, 21, 165, 180, 100);
	CHECK_EQ(roce_lwin_window(&w, 21), 21);
	CHECK_EQ(roce_lwin_window(&w, 5000), 5000);
}

static void
test_timeout_slow_start(void)
{
	struct roce_lwin w;

	roce_lwin_init(&w);
	/* a timeout with 200 in flight: cut 100, ssthresh 200 - 25 = 175, restart at the minimum */
	CHECK(roce_lwin_on_loss(&w, WIN, 1000, 1200, true));
	CHECK_EQ(roce_lwin_window(&w, WIN), ROCE_LWIN_MIN);
	/* a timeout again inside its own episode: restart small, ssthresh kept (no collapse) */
	roce_lwin_on_ack(&w, WIN, 1000, 1200, 0);
	CHECK_EQ(roce_lwin_on_loss(&w, WIN, 1000, 1200, true), ROCE_LWIN_SAME);
	CHECK_EQ(roce_lwin_window(&w, WIN), ROCE_LWIN_MIN);
	CHECK_EQ(w.ssthresh, 100);
	roce_lwin_init(&w);
	w.clean_since_cut = true; /* as after a clean round trip */
	CHECK(roce_lwin_on_loss(&w, WIN, 1000, 1200, true));
	CHECK_EQ(w.ssthresh, 175);
	/* slow start: +1 per packet acknowledged, up to ssthresh, then additive */
	roce_lwin_on_ack(&w, WIN, 1004, 1200, 4);
	CHECK_EQ(roce_lwin_window(&w, WIN), 8);
	roce_lwin_on_ack(&w, WIN, 1012, 1200, 8);
	CHECK_EQ(roce_lwin_window(&w, WIN), 16);
	roce_lwin_on_ack(&w, WIN, 1112, 1300, 100);
	CHECK_EQ(roce_lwin_window(&w, WIN), 116);
	roce_lwin_on_ack(&w, WIN, 1212, 1400, 100);
	CHECK_EQ(roce_lwin_window(&w, WIN), 175);
	roce_lwin_on_ack(&w, WIN, 1387, 1500, 175);
	CHECK_EQ(roce_lwin_window(&w, WIN), 176);
}

/* Losses without a clean round in between (a slow receiver): no slow-start regrowth. */
static void
test_back_to_back_losses(void)
{
	struct roce_lwin w;

	roce_lwin_init(&w);
	CHECK(roce_lwin_on_loss(&w, WIN, 0, 800, false)); /* the first loss: no clean round yet */
	CHECK_EQ(roce_lwin_window(&w, WIN), 400);
	CHECK_EQ(w.ssthresh, 400);
	roce_lwin_on_ack(&w, WIN, 100, 900, 100);
	CHECK_EQ(roce_lwin_window(&w, WIN), 400); /* additive only: 100 of 400 */
	/* the round begun by that ACK ends clean with 100 delivered; then a new episode */
	roce_lwin_on_ack(&w, WIN, 900, 1200, 100);
	CHECK(w.clean_since_cut);
	CHECK_EQ(roce_lwin_delivered(&w), 100);
	CHECK(roce_lwin_on_loss(&w, WIN, 1200, 2200, false)); /* base min(400, 1000) */
	CHECK_EQ(roce_lwin_window(&w, WIN), 200);	      /* max(400 / 2, floor 100) */
	CHECK_EQ(w.ssthresh, 350);			      /* 400 - 400 / 8 */
	CHECK(!w.clean_since_cut);
}

static void
test_psn_wrap(void)
{
	struct roce_lwin w;
	uint32_t una = ROCE_PSN_MASK - 100;

	roce_lwin_init(&w);
	clean_round(&w, &una, 300); /* wraps through 0 */
	CHECK_EQ(roce_lwin_delivered(&w), 300);
	CHECK(roce_lwin_on_loss(&w, WIN, una, roce_psn_add(una, 900), false));
	CHECK_EQ(roce_lwin_window(&w, WIN), 450);
	/* una past the wrapped recover point: a new episode */
	CHECK(!roce_lwin_on_loss(&w, WIN, roce_psn_add(una, 899), roce_psn_add(una, 950), false));
	CHECK(roce_lwin_on_loss(&w, WIN, roce_psn_add(una, 900), roce_psn_add(una, 1000), false));
}

/* Start-up: slow start from the initial window, doubling per clean round, to the QP window. */
static void
test_initial_slow_start(void)
{
	struct roce_lwin w;
	uint32_t una = 0;

	roce_lwin_init(&w);
	roce_lwin_slow_start(&w, 10);
	CHECK_EQ(roce_lwin_window(&w, WIN), 10);
	clean_round(&w, &una, 10); /* the first ACK opens the round, the second closes it */
	CHECK_EQ(roce_lwin_window(&w, WIN), 20);
	clean_round(&w, &una, 20);
	CHECK_EQ(roce_lwin_window(&w, WIN), 40);
	for (int i = 0; i < 5; i++)
		clean_round(&w, &una, roce_lwin_window(&w, WIN));
	CHECK_EQ(w.cwnd, UINT32_MAX); /* 1280 >= 1000: follows the QP window again */
	CHECK_EQ(roce_lwin_window(&w, WIN), WIN);
	/* below the minimum: the minimum; 0 leaves the QP window */
	roce_lwin_init(&w);
	roce_lwin_slow_start(&w, 1);
	CHECK_EQ(roce_lwin_window(&w, WIN), ROCE_LWIN_MIN);
	roce_lwin_init(&w);
	roce_lwin_slow_start(&w, 0);
	CHECK_EQ(roce_lwin_window(&w, WIN), WIN);
}

/* A CNP / ECN echo ends slow start without a cut; growth is then additive. */
static void
test_ecn_ends_slow_start(void)
{
	struct roce_lwin w;
	uint32_t una = 0;

	roce_lwin_init(&w);
	roce_lwin_slow_start(&w, 10);
	clean_round(&w, &una, 10);
	clean_round(&w, &una, 20);
	CHECK_EQ(roce_lwin_window(&w, WIN), 40);
	roce_lwin_on_ecn(&w);
	CHECK_EQ(roce_lwin_window(&w, WIN), 40);
	CHECK_EQ(w.ssthresh, 40);
	clean_round(&w, &una, 40); /* the echo's round and the next: no growth at all */
	CHECK_EQ(roce_lwin_window(&w, WIN), 40);
	clean_round(&w, &una, 40);
	CHECK_EQ(roce_lwin_window(&w, WIN), 40);
	clean_round(&w, &una, 40); /* two rounds without an echo: +1 (Reno) instead of +40 */
	CHECK_EQ(roce_lwin_window(&w, WIN), 41);
	/* an ECN echo on an uncut window changes nothing */
	roce_lwin_init(&w);
	roce_lwin_on_ecn(&w);
	CHECK_EQ(w.cwnd, UINT32_MAX);
}

/* Random loss (no queue signal) holds the window; a grown RTT or an ECN echo makes it a cut. */
static void
test_random_loss_held(void)
{
	struct roce_lwin w;
	uint32_t una = 0;

	roce_lwin_init(&w);
	clean_round(&w, &una, 600);
	/* no RTT sample yet: taken as congestion, as before */
	CHECK(roce_lwin_congested(&w));
	roce_lwin_on_rtt(&w, 20000000); /* 20 ms */
	roce_lwin_on_rtt(&w, 60000000); /* a stall: the round's least sample is still 20 ms */
	CHECK(!roce_lwin_congested(&w));
	CHECK_EQ(roce_lwin_on_loss(&w, WIN, una, roce_psn_add(una, 600), false), ROCE_LWIN_HELD);
	CHECK_EQ(w.cwnd, UINT32_MAX);
	/* the same episode */
	CHECK_EQ(roce_lwin_on_loss(&w, WIN, una, roce_psn_add(una, 600), false), ROCE_LWIN_SAME);
	/* a timeout in that episode: restart at the minimum, slow start back to the whole window */
	CHECK_EQ(roce_lwin_on_loss(&w, WIN, una, roce_psn_add(una, 600), true), ROCE_LWIN_SAME);
	CHECK_EQ(roce_lwin_window(&w, WIN), ROCE_LWIN_MIN);
	CHECK_EQ(w.ssthresh, WIN);
	/* a random timeout as a new episode does the same */
	una = roce_psn_add(una, 600);
	roce_lwin_on_ack(&w, WIN, una, roce_psn_add(una, 4), 0);
	CHECK_EQ(roce_lwin_on_loss(&w, WIN, una, roce_psn_add(una, 4), true), ROCE_LWIN_HELD);
	CHECK_EQ(roce_lwin_window(&w, WIN), ROCE_LWIN_MIN);
	CHECK_EQ(w.ssthresh, WIN); /* not the 4 that lost: random loss never lowers it */
	/* a standing queue: every sample of the last round and this one above 25 ms */
	roce_lwin_init(&w);
	una = 0;
	roce_lwin_on_rtt(&w, 20000000);
	clean_round(&w, &una, 100);
	roce_lwin_on_rtt(&w, 26000000);
	CHECK(!roce_lwin_congested(&w)); /* the round that ended had 20 ms */
	clean_round(&w, &una, 100);
	roce_lwin_on_rtt(&w, 30000000);
	CHECK_EQ(w.rtt_prev_min, 26000000);
	CHECK(roce_lwin_congested(&w)); /* min(26, 30) > 25 */
	CHECK_EQ(roce_lwin_on_loss(&w, WIN, una, roce_psn_add(una, 800), false), ROCE_LWIN_CUT);
	CHECK_EQ(roce_lwin_window(&w, WIN), 400);
	/* an ECN echo in this or the last round is a queue signal too */
	roce_lwin_init(&w);
	una = 0;
	roce_lwin_on_rtt(&w, 20000000);
	clean_round(&w, &una, 100);
	roce_lwin_on_ecn(&w);
	CHECK(roce_lwin_congested(&w));
	clean_round(&w, &una, 100); /* the echo is now the last round's */
	CHECK(roce_lwin_congested(&w));
	clean_round(&w, &una, 100);
	CHECK(!roce_lwin_congested(&w));
}

/*
 * The Eifel response (RFC 4015 §3.2 (8)) to a spurious timeout: the window
 * resumes at FlightSize + min(acked, IW) with ssthresh = pipe_prev, and the
 * ACK that undid it grows nothing more; an ECN echo since the expiry (or on
 * that ACK) leaves the timeout's restart; a real loss has nothing to undo.
 */
static void
test_spurious_undo(void)
{
	struct roce_lwin w;
	uint32_t una = 0;

	for (int echo = 0; echo < 3; echo++) {
		roce_lwin_init(&w);
		roce_lwin_slow_start(&w, 10);
		roce_lwin_on_rtt(&w, 10000000);
		clean_round(&w, &una, 8);
		/* cwnd 18 in slow start; the timer fires with 18 in flight */
		CHECK_EQ(roce_lwin_window(&w, WIN), 18);
		roce_lwin_on_loss(&w, WIN, una, roce_psn_add(una, 18), true);
		CHECK_EQ(roce_lwin_window(&w, WIN), ROCE_LWIN_MIN);
		if (echo == 1)
			roce_lwin_on_ecn(&w); /* a CNP after the expiry */
		/* the ACK of 5 packets shows it spurious: flight 13 + min(5, IW 10) */
		CHECK_EQ(roce_lwin_undo(&w, WIN, roce_psn_add(una, 5), roce_psn_add(una, 18), 5,
					echo == 2),
			 echo ? ROCE_LWIN_UNDO_ECN : ROCE_LWIN_UNDONE);
		roce_lwin_on_ack(&w, WIN, roce_psn_add(una, 5), roce_psn_add(una, 18), 5);
		/* an echo: the restart stands (a CNP also ended slow start at 4) */
		CHECK_EQ(roce_lwin_window(&w, WIN), echo == 1 ? ROCE_LWIN_MIN
						    : echo    ? ROCE_LWIN_MIN + 5
							      : 18u);
		if (!echo)
			CHECK_EQ(w.ssthresh, UINT32_MAX); /* pipe_prev: still in slow start */
		/* once per timeout */
		CHECK_EQ(roce_lwin_undo(&w, WIN, una, una, 0, false), ROCE_LWIN_NO_UNDO);
	}
	/* a NAK (a real loss) leaves nothing to undo */
	roce_lwin_init(&w);
	roce_lwin_on_loss(&w, WIN, 0, 100, false);
	CHECK_EQ(roce_lwin_undo(&w, WIN, 10, 100, 10, false), ROCE_LWIN_NO_UNDO);
}

RW_TEST_MAIN(RW_TEST(test_spurious_undo), RW_TEST(test_lossless_never_binds),
	     RW_TEST(test_first_cut_halves_without_history), RW_TEST(test_delivery_floor),
	     RW_TEST(test_lossy_rounds_age_out), RW_TEST(test_additive_increase),
	     RW_TEST(test_timeout_slow_start), RW_TEST(test_back_to_back_losses),
	     RW_TEST(test_psn_wrap), RW_TEST(test_initial_slow_start),
	     RW_TEST(test_ecn_ends_slow_start), RW_TEST(test_random_loss_held))
