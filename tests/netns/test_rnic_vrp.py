"""rnic A -> lossy-emu -> rnic B with --recovery vrp (docs/vrp.md) and deterministic drops.

write_bw, 20 WRITEs of 16 packets (MTU 1024). The emulator drops exactly three request
packets (SPEC `drop-psn`): a middle packet of message 5, which B tolerates (10 % over
a 16-packet window: one loss), zero-fills and reports, never retransmitted; the first
packet of message 9, which is critical (its RETH places the message) and is NACKed and
resent; and two neighbouring middle packets of message 13 with --vrp-max-burst 1024,
so the first is tolerated and the second NACKed (consecutive bound) and resent.
Every counter of the story is exact on both rnics and on the emulator. The bytes of a
VRP transfer are checked byte by byte in tests/unit/transport/test_transport_vrp.c;
here the byte counts must reconcile: the bytes B took plus the bytes it zero-filled are
the bytes A sent. A negative control runs the same drops with gbn: all resent.
"""
import json
import os
import sys

import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("ROCEWAN_BUILD", BUILD)
from rocewan.testbed.topo import Topology  # noqa: E402

SEED = 7
PKTS = 16
MSG = PKTS * 1024
ITERS = 20
QPN_B = 0x11  # ROCE_FIRST_QPN: B's only QP, the destination of A's requests


def client_psn(seed):
    """rnic_main.c setup_objects: the client's (given a server name) first PSN of QP 0."""
    return ((seed + 1) * 2654435761) & 0xFFFFFF


def run(tmp_path, recovery, extra="", drop_at=((5, 7), (9, 0), (13, 4), (13, 5))):
    for exe in ("rnic", "lossy-emu"):
        p = os.path.join(BUILD, "app", exe, exe)
        if not os.access(p, os.X_OK):
            pytest.fail(f"{p} is not built")
    psn0 = client_psn(SEED)
    drops = [psn0 + PKTS * m + k for m, k in drop_at]
    spec = " ".join(f"drop-psn 0x{QPN_B:x}:0x{d & 0xFFFFFF:x}" for d in drops)
    js = {k: str(tmp_path / f"{recovery}-{k}.json") for k in ("emu", "A", "B")}
    with Topology("xv%d" % (os.getpid() % 10000), 1024) as topo:
        emu = topo.start_emu(spec, "", 1, js["emu"])
        rc_a, out_a, rc_b, out_b = topo.rnic_pair(
            # --rto-min 1s: the NACKs are under test, not the timer (--rto adaptive's RTT +
            # 10 ms would fire on a loaded host's stalls; "timeouts == 0" must not)
            "write_bw", f"-s {MSG} -n {ITERS} -m 1024 --seed {SEED} --rto-min 1s --recovery {recovery} "
            f"{extra}",
            js["A"], js["B"], timeout=60)
        emu_out = topo.stop(emu)
    assert rc_a == 0 and rc_b == 0, f"--- A:\n{out_a[-2000:]}\n--- B:\n{out_b[-2000:]}"
    res = []
    for k in ("emu", "A", "B"):
        with open(js[k]) as f:
            res.append(json.load(f)["results"])
    e, a, b = res
    assert e["a2b"]["drop_rule"] == len(drops), emu_out
    assert e["b2a"]["drop_rule"] == 0 and e["a2b"]["drop_loss"] == 0, emu_out
    assert a["iters"] == ITERS and a["completion_errors"] == 0 and b["completion_errors"] == 0
    assert a["recovery_used"] == recovery and b["recovery_used"] == recovery
    run.last = (a, b, out_a)
    return a["qp_counters"], b["qp_counters"], out_b


def check_requester_summary(qa, qb):
    """The requester's summary (the responder's VRP LOSS summaries, 0xE3)
    equals the responder's loss map: per-message totals and the last map,
    field by field (the ACK direction is lossless)."""
    a, b, out_a = run.last
    assert qb["vrp_summaries_sent"] == ITERS and qb["vrp_summaries_unsent"] == 0, qb
    assert qa["vrp_summaries_received"] == ITERS, qa
    assert qa["vrp_summaries_dropped"] == 0 and qa["vrp_summary_missing"] == 0, qa
    assert qa["vrp_peer_lost_pkts"] == qb["vrp_tolerated_pkts"], (qa, qb)
    assert qa["vrp_peer_lost_bytes"] == qb["vrp_zero_filled_bytes"], (qa, qb)
    assert b["vrp_last"]["len"] == MSG, b["vrp_last"]
    assert a["vrp_peer_last"] == b["vrp_last"], (a["vrp_peer_last"], b["vrp_last"])
    assert "vrp_peer_last" not in b and "vrp_last" not in a, (a, b)
    assert (f"VRP reported    : {ITERS} WRITE summaries from the responder, "
            f"{qb['vrp_tolerated_pkts']} packets lost "
            f"({qb['vrp_zero_filled_bytes']} bytes zero-filled), "
            "0 WRITEs completed without one") in out_a, out_a


