"""The one BTH opcode table of the Python side (IBTA Vol. 1 table 38, plus the
RoCEv2 CNP of Annex A17.9, plus rocewan's manufacturer-specific extension
opcodes 0xC0-0xC9, docs/wire.md "Extension registry").

Each entry says which transport the opcode belongs to, which extension headers
follow the BTH (always listed in IBTA wire order), whether the packet may carry
payload, and whether a requester sends it (the packets whose PSNs form the
request stream checked by ``validate``).

Names follow lib/roce/roce_opcode.c so that the C and Python tools print the
same strings.
"""

from collections import namedtuple

# Extension header names, in the order they follow the BTH (IBTA 9.2).
DETH = "DETH"
RETH = "RETH"
ATOMICETH = "AtomicETH"
AETH = "AETH"
ATOMICACKETH = "AtomicAckETH"
IMMDT = "ImmDt"
IETH = "IETH"
CNP_RSVD = "CNPPadding"  # the 16 reserved bytes of a CNP
SPETH = "SPETH"  # rocewan: SEND placement (receive-WQE sequence number, offset)
NTETH = "NTETH"  # rocewan: RACK/SACK notice (the PSN received)
VTETH = "VTETH"  # rocewan: VRP tolerance of a WRITE message (per work request)
VLETH = "VLETH"  # rocewan: VRP loss summary of a WRITE message (to the requester)

EXT_ORDER = (DETH, RETH, ATOMICETH, AETH, ATOMICACKETH, IMMDT, IETH, SPETH,
             NTETH, VTETH, VLETH, CNP_RSVD)

EXT_LEN = {
    DETH: 8,
    RETH: 16,
    ATOMICETH: 28,
    AETH: 4,
    ATOMICACKETH: 8,
    IMMDT: 4,
    IETH: 4,
    CNP_RSVD: 16,
    SPETH: 8,
    NTETH: 4,
    VTETH: 44,
    VLETH: 80,
}

BTH_LEN = 12
ICRC_LEN = 4
ROCE_UDP_PORT = 4791
CNP_OPCODE = 0x81

TRANSPORT_BASE = {"RC": 0x00, "UC": 0x20, "UD": 0x60}


class OpInfo(namedtuple("OpInfo", "code name transport exts payload request")):
    """One opcode: number, name, transport ("RC", "UC", "UD" or "CNP"),
    extension header names in wire order, whether payload is allowed, and
    whether a requester sends it."""

    __slots__ = ()

    @property
    def hdr_len(self):
        """BTH plus extension headers, in bytes."""
        return BTH_LEN + sum(EXT_LEN[e] for e in self.exts)


# Operations shared by RC and UC: offset -> (name, exts, payload).
_RC_UC_OPS = {
    0x00: ("SEND_FIRST", (), True),
    0x01: ("SEND_MIDDLE", (), True),
    0x02: ("SEND_LAST", (), True),
    0x03: ("SEND_LAST_WITH_IMMEDIATE", (IMMDT,), True),
    0x04: ("SEND_ONLY", (), True),
    0x05: ("SEND_ONLY_WITH_IMMEDIATE", (IMMDT,), True),
    0x06: ("RDMA_WRITE_FIRST", (RETH,), True),
    0x07: ("RDMA_WRITE_MIDDLE", (), True),
    0x08: ("RDMA_WRITE_LAST", (), True),
    0x09: ("RDMA_WRITE_LAST_WITH_IMMEDIATE", (IMMDT,), True),
    0x0a: ("RDMA_WRITE_ONLY", (RETH,), True),
    0x0b: ("RDMA_WRITE_ONLY_WITH_IMMEDIATE", (RETH, IMMDT), True),
}

# RC-only operations: offset -> (name, exts, payload, request).
_RC_ONLY_OPS = {
    0x0c: ("RDMA_READ_REQUEST", (RETH,), False, True),
    0x0d: ("RDMA_READ_RESPONSE_FIRST", (AETH,), True, False),
    0x0e: ("RDMA_READ_RESPONSE_MIDDLE", (), True, False),
    0x0f: ("RDMA_READ_RESPONSE_LAST", (AETH,), True, False),
    0x10: ("RDMA_READ_RESPONSE_ONLY", (AETH,), True, False),
    0x11: ("ACKNOWLEDGE", (AETH,), False, False),
    0x12: ("ATOMIC_ACKNOWLEDGE", (AETH, ATOMICACKETH), False, False),
    0x13: ("CMP_SWAP", (ATOMICETH,), False, True),
    0x14: ("FETCH_ADD", (ATOMICETH,), False, True),
    # 0x15 is reserved
    0x16: ("SEND_LAST_WITH_INVALIDATE", (IETH,), True, True),
    0x17: ("SEND_ONLY_WITH_INVALIDATE", (IETH,), True, True),
}

