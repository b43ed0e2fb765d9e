# SPDX-License-Identifier: BSD-3-Clause
"""Hostile traffic at the rnic: storms of malformed and hostile
frames, each counted under its reason, exactly; the rnic stays alive and a real
transfer afterwards completes with checked data and no leaked mbuf.

The rnic server (rc_pingpong --chk) runs in ns[1] of a veth pair. Before its client
connects, a raw AF_PACKET socket in ns[0] (where the client will run) sends each
attack: ATTACKS lists the frames (deterministic: a seeded generator) and the counter
each must land in. Every attack is sent in batches of at most BATCH frames, fewer than
the rnic's af_packet ring holds (1024 frames), and after each batch the sender waits
until the rnic's telemetry counters account for every frame of it, so none can be lost
before the rnic sees it (a wait that ends on the event; its 30 s limit only a broken
rnic reaches). Then the real client runs rc_pingpong (every message checked by the
server's --chk, every echo by the client), and the server's --json must show, per
counter, exactly the sum of the attacks' frames, and its mempool in use at exit equal
to a storm-free run's (0 mbufs leaked).

Frames sent per attack are in docs/reliability.md.
"""
import json
import os
import random
import struct
import subprocess
import sys
import time

import pytest

from conftest import RNIC, eal, sh
from rocewan.testbed.telemetry import Telemetry

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dpdk", "emu"))
import lemu_net as ln  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from rocewan.build import build_bytes  # noqa: E402

BATCH = 256          # frames in flight at most: below the rnic's 1024-frame af_packet ring
PER_ATTACK = 512     # frames per attack
SIZE, ITERS = 4096, 100

OP_RC_SEND_ONLY, OP_RC_WRITE_ONLY, OP_RC_READ_REQ = 0x04, 0x0A, 0x0C


def raw_socket(ns, ifname):
    import socket
    here = os.open("/proc/self/ns/net", os.O_RDONLY)
    there = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
    try:
        ln._setns_fd(there)
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ln.ETH_P_ALL))
        s.setsockopt(socket.SOL_SOCKET, ln.SO_SNDBUFFORCE, 8 << 20)
        s.bind((ifname, 0))
    finally:
        ln._setns_fd(here)
        os.close(here)
        os.close(there)
    return s


def mac_of(ns, ifname):
    out = sh(f"ip -n {ns} -j link show {ifname}").stdout
    return json.loads(out)[0]["address"]


def mac_bytes(m):
    return bytes.fromhex(m.replace(":", ""))


