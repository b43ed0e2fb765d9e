"""Tables, result documents, JSON lines, CSV, progress bars and plots of testbed results."""
import csv
import json
import os
import subprocess
import sys
import time

from .config import ROOT

RESULTS = os.path.join(ROOT, "results") if ROOT else None

COLUMNS = [("case", "case", "{}"), ("recovery", "recovery", "{}"), ("loss", "loss", "{}"),
           ("rtt_ms", "RTT ms", "{:.0f}"), ("goodput_gbps", "goodput Gb/s", "{:.3f}"),
           ("fct_p50_ms", "FCT p50 ms", "{:.1f}"), ("fct_p99_ms", "FCT p99 ms", "{:.1f}"),
           ("retx_bytes", "retx MB", "{}"), ("loss_rate_measured", "loss %", "{}")]


def _fmt(key, fmt, v):
    if v is None or v == "":
        return "-"
    if key == "retx_bytes":
        return f"{v / 1e6:.2f}"
    if key == "loss_rate_measured":
        return f"{v * 100:.3f}"
    try:
        return fmt.format(v)
    except (ValueError, TypeError):
        return str(v)


def table(rows, columns=COLUMNS):
    """A fixed-width text table; '-' where a figure does not apply."""
    head = [c[1] for c in columns]
    body = [[_fmt(k, f, r.get(k)) for k, _, f in columns] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h)
              for i, h in enumerate(head)]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths))
    out = [line, "-" * len(line)]
    for b in body:
        out.append("  ".join(v.ljust(w) for v, w in zip(b, widths)))
    return "\n".join(out)


def strip(row):
    """A row without the bulky per-flow records (for JSON lines / CSV)."""
    return {k: v for k, v in row.items() if k not in ("records", "files")}


def version():
    r = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--tags"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def write_doc(path, cfg, rows, extra=None):
    """The run's "rocewan/1" result document (docs/results.md); returns its path."""
    doc = {"schema": "rocewan/1", "app": "testbed", "version": version(),
           "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "config": cfg, "seed": cfg.get("run", {}).get("seed"),
           "results": {"rows": [strip(r) for r in rows], **(extra or {})}}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
    return path


def progress(i, n, label):
    """A one-line progress bar on stdout, ended with a newline at i == n."""
    w = 30
    k = int(w * i / n) if n else w
    sys.stdout.write(f"\r[{'#' * k}{'.' * (w - k)}] {i}/{n} {label[:60]:<60}")
    sys.stdout.flush()
    if i == n:
        sys.stdout.write("\n")


def append_jsonl(path, rows):
    with open(path, "a") as f:
        for r in rows:
            f.write(json.dumps(strip(r), sort_keys=True) + "\n")


