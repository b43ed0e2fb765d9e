#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""lossy-emu against the kernel's netem: the timing bounds of
tests/interop/test_netem_crosscheck.py, N rounds (docs/claims.md).

make test runs that file with its lateness bounds printed, not asserted (a host stall
breaks them; docs/testing.md). Here each round runs its delay tests with
ROCEWAN_CLAIMS=1, which asserts them: the delay quantiles 5..95 % from above (uniform
and normal jitter), the two paths' median added delay against each other, the rate
slope within 2 % of L/R and the fitted d + L/R at frame 0, on both paths. A round passes
a test when pytest passes it; the pass rate per test is reported.

  bench/emu/netem_xcheck.py [BUILD_DIR]      (root, KVM-less QEMU; BENCH_ROUNDS=N, default 10)
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import claims  # noqa: E402

B = claims.build_dir(sys.argv)
TEST = os.path.join(claims.ROOT, "tests", "interop", "test_netem_crosscheck.py")


def main():
    if os.geteuid() != 0:
        sys.exit("bench/emu/netem_xcheck.py: needs root (network namespaces, the guest's tap)")
    n = claims.rounds()
    c = claims.Claims("bench_emu_netem_xcheck", B)
    env = dict(os.environ, ROCEWAN_CLAIMS="1", ROCEWAN_BUILD=B,
               PYTHONPATH=os.path.join(claims.ROOT, "python"))
    for r in range(n):
        with tempfile.NamedTemporaryFile(suffix=".xml") as x:
            p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                "-k", "delay", f"--junitxml={x.name}", TEST],
                               env=env, capture_output=True, text=True)
            cases = ET.parse(x.name).getroot().iter("testcase")
            res = {}
            for tc in cases:
                failed = any(ch.tag in ("failure", "error") for ch in tc)
                res[tc.get("name")] = not failed
        line = ", ".join(f"{k} {'pass' if v else 'FAIL'}" for k, v in res.items())
        print(f"round {r + 1}/{n}: {line}", flush=True)
        if not res:
            print(p.stdout[-3000:] + p.stderr[-3000:])
        for k, v in res.items():
            c.add(k, "every lateness bound holds (ROCEWAN_CLAIMS=1)", int(v), v)
    c.report()


if __name__ == "__main__":
    main()
