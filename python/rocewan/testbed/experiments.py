"""Experiments from a config: `testbed run` (one config, its repetitions) and `testbed
sweep` (a grid over one or two parameters)."""
import copy
import itertools
import json
import os
import subprocess
import sys

from . import config, model, report, runner
from .config import ConfigError, parse_rate, parse_time


def load_cfg(path, sets, quick):
    """A config file (None: the defaults) with --set overrides; quick: short durations, one repetition."""
    cfg = config.load(path) if path else config.defaults()
    for s in sets or []:
        cfg = config.override(cfg, s)
    if quick:
        cfg["workload"]["duration"] = min(cfg["workload"]["duration"], 2)
        cfg["workload"]["flows"] = min(cfg["workload"]["flows"], 30)
        cfg["run"]["repetitions"] = 1
    return cfg


def validate(pcap):
    """`rocewan validate` on a capture; its summary, exit code and verdict."""
    # the rocewan this process runs (a checkout's python/ or an installed package), first on the path
    pkg_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.pathsep.join([pkg_parent] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, "-m", "rocewan", "validate", pcap, "--json", pcap + ".json"],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path})
    try:
        res = json.load(open(pcap + ".json"))["results"]
    except (OSError, ValueError, KeyError):
        res = {}
    print(r.stdout.strip()[-1500:])
    return {"exit": r.returncode, "failed": r.returncode != 0,
            **{k: v for k, v in res.items() if not isinstance(v, (list, dict))}}


def run(cfg_path: str, sets: list[str] | None = None, quick: bool = False, out: str | None = None,
        prefix: str = "tb") -> int:
    """`testbed run`: every repetition of one config; table, JSON, JSON lines, CSV, plot."""
    cfg = load_cfg(cfg_path, sets, quick)
    out = out or os.path.join(report.RESULTS, cfg["name"])
    rows = []
    for rep in range(cfg["run"]["repetitions"]):
        c = copy.deepcopy(cfg)
        c["run"]["seed"] = cfg["run"]["seed"] + rep
        cap = os.path.join(out, f"{cfg['name']}-{rep}.pcap") if cfg["run"]["capture"] else None
        row = runner.run_once(c, out, tag=f"{cfg['name']}-{rep}", prefix=prefix, capture=cap)
        row["case"] = f"{cfg['name']}#{rep}"
        if cap:
            row["capture"] = cap
            row["validate"] = validate(cap)
        rows.append(row)
    print(report.table(rows))
    base = os.path.join(out, cfg["name"])
    report.write_doc(base + ".json", cfg, rows)
    report.append_jsonl(base + ".jsonl", rows)
    report.write_csv(base + ".csv", rows)
    report.plot_demo(rows, base + ".png", cfg["description"] or cfg["name"])
    cc = report.plot_cc_trace(rows, base + "-cc.png", cfg["description"] or cfg["name"])
    print(f"results: {base}.json (+ .jsonl, .csv, .png{', -cc.png' if cc else ''})")
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


def sweep(cfg_path: str, params: list[str], sets: list[str] | None = None, quick: bool = False,
          out: str | None = None, prefix: str = "tb") -> int:
    """`testbed sweep`: the config at every point of the grid of `params`
    (["SECTION.KEY=V1,V2,..."], one or two); table, JSON, JSON lines, CSV, plot."""
    cfg = load_cfg(cfg_path, sets, quick)
    grid = parse_params(params)
    out = out or os.path.join(report.RESULTS, cfg["name"] + "-sweep")
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
        report.progress(i, len(cfgs), label)
        row = runner.run_once(c, out, tag=f"p{i}", prefix=prefix)
        for k, v in pt:
            row[k] = v
        row["case"] = label
        rows.append(row)
        report.append_jsonl(base + ".jsonl", [row])
        report.write_csv(base + ".csv", [row])
    report.progress(len(cfgs), len(cfgs), "done")
    print(report.table(rows))
    report.write_doc(base + ".json", cfg, rows, {"grid": [[k, vs] for k, vs in grid]})
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
