"""rnic A -> lossy-emu -> rnic B (the testbed topology) with one deterministic drop.

The emulator drops exactly one chosen request packet (SPEC `drop-psn QPN:PSN`) of an
rc_pingpong run, a lock-step exchange, so every counter of the Go-Back-N repair is
exact: one drop at the emulator, one NAK (sequence error) from B, one go-back round
at A resending the lost PSN and the two after it, two out-of-sequence packets at B.
rc_pingpong's client compares every echo with what it sent, byte by byte (exit 1 on
any difference). The lossy-emu --drop-log and both rnics' --trace must tell the same
story on one clock (CLOCK_MONOTONIC): drop, then the retransmission, then the arrival.
"""
import json
import os
import re
import sys
import time

import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("ROCEWAN_BUILD", BUILD)
from rocewan import trace as loss_trace  # noqa: E402
from rocewan.testbed.topo import Topology  # noqa: E402

SEED = 7
MSG = 4096  # 4 packets per SEND at MTU 1024
ITERS = 20
DROP_MSG, DROP_PKT = 5, 1  # the second packet of the sixth message


def client_psn(seed):
    """rnic_main.c setup_objects: the client's (given a server name) first PSN of QP 0."""
    return ((seed + 1) * 2654435761) & 0xFFFFFF


def read_csv(path):
    with open(path) as f:
        lines = f.read().splitlines()
    assert lines[0].startswith("#") and "CLOCK_MONOTONIC ns" in lines[0], lines[0]
    cols = lines[1].split(",")
    return [dict(zip(cols, ln.split(","))) for ln in lines[2:]]


def test_drop_one_psn_gbn(tmp_path):
    for exe in ("rnic", "lossy-emu"):
        p = os.path.join(BUILD, "app", exe, exe)
        if not os.access(p, os.X_OK):
            pytest.fail(f"{p} is not built")
    psn0 = client_psn(SEED)
    drop = (psn0 + 4 * DROP_MSG + DROP_PKT) & 0xFFFFFF
    qpn_b = 0x11  # ROCE_FIRST_QPN: B's only QP, the destination of A's requests
    js = {k: str(tmp_path / f"{k}.json") for k in ("emu", "A", "B")}
    log, tr_a, tr_b = (str(tmp_path / n) for n in ("drops.csv", "traceA.csv", "traceB.csv"))
    t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    with Topology("xd", 1024) as topo:
        emu = topo.start_emu(f"drop-psn 0x{qpn_b:x}:0x{drop:x}", "", 1, js["emu"],
                             extra=f"--drop-log {log}")
        # the NAK round is under test, not the timer: with --rto adaptive (RTT + 10 ms by
        # default) a loaded host's stall of B or the emulator could fire it; --rto-min 1s
        # keeps "timeouts == 0" below a fact of the protocol whichever --rto is the
        # default (with --rto fixed it is the 67 ms -u 14 timer, as before)
        rc_a, out_a, rc_b, out_b = topo.rnic_pair(
            "rc_pingpong", f"-s {MSG} -n {ITERS} -m 1024 --seed {SEED} --rto-min 1s", js["A"], js["B"],
            timeout=60, extra_a=f"--trace {tr_a}", extra_b=f"--trace {tr_b}")
        emu_out = topo.stop(emu)
    t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    assert rc_a == 0 and rc_b == 0, f"--- A:\n{out_a[-2000:]}\n--- B:\n{out_b[-2000:]}"
    # the test's PSN and QPN arithmetic matches what the rnics printed
    m = re.search(r"local address: .*QPN 0x([0-9a-f]+), PSN 0x([0-9a-f]+)", out_a)
    assert m and int(m.group(2), 16) == psn0, out_a
    m = re.search(r"remote address: .*QPN 0x([0-9a-f]+)", out_a)
    assert m and int(m.group(1), 16) == qpn_b, out_a
    qpn_a = int(re.search(r"local address: .*QPN 0x([0-9a-f]+)", out_a).group(1), 16)
    assert f"{ITERS} iters in" in out_a, out_a  # every echo arrived and matched byte by byte

    with open(js["emu"]) as f:
        e = json.load(f)["results"]
    assert e["a2b"]["drop_rule"] == 1, emu_out
    assert e["a2b"]["drop_rules"] == [{"rule": f"drop-psn 0x{qpn_b:x}:0x{drop:x}:1", "dropped": 1}]
    for d in ("a2b", "b2a"):
        assert e[d]["drop_loss"] == 0 and e[d]["drop_queue"] == 0, e[d]
    assert e["b2a"]["drop_rule"] == 0
    with open(js["A"]) as f:
        a = json.load(f)["results"]
    with open(js["B"]) as f:
        b = json.load(f)["results"]
    qa, qb = a["qp_counters"], b["qp_counters"]
    assert a["iters"] == ITERS and a["completion_errors"] == 0 and b["completion_errors"] == 0
    assert a["recovery_used"] == "gbn" and b["recovery_used"] == "gbn"
    # B: PSN drop+1 and drop+2 arrived after the hole: one NAK, two out of sequence
    assert qb["tx_nak_seq_err"] == 1, qb
    assert qb["rx_out_of_sequence"] == 3 - DROP_PKT, qb
    assert qb["rx_dup_requests"] == 0, qb
    # A: one go-back round resending the lost PSN and the two after it, no timer
    assert qa["rx_nak_seq_err"] == 1, qa
    assert qa["retries"] == 1, qa
    assert qa["tx_retransmits"] == 4 - DROP_PKT, qa
    assert qa["timeouts"] == 0, qa
    # B's echoes are never lost
    assert qb["tx_retransmits"] == 0 and qa["tx_nak_seq_err"] == 0

    # the loss -> repair story on one clock
    drops = read_csv(log)
    assert len(drops) == 1, drops
    d = drops[0]
    assert (d["dir"], d["cause"], int(d["qpn"]), int(d["psn"])) == ("a2b", "drop-psn", qpn_b, drop)
    assert int(d["opcode"]) == 0x01  # RC SEND middle
    ta, tb = read_csv(tr_a), read_csv(tr_b)
    retx = [r for r in ta if r["event"] == "retx"]
    assert [int(r["psn"]) for r in retx] == [(drop + i) & 0xFFFFFF for i in range(4 - DROP_PKT)], ta
    assert all(int(r["qpn"]) == qpn_a and int(r["dqpn"]) == qpn_b for r in retx), ta
    late = [r for r in tb if r["event"] == "rx_late"]
    # every PSN before the highest one that had arrived: the lost one and the discarded one
    assert [int(r["psn"]) for r in late] == [(drop + i) & 0xFFFFFF for i in range(3 - DROP_PKT)], tb
    assert all(int(r["qpn"]) == qpn_b and int(r["dqpn"]) == qpn_a for r in late), tb
    assert not [r for r in ta if r["event"] != "retx"] and not [r for r in tb if r["event"] != "rx_late"]
    t_drop, t_retx, t_arr = int(d["time_ns"]), int(retx[0]["time_ns"]), int(late[0]["time_ns"])
    # one clock (CLOCK_MONOTONIC) in all three files: within our own reads around the run
    assert t0 < t_drop < t_retx < t_arr < t1, (t0, t_drop, t_retx, t_arr, t1)
    # and the join (python/rocewan/trace.py, `testbed trace`) finds that one repair
    rows = loss_trace.join(loss_trace.read_drop_log(log),
                           [loss_trace.read_trace(tr_a), loss_trace.read_trace(tr_b)])
    assert len(rows) == 1 and rows[0]["repaired"], rows
    assert rows[0]["latency_ms"] == (t_arr - t_drop) / 1e6


