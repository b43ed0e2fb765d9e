"""Zuo et al., "LoWAR: Enhancing RDMA over Lossy WANs with Transparent Error
Correction" (docs/references.md): goodput of Go-Back-N with LoWAR's XOR FEC
(fec+gbn, xor:32,4) against plain Go-Back-N and Go-Back-ONE under random loss on a
long path, as LoWAR's evaluation compares FEC with the RNIC's own recovery; and
Reed-Solomon (rs:32,4, beyond LoWAR) where two losses in one XOR block are common.

The setting is the FEC acceptance point (bench/testbed/fec_goodput.py), on this machine's
scale: 200 Mb/s bottleneck, 20 ms RTT, both rnics paced to 0.18 Gb/s, MTU 1024 (a BDP of about 430
packets), random loss in both directions. What matters for the comparison is the loss
per packet and the BDP in packets, not the absolute rate (LoWAR: 10 Gb/s).
"""
import copy
import math
import os

from .. import config, model, report, runner
from ..config import ConfigError
from ...trace import DUPLICATE, FEC_FRAME, quantiles
from ..references import WANG_BY
from ..topo import TopoError

LOWAR = "Zuo et al., LoWAR"

# (case, recovery, fec code)
MODES = [("gbn", "gbn", ""), ("gbone", "gbone", ""), ("fec+gbn xor:32,4", "fec+gbn", "xor:32,4"),
         ("fec+gbn rs:32,4", "fec+gbn", "rs:32,4")]


def lowar_config(quick):
    cfg = config.defaults()
    cfg["name"] = "lowar"
    cfg["link"].update(rate="200mbit", rtt="20ms", loss_direction="both")
    cfg["rnic"].update(mtu=1024, pace=0.9, loss_window=False)
    cfg["workload"].update(kind="bulk", size="64K", duration=2 if quick else 4)
    return cfg


def _median(xs):
    xs = sorted(x for x in xs if x == x)  # NaN (an aborted run) left out, counted apart
    if not xs:
        return float("nan")
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def rounds_summary(rows, keys=("goodput_gbps", "x_gbn", "x_xor")):
    """Per (case, loss) over the rounds: n, the aborted count, and median / min / max of
    each key (NaN rounds, i.e. aborted runs, left out of the statistics)."""
    out = {}
    for r in rows:
        out.setdefault((r["case"], r["loss"]), []).append(r)
    summ = []
    for (case, loss), rs in out.items():
        s = {"case": case, "loss": loss, "rounds": len(rs),
             "aborted": sum(1 for r in rs if r.get("aborted"))}
        for k in keys:
            v = [r.get(k, float("nan")) for r in rs]
            v = [x for x in v if x is not None and x == x]
            s[k + "_med"] = _median(v)
            s[k + "_min"] = min(v) if v else float("nan")
            s[k + "_max"] = max(v) if v else float("nan")
        summ.append(s)
    return summ


def reproduce_lowar(prefix: str = "tb", quick: bool = False, out: str | None = None,
                    rounds: int = 1) -> int:
    """LoWAR's evaluation on the testbed: fec+gbn vs gbn vs gbone over random loss.
    rounds > 1: every point that many times, the points of a round run back to back (the
    ratios are taken within a round), median and min-max per point."""
    cfg = lowar_config(quick)
    losses = ["0.5%"] if quick else ["0.1%", "0.5%", "1%"]
    out = out or os.path.join(report.RESULTS, "reproduce-lowar")
    print(f"reproduce lowar: {LOWAR}, goodput of Go-Back-N with XOR FEC vs Go-Back-N / Go-Back-ONE\n"
          "  paper: 10 Gb/s, 40 / 80 ms RTT; here 200 Mb/s bottleneck, 20 ms RTT, rnics paced to\n"
          "  0.18 Gb/s, MTU 1024 (BDP ~430 packets), random loss both ways, 64 KiB WRITEs,\n"
          f"  {rounds} round(s) per point (seed {cfg['run']['seed']} in every round); the fixed\n"
          "  window (no loss-reactive window), as the FEC acceptance points measure gbn.")
    pts = [("lossless", "gbn", "", "")] + [(c, r, f, ls) for ls in losses for c, r, f in MODES]
    rows = []
    total = len(pts) * rounds
    for rnd in range(rounds):
        rrows = []
        for i, (case, rec, fec, loss) in enumerate(pts):
            report.progress(rnd * len(pts) + i, total, f"round {rnd + 1}/{rounds} {case} loss {loss or 'none'}")
            c = copy.deepcopy(cfg)
            c["rnic"]["recovery"] = rec
            if fec:
                c["rnic"]["fec"] = fec
            c["link"]["loss"] = f"random {loss}" if loss else ""
            tag = f"l{i}" if rounds == 1 else f"n{rnd}-l{i}"
            try:
                row = runner.run_once(c, out, tag=tag, prefix=prefix)
            except TopoError as e:  # e.g. IBV_WC_RETRY_EXC_ERR on a starved host: reported
                if rounds == 1:
                    raise
                print(f"\n  round {rnd + 1} {case} loss {loss or 'none'}: aborted: {str(e).splitlines()[0]}")
                row = {"goodput_gbps": float("nan"), "aborted": str(e)[-2000:]}
            row.update(case=case if loss else "gbn lossless", loss=loss or "none", round=rnd + 1,
                       load_avg=os.getloadavg()[0])
            rrows.append(row)
        _ratios(rrows)
        rows += rrows
        if rounds > 1:  # what the rounds so far measured, should the run be cut short
            report.write_doc(os.path.join(out, "lowar-partial.json"), cfg, rows,
                             extra={"rounds_done": rnd + 1, "summary": rounds_summary(rows)})
    report.progress(total, total, "done")
    cols = [("case", "case", "{}"), ("loss", "loss", "{}"), ("goodput_gbps", "Gb/s", "{:.3f}"),
            ("of_lossless", "of lossless", "{:.2f}"), ("x_gbn", "x gbn", "{:.2f}"),
            ("x_xor", "x xor", "{:.2f}"), ("tx_retransmits", "retx pkts", "{}"),
            ("b_fec_rebuilt", "rebuilt", "{}"), ("b_fec_unrecoverable", "unrecov", "{}"),
            ("b_fec_holds_repaired", "holds rebuilt", "{}"), ("b_fec_holds_filled", "holds filled", "{}"),
            ("b_fec_release_deadline", "rel deadline", "{}"),
            ("b_fec_release_progress", "rel progress", "{}"),
            ("b_fec_release_unrecoverable", "rel unrec", "{}"),
            ("b_fec_rebuilt_after_release", "rebuilt late", "{}"), ("fec_tx_recoded", "recoded", "{}"),
            ("fec_tx_flushes", "flushes", "{}"),
            ("fec_overhead_pct", "FEC frames %", "{:.1f}"), ("emu_a2b_drop_loss", "emu a2b drops", "{}")]
    if rounds > 1:
        cols = [("round", "round", "{}"), ("load_avg", "load", "{:.1f}")] + cols
    print(report.table(rows, cols))
    extra = None
    if rounds > 1:
        summ = rounds_summary(rows)
        print(f"over {rounds} rounds (median, min-max; aborted runs left out and counted):")
        print(report.table(summ, [
            ("case", "case", "{}"), ("loss", "loss", "{}"), ("rounds", "n", "{}"), ("aborted", "aborted", "{}"),
            ("goodput_gbps_med", "Gb/s med", "{:.3f}"), ("goodput_gbps_min", "min", "{:.3f}"),
            ("goodput_gbps_max", "max", "{:.3f}"), ("x_gbn_med", "x gbn med", "{:.2f}"),
            ("x_gbn_min", "min", "{:.2f}"), ("x_gbn_max", "max", "{:.2f}"),
            ("x_xor_med", "x xor med", "{:.2f}"), ("x_xor_min", "min", "{:.2f}"),
            ("x_xor_max", "max", "{:.2f}")]))
        extra = {"rounds": rounds, "summary": summ}
    doc = report.write_doc(os.path.join(out, "lowar.json"), cfg, rows, extra=extra)
    print(f"results: {doc}")
    return 0


