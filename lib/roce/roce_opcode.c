/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce_opcode.h"

#include "roce_hdr.h"

/* Header lengths of common opcode shapes. */
#define B ROCE_BTH_LEN
#define R ROCE_RETH_LEN
#define A ROCE_AETH_LEN
#define D ROCE_DETH_LEN
#define I ROCE_IMMDT_LEN
#define SP ROCE_SPETH_LEN
#define NT ROCE_NTETH_LEN
#define FR ROCE_FRH_LEN
#define VT ROCE_VTETH_LEN
#define VL ROCE_VLETH_LEN
#define XP (ROCE_OPF_VENDOR | ROCE_OPF_PLACED)

/* Operations shared by RC and UC (IBTA table 38, offsets 0x00..0x0b). */
#define RC_UC_OPS(base, pfx, tr)                                                                   \
	[base +                                                                                    \
	    0x00] = {pfx "_SEND_FIRST", tr, 0, B,                                                  \
		     ROCE_OPF_PAYLOAD | ROCE_OPF_FIRST | ROCE_OPF_REQ | ROCE_OPF_SEND},            \
	    [base + 0x01] = {pfx "_SEND_MIDDLE", tr, 0, B,                                         \
			     ROCE_OPF_PAYLOAD | ROCE_OPF_MIDDLE | ROCE_OPF_REQ | ROCE_OPF_SEND},   \
	    [base + 0x02] = {pfx "_SEND_LAST", tr, 0, B,                                           \
			     ROCE_OPF_PAYLOAD | ROCE_OPF_LAST | ROCE_OPF_REQ | ROCE_OPF_SEND},     \
	    [base + 0x03] = {pfx "_SEND_LAST_WITH_IMMEDIATE", tr, ROCE_EXT_IMMDT, B + I,           \
			     ROCE_OPF_PAYLOAD | ROCE_OPF_LAST | ROCE_OPF_REQ | ROCE_OPF_SEND |     \
				 ROCE_OPF_IMM},                                                    \
	    [base + 0x04] = {pfx "_SEND_ONLY", tr, 0, B,                                           \
			     ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_REQ | ROCE_OPF_SEND},     \
	    [base + 0x05] = {pfx "_SEND_ONLY_WITH_IMMEDIATE", tr, ROCE_EXT_IMMDT, B + I,           \
			     ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_REQ | ROCE_OPF_SEND |     \
				 ROCE_OPF_IMM},                                                    \
	    [base + 0x06] = {pfx "_RDMA_WRITE_FIRST", tr, ROCE_EXT_RETH, B + R,                    \
			     ROCE_OPF_PAYLOAD | ROCE_OPF_FIRST | ROCE_OPF_REQ | ROCE_OPF_WRITE},   \
	    [base + 0x07] = {pfx "_RDMA_WRITE_MIDDLE", tr, 0, B,                                   \
			     ROCE_OPF_PAYLOAD | ROCE_OPF_MIDDLE | ROCE_OPF_REQ | ROCE_OPF_WRITE},  \
	    [base + 0x08] = {pfx "_RDMA_WRITE_LAST", tr, 0, B,                                     \
			     ROCE_OPF_PAYLOAD | ROCE_OPF_LAST | ROCE_OPF_REQ | ROCE_OPF_WRITE},    \
	    [base + 0x09] = {pfx "_RDMA_WRITE_LAST_WITH_IMMEDIATE", tr, ROCE_EXT_IMMDT, B + I,     \
			     ROCE_OPF_PAYLOAD | ROCE_OPF_LAST | ROCE_OPF_REQ | ROCE_OPF_WRITE |    \
				 ROCE_OPF_IMM},                                                    \
	    [base + 0x0a] = {pfx "_RDMA_WRITE_ONLY", tr, ROCE_EXT_RETH, B + R,                     \
			     ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_REQ | ROCE_OPF_WRITE},    \
	    [base + 0x0b] = {pfx "_RDMA_WRITE_ONLY_WITH_IMMEDIATE", tr,                            \
			     ROCE_EXT_RETH | ROCE_EXT_IMMDT, B + R + I,                            \
			     ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_REQ | ROCE_OPF_WRITE |    \
				 ROCE_OPF_IMM}

