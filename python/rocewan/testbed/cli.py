"""testbed: build the WAN topology, run experiments, show the results.

    testbed demo                       the main job (what `make demo` runs)
    testbed run configs/NAME.toml      one experiment from a config
    testbed sweep CFG --param K=V1,V2  a grid over one or two parameters
    testbed up [CFG] / testbed down    leave the topology running / remove it
    testbed capture --seconds N        pcap of a running topology, then validate
    testbed reproduce NAME             a cited paper's headline result (gbn-model)
"""
import argparse
import importlib.util
import inspect
import os
import sys

from . import config, demo, experiments, lab, live, topo
from .. import checkout
from .. import trace as loss_trace
from .config import ConfigError
from .repro import REPRODUCTIONS

PLOTTING = ("demo", "run", "sweep", "reproduce")  # the commands that write plots (report.py)

# This module only parses the command line and dispatches: each command below hands
# the parsed options, as plain typed arguments, to the module that does the work.


def cmd_demo(a):
    return demo.run_demo(loss=a.loss, quick=a.quick, out=a.out, prefix=a.prefix)


def cmd_run(a):
    return experiments.run(a.config, sets=a.set, quick=a.quick, out=a.out, prefix=a.prefix)


def cmd_sweep(a):
    return experiments.sweep(a.config, a.param, sets=a.set, quick=a.quick, out=a.out, prefix=a.prefix)


def cmd_up(a):
    return live.up(a.config, sets=a.set, prefix=a.prefix, capturable=a.capturable)


def cmd_down(a):
    return live.down(prefix=a.prefix)


def cmd_capture(a):
    return live.capture(side=a.side, seconds=a.seconds, out=a.out, prefix=a.prefix)


def cmd_lab(a):
    if a.print:
        return lab.print_commands(a.config, sets=a.set)
    return lab.run_lab(a.config, sets=a.set, out=a.out)


def cmd_reduce(a):
    return lab.reduce(a.config, a.emu, a.rnic_a, a.rnic_b, sets=a.set, out=a.out)


def cmd_reproduce(a):
    if a.name not in REPRODUCTIONS:
        raise ConfigError(f"unknown reproduction '{a.name}' (available: {', '.join(REPRODUCTIONS)})")
    fn = REPRODUCTIONS[a.name][0]
    if a.rounds < 1:
        raise ConfigError(f"--rounds must be at least 1, not {a.rounds}")
    kw = {}
    if a.rounds != 1:
        if "rounds" not in inspect.signature(fn).parameters:
            raise ConfigError(f"reproduction '{a.name}' runs one round per point (no --rounds)")
        kw["rounds"] = a.rounds
    if a.mtu is not None:
        if "mtu" not in inspect.signature(fn).parameters:
            raise ConfigError(f"reproduction '{a.name}' runs at one MTU (no --mtu)")
        kw["mtu"] = a.mtu
    return fn(prefix=a.prefix, quick=a.quick, out=a.out, **kw)


