#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""lossy-emu's own share of the release error on a data path without a system call per
burst (docs/performance.md "The emulator's own share on memif"), N rounds.

Per round and frame size (64 B, 1 KiB):
1. the host's busy-poll floor on CPU 1 (bench/host_jitter: a bare busy-wait, no I/O);
2. the measured lossy-emu on CPU 1 (-l 1: one lcore, forwarding on the main lcore),
   `--busy-poll --stall-detect --tx-coalesce 0`, a2b `delay 1ms`; port A a net_memif
   server, port B net_null with no-rx=1 (TX frees the frames; nothing to receive);
3. the source, a second lossy-emu on CPU 0 (-l 0): port A net_null (an endless supply
   of frames of SIZE bytes), port B the memif client; a2b `limit 64 rate R`, R =
   SIZE x 8 x 100 000 bit/s, `--tx-coalesce 0`: one frame every 10 us, smooth;
4. DUR seconds of traffic, then the source stops, then the measured emulator, whose
   --json gives the release error: total (every release) and own share (releases no
   measured host stall delayed), the stalls its detector found, and its RX/TX PMD
   calls timed apart.

Neither process makes a system call per burst: memif RX/TX is shared-memory rings,
net_null TX frees the mbufs. The measured emulator's stall detector reads its thread's
CPU time (a clock_gettime system call, not in the vDSO) once per loop iteration that
releases; that is its only one. A round fails if any frame is lost or the exclusion
does not reconcile (own_samples + stall_excluded = samples).

  bench/emu/accuracy_memif.py [BUILD_DIR]   (root for the socket under /run; BENCH_ROUNDS=N,
                                             default 10; DUR=seconds of traffic, 5;
                                             FLOOR_DUR=seconds of host_jitter, 2; PPS=100000)
"""
import json
import os
import shlex
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import claims  # noqa: E402

B = claims.build_dir(sys.argv)
DUR = float(os.environ.get("DUR", "5"))
FLOOR_DUR = float(os.environ.get("FLOOR_DUR", "2"))
PPS = int(os.environ.get("PPS", "100000"))
EMU = os.path.join(B, "app", "lossy-emu", "lossy-emu")
JITTER = os.path.join(B, "bench", "host_jitter")
TAG = f"o{os.getpid()}"
SOCK_DIR = "/run/rocewan-memif/acc"
SOCK = os.path.join(SOCK_DIR, f"{TAG}.sock")
OUT = os.path.join(B, "results")
EAL = "--no-huge --no-shconf --no-pci --log-level=lib.eal:error"
TARGET_US = 20.0


def floor():
    """The host's busy-poll floor on CPU 1: p99 and max lateness (us) of a bare busy-wait."""
    p = subprocess.run(["taskset", "-c", "1", JITTER, str(FLOOR_DUR), "10000"], capture_output=True,
                       text=True, timeout=FLOOR_DUR + 30)
    e = json.loads(p.stdout)["late_us"]
    return e["p99"], e["max"]


def wait_for(path, timeout=20):
    t0 = time.monotonic()
    while not os.path.exists(path):
        if time.monotonic() - t0 > timeout:
            raise RuntimeError(f"{path} did not appear")
        time.sleep(0.05)


