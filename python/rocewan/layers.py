"""Scapy layers for the InfiniBand extension transport headers that
``scapy.contrib.roce`` lacks, bound to its BTH by opcode.

``scapy.contrib.roce`` provides BTH (with the ICRC: IPv4 only in Scapy 2.5,
IPv4 and IPv6 since 2.6), AETH and the CNP padding. This module adds RETH,
DETH, ImmDt, IETH, AtomicETH and AtomicAckETH (IBTA Vol. 1 section 9.3),
rocewan's own SPETH, NTETH (RACK, SACK), VTETH and VLETH (VRP), and lib/fec's
repair header FRH (opcodes 0xD0/0xD1, docs/wire.md), and makes dissection
follow the opcode table in :mod:`rocewan.opcodes`: the BTH hands over to the
first extension header of its opcode, each extension header to the next one,
and the last one to the payload (``Raw``). Importing this module binds them
all; nothing else needs importing for ``rdpcap()`` to dissect them.

The bindings sit beside ``scapy.contrib.roce``'s own, not over them: each of
ours is put first in BTH's list of payload guesses, which dissection tries in
order, and contrib's stay behind it (its BTH -> AETH for RC and RD
ACKNOWLEDGE, CNP padding, UDP port 4791, GRH). So an RC ACKNOWLEDGE dissects
to this module's AETH, a subclass of contrib's AETH with the same fields
that also knows which header follows it (AtomicAckETH after an ATOMIC
ACKNOWLEDGE); ``pkt[scapy.contrib.roce.AETH]`` finds it too, and building
``BTH() / scapy.contrib.roce.AETH()`` works as without this module.
"""

from scapy.contrib import roce as _scapy_roce
from scapy.contrib.roce import BTH, CNPPadding
from scapy.fields import (BitField, ByteEnumField, ByteField, IntField,
                          ShortField, StrFixedLenField, XByteField, XIntField,
                          XLongField, XShortField)
from scapy.packet import Packet, Raw, bind_layers, bind_top_down

from . import opcodes as ops

__all__ = ["BTH", "CNPPadding", "DETH", "RETH", "AtomicETH", "AETH",
           "AtomicAckETH", "ImmDt", "IETH", "SPETH", "NTETH", "VTETH",
           "VTETH_CRIT", "VLETH", "VLETH_HOLES", "FRH", "FEC_OPCODES",
           "EXT_CLASSES", "ext_headers", "MAD", "CM_REQ", "CM_MRA", "CM_REJ",
           "CM_REP", "CM_RTU", "CM_DREQ", "CM_DREP", "CM_SIDR_REQ",
           "CM_SIDR_REP"]


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
        # a UD SEND to QP1 carries one 256-byte MAD (IBTA Vol. 1 13.5.1)
        if (self.name == ops.DETH and bth is not None and bth.dqpn == 1
                and len(payload) >= 256):
            return MAD
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
    """ACK Extended Transport Header (IBTA 9.3.5): syndrome, MSN. A subclass
    of ``scapy.contrib.roce.AETH``, found by ``pkt[scapy.contrib.roce.AETH]``
    too (``match_subclass``)."""
    name = ops.AETH
    match_subclass = True
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


FEC_OP_REPAIR = 0xD0
FEC_OP_NEGOTIATE = 0xD1
FEC_OPCODES = {FEC_OP_REPAIR: "RC_X_FEC_REPAIR", FEC_OP_NEGOTIATE: "RC_X_FEC_NEGOTIATE"}
"""lib/fec's manufacturer-specific BTH opcodes (docs/wire.md)"""
FEC_T_XOR, FEC_T_RS, FEC_T_PROPOSE, FEC_T_COMMIT = 1, 2, 3, 4
FEC_MODE_XOR, FEC_MODE_RS = 1, 2
FEC_TYPES = {FEC_T_XOR: "xor", FEC_T_RS: "rs", FEC_T_PROPOSE: "propose", FEC_T_COMMIT: "commit"}
FEC_MODES = {0: "off", FEC_MODE_XOR: "xor", FEC_MODE_RS: "rs"}


