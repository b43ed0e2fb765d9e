/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file fec_wire.h
 * FEC's wire format (docs/wire.md, "FEC repair and negotiation"): the
 * opcodes, the code parameters, the FEC Repair Header (FRH), parsing a FEC
 * frame, building a negotiation frame, and the coded symbol of a data frame.
 * Implemented in fec_wire.c; the encoder and decoder are fec.h.
 */
#ifndef FEC_WIRE_H
#define FEC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_hdr.h"
#include "roce_opcode.h"

/* Manufacturer-specific BTH opcodes (docs/wire.md "Extension registry", 0xD0-0xDF: FEC). */
/* (one home: lib/roce's opcode table, roce_opcode.h) */
#define FEC_OP_REPAIR ROCE_XOP_FEC_REPAIR	/**< BTH | FRH | coded payload | pad | ICRC */
#define FEC_OP_NEGOTIATE ROCE_XOP_FEC_NEGOTIATE /**< BTH | FRH | ICRC */

#define FEC_FRH_LEN                                                                                \
	ROCE_FRH_LEN /**< FEC Repair Header (LoWAR's RH with its type-specific fields) */
#define FEC_K_MAX 64 /**< data frames per block (the cover mask is 64 bit) */
#define FEC_D_MAX 16 /**< interleaving depth (XOR) */
#define FEC_R_MAX 8  /**< repair frames per block (RS) */
/** Largest coded region: IPv6 40 + UDP 8 + BTH 12 + 28 ext + 4096 MTU + pad 3 + ICRC 4 (+ margin).
 */
#define FEC_DATA_MAX 4224
#define FEC_SYM_MAX (2 + FEC_DATA_MAX) /**< length prefix + coded region */
#define FEC_FRAME_MAX 4352	       /**< largest frame built or rebuilt */
#define FEC_L2_MAX 22		       /**< Ethernet + two VLAN tags */

enum fec_mode {
	FEC_MODE_OFF = 0,
	FEC_MODE_XOR = 1, /**< LoWAR: one XOR repair per block of K, interleaving depth D */
	FEC_MODE_RS = 2,  /**< Reed-Solomon (ISA-L Cauchy matrix): R repairs per block of K */
};

/** FRH type (byte 0, LoWAR's "Type"). */
enum fec_type {
	FEC_T_XOR = 1,	   /**< XOR repair */
	FEC_T_RS = 2,	   /**< Reed-Solomon repair (row r of R) */
	FEC_T_PROPOSE = 3, /**< negotiation, receiver -> sender: please use these parameters */
	FEC_T_COMMIT =
	    4, /**< negotiation, sender -> receiver: these parameters from anchor PSN on */
};

/** Which PSN space a covered frame belongs to. */
enum fec_stream {
	FEC_STREAM_REQ = 0,  /**< request packets (the sender's SQ PSNs) */
	FEC_STREAM_RESP = 1, /**< RDMA READ responses (the READ requests' PSNs) */
	FEC_NSTREAMS = 2,
};

struct fec_params {
	uint8_t mode; /**< enum fec_mode */
	uint8_t k;    /**< data frames per block, 1..FEC_K_MAX */
	uint8_t d;    /**< interleaving depth, 1..FEC_D_MAX (RS: 1) */
	uint8_t r;    /**< repairs per block, 1..FEC_R_MAX (XOR: 1) */
};

/** The default, `xor:32,4` (docs/fec.md says why). */
#define FEC_PARAMS_DEFAULT ((struct fec_params){FEC_MODE_XOR, 32, 4, 1})

/** 0 if @p p is a valid parameter set, else -1. */
int fec_params_check(const struct fec_params *p);
/** Parse "xor:K,D" or "rs:K,R" (also "off"). 0, or -1 with a message in @p err. */
int fec_params_parse(const char *s, struct fec_params *p, char *err, size_t errlen);
/** Format as "xor:K,D" / "rs:K,R" / "off". Returns snprintf's result. */
int fec_params_format(const struct fec_params *p, char *buf, size_t len);

