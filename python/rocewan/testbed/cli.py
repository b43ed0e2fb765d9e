"""testbed: build the WAN topology, run experiments, show the results.

    testbed demo                       the main job (what `make demo` runs)
    testbed run configs/NAME.toml      one experiment from a config
    testbed sweep CFG --param K=V1,V2  a grid over one or two parameters
    testbed up [CFG] / testbed down    leave the topology running / remove it
    testbed capture --seconds N        pcap of a running topology, then validate
    testbed reproduce NAME             a seed paper's headline result (gbn-model)
"""
import argparse
import copy
import itertools
import json
import os
import subprocess
import sys
import time

from . import config, model, report, runner, topo
from .. import trace as loss_trace
from .config import ConfigError, ROOT, parse_rate, parse_time

RESULTS = os.path.join(ROOT, "results")


def version():
    r = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--tags"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def write_doc(path, cfg, rows, extra=None):
    doc = {"schema": "rocewan/1", "app": "testbed", "version": version(),
           "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "config": cfg, "seed": cfg.get("run", {}).get("seed"),
           "results": {"rows": [report.strip(r) for r in rows], **(extra or {})}}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
    return path


def progress(i, n, label):
    w = 30
    k = int(w * i / n) if n else w
    sys.stdout.write(f"\r[{'#' * k}{'.' * (w - k)}] {i}/{n} {label[:60]:<60}")
    sys.stdout.flush()
    if i == n:
        sys.stdout.write("\n")


# ---- demo ------------------------------------------------------------------------------
def demo_config(quick=False):
    cfg = config.defaults()
    cfg["name"] = "demo"
    cfg["description"] = "Go-Back-N over an emulated 1 Gb/s, 20 ms RTT WAN, lossless vs gemodel 0.02% 20%"
    cfg["link"].update(rate="1gbit", rtt="20ms")
    cfg["workload"].update(duration=2 if quick else 4, size="1M", flows=40 if quick else 100, load=40)
    # seed 000's formula models plain Go-Back-N with a fixed window: no loss-reactive window
    # (docs/cc.md: with it the lossy case gets 0.46-0.55 Gb/s instead of 0.73-0.76)
    cfg["rnic"]["loss_window"] = False
    return cfg


def cmd_demo(a):
    out = a.out or os.path.join(RESULTS, "demo")
    base = demo_config(a.quick)
    loss = a.loss
    print(f"testbed demo: rnic A -> lossy-emu (1 Gb/s each way, 20 ms RTT) -> rnic B, "
          f"veth pairs in namespaces; results in {out}")
    rows = []
    cases = [("gbn lossless", ""), ("gbn lossy", loss)]
    for mode in config.RECOVERY_MODES:
        for name, l in cases:
            name = name.replace("gbn", mode)
            c = copy.deepcopy(base)
            c["rnic"]["recovery"] = mode
            c["link"]["loss"] = l
            row = run_case(c, out, name, a)
            rows.append(row)
    # seed 000's Go-Back-N model, fed with what the lossless run achieved
    lossless = rows[0]
    mean_loss, events = model.ge_params(loss)
    b = lossless["goodput_gbps"] * 1e9
    frac = model.gbn_goodput_fraction(events, base["rnic"]["mtu"], b, parse_time(base["link"]["rtt"]))
    rows.append({"case": "gbn model (seed 000)", "recovery": "gbn", "loss": loss,
                 "rtt_ms": lossless["rtt_ms"], "rate_gbps": lossless["rate_gbps"],
                 "goodput_gbps": b * frac / 1e9, "gbn_model_fraction": frac,
                 "loss_rate_model": mean_loss, "loss_event_rate": events})
    print()
    print(report.table(rows))
    lossy = rows[1]
    print(f"\nGo-Back-N model (seed 000 IV.A) with B = lossless goodput {b / 1e9:.3f} Gb/s, "
          f"RTT {lossless['rtt_ms']:.0f} ms, MTU {base['rnic']['mtu']}, loss-event rate "
          f"{events:.2e}/packet (mean loss {mean_loss:.3%}): {frac:.3f} of B; "
          f"measured lossy/lossless = {lossy['goodput_gbps'] / lossless['goodput_gbps']:.3f}")
    doc = write_doc(os.path.join(out, "demo.json"), base, rows,
                    {"model_fraction": frac, "measured_fraction":
                     lossy["goodput_gbps"] / lossless["goodput_gbps"]})
    png = os.path.join(out, "demo.png")
    w = base["workload"]
    report.plot_demo(rows, png, base["description"],
                     f"FCT CDF: {w['flows']} flows of {w['size']}B, Poisson at {w['load']} % load")
    print(f"\nresults: {doc}\nplot:    {png}")
    return 0


