#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Soak: the three binaries for a long run under mixed load and impairments, not in
make test (docs/reliability.md).

Two set-ups run side by side for SOAK_SECONDS (default 1800):
  - rnic A -> lossy-emu -> rnic B (python/rocewan/testbed/topo.py), write_bw -D with the
    SPEC `delay 1ms loss 0.1%` toward B and `delay 1ms` back;
  - pfc-relay (tests/netns/test_pfc_relay.py's set-up) relaying a paced probe stream
    from the local switch to the far side, with an XOFF / XON pair from the far side
    every second.
At the start (after 10 s) and at the end it samples each process's VmRSS; at the end it
reads the --json reports and checks that the counters reconcile: rnic B accepted, in
order, every request packet rnic A sent for the first time (rx_req_packets =
tx_req_packets), no completion error, the rnics' mempools hold what a short run leaves;
the emulator received = sent + drops by cause + in flight; the relay's Local port received
every probe and PFC frame sent, every probe reached the far side.

  bench/soak.py [BUILD_DIR]          (root; SOAK_SECONDS=N)
"""
import json
import os
import shutil
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import claims  # noqa: E402

B = claims.build_dir(sys.argv)
sys.path.insert(0, os.path.join(claims.ROOT, "python"))
sys.path.insert(0, os.path.join(claims.ROOT, "tests", "netns"))
from rocewan.testbed.topo import Topology  # noqa: E402
import test_pfc_relay as tr  # noqa: E402

ln = tr.ln
SIZE = 65536


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def pids_of(name, tags):
    """This soak's processes of binary @name: their command line carries one of @tags."""
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if os.path.basename(os.readlink(f"/proc/{p}/exe")) != name:
                    continue
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode()
                if any(t in cmd for t in tags):
                    out.append(int(p))
            except OSError:
                pass
    return out


def main():
    if os.geteuid() != 0:
        sys.exit("bench/soak.py: needs root (network namespaces)")
    secs = int(os.environ.get("SOAK_SECONDS", "1800"))
    tmp = tempfile.mkdtemp()
    js = {k: os.path.join(tmp, f"{k}.json") for k in ("emu", "A", "B", "relay")}
    res, rss0, rss1, relay_sent = {}, {}, {}, {"probes": 0, "pfc": 0, "got": 0}
    with Topology("sk", 4096) as topo:
        emu = topo.start_emu("delay 1ms loss 0.1%", "delay 1ms", 1, js["emu"])

        def pair():
            res["pair"] = topo.rnic_pair("write_bw", f"-s {SIZE} -D {secs} -m 4096",
                                         js["A"], js["B"], timeout=secs + 300)
        t = threading.Thread(target=pair)
        t.start()
        rt = ln.Topology("sk%d" % (os.getpid() % 1000))
        rt.create()
        try:
            rt.ifs["e0"] = rt.ifs["a1"]
            net = type("Net", (), {})()
            net.topo, net.tmp, net.runs = rt, tmp, 0
            net.a, net.b, net.e = rt.socket("a"), rt.socket("b"), rt.socket("e")
            with tr.Relay(net, ["--link-rate", "1gbit", "--rtt", "1ms", "--watchdog", "off"]) as r:
                tags = [f"--file-prefix {topo.prefix}", r.prefix]
                t0 = time.time()
                last_pfc = 0
                sampled = False
                while time.time() - t0 < secs and t.is_alive():
                    for _ in range(100):  # 1000 probes/s at priority 3
                        net.a.send(ln.probe(1, relay_sent["probes"], size=500, tos=tr.PRIO3_TOS))
                        relay_sent["probes"] += 1
                    if int(time.time() - t0) > last_pfc:  # an XOFF / XON pair every second
                        last_pfc = int(time.time() - t0)
                        net.b.send(ln.pfc_frame(src=ln.MAC_B, prio=3, quanta=0xFFFF))
                        net.b.send(ln.pfc_frame(src=ln.MAC_B, prio=3, quanta=0))
                        relay_sent["pfc"] += 2
                    relay_sent["got"] += len(tr.probes(net.b.take(), 1))
                    net.a.take()
                    if not sampled and time.time() - t0 > 10:
                        for name in ("rnic", "lossy-emu", "pfc-relay"):
                            for p in pids_of(name, tags):
                                rss0[(name, p)] = rss_kib(p)
                        sampled = True
                    time.sleep(0.1)
                res["ran"] = time.time() - t0  # SOAK_SECONDS, or less if the rnics stopped
                for name in ("rnic", "lossy-emu", "pfc-relay"):
                    for p in pids_of(name, tags):
                        rss1[(name, p)] = rss_kib(p)
                time.sleep(0.5)
                relay_sent["got"] += len(tr.probes(net.b.take(), 1))
                rs = r.stats()
            rep = r.report["results"]
            for p in (net.a, net.b, net.e):
                p.close()
        finally:
            rt.remove()
            t.join(secs + 400)
        topo.stop(emu)
    rc_a, out_a, rc_b, out_b = res["pair"]
    a, b = (json.load(open(js[k]))["results"] for k in ("A", "B"))
    e = json.load(open(js["emu"]))["results"]
    print(f"soak {secs} s (ran {res['ran']:.0f} s): rnic A exit {rc_a}, rnic B exit {rc_b}; A completed {a['iters']} "
          f"messages of {SIZE} B, {a['completion_errors']} completion errors")
    for side, out in (("A", out_a), ("B", out_b)):  # what the rnics said about the run
        for line in out.splitlines():
            if line.startswith("rnic") or "error" in line.lower() or "IBV_WC" in line:
                print(f"  rnic {side}: {line}")
    qa0 = a["qp_counters"]
    print("  rnic A QP: " + ", ".join(f"{k} {qa0[k]}" for k in (
        "tx_req_packets", "tx_retransmits", "timeouts", "retries", "rx_nak_seq_err",
        "retry_exceeded", "rnr_retry_exceeded") if k in qa0))
    print("RSS (KiB) start -> end per process:")
    for k in sorted(rss0):
        print(f"  {k[0]:10s} pid {k[1]:7d}: {rss0[k]} -> {rss1.get(k)}")
    checks = []
    qa, qb = a["qp_counters"], b["qp_counters"]
    checks.append(("rnic B accepted every first-sent request packet in order",
                   qb["rx_req_packets"] == qa["tx_req_packets"]))
    checks.append(("no completion error", a["completion_errors"] == 0 and rc_a == 0 and rc_b == 0))
    for side, r in (("A", a), ("B", b)):
        if "mempool" in r:
            print(f"  rnic {side} mempool in use at exit: {r['mempool']['in_use']} of "
                  f"{r['mempool']['size']}")
    for d in ("a2b", "b2a"):
        x = e[d]
        drops = sum(x[c] for c in ("drop_loss", "drop_queue", "drop_nombuf", "drop_ctrl",
                                   "drop_multiseg", "drop_cut", "drop_rule"))
        print(f"  lossy-emu {d}: rx {x['rx_pkts']} = tx {x['tx_pkts']} + drops {drops} "
              f"(loss {x['drop_loss']}) + in flight {x['in_flight']}; rx_missed {x['rx_missed']}")
        checks.append((f"lossy-emu {d} reconciles",
                       x["rx_pkts"] == x["tx_pkts"] + drops + x["in_flight"]))
    loc = rs["local"]
    p3 = rep["l2r"]["prio"][3]
    print(f"  pfc-relay: sent {relay_sent['probes']} probes, {relay_sent['pfc']} PFC frames; "
          f"local rx {loc['rx_pkts']}, l2r p3 enq {p3['enq_pkts']} tx {p3['tx_pkts']}, "
          f"far side got {relay_sent['got']}")
    checks.append(("pfc-relay received every frame sent to it",
                   loc["rx_pkts"] == relay_sent["probes"]))
    # the probe sender does not obey the relay's XOFF (a raw socket): when a host stall
    # leaves the Local-ingress queue past --xoff + --headroom the relay drops, counted by
    # cause; the relay reconciles: received = queued + dropped, queued = sent = far side
    drops = {k: p3[k] for k in p3 if k.startswith("drop_") and k != "drop_bytes" and p3[k]}
    print(f"  pfc-relay drops by cause (l2r p3): {drops or 'none'}; XOFFs it sent the "
          f"(PFC-deaf) probe sender: {p3.get('xoff_sent', 0)}")
    checks.append(("pfc-relay: every probe queued or dropped by a named cause",
                   p3["enq_pkts"] + sum(drops.values()) == relay_sent["probes"]))
    checks.append(("pfc-relay: every queued probe sent, the far side got each",
                   p3["enq_pkts"] == p3["tx_pkts"] == relay_sent["got"]))
    checks.append(("pfc-relay: drops only past an XOFF the sender ignored",
                   not drops or p3.get("xoff_sent", 0) > 0))
    for name, ok in checks:
        print(f"  {'ok  ' if ok else 'FAIL'} {name}")
    if all(ok for _, ok in checks):
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"  the --json reports are kept in {tmp}")
    sys.exit(0 if all(ok for _, ok in checks) else 1)


if __name__ == "__main__":
    main()