class FRH(Packet):
    """FEC Repair Header (lib/fec, docs/fec.md): LoWAR's Repair Header ("Type
    | type-specified fields") after a standard BTH with a manufacturer-specific
    opcode, 0xD0 (repair: BTH | FRH | coded payload | pad | ICRC) or 0xD1
    (negotiation: BTH | FRH | ICRC). :mod:`rocewan.fec` checks the repairs."""
    name = "FRH"
    fields_desc = [
        ByteEnumField("type", FEC_T_XOR, FEC_TYPES),
        BitField("flags_rsvd", 0, 7),
        BitField("stream", 0, 1),       # 0 requests, 1 READ responses
        ByteEnumField("mode", FEC_MODE_XOR, FEC_MODES),
        ByteField("k", 32),
        ByteField("d", 4),
        ByteField("r", 1),
        ByteField("row", 0),
        XByteField("rsvd7", 0),
        XShortField("len_code", 0),
        ShortField("rsvd10", 0),
        IntField("block_id", 0),
        XByteField("rsvd16", 0),
        BitField("anchor", 0, 24),
        XLongField("mask", 0),
    ]


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


def _bind_first(lower, upper, **fval):
    """``bind_layers(lower, upper, **fval)``, with the dissection entry put
    first in ``lower.payload_guess`` (Scapy tries the entries in order and
    ``bind_layers`` appends), ahead of the entries others bound, which stay."""
    bind_top_down(lower, upper, **fval)
    entry = (fval, upper)
    lower.payload_guess = [entry] + [e for e in lower.payload_guess if e != entry]


class MAD(Packet):
    """The common MAD header (IBTA Vol. 1 13.4.2) of a MAD to QP1; the CM
    messages (class 0x07) follow by attribute ID (docs/wire.md)."""
    name = "MAD"
    fields_desc = [
        ByteField("base_version", 1),
        XByteField("mgmt_class", 0x07),
        ByteField("class_version", 2),
        XByteField("method", 0x03),
        XShortField("status", 0),
        XShortField("class_specific", 0),
        XLongField("tid", 0),
        XShortField("attr_id", 0),
        XShortField("reserved", 0),
        XIntField("attr_mod", 0),
    ]


def _path(prefix):
    return [
        XShortField(prefix + "local_lid", 0),
        XShortField(prefix + "remote_lid", 0),
        StrFixedLenField(prefix + "local_gid", b"\0" * 16, 16),
        StrFixedLenField(prefix + "remote_gid", b"\0" * 16, 16),
        BitField(prefix + "flow_label", 0, 20),
        BitField(prefix + "reserved0", 0, 6),
        BitField(prefix + "packet_rate", 0, 6),
        XByteField(prefix + "traffic_class", 0),
        ByteField(prefix + "hop_limit", 0),
        BitField(prefix + "sl", 0, 4),
        BitField(prefix + "subnet_local", 0, 1),
        BitField(prefix + "reserved1", 0, 3),
        BitField(prefix + "local_ack_timeout", 0, 5),
        BitField(prefix + "reserved2", 0, 3),
    ]


class CM_REQ(Packet):
    """CM REQ (IBTA Vol. 1 12.6.5)."""
    name = "CM_REQ"
    fields_desc = [
        XIntField("local_comm_id", 0),
        XIntField("reserved0", 0),
        XLongField("service_id", 0),
        XLongField("local_ca_guid", 0),
        XIntField("reserved1", 0),
        XIntField("local_qkey", 0),
        BitField("local_qpn", 0, 24),
        ByteField("responder_resources", 0),
        BitField("local_eecn", 0, 24),
        ByteField("initiator_depth", 0),
        BitField("remote_eecn", 0, 24),
        BitField("remote_cm_response_timeout", 0, 5),
        BitField("transport", 0, 2),
        BitField("flow_control", 0, 1),
        BitField("starting_psn", 0, 24),
        BitField("local_cm_response_timeout", 0, 5),
        BitField("retry_count", 0, 3),
        XShortField("pkey", 0xffff),
        BitField("path_mtu", 0, 4),
        BitField("rdc_exists", 0, 1),
        BitField("rnr_retry_count", 0, 3),
        BitField("max_cm_retries", 0, 4),
        BitField("srq", 0, 1),
        BitField("ext_transport", 0, 3),
    ] + _path("primary_") + _path("alt_") + [
        StrFixedLenField("private_data", b"\0" * 92, 92),
    ]


def _ids():
    return [XIntField("local_comm_id", 0), XIntField("remote_comm_id", 0)]


