"""Wang (NJUPT), "Research on transmission reliability of RoCEv2 protocol in WAN"
(docs/references.md): the Go-Back-N goodput model of section IV.A, against the rnic's
Go-Back-N on the testbed. (The paper's Go-Back-ONE reproduction joins this module.)"""
import copy
import os

from .. import config, model, report, runner
from ..config import parse_time
from ..references import WANG, WANG_BY


def gbn_model_row(lossless, loss, mtu, rtt_s):
    """The model's table row for the demo: the formula (Wang, NJUPT, IV.A) fed with
    what the lossless run achieved (B = its goodput) and the loss-event rate of `loss`
    (a netem loss fragment). Returns (row, B in b/s, fraction, mean loss, event rate)."""
    mean_loss, events = model.ge_params(loss)
    b = lossless["goodput_gbps"] * 1e9
    frac = model.gbn_goodput_fraction(events, mtu, b, rtt_s)
    row = {"case": f"gbn model ({WANG})", "recovery": "gbn", "loss": loss,
           "rtt_ms": lossless["rtt_ms"], "rate_gbps": lossless["rate_gbps"],
           "goodput_gbps": b * frac / 1e9, "gbn_model_fraction": frac,
           "loss_rate_model": mean_loss, "loss_event_rate": events}
    return row, b, frac, mean_loss, events


def reproduce_gbn_model(prefix: str = "tb", quick: bool = False, out: str | None = None,
                        rounds: int = 1) -> int:
    """Wang (NJUPT) IV.A: Go-Back-N goodput over a loss x RTT grid vs the formula. --rounds N
    runs the whole grid N times (seeds 1..N) and takes each point's median goodput, the
    lossless base's too: one 4 s run moves by about 10 % on this shared host."""
    cfg = config.defaults()
    cfg["name"] = "gbn-model"
    cfg["link"]["rate"] = "1gbit"
    cfg["workload"].update(kind="bulk", size="1M", duration=2 if quick else 4)
    cfg["rnic"]["loss_window"] = False  # the formula models plain Go-Back-N
    # the tolerance in docs/reproductions.md was measured with the IBTA timer (-u 14, 67 ms);
    # the formula has no timer term; each lossy point also runs with --rto adaptive (the
    # rnic's default), reported in columns of its own
    cfg["rnic"]["rto"] = "fixed"
    losses = ["0.01%", "0.05%"] if quick else ["0.01%", "0.05%", "0.2%"]
    rtts = ["2ms", "20ms"] if quick else ["2ms", "10ms", "40ms"]
    out = out or os.path.join(report.RESULTS, "reproduce-gbn-model")
    print(f"reproduce gbn-model: {WANG_BY} section IV.A, Go-Back-N goodput formula\n"
          "  paper: 100 Gb/s links in simulation; here 1 Gb/s, MTU 4096 on veth + lossy-emu.\n"
          "  scaling: none applied to loss; the formula is evaluated at this testbed's B, RTT and MTU,\n"
          "  with B = the lossless goodput measured at each RTT (the pacer's achievable rate);\n"
          "  random loss on the data direction only (the formula's ERROR_RATE), ACKs/NAKs lossless;\n"
          f"  {rounds} round(s), each point the median of its rounds.")
    pts = [(r, "") for r in rtts] + [(r, ls) for r in rtts for ls in losses]
    runs = {}  # (rtt, loss, rto) -> [row per round]
    steps = [(k, rtt, loss, rto) for k in range(rounds) for rtt, loss in pts
             for rto in (["fixed"] + (["adaptive"] if loss else []))]
    for i, (k, rtt, loss, rto) in enumerate(steps):
        report.progress(i, len(steps), f"round {k + 1} rtt {rtt} loss {loss or 'none'} {rto}")
        c = copy.deepcopy(cfg)
        c["link"]["rtt"], c["link"]["loss"] = rtt, (f"random {loss}" if loss else "")
        c["link"]["loss_direction"] = "a2b"  # the formula's ERROR_RATE hits data packets
        c["rnic"]["rto"] = rto
        c["run"]["seed"] = k + 1
        runs.setdefault((rtt, loss, rto), []).append(
            runner.run_once(c, out, tag=f"g{i}", prefix=prefix))
    report.progress(len(steps), len(steps), "done")

    def med(rtt, loss, rto, key="goodput_gbps"):
        return model.percentile([r[key] for r in runs[(rtt, loss, rto)]], 50)

    rows = []
    for rtt, loss in pts:
        if not loss:
            continue
        base = med(rtt, "", "fixed")
        row = dict(runs[(rtt, loss, "fixed")][0])
        _, ev = model.ge_params(f"random {loss}")
        frac = model.gbn_goodput_fraction(ev, 4096, base * 1e9, parse_time(rtt))
        g, ga = med(rtt, loss, "fixed"), med(rtt, loss, "adaptive")
        row.update(case=f"rtt {rtt} loss {loss}", loss=loss, lossless_gbps=base, goodput_gbps=g,
                   model_gbps=base * frac, model_fraction=frac, measured_fraction=g / base,
                   ratio=g / (base * frac) if frac else float("nan"),
                   ratio_rounds=[r["goodput_gbps"] / (base * frac) for r in runs[(rtt, loss, "fixed")]],
                   tx_retransmits=med(rtt, loss, "fixed", "tx_retransmits"),
                   timeouts=med(rtt, loss, "fixed", "timeouts"),
                   adaptive_gbps=ga, adaptive_fraction=ga / base,
                   adaptive_ratio=ga / (base * frac) if frac else float("nan"),
                   adaptive_timeouts=med(rtt, loss, "adaptive", "timeouts"))
        rows.append(row)
    cols = [("case", "case", "{}"), ("lossless_gbps", "lossless Gb/s", "{:.3f}"),
            ("goodput_gbps", "GBN Gb/s", "{:.3f}"), ("measured_fraction", "measured frac", "{:.3f}"),
            ("model_fraction", "paper model frac", "{:.3f}"), ("ratio", "ours/model", "{:.2f}"),
            ("tx_retransmits", "retx pkts", "{}"), ("timeouts", "timeouts", "{}"),
            ("adaptive_fraction", "adaptive frac", "{:.3f}"), ("adaptive_ratio", "adaptive/model", "{:.2f}"),
            ("adaptive_timeouts", "adaptive timeouts", "{}")]
    print(report.table(rows, cols))
    doc = report.write_doc(os.path.join(out, "gbn-model.json"), cfg, rows)
    for r in rows:
        r["rtt_ms_x"] = r["rtt_ms"]
        r["goodput_model_gbps"] = r["model_gbps"]
    report.plot_sweep(rows, os.path.join(out, "gbn-model.png"), "rtt_ms_x", "goodput_gbps",
                      series="loss", model_key="goodput_model_gbps",
                      title=f"Go-Back-N goodput vs RTT: measured (solid) and {WANG_BY} "
                            "model (dashed)",
                      xlabel="base RTT (ms)")
    print(f"results: {doc}\nplot:    {os.path.join(out, 'gbn-model.png')}")
    return 0
