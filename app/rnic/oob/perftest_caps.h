/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file perftest_caps.h
 * The rnic's capability record, carried in the NUL padding of perftest's
 * 16-byte version string (docs/perftest-exchange.md, "Capability record").
 *
 * perftest reads the peer's version with atof(), which stops at the first
 * NUL, so bytes after "6.06\0" are free: an unmodified perftest (rxe,
 * ConnectX) ignores them, and sends NULs there itself. Two rnics use them to
 * agree on the loss recovery mode (and, later, FEC, VRP and CC): both must
 * support the requested mode, else both fall back to Go-Back-N, which sends
 * no extension packet.
 *
 * The local record is table-driven from lib/roce's registries
 * (roce_recovery_find, roce_cc_find): a mode registered under one of the
 * names in perftest_caps_recovery_names joins the negotiation without any
 * change here. The bit of a name is its index in that table (wire-stable:
 * never reorder, only append).
 */
#ifndef RW_PERFTEST_CAPS_H
#define RW_PERFTEST_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PERFTEST_CAPS_OFF 5	 /**< byte of the version message where the record starts */
#define PERFTEST_CAPS_LEN 11	 /**< bytes 5..15 */
#define PERFTEST_CAPS_MAX_VER 4	 /**< the version string must leave byte 4 as its NUL */
#define PERFTEST_CAPS_MAGIC0 'r' /**< bytes 5, 6: "rw" */
#define PERFTEST_CAPS_MAGIC1 'w'
#define PERFTEST_CAPS_VERSION 1 /**< record version written by this code */
#define PERFTEST_CAPS_NAMES 8	/**< bits per bitmap */
#define PERFTEST_CAPS_NONE 0x0f /**< "no request" in a request nibble */
/**
 * FEC bitmap (byte 11), bit 0: this rnic runs lib/fec (XOR and RS, docs/fec.md)
 * and asks for it (--recovery fec+MODE). Set only when asked for: FEC is on
 * when both records have it. Each side's encoder uses its own --fec; the
 * decoder learns the peer's parameters from its COMMIT and repair frames.
 */
#define PERFTEST_CAPS_FEC 0x01

/** Recovery mode names by bit ("gbn" = bit 0); NULL = unassigned. */
extern const char *const perftest_caps_recovery_names[PERFTEST_CAPS_NAMES];
/** Congestion control names by bit ("none" = bit 0). */
extern const char *const perftest_caps_cc_names[PERFTEST_CAPS_NAMES];

/** One side's record, decoded. */
struct perftest_caps {
	uint8_t version;      /**< record version (1) */
	uint8_t recovery;     /**< bitmap of supported recovery modes */
	uint8_t recovery_req; /**< index of the requested mode, or PERFTEST_CAPS_NONE */
	uint8_t cc;	      /**< bitmap of supported congestion controls */
	uint8_t cc_req;	      /**< index of the requested CC, or PERFTEST_CAPS_NONE */
	uint8_t fec;	      /**< bitmap of FEC schemes (PERFTEST_CAPS_FEC) */
	uint8_t vrp;	      /**< bitmap of VRP variants (none assigned yet: 0) */
	uint8_t param[2];     /**< reserved for parameters: written 0, ignored when read */
};

/** The negotiated outcome (both sides compute the same from the two records). */
struct perftest_caps_result {
	char recovery[16];  /**< the mode to use on every QP */
	bool peer_has_caps; /**< the peer sent a record (an rnic) */
	bool extensions;    /**< extension packets allowed: an rnic peer and a non-gbn mode */
	bool fell_back;	    /**< the requested mode could not be used: gbn instead */
	bool fec;	    /**< FEC on: both records have PERFTEST_CAPS_FEC */
};

/** Index of @p name in @p names, or -1. */
int perftest_caps_index(const char *const names[PERFTEST_CAPS_NAMES], const char *name);

/**
 * The local record: every name of the tables that lib/roce has registered,
 * and the requested @p recovery and @p cc (a mode or name outside the tables,
 * or NULL: no request). @p fec (--recovery fec+MODE) sets the FEC bit if
 * lib/roce has a FEC codec registered (roce_fec_codec).
 */
struct roce_recovery_ops;
void perftest_caps_local(struct perftest_caps *c, const struct roce_recovery_ops *recovery,
			 bool fec, const char *cc);

/** Writes the 11 record bytes (magic, version, fields, checksum). */
void perftest_caps_encode(const struct perftest_caps *c, uint8_t out[PERFTEST_CAPS_LEN]);

/**
 * Reads the padding of a peer's version message: @p msg is all 16 bytes,
 * @p len the length of the version string in it (the first NUL).
 * @return 1 with @p c filled (an rnic's record), 0 if every padding byte is
 * NUL (a standard perftest), or -1 with @p err naming the byte at fault
 * (non-zero padding that is not a record, a bad checksum, a record version
 * 0, a requested mode the peer does not itself support).
 */
int perftest_caps_decode(const uint8_t msg[16], size_t len, struct perftest_caps *c, char *err,
			 size_t errlen);

/**
 * Decides the recovery mode from the local record and the peer's (@p remote
 * NULL: a standard peer, or a tool without a version step such as
 * ibv_rc_pingpong; @p why says which, for the message).
 *  - no record: gbn; extensions off;
 *  - both records request the same mode and both support it: that mode;
 *  - the same request, but one side lacks it: gbn;
 *  - different requests: an error (give both rnics the same --recovery).
 * When the local request is not what is used, @p line gets ONE line saying
 * so (else it is set to ""). @p peer names the peer in messages.
 * @return 0, or -1 with the error in @p line.
 */
int perftest_caps_negotiate(const struct perftest_caps *local, const struct perftest_caps *remote,
			    const char *peer, const char *why, struct perftest_caps_result *res,
			    char *line, size_t linelen);

#endif /* RW_PERFTEST_CAPS_H */
