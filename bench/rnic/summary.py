#!/usr/bin/python3
"""Summarise bench/rnic/run.sh: rnic vs dpdk-testpmd, JSON + a Markdown table.

    summary.py OUT_DIR ROUNDS DUR

Reads OUT_DIR/bench_rnic_r<N>_testpmd_<size>.log (the rxonly receiver's
--stats-period output) and OUT_DIR/bench_rnic_r<N>_<test>_{client,server}.json,
writes OUT_DIR/bench_rnic.json and prints the table.
"""
import json
import os
import platform
import re
import statistics
import sys
import time

MTU = 4096
WRITE_SIZE = 65536


def testpmd_rate(path):
    """Mean Rx-pps of the receiver over the full seconds of traffic (first and last cut)."""
    if not os.path.exists(path):
        return None
    txt = open(path, errors="replace").read()
    pps = [int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", txt)]
    missed = [int(x) for x in re.findall(r"RX-missed:\s+(\d+)", txt)]
    stats = re.findall(r"RX-packets:\s+(\d+)\s+RX-missed:\s+\d+\s+RX-bytes:\s+(\d+)", txt)
    busy = [p for p in pps if p > 0]
    if len(busy) < 3:
        return None
    mid = busy[1:-1]
    pkts, byts = (int(x) for x in stats[-1])
    return {"rx_pps": statistics.mean(mid), "samples": len(mid),
            "rx_missed": missed[-1] if missed else None,
            "frame_bytes": byts / pkts if pkts else None}


def rnic_result(out, tag):
    res = {}
    for side in ("client", "server"):
        p = os.path.join(out, f"bench_rnic_{tag}_{side}.json")
        if not os.path.exists(p):
            return None
        res[side] = json.load(open(p))["results"]
    return res


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main(out, rounds, dur):
    rows = []
    for r in range(1, rounds + 1):
        logs = {"testpmd_4154": 4154, "testpmd_4154_rnicaddr": 4154, "testpmd_122_rnicaddr": 122}
        base = {k: testpmd_rate(os.path.join(out, f"bench_rnic_r{r}_{k}.log")) for k in logs}
        for k, size in logs.items():
            b = base[k]
            if b and b["frame_bytes"] and abs(b["frame_bytes"] - size) > 0.5:
                sys.exit(f"{k} round {r}: frames of {b['frame_bytes']:.0f} B received, "
                         f"{size} B expected (check --txpkts / --mbuf-size)")
        wb = rnic_result(out, f"r{r}_write_bw")
        sb = rnic_result(out, f"r{r}_send_bw")
        wl = rnic_result(out, f"r{r}_write_lat")
        row = {"round": r}
        for k in logs:
            row[k + "_pps"] = base[k] and base[k]["rx_pps"]
            row[k + "_rx_missed"] = base[k] and base[k]["rx_missed"]
        if wb:
            c = wb["client"]
            frames_per_msg = -(-WRITE_SIZE // MTU)
            row["write_bw_gbps"] = c["goodput_gbps"]
            row["write_bw_data_pps"] = c["msg_rate_mpps"] * 1e6 * frames_per_msg
            row["write_bw_retransmits"] = c["qp_counters"]["tx_retransmits"]
            row["write_bw_timeouts"] = c["qp_counters"]["timeouts"]
            for k in ("testpmd_4154", "testpmd_4154_rnicaddr"):
                if row[k + "_pps"]:
                    row["write_bw_vs_" + k] = row["write_bw_data_pps"] / row[k + "_pps"]
        if sb:
            row["send_bw_64_mpps"] = sb["client"]["msg_rate_mpps"]
            row["send_bw_64_rnr_naks"] = sb["server"]["qp_counters"]["tx_nak_rnr"]
            if row["testpmd_122_rnicaddr_pps"]:
                row["send_bw_64_vs_testpmd"] = (sb["client"]["msg_rate_mpps"] * 1e6 /
                                                row["testpmd_122_rnicaddr_pps"])
        if wl:
            c = wl["client"]
            row.update({"write_lat_typical_us": c["lat_typical_us"], "write_lat_p99_us": c["lat_p99_us"],
                        "write_lat_avg_us": c["lat_avg_us"]})
        rows.append(row)
    keys = sorted({k for row in rows for k in row if k != "round"})
    med = {k: median([row.get(k) for row in rows]) for k in keys}
    doc = {"schema": "rocewan/1", "app": "bench-rnic", "cpus": os.cpu_count(),
           "cpu": platform.processor() or platform.machine(), "dur_s": dur,
           "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "rounds": rows, "median": med}
    path = os.path.join(out, "bench_rnic.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)

    def fmt(v, f="%.3f"):
        return "–" if v is None else f % v

    def m(v):
        return v and v / 1e6

    def pct(v):
        return fmt(v and 100 * v, "%.0f %%")

    print()
    print("| round | testpmd 4154 B Mpps (own / rnic addressing) | rnic write_bw 64 KiB Gb/s "
          "| rnic data Mpps | rnic / testpmd (own / rnic addressing) | testpmd 122 B Mpps "
          "| rnic send_bw 64 B Mmsg/s | write_lat 64 B µs typ / p99 |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for row in rows + [dict(med, round="median")]:
        g = row.get
        print(f"| {row['round']} | {fmt(m(g('testpmd_4154_pps')))} / {fmt(m(g('testpmd_4154_rnicaddr_pps')))} "
              f"| {fmt(g('write_bw_gbps'), '%.2f')} | {fmt(m(g('write_bw_data_pps')))} "
              f"| {pct(g('write_bw_vs_testpmd_4154'))} / {pct(g('write_bw_vs_testpmd_4154_rnicaddr'))} "
              f"| {fmt(m(g('testpmd_122_rnicaddr_pps')))} | {fmt(g('send_bw_64_mpps'))} "
              f"| {fmt(g('write_lat_typical_us'), '%.1f')} / {fmt(g('write_lat_p99_us'), '%.1f')} |")
    print(f"\nresults: {path}")
    for k, what in (("write_bw_vs_testpmd_4154_rnicaddr", "testpmd with the rnic's addressing"),
                    ("write_bw_vs_testpmd_4154", "testpmd with its own addressing")):
        if med.get(k) is not None:
            print(f"rnic write_bw: {100 * med[k]:.0f} % of {what} (target: at least 80 %)")

if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
