"""rdma_cm programs between two rxe guests (rxe <-> rxe): the known-good peer
that the rnic's rdma_cm runs are compared with (docs/rdma-cm.md).

Each program must exit 0 on both sides and print its exact success lines;
counts are fixed by the options (rping -C, qperf -n, perftest -n). The
goldens of tests/golden/cm/ are checked without a guest: tshark decodes them
with no malformed frame and finds the CM messages, and rocewan.cmtrace
normalises each to its stored .json (and a changed non-random field changes
the result, a changed random one does not).
"""

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rdmacm_runs import GOLDEN_RUNS, CmRun, run_cm_pair
from vm import VM, Bridge, boot_all, parse_perftest_bw

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
from rocewan import cmtrace  # noqa: E402

GOLDEN = REPO / "tests" / "golden" / "cm"
NET = ("10.9.5.1/24", "10.9.5.2/24", "10.9.5.3/24")       # bridge, server, client
# tshark's RPC-over-RDMA heuristic claims perftest's 4-byte SENDs and calls
# them malformed (16 frames of ib_write_bw.pcap): that dissector is off
TSHARK = ["tshark", "--disable-protocol", "rpcordma"]


@pytest.fixture(scope="module")
def cm_pair(vm_image, netns, tmp_path_factory):
    work = tmp_path_factory.mktemp("vm-rdmacm")
    with Bridge("rwcmbr1", NET[0], netns=netns) as br:
        srv = VM("rwcms", NET[1], bridge=br, netns=netns, image_dir=vm_image, workdir=work)
        cli = VM("rwcmc", NET[2], bridge=br, netns=netns, image_dir=vm_image, workdir=work)
        t0 = time.monotonic()
        with boot_all([srv, cli]):
            print(f"\n[interop] two rdma_cm guests booted in {time.monotonic() - t0:.1f} s")
            for vm in (srv, cli):
                rc, out = vm.run("ls /dev/infiniband; ibv_devinfo -d rxe0 | grep state")
                assert rc == 0 and "rdma_cm" in out and "PORT_ACTIVE" in out, out
            yield srv, cli


def _pair(cm_pair, run: CmRun):
    srv, cli = cm_pair
    t0 = time.monotonic()
    crc, cout, src, sout = run_cm_pair(srv, cli, run)
    print(f"\n[interop] {run.name}: {time.monotonic() - t0:.1f} s")
    assert crc == 0, f"{run.client}: rc {crc}\n{cout}\n--- server:\n{sout}"
    if run.server_exits:
        assert src == 0, f"{run.server}: rc {src}\n{sout}\n--- client:\n{cout}"
    for line in run.client_lines:
        assert line in cout, f"{run.client}: no {line!r} in\n{cout}"
    for line in run.server_lines:
        assert line in sout, f"{run.server}: no {line!r} in\n{sout}"
    return cout, sout


def test_rping_validates_100(cm_pair):
    # -V checks every byte of every ping (rping exits non-zero on a mismatch)
    cout, sout = _pair(cm_pair, CmRun(
        "rping", "rping -s -a {srv} -V -C 100", "rping -c -a {srv} -V -C 100", 7174,
        server_lines=("server DISCONNECT EVENT",)))
    assert "mismatch" not in cout + sout


def test_udaddy_sidr(cm_pair):
    _pair(cm_pair, GOLDEN_RUNS["udaddy"])


def test_ucmatose_10(cm_pair):
    # the server needs -c as well: it fails the 2nd connection otherwise (ENOMEM)
    _pair(cm_pair, CmRun(
        "ucmatose", "ucmatose -c 10", "ucmatose -s {srv} -c 10", 7471,
        client_lines=("data transfers complete", "return status 0"),
        server_lines=("data transfers complete", "disconnected", "return status 0")))


def test_rdma_server_client(cm_pair):
    _pair(cm_pair, CmRun("rdma_server", "rdma_server -s {srv}", "rdma_client -s {srv}", 7471,
                         client_lines=("rdma_client: end 0",),
                         server_lines=("rdma_server: end 0",)))


