#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fixed-seed rnic runs through lossy-emu with deterministic drops, one per recovery mode,
their --json documents written to a directory (compare two with scripts/json_compare.py).

rnic A -> lossy-emu (drop-psn rules, each once) -> rnic B on veth pairs in network
namespaces (python/rocewan/testbed/topo.py). Every retransmit timer is far above a loaded
host's stall, so each resend answers a drop and the counters repeat from run to run.
Needs root; run it under `flock /tmp/rw-e2e.lock`.

  scripts/json_runs.py --build build --out DIR [--case NAME ...]
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

QPN_B = 0x11  # ROCE_FIRST_QPN: B's only QP, the destination of A's requests


def client_psn(seed):
    """rnic_main.c setup_objects: the client's first PSN of QP 0."""
    return ((seed + 1) * 2654435761) & 0xFFFFFF


def selective(mode):
    """4-packet WRITEs one at a time; the second packet of messages 5 and 12 dropped."""
    timers = "-u 22 --rto-min 10s --rto-max 10s" + (" --rto-low 10000000" if mode == "irn" else "")
    return dict(seed=11, mtu=1024, drops=[4 * m + 1 for m in (5, 12)],
                opts=f"-s 4096 -n 20 -t 1 -m 1024 --seed 11 --recovery {mode} {timers}")


CASES = {
    "gbn": selective("gbn"),
    "gbone": selective("gbone"),
    "irn": selective("irn"),
    # one drop in each of four 128-packet groups, all rebuilt by xor:32,4
    "fec-gbn": dict(seed=11, mtu=1024, drops=[300, 777, 1500, 2000],
                    opts="-s 65536 -n 40 -t 2 -m 1024 --seed 11 --fec-hold 100ms --rto fixed -u 18 "
                         "--recovery fec+gbn"),
    # 16-packet WRITEs; message 5 loses one packet (tolerated), 9 its first, 13 two in a row
    "vrp": dict(seed=7, mtu=1024, drops=[16 * 5 + 7, 16 * 9, 16 * 13 + 4, 16 * 13 + 5],
                opts="-s 16384 -n 20 -m 1024 --seed 7 --rto-min 1s --recovery vrp "
                     "--vrp-loss 10 --vrp-window 16 --vrp-max-burst 1024"),
}


def run_case(out, name, case):
    from rocewan.testbed.topo import Topology
    psn0 = client_psn(case["seed"])
    spec = " ".join(f"drop-psn 0x{QPN_B:x}:0x{(psn0 + d) & 0xFFFFFF:x}" for d in case["drops"])
    js = {k: os.path.join(out, f"{name}-{k}.json") for k in ("emu", "A", "B")}
    with Topology("sj%d" % (os.getpid() % 1000), case["mtu"]) as topo:
        emu = topo.start_emu(spec, "", 1, js["emu"])
        rc_a, out_a, rc_b, out_b = topo.rnic_pair("write_bw", case["opts"], js["A"], js["B"], timeout=120)
        topo.stop(emu)
    if rc_a or rc_b:
        sys.stderr.write(f"{name}: exit codes A {rc_a} B {rc_b}\n--- A:\n{out_a[-2000:]}\n"
                         f"--- B:\n{out_b[-2000:]}\n")
        return False
    print(f"{name}: {js['A']} {js['B']} {js['emu']}")
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="meson build directory")
    ap.add_argument("--out", required=True, help="directory for the --json documents")
    ap.add_argument("--case", action="append", choices=sorted(CASES), help="only these (default: all)")
    a = ap.parse_args()
    os.environ["ROCEWAN_BUILD"] = os.path.abspath(a.build)
    os.makedirs(a.out, exist_ok=True)
    ok = [run_case(a.out, n, CASES[n]) for n in (a.case or CASES)]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
