"""Swing reproductions (Chen et al., "Swing: Providing Long-Range Lossless RDMA via
PFC-Relay", IEEE TPDS 2023; docs/references.md) on the chain topology.

The chain and one run of it: ../swing.py (swing_run).
"""
import os
import time

from .. import report
from ..config import CDF_DIR
from ..references import SWING
from ..swing import LINK_BPS, swing_run


def reproduce_buffer(prefix: str = "tb", quick: bool = False, out: str | None = None) -> int:
    """Swing: the relay needs one BDP of buffer (plus its PFC reaction margin) for
    zero drops at full drain rate, a smaller buffer drops; native PFC needs 2 BDP."""
    out = _out(out, "swing-buffer")
    os.makedirs(out, exist_ok=True)
    # D = 20 ms (RTT 40 ms, BDP 5 MB at 1 Gb/s): this machine's PFC reaction noise
    # (milliseconds under load) stays a few % of a BDP
    alpha, d_s = 0.5, 0.020
    dur = 3 if quick else 5
    reps = 1 if quick else 2
    bdp = LINK_BPS / 8 * 2 * d_s
    print(f"reproduce swing-buffer: Swing ({SWING}) — PFC-Relay needs 1 BDP, native PFC 2 BDP\n"
          f"  scaling: the paper's long-haul 100 Gb/s links become 1 Gb/s x {2 * d_s * 1e3:g} ms RTT "
          f"(BDP {bdp / 1e6:.2f} MB), drain alpha = {alpha} of the link;\n"
          "  the far switch pauses relay B for 1.2 RTT each time (>= 0.9 RTT). Relay B's buffer:\n"
          "  3 BDP measures the peak it needs; 'auto' = 1 BDP + 10 % + 4 frames (reaction margin).")
    cases = [("relay", 3.0), ("relay", 1.1), ("relay", 0.9), ("plain", 1.0), ("plain", 2.0)]
    rows = []
    for rep in range(reps):
        for i, (mode, buf) in enumerate(cases):
            t0 = time.monotonic()
            row = swing_run(mode, buf, alpha, d_s, out, f"s{rep}{i}", prefix=prefix, duration=dur)
            row["repetition"] = rep
            if mode == "relay" and buf == 1.1:
                row["case"] = "relay buffer auto (1.1 BDP)"
            rows.append(row)
            print(f"  #{rep} {row['case']:<28} goodput {row['goodput_gbps']:.3f} Gb/s, drops {row['drops']}, "
                  f"peak queue {row.get('relay_hwm_bdp', row['s_queue_max_bytes'] / bdp):.2f} BDP "
                  f"({time.monotonic() - t0:.0f} s)")
    cols = [("case", "case", "{}"), ("repetition", "rep", "{}"), ("goodput_gbps", "goodput Gb/s", "{:.3f}"),
            ("utilisation", "link util", "{:.3f}"), ("model_utilisation", "Swing phi", "{:.3f}"),
            ("drops", "drops", "{}"), ("relay_hwm_bdp", "relay B peak BDP", "{:.2f}"),
            ("s_drop_queue", "switch drops", "{}"), ("rnic_pfc_pauses", "rnic A pauses", "{}")]
    print(report.table(rows, cols))
    need = max(r["relay_hwm_bdp"] for r in rows if r["mode"] == "relay" and r["buffer_bdp"] == 3.0)
    print(f"relay B's peak occupancy with a 3-BDP buffer: {need:.2f} BDP (Swing: <= 1 BDP)")
    doc = report.write_doc(os.path.join(out, "swing-buffer.json"),
                           {"name": "swing-buffer", "alpha": alpha, "one_way_delay_s": d_s, "link_bps": LINK_BPS,
                            "run": {"seed": 1}}, rows, {"relay_peak_need_bdp": need})
    png = os.path.join(out, "swing-buffer.png")
    plot_swing([r for r in rows if r["repetition"] == 0], png, alpha)
    print(f"results: {doc}\nplot:    {png}")
    return 0


