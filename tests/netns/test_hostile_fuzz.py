# SPDX-License-Identifier: BSD-3-Clause
"""Scapy fuzz() storms per layer, oversized and runt frames at each binary; every frame reconciled exactly.

The frames (tests/netns/fuzz_frames.py) are Scapy ``fuzz()`` frames of the RoCEv2 (BTH and
its extension headers), PFC (MAC control), ARP, ICMPv6 neighbour discovery and IPv4/UDP
layers, 200 a layer from a seeded RNG, plus 200 oversized (9 KB, larger than the ports'
frame and mbuf), 200 beyond the rnic's RoCE MTU and 200 runts. They are sent from a raw
socket in batches, each waited for on the binary's own receive counter (an event; the
30 s limit is a hang guard only). The count sent is taken on the sender's own side: the
sending veth's tx_packets delta, which must equal the frames the harness handed to its
socket (tx_dropped 0), so no frame is assumed delivered.

One thing stands between the veth and every binary: DPDK 22.11's af_packet PMD joins
its sockets to a PACKET_FANOUT group with PACKET_FANOUT_FLAG_DEFRAG, so the kernel holds
IPv4 fragments for reassembly (ip_check_defrag) and the binary never sees them. The
harness counts such frames with the kernel's own test (``kernel_defrag_takes``) and the
reconciliation is: sent = received by the binary + held by the kernel's defrag, and
received = the sum of the binary's per-reason counters, exactly.

Afterwards: the process is alive, a real transfer completes byte-exact, and the mempool
in use is back to its start (the rnic: what a storm-free run leaves; the middle boxes:
nothing in flight and 0 mbufs in use once idle).
"""
import json
import os
import struct
import sys
import time

from conftest import sh
from test_hostile import (clean_run, finish, mac_of, no_ipv6, raw_socket,  # noqa: F401
                          run_client, run_server, wait_for)
from rocewan.testbed.telemetry import Telemetry
import fuzz_frames as ff

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dpdk", "emu"))
import lemu_net as ln  # noqa: E402

JUMBO = 9216   # the veths' MTU: the kernel passes the 9 KB frames on to the binaries
BATCH = 200    # frames in flight at most: below every af_packet ring on the way


def veth_tx(ns, ifname):
    """(tx_packets, tx_dropped) of a veth, read in its namespace."""
    s = json.loads(sh(f"ip -n {ns} -s -j link show {ifname}").stdout)[0]["stats64"]["tx"]
    return s["packets"], s["dropped"]


def kernel_defrag_takes(f):
    """True if the kernel's af_packet fanout defrag (ip_check_defrag) holds this frame: an
    untagged IPv4 frame with a sane header (version 4, IHL >= 5, total length within the
    frame and not below the header) that is a fragment (MF set or a fragment offset)."""
    if len(f) < 34 or f[12:14] != b"\x08\x00":
        return False
    ver_ihl, tot, frag = f[14], struct.unpack_from("!H", f, 16)[0], struct.unpack_from("!H", f, 20)[0]
    if ver_ihl >> 4 != 4 or ver_ihl & 15 < 5:
        return False
    if len(f) - 14 < tot or tot < (ver_ihl & 15) * 4:
        return False
    return frag & 0x3FFF != 0


def ring_cuts(f, framesz):
    """True if an af_packet ring of @framesz cuts this frame (tpacket_rcv puts the MAC
    header 66 bytes into the slot) and its IPv4 length then says more than arrived: the
    frames the middle boxes count as cut (drop_cut, rx_cut)."""
    return len(f) > framesz - 66 and f[12:14] == b"\x08\x00" and f[14] >> 4 == 4


def storm(frames, send, received, alive, what, batch=BATCH):
    """Send @frames in batches; after each, wait until @received() (the binary's own
    count since the start) accounts for every frame the kernel hands on. Returns the
    frames the kernel's defrag held."""
    held = total = 0
    for i in range(0, len(frames), batch):
        part = frames[i:i + batch]
        for f in part:
            send(f)
        total += len(part)
        held += sum(kernel_defrag_takes(f) for f in part)
        wait_for(lambda: received() >= total - held,
                 lambda: f"{what}: {received()} of {total - held} received", alive)
    return held