def _ratios(rows):
    """The ratios of one round's rows: of the lossless run, x gbn and x xor at the same loss."""
    lossless = rows[0]["goodput_gbps"]
    gbn = {r["loss"]: r["goodput_gbps"] for r in rows[1:] if r["case"] == "gbn"}
    xor = {r["loss"]: r["goodput_gbps"] for r in rows[1:] if r["case"].endswith("xor:32,4")}
    for r in rows:
        r["of_lossless"] = r["goodput_gbps"] / lossless if lossless else float("nan")
        g = gbn.get(r["loss"])
        r["x_gbn"] = r["goodput_gbps"] / g if g else float("nan")
        x = xor.get(r["loss"])
        r["x_xor"] = r["goodput_gbps"] / x if x else float("nan")
        cov = r.get("fec_tx_covered", 0)
        r["fec_overhead_pct"] = 100.0 * r.get("fec_tx_frames", 0) / cov if cov else 0.0


# LoWAR's burst experiment: GE loss, 1-h (loss in the bad state) 0.3 and 0.7, p (good -> bad)
# 0.01 %; the paper gives no r (bad -> good): 10 % here (bad sojourns of 10 packets on average).
GE_BAD = ["30%", "70%"]
GE = "gemodel 0.01% 10% {}"


def reproduce_lowar_burst(prefix: str = "tb", quick: bool = False, out: str | None = None,
                          rounds: int = 1) -> int:
    """LoWAR's GE burst experiment: gbn vs fec+gbn xor:32,4 vs rs:32,4; rounds > 1:
    every point that many times (a round's points back to back), median and min-max."""
    cfg = lowar_config(quick)
    cfg["name"] = "lowar-burst"
    out = out or os.path.join(report.RESULTS, "reproduce-lowar-burst")
    bad = GE_BAD[-1:] if quick else GE_BAD
    print(f"reproduce lowar-burst: {LOWAR}, bursty (Gilbert-Elliott) loss, XOR against RS\n"
          "  paper: loss in the bad state 0.3 / 0.7, good->bad 0.01 %, bad->good not given: 10 %\n"
          "  here; the lowar path (200 Mb/s, 20 ms RTT, rnics paced to 0.18 Gb/s, MTU 1024),\n"
          f"  {rounds} round(s) per point (seed {cfg['run']['seed']} in every round).")
    modes = [("gbn", "gbn", ""), ("fec+gbn xor:32,4", "fec+gbn", "xor:32,4"),
             ("fec+gbn rs:32,4", "fec+gbn", "rs:32,4")]
    pts = [(c, r, f, b) for b in bad for c, r, f in modes]
    rows = []
    total = rounds * len(pts)
    for rnd in range(rounds):
        rrows = []
        for i, (case, rec, fec, b) in enumerate(pts):
            report.progress(rnd * len(pts) + i, total, f"round {rnd + 1}/{rounds} {case} bad-state loss {b}")
            c = copy.deepcopy(cfg)
            c["rnic"]["recovery"] = rec
            if fec:
                c["rnic"]["fec"] = fec
            c["link"]["loss"] = GE.format(b)
            try:
                row = runner.run_once(c, out, tag=f"g{i}" if rounds == 1 else f"n{rnd}-g{i}", prefix=prefix)
            except TopoError as e:
                if rounds == 1:
                    raise
                print(f"\n  round {rnd + 1} {case} {b}: aborted: {str(e).splitlines()[0]}")
                row = {"goodput_gbps": float("nan"), "aborted": str(e)[-2000:]}
            row.update(case=case, loss=GE.format(b), round=rnd + 1, load_avg=os.getloadavg()[0])
            rrows.append(row)
        gbn = {r["loss"]: r["goodput_gbps"] for r in rrows if r["case"] == "gbn"}
        xor = {r["loss"]: r["goodput_gbps"] for r in rrows if r["case"].endswith("xor:32,4")}
        for r in rrows:
            g, x = gbn.get(r["loss"]), xor.get(r["loss"])
            r["x_gbn"] = r["goodput_gbps"] / g if g else float("nan")
            r["x_xor"] = r["goodput_gbps"] / x if x else float("nan")
        rows += rrows
    report.progress(total, total, "done")
    cols = [("case", "case", "{}"), ("loss", "loss", "{}"), ("goodput_gbps", "Gb/s", "{:.3f}"),
            ("x_gbn", "x gbn", "{:.2f}"), ("x_xor", "x xor", "{:.2f}"),
            ("loss_rate_measured", "loss a2b", "{:.5f}"), ("tx_retransmits", "retx pkts", "{}"),
            ("b_fec_rebuilt", "rebuilt", "{}"), ("b_fec_unrecoverable", "unrecov", "{}"),
            ("b_fec_release_deadline", "rel deadline", "{}"),
            ("b_fec_release_progress", "rel progress", "{}")]
    if rounds > 1:
        cols = [("round", "round", "{}"), ("load_avg", "load", "{:.1f}")] + cols
    print(report.table(rows, cols))
    extra = None
    if rounds > 1:
        summ = rounds_summary(rows)
        print(f"over {rounds} rounds (median, min-max; aborted runs left out and counted):")
        print(report.table(summ, [
            ("case", "case", "{}"), ("loss", "loss", "{}"), ("rounds", "n", "{}"), ("aborted", "aborted", "{}"),
            ("goodput_gbps_med", "Gb/s med", "{:.3f}"), ("goodput_gbps_min", "min", "{:.3f}"),
            ("goodput_gbps_max", "max", "{:.3f}"), ("x_gbn_med", "x gbn med", "{:.2f}"),
            ("x_gbn_min", "min", "{:.2f}"), ("x_gbn_max", "max", "{:.2f}"),
            ("x_xor_med", "x xor med", "{:.2f}"), ("x_xor_min", "min", "{:.2f}"),
            ("x_xor_max", "max", "{:.2f}")]))
        extra = {"rounds": rounds, "summary": summ}
    doc = report.write_doc(os.path.join(out, "lowar-burst.json"), cfg, rows, extra=extra)
    print(f"results: {doc}")
    return 0


