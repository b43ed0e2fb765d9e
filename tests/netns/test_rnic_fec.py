"""rnic A -> lossy-emu -> rnic B with FEC (--recovery fec+MODE, docs/fec.md) and
deterministic drops: the emulator drops exactly four chosen request packets of a
write_bw run (SPEC `drop-psn QPN:PSN`, one per block of the default xor:32,4), and
every one of them is rebuilt at B from its block's XOR repair, handed to the
transport as if received: no NAK, RACK or SACK, no retransmission, no packet out
of sequence at B. The rebuilt frames are byte-exact by construction: B recomputes
the ICRC of each and compares it with the rebuilt ICRC bytes (a mismatch is
counted in fec_rebuild_bad and never delivered); the payload checks of the
harness tests (tests/unit/transport/test_transport_fec.c) compare the data.
rc_pingpong --chk cannot run this: it has no version exchange, so no capability
record, so no FEC (docs/perftest-exchange.md).

The negative control: a peer that does not ask for FEC. A prints the one line,
runs gbn without FEC frames, and the same drops cost NAKs and go-back rounds.

Timing: --fec-hold and -u (the retransmit timer) are raised so that a stalled process on a
loaded host neither releases a hold nor fires the retransmit timer; what is
asserted are counts, which load cannot change.
"""
import json
import os
import sys

import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("ROCEWAN_BUILD", BUILD)
from rocewan.testbed.topo import Topology  # noqa: E402

SEED = 11
SIZE, ITERS = 65536, 40  # 64 packets per WRITE at MTU 1024: 2560 packets
DROPS = (300, 777, 1500, 2000)  # PSN offsets: four different 128-packet groups
QPN_B = 0x11  # ROCE_FIRST_QPN: B's only QP, the destination of A's requests
ROBUST = "--fec-hold 100ms --rto fixed -u 18"  # hold margin 100 ms, retransmit timer 1.07 s


def client_psn(seed):
    """rnic_main.c setup_objects: the client's (given a server name) first PSN of QP 0."""
    return ((seed + 1) * 2654435761) & 0xFFFFFF


def run(tmp_path, opts_a, opts_b):
    for exe in ("rnic", "lossy-emu"):
        p = os.path.join(BUILD, "app", exe, exe)
        if not os.access(p, os.X_OK):
            pytest.fail(f"{p} is not built")
    psn0 = client_psn(SEED)
    spec = " ".join(f"drop-psn 0x{QPN_B:x}:0x{(psn0 + d) & 0xFFFFFF:x}" for d in DROPS)
    js = {k: str(tmp_path / f"{k}.json") for k in ("emu", "A", "B")}
    with Topology("xf%d" % (os.getpid() % 10000), 1024) as topo:
        emu = topo.start_emu(spec, "", 1, js["emu"])
        # -t 2: at most 128 packets in flight, so a stalled rnic B (a loaded host) cannot
        # overflow its 1024-frame af_packet ring: the only losses are the emulator's four
        common = f"-s {SIZE} -n {ITERS} -t 2 -m 1024 --seed {SEED} {ROBUST}"
        rc_a, out_a, rc_b, out_b = topo.rnic_pair(
            "write_bw", common, js["A"], js["B"], timeout=90, extra_a=opts_a, extra_b=opts_b)
        emu_out = topo.stop(emu)
    assert rc_a == 0 and rc_b == 0, f"--- A:\n{out_a[-2000:]}\n--- B:\n{out_b[-2000:]}"
    res = {}
    for k in js:
        with open(js[k]) as f:
            res[k] = json.load(f)["results"]
    e = res["emu"]
    assert e["a2b"]["drop_rule"] == len(DROPS), emu_out
    # each rule dropped its packet once: the PSN arithmetic matches the rnic's
    assert [r["dropped"] for r in e["a2b"]["drop_rules"]] == [1] * len(DROPS), e["a2b"]
    for d in ("a2b", "b2a"):
        assert e[d]["drop_loss"] == 0 and e[d]["drop_queue"] == 0, e[d]
    a, b = res["A"], res["B"]
    assert a["iters"] == ITERS and a["completion_errors"] == 0 and b["completion_errors"] == 0
    return a, b, out_a


@pytest.mark.parametrize("mode", ["gbn", "gbone", "irn"])
def test_fec_rebuilds_every_drop(tmp_path, mode):
    opt = f"--recovery fec+{mode}"
    a, b, _ = run(tmp_path, opt, opt)
    assert a["recovery_used"] == mode and b["recovery_used"] == mode
    assert a["fec_used"] == "xor:32,4" and b["fec_used"] == "xor:32,4"
    qa, qb = a["qp_counters"], b["qp_counters"]
    # every dropped packet rebuilt at B from its block's repair, nothing left to the base mode
    assert qb["fec_rebuilt"] == len(DROPS), qb
    assert qb["fec_unrecoverable"] == 0 and qb["fec_rx_refused"] == 0, qb
    assert qb["fec_release_deadline"] == 0 and qb["fec_release_unrecoverable"] == 0, qb
    assert qb["fec_release_full"] == 0 and qb["fec_release_progress"] == 0, qb
    assert qb["fec_holds_repaired"] == qb["fec_loss_signals_withheld"] >= 1, qb
    # no loss signal of any mode, nothing out of sequence, no retransmission, no timer
    assert qb["tx_nak_seq_err"] == 0 and qb["tx_racks"] == 0 and qb["tx_sacks"] == 0, qb
    assert qb["rx_out_of_sequence"] == 0 and qb["rx_dup_requests"] == 0, qb
    assert qa["tx_retransmits"] == 0 and qa["timeouts"] == 0 and qa["retries"] == 0, qa
    # every request packet coded once, received in order once; the repairs crossed
    assert qa["fec_tx_covered"] == qa["tx_req_packets"] >= ITERS * SIZE // 1024, qa
    assert qb["rx_req_packets"] == qa["tx_req_packets"], (qa, qb)
    assert qb["fec_rx_frames"] == qa["fec_tx_frames"] > 0, (qa, qb)
    assert qa["fec_tx_dropped"] == 0, qa


def test_fec_peer_without_fec(tmp_path):
    a, b, out_a = run(tmp_path, "--recovery fec+gbn", "--recovery gbn")
    assert "running --recovery gbn without FEC" in out_a, out_a
    assert a["fec_used"] is None and b["fec_used"] is None
    qa, qb = a["qp_counters"], b["qp_counters"]
    assert qa["fec_tx_frames"] == 0 and qa["fec_tx_covered"] == 0, qa
    assert qb["rx_drop_fec_off"] == 0 and qb["fec_rebuilt"] == 0, qb
    # plain Go-Back-N repaired the drops: NAKs and go-back rounds (one round may resend a
    # later dropped PSN before it is missed, so not one NAK per drop)
    assert qb["tx_nak_seq_err"] >= 1 and qb["rx_out_of_sequence"] >= 1, qb
    assert qa["tx_retransmits"] >= len(DROPS), qa
