"""Scapy layers for the InfiniBand extension transport headers that
``scapy.contrib.roce`` lacks, bound to its BTH by opcode.

``scapy.contrib.roce`` provides BTH (with the IPv4 ICRC), AETH and the CNP
padding. This module adds RETH, DETH, ImmDt, IETH, AtomicETH and
AtomicAckETH (IBTA Vol. 1 section 9.3) and makes dissection follow the opcode
table in :mod:`rocewan.opcodes`: the BTH hands over to the first extension
header of its opcode, each extension header to the next one, and the last one
to the payload (``Raw``).

Import the header classes from here, not from ``scapy.contrib.roce``: the AETH
of this module is a subclass of Scapy's that knows which header follows it.
"""

from scapy.contrib import roce as _scapy_roce
from scapy.contrib.roce import BTH, CNPPadding
from scapy.fields import (BitField, ByteField, IntField, ShortField,
                          XByteField, XIntField, XLongField)
from scapy.packet import Packet, Raw, bind_layers, split_layers

from . import opcodes as ops

__all__ = ["BTH", "CNPPadding", "DETH", "RETH", "AtomicETH", "AETH",
           "AtomicAckETH", "ImmDt", "IETH", "SPETH", "NTETH", "VTETH",
           "VTETH_CRIT", "VLETH", "VLETH_HOLES", "EXT_CLASSES",
           "ext_headers"]


class _ExtHeader(Packet):
    """Base of the extension headers: the next layer depends on the BTH
    opcode, not on a field of this header."""

    def guess_payload_class(self, payload):
        bth = self.underlayer
        while bth is not None and not isinstance(bth, BTH):
            bth = bth.underlayer
        op = ops.lookup(bth.opcode) if bth is not None else None
        if op is not None and self.name in op.exts:
            idx = op.exts.index(self.name)
            if idx + 1 < len(op.exts):
                return EXT_CLASSES[op.exts[idx + 1]]
        return Raw


class DETH(_ExtHeader):
    """Datagram Extended Transport Header (IBTA 9.3.4), UD only."""
    name = ops.DETH
    fields_desc = [
        XIntField("qkey", 0),
        XByteField("reserved", 0),
        BitField("srcqp", 0, 24),
    ]


class RETH(_ExtHeader):
    """RDMA Extended Transport Header (IBTA 9.3.3)."""
    name = ops.RETH
    fields_desc = [
        XLongField("va", 0),
        XIntField("rkey", 0),
        IntField("dmalen", 0),
    ]


class AtomicETH(_ExtHeader):
    """Atomic Extended Transport Header (IBTA 9.3.7)."""
    name = ops.ATOMICETH
    fields_desc = [
        XLongField("va", 0),
        XIntField("rkey", 0),
        XLongField("swapadd", 0),
        XLongField("compare", 0),
    ]


class AETH(_ExtHeader, _scapy_roce.AETH):
    """ACK Extended Transport Header (IBTA 9.3.5): syndrome, MSN."""
    name = ops.AETH
    fields_desc = list(_scapy_roce.AETH.fields_desc)


class AtomicAckETH(_ExtHeader):
    """Atomic Acknowledge Extended Transport Header (IBTA 9.3.8)."""
    name = ops.ATOMICACKETH
    fields_desc = [XLongField("orig", 0)]


class ImmDt(_ExtHeader):
    """Immediate Data Extended Transport Header (IBTA 9.3.6)."""
    name = ops.IMMDT
    fields_desc = [XIntField("imm", 0)]


class IETH(_ExtHeader):
    """Invalidate Extended Transport Header (IBTA 9.3.9)."""
    name = ops.IETH
    fields_desc = [XIntField("rkey", 0)]


class SPETH(_ExtHeader):
    """rocewan SEND placement header (docs/wire.md): the receive WQE by its
    sequence number and the byte offset of this packet in the message, so an
    out-of-order SEND packet can be placed (Go-Back-ONE, IRN)."""
    name = ops.SPETH
    fields_desc = [IntField("wqe_seq", 0), IntField("offset", 0)]