def run_case(cfg, out, name, a):
    """Bulk run for goodput, then the flow workload for FCT: one table row."""
    tag = name.replace(" ", "_").replace("(", "").replace(")", "")
    t0 = time.monotonic()
    c = copy.deepcopy(cfg)
    c["workload"]["kind"] = "bulk"
    bulk = runner.run_once(c, out, tag=f"{tag}-bulk", prefix=a.prefix)
    c["workload"]["kind"] = "flows"
    flows = runner.run_once(c, out, tag=f"{tag}-flows", prefix=a.prefix)
    row = dict(bulk)
    row["case"] = name  # rx_goodput_samples: the bulk run's receiver
    for k in ("fct_p50_ms", "fct_p99_ms", "records", "slowdown_groups", "flows"):
        row[k] = flows.get(k)
    row["retx_bytes"] = bulk["retx_bytes"] + flows["retx_bytes"]
    row["flow_goodput_gbps"] = flows["goodput_gbps"]
    print(f"  {name:<22} goodput {row['goodput_gbps']:.3f} Gb/s  FCT p50 {row['fct_p50_ms']:.1f} ms "
          f"p99 {row['fct_p99_ms']:.1f} ms  retx {row['retx_bytes'] / 1e6:.2f} MB  "
          f"({time.monotonic() - t0:.0f} s)")
    return row


# ---- run / sweep -------------------------------------------------------------------------
def load_cfg(path, sets, quick):
    cfg = config.load(path)
    for s in sets or []:
        cfg = config.override(cfg, s)
    if quick:
        cfg["workload"]["duration"] = min(cfg["workload"]["duration"], 2)
        cfg["workload"]["flows"] = min(cfg["workload"]["flows"], 30)
        cfg["run"]["repetitions"] = 1
    return cfg


def cmd_run(a):
    cfg = load_cfg(a.config, a.set, a.quick)
    out = a.out or os.path.join(RESULTS, cfg["name"])
    rows = []
    for rep in range(cfg["run"]["repetitions"]):
        c = copy.deepcopy(cfg)
        c["run"]["seed"] = cfg["run"]["seed"] + rep
        cap = os.path.join(out, f"{cfg['name']}-{rep}.pcap") if cfg["run"]["capture"] else None
        row = runner.run_once(c, out, tag=f"{cfg['name']}-{rep}", prefix=a.prefix, capture=cap)
        row["case"] = f"{cfg['name']}#{rep}"
        if cap:
            row["capture"] = cap
            row["validate"] = validate(cap)
        rows.append(row)
    print(report.table(rows))
    base = os.path.join(out, cfg["name"])
    write_doc(base + ".json", cfg, rows)
    report.append_jsonl(base + ".jsonl", rows)
    report.write_csv(base + ".csv", rows)
    report.plot_demo(rows, base + ".png", cfg["description"] or cfg["name"])
    print(f"results: {base}.json (+ .jsonl, .csv, .png)")
    bad = [r for r in rows if r.get("validate", {}).get("failed")]
    return 1 if bad else 0


def parse_params(params):
    grid = []
    for p in params:
        if "=" not in p:
            raise ConfigError(f"--param '{p}': expected SECTION.KEY=V1,V2,... (e.g. link.rtt=10ms,20ms)")
        k, vs = p.split("=", 1)
        grid.append((k, [v for v in vs.split(",") if v]))
    if not 1 <= len(grid) <= 2:
        raise ConfigError("sweep takes one or two --param")
    return grid


