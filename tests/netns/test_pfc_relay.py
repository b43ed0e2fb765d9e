# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end tests of app/pfc-relay on net_af_packet ports in network namespaces.

Topology (tests/dpdk/emu/lemu_net.py, no bridge: bridges drop PFC):

    ns A ("local switch"): a0 <-veth-> a1 : ns E [pfc-relay: Local = a1, Remote = b1]
                                            b1 <-veth-> b0 : ns B ("far side")

Python AF_PACKET sockets in A and B play the local switch and the far side;
a third socket on a1 (inside E, next to the relay's own af_packet socket) sees
every frame the relay receives on its Local port, with the same kernel RX
timestamp, so the relay's PFC forwarding delay is b0's RX time minus a1's.
Namespaces and veths carry "h5" in their names. Run as root (CI does):

    ROCEWAN_BUILD=$PWD/build PYTHONPATH=$PWD/python /usr/bin/python3 -m pytest tests/netns/test_pfc_relay.py -v
"""
import json
import os
import shutil
import statistics
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dpdk", "emu"))
import lemu_net as ln  # noqa: E402

from conftest import BUILD  # noqa: E402

BINARY = os.path.join(BUILD, "app", "pfc-relay", "pfc-relay")
PRIO3_TOS = 26 << 2  # DSCP 26 -> priority 3 (default dscp2prio = DSCP >> 3)


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    if not os.path.exists(BINARY):
        pytest.fail("%s not built (ninja -C %s)" % (BINARY, BUILD))
    topo = ln.Topology("h5%d" % (os.getpid() % 10000))
    topo.create()
    # a capture socket on the relay's Local interface (a1, in ns E): Topology.socket(side)
    # opens ifs[side + "0"] in ns[side]
    topo.ifs["e0"] = topo.ifs["a1"]
    st = type("Net", (), {})()
    st.topo = topo
    st.a, st.b, st.e = topo.socket("a"), topo.socket("b"), topo.socket("e")
    st.tmp = str(tmp_path_factory.mktemp("pfc-relay"))
    st.runs = 0
    yield st
    for p in (st.a, st.b, st.e):
        p.close()
    topo.remove()


class Relay(ln.Emu):
    """pfc-relay in ns E (port 0 = Local on a1, port 1 = Remote on b1)."""

    def __init__(self, net, args, rt=False):
        net.runs += 1
        self.rt = rt
        super().__init__(BINARY, net.topo, "pfcrelay_h5_%d_%d" % (os.getpid(), net.runs), net.tmp)
        self.json = os.path.join(net.tmp, "relay%d.json" % net.runs)
        self.args = args + ["--json", self.json]
        self.net = net

    def command(self, app_args, **eal):
        cmd = super().command(app_args, **eal)
        if self.rt:  # SCHED_FIFO: the relay preempts everything else on a busy host
            i = cmd.index(BINARY)
            cmd[i:i] = ["chrt", "-f", "10"]
        return cmd

    def __enter__(self):
        self.start(self.args, lcores="0", mem=256, framesz=2048, blocksz=8192)
        quiet(self.net)
        return self

    def __exit__(self, *exc):
        rc = self.stop()
        shutil.rmtree("/var/run/dpdk/%s" % self.prefix, ignore_errors=True)
        out = "".join(self.out)
        print(out)
        if exc[0] is None:
            assert rc == 0, "pfc-relay exited with %s:\n%s" % (rc, out)
            with open(self.json) as f:
                self.report = json.load(f)

    def stats(self):
        return self.tel.cmd("/pfc_relay/stats")["/pfc_relay/stats"]


def quiet(net, t=0.05):
    time.sleep(t)
    for p in (net.a, net.b, net.e):
        p.take()


def collect(port, until, t=1.0):
    """Frames captured on @port until @until(frames) holds or @t seconds pass."""
    got = []
    deadline = time.time() + t
    while time.time() < deadline:
        got += port.take()
        if until(got):
            break
        time.sleep(0.005)
    return got


def pfc_multi(src, quanta):
    """PFC frame with quanta {prio: q} (enable bit set for each given priority)."""
    import struct
    q = [0] * 8
    en = 0
    for p, v in quanta.items():
        q[p] = v
        en |= 1 << p
    f = bytes.fromhex("0180c2000001") + src + b"\x88\x08" + struct.pack("!HH8H", 0x0101, en, *q)
    return f + b"\0" * (60 - len(f))


def probes(frames, run):
    """{seq: tos} of probe frames of run @run among captured frames."""
    out = {}
    for _, f in frames:
        p = ln.parse_probe(f)
        if p and p[0] == run:
            out[p[1]] = f[15]
    return out


def pfcs(frames):
    return [(ts, f[6:12], ln.parse_pfc(f)) for ts, f in frames if ln.parse_pfc(f)]


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def wait_stats(r, pred, what, limit=30.0):
    """r.stats() once @pred(stats) holds: a wait that ends on the event; @limit is only
    reached by a broken relay (never an assertion about how soon)."""
    deadline = time.time() + limit
    while True:
        s = r.stats()
        if pred(s):
            return s
        assert time.time() < deadline, "%s: not within %.0f s: %s" % (what, limit, s)
        time.sleep(0.005)


# ---- configuration errors ------------------------------------------------------------

@pytest.mark.parametrize("args, msg", [
    (["--rtt", "10ms"], "--link-rate is required"),
    (["--link-rate", "1gbit"], "--rtt is required"),
    (["--link-rate", "1gbit", "--rtt", "10ms", "--lossless", "3,8"], "priorities 0..7"),
    (["--link-rate", "1gbit", "--rtt", "10ms", "--trust", "tos"], "dscp or pcp"),
    (["--link-rate", "1gbit", "--rtt", "10ms", "--xoff", "10kb", "--xon", "20kb"],
     "must be below --xoff"),
    (["--link-rate", "fast", "--rtt", "10ms"], "--link-rate"),
    (["--link-rate", "1gbit", "--rtt", "10ms", "--watchdog", "detect=1s,action=panic"],
     "drop, forward or alert"),
    (["--link-rate", "1gbit", "--rtt", "10ms", "--local", "1"], "both port 1"),
    (["--link-rate", "1gbit", "--rtt", "10ms", "--buffer", "100"], "smaller than one frame"),
])
def test_bad_options_refused_before_start(args, msg):
    # no EAL arguments needed: the options are checked before EAL starts
    r = ln.subprocess.run([BINARY, "--"] + args, capture_output=True, text=True, timeout=10)
    assert r.returncode == 2, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and msg in lines[0], r.stderr
    assert "EAL" not in r.stdout + r.stderr


# ---- PFC from the Remote port pauses only that priority ------------------------------

def test_remote_pause_stops_only_prio3_and_local_xoff(net):
    # 10 Mbit/s: 65535 quanta = 3.36 s of pause, no refresh needed, and no scheduling
    # delay of this script can outlast it (paused_now below confirms it)
    args = ["--link-rate", "10mbit", "--rtt", "1ms", "--watchdog", "off",
            "--xoff", "64kb", "--xon", "16kb"]
    with Relay(net, args) as r:
        relay_local_mac = None
        net.b.send(ln.pfc_frame(src=ln.MAC_B, prio=3, quanta=0xFFFF))
        # the relay has taken the XOFF in before any data is sent (an event, not a sleep)
        wait_stats(r, lambda s: s["l2r_p3"]["paused_now"] == 1, "the XOFF is obeyed")
        for i in range(40):
            net.a.send(ln.probe(1, i, size=300, tos=PRIO3_TOS if i % 2 else 0))
        got = probes(collect(net.b, lambda g: len(probes(g, 1)) >= 20, 30.0), 1)
        # all 40 taken in: 20 of priority 0 sent, 20 of priority 3 queued (an event)
        s = wait_stats(r, lambda s: s["l2r_p3"]["enq_pkts"] == 20, "20 priority-3 frames queued")
        got.update(probes(net.b.take(), 1))
        assert sorted(got) == list(range(0, 40, 2)), "only priority 0 passes: %s" % sorted(got)
        assert all(tos == 0 for tos in got.values())
        assert s["l2r_p3"]["paused_now"] == 1 and s["l2r_p3"]["queued_bytes"] == 20 * 300
        # XON from the far side: the queued priority-3 frames leave at once
        t_xon = time.time_ns()
        net.b.send(ln.pfc_frame(src=ln.MAC_B, prio=3, quanta=0))
        fr = collect(net.b, lambda g: len(probes(g, 1)) >= 20, 30.0)
        got3 = probes(fr, 1)
        assert sorted(got3) == list(range(1, 40, 2)), sorted(got3)
        first = min(ts for ts, f in fr if ln.parse_probe(f))
        print("first priority-3 frame %.0f us after the XON was sent" % ((first - t_xon) / 1e3))

        # now overflow --xoff on the Local-ingress queue: XOFF toward the local switch
        x0 = r.stats()["l2r_p3"]["pfc_rx_xoff"]
        net.b.send(ln.pfc_frame(src=ln.MAC_B, prio=3, quanta=0xFFFF))
        wait_stats(r, lambda s: s["l2r_p3"]["pfc_rx_xoff"] == x0 + 1 and s["l2r_p3"]["paused_now"] == 1,
                   "the second XOFF is obeyed")
        for i in range(100):  # 100 x 1000 B > 64 KB
            net.a.send(ln.probe(2, i, size=1000, tos=PRIO3_TOS))
        pa = pfcs(collect(net.a, lambda g: len(pfcs(g)) >= 1, 30.0))
        assert pa, "no XOFF from the relay toward the local switch"
        relay_local_mac = pa[0][1]
        assert relay_local_mac not in (ln.MAC_A, ln.MAC_B)
        en, q = pa[0][2]
        assert en == 1 << 3 and q[3] == 0xFFFF, pa[0]
        assert probes(net.b.take(), 2) == {}
        net.b.send(ln.pfc_frame(src=ln.MAC_B, prio=3, quanta=0))
        fa = collect(net.a, lambda g: any(p[2][1][3] == 0 for p in pfcs(g)), 30.0)
        xon = [p for p in pfcs(fa) if p[2][1][3] == 0]
        assert xon and xon[0][1] == relay_local_mac, "no XON after the queue drained"
        got2 = probes(collect(net.b, lambda g: len(probes(g, 2)) >= 100, 30.0), 2)
        assert len(got2) == 100
    rep = r.report["results"]
    p3 = rep["l2r"]["prio"][3]
    assert p3["xoff_sent"] == 1 and p3["xon_sent"] == 1 and p3["pauses"] == 2
    assert p3["pfc_rx_xoff"] == 2 and p3["pfc_rx_xon"] == 2
    assert p3["hwm_bytes"] >= 64 * 1024 and rep["l2r"]["total"]["drops"] == 0
    assert rep["l2r"]["prio"][0]["pauses"] == 0 and rep["l2r"]["prio"][0]["tx_pkts"] == 20
    assert rep["local"]["tx_pfc"] == 2 + p3["xoff_refreshes"] and rep["remote"]["rx_pfc"] == 4


# ---- PFC from the Local port is relayed at once, with quanta converted -----------------

def relay_latency(net, n=150, gap=0.002):
    """
    Send n PFC frames into the Local port; returns (relay latencies in us, relayed
    frames, baseline in us). The baseline, from the same run, is one kernel veth hop
    as the same clocks see it: Python's time before send() on a0 -> a1's RX timestamp.
    """
    sent = {}
    for i in range(n):
        q = 10 * (i + 1)  # at 10 Gbit/s -> (i + 1) quanta at 1 Gbit/s
        sent[i + 1] = time.time_ns()
        net.a.send(ln.pfc_frame(src=ln.MAC_A, prio=3, quanta=q))
        time.sleep(gap)
    rx_b = collect(net.b, lambda g: len(pfcs(g)) >= n, 30.0)
    rx_e = net.e.take()
    t_in = {}
    for ts, f in rx_e:
        p = ln.parse_pfc(f)
        if p and p[0] == 1 << 3:
            t_in[(p[1][3] + 9) // 10] = ts
    lat, out = [], pfcs(rx_b)
    for ts, src, (en, q) in out:
        assert en == 1 << 3
        lat.append((ts - t_in[q[3]]) / 1e3)
    base = [(t_in[k] - sent[k]) / 1e3 for k in sent if k in t_in]
    return lat, out, base


@pytest.mark.parametrize("mode", ["busy-poll", "idle-backoff"])
def test_local_pfc_relayed_in_order_with_quanta_conversion(net, mode):
    """
    Every PFC frame into the Local port comes out of the Remote port once, in order,
    re-originated and converted; XON stays XON, a lossy priority is not relayed, two
    priorities in one frame stay one frame. One run, no retries: how fast the relay does it
    (the 1 ms target for the wire p99 and the relay's own p99/max) is a timing claim that
    bench/relay/latency.py measures over 10 rounds (docs/claims.md). The figures of this run
    are printed, not bounded.
    """
    args = ["--local-rate", "10gbit", "--remote-rate", "1gbit", "--rtt", "1ms",
            "--lossless", "3,4", "--watchdog", "off"]
    if mode == "busy-poll":
        args.append("--busy-poll")
    with Relay(net, args) as r:
        lat, out, base = relay_latency(net)
        assert len(out) == 150, "relayed %d of 150 PFC frames" % len(out)
        srcs = {o[1] for o in out}
        assert len(srcs) == 1 and ln.MAC_A not in srcs, "re-originated with the relay's MAC"
        # quanta converted to the same duration: 10 * k quanta at 10G = k quanta at 1G,
        # and relayed in the order they came
        assert [o[2][1][3] for o in out] == list(range(1, 151))
        print("PFC relay Local->Remote (%s): median %.1f us, p99 %.1f us, max %.1f us, n=%d "
              "(b0 RX - a1 RX kernel timestamps); baseline one veth hop: median %.1f us"
              % (mode, statistics.median(lat), pct(lat, 0.99), max(lat), len(lat),
                 statistics.median(base)))
        # XON is relayed as XON; a lossy priority (5) is not relayed; 3+4 in one frame
        quiet(net)
        net.a.send(ln.pfc_frame(src=ln.MAC_A, prio=3, quanta=0))
        net.a.send(pfc_multi(ln.MAC_A, {5: 1000}))
        net.a.send(pfc_multi(ln.MAC_A, {4: 65535, 5: 1000, 3: 20}))
        got = pfcs(collect(net.b, lambda g: len(pfcs(g)) >= 2, 30.0))
        quiet(net, 0.05)
        got += pfcs(net.b.take())
        assert [g[2] for g in got] == [(1 << 3, [0] * 8),
                                       ((1 << 3) | (1 << 4), [0, 0, 0, 2, 6554, 0, 0, 0])], got
    rep = r.report["results"]
    assert rep["r2l"]["pfc_relayed"] == 152
    assert rep["r2l"]["prio"][3]["pfc_relayed"] == 152 and rep["r2l"]["prio"][4]["pfc_relayed"] == 1
    assert rep["r2l"]["prio"][5]["pfc_relayed"] == 0
    # the Local port received 153 PFC frames and the Remote port sent 152
    assert rep["local"]["rx_pfc"] == 153 and rep["remote"]["tx_pfc"] == 152, (rep["local"], rep["remote"])
    lat_in = rep["pfc_relay_latency_ns"]
    assert 0 < lat_in["samples"] <= 153 and lat_in["mean"] <= lat_in["max"], lat_in
    print("PFC relay latency inside the relay (%s): mean %.1f us, max %.1f us, %d bursts" % (
        mode, lat_in["mean"] / 1e3, lat_in["max"] / 1e3, lat_in["samples"]))


# ---- watchdog: storm detection and restoration ------------------------------------------

def l2r_accounted(s):
    """Priority-3 data frames from the Local port that the L2R path has finished with:
    transmitted, or dropped under a counted cause (a flushed frame was enqueued, then counted
    in drop_watchdog), plus 200 B frames still queued."""
    p = s["l2r_p3"]
    return (p["tx_pkts"] + p["drop_watchdog"] + p["drop_headroom_full"] + p["drop_buffer_full"]
            + p["drop_queue_slots"] + p["queued_bytes"] // 200)


@pytest.mark.parametrize("action", ["drop", "forward"])
def test_watchdog_trips_on_storm_and_restores(net, action):
    """The far side pauses priority 3 with XOFF refreshes while A sends priority-3 data: the
    watchdog declares a storm, acts (drop: every later frame dropped and counted; forward:
    every frame delivered), restores after restore_time without PFC, and PFC is obeyed again.
    Exact facts, each wait ending on an event: 10 Mbit/s, so one XOFF pauses for
    3.36 s and only an XON ends the pause in the last step; restore=2s, so only a 2 s stall of
    this sender could end the storm early (wd_storms == 1 would say so)."""
    live = os.path.join(net.tmp, "stats-%s.json" % action)
    args = ["--link-rate", "10mbit", "--rtt", "1ms", "--stats-json", live, "--stats-interval", "50ms",
            "--watchdog", "detect=100ms,restore=2s,action=%s" % action]
    xoff = ln.pfc_frame(src=ln.MAC_B, prio=3, quanta=0xFFFF)
    k = 20
    with Relay(net, args) as r:
        # XOFF + one data frame (run 7) every 5 ms until the relay reports the storm
        sent = 0
        while not r.stats()["l2r_p3"]["wd_in_storm"]:
            assert sent < 6000, "no storm detected after %d XOFFs (30 s)" % sent
            net.b.send(xoff)
            net.a.send(ln.probe(7, sent, size=200, tos=PRIO3_TOS))
            sent += 1
            time.sleep(0.005)
        # in the storm: k more XOFF + data (run 8); the relay has been in the storm for all of them
        for i in range(k):
            net.b.send(xoff)
            net.a.send(ln.probe(8, i, size=200, tos=PRIO3_TOS))
            time.sleep(0.005)
        s = wait_stats(r, lambda s: l2r_accounted(s) == sent + k and s["l2r_p3"]["queued_bytes"] == 0,
                       "all %d data frames transmitted or dropped" % (sent + k))
        p = s["l2r_p3"]
        assert p["wd_in_storm"] == 1 and p["wd_storms"] == 1 and p["wd_ignored_pfc"] >= k, p
        got = collect(net.b, lambda g: len(probes(g, 7)) + len(probes(g, 8)) >= p["tx_pkts"], 30.0)
        got7, got8 = probes(got, 7), probes(got, 8)
        assert len(got7) + len(got8) == p["tx_pkts"], (p, len(got7), len(got8))
        assert p["drop_headroom_full"] + p["drop_buffer_full"] + p["drop_queue_slots"] == 0, p
        if action == "drop":  # every frame sent in the storm refused; queued ones flushed
            assert got8 == {} and p["drop_watchdog"] == sent + k - p["tx_pkts"], (p, len(got8))
        else:  # forward: PFC no longer honoured, everything is transmitted, nothing dropped
            assert sorted(got7) == list(range(sent)) and sorted(got8) == list(range(k)), (
                len(got7), len(got8))
            assert p["drop_watchdog"] == 0 and p["tx_while_storm"] >= k, p
        # --stats-json is rewritten while running (atomically: always a whole document)
        deadline = time.time() + 30
        while True:
            with open(live) as f:
                doc = json.load(f)
            if doc["results"]["l2r"]["prio"][3]["wd_in_storm"] == 1:
                break
            assert time.time() < deadline, doc["results"]["l2r"]["prio"][3]
            time.sleep(0.02)
        assert doc["schema"] == "rocewan/1" and doc["app"] == "pfc-relay"
        assert doc["results"]["l2r"]["prio"][3]["wd_storms"] == 1
        # no PFC for restore_time: restored
        s = wait_stats(r, lambda s: s["l2r_p3"]["wd_restores"] == 1, "restore after 2 s without PFC")
        assert s["l2r_p3"]["wd_in_storm"] == 0 and s["l2r_p3"]["wd_storms"] == 1, s
        # PFC is honoured again: an XOFF (3.36 s at 10 Mbit/s) holds a frame until the XON
        quiet(net)
        tx0, enq0, x0 = (s["l2r_p3"][c] for c in ("tx_pkts", "enq_pkts", "pfc_rx_xoff"))
        net.b.send(xoff)
        wait_stats(r, lambda s: s["l2r_p3"]["pfc_rx_xoff"] == x0 + 1 and s["l2r_p3"]["paused_now"] == 1,
                   "the XOFF is obeyed")
        net.a.send(ln.probe(9, 0, size=200, tos=PRIO3_TOS))
        s = wait_stats(r, lambda s: s["l2r_p3"]["enq_pkts"] == enq0 + 1, "the frame is queued")
        assert s["l2r_p3"]["tx_pkts"] == tx0 and s["l2r_p3"]["queued_bytes"] == 200, s["l2r_p3"]
        assert probes(net.b.take(), 9) == {}
        net.b.send(ln.pfc_frame(src=ln.MAC_B, prio=3, quanta=0))
        assert list(probes(collect(net.b, lambda g: probes(g, 9), 30.0), 9)) == [0]
    p3 = r.report["results"]["l2r"]["prio"][3]
    assert p3["wd_storms"] == 1 and p3["wd_restores"] == 1
    cfg = r.report["config"]
    assert cfg["watchdog"] == {"enabled": True, "detect_ns": 100000000, "restore_ns": 2000000000,
                               "action": action}
    assert cfg["link_rate_bps"] == 10**7 and cfg["lossless"] == [3] and cfg["trust"] == "dscp"
    assert cfg["xoff_bytes"] == 65536 and cfg["idle_max_ns"] == 100000  # defaults are recorded
    print("watchdog %s: %d data frames before the storm was reported, %d in it; drop_watchdog %d, "
          "tx_while_storm %d" % (action, sent, k, p3["drop_watchdog"], p3["tx_while_storm"]))


# ---- one BDP of Remote-ingress buffer holds one BDP, and every excess is a counted drop ----

FRAME = 1000  # bytes per probe frame, as the relay counts them (no FCS on af_packet)


def bdp_scenario(net, buffer_bytes, frames):
    """
    The local switch pauses priority 3 (XOFF, refreshed); the relay obeys it on its
    Local egress and relays it to the far side, which -- reacting one RTT late -- has
    sent @frames frames of priority 3 meanwhile, more than the buffer holds. Then the
    switch resumes. 10 Mbit/s x 400 ms: BDP = 500 000 B = 500 frames, and one XOFF at
    0xFFFF quanta lasts 3.36 s, so no scheduling delay of the refreshes ends the pause
    early. Returns (report, {seq: tos} received by the local switch).
    """
    args = ["--link-rate", "10mbit", "--rtt", "400ms", "--watchdog", "off",
            "--buffer", "%db" % buffer_bytes]
    expect = min(frames, buffer_bytes // FRAME)
    with Relay(net, args) as r:
        net.a.send(ln.pfc_frame(src=ln.MAC_A, prio=3, quanta=0xFFFF))
        relayed = pfcs(collect(net.b, lambda g: pfcs(g), 30.0))
        assert relayed and relayed[0][2][1][3] == 0xFFFF, "far side got no relayed XOFF"
        for i in range(frames):
            net.b.send(ln.probe(9, i, size=FRAME, tos=PRIO3_TOS, src=ln.MAC_B, dst=ln.MAC_A))
            if i % 20 == 19:
                net.a.send(ln.pfc_frame(src=ln.MAC_A, prio=3, quanta=0xFFFF))
        net.a.send(ln.pfc_frame(src=ln.MAC_A, prio=3, quanta=0xFFFF))
        # every frame reached the relay (its ring holds 4096): in = queued + dropped
        t0 = time.time()
        while True:
            s = r.stats()["r2l_p3"]
            if s["enq_pkts"] + s["drop_buffer_full"] + s["drop_queue_slots"] >= frames:
                break
            assert time.time() - t0 < 30, "the relay never saw all %d frames: %s" % (frames, s)
            time.sleep(0.01)
        assert s["paused_now"] == 1
        before = probes(net.a.take(), 9)
        assert before == {}, "data left while paused"
        net.a.send(ln.pfc_frame(src=ln.MAC_A, prio=3, quanta=0))
        got = probes(collect(net.a, lambda g: len(probes(g, 9)) >= expect, 30.0), 9)
        quiet(net, 0.05)  # nothing more may come
        got.update(probes(net.a.take(), 9))
    return r.report, got, expect


def check_bdp_run(rep, got, frames, buffer_bytes, expect):
    r2l = rep["results"]["r2l"]
    p3 = r2l["prio"][3]
    assert rep["config"]["buffer_bytes"] == buffer_bytes and not rep["config"]["buffer_auto"]
    # in = out + drops by cause, exactly: the buffer held what fits, in arrival order, and
    # every frame beyond it is a buffer-full drop
    assert p3["enq_pkts"] == expect and p3["tx_pkts"] == expect, p3
    assert p3["drop_buffer_full"] == frames - expect, p3
    assert p3["drop_queue_slots"] == 0 and p3["drop_watchdog"] == 0 and p3["drop_headroom_full"] == 0
    assert r2l["total"]["drops"] == frames - expect
    assert p3["hwm_bytes"] == expect * FRAME <= buffer_bytes
    assert sorted(got) == list(range(expect)), "the first %d frames, each once" % expect
    assert rep["results"]["local"]["tx_pkts"] >= expect
    for side in ("local", "remote"):  # nothing was lost before the relay saw it either
        port = rep["results"][side]
        assert port["pmd_imissed"] == 0 and port["pmd_rx_nombuf"] == 0, port


def test_one_bdp_buffer_holds_one_bdp_and_counts_the_rest(net):
    # 1 BDP (500 000 B) buffer, 1.2 BDP in flight when the pause began: 500 delivered, 100 dropped
    rep, got, expect = bdp_scenario(net, 500000, 600)
    assert rep["config"]["bdp_bytes"] == 500000 and expect == 500
    check_bdp_run(rep, got, 600, 500000, expect)
    print("1 BDP buffer, 1.2 BDP in: received %d/600, drop_buffer_full %d"
          % (len(got), rep["results"]["r2l"]["prio"][3]["drop_buffer_full"]))
    # a buffer of half a BDP under one BDP in flight: half is lost, every loss counted
    rep, got, expect = bdp_scenario(net, 250000, 500)
    assert expect == 250
    check_bdp_run(rep, got, 500, 250000, expect)
    print("0.5 BDP buffer, 1 BDP in: received %d/500" % len(got))


def test_watchdog_on_local_port_stops_relaying_the_storm(net):
    """A PFC storm from the local switch: the relay relays PFC until its watchdog detects the
    storm and none after. Exact facts, no timing: the first XOFF is relayed (no storm
    can be detected before a pause); every XOFF sent is either relayed or counted in
    wd_ignored_pfc; the relay's pfc_relayed equals what the far side received; once the relay
    reports wd_in_storm, each of K further XOFFs is ignored, none relayed; after restore_time
    without PFC, relaying resumes. How many XOFFs were relayed before detection depends on
    scheduling and is only printed (restore=2s: only a 2 s stall of this sender could end
    the storm early, and wd_storms == 1 would say so)."""
    args = ["--link-rate", "1gbit", "--rtt", "1ms",
            "--watchdog", "detect=100ms,restore=2s,action=drop"]
    xoff = ln.pfc_frame(src=ln.MAC_A, prio=3, quanta=0xFFFF)

    def processed(s):  # XOFFs on priority 3 the relay has taken in (obeyed or ignored)
        return s["r2l_p3"]["pfc_rx_xoff"] + s["r2l_p3"]["wd_ignored_pfc"]

    with Relay(net, args) as r:
        net.a.send(xoff)
        n = 1
        got = pfcs(collect(net.b, lambda g: pfcs(g), 30.0))
        assert len(got) == 1, "the first XOFF is relayed (no storm before any pause)"
        # XOFF refreshes every 5 ms until the relay reports the storm (an event, not a time)
        while not r.stats()["r2l_p3"]["wd_in_storm"]:
            assert n < 6000, "no storm detected after %d XOFFs (30 s)" % n
            net.a.send(xoff)
            n += 1
            time.sleep(0.005)
        s = wait_stats(r, lambda s: processed(s) == n, "the relay takes in all %d XOFFs" % n)
        got += pfcs(collect(net.b, lambda g: len(got) + len(pfcs(g)) >= s["pfc_relayed"], 30.0))
        relayed = len(got)
        assert s["pfc_relayed"] == relayed and s["remote"]["tx_pfc"] == relayed, (s, relayed)
        assert s["r2l_p3"]["wd_ignored_pfc"] == n - relayed, (s, n, relayed)
        assert s["r2l_p3"]["wd_in_storm"] == 1 and s["r2l_p3"]["wd_storms"] == 1, s
        # in the storm: K more XOFFs, each ignored, none relayed
        k = 20
        for _ in range(k):
            net.a.send(xoff)
            time.sleep(0.005)
        s2 = wait_stats(r, lambda s: processed(s) == n + k, "the relay takes in %d XOFFs" % (n + k))
        assert s2["r2l_p3"]["wd_ignored_pfc"] == s["r2l_p3"]["wd_ignored_pfc"] + k, s2
        assert s2["pfc_relayed"] == relayed and s2["r2l_p3"]["wd_storms"] == 1, s2
        assert s2["local"]["rx_pfc"] == n + k, s2
        # restoration: no PFC for restore_time, then relaying resumes (one XOFF, one relayed)
        wait_stats(r, lambda s: s["r2l_p3"]["wd_restores"] == 1, "restore after 2 s without PFC")
        assert pfcs(net.b.take()) == [], "nothing relayed during the storm"
        net.a.send(xoff)
        assert len(pfcs(collect(net.b, lambda g: pfcs(g), 30.0))) == 1, "relaying resumes"
        s3 = wait_stats(r, lambda s: s["pfc_relayed"] == relayed + 1, "pfc_relayed counts it")
        assert s3["r2l_p3"]["wd_storms"] == 1 and s3["r2l_p3"]["wd_in_storm"] == 0, s3
    print("local-port storm: %d PFC frames sent, %d relayed before detection, %d ignored"
          % (n + k + 1, relayed, n + k - relayed))


@pytest.mark.parametrize("busy", [False, True], ids=["idle-backoff", "busy-poll"])
def test_idle_relay_backs_off(net, busy):
    """Two shared cores: an idle relay must sleep, not spin (--busy-poll is the opt-in).
    Exact facts: with no traffic the loop sleeps (dp_backoff sleeps after 64 empty polls, so
    once the live report shows more loops than that, sleeps > 0); --busy-poll, the negative
    control, never sleeps. How much of a core the idle relay uses is a timing figure:
    bench/relay/idle_cpu.py, 10 rounds (docs/claims.md)."""
    live = os.path.join(net.tmp, "idle-%d.json" % busy)
    args = ["--link-rate", "10gbit", "--rtt", "1ms", "--stats-json", live, "--stats-interval", "20ms"]
    with Relay(net, args + (["--busy-poll"] if busy else [])) as r:
        deadline = time.time() + 30
        while True:  # ends when the relay has polled more than 64 times (an event)
            try:
                with open(live) as f:
                    if json.load(f)["results"]["loops"] > 200:
                        break
            except (OSError, ValueError, KeyError):
                pass
            assert time.time() < deadline and r.proc.poll() is None, "relay not looping"
            time.sleep(0.02)
    res = r.report["results"]
    if busy:
        assert res["sleeps"] == 0 and res["loops"] > 200, res
    else:
        assert 0 < res["sleeps"] < res["loops"], res
    print("pfc-relay %s: %d loops, %d sleeps" % ("busy-poll" if busy else "idle", res["loops"],
                                                 res["sleeps"]))
