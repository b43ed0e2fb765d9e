"""Denis, "Variable Reliability Protocol" (LIP RR-2000-11; docs/references.md, docs/vrp.md):
throughput of loss-tolerant delivery against reliable Go-Back-N on a lossy long path.

The paper reports VRP at 2-10x TCP's throughput over a lossy WAN with at most the loss
the application allowed. Here: rnic A -> lossy-emu -> rnic B, 200 Mb/s bottleneck,
20 ms RTT, 5 % random loss on the data direction, both rnics paced to 0.18 Gb/s, MTU
1024 (the VRP bar's setting), bulk 1 MiB WRITEs; gbn and gbone (reliable, Go-Back-ONE's
selective repair) against vrp with 0, 1, 5 and 10 % tolerated over the default 64-packet
window, set on the receiver (--vrp-loss), and vrp with 10 % carried by each WRITE
(--vrp-wr loss=10 on A, the receiver at 0 %). Goodput counts the bytes delivered intact
(zero-filled ones excluded); the residual loss is what rnic B zero-filled.

With burst=True the same at the same mean loss in Gilbert-Elliott bursts (netem
'gemodel 1% 19% 100% 0%': bursts of 1/0.19 = 5.3 packets on average, 5 % lost), to show
the consecutive-loss bound at work: vrp 10 % without a bound, and with at most 2048
consecutive bytes (2 packets) lost, as the receiver's --vrp-max-burst and per WR."""
import copy
import os

from .. import config, report, runner
from ..references import VRP_BY

# (case name, recovery, receiver's --vrp-loss, receiver's --vrp-max-burst, A's --vrp-wr)
CASES = [("gbn", "gbn", None, "", ""), ("gbone", "gbone", None, "", ""),
         ("vrp 0 %", "vrp", 0.0, "", ""), ("vrp 1 %", "vrp", 1.0, "", ""),
         ("vrp 5 %", "vrp", 5.0, "", ""), ("vrp 10 %", "vrp", 10.0, "", ""),
         ("vrp-wr 10 %", "vrp", 0.0, "", "loss=10")]
BURST_CASES = [("gbn", "gbn", None, "", ""), ("gbone", "gbone", None, "", ""),
               ("vrp 10 %", "vrp", 10.0, "", ""),
               ("vrp 10 % burst 2k", "vrp", 10.0, "2048", ""),
               ("vrp-wr 10 % burst 2k", "vrp", 0.0, "", "loss=10,burst=2048")]
GE_LOSS = "gemodel 1% 19% 100% 0%"   # 5 % mean loss in bursts of 5.3 packets on average
ALLOWED = {"vrp 0 %": 0.0, "vrp 1 %": 1.0, "vrp 5 %": 5.0, "vrp 10 %": 10.0, "vrp-wr 10 %": 10.0,
           "vrp 10 % burst 2k": 10.0, "vrp-wr 10 % burst 2k": 10.0}


def vrp_config(quick, burst=False):
    cfg = config.defaults()
    cfg["name"] = "vrp-burst" if burst else "vrp"
    cfg["link"].update(rate="200mbit", rtt="20ms", loss=GE_LOSS if burst else "random 5%",
                       loss_direction="a2b")
    cfg["rnic"].update(mtu=1024, pace=0.9, rto="adaptive")
    cfg["workload"].update(kind="bulk", size="1M", duration=2 if quick else 4)
    return cfg


def reproduce_vrp_burst(prefix: str = "tb", quick: bool = False, out: str | None = None) -> int:
    """The same with Gilbert-Elliott bursts: the consecutive-loss bound at work."""
    return reproduce_vrp(prefix, quick, out, burst=True)


