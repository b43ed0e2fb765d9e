#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pfc-relay: PFC relay latency Local -> Remote against the 1 ms target, N rounds per
mode (docs/claims.md).

Each round starts a relay as tests/netns/test_pfc_relay.py does (Local 10 Gb/s, Remote
1 Gb/s, priorities 3 and 4 lossless), sends 150 PFC frames into its Local port 2 ms
apart, and reads:
  - the wire: the far side's RX kernel timestamp minus the Local port's (same clock):
    p50, p99 and max per round;
  - inside the relay: from the RX burst that carried the PFC to the TX burst of the
    relayed frame returning (its --json pfc_relay_latency_ns: mean and max; the relay
    keeps no histogram, so the p99 inside the relay is bounded by its max: a round whose
    max is under 1 ms has its p99 under 1 ms).
Modes: the default idle back-off, and the same under SCHED_FIFO (chrt -f 10).

  bench/relay/latency.py [BUILD_DIR]      (root; BENCH_ROUNDS=N, default 10)
"""
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import claims  # noqa: E402

B = claims.build_dir(sys.argv)
sys.path.insert(0, os.path.join(claims.ROOT, "tests", "netns"))
import test_pfc_relay as t  # noqa: E402  (its Relay wrapper and relay_latency, reused)

ln = t.ln
ARGS = ["--local-rate", "10gbit", "--remote-rate", "1gbit", "--rtt", "1ms",
        "--lossless", "3,4", "--watchdog", "off"]


def main():
    if os.geteuid() != 0:
        sys.exit("bench/relay/latency.py: needs root (network namespaces)")
    n = claims.rounds()
    c = claims.Claims("bench_relay_latency", B)
    topo = ln.Topology("h5b%d" % (os.getpid() % 1000))
    topo.create()
    tmp = tempfile.mkdtemp()
    try:
        topo.ifs["e0"] = topo.ifs["a1"]
        net = type("Net", (), {})()
        net.topo, net.tmp, net.runs = topo, tmp, 0
        net.a, net.b, net.e = topo.socket("a"), topo.socket("b"), topo.socket("e")
        for r in range(n):
            for mode, rt in (("idle-backoff", False), ("idle-backoff SCHED_FIFO", True)):
                with t.Relay(net, list(ARGS), rt=rt) as relay:
                    lat, out, _ = t.relay_latency(net)
                lat_in = relay.report["results"]["pfc_relay_latency_ns"]
                p50, p99, mx = statistics.median(lat), t.pct(lat, 0.99), max(lat)
                own_max, own_mean = lat_in["max"] / 1e3, lat_in["mean"] / 1e3
                print(f"round {r + 1}/{n} {mode}: {len(out)}/150 relayed; wire p50 {p50:.1f} us, "
                      f"p99 {p99:.1f} us, max {mx:.1f} us; inside the relay mean {own_mean:.1f} us, "
                      f"max {own_max:.1f} us", flush=True)
                c.add(f"{mode}: wire p99 (us)", "< 1000 us", p99, p99 < 1000 and len(out) == 150)
                c.add(f"{mode}: wire max (us)", "< 1000 us", mx, mx < 1000 and len(out) == 150)
                c.add(f"{mode}: inside the relay, max (bounds its p99) (us)", "< 1000 us", own_max,
                      own_max < 1000)
                t.quiet(net, 0.1)
        for p in (net.a, net.b, net.e):
            p.close()
    finally:
        topo.remove()
        shutil.rmtree(tmp, ignore_errors=True)
    c.report()


if __name__ == "__main__":
    main()
