#!/usr/bin/python3
"""Adaptive RTO: how long after its original send a lost tail is retransmitted.

rnic A -> lossy-emu -> rnic B in the testbed's namespaces (python/rocewan/testbed/topo.py),
write_lat -s 64 (one single-packet WRITE at a time, so every lost request is a
tail loss that only the retransmit timer can repair), random loss on A -> B only.
A tcpdump on the emulator's A-side veth sees every request as A sent it, first
copies and retransmissions alike (before the emulator drops any); for every PSN
seen twice, delay = second copy - first copy. RTT is the run's own write_lat
figure (typical latency x 2, perftest's one-way convention undone).

The target: delay / RTT within 1.0 .. 1.5, at 2 ms and at 40 ms RTT.
Cases (ROUNDS rounds each, interleaved, a new emulator seed each round):
  2ms / 40ms adaptive default (--rto-min 500us + the learned stall allowance,
       --rto-stall-memory 2s)
  2ms / 40ms adaptive min10ms: the former default (--rto-min 10ms,
       no stall allowance), the baseline in the same run
  2ms  adaptive nostall: the 500 us floor without the allowance (what it saves)
  2ms  adaptive --rto-min 2ms / 1ms (hard floors, with the allowance; only when named)
  40ms fixed (-u 14: 67 ms, the IBTA timer; the method's control)
  2ms / 40ms adaptive on a LOSSLESS path: every expiry there is spurious, which
       checks the rnic's rto_spurious counter (a lower bound) against the truth
Prints every retransmission's ratio summary per case: count, p5 / p50 / p95,
the share of retransmissions within 1.0..1.5 (pass rate), the same share for
losses after the first WARM requests of a run (the estimator starts at
timeout = 3 RTT, VRP's D = RTT / 2, and needs about 11 samples to bring
4 D under RTT / 2), the rounds whose median is within it, and the timer's
expiries and the spurious ones the rnic counted; writes JSON.

  bench/rnic/rto_tail.py BUILD_DIR [ROUNDS] [CASE,CASE...]   (root; default 10 rounds, all cases)
"""
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
B = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else "build")
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 10
ONLY = sys.argv[3].split(",") if len(sys.argv) > 3 else None
os.environ["ROCEWAN_BUILD"] = B
sys.path.insert(0, os.path.join(ROOT, "python"))
from rocewan.testbed.topo import Topology, TopoError  # noqa: E402

LOSS = "5%"
WARM = 16
CASES = [  # name, RTT ms, iterations, rnic options, loss A->B
    ("2ms adaptive default", 2, 400, "--rto adaptive", LOSS),
    ("2ms adaptive min10ms", 2, 400, "--rto adaptive --rto-min 10ms --rto-stall-memory 0s", LOSS),
    ("2ms adaptive nostall", 2, 400, "--rto adaptive --rto-stall-memory 0s", LOSS),
    ("2ms adaptive min2ms", 2, 400, "--rto adaptive --rto-min 2ms", LOSS),
    ("2ms adaptive min1ms", 2, 400, "--rto adaptive --rto-min 1ms", LOSS),
    ("40ms adaptive default", 40, 100, "--rto adaptive", LOSS),
    ("40ms adaptive min10ms", 40, 100, "--rto adaptive --rto-min 10ms --rto-stall-memory 0s", LOSS),
    ("40ms fixed -u14", 40, 100, "--rto fixed", LOSS),
    ("2ms adaptive lossless", 2, 400, "--rto adaptive", None),
    ("40ms adaptive lossless", 40, 100, "--rto adaptive", None),
]
OPTIONAL = {"2ms adaptive min2ms", "2ms adaptive min1ms"}  # by name only (the default run stays ~10 min)
if not ONLY:
    CASES = [c for c in CASES if c[0] not in OPTIONAL]
if ONLY:
    unknown = set(ONLY) - {c[0] for c in CASES}
    if unknown:
        sys.exit(f"bench/rnic/rto_tail.py: no case {sorted(unknown)}; cases: {[c[0] for c in CASES]}")
    CASES = [c for c in CASES if c[0] in ONLY]
LO, HI = 1.0, 1.5


def requests(pcap):
    """(time s, PSN) of each RoCEv2 request packet (opcode < 0x10: RC SEND/WRITE) in a pcap."""
    out = []
    with open(pcap, "rb") as f:
        magic = struct.unpack("<I", f.read(24)[:4])[0]
        scale = 1e-9 if magic == 0xA1B23C4D else 1e-6
        while True:
            h = f.read(16)
            if len(h) < 16:
                break
            sec, frac, incl, _ = struct.unpack("<IIII", h)
            d = f.read(incl)
            if len(d) < 54 or d[12:14] != b"\x08\x00" or d[23] != 17:
                continue
            ihl = (d[14] & 0xF) * 4
            udp = 14 + ihl
            if struct.unpack(">H", d[udp + 2:udp + 4])[0] != 4791:
                continue
            bth = udp + 8
            if d[bth] >= 0x10:  # responses, CNPs
                continue
            psn = int.from_bytes(d[bth + 9:bth + 12], "big")
            out.append((sec + frac * scale, psn))
    return out