class CM_MRA(Packet):
    """CM MRA (12.6.6)."""
    name = "CM_MRA"
    fields_desc = _ids() + [
        BitField("msg_mraed", 0, 2), BitField("reserved0", 0, 6),
        BitField("service_timeout", 0, 5), BitField("reserved1", 0, 3),
        StrFixedLenField("private_data", b"\0" * 222, 222)]


class CM_REJ(Packet):
    """CM REJ (12.6.7)."""
    name = "CM_REJ"
    fields_desc = _ids() + [
        BitField("msg_rejected", 0, 2), BitField("reserved0", 0, 6),
        BitField("ari_length", 0, 7), BitField("reserved1", 0, 1),
        ShortField("reason", 0),
        StrFixedLenField("ari", b"\0" * 72, 72),
        StrFixedLenField("private_data", b"\0" * 148, 148)]


class CM_REP(Packet):
    """CM REP (12.6.8)."""
    name = "CM_REP"
    fields_desc = _ids() + [
        XIntField("local_qkey", 0),
        BitField("local_qpn", 0, 24), ByteField("reserved0", 0),
        BitField("local_eecn", 0, 24), ByteField("reserved1", 0),
        BitField("starting_psn", 0, 24), ByteField("reserved2", 0),
        ByteField("responder_resources", 0),
        ByteField("initiator_depth", 0),
        BitField("target_ack_delay", 0, 5),
        BitField("failover_accepted", 0, 2),
        BitField("flow_control", 0, 1),
        BitField("rnr_retry_count", 0, 3), BitField("srq", 0, 1),
        BitField("reserved3", 0, 4),
        XLongField("local_ca_guid", 0),
        StrFixedLenField("private_data", b"\0" * 196, 196)]


class CM_RTU(Packet):
    """CM RTU (12.6.9)."""
    name = "CM_RTU"
    fields_desc = _ids() + [StrFixedLenField("private_data", b"\0" * 224, 224)]


class CM_DREQ(Packet):
    """CM DREQ (12.6.10)."""
    name = "CM_DREQ"
    fields_desc = _ids() + [
        BitField("remote_qpn", 0, 24), ByteField("reserved0", 0),
        StrFixedLenField("private_data", b"\0" * 220, 220)]


class CM_DREP(Packet):
    """CM DREP (12.6.11)."""
    name = "CM_DREP"
    fields_desc = _ids() + [StrFixedLenField("private_data", b"\0" * 224, 224)]


class CM_SIDR_REQ(Packet):
    """CM SIDR_REQ (12.11.2)."""
    name = "CM_SIDR_REQ"
    fields_desc = [
        XIntField("request_id", 0), XShortField("pkey", 0xffff),
        XShortField("reserved0", 0), XLongField("service_id", 0),
        StrFixedLenField("private_data", b"\0" * 216, 216)]


class CM_SIDR_REP(Packet):
    """CM SIDR_REP (12.11.3)."""
    name = "CM_SIDR_REP"
    fields_desc = [
        XIntField("request_id", 0), ByteField("status", 0),
        ByteField("info_length", 0), XShortField("reserved0", 0),
        BitField("qpn", 0, 24), ByteField("reserved1", 0),
        XLongField("service_id", 0), XIntField("qkey", 0),
        StrFixedLenField("info", b"\0" * 72, 72),
        StrFixedLenField("private_data", b"\0" * 136, 136)]


CM_CLASSES = {0x10: CM_REQ, 0x11: CM_MRA, 0x12: CM_REJ, 0x13: CM_REP,
              0x14: CM_RTU, 0x15: CM_DREQ, 0x16: CM_DREP, 0x17: CM_SIDR_REQ,
              0x18: CM_SIDR_REP}


def _bind():
    """One binding per opcode to the opcode's first extension header, and
    lib/fec's two opcodes to FRH, beside contrib.roce's bindings."""
    for code in FEC_OPCODES:
        _bind_first(BTH, FRH, opcode=code)
    for op in ops.OPCODES.values():
        if op.exts and op.code != ops.CNP_OPCODE:
            _bind_first(BTH, EXT_CLASSES[op.exts[0]], opcode=op.code)
    for attr, cls in CM_CLASSES.items():
        bind_layers(MAD, cls, mgmt_class=0x07, attr_id=attr)


_bind()
