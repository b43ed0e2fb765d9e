"""Wang (NJUPT), "Research on transmission reliability of RoCEv2 protocol in WAN"
(docs/references.md): Go-Back-ONE against Go-Back-N (section IV, Fig. 9 and 10), with
IRN's selective repeat (as the Swing paper, Chen et al., section 2.1 describes it)
beside them, and the loss -> repair trace of every emulated loss (docs/loss-trace.md).

    gbone-goodput   goodput of gbn / gbone / irn over random loss rates (Fig. 10's setting:
                    10 % loss, 10 ms link delay, Go-Back-ONE converging to ~90 % of the link)
    gbone-fct       WebSearch flows at 30 % load: FCT slowdown in 20 equal-count size groups
                    (median and p95), the paper's method (Fig. 9)
    loss-trace      recovery latency CDF per mode at one loss setting
"""
import copy
import os

from .. import config, model, report, runner, topo
from ...trace import DUPLICATE
from ..references import WANG, WANG_BY

MODES = [("gbn", "Go-Back-N"), ("gbone", "Go-Back-ONE"), ("irn", "IRN")]


def _run(c, out, tag, prefix):
    """One run; a run whose rnic failed (e.g. IBV_WC_RETRY_EXC_ERR: Go-Back-N's retries
    ran out) is a result, not the end of the reproduction: a row with goodput 0 and the
    reason in 'failed'."""
    try:
        return runner.run_once(c, out, tag=tag, prefix=prefix)
    except topo.TopoError as e:
        topo.cleanup(prefix)
        why = "IBV_WC_RETRY_EXC_ERR" if "RETRY_EXC" in str(e) else " ".join(str(e).split())[-160:]
        print(f"\n  {tag} ({c['rnic']['recovery']}): failed: {why}")
        return {"recovery": c["rnic"]["recovery"], "failed": why, "goodput_gbps": 0.0,
                "link_utilisation": 0.0, "tx_retransmits": None, "timeouts": None}


def _base(name, quick):
    """The paced bulk setting of the selective recoveries' goodput target: 200 Mb/s bottleneck, both rnics
    paced to 0.9 of it, MTU 1024, 64 KiB WRITEs, a fixed window (no loss-reactive window:
    the recoveries are compared alone), loss on both directions."""
    cfg = config.defaults()
    cfg["name"] = name
    cfg["link"].update(rate="200mbit", rtt="20ms", loss_direction="both")
    cfg["rnic"].update(mtu=1024, pace=0.9, loss_window=False)
    cfg["workload"].update(kind="bulk", size="64K", duration=3 if quick else 5)
    return cfg


