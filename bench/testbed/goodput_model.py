#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Go-Back-N goodput against the model of Wang (NJUPT; docs/references.md), N rounds (docs/claims.md).

Each round runs configs/gbn-lossy.toml with `./testbed run --quick` and compares the
measured goodput with the row's model (Wang (NJUPT) section IV.A, fed with the link rate,
the pacing, the payload efficiency and the loss-event rate of the config):
measured/model within [0.6, 1.4].

  bench/testbed/goodput_model.py [BUILD_DIR]   (root; BENCH_ROUNDS=N, default 10)
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import claims  # noqa: E402

B = claims.build_dir(sys.argv)
CONFIG = os.path.join(claims.ROOT, "configs", "gbn-lossy.toml")


def main():
    if os.geteuid() != 0:
        sys.exit("bench/testbed/goodput_model.py: needs root (network namespaces)")
    n = claims.rounds()
    c = claims.Claims("bench_goodput_model", B)
    env = dict(os.environ, ROCEWAN_BUILD=B, PYTHONPATH=os.path.join(claims.ROOT, "python"))
    for r in range(n):
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([os.path.join(claims.ROOT, "testbed"), "--prefix", "tbg", "run", CONFIG,
                                "--quick", "--out", d,
                                # the model is plain Go-Back-N with a fixed window (as gbn-model)
                                "--set", "rnic.loss_window=false"],
                               capture_output=True, text=True, env=env,
                               cwd=claims.ROOT, timeout=600)
            if p.returncode != 0:
                print(f"round {r + 1}/{n}: testbed failed:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
                c.add("measured/model goodput", "within [0.6, 1.4]", float("nan"), False)
                continue
            row = json.load(open(os.path.join(d, "gbn-lossy.json")))["results"]["rows"][0]
        ratio = row["goodput_gbps"] / row["goodput_model_gbps"]
        print(f"round {r + 1}/{n}: goodput {row['goodput_gbps']:.3f} Gb/s, model "
              f"{row['goodput_model_gbps']:.3f} Gb/s, ratio {ratio:.3f}; drops {row['emu_a2b_drop_loss']}, "
              f"retransmits {row['tx_retransmits']}", flush=True)
        c.add("measured/model goodput", "within [0.6, 1.4]", ratio, 0.6 <= ratio <= 1.4)
    c.report()


if __name__ == "__main__":
    main()