class NTETH(_ExtHeader):
    """rocewan notice header of a RACK (Go-Back-ONE) or SACK (IRN): the PSN
    the receiver got out of order, and how many PSNs right before it it has
    too (``run``, so one lost notice costs no retransmission; docs/wire.md).
    In a VRP ACK (0xE0) the same (VRP's SINGLE_ACK); in a VRP NACK (0xE1)
    the last PSN that must be resent and how many right before it too."""
    name = ops.NTETH
    fields_desc = [ByteField("run", 0), BitField("psn", 0, 24)]


VTETH_CRIT = 4
"""critical ranges a VTETH carries"""


class VTETH(_ExtHeader):
    """rocewan VRP tolerance header (docs/wire.md), after the RETH of a VRP
    WRITE FIRST (0xE2): the loss tolerance of this one message, set per work
    request by the sender (Denis, "Variable Reliability Protocol", section
    3.1 tags LOSS_RATE, CONS_LOSS and CRITICAL_INTERVAL). ``flags`` bit 0:
    ``loss_bp`` set, bit 1: ``window`` set, bit 2: ``max_burst`` set (an unset
    field takes the receiver's value); ``n_crit`` of the four byte ranges
    ``critN_off``/``critN_len`` are critical (never lost)."""
    name = ops.VTETH
    fields_desc = [
        XByteField("flags", 0),
        ByteField("n_crit", 0),
        ShortField("loss_bp", 0),
        ShortField("window", 0),
        ShortField("reserved", 0),
        XIntField("max_burst", 0xFFFFFFFF),
    ] + [f for i in range(VTETH_CRIT)
         for f in (IntField("crit%d_off" % i, 0), IntField("crit%d_len" % i, 0))]

    def critical(self):
        """The critical ranges in use, as (offset, length) pairs."""
        return [(getattr(self, "crit%d_off" % i), getattr(self, "crit%d_len" % i))
                for i in range(min(self.n_crit, VTETH_CRIT))]


VLETH_HOLES = 8
"""holes a VLETH carries"""


class VLETH(_ExtHeader):
    """rocewan VRP loss summary header (docs/wire.md), after the AETH of a VRP
    LOSS summary (0xE3) that the responder sends when a WRITE message ends
    under ``--recovery vrp``: the message's length, the packets and bytes it
    gave up (zero-filled), and the first ``n_holes`` of the eight merged
    holes ``holeN_off``/``holeN_len``. ``flags`` bit 0: more holes than
    eight. The requester's send completion carries it (docs/vrp.md)."""
    name = ops.VLETH
    fields_desc = [
        IntField("len", 0),
        IntField("lost_pkts", 0),
        IntField("lost_bytes", 0),
        ByteField("n_holes", 0),
        XByteField("flags", 0),
        ShortField("reserved", 0),
    ] + [f for i in range(VLETH_HOLES)
         for f in (IntField("hole%d_off" % i, 0), IntField("hole%d_len" % i, 0))]

    def holes(self):
        """The holes in use, as (offset, length) pairs."""
        return [(getattr(self, "hole%d_off" % i), getattr(self, "hole%d_len" % i))
                for i in range(min(self.n_holes, VLETH_HOLES))]


EXT_CLASSES = {
    ops.DETH: DETH,
    ops.RETH: RETH,
    ops.ATOMICETH: AtomicETH,
    ops.AETH: AETH,
    ops.ATOMICACKETH: AtomicAckETH,
    ops.IMMDT: ImmDt,
    ops.IETH: IETH,
    ops.CNP_RSVD: CNPPadding,
    ops.SPETH: SPETH,
    ops.NTETH: NTETH,
    ops.VTETH: VTETH,
    ops.VLETH: VLETH,
}
"""extension header name (as in :mod:`rocewan.opcodes`) -> Scapy class"""


def ext_headers(pkt):
    """The extension header layers of ``pkt`` after its BTH, in wire order."""
    out = []
    layer = pkt[BTH].payload
    while isinstance(layer, (_ExtHeader, CNPPadding)):
        out.append(layer)
        layer = layer.payload
    return out


def _bind():
    """Replace the contrib BTH -> AETH bindings with one binding per opcode
    to the opcode's first extension header."""
    split_layers(BTH, _scapy_roce.AETH)
    for op in ops.OPCODES.values():
        if op.exts and op.code != ops.CNP_OPCODE:
            bind_layers(BTH, EXT_CLASSES[op.exts[0]], opcode=op.code)


_bind()
