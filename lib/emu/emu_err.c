/* SPDX-License-Identifier: BSD-3-Clause */
#include "emu_err.h"

static const char *const err_names[] = {
#define EMU_ERR_NAME(name, text) #name,
    EMU_ERR_LIST(EMU_ERR_NAME)
#undef EMU_ERR_NAME
};

static const char *const err_texts[] = {
#define EMU_ERR_TEXT(name, text) text,
    EMU_ERR_LIST(EMU_ERR_TEXT)
#undef EMU_ERR_TEXT
};

static int
err_index(int e)
{
	if (e < 0)
		e = -e;
	return e < EMU_E__COUNT ? e : -1;
}

const char *
emu_err_name(int e)
{
	int i = err_index(e);

	return i < 0 ? "UNKNOWN" : err_names[i];
}

const char *
emu_err_str(int e)
{
	int i = err_index(e);

	return i < 0 ? "unknown error" : err_texts[i];
}
