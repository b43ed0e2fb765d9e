"""Helpers shared by the Python tests: paths, the external tools (rocewire,
tshark) and the record a correct decoder must report for a built spec."""

import copy
import ipaddress
import json
import os
import random
import re
import shutil
import subprocess
import sys

import pytest
from scapy.utils import checksum

from rocewan import icrc
from rocewan import opcodes as ops
from rocewan.build import build_bytes, pad_count, transport_bytes, wrap
from rocewan.gen import random_spec

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir,
                                    os.pardir))
GOLDEN = os.path.join(REPO, "tests", "golden")
RXE_PCAP = os.path.join(GOLDEN, "rxe-ib_write_bw-4096.pcap")
# the interpreter running the tests: Debian's with PYTHONPATH=python in a checkout, a
# venv's with the installed package in tests/python/venv_run.py
PYTHON = sys.executable

# Wireshark's InfiniBand dissector hands the RDMA payload to heuristic
# dissectors (RPC-over-RDMA, SMB Direct, iSER, EoIB, ...), which report random
# payload bytes as malformed packets of *their* protocol. Turn them off so
# that a "Malformed" is about the RoCE headers.
TSHARK_NO_PAYLOAD_HEURISTICS = [
    arg for h in ("rpcrdma_infiniband", "smb_direct_infiniband",
                  "smcr_infiniband", "iser_infiniband", "lnet_ib",
                  "sdp_infiniband", "mellanox_eoib", "eth_over_ib",
                  "fc_infiniband", "nvme_rdma")
    for arg in ("--disable-heuristic", h)]


def scapy_version():
    """(major, minor) of the Scapy imported (2.5 from Debian, 2.8 from PyPI)."""
    import scapy
    return tuple(int(x) for x in re.match(r"(\d+)\.(\d+)", scapy.VERSION).groups())


def rocewire_path():
    """The rocewire binary; the test fails (never skips) when it is missing."""
    path = os.environ.get("ROCEWIRE",
                          os.path.join(REPO, "build", "tools", "rocewire",
                                       "rocewire"))
    if not os.access(path, os.X_OK):
        pytest.fail("rocewire binary not found at %s: build it with "
                    "'ninja -C build tools/rocewire/rocewire' or set ROCEWIRE"
                    % path, pytrace=False)
    return path


def tshark_path():
    """The tshark binary; the test fails (never skips) when it is missing."""
    path = shutil.which("tshark")
    if path is None:
        pytest.fail("tshark not found on PATH: install the 'tshark' package "
                    "(apt-get install tshark)", pytrace=False)
    return path