class Attacks:
    """The frames of each attack, built for a server at (dmac, dip) from (smac, sip)."""

    def __init__(self, smac, dmac, sip, dip, seed=15):
        self.smac, self.dmac, self.sip, self.dip = smac, dmac, sip, dip
        self.rng = random.Random(seed)

    def roce(self, opcode=OP_RC_SEND_ONLY, dqpn=0x123456, psn=0, payload=b"x" * 64, **kw):
        spec = {"eth_src": self.smac, "eth_dst": self.dmac,
                "ip": {"ver": 4, "src": self.sip, "dst": kw.pop("dst", self.dip)},
                "bth": {"opcode": opcode, "dqpn": dqpn, "psn": psn}, "payload": payload}
        spec.update(kw)
        return build_bytes(spec)

    def bad_icrc(self, n):
        return [self.roce(dqpn=self.rng.randrange(1 << 24), icrc=self.rng.randrange(1, 1 << 32))
                for _ in range(n)]

    def bogus_qpn(self, n):
        # valid frames (ICRC right) for QPs that do not exist: SEND, WRITE with a huge DMA
        # length, READ beyond any MR
        out = []
        for i in range(n):
            q = self.rng.randrange(0x100, 1 << 24)
            if i % 3 == 0:
                out.append(self.roce(OP_RC_SEND_ONLY, q, psn=self.rng.randrange(1 << 24)))
            elif i % 3 == 1:
                out.append(self.roce(OP_RC_WRITE_ONLY, q, reth={"va": 1 << 63, "rkey": 7,
                                                                "dlen": 0xFFFFFFFF}))
            else:
                out.append(self.roce(OP_RC_READ_REQ, q, payload=b"",
                                     reth={"va": 0x1000, "rkey": 9, "dlen": 1 << 30}))
        return out

    def truncated(self, n):
        # a valid frame cut inside BTH, inside the payload or before the ICRC: the IP and
        # UDP lengths promise more than the frame holds (60-byte minimum: zero padding)
        full = self.roce()
        out = []
        for _ in range(n):
            cut = self.rng.randrange(14 + 20 + 8 + 1, len(full) - 1)
            f = full[:cut]
            out.append(f + b"\0" * max(0, 60 - len(f)))
        return out

    def not_for_us(self, n):
        # RoCEv2 to our MAC but another IP
        return [self.roce(dst="10.50.0.%d" % (100 + i % 100)) for i in range(n)]

    def pfc_bad_vector(self, n):
        # PFC opcode with bits set in the reserved upper byte of the class-enable vector
        out = []
        for _ in range(n):
            en = self.rng.randrange(1, 256) << 8 | self.rng.randrange(256)
            f = (bytes.fromhex("0180c2000001") + mac_bytes(self.smac) + b"\x88\x08"
                 + struct.pack("!HH8H", 0x0101, en, *([0xFFFF] * 8)))
            out.append(f + b"\0" * (60 - len(f)))
        return out

    def pfc_storm(self, n):
        # maximum quanta on every priority; the caller ends it with one XON on all
        f = (bytes.fromhex("0180c2000001") + mac_bytes(self.smac) + b"\x88\x08"
             + struct.pack("!HH8H", 0x0101, 0xFF, *([0xFFFF] * 8)))
        return [f + b"\0" * (60 - len(f))] * n

    def arp_other(self, n):
        # ARP requests for addresses that are not ours
        return [self.arp(1, self.rng.randrange(1 << 32), 0x0A32006E + i % 50) for i in range(n)]

    def arp_for_us(self, n):
        # ARP requests for our address from n different senders: each answered, the
        # 64-slot neighbour table churns
        dip = struct.unpack("!I", bytes(int(x) for x in self.dip.split(".")))[0]
        return [self.arp(1, 0x0A320100 + i, dip, sha=bytes([2, 0xAA, 0, 0, i >> 8 & 255, i & 255]))
                for i in range(n)]

    def arp(self, op, spa, tpa, sha=None):
        sha = sha or mac_bytes(self.smac)
        f = (b"\xff" * 6 + sha + b"\x08\x06" + struct.pack("!HHBBH", 1, 0x0800, 6, 4, op)
             + sha + struct.pack("!I", spa & 0xFFFFFFFF) + b"\0" * 6 + struct.pack("!I", tpa))
        return f + b"\0" * (60 - len(f))

    def nd_other(self, n):
        # ICMPv6 neighbour solicitations for targets that are not ours (no --ip6)
        from scapy.compat import raw
        from scapy.layers.inet6 import ICMPv6ND_NS, IPv6
        from scapy.layers.l2 import Ether
        return [raw(Ether(src=self.smac, dst="33:33:ff:00:00:%02x" % (i & 255))
                    / IPv6(src="fe80::1", dst="ff02::1:ff00:%x" % (i & 255))
                    / ICMPv6ND_NS(tgt="fe80::%x" % (0x100 + i))) for i in range(n)]

    def vlan_in_vlan(self, n):
        # a RoCEv2 frame inside two 802.1Q tags
        inner = self.roce()
        return [inner[:12] + b"\x81\x00\x00\x05\x81\x00\x00\x06" + inner[12:]] * n

    def garbage(self, n):
        # random bytes under random non-IP EtherTypes
        out = []
        for _ in range(n):
            et = self.rng.choice([0x88B5, 0x88B6, 0x1234, 0x9000, 0x88CC])
            body = bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(46, 600)))
            out.append(mac_bytes(self.dmac) + mac_bytes(self.smac) + struct.pack("!H", et) + body)
        return out


