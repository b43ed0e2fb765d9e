/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file vrp.c
 * VRP's incremental anticipation receiver (A. Denis, "Variable Reliability
 * Protocol", LIP RR-2000-11, §2.3.4 and §3.2.2), per message. Every step is
 * O(1) per packet the history window moves over: loss_cnt is updated from
 * what enters and what leaves the window, never by browsing it (§2.3.3
 * "Incremental"), and a loss is decided as soon as a later packet shows it
 * (§2.3.3 "Anticipation"), not when wait_point reaches it.
 */
#include "vrp.h"

#include <string.h>

uint32_t
vrp_npkts(uint64_t len, uint32_t mtu)
{
	if (mtu == 0)
		return 0;
	uint64_t n = len == 0 ? 1 : (len + mtu - 1) / mtu;
	return n > UINT32_MAX ? 0 : (uint32_t)n;
}

void
vrp_pkt_bytes(const struct vrp_rx *rx, uint32_t idx, uint64_t *off, uint64_t *n)
{
	uint64_t o = (uint64_t)idx * rx->mtu;
	*off = o;
	*n = o >= rx->len ? 0 : (rx->len - o < rx->mtu ? rx->len - o : rx->mtu);
}

int
vrp_tolerance_to_params(const struct vrp_tolerance *tol, uint64_t len, uint32_t mtu,
			struct vrp_params *p, uint8_t *cell, const char **err)
{
	uint32_t npkts = vrp_npkts(len, mtu);
	uint32_t w = tol->window ? tol->window : VRP_WINDOW_DEFAULT;

	if (npkts == 0) {
		*err =
		    mtu == 0 ? "vrp: the MTU must not be 0" : "vrp: message has too many packets";
		return -1;
	}
	if (w > VRP_WINDOW_MAX) {
		*err = "vrp: window must be 1..65536 packets";
		return -1;
	}
	if (tol->loss_bp > VRP_LOSS_BP_MAX) {
		*err = "vrp: tolerated loss must be 0..100 %";
		return -1;
	}
	if (tol->n_critical > VRP_CRITICAL_MAX) {
		*err = "vrp: at most 16 critical ranges";
		return -1;
	}
	/*
	 * Choice (docs/vrp.md "Ambiguities"): the paper's LOSS_RATE is "the
	 * maximum percentage of data" that the sender turns into "a maximum
	 * number of packets lost per window" (§2.4.4) without a rounding rule
	 * (§2.3.5 calls 1 of 6 "16%"). We round down, so no window ever loses
	 * more than the percentage, and a message shorter than the window is
	 * judged over its own length, so it never loses more than the
	 * percentage of its packets either.
	 */
	uint32_t weff = w < npkts ? w : npkts;
	p->window = weff;
	p->max_loss = (uint32_t)((uint64_t)tol->loss_bp * weff / VRP_LOSS_BP_MAX);
	/*
	 * §3.1 CONS_LOSS: "computed by the sender from the maximum burst loss
	 * size given by the application in bytes": rounded down to whole
	 * packets, so a run never loses more bytes than allowed.
	 */
	if (tol->max_burst == VRP_BURST_UNLIMITED)
		p->max_cons = UINT32_MAX;
	else
		p->max_cons = tol->max_burst / mtu >= UINT32_MAX ? UINT32_MAX - 1
								 : (uint32_t)(tol->max_burst / mtu);

	memset(cell, 0, npkts);
	for (unsigned i = 0; i < tol->n_critical; i++) {
		const struct vrp_range *r = &tol->critical[i];
		if (r->len == 0 || r->off >= len || r->len > len - r->off) {
			*err = "vrp: a critical range is empty or outside the message";
			return -1;
		}
		/* §2.4.4: "VRP translates this into critical packets": every packet it touches. */
		for (uint64_t k = r->off / mtu; k <= (r->off + r->len - 1) / mtu; k++)
			cell[k] |= VRP_CELL_REQUIRED;
	}
	return 0;
}

