/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_opcode.h
 * The one BTH opcode table (IBTA Vol. 1 table 38 plus the RoCEv2 CNP of
 * Annex A17): name, transport, extension headers, payload, and position of
 * the packet in a message (first / middle / last / only).
 */
#ifndef ROCE_OPCODE_H
#define ROCE_OPCODE_H

#include <stdbool.h>
#include <stdint.h>

enum roce_transport {
	ROCE_TR_NONE = 0, /**< reserved opcode */
	ROCE_TR_RC,
	ROCE_TR_UC,
	ROCE_TR_UD,
	ROCE_TR_CNP,
};

/** Extension headers, in wire order (IBTA 9.2: DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt,
 * IETH). */
enum roce_ext {
	ROCE_EXT_DETH = 1 << 0,
	ROCE_EXT_RETH = 1 << 1,
	ROCE_EXT_ATOMICETH = 1 << 2,
	ROCE_EXT_AETH = 1 << 3,
	ROCE_EXT_ATOMICACKETH = 1 << 4,
	ROCE_EXT_IMMDT = 1 << 5,
	ROCE_EXT_IETH = 1 << 6,
	ROCE_EXT_CNP = 1 << 7, /**< the 16 reserved bytes of a CNP */
	/* rocewan extension headers of the manufacturer-specific opcodes 0xC0-0xFF */
	ROCE_EXT_SPETH = 1 << 8,  /**< SEND placement: receive-WQE sequence number, offset */
	ROCE_EXT_NTETH = 1 << 9,  /**< RACK/SACK: the PSN received */
	ROCE_EXT_FRH = 1 << 10,	  /**< FEC repair / negotiation: the FEC Repair Header (lib/fec) */
	ROCE_EXT_VTETH = 1 << 11, /**< VRP WRITE FIRST: the message's loss tolerance */
	ROCE_EXT_VLETH = 1 << 12, /**< VRP LOSS summary: what a WRITE message lost */
};

/** Opcode flags. */
enum roce_opf {
	ROCE_OPF_PAYLOAD = 1 << 0, /**< may carry payload */
	ROCE_OPF_FIRST = 1 << 1,
	ROCE_OPF_MIDDLE = 1 << 2,
	ROCE_OPF_LAST = 1 << 3,
	ROCE_OPF_ONLY = ROCE_OPF_FIRST | ROCE_OPF_LAST,
	ROCE_OPF_REQ = 1 << 4,	/**< sent by a requester */
	ROCE_OPF_RESP = 1 << 5, /**< sent by a responder (ACK, read response, atomic ack) */
	ROCE_OPF_SEND = 1 << 6,
	ROCE_OPF_WRITE = 1 << 7,
	ROCE_OPF_READ = 1 << 8,
	ROCE_OPF_ATOMIC = 1 << 9,
	ROCE_OPF_IMM = 1 << 10,
	ROCE_OPF_INV = 1 << 11,
	ROCE_OPF_ACK = 1 << 12,	   /**< ACKNOWLEDGE (plain ACK/NAK) */
	ROCE_OPF_VENDOR = 1 << 13, /**< a rocewan manufacturer-specific opcode (0xC0-0xFF) */
	ROCE_OPF_NOTICE = 1 << 14, /**< RACK / SACK: a cumulative ACK plus one PSN received */
	ROCE_OPF_PLACED = 1 << 15, /**< self-placing request: placeable out of order */
};

