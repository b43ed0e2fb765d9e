"""Loss recovery end to end: rnic A -> lossy-emu -> rnic B with the same deterministic
drops for Go-Back-N, Go-Back-ONE and IRN, in one test.

The emulator drops two chosen request packets of A (SPEC `drop-psn QPN:PSN`, each once)
in a write_bw run with one WRITE outstanding (`-t 1`): A sends one message of 4 packets
and waits for its completion, so when B sees the hole the rest of that message is all
that is in flight behind the lost packet. The repair differs by mode and is exact:

- gbn (IBTA C9-112 and o9-20 ff.: the responder NAKs the first out-of-sequence packet and
  the requester goes back to the NAK's PSN): A resends the lost packet and every packet
  after it that was in flight, the window B counted as out of sequence;
- gbone (Go-Back-ONE, Wang, NJUPT, Algorithm 1: a RACK per packet placed after a gap,
  the sender resends the PSNs the RACKs skip) and irn (Swing paper §2.1 "Lossy RDMA",
  after IRN: a SACK per out-of-order packet, per-hole recovery): A resends exactly the
  lost packets, one each, and B places the packets after each hole on arrival.

The mode is the one the two rnics negotiated in perftest's version exchange
(`recovery_used` in both reports), not the option asked for: rc_pingpong's exchange
carries no capability record, so an rc_pingpong pair always runs gbn whatever
--recovery says. B accepts every request packet exactly once and every byte
(`rx_req_bytes`); the selective modes place the packets behind a hole once, with no
byte overwritten by an older packet (`rx_ooo_guarded_bytes` 0). The payload itself is
not compared: write_bw does not check it (rc_pingpong, which does, cannot negotiate).
No timer takes part: every timeout is 10 s or more (IRN's RTO_low too), so a loaded
host's stall fires none and every resend is the answer to a drop.
"""
import json
import os
import sys
import uuid

import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("ROCEWAN_BUILD", BUILD)
from rocewan.testbed.topo import Topology  # noqa: E402

SEED = 11
MTU = 1024
PKTS = 4  # packets per SEND at MTU 1024
ITERS = 20
DROP_PKT = 1  # the second packet of a message: two packets of it follow the hole
DROP_MSGS = (5, 12)
QPN_B = 0x11  # ROCE_FIRST_QPN: B's only QP, the destination of A's requests
MODES = ("gbn", "gbone", "irn")
MODE = "write_bw"


def client_psn(seed):
    """rnic_main.c setup_objects: the client's (given a server name) first PSN of QP 0."""
    return ((seed + 1) * 2654435761) & 0xFFFFFF


def read_trace(path):
    with open(path) as f:
        lines = f.read().splitlines()
    assert lines[0].startswith("#"), lines[0]
    cols = lines[1].split(",")
    return [dict(zip(cols, ln.split(","))) for ln in lines[2:]]


def run_mode(tmp_path, mode, drops):
    d = tmp_path / mode
    d.mkdir()
    js = {k: str(d / f"{k}.json") for k in ("emu", "A", "B")}
    tr_a = str(d / "traceA.csv")
    spec = " ".join(f"drop-psn 0x{QPN_B:x}:0x{p:x}" for p in drops)
    # no timer may fire on a loaded host's stall: the first timeout (-u 22) is 17 s, the
    # adaptive one at least 10 s, IRN's RTO_low 10 s
    timers = "-u 22 --rto-min 10s --rto-max 10s" + (" --rto-low 10000000" if mode == "irn" else "")
    with Topology(f"re{uuid.uuid4().hex[:5]}", MTU) as topo:
        emu = topo.start_emu(spec, "", 1, js["emu"])
        rc_a, out_a, rc_b, out_b = topo.rnic_pair(
            MODE, f"-s {MTU * PKTS} -n {ITERS} -t 1 -m {MTU} --seed {SEED} --recovery {mode} {timers}",
            js["A"], js["B"], timeout=120, extra_a=f"--trace {tr_a}")
        emu_out = topo.stop(emu)
    assert rc_a == 0 and rc_b == 0, f"{mode}\n--- A:\n{out_a[-2000:]}\n--- B:\n{out_b[-2000:]}"
    with open(js["emu"]) as f:
        e = json.load(f)["results"]
    assert e["a2b"]["drop_rules"] == [{"rule": f"drop-psn 0x{QPN_B:x}:0x{p:x}:1", "dropped": 1}
                                      for p in drops], emu_out
    assert e["a2b"]["drop_rule"] == len(drops) and e["b2a"]["drop_rule"] == 0, emu_out
    for di in ("a2b", "b2a"):
        assert e[di]["drop_loss"] == 0 and e[di]["drop_queue"] == 0, e[di]
    with open(js["A"]) as f:
        a = json.load(f)["results"]
    with open(js["B"]) as f:
        b = json.load(f)["results"]
    for r in (a, b):
        assert r["completion_errors"] == 0, r
    assert a["iters"] == ITERS and a["qp_counters"]["send_completions"] == ITERS, a
    retx = [int(r["psn"]) for r in read_trace(tr_a) if r["event"] == "retx"]
    return a, b, retx


