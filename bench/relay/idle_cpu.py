#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pfc-relay: the CPU share of an idle relay against the 35 % target, N rounds
(docs/claims.md). Moved from tests/netns/test_pfc_relay.py::test_idle_relay_backs_off,
which now asserts the exact fact (an idle loop sleeps, --busy-poll never does).

Each round starts a relay as that test does (10 Gb/s, RTT 1 ms, default --idle-max
100us, no traffic), lets it settle 0.3 s, and reads its user + system CPU time from
/proc/PID/stat over 2 s of wall time: the share of one core. Spinning would be 100 %.

  bench/relay/idle_cpu.py [BUILD_DIR]      (root; BENCH_ROUNDS=N, default 10)
"""
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import claims  # noqa: E402

B = claims.build_dir(sys.argv)
sys.path.insert(0, os.path.join(claims.ROOT, "tests", "netns"))
import test_pfc_relay as t  # noqa: E402  (its Relay wrapper, reused)

ln = t.ln
TARGET = 0.35


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    if os.geteuid() != 0:
        sys.exit("bench/relay/idle_cpu.py: needs root (network namespaces)")
    n = claims.rounds()
    c = claims.Claims("bench_relay_idle_cpu", B)
    topo = ln.Topology("h5c%d" % (os.getpid() % 1000))
    topo.create()
    tmp = tempfile.mkdtemp()
    try:
        topo.ifs["e0"] = topo.ifs["a1"]
        net = type("Net", (), {})()
        net.topo, net.tmp, net.runs = topo, tmp, 0
        net.a, net.b, net.e = topo.socket("a"), topo.socket("b"), topo.socket("e")
        for r in range(n):
            with t.Relay(net, ["--link-rate", "10gbit", "--rtt", "1ms"]) as relay:
                pid = ln.child_pids(relay.proc.pid)[-1]
                time.sleep(0.3)
                c0, t0 = cpu_s(pid), time.time()
                time.sleep(2.0)
                share = (cpu_s(pid) - c0) / (time.time() - t0)
            res = relay.report["results"]
            print(f"round {r + 1}/{n}: idle pfc-relay {100 * share:.1f} % of one core "
                  f"({res['loops']} loops, {res['sleeps']} sleeps)", flush=True)
            c.add("idle relay: share of one core (%)", "< 35 %", round(100 * share, 1),
                  share < TARGET)
        for p in (net.a, net.b, net.e):
            p.close()
    finally:
        topo.remove()
        shutil.rmtree(tmp, ignore_errors=True)
    c.report()


if __name__ == "__main__":
    main()
