/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file emu_counters.h
 * Per-direction impairment counters, defined once: the X-macro gives the
 * enum, the export names (netem xstats spelling where one exists) and a
 * description. The models increment a struct emu_counters that the caller
 * owns (one per direction); the app exports it by iterating the names.
 */
#ifndef EMU_COUNTERS_H
#define EMU_COUNTERS_H

#include <stdint.h>

#define EMU_COUNTER_LIST(X)                                                                        \
	X(RX, "rx", "packets entering stage 1 (originals, not duplicate copies)")                  \
	X(DROP_LOSS, "drop_loss", "dropped by the loss model")                                     \
	X(ECN_MARK_LOSS, "ecn_marked", "loss events turned into CE marks (netem ecn)")             \
	X(DUPLICATED, "duplicated", "duplicate copies created")                                    \
	X(CORRUPTED, "corrupted", "packets selected for a bit flip")                               \
	X(REORDERED, "reordered", "packets sent ahead of the delay line")                          \
	X(ENQUEUED, "enqueued", "packets accepted by the bottleneck queue")                        \
	X(DROP_QUEUE, "drop_queue", "tail drops at the bottleneck queue (limit)")                  \
	X(DEQUEUED, "dequeued", "packets that left the bottleneck queue")                          \
	X(ECN_MARK_RED, "ecn_marked_red", "CE marks by the RED congestion point")                  \
	X(RED_NOT_ECT, "red_not_ect", "non-ECT packets RED selected (passed unmarked)")            \
	X(PFC_XOFF, "pfc_xoff", "PFC XOFF frames requested (first pause)")                         \
	X(PFC_REFRESH, "pfc_xoff_refresh", "PFC XOFF frames re-sent before expiry")                \
	X(PFC_XON, "pfc_xon", "PFC XON (quanta 0) frames requested")

enum emu_counter {
#define EMU_COUNTER_ENUM(name, str, help) EMU_CNT_##name,
	EMU_COUNTER_LIST(EMU_COUNTER_ENUM)
#undef EMU_COUNTER_ENUM
	    EMU_CNT__COUNT
};

struct emu_counters {
	uint64_t v[EMU_CNT__COUNT];
};

/** Export name ("drop_loss") of counter @p c, or NULL if out of range. */
const char *emu_counter_name(unsigned c);

/** One-line description of counter @p c, or NULL if out of range. */
const char *emu_counter_help(unsigned c);

/** Zero all counters. */
void emu_counters_reset(struct emu_counters *c);

#endif /* EMU_COUNTERS_H */