def test_gbn_gbone_irn_resend_counts_under_drops(tmp_path):
    for exe in ("rnic", "lossy-emu"):
        p = os.path.join(BUILD, "app", exe, exe)
        if not os.access(p, os.X_OK):
            pytest.fail(f"{p} is not built")
    psn0 = client_psn(SEED)
    drops = [(psn0 + PKTS * m + DROP_PKT) & 0xFFFFFF for m in DROP_MSGS]
    behind = PKTS - 1 - DROP_PKT  # the packets of the message after the lost one
    got = {}
    for mode in MODES:
        a, b, retx = run_mode(tmp_path, mode, drops)
        qa, qb = a["qp_counters"], b["qp_counters"]
        # the mode the two rnics run, from their reports
        assert a["recovery_used"] == mode and b["recovery_used"] == mode, (
            mode, a["recovery_used"], b["recovery_used"])
        # every request packet sent once for the first time and accepted once, in order
        assert qa["tx_req_packets"] == qb["rx_req_packets"] == PKTS * ITERS, (mode, qa, qb)
        assert qb["rx_req_bytes"] == MTU * PKTS * ITERS, (mode, qb)
        assert qa["timeouts"] == 0 and qa["retry_exceeded"] == 0, (mode, qa)
        # B's echoes lose nothing
        assert qb["tx_retransmits"] == 0, (mode, qb)
        got[mode] = (qa["tx_retransmits"], qb["rx_out_of_sequence"], qa, qb, retx)
        print(f"{mode}: {len(drops)} drops, A resent {qa['tx_retransmits']} packets "
              f"(PSNs {[hex(p) for p in retx]}), B counted {qb['rx_out_of_sequence']} out of "
              f"sequence, {qb['rx_dup_requests']} duplicates")

    # gbn: one NAK per hole, one go-back round each, resending the hole and the window
    # behind it that B counted out of sequence (and discarded)
    n, ooo, qa, qb, retx = got["gbn"]
    assert qb["tx_nak_seq_err"] == len(drops) and qa["rx_nak_seq_err"] == len(drops), (qa, qb)
    assert qa["retries"] == len(drops), qa
    assert ooo == len(drops) * behind, qb
    assert n == len(drops) + ooo == len(drops) * (1 + behind), qa
    assert retx == [(p + i) & 0xFFFFFF for p in drops for i in range(1 + behind)], retx
    assert qb.get("rx_ooo_placed", 0) == 0, qb  # Go-Back-N places nothing out of order
    # gbone and irn: the drops, and only they, are resent, once each; B took the packets
    # behind each hole on arrival, so nothing it received arrives twice
    for mode in ("gbone", "irn"):
        n, ooo, qa, qb, retx = got[mode]
        assert n == len(drops), (mode, qa)
        assert retx == drops, (mode, retx)
        assert qb["rx_dup_requests"] == 0 and qb["tx_nak_seq_err"] == 0, (mode, qb)
        assert qa["retries"] == 0, (mode, qa)
        assert qb["holes"] == len(drops) and qb["rx_ooo_placed"] == len(drops) * behind, (mode, qb)
        assert qb.get("rx_ooo_guarded_bytes", 0) == 0, (mode, qb)
        # one notice per packet placed after a hole, each received: RACKs (gbone), SACKs (irn)
        notice = "racks" if mode == "gbone" else "sacks"
        assert qb[f"tx_{notice}"] == qa[f"rx_{notice}"] == len(drops) * behind, (mode, qa, qb)
    # the same drops cost Go-Back-N its window, the selective modes one packet per drop
    assert got["gbn"][0] == (1 + behind) * got["gbone"][0] == (1 + behind) * got["irn"][0]
