"""memif links in the testbed ([link] transport = "memif", docs/testbed.md): rnic A,
lossy-emu and rnic B joined by net_memif shared memory, a veth A-B for perftest's TCP
exchange only. Exact facts only: byte-exact data at MTU 4096 (frames longer than
memif's default 2 KiB buffer), deterministic drops, frame counts that reconcile across
the three processes, PFC relayed across a memif Swing chain, and a negative control.
"""
import json
import os
import subprocess

import pytest

from rocewan.testbed.topo import Topology

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# unique per run (pid): another make test or testbed on this host keeps its own namespaces
PREFIX = "tbm%d" % (os.getpid() % 100000)
NTH = 97        # lossy-emu drop-nth: every 97th RoCEv2 packet of each direction
ITERS = 300     # rc_pingpong round trips of 64 KiB: 16 packets of 4 KiB each way


@pytest.fixture(scope="module", autouse=True)
def root_and_build():
    if os.geteuid() != 0:
        pytest.fail("the testbed tests need root (namespaces, veths); CI runs them as root")
    yield


def pingpong(tmp_path, spec):
    """rc_pingpong over A - memif - lossy-emu - memif - B; (rcA, outA, rcB, outB, emu, A, B)."""
    js = {k: str(tmp_path / f"{k}.json") for k in ("emu", "A", "B")}
    with Topology(PREFIX, 4096, "memif") as t:
        emu = t.start_emu(spec, spec, 1, js["emu"])
        rc_a, out_a, rc_b, out_b = t.rnic_pair("rc_pingpong", f"-m 4096 -s 65536 -n {ITERS}",
                                               js["A"], js["B"], timeout=120)
        emu_out = t.stop(emu)
    assert os.path.exists(js["emu"]), emu_out
    docs = {k: json.load(open(p))["results"] for k, p in js.items() if os.path.exists(p)}
    return rc_a, out_a, rc_b, out_b, docs


def test_memif_pingpong_byte_exact_and_counts_reconcile(tmp_path):
    rc_a, out_a, rc_b, out_b, d = pingpong(tmp_path, f"delay 1ms drop-nth {NTH}")
    # the rnic client compares every echoed byte with what it sent (rnic_bench.c pp_pattern)
    assert rc_a == 0 and rc_b == 0, f"{out_a[-3000:]}\n--- B:\n{out_b[-2000:]}"
    assert f"{ITERS} iters in" in out_a, out_a[-2000:]
    e, a, b = d["emu"], d["A"]["port_counters"], d["B"]["port_counters"]
    for direction, tx, rx in (("a2b", a, b), ("b2a", b, a)):
        x = e[direction]
        # every frame one rnic sent reached the emulator, and every one it passed reached the other
        assert tx["tx_frames"] == x["rx_pkts"], (direction, tx, x)
        assert x["tx_pkts"] == rx["rx_frames"], (direction, x, rx)
        # nothing in flight at exit; the only drops are the rule's
        assert x["in_flight"] == 0, x
        assert x["rx_pkts"] == x["tx_pkts"] + x["drop_rule"], x
        for k in ("drop_loss", "drop_queue", "drop_nombuf", "drop_multiseg", "rx_missed"):
            assert x[k] == 0, (direction, k, x)
        # drop-nth: exactly every NTH-th RoCEv2 frame the emulator saw
        roce_seen = rx["rx_roce"] + x["drop_rule"]
        assert x["drop_rule"] == roce_seen // NTH and x["drop_rule"] > 0, (direction, x, rx)
        # jumbo frames crossed memif whole: one mbuf each, larger than memif's 2 KiB default
        assert rx["rx_multiseg"] == 0, rx
        assert x["rx_bytes"] > 2048 * x["rx_pkts"] or direction == "b2a", x
    # the data the drops took was resent: placed once each, nothing missing
    qa, qb = d["A"]["qp_counters"], d["B"]["qp_counters"]
    assert qa["tx_retransmits"] > 0 and qb["rx_req_packets"] == qa["tx_req_packets"], (qa, qb)


def test_memif_negative_control_corrupted_data_is_caught(tmp_path):
    """The byte check can fail: corruption with the ICRC recomputed reaches the client's
    echo check, which reports the mismatch and exits non-zero."""
    rc_a, out_a, _, _, d = pingpong(tmp_path, "delay 1ms corrupt 2% corrupt-recompute")
    assert d["emu"]["a2b"]["corrupted"] + d["emu"]["b2a"]["corrupted"] > 0, d["emu"]
    assert rc_a != 0, out_a[-2000:]
    assert "differ from what was sent" in out_a or "completion error" in out_a, out_a[-2000:]


# The switch pauses at 300 KB (the config: 800 KB), so the chain's PFC happens in every run
# that moves data: beside two busy loops and four helpers rnic A moved only 0.22 Gb/s and the
# switch's queue peaked at 698 KB, below the config's XOFF (no PFC at all, fresh-clone run 14).
# A slower drain instead (100 Mb/s) queues more in relay B than the fixed RTO allows.
SWITCH = ("--set", "switch.xoff=300K")


def test_memif_swing_chain_relays_pfc(tmp_path):
    """configs/swing-relay.toml over memif: rnic A - relay A - WAN - relay B - switch - rnic B,
    six DPDK processes; the switch's PFC is relayed across the WAN and paces rnic A."""
    r = subprocess.run([os.path.join(ROOT, "testbed"), "--prefix", PREFIX, "run",
                        os.path.join(ROOT, "configs", "swing-relay.toml"), "--quick",
                        "--set", "link.transport=memif", *SWITCH, "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    row = json.load(open(tmp_path / "swing-relay.json"))["results"]["rows"][0]
    emu = json.load(open(tmp_path / "swing-relay-0-emu.json"))["results"]
    a = json.load(open(tmp_path / "swing-relay-0-rnicA.json"))["results"]["port_counters"]
    assert row["completion_errors"] == 0, row
    assert row["switch_pfc_sent"] > 0 and row["rnic_pfc_pauses"] > 0, row
    # every PFC frame relay B sent toward A crossed the WAN emulator as a MAC control frame
    assert emu["b2a"]["mac_ctrl_fwd"] + emu["b2a"]["drop_ctrl"] == row["relay_b_pfc_relayed"] > 0, \
        (emu["b2a"], row)
    for x in (emu["a2b"], emu["b2a"]):
        assert x["in_flight"] == 0 and x["rx_pkts"] == x["tx_pkts"] + x["drop_queue"] + x["drop_loss"], x
    assert a["rx_pfc"] > 0 and a["pfc_rx_bad"] == 0, a
    # the GBN facts: B placed each request packet once
    assert row["b_rx_req_packets"] == row["tx_req_packets"], row
