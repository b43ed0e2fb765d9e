"""ECN congestion control end to end through the lossy-emu's RED/ECN bottleneck (the DCQCN
switch model of bench/cc/ecn-dcqcn.toml: delay 5 ms, rate 200 Mb/s, 2 MB queue, Kmin 100 KB,
Kmax 400 KB, pmax 10%, DCQCN-p (Wang et al.) 3.1's Pmax 0.1), no --rate_limit, 2 s of 64 KiB
WRITEs (--quick). Only what a loaded host cannot break is asserted, as counts:

- the CC the run used is the one asked for, on both rnics (`cc_used` in their --json, and
  per QP in `cc_qps`), so a CC that silently fell back to none fails here;
- the congestion point marked (CE > 0), every CE mark the emulator set reached rnic B (the
  notification point), B answered with the notification of its CC (CNPs for dcqcn,
  BECN-flagged ACKs for dcqcn-p and dctcp on RC, never the other kind), and what B sent
  is what A received, exactly, when the emulator's B->A direction and A's port dropped
  nothing (else the difference is reconciled with those drops);
- A cut its rate or window (`cc_decreases` > 0), never more often than it was notified;
- the negative control, --cc none: the data are not ECT, so RED counts them as
  `red_not_ect` and marks none: 0 CE, 0 CNPs, 0 BECN ACKs, no CC decrease or increase.

Whether a CC keeps the queue from overflowing and what goodput it reaches are timing:
bench/cc/ecn.py.
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
# the emulator's counters of frames it did not forward, by cause
EMU_DROPS = ("drop_loss", "drop_queue", "drop_nombuf", "drop_ctrl", "drop_multiseg", "drop_cut",
             "drop_rule", "rx_missed", "rx_pool_empty")


def run(tmp_path, cc, param=""):
    """One --quick run; the testbed's row and the three programs' own --json documents."""
    args = [TESTBED, "--prefix", PREFIX, "run", CFG, "--quick", "--out", str(tmp_path),
            "--set", f"rnic.cc={cc}"]
    if param:
        args += ["--set", f"rnic.cc_param={param}"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.load(open(tmp_path / "ecn-dcqcn.json"))["results"]["rows"]
    assert len(rows) == 1
    row = rows[0]
    docs = {}
    for k in ("emu", "rnicA", "rnicB"):  # the run's own documents: ecn-dcqcn-0-{k}.json
        paths = list(tmp_path.glob(f"ecn-dcqcn-*-{k}.json"))
        assert len(paths) == 1, paths
        docs[k] = json.load(open(paths[0]))["results"]
    assert "pmax 10%" in docs["emu"]["a2b"]["spec_final"], docs["emu"]["a2b"]["spec_final"]
    print(f"\n{cc}: goodput {row['goodput_gbps']:.3f} Gb/s, CE {row['emu_a2b_ecn_marked']}, "
          f"red_not_ect {docs['emu']['a2b']['red_not_ect']}, CNPs {row['rnic_b_tx_cnps']}, "
          f"BECN ACKs {row['rnic_b_tx_becn_acks']}, decreases {row['cc_decreases']}, increases "
          f"{row['cc_increases']}, queue drops {row['emu_a2b_drop_queue']}, retransmits "
          f"{row['tx_retransmits']}, cc_used {docs['rnicA']['cc_used']}/{docs['rnicB']['cc_used']}")
    return row, docs


@pytest.fixture(scope="module", autouse=True)
def root():
    if os.geteuid() != 0:
        pytest.fail("the testbed tests need root (namespaces, veths); CI runs them as root")
    yield
    subprocess.run([TESTBED, "--prefix", PREFIX, "down"], capture_output=True, timeout=120)


def check_cc_used(docs, cc):
    """The CC each rnic's QPs ran, from the engine (roce_cc_info.name), not the option."""
    for k in ("rnicA", "rnicB"):
        assert docs[k]["cc_used"] == cc, (k, docs[k]["cc_used"], docs[k]["cc_qps"])
        assert all(q["cc"] == cc for q in docs[k]["cc_qps"]), (k, docs[k]["cc_qps"])


def reconcile(sent, received, docs, what):
    """B sent @p sent notifications, A received @p received: equal when the B->A direction
    lost none (the emulator's counters by cause, and A's port); else the difference is at
    most what was dropped."""
    b2a = docs["emu"]["b2a"]
    lost = sum(b2a.get(k, 0) for k in EMU_DROPS) + (docs["rnicA"].get("pmd_counters") or {}).get("imissed", 0)
    if lost == 0:
        assert b2a["rx_pkts"] == b2a["tx_pkts"], b2a
        assert sent == received, (what, sent, received)
    else:
        assert received <= sent <= received + lost, (what, sent, received, lost)


