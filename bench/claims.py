# SPDX-License-Identifier: BSD-3-Clause
"""Shared by the timing-claim benchmarks (docs/claims.md): the round count, the
distribution and pass-rate summary, and the JSON result.

Every timing or performance claim that `make test` may not assert (docs/testing.md)
is measured here over N rounds (BENCH_ROUNDS, default 10, at least 10 for a figure
that goes into docs/claims.md) and reported as a distribution and a pass rate
against its documented target. A claim that holds in fewer than 9 of 10 rounds is
reported as such.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rounds():
    n = int(os.environ.get("BENCH_ROUNDS", "10"))
    if n < 1:
        sys.exit("BENCH_ROUNDS must be >= 1")
    if n < 10:
        print(f"note: BENCH_ROUNDS={n} < 10: not enough rounds for a figure in docs/claims.md")
    return n


def build_dir(argv):
    """BUILD_DIR from the command line (default build), exported for the tests' helpers."""
    b = os.path.realpath(argv[1] if len(argv) > 1 else os.path.join(ROOT, "build"))
    os.environ["ROCEWAN_BUILD"] = b
    return b


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def dist(xs, fmt="{:.3f}"):
    if not xs:
        return "no samples"
    f = fmt.format
    return (f"min {f(min(xs))}  p50 {f(pct(xs, 0.5))}  p90 {f(pct(xs, 0.9))}  max {f(max(xs))}"
            f"  (n={len(xs)})")


class Claims:
    """Collects one value per round for each claim; prints and saves the pass rates."""

    def __init__(self, app, build):
        self.app, self.build = app, build
        self.claims = {}  # name -> {"target": text, "values": [...], "passed": [...]}

    def add(self, name, target, value, passed):
        c = self.claims.setdefault(name, {"target": target, "values": [], "passed": []})
        c["values"].append(value)
        c["passed"].append(bool(passed))

    def report(self, extra=None):
        print(f"\n== {self.app}: pass rate per claim")
        out = {}
        for name, c in self.claims.items():
            k, n = sum(c["passed"]), len(c["passed"])
            # a round whose run failed has a NaN value: counted as failed, left out of the distribution
            vals = [v for v in c["values"] if isinstance(v, (int, float)) and v == v]
            verdict = "holds" if n >= 10 and k >= 0.9 * n else (
                "DOES NOT HOLD in 9 of 10 rounds" if n >= 10 else "too few rounds")
            print(f"{name}\n    target: {c['target']}\n    {k}/{n} rounds pass ({verdict}); "
                  f"values: {dist(vals)}")
            out[name] = {"target": c["target"], "pass": k, "rounds": n, "values": c["values"]}
        path = os.path.join(self.build, "results", f"{self.app}.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        doc = {"schema": "rocewan/1", "app": self.app, "claims": out}
        if extra:
            doc.update(extra)
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
        print(f"results: {path}")
