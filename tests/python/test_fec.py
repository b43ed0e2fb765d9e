"""lib/fec's wire format from Python: the Scapy FRH layer, an independent XOR
check of the repairs the C encoder wrote (tests/golden/fec-xor-rs.pcap and a
fresh file from build/tests/unit/fec/test_fec), and ``rocewan validate``
recomputing XOR and Reed-Solomon repairs (and failing on a forged one)."""

import os
import struct
import subprocess

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import rwtest
from rocewan import fec, icrc
from rocewan.layers import BTH
from rocewan.pcapio import read_frames, write_frames
from rocewan.validate import validate_file

GOLDEN = os.path.join(rwtest.GOLDEN, "fec-xor-rs.pcap")


def frames(path):
    return [bytes(b) for _, b, _ in read_frames(path)]


def xor_check(path):
    """Recompute every XOR repair of ``path`` with a plain byte loop over the
    symbols of its members; returns (repairs checked, RS repairs seen)."""
    data, checked, rs = {}, 0, 0
    for b in frames(path):
        f = fec.parse(b)
        if f is None:
            s = fec.symbol(b)
            if s is not None:
                data.setdefault((s[0], s[1]), s[2])
            continue
        assert f["problem"] is None, f["problem"]
        if f["opcode"] != fec.OP_REPAIR:
            continue
        if f["mode"] != fec.MODE_XOR:
            rs += 1
            continue
        key = (f["src"], f["dst"], f["dqpn"], f["stream"])
        acc = bytearray(2 + fec.DATA_MAX)
        for i in range(f["k"]):
            if f["mask"] >> i & 1:
                sym = data[(key, (f["psn"] + i * f["d"]) & 0xFFFFFF)]
                for j, v in enumerate(sym):
                    acc[j] ^= v
        # the length code is the XOR of the member lengths
        lens = 0
        for i in range(f["k"]):
            if f["mask"] >> i & 1:
                lens ^= struct.unpack(">H", data[(key, (f["psn"] + i * f["d"]) & 0xFFFFFF)][:2])[0]
        assert f["len_code"] == lens
        got = struct.pack(">H", f["len_code"]) + f["payload"]
        assert bytes(acc[:len(got)]) == got
        assert not any(acc[len(got):]), "repair shorter than its longest member"
        checked += 1
    return checked, rs


def test_golden_xor_repairs_match_independent_xor():
    checked, rs = xor_check(GOLDEN)
    assert checked == 10 and rs == 6


