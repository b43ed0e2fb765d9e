"""Scapy layers and the opcode table."""

import random

import pytest
from scapy.compat import raw
from scapy.contrib import roce as scapy_roce
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import rwtest
from rocewan import opcodes as ops
from rocewan.build import build_bytes
from rocewan.frame import decode
from rocewan.gen import random_spec
from rocewan.layers import (AETH, BTH, DETH, EXT_CLASSES, IETH, NTETH, RETH,
                            SPETH, VLETH, VTETH, AtomicAckETH, AtomicETH, ImmDt,
                            ext_headers)


def test_opcode_table_matches_ibta_shapes():
    # 23 RC + 12 UC + 2 UD + CNP + 14 rocewan extension opcodes (docs/wire.md)
    assert len(ops.OPCODES) == 52
    assert 0x15 not in ops.OPCODES          # reserved
    for code in range(0x0c):                # UC has the RC 0x00-0x0b shapes
        rc, uc = ops.OPCODES[code], ops.OPCODES[0x20 + code]
        assert (rc.exts, rc.payload) == (uc.exts, uc.payload)
    shapes = {0x03: ("ImmDt",), 0x0b: ("RETH", "ImmDt"), 0x0c: ("RETH",),
              0x12: ("AETH", "AtomicAckETH"), 0x13: ("AtomicETH",),
              0x16: ("IETH",), 0x64: ("DETH",), 0x65: ("DETH", "ImmDt")}
    for code, exts in shapes.items():
        assert ops.OPCODES[code].exts == exts
    no_payload = {c for c, o in ops.OPCODES.items() if not o.payload}
    assert no_payload == {0x0c, 0x11, 0x12, 0x13, 0x14, 0x81, 0xc0, 0xc1, 0xe0, 0xe1, 0xe3}


def test_opcode_numbers_agree_with_scapy_contrib():
    # scapy.contrib.roce names the RC/UC/UD opcodes it knows; ours must be a
    # superset with the same numbers (it lacks the invalidate opcodes)
    theirs = {c for c in scapy_roce._bth_opcodes if c < 0x40 or c >= 0x60}
    assert theirs <= set(ops.OPCODES)
    ext = {c for c in ops.OPCODES if ops.is_extension(c)}
    assert set(ops.OPCODES) - theirs - ext == {0x16, 0x17}


@pytest.mark.parametrize("cls,length", [
    (DETH, 8), (RETH, 16), (AtomicETH, 28), (AETH, 4), (AtomicAckETH, 8),
    (ImmDt, 4), (IETH, 4), (SPETH, 8), (NTETH, 4), (VTETH, 44), (VLETH, 80)])
def test_extension_header_lengths(cls, length):
    assert len(raw(cls())) == length == ops.EXT_LEN[cls().name]


def test_vteth_layout_on_the_wire():
    """The VTETH bytes of docs/wire.md (the same as test_roce_wire.c's
    test_vteth_bytes): flags 7, 2 ranges, 10 %, window 16, burst 2048,
    ranges 0+64 and 4096+8; and a VRP WRITE FIRST decodes back to it."""
    v = VTETH(flags=7, n_crit=2, loss_bp=1000, window=16, max_burst=2048,
              crit0_off=0, crit0_len=64, crit1_off=4096, crit1_len=8)
    assert raw(v) == bytes.fromhex(
        "07 02 03e8 0010 0000 00000800 00000000 00000040 00001000 00000008"
        + "00" * 16)
    assert v.critical() == [(0, 64), (4096, 8)]
    pkt = BTH(opcode=0xe2, psn=5) / RETH(dmalen=8192) / v / Raw(bytes(1024))
    back = BTH(raw(pkt))
    assert back[VTETH].loss_bp == 1000 and back[VTETH].critical() == [(0, 64), (4096, 8)]
    assert back[RETH].dmalen == 8192 and len(back[Raw].load) == 1024
    assert [h.name for h in ext_headers(back)] == ["RETH", "VTETH"]


def test_vleth_layout_on_the_wire():
    """The VLETH bytes of docs/wire.md (the same as test_roce_wire.c's
    test_vleth_bytes): a 16 KiB message that lost 3 packets (3072 bytes) in
    2 holes, 1024+2048 and 6144+1024; and a VRP LOSS summary decodes back."""
    v = VLETH(len=16384, lost_pkts=3, lost_bytes=3072, n_holes=2,
              hole0_off=1024, hole0_len=2048, hole1_off=6144, hole1_len=1024)
    assert raw(v) == bytes.fromhex(
        "00004000 00000003 00000c00 02 00 0000"
        " 00000400 00000800 00001800 00000400" + "00" * 48)
    assert v.holes() == [(1024, 2048), (6144, 1024)]
    pkt = BTH(opcode=0xe3, psn=15) / AETH(syndrome=0x1f, msn=4) / v
    back = BTH(raw(pkt))
    assert back[VLETH].lost_bytes == 3072 and back[VLETH].holes() == v.holes()
    assert back[AETH].msn == 4
    assert [h.name for h in ext_headers(back)] == ["AETH", "VLETH"]