def reproduce_gbone_goodput(prefix: str = "tb", quick: bool = False, out: str | None = None) -> int:
    """Go-Back-N vs Go-Back-ONE vs IRN goodput over random loss (Wang (NJUPT) IV, Fig. 10)."""
    cfg = _base("gbone-goodput", quick)
    losses = ["1%", "10%"] if quick else ["0.1%", "1%", "5%", "10%"]
    out = out or os.path.join(report.RESULTS, "reproduce-gbone-goodput")
    print(f"reproduce gbone-goodput: {WANG_BY} section IV, Fig. 10: at 10 % loss and 10 ms link delay\n"
          "  Go-Back-ONE's goodput converges to about 90 % of the link, Go-Back-N's far below.\n"
          "  paper: 100 Gb/s, DCQCN, simulation. here: a 200 Mb/s bottleneck, both rnics paced to\n"
          "  0.9 of it (0.18 Gb/s), MTU 1024, write_bw 64 KiB, RTT 20 ms (10 ms each way), random\n"
          "  loss on both directions, no congestion control (none is needed: the pacer keeps the\n"
          "  queue empty), a fixed window. Fraction = goodput / the lossless goodput of this run.")
    pts = [("", "gbn")] + [(ls, m) for ls in losses for m, _ in MODES]
    rows, lossless = [], None
    for i, (loss, mode) in enumerate(pts):
        report.progress(i, len(pts), f"{mode} loss {loss or 'none'}")
        c = copy.deepcopy(cfg)
        c["link"]["loss"] = f"random {loss}" if loss else ""
        c["rnic"]["recovery"] = mode
        row = _run(c, out, f"s{i}", prefix)
        if not loss:
            lossless = row["goodput_gbps"]
            continue
        row.update(case=f"{mode} loss {loss}", loss=loss, loss_pct=float(loss.rstrip("%")),
                   paper_name=dict(MODES)[mode], lossless_gbps=lossless,
                   fraction=row["goodput_gbps"] / lossless if lossless else float("nan"))
        rows.append(row)
    report.progress(len(pts), len(pts), "done")
    for r in rows:  # against Go-Back-N at the same loss
        g = next(x for x in rows if x["loss"] == r["loss"] and x["recovery"] == "gbn")
        r["vs_gbn"] = r["goodput_gbps"] / g["goodput_gbps"] if g["goodput_gbps"] else float("inf")
    print(f"lossless goodput: {lossless:.4f} Gb/s")
    cols = [("case", "case", "{}"), ("paper_name", "recovery", "{}"),
            ("goodput_gbps", "goodput Gb/s", "{:.4f}"), ("fraction", "of lossless", "{:.3f}"),
            ("link_utilisation", "of link", "{:.3f}"), ("vs_gbn", "x Go-Back-N", "{:.2f}"),
            ("tx_retransmits", "retx pkts", "{}"), ("timeouts", "timeouts", "{}"),
            ("failed", "failed", "{}")]
    print(report.table(rows, cols))
    doc = report.write_doc(os.path.join(out, "gbone-goodput.json"), cfg, rows,
                           extra={"lossless_gbps": lossless})
    png = os.path.join(out, "gbone-goodput.png")
    report.plot_sweep(rows, png, "loss_pct", "fraction", series="paper_name",
                      title=f"goodput / lossless vs random loss (both ways), 0.18 Gb/s x 20 ms; "
                            f"{WANG} Fig. 10 setting", xlabel="random loss (%)",
                      ylabel="goodput / lossless goodput")
    print(f"results: {doc}\nplot:    {png}")
    return 0


FCT_RED = "limit-bytes 2MB red kmin 100KB kmax 400KB pmax 10%"  # wan-cc's bottleneck (DCQCN-p 3.1)


def fct_vs_paper(groups):
    """Wang (NJUPT) IV, Fig. 9's two statements on per-group p95 slowdowns ({recovery:
    {group: row}}): for the groups whose largest flow is above 1 MB, the mean of
    Go-Back-ONE's p95 over Go-Back-N's (the paper: about 0.9); for the others, in how
    many groups Go-Back-N's p95 is the lower one (the paper: Go-Back-N better below 1 MB)."""
    n, o = groups.get("gbn", {}), groups.get("gbone", {})
    big = [g for g in n if g in o and n[g]["size_max_bytes"] > 1 << 20]
    small = [g for g in n if g in o and g not in big]
    ratio = sum(o[g]["slowdown_p95"] / n[g]["slowdown_p95"] for g in big) / len(big) if big else None
    return {"groups_above_1mb": len(big), "gbone_over_gbn_p95_above_1mb": ratio,
            "groups_below_1mb": len(small),
            "gbn_p95_lower_below_1mb": sum(n[g]["slowdown_p95"] < o[g]["slowdown_p95"] for g in small)}