def test_fresh_vectors_from_c(tmp_path):
    """The C unit test writes the same vectors again: byte-identical to the
    golden file (deterministic) and they pass the XOR check."""
    build = os.environ.get("ROCEWAN_BUILD", os.path.join(rwtest.REPO, "build"))
    exe = os.path.join(build, "tests", "unit", "fec", "test_fec")
    if not os.access(exe, os.X_OK):
        pytest.fail("%s not built (ninja -C build)" % exe, pytrace=False)
    out = tmp_path / "v.pcap"
    p = subprocess.run([exe], env=dict(os.environ, RW_FEC_VECTORS=str(out)),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert xor_check(str(out)) == (10, 6)
    assert open(out, "rb").read() == open(GOLDEN, "rb").read()


def test_scapy_layer_dissects_and_builds():
    reps = [b for b in frames(GOLDEN) if fec.parse(b) is not None]
    assert len(reps) == 20
    for b in reps:
        f = fec.parse(b)
        pkt = Ether(b)
        h = pkt[fec.FRH]
        assert pkt[BTH].opcode == f["opcode"]
        for name in ("type", "stream", "mode", "k", "d", "r", "row", "len_code",
                     "block_id", "anchor", "mask"):
            assert getattr(h, name) == f[name], name
    # built with Scapy from fields: lib/fec's layout (docs/wire.md)
    pkt = Ether() / IP(src="10.0.0.1", dst="10.0.0.2", flags="DF") / \
        UDP(sport=0xC001, dport=4791, chksum=0) / \
        BTH(opcode=fec.OP_REPAIR, dqpn=0x11, psn=100) / \
        fec.FRH(type=fec.T_XOR, stream=1, mode=fec.MODE_XOR, k=32, d=4, r=1,
                row=0, len_code=0x0444, block_id=7, anchor=96,
                mask=0xFFFFFFFF) / Raw(b"\xab" * 8)
    b = bytes(icrc.fill(pkt))
    f = fec.parse(b)
    assert f["problem"] is None
    assert (f["stream"], f["k"], f["d"], f["block_id"], f["anchor"], f["mask"],
            f["payload"]) == (1, 32, 4, 7, 96, 0xFFFFFFFF, b"\xab" * 8)
    frh = b[14 + 20 + 8 + 12:14 + 20 + 8 + 12 + fec.FRH_LEN]
    assert frh == bytes([1, 1, 1, 32, 4, 1, 0, 0, 0x04, 0x44, 0, 0,
                         0, 0, 0, 7, 0, 0, 0, 96]) + b"\x00\x00\x00\x00\xff\xff\xff\xff"


def test_validate_checks_repairs():
    r = validate_file(GOLDEN).results()
    assert r["ok"] and r["roce_pkts"] == r["roce_ok_pkts"] == 116
    assert r["fec"]["fec_repair_pkts"] == 16
    assert r["fec"]["fec_repairs_match"] == 16
    assert r["fec"]["fec_repairs_mismatch"] == 0
    assert r["fec"]["fec_negotiation_pkts"] == 4
    p = rwtest.rocewan("validate", GOLDEN)
    assert p.returncode == 0 and "16 match" in p.stdout


def _forge(tmp_path, mutate):
    fr = frames(GOLDEN)
    for n, b in enumerate(fr):
        f = fec.parse(b)
        if f is not None and f["opcode"] == fec.OP_REPAIR and f["mode"] == fec.MODE_RS:
            break
    b = bytearray(fr[n])
    mutate(b)
    ip = b[14:]
    if len(ip) >= 20 + 8 + 12 + 4:
        b[-4:] = struct.pack("<I", icrc.compute(bytes(ip)))
    fr[n] = bytes(b)
    out = tmp_path / "forged.pcap"
    write_frames(str(out), fr)
    return validate_file(str(out)).results(), n


def test_validate_fails_forged_repair(tmp_path):
    off = 14 + 20 + 8 + 12 + fec.FRH_LEN + 50

    def flip(b):
        b[off] ^= 0x01
    r, n = _forge(tmp_path, flip)
    assert not r["ok"]
    assert r["errors"]["FEC_MISMATCH"] == {"pkts": 1, "first_idx": n}
    assert r["fec"]["fec_repairs_mismatch"] == 1


@pytest.mark.parametrize("field,value", [(3, 0), (3, 65), (5, 9), (6, 3),
                                         (0, 7), (7, 1), (20, 0xFF)])
def test_validate_refuses_bad_frh(tmp_path, field, value):
    def put(b):
        b[14 + 20 + 8 + 12 + field] = value
    r, n = _forge(tmp_path, put)
    assert not r["ok"]
    assert r["errors"]["FEC_BAD_FRH"]["first_idx"] == n


def test_validate_bad_icrc(tmp_path):
    fr = frames(GOLDEN)
    n = next(i for i, b in enumerate(fr) if fec.parse(b) is not None)
    b = bytearray(fr[n])
    b[-1] ^= 0xFF
    fr[n] = bytes(b)
    out = tmp_path / "badicrc.pcap"
    write_frames(str(out), fr)
    r = validate_file(str(out)).results()
    assert r["errors"]["BAD_ICRC"] == {"pkts": 1, "first_idx": n}


def test_gf_matches_isal_tables():
    """Spot values of ISA-L's GF(2^8) (0x11d): 2*0x80 = 0x1d, inv(2) = 0x8e."""
    assert fec.gf_mul(2, 0x80) == 0x1D
    assert fec.gf_inv(2) == 0x8E
    for a in range(1, 256):
        assert fec.gf_mul(a, fec.gf_inv(a)) == 1


def test_adapt_propose_dissected_and_validated(tmp_path):
    """--fec-adapt's PROPOSE (receiver -> sender, opcode 0xD1, FRH type
    propose; docs/fec.md#adaptive-policy) as the rnic builds it: Scapy dissects
    its parameters and `rocewan validate` counts it as a negotiation frame."""
    pkt = Ether() / IP(src="10.0.0.2", dst="10.0.0.1", flags="DF") / \
        UDP(sport=0xC002, dport=4791, chksum=0) / \
        BTH(opcode=fec.OP_NEGOTIATE, dqpn=0x11, psn=0) / \
        fec.FRH(type=fec.T_PROPOSE, stream=0, mode=fec.MODE_RS, k=32, d=1, r=4)
    b = bytes(icrc.fill(pkt))
    f = fec.parse(b)
    assert f["problem"] is None
    assert (f["type"], f["mode"], f["k"], f["d"], f["r"]) == (fec.T_PROPOSE, fec.MODE_RS, 32, 1, 4)
    out = tmp_path / "propose.pcap"
    write_frames(str(out), [b])
    r = validate_file(str(out)).results()
    assert r["ok"] and r["fec"]["fec_negotiation_pkts"] == 1
