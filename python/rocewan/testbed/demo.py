"""The main job (`testbed demo`, `make demo`): Go-Back-N on a lossless and a lossy
emulated WAN, against the Go-Back-N goodput model (Wang, NJUPT; docs/references.md)."""
import copy
import os
import time

from . import config, report, runner
from .config import parse_time
from .references import WANG_BY
from .repro.goback import gbn_model_row


def demo_config(quick=False):
    cfg = config.defaults()
    cfg["name"] = "demo"
    cfg["description"] = "Go-Back-N over an emulated 1 Gb/s, 20 ms RTT WAN, lossless vs gemodel 0.02% 20%"
    cfg["link"].update(rate="1gbit", rtt="20ms")
    cfg["workload"].update(duration=2 if quick else 4, size="1M", flows=40 if quick else 100, load=40)
    return cfg


def run_demo(loss: str = "gemodel 0.02% 20%", quick: bool = False, out: str | None = None,
             prefix: str = "tb") -> int:
    """Every recovery mode on the clean and the lossy link (`loss`, netem grammar), then
    the model row; prints the table, writes demo.json and demo.png under `out`."""
    out = out or os.path.join(report.RESULTS, "demo")
    base = demo_config(quick)
    print(f"testbed demo: rnic A -> lossy-emu (1 Gb/s each way, 20 ms RTT) -> rnic B, "
          f"veth pairs in namespaces; results in {out}")
    rows = []
    cases = [("gbn lossless", ""), ("gbn lossy", loss)]
    for mode in config.RECOVERY_MODES:
        for name, spec in cases:
            name = name.replace("gbn", mode)
            c = copy.deepcopy(base)
            c["rnic"]["recovery"] = mode
            c["link"]["loss"] = spec
            row = run_case(c, out, name, prefix)
            rows.append(row)
    # the Go-Back-N model (Wang, NJUPT), fed with what the lossless run achieved
    lossless = rows[0]
    model_row, b, frac, mean_loss, events = gbn_model_row(lossless, loss, base["rnic"]["mtu"],
                                                          parse_time(base["link"]["rtt"]))
    rows.append(model_row)
    print()
    print(report.table(rows))
    lossy = rows[1]
    print(f"\nGo-Back-N model ({WANG_BY} IV.A) with B = lossless goodput {b / 1e9:.3f} Gb/s, "
          f"RTT {lossless['rtt_ms']:.0f} ms, MTU {base['rnic']['mtu']}, loss-event rate "
          f"{events:.2e}/packet (mean loss {mean_loss:.3%}): {frac:.3f} of B; "
          f"measured lossy/lossless = {lossy['goodput_gbps'] / lossless['goodput_gbps']:.3f}")
    doc = report.write_doc(os.path.join(out, "demo.json"), base, rows,
                           {"model_fraction": frac, "measured_fraction":
                            lossy["goodput_gbps"] / lossless["goodput_gbps"]})
    png = os.path.join(out, "demo.png")
    w = base["workload"]
    report.plot_demo(rows, png, base["description"],
                     f"FCT CDF: {w['flows']} flows of {w['size']}B, Poisson at {w['load']} % load")
    print(f"\nresults: {doc}\nplot:    {png}")
    return 0


def run_case(cfg, out, name, prefix="tb"):
    """Bulk run for goodput, then the flow workload for FCT: one table row."""
    tag = name.replace(" ", "_").replace("(", "").replace(")", "")
    t0 = time.monotonic()
    c = copy.deepcopy(cfg)
    c["workload"]["kind"] = "bulk"
    bulk = runner.run_once(c, out, tag=f"{tag}-bulk", prefix=prefix)
    c["workload"]["kind"] = "flows"
    flows = runner.run_once(c, out, tag=f"{tag}-flows", prefix=prefix)
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