def test_vrp_tolerates_and_nacks(tmp_path):
    qa, qb, out_b = run(tmp_path, "vrp", "--vrp-loss 10 --vrp-window 16 --vrp-max-burst 1024")
    # B: two losses tolerated (message 5 packet 7, message 13 packet 4), zero-filled
    assert qb["vrp_tolerated_pkts"] == 2, qb
    assert qb["vrp_zero_filled_bytes"] == 2 * 1024, qb
    assert qb["vrp_msgs"] == ITERS and qb["vrp_msgs_loss_0"] == ITERS - 2, qb
    assert qb["vrp_msgs_loss_1"] == 2, qb
    # the first packet of message 9 (critical, of no known message yet) and the second of a run
    assert qb["vrp_nacked_pkts"] == 2, qb
    assert qb["vrp_nack_unknown"] == 1 and qb["vrp_nack_consecutive"] == 1, qb
    assert qb["vrp_nack_rate"] == 0 and qb["vrp_nack_critical"] == 0, qb
    assert qb["vrp_nacks_sent"] == 2 and qa["vrp_nacks_received"] == 2, (qa, qb)
    # A resends exactly the two NACKed packets, no timer
    assert qa["tx_retransmits"] == 2, qa
    assert qa["timeouts"] == 0, qa
    # the bytes reconcile: taken + zero-filled = sent
    assert qb["rx_req_bytes"] + qb["vrp_zero_filled_bytes"] == ITERS * MSG, qb
    assert qb["rx_invalid_requests"] == 0 and qb["tx_nak_seq_err"] == 0, qb
    assert "VRP received    : 20 WRITE messages, 2 packets lost (2048 bytes zero-filled" in out_b, out_b
    check_requester_summary(qa, qb)


def test_gbn_negative_control(tmp_path):
    qa, qb, _ = run(tmp_path, "gbn")
    assert qb["vrp_tolerated_pkts"] == 0 and qb["vrp_zero_filled_bytes"] == 0, qb
    assert qb["rx_req_bytes"] == ITERS * MSG, qb
    assert qa["tx_retransmits"] >= 4, qa
    # no VRP LOSS summary outside vrp
    assert qb["vrp_summaries_sent"] == 0 and qa["vrp_summaries_received"] == 0, (qa, qb)
    assert qa["vrp_summary_missing"] == 0, qa


def test_vrp_per_wr_tolerance(tmp_path):
    """--vrp-wr "loss=0/qp" on A (docs/vrp.md, "Tolerance per work request"): even
    messages carry 0 % in their FIRST (VTETH), odd ones carry nothing, so B's
    --vrp-loss 10 / window 16 / burst 1024 applies to them. Drops: message 5 packet 7
    and message 13 packets 4-5 (odd: 5:7 and 13:4 tolerated, 13:5 NACKed, consecutive),
    message 9's FIRST (NACKed, unknown), and messages 6 packet 7 and 10 packet 3
    (even, 0 %: NACKed, rate) although B's own tolerance would have let them go."""
    drop_at = ((5, 7), (6, 7), (9, 0), (10, 3), (13, 4), (13, 5))
    qa, qb, out_b = run(tmp_path, "vrp",
                        "--vrp-loss 10 --vrp-window 16 --vrp-max-burst 1024 --vrp-wr loss=0/qp",
                        drop_at)
    assert qb["vrp_wr_tol_msgs"] == ITERS // 2, qb
    assert qb["vrp_bad_tolerance"] == 0, qb
    assert qb["vrp_tolerated_pkts"] == 2, qb
    assert qb["vrp_zero_filled_bytes"] == 2 * 1024, qb
    assert qb["vrp_msgs_loss_1"] == 2 and qb["vrp_msgs_loss_0"] == ITERS - 2, qb
    assert qb["vrp_nacked_pkts"] == 4, qb
    assert qb["vrp_nack_rate"] == 2 and qb["vrp_nack_unknown"] == 1, qb
    assert qb["vrp_nack_consecutive"] == 1 and qb["vrp_nack_critical"] == 0, qb
    assert qa["tx_retransmits"] == 4 and qa["timeouts"] == 0, qa
    assert qb["rx_req_bytes"] + qb["vrp_zero_filled_bytes"] == ITERS * MSG, qb
    assert qb["rx_invalid_requests"] == 0 and qb["tx_nak_seq_err"] == 0, qb
    check_requester_summary(qa, qb)
