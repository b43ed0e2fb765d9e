#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Compare two rocewan/1 --json documents (or two directories of them) field by field,
timing fields excluded: what a run measured with a clock differs from run to run, every
count, name and setting must not.

  scripts/json_compare.py A.json B.json
  scripts/json_compare.py DIR_A DIR_B      (the *.json files both hold, by name)

Exit 0 if equal, 1 with one line per differing field.
"""
import json
import os
import sys

# Fields that a clock or the host's load decides, by key name wherever they occur.
TIMING = {
    # the document's start time and the build that wrote it
    "started_utc", "version",
    # rnic results: rates and durations of the run
    "duration_s", "bw_avg_mbps", "bw_peak_mbps", "goodput_gbps", "msg_rate_mpps",
    "lat_min_us", "lat_typical_us", "lat_avg_us", "lat_p99_us", "lat_p999_us", "lat_max_us",
    "last_completion_s",
    # rnic: throughput over time and the congestion-control trace (sampled by the clock)
    "samples", "cc_trace",
    # per-QP CC state and the retransmit timer's estimate (measured RTTs)
    "rate_gbps", "target_gbps", "alpha", "rtt_us", "srtt_us", "rttvar_us", "rto_us", "stall_us",
    "stall_max_us",
    # process CPU time (getrusage)
    "cpu_user_s", "cpu_sys_s", "cpu",
    # poll-loop iterations and idle back-off: how often the loop ran, not what it did
    "idle_polls", "idle_sleeps", "polls", "rx_empty_polls", "busy_polls",
    # lossy-emu: forwarding time, queue delay statistics, timestamps
    "forward_s", "sum_ms", "mean", "p50", "p99", "p999", "max", "own_max", "own_p50", "own_p99",
    "stall_off_ms",
}


def walk(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in TIMING:
                continue
            p = f"{path}.{k}" if path else k
            if k not in a or k not in b:
                out.append(f"{p}: only in {'second' if k not in a else 'first'}")
                continue
            walk(a[k], b[k], p, out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} elements vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: {json.dumps(a)} vs {json.dumps(b)}")


def compare_files(fa, fb):
    with open(fa) as f:
        a = json.load(f)
    with open(fb) as f:
        b = json.load(f)
    out = []
    walk(a, b, "", out)
    return out


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    x, y = sys.argv[1:]
    if os.path.isdir(x):
        names = sorted(n for n in os.listdir(x) if n.endswith(".json"))
        missing = [n for n in names if not os.path.exists(os.path.join(y, n))]
        pairs = [(os.path.join(x, n), os.path.join(y, n), n) for n in names if n not in missing]
    else:
        missing, pairs = [], [(x, y, os.path.basename(x))]
    bad = 0
    for n in missing:
        print(f"{n}: missing in {y}")
        bad += 1
    for fa, fb, n in pairs:
        d = compare_files(fa, fb)
        for ln in d:
            print(f"{n}: {ln}")
        bad += bool(d)
        if not d:
            print(f"{n}: identical (timing fields excluded)")
    print(f"{len(pairs)} documents compared, {bad} differ" + (f", {len(missing)} missing" if missing else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