# rocewan extension registry (docs/wire.md): opcode -> (name, exts, payload,
# request, modes that send it). Leave 0xD0-0xDF to FEC, 0xE4-0xEF to VRP.
EXT_OPS = {
    0xc0: ("RC_X_RACK", (AETH, NTETH), False, False, ("gbone",)),
    0xc1: ("RC_X_SACK", (AETH, NTETH), False, False, ("irn",)),
    0xc2: ("RC_X_RDMA_WRITE_MIDDLE_PLACED", (RETH,), True, True, ("gbone", "irn", "vrp")),
    0xc3: ("RC_X_RDMA_WRITE_LAST_PLACED", (RETH,), True, True, ("gbone", "irn", "vrp")),
    0xc4: ("RC_X_SEND_FIRST_PLACED", (SPETH,), True, True, ("gbone", "irn", "vrp")),
    0xc5: ("RC_X_SEND_MIDDLE_PLACED", (SPETH,), True, True, ("gbone", "irn", "vrp")),
    0xc6: ("RC_X_SEND_LAST_PLACED", (SPETH,), True, True, ("gbone", "irn", "vrp")),
    0xc7: ("RC_X_SEND_LAST_WITH_IMMEDIATE_PLACED", (IMMDT, SPETH), True, True,
           ("gbone", "irn", "vrp")),
    0xc8: ("RC_X_SEND_ONLY_PLACED", (SPETH,), True, True, ("gbone", "irn", "vrp")),
    0xc9: ("RC_X_SEND_ONLY_WITH_IMMEDIATE_PLACED", (IMMDT, SPETH), True, True,
           ("gbone", "irn", "vrp")),
    # VRP (Denis, LIP RR-2000-11, section 3.1 ACK / SINGLE_ACK / NACK tags)
    0xe0: ("RC_X_VRP_ACK", (AETH, NTETH), False, False, ("vrp",)),
    0xe1: ("RC_X_VRP_NACK", (AETH, NTETH), False, False, ("vrp",)),
    # VRP per-WR tolerance: section 3.1 LOSS_RATE / CONS_LOSS / CRITICAL_INTERVAL
    0xe2: ("RC_X_RDMA_WRITE_FIRST_VRP", (RETH, VTETH), True, True, ("vrp",)),
    # VRP: the responder's loss map of a WRITE message, for the requester's
    # completion (docs/wire.md, VLETH)
    0xe3: ("RC_X_VRP_LOSS", (AETH, VLETH), False, False, ("vrp",)),
}
RACK_OPCODE = 0xc0
SACK_OPCODE = 0xc1
VRP_ACK_OPCODE = 0xe0
VRP_NACK_OPCODE = 0xe1
VRP_WRITE_FIRST_OPCODE = 0xe2
VRP_LOSS_OPCODE = 0xe3

_UD_OPS = {
    0x04: ("SEND_ONLY", (DETH,), True),
    0x05: ("SEND_ONLY_WITH_IMMEDIATE", (DETH, IMMDT), True),
}


def _build_table():
    table = {}
    for tr in ("RC", "UC"):
        base = TRANSPORT_BASE[tr]
        for off, (name, exts, payload) in _RC_UC_OPS.items():
            table[base + off] = OpInfo(base + off, "%s_%s" % (tr, name), tr,
                                       exts, payload, True)
    for off, (name, exts, payload, req) in _RC_ONLY_OPS.items():
        table[off] = OpInfo(off, "RC_" + name, "RC", exts, payload, req)
    base = TRANSPORT_BASE["UD"]
    for off, (name, exts, payload) in _UD_OPS.items():
        table[base + off] = OpInfo(base + off, "UD_" + name, "UD", exts,
                                   payload, True)
    table[CNP_OPCODE] = OpInfo(CNP_OPCODE, "CNP", "CNP", (CNP_RSVD,), False,
                               False)
    for code, (nm, exts, payload, req, _modes) in EXT_OPS.items():
        table[code] = OpInfo(code, nm, "RC", exts, payload, req)
    for op in table.values():
        assert list(op.exts) == sorted(op.exts, key=EXT_ORDER.index), op
    return table


OPCODES = _build_table()
"""opcode number -> OpInfo, for every opcode RoCEv2 defines."""

BY_NAME = {op.name: op for op in OPCODES.values()}


def lookup(code):
    """OpInfo of ``code``, or None for a reserved / unsupported opcode."""
    return OPCODES.get(code)


def name(code):
    """Name of ``code``, or "RESERVED"."""
    op = OPCODES.get(code)
    return op.name if op else "RESERVED"


def ext_offset(code, ext):
    """Offset of extension header ``ext`` after the BTH for ``code``, or
    None if the opcode does not carry it."""
    op = OPCODES.get(code)
    if op is None or ext not in op.exts:
        return None
    return sum(EXT_LEN[e] for e in op.exts[:op.exts.index(ext)])


def is_extension(code):
    """True for rocewan's manufacturer-specific opcodes (0xC0-0xFF)."""
    return code >= 0xc0


def is_read_request(code):
    """True for RC RDMA READ Request, which consumes one PSN per response
    packet."""
    return code == 0x0c