# attack -> the counters its frames must move, per frame ("port" counters or "device"
# (RoCE engine) counters of /rnic/port/stats and of the --json report). Every other
# counter an attack moves must be one of NEUTRAL (how many polls, bursts and bytes it took).
# pfc_storm: 512 XOFFs at maximum quanta on all eight priorities, then one XON on all
# ("xon" marks the counters of that last frame alone).
ATTACKS = [
    ("bad_icrc", {("device", "rx_drop_icrc"): 1, ("port", "rx_roce"): 1}),
    ("bogus_qpn", {("device", "rx_drop_bad_qpn"): 1, ("port", "rx_roce"): 1}),
    ("truncated", {("device", "rx_drop_malformed"): 1, ("port", "rx_roce"): 1}),
    ("not_for_us", {("device", "rx_drop_not_for_us"): 1, ("port", "rx_roce"): 1}),
    ("pfc_bad_vector", {("port", "pfc_rx_bad"): 1, ("port", "rx_pfc"): 1}),
    ("pfc_storm", {("port", "rx_pfc"): 1, ("port", "pfc_rx_xoff"): 1, ("port", "pfc_rx_xon"): "xon"}),
    ("arp_other", {("port", "rx_arp_other"): 1}),
    ("arp_for_us", {("port", "rx_arp_req"): 1, ("port", "tx_frames"): 1}),  # each answered
    ("nd_other", {("port", "rx_nd_other"): 1}),
    ("vlan_in_vlan", {("port", "rx_other"): 1}),
    ("garbage", {("port", "rx_other"): 1}),
]
NEUTRAL = {("port", "polls"), ("port", "rx_bursts"), ("port", "rx_frames"), ("port", "tx_bursts"),
           ("device", "rx_packets"), ("device", "rx_bytes"),
           # how often the storm's pause lapsed between two XOFFs is scheduling, not a count
           ("port", "tx_paused_ns"), ("port", "pfc_pauses"),
           # high-water marks of the loop's timing (a loaded host moves them)
           ("port", "poll_gap_max_ns"), ("port", "poll_busy_max_ns")}


def expected(name, where, n):
    """Counter -> exact change for an attack of n frames (n - 1 XOFFs and one XON for the
    PFC storm)."""
    out = {}
    for key, k in where.items():
        if k == "xon":
            out[key] = 1
        elif name == "pfc_storm" and key == ("port", "pfc_rx_xoff"):
            out[key] = n - 1
        else:
            out[key] = k * n
    return out


def counters(st):
    c = {("port", k): v for k, v in st.items() if isinstance(v, int)}
    c.update({("device", k): v for k, v in st["device"].items() if isinstance(v, int)})
    return c


def run_server(vp, tmp_path, prefix, tag):
    js = tmp_path / f"server-{tag}.json"
    cmd = (f"ip netns exec {vp.ns[1]} {RNIC} {eal(vp.ifs[1], prefix)} -- --ip {vp.rip[1]}/24 "
           f"--chk --json {js} -s {SIZE} -n {ITERS} rc_pingpong")
    srv = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    seen = ""
    t0 = time.monotonic()
    while "Waiting for client" not in seen and time.monotonic() - t0 < 30:
        line = srv.stdout.readline()
        if not line:
            break
        seen += line
    assert "Waiting for client" in seen, seen
    return srv, js, seen


def run_client(vp, tmp_path, tag):
    js = tmp_path / f"client-{tag}.json"
    cmd = (f"ip netns exec {vp.ns[0]} {RNIC} {eal(vp.ifs[0], 'hoc' + tag)} -- --ip {vp.rip[0]}/24 "
           f"--json {js} -s {SIZE} -n {ITERS} rc_pingpong {vp.kip[1]}")
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=120)
    return r, js


def finish(srv, seen, cli, cjs, sjs):
    try:
        sout, _ = srv.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        srv.kill()
        sout, _ = srv.communicate()
    out = seen + sout
    assert cli.returncode == 0, f"client failed:\n{cli.stdout}{cli.stderr}\nserver:\n{out}"
    assert srv.returncode == 0, f"server failed (alive through the storm?):\n{out}"
    res = [json.load(open(j))["results"] for j in (sjs, cjs)]
    for r in res:  # the transfer after the storm: every message checked, exact counts
        q = r["qp_counters"]
        assert r["iters"] == ITERS and r["completion_errors"] == 0, r
        assert (q["send_completions"], q["recv_completions"]) == (ITERS, ITERS), q
        assert q["tx_req_packets"] == ITERS * 4 and q["rx_req_packets"] == ITERS * 4, q
    return res


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    """The same transfer without a storm: the mempool use it leaves at exit."""
    from conftest import VethPair
    vp = VethPair()
    try:
        tmp = tmp_path_factory.mktemp("clean")
        srv, sjs, seen = run_server(vp, tmp, "hosc", "clean")
        cli, cjs = run_client(vp, tmp, "clean")
        yield finish(srv, seen, cli, cjs, sjs)
    finally:
        vp.close()


def no_ipv6(vp):
    """The kernels' own IPv6 frames (router solicitations, MLD) would land in the counters."""
    for n, i in zip(vp.ns, vp.ifs):
        sh(f"ip netns exec {n} sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
           f"net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.{i}.disable_ipv6=1")


