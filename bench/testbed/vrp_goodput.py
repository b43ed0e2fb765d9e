#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The throughput bar for VRP (docs/vrp.md, docs/claims.md), N rounds.

The setting is `./testbed reproduce vrp`'s (python/rocewan/testbed/repro/vrp.py,
vrp_config): rnic A -> lossy-emu -> rnic B, a 200 Mb/s bottleneck, 20 ms RTT, 5 %
random loss on the data direction, both rnics paced to 0.18 Gb/s, MTU 1024, adaptive
RTO, 1 MiB WRITEs for 4 s. Each round runs gbn, then vrp with 10 % tolerated over
the default 64-packet window, with the round's seed. Targets, per round (the VRP bar):
vrp delivers at least 0.12 Gb/s intact (zero-filled bytes excluded),
at least 5x the intact goodput of gbn in the same round, and no more residual loss
than the 10 % it allowed. The same three targets for the per-WR variant (vrp-wr): the
10 % rides in each WRITE (rnic A's --vrp-wr loss=10), the receiver's own tolerance is 0 %.

  bench/testbed/vrp_goodput.py [BUILD_DIR]   (root; BENCH_ROUNDS=N, default 10)
"""
import copy
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import claims  # noqa: E402

B = claims.build_dir(sys.argv)
sys.path.insert(0, os.path.join(claims.ROOT, "python"))
from rocewan.testbed import runner  # noqa: E402
from rocewan.testbed.repro.vrp import vrp_config  # noqa: E402

# (name, recovery, receiver's --vrp-loss, A's --vrp-wr)
CASES = [("gbn", "gbn", None, ""), ("vrp", "vrp", 10.0, ""), ("vrp-wr", "vrp", 0.0, "loss=10")]


def main():
    if os.geteuid() != 0:
        sys.exit("bench/testbed/vrp_goodput.py: needs root (network namespaces)")
    n = claims.rounds()
    c = claims.Claims("bench_vrp_goodput", B)
    base = vrp_config(False)
    with tempfile.TemporaryDirectory() as out:
        for r in range(n):
            g = {}
            for name, mode, tol, wr in CASES:
                cfg = copy.deepcopy(base)
                cfg["rnic"]["recovery"] = mode
                if tol is not None:
                    cfg["rnic"]["vrp_loss"] = tol
                cfg["rnic"]["vrp_wr"] = wr
                cfg["run"]["seed"] = base["run"]["seed"] + r
                try:
                    row = runner.run_once(cfg, out, tag=f"r{r}{name}", prefix="tbvg",
                                          log=lambda *a: None)
                except runner.TopoError as e:
                    print(f"round {r + 1}/{n} {name}: testbed failed: {e}")
                    row = None
                g[name] = row
                if row:
                    print(f"round {r + 1}/{n} {name:6s}: {row['goodput_intact_gbps']:.4f} Gb/s "
                          f"intact, residual {100 * row['residual_loss']:.2f} %, retransmits "
                          f"{row['tx_retransmits']}, timeouts {row['timeouts']}, emu loss "
                          f"{row['loss_rate_measured']:.4f}, per-WR msgs {row['vrp_wr_tol_msgs']}",
                          flush=True)
            b = g["gbn"]
            for name, label in (("vrp", "vrp 10 %"), ("vrp-wr", "vrp-wr 10 % (per WR)")):
                v = g[name]
                intact = v["goodput_intact_gbps"] if v else float("nan")
                x = intact / b["goodput_intact_gbps"] if v and b and b["goodput_intact_gbps"] > 0 \
                    else float("nan")
                resid = 100 * v["residual_loss"] if v else float("nan")
                c.add(f"{label}: intact goodput (Gb/s)", ">= 0.12", intact, intact >= 0.12)
                c.add(f"{label}: intact goodput / gbn's (same round)", ">= 5", x, x >= 5)
                c.add(f"{label}: residual loss (%)", "<= 10", resid, resid <= 10)
                c.add(f"{label}: the VRP bar (all three)", "all hold", intact,
                      intact >= 0.12 and x >= 5 and resid <= 10)
                c.add(f"{label}: timeouts (reported)", "none (reported)",
                      v["timeouts"] if v else float("nan"), True)
    c.report()


if __name__ == "__main__":
    main()
