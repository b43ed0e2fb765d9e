"""Issue 14: ECN end to end through the lossy-emu's RED/ECN bottleneck (the DCQCN switch
model: delay 5 ms, rate 200 Mb/s, 2 MB queue, Kmin 100 KB, Kmax 400 KB, Pmax 0.1), no
--rate_limit. Only what a loaded host cannot break is asserted: the counters of the three
boxes reconcile. Every CE mark the emulator set reached rnic B (the NP), every CNP B sent
reached rnic A, A never decreased more often than it was notified, and the negative
control (--cc none: data not ECT) gets no mark and no CNP. Whether DCQCN keeps the queue
from overflowing and what goodput it reaches are timing: bench/cc/ecn.py.
"""
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTBED = os.path.join(ROOT, "testbed")
CFG = os.path.join(ROOT, "bench", "cc", "ecn-dcqcn.toml")
# unique per run (pid): another make test or testbed on this host keeps its own namespaces
PREFIX = "tbt%d" % (os.getpid() % 100000)


def run(tmp_path, cc, param=""):
    args = [TESTBED, "--prefix", PREFIX, "run", CFG, "--quick", "--out", str(tmp_path),
            "--set", f"rnic.cc={cc}"]
    if param:
        args += ["--set", f"rnic.cc_param={param}"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.load(open(tmp_path / "ecn-dcqcn.json"))["results"]["rows"]
    assert len(rows) == 1
    return rows[0]


@pytest.fixture(scope="module", autouse=True)
def root():
    if os.geteuid() != 0:
        pytest.fail("the testbed tests need root (namespaces, veths); CI runs them as root")
    yield
    subprocess.run([TESTBED, "--prefix", PREFIX, "down"], capture_output=True, timeout=120)


@pytest.mark.parametrize("cc", ["dcqcn", "dcqcn-p"])
def test_ecn_counters_reconcile(tmp_path, cc):
    r = run(tmp_path, cc)
    print(f"\n{cc}: goodput {r['goodput_gbps']:.3f} Gb/s, CE {r['emu_a2b_ecn_marked']}, "
          f"CNPs {r['rnic_b_tx_cnps']}, BECN ACKs {r['rnic_b_tx_becn_acks']}, decreases "
          f"{r['cc_decreases']}, increases {r['cc_increases']}, queue drops "
          f"{r['emu_a2b_drop_queue']}, retransmits {r['tx_retransmits']}")
    assert r["completion_errors"] == 0, r
    # every CE the congestion point set reached the notification point
    assert r["emu_a2b_ecn_marked"] == r["rnic_b_rx_ecn_ce"], r
    # every notification B sent reached A (the B->A direction has no loss and no RED)
    assert r["rnic_b_tx_cnps"] == r["rnic_a_rx_cnps"], r
    assert r["rnic_b_tx_becn_acks"] == r["rnic_a_rx_becn_acks"], r
    notes = r["rnic_b_tx_cnps"] + r["rnic_b_tx_becn_acks"]
    assert notes <= r["rnic_b_rx_ecn_ce"], r
    if r["rnic_b_rx_ecn_ce"]:
        assert notes >= 1, r
    if cc == "dcqcn":
        assert r["rnic_b_tx_becn_acks"] == 0, r  # DCQCN's NP answers with CNPs
    else:
        assert r["rnic_b_tx_cnps"] == 0, r  # DCQCN-p on RC: BECN-flagged ACKs
    assert r["cc_decreases"] <= notes, r
    # rnic A's per-QP trace (--json cc_trace): sampled while the QP ran, one QP, every column
    tr = r["cc_trace"]
    assert tr and tr["rows"], r
    assert tr["columns"][:2] == ["t_s", "qpn"] and all(len(x) == len(tr["columns"]) for x in tr["rows"])
    assert {x[1] for x in tr["rows"]} == {q["qpn"] for q in r["cc_qps"]}, tr
    assert all(x[tr["columns"].index("loss_window_pkts")] >= 1 for x in tr["rows"]), tr


def test_ecn_negative_control(tmp_path):
    """--cc none: the data are not ECN-capable, so RED cannot mark them and nothing is echoed."""
    r = run(tmp_path, "none")
    assert r["completion_errors"] == 0, r
    assert r["emu_a2b_ecn_marked"] == 0 and r["rnic_b_rx_ecn_ce"] == 0, r
    assert r["rnic_b_tx_cnps"] == 0 and r["rnic_a_rx_cnps"] == 0, r
    assert r["cc_decreases"] == 0, r
