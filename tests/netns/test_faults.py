# SPDX-License-Identifier: BSD-3-Clause
"""Faults: what the rnic does when its peer disappears, when it
is told to stop, and when its link goes down and up in the middle of a transfer.

Each outcome is an exit or an exact count, never a time: every wait ends on an event
(traffic seen on the telemetry counters, a process exit) and its limit is reached only
by a program that hangs.

- A peer killed mid-transfer (SIGKILL of the write_bw server): the client's QP runs out
  of retries (retry_cnt 7: the go-back rounds, then IBV_WC_RETRY_EXC_ERR), the client
  prints one error line, exits 1, and its --json is complete.
- SIGTERM during a -D run: the client stops, writes a complete --json (the messages it
  completed, all counted), names the exchange it did not finish in one line and exits 1.
- A link flap (the veth set down, then up, while write_bw runs): the outage lasts until
  the kernel has dropped a frame the client sent into its carrier-less veth (its TX
  `dropped` counter, 0 before), then the link comes back and the transfer completes,
  each request packet accepted once in order at the responder, byte for byte. A dropped
  frame costs the rnic a resend: by its engine after a loss signal (measured: 4 frames
  dropped, 4 resent after one timeout), or by its port when the af_packet PMD reported
  the send as failed (`tx_errors`; measured with -t 128: 1561 drops, 459 refusals, no
  engine resend). Every engine resend is explained (a go-back round per loss signal, at
  most the window each, no duplicate at B without a resend). With --rto fixed -u 20
  each timeout is 4.3 s, so 7 of them outlast any flap this test makes.
- The emulator stopped mid-transfer and started again (rnic A -> lossy-emu -> rnic B):
  A sends while no emulator runs, so the outage loses a request by construction; the
  test finds the resends it cost, explained by A's loss signals, and the transfer
  completes byte for byte. The window (-t 8 WRITEs of 64 packets) stays below every
  af_packet ring on the way, so nothing else loses a frame.
"""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import RNIC, eal, sh
from rocewan.testbed.topo import eal_lcores
from rocewan.testbed.telemetry import Telemetry


