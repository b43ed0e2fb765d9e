#!/usr/bin/python3
"""Print the median of each Google Benchmark result as a Markdown table."""
import json
import sys


def main(path):
    d = json.load(open(path))
    ctx = d["context"]
    print(f"\nmachine: {ctx.get('num_cpus')} CPUs at {ctx.get('mhz_per_cpu')} MHz, "
          f"load avg {ctx.get('load_avg')}, {ctx.get('date')}")
    print("| benchmark | median ns | GB/s | Mitems/s |")
    print("|---|---:|---:|---:|")
    for b in d["benchmarks"]:
        if b.get("aggregate_name", "median") != "median":
            continue
        gbs = b.get("bytes_per_second", 0) / 1e9
        mps = b.get("items_per_second", 0) / 1e6
        print(f"| {b['run_name']} | {b['real_time']:.1f} | "
              f"{gbs:.2f} | {mps:.2f} |".replace("| 0.00 |", "| – |"))


if __name__ == "__main__":
    main(sys.argv[1])