def test_rnic_hostile_storm(veth_pair, tmp_path, clean_run):
    vp = veth_pair
    no_ipv6(vp)
    prefix = "hos" + vp.ns[1][-6:]
    srv, sjs, seen = run_server(vp, tmp_path, prefix, "storm")
    smac, dmac = mac_of(vp.ns[0], vp.ifs[0]), mac_of(vp.ns[1], vp.ifs[1])
    atk = Attacks(smac, dmac, vp.rip[0], vp.rip[1])
    sock = raw_socket(vp.ns[0], vp.ifs[0])
    tel = Telemetry(f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2", 30, lambda: srv.poll() is None)
    sent, moved = {}, {}
    try:
        deadline = time.time() + 30
        while "/rnic/port/stats" not in tel.get("/"):
            assert time.time() < deadline and srv.poll() is None, "/rnic/port/stats never registered"
            time.sleep(0.05)
        base = prev = counters(tel.get("/rnic/port/stats"))
        total = 0
        for name, where in ATTACKS:
            frames = getattr(atk, name)(PER_ATTACK)
            if name == "pfc_storm":  # end the pause: one XON on every priority
                xon = frames[0][:16] + struct.pack("!H", 0xFF) + b"\0" * 16
                frames = frames + [xon + b"\0" * (60 - len(xon))]
            sent[name] = len(frames)
            for i in range(0, len(frames), BATCH):
                for f in frames[i:i + BATCH]:
                    sock.send(f)
                total += len(frames[i:i + BATCH])
                deadline = time.time() + 30
                while True:  # the rnic has received every frame sent so far (an event)
                    now = counters(tel.get("/rnic/port/stats"))
                    if now[("port", "rx_frames")] - base[("port", "rx_frames")] >= total:
                        break
                    assert time.time() < deadline and srv.poll() is None, (
                        f"{name}: rx_frames {now[('port', 'rx_frames')] - base[('port', 'rx_frames')]}"
                        f" of {total} sent")
                    time.sleep(0.01)
            # received is not handled: an ARP reply leaves after its request was counted, so
            # also wait (an event, the hang guard only) until every counter this attack must
            # move has moved that far; the exact comparison below then catches any excess
            exp = expected(name, where, sent[name])
            deadline = time.time() + 30
            while any(now.get(k, 0) - prev.get(k, 0) < v for k, v in exp.items()):
                assert time.time() < deadline and srv.poll() is None, (
                    name, {k: now.get(k, 0) - prev.get(k, 0) for k in exp}, exp)
                time.sleep(0.01)
                now = counters(tel.get("/rnic/port/stats"))
            moved[name] = {k: now[k] - prev.get(k, 0) for k in now if now[k] != prev.get(k, 0)}
            prev = now
    finally:
        tel.close()
        sock.close()
    cli, cjs = run_client(vp, tmp_path, "storm")
    srv_res, cli_res = finish(srv, seen, cli, cjs, sjs)
    print("frames per attack: " + ", ".join(f"{k} {v}" for k, v in sent.items()))
    for name, m in moved.items():
        print(f"  {name}: " + ", ".join(f"{k[0]}.{k[1]} +{v}" for k, v in sorted(m.items())))
    assert now[("port", "rx_frames")] - base[("port", "rx_frames")] == total
    # exact: each attack moved exactly its counters, each by its frame count, and no other
    # counter but the neutral ones (no crash, no other drop, no state change)
    for name, where in ATTACKS:
        exp = expected(name, where, sent[name])
        assert moved[name][("port", "rx_frames")] == sent[name], (name, moved[name])
        got = {k: v for k, v in moved[name].items() if k not in NEUTRAL}
        assert got == exp, (name, got, exp)
    # the storm's frames reached the rnic, every one (the PMD dropped none)
    assert srv_res["pmd_counters"]["imissed"] == 0, srv_res["pmd_counters"]
    # the real transfer afterwards dropped nothing as malformed, bad ICRC or for a bad QPN
    d = srv_res["device_counters"]
    for k in ("rx_drop_icrc", "rx_drop_malformed", "rx_drop_bad_qpn"):
        assert d[k] == now[("device", k)], (k, d[k], now[("device", k)])
    # 0 leaked mbufs: what a storm-free run leaves in use at exit
    assert srv_res["mempool"]["in_use"] == clean_run[0]["mempool"]["in_use"], (
        srv_res["mempool"], clean_run[0]["mempool"])


# ---- lossy-emu and pfc-relay: the same storms through the middle box -------------------------

LEMU = os.path.join(os.environ.get("ROCEWAN_BUILD", os.path.join(HERE, "..", "..", "build")),
                    "app", "lossy-emu", "lossy-emu")
MIDDLE_ATTACKS = ["bad_icrc", "bogus_qpn", "truncated", "not_for_us", "pfc_bad_vector",
                  "arp_other", "nd_other", "vlan_in_vlan", "garbage"]


def is_mac_ctrl(f):
    return f[12:14] == b"\x88\x08"


@pytest.fixture
def mid():
    topo = ln.Topology("hx%d" % (os.getpid() % 10000))
    topo.create()
    a, b = topo.socket("a"), topo.socket("b")
    yield topo, a, b
    for p in (a, b):
        p.close()
    topo.remove()


def wait_for(cond, what, alive, limit=30.0):
    deadline = time.time() + limit
    while not cond():
        assert time.time() < deadline and alive(), what()
        time.sleep(0.01)


def test_lossy_emu_hostile_storm(mid, tmp_path):
    """Every hostile frame is forwarded unchanged (an empty SPEC is a wire): rx_pkts = tx_pkts
    = frames sent, no drop of any cause, the far side receives each frame byte for byte, data
    in order and MAC control frames in order (those go ahead of the data: mac_ctrl_fwd counts
    them); then a probe stream still passes whole and nothing is left in flight."""
    topo, a, b = mid
    emu = ln.Emu(LEMU, topo, "lemuhx%d" % os.getpid(), str(tmp_path))
    atk = Attacks(ln.MAC_A.hex(":"), ln.MAC_B.hex(":"), "10.99.0.1", "10.99.0.2")
    frames, sent = [], {}
    for name in MIDDLE_ATTACKS:
        fs = getattr(atk, name)(PER_ATTACK)
        sent[name] = len(fs)
        frames += fs
    js = str(tmp_path / "emu.json")
    emu.start(["--seed", "1", "--stall-detect", "--json", js])
    try:
        def st():
            return emu.tel.cmd("/lossy_emu/stats,a2b")["/lossy_emu/stats"]
        got = []
        for i in range(0, len(frames), BATCH):
            for f in frames[i:i + BATCH]:
                a.send(f)
            n = min(len(frames), i + BATCH)
            wait_for(lambda: (got.extend(b.take()) or len(got) >= n),
                     lambda: f"{len(got)} of {n} frames through lossy-emu: {st()}",
                     lambda: emu.proc.poll() is None)
        s0 = st()
        for k in range(300):  # a real stream afterwards
            a.send(ln.probe(1, k, size=1000))
        wait_for(lambda: (got.extend(b.take()) or sum(1 for _, f in got if ln.parse_probe(f)) >= 300),
                 lambda: f"probe stream: {st()}", lambda: emu.proc.poll() is None)
        s = st()
        assert emu.proc.poll() is None, "lossy-emu died"
    finally:
        rc = emu.stop()
    assert rc == 0, "".join(emu.out)[-3000:]
    rx = [f for _, f in got]
    storm_rx = [f for f in rx if not ln.parse_probe(f)]
    probes_rx = [ln.parse_probe(f)[1] for f in rx if ln.parse_probe(f)]
    ctrl = [f for f in frames if is_mac_ctrl(f)]
    data = [f for f in frames if not is_mac_ctrl(f)]
    assert [f for f in storm_rx if is_mac_ctrl(f)] == ctrl
    assert [f for f in storm_rx if not is_mac_ctrl(f)] == data
    assert sorted(probes_rx) == list(range(300))
    assert s0["rx_pkts"] == s0["tx_pkts"] == len(frames), s0
    assert s0["mac_ctrl_fwd"] == len(ctrl), s0
    assert s["rx_pkts"] == s["tx_pkts"] == len(frames) + 300, s
    for k in ("drop_loss", "drop_queue", "drop_nombuf", "drop_ctrl", "drop_multiseg", "drop_cut", "drop_rule",
              "rx_missed", "in_flight"):
        assert s[k] == 0, (k, s)
    # --stall-detect: every data frame's release is counted once, in the own share or as
    # excluded (a measured host stall delayed it); MAC control frames bypass the line
    e = json.load(open(js))["results"]["a2b"]["delay_err_us"]
    assert e["samples"] == len(data) + 300, e
    assert e["own_samples"] + e["stall_excluded"] == e["samples"], e
    print("lossy-emu: frames per attack: " + ", ".join(f"{k} {v}" for k, v in sent.items()))


def test_pfc_relay_hostile_storm(tmp_path):
    """The storms into the relay's Local port: every data frame is relayed byte for byte
    (the same multiset: the relay keeps order per priority, not across), every malformed
    MAC control frame counted in rx_pfc_bad and not relayed, a PFC storm at maximum quanta
    on all eight priorities obeyed and relayed for the lossless one, ended by an XON; then
    priority-3 data still passes whole. Batches of 64 frames stay below --xoff (64 KiB) so
    no buffer can overflow however slowly the relay runs."""
    import test_pfc_relay as tr
    topo = ln.Topology("hy%d" % (os.getpid() % 10000))
    topo.create()
    topo.ifs["e0"] = topo.ifs["a1"]
    net = type("Net", (), {})()
    net.topo, net.tmp, net.runs = topo, str(tmp_path), 0
    net.a, net.b, net.e = topo.socket("a"), topo.socket("b"), topo.socket("e")
    atk = Attacks(ln.MAC_A.hex(":"), ln.MAC_B.hex(":"), "10.99.0.1", "10.99.0.2")
    frames, sent = [], {}
    for name in MIDDLE_ATTACKS + ["pfc_storm"]:
        fs = getattr(atk, name)(PER_ATTACK)
        if name == "pfc_storm":
            xon = fs[0][:16] + struct.pack("!H", 0xFF) + b"\0" * 16
            fs = fs + [xon + b"\0" * (60 - len(xon))]
        sent[name] = len(fs)
        frames += fs
    bad = sent["pfc_bad_vector"]
    storm = sent["pfc_storm"]
    data = [f for f in frames if not is_mac_ctrl(f)]
    try:
        with tr.Relay(net, ["--link-rate", "10gbit", "--rtt", "1ms", "--watchdog", "off"]) as r:
            got = []
            for i in range(0, len(frames), 64):
                for f in frames[i:i + 64]:
                    net.a.send(f)
                n = min(len(frames), i + 64)
                wait_for(lambda: r.stats()["local"]["rx_pkts"] >= n,
                         lambda: f"relay received {r.stats()['local']['rx_pkts']} of {n}",
                         lambda: r.proc.poll() is None)
            wait_for(lambda: (got.extend(net.b.take()) or
                              sum(1 for _, f in got if not is_mac_ctrl(f)) >= len(data)),
                     lambda: f"{len(got)} frames at the far side: {r.stats()}",
                     lambda: r.proc.poll() is None)
            s = r.stats()
            for k in range(100):  # priority-3 data afterwards
                net.a.send(ln.probe(2, k, size=200, tos=tr.PRIO3_TOS))
            wait_for(lambda: (got.extend(net.b.take()) or
                              len(tr.probes(got, 2)) >= 100),
                     lambda: f"probes: {r.stats()}", lambda: r.proc.poll() is None)
            assert r.proc.poll() is None, "pfc-relay died"
        rep = r.report["results"]
    finally:
        for p in (net.a, net.b, net.e):
            p.close()
        topo.remove()
    rx = [f for _, f in got]
    rx_data = [f for f in rx if not is_mac_ctrl(f) and not ln.parse_probe(f)]
    assert sorted(rx_data) == sorted(data), (len(rx_data), len(data))
    assert sorted(tr.probes(got, 2)) == list(range(100))
    relayed = [ln.parse_pfc(f) for f in rx if is_mac_ctrl(f)]
    loc, rem = s["local"], s["remote"]
    assert loc["rx_pkts"] == len(frames), loc
    assert loc["rx_pfc_bad"] == bad and loc["rx_pfc"] == storm, loc
    # the storm relayed for the lossless priority (3) only, every frame, XON last
    assert s["pfc_relayed"] == storm == len(relayed) == rem["tx_pfc"], (s, len(relayed))
    assert all(en == 1 << 3 for en, _ in relayed) and relayed[-1][1][3] == 0, relayed[-3:]
    for path in ("l2r", "r2l"):
        for p in rep[path]["prio"]:
            assert all(p.get(k, 0) == 0 for k in ("drop_buffer_full", "drop_headroom_full",
                                                  "drop_watchdog", "drop_queue_slots")), p
    print("pfc-relay: frames per attack: " + ", ".join(f"{k} {v}" for k, v in sent.items()))
