"""The Scapy-built golden captures: still what golden.py makes, still valid."""

import os

import pytest

import rwtest
from rocewan import golden
from rocewan import opcodes as ops
from rocewan.frame import decode
from rocewan.pcapio import read_frames, write_frames
from rocewan.validate import validate_file

FRAMES = golden.golden_frames()


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_golden_file_is_reproducible(name, tmp_path):
    """Regenerating gives the stored bytes; if this fails after an
    intended change, run 'python -m rocewan golden' and review the diff."""
    path = os.path.join(rwtest.GOLDEN, name)
    assert os.path.exists(path), "%s missing: run python -m rocewan golden" \
        % path
    fresh = tmp_path / name
    write_frames(str(fresh), FRAMES[name])
    with open(path, "rb") as a, open(fresh, "rb") as b:
        assert a.read() == b.read(), "%s differs from what golden.py " \
            "builds" % name


@pytest.mark.parametrize("name", sorted(FRAMES) +
                         [os.path.basename(rwtest.RXE_PCAP)])
def test_golden_file_validates(name):
    path = os.path.join(rwtest.GOLDEN, name)
    p = rwtest.rocewan("validate", path)
    assert p.returncode == 0, p.stdout + p.stderr
    r = validate_file(path).results()
    assert r["ok"] and r["roce_pkts"] == r["roce_ok_pkts"] > 0


def test_golden_coverage():
    """Together the golden files hold every opcode in IPv4 and IPv6."""
    seen = set()
    for name in FRAMES:
        for idx, buf, _ in read_frames(os.path.join(rwtest.GOLDEN, name)):
            rec = decode(buf, idx).rec
            if rec["roce"]:
                seen.add((rec["bth"]["opcode"], rec["ip"]["ver"]))
    ucs = {c for c, o in ops.OPCODES.items() if o.transport == "UC"}
    for code in ops.OPCODES:
        vers = {4} if code in ucs else ({6} if code in (0x64, 0x65)
                                        else {4, 6})
        assert all((code, v) in seen for v in vers), hex(code)