const struct roce_opcode_info roce_opcodes[256] = {
    RC_UC_OPS(0x00, "RC", ROCE_TR_RC),
    [0x0c] = {"RC_RDMA_READ_REQUEST", ROCE_TR_RC, ROCE_EXT_RETH, B + R,
	      ROCE_OPF_ONLY | ROCE_OPF_REQ | ROCE_OPF_READ},
    [0x0d] = {"RC_RDMA_READ_RESPONSE_FIRST", ROCE_TR_RC, ROCE_EXT_AETH, B + A,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_FIRST | ROCE_OPF_RESP | ROCE_OPF_READ},
    [0x0e] = {"RC_RDMA_READ_RESPONSE_MIDDLE", ROCE_TR_RC, 0, B,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_MIDDLE | ROCE_OPF_RESP | ROCE_OPF_READ},
    [0x0f] = {"RC_RDMA_READ_RESPONSE_LAST", ROCE_TR_RC, ROCE_EXT_AETH, B + A,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_LAST | ROCE_OPF_RESP | ROCE_OPF_READ},
    [0x10] = {"RC_RDMA_READ_RESPONSE_ONLY", ROCE_TR_RC, ROCE_EXT_AETH, B + A,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_RESP | ROCE_OPF_READ},
    [0x11] = {"RC_ACKNOWLEDGE", ROCE_TR_RC, ROCE_EXT_AETH, B + A,
	      ROCE_OPF_ONLY | ROCE_OPF_RESP | ROCE_OPF_ACK},
    [0x12] = {"RC_ATOMIC_ACKNOWLEDGE", ROCE_TR_RC, ROCE_EXT_AETH | ROCE_EXT_ATOMICACKETH,
	      B + A + ROCE_ATOMICACKETH_LEN, ROCE_OPF_ONLY | ROCE_OPF_RESP | ROCE_OPF_ATOMIC},
    [0x13] = {"RC_CMP_SWAP", ROCE_TR_RC, ROCE_EXT_ATOMICETH, B + ROCE_ATOMICETH_LEN,
	      ROCE_OPF_ONLY | ROCE_OPF_REQ | ROCE_OPF_ATOMIC},
    [0x14] = {"RC_FETCH_ADD", ROCE_TR_RC, ROCE_EXT_ATOMICETH, B + ROCE_ATOMICETH_LEN,
	      ROCE_OPF_ONLY | ROCE_OPF_REQ | ROCE_OPF_ATOMIC},
    [0x16] = {"RC_SEND_LAST_WITH_INVALIDATE", ROCE_TR_RC, ROCE_EXT_IETH, B + ROCE_IETH_LEN,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_LAST | ROCE_OPF_REQ | ROCE_OPF_SEND | ROCE_OPF_INV},
    [0x17] = {"RC_SEND_ONLY_WITH_INVALIDATE", ROCE_TR_RC, ROCE_EXT_IETH, B + ROCE_IETH_LEN,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_REQ | ROCE_OPF_SEND | ROCE_OPF_INV},
    RC_UC_OPS(0x20, "UC", ROCE_TR_UC),
    [0x64] = {"UD_SEND_ONLY", ROCE_TR_UD, ROCE_EXT_DETH, B + D,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_REQ | ROCE_OPF_SEND},
    [0x65] = {"UD_SEND_ONLY_WITH_IMMEDIATE", ROCE_TR_UD, ROCE_EXT_DETH | ROCE_EXT_IMMDT, B + D + I,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_REQ | ROCE_OPF_SEND | ROCE_OPF_IMM},
    [0x81] = {"CNP", ROCE_TR_CNP, ROCE_EXT_CNP, B + ROCE_CNP_RSVD_LEN, 0},
    /* rocewan manufacturer-specific opcodes (docs/wire.md, "Extension registry") */
    [0xc0] = {"RC_X_RACK", ROCE_TR_RC, ROCE_EXT_AETH | ROCE_EXT_NTETH, B + A + NT,
	      ROCE_OPF_ONLY | ROCE_OPF_RESP | ROCE_OPF_VENDOR | ROCE_OPF_NOTICE},
    [0xc1] = {"RC_X_SACK", ROCE_TR_RC, ROCE_EXT_AETH | ROCE_EXT_NTETH, B + A + NT,
	      ROCE_OPF_ONLY | ROCE_OPF_RESP | ROCE_OPF_VENDOR | ROCE_OPF_NOTICE},
    /* VRP (Denis, LIP RR-2000-11, §3.1 ACK/SINGLE_ACK/NACK tags; docs/wire.md) */
    [0xe0] = {"RC_X_VRP_ACK", ROCE_TR_RC, ROCE_EXT_AETH | ROCE_EXT_NTETH, B + A + NT,
	      ROCE_OPF_ONLY | ROCE_OPF_RESP | ROCE_OPF_VENDOR | ROCE_OPF_NOTICE},
    [0xe1] = {"RC_X_VRP_NACK", ROCE_TR_RC, ROCE_EXT_AETH | ROCE_EXT_NTETH, B + A + NT,
	      ROCE_OPF_ONLY | ROCE_OPF_RESP | ROCE_OPF_VENDOR | ROCE_OPF_NOTICE},
    /* VRP per-WR tolerance (§3.1 LOSS_RATE/CONS_LOSS/CRITICAL_INTERVAL tags) on a WRITE FIRST */
    [0xe2] = {"RC_X_RDMA_WRITE_FIRST_VRP", ROCE_TR_RC, ROCE_EXT_RETH | ROCE_EXT_VTETH, B + R + VT,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_FIRST | ROCE_OPF_REQ | ROCE_OPF_WRITE | ROCE_OPF_VENDOR},
    /* VRP: the requester's loss summary of a WRITE message (docs/wire.md, VLETH) */
    [0xe3] = {"RC_X_VRP_LOSS", ROCE_TR_RC, ROCE_EXT_AETH | ROCE_EXT_VLETH, B + A + VL,
	      ROCE_OPF_ONLY | ROCE_OPF_RESP | ROCE_OPF_VENDOR},
    [0xc2] = {"RC_X_RDMA_WRITE_MIDDLE_PLACED", ROCE_TR_RC, ROCE_EXT_RETH, B + R,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_MIDDLE | ROCE_OPF_REQ | ROCE_OPF_WRITE | XP},
    [0xc3] = {"RC_X_RDMA_WRITE_LAST_PLACED", ROCE_TR_RC, ROCE_EXT_RETH, B + R,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_LAST | ROCE_OPF_REQ | ROCE_OPF_WRITE | XP},
    [0xc4] = {"RC_X_SEND_FIRST_PLACED", ROCE_TR_RC, ROCE_EXT_SPETH, B + SP,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_FIRST | ROCE_OPF_REQ | ROCE_OPF_SEND | XP},
    [0xc5] = {"RC_X_SEND_MIDDLE_PLACED", ROCE_TR_RC, ROCE_EXT_SPETH, B + SP,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_MIDDLE | ROCE_OPF_REQ | ROCE_OPF_SEND | XP},
    [0xc6] = {"RC_X_SEND_LAST_PLACED", ROCE_TR_RC, ROCE_EXT_SPETH, B + SP,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_LAST | ROCE_OPF_REQ | ROCE_OPF_SEND | XP},
    [0xc7] = {"RC_X_SEND_LAST_WITH_IMMEDIATE_PLACED", ROCE_TR_RC, ROCE_EXT_IMMDT | ROCE_EXT_SPETH,
	      B + I + SP,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_LAST | ROCE_OPF_REQ | ROCE_OPF_SEND | ROCE_OPF_IMM | XP},
    [0xc8] = {"RC_X_SEND_ONLY_PLACED", ROCE_TR_RC, ROCE_EXT_SPETH, B + SP,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_REQ | ROCE_OPF_SEND | XP},
    [0xc9] = {"RC_X_SEND_ONLY_WITH_IMMEDIATE_PLACED", ROCE_TR_RC, ROCE_EXT_IMMDT | ROCE_EXT_SPETH,
	      B + I + SP,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_REQ | ROCE_OPF_SEND | ROCE_OPF_IMM | XP},
    /* FEC (lib/fec, docs/fec.md): neither request nor response; the receive path
     * gives them to the QP's FEC decoder, or drops them when FEC is off */
    [0xd0] = {"RC_X_FEC_REPAIR", ROCE_TR_RC, ROCE_EXT_FRH, B + FR,
	      ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_VENDOR},
    [0xd1] = {"RC_X_FEC_NEGOTIATE", ROCE_TR_RC, ROCE_EXT_FRH, B + FR,
	      ROCE_OPF_ONLY | ROCE_OPF_VENDOR},
};