def reproduce_gbone_fct(prefix: str = "tb", quick: bool = False, out: str | None = None,
                        rounds: int = 1) -> int:
    """FCT slowdown of WebSearch flows in 20 equal-count size groups (Wang (NJUPT) IV, Fig. 9);
    --rounds N runs each recovery N times (seeds 1..N: other sizes, arrivals and losses)
    and pools the flows of all rounds before grouping."""
    cfg = config.defaults()
    cfg["name"] = "gbone-fct"
    cfg["description"] = "WebSearch at 30 % load over 16 QPs, DCQCN, RED/ECN bottleneck, 1 % loss"
    cfg["link"].update(rate="200mbit", rtt="8ms", loss="random 1%", loss_direction="both",
                       a2b_extra=FCT_RED)
    # DCQCN and the rnic's default loss-reactive window hold the queue (no --rate_limit):
    # on an 8 ms path DCQCN's datacenter timers alone let it overflow (wan-cc, docs/cc.md)
    cfg["rnic"].update(mtu=1024, pace=0, cc="dcqcn")
    cfg["workload"].update(kind="flows", cdf=os.path.join(config.CDF_DIR, "websearch.cdf"),
                           flows=40 if quick else 200, load=30, qps=16)
    out = out or os.path.join(report.RESULTS, "reproduce-gbone-fct")
    print(f"reproduce gbone-fct: {WANG_BY} section IV, Fig. 9: WebSearch at 30 % load, 2 ms per link\n"
          "  (8 ms end to end), 10 % loss, DCQCN, 100 Gb/s: Go-Back-ONE's p95 FCT slowdown is about\n"
          "  10 % better on average for flows above 1 MB, Go-Back-N better below.\n"
          "  here: 200 Mb/s, 8 ms RTT, random loss 1 % both ways (10 % stalls Go-Back-N's large\n"
          "  flows for minutes at this rate), DCQCN (its defaults) and the rnic's loss window\n"
          f"  through a RED/ECN bottleneck ({FCT_RED}),\n"
          "  no --rate_limit, a pool of 16 QPs (each flow on an idle one, as the paper's one QP per\n"
          "  flow), flows sorted by size in 20 equal-count groups, slowdown = FCT / (RTT + size /\n"
          "  200 Mb/s).")
    rows, pts = [], [(r, m) for r in range(rounds) for m in MODES]
    for i, (rnd, (mode, name)) in enumerate(pts):
        report.progress(i, len(pts), f"{mode} round {rnd + 1}")
        c = copy.deepcopy(cfg)
        c["rnic"]["recovery"] = mode
        c["run"]["seed"] = rnd + 1
        row = _run(c, out, f"f{i}", prefix)
        row.update(case=f"{mode} seed {rnd + 1}", paper_name=name, seed=rnd + 1)
        rows.append(row)
    report.progress(len(pts), len(pts), "done")
    # the flows of every round of a recovery, pooled, then cut into the paper's 20 groups
    rtt, rate = config.parse_time(cfg["link"]["rtt"]), config.parse_rate(cfg["link"]["rate"])
    groups = {m: {g["group"]: g for g in model.slowdown_groups(
        [x for r in rows if r["recovery"] == m for x in r.get("records") or []], rtt, rate)}
        for m, _ in MODES}
    vs = fct_vs_paper(groups)
    print(f"{'group':>5s} {'size max':>10s} " +
          " ".join(f"{n + ' p50':>16s} {n + ' p95':>16s}" for _, n in MODES))
    for g in range(20):
        cells = []
        size = None
        for m, _ in MODES:
            x = groups.get(m, {}).get(g)
            size = size or (x and x["size_max_bytes"])
            cells += [f"{x['slowdown_p50']:16.2f}" if x else f"{'-':>16s}",
                      f"{x['slowdown_p95']:16.2f}" if x else f"{'-':>16s}"]
        print(f"{g:5d} {size or 0:10d} " + " ".join(cells))
    cols = [("paper_name", "recovery", "{}"), ("seed", "seed", "{}"), ("flows", "flows done", "{}"),
            ("fct_p50_ms", "FCT p50 ms", "{:.1f}"), ("fct_p99_ms", "FCT p99 ms", "{:.1f}"),
            ("goodput_gbps", "goodput Gb/s", "{:.4f}"), ("tx_retransmits", "retx pkts", "{}"),
            ("timeouts", "timeouts", "{}"), ("emu_a2b_ecn_marked", "CE marks", "{}"),
            ("rnic_b_tx_cnps", "CNPs", "{}"), ("cc_decreases", "rate cuts", "{}"),
            ("emu_a2b_drop_queue", "queue drops", "{}"), ("failed", "failed", "{}")]
    print(report.table(rows, cols))
    r_ = vs["gbone_over_gbn_p95_above_1mb"]
    print(f"pooled over {rounds} round(s): above 1 MB ({vs['groups_above_1mb']} groups) Go-Back-ONE's p95 "
          f"slowdown is {'-' if r_ is None else f'{r_:.2f}'} x Go-Back-N's on average (paper: about 0.9); "
          f"below 1 MB Go-Back-N's p95 is the lower in {vs['gbn_p95_lower_below_1mb']} of "
          f"{vs['groups_below_1mb']} groups (paper: Go-Back-N better)")
    pooled = [{"recovery": m, **g} for m in groups for g in groups[m].values()]
    doc = report.write_doc(os.path.join(out, "gbone-fct.json"), cfg, rows,
                           extra={"rounds": rounds, "pooled_groups": pooled, "vs_paper": vs})
    png = os.path.join(out, "gbone-fct.png")
    pts = [{"group": g["group"], "slowdown_p95": g["slowdown_p95"], "paper_name": dict(MODES)[m]}
           for m in groups for g in groups[m].values()]
    if pts:
        report.plot_sweep(pts, png, "group", "slowdown_p95", series="paper_name",
                          title=f"p95 FCT slowdown per size group (WebSearch, 30 % load); {WANG} Fig. 9 "
                                "method", xlabel="size group (20 equal-count groups, small to large)",
                          ylabel="p95 FCT slowdown")
    print(f"results: {doc}\nplot:    {png}")
    return 0