def one(case, rnd, d):
    name, rtt_ms, iters, opts, loss = case
    tag = f"r{rnd}"
    spec = f"delay {rtt_ms / 2:g}ms limit 10000"
    js = {k: os.path.join(d, f"{tag}-{k}.json") for k in ("emu", "A", "B")}
    pcap = os.path.join(d, f"{tag}.pcap")
    with Topology("rtob", 1024) as topo:
        topo.start_emu(f"{spec} loss {loss}" if loss else spec, spec, 1000 + rnd, js["emu"])
        cap = subprocess.Popen(f"ip netns exec {topo.ns['E']} tcpdump -i {topo.ifs['eA']} -Q in -s 80 "
                               f"-U -w {pcap} 'udp port 4791' 2>/dev/null", shell=True,
                               start_new_session=True)
        time.sleep(0.5)
        rc_a, out_a, rc_b, _ = topo.rnic_pair("write_lat", f"-s 64 -n {iters} -m 1024 {opts}",
                                              js["A"], js["B"], timeout=300)
        os.killpg(cap.pid, 2)
        cap.wait(timeout=10)
    if rc_a or rc_b:
        return {"error": f"rnic exit {rc_a}/{rc_b}: {out_a[-400:]}"}
    a = json.load(open(js["A"]))["results"]
    rtt = 2 * a["lat_typical_us"] / 1e6
    first, ratios, warm = {}, [], []
    for t, psn in requests(pcap):
        if psn in first:
            if first[psn] is not None:
                ratios.append((t - first[psn][0]) / rtt)
                warm.append(first[psn][1] < WARM)
                first[psn] = None  # only the first retransmission of a PSN
        else:
            first[psn] = (t, len(first))  # its send time and its index in the run
    q = a["qp_counters"]
    return {"rtt_ms": rtt * 1e3, "ratios": ratios, "warm": warm, "timeouts": q["timeouts"],
            "rto_expiries": q.get("rto_expiries", 0), "rto_spurious": q.get("rto_spurious", 0),
            "retx": q["tx_retransmits"], "rtt_samples": q["rtt_samples"],
            "karn_skipped": q["karn_skipped"], "srtt_us": a["rtt"]["srtt_us"],
            "rto_us": a["rtt"]["rto_us"], "stall_us": a["rtt"].get("stall_us"),
            "iters": iters}


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))] if v else float("nan")


def main():
    if os.geteuid() != 0:
        sys.exit("bench/rnic/rto_tail.py: needs root (network namespaces)")
    res = {c[0]: [] for c in CASES}
    with tempfile.TemporaryDirectory() as d:
        for r in range(ROUNDS):
            for c in CASES:
                try:
                    row = one(c, r, d)
                except TopoError as e:
                    row = {"error": str(e)[-400:]}
                res[c[0]].append(row)
                show = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()
                        if k not in ("ratios", "warm")}
                rs = row.get("ratios", [])
                print(f"round {r + 1}/{ROUNDS} {c[0]:22s} retx {len(rs)} median "
                      f"{statistics.median(rs) if rs else float('nan'):.2f} {show}", flush=True)
    print(f"\nretransmit delay / RTT, loss {LOSS} A->B (or none), write_lat -s 64, {ROUNDS} rounds; "
          f"pass = within {LO}..{HI}; steady = losses after the first {WARM} requests")
    print(f"{'case':24s} {'retx':>5s} {'p5':>6s} {'p50':>6s} {'p95':>6s} {'pass':>6s} "
          f"{'steady':>11s} {'rounds':>8s} {'rtt ms':>7s} {'expiries':>8s} {'spurious':>8s} "
          f"{'errors':>6s}")
    summary = {}
    for name, rows in res.items():
        ok = [x for x in rows if "error" not in x]
        allr = [v for x in ok for v in x["ratios"]]
        steady = [v for x in ok for v, w in zip(x["ratios"], x["warm"]) if not w]
        good = sum(LO <= v <= HI for v in allr)
        sgood = sum(LO <= v <= HI for v in steady)
        rpass = sum(1 for x in ok if x["ratios"] and LO <= statistics.median(x["ratios"]) <= HI)
        rtt = statistics.median([x["rtt_ms"] for x in ok]) if ok else float("nan")
        exp = sum(x["timeouts"] for x in ok)
        spur = sum(x["rto_spurious"] for x in ok)
        summary[name] = {"retx": len(allr), "p5": pct(allr, 5), "p50": pct(allr, 50),
                         "p95": pct(allr, 95), "pass_rate": good / len(allr) if allr else None,
                         "steady_retx": len(steady),
                         "steady_pass_rate": sgood / len(steady) if steady else None,
                         "rounds_pass": rpass, "rounds": len(rows), "rtt_ms_median": rtt,
                         "timeouts": exp, "rto_spurious": spur, "errors": len(rows) - len(ok)}
        s = summary[name]
        print(f"{name:24s} {len(allr):5d} {s['p5']:6.2f} {s['p50']:6.2f} {s['p95']:6.2f} "
              f"{(s['pass_rate'] or 0) * 100:5.0f}% {(s['steady_pass_rate'] or 0) * 100:4.0f}% "
              f"of {len(steady):3d} {rpass:3d}/{len(rows):<4d} {rtt:7.2f} {exp:8d} {spur:8d} "
              f"{s['errors']:6d}")
    out = os.path.join(B, "results")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "rto_tail.json"), "w") as f:
        json.dump({"rounds": ROUNDS, "loss": LOSS, "summary": summary, "runs": res}, f, indent=1)
    print(f"results: {os.path.join(out, 'rto_tail.json')}")


if __name__ == "__main__":
    main()