def check_ecn_cc(r, docs, cc, note):
    """An ECN CC marked, notified and cut; @p note: 'cnps' or 'becn_acks', the NP's answer."""
    other = "becn_acks" if note == "cnps" else "cnps"
    assert r["completion_errors"] == 0, r
    check_cc_used(docs, cc)
    # the congestion point marked, and every CE it set reached the notification point
    assert r["emu_a2b_ecn_marked"] > 0, r
    assert r["emu_a2b_ecn_marked"] == r["rnic_b_rx_ecn_ce"], r
    # B answered with its CC's notification, and only that kind; A received what B sent
    sent, received = r[f"rnic_b_tx_{note}"], r[f"rnic_a_rx_{note}"]
    assert sent > 0, r
    assert r[f"rnic_b_tx_{other}"] == 0 and r[f"rnic_a_rx_{other}"] == 0, r
    assert sent <= r["rnic_b_rx_ecn_ce"], r  # at most one notification per mark
    reconcile(sent, received, docs, note)
    # the sender cut, never more often than it was notified
    assert r["cc_decreases"] > 0, r
    assert r["cc_decreases"] <= received, r
    # rnic A's per-QP trace (--json cc_trace): sampled while the QP ran, one QP, every column
    tr = r["cc_trace"]
    assert tr and tr["rows"], r
    assert tr["columns"][:2] == ["t_s", "qpn"] and all(len(x) == len(tr["columns"]) for x in tr["rows"])
    assert {x[1] for x in tr["rows"]} == {q["qpn"] for q in r["cc_qps"]}, tr
    assert all(x[tr["columns"].index("loss_window_pkts")] >= 1 for x in tr["rows"]), tr
    return tr


@pytest.mark.parametrize("cc,note", [("dcqcn", "cnps"), ("dcqcn-p", "becn_acks")])
def test_dcqcn_end_to_end(tmp_path, cc, note):
    """DCQCN's NP answers CE with CNPs; DCQCN-p's on RC with a BECN-flagged ACK per mark
    (DCQCN-p (Wang et al.) 2.1). Both cut the rate, Rc = Rc (1 - alpha / 2) (Zhu et al.,
    SIGCOMM 2015)."""
    r, docs = run(tmp_path, cc)
    check_ecn_cc(r, docs, cc, note)


def test_dctcp_end_to_end(tmp_path):
    """DCTCP (RFC 8257): the receiver echoes every CE as a BECN-flagged ACK (the ECE of
    RFC 8257 3.2), never a CNP, and the sender cuts its window (3.3,
    cwnd = cwnd (1 - alpha / 2)): the window A ends with is below the one it started at."""
    r, docs = run(tmp_path, "dctcp")
    check_ecn_cc(r, docs, "dctcp", "becn_acks")
    # DCTCP starts uncapped, at the engine's largest window (ROCE_MAX_WINDOW_PKTS, 2^21
    # packets: the QP and loss windows bound it); a cut sets it to at most what was in
    # flight, and it then grows by one packet per window, so it ends far below that
    qp = docs["rnicA"]["cc_qps"]
    assert len(qp) == 1 and 1 <= qp[0]["window_pkts"] < 1 << 21, qp
    assert 0.0 <= qp[0]["alpha"] <= 1.0, qp


def test_ecn_negative_control(tmp_path):
    """--cc none: the data are not ECN-capable, so RED cannot mark them (it counts them as
    red_not_ect) and nothing is echoed or cut."""
    r, docs = run(tmp_path, "none")
    assert r["completion_errors"] == 0, r
    check_cc_used(docs, "none")
    # RED did select packets, but could not mark them: the control exercised the marker
    assert docs["emu"]["a2b"]["red_not_ect"] > 0, docs["emu"]["a2b"]
    assert r["emu_a2b_ecn_marked"] == 0 and r["rnic_b_rx_ecn_ce"] == 0, r
    assert r["rnic_b_tx_cnps"] == 0 and r["rnic_a_rx_cnps"] == 0, r
    assert r["rnic_b_tx_becn_acks"] == 0 and r["rnic_a_rx_becn_acks"] == 0, r
    assert r["cc_decreases"] == 0 and r["cc_increases"] == 0, r