def test_field_layout_on_the_wire():
    assert raw(DETH(qkey=0x11223344, srcqp=0xabcdef)) == \
        bytes.fromhex("11223344 00 abcdef")
    assert raw(RETH(va=0x0102030405060708, rkey=0x0a0b0c0d,
                    dmalen=0x1000)) == \
        bytes.fromhex("0102030405060708 0a0b0c0d 00001000")
    assert raw(AtomicETH(va=1, rkey=2, swapadd=3, compare=4)) == \
        bytes.fromhex("0000000000000001 00000002 0000000000000003"
                      " 0000000000000004")
    assert raw(AETH(syndrome=0x60, msn=0x123456)) == bytes.fromhex("60123456")
    assert raw(AtomicAckETH(orig=0xfedcba9876543210)) == \
        bytes.fromhex("fedcba9876543210")
    assert raw(ImmDt(imm=0xdeadbeef)) == bytes.fromhex("deadbeef")
    assert raw(IETH(rkey=0xcafe)) == bytes.fromhex("0000cafe")
    assert raw(SPETH(wqe_seq=0x01020304, offset=0x2000)) == \
        bytes.fromhex("01020304 00002000")
    assert raw(NTETH(psn=0xabcdef, run=3)) == bytes.fromhex("03abcdef")


def test_extension_registry_shapes():
    """docs/wire.md: RACK/SACK and VRP ACK/NACK = AETH + NTETH, self-placing
    WRITE = RETH, SENDs = SPETH (ImmDt first when immediate); the rest of the
    FEC/VRP ranges left free."""
    shapes = {0xc0: ("AETH", "NTETH"), 0xc1: ("AETH", "NTETH"),
              0xe0: ("AETH", "NTETH"), 0xe1: ("AETH", "NTETH"),
              0xc2: ("RETH",), 0xc3: ("RETH",), 0xc4: ("SPETH",),
              0xc5: ("SPETH",), 0xc6: ("SPETH",), 0xc7: ("ImmDt", "SPETH"),
              0xc8: ("SPETH",), 0xc9: ("ImmDt", "SPETH"),
              0xe2: ("RETH", "VTETH"), 0xe3: ("AETH", "VLETH")}
    assert {c for c in ops.OPCODES if c >= 0xc0} == set(shapes)
    for code, exts in shapes.items():
        op = ops.OPCODES[code]
        assert op.exts == exts and op.transport == "RC", hex(code)
        assert op.request == (0xc2 <= code <= 0xc9 or code == 0xe2)
    assert ops.OPCODES[0xc0].hdr_len == 20 and ops.OPCODES[0xc7].hdr_len == 24
    assert ops.OPCODES[0xe2].hdr_len == 12 + 16 + 44
    assert ops.OPCODES[0xe3].hdr_len == 12 + 4 + 80


@pytest.mark.parametrize("code", sorted(ops.OPCODES))
@pytest.mark.parametrize("ver", [4, 6])
def test_round_trip_every_opcode(code, ver):
    """build -> bytes -> dissect: same layers in IBTA order, same fields,
    same bytes when rebuilt."""
    spec = random_spec(random.Random(code * 10 + ver), code, ver)
    frame = build_bytes(spec)
    pkt = Ether(frame)
    op = ops.OPCODES[code]
    assert [type(h) for h in ext_headers(pkt)] == \
        [EXT_CLASSES[e] for e in op.exts]
    if spec["payload"]:
        assert pkt[Raw].load == spec["payload"] + \
            b"\x00" * pkt[BTH].padcount
    assert raw(pkt) == frame
    rec = decode(frame).rec
    assert rec == rwtest.expected_record(spec, frame), \
        rwtest.diff_records(rec, rwtest.expected_record(spec, frame),
                            "decoded", "spec")


def test_contrib_ack_binding_replaced():
    # the contrib AETH binding is gone: ACKs dissect to our AETH subclass
    spec = random_spec(random.Random(1), 0x11, 4)
    pkt = Ether(build_bytes(spec))
    assert type(pkt[BTH].payload) is AETH
    assert isinstance(pkt[BTH].payload, scapy_roce.AETH)
