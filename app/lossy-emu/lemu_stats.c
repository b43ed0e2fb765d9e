/* SPDX-License-Identifier: BSD-3-Clause */
#include "lemu_stats.h"

#include <stddef.h>

static const char *const names[LEMU_ST__COUNT] = {
#define LEMU_STAT_NAME(name, str, help) str,
    LEMU_STAT_LIST(LEMU_STAT_NAME)
#undef LEMU_STAT_NAME
};

static const char *const helps[LEMU_ST__COUNT] = {
#define LEMU_STAT_HELP(name, str, help) help,
    LEMU_STAT_LIST(LEMU_STAT_HELP)
#undef LEMU_STAT_HELP
};

const char *
lemu_stat_name(unsigned i)
{
	return i < LEMU_ST__COUNT ? names[i] : NULL;
}

const char *
lemu_stat_help(unsigned i)
{
	return i < LEMU_ST__COUNT ? helps[i] : NULL;
}