int
vrp_rx_init(struct vrp_rx *rx, const struct vrp_params *p, uint64_t len, uint32_t mtu,
	    uint8_t *cell, const char **err)
{
	uint32_t npkts = vrp_npkts(len, mtu);

	if (npkts == 0) {
		*err =
		    mtu == 0 ? "vrp: the MTU must not be 0" : "vrp: message has too many packets";
		return -1;
	}
	if (p->window == 0 || p->window > VRP_WINDOW_MAX) {
		*err = "vrp: window must be 1..65536 packets";
		return -1;
	}
	memset(rx, 0, sizeof(*rx));
	rx->p = *p;
	rx->len = len;
	rx->mtu = mtu;
	rx->npkts = npkts;
	rx->cell = cell;
	for (uint32_t i = 0; i < npkts; i++)
		cell[i] &= VRP_CELL_REQUIRED;
	return 0;
}

/* A tolerated loss still missing: valid but not received (§2.3.4). */
static inline bool
vrp_is_loss(uint8_t c)
{
	return (c & (VRP_CELL_VALID | VRP_CELL_RECEIVED)) == VRP_CELL_VALID;
}

/*
 * Packet q enters the history window (the window_size packets preceding
 * next_exp, §2.3.4): q - window leaves it. Returns 1 if what leaves was an
 * actual loss (a waiting packet is "virtually not lost", Figure 9).
 */
static inline uint32_t
vrp_leaving_loss(const struct vrp_rx *rx, uint32_t q)
{
	return q >= rx->p.window && vrp_is_loss(rx->cell[q - rx->p.window]) ? 1 : 0;
}

static void
vrp_step_lost(struct vrp_rx *rx, vrp_gap_fn gap, void *ctx, struct vrp_rx_out *out)
{
	uint32_t q = rx->next_exp;
	uint8_t *c = &rx->cell[q];
	enum vrp_nack_reason why = VRP_NR_NONE;

	/* §3.2.2 "For each step, next_exp is the sequence number of a packet lost": */
	rx->cons_loss++;					   /* "increment cons_loss" */
	rx->loss_cnt = rx->loss_cnt + 1 - vrp_leaving_loss(rx, q); /* "according to what leaves
								      the window, increment or
								      not loss_cnt" */
	/* "if cons_loss or loss_cnt are greater than what is allowed, or if the
	 * packet is marked as required, send NACK ..." */
	if (*c & VRP_CELL_REQUIRED)
		why = VRP_NR_CRITICAL;
	else if (rx->cons_loss > rx->p.max_cons)
		why = VRP_NR_CONS;
	else if (rx->loss_cnt > rx->p.max_loss)
		why = VRP_NR_RATE;

	if (why != VRP_NR_NONE) {
		/* "... decrement loss_cnt and reset cons_loss. Set the tag of the
		 * packet to waiting." */
		rx->loss_cnt--;
		rx->cons_loss = 0;
		*c |= VRP_CELL_WAITING;
		rx->st.nacks++;
		if (why == VRP_NR_CRITICAL)
			rx->st.nack_critical++;
		else if (why == VRP_NR_CONS)
			rx->st.nack_cons++;
		else
			rx->st.nack_rate++;
		out->nacked++;
	} else {
		/* "if the loss is allowed, mark it as valid (but not received)" */
		uint64_t off, n;
		*c |= VRP_CELL_VALID;
		vrp_pkt_bytes(rx, q, &off, &n);
		rx->st.tolerated++;
		rx->st.tolerated_bytes += n;
		out->tolerated++;
	}
	rx->next_exp++;
	if (gap)
		gap(ctx, q, why == VRP_NR_NONE ? VRP_TOLERATE : VRP_NACK, why);
}

