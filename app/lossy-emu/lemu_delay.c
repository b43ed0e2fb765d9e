/* SPDX-License-Identifier: BSD-3-Clause */
/* The delay line: a FIFO ring or a binary min-heap over one array. */
#include "lemu_delay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static inline bool
ent_less(const struct lemu_dl_ent *a, const struct lemu_dl_ent *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int
lemu_dl_init(struct lemu_dl *dl, uint32_t cap, bool heap)
{
	memset(dl, 0, sizeof(*dl));
	if (cap == 0)
		return -EINVAL;
	dl->e = calloc(cap, sizeof(*dl->e));
	if (dl->e == NULL)
		return -ENOMEM;
	dl->cap = cap;
	dl->heap = heap;
	return 0;
}

void
lemu_dl_free(struct lemu_dl *dl)
{
	free(dl->e);
	dl->e = NULL;
	dl->cap = dl->n = 0;
}

/* ---- FIFO ring ------------------------------------------------------------ */

static inline uint32_t
ring_idx(const struct lemu_dl *dl, uint32_t i)
{
	uint32_t k = dl->head + i;

	return k >= dl->cap ? k - dl->cap : k;
}

/* ---- heap ----------------------------------------------------------------- */

static void
sift_up(struct lemu_dl_ent *e, uint32_t i)
{
	struct lemu_dl_ent x = e[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!ent_less(&x, &e[parent]))
			break;
		e[i] = e[parent];
		i = parent;
	}
	e[i] = x;
}

static void
sift_down(struct lemu_dl_ent *e, uint32_t n, uint32_t i)
{
	struct lemu_dl_ent x = e[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && ent_less(&e[c + 1], &e[c]))
			c++;
		if (!ent_less(&e[c], &x))
			break;
		e[i] = e[c];
		i = c;
	}
	e[i] = x;
}

static struct lemu_dl_ent
heap_pop(struct lemu_dl *dl)
{
	struct lemu_dl_ent top = dl->e[0];

	dl->n--;
	if (dl->n > 0) {
		dl->e[0] = dl->e[dl->n];
		sift_down(dl->e, dl->n, 0);
	}
	return top;
}

/* ---- layout change ---------------------------------------------------------- */

static void
reverse(struct lemu_dl_ent *e, uint32_t lo, uint32_t hi) /* [lo, hi) */
{
	while (hi > lo + 1) {
		struct lemu_dl_ent t = e[lo];

		e[lo++] = e[--hi];
		e[hi] = t;
	}
}

void
lemu_dl_set_heap(struct lemu_dl *dl, bool heap)
{
	uint32_t n = dl->n;

	if (heap == dl->heap)
		return;
	if (heap) {
		/* FIFO -> heap: rotate the ring to start at 0; a sorted array is a heap. */
		if (dl->head != 0 && n > 0) {
			if (dl->head + n <= dl->cap) {
				memmove(dl->e, dl->e + dl->head, (size_t)n * sizeof(*dl->e));
			} else {
				/* wrapped: rotate the whole array left by head */
				reverse(dl->e, 0, dl->head);
				reverse(dl->e, dl->head, dl->cap);
				reverse(dl->e, 0, dl->cap);
			}
		}
	} else {
		/* heap -> FIFO: in-place heapsort (descending with a min-heap), then reverse. */
		for (uint32_t m = n; m > 1; m--) {
			struct lemu_dl_ent t = dl->e[0];

			dl->e[0] = dl->e[m - 1];
			dl->e[m - 1] = t;
			sift_down(dl->e, m - 1, 0);
		}
		reverse(dl->e, 0, n);
	}
	dl->head = 0;
	dl->heap = heap;
}

/* ---- push / pop ------------------------------------------------------------- */

static void
hist_note(struct lemu_dl *dl, uint64_t t, uint64_t seq)
{
	dl->hist[dl->hist_pos] = (struct lemu_dl_ent){t, seq, NULL};
	dl->hist_pos = dl->hist_pos == LEMU_DL_MAX_GAP ? 0 : dl->hist_pos + 1;
	if (dl->hist_n <= LEMU_DL_MAX_GAP)
		dl->hist_n++;
}

uint64_t
lemu_dl_push(struct lemu_dl *dl, uint64_t t_ns, void *p)
{
	uint64_t seq = dl->seq += 2;

	if (dl->n == dl->cap)
		return UINT64_MAX;
	if (dl->heap) {
		dl->e[dl->n] = (struct lemu_dl_ent){t_ns, seq, p};
		sift_up(dl->e, dl->n);
	} else {
		if (dl->n > 0) {
			uint64_t tail = dl->e[ring_idx(dl, dl->n - 1)].t;

			if (t_ns < tail)
				t_ns = tail;
		}
		dl->e[ring_idx(dl, dl->n)] = (struct lemu_dl_ent){t_ns, seq, p};
	}
	dl->n++;
	hist_note(dl, t_ns, seq);
	return t_ns;
}

