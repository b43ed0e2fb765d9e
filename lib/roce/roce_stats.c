/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce_stats.h"

#include <stddef.h>

static const char *const stat_names[] = {
#define ROCE_STAT_NAME(e, name, desc) name,
    ROCE_STATS_LIST(ROCE_STAT_NAME)
#undef ROCE_STAT_NAME
};

static const char *const stat_descs[] = {
#define ROCE_STAT_DESC(e, name, desc) desc,
    ROCE_STATS_LIST(ROCE_STAT_DESC)
#undef ROCE_STAT_DESC
};

const char *
roce_stat_name(enum roce_stat id)
{
	return (unsigned int)id < ROCE_STAT__COUNT ? stat_names[id] : NULL;
}

const char *
roce_stat_desc(enum roce_stat id)
{
	return (unsigned int)id < ROCE_STAT__COUNT ? stat_descs[id] : NULL;
}