def test_cmtime_10(cm_pair):
    cout, _ = _pair(cm_pair, CmRun("cmtime", "cmtime -c 10", "cmtime -s {srv} -c 10", 7471,
                                   server_exits=False))
    for step in ("create id", "resolve addr", "resolve route", "create qp", "connect",
                 "disconnect", "destroy"):
        assert re.search(rf"^{step}\s*:\s+[0-9.]+", cout, re.M), f"no {step!r} row:\n{cout}"


def _qperf(cm_pair, opts, test):
    """qperf's server forks a child per test and serves one client at a
    time; a fresh server per call keeps a failed test from blocking the next."""
    srv, cli = cm_pair
    job = srv.run_bg("qperf")
    try:
        srv.wait_tcp_listen(19765)
        rc, out = cli.run(f"qperf -to 30 -cm1 -vvs {opts} {srv.addr} {test}", timeout=150)
    finally:
        job.kill()
    print(f"\n[interop] qperf {opts} {test}:\n{out}")
    assert rc == 0, f"qperf {opts} {test}: rc {rc}\n{out}"
    return {k: v for k, v in re.findall(r"^\s+(\w+)\s+=\s+(.+?)\s*$", out, re.M)} | {"_": out}


def test_qperf_rc_bw_exact(cm_pair):
    r = _qperf(cm_pair, "-n 100 -m 4096", "rc_bw")
    assert r["send_msgs"] == "100" and r["recv_msgs"] == "100", r["_"]
    assert r["send_bytes"] == r["recv_bytes"], r["_"]
    assert r["bw"].endswith("/sec"), r["_"]


def test_qperf_rc_lat(cm_pair):
    # qperf 0.4.11's rc_lat never ends with -n (also without -cm1): a timed
    # run, whose counts must still reconcile: every ping the client sent
    # reached the server, the server answered each one, and the client saw all
    # answers but at most the one in flight when the time ran out
    r = _qperf(cm_pair, "-t 2", "rc_lat")
    n = {k: int(v.replace(",", "")) for k, v in r.items() if k.endswith("_msgs")}
    assert r["latency"].endswith(("us", "ms")), r["_"]
    assert n["loc_send_msgs"] > 0, r["_"]
    assert n["rem_recv_msgs"] == n["loc_send_msgs"] == n["rem_send_msgs"], r["_"]
    assert n["loc_send_msgs"] - n["loc_recv_msgs"] in (0, 1), r["_"]


def test_qperf_rc_rdma_write_bw(cm_pair):
    # rc_rdma_write_bw ignores -n ("-n set but not used"): timed run
    r = _qperf(cm_pair, "-t 2 -m 4096", "rc_rdma_write_bw")
    assert r["bw"].endswith("/sec"), r["_"]
    assert int(r["send_msgs"].replace(",", "")) > 0, r["_"]
    assert int(r["recv_msgs"].replace(",", "")) > 0, r["_"]


@pytest.mark.parametrize("tool", ["ib_write_bw", "ib_send_bw", "ib_read_bw"])
def test_perftest_rdma_cm(cm_pair, tool):
    cout, sout = _pair(cm_pair, GOLDEN_RUNS[tool])
    for out in (cout, sout):
        assert "Data ex. method : rdma_cm" in out, out
        try:
            res = parse_perftest_bw(out)
        except (ValueError, IndexError) as e:
            raise AssertionError(f"{tool}: no result line ({e}):\n{out}")
        assert res["bytes"] == 4096 and res["iterations"] == 5, out


# ---------------------------------------------------------------- the goldens (no guest)

def _goldens():
    return sorted(p.stem for p in GOLDEN.glob("*.pcap"))


def test_goldens_present():
    assert _goldens() == sorted(GOLDEN_RUNS), f"tests/golden/cm has {_goldens()}"