def write_csv(path, rows):
    flat = [{k: v for k, v in strip(r).items() if not isinstance(v, (list, dict))} for r in rows]
    keys = sorted({k for r in flat for k in r})
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        if new:
            w.writeheader()
        w.writerows(flat)


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_demo(rows, path, title, fct_title="FCT of the flow workload"):
    """Left: goodput per case with the Go-Back-N model (Wang, NJUPT; docs/references.md);
    middle: receiver goodput over time; right: FCT CDF per case."""
    plt = _plt()
    fig, (ax1, ax3, ax2) = plt.subplots(1, 3, figsize=(15, 4.2))
    names = [r["case"] for r in rows]
    good = [r["goodput_gbps"] for r in rows]
    bars = ax1.bar(names, good, color=["#4c72b0" if "model" not in n else "#bbbbbb" for n in names])
    for b, g in zip(bars, good):
        ax1.annotate(f"{g:.3f}", (b.get_x() + b.get_width() / 2, g), ha="center", va="bottom", fontsize=8)
    if rows:
        ax1.axhline(rows[0]["rate_gbps"], color="k", ls=":", lw=1, label="link rate")
        ax1.legend(loc="upper right", fontsize=8)
    ax1.set_ylabel("goodput (Gb/s)")
    ax1.set_title("bulk write_bw goodput")
    ax1.tick_params(axis="x", labelsize=8, rotation=10)
    for r in rows:
        smp = [x for x in r.get("rx_goodput_samples") or [] if x[1] > 0]
        if smp:
            ax3.plot([x[0] for x in smp], [x[1] for x in smp], label=r["case"])
    if rows:
        ax3.axhline(rows[0]["rate_gbps"], color="k", ls=":", lw=1, label="link rate")
    ax3.set_xlabel("time (s)")
    ax3.set_ylabel("receiver goodput (Gb/s, 100 ms bins)")
    ax3.set_title("goodput over time at rnic B")
    ax3.set_ylim(bottom=0)
    ax3.grid(True, alpha=0.3)
    if ax3.lines:
        ax3.legend(fontsize=8, loc="lower right")
    for r in rows:
        rec = r.get("records")
        if not rec:
            continue
        fct = sorted(x[2] / 1e3 for x in rec if x[2] > 0)
        if fct:
            ax2.plot(fct, [(i + 1) / len(fct) for i in range(len(fct))], label=r["case"])
    ax2.set_xlabel("flow completion time (ms)")
    ax2.set_ylabel("fraction of flows (CDF)")
    ax2.set_title(fct_title)
    ax2.set_xscale("log")
    ax2.grid(True, which="both", alpha=0.3)
    if ax2.lines:
        ax2.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cc_trace_series(row):
    """{qpn: {column: [values]}} from a row's cc_trace (rnic A's --json), or {}."""
    tr = row.get("cc_trace") or {}
    cols = tr.get("columns") or []
    out = {}
    for r in tr.get("rows") or []:
        d = dict(zip(cols, r))
        s = out.setdefault(d["qpn"], {c: [] for c in cols})
        for c in cols:
            s[c].append(d[c])
    return out


def plot_cc_trace(rows, path, title):
    """Each row's first QP over time: the CC rate (and target) and the in-flight limit
    (loss window, CC window); returns the path, or None if no row has a trace."""
    series = [(r["case"], next(iter(cc_trace_series(r).values()), None)) for r in rows]
    series = [(n, s) for n, s in series if s]
    if not series:
        return None
    plt = _plt()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    for name, s in series:
        line = ax1.plot(s["t_s"], s["rate_gbps"], label=f"{name} rate")[0]
        if any(s["target_gbps"]):
            ax1.plot(s["t_s"], s["target_gbps"], ls=":", color=line.get_color(), label=f"{name} target")
        line = ax2.plot(s["t_s"], s["loss_window_pkts"], label=f"{name} in-flight limit")[0]
        if any(s["cc_window_pkts"]):
            ax2.plot(s["t_s"], s["cc_window_pkts"], ls=":", color=line.get_color(), label=f"{name} CC window")
    ax1.set_xlabel("time (s)")
    ax1.set_ylabel("CC rate (Gb/s; 0: not paced)")
    ax1.set_title("rate per QP (rnic A)")
    ax1.grid(True, alpha=0.3)
    ax2.set_xlabel("time (s)")
    ax2.set_ylabel("packets")
    ax2.set_yscale("log")
    ax2.set_title("in-flight limit per QP (rnic A)")
    ax2.grid(True, which="both", alpha=0.3)
    for ax in (ax1, ax2):
        if ax.lines:
            ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_sweep(rows, path, x, y="goodput_gbps", series=None, model_key=None, title="",
               xlabel=None, ylabel="goodput (Gb/s)"):
    """y against x, one line per value of `series`; dashed model lines if model_key."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    groups = {}
    for r in rows:
        groups.setdefault(r.get(series) if series else "", []).append(r)
    for name, rs in groups.items():
        rs = sorted(rs, key=lambda r: r[x])
        line, = ax.plot([r[x] for r in rs], [r[y] for r in rs], "o-",
                        label=f"{series} {name} measured" if series else "measured")
        if model_key:
            ax.plot([r[x] for r in rs], [r[model_key] for r in rs], "--", color=line.get_color(),
                    label=f"{series} {name} model" if series else "model")
    ax.set_xlabel(xlabel or x.replace("_", " "))
    ax.set_ylabel(ylabel or y.replace("_", " "))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
