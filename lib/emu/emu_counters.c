/* SPDX-License-Identifier: BSD-3-Clause */
#include "emu_counters.h"

#include <string.h>

static const char *const counter_names[] = {
#define EMU_COUNTER_NAME(name, str, help) str,
    EMU_COUNTER_LIST(EMU_COUNTER_NAME)
#undef EMU_COUNTER_NAME
};

static const char *const counter_help[] = {
#define EMU_COUNTER_HELP(name, str, help) help,
    EMU_COUNTER_LIST(EMU_COUNTER_HELP)
#undef EMU_COUNTER_HELP
};

const char *
emu_counter_name(unsigned c)
{
	return c < EMU_CNT__COUNT ? counter_names[c] : NULL;
}

const char *
emu_counter_help(unsigned c)
{
	return c < EMU_CNT__COUNT ? counter_help[c] : NULL;
}

void
emu_counters_reset(struct emu_counters *c)
{
	memset(c, 0, sizeof(*c));
}