def reproduce_loss_trace(prefix: str = "tb", quick: bool = False, out: str | None = None) -> int:
    """Recovery latency (emulated drop -> repair at the receiver) CDF per mode."""
    cfg = _base("loss-trace", quick)
    cfg["link"].update(loss="random 1%", loss_direction="a2b")
    cfg["run"]["trace"] = True
    out = out or os.path.join(report.RESULTS, "reproduce-loss-trace")
    print("reproduce loss-trace: every emulated loss joined with the rnics' --trace (docs/loss-trace.md):\n"
          "  recovery latency = drop at the lossy-emu -> arrival of the repair at rnic B.\n"
          "  setting: 200 Mb/s, both rnics paced to 0.18 Gb/s, RTT 20 ms, MTU 1024, write_bw 64 KiB,\n"
          "  random loss 1 % on the data direction only (a lost ACK is no loss to repair).")
    rows = []
    for i, (mode, name) in enumerate(MODES):
        report.progress(i, len(MODES), mode)
        c = copy.deepcopy(cfg)
        c["rnic"]["recovery"] = mode
        row = _run(c, out, f"t{i}", prefix)
        t = row.get("trace") or {}
        lat = t.get("latency_ms") or {}
        nr = t.get("never_repaired") or {}
        row.update(case=mode, paper_name=name, drops=t.get("drops"), repaired=t.get("repaired"),
                   # a dropped resend of a PSN that had arrived needs no repair (rocewan.trace)
                   dup=nr.get(DUPLICATE, 0), never=sum(n for k, n in nr.items() if k != DUPLICATE),
                   lat_p50=lat.get("p50"), lat_p90=lat.get("p90"), lat_p99=lat.get("p99"),
                   lat_max=lat.get("max"))
        rows.append(row)
    report.progress(len(MODES), len(MODES), "done")
    cols = [("paper_name", "recovery", "{}"), ("drops", "drops", "{}"), ("repaired", "repaired", "{}"),
            ("dup", "dup copies", "{}"), ("never", "never", "{}"), ("lat_p50", "p50 ms", "{:.1f}"),
            ("lat_p90", "p90 ms", "{:.1f}"),
            ("lat_p99", "p99 ms", "{:.1f}"), ("lat_max", "max ms", "{:.1f}"),
            ("goodput_gbps", "goodput Gb/s", "{:.4f}"), ("failed", "failed", "{}")]
    print(report.table(rows, cols))
    doc = report.write_doc(os.path.join(out, "loss-trace.json"), cfg, rows)
    png = os.path.join(out, "loss-trace.png")
    plt = report._plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in rows:
        xs = r.get("trace_cdf_ms") or []
        if xs:
            ax.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post",
                    label=f"{r['paper_name']} ({len(xs)} losses)")
    ax.set_xscale("log")
    ax.set_xlabel("recovery latency (ms): drop -> repair at the receiver")
    ax.set_ylabel("fraction of repaired losses")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("loss -> repair, random 1 % a->b, 0.18 Gb/s x 20 ms", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"results: {doc}\nplot:    {png}")
    return 0
