/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_err.h
 * Typed errors of lib/emu. Functions return 0 or a negated ::emu_err; the
 * list is defined once (X-macro) and gives the enum, a symbolic name and a
 * one-line description.
 */
#ifndef EMU_ERR_H
#define EMU_ERR_H

#define EMU_ERR_LIST(X)                                                                            \
	X(OK, "ok")                                                                                \
	X(INVAL, "invalid argument")                                                               \
	X(EMPTY, "empty value")                                                                    \
	X(BAD_NUMBER, "is not a number")                                                           \
	X(BAD_UNIT, "has an unknown unit")                                                         \
	X(NEED_UNIT, "needs a unit")                                                               \
	X(NEGATIVE, "must not be negative")                                                        \
	X(RANGE, "is out of range")                                                                \
	X(UNKNOWN_KEYWORD, "unknown keyword")                                                      \
	X(MISSING_ARG, "missing argument")                                                         \
	X(DUPLICATE, "given more than once")                                                       \
	X(CONFLICT, "conflicting or incomplete options")                                           \
	X(UNSUPPORTED, "not supported")                                                            \
	X(NOSPACE, "output buffer too small")

enum emu_err {
#define EMU_ERR_ENUM(name, text) EMU_E_##name,
	EMU_ERR_LIST(EMU_ERR_ENUM)
#undef EMU_ERR_ENUM
	    EMU_E__COUNT
};

/** Symbolic name ("BAD_UNIT") of an error; accepts e or -e. */
const char *emu_err_name(int e);

/** Description ("has an unknown unit") of an error; accepts e or -e. */
const char *emu_err_str(int e);

#endif /* EMU_ERR_H */
