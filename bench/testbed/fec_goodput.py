#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The FEC acceptance points, N rounds (docs/claims.md).

The path of `testbed reproduce lowar` (Zuo et al., LoWAR): a 200 Mb/s
bottleneck, 20 ms RTT, both rnics paced to 0.18 Gb/s, MTU 1024, 64 KiB WRITEs,
random loss both ways, a fixed window. Each round runs four points: gbn and
fec+gbn with xor:32,4 at 0.5 %, fec+gbn with xor:32,4 and with rs:32,4 at 1 %.
Targets, per round: xor:32,4 reaches at least 2x gbn's goodput at 0.5 %, and
rs:32,4 at least 1.2x xor:32,4's at 1 %.

  bench/testbed/fec_goodput.py [BUILD_DIR]   (root; BENCH_ROUNDS=N, default 10;
                                              BENCH_DURATION=S per point, default 4;
                                              BENCH_PREFIX=P namespaces, default tbfg)
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
from rocewan.testbed.repro.lowar import lowar_config  # noqa: E402

POINTS = [("gbn 0.5%", "gbn", "", "0.5%"), ("xor 0.5%", "fec+gbn", "xor:32,4", "0.5%"),
          ("xor 1%", "fec+gbn", "xor:32,4", "1%"), ("rs 1%", "fec+gbn", "rs:32,4", "1%")]
KEYS = ("tx_retransmits", "b_fec_rebuilt", "b_fec_unrecoverable", "b_fec_holds_repaired",
        "b_fec_holds_filled", "b_fec_release_deadline", "b_fec_release_progress",
        "b_fec_release_unrecoverable",
        "b_fec_rebuilt_after_release", "fec_tx_recoded", "fec_tx_flushes", "fec_tx_frames",
        "fec_tx_covered")


PREFIX = os.environ.get("BENCH_PREFIX", "tbfg")  # another than a concurrent run's


def main():
    if os.geteuid() != 0:
        sys.exit("bench/testbed/fec_goodput.py: needs root (network namespaces)")
    n = claims.rounds()
    c = claims.Claims("bench_fec_goodput", B)
    cfg = lowar_config(False)
    cfg["workload"]["duration"] = int(os.environ.get("BENCH_DURATION", "4"))
    with tempfile.TemporaryDirectory() as d:
        for r in range(n):
            g = {}
            for name, rec, code, loss in POINTS:
                cc = copy.deepcopy(cfg)
                cc["rnic"]["recovery"] = rec
                if code:
                    cc["rnic"]["fec"] = code
                cc["link"]["loss"] = f"random {loss}"
                try:
                    row = runner.run_once(cc, d, tag=f"r{r}", prefix=PREFIX, log=lambda *a: None)
                except Exception as e:  # a failed run is a failed round, reported
                    print(f"round {r + 1}/{n} {name}: run failed: {e}", flush=True)
                    row = None
                g[name] = row["goodput_gbps"] if row else float("nan")
                if row:
                    extra = " ".join(f"{k}={row.get(k, 0)}" for k in KEYS if row.get(k))
                    print(f"round {r + 1}/{n} {name:9s}: {g[name]:.4f} Gb/s {extra}", flush=True)
            x = g["xor 0.5%"] / g["gbn 0.5%"] if g["gbn 0.5%"] > 0 else float("nan")
            c.add("fec+gbn xor:32,4 / gbn at 0.5 %", ">= 2.0", x, x >= 2.0)
            y = g["rs 1%"] / g["xor 1%"] if g["xor 1%"] > 0 else float("nan")
            c.add("fec+gbn rs:32,4 / xor:32,4 at 1 %", ">= 1.2", y, y >= 1.2)
    c.report()


if __name__ == "__main__":
    main()