def parser(prog="testbed"):
    p = argparse.ArgumentParser(prog=prog, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="config keys (TOML, every one optional):\n" + config.describe_schema())
    p.add_argument("--prefix", default="tb", help="name prefix of namespaces and DPDK file prefixes (default tb)")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    d = sub.add_parser("demo", help="the main job: Go-Back-N on a lossless and a lossy WAN vs the model")
    d.add_argument("--loss", default="gemodel 0.02% 20%", help="loss model of the lossy case (netem grammar)")
    d.add_argument("--quick", action="store_true", help="shorter runs (CI)")
    d.add_argument("--out", help="results directory (default results/demo)")
    d.set_defaults(func=cmd_demo)
    for name, fn, hlp in (("run", cmd_run, "run configs/NAME.toml"), ("sweep", cmd_sweep, "grid over parameters")):
        r = sub.add_parser(name, help=hlp)
        r.add_argument("config")
        r.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE", help="override a config key")
        r.add_argument("--quick", action="store_true", help="short durations, one repetition (CI)")
        r.add_argument("--out", help="results directory (default results/NAME)")
        if name == "sweep":
            r.add_argument("--param", action="append", required=True, metavar="SECTION.KEY=V1,V2,...")
        r.set_defaults(func=fn)
    u = sub.add_parser("up", help="build the topology and leave lossy-emu running")
    u.add_argument("config", nargs="?")
    u.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE")
    u.add_argument("--capturable", action="store_true",
                   help="memif links: run lossy-emu as a shared-config primary on hugepages, so "
                        "`testbed capture` (dpdk-dumpcap) can attach (docs/capture.md)")
    u.set_defaults(func=cmd_up)
    sub.add_parser("down", help="remove the topology and its processes").set_defaults(func=cmd_down)
    c = sub.add_parser("capture", help="pcap of a running topology's link, then rocewan validate")
    c.add_argument("--side", choices=["A", "B", "both"], default="both",
                   help="veth: whose received frames (af_packet TX bypasses taps): A, B or both "
                        "merged; memif: the link to rnic A, to rnic B, or both (each frame twice)")
    c.add_argument("--seconds", type=int, default=5,
                   help="how long (default 5); 0: until interrupted (Ctrl-C, SIGINT, SIGTERM), then validate")
    c.add_argument("--out")
    c.set_defaults(func=cmd_capture)
    lb = sub.add_parser("lab", help="lab mode: run the experiment on the config's [lab] hosts over ssh, "
                        "collect and reduce their JSON (docs/lab.md)")
    lb.add_argument("config")
    lb.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE")
    lb.add_argument("--print", action="store_true", help="only print the per-host ssh commands")
    lb.add_argument("--out", help="results directory (default results/NAME-lab)")
    lb.set_defaults(func=cmd_lab)
    rd = sub.add_parser("reduce", help="lab mode: combine the JSON of lossy-emu and both rnics into a result row")
    rd.add_argument("config")
    rd.add_argument("--emu", required=True, metavar="EMU.json")
    rd.add_argument("--rnic-a", required=True, metavar="RNIC_A.json")
    rd.add_argument("--rnic-b", required=True, metavar="RNIC_B.json")
    rd.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE")
    rd.add_argument("--out", metavar="RESULT.json")
    rd.set_defaults(func=cmd_reduce)
    # argparse %-formats help strings: the descriptions' "%" are literal
    rp = sub.add_parser("reproduce", help="a cited paper's result (docs/references.md): " +
                        "; ".join(f"{k} ({v[1]})" for k, v in REPRODUCTIONS.items()).replace("%", "%%"))
    rp.add_argument("name")
    rp.add_argument("--quick", action="store_true")
    rp.add_argument("--out")
    rp.add_argument("--rounds", type=int, default=1, metavar="N",
                    help="run every point N times, report median and min-max (reproductions that "
                         "take it: lowar, lowar-burst, lowar-latency, lowar-rtt, lowar-memif)")
    rp.add_argument("--mtu", type=int, metavar="BYTES",
                    help="path MTU of the reproductions that take it (lowar-memif: 4096, the "
                         "default, or 1024)")
    rp.set_defaults(func=cmd_reproduce)
    tr = sub.add_parser("trace", help="loss -> repair: join a lossy-emu --drop-log with rnic --trace "
                        "files (DROPLOG TRACE... [--rtt MS] [--json OUT]; no root needed)")
    tr.add_argument("args", nargs=argparse.REMAINDER)
    tr.set_defaults(func=lambda a: loss_trace.main(a.args))
    return p


def main(argv=None, prog="testbed"):
    a = parser(prog).parse_args(argv)
    if a.cmd != "trace":
        # configs, binaries and results are the checkout's (rocewan.checkout)
        try:
            root = checkout.root()
        except checkout.CheckoutError as e:
            print(f"{prog}: {e}", file=sys.stderr)
            return 2
        cfg = getattr(a, "config", None)
        if cfg and not os.path.isabs(cfg) and not os.path.exists(cfg) and \
                os.path.exists(os.path.join(root, cfg)):
            a.config = os.path.join(root, cfg)  # configs/NAME.toml from anywhere
    if a.cmd in PLOTTING and importlib.util.find_spec("matplotlib") is None:
        # checked before anything runs, not after the experiment when the plot is drawn
        print(f"{prog}: '{a.cmd}' draws plots and needs matplotlib: install the testbed extra "
              "(pip install './python[testbed]'; Debian: apt-get install python3-matplotlib)", file=sys.stderr)
        return 2
    if os.geteuid() != 0 and a.cmd not in ("trace",):
        print("testbed: needs root (network namespaces, veth pairs, DPDK)", file=sys.stderr)
        return 2
    try:
        return a.func(a)
    except ConfigError as e:
        print(f"testbed: {e}", file=sys.stderr)
        return 2
    except topo.TopoError as e:
        print(f"testbed: {e}", file=sys.stderr)
        topo.cleanup(a.prefix)
        return 1
    except lab.LabError as e:  # the lab run stopped what it started (lab.run_lab)
        print(f"testbed: lab: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if a.cmd != "lab":  # a lab run stopped its remote processes itself (lab.run_lab)
            topo.cleanup(a.prefix)
        return 130


def console_main():
    """The ``rocewan-testbed`` console script (pip install ./python): ``./testbed`` of the
    checkout named by ROCEWAN_ROOT, or of an editable install's own checkout."""
    sys.exit(main(prog="rocewan-testbed"))