def reproduce_lowar_fct(prefix: str = "tb", quick: bool = False, out: str | None = None,
                        rounds: int = 1) -> int:
    """LoWAR's 1 MB flows: FCT average and p99 of gbn vs fec+gbn xor:32,4 at 0.01-0.05 % loss;
    rounds > 1: every point that many times (a round's points back to back, the cut in FCT
    taken within the round), median and min-max."""
    cfg = lowar_config(quick)
    cfg["name"] = "lowar-fct"
    cfg["workload"].update(kind="flows", cdf="", size="1M", flows=40 if quick else 100, load=0)
    out = out or os.path.join(report.RESULTS, "reproduce-lowar-fct")
    losses = ["0.05%"] if quick else ["0.01%", "0.05%"]
    print(f"reproduce lowar-fct: {LOWAR}, 1 MB flows one at a time, FCT average and p99\n"
          "  paper: 12-97 % lower FCT with FEC at 0.01-0.05 % loss; here the lowar path (200 Mb/s,\n"
          "  20 ms RTT, rnics paced to 0.18 Gb/s, MTU 1024: 1 MB = 1024 packets, 47 ms of sending),\n"
          f"  random loss both ways, {rounds} round(s) per point (seed {cfg['run']['seed']} in every round).")
    modes = [("gbn", "gbn", ""), ("fec+gbn xor:32,4", "fec+gbn", "xor:32,4")]
    pts = [(c, r, f, ls) for ls in losses for c, r, f in modes]
    rows = []
    total = rounds * len(pts)
    for rnd in range(rounds):
        rrows = []
        for i, (case, rec, fec, loss) in enumerate(pts):
            report.progress(rnd * len(pts) + i, total, f"round {rnd + 1}/{rounds} {case} loss {loss}")
            c = copy.deepcopy(cfg)
            c["rnic"]["recovery"] = rec
            if fec:
                c["rnic"]["fec"] = fec
            c["link"]["loss"] = f"random {loss}"
            try:
                row = runner.run_once(c, out, tag=f"f{i}" if rounds == 1 else f"n{rnd}-f{i}", prefix=prefix)
            except TopoError as e:
                if rounds == 1:
                    raise
                print(f"\n  round {rnd + 1} {case} loss {loss}: aborted: {str(e).splitlines()[0]}")
                row = {"goodput_gbps": float("nan"), "fct_p99_ms": float("nan"), "aborted": str(e)[-2000:]}
            recs = row.pop("records", None) or []
            fcts = [x[2] / 1e3 for x in recs]  # records: [size, start us, FCT us]
            row["fct_avg_ms"] = sum(fcts) / len(fcts) if fcts else float("nan")
            row.update(case=case, loss=loss, round=rnd + 1, load_avg=os.getloadavg()[0])
            rrows.append(row)
        gbn = {r["loss"]: r for r in rrows if r["case"] == "gbn"}
        for r in rrows:
            g = gbn.get(r["loss"])
            for k in ("fct_avg_ms", "fct_p99_ms"):
                v, gv = r.get(k), (g or {}).get(k)
                r[k + "_cut"] = (100.0 * (1 - v / gv)) if v is not None and gv else float("nan")
        rows += rrows
    report.progress(total, total, "done")
    cols = [("case", "case", "{}"), ("loss", "loss", "{}"), ("flows", "flows", "{}"),
            ("fct_avg_ms", "FCT avg ms", "{:.1f}"), ("fct_p99_ms", "FCT p99 ms", "{:.1f}"),
            ("fct_avg_ms_cut", "avg lower %", "{:.0f}"), ("fct_p99_ms_cut", "p99 lower %", "{:.0f}"),
            ("tx_retransmits", "retx pkts", "{}"), ("b_fec_rebuilt", "rebuilt", "{}")]
    if rounds > 1:
        cols = [("round", "round", "{}"), ("load_avg", "load", "{:.1f}")] + cols
    print(report.table(rows, cols))
    extra = None
    if rounds > 1:
        summ = rounds_summary(rows, keys=("fct_avg_ms", "fct_p99_ms", "fct_avg_ms_cut", "fct_p99_ms_cut"))
        print(f"over {rounds} rounds (median, min-max; aborted runs left out and counted):")
        print(report.table(summ, [
            ("case", "case", "{}"), ("loss", "loss", "{}"), ("rounds", "n", "{}"), ("aborted", "aborted", "{}"),
            ("fct_avg_ms_med", "FCT avg ms med", "{:.1f}"), ("fct_p99_ms_med", "p99 med", "{:.1f}"),
            ("fct_avg_ms_cut_med", "avg lower % med", "{:.0f}"), ("fct_avg_ms_cut_min", "min", "{:.0f}"),
            ("fct_avg_ms_cut_max", "max", "{:.0f}"), ("fct_p99_ms_cut_med", "p99 lower % med", "{:.0f}"),
            ("fct_p99_ms_cut_min", "min", "{:.0f}"), ("fct_p99_ms_cut_max", "max", "{:.0f}")]))
        extra = {"rounds": rounds, "summary": summ}
    doc = report.write_doc(os.path.join(out, "lowar-fct.json"), cfg, rows, extra=extra)
    print(f"results: {doc}")
    return 0