const char *
roce_opcode_name(uint8_t opcode)
{
	return roce_opcodes[opcode].name ? roce_opcodes[opcode].name : "RESERVED";
}

/* Wire order of the extension headers after the BTH (IBTA 9.2). */
static const struct {
	uint16_t ext;
	uint8_t len;
} ext_order[] = {
    {ROCE_EXT_DETH, ROCE_DETH_LEN},
    {ROCE_EXT_RETH, ROCE_RETH_LEN},
    {ROCE_EXT_ATOMICETH, ROCE_ATOMICETH_LEN},
    {ROCE_EXT_AETH, ROCE_AETH_LEN},
    {ROCE_EXT_ATOMICACKETH, ROCE_ATOMICACKETH_LEN},
    {ROCE_EXT_IMMDT, ROCE_IMMDT_LEN},
    {ROCE_EXT_IETH, ROCE_IETH_LEN},
    {ROCE_EXT_SPETH, ROCE_SPETH_LEN},
    {ROCE_EXT_NTETH, ROCE_NTETH_LEN},
    {ROCE_EXT_VTETH, ROCE_VTETH_LEN},
    {ROCE_EXT_VLETH, ROCE_VLETH_LEN},
    {ROCE_EXT_FRH, ROCE_FRH_LEN},
    {ROCE_EXT_CNP, ROCE_CNP_RSVD_LEN},
};

int
roce_ext_offset(uint8_t opcode, enum roce_ext ext)
{
	uint16_t have = roce_opcodes[opcode].ext;
	int off = 0;

	if (!(have & ext))
		return -1;
	for (unsigned i = 0; i < sizeof(ext_order) / sizeof(ext_order[0]); i++) {
		if (ext_order[i].ext == ext)
			return off;
		if (have & ext_order[i].ext)
			off += ext_order[i].len;
	}
	return -1;
}
