/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_pd.c
 * Protection domains and UD address handles.
 */
#include <errno.h>
#include <stdlib.h>

#include "roce_int.h"

struct roce_pd *
roce_pd_alloc(struct roce_dev *dev)
{
	struct roce_pd *pd;

	if (dev->npd >= dev->cfg.max_pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->dev = dev;
	roce_list_add_tail(&dev->pds, &pd->node);
	dev->npd++;
	return pd;
}

int
roce_pd_dealloc(struct roce_pd *pd)
{
	if (pd->refs)
		return -EBUSY;
	roce_list_del(&pd->node);
	pd->dev->npd--;
	free(pd);
	return 0;
}

struct roce_ah *
roce_create_ah(struct roce_pd *pd, const struct ibv_ah_attr *attr, const uint8_t mac[6])
{
	struct roce_dev *dev = pd->dev;
	struct roce_ah *ah;

	if (!attr || !mac) {
		errno = EINVAL;
		return NULL;
	}
	if (dev->nah >= dev->cfg.max_ah) {
		errno = ENOMEM;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	if (roce_tmpl_init(dev, &ah->tmpl, attr, mac) < 0) {
		free(ah);
		errno = EINVAL;
		return NULL;
	}
	ah->pd = pd;
	pd->refs++;
	roce_list_add_tail(&dev->ahs, &ah->node);
	dev->nah++;
	return ah;
}

int
roce_destroy_ah(struct roce_ah *ah)
{
	roce_list_del(&ah->node);
	ah->pd->dev->nah--;
	ah->pd->refs--;
	free(ah);
	return 0;
}