void
vrp_rx_packet(struct vrp_rx *rx, uint32_t idx, struct vrp_rx_out *out, vrp_gap_fn gap, void *ctx)
{
	memset(out, 0, sizeof(*out));
	if (idx >= rx->npkts) {
		/* Hostile or stale: no cell for it. Counted, nothing changes. */
		rx->st.invalid++;
		out->arrival = VRP_ARR_INVALID;
		goto ack;
	}
	if (rx->wait_point >= rx->npkts) {
		out->arrival = VRP_ARR_COMPLETE;
		goto ack;
	}

	uint8_t *c = &rx->cell[idx];
	if (idx < rx->next_exp) {
		if (*c & VRP_CELL_WAITING) {
			/* §3.2.2 "if the packet was waiting, mark it as received, valid,
			 * and not waiting ... do not update any loss variable, this
			 * packet was supposed to arrive." */
			*c = (uint8_t)((*c & ~VRP_CELL_WAITING) | VRP_CELL_RECEIVED |
				       VRP_CELL_VALID);
			rx->st.retrans++;
			out->arrival = VRP_ARR_RETRANS;
		} else if (*c & VRP_CELL_RECEIVED) {
			/* "if it was received, then discard it." */
			rx->st.dup++;
			out->arrival = VRP_ARR_DUP;
			goto ack;
		} else if (idx < rx->wait_point) {
			/* "if the packet is in the window (between wait_point and
			 * next_exp), then continue processing. If it is outside, then
			 * discard it." The hole stays zero-filled and reported. */
			rx->st.below++;
			out->arrival = VRP_ARR_BELOW;
			goto ack;
		} else {
			/* "If it was valid and not received, the loss was allowed. Take
			 * it anyway and update loss counters." Choice (docs/vrp.md):
			 * loss_cnt covers only the window_size packets preceding
			 * next_exp, so it drops only if idx is still among them. */
			uint64_t off, n;
			*c |= VRP_CELL_RECEIVED;
			if ((uint64_t)idx + rx->p.window >= rx->next_exp)
				rx->loss_cnt--;
			vrp_pkt_bytes(rx, idx, &off, &n);
			rx->st.tolerated_bytes -= n;
			rx->st.late++;
			out->arrival = VRP_ARR_LATE;
		}
	} else {
		/* "it is either the expected packet or one of the following ones.
		 * Increment next_exp one step at a time, until it reaches the
		 * sequence number of the packet we have just received." cons_loss
		 * counts the run inside this gap only (§2.3.4: "non-zero only while
		 * we are updating the window"). */
		rx->cons_loss = 0;
		while (rx->next_exp < idx)
			vrp_step_lost(rx, gap, ctx, out);
		/* "mark the packet received as received and valid, and increment
		 * next_exp": it enters the window too, and something may leave. */
		rx->loss_cnt -= vrp_leaving_loss(rx, idx);
		*c |= VRP_CELL_RECEIVED | VRP_CELL_VALID;
		rx->next_exp = idx + 1;
		rx->cons_loss = 0;
		out->arrival = VRP_ARR_NEW;
	}
	out->place = true;
	out->single_ack = true; /* "Pack a single ACK into the header." */

	/* "update wait_point": the lowest waiting packet, or next_exp if none. */
	while (rx->wait_point < rx->next_exp && (rx->cell[rx->wait_point] & VRP_CELL_VALID))
		rx->wait_point++;
ack:
	/* "pack a cumulative ACK with its value ... send the packed header even
	 * if the packet has been refused." */
	out->cum_ack = rx->wait_point;
	/* "If wait_point reaches last_seq, the frame is completed." */
	out->complete = rx->wait_point >= rx->npkts && out->arrival != VRP_ARR_COMPLETE &&
			out->arrival != VRP_ARR_INVALID && out->arrival != VRP_ARR_DUP &&
			out->arrival != VRP_ARR_BELOW;
}

uint32_t
vrp_rx_loss_map(const struct vrp_rx *rx, struct vrp_range *holes, uint32_t max, uint64_t *bytes)
{
	uint32_t count = 0;
	uint64_t total = 0;
	bool open = false;

	for (uint32_t i = 0; i < rx->next_exp; i++) {
		uint64_t off, n;
		if (!vrp_is_loss(rx->cell[i])) {
			open = false;
			continue;
		}
		vrp_pkt_bytes(rx, i, &off, &n);
		if (n == 0)
			continue;
		total += n;
		if (open) {
			if (count <= max)
				holes[count - 1].len += n;
			continue;
		}
		open = true;
		count++;
		if (count <= max) {
			holes[count - 1].off = off;
			holes[count - 1].len = n;
		}
	}
	if (bytes)
		*bytes = total;
	return count;
}
