#!/usr/bin/python3
"""The ECN congestion-control timing claims, N rounds each, with a pass rate (never part
of make test).

1. RED/ECN bottleneck (bench/cc/ecn-dcqcn.toml: delay 5 ms, 200 Mb/s, 2 MB queue, RED
   Kmin 100 KB, Kmax 400 KB, pmax 10% as DCQCN-p (Wang et al.) 3.1's Pmax 0.1), 64 KiB
   WRITEs for 4 s, no --rate_limit, per --cc case. Pass: goodput >= 0.15 Gb/s and zero
   queue-overflow drops (the target for dcqcn).
2. A slow receiver (rnic B --slow-rx-us 1000) and default options: send_bw 20 x 1 MiB.
   Pass: completes; the time is reported.

  bench/cc/ecn.py BUILD_DIR [ROUNDS [ONLY]]   (root; testbed prefix tbcc)

ONLY: a comma-separated subset, e.g. "dcqcn,dcqcn:profile=wan,slow_rx" (default: all).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
B = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else "build")
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 10
CASES = [("none", ""), ("dcqcn", ""), ("dcqcn", "profile=wan"), ("dcqcn-p", ""), ("dctcp", ""),
         ("timely", ""), ("timely", "profile=wan")]
ONLY = sys.argv[3].split(",") if len(sys.argv) > 3 else None
if ONLY:
    CASES = [(cc, p) for cc, p in CASES if (f"{cc}:{p}" if p else cc) in ONLY]
env = dict(os.environ, ROCEWAN_BUILD=B)


def ecn_round(cc, param, d):
    args = [os.path.join(ROOT, "testbed"), "--prefix", "tbcc", "run",
            os.path.join(HERE, "ecn-dcqcn.toml"), "--out", d, "--set", f"rnic.cc={cc}"]
    if param:
        args += ["--set", f"rnic.cc_param={param}"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=900, cwd=ROOT, env=env)
    if r.returncode:
        return None
    return json.load(open(os.path.join(d, "ecn-dcqcn.json")))["results"]["rows"][0]


def main():
    out = {"ecn": {}, "slow_rx": []}
    print(f"RED/ECN bottleneck, {ROUNDS} rounds per case (pass: >= 0.15 Gb/s, 0 queue drops)")
    print(f"{'cc':22} {'pass':>6} {'goodput p50':>12} {'queue drops p50':>16} {'CE p50':>8} "
          f"{'CNP+BECN p50':>13}")
    for cc, param in CASES:
        rows = []
        for i in range(ROUNDS):
            with tempfile.TemporaryDirectory() as d:
                rows.append(ecn_round(cc, param, d))
        ok = [r for r in rows if r]
        passed = sum(1 for r in ok if r["goodput_gbps"] >= 0.15 and r["emu_a2b_drop_queue"] == 0)
        name = cc + (f" {param}" if param else "")
        med = lambda k: statistics.median(r[k] for r in ok) if ok else float("nan")  # noqa: E731
        print(f"{name:22} {passed:>3}/{ROUNDS:<2} {med('goodput_gbps'):>12.3f} "
              f"{med('emu_a2b_drop_queue'):>16.0f} {med('emu_a2b_ecn_marked'):>8.0f} "
              f"{statistics.median(r['rnic_b_tx_cnps'] + r['rnic_b_tx_becn_acks'] for r in ok) if ok else 0:>13.0f}")
        keys = ("goodput_gbps", "emu_a2b_drop_queue", "emu_a2b_ecn_marked", "rnic_b_tx_cnps",
                "rnic_b_tx_becn_acks", "cc_decreases", "tx_retransmits", "timeouts", "rto_spurious")
        out["ecn"][name] = [{k: r[k] for k in keys} if r else None for r in rows]
    if not ONLY or "slow_rx" in ONLY:
        sys.path.insert(0, os.path.join(ROOT, "tests", "netns"))
        from conftest import VethPair, rnic_pair  # noqa: E402
        import pathlib
        vp = VethPair()
        try:
            for i in range(ROUNDS):
                with tempfile.TemporaryDirectory() as d:
                    t0 = time.monotonic()
                    rcs, _, (srv, cli) = rnic_pair(vp, pathlib.Path(d), "send_bw", "-s 1048576 -n 20",
                                                   side_opts=("", "--slow-rx-us 1000"), timeout=120)
                    dt = time.monotonic() - t0
                    q = cli["results"]["qp_counters"] if cli else {}
                    out["slow_rx"].append({"ok": rcs == [0, 0], "wall_s": dt,
                                           "retransmits": q.get("tx_retransmits"),
                                           "cuts": q.get("loss_window_cuts")})
        finally:
            vp.close()
        ok = [r for r in out["slow_rx"] if r["ok"]]
        print(f"\nslow receiver, default options, send_bw 20 x 1 MiB: {len(ok)}/{ROUNDS} complete, "
              f"wall p50 {statistics.median(r['wall_s'] for r in ok) if ok else float('nan'):.1f} s, "
              f"retransmits p50 {statistics.median(r['retransmits'] for r in ok) if ok else 0:.0f}")
    res = os.path.join(B, "results")
    os.makedirs(res, exist_ok=True)
    json.dump(out, open(os.path.join(res, "cc_ecn.json"), "w"), indent=1)
    print(f"results: {os.path.join(res, 'cc_ecn.json')}")


if __name__ == "__main__":
    main()