def plot_swing(rows, path, alpha):
    """Measured long-link utilisation per case beside Swing's phi, drops annotated."""
    plt = report._plt()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["utilisation"] for r in rows], 0.4, label="measured",
           color="#4c72b0")
    ax.bar([x + 0.2 for x in xs], [r["model_utilisation"] for r in rows], 0.4,
           label=f"Swing phi ({SWING}: eq. 6 relay, eq. 4 PFC)", color="#bbbbbb")
    for x, r in zip(xs, rows):
        ax.annotate(f"drops {r['drops']}", (x - 0.2, r["utilisation"]), ha="center", va="bottom",
                    fontsize=8, color="#b00" if r["drops"] else "#060")
    ax.axhline(alpha, color="k", ls=":", lw=1, label=f"drain rate alpha = {alpha}")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r["case"] for r in rows], fontsize=8)
    ax.set_ylabel("long-link utilisation (fraction of the link rate)")
    ax.set_ylim(0, max(0.6, alpha * 1.25))
    ax.set_title(f"Swing: relay buffer vs plain PFC buffer (1 Gb/s, RTT {rows[0]['rtt_ms']:.0f} ms)",
                 fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _out(out, name):
    return out or os.path.join(report.RESULTS, f"reproduce-{name}")


def reproduce_throughput(prefix: str = "tb", quick: bool = False, out: str | None = None) -> int:
    """Swing §4.1 eq. (4) and §5.2 eq. (6): long-link utilisation against the
    one-way delay D and the drain fraction alpha, relay vs native PFC, the native
    PFC switch holding a fixed buffer."""
    out = _out(out, "swing-throughput")
    os.makedirs(out, exist_ok=True)
    fixed = 5e6  # bytes: 1 BDP at D = 20 ms, 2 BDP at 10 ms, 4 BDP at 5 ms (1 Gb/s)
    ds = [0.005, 0.020] if quick else [0.005, 0.010, 0.020]
    alphas = [0.5] if quick else [0.25, 0.5, 0.75]
    dur = 3 if quick else 4
    print(f"reproduce swing-throughput: Swing ({SWING}) eq. (4) (native PFC, fixed buffer B_a) and eq. (6) "
          "(relay: phi = alpha)\n"
          f"  scaling: 1 Gb/s long link, D = {', '.join(f'{d * 1e3:g}' for d in ds)} ms one way, "
          f"native PFC buffer B_a = {fixed / 1e6:g} MB at the far switch (XOFF = B_a - 1 BDP, XON just "
          "below), the relay with 1 BDP + 10 %.")
    rows, pts = [], [(m, d, al) for d in ds for al in alphas for m in ("relay", "plain")]
    for i, (mode, d, al) in enumerate(pts):
        report.progress(i, len(pts), f"{mode} D {d * 1e3:g} ms alpha {al}")
        bdp = LINK_BPS / 8 * 2 * d
        buf = 1.1 if mode == "relay" else fixed / bdp
        r = swing_run(mode, buf, al, d, out, f"t{i}", prefix=prefix, duration=dur)
        r["case"] = f"{mode} D {d * 1e3:g} ms alpha {al}"
        r["ratio"] = r["utilisation"] / r["model_utilisation"] if r["model_utilisation"] else float("nan")
        rows.append(r)
    report.progress(len(pts), len(pts), "done")
    cols = [("case", "case", "{}"), ("buffer_bdp", "buffer BDP", "{:.2f}"),
            ("utilisation", "link util", "{:.3f}"), ("model_utilisation", "Swing phi", "{:.3f}"),
            ("ratio", "ours/phi", "{:.2f}"), ("drops", "drops", "{}")]
    print(report.table(rows, cols))
    doc = report.write_doc(os.path.join(out, "swing-throughput.json"),
                           {"name": "swing-throughput", "fixed_buffer_bytes": fixed, "link_bps": LINK_BPS,
                            "run": {"seed": 1}}, rows)
    plt = report._plt()
    fig, axes = plt.subplots(1, len(alphas), figsize=(4.5 * len(alphas), 4), squeeze=False)
    for ax, al in zip(axes[0], alphas):
        for mode, color in (("relay", "#4c72b0"), ("plain", "#dd8452")):
            rs = sorted((r for r in rows if r["mode"] == mode and r["alpha"] == al),
                        key=lambda r: r["one_way_delay_ms"])
            x = [r["one_way_delay_ms"] for r in rs]
            ax.plot(x, [r["utilisation"] for r in rs], "o-", color=color,
                    label=f"{'PFC-Relay' if mode == 'relay' else 'native PFC'} measured")
            ax.plot(x, [r["model_utilisation"] for r in rs], "--", color=color,
                    label=f"{'eq. (6)' if mode == 'relay' else 'eq. (4)'}")
        ax.set_title(f"alpha = {al}", fontsize=10)
        ax.set_xlabel("one-way delay D (ms)")
        ax.set_ylabel("long-link utilisation")
        ax.set_ylim(0, 1)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Swing: utilisation vs D and alpha (native PFC buffer {fixed / 1e6:g} MB)", fontsize=10)
    fig.tight_layout()
    png = os.path.join(out, "swing-throughput.png")
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"results: {doc}\nplot:    {png}")
    return 0


