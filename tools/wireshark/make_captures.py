#!/usr/bin/python3
"""Capture real rnic runs with losses for the dissector's test corpus.

Each run is rnic A -> lossy-emu -> rnic B in network namespaces (the testbed
topology, rocewan.testbed.topo.Topology over veth), with the emulator dropping
every Nth RoCEv2 frame both ways (SPEC ``drop-nth``), and tcpdump on both
rnics' interfaces taking what each one receives: the RoCE frames of both
directions after the emulator (so the drops show as gaps) and perftest's TCP
exchange, whose version messages carry the capability records
(docs/perftest-exchange.md). The parts are merged by time with mergecap.

    /usr/bin/python3 tools/wireshark/make_captures.py OUT_DIR [RUN ...]

writes OUT_DIR/run-RUN.pcap for RUN in gbone, irn, fec-gbn, vrp (all by
default). Root only; needs a build (ROCEWAN_BUILD, default ./build).
tests/golden/run-*.pcap were made with it (docs/wireshark.md).
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("ROCEWAN_BUILD", os.path.join(ROOT, "build"))

from rocewan.testbed.topo import Topology  # noqa: E402

# run -> (perftest mode and options for both rnics, lossy-emu SPEC a2b, b2a)
RUNS = {
    "gbone": ("send_bw", "-s 4096 -n 16 -m 1024 --recovery gbone", "drop-nth 9", "drop-nth 7"),
    "irn": ("write_bw", "-s 16384 -n 8 -m 1024 --recovery irn", "drop-nth 11", "drop-nth 5"),
    "fec-gbn": ("write_bw", "-s 16384 -n 8 -m 1024 --recovery fec+gbn --fec xor:8,2",
                "drop-nth 13", ""),
    "vrp": ("write_bw", "-s 16384 -n 8 -m 1024 --recovery vrp --vrp-loss 20 "
            "--vrp-wr loss=20,crit=0:64/qp", "drop-nth 10", "drop-nth 6"),
}
PREFIX = "xwicap"


def capture(topo, path):
    parts, procs = [], []
    for side in "AB":
        part = f"{path}.{side}"
        parts.append(part)
        procs.append(subprocess.Popen(
            f"ip netns exec {topo.ns[side]} tcpdump -i {topo.rnic_iface(side)} -Q in -s 0 -U "
            f"-w {part} 'udp port 4791 or tcp port 18515' 2>/dev/null",
            shell=True, start_new_session=True))
    time.sleep(1.0)
    return parts, procs


def stop_capture(path, parts, procs):
    time.sleep(0.5)
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGINT)
        p.wait(timeout=20)
    subprocess.run(["mergecap", "-F", "pcap", "-w", path] + parts, check=True)
    for f in parts:
        os.unlink(f)


def make(run, out_dir):
    mode, opts, a2b, b2a = RUNS[run]
    path = os.path.join(out_dir, f"run-{run}.pcap")
    with tempfile.TemporaryDirectory(prefix="xwicap") as tmp, Topology(PREFIX, 1024) as topo:
        emu = topo.start_emu(a2b, b2a, 1, os.path.join(tmp, "emu.json"))
        parts, procs = capture(topo, path)
        rc_a, out_a, rc_b, out_b = topo.rnic_pair(mode, opts + " --rto-min 20ms", os.path.join(tmp, "a.json"),
                                                  os.path.join(tmp, "b.json"), timeout=120)
        stop_capture(path, parts, procs)
        topo.stop(emu)
    if rc_a or rc_b:
        raise SystemExit(f"{run}: rnic exit codes {rc_a} {rc_b}\n--- A:\n{out_a[-3000:]}\n--- B:\n{out_b[-3000:]}")
    print(path)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    for run in argv[2:] or list(RUNS):
        make(run, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
