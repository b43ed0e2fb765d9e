#!/usr/bin/python3
"""Capture rxe <-> rxe rdma_cm ground truth: two bridged guests of the interop
VM (tests/interop/build_vm.sh), each program of rdmacm_runs.GOLDEN_RUNS run
once through the guests' command loops, tcpdump on the host side of the
bridge (UDP 4791 only: these programs use no TCP).

    flock /tmp/rw-e2e.lock /usr/bin/python3 tests/interop/capture_cm_ground_truth.py \\
        [--out tests/golden/cm] [--image build/interop] [NAME ...]

Writes OUT/NAME.pcap, OUT/NAME.json (the normalised sequence, rocewan.cmtrace)
and OUT/versions.txt (kernel, rdma-core, perftest, qperf); with --json-only
only the .json files, from the .pcap files already there. See docs/rdma-cm.md.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "python"))

import vm as vmlib  # noqa: E402
from rdmacm_runs import GOLDEN_RUNS, BridgeCapture, perftest_repeat, run_cm_pair  # noqa: E402
from rocewan import cmtrace  # noqa: E402

NET = ("10.9.1.1/24", "10.9.1.2/24", "10.9.1.3/24")     # bridge, server, client


def host_versions() -> str:
    pk = "rdma-core librdmacm1 rdmacm-utils perftest qperf ibverbs-providers"
    cp = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Version}\\n", *pk.split()],
                        capture_output=True, text=True)
    return cp.stdout


def write_json(out: Path, name: str) -> list:
    """OUT/NAME.json from OUT/NAME.pcap: one message per line."""
    seq = cmtrace.normalise(cmtrace.read_pcap(out / f"{name}.pcap"), app=GOLDEN_RUNS[name].app)
    lines = ",\n".join(json.dumps(m, sort_keys=True) for m in seq)
    (out / f"{name}.json").write_text(f"[\n{lines}\n]\n")
    return seq


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(REPO / "tests" / "golden" / "cm"))
    ap.add_argument("--image", default=str(REPO / "build" / "interop"))
    ap.add_argument("--json-only", action="store_true",
                    help="only rewrite OUT/NAME.json from the OUT/NAME.pcap already there")
    ap.add_argument("names", nargs="*", help=f"default: all of {' '.join(GOLDEN_RUNS)}")
    args = ap.parse_args(argv)
    names = args.names or list(GOLDEN_RUNS)
    for n in names:
        if n not in GOLDEN_RUNS:
            ap.error(f"unknown run {n!r}: choose from {' '.join(GOLDEN_RUNS)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.json_only:
        for n in names:
            print(f"{n}: {len(write_json(out, n))} messages")
        return 0
    img = vmlib.build_image(args.image)
    vmlib.cleanup_stale_netns()
    with vmlib.Netns() as ns, vmlib.Bridge("rwcmbr0", NET[0], netns=ns) as br:
        srv = vmlib.VM("rwcmsrv", NET[1], bridge=br, netns=ns, image_dir=img)
        cli = vmlib.VM("rwcmcli", NET[2], bridge=br, netns=ns, image_dir=img)
        with vmlib.boot_all([srv, cli]):
            kver = srv.run("uname -r")[1].strip()
            (out / "versions.txt").write_text(f"guest kernel {kver}\n{host_versions()}")
            for n in names:
                run = GOLDEN_RUNS[n]
                pcap = out / f"{n}.pcap"
                t0 = time.monotonic()
                for attempt in range(3):
                    # a repeat needs a fresh capture: the golden holds one clean run
                    with BridgeCapture(ns, br.name, pcap):
                        crc, cout, src, sout = run_cm_pair(srv, cli, run, attempts=1)
                    why = perftest_repeat(crc, cout, sout) if run.perftest else ""
                    if not why:
                        break
                    print(f"{n}: {why}: capture again")
                if crc != 0 or src != 0:
                    print(f"{n}: client rc {crc}, server rc {src}\n--- client\n{cout}\n"
                          f"--- server\n{sout}", file=sys.stderr)
                    return 1
                seq = write_json(out, n)
                print(f"{n}: {len(seq)} messages, {pcap.stat().st_size} bytes "
                      f"({time.monotonic() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
