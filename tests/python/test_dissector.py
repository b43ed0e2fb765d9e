"""The Wireshark Lua dissector tools/wireshark/rocewan.lua against the Scapy
layers (python/rocewan/layers.py, fec.py) on the same frames.

Corpus: every golden capture (tests/golden/*.pcap), among them the captures of
real rnic runs with losses made by tools/wireshark/make_captures.py
(run-gbone, run-irn, run-fec-gbn, run-vrp: rnic A -> lossy-emu dropping every
Nth frame -> rnic B, with perftest's TCP exchange and its capability records),
plus a capability exchange built here. On each: no malformed frame and no
error-level expert item, a rocewan.* field on every frame whose BTH opcode is
0xC0 or more, and every field of the Scapy layers equal to the dissector's
field of the same name. Truncated and garbled frames give expert info and
never a Lua error.
"""

import glob
import os
import random
import struct

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import rwtest
from rocewan import fec  # noqa: F401  (binds the FRH to the BTH)
from rocewan.layers import BTH, ext_headers
from rocewan.pcapio import write_frames

LUA = os.path.join(rwtest.REPO, "tools", "wireshark", "rocewan.lua")
RUNS = ["run-gbone.pcap", "run-irn.pcap", "run-fec-gbn.pcap", "run-vrp.pcap"]
# the opcodes each real run must contain (docs/wire.md registry)
RUN_OPCODES = {
    "run-gbone.pcap": {0xC0, 0xC4, 0xC5, 0xC6},
    "run-irn.pcap": {0xC1, 0xC2, 0xC3},
    "run-fec-gbn.pcap": {0xD0, 0xD1},
    "run-vrp.pcap": {0xC2, 0xC3, 0xE0, 0xE1, 0xE2, 0xE3},
}
BAD = "_ws.malformed || _ws.expert.severity >= error"
SEP = "\t"


def tshark(*args):
    return rwtest.run([rwtest.tshark_path(), "-X", "lua_script:" + LUA]
                      + rwtest.TSHARK_NO_PAYLOAD_HEURISTICS + [str(a) for a in args])


@pytest.fixture(scope="module")
def rocewan_fields():
    """Every field the dissector registers (tshark -G fields)."""
    out = rwtest.run([rwtest.tshark_path(), "-G", "fields", "-X", "lua_script:" + LUA]).stdout
    names = [ln.split("\t")[2] for ln in out.splitlines()
             if ln.startswith("F\t") and ln.split("\t")[2].startswith("rocewan.")]
    assert "rocewan.bth.opcode" in names and "rocewan.caps.recovery" in names, names[:20]
    return names


def golden():
    return sorted(glob.glob(os.path.join(rwtest.GOLDEN, "*.pcap")))


def frames_of(path):
    from scapy.utils import rdpcap
    return [bytes(p) for p in rdpcap(path)]


def table(path, fields):
    """tshark -T fields for ``fields``: one dict per frame (field -> text)."""
    args = ["-r", path, "-T", "fields", "-E", "separator=" + SEP, "-E", "occurrence=a",
            "-E", "aggregator=,", "-e", "frame.number"]
    for f in fields:
        args += ["-e", f]
    rows = []
    for ln in tshark(*args).stdout.splitlines():
        cols = ln.split(SEP)
        rows.append(dict(zip(["frame.number"] + list(fields), cols)))
    return rows


def bth_opcode(frame):
    """The BTH opcode of a UDP 4791 frame (read with Scapy), else None."""
    p = Ether(frame)
    if UDP in p and p[UDP].dport == 4791 and BTH in p:
        return p[BTH].opcode
    return None


def scapy_fields(frame):
    """rocewan.<layer>.<field> -> value for the BTH and every extension
    header Scapy reads from ``frame``, plus the ICRC."""
    p = Ether(frame)
    out = {}
    layers = [p[BTH]] + ext_headers(p)
    if fec.FRH in p:
        layers.append(p[fec.FRH])
    for layer in layers:
        for fd in layer.fields_desc:
            if fd.name == "icrc":
                continue
            out["rocewan.%s.%s" % (layer.name.lower(), fd.name)] = layer.getfieldval(fd.name)
    # Scapy's FCSField reads the ICRC big-endian; it is stored LSB first
    udp = bytes(p[UDP])[:p[UDP].len]
    out["rocewan.icrc"] = struct.unpack("<I", udp[-4:])[0]
    return out


def as_int(text):
    return int(text, 0)


def test_fields_registered_with_the_scapy_names(rocewan_fields):
    """Every Scapy header field of the extension opcodes has a dissector field."""
    names = set(rocewan_fields)
    want = set()
    for frame in frames_of(os.path.join(rwtest.GOLDEN, "scapy-ext-v4-v6.pcap")) + \
            frames_of(os.path.join(rwtest.GOLDEN, "fec-xor-rs.pcap")):
        if (bth_opcode(frame) or 0) >= 0xC0:
            want |= set(scapy_fields(frame))
    assert want - names == set()
    assert len(want) > 60, sorted(want)  # BTH, AETH, NTETH, RETH, SPETH, ImmDt, FRH, VTETH, VLETH