# LoWAR's headline sweep: 1e-5 ... 1e-2 random loss at 40 and 80 ms RTT
RTT_RTTS = ["40ms", "80ms"]
RTT_LOSSES = ["0.001%", "0.01%", "0.1%", "1%"]
RTT_MODES = [("gbn", "gbn", ""), ("fec+gbn xor:32,4", "fec+gbn", "xor:32,4")]


def bdp_packets(cfg):
    """The path's BDP in packets at the rnics' paced rate (pace x link rate x RTT / MTU)."""
    rate = config.parse_rate(cfg["link"]["rate"]) * cfg["rnic"]["pace"]
    return rate / 8 * config.parse_time(cfg["link"]["rtt"]) / cfg["rnic"]["mtu"]


def lowar_rtt_duration(cfg, loss, quick):
    """Seconds of a point: 10 (quick: 3), longer where the loss is so rare that 10 s would
    see fewer than 10 expected losses per direction (1e-5 at 0.18 Gb/s: 46 s)."""
    least = 3 if quick else 10
    rate = config.parse_rate(cfg["link"]["rate"]) * cfg["rnic"]["pace"] / 8 / cfg["rnic"]["mtu"]
    _, ev = model.ge_params(f"random {loss}" if loss else "")
    if quick or ev <= 0:
        return least
    return max(least, math.ceil(10 / (ev * rate)))


def lowar_rtt_config(rtt, quick):
    """The lowar path at a longer RTT: the window (max_inflight), the posted WRITEs
    (tx_depth 0: about 4 BDPs) and the duration cover the BDP at 80 ms (~1760 packets);
    the IBTA timer is 2^15 x 4.096 us = 134 ms, above the 80 ms RTT (2^14 = 67 ms is not)."""
    cfg = lowar_config(quick)
    cfg["name"] = "lowar-rtt"
    cfg["link"]["rtt"] = rtt
    cfg["rnic"].update(qp_timeout=15, max_inflight=max(cfg["rnic"]["max_inflight"], 8192))
    cfg["workload"].update(duration=3 if quick else 10, tx_depth=0)
    return cfg


MEMIF_MTUS = (4096, 1024)


def lowar_memif_config(rtt, quick, mtu=4096):
    """LoWAR's own scale over memif links (configs/gbn-10g.toml): rnic A -> lossy-emu ->
    rnic B over net_memif, a 10 Gb/s link (the rnics paced to 0.98 of it; this 2-core host
    carries 5-8 Gb/s at MTU 4096, less at 1024), MTU 4096 or 1024 (LoWAR's setting and
    the FEC acceptance points'), 1 MiB WRITEs, loss on the data direction (a->b) only, the
    IBTA timer 2^15 x 4.096 us = 134 ms (above the 80 ms RTT; 2^14 = 67 ms is not: a first
    manual try with it went back on 15 spurious timeouts), 6 s per point (quick: 3)."""
    if mtu not in MEMIF_MTUS:
        raise ConfigError(f"lowar-memif: --mtu {mtu}: one of {', '.join(map(str, MEMIF_MTUS))}")
    cfg = config.defaults()
    cfg["name"] = "lowar-memif"
    cfg["link"].update(rate="10gbit", rtt=rtt, transport="memif", loss_direction="a2b")
    cfg["rnic"].update(mtu=mtu, recovery="gbn", loss_window=False, qp_timeout=15)
    cfg["workload"].update(kind="bulk", size="1M", duration=3 if quick else 6)
    return cfg


def measured_bdp_packets(gbps, rtt, mtu):
    """The BDP in packets at a measured goodput (the memif path's rate is what the host
    carries, not the configured 10 Gb/s): goodput x RTT / MTU."""
    return gbps * 1e9 / 8 * config.parse_time(rtt) / mtu if gbps == gbps else float("nan")