def reproduce_vrp(prefix: str = "tb", quick: bool = False, out: str | None = None,
                  burst: bool = False, rounds: int | None = None) -> int:
    """VRP (Denis) throughput vs tolerated loss, against gbn and gbone, on a lossy long path."""
    cfg = vrp_config(quick, burst)
    rounds = rounds or (1 if quick else 3)
    cases = BURST_CASES if burst else CASES
    out = out or os.path.join(report.RESULTS, "reproduce-vrp-burst" if burst else "reproduce-vrp")
    loss = f"GE bursts ({GE_LOSS}: 5 % mean, 5.3-packet bursts)" if burst else "5 % random loss"
    print(f"reproduce vrp{'-burst' if burst else ''}: {VRP_BY}, loss-tolerant delivery vs "
          "reliable Go-Back-N / Go-Back-ONE\n"
          "  paper: 2-10x TCP's throughput over a lossy WAN, residual loss at most what was allowed.\n"
          f"  here: 200 Mb/s bottleneck, 20 ms RTT, {loss} A->B (ACKs/NACKs lossless),\n"
          f"  both rnics paced to 0.18 Gb/s, MTU 1024, 1 MiB WRITEs, {rounds} round(s) per case;\n"
          "  goodput = bytes delivered intact (zero-filled bytes excluded); vrp-wr: the\n"
          "  tolerance rides in each WRITE (--vrp-wr on A), the receiver's own is 0 %.")
    rows = []
    pts = [(cs, r) for r in range(rounds) for cs in cases]
    for i, ((name, mode, tol, mb, wr), rnd) in enumerate(pts):
        report.progress(i, len(pts), f"{name} round {rnd + 1}")
        c = copy.deepcopy(cfg)
        c["rnic"]["recovery"] = mode
        if tol is not None:
            c["rnic"]["vrp_loss"] = tol
        c["rnic"]["vrp_max_burst"] = mb
        c["rnic"]["vrp_wr"] = wr
        c["run"]["seed"] = cfg["run"]["seed"] + rnd
        row = runner.run_once(c, out, tag=f"v{i}", prefix=prefix)
        row.update(case=name, round=rnd + 1, allowed_pct=ALLOWED.get(name))
        rows.append(row)
    report.progress(len(pts), len(pts), "done")
    gbn = {r["round"]: r["goodput_intact_gbps"] for r in rows if r["case"] == "gbn"}
    for r in rows:
        base = gbn.get(r["round"])
        r["x_gbn"] = r["goodput_intact_gbps"] / base if base else float("nan")
        r["residual_pct"] = 100 * r["residual_loss"]
        r["within_allowed"] = r["allowed_pct"] is None or r["residual_pct"] <= r["allowed_pct"]
    cols = [("case", "case", "{}"), ("round", "round", "{}"),
            ("goodput_gbps", "acked Gb/s", "{:.3f}"),
            ("goodput_intact_gbps", "intact Gb/s", "{:.3f}"), ("x_gbn", "x gbn", "{:.1f}"),
            ("residual_pct", "residual loss %", "{:.2f}"),
            ("vrp_nacked_pkts", "NACKed pkts", "{}"),
            ("vrp_nack_consecutive", "NACKed cons.", "{}"), ("tx_retransmits", "retx pkts", "{}"),
            ("timeouts", "timeouts", "{}"), ("vrp_peer_lost_pkts", "A's summary pkts", "{}"),
            ("vrp_tolerated_pkts", "B's lost pkts", "{}"),
            ("loss_rate_measured", "emu loss", "{:.4f}")]
    print(report.table(rows, cols))
    claim = [r for r in rows if r["case"] == "vrp 10 %"]
    if burst:
        doc = report.write_doc(os.path.join(out, "vrp-burst.json"), cfg, rows)
        print(f"results: {doc}")
        return 0
    passed = sum(1 for r in claim if r["goodput_intact_gbps"] >= 0.12 and r["x_gbn"] >= 5
                 and r["within_allowed"])
    print(f"the VRP bar (vrp 10 %: >= 0.12 Gb/s intact, >= 5x gbn, residual <= 10 %): "
          f"{passed}/{len(claim)} rounds")
    doc = report.write_doc(os.path.join(out, "vrp.json"), cfg, rows)
    rows = [r for r in rows if r["case"] != "gbone" and not r["case"].startswith("vrp-wr")]
    for r in rows:
        r["tol_x"] = -1 if r["allowed_pct"] is None else r["allowed_pct"]
        r["series"] = f"round {r['round']}"
    report.plot_sweep(rows, os.path.join(out, "vrp.png"), "tol_x", "goodput_intact_gbps",
                      series="series",
                      title=f"VRP ({VRP_BY}): intact goodput vs tolerated loss (-1 = gbn), "
                            "5 % loss, 20 ms",
                      xlabel="tolerated loss (%)")
    print(f"results: {doc}\nplot:    {os.path.join(out, 'vrp.png')}")
    return 0 if passed == len(claim) else 1
