#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""lossy-emu's timing on af_packet, N rounds (docs/claims.md): the rate limiter's
throughput and the PFC generator's timing. Moved from tests/dpdk/emu/test_lemu_e2e.py,
whose t_rate and t_pfc now assert only counts and order (every probe once, in order;
XOFF first, XON last, XOFF at the threshold, every PFC frame counted received).

Per round, on one emulator run in network namespaces (tests/dpdk/emu/lemu_net.py):
- `rate 10mbit`: 500 probes of 1000 B sent at once; the receiver's throughput from the
  first to the last kernel RX stamp, target within 10 % of 10 Mbit/s;
- `rate 1mbit limit-bytes 200kb pfc xoff 20kb xon 5kb`: 40 probes of 1000 B sent at
  once; at side A, the first XOFF within 200 ms of the first send, at least 10 XOFF
  frames (refreshed while the queue is above xon), and the XOFF-to-XON span within
  30 % of the drain time from the peak down to xon ((40 x 1000 B - 5 KiB) at 1 Mbit/s).

  bench/emu/lemu_timing.py [BUILD_DIR]      (root; BENCH_ROUNDS=N, default 10)
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import claims  # noqa: E402

B = claims.build_dir(sys.argv)
sys.path.insert(0, os.path.join(claims.ROOT, "tests", "dpdk", "emu"))
import test_lemu_e2e as t  # noqa: E402  (its Ctx, probes and waits, reused)

ln = t.ln


def rate_round(c):
    c.set("a2b", "rate 10mbit")
    n, size, run = 500, 1000, c.new_run()
    c.quiet()
    t.send_probes(c.a, run, n, size=size)
    got = t.collect(c, "a2b", run, n)
    if len(got) != n:
        return float("nan")
    ts = sorted(g[0] for g in got)
    return (n - 1) * size * 8 / ((ts[-1] - ts[0]) / 1e9) / 1e6


def pfc_round(c):
    c.set("a2b", "rate 1mbit limit-bytes 200kb pfc xoff 20kb xon 5kb")
    n, size, run = 40, 1000, c.new_run()
    c.quiet()
    t0 = time.time_ns()  # the sockets' RX stamps are CLOCK_REALTIME
    t.send_probes(c.a, run, n, size=size)
    t.collect(c, "a2b", run, n)
    sent = c.stats("a2b")["pfc_sent"] - c.mark["a2b"]["pfc_sent"]
    pfcs, deadline = [], time.time() + t.GUARD_S
    while len(pfcs) < sent and time.time() < deadline:
        pfcs += [(ts, p) for ts, p in ((ts, ln.parse_pfc(f)) for ts, f in c.a.take()) if p]
        time.sleep(0.02)
    if not pfcs or pfcs[-1][1][1][3] != 0:
        return float("nan"), 0, float("nan"), float("nan")
    xoffs = sum(1 for _, p in pfcs if p[1][3] == 0xFFFF)
    first_ms = (pfcs[0][0] - t0) / 1e6
    span_ms = (pfcs[-1][0] - pfcs[0][0]) / 1e6
    expect_ms = (n * size - 5120) * 8 / 1e6 * 1e3
    return first_ms, xoffs, span_ms, expect_ms


def main():
    if os.geteuid() != 0:
        sys.exit("bench/emu/lemu_timing.py: needs root (network namespaces)")
    n = claims.rounds()
    cl = claims.Claims("bench_emu_lemu_timing", B)
    c = t.Ctx(argparse.Namespace(build=B, verbose=False, k="", lcores="0-1"))
    try:
        c.topo.create()
        c.a, c.b = c.topo.socket("a"), c.topo.socket("b")
        c.emu = ln.Emu(c.binary, c.topo, "lemu%s" % c.tag, c.tmp)
        c.emu.start(["--a2b", "", "--b2a", ""], lcores="0-1")
        deadline = time.time() + 30  # the ready line comes just before the data path runs
        while "data path is not running" in str(c.emu.tel.cmd("/lossy_emu/set,a2b,")):
            if time.time() > deadline:
                sys.exit("lossy-emu's data path did not start within 30 s")
            time.sleep(0.05)
        for r in range(n):
            mbps = rate_round(c)
            cl.add("rate 10mbit: receiver throughput (Mbit/s)", "within 10 % of 10", round(mbps, 3),
                   abs(mbps / 10 - 1) < 0.10)
            first_ms, xoffs, span_ms, expect_ms = pfc_round(c)
            cl.add("pfc: first XOFF after the first send (ms)", "< 200 ms", round(first_ms, 2),
                   first_ms < 200)
            cl.add("pfc: XOFF frames before the XON (refreshes)", ">= 10", xoffs, xoffs >= 10)
            cl.add("pfc: XOFF-to-XON span / drain time from the peak to xon", "0.7 .. 1.3",
                   round(span_ms / expect_ms, 3), 0.7 < span_ms / expect_ms < 1.3)
            print(f"round {r + 1}/{n}: rate {mbps:.3f} Mbit/s; pfc first XOFF {first_ms:.1f} ms, "
                  f"{xoffs} XOFF, span {span_ms:.1f} ms of {expect_ms:.0f} ms", flush=True)
    finally:
        if c.emu:
            c.emu.kill()
        for p in (c.a, c.b):
            if p:
                p.close()
        c.topo.remove()
    cl.report()


if __name__ == "__main__":
    main()