def popen(cmd):
    return subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def start_pair(vp, tmp_path, opts, tag, client_opts="", mode="write_bw", server_opts=""):
    """@mode (write_bw) server in ns[1] (waits for "Waiting for client"), then the client in
    ns[0]; returns (server, client, client prefix, [server json, client json])."""
    if not os.path.exists(RNIC):
        pytest.fail(f"{RNIC} is not built")
    js = [tmp_path / f"server-{tag}.json", tmp_path / f"client-{tag}.json"]
    sp, cp = f"fs{tag}{vp.ns[1][-4:]}", f"fc{tag}{vp.ns[0][-4:]}"
    srv = subprocess.Popen(
        f"ip netns exec {vp.ns[1]} {RNIC} {eal(vp.ifs[1], sp)} -- --ip {vp.rip[1]}/24 "
        f"{opts} {server_opts} --json {js[0]} {mode}", shell=True, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    seen = ""
    t0 = time.monotonic()
    while "Waiting for client" not in seen and time.monotonic() - t0 < 30:
        line = srv.stdout.readline()
        if not line:
            break
        seen += line
    assert "Waiting for client" in seen, seen
    cli = popen(f"ip netns exec {vp.ns[0]} {RNIC} {eal(vp.ifs[0], cp)} -- --ip {vp.rip[0]}/24 "
                f"{opts} {client_opts} --json {js[1]} {mode} {vp.kip[1]}")
    return srv, cli, cp, js


def wait_traffic(cli, prefix, min_acks=1, limit=60):
    """Telemetry of the client until its QP has received @min_acks ACKs (an event)."""
    tel = Telemetry(f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2", 30, lambda: cli.poll() is None)
    try:
        deadline = time.time() + limit
        while True:
            if "/rnic/qp/list" in tel.get("/"):
                q = tel.get("/rnic/qp/list")
                if q and tel.get(f"/rnic/qp/stats,{q[0]}")["rx_acks"] >= min_acks:
                    return
            assert time.time() < deadline and cli.poll() is None, "no traffic"
            time.sleep(0.05)
    finally:
        tel.close()


def said(*outs):
    """The lines the rnic wrote about the run (not the counter table)."""
    return "\n".join(ln for o in outs for ln in o.splitlines()
                     if ln.startswith("rnic") or "error" in ln.lower() or "IBV_WC" in ln)


def link_stats(ns, ifname):
    """The kernel's TX counters of a veth end (ip -s -j link)."""
    out = sh(f"ip -n {ns} -s -j link show dev {ifname}").stdout
    return json.loads(out)[0]["stats64"]["tx"]


def rnic_pids(popen_obj):
    """The rnic process under `ip netns exec` (the shell's descendants)."""
    out = sh(f"pgrep -P {popen_obj.pid}", check=False).stdout.split()
    pids = []
    while out:
        p = out.pop()
        pids.append(int(p))
        out += sh(f"pgrep -P {p}", check=False).stdout.split()
    return [p for p in pids if os.path.basename(os.readlink(f"/proc/{p}/exe")) == "rnic"]


def test_peer_killed_mid_transfer(veth_pair, tmp_path):
    vp = veth_pair
    srv, cli, cp, js = start_pair(vp, tmp_path, "-s 65536 -n 1000000", "k")
    try:
        wait_traffic(cli, cp, min_acks=10)
        for p in rnic_pids(srv):
            os.kill(p, signal.SIGKILL)
        srv.wait(30)
        cout, cerr = cli.communicate(timeout=300)  # an exit, not a time: only a hang reaches it
    finally:
        for p in (srv, cli):
            if p.poll() is None:
                p.kill()
    print(said(cout, cerr))
    assert cli.returncode == 1, (cli.returncode, said(cout, cerr))
    out = (cout + cerr).splitlines()
    errs = [ln for ln in out if "send queue error" in ln]
    assert len(errs) == 1 and "IBV_WC_RETRY_EXC_ERR" in errs[0], said(cout, cerr)
    assert len([ln for ln in out if "the traffic run for size 65536 failed" in ln]) == 1, out
    res = json.load(open(js[1]))["results"]
    q = res["qp_counters"]
    assert res["completion_errors"] >= 1, res
    # retry_cnt 7: after the last progress, 7 loss signals each start a go-back round and
    # the 8th ends the QP. Most are timeouts, but a NAK that was on its way when the peer
    # died spends a retry too (IBTA, as rxe): 7 timeouts + 1 NAK ended a loaded run
    # (earlier timeouts and NAK rounds, before the kill, may add to these)
    signals = q["timeouts"] + q["rx_nak_seq_err"] + q["implied_naks"]
    assert q["retry_exceeded"] == 1 and signals >= 8 and q["retries"] >= 7, q
    print(f"peer killed: client sent {q['tx_req_packets']} request packets, {q['timeouts']} "
          f"timeouts, {q['retries']} go-back rounds, then: {errs[0]}")


def test_sigterm_writes_complete_json(veth_pair, tmp_path):
    vp = veth_pair
    srv, cli, cp, js = start_pair(vp, tmp_path, "-s 65536 -D 60", "t")
    try:
        wait_traffic(cli, cp, min_acks=10)
        for p in rnic_pids(cli):
            os.kill(p, signal.SIGTERM)
        cout, cerr = cli.communicate(timeout=300)
        sout, _ = srv.communicate(timeout=300)
    finally:
        for p in (srv, cli):
            if p.poll() is None:
                p.kill()
    print(said(cout, cerr))
    print(f"server rc {srv.returncode}:\n{said(sout)}")
    # the run was cut short: exit 1, with one line naming the exchange that did not finish
    assert cli.returncode == 1, (cli.returncode, said(cout, cerr))
    stop = [ln for ln in (cout + cerr).splitlines() if ln.startswith("rnic: perftest exchange with")]
    assert len(stop) == 1, said(cout, cerr)
    doc = json.load(open(js[1]))  # parses: complete
    assert doc["schema"] == "rocewan/1" and doc["app"] == "rnic"
    res = doc["results"]
    q = res["qp_counters"]
    assert res["completion_errors"] == 0 and res["iters"] > 0, res
    # the loop stopped at the signal; completions of WRs already posted may follow it
    assert q["send_completions"] >= res["iters"], (q, res["iters"])
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    print(f"SIGTERM: {res['iters']} messages completed and reported; {stop[0]}; "
          f"server rc {srv.returncode}")


def test_link_flap_mid_transfer(veth_pair, tmp_path):
    vp = veth_pair
    n, size = 3000, 65536
    depth = 8  # 512 request frames in flight, below the 1024-frame rings: only the flap drops
    srv, cli, cp, js = start_pair(vp, tmp_path, f"-s {size} -n {n} -t {depth} -u 20 --rto fixed", "f")
    try:
        wait_traffic(cli, cp, min_acks=10)
        before = link_stats(vp.ns[0], vp.ifs[0])
        sh(f"ip -n {vp.ns[1]} link set {vp.ifs[1]} down")
        running_at_flap = cli.poll() is None
        # the outage lasts until the client's side of the veth has dropped a frame the
        # client sent into it (an event, not a time; the limit is a hang guard)
        deadline = time.time() + 120
        while link_stats(vp.ns[0], vp.ifs[0])["dropped"] == before["dropped"]:
            assert time.time() < deadline and cli.poll() is None, (before, link_stats(vp.ns[0], vp.ifs[0]))
            time.sleep(0.02)
        dropped = link_stats(vp.ns[0], vp.ifs[0])["dropped"] - before["dropped"]
        sh(f"ip -n {vp.ns[1]} link set {vp.ifs[1]} up")
        cout, cerr = cli.communicate(timeout=300)
        sout, _ = srv.communicate(timeout=300)
    finally:
        sh(f"ip -n {vp.ns[1]} link set {vp.ifs[1]} up", check=False)
        for p in (srv, cli):
            if p.poll() is None:
                p.kill()
    assert running_at_flap
    assert cli.returncode == 0 and srv.returncode == 0, (cerr[-2000:], sout[-2000:])
    c = json.load(open(js[1]))["results"]
    s = json.load(open(js[0]))["results"]
    ppm = -(-size // json.load(open(js[1]))["config"]["mtu_bytes"])
    assert c["iters"] == n and c["completion_errors"] == 0, c
    assert c["qp_counters"]["tx_req_packets"] == n * ppm, c["qp_counters"]
    assert s["qp_counters"]["rx_req_packets"] == n * ppm, s["qp_counters"]
    assert s["qp_counters"]["rx_req_bytes"] == n * size, s["qp_counters"]
    q = c["qp_counters"]
    print(f"link flap: the kernel dropped {dropped} frames during the outage; the rnic "
          f"retransmitted {q['tx_retransmits']}, {q['timeouts']} timeouts, {q['retries']} "
          f"go-back rounds, {q['rx_nak_seq_err']} NAKs, {q['tx_errors']} frames refused by the port")
    # the fault happened while the transfer ran: the kernel dropped frames of the client
    assert before["dropped"] == 0 and dropped >= 1, (before, dropped)
    # it cost a resend (the client sends requests only: a dropped one is resent)
    assert q["tx_retransmits"] + q["tx_errors"] >= 1, q
    # and it healed: every resend explained by a loss signal, at most the window a round
    assert q["retries"] <= q["timeouts"] + q["rx_nak_seq_err"] + q["implied_naks"], q
    assert q["tx_retransmits"] <= q["retries"] * depth * ppm, q
    assert s["qp_counters"]["rx_dup_requests"] <= q["tx_retransmits"], (q, s["qp_counters"])


def test_emulator_restarted_mid_flow(tmp_path):
    """rnic A -> lossy-emu -> rnic B (the testbed topology): the emulator is stopped while
    write_bw runs and started again. The transfer completes (-u 20: 4.3 s per timeout,
    retry_cnt 7), each request packet accepted once in order at B, byte for byte, and
    each emulator run reconciles: every frame it received it sent (an empty SPEC)."""
    import sys
    import threading
    from conftest import ROOT
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from rocewan.testbed.topo import Topology
    n, size, depth = 2000, 65536, 8
    js = {k: str(tmp_path / f"{k}.json") for k in ("emu1", "emu2", "A", "B")}
    res = {}
    with Topology("xr%d" % (os.getpid() % 10000), 1024) as topo:
        emu = topo.start_emu("", "", 1, js["emu1"])

        def pair():
            res["pair"] = topo.rnic_pair("write_bw", f"-s {size} -n {n} -t {depth} -m 1024 -u 20 --rto fixed",
                                         js["A"], js["B"], timeout=300)
        t = threading.Thread(target=pair)
        t.start()
        try:
            deadline = time.time() + 60
            while not os.path.exists(f"/var/run/dpdk/{topo.prefix}A/dpdk_telemetry.v2"):
                assert time.time() < deadline and t.is_alive(), "rnic A never started"
                time.sleep(0.05)
            tel = Telemetry(f"/var/run/dpdk/{topo.prefix}A/dpdk_telemetry.v2", 30, t.is_alive)
            try:
                while True:
                    if "/rnic/qp/list" in tel.get("/"):
                        q = tel.get("/rnic/qp/list")
                        if q and tel.get(f"/rnic/qp/stats,{q[0]}")["rx_acks"] >= 10:
                            break
                    assert time.time() < deadline and t.is_alive(), "no traffic"
                    time.sleep(0.05)
                out1 = topo.stop(emu)
                # the emulator is gone: wait until A has sent a request packet since (new
                # or resent), which no one forwards, so the outage costs A a loss by
                # construction (an event; the limit is a hang guard)
                sent = tel.get(f"/rnic/qp/stats,{q[0]}")
                gone = sent["tx_req_packets"] + sent["tx_retransmits"]
                deadline = time.time() + 120
                while True:
                    now = tel.get(f"/rnic/qp/stats,{q[0]}")
                    if now["tx_req_packets"] + now["tx_retransmits"] > gone:
                        break
                    assert time.time() < deadline and t.is_alive(), ("A sent nothing", now)
                    time.sleep(0.02)
            finally:
                tel.close()
            running_at_restart = t.is_alive()
            emu = topo.start_emu("", "", 1, js["emu2"])
        finally:
            t.join(360)
        out2 = topo.stop(emu)
    rc_a, out_a, rc_b, out_b = res["pair"]
    assert running_at_restart
    assert rc_a == 0 and rc_b == 0, (said(out_a), said(out_b))
    a = json.load(open(js["A"]))
    b = json.load(open(js["B"]))["results"]
    ppm = -(-size // a["config"]["mtu_bytes"])
    a = a["results"]
    assert a["iters"] == n and a["completion_errors"] == 0, a
    assert a["qp_counters"]["tx_req_packets"] == n * ppm, a["qp_counters"]
    assert b["qp_counters"]["rx_req_packets"] == n * ppm, b["qp_counters"]
    assert b["qp_counters"]["rx_req_bytes"] == n * size, b["qp_counters"]
    for k, out in (("emu1", out1), ("emu2", out2)):
        e = json.load(open(js[k]))["results"]
        for d in ("a2b", "b2a"):
            drops = sum(e[d][c] for c in ("drop_loss", "drop_queue", "drop_nombuf", "drop_ctrl",
                                          "drop_multiseg", "drop_cut", "drop_rule"))
            assert e[d]["rx_pkts"] == e[d]["tx_pkts"] + e[d]["in_flight"] + drops, (k, d, e[d])
            assert drops == 0, (k, d, e[d])
    q, qb = a["qp_counters"], b["qp_counters"]
    # the outage cost A resends, each started by a loss signal it counted (a timeout or a
    # NAK; a go-back round per signal), and B took every copy it had already once
    assert q["tx_retransmits"] >= 1, q
    assert 1 <= q["retries"] <= q["timeouts"] + q["rx_nak_seq_err"] + q["implied_naks"], q
    assert q["tx_retransmits"] <= q["retries"] * depth * ppm, q  # at most the window a round
    assert qb["rx_dup_requests"] <= q["tx_retransmits"], (q, qb)
    print(f"emulator restarted: A resent {q['tx_retransmits']} packets in {q['retries']} go-back "
          f"rounds after {q['timeouts']} timeouts")


def test_rnr_no_receive_posted(veth_pair, tmp_path):
    """RNR: the send_bw server keeps one receive posted (-r 1) while the client keeps up to
    128 SENDs in flight, so SENDs arrive with no receive WQE. The responder answers such a
    SEND with an RNR NAK (IBTA ch. 9.7; counted rx_rnr and tx_nak_rnr), the requester waits
    min_rnr_timer and resends from that PSN (rnr_retry 7: for ever, counted rnr_retries), and
    the transfer completes: every message received once, in order, every byte counted (send_bw
    does not check content). The counts
    reconcile across the two boxes: every RNR NAK the server sent the client received (a veth
    loses nothing; imissed 0 on both). No time is asserted: the waits end on exits."""
    vp = veth_pair
    n, size = 2000, 1024
    srv, cli, cp, js = start_pair(vp, tmp_path, f"-s {size} -n {n} -u 20", "r", mode="send_bw",
                                  server_opts="-r 1")
    try:
        cout, cerr = cli.communicate(timeout=300)  # an exit: only a hang reaches the limit
        sout, _ = srv.communicate(timeout=300)
    finally:
        for p in (srv, cli):
            if p.poll() is None:
                p.kill()
    assert cli.returncode == 0 and srv.returncode == 0, (said(cout, cerr), said(sout))
    c = json.load(open(js[1]))["results"]
    s = json.load(open(js[0]))["results"]
    qc, qs = c["qp_counters"], s["qp_counters"]
    print(f"RNR: server sent {qs['tx_nak_rnr']} RNR NAKs ({qs['rx_rnr']} SENDs without a "
          f"receive), client {qc['rx_nak_rnr']} received, {qc['rnr_retries']} RNR retries, "
          f"{qc['tx_retransmits']} packets resent")
    assert c["iters"] == n and c["completion_errors"] == 0 and s["completion_errors"] == 0, (c, s)
    assert c["pmd_counters"]["imissed"] == 0 and s["pmd_counters"]["imissed"] == 0
    # every message once, in order, every byte (1 packet each at MTU 1024)
    assert qc["tx_req_packets"] == n and qs["rx_req_packets"] == n, (qc, qs)
    assert qs["rx_req_bytes"] == n * size and qs["recv_completions"] == n, qs
    # the fault happened and is named: SENDs found no receive, each answered by an RNR NAK
    # (a single receive for 128 SENDs in flight: the second SEND of any RX burst finds none)
    assert qs["rx_rnr"] >= 1 and qs["tx_nak_rnr"] == qs["rx_rnr"], qs
    # the two boxes reconcile: every RNR NAK arrived and started one RNR wait; no other loss
    assert qc["rx_nak_rnr"] == qs["tx_nak_rnr"] == qc["rnr_retries"], (qc, qs)
    assert qc["rnr_retry_exceeded"] == 0 and qc["retry_exceeded"] == 0, qc


def test_lossy_emu_mempool_exhausted(tmp_path):
    """Mempool exhaustion at the emulator: --mbufs 128 and `delay 1s` toward B, then 1024
    frames sent at once. The delay line holds every mbuf after the first 128 frames, so the
    input port cannot receive (rx_pool_empty counts the polls that found the pool empty);
    the frames wait in the kernel's af_packet ring (4096 frames) and come in as the delay
    line releases mbufs, 128 a second. The emulator survives and loses nothing: the far side
    receives every frame once, byte for byte and in order; rx_pkts = tx_pkts = 1024, every
    drop counter 0, the port dropped none (imissed 0), nothing left in flight. The wait ends
    on the last frame's arrival; its limit is reached only by a stuck emulator.
    (Exhaustion needs only that 129 of the frames reach the ring within the 1 s delay: they
    are sent back to back by one loop.)"""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dpdk",
                                    "emu"))
    import lemu_net as ln
    from conftest import BUILD
    n, pool = 1024, 128
    topo = ln.Topology("fp%d" % (os.getpid() % 10000), mtu=1500)
    topo.create()
    a, b = topo.socket("a"), topo.socket("b")
    emu = ln.Emu(os.path.join(BUILD, "app", "lossy-emu", "lossy-emu"), topo,
                 "lemufp%d" % os.getpid(), str(tmp_path))
    js = str(tmp_path / "emu.json")
    frames = [ln.probe(7, k, size=1000) for k in range(n)]
    got = []
    try:
        emu.start(["--a2b", "delay 1s", "--b2a", "", "--mbufs", str(pool), "--json", js],
                  lcores=eal_lcores("0-1").split(" ", 1)[1].strip("'"), mem=256, framesz=2048, blocksz=4096,
                  framecnt=4096)
        for f in frames:
            a.send(f)
        deadline = time.time() + 120
        while len(got) < n:
            got += [f for _, f in b.take() if ln.parse_probe(f)]
            assert time.time() < deadline and emu.proc.poll() is None, (
                f"{len(got)} of {n} frames through lossy-emu")
            time.sleep(0.05)
        s = emu.tel.cmd("/lossy_emu/stats,a2b")["/lossy_emu/stats"]
        assert emu.proc.poll() is None, "lossy-emu died"
    finally:
        rc = emu.stop()
        for p in (a, b):
            p.close()
        topo.remove()
    assert rc == 0, "".join(emu.out)[-3000:]
    e = json.load(open(js))["results"]["a2b"]
    print(f"mempool exhausted: {pool} mbufs for {n} frames: rx_pool_empty {e['rx_pool_empty']}, "
          f"rx_missed {e['rx_missed']}, pmd {e.get('pmd', {})}")
    assert got == frames  # every frame once, byte for byte, in order
    assert s["rx_pkts"] == s["tx_pkts"] == e["rx_pkts"] == e["tx_pkts"] == n, e
    assert e["rx_pool_empty"] >= 1, e  # the fault happened, named by its counter
    for k in ("drop_loss", "drop_queue", "drop_nombuf", "drop_ctrl", "drop_multiseg",
              "drop_cut", "drop_rule", "in_flight"):
        assert e[k] == 0, (k, e)


def test_pfc_relay_mempool_exhausted(tmp_path):
    """Mempool exhaustion at the relay: --mbufs 64 (one pool for both ports), the far side
    pauses priority 3 (one XOFF of 65535 quanta: 3.4 s at --link-rate 10mbit), then 512
    probes of 500 B at priority 3 enter the Local port, then the far side's XON. The relay
    queues 64 probes for the paused Remote port and has no mbuf left: its Local port cannot
    receive (rx_pool_empty), and neither can its Remote port, so the XON waits in the
    kernel ring too until the pause runs out; then the relay drains, reads the XON and the
    rest. It survives and loses nothing: the far side receives every probe once, in order;
    the Local port received every probe; no drop of any cause, the PMD dropped none
    (imissed 0). The wait ends on the last probe's arrival; its limit only a stuck relay
    reaches. (Exhaustion needs 65 of the probes, sent back to back, to reach the relay
    within the 3.4 s pause.)"""
    import test_pfc_relay as tr
    ln = tr.ln
    n, pool = 512, 64
    topo = ln.Topology("fq%d" % (os.getpid() % 10000))
    topo.create()
    topo.ifs["e0"] = topo.ifs["a1"]
    net = type("Net", (), {})()
    net.topo, net.tmp, net.runs = topo, str(tmp_path), 0
    net.a, net.b, net.e = topo.socket("a"), topo.socket("b"), topo.socket("e")
    frames = [ln.probe(3, k, size=500, tos=tr.PRIO3_TOS) for k in range(n)]
    try:
        with tr.Relay(net, ["--link-rate", "10mbit", "--rtt", "1ms", "--watchdog", "off",
                            "--mbufs", str(pool)]) as r:
            net.b.send(ln.pfc_frame(src=ln.MAC_B, prio=3, quanta=0xFFFF))
            for f in frames:
                net.a.send(f)
            net.b.send(ln.pfc_frame(src=ln.MAC_B, prio=3, quanta=0))
            got = []
            deadline = time.time() + 120
            while len(tr.probes(got, 3)) < n:
                got += net.b.take()
                assert time.time() < deadline and r.proc.poll() is None, (
                    f"{len(tr.probes(got, 3))} of {n} probes through the relay: {r.stats()}")
                time.sleep(0.02)
            s = tr.wait_stats(r, lambda s: s["remote"]["rx_pfc"] >= 2, "the XON read")
        rep = r.report["results"]
    finally:
        for p in (net.a, net.b, net.e):
            p.close()
        topo.remove()
    seqs = [ln.parse_probe(f)[1] for _, f in got if ln.parse_probe(f)]
    print(f"relay mempool exhausted: {pool} mbufs for {n} probes: local rx_pool_empty "
          f"{s['local']['rx_pool_empty']}, remote rx_pool_empty {s['remote']['rx_pool_empty']}")
    assert seqs == list(range(n))  # every probe once, in order
    assert s["local"]["rx_pkts"] == n and s["remote"]["rx_pfc"] == 2, s
    assert s["local"]["rx_pool_empty"] >= 1, s  # the fault happened, named by its counter
    for p in rep["l2r"]["prio"] + rep["r2l"]["prio"]:
        assert all(p.get(k, 0) == 0 for k in ("drop_buffer_full", "drop_headroom_full",
                                              "drop_watchdog", "drop_queue_slots")), p
    for port in ("local", "remote"):
        assert rep[port].get("pmd_imissed", 0) == 0 and rep[port]["tx_pfc_fail"] == 0, rep[port]
