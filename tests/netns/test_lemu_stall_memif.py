# SPDX-License-Identifier: BSD-3-Clause
"""lossy-emu --stall-detect on the memif path of bench/emu/accuracy_memif.py
(docs/performance.md "The emulator's own share on memif"): exact counts only, no timing.

A source lossy-emu reads N frames from a pcap (net_pcap) and paces them out of a memif
client (`rate`); the measured lossy-emu takes them on its memif server port, delays them
(`delay 1ms`) with --stall-detect and sends them to net_null (no-rx: nothing comes back).
Whatever the host does to the timing, every frame arrives and leaves, every release is
booked once (own share or excluded), each TX PMD call is timed once, and the report
holds the detector's figures only when it ran (the source, without it, has none).
"""
import json
import os
import shlex
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dpdk", "emu"))
import lemu_net as ln  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from rocewan.testbed.telemetry import Telemetry, socket_path  # noqa: E402

LEMU = os.path.join(os.environ.get("ROCEWAN_BUILD", os.path.join(HERE, "..", "..", "build")),
                    "app", "lossy-emu", "lossy-emu")
N = 3000
EAL = "--no-huge -m 256 --no-shconf --no-pci --log-level=lib.eal:error"
HANG_GUARD_S = 120


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
    try:
        return p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None


def test_stall_detect_on_memif_counts_reconcile(tmp_path):
    tag = f"lsm{os.getpid()}"
    sock = f"/run/rocewan-memif/{tag}.sock"
    os.makedirs(os.path.dirname(sock), exist_ok=True)
    if os.path.exists(sock):
        os.unlink(sock)
    pcap = str(tmp_path / "in.pcap")
    ln.write_pcap(pcap, [(0, ln.probe(1, k, size=64 + (k % 7) * 150)) for k in range(N)])
    mjs, sjs = str(tmp_path / "m.json"), str(tmp_path / "s.json")
    memif = f"id=0,socket={sock},socket-abstract=no"
    mlog, slog = open(tmp_path / "m.log", "w"), open(tmp_path / "s.log", "w")
    # idle back-off (no --busy-poll): CI's host is shared; the sleeps it asks for are
    # the detector's other input
    meas = subprocess.Popen(shlex.split(
        f"{LEMU} -l 1 {EAL} --file-prefix {tag}m --vdev net_memif0,role=server,{memif} "
        f"--vdev net_null0,no-rx=1 -- --stall-detect --tx-coalesce 0 --seed 1 "
        f"--a2b 'delay 1ms' --json {mjs}"), stdout=mlog, stderr=subprocess.STDOUT)
    src = None
    try:
        t0 = time.monotonic()
        while not os.path.exists(sock):
            assert meas.poll() is None, open(tmp_path / "m.log").read()
            assert time.monotonic() - t0 < HANG_GUARD_S, "no memif socket"
            time.sleep(0.05)
        tel = Telemetry(socket_path(f"{tag}m"), timeout=HANG_GUARD_S, alive=lambda: meas.poll() is None)
        # the source: N frames from the pcap, paced at 16 Mbit/s (about 0.1 s); its queue
        # holds them all (limit), so nothing is dropped before the memif
        src = subprocess.Popen(shlex.split(
            f"{LEMU} -l 0 {EAL} --file-prefix {tag}s --vdev net_pcap0,rx_pcap={pcap},tx_pcap=/dev/null "
            f"--vdev net_memif0,role=client,{memif} -- --tx-coalesce 0 --seed 1 "
            f"--a2b 'limit {2 * N} rate 16mbit' --json {sjs}"), stdout=slog, stderr=subprocess.STDOUT)
        st = {}
        t0 = time.monotonic()
        while st.get("tx_pkts", 0) < N:  # ends on the event: every frame left the measured emulator
            logs = open(tmp_path / "m.log").read() + open(tmp_path / "s.log").read()
            assert meas.poll() is None and src.poll() is None, logs
            assert time.monotonic() - t0 < HANG_GUARD_S, f"{st.get('tx_pkts')} of {N} frames: {st}"
            time.sleep(0.1)
            st = tel.get("/lossy_emu/stats,a2b") or {}  # None until the data path runs
        tel.close()
    finally:
        rs = stop(src) if src is not None else None
        rm = stop(meas)
        mlog.close()
        slog.close()
        if os.path.exists(sock):  # a server leaves its socket file behind
            os.unlink(sock)
    assert rs == 0 and rm == 0, open(tmp_path / "m.log").read() + open(tmp_path / "s.log").read()
    s = json.load(open(sjs))["results"]["a2b"]
    m = json.load(open(mjs))["results"]
    a = m["a2b"]
    assert s["rx_pkts"] == s["tx_pkts"] == N, s
    assert a["rx_pkts"] == a["tx_pkts"] == N and a["in_flight"] == 0, a
    for k in ("drop_loss", "drop_queue", "drop_nombuf", "drop_ctrl", "drop_multiseg", "rx_missed"):
        assert a[k] == 0, (k, a)
    e, sd = a["delay_err_us"], a["stall_detect"]
    # every release booked once: in the own share or excluded as delayed by a measured stall
    assert e["samples"] == N, e
    assert e["own_samples"] + e["stall_excluded"] == e["samples"], e
    # the detector checked before the releases, and a stall is a check that found one
    assert 1 <= sd["checks"] and sd["stalls"] <= sd["checks"], sd
    assert (sd["stalls"] == 0) == (sd["stall_off_ms"] == 0), sd
    # each TX PMD call timed once: net_null takes every frame, so each call sent some
    assert sd["tx_call_us"]["calls"] == a["tx_bursts"] > 0, (sd, a["tx_bursts"])
    assert sd["rx_call_us"]["calls"] >= 1, sd
    # the release error at the port: one sample per frame sent
    assert sd["tx_done_err_us"]["calls"] == a["tx_pkts"] == N, sd
    # b2a (null no-rx -> memif) carried nothing and released nothing
    b = m["b2a"]
    assert b["rx_pkts"] == b["tx_pkts"] == 0 and b["delay_err_us"]["samples"] == 0, b
    assert b["delay_err_us"]["own_samples"] == b["delay_err_us"]["stall_excluded"] == 0, b
    assert b["stall_detect"]["tx_call_us"]["calls"] == 0, b
    # negative control: the source ran without --stall-detect, so no own share and no detector
    assert "own_samples" not in s["delay_err_us"] and "stall_detect" not in s, s