def test_lost_last_ack_is_answered_after_the_run(tmp_path):
    """rc_pingpong has no closing handshake. The emulator drops B's ACK of A's last
    message (b2a `drop-psn`, the last PSN, once): B has every message and may leave, A's
    timer resends the message and the run ends only if B still answers. The rnic lingers
    after rc_pingpong (rnic_bench_linger, TCP's TIME-WAIT for a lost last ACK) and
    re-acknowledges the duplicate, so both sides exit 0. Before the linger this was the
    race fresh-clone run 42 lost (retry_cnt exhausted at the last message, every byte
    delivered)."""
    psn0 = client_psn(SEED)
    last = (psn0 + 4 * ITERS - 1) & 0xFFFFFF  # the last packet of A's last SEND
    qpn_a = 0x11  # ROCE_FIRST_QPN: A's only QP, the destination of B's ACKs
    # B's own requests (echoes) to A never carry that PSN: its PSN space starts elsewhere
    psn_b = ((SEED + 2) * 2654435761) & 0xFFFFFF
    assert (last - psn_b) & 0xFFFFFF >= 4 * ITERS
    js = {k: str(tmp_path / f"{k}.json") for k in ("emu", "A", "B")}
    log = str(tmp_path / "drops.csv")
    with Topology("xl", 1024) as topo:
        emu = topo.start_emu("", f"drop-psn 0x{qpn_a:x}:0x{last:x}", 1, js["emu"],
                             extra=f"--drop-log {log}")
        rc_a, out_a, rc_b, out_b = topo.rnic_pair(
            "rc_pingpong", f"-s {MSG} -n {ITERS} -m 1024 --seed {SEED}", js["A"], js["B"],
            timeout=60)
        emu_out = topo.stop(emu)
    assert rc_a == 0 and rc_b == 0, f"--- A:\n{out_a[-2500:]}\n--- B:\n{out_b[-2500:]}"
    assert f"{ITERS} iters in" in out_a and f"{ITERS} iters in" in out_b, out_a
    with open(js["emu"]) as f:
        e = json.load(f)["results"]
    assert e["b2a"]["drop_rules"] == [{"rule": f"drop-psn 0x{qpn_a:x}:0x{last:x}:1", "dropped": 1}], emu_out
    assert e["a2b"]["drop_rule"] == 0, emu_out
    drops = read_csv(log)
    assert len(drops) == 1 and int(drops[0]["opcode"]) == 0x11, drops  # RC Acknowledge
    with open(js["A"]) as f:
        a = json.load(f)["results"]
    with open(js["B"]) as f:
        b = json.load(f)["results"]
    qa, qb = a["qp_counters"], b["qp_counters"]
    assert a["completion_errors"] == 0 and b["completion_errors"] == 0, (a, b)
    # only A's timer can find the loss (B saw nothing missing: no NAK), it resent the
    # last message, and B placed it once and acknowledged the copy as a duplicate
    assert qa.get("timeouts", 0) >= 1 and qa.get("tx_retransmits", 0) >= 1, qa
    assert qa.get("rx_nak_seq_err", 0) == 0 and qa.get("retry_exceeded", 0) == 0, qa
    assert qb.get("rx_dup_requests", 0) >= 1, qb
    assert qb["rx_req_packets"] == qa["tx_req_packets"] == 4 * ITERS, (qa, qb)
