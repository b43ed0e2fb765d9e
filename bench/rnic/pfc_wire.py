#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rnic PFC reaction on the wire, over N rounds (docs/claims.md).

Each round is tests/netns/test_rnic_pfc.py's run (write_bw A -> B, PFC injected toward
A once its data flows; capture on A's own veth end, kernel nanosecond timestamps):
  - data frames on the wire between the priority-3 XOFF and the XON (make test checks
    the bound that holds by construction: overshoot <= wire <= overshoot + XOFF window);
    the claim "reaction within one TX burst": <= 32 frames; the design bound: <= 64;
  - time from the XOFF to the last of them (target: 1 ms);
  - time from the XON to A's first data frame (target: 1 ms).

  bench/rnic/pfc_wire.py [BUILD_DIR]      (root; BENCH_ROUNDS=N, default 10)
"""
import os
import sys
import tempfile
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import claims  # noqa: E402

B = claims.build_dir(sys.argv)
sys.path.insert(0, os.path.join(claims.ROOT, "tests", "netns"))
import test_rnic_pfc as t  # noqa: E402  (the test's run, reused as is)


def main():
    if os.geteuid() != 0:
        sys.exit("bench/rnic/pfc_wire.py: needs root (network namespaces)")
    n = claims.rounds()
    c = claims.Claims("bench_pfc_wire", B)
    for r in range(n):
        with tempfile.TemporaryDirectory() as d:
            rc, _, frames, _ = t.run_with_pfc(Path(d), "")
        ts = t.run_with_pfc.last_ts
        _, i3, ion = t.timeline(frames)
        after = [k for k in range(i3, ion) if t.is_roce_data(*frames[k])]
        first_back = next((k for k in range(ion, len(frames)) if t.is_roce_data(*frames[k])), None)
        last_ms = (ts[after[-1]] - ts[i3]) / 1e6 if after else 0.0
        resume_ms = (ts[first_back] - ts[ion]) / 1e6 if first_back is not None else float("inf")
        pc = rc["results"]["port_counters"]
        print(f"round {r + 1}/{n}: {len(after)} data frames after the XOFF, last {last_ms:.3f} ms "
              f"after it; resumed {resume_ms:.3f} ms after the XON; overshoot "
              f"{pc['pfc_overshoot_frames']}, window {pc['pfc_xoff_window_max_frames']}", flush=True)
        c.add("frames on the wire after the XOFF <= one TX burst", "<= 32 frames (RNIC_BURST)",
              len(after), len(after) <= t.RNIC_BURST)
        c.add("frames on the wire after the XOFF <= two TX bursts (docs/pfc.md design bound)",
              "<= 64 frames", len(after), len(after) <= 2 * t.RNIC_BURST)
        c.add("last data frame after the XOFF (ms)", "< 1 ms", last_ms, last_ms < 1.0)
        c.add("first data frame after the XON (ms)", "< 1 ms", resume_ms, resume_ms < 1.0)
    c.report()


if __name__ == "__main__":
    main()