@pytest.mark.parametrize("path", golden(), ids=os.path.basename)
def test_no_malformed_and_no_error(path):
    out = tshark("-r", path, "-Y", BAD).stdout
    assert out.strip() == "", out[:3000]


@pytest.mark.parametrize("path", golden(), ids=os.path.basename)
def test_every_extension_frame_decoded_and_equal_to_scapy(path, rocewan_fields):
    frames = frames_of(path)
    rows = table(path, rocewan_fields)
    assert len(rows) == len(frames)
    ext = compared = 0
    bad = []
    for i, (frame, row) in enumerate(zip(frames, rows)):
        op = bth_opcode(frame)
        have = {k: v for k, v in row.items() if k.startswith("rocewan.") and v != ""}
        if op is None or op < 0xC0:
            # standard opcodes keep tshark's InfiniBand decoding: no BTH of ours
            assert "rocewan.bth.opcode" not in have, (i + 1, have)
            continue
        ext += 1
        assert have, "frame %d (opcode 0x%02x): no rocewan.* field" % (i + 1, op)
        for k, v in scapy_fields(frame).items():
            if k not in have:
                bad.append("frame %d: %s missing (Scapy %r)" % (i + 1, k, v))
            elif as_int(have[k]) != v:
                bad.append("frame %d: %s tshark=%s Scapy=%r" % (i + 1, k, have[k], v))
            else:
                compared += 1
    assert bad == [], bad[:40]
    if os.path.basename(path) in ("scapy-ext-v4-v6.pcap", "fec-xor-rs.pcap") + tuple(RUNS):
        assert ext > 0 and compared >= 14 * ext, (ext, compared)


@pytest.mark.parametrize("name", RUNS)
def test_real_runs_carry_their_opcodes_and_records(name):
    """The captures of real runs hold the opcodes of their mode, losses, and
    both sides' capability records asking for the mode."""
    path = os.path.join(rwtest.GOLDEN, name)
    ops = {bth_opcode(f) for f in frames_of(path)} - {None}
    assert RUN_OPCODES[name] <= ops, sorted(ops)
    rows = table(path, ["rocewan.caps.present", "rocewan.caps.req_recovery", "rocewan.caps.fec",
                        "rocewan.caps.sum"])
    recs = [r for r in rows if r["rocewan.caps.present"] == "1"]
    assert len(recs) == 2, rows[:10]  # client's and server's version message
    want = {"run-gbone.pcap": 1, "run-irn.pcap": 2, "run-fec-gbn.pcap": 0, "run-vrp.pcap": 3}[name]
    for r in recs:
        assert as_int(r["rocewan.caps.req_recovery"]) == want, r
        assert as_int(r["rocewan.caps.sum"]) == 0, r
        assert as_int(r["rocewan.caps.fec"]) == (1 if name == "run-fec-gbn.pcap" else 0), r


def version_msg(rec):
    return b"6.06\x00" + rec


def caps_record(recovery, req, cc, fec_bits, vrp=0):
    body = b"rw" + bytes([1, recovery, req, cc, fec_bits, vrp, 0, 0])
    return body + bytes([(-sum(body)) & 0xFF])


def tcp_frame(sport, dport, payload, seq=1):
    return bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                 / IP(src="10.9.0.3", dst="10.9.0.2") / TCP(sport=sport, dport=dport, flags="PA", seq=seq)
                 / Raw(payload))