/** Opcode numbers (transport base + operation). */
enum roce_opcode_num {
	ROCE_OP_RC_BASE = 0x00,
	ROCE_OP_UC_BASE = 0x20,
	ROCE_OP_UD_BASE = 0x60,
	/* operation offsets within a transport */
	ROCE_OP_SEND_FIRST = 0x00,
	ROCE_OP_SEND_MIDDLE = 0x01,
	ROCE_OP_SEND_LAST = 0x02,
	ROCE_OP_SEND_LAST_IMM = 0x03,
	ROCE_OP_SEND_ONLY = 0x04,
	ROCE_OP_SEND_ONLY_IMM = 0x05,
	ROCE_OP_WRITE_FIRST = 0x06,
	ROCE_OP_WRITE_MIDDLE = 0x07,
	ROCE_OP_WRITE_LAST = 0x08,
	ROCE_OP_WRITE_LAST_IMM = 0x09,
	ROCE_OP_WRITE_ONLY = 0x0a,
	ROCE_OP_WRITE_ONLY_IMM = 0x0b,
	ROCE_OP_READ_REQ = 0x0c,
	ROCE_OP_READ_RESP_FIRST = 0x0d,
	ROCE_OP_READ_RESP_MIDDLE = 0x0e,
	ROCE_OP_READ_RESP_LAST = 0x0f,
	ROCE_OP_READ_RESP_ONLY = 0x10,
	ROCE_OP_ACK = 0x11,
	ROCE_OP_ATOMIC_ACK = 0x12,
	ROCE_OP_CMP_SWAP = 0x13,
	ROCE_OP_FETCH_ADD = 0x14,
	ROCE_OP_SEND_LAST_INV = 0x16,
	ROCE_OP_SEND_ONLY_INV = 0x17,
	ROCE_OP_CNP = 0x81,
	/*
	 * rocewan extension registry (docs/wire.md): manufacturer-specific
	 * opcodes, which IBTA table 38 leaves to vendors. Only sent to a peer
	 * that runs a selective recovery mode.
	 */
	ROCE_XOP_RACK = 0xc0,		 /**< Go-Back-ONE RACK */
	ROCE_XOP_SACK = 0xc1,		 /**< IRN SACK */
	ROCE_XOP_WRITE_MIDDLE = 0xc2,	 /**< RDMA WRITE MIDDLE + RETH of this packet */
	ROCE_XOP_WRITE_LAST = 0xc3,	 /**< RDMA WRITE LAST + RETH of this packet */
	ROCE_XOP_SEND_FIRST = 0xc4,	 /**< SEND FIRST + SPETH */
	ROCE_XOP_SEND_MIDDLE = 0xc5,	 /**< SEND MIDDLE + SPETH */
	ROCE_XOP_SEND_LAST = 0xc6,	 /**< SEND LAST + SPETH */
	ROCE_XOP_SEND_LAST_IMM = 0xc7,	 /**< SEND LAST with immediate + SPETH */
	ROCE_XOP_SEND_ONLY = 0xc8,	 /**< SEND ONLY + SPETH */
	ROCE_XOP_SEND_ONLY_IMM = 0xc9,	 /**< SEND ONLY with immediate + SPETH */
	ROCE_XOP_FEC_REPAIR = 0xd0,	 /**< FEC repair: FRH + coded payload (docs/fec.md) */
	ROCE_XOP_FEC_NEGOTIATE = 0xd1,	 /**< FEC negotiation (PROPOSE / COMMIT): FRH only */
	ROCE_XOP_VRP_ACK = 0xe0,	 /**< VRP cumulative + single ACK (AETH, NTETH) */
	ROCE_XOP_VRP_NACK = 0xe1,	 /**< VRP NACK of an intolerable loss (AETH, NTETH) */
	ROCE_XOP_WRITE_FIRST_VRP = 0xe2, /**< WRITE FIRST + RETH + VTETH (per-WR tolerance) */
	ROCE_XOP_VRP_LOSS = 0xe3,	 /**< VRP loss summary of a WRITE message (AETH, VLETH) */
	/* 0xca-0xcf: selective recovery (reserved); 0xd2-0xdf: FEC (reserved);
	 * 0xe4-0xef: VRP (reserved); 0xf0-0xff: free */
};

struct roce_opcode_info {
	const char *name;  /**< IBTA name, e.g. "RC_SEND_FIRST"; NULL if reserved */
	uint8_t transport; /**< enum roce_transport */
	uint16_t ext;	   /**< enum roce_ext mask */
	uint8_t hdr_len;   /**< BTH + extension headers, bytes */
	uint16_t flags;	   /**< enum roce_opf */
};

/** Indexed by opcode; entries with transport == ROCE_TR_NONE are reserved. */
extern const struct roce_opcode_info roce_opcodes[256];

static inline const struct roce_opcode_info *
roce_opcode_info(uint8_t opcode)
{
	return &roce_opcodes[opcode];
}

static inline bool
roce_opcode_valid(uint8_t opcode)
{
	return roce_opcodes[opcode].transport != ROCE_TR_NONE;
}

/**
 * A FEC repair or negotiation frame (0xD0/0xD1): neither a request nor a
 * response; only a QP with FEC on (roce_qp_set_fec) takes it, others count
 * it in rx_drop_fec_off.
 */
static inline bool
roce_opcode_is_fec(uint8_t opcode)
{
	return (roce_opcodes[opcode].ext & ROCE_EXT_FRH) != 0;
}

/** Name of an opcode, or "RESERVED". */
const char *roce_opcode_name(uint8_t opcode);

/** Offset of extension header @p ext (one bit) within the headers after the BTH, or -1. */
int roce_ext_offset(uint8_t opcode, enum roce_ext ext);

#endif /* ROCE_OPCODE_H */
