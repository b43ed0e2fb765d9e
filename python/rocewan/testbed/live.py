"""A topology left running: `testbed up`, `testbed down`, `testbed capture`."""
import os
import signal
import subprocess
import threading

from . import report, runner, topo
from .experiments import load_cfg, validate


def up(cfg_path: str | None = None, sets: list[str] | None = None, prefix: str = "tb",
       capturable: bool = False) -> int:
    """Build the topology, start lossy-emu with the config's link, print how to run the rnics.
    capturable: on memif links, lossy-emu runs in the shared EAL mode `testbed capture`
    attaches to (docs/capture.md); veth links are always capturable (tcpdump)."""
    cfg = load_cfg(cfg_path, sets, False)  # --set applies to the defaults too
    transport = cfg["link"]["transport"]
    t = topo.Topology(prefix, cfg["rnic"]["mtu"], transport,
                      shared=capturable and transport == "memif").up()
    spec = runner.link_specs(cfg)
    os.makedirs(report.RESULTS, exist_ok=True)
    t.start_emu(spec["a2b"], spec["b2a"], cfg["run"]["seed"], os.path.join(report.RESULTS, "up-emu.json"))
    t.procs = []  # leave them running: `testbed down` removes them
    eal = t._eal_rnic("B")
    print(f"topology '{prefix}' is up: namespaces {t.ns['A']} {t.ns['E']} {t.ns['B']}")
    print(f"  lossy-emu: a2b '{spec['a2b']}'  b2a '{spec['b2a']}'")
    print("  run the rnics, e.g.:")
    print(f"    ip netns exec {t.ns['B']} {topo.binary('rnic')} {eal} -- --ip {t.rip['B']}/24 "
          f"{runner.rnic_opts(cfg)} write_bw")
    print(f"    ip netns exec {t.ns['A']} {topo.binary('rnic')} {t._eal_rnic('A')} -- --ip {t.rip['A']}/24 "
          f"{runner.rnic_opts(cfg)} write_bw {t.kip['B']}")
    if transport == "memif" and not capturable:
        print(f"  capture: needs `testbed up ... --capturable` on memif links (docs/capture.md);  "
              f"remove: testbed down --prefix {prefix}")
    else:
        print(f"  capture: testbed capture --prefix {prefix} --seconds 5;  remove: testbed down --prefix {prefix}")
    return 0


def down(prefix: str = "tb") -> int:
    gone = topo.cleanup(prefix)
    print(f"removed {len(gone)} namespace(s){': ' + ' '.join(gone) if gone else ''}")
    return 0


def capture(side: str = "both", seconds: int = 5, out: str | None = None, prefix: str = "tb") -> int:
    """tcpdump on the rnics' veths. The af_packet PMD sends with PACKET_QDISC_BYPASS,
    so a tap on an rnic's interface sees only what that rnic *receives*: side A holds
    B's frames, side B holds A's; "both" captures the two and merges them by time."""
    sides = "AB" if side == "both" else side
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    for sd in sides:
        if f"{prefix}{sd}" not in listed:
            raise topo.TopoError(f"namespace {prefix}{sd} does not exist: start a topology with "
                                 f"`testbed up --prefix {prefix}`")
    out = out or os.path.join(report.RESULTS, f"capture-{side}.pcap")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    if os.path.exists(os.path.join(topo.memif_dir(prefix), "A.sock")):
        return capture_memif(sides, seconds, out, prefix)
    parts = {sd: (out if len(sides) == 1 else f"{out}.{sd}") for sd in sides}
    procs = [subprocess.Popen(["ip", "netns", "exec", f"{prefix}{sd}", "tcpdump", "-i", f"{prefix}v{sd}",
                               "-Q", "in", "-s", "0", "-U", "-w", parts[sd],
                               "udp port 4791 or ether proto 0x8808"],
                              stderr=subprocess.PIPE, text=True) for sd in sides]
    # tcpdump says "listening on IF" once its capture is open: only then is the capture
    # announced, so a caller that waits for the line misses no frame
    for sd, p in zip(sides, procs):
        line = p.stderr.readline()
        if "listening on" not in line:
            for q in procs:
                q.kill()
            raise topo.TopoError(f"tcpdump on {prefix}v{sd}: {line.strip() or 'exited'} "
                                 f"(needs tcpdump, installed by scripts/bootstrap.sh)")
    stop = _stop_on_signal()
    until = f"for {seconds} s" if seconds > 0 else "until interrupted (Ctrl-C, SIGINT or SIGTERM)"
    print(f"capturing RoCEv2 and MAC control received by rnic {' and '.join(sides)} {until} -> {out}",
          flush=True)
    stop.wait(seconds if seconds > 0 else None)
    for p in procs:
        p.terminate()  # tcpdump flushes its file and exits on SIGTERM
        p.communicate()
    if len(sides) == 2:
        r = subprocess.run(["mergecap", "-w", out, parts["A"], parts["B"]], capture_output=True, text=True)
        if r.returncode:
            raise topo.TopoError(f"mergecap: {r.stderr.strip()}")
        for f in parts.values():
            os.unlink(f)
    res = validate(out)
    return 1 if res["failed"] else 0


def _stop_on_signal():
    """SIGINT and SIGTERM end a capture. The handlers are set here, not inherited: a shell
    starts background jobs with SIGINT ignored, and Python keeps it ignored then."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def capture_memif(sides, seconds, out, prefix):
    """dpdk-dumpcap on lossy-emu's memif ports (side A: port 0, the link to rnic A, both
    directions; B: port 1), and tcpdump on the control veth for perftest's TCP exchange,
    merged into one pcap (docs/capture.md)."""
    # a shared-config primary on hugepages leaves its hugepage_info beside its config; a
    # --no-huge one (today's mode) has a config a secondary still cannot use
    if not os.path.exists(f"/var/run/dpdk/{prefix}E/hugepage_info"):
        raise topo.TopoError(f"lossy-emu of topology '{prefix}' runs with a private --no-huge heap: "
                             f"dpdk-dumpcap cannot attach; bring it up with "
                             f"`testbed up CFG --capturable --prefix {prefix}` (docs/capture.md)")
    ns = {r: f"{prefix}{r}" for r in "AEB"}
    cap = topo.DumpCapture(prefix, ns, out, sides)
    stop = _stop_on_signal()
    until = f"for {seconds} s" if seconds > 0 else "until interrupted (Ctrl-C, SIGINT or SIGTERM)"
    links = " and ".join(f"lossy-emu - rnic {s}" for s in sides)
    print(f"capturing the memif link(s) {links} (dpdk-dumpcap) and perftest's TCP exchange "
          f"{until} -> {out}", flush=True)
    stop.wait(seconds if seconds > 0 else None)
    cap.stop()
    for sd, rep in cap.report.items():
        print(f"  link to rnic {sd}: {rep['captured']} frames captured, {rep['dropped']} dropped")
    res = validate(out)
    return 1 if res["failed"] else 0