def reproduce_fct(prefix: str = "tb", quick: bool = False, out: str | None = None) -> int:
    """Swing: average and p99 FCT of WebSearch / FB_Hadoop inter-DC flows, relay vs
    native PFC with the same buffer (the paper: 14-66 % lower average FCT)."""
    out = _out(out, "swing-fct")
    os.makedirs(out, exist_ok=True)
    d, alpha = 0.010, 0.5
    n = 60 if quick else 200
    load = 30
    print(f"reproduce swing-fct: Swing ({SWING}) — FCT of inter-DC flows, PFC-Relay vs native PFC\n"
          f"  scaling: 1 Gb/s x {2 * d * 1e3:g} ms RTT, far switch draining at alpha = {alpha}, "
          f"Poisson arrivals at {load} % of the link, {n} flows per run; relay B and the native-PFC "
          "switch both hold 1.1 BDP (same buffer).")
    rows = []
    for cdf in ("websearch", "fb_hadoop"):
        for mode in ("relay", "plain"):
            t0 = time.monotonic()
            r = swing_run(mode, 1.1, alpha, d, out, f"f{cdf}{mode}", prefix=prefix,
                          flows=(os.path.join(CDF_DIR, cdf + ".cdf"), n, load))
            r["case"] = f"{cdf} {mode}"
            r["cdf"] = cdf
            rows.append(r)
            print(f"  {r['case']:<18} FCT avg {r['fct_avg_ms']:.1f} ms p99 {r['fct_p99_ms']:.1f} ms, "
                  f"drops {r['drops']} ({time.monotonic() - t0:.0f} s)")
    for cdf in ("websearch", "fb_hadoop"):
        rel = next(r for r in rows if r["cdf"] == cdf and r["mode"] == "relay")
        pl = next(r for r in rows if r["cdf"] == cdf and r["mode"] == "plain")
        rel["avg_fct_reduction_pct"] = 100 * (1 - rel["fct_avg_ms"] / pl["fct_avg_ms"])
        rel["p99_fct_reduction_pct"] = 100 * (1 - rel["fct_p99_ms"] / pl["fct_p99_ms"])
    cols = [("case", "case", "{}"), ("flows", "flows", "{}"), ("fct_avg_ms", "FCT avg ms", "{:.1f}"),
            ("fct_p99_ms", "FCT p99 ms", "{:.1f}"), ("avg_fct_reduction_pct", "avg FCT -% vs PFC", "{:.0f}"),
            ("p99_fct_reduction_pct", "p99 FCT -% vs PFC", "{:.0f}"), ("drops", "drops", "{}")]
    print(report.table(rows, cols))
    print(f"paper (Swing, {SWING}): average FCT 14-66 % lower with SWING")
    doc = report.write_doc(os.path.join(out, "swing-fct.json"),
                           {"name": "swing-fct", "one_way_delay_s": d, "alpha": alpha, "load_pct": load,
                            "flows": n, "run": {"seed": 1}}, rows)
    png = os.path.join(out, "swing-fct.png")
    plt = report._plt()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, cdf in zip(axes, ("websearch", "fb_hadoop")):
        for r in rows:
            if r["cdf"] != cdf:
                continue
            fct = sorted(x[2] / 1e3 for x in r["records"] if x[2] > 0)
            ax.plot(fct, [(i + 1) / len(fct) for i in range(len(fct))],
                    label="PFC-Relay" if r["mode"] == "relay" else "native PFC")
        ax.set_xscale("log")
        ax.set_xlabel("flow completion time (ms)")
        ax.set_ylabel("fraction of flows (CDF)")
        ax.set_title(f"{cdf} flows", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"results: {doc}\nplot:    {png}")
    return 0
