"""Congestion control on a long path (docs/cc.md): the four algorithms through
the lossy-emu's RED/ECN bottleneck (200 Mb/s, 2 MB queue, Kmin 100 KB, Kmax 400 KB,
Pmax 0.1, the RED settings of DCQCN-p (Wang et al., J. HFUT 2025) §3.1) at 20 and 40 ms
of RTT, DCQCN with its datacenter defaults and with profile=wan, 64 KiB WRITEs, no
--rate_limit. Reports goodput, queue drops, CE marks and notifications, and plots each
run's rate / in-flight trace (rnic A's cc_trace), which shows how slowly a 55 us timer
and a 4 us decrease interval meet 10-40 ms of feedback delay. Timing: few rounds, not
make test."""
import copy
import os

from .. import config, report, runner
from ..references import DCQCNP


def reproduce_wan_cc(prefix: str = "tb", quick: bool = False, out: str | None = None) -> int:
    cfg = config.defaults()
    cfg["name"] = "wan-cc"
    cfg["description"] = "CC on a long path: 200 Mb/s RED/ECN bottleneck, 2 MB queue"
    cfg["link"].update(rate="200mbit", a2b_extra="limit-bytes 2MB red kmin 100KB kmax 400KB pmax 10%")
    cfg["rnic"].update(pace=0, qp_timeout=16)
    cfg["workload"].update(kind="bulk", size="64K", duration=2 if quick else 4, tx_depth=128)
    runs = [("20ms", "dcqcn", ""), ("20ms", "dcqcn", "profile=wan")]
    if not quick:
        runs += [("40ms", "dcqcn", ""), ("40ms", "dcqcn", "profile=wan"), ("40ms", "dcqcn-p", ""),
                 ("40ms", "dctcp", ""), ("40ms", "timely", "profile=wan"), ("40ms", "none", "")]
    out = out or os.path.join(report.RESULTS, "reproduce-wan-cc")
    print(f"reproduce wan-cc: RED/ECN as DCQCN-p ({DCQCNP}) §3.1, 200 Mb/s instead of its 100 Gb/s "
          "links, 20-40 ms of RTT (its paths are datacenter-short); one run each")
    rows = []
    for i, (rtt, cc, prm) in enumerate(runs):
        report.progress(i, len(runs), f"{cc} {prm} rtt {rtt}")
        c = copy.deepcopy(cfg)
        c["link"]["rtt"] = rtt
        c["rnic"].update(cc=cc, cc_param=prm)
        row = runner.run_once(c, out, tag=f"w{i}", prefix=prefix)
        row["case"] = f"{cc}{' ' + prm if prm else ''} {rtt}"
        rows.append(row)
    report.progress(len(runs), len(runs), "done")
    cols = [("case", "case", "{}"), ("goodput_gbps", "goodput Gb/s", "{:.3f}"),
            ("emu_a2b_drop_queue", "queue drops", "{}"), ("emu_a2b_ecn_marked", "CE (emu)", "{}"),
            ("rnic_b_rx_ecn_ce", "CE (NP)", "{}"), ("rnic_b_tx_cnps", "CNPs", "{}"),
            ("rnic_b_tx_becn_acks", "BECN ACKs", "{}"), ("cc_decreases", "decreases", "{}"),
            ("loss_window_cuts", "window cuts", "{}"), ("completion_errors", "errors", "{}")]
    print(report.table(rows, cols))
    doc = report.write_doc(os.path.join(out, "wan-cc.json"), cfg, rows)
    png = report.plot_cc_trace(rows, os.path.join(out, "wan-cc.png"), cfg["description"])
    print(f"results: {doc}\nplot:    {png}")
    return 1 if any(r.get("completion_errors") for r in rows) else 0
