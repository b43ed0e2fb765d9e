"""Loss recovery through unmodified perftest: rnic-exec A -> lossy-emu -> rnic-exec B (the
testbed topology), every 50th request packet dropped (SPEC drop-nth 50), ib_write_bw on
rnic0 at both ends with the same --recovery (no capability exchange: docs/verbs.md). The
requested mode's own signals show it ran: Go-Back-N sequence NAKs, Go-Back-ONE
RACKs, IRN SACKs; every request packet was first sent once and every drop repaired. Under
VRP (ib_write_bw does not check its data) the receiver tolerates up to --vrp-loss and
zero-fills instead of having the packet resent."""
import json
import os
import sys
import uuid
from types import SimpleNamespace

import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verbs"))
os.environ.setdefault("ROCEWAN_BUILD", BUILD)
from harness import RNIC_EXEC, check_ok, pkts, run_pair  # noqa: E402
from rocewan.testbed.topo import Topology  # noqa: E402

SIZE, ITERS, MTU, NTH = 65536, 20, 1024, 50


@pytest.mark.parametrize("mode,nak_key", [("gbn", "tx_nak_seq_err"), ("gbone", "tx_racks"),
                                          ("irn", "tx_sacks"), ("vrp", "vrp_tolerated_pkts")])
def test_write_bw_recovery_through_emu(tmp_path, mode, nak_key):
    for p in (RNIC_EXEC, os.path.join(BUILD, "app", "lossy-emu", "lossy-emu")):
        if not os.access(p, os.X_OK):
            pytest.fail(f"{p} is not built")
    tool = "/usr/bin/ib_write_bw"
    cmd = [tool, "-d", "rnic0", "-x", "0", "-m", str(MTU), "-s", str(SIZE), "-n", str(ITERS)]
    with Topology(f"vb{uuid.uuid4().hex[:4]}", MTU) as topo:
        emu = topo.start_emu(f"drop-nth {NTH}", "", 1, str(tmp_path / "emu.json"))
        # side 0 = A (client, requester), side 1 = B (server), as run_pair expects
        vp = SimpleNamespace(ns=[topo.ns["A"], topo.ns["B"]], ifs=[topo.ifs["A"], topo.ifs["B"]],
                             rip=[topo.rip["A"], topo.rip["B"]], kip=[topo.kip["A"], topo.kip["B"]])
        opts = ["--recovery", mode] + (["--vrp-loss", "5"] if mode == "vrp" else [])
        r = run_pair(vp, tmp_path, cmd, cmd, dev_opts=opts, timeout=120)
        topo.stop(emu)
    check_ok(r, [tool, tool])
    drops = json.load(open(tmp_path / "emu.json"))["results"]["a2b"]["drop_rule"]
    cli, srv = r.dev(1), r.dev(0)
    n = ITERS * pkts(SIZE, MTU)
    assert drops >= n // NTH, drops
    for side in (0, 1):
        assert r.docs[side]["results"]["recovery_used"] == mode
    assert cli["tx_req_packets"] == n, cli  # first transmissions: each packet once
    # every dropped packet was resent, or (vrp) tolerated and zero-filled at the receiver
    assert cli["tx_retransmits"] + srv["vrp_tolerated_pkts"] >= drops, (cli, srv, drops)
    assert (srv["vrp_tolerated_pkts"] > 0) == (mode == "vrp"), srv
    assert srv[nak_key] >= 1, (mode, srv)  # the mode's own loss signal went out
    assert cli["send_completions"] >= ITERS and cli["retry_exceeded"] == 0, cli
    if mode != "gbn":  # selective modes send no Go-Back-N sequence NAK
        assert srv["tx_nak_seq_err"] == 0, srv
    for side in (0, 1):  # the same mode both sides: no mismatch named
        assert r.docs[side]["results"]["recovery_mismatch"] is None, r.docs[side]["results"]


@pytest.mark.parametrize("client,server,named", [("irn", "gbn", "gbn"), ("gbn", "irn", "irn"),
                                                 ("gbone", "irn", "irn")])
def test_recovery_mismatch_is_named(tmp_path, client, server, named):
    """Without a capability exchange, two sides given different --recovery still finish
    (every mode repairs by timeout at worst), and the requester names the peer's mode
    from its receiver's answers to the drops (docs/verbs.md)."""
    tool = "/usr/bin/ib_write_bw"
    cmd = [tool, "-d", "rnic0", "-x", "0", "-m", str(MTU), "-s", str(SIZE), "-n", str(ITERS)]
    with Topology(f"vb{uuid.uuid4().hex[:4]}", MTU) as topo:
        emu = topo.start_emu(f"drop-nth {NTH}", "", 1, str(tmp_path / "emu.json"))
        vp = SimpleNamespace(ns=[topo.ns["A"], topo.ns["B"]], ifs=[topo.ifs["A"], topo.ifs["B"]],
                             rip=[topo.rip["A"], topo.rip["B"]], kip=[topo.kip["A"], topo.kip["B"]])
        r = run_pair(vp, tmp_path, cmd, cmd, timeout=120,
                     side_opts=(["--recovery", server], ["--recovery", client]))
        topo.stop(emu)
    check_ok(r, [tool, tool])
    why = r.docs[1]["results"]["recovery_mismatch"]
    assert why and f"--recovery {client} here" in why and f"answers as {named}" in why, why
    assert f"rnic0: --recovery {client} here" in r.out[1], r.out[1]
    assert r.dev(1)["tx_req_packets"] == ITERS * pkts(SIZE, MTU)