uint64_t
lemu_dl_push_reorder(struct lemu_dl *dl, uint64_t t_ns, uint32_t gap, void *p)
{
	struct lemu_dl_ent x = {t_ns, 0, p};

	if (dl->n == dl->cap)
		return UINT64_MAX;
	if (gap > LEMU_DL_MAX_GAP)
		gap = LEMU_DL_MAX_GAP;
	if (dl->heap) {
		/* behind the (gap+1)-th most recent normal push, if it is later */
		if (dl->hist_n > gap) {
			uint32_t k = (dl->hist_pos + LEMU_DL_MAX_GAP + 1 - (gap + 1)) %
				     (LEMU_DL_MAX_GAP + 1);
			const struct lemu_dl_ent *ref = &dl->hist[k];

			if (ref->t >= t_ns) {
				x.t = ref->t;
				x.seq = ref->seq + 1;
			}
		}
		if (x.seq == 0)
			x.seq = (dl->seq += 2) - 1; /* before nothing: ordinary tie-break */
		dl->e[dl->n] = x;
		sift_up(dl->e, dl->n);
		dl->n++;
		return x.t;
	}
	/* FIFO: walk back over at most gap entries that leave after t_ns */
	uint32_t k = 0;

	while (k < gap && k < dl->n && dl->e[ring_idx(dl, dl->n - 1 - k)].t > t_ns)
		k++;
	if (k < dl->n) {
		const struct lemu_dl_ent *ref = &dl->e[ring_idx(dl, dl->n - 1 - k)];

		if (ref->t > x.t)
			x.t = ref->t;
		x.seq = ref->seq + 1;
	} else {
		x.seq = dl->n ? dl->e[dl->head].seq - 1 : (dl->seq += 2) - 1;
	}
	for (uint32_t i = dl->n; i > dl->n - k; i--)
		dl->e[ring_idx(dl, i)] = dl->e[ring_idx(dl, i - 1)];
	dl->e[ring_idx(dl, dl->n - k)] = x;
	dl->n++;
	return x.t;
}

uint32_t
lemu_dl_pop_due(struct lemu_dl *dl, uint64_t now_ns, void **out, uint64_t *t, uint32_t max)
{
	uint32_t k = 0;

	if (dl->heap) {
		while (k < max && dl->n > 0 && dl->e[0].t <= now_ns) {
			struct lemu_dl_ent x = heap_pop(dl);

			out[k] = x.p;
			if (t)
				t[k] = x.t;
			k++;
		}
		return k;
	}
	while (k < max && dl->n > 0 && dl->e[dl->head].t <= now_ns) {
		const struct lemu_dl_ent *x = &dl->e[dl->head];

		out[k] = x->p;
		if (t)
			t[k] = x->t;
		k++;
		dl->head = dl->head + 1 == dl->cap ? 0 : dl->head + 1;
		dl->n--;
	}
	if (dl->n == 0)
		dl->head = 0;
	return k;
}

uint32_t
lemu_dl_pop_any(struct lemu_dl *dl, void **out, uint32_t max)
{
	return lemu_dl_pop_due(dl, UINT64_MAX, out, NULL, max);
}

/* ---- compact store -------------------------------------------------------------- */

int
lemu_cr_init(struct lemu_cr *c, uint32_t frames)
{
	uint64_t want = 2 * (uint64_t)frames;
	uint32_t n = 2;
	size_t bytes;

	memset(c, 0, sizeof(*c));
	if (want > LEMU_CR_MAX)
		want = LEMU_CR_MAX;
	while (n < want)
		n <<= 1;
	bytes = (size_t)n * LEMU_CR_UNIT;
	c->busy = calloc(n, 1);
	/* 2 MB aligned and, where the kernel allows it, on transparent huge pages: the
	 * stream then costs a TLB entry per 2 MB even when the EAL runs --no-huge */
	if (c->busy == NULL || posix_memalign((void **)&c->buf, 2u << 20, bytes) != 0) {
		free(c->busy);
		c->busy = NULL;
		c->buf = NULL;
		return -ENOMEM;
	}
	(void)madvise(c->buf, bytes, MADV_HUGEPAGE);
	/* touch every page now: no page fault on the data path's first pass */
	memset(c->buf, 0, bytes);
	c->mask = n - 1;
	c->bytes = bytes;
	return 0;
}

void
lemu_cr_free(struct lemu_cr *c)
{
	free(c->buf);
	free(c->busy);
	memset(c, 0, sizeof(*c));
}