def cmd_sweep(a):
    cfg = load_cfg(a.config, a.set, a.quick)
    grid = parse_params(a.param)
    out = a.out or os.path.join(RESULTS, cfg["name"] + "-sweep")
    points = list(itertools.product(*[[(k, v) for v in vs] for k, vs in grid]))
    cfgs = []
    for pt in points:  # validate the whole grid before running anything
        c = copy.deepcopy(cfg)
        for k, v in pt:
            c = config.override(c, f"{k}={json.dumps(v) if not _num(v) else v}")
        cfgs.append((pt, c))
    rows = []
    base = os.path.join(out, cfg["name"] + "-sweep")
    for i, (pt, c) in enumerate(cfgs):
        label = " ".join(f"{k}={v}" for k, v in pt)
        progress(i, len(cfgs), label)
        row = runner.run_once(c, out, tag=f"p{i}", prefix=a.prefix)
        for k, v in pt:
            row[k] = v
        row["case"] = label
        rows.append(row)
        report.append_jsonl(base + ".jsonl", [row])
        report.write_csv(base + ".csv", [row])
    progress(len(cfgs), len(cfgs), "done")
    print(report.table(rows))
    write_doc(base + ".json", cfg, rows, {"grid": [[k, vs] for k, vs in grid]})
    xk = grid[0][0]
    for r in rows:
        r["_x"] = _axis(xk, r[xk])
    report.plot_sweep(rows, base + ".png", "_x", "goodput_gbps",
                      series=grid[1][0] if len(grid) > 1 else None, model_key="goodput_model_gbps",
                      title=f"{cfg['name']}: goodput vs {xk}", xlabel=_axis_label(xk))
    print(f"results: {base}.json (+ .jsonl, .csv, .png)")
    return 0


def _num(v):
    try:
        float(v)
        return True
    except ValueError:
        return False


def _axis_label(key):
    return {"link.rtt": "base RTT (ms)", "link.rate": "link rate (Gb/s)",
            "link.loss": "mean loss (%)"}.get(key, key)


def _axis(key, v):
    """A plottable number for a parameter value (times in ms, rates in Gb/s, loss in %)."""
    for f, scale in ((parse_time, 1e3), (parse_rate, 1e-9)):
        try:
            return f(v) * scale
        except ValueError:
            pass
    try:
        return model.ge_params(v)[0] * 100
    except (ValueError, IndexError):
        return float(v)


# ---- up / down / capture -----------------------------------------------------------------
def cmd_up(a):
    cfg = load_cfg(a.config, a.set, False) if a.config else config.defaults()
    t = topo.Topology(a.prefix, cfg["rnic"]["mtu"]).up()
    spec = runner.link_specs(cfg)
    os.makedirs(RESULTS, exist_ok=True)
    t.start_emu(spec["a2b"], spec["b2a"], cfg["run"]["seed"], os.path.join(RESULTS, "up-emu.json"))
    t.procs = []  # leave them running: `testbed down` removes them
    eal = t._eal_rnic("B")
    print(f"topology '{a.prefix}' is up: namespaces {t.ns['A']} {t.ns['E']} {t.ns['B']}")
    print(f"  lossy-emu: a2b '{spec['a2b']}'  b2a '{spec['b2a']}'")
    print("  run the rnics, e.g.:")
    print(f"    ip netns exec {t.ns['B']} {topo.binary('rnic')} {eal} -- --ip {t.rip['B']}/24 "
          f"{runner.rnic_opts(cfg)} write_bw")
    print(f"    ip netns exec {t.ns['A']} {topo.binary('rnic')} {t._eal_rnic('A')} -- --ip {t.rip['A']}/24 "
          f"{runner.rnic_opts(cfg)} write_bw {t.kip['B']}")
    print(f"  capture: testbed capture --prefix {a.prefix} --seconds 5;  remove: testbed down --prefix {a.prefix}")
    return 0


def cmd_down(a):
    gone = topo.cleanup(a.prefix)
    print(f"removed {len(gone)} namespace(s){': ' + ' '.join(gone) if gone else ''}")
    return 0