def run(cmd, check=True):
    """Run ``cmd``; on failure show its output in the assertion."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check:
        assert p.returncode == 0, "%s exited %d\nstdout:\n%s\nstderr:\n%s" % (
            " ".join(cmd), p.returncode, p.stdout[-4000:], p.stderr[-4000:])
    return p


def rocewire(*args):
    """Run rocewire with ``args``; returns stdout."""
    return run([rocewire_path()] + [str(a) for a in args]).stdout


def rocewire_parse(pcap):
    """``rocewire parse`` of ``pcap`` as a list of dicts."""
    return [json.loads(line) for line in rocewire("parse", pcap).splitlines()
            if line.strip()]


def rocewan(*args):
    """Run ``python -m rocewan`` with ``args`` (the rocewan this interpreter
    imports: the environment is inherited); returns the CompletedProcess (the
    caller checks the exit code)."""
    return subprocess.run([PYTHON, "-m", "rocewan"] + [str(a) for a in args],
                          capture_output=True, text=True)


def tshark_verbose(pcap):
    """``tshark -V`` text of ``pcap`` with the payload heuristics off."""
    return run([tshark_path(), "-r", str(pcap), "-V", "-d",
                "udp.port==4791,infiniband"]
               + TSHARK_NO_PAYLOAD_HEURISTICS).stdout


def tshark_problems(text):
    """Lines of tshark -V output that report a malformed packet or an
    error-level expert item, with the frame they belong to."""
    frame, bad = None, []
    for line in text.splitlines():
        if line.startswith("Frame "):
            frame = line.split(":")[0]
        if "Malformed" in line or "Expert Info (Error" in line:
            bad.append("%s: %s" % (frame, line.strip()))
    return bad


# tshark field -> (record key, sub key); atomic VA and R_Key are shown with
# the RETH field names by Wireshark 4.0
TSHARK_FIELDS = [
    ("infiniband.bth.opcode", ("bth", "opcode")),
    ("infiniband.bth.se", ("bth", "se")),
    ("infiniband.bth.m", ("bth", "m")),
    ("infiniband.bth.padcnt", ("bth", "pad")),
    ("infiniband.bth.tver", ("bth", "tver")),
    ("infiniband.bth.p_key", ("bth", "pkey")),
    ("infiniband.bth.destqp", ("bth", "dqpn")),
    ("infiniband.bth.a", ("bth", "a")),
    ("infiniband.bth.psn", ("bth", "psn")),
    ("infiniband.reth.va", ("reth", "va")),
    ("infiniband.reth.r_key", ("reth", "rkey")),
    ("infiniband.reth.dmalen", ("reth", "dlen")),
    ("infiniband.deth.q_key", ("deth", "qkey")),
    ("infiniband.deth.srcqp", ("deth", "sqpn")),
    ("infiniband.aeth.syndrome", ("aeth", "syndrome")),
    ("infiniband.aeth.msn", ("aeth", "msn")),
    ("infiniband.atomiceth.swapdt", ("atomiceth", "swap")),
    ("infiniband.atomiceth.cmpdt", ("atomiceth", "cmp")),
    ("infiniband.atomicacketh.origremdt", ("atomicacketh", "orig")),
    ("infiniband.immdt", ("immdt", None)),
    ("infiniband.ieth", ("ieth", None)),
    ("infiniband.invariant.crc", ("icrc", None)),
]
BYTES_FIELDS = {"infiniband.immdt", "infiniband.ieth"}


def tshark_fields(pcap):
    """One list of TSHARK_FIELDS values (text) per frame of ``pcap``."""
    cmd = [tshark_path(), "-r", str(pcap), "-T", "fields",
           "-E", "separator=|", "-E", "occurrence=f"]
    for f, _ in TSHARK_FIELDS:
        cmd += ["-e", f]
    out = run(cmd + TSHARK_NO_PAYLOAD_HEURISTICS).stdout
    return [line.split("|") for line in out.splitlines()]


def _convert(field, text):
    if text == "":
        return None
    if field in BYTES_FIELDS:
        return int(text.replace(":", ""), 16)
    if text in ("True", "False"):
        return int(text == "True")
    return int(text, 0)


def _expected(rec, field, key):
    top, sub = key
    if top not in rec:
        return None
    v = rec[top] if sub is None else rec[top][sub]
    if field == "infiniband.invariant.crc":
        return icrc.to_bth_field(v)        # Wireshark reads it big-endian
    return v


def _atomic_va_rkey(rec):
    """Wireshark shows AtomicETH VA / R_Key in the RETH fields."""
    if "atomiceth" in rec:
        return {"infiniband.reth.va": rec["atomiceth"]["va"],
                "infiniband.reth.r_key": rec["atomiceth"]["rkey"]}
    return {}


def tshark_min_compared(recs):
    """Fields tshark_field_diffs must compare at least: more than 11 per
    standard frame (BTH 9 + ICRC + extensions), 9 per rocewan extension
    opcode (Wireshark decodes its BTH only)."""
    return sum(9 if ops.is_extension(r["bth"]["opcode"]) else 11 for r in recs)


def tshark_field_diffs(pcap, recs):
    """Compare tshark's InfiniBand fields of every frame of ``pcap`` with
    the records ``recs`` (rocewire parse shape). Returns (mismatch lines,
    number of non-empty fields compared)."""
    rows = tshark_fields(pcap)
    assert len(rows) == len(recs)
    bad, compared = [], 0
    for rec, row in zip(recs, rows):
        special = _atomic_va_rkey(rec)
        for (field, key), text in zip(TSHARK_FIELDS, row):
            want = special.get(field, _expected(rec, field, key))
            if field == "infiniband.invariant.crc" and \
                    rec["bth"]["opcode"] == ops.CNP_OPCODE:
                want = None   # Wireshark 4.0 does not know the CNP opcode
            if ops.is_extension(rec["bth"]["opcode"]) and \
                    not field.startswith("infiniband.bth."):
                # a manufacturer-specific opcode (docs/wire.md): Wireshark
                # decodes its BTH only
                want = None
            got = _convert(field, text)
            compared += want is not None
            if got != want:
                bad.append("%s: %s tshark=%r ours=%r"
                           % (describe(rec), field, got, want))
    return bad, compared


def _ip_record(ip):
    addr = (ipaddress.ip_address(ip["src"]), ipaddress.ip_address(ip["dst"]))
    tos = ip.get("tos", 0)
    return {"ver": ip["ver"], "src": addr[0].compressed,
            "dst": addr[1].compressed, "tos": tos, "dscp": tos >> 2,
            "ecn": tos & 3, "ttl": ip.get("ttl", 64),
            "flow": ip.get("flow", 0) if ip["ver"] == 6 else 0}


def _ext_records(spec, op):
    """The extension header entries of a record, from the spec."""
    out = {}
    keys = {ops.DETH: "deth", ops.RETH: "reth", ops.ATOMICETH: "atomiceth",
            ops.AETH: "aeth", ops.ATOMICACKETH: "atomicacketh",
            ops.IMMDT: "immdt", ops.IETH: "ieth", ops.SPETH: "speth",
            ops.NTETH: "nteth", ops.VTETH: "vteth",
            ops.VLETH: "vleth"}
    for ext in op.exts:
        if ext in keys:
            out[keys[ext]] = copy.deepcopy(spec[keys[ext]])
    return out


def expected_record(spec, frame, idx=0):
    """What a correct decoder reports for ``frame``, built from ``spec``.
    Everything comes from the spec except the UDP checksum (computed by
    Scapy for IPv6, checked separately) and the ICRC (our own function, which
    the tests check against Scapy, rxe and the C library)."""
    op = ops.OPCODES[spec["bth"]["opcode"]]
    payload = spec.get("payload", b"")
    pad = pad_count(len(payload))
    ip_hlen = 20 if spec["ip"]["ver"] == 4 else 40
    l2 = 18 if spec.get("vlan") else 14
    udp_len = 8 + op.hdr_len + len(payload) + pad + 4
    udp_csum = int.from_bytes(frame[l2 + ip_hlen + 6:l2 + ip_hlen + 8], "big")
    b = spec["bth"]
    rec = {
        "idx": idx, "len": len(frame), "roce": True, "err": "OK",
        "vlan": copy.deepcopy(spec.get("vlan")),
        "ip": _ip_record(spec["ip"]),
        "udp": {"sport": spec["udp"]["sport"], "dport": 4791, "len": udp_len,
                "csum": udp_csum},
        "bth": {"opcode": op.code, "name": op.name, "se": b["se"],
                "m": b["m"], "pad": pad, "tver": 0, "pkey": b["pkey"],
                "fecn": b["fecn"], "becn": b["becn"], "dqpn": b["dqpn"],
                "a": b["a"], "psn": b["psn"]},
    }
    rec.update(_ext_records(spec, op))
    ip = frame[l2:l2 + ip_hlen + udp_len]
    rec.update({"payload_len": len(payload), "icrc": icrc.compute(ip),
                "icrc_ok": True})
    return rec


def diff_records(a, b, a_name="a", b_name="b"):
    """Human-readable differences between two records (empty if equal)."""
    out = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, "<missing>"), b.get(key, "<missing>")
        if va == vb:
            continue
        if isinstance(va, dict) and isinstance(vb, dict):
            for k in sorted(set(va) | set(vb)):
                if va.get(k, "<missing>") != vb.get(k, "<missing>"):
                    out.append("%s.%s: %s=%r %s=%r" % (
                        key, k, a_name, va.get(k, "<missing>"), b_name,
                        vb.get(k, "<missing>")))
        else:
            out.append("%s: %s=%r %s=%r" % (key, a_name, va, b_name, vb))
    return out


def describe(rec):
    """Short identification of a record for failure messages."""
    bth = rec.get("bth", {})
    return "frame #%s %s IPv%s%s" % (
        rec.get("idx"), bth.get("name", "?"), rec.get("ip", {}).get("ver"),
        " vlan" if rec.get("vlan") else "")


def _ip4_fix_csum(frame, l3):
    """Recompute the IPv4 header checksum of ``frame`` (header at ``l3``)."""
    b = bytearray(frame)
    hlen = (b[l3] & 0x0f) * 4
    b[l3 + 10:l3 + 12] = b"\x00\x00"
    b[l3 + 10:l3 + 12] = checksum(bytes(b[l3:l3 + hlen])).to_bytes(2, "big")
    return bytes(b)


def _patch(frame, off, data):
    b = bytearray(frame)
    b[off:off + len(data)] = data
    return bytes(b)


def broken_frames(seed=3):
    """(name, frame, error) for one frame per consistency error the decoders
    know, each otherwise valid (lengths, checksums and ICRC right unless
    that is the error)."""
    rng = random.Random(seed)
    send = random_spec(rng, 0x04, 4, vlan=False)           # RC SEND ONLY
    send["payload"] = b"abcdefg"                           # 7 bytes, pad 1
    send6 = dict(random_spec(rng, 0x64, 6, vlan=True), payload=b"hello!")
    read = random_spec(rng, 0x0c, 4, vlan=True)            # RETH, no payload
    ok, ok6 = build_bytes(send), build_bytes(send6)
    t_send, t_read = transport_bytes(send), transport_bytes(read)
    l3 = 14
    bth = l3 + 20 + 8
    icrc_off = len(ok) - 4
    assert len(ok) > 60, "no Ethernet padding expected"

    def with_byte1(t, value):
        return t[:1] + bytes([value]) + t[2:]

    return [
        ("valid IPv4", ok, "OK"),
        ("valid IPv6 VLAN", ok6, "OK"),
        ("flipped payload bit",
         _patch(ok, bth + 15, bytes([ok[bth + 15] ^ 4])), "BAD_ICRC"),
        ("flipped IPv6 payload bit", _patch(ok6, len(ok6) - 6,
                                            bytes([ok6[-6] ^ 0x80])),
         "BAD_ICRC"),
        ("flipped ICRC bit", _patch(ok, icrc_off, bytes([ok[icrc_off] ^ 1])),
         "BAD_ICRC"),
        ("reserved opcode 0x15", wrap(send, b"\x15" + t_send[1:]),
         "BAD_OPCODE"),
        ("RD opcode 0x40", wrap(send, b"\x40" + t_send[1:]), "BAD_OPCODE"),
        ("TVer 1", wrap(send, with_byte1(t_send, t_send[1] | 1)), "BAD_TVER"),
        ("pad 3 on 2 payload bytes", wrap(send, with_byte1(
            t_send[:14], (t_send[1] & 0xcf) | 0x30)), "BAD_PAD"),
        ("pad on READ REQUEST", wrap(read, with_byte1(
            t_read, t_read[1] | 0x10)), "BAD_PAD"),
        ("READ REQUEST with payload", wrap(read, t_read + b"abcd"),
         "PAYLOAD_NOT_ALLOWED"),
        ("READ REQUEST cut in RETH", wrap(read, t_read[:12 + 8]),
         "TRUNC_EXT"),
        ("BTH cut", wrap(read, t_read[:10]), "TRUNC_BTH"),
        ("frame cut in the payload", ok[:-6], "BAD_IP_LEN"),
        ("IPv6 frame cut", ok6[:-3], "BAD_IP_LEN"),
        ("UDP length 4 short", _patch(ok, l3 + 24, (int.from_bytes(
            ok[l3 + 24:l3 + 26], "big") - 4).to_bytes(2, "big")),
         "BAD_UDP_LEN"),
        ("IPv4 header checksum", _patch(ok, l3 + 10, bytes([ok[l3 + 10] ^ 1])),
         "BAD_IP_CSUM"),
        ("IPv4 more-fragments flag", _ip4_fix_csum(
            _patch(ok, l3 + 6, b"\x20\x00"), l3), "IP_FRAGMENT"),
        ("IP length ends in UDP header", _ip4_fix_csum(
            _patch(ok, l3 + 2, (20 + 4).to_bytes(2, "big")), l3),
         "TRUNC_UDP"),
    ]