def rtt_ratios(rows, mtu, measured_bdp):
    """One round's derived figures: x gbn at the same (RTT, loss), E x BDP (E the random
    loss rate per packet, the BDP in packets at the lossless rate: configured for the veth
    path, measured over memif) and the Go-Back-N model of Wang (NJUPT) IV.A
    (model.gbn_goodput_fraction, B = the same round's lossless goodput at that RTT).

    Against the formula, per point: x_model = this row's goodput / the formula's gbn
    (on a fec+gbn row: the factor over a Go-Back-N exactly as good as the formula; on a
    gbn row: measured gbn / formula), gbn_x_model = the same point's measured gbn /
    formula on every row, and x_gbn = x_model / gbn_x_model (the measured factor, LoWAR's
    definition). A Go-Back-N below the formula (ConnectX-5 in LoWAR: gbn_x_model ~0.57)
    multiplies the measured factor by 1 / gbn_x_model."""
    base = {r["rtt"]: r["goodput_gbps"] for r in rows if r["loss"] == "none"}
    gbn = {(r["rtt"], r["loss"]): r["goodput_gbps"] for r in rows if r["case"] == "gbn"}
    for r in rows:
        b = base.get(r["rtt"], float("nan"))
        r["lossless_gbps"] = b
        if measured_bdp:
            r["bdp_pkts"] = measured_bdp_packets(b, r["rtt"], mtu)
        g = gbn.get((r["rtt"], r["loss"]))
        r["x_gbn"] = r["goodput_gbps"] / g if g else float("nan")
        _, ev = model.ge_params(f"random {r['loss']}" if r["loss"] != "none" else "")
        r["e_x_bdp"] = ev * r["bdp_pkts"]
        if b == b and b > 0:
            frac = model.gbn_goodput_fraction(ev, mtu, b * 1e9, config.parse_time(r["rtt"]))
            r["model_gbn_gbps"] = b * frac
            r["x_model"] = r["goodput_gbps"] / r["model_gbn_gbps"] if r["model_gbn_gbps"] else float("nan")
        else:
            r["model_gbn_gbps"] = r["x_model"] = float("nan")
        m = r["model_gbn_gbps"]
        r["gbn_x_model"] = g / m if g and m == m and m > 0 else float("nan")


def rtt_summary(rows):
    """Per (RTT, case, loss) over the rounds: median / min / max of goodput, x gbn and the
    measured / model ratio (aborted rounds left out and counted)."""
    by = {}
    for r in rows:
        by.setdefault((r["rtt"], r["case"], r["loss"]), []).append(r)
    out = []
    for (rtt, case, loss), rs in by.items():
        s = rounds_summary([dict(r, case=case, loss=loss) for r in rs],
                           keys=("goodput_gbps", "x_gbn", "x_model", "gbn_x_model", "e_x_bdp",
                                 "bdp_pkts", "model_gbn_gbps"))[0]
        s["rtt"] = rtt
        for k in ("tx_retransmits", "b_tx_nak_seq_err", "b_fec_rebuilt", "b_fec_release_progress",
                  "b_fec_release_deadline", "b_fec_rebuilt_after_release", "b_fec_unrecoverable",
                  "fec_tx_dropped", "emu_a2b_drop_loss"):
            s[k + "_sum"] = sum(r.get(k) or 0 for r in rs)
        out.append(s)
    return out


RTT_COLS = [("rtt", "RTT", "{}"), ("case", "case", "{}"), ("loss", "loss", "{}"),
            ("e_x_bdp", "E x BDP", "{:.3g}"), ("seconds", "s", "{}"), ("goodput_gbps", "Gb/s", "{:.3f}"),
            ("x_gbn", "x gbn", "{:.2f}"), ("model_gbn_gbps", "gbn model Gb/s", "{:.3f}"),
            ("x_model", "/ model", "{:.2f}"), ("gbn_x_model", "gbn / model", "{:.2f}"),
            ("lossless_gbps", "lossless Gb/s", "{:.3f}"), ("tx_retransmits", "retx pkts", "{}"),
            ("b_tx_nak_seq_err", "NAKs", "{}"), ("timeouts", "timeouts", "{}"),
            ("b_fec_rebuilt", "rebuilt", "{}"), ("b_fec_unrecoverable", "unrecov", "{}"),
            ("b_fec_release_deadline", "rel deadline", "{}"),
            ("b_fec_release_progress", "rel progress", "{}"),
            ("b_fec_release_full", "rel full", "{}"), ("fec_tx_dropped", "FEC tx dropped", "{}"),
            ("emu_a2b_drop_loss", "emu a2b drops", "{}")]


def rtt_sweep(name, make_cfg, duration, rtts, losses, prefix, out, rounds, mtu, measured_bdp):
    """gbn vs fec+gbn xor:32,4 over random loss at each RTT, `rounds` times (a round's
    points back to back, its ratios taken within the round), each point beside the
    Go-Back-N formula. Returns (rows, summary or None)."""
    pts = [(rtt, "lossless", "gbn", "", "") for rtt in rtts]
    pts += [(rtt, c, r, f, ls) for rtt in rtts for ls in losses for c, r, f in RTT_MODES]
    rows = []
    total = rounds * len(pts)
    for rnd in range(rounds):
        rrows = []
        for i, (rtt, case, rec, fec, loss) in enumerate(pts):
            report.progress(rnd * len(pts) + i, total,
                            f"round {rnd + 1}/{rounds} rtt {rtt} {case} loss {loss or 'none'}")
            c = make_cfg(rtt)
            c["rnic"]["recovery"] = rec
            if fec:
                c["rnic"]["fec"] = fec
            c["link"]["loss"] = f"random {loss}" if loss else ""
            c["workload"]["duration"] = duration(c, loss)
            try:
                row = runner.run_once(c, out, tag=f"r{i}" if rounds == 1 else f"n{rnd}-r{i}", prefix=prefix)
            except TopoError as e:  # e.g. IBV_WC_RETRY_EXC_ERR: reported as such, not dropped
                print(f"\n  round {rnd + 1} rtt {rtt} {case} loss {loss or 'none'}: aborted: "
                      f"{str(e).splitlines()[0]}")
                row = {"goodput_gbps": float("nan"), "aborted": str(e)[-2000:]}
            row.update(case=case if loss else "gbn lossless", loss=loss or "none", rtt=rtt,
                       seconds=c["workload"]["duration"], bdp_pkts=bdp_packets(c), round=rnd + 1,
                       load_avg=os.getloadavg()[0])
            rrows.append(row)
        rtt_ratios(rrows, mtu, measured_bdp)
        rows += rrows
        if rounds > 1:
            report.write_doc(os.path.join(out, f"{name}-partial.json"), make_cfg(rtts[0]), rows,
                             extra={"rounds_done": rnd + 1, "summary": rtt_summary(rows)})
    report.progress(total, total, "done")
    cols = RTT_COLS
    if rounds > 1:
        cols = [("round", "round", "{}"), ("load_avg", "load", "{:.1f}")] + cols
    print(report.table(rows, cols))
    summ = None
    if rounds > 1:
        summ = rtt_summary(rows)
        print(f"over {rounds} rounds (median, min-max; aborted runs left out and counted):")
        print(report.table(summ, [
            ("rtt", "RTT", "{}"), ("case", "case", "{}"), ("loss", "loss", "{}"), ("rounds", "n", "{}"),
            ("aborted", "aborted", "{}"), ("e_x_bdp_med", "E x BDP", "{:.3g}"),
            ("goodput_gbps_med", "Gb/s med", "{:.3f}"), ("goodput_gbps_min", "min", "{:.3f}"),
            ("goodput_gbps_max", "max", "{:.3f}"), ("x_gbn_med", "x gbn med", "{:.2f}"),
            ("x_gbn_min", "min", "{:.2f}"), ("x_gbn_max", "max", "{:.2f}"),
            ("model_gbn_gbps_med", "gbn model", "{:.3f}"), ("x_model_med", "/ model med", "{:.2f}"),
            ("x_model_min", "min", "{:.2f}"), ("x_model_max", "max", "{:.2f}"),
            ("gbn_x_model_med", "gbn / model med", "{:.2f}"), ("b_tx_nak_seq_err_sum", "NAKs", "{}"),
            ("b_fec_release_deadline_sum", "rel deadline", "{}"),
            ("b_fec_rebuilt_after_release_sum", "reb after rel", "{}"),
            ("b_fec_release_progress_sum", "rel progress", "{}"),
            ("emu_a2b_drop_loss_sum", "emu drops", "{}")]))
    return rows, summ


