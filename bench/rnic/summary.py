#!/usr/bin/python3
"""Summarise bench/rnic/run.sh: rnic vs dpdk-testpmd, JSON + a Markdown table.

    summary.py OUT_DIR ROUNDS DUR

Per round it reads the measurement windows (*.win: frames/s that b's kernel
received, and the share of CPU 0 the sender got), testpmd's receiver logs
(--stats-period output: PMD-level Rx-pps, RX-missed, frame size) and the rnic
JSON results; writes OUT_DIR/bench_rnic.json and prints the table.
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
SIZES = {"testpmd_4154": 4154, "testpmd_4154_rnicaddr": 4154, "testpmd_122_rnicaddr": 122}


def load_json(path):
    return json.load(open(path)) if os.path.exists(path) else None


def testpmd_log(path):
    """PMD view of the receiver: mean Rx-pps of the full seconds, RX-missed, frame size."""
    if not os.path.exists(path):
        return None
    txt = open(path, errors="replace").read()
    pps = [int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", txt)]
    stats = re.findall(r"RX-packets:\s+(\d+)\s+RX-missed:\s+(\d+)\s+RX-bytes:\s+(\d+)", txt)
    busy = [p for p in pps if p > 0]
    if len(busy) < 3 or not stats:
        return None
    pkts, missed, byts = (int(x) for x in stats[-1])
    return {"pmd_rx_pps": statistics.mean(busy[1:-1]), "rx_missed": missed,
            "frame_bytes": byts / pkts if pkts else None}


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main(out, rounds, dur):
    rows = []
    for r in range(1, rounds + 1):
        row = {"round": r}
        for k, size in SIZES.items():
            log = os.path.join(out, f"bench_rnic_r{r}_{k}.log")
            t = testpmd_log(log)
            w = load_json(log + ".win")
            if t and t["frame_bytes"] and abs(t["frame_bytes"] - size) > 0.5:
                sys.exit(f"{k} round {r}: frames of {t['frame_bytes']:.0f} B received, "
                         f"{size} B expected (check --txpkts / --mbuf-size)")
            if t:
                row[k + "_pmd_pps"] = t["pmd_rx_pps"]
                row[k + "_rx_missed"] = t["rx_missed"]
            if w:
                row[k + "_pps"] = w["pps"]
                row[k + "_cpu"] = w["cpu_share"]
                row[k + "_steal"] = w["steal_share"]
                row[k + "_pps_per_cpu"] = w["pps"] / w["cpu_share"] if w["cpu_share"] > 0 else None
        for t in ("write_bw", "write_bw_ownmac"):
            c = load_json(os.path.join(out, f"bench_rnic_r{r}_{t}_client.json"))
            w = load_json(os.path.join(out, f"bench_rnic_r{r}_{t}.win"))
            if c:
                c = c["results"]
                row[t + "_gbps_whole_run"] = c["goodput_gbps"]
                row[t + "_retransmits"] = c["qp_counters"]["tx_retransmits"]
                row[t + "_timeouts"] = c["qp_counters"]["timeouts"]
                pc = c["port_counters"]
                row[t + "_mean_tx_burst"] = pc["tx_frames"] / max(1, pc["tx_bursts"])
                row[t + "_tx_drops"] = pc["tx_drop_full"] + pc["tx_drop_nombuf"]
            if w:
                row[t + "_pps"] = w["pps"]
                row[t + "_gbps"] = w["pps"] / -(-WRITE_SIZE // MTU) * WRITE_SIZE * 8 / 1e9
                row[t + "_cpu"] = w["cpu_share"]
                row[t + "_steal"] = w["steal_share"]
                row[t + "_pps_per_cpu"] = w["pps"] / w["cpu_share"] if w["cpu_share"] > 0 else None
                for k in ("testpmd_4154", "testpmd_4154_rnicaddr"):
                    if row.get(k + "_pps"):
                        row[t + "_vs_" + k] = w["pps"] / row[k + "_pps"]
                    if row.get(k + "_pps_per_cpu") and row[t + "_pps_per_cpu"]:
                        row[t + "_per_cpu_vs_" + k] = row[t + "_pps_per_cpu"] / row[k + "_pps_per_cpu"]
        sb = [load_json(os.path.join(out, f"bench_rnic_r{r}_send_bw_{s}.json")) for s in ("client", "server")]
        if all(sb):
            row["send_bw_64_mmsgs"] = sb[0]["results"]["msg_rate_mpps"]
            row["send_bw_64_rnr_naks"] = sb[1]["results"]["qp_counters"]["tx_nak_rnr"]
        wl = load_json(os.path.join(out, f"bench_rnic_r{r}_write_lat_client.json"))
        if wl:
            x = wl["results"]
            row.update({"write_lat_typical_us": x["lat_typical_us"], "write_lat_p99_us": x["lat_p99_us"],
                        "write_lat_avg_us": x["lat_avg_us"], "write_lat_min_us": x["lat_min_us"]})
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
    print("4 KiB frames (4154 B): Mpps that reach b (CPU-0 share of the sender) → Mpps per CPU")
    print("| round | testpmd, own addressing | testpmd, rnic addressing | rnic write_bw 64 KiB "
          "| rnic --own-mac |")
    print("|---|---|---|---|---|")
    for row in rows + [dict(med, round="median")]:
        g = row.get
        cells = [f"{fmt(m(g(k + '_pps')))} ({fmt(g(k + '_cpu'), '%.2f')}) → {fmt(m(g(k + '_pps_per_cpu')))}"
                 for k in ("testpmd_4154", "testpmd_4154_rnicaddr", "write_bw", "write_bw_ownmac")]
        print(f"| {row['round']} | " + " | ".join(cells) + " |")
    print()
    print("rnic / testpmd: raw rate, per CPU share")
    print("| round | write_bw / testpmd rnic-addressed | write_bw / testpmd own | "
          "--own-mac / testpmd own |")
    print("|---|---|---|---|")
    for row in rows + [dict(med, round="median")]:
        g = row.get
        print(f"| {row['round']} "
              f"| {pct(g('write_bw_vs_testpmd_4154_rnicaddr'))}, {pct(g('write_bw_per_cpu_vs_testpmd_4154_rnicaddr'))} "
              f"| {pct(g('write_bw_vs_testpmd_4154'))}, {pct(g('write_bw_per_cpu_vs_testpmd_4154'))} "
              f"| {pct(g('write_bw_ownmac_vs_testpmd_4154'))}, {pct(g('write_bw_ownmac_per_cpu_vs_testpmd_4154'))} |")
    print()
    print("| round | rnic write_bw Gb/s (window) | testpmd 122 B Mpps | rnic send_bw 64 B Mmsg/s "
          "| write_lat 64 B µs min / typical / p99 |")
    print("|---|---:|---:|---:|---|")
    for row in rows + [dict(med, round="median")]:
        g = row.get
        print(f"| {row['round']} | {fmt(g('write_bw_gbps'), '%.2f')} | {fmt(m(g('testpmd_122_rnicaddr_pps')))} "
              f"| {fmt(g('send_bw_64_mmsgs'))} | {fmt(g('write_lat_min_us'), '%.1f')} / "
              f"{fmt(g('write_lat_typical_us'), '%.1f')} / {fmt(g('write_lat_p99_us'), '%.1f')} |")
    print(f"\nresults: {path}")
    for t, k, what in (("write_bw", "testpmd_4154_rnicaddr", "testpmd addressed like the rnic"),
                       ("write_bw", "testpmd_4154", "testpmd with its own addressing"),
                       ("write_bw_ownmac", "testpmd_4154", "testpmd with its own addressing")):
        if med.get(f"{t}_vs_{k}") is not None:
            print(f"rnic {t}: {100 * med[f'{t}_vs_{k}']:.0f} % of {what} "
                  f"({100 * (med.get(f'{t}_per_cpu_vs_{k}') or 0):.0f} % per CPU share); "
                  "target: at least 80 %")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
