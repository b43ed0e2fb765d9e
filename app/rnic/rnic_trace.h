/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rnic_trace.h
 * --trace FILE: the engine's loss-recovery events (lib/roce roce_trace.h),
 * one CSV line each, for joining with lossy-emu's --drop-log
 * (python/rocewan/trace.py). Off by default: without --trace the device has
 * no trace op and the engine does nothing. Time is CLOCK_MONOTONIC ns read
 * at the event (the clock of the drop log), not the engine's TSC clock.
 *
 *   # rnic trace; clock CLOCK_MONOTONIC ns; ...
 *   time_ns,event,qpn,dqpn,psn
 *   1234567990456,retx,17,17,5431582
 *   1234568010789,rx_late,17,17,5431582
 *
 * qpn is the local QP, dqpn its peer; numbers are decimal. A request the
 * emulator dropped (destination QP Q, PSN P) is resent as "retx" with
 * dqpn = Q by the sender and arrives as "rx_late" with qpn = Q at the
 * receiver. Lines are written through one stdio stream (1 MiB buffer, its
 * lock keeps lines of several lcores whole), flushed at exit.
 */
#ifndef RNIC_TRACE_H
#define RNIC_TRACE_H

#include <stddef.h>

#include "roce_trace.h"

/** Open @p path and write the header. 0 or -errno with @p err set. */
int rnic_trace_open(const char *path, char *err, size_t errlen);

/** roce_dev_ops.trace: write one event (@p ctx unused). */
void rnic_trace_event(void *ctx, const struct roce_trace_event *ev);

/** Flush and close; 0 or -errno. */
int rnic_trace_close(void);

#endif /* RNIC_TRACE_H */