def reproduce_lowar_rtt(prefix: str = "tb", quick: bool = False, out: str | None = None,
                        rounds: int = 1) -> int:
    """LoWAR's 40 / 80 ms sweep: gbn vs fec+gbn xor:32,4 over random loss 1e-5 ... 1e-2,
    with the Go-Back-N model of Wang (NJUPT) IV.A at each point; rounds > 1: every point
    that many times (a round's points back to back), median and min-max."""
    rtts = RTT_RTTS[-1:] if quick else RTT_RTTS
    losses = ["0.1%"] if quick else RTT_LOSSES
    out = out or os.path.join(report.RESULTS, "reproduce-lowar-rtt")
    print(f"reproduce lowar-rtt: {LOWAR}, goodput of fec+gbn xor:32,4 vs gbn at 40 / 80 ms RTT\n"
          "  paper: 10 Gb/s, x2.05-5.01 at 40 ms, x11.55-19.07 at 80 ms; here 200 Mb/s bottleneck,\n"
          "  rnics paced to 0.18 Gb/s, MTU 1024 (BDP ~880 / ~1760 packets), random loss both ways,\n"
          "  64 KiB WRITEs, 10 s per point (at 1e-5: 46 s, 10 expected losses a direction),\n"
          f"  {rounds} round(s) per point; model: {WANG_BY} IV.A with B = the lossless goodput.")
    rows, summ = rtt_sweep("lowar-rtt", lambda rtt: lowar_rtt_config(rtt, quick),
                           lambda c, loss: lowar_rtt_duration(c, loss, quick),
                           rtts, losses, prefix, out, rounds, 1024, measured_bdp=False)
    extra = {"rounds": rounds, "summary": summ} if summ else None
    doc = report.write_doc(os.path.join(out, "lowar-rtt.json"), lowar_rtt_config(rtts[0], quick), rows,
                           extra=extra)
    print(f"results: {doc}")
    return 0


def lowar_bdp_packets(rtt, mtu, gbps=10.0):
    """LoWAR's BDP in packets: its 10 Gb/s path x RTT / MTU (the slides give no MTU)."""
    return measured_bdp_packets(gbps, rtt, mtu)


# LoWAR's motivation (the LoWAR paper): ConnectX-5 at 10 Gb/s, 40 ms, 0.001 % loss, Go-Back-N
# from 9.21 to 2.92 Gb/s (32 % of lossless)
CX5_LOSSLESS_GBPS, CX5_GBN_GBPS, CX5_LOSS, CX5_RTT = 9.21, 2.92, 1e-5, "40ms"


def cx5_gbn_x_model(mtu):
    """ConnectX-5's Go-Back-N in LoWAR against the same formula (Wang (NJUPT) IV.A, B = its
    9.21 Gb/s lossless, E = 1e-5, 40 ms, this MTU): measured / formula."""
    frac = model.gbn_goodput_fraction(CX5_LOSS, mtu, CX5_LOSSLESS_GBPS * 1e9, config.parse_time(CX5_RTT))
    return CX5_GBN_GBPS / (CX5_LOSSLESS_GBPS * frac)


