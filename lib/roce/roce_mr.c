/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_mr.c
 * Memory regions: registration, key lookup, and every check that stands
 * between a packet and memory. A remote access resolves to a host pointer
 * only after the R_Key, the PD, the access flags and the bounds all passed;
 * local SGEs are checked the same way on every copy.
 *
 * Keys: (table index + 1) << 8 | 8-bit generation. lkey == rkey, as in rxe.
 * Deregistration frees the slot; a later MR in the same slot gets another
 * generation, so stale keys miss.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_int.h"

#define MR_ACCESS_ALL                                                                              \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |               \
	 IBV_ACCESS_REMOTE_ATOMIC)

static int
mr_slot_alloc(struct roce_dev *dev, uint32_t *idx)
{
	for (uint32_t n = 0; n < dev->cfg.max_mr; n++) {
		uint32_t i = (dev->mr_next + n) % dev->cfg.max_mr;

		if (!dev->mr_tbl[i]) {
			dev->mr_next = (i + 1) % dev->cfg.max_mr;
			*idx = i;
			return 0;
		}
	}
	return -ENOMEM;
}

struct roce_mr *
roce_reg_mr(struct roce_pd *pd, void *addr, size_t len, unsigned int access)
{
	struct roce_dev *dev = pd->dev;
	struct roce_mr *mr;
	uint32_t idx;

	if ((access & ~MR_ACCESS_ALL) || (!addr && len) ||
	    /* verbs: remote write / atomic need local write */
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE)) ||
	    (uintptr_t)addr + len < (uintptr_t)addr) {
		errno = EINVAL;
		return NULL;
	}
	if (mr_slot_alloc(dev, &idx) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	dev->mr_gen++;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = len;
	mr->iova = (uintptr_t)addr;
	mr->lkey = (idx + 1) << 8 | dev->mr_gen;
	mr->rkey = mr->lkey;
	mr->access = access;
	dev->mr_tbl[idx] = mr;
	dev->nmr++;
	pd->refs++;
	return mr;
}

int
roce_dereg_mr(struct roce_mr *mr)
{
	struct roce_dev *dev = mr->pd->dev;

	dev->mr_tbl[(mr->lkey >> 8) - 1] = NULL;
	dev->nmr--;
	mr->pd->refs--;
	free(mr);
	return 0;
}

void
roce_mr_destroy_all(struct roce_dev *dev)
{
	for (uint32_t i = 0; i < dev->cfg.max_mr; i++) {
		free(dev->mr_tbl[i]);
		dev->mr_tbl[i] = NULL;
	}
	dev->nmr = 0;
}

struct roce_mr *
roce_mr_lookup(struct roce_dev *dev, uint32_t key)
{
	uint32_t idx = key >> 8;
	struct roce_mr *mr;

	if (idx == 0 || idx > dev->cfg.max_mr)
		return NULL;
	mr = dev->mr_tbl[idx - 1];
	return mr && mr->lkey == key ? mr : NULL;
}

/* [va, va + len) inside the MR, without overflow. */
static bool
mr_in_bounds(const struct roce_mr *mr, uint64_t va, uint64_t len)
{
	return va >= mr->iova && len <= mr->length && va - mr->iova <= mr->length - len;
}

static uint8_t *
mr_ptr(const struct roce_mr *mr, uint64_t va)
{
	return (uint8_t *)mr->addr + (va - mr->iova);
}

uint8_t *
roce_mr_remote(struct roce_pd *pd, uint32_t rkey, uint64_t va, uint32_t len, unsigned int access)
{
	struct roce_mr *mr = roce_mr_lookup(pd->dev, rkey);

	/* R_Key valid, of the QP's PD, with the access right, and covering the range */
	if (!mr || mr->pd != pd || (mr->access & access) != access || !mr_in_bounds(mr, va, len))
		return NULL;
	return mr_ptr(mr, va);
}

/* Resolve one local SGE for @p access; NULL on a bad key, PD, right or range. */
static uint8_t *
sge_ptr(struct roce_pd *pd, const struct ibv_sge *sge, unsigned int access)
{
	struct roce_mr *mr = roce_mr_lookup(pd->dev, sge->lkey);

	if (!mr || mr->pd != pd || (mr->access & access) != access ||
	    !mr_in_bounds(mr, sge->addr, sge->length))
		return NULL;
	return mr_ptr(mr, sge->addr);
}

/*
 * The byte sum of a local SGE list at post time. Keys, PD, rights and bounds are
 * checked on use (roce_sge_gather / roce_sge_scatter), where a bad one completes the
 * work request in error (roce_sge_fault), as rxe does (its copy_data() fails when the
 * WQE executes): the post itself succeeds.
 */
int
roce_sge_total(const struct ibv_sge *sge, uint32_t n, uint32_t *total)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++)
		sum += sge[i].length;
	if (sum > ROCE_MAX_MSG_SIZE)
		return -EINVAL;
	*total = (uint32_t)sum;
	return 0;
}

/*
 * The completion status of an SGE list that roce_sge_gather / roce_sge_scatter refused,
 * as rxe reports it: a key that names no MR of the PD, or an MR without the right, fails
 * rxe's MR lookup (IBV_WC_LOC_QP_OP_ERR); a good key with a range outside its MR fails
 * the bounds check (IBV_WC_LOC_PROT_ERR).
 */
enum ibv_wc_status
roce_sge_fault(struct roce_pd *pd, const struct ibv_sge *sge, uint32_t n, unsigned int access)
{
	for (uint32_t i = 0; i < n; i++) {
		struct roce_mr *mr = roce_mr_lookup(pd->dev, sge[i].lkey);

		if (sge[i].length && (!mr || mr->pd != pd || (mr->access & access) != access))
			return IBV_WC_LOC_QP_OP_ERR;
	}
	return IBV_WC_LOC_PROT_ERR;
}

/* Walk [off, off + len) of an SGE list, copying to or from @p buf. */
static int
sge_copy(struct roce_pd *pd, const struct ibv_sge *sge, uint32_t n, uint32_t off, uint8_t *buf,
	 uint32_t len, bool to_sge)
{
	unsigned int access = to_sge ? IBV_ACCESS_LOCAL_WRITE : 0;

	for (uint32_t i = 0; i < n && len; i++) {
		uint32_t chunk;
		uint8_t *p;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		p = sge_ptr(pd, &sge[i], access);
		if (!p)
			return -EACCES;
		chunk = sge[i].length - off;
		if (chunk > len)
			chunk = len;
		if (to_sge)
			memcpy(p + off, buf, chunk);
		else
			memcpy(buf, p + off, chunk);
		buf += chunk;
		len -= chunk;
		off = 0;
	}
	return len ? -ENOSPC : 0;
}

int
roce_sge_gather(struct roce_pd *pd, const struct ibv_sge *sge, uint32_t n, uint32_t off,
		uint8_t *dst, uint32_t len)
{
	return sge_copy(pd, sge, n, off, dst, len, false);
}

int
roce_sge_scatter(struct roce_pd *pd, const struct ibv_sge *sge, uint32_t n, uint32_t off,
		 const uint8_t *src, uint32_t len)
{
	/* sge_copy only reads from buf when copying to the SGEs */
	return sge_copy(pd, sge, n, off, (uint8_t *)(uintptr_t)src, len, true);
}