def stop(p, timeout=20):
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def one_round(size, rnd):
    mjs = os.path.join(OUT, f"accuracy_memif_{size}_{rnd}.json")
    sjs = os.path.join(OUT, f"accuracy_memif_{size}_{rnd}_source.json")
    for f in (mjs, sjs, SOCK):
        if os.path.exists(f):
            os.unlink(f)
    memif = f"socket={SOCK},socket-abstract=no,id=0"
    mlog = open(mjs + ".log", "w")
    meas = subprocess.Popen(shlex.split(
        f"{EMU} -l 1 {EAL} -m 256 --file-prefix {TAG}m --vdev net_memif0,role=server,{memif} "
        f"--vdev net_null0,no-rx=1 -- --busy-poll --stall-detect --tx-coalesce 0 --seed 1 "
        f"--a2b 'delay 1ms' --json {mjs}"), stdout=mlog, stderr=subprocess.STDOUT)
    src = None
    try:
        wait_for(SOCK)
        rate_kbit = size * 8 * PPS // 1000
        src = subprocess.Popen(shlex.split(
            f"{EMU} -l 0 {EAL} -m 256 --file-prefix {TAG}s --vdev net_null0,size={size} "
            f"--vdev net_memif0,role=client,{memif} -- --busy-poll --tx-coalesce 0 --seed 1 "
            f"--a2b 'limit 64 rate {rate_kbit}kbit' --json {sjs}"), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # the memif link is up, the first frames flow
        sw0 = ctxt_switches(meas.pid)
        time.sleep(DUR)
        sw1 = ctxt_switches(meas.pid)
        stop(src)
        time.sleep(0.2)  # the last frames leave the delay line (1 ms)
    finally:
        if src is not None:
            stop(src)
        stop(meas)
    mlog.close()
    if not os.path.exists(mjs) or not os.path.exists(sjs):
        print(f"  round {rnd} {size} B: no JSON\n{open(mjs + '.log').read()[-1500:]}")
        return None
    m = json.load(open(mjs))["results"]["a2b"]
    s = json.load(open(sjs))["results"]["a2b"]
    # the forwarding thread's context switches over the traffic: a voluntary one would be
    # a sleep or a blocking call of the emulator's own, which the detector would take for
    # a host stall; busy polling on memif/null there should be none
    m["ctxt"] = {k: sw1[k] - sw0[k] for k in sw0}
    return m, s


def ctxt_switches(pid):
    """voluntary / involuntary context switches of @pid's main thread (the -l 1 lcore)."""
    d = {}
    for line in open(f"/proc/{pid}/task/{pid}/status"):
        k, _, v = line.partition(":")
        if k in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"):
            d[k.split("_")[0]] = int(v)
    return d


def main():
    if os.geteuid() != 0:
        sys.exit("bench/emu/accuracy_memif.py: needs root (the memif socket under /run)")
    for f in (EMU, JITTER):
        if not os.access(f, os.X_OK):
            sys.exit(f"bench/emu/accuracy_memif.py: {f} not built (meson -Dbench=true)")
    os.makedirs(SOCK_DIR, exist_ok=True)
    os.makedirs(OUT, exist_ok=True)
    n = claims.rounds()
    c = claims.Claims("bench_emu_accuracy_memif", B)
    rows = []
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()}; {PPS} pps, DUR {DUR} s, "
          f"delay 1ms; measured lossy-emu on CPU 1, source on CPU 0")
    print(f"{'size':>5} {'rnd':>3} {'own p99':>8} {'total p99':>10} {'own max':>9} {'excluded':>9} "
          f"{'samples':>8} {'stalls':>6} {'stall ms':>8} {'rx p99/max us':>16} {'tx p99/max us':>16} "
          f"{'floor p99/max us':>17} {'vol/invol cs':>12} {'at port p50/p99':>15}")
    for rnd in range(1, n + 1):
        for size in (64, 1024):
            fp99, fmax = floor()
            r = one_round(size, rnd)
            ok = r is not None
            if ok:
                m, s = r
                e, sd = m["delay_err_us"], m["stall_detect"]
                # every frame the source sent arrived and left; every release counted once
                ok = (m["rx_pkts"] == s["tx_pkts"] == m["tx_pkts"] == e["samples"] > 0
                      and e["own_samples"] + e["stall_excluded"] == e["samples"]
                      and sd["tx_done_err_us"]["calls"] == m["tx_pkts"])
                row = {"size": size, "round": rnd, "own_p99_us": e["own_p99"], "p99_us": e["p99"],
                       "own_max_us": e["own_max"], "max_us": e["max"], "p50_us": e["p50"],
                       "samples": e["samples"], "own_samples": e["own_samples"],
                       "excluded": e["stall_excluded"], "stalls": sd["stalls"],
                       "stall_off_ms": sd["stall_off_ms"], "stall_max_us": sd["stall_max_us"],
                       "rx_call_us": sd["rx_call_us"], "tx_call_us": sd["tx_call_us"],
                       "tx_done_err_us": sd["tx_done_err_us"],
                       "floor_p99_us": fp99, "floor_max_us": fmax, "reconciled": ok,
                       "source_tx": s["tx_pkts"], "loadavg": os.getloadavg()[0],
                       "ctxt_switches": m["ctxt"]}
                rows.append(row)
                print(f"{size:>5} {rnd:>3} {e['own_p99']:>8.1f} {e['p99']:>10.1f} {e['own_max']:>9.1f} "
                      f"{e['stall_excluded']:>9} {e['samples']:>8} {sd['stalls']:>6} "
                      f"{sd['stall_off_ms']:>8.1f} "
                      f"{sd['rx_call_us']['p99']:>7.2f}/{sd['rx_call_us']['max']:<8.0f} "
                      f"{sd['tx_call_us']['p99']:>7.2f}/{sd['tx_call_us']['max']:<8.0f} "
                      f"{fp99:>8.1f}/{fmax:<8.0f} {m['ctxt']['voluntary']:>4}/{m['ctxt']['nonvoluntary']:<5} "
                      f"{sd['tx_done_err_us']['p50']:>6.1f}/{sd['tx_done_err_us']['p99']:<8.1f}"
                      f"{'' if ok else '  COUNTS DO NOT RECONCILE'}",
                      flush=True)
            own = e["own_p99"] if r else float("nan")
            tot = e["p99"] if r else float("nan")
            c.add(f"memif, {size} B, delay 1ms, {PPS} pps: own-share release error p99 (us)",
                  f"< {TARGET_US:g} us", own, ok and own < TARGET_US)
            c.add(f"memif, {size} B, delay 1ms, {PPS} pps: total release error p99 (us), no exclusion",
                  f"< {TARGET_US:g} us", tot, ok and tot < TARGET_US)
    if os.path.exists(SOCK):  # the last server's socket file
        os.unlink(SOCK)
    c.report({"rows": rows, "pps": PPS, "dur_s": DUR})


if __name__ == "__main__":
    main()
