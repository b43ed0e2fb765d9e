"""`testbed lab` over ssh against the local testbed: goodput within the run-to-run spread.

docs/lab.md's claim: a lab run of configs/gbn-lossy.toml over OpenSSH (three network
namespaces with real sshd standing for the hosts, as tests/testbed/test_lab_ssh.py sets
them up) gives the goodput of the local run of the same config. make test checks the
columns and the exact counts; rates are timing, so they are measured here.

Each round runs the lab once and the local testbed once (alternating which goes first).
A round passes when its lab goodput lies within the local runs' spread over all rounds
([min, max] of the local goodputs). The pass rate is printed and written as JSON.

    /usr/bin/python3 -m pytest -q -s -p no:cacheprovider bench/testbed/lab_rates.py
    (BENCH_ROUNDS=N, default 10; ROCEWAN_BUILD=DIR, default build; root)
"""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "testbed"))
import test_lab_ssh  # noqa: E402
from test_lab_ssh import CFG, ITERS, PREFIX, TESTBED, lab_sets  # noqa: E402

lab = test_lab_ssh.lab  # the three sshd hosts (a pytest fixture)

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "10"))


def run_lab(t, d, out):
    work = out / "remote"
    work.mkdir(parents=True)
    r = subprocess.run([TESTBED, "--prefix", PREFIX, "lab", CFG, *lab_sets(t, d, work),
                        "--out", str(out / "lab")], capture_output=True, text=True,
                       timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.load(open(out / "lab" / "gbn-lossy.json"))["results"]["rows"][0]


def run_local(out):
    r = subprocess.run([TESTBED, "--prefix", PREFIX + "x", "run", CFG, "--quick", "--set",
                        f"workload.iters={ITERS}", "--out", str(out / "local")],
                       capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.load(open(out / "local" / "gbn-lossy.json"))["results"]["rows"][0]


def test_lab_goodput_within_local_spread(lab, tmp_path):
    t, d = lab
    labs, locs = [], []
    for i in range(ROUNDS):
        o = tmp_path / f"r{i}"
        if i % 2 == 0:
            labs.append(run_lab(t, d, o)["goodput_gbps"])
            locs.append(run_local(o)["goodput_gbps"])
        else:
            locs.append(run_local(o)["goodput_gbps"])
            labs.append(run_lab(t, d, o)["goodput_gbps"])
        print(f"round {i + 1}: lab {labs[-1]:.3f} Gb/s, local {locs[-1]:.3f} Gb/s", flush=True)
    lo, hi = min(locs), max(locs)
    passed = sum(1 for x in labs if lo <= x <= hi)
    res = {"rounds": ROUNDS, "lab_gbps": labs, "local_gbps": locs,
           "lab_median": statistics.median(labs), "local_median": statistics.median(locs),
           "local_spread": [lo, hi], "passed": passed, "load": os.getloadavg()}
    out = os.path.join(os.environ.get("ROCEWAN_BUILD", os.path.join(ROOT, "build")),
                       "bench-lab-rates.json")
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(f"lab goodput within the local spread [{lo:.3f}, {hi:.3f}] Gb/s: {passed}/{ROUNDS} "
          f"(medians lab {res['lab_median']:.3f}, local {res['local_median']:.3f}); {out}")
