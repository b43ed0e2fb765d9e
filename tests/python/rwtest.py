"""Helpers shared by the Python tests: paths, the external tools (rocewire,
tshark) and the record a correct decoder must report for a built spec."""

import copy
import ipaddress
import json
import os
import shutil
import subprocess

import pytest

from rocewan import icrc
from rocewan import opcodes as ops
from rocewan.build import pad_count

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir,
                                    os.pardir))
GOLDEN = os.path.join(REPO, "tests", "golden")
RXE_PCAP = os.path.join(GOLDEN, "rxe-ib_write_bw-4096.pcap")
PYTHON = "/usr/bin/python3"

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
    """Run ``python -m rocewan`` with ``args``; returns the CompletedProcess
    (the caller checks the exit code)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "python")
    return subprocess.run([PYTHON, "-m", "rocewan"] + [str(a) for a in args],
                          capture_output=True, text=True, env=env)


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
            ops.IMMDT: "immdt", ops.IETH: "ieth"}
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