/** FEC Repair Header, decoded (docs/wire.md: byte layout). */
struct fec_frh {
	uint8_t type;	/**< enum fec_type */
	uint8_t stream; /**< enum fec_stream */
	struct fec_params p;
	uint8_t row;	   /**< repair row 0..R-1 */
	uint16_t len_code; /**< code of the covered frames' lengths (XOR: XOR of the lengths) */
	uint32_t block_id; /**< blocks the encoder opened in this stream, counted from 0 */
	uint32_t anchor;   /**< PSN the block grid starts at (24 bit) */
	uint64_t mask;	   /**< members coded in: bit i = PSN first + i * D */
};

void fec_frh_write(uint8_t *b, const struct fec_frh *h);
/** Decode and check a header (types, K/D/R ranges, row < R, mask within K bits). 0 or -1. */
int fec_frh_read(const uint8_t *b, struct fec_frh *h);

/** A parsed FEC frame (repair or negotiation). */
struct fec_pkt {
	struct fec_frh frh;
	uint32_t dqpn;	      /**< BTH destination QP */
	uint32_t psn;	      /**< BTH PSN: the block's first member (repair) / anchor (commit) */
	uint16_t l3_off;      /**< IP header offset */
	uint8_t ip_ver;	      /**< 4 or 6 */
	uint16_t payload_off; /**< coded payload (after the FRH) */
	uint32_t payload_len; /**< coded payload bytes, pad excluded */
	uint32_t frame_len;   /**< up to and including the ICRC */
};

/** enum fec_err: why a frame was refused (negative return values). */
enum fec_err {
	FEC_E_NOT_FEC = 1, /**< not a RoCEv2 frame with a FEC opcode */
	FEC_E_PARSE,	   /**< Ethernet/IP/UDP/BTH malformed or truncated */
	FEC_E_ICRC,	   /**< ICRC mismatch */
	FEC_E_FRH,	   /**< FRH fields out of range */
	FEC_E_LEN, /**< payload length inconsistent (too long, pad, negotiation with payload) */
};

/**
 * Parse a FEC frame: Ethernet [802.1Q] | IP | UDP 4791 | BTH (opcode 0xD0/0xD1)
 * | FRH | payload | pad | ICRC. Never reads past @p len. @p check_icrc: verify
 * the ICRC. 0, or a negative ::fec_err.
 */
int fec_parse(const uint8_t *frame, size_t len, struct fec_pkt *out, bool check_icrc);

/** True if the BTH opcode of a parsed-enough frame is a FEC opcode. */
static inline bool
fec_opcode_is_fec(uint8_t opcode)
{
	return opcode == FEC_OP_REPAIR || opcode == FEC_OP_NEGOTIATE;
}

/**
 * Build a negotiation frame (no payload) into @p buf from the Ethernet/IP/UDP
 * headers of @p tmpl (any RoCEv2 frame going the same way, e.g. an ACK), with
 * BTH destination QP @p dqpn and PSN @p psn. Returns the frame length or -1.
 */
int fec_build_negotiate(uint8_t *buf, size_t cap, const uint8_t *tmpl, size_t tmpl_len,
			uint32_t dqpn, uint32_t psn, const struct fec_frh *h);

/* ---- the coded symbol (shared by encoder, decoder, tests and validate) ---- */

/**
 * Write the coded symbol of a RoCEv2 frame into @p sym (cap FEC_SYM_MAX):
 * 16-bit length L | frame[l3_off .. l3_off + L) with the variant fields zeroed.
 * Returns 2 + L, or -1 (not a covered frame, too long). @p stream, @p psn out.
 */
int fec_symbol(const uint8_t *frame, size_t len, uint8_t *sym, int *stream, uint32_t *psn);

#endif /* FEC_WIRE_H */
