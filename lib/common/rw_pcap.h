/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rw_pcap.h
 * Classic libpcap files (LINKTYPE_ETHERNET), read and written without libpcap,
 * for tools and tests. Microsecond and nanosecond magic numbers, either byte order.
 */
#ifndef RW_PCAP_H
#define RW_PCAP_H

#include <stdint.h>
#include <stdio.h>

#define RW_PCAP_SNAPLEN 65535

struct rw_pcap {
	FILE *f;
	int swapped; /**< file written in the other byte order */
	int nsec;    /**< timestamps in nanoseconds */
	uint32_t linktype;
};

/** Open for reading; returns 0 or -errno / -EPROTO (not a pcap) / -EPROTONOSUPPORT (not Ethernet).
 */
int rw_pcap_open_read(struct rw_pcap *p, const char *path);
/**
 * Read the next record into buf (at most cap bytes; longer records are truncated
 * and *orig_len tells). *caplen gets the bytes stored (0 for an empty record).
 * Returns 1 for a record, 0 at end of file, negative on error.
 */
int rw_pcap_next(struct rw_pcap *p, uint8_t *buf, uint32_t cap, uint32_t *caplen, uint64_t *ts_ns,
		 uint32_t *orig_len);
/** Create a pcap (microsecond timestamps). */
int rw_pcap_open_write(struct rw_pcap *p, const char *path);
int rw_pcap_write(struct rw_pcap *p, const uint8_t *buf, uint32_t len, uint64_t ts_ns);
int rw_pcap_close(struct rw_pcap *p);

#endif /* RW_PCAP_H */
