#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Swing (Chen et al., TPDS 2023; docs/references.md): relay B's one-BDP buffer claim bracketed from below, N rounds
(docs/claims.md).

The chain of tests/testbed/test_swing.py (rnic A - relay A - 20 ms each way -
relay B - a switch draining at half the link rate, sending PFC - rnic B; 1 Gb/s,
BDP 5 MB), with relay B's buffer at 0.5, 0.6, 0.9, 1.0 and 1.1 BDP, and native PFC
with 2 BDP at the switch. Per run: relay B's drops and their fraction of the data
it received, its peak occupancy in BDP, rnic A's retransmissions.
Claims: the relay needs one BDP (zero drops at 1.0 and 1.1 BDP; Swing: PFC-Relay
needs 1 BDP, native PFC 2 BDP), and it does need about that much (drops at 0.5 and
0.6 BDP: the bracket from below).

  bench/testbed/swing_bracket.py [BUILD_DIR]   (root; BENCH_ROUNDS=N, default 10;
                                                 SWING_DURATION=s per run, default 3)
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import claims  # noqa: E402

B = claims.build_dir(sys.argv)
sys.path.insert(0, os.path.join(claims.ROOT, "python"))
from rocewan.testbed import swing  # noqa: E402

BUFFERS = [0.5, 0.6, 0.9, 1.0, 1.1]


def main():
    if os.geteuid() != 0:
        sys.exit("bench/testbed/swing_bracket.py: needs root (network namespaces)")
    n = claims.rounds()
    dur = int(os.environ.get("SWING_DURATION", "3"))
    c = claims.Claims("bench_swing_bracket", B)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for r in range(n):
            for buf in BUFFERS + ["plain"]:
                mode, size = ("plain", 2.0) if buf == "plain" else ("relay", buf)
                row = swing.swing_run(mode, size, 0.5, 0.020, d, f"b{r}{mode}{size}", prefix="tbk",
                                      duration=dur, log=lambda *a: None)
                row["round"] = r
                rows.append(row)
                if mode == "relay":
                    frac = row["relay_drops"] / max(1, row["relay_b_in"])
                    print(f"round {r + 1}/{n} relay {size:.1f} BDP: drops {row['relay_drops']} "
                          f"({100 * frac:.3f} % of {row['relay_b_in']}), peak {row['relay_hwm_bdp']:.2f} BDP, "
                          f"retransmits {row['rnic_retransmits']}", flush=True)
                    if size >= 1.0:
                        c.add(f"relay {size:.1f} BDP: zero drops", "0 drops (Swing: 1 BDP suffices)",
                              frac, row["relay_drops"] == 0)
                    elif size <= 0.6:
                        c.add(f"relay {size:.1f} BDP: drops (bracket from below)", "> 0 drops",
                              frac, row["relay_drops"] > 0)
                    else:
                        c.add(f"relay {size:.1f} BDP: drop fraction (reported)", "reported, no target",
                              frac, True)
                else:
                    print(f"round {r + 1}/{n} plain PFC 2 BDP: switch drops {row['s_drop_queue']}, "
                          f"retransmits {row['rnic_retransmits']}", flush=True)
                    c.add("plain PFC 2 BDP: zero drops", "0 drops (Swing: native PFC needs 2 BDP)",
                          row["s_drop_queue"], row["s_drop_queue"] == 0)
    c.report({"rows": rows})


if __name__ == "__main__":
    main()
