/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file lemu_droplog.h
 * --drop-log FILE: one CSV line per frame the emulator drops, for joining
 * with the rnic's --trace (python/rocewan/trace.py). Time is CLOCK_MONOTONIC
 * in ns, the clock the rnic's trace uses too, read at the drop (a vDSO call,
 * only when a frame is dropped and the log is on). Both directions write
 * through one stdio stream, whose lock keeps lines whole; it is flushed when
 * its 1 MiB buffer fills and at exit.
 *
 *   # lossy-emu drop log; clock CLOCK_MONOTONIC ns; ...
 *   time_ns,dir,cause,qpn,psn,opcode,len
 *   1234567890123,a2b,drop-psn,17,5431582,10,1082
 *   1234567990123,b2a,loss,,,,60
 *
 * qpn (destination QP), psn and opcode (from the BTH, as net_frame_classify()
 * finds it) are decimal and empty for frames that are not RoCEv2. Causes: drop-psn, drop-nth (the
 * SPEC's rules), loss (the loss model), queue (bottleneck tail drop), multiseg, ctrl (control TX
 * buffer full).
 */
#ifndef LEMU_DROPLOG_H
#define LEMU_DROPLOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

extern FILE *lemu_droplog_f; /**< NULL: no --drop-log */

/** Open @p path and write the header. 0, or -errno with @p err set. */
int lemu_droplog_open(const char *path, char *err, size_t errlen);

/** Log one dropped frame of direction @p dir (a2b, b2a). */
void lemu_droplog_frame(unsigned dir, const char *cause, const uint8_t *f, uint32_t len);

/** Flush and close (at exit). 0 or -errno. */
int lemu_droplog_close(void);

#endif /* LEMU_DROPLOG_H */
