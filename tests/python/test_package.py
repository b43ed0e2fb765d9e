"""The package as a user gets it: which rocewan and which Scapy these tests run
against (the checkout's with Debian's 2.5, or a venv's installed one with
PyPI's 2.8.0: tests/python/venv_run.py), layers that bind themselves beside
scapy.contrib.roce's, python/README.md's example, and the commands that need a
checkout refusing without one."""

import glob
import os
import re
import subprocess
import sys

import scapy

import rwtest
import rocewan
from rocewan import checkout

README = os.path.join(rwtest.REPO, "python", "README.md")
CONSTRAINTS = os.path.join(rwtest.REPO, "python", "constraints-test.txt")
FEC_PCAP = os.path.join(rwtest.GOLDEN, "fec-xor-rs.pcap")
VENV = os.environ.get("ROCEWAN_VENV")   # set by venv_run.py only


def py(code, env=None, cwd=None):
    """``code`` in a fresh interpreter (this one's executable and rocewan)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def test_the_rocewan_and_scapy_under_test():
    """In the venv run, the installed package and PyPI's pinned Scapy, never the
    checkout's python/ (no PYTHONPATH); else the checkout's python/."""
    pkg = os.path.realpath(os.path.dirname(rocewan.__file__))
    if VENV:
        pinned = re.search(r"^scapy==(\S+)", open(CONSTRAINTS).read(), re.M).group(1)
        assert scapy.VERSION == pinned
        assert pkg.startswith(os.path.realpath(VENV) + os.sep), pkg
        assert "PYTHONPATH" not in os.environ
        assert checkout.version() == "rocewan " + rocewan.__version__
    else:
        assert pkg == os.path.realpath(os.path.join(rwtest.REPO, "python", "rocewan"))
        assert checkout.find() == os.path.realpath(rwtest.REPO) or checkout.find() == rwtest.REPO


BIND_CHECK = r"""
import glob, os, sys
from scapy.all import rdpcap
from scapy.contrib.roce import BTH
from scapy.packet import Raw
%s
from rocewan import opcodes as ops
fec = {0xD0, 0xD1}
n_fec = n_ext = 0
for path in sorted(glob.glob(sys.argv[1] + "/*.pcap")):
    for p in rdpcap(path):
        if BTH not in p:
            continue
        op, nxt = p[BTH].opcode, p[BTH].payload
        info = ops.lookup(op)
        if op in fec:
            n_fec += 1
            print("fec", op, type(nxt).__name__, os.path.basename(path))
        elif info is not None and info.exts and op != ops.CNP_OPCODE:
            n_ext += 1
            print("ext", op, type(nxt).__name__, info.exts[0])
