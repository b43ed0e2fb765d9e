/* SPDX-License-Identifier: BSD-3-Clause */
#include "pfc_state.h"

#include <string.h>

void
pfc_pause_init(struct pfc_pause *p, uint64_t link_bps, uint8_t lossless, bool pause_ok)
{
	memset(p, 0, sizeof(*p));
	p->link_bps = link_bps;
	p->lossless = lossless;
	p->pause_ok = pause_ok;
}

/* Close a pause that ended at @p end (timer expiry or XON). */
static void
pause_end(struct pfc_pause *p, unsigned n, uint64_t end)
{
	if (p->until_ns[n]) {
		p->paused_ns[n] += end > p->since_ns[n] ? end - p->since_ns[n] : 0;
		p->until_ns[n] = 0;
	}
}

/* Expire a timer that ran out before @p now_ns (at its own deadline). */
static void
pause_expire(struct pfc_pause *p, unsigned n, uint64_t now_ns)
{
	if (p->until_ns[n] && now_ns >= p->until_ns[n])
		pause_end(p, n, p->until_ns[n]);
}

uint8_t
pfc_pause_rx(struct pfc_pause *p, const struct pfc_frame *f, uint64_t now_ns)
{
	uint8_t en = f->enable & p->lossless, touched = 0;

	if (f->opcode == PAUSE_OPCODE && !p->pause_ok)
		en = 0;
	if (!en) {
		p->rx_ignored++;
		return 0;
	}
	for (unsigned n = 0; n < PFC_NUM_PRIO; n++) {
		if (!(en & (1u << n)))
			continue;
		touched |= (uint8_t)(1u << n);
		pause_expire(p, n, now_ns);
		if (f->quanta[n] == 0) {
			/* XON: resume at once (802.1Qbb: time 0) */
			pause_end(p, n, now_ns);
			p->rx_xon[n]++;
			continue;
		}
		/* XOFF: (re)load the timer from now; a refresh does not add */
		if (!p->until_ns[n]) {
			p->since_ns[n] = now_ns;
			p->pauses[n]++;
		}
		p->until_ns[n] = now_ns + pfc_quanta_to_ns(f->quanta[n], p->link_bps);
		if (p->until_ns[n] == now_ns) /* a quantum shorter than 1 ns at absurd rates */
			p->until_ns[n]++;
		p->rx_xoff[n]++;
	}
	return touched;
}

bool
pfc_pause_blocked(struct pfc_pause *p, unsigned prio, uint64_t now_ns)
{
	if (prio >= PFC_NUM_PRIO)
		return false;
	pause_expire(p, prio, now_ns);
	return p->until_ns[prio] != 0;
}

uint8_t
pfc_pause_mask(struct pfc_pause *p, uint64_t now_ns)
{
	uint8_t m = 0;

	for (unsigned n = 0; n < PFC_NUM_PRIO; n++)
		if (pfc_pause_blocked(p, n, now_ns))
			m |= (uint8_t)(1u << n);
	return m;
}

uint64_t
pfc_pause_next_expiry(const struct pfc_pause *p)
{
	uint64_t t = UINT64_MAX;

	for (unsigned n = 0; n < PFC_NUM_PRIO; n++)
		if (p->until_ns[n] && p->until_ns[n] < t)
			t = p->until_ns[n];
	return t;
}

uint64_t
pfc_pause_total_ns(const struct pfc_pause *p, unsigned prio, uint64_t now_ns)
{
	uint64_t t;

	if (prio >= PFC_NUM_PRIO)
		return 0;
	t = p->paused_ns[prio];
	if (p->until_ns[prio]) {
		uint64_t end = now_ns < p->until_ns[prio] ? now_ns : p->until_ns[prio];

		t += end > p->since_ns[prio] ? end - p->since_ns[prio] : 0;
	}
	return t;
}

void
pfc_wd_init(struct pfc_wd *w, uint64_t detect_ns, uint64_t restore_ns, enum pfc_wd_action a)
{
	memset(w, 0, sizeof(*w));
	w->detect_ns = detect_ns;
	w->restore_ns = restore_ns;
	w->action = a;
}

void
pfc_wd_on_pfc(struct pfc_wd *w, uint64_t now_ns)
{
	w->last_pfc_ns = now_ns ? now_ns : 1;
}

/* a - b, or 0 when the clock did not advance past b (never a huge unsigned wrap) */
static uint64_t
elapsed(uint64_t now, uint64_t since)
{
	return now > since ? now - since : 0;
}

enum pfc_wd_state
pfc_wd_step(struct pfc_wd *w, bool paused, uint64_t now_ns)
{
	switch (w->state) {
	case PFC_WD_OK:
		/* SONiC: a queue paused for detection_time is in storm, even when empty */
		if (!paused) {
			w->paused_from_ns = 0;
			break;
		}
		if (!w->paused_from_ns)
			w->paused_from_ns = now_ns ? now_ns : 1;
		if (elapsed(now_ns, w->paused_from_ns) >= w->detect_ns) {
			w->state = PFC_WD_STORM;
			w->storms++;
		}
		break;
	case PFC_WD_STORM:
		/* SONiC pfc_restore: no PFC frame received for restoration_time */
		if (elapsed(now_ns, w->last_pfc_ns) >= w->restore_ns) {
			w->state = PFC_WD_OK;
			w->paused_from_ns = 0;
			w->restores++;
		}
		break;
	}
	return w->state;
}

static const char *const wd_names[] = {"drop", "forward", "alert"};

int
pfc_wd_action_parse(const char *s)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(s, wd_names[i]) == 0)
			return i;
	return -1;
}

const char *
pfc_wd_action_name(enum pfc_wd_action a)
{
	return (unsigned)a < 3 ? wd_names[a] : "?";
}