def reproduce_lowar_memif(prefix: str = "tb", quick: bool = False, out: str | None = None,
                          rounds: int = 1, mtu: int | None = None) -> int:
    """LoWAR's 40 / 80 ms sweep nearer LoWAR's packets per BDP: the memif chain (9 300 /
    18 500 packets of 4 KiB per BDP at 40 / 80 ms at 7.6 Gb/s, what a quiet host carries;
    LoWAR's 10 Gb/s: 12 000 / 24 000 of 4 KiB, 49 000 / 98 000 of 1 KiB), gbn vs fec+gbn
    xor:32,4 over random loss 1e-5 ... 1e-2 on the data direction, beside the Go-Back-N
    model of Wang (NJUPT) IV.A (B = the round's lossless goodput, E = the loss rate per
    packet, the sweep's MTU). mtu: 4096 (default) or 1024 (LoWAR's and the FEC acceptance points'); the
    scaling is the same at both: the BDP in packets is the round's lossless goodput x RTT /
    MTU, so E x BDP (and the formula) follow the MTU and the rate the host carries at it."""
    mtu = mtu or MEMIF_MTUS[0]
    rtts = RTT_RTTS[-1:] if quick else RTT_RTTS
    losses = ["0.01%"] if quick else RTT_LOSSES
    out = out or os.path.join(report.RESULTS, "reproduce-lowar-memif")
    cfg0 = lowar_memif_config(rtts[0], quick, mtu)
    secs = cfg0["workload"]["duration"]
    lw = " / ".join(f"~{lowar_bdp_packets(r, mtu):,.0f}".replace(",", " ") for r in RTT_RTTS)
    cx5 = cx5_gbn_x_model(mtu)
    print(f"reproduce lowar-memif: {LOWAR}, goodput of fec+gbn xor:32,4 vs gbn at 40 / 80 ms RTT\n"
          "  paper: 10 Gb/s, x2.05-5.01 at 40 ms, x11.55-19.07 at 80 ms; here rnic A -> lossy-emu ->\n"
          "  rnic B over memif, a 10 Gb/s link (what this host carries, measured by the lossless\n"
          f"  run of each round), MTU {mtu}, 1 MiB WRITEs, random loss a->b only, IBTA timer\n"
          f"  134 ms, {secs} s per point, {rounds} round(s) per point. Scaling: E x BDP, the loss\n"
          "  per packet times the BDP in packets at the round's lossless rate (goodput x RTT /\n"
          f"  MTU; LoWAR at 10 Gb/s with {mtu} B packets: {lw} per BDP at 40 / 80 ms);\n"
          f"  model: {WANG_BY} IV.A with B = the round's lossless goodput, MTU {mtu}.\n"
          "  '/ model': the row's goodput over the formula's gbn (fec+gbn: the factor over a\n"
          "  Go-Back-N as good as the formula); 'gbn / model': the point's measured gbn over it.\n"
          f"  LoWAR's ConnectX-5 (9.21 -> 2.92 Gb/s at 1e-5, 40 ms): gbn / model {cx5:.2f} at MTU {mtu}.")
    rows, summ = rtt_sweep("lowar-memif", lambda rtt: lowar_memif_config(rtt, quick, mtu),
                           lambda c, loss: c["workload"]["duration"],
                           rtts, losses, prefix, out, rounds, mtu, measured_bdp=True)
    extra = {"rounds": rounds, "summary": summ, "mtu": mtu, "cx5_gbn_x_model": cx5}
    if not summ:
        extra.pop("summary")
    doc = report.write_doc(os.path.join(out, "lowar-memif.json"), cfg0, rows, extra=extra)
    print(f"results: {doc}")
    return 0


# LoWAR's recovery latency per loss: the loss -> repair trace of every emulated
# loss under each FEC mode, told apart by what repaired it (docs/loss-trace.md)
LAT_MODES = [("gbn", "gbn", ""), ("fec+gbn xor:32,4", "fec+gbn", "xor:32,4"),
             ("fec+gbone xor:32,4", "fec+gbone", "xor:32,4"), ("fec+irn xor:32,4", "fec+irn", "xor:32,4")]


def latency_rows(row):
    """The per-kind figures of one traced run: counts and p50/p90/p99/max of the repair
    latency in ms, RTTs and block fills (K packets at the sending rate)."""
    t = row.get("trace") or {}
    nr = t.get("never_repaired") or {}
    out = {"drops": t.get("drops"), "repaired": t.get("repaired"),
           "dup": nr.get(DUPLICATE, 0), "fec_frames": nr.get(FEC_FRAME, 0),
           "not_req": nr.get("not a request", 0) + nr.get("not RoCEv2", 0),
           "never": sum(n for k, n in nr.items()
                        if k not in (DUPLICATE, FEC_FRAME, "not a request", "not RoCEv2"))}
    for kind, b in (t.get("by") or {}).items():
        out[f"{kind}_n"] = b["repaired"]
        for unit in ("ms", "rtts", "fills"):
            q = b.get(f"latency_{unit}") or {}
            for p in ("p50", "p90", "p99", "max"):
                out[f"{kind}_{unit}_{p}"] = q.get(p)
    return out


def pooled_latency(rows, fill, rtt_ms):
    """One row per case over its rounds: drops and repairs summed, the per-loss latencies
    of every round pooled (p50/p90/p99/max per repair kind in fills and RTTs), and the
    spread of the rounds' own FEC medians."""
    out = {}
    for r in rows:
        out.setdefault(r["case"], []).append(r)
    summ = []
    for case, rs in out.items():
        s = {"case": case, "rounds": len(rs), "aborted": sum(1 for r in rs if r.get("aborted"))}
        for k in ("drops", "fec_n", "retx_n", "dup", "fec_frames", "never"):
            s[k] = sum(r.get(k) or 0 for r in rs)
        for kind in ("fec", "retx"):
            ms = [x for r in rs for x in (r.get("trace_cdf_ms_by") or {}).get(kind) or []]
            for unit, div in (("fills", fill), ("rtts", rtt_ms)):
                q = quantiles(x / div for x in ms)
                for p in ("p50", "p90", "p99", "max"):
                    s[f"{kind}_{unit}_{p}"] = q[p]
        meds = [r["fec_fills_p50"] for r in rs if r.get("fec_fills_p50") is not None]
        s["fec_fills_p50_min"] = min(meds) if meds else None
        s["fec_fills_p50_max"] = max(meds) if meds else None
        summ.append(s)
    return summ


