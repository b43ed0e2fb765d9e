/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file roce_hdr.h
 * InfiniBand transport headers carried by RoCEv2 (IBTA Vol. 1 ch. 9 and
 * Annex A17): sizes, field layouts and host-order views. DPDK 22.11 has no
 * RoCE header definitions, so they live here. All multi-byte fields are
 * big-endian on the wire; the structs below are decoded, host-order views,
 * never overlaid on packet memory.
 */
#ifndef ROCE_HDR_H
#define ROCE_HDR_H

#include <stdint.h>

#include "net_hdr.h"

#define ROCE_UDP_DPORT NET_UDP_PORT_ROCEV2
#define ROCE_DEFAULT_PKEY 0xffff
#define ROCE_ICRC_LEN 4

#define ROCE_BTH_LEN 12
#define ROCE_RETH_LEN 16
#define ROCE_AETH_LEN 4
#define ROCE_DETH_LEN 8
#define ROCE_IMMDT_LEN 4
#define ROCE_IETH_LEN 4
#define ROCE_ATOMICETH_LEN 28
#define ROCE_ATOMICACKETH_LEN 8
#define ROCE_CNP_RSVD_LEN 16 /**< CNP: 16 reserved bytes after the BTH */
/* Vendor extension headers of the manufacturer-specific opcodes (docs/wire.md registry) */
#define ROCE_SPETH_LEN 8   /**< SEND placement: receive-WQE sequence number | byte offset */
#define ROCE_NTETH_LEN 4   /**< RACK/SACK notice: run (8 bit) | PSN the receiver got (24 bit) */
#define ROCE_FRH_LEN 28	   /**< FEC Repair Header (lib/fec, docs/wire.md): LoWAR's RH fields */
#define ROCE_VTETH_LEN 44  /**< VRP tolerance of a WRITE message (docs/wire.md): VRP §3.1 tags */
#define ROCE_VTETH_CRIT 4  /**< critical ranges a VTETH carries */
#define ROCE_VLETH_LEN 80  /**< VRP loss summary of a WRITE message (docs/wire.md, 0xE3) */
#define ROCE_VLETH_HOLES 8 /**< holes a VLETH carries (= ROCE_VRP_HOLES) */

/** BTH (IBTA 9.2): opcode | SE M Pad(2) TVer(4) | P_Key | F B resv6 | DestQP | A resv7 | PSN */
struct roce_bth {
	uint8_t opcode;
	uint8_t se;   /**< solicited event */
	uint8_t mig;  /**< MigReq */
	uint8_t pad;  /**< pad count 0..3 */
	uint8_t tver; /**< transport header version, 0 */
	uint16_t pkey;
	uint8_t fecn;
	uint8_t becn;
	uint32_t dqpn; /**< 24 bit */
	uint8_t ackreq;
	uint32_t psn; /**< 24 bit */
};

/** RETH (9.3.3): virtual address, R_Key, DMA length. */
struct roce_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t dlen;
};

/** AETH syndrome classes (IBTA 9.7.5.2.2, table 42): bits 6:5 of the syndrome. */
enum roce_aeth_type {
	ROCE_AETH_ACK = 0,
	ROCE_AETH_RNR_NAK = 1,
	ROCE_AETH_RSVD = 2,
	ROCE_AETH_NAK = 3,
};

/** NAK codes, the low 5 bits of a NAK syndrome. */
enum roce_nak_code {
	ROCE_NAK_PSN_SEQ_ERR = 0,
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REMOTE_ACCESS = 2,
	ROCE_NAK_REMOTE_OP = 3,
	ROCE_NAK_INVALID_RD_REQ = 4,
};

#define ROCE_AETH_CREDIT_INVALID 0x1f /**< "no credit count" in an ACK */

/** AETH (9.3.5): syndrome (8 bit) | MSN (24 bit). */
struct roce_aeth {
	uint8_t syndrome;
	uint32_t msn;
};

static inline enum roce_aeth_type
roce_aeth_type(uint8_t syndrome)
{
	return (enum roce_aeth_type)((syndrome >> 5) & 3);
}

/** Low 5 bits: credit count (ACK), timer code (RNR NAK) or NAK code (NAK). */
static inline uint8_t
roce_aeth_value(uint8_t syndrome)
{
	return syndrome & 0x1f;
}

static inline uint8_t
roce_aeth_syndrome(enum roce_aeth_type t, uint8_t value)
{
	return (uint8_t)((t & 3) << 5 | (value & 0x1f));
}