@pytest.mark.parametrize("name", sorted(GOLDEN_RUNS))
def test_golden_tshark(name):
    assert shutil.which("tshark"), "tshark not found (scripts/bootstrap.sh installs it)"
    pcap = str(GOLDEN / f"{name}.pcap")
    cp = subprocess.run(TSHARK + ["-r", pcap, "-Y", "_ws.malformed || _ws.expert.severity >= 8388608"],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0 and cp.stdout == "", f"{name}: malformed frames:\n{cp.stdout}{cp.stderr}"
    cp = subprocess.run(TSHARK + ["-r", pcap, "-Y", "infiniband.mad.mgmtclass == 7",
                                  "-T", "fields", "-e", "infiniband.mad.attributeid"],
                        capture_output=True, text=True, timeout=120, check=True)
    attrs = [int(x, 16) for x in cp.stdout.split()]
    names = [cmtrace.ATTR_NAMES[a] for a in attrs]
    seq = [m["mad"] for m in json.loads((GOLDEN / f"{name}.json").read_text()) if "mad" in m]
    assert names == seq, f"{name}: tshark sees {names}, cmtrace {seq}"
    want = ["SIDR_REQ", "SIDR_REP"] if name == "udaddy" else ["REQ", "REP", "RTU", "DREQ", "DREP"]
    assert all(w in names for w in want), f"{name}: {names}"


@pytest.mark.parametrize("name", sorted(GOLDEN_RUNS))
def test_golden_normalised(name):
    pkts = cmtrace.read_pcap(GOLDEN / f"{name}.pcap")
    got = cmtrace.normalise(pkts, app=GOLDEN_RUNS[name].app)
    assert got == json.loads((GOLDEN / f"{name}.json").read_text())


def test_normalise_negative_controls():
    """A changed non-random field (the REQ's retry count) changes the
    normalised form; changed random fields (the REQ's flow label, every
    comm ID renumbered consistently) do not."""
    pkts = cmtrace.read_pcap(GOLDEN / "ib_write_bw.pcap")
    ref = cmtrace.normalise(pkts, app="perftest")
    req = next(p for p in pkts if "cm" in p and p["cm"]["mad"] == "REQ")
    req["cm"]["retry_count"] ^= 1
    assert cmtrace.normalise(pkts, app="perftest") != ref
    req["cm"]["retry_count"] ^= 1
    req["cm"]["primary_flow_label"] ^= 0x5a5a5
    for p in pkts:
        for k in ("local_comm_id", "remote_comm_id"):
            if "cm" in p and p["cm"].get(k):
                p["cm"][k] ^= 0x11111111
    assert cmtrace.normalise(pkts, app="perftest") == ref


def test_by_flow_ignores_the_interleaving_only():
    """ucmatose's two connections interleave differently from run to run:
    by_flow takes them apart, and still sees a change inside one flow."""
    seq = json.loads((GOLDEN / "ucmatose.json").read_text())
    flows = cmtrace.by_flow(seq)
    assert sorted(flows) == ["cm c.cid0", "cm c.cid1", "qp c.qpn0", "qp c.qpn1",
                             "qp s.qpn0", "qp s.qpn1"], sorted(flows)
    assert [len(flows[f"qp {q}"]) for q in ("c.qpn0", "c.qpn1", "s.qpn0", "s.qpn1")] == [10] * 4
    moved = [m for m in seq if m.get("dest_qp") != "s.qpn1"] + \
        [m for m in seq if m.get("dest_qp") == "s.qpn1"]
    assert moved != seq and cmtrace.by_flow(moved) == flows
    swapped = list(seq)
    i, j = [k for k, m in enumerate(seq) if m.get("dest_qp") == "s.qpn0" and m["opcode"] == "RC_SEND_ONLY"][:2]
    swapped[i], swapped[j] = dict(seq[j], psn=seq[i]["psn"]), dict(seq[i], psn=seq[j]["psn"])
    assert cmtrace.by_flow(swapped) == flows       # same packets, PSNs in order
    swapped[i] = dict(swapped[i], len=99)
    assert cmtrace.by_flow(swapped) != flows