def reproduce_lowar_latency(prefix: str = "tb", quick: bool = False, out: str | None = None,
                            rounds: int = 1) -> int:
    """Recovery latency per loss under fec+gbn / fec+gbone / fec+irn (xor:32,4), from the
    loss -> repair trace: each loss repaired by FEC or by a retransmission, in block-fill
    times and RTTs (LoWAR reports 10-100 us at 10 Gb/s). rounds > 1: every mode that many
    times, the per-loss latencies pooled over the rounds."""
    cfg = lowar_config(quick)
    cfg["name"] = "lowar-latency"
    cfg["link"].update(loss="random 0.5%", loss_direction="a2b")
    cfg["run"]["trace"] = True
    out = out or os.path.join(report.RESULTS, "reproduce-lowar-latency")
    fill = runner.fec_fill_ms(dict(cfg, rnic=dict(cfg["rnic"], recovery="fec+gbn", fec="xor:32,4")))
    rtt_ms = config.parse_time(cfg["link"]["rtt"]) * 1e3
    print(f"reproduce lowar-latency: {LOWAR}, recovery latency per loss (drop at the lossy-emu ->\n"
          "  the PSN rebuilt or arriving at rnic B), by what repaired it: FEC or a retransmission.\n"
          "  paper: 10-100 us at 10 Gb/s; here the lowar path (200 Mb/s, 20 ms RTT, rnics paced to\n"
          f"  0.18 Gb/s, MTU 1024), random loss 0.5 % on the data direction only, {rounds} round(s);\n"
          f"  block fill = K = 32 packets at 0.18 Gb/s = {fill:.3f} ms (an XOR group, K x D = 128\n"
          f"  packets, is 4 fills), RTT {rtt_ms:g} ms = {rtt_ms / fill:.1f} fills.")
    rows = []
    total = rounds * len(LAT_MODES)
    for rnd in range(rounds):
        for i, (case, rec, fec) in enumerate(LAT_MODES):
            report.progress(rnd * len(LAT_MODES) + i, total, f"round {rnd + 1}/{rounds} {case}")
            c = copy.deepcopy(cfg)
            c["rnic"]["recovery"] = rec
            if fec:
                c["rnic"]["fec"] = fec
            try:
                row = runner.run_once(c, out, tag=f"t{i}" if rounds == 1 else f"n{rnd}-t{i}", prefix=prefix)
            except TopoError as e:
                print(f"\n  {case}: aborted: {str(e).splitlines()[0]}")
                row = {"goodput_gbps": float("nan"), "aborted": str(e)[-2000:]}
            row.update(case=case, round=rnd + 1, load_avg=os.getloadavg()[0], block_fill_ms=fill,
                       **latency_rows(row))
            rows.append(row)
    report.progress(total, total, "done")
    cols = [("case", "case", "{}"), ("goodput_gbps", "Gb/s", "{:.3f}"), ("drops", "drops", "{}"),
            ("fec_n", "by FEC", "{}"), ("fec_fills_p50", "p50 fills", "{:.2f}"),
            ("fec_fills_p90", "p90", "{:.2f}"), ("fec_fills_p99", "p99", "{:.2f}"),
            ("fec_fills_max", "max", "{:.2f}"), ("fec_rtts_p50", "p50 RTT", "{:.3f}"),
            ("fec_rtts_p99", "p99 RTT", "{:.3f}"),
            ("retx_n", "by retx", "{}"), ("retx_fills_p50", "p50 fills", "{:.1f}"),
            ("retx_rtts_p50", "p50 RTT", "{:.2f}"), ("retx_rtts_p90", "p90", "{:.2f}"),
            ("retx_rtts_p99", "p99", "{:.2f}"), ("retx_rtts_max", "max", "{:.2f}"),
            ("dup", "dup copies", "{}"), ("fec_frames", "FEC frames", "{}"), ("never", "never", "{}"),
            ("b_fec_rebuilt", "rebuilt (B)", "{}"), ("tx_retransmits", "retx pkts", "{}")]
    if rounds > 1:
        cols = [("round", "round", "{}"), ("load_avg", "load", "{:.1f}")] + cols
    print(report.table(rows, cols))
    extra = {"block_fill_ms": fill, "rtt_ms": rtt_ms}
    if rounds > 1:
        summ = pooled_latency(rows, fill, rtt_ms)
        print(f"pooled over {rounds} rounds (every loss of every round):")
        print(report.table(summ, [
            ("case", "case", "{}"), ("rounds", "n", "{}"), ("aborted", "aborted", "{}"), ("drops", "drops", "{}"),
            ("fec_n", "by FEC", "{}"), ("fec_fills_p50", "p50 fills", "{:.2f}"), ("fec_fills_p90", "p90", "{:.2f}"),
            ("fec_fills_p99", "p99", "{:.2f}"), ("fec_fills_max", "max", "{:.2f}"),
            ("fec_fills_p50_min", "round p50 min", "{:.2f}"), ("fec_fills_p50_max", "max", "{:.2f}"),
            ("fec_rtts_p50", "p50 RTT", "{:.3f}"), ("retx_n", "by retx", "{}"),
            ("retx_rtts_p50", "retx p50 RTT", "{:.2f}"), ("retx_rtts_p90", "p90", "{:.2f}"),
            ("retx_rtts_p99", "p99", "{:.2f}"), ("fec_frames", "FEC frames", "{}"), ("never", "never", "{}")]))
        extra.update(rounds=rounds, pooled=summ)
    doc = report.write_doc(os.path.join(out, "lowar-latency.json"), cfg, rows, extra=extra)
    png = os.path.join(out, "lowar-latency.png")
    plt = report._plt()
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    pooled = {}
    for r in rows:
        for kind, xs in (r.get("trace_cdf_ms_by") or {}).items():
            pooled.setdefault((r["case"], kind), []).extend(xs)
    for case, *_ in LAT_MODES:
        for kind, style in (("fec", "-"), ("retx", "--")):
            xs = sorted(x / fill for x in pooled.get((case, kind), []))
            if xs:
                ax.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post", linestyle=style,
                        label=f"{case}: by {kind} ({len(xs)})")
    ax.axvline(rtt_ms / fill, color="grey", linewidth=0.8)
    ax.text(rtt_ms / fill, 0.02, " 1 RTT", fontsize=8, color="grey")
    ax.set_xscale("log")
    ax.set_xlabel(f"recovery latency in block fills (K = 32 packets at 0.18 Gb/s = {fill:.2f} ms)")
    ax.set_ylabel("fraction of the losses repaired that way")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("loss -> repair, random 0.5 % a->b, 0.18 Gb/s x 20 ms, MTU 1024", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"results: {doc}\nplot:    {png}")
    return 0