def validate(pcap):
    r = subprocess.run([sys.executable, "-m", "rocewan", "validate", pcap, "--json", pcap + ".json"],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
    try:
        res = json.load(open(pcap + ".json"))["results"]
    except (OSError, ValueError, KeyError):
        res = {}
    print(r.stdout.strip()[-1500:])
    return {"exit": r.returncode, "failed": r.returncode != 0, **{k: v for k, v in res.items() if not isinstance(v, (list, dict))}}


def cmd_capture(a):
    """tcpdump on the rnics' veths. The af_packet PMD sends with PACKET_QDISC_BYPASS,
    so a tap on an rnic's interface sees only what that rnic *receives*: side A holds
    B's frames, side B holds A's; "both" captures the two and merges them by time."""
    sides = "AB" if a.side == "both" else a.side
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    for sd in sides:
        if f"{a.prefix}{sd}" not in listed:
            raise topo.TopoError(f"namespace {a.prefix}{sd} does not exist: start a topology with "
                                 f"`testbed up --prefix {a.prefix}`")
    out = a.out or os.path.join(RESULTS, f"capture-{a.side}.pcap")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    parts = {sd: (out if len(sides) == 1 else f"{out}.{sd}") for sd in sides}
    print(f"capturing RoCEv2 and MAC control received by rnic {' and '.join(sides)} "
          f"for {a.seconds} s -> {out}")
    procs = [subprocess.Popen(f"timeout -s INT {a.seconds} ip netns exec {a.prefix}{sd} tcpdump -i "
                              f"{a.prefix}v{sd} -Q in -s 0 -w {parts[sd]} 'udp port 4791 or ether proto 0x8808'",
                              shell=True, stderr=subprocess.DEVNULL) for sd in sides]
    for p in procs:
        p.wait()
    if len(sides) == 2:
        r = subprocess.run(["mergecap", "-w", out, parts["A"], parts["B"]], capture_output=True, text=True)
        if r.returncode:
            raise topo.TopoError(f"mergecap: {r.stderr.strip()}")
        for f in parts.values():
            os.unlink(f)
    res = validate(out)
    return 1 if res["failed"] else 0


# ---- reproduce ---------------------------------------------------------------------------
def repro_gbn_model(a):
    """Seed 000 IV.A: Go-Back-N goodput over a loss x RTT grid vs the formula."""
    cfg = config.defaults()
    cfg["name"] = "gbn-model"
    cfg["link"]["rate"] = "1gbit"
    cfg["rnic"]["loss_window"] = False  # the formula models plain Go-Back-N
    cfg["workload"].update(kind="bulk", size="1M", duration=2 if a.quick else 4)
    losses = ["0.01%", "0.05%"] if a.quick else ["0.01%", "0.05%", "0.2%"]
    rtts = ["2ms", "20ms"] if a.quick else ["2ms", "10ms", "40ms"]
    out = a.out or os.path.join(RESULTS, "reproduce-gbn-model")
    print("reproduce gbn-model: seed 000 section IV.A, Go-Back-N goodput formula\n"
          "  paper: 100 Gb/s links in simulation; here 1 Gb/s, MTU 4096 on veth + lossy-emu.\n"
          "  scaling: none applied to loss; the formula is evaluated at this testbed's B, RTT and MTU,\n"
          "  with B = the lossless goodput measured at each RTT (the pacer's achievable rate);\n"
          "  random loss on the data direction only (the formula's ERROR_RATE), ACKs/NAKs lossless.")
    rows, base = [], {}
    pts = [(r, "") for r in rtts] + [(r, l) for r in rtts for l in losses]
    for i, (rtt, loss) in enumerate(pts):
        progress(i, len(pts), f"rtt {rtt} loss {loss or 'none'}")
        c = copy.deepcopy(cfg)
        c["link"]["rtt"], c["link"]["loss"] = rtt, (f"random {loss}" if loss else "")
        c["link"]["loss_direction"] = "a2b"  # the formula's ERROR_RATE hits data packets
        row = runner.run_once(c, out, tag=f"g{i}", prefix=a.prefix)
        if not loss:
            base[rtt] = row["goodput_gbps"]
            continue
        _, ev = model.ge_params(c["link"]["loss"])
        frac = model.gbn_goodput_fraction(ev, 4096, base[rtt] * 1e9, parse_time(rtt))
        row.update(case=f"rtt {rtt} loss {loss}", loss=loss, lossless_gbps=base[rtt],
                   model_gbps=base[rtt] * frac, model_fraction=frac,
                   measured_fraction=row["goodput_gbps"] / base[rtt],
                   ratio=row["goodput_gbps"] / (base[rtt] * frac) if frac else float("nan"))
        rows.append(row)
    progress(len(pts), len(pts), "done")
    cols = [("case", "case", "{}"), ("lossless_gbps", "lossless Gb/s", "{:.3f}"),
            ("goodput_gbps", "GBN Gb/s", "{:.3f}"), ("measured_fraction", "measured frac", "{:.3f}"),
            ("model_fraction", "paper model frac", "{:.3f}"), ("ratio", "ours/model", "{:.2f}"),
            ("tx_retransmits", "retx pkts", "{}")]
    print(report.table(rows, cols))
    doc = write_doc(os.path.join(out, "gbn-model.json"), cfg, rows)
    for r in rows:
        r["rtt_ms_x"] = r["rtt_ms"]
        r["goodput_model_gbps"] = r["model_gbps"]
    report.plot_sweep(rows, os.path.join(out, "gbn-model.png"), "rtt_ms_x", "goodput_gbps",
                      series="loss", model_key="goodput_model_gbps",
                      title="Go-Back-N goodput vs RTT: measured (solid) and seed 000 model (dashed)",
                      xlabel="base RTT (ms)")
    print(f"results: {doc}\nplot:    {os.path.join(out, 'gbn-model.png')}")
    return 0


def lab_commands(cfg):
    """Per-host command lines of one experiment on real machines ([lab] keys)."""
    lab = cfg["lab"]
    missing = [k for k in ("a_host", "a_port", "a_kernel_ip", "a_rnic_ip", "b_host", "b_port",
                           "b_kernel_ip", "b_rnic_ip", "emu_host", "emu_ports") if not lab[k]]
    if missing:
        raise ConfigError(f"lab mode needs [lab] keys: {', '.join(missing)} (see docs/lab.md)")

    def port(p):
        return p if p.startswith("--vdev") else f"-a {p}"
    ports = [x.strip() for x in lab["emu_ports"].split(",")]
    if len(ports) != 2:
        raise ConfigError(f"[lab] emu_ports = '{lab['emu_ports']}': give two ports, side A first (P0,P1)")
    spec = runner.link_specs(cfg)
    opts = runner.rnic_opts(cfg)
    b = lab["bin_dir"]
    eal = "-l 0 --in-memory --log-level=lib.eal:error"
    return [
        (lab["emu_host"], "1. start, leave running; stop with SIGINT after the run (writes emu.json)",
         f"{b}/app/lossy-emu/lossy-emu -l 0-2 --in-memory {port(ports[0])} {port(ports[1])} -- "
         f"--a2b '{spec['a2b']}' --b2a '{spec['b2a']}' --seed {cfg['run']['seed']} --busy-poll --json emu.json"),
        (lab["b_host"], "2. the server: start, it waits for rnic A",
         f"{b}/app/rnic/rnic {eal} {port(lab['b_port'])} -- --ip {lab['b_rnic_ip']} {opts} "
         f"--json rnicB.json write_bw"),
        (lab["a_host"], "3. the client: runs the workload",
         f"{b}/app/rnic/rnic {eal} {port(lab['a_port'])} -- --ip {lab['a_rnic_ip']} {opts} "
         f"--json rnicA.json write_bw {lab['b_kernel_ip']}"),
    ]


def cmd_lab(a):
    cfg = load_cfg(a.config, a.set, False)
    print(f"# {cfg['name']}: per-host commands (run as root; then collect the three JSON files and\n"
          f"#   ./testbed reduce {a.config} --emu emu.json --rnic-a rnicA.json --rnic-b rnicB.json)")
    for host, what, cmd in lab_commands(cfg):
        print(f"\n# {what}\nssh {host} {json.dumps(cmd)}")
    return 0


def cmd_reduce(a):
    """Lab mode: the three JSON files of a run on real hosts -> one result row."""
    cfg = load_cfg(a.config, a.set, False)
    docs = {}
    for k, path in (("emu", a.emu), ("rnicA", a.rnic_a), ("rnicB", a.rnic_b)):
        try:
            docs[k] = json.load(open(path))
        except (OSError, ValueError) as e:
            raise ConfigError(f"{path}: cannot read {k}'s JSON: {e}") from None
        if docs[k].get("schema") != "rocewan/1":
            raise ConfigError(f"{path}: not a rocewan/1 result document")
    row = runner.reduce(cfg, docs, runner.link_specs(cfg))
    row["case"] = cfg["name"]
    print(report.table([row]))
    if a.out:
        write_doc(a.out, cfg, [row])
        print(f"results: {a.out}")
    return 0


def _swing_buffer(a):
    from .swing import repro_swing_buffer
    return repro_swing_buffer(a)


def _swing_throughput(a):
    from .swing import repro_swing_throughput
    return repro_swing_throughput(a)


def _swing_fct(a):
    from .swing import repro_swing_fct
    return repro_swing_fct(a)


REPRODUCTIONS = {
    "gbn-model": (repro_gbn_model, "seed 000 IV.A: Go-Back-N goodput over loss x RTT vs the formula"),
    "swing-buffer": (_swing_buffer, "seed 003: PFC-Relay with 1.0/0.9 BDP vs plain PFC with 1/2 BDP"),
    "swing-throughput": (_swing_throughput, "seed 003 eq. (4)/(6): utilisation vs D and alpha"),
    "swing-fct": (_swing_fct, "seed 003: WebSearch/FB_Hadoop FCT, PFC-Relay vs native PFC"),
}


def cmd_reproduce(a):
    if a.name not in REPRODUCTIONS:
        raise ConfigError(f"unknown reproduction '{a.name}' (available: {', '.join(REPRODUCTIONS)})")
    return REPRODUCTIONS[a.name][0](a)


def parser():
    p = argparse.ArgumentParser(prog="testbed", description=__doc__,
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
    u.set_defaults(func=cmd_up)
    sub.add_parser("down", help="remove the topology and its processes").set_defaults(func=cmd_down)
    c = sub.add_parser("capture", help="pcap of a running topology's link, then rocewan validate")
    c.add_argument("--side", choices=["A", "B", "both"], default="both",
                   help="whose received frames (af_packet TX bypasses taps): A, B or both merged")
    c.add_argument("--seconds", type=int, default=5)
    c.add_argument("--out")
    c.set_defaults(func=cmd_capture)
    lb = sub.add_parser("lab", help="lab mode: print the per-host (ssh) commands of a config's [lab] topology")
    lb.add_argument("config")
    lb.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE")
    lb.set_defaults(func=cmd_lab)
    rd = sub.add_parser("reduce", help="lab mode: combine the JSON of lossy-emu and both rnics into a result row")
    rd.add_argument("config")
    rd.add_argument("--emu", required=True, metavar="EMU.json")
    rd.add_argument("--rnic-a", required=True, metavar="RNIC_A.json")
    rd.add_argument("--rnic-b", required=True, metavar="RNIC_B.json")
    rd.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE")
    rd.add_argument("--out", metavar="RESULT.json")
    rd.set_defaults(func=cmd_reduce)
    rp = sub.add_parser("reproduce", help="a seed paper's result: " +
                        "; ".join(f"{k} ({v[1]})" for k, v in REPRODUCTIONS.items()))
    rp.add_argument("name")
    rp.add_argument("--quick", action="store_true")
    rp.add_argument("--out")
    rp.set_defaults(func=cmd_reproduce)
    tr = sub.add_parser("trace", help="loss -> repair: join a lossy-emu --drop-log with rnic --trace "
                        "files (DROPLOG TRACE... [--rtt MS] [--json OUT]; no root needed)")
    tr.add_argument("args", nargs=argparse.REMAINDER)
    tr.set_defaults(func=lambda a: loss_trace.main(a.args))
    return p


def main(argv=None):
    a = parser().parse_args(argv)
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
    except KeyboardInterrupt:
        topo.cleanup(a.prefix)
        return 130
