#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Compare two rocewan/1 --json documents (or two directories of them) field by field,
timing fields excluded: what a run measured with a clock differs from run to run, every
count, name and setting must not.

  scripts/json_compare.py A.json B.json
  scripts/json_compare.py DIR_A DIR_B      (the *.json files both hold, by name)

Exit 0 if equal, 1 with one line per differing field. Excluded: TIMING (a clock's
readings) and LOAD (counts that differ between two runs of one build), listed below.
"""
import json
import os
import sys

# Fields that a clock or the host's load decides, by key name wherever they occur.
TIMING = {
    # the document's start time, the build that wrote it, where it was written
    "started_utc", "version", "json",
    # rnic results: rates and durations of the run
    "duration_s", "bw_avg_mbps", "bw_peak_mbps", "goodput_gbps", "msg_rate_mpps",
    "lat_min_us", "lat_typical_us", "lat_avg_us", "lat_p99_us", "lat_p999_us", "lat_max_us",
    "last_completion_s",
    # rnic: goodput over time and the congestion-control trace (sampled by the clock)
    "samples", "rx_goodput_samples", "cc_trace",
    # per-QP CC state and the retransmit timer's estimate (measured RTTs)
    "rate_gbps", "target_gbps", "alpha", "rtt_us", "srtt_us", "rttvar_us", "rto_us", "stall_us",
    "stall_max_us",
    # the process: CPU time, context switches, faults, memory (getrusage)
    "process",
    # poll loops: iterations, bursts, the longest gap and busy span
    "polls", "idle_polls", "idle_sleeps", "poll_busy_max_ns", "poll_gap_max_ns", "rx_bursts", "tx_bursts",
    # lossy-emu: forwarding time, queue delay statistics
    "forward_s", "sum_ms", "mean", "p50", "p99", "p999", "max", "own_max", "own_p50", "own_p99",
    "stall_off_ms",
}

# Counts that a run's timing decides, so two runs of the same binary differ in them
# (measured: scripts/json_runs.py twice on one build, every case):
LOAD = {
    # the kernel's own frames on the veths (IPv6 ND, ARP refreshes) that the ports and
    # the emulator see and count with the RoCE frames
    "pmd_counters", "rx_frames", "tx_frames", "rx_nd_other", "rx_not_for_us", "rx_arp_req",
    "rx_arp_reply", "arp_requests_sent", "rx_pkts", "tx_pkts", "rx_bytes", "tx_bytes",
    # coalesced ACKs: how many requests one ACK covers depends on when the responder polls
    "rx_acks", "tx_acks", "rx_packets", "tx_packets", "rx_roce", "rtt_samples",
    "rtt_notice_samples", "karn_skipped", "retx_queue_hwm", "rx_dup_responses",
    # the requester stopped by its in-flight window: when the ACKs come back
    "window_full",
    # the loss window: a loss counts as a cut or as held by the RTT's queue signal
    "loss_window_cuts", "loss_window_held", "loss_window_undone",
    # FEC: a partial block is flushed by a timer; the receiver holds what arrives meanwhile
    "fec_tx_flushes", "fec_tx_frames", "fec_tx_overhead_bytes", "fec_rx_frames", "fec_held_packets",
}

# Per case (a document's file name starts with it): vrp runs with -t 128 outstanding, so
# how many packets the NACKed resends overtake, and whether a message finds a free
# tracking slot, depends on the timing
CASE = {
    "vrp-": {"rx_ooo_placed", "rx_out_of_sequence", "rx_ooo_guarded_bytes", "vrp_acks_sent",
             "vrp_acks_received", "vrp_untracked_msgs"},
}


def walk(a, b, path, out, skip):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in skip:
                continue
            p = f"{path}.{k}" if path else k
            if k not in a or k not in b:
                out.append(f"{p}: only in {'second' if k not in a else 'first'}")
                continue
            walk(a[k], b[k], p, out, skip)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} elements vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", out, skip)
    elif a != b:
        out.append(f"{path}: {json.dumps(a)} vs {json.dumps(b)}")


def compare_files(fa, fb):
    with open(fa) as f:
        a = json.load(f)
    with open(fb) as f:
        b = json.load(f)
    out = []
    skip = TIMING | LOAD
    for pfx, keys in CASE.items():
        if os.path.basename(fa).startswith(pfx):
            skip = skip | keys
    walk(a, b, "", out, skip)
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