/** DETH (9.3.4): Q_Key | resv8 | source QP (24 bit). */
struct roce_deth {
	uint32_t qkey;
	uint32_t sqpn;
};

/** AtomicETH (9.3.7): VA | R_Key | swap/add data | compare data. */
struct roce_atomiceth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap_add;
	uint64_t cmp;
};

/**
 * SPETH (rocewan extension, docs/wire.md): where an out-of-order SEND packet
 * goes without the FIRST packet's help: the receive WQE (counted from 0 over
 * the messages that consume one, SEND and RDMA WRITE with immediate) and the
 * byte offset of this packet in the message.
 */
struct roce_speth {
	uint32_t wqe_seq;
	uint32_t offset;
};

/** VTETH flags: which of the sender's tolerance fields the message sets (VRP §3.1 tags). */
enum roce_vteth_flag {
	ROCE_VTETH_F_LOSS = 1 << 0,   /**< LOSS_RATE: loss_bp */
	ROCE_VTETH_F_WINDOW = 1 << 1, /**< the history window: window */
	ROCE_VTETH_F_BURST = 1 << 2,  /**< CONS_LOSS: max_burst */
	ROCE_VTETH_F_ALL = 0x07,
};

/**
 * VTETH (rocewan extension, docs/wire.md): the loss tolerance of one RDMA
 * WRITE message under --recovery vrp, carried by its FIRST packet (opcode
 * 0xE2). VRP's LOSS_RATE, CONS_LOSS and CRITICAL_INTERVAL tags (Denis, LIP
 * RR-2000-11, §3.1), in bytes and basis points. Host-order view.
 */
struct roce_vteth {
	uint8_t flags;	    /**< enum roce_vteth_flag; bits 3-7 zero */
	uint8_t n_crit;	    /**< critical ranges used (0..ROCE_VTETH_CRIT) */
	uint16_t loss_bp;   /**< tolerated loss over the window, basis points (0..10000) */
	uint16_t window;    /**< history window in packets (0: 64) */
	uint32_t max_burst; /**< largest consecutive loss in bytes (0xffffffff: no bound) */
	struct {
		uint32_t off, len;
	} crit[ROCE_VTETH_CRIT]; /**< byte ranges of the message never lost */
};

/** VLETH flags. */
enum roce_vleth_flag {
	ROCE_VLETH_F_TRUNC = 1 << 0, /**< the message had more holes than the VLETH carries */
	ROCE_VLETH_F_ALL = 0x01,
};

/**
 * VLETH (rocewan extension, docs/wire.md): what one RDMA WRITE message lost
 * under --recovery vrp, as the responder's loss record has it, sent back to
 * the requester in a VRP LOSS summary (opcode 0xE3) when the message ends.
 * Host-order view.
 */
struct roce_vleth {
	uint32_t len;	    /**< message length (bytes) */
	uint32_t lost_pkts; /**< packets given up (zero-filled) */
	uint32_t lost_bytes;
	uint8_t n_holes; /**< entries of holes[] used (0..ROCE_VLETH_HOLES) */
	uint8_t flags;	 /**< enum roce_vleth_flag; bits 1-7 zero */
	struct {
		uint32_t off, len;
	} holes[ROCE_VLETH_HOLES]; /**< merged zero-filled byte ranges, in order */
};

/** All transport headers of one packet; which ones are valid is in the opcode table. */
struct roce_hdrs {
	struct roce_bth bth;
	struct roce_reth reth;
	struct roce_aeth aeth;
	struct roce_deth deth;
	uint32_t imm;	    /**< ImmDt, as the 32-bit big-endian value read in host order */
	uint32_t ieth_rkey; /**< IETH: R_Key to invalidate */
	struct roce_atomiceth atomic;
	uint64_t atomic_orig;	 /**< AtomicAckETH: original remote data */
	struct roce_speth speth; /**< SPETH (extension opcodes) */
	uint32_t nt_psn;	 /**< NTETH: the PSN a RACK/SACK reports received (24 bit) */
	uint8_t nt_run;	      /**< NTETH: how many PSNs right before nt_psn the receiver has too */
	struct roce_vteth vt; /**< VTETH (VRP WRITE FIRST, 0xE2) */
	struct roce_vleth vl; /**< VLETH (VRP LOSS summary, 0xE3) */
};

#endif /* ROCE_HDR_H */