def test_capability_exchange(tmp_path):
    """perftest's version messages: the docs' example record, a standard
    perftest's NUL padding, a garbled checksum (expert warning), a non-record
    padding (expert warning); the fields equal the record's bytes."""
    ex = bytes.fromhex("362e303600727701 0f01010000000005".replace(" ", ""))
    assert ex[5:] == caps_record(0x0F, 0x01, 0x01, 0x00)  # docs/perftest-exchange.md example
    garbled = bytearray(ex)
    garbled[15] ^= 0x80
    msgs = [ex, version_msg(caps_record(0x0F, 0xF3, 0x1F, 0x01)), b"6.06" + bytes(12),
            bytes(garbled), b"6.06\x00xyz" + bytes(8)]
    # one TCP connection per message (no retransmission analysis across them), both directions
    frames = [tcp_frame(40000 + i, 18515, m) if i % 2 == 0 else tcp_frame(18515, 40000 + i, m)
              for i, m in enumerate(msgs)]
    path = str(tmp_path / "caps.pcap")
    write_frames(path, frames)
    fields = ["rocewan.caps.version", "rocewan.caps.present", "rocewan.caps.rec_version",
              "rocewan.caps.recovery", "rocewan.caps.req_recovery", "rocewan.caps.req_cc",
              "rocewan.caps.cc", "rocewan.caps.fec", "rocewan.caps.vrp", "rocewan.caps.params",
              "rocewan.caps.checksum", "rocewan.caps.sum", "_ws.expert.severity", "_ws.expert.message"]
    rows = table(path, fields)
    assert len(rows) == len(msgs)
    for m, r in zip(msgs[:2], rows[:2]):
        assert r["rocewan.caps.version"] == "6.06" and r["rocewan.caps.present"] == "1"
        got = [as_int(r[f]) for f in fields[2:12]]
        assert got == [m[7], m[8], m[9] & 0xF, m[9] >> 4, m[10], m[11], m[12],
                       struct.unpack(">H", m[13:15])[0], m[15], 0], (r, m.hex())
        assert r["_ws.expert.severity"] == "", r
    assert rows[2]["rocewan.caps.present"] == "0" and rows[2]["_ws.expert.message"] == ""
    assert as_int(rows[3]["rocewan.caps.sum"]) == 0x80
    assert "sum to 0x80" in rows[3]["_ws.expert.message"], rows[3]
    assert rows[4]["rocewan.caps.present"] == "0"
    assert "no capability record" in rows[4]["_ws.expert.message"], rows[4]
    # a non-perftest port: not taken
    other = str(tmp_path / "other.pcap")
    write_frames(other, [tcp_frame(40000, 5000, ex)])
    assert table(other, ["rocewan.caps.present"])[0]["rocewan.caps.present"] == ""


def truncations():
    """Every extension frame of the golden corpus cut inside each of its
    headers and its ICRC, with the IP and UDP lengths made to agree (so the
    UDP dissector hands over the short payload), plus random garbage after a
    vendor opcode."""
    rng = random.Random(31)
    out = []
    srcs = frames_of(os.path.join(rwtest.GOLDEN, "scapy-ext-v4-v6.pcap")) + \
        frames_of(os.path.join(rwtest.GOLDEN, "fec-xor-rs.pcap"))[:8]
    for frame in srcs:
        p = Ether(frame)
        if UDP not in p or IP not in p:
            continue
        udp = bytes(p[UDP])[8:p[UDP].len - 8 + 8]
        for cut in sorted({0, 1, 5, 11, 12, 13, 15, 16, 19, 20, 27, 39, 40, 55, 71, 95,
                           len(udp) - 5, len(udp) - 1}):
            if 0 <= cut < len(udp):
                out.append(bytes(Ether(src=p.src, dst=p.dst) / IP(src=p[IP].src, dst=p[IP].dst)
                                 / UDP(sport=p[UDP].sport, dport=4791, chksum=0) / Raw(udp[:cut])))
    for _ in range(200):
        n = rng.randrange(0, 120)
        body = bytes([rng.randrange(0xC0, 0x100)]) + bytes(rng.randrange(256) for _ in range(n))
        out.append(bytes(Ether() / IP(src="10.0.0.1", dst="10.0.0.2")
                         / UDP(sport=0xC000, dport=4791, chksum=0) / Raw(body)))
    return out


def test_truncated_and_garbage_give_expert_info_never_a_lua_error(tmp_path):
    frames = truncations()
    path = str(tmp_path / "trunc.pcap")
    write_frames(path, frames)
    p = tshark("-r", path, "-T", "fields", "-E", "separator=" + SEP, "-e", "frame.number",
               "-e", "rocewan.bth.opcode", "-e", "_ws.expert.message", "-e", "_ws.lua.text",
               "-e", "_ws.malformed")
    assert "Lua" not in p.stderr and "error" not in p.stderr.lower(), p.stderr[-3000:]
    assert "Lua Error" not in tshark("-r", path, "-V").stdout
    rows = [ln.split(SEP) for ln in p.stdout.splitlines()]
    assert len(rows) == len(frames)
    truncated = 0
    for frame, row in zip(frames, rows):
        body = bytes(Ether(frame)[UDP].payload)
        assert row[3] == "", row  # no Lua error text
        if not body:
            continue
        if body[0] < 0xC0:  # a standard opcode: tshark's own dissector decides
            continue
        assert row[1] != "", row  # the opcode is always decoded
        if body[0] in (0xC0, 0xC1, 0xE0, 0xE1) and len(body) < 24:
            assert "Frame ends inside" in row[2], (body.hex(), row)
            truncated += 1
    assert truncated > 20
    # standard frames cut short still go to tshark's own dissector
    std = str(tmp_path / "std.pcap")
    write_frames(std, [bytes(Ether() / IP() / UDP(sport=1, dport=4791, chksum=0)
                             / Raw(bytes([0x11]) + bytes(7)))])
    out = tshark("-r", std, "-T", "fields", "-e", "infiniband.bth.opcode", "-e", "rocewan.bth.opcode").stdout
    assert out.split("\t")[1].strip() == "" and "Lua" not in out
