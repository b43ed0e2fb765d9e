/* SPDX-License-Identifier: BSD-3-Clause */
#include "pfc_tx.h"

#include <stdio.h>
#include <string.h>

void
pfc_tx_init(struct pfc_tx *t, uint64_t link_bps, uint8_t lossless, bool obey)
{
	memset(t, 0, sizeof(*t));
	pfc_pause_init(&t->pause, link_bps, lossless, false); /* 802.1Qbb: PFC on, PAUSE off */
	t->obey = obey;
}

static void
charge(struct pfc_tx *t, unsigned n, uint64_t bytes, uint32_t frames)
{
	t->cur_bytes[n] += bytes;
	t->cur_frames[n] += frames;
	t->overshoot_bytes += bytes;
	t->overshoot_frames += frames;
	if (t->cur_bytes[n] > t->overshoot_max_bytes)
		t->overshoot_max_bytes = t->cur_bytes[n];
	if (t->cur_frames[n] > t->overshoot_max_frames)
		t->overshoot_max_frames = t->cur_frames[n];
}

uint8_t
pfc_tx_rx(struct pfc_tx *t, const struct pfc_frame *f, uint64_t now_ns)
{
	uint8_t before, touched, started = 0;
	bool xoff = false, xon = false;

	if (!t->obey) {
		t->rx_ignored++;
		return 0;
	}
	before = pfc_pause_mask(&t->pause, now_ns); /* expires timers that ran out */
	touched = pfc_pause_rx(&t->pause, f, now_ns);
	if (!touched) {
		t->rx_ignored++;
		return 0;
	}
	for (unsigned n = 0; n < PFC_NUM_PRIO; n++) {
		if (!(touched & (1u << n)))
			continue;
		if (f->quanta[n] == 0) {
			xon = true;
			continue;
		}
		xoff = true;
		if (before & (1u << n))
			continue; /* a refresh: nothing new left since the pause began */
		/* a new pause: it may have arrived right after the previous RX check */
		started |= (uint8_t)(1u << n);
		t->pauses++;
		t->cur_bytes[n] = 0;
		t->cur_frames[n] = 0;
		t->xoff_window_bytes += t->win_bytes[n];
		if (t->win_bytes[n] > t->xoff_window_max_bytes)
			t->xoff_window_max_bytes = t->win_bytes[n];
		if (t->win_frames[n] > t->xoff_window_max_frames)
			t->xoff_window_max_frames = t->win_frames[n];
	}
	t->rx_xoff += xoff;
	t->rx_xon += xon;
	return started;
}

void
pfc_tx_rx_done(struct pfc_tx *t)
{
	memset(t->win_bytes, 0, sizeof(t->win_bytes));
	memset(t->win_frames, 0, sizeof(t->win_frames));
}

void
pfc_tx_sent(struct pfc_tx *t, unsigned prio, uint32_t bytes, uint64_t now_ns)
{
	if (prio >= PFC_NUM_PRIO)
		return;
	t->win_bytes[prio] += bytes;
	t->win_frames[prio]++;
	if (t->obey && pfc_pause_blocked(&t->pause, prio, now_ns))
		charge(t, prio, bytes, 1);
}

int
pfc_prio_list_parse(const char *s, uint8_t *mask, char *why, unsigned whylen)
{
	uint8_t m = 0;
	const char *c = s;

	if (!*s) {
		snprintf(why, whylen,
			 "empty list: give priorities 0..7 separated by commas (e.g. 3 or 3,4)");
		return -1;
	}
	while (*c) {
		if (*c < '0' || *c > '7' || (c[1] && c[1] != ',') || (c[1] == ',' && !c[2])) {
			snprintf(why, whylen,
				 "\"%s\" is not a list of priorities 0..7 separated by commas "
				 "(e.g. 3 or 3,4)",
				 s);
			return -1;
		}
		if (m & (1u << (*c - '0'))) {
			snprintf(why, whylen, "priority %c is listed twice in \"%s\"", *c, s);
			return -1;
		}
		m |= (uint8_t)(1u << (*c - '0'));
		c += c[1] ? 2 : 1;
	}
	*mask = m;
	return 0;
}
