#!/usr/bin/python3
"""What the loss window's slow start costs on a long lossless path, N rounds (never make test).

A fixed transfer (64 x 1 MiB WRITEs = 64 MiB, tx_depth 16) over 1 Gb/s x 40 ms RTT with
no loss, the rnic paced to 0.98 of the link, two ways each round, back to back: the
default loss window (slow start from --loss-window-init 10 packets) and the loss window
off (`--loss-window off`). Reported:
the transfer's completion time (perftest's duration on rnic A) and goodput, and the
cost = the default's time minus the window-off time, in ms and in round trips. The
"slow start costs about log2(BDP / 10 packets) round trips" estimate: 1 Gb/s x 40 ms =
5 MB = 1221 packets of 4 KiB, log2(122) = 6.9 round trips, ~280 ms.

  bench/cc/slowstart.py BUILD_DIR [ROUNDS]   (root; testbed prefix tbss)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
B = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else "build")
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 10
env = dict(os.environ, ROCEWAN_BUILD=B)
RTT_MS = 40
CASES = [("slow start (default)", []), ("loss window off", ["rnic.loss_window=false"])]


def one(sets, d):
    args = [os.path.join(ROOT, "testbed"), "--prefix", "tbss", "run",
            os.path.join(ROOT, "configs", "gbn-lossless.toml"), "--out", d,
            "--set", f"link.rtt={RTT_MS}ms", "--set", "workload.iters=64", "--set", "workload.tx_depth=16"]
    for s in sets:
        args += ["--set", s]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    if r.returncode:
        print(r.stdout[-1500:] + r.stderr[-1500:])
        return None
    row = json.load(open(os.path.join(d, "gbn-lossless.json")))["results"]["rows"][0]
    return {"duration_s": row["duration_s"], "goodput_gbps": row["goodput_gbps"],
            "retx": row["tx_retransmits"], "cuts": row["loss_window_cuts"]}


def main():
    out = {n: [] for n, _ in CASES}
    print(f"64 MiB over 1 Gb/s x {RTT_MS} ms, lossless, {ROUNDS} rounds (cases interleaved)")
    for i in range(ROUNDS):
        for name, sets in CASES:
            with tempfile.TemporaryDirectory() as d:
                r = one(sets, d)
            out[name].append(r)
            if r:
                print(f"{i:>3} {name:22} {r['duration_s'] * 1e3:>8.0f} ms {r['goodput_gbps']:>7.3f} Gb/s "
                      f"retx {r['retx']} cuts {r['cuts']}")
    med = {}
    for name, _ in CASES:
        ok = [r for r in out[name] if r]
        med[name] = statistics.median(r["duration_s"] for r in ok) if ok else float("nan")
        gp = statistics.median(r["goodput_gbps"] for r in ok) if ok else float("nan")
        print(f"{name:22} {len(ok)}/{ROUNDS} complete, time p50 {med[name] * 1e3:.0f} ms, goodput p50 {gp:.3f} Gb/s")
    d = med[CASES[0][0]] - med[CASES[1][0]]
    print(f"slow-start cost (p50 default - p50 off): {d * 1e3:.0f} ms = {d * 1e3 / RTT_MS:.1f} RTT")
    pairs = [(a["duration_s"] - c["duration_s"]) for a, c in zip(out[CASES[0][0]], out[CASES[1][0]]) if a and c]
    if pairs:
        print(f"per round (default - off): {', '.join(f'{x * 1e3:.0f}' for x in pairs)} ms; "
              f"default slower in {sum(1 for x in pairs if x > 0)}/{len(pairs)}")
    resdir = os.path.join(B, "results")
    os.makedirs(resdir, exist_ok=True)
    json.dump(out, open(os.path.join(resdir, "cc_slowstart.json"), "w"), indent=1)
    print(f"results: {os.path.join(resdir, 'cc_slowstart.json')}")


if __name__ == "__main__":
    main()