print("counts", n_fec, n_ext)
"""


def _bind_run(imports):
    code = BIND_CHECK % imports
    r = subprocess.run([sys.executable, "-c", code, rwtest.GOLDEN], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    lines = [ln.split() for ln in r.stdout.splitlines()]
    return lines[:-1], lines[-1]


def test_import_layers_alone_binds_every_extension_fec_included():
    """A user's rdpcap() after `import rocewan.layers` and nothing else from
    rocewan: every FEC frame of tests/golden has FRH after its BTH (20 of them in
    fec-xor-rs.pcap: 16 repairs, 4 negotiations; the run captures add theirs), every opcode with extension
    headers its first one, never Raw."""
    rows, counts = _bind_run("import rocewan.layers")
    fec_rows = [r for r in rows if r[0] == "fec"]
    assert len([r for r in fec_rows if r[3] == "fec-xor-rs.pcap"]) == 20
    assert counts[1:] == [str(len(fec_rows)), str(len([r for r in rows if r[0] == "ext"]))]
    assert int(counts[2]) > 100
    for r in rows:
        if r[0] == "fec":
            assert r[2] == "FRH", r
        else:
            assert r[2] == r[3], r


def test_without_rocewan_those_frames_are_raw():
    """Negative control: scapy.contrib.roce alone dissects the FEC frames and
    every extension but AETH as Raw."""
    rows, counts = _bind_run("import scapy.contrib.roce")
    assert len([r for r in rows if r[0] == "fec" and r[3] == "fec-xor-rs.pcap"]) == 20
    assert {r[2] for r in rows if r[0] == "fec"} == {"Raw"}
    assert {r[2] for r in rows if r[0] == "ext" and r[3] != "AETH"} == {"Raw"}


def test_bindings_sit_beside_contrib_roce():
    """contrib.roce's own bindings stay (BTH -> its AETH for RC and RD
    ACKNOWLEDGE, after ours), a dissected ACK is found as contrib's AETH too,
    and BTH() / contrib AETH() builds the same bytes with or without rocewan."""
    build = ("from scapy.compat import raw\nfrom scapy.contrib import roce\n%s\n"
             "print(raw(roce.BTH(psn=5) / roce.AETH(syndrome=0x1f, msn=3)).hex())")
    without = py(build % "")
    with_ = py(build % "import rocewan.layers")
    assert without.returncode == with_.returncode == 0, (without.stderr, with_.stderr)
    assert with_.stdout == without.stdout and with_.stdout.startswith("51")  # RD ACK: contrib's last

    from scapy.compat import raw
    from scapy.contrib import roce as contrib
    from scapy.layers.inet import IP, UDP
    from rocewan import layers
    guesses = layers.BTH.payload_guess
    for code in (0x11, 0x51):
        assert ({"opcode": code}, contrib.AETH) in guesses
    ours = guesses.index(({"opcode": 0x11}, layers.AETH))
    assert ours < guesses.index(({"opcode": 0x11}, contrib.AETH))
    ack = IP(raw(IP(dst="10.0.0.2") / UDP(dport=4791) / layers.BTH(opcode=0x12, psn=9)
                 / layers.AETH(msn=4) / layers.AtomicAckETH(orig=77)))
    assert type(ack[layers.BTH].payload) is layers.AETH
    assert ack[contrib.AETH].msn == 4 and ack[layers.AtomicAckETH].orig == 77
    rd = IP(raw(IP(dst="10.0.0.2") / UDP(dport=4791) / layers.BTH(opcode=0x51) / contrib.AETH(msn=2)))
    assert type(rd[layers.BTH].payload) is contrib.AETH  # contrib's own binding, untouched


def test_readme_example_runs():
    """python/README.md's example, as a user runs it from the repository root."""
    text = open(README).read()
    code = text.split("<!-- example: tests/python/test_package.py -->\n```python\n")[1].split("```")[0]
    assert len(code.strip().splitlines()) == 5
    r = py(code, cwd=rwtest.REPO)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 20
    assert sum(ln.startswith("0xd0 xor xor k=8") for ln in lines) == 10
    assert sum(ln.startswith("0xd0 rs rs k=8") for ln in lines) == 6
    assert sum(ln.startswith("0xd1 commit") for ln in lines) == 4


def test_golden_without_dir_refuses_outside_a_checkout(tmp_path):
    """`rocewan golden` with no DIR and no checkout: exit 2 naming ROCEWAN_ROOT,
    nothing written; with DIR it writes there."""
    env = {**os.environ, "ROCEWAN_ROOT": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "rocewan", "golden"], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 2 and "ROCEWAN_ROOT" in r.stderr, (r.returncode, r.stderr)
    assert os.listdir(tmp_path) == []
    if VENV:  # an installed package finds no checkout of its own
        r = rwtest.rocewan("golden")
        assert r.returncode == 2 and "ROCEWAN_ROOT" in r.stderr, (r.returncode, r.stderr)
    r = subprocess.run([sys.executable, "-m", "rocewan", "golden", str(tmp_path / "g")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / "g")) == sorted(
        os.path.basename(p) for p in glob.glob(os.path.join(rwtest.GOLDEN, "scapy-*.pcap")))


def test_testbed_without_a_checkout_names_rocewan_root(tmp_path):
    """The testbed command with ROCEWAN_ROOT naming no checkout: exit 2, the
    message names ROCEWAN_ROOT; --help works anyway."""
    env = {**os.environ, "ROCEWAN_ROOT": str(tmp_path)}
    code = "import sys\nfrom rocewan.testbed.cli import main\nsys.exit(main(%r, prog='rocewan-testbed'))"
    r = py(code % (["run", "configs/gbn-lossy.toml", "--quick"],), env=env)
    assert r.returncode == 2 and "ROCEWAN_ROOT=%s is not a rocewan checkout" % tmp_path in r.stderr, \
        (r.returncode, r.stderr)
    r = py(code % (["--help"],), env=env)
    assert r.returncode == 0 and "usage: rocewan-testbed" in r.stdout, r.stderr
    if VENV:
        exe = os.path.join(VENV, "bin", "rocewan-testbed")
        r = subprocess.run([exe, "down"], capture_output=True, text=True, timeout=300,
                           env={k: v for k, v in os.environ.items() if k != "ROCEWAN_ROOT"})
        assert r.returncode == 2 and "set ROCEWAN_ROOT" in r.stderr, (r.returncode, r.stderr)