# ---- rnic ---------------------------------------------------------------------------------

# the rnic's per-reason counters for a received frame: port level (rnic_rx.c, rnic_neigh.c,
# rnic_pfc.c, rnic_poll.c), RoCE frames then at the device (roce_recv.c)
PORT_REASONS = ["rx_multiseg", "rx_arp_req", "rx_arp_reply", "rx_arp_other", "rx_icmp_echo",
                "rx_not_for_us", "rx_ip_malformed", "rx_nd_advert", "rx_icmp6_echo", "rx_nd_solicit", "rx_nd_other",
                "rx_pfc", "rx_other", "rx_cut", "rx_roce"]
RNIC_FRAMESZ = 2048  # conftest.eal()'s af_packet ring frame
DEV_DROPS = ["rx_drop_malformed", "rx_drop_icrc", "rx_drop_not_for_us", "rx_drop_bad_qpn",
             "rx_drop_bad_transport", "rx_drop_bad_pkey", "rx_drop_bad_qkey", "rx_drop_bad_src",
             "rx_drop_qp_state"]


def test_rnic_fuzz_storm(veth_pair, tmp_path, clean_run):  # noqa: F811
    vp = veth_pair
    no_ipv6(vp)
    for n, i in zip(vp.ns, vp.ifs):
        sh(f"ip -n {n} link set {i} mtu {JUMBO}")
    prefix = "hfz" + vp.ns[1][-6:]
    srv, sjs, seen = run_server(vp, tmp_path, prefix, "fuzz")
    smac, dmac = mac_of(vp.ns[0], vp.ifs[0]), mac_of(vp.ns[1], vp.ifs[1])
    layers = ff.all_frames(smac, dmac, vp.rip[0], vp.rip[1])
    sock = raw_socket(vp.ns[0], vp.ifs[0])
    tel = Telemetry(f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2", 30, lambda: srv.poll() is None)
    alive = lambda: srv.poll() is None  # noqa: E731
    rows = {}
    try:
        deadline = time.time() + 30
        while "/rnic/port/stats" not in tel.get("/"):
            assert time.time() < deadline and alive(), "/rnic/port/stats never registered"
            time.sleep(0.05)

        def stats():
            st = tel.get("/rnic/port/stats")
            return st, st["device"]
        t0 = veth_tx(vp.ns[0], vp.ifs[0])
        for layer, frames in layers.items():
            pb, db = stats()
            tb = veth_tx(vp.ns[0], vp.ifs[0])
            held = storm(frames, sock.send, lambda: stats()[0]["rx_frames"] - pb["rx_frames"],
                         alive, f"rnic {layer}")
            pa, da = stats()
            ta = veth_tx(vp.ns[0], vp.ifs[0])
            got = pa["rx_frames"] - pb["rx_frames"]
            port = {k: pa[k] - pb[k] for k in PORT_REASONS if pa[k] != pb[k]}
            dev = {k: da[k] - db[k] for k in DEV_DROPS if da[k] != db[k]}
            rows[layer] = (len(frames), ta[0] - tb[0], held, got, port, dev)
            # sent on the sender's side = received + held by the kernel's defrag, exactly
            assert (ta[0] - tb[0], ta[1] - tb[1]) == (len(frames), 0), (layer, ta, tb)
            assert got + held == len(frames), (layer, got, held)
            # every received frame under exactly one per-reason counter
            assert sum(port.values()) == got, (layer, got, port)
            # every RoCE frame dropped under one reason (no QP is connected yet)
            assert da["rx_packets"] - db["rx_packets"] == port.get("rx_roce", 0), (layer, dev)
            assert sum(dev.values()) == port.get("rx_roce", 0), (layer, port, dev)
            # the oversized frames, cut by the port's ring, are counted as cut
            assert port.get("rx_cut", 0) == sum(ring_cuts(f, RNIC_FRAMESZ) for f in frames), port
        # end any pause the fuzzed PFC frames left: one XON on every priority
        xon = (bytes.fromhex("0180c2000001") + bytes.fromhex(smac.replace(":", "")) + b"\x88\x08"
               + struct.pack("!HH8H", 0x0101, 0xFF, *([0] * 8)))
        n = stats()[0]["rx_frames"]
        sock.send(xon + b"\0" * (60 - len(xon)))
        wait_for(lambda: stats()[0]["rx_frames"] > n, lambda: "XON not received", alive)
        assert veth_tx(vp.ns[0], vp.ifs[0])[0] - t0[0] == sum(map(len, layers.values())) + 1
    finally:
        tel.close()
        sock.close()
    cli, cjs = run_client(vp, tmp_path, "fuzz")
    srv_res, _ = finish(srv, seen, cli, cjs, sjs)
    for layer, (n, tx, held, got, port, dev) in rows.items():
        print(f"rnic {layer}: sent {n} (veth tx {tx}), kernel defrag held {held}, received {got}: "
              f"port {port}, device {dev}")
    assert srv_res["pmd_counters"]["imissed"] == 0, srv_res["pmd_counters"]
    assert srv_res["mempool"]["in_use"] == clean_run[0]["mempool"]["in_use"], (
        srv_res["mempool"], clean_run[0]["mempool"])


# ---- lossy-emu ------------------------------------------------------------------------------

LEMU = os.path.join(os.environ.get("ROCEWAN_BUILD", os.path.join(HERE, "..", "..", "build")),
                    "app", "lossy-emu", "lossy-emu")
LEMU_DROPS = ["drop_loss", "drop_queue", "drop_nombuf", "drop_ctrl", "drop_multiseg", "drop_cut",
              "drop_rule"]
LEMU_FRAMESZ = 4608  # lemu_net.Emu's af_packet ring frame


def test_lossy_emu_fuzz_storm(tmp_path):
    """An empty SPEC is a wire: every frame the kernel hands to lossy-emu comes out of the
    other port, byte for byte (data in order, MAC control in order), or is counted under
    a drop reason; rx_pkts = tx_pkts + drops, nothing in flight; then a probe stream
    passes whole."""
    topo = ln.Topology("hf%d" % (os.getpid() % 10000), mtu=JUMBO)
    topo.create()
    a, b = topo.socket("a"), topo.socket("b")
    emu = ln.Emu(LEMU, topo, "lemuhf%d" % os.getpid(), str(tmp_path))
    layers = ff.all_frames(ln.MAC_A.hex(":"), ln.MAC_B.hex(":"), "10.99.0.1", "10.99.0.2")
    rows, got = {}, []
    try:
        emu.start(["--seed", "1", "--json", str(tmp_path / "emu.json")])
        alive = lambda: emu.proc.poll() is None  # noqa: E731

        def st():
            return emu.tel.cmd("/lossy_emu/stats,a2b")["/lossy_emu/stats"]
        wait_for(lambda: st() is not None, lambda: "no stats", alive)
        pool0 = st()["mempool_in_use"]
        for layer, frames in layers.items():
            sb, tb = st(), veth_tx(topo.ns["a"], topo.ifs["a0"])
            held = storm(frames, a.send, lambda: st()["rx_pkts"] - sb["rx_pkts"], alive,
                         f"lossy-emu {layer}")
            n_out = len(frames) - held
            wait_for(lambda: st()["tx_pkts"] + sum(st()[k] for k in LEMU_DROPS)
                     - sb["tx_pkts"] - sum(sb[k] for k in LEMU_DROPS) >= n_out,
                     lambda: f"{layer}: {st()}", alive)
            wait_for(lambda: (got.extend((layer, f) for _, f in b.take())
                              or sum(1 for g in got if g[0] == layer) >= st()["tx_pkts"] - sb["tx_pkts"]),
                     lambda: f"{layer}: far side {sum(1 for g in got if g[0] == layer)}", alive)
            sa, ta = st(), veth_tx(topo.ns["a"], topo.ifs["a0"])
            d = {k: sa[k] - sb[k] for k in ["rx_pkts", "tx_pkts", "mac_ctrl_fwd"] + LEMU_DROPS
                 if sa[k] != sb[k]}
            rows[layer] = (len(frames), ta[0] - tb[0], held, d)
            assert (ta[0] - tb[0], ta[1] - tb[1]) == (len(frames), 0), (layer, ta, tb)
            assert d.get("rx_pkts", 0) + held == len(frames), (layer, held, d)
            assert d.get("rx_pkts", 0) == d.get("tx_pkts", 0) + sum(d.get(k, 0) for k in LEMU_DROPS), d
            assert sa["in_flight"] == 0, sa
            # the oversized frames, cut by the port's ring, are dropped as cut, not forwarded
            assert d.get("drop_cut", 0) == sum(ring_cuts(f, LEMU_FRAMESZ) for f in frames), d
        for k in range(300):  # a real stream afterwards
            a.send(ln.probe(1, k, size=1000))
        wait_for(lambda: (got.extend(("probe", f) for _, f in b.take())
                          or sum(1 for g in got if g[0] == "probe") >= 300),
                 lambda: f"probe stream: {st()}", alive)
        s = st()
        assert alive(), "lossy-emu died"
    finally:
        rc = emu.stop()
        a.close()
        b.close()
        topo.remove()
    assert rc == 0, "".join(emu.out)[-3000:]
    for layer, (n, tx, held, d) in rows.items():
        print(f"lossy-emu {layer}: sent {n} (veth tx {tx}), kernel defrag held {held}: {d}")
    # byte for byte: what came out is what went in, less the kernel-held fragments
    for layer, frames in layers.items():
        out = [f for g, f in got if g == layer]
        exp = [f for f in frames if not kernel_defrag_takes(f) and not ring_cuts(f, LEMU_FRAMESZ)]
        ctrl = [f for f in exp if f[12:14] == b"\x88\x08"]
        assert [f for f in out if f[12:14] == b"\x88\x08"] == ctrl, layer
        assert [f for f in out if f[12:14] != b"\x88\x08"] == [f for f in exp if f[12:14] != b"\x88\x08"], (
            layer, len(out), len(exp))
    assert sorted(ln.parse_probe(f)[1] for g, f in got if g == "probe") == list(range(300))
    assert s["in_flight"] == 0 and s["rx_missed"] == 0, s
    # 0 leaked mbufs: idle again, the pool holds what it held before the storm
    assert s["mempool_in_use"] == pool0, (s["mempool_in_use"], pool0)


# ---- pfc-relay ------------------------------------------------------------------------------

RELAY_FRAMESZ = 2048  # test_pfc_relay.Relay's af_packet ring frame
RELAY_DROPS = ("drop_buffer_full", "drop_headroom_full", "drop_watchdog", "drop_queue_slots")


def test_pfc_relay_fuzz_storm(tmp_path):
    """Into the relay's Local port, in batches of 64 frames: every frame the kernel hands
    on is counted once, as a MAC control frame (rx_pfc, rx_pfc_bad or rx_pause_ignored),
    as cut (rx_cut: the oversized frames) or as data, and every data frame reaches the far
    side byte for byte (the same multiset per layer); the PFC frames relayed for the
    lossless priority reach it too; no drop of any other cause; then priority-3 data
    passes whole and the pool holds what it held before."""
    import test_pfc_relay as tr
    topo = ln.Topology("hz%d" % (os.getpid() % 10000), mtu=JUMBO)
    topo.create()
    topo.ifs["e0"] = topo.ifs["a1"]
    net = type("Net", (), {})()
    net.topo, net.tmp, net.runs = topo, str(tmp_path), 0
    net.a, net.b, net.e = topo.socket("a"), topo.socket("b"), topo.socket("e")
    layers = ff.all_frames(ln.MAC_A.hex(":"), ln.MAC_B.hex(":"), "10.99.0.1", "10.99.0.2")
    rows, got = {}, []
    ctrl = b"\x88\x08"
    try:
        with tr.Relay(net, ["--link-rate", "10gbit", "--rtt", "1ms", "--watchdog", "off"]) as r:
            alive = lambda: r.proc.poll() is None  # noqa: E731
            pool0 = r.stats()["mempool_in_use"]
            for layer, frames in layers.items():
                sb, tb = r.stats(), veth_tx(topo.ns["a"], topo.ifs["a0"])
                held = storm(frames, net.a.send,
                             lambda: r.stats()["local"]["rx_pkts"] - sb["local"]["rx_pkts"],
                             alive, f"pfc-relay {layer}", batch=64)
                n_data = sum(1 for f in frames if f[12:14] != ctrl and not kernel_defrag_takes(f)
                             and not ring_cuts(f, RELAY_FRAMESZ))
                wait_for(lambda: (got.extend((layer, f) for _, f in net.b.take()) or
                                  sum(1 for g, f in got if g == layer and f[12:14] != ctrl) >= n_data
                                  and sum(1 for g, f in got if g == layer and f[12:14] == ctrl)
                                  >= r.stats()["remote"]["tx_pfc"] - sb["remote"]["tx_pfc"]),
                         lambda: f"{layer}: far side {sum(1 for g in got if g[0] == layer)}: {r.stats()}",
                         alive)
                sa, ta = r.stats(), veth_tx(topo.ns["a"], topo.ifs["a0"])
                loc = {k: sa["local"][k] - sb["local"][k] for k in sa["local"]
                       if sa["local"][k] != sb["local"][k]}
                loc["tx_pfc_remote"] = sa["remote"]["tx_pfc"] - sb["remote"]["tx_pfc"]
                out = [f for g, f in got if g == layer]
                rows[layer] = (len(frames), ta[0] - tb[0], held, loc,
                               sum(1 for f in out if f[12:14] != ctrl))
                assert (ta[0] - tb[0], ta[1] - tb[1]) == (len(frames), 0), (layer, ta, tb)
                assert loc.get("rx_pkts", 0) + held == len(frames), (layer, held, loc)
                # every frame received under exactly one reason: MAC control (PFC, malformed,
                # 802.3x PAUSE), cut, or data relayed to the far side
                data_out = sum(1 for f in out if f[12:14] != ctrl)
                assert (loc.get("rx_pfc", 0) + loc.get("rx_pfc_bad", 0) + loc.get("rx_pause_ignored", 0)
                        + loc.get("rx_cut", 0) + data_out) == loc.get("rx_pkts", 0), (layer, loc, data_out)
                assert loc.get("rx_cut", 0) == sum(ring_cuts(f, RELAY_FRAMESZ) for f in frames), loc
                # byte for byte: the data frames the kernel handed on and the port did not cut
                exp = [f for f in frames if f[12:14] != ctrl and not kernel_defrag_takes(f)
                       and not ring_cuts(f, RELAY_FRAMESZ)]
                assert sorted(f for f in out if f[12:14] != ctrl) == sorted(exp), layer
                assert sum(1 for f in out if f[12:14] == ctrl) == loc["tx_pfc_remote"], loc
            s = r.stats()
            for k in range(100):  # priority-3 data afterwards
                net.a.send(ln.probe(2, k, size=200, tos=tr.PRIO3_TOS))
            wait_for(lambda: (got.extend(("probe", f) for _, f in net.b.take()) or
                              len(tr.probes([(0, f) for g, f in got if g == "probe"], 2)) >= 100),
                     lambda: f"probes: {r.stats()}", alive)
            wait_for(lambda: r.stats()["mempool_in_use"] == pool0,
                     lambda: f"mempool in use {r.stats()['mempool_in_use']}, was {pool0}", alive)
            assert alive(), "pfc-relay died"
        rep = r.report["results"]
    finally:
        for p in (net.a, net.b, net.e):
            p.close()
        topo.remove()
    for layer, (n, tx, held, loc, data_out) in rows.items():
        print(f"pfc-relay {layer}: sent {n} (veth tx {tx}), kernel defrag held {held}: "
              f"Local {loc}, data at the far side {data_out}")
    assert sorted(tr.probes([(0, f) for g, f in got if g == "probe"], 2)) == list(range(100))
    for path in ("l2r", "r2l"):
        for p in rep[path]["prio"]:
            assert all(p.get(k, 0) == 0 for k in RELAY_DROPS), p
    assert s["local"]["rx_pool_empty"] == 0, s
