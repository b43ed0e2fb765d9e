"""N:1 incast through the lossy-emu's RED/ECN bottleneck, DCQCN-p (Wang et al., J. HFUT 2025)
§3.2 Table 4: minimum rate, average throughput, fairness and incast completion time per
congestion control (docs/cc.md).

The paper: 80 hosts -> 1 over 100/25 Gb/s links, RED Kmin 100 KiB, Kmax 400 KiB, Pmax 0.1.
Here: the testbed has one rnic pair, so the N senders are N QPs of rnic A (`-q N`), each
with its own congestion-control state, pacer and notifications (CNPs / BECN ACKs per QP),
but one port, one lcore and one engine that serves them round-robin: they are N flows of
one NIC, not N NICs. Each QP writes the same bytes; its rate is bytes / the time of its
last completion (rnic A's --json qp_results). Bottleneck 200 Mb/s, 10 ms RTT, 2 MB queue,
the paper's RED settings.

Figures (per case): the minimum per-flow rate, the mean per-flow rate, the aggregate,
the paper's "fairness variance" (no formula given: we report the coefficient of variation,
population standard deviation / mean, in %), Jain's index (sum x)^2 / (n sum x^2), and
the incast completion time (the last flow's). Timing: one run each, not make test.
"""
import copy
import math
import os

from .. import config, report, runner
from ..references import DCQCNP

FLOWS = 8
MSG = "64K"
ITERS = 32  # 2 MiB per flow, 16 MiB in all: 0.67 s at 200 Mb/s


def flow_stats(qp_results):
    """Per-flow rates (Gb/s) and the Table 4 figures from rnic A's qp_results."""
    rates = [q["bytes"] * 8 / q["last_completion_s"] / 1e9 for q in qp_results if q["last_completion_s"] > 0]
    if not rates:
        return {}
    n = len(rates)
    mean = sum(rates) / n
    var = sum((x - mean) ** 2 for x in rates) / n
    total = sum(q["bytes"] for q in qp_results)
    last = max(q["last_completion_s"] for q in qp_results)
    return {
        "flows": n, "rates_gbps": rates,
        "min_rate_gbps": min(rates), "mean_rate_gbps": mean,
        "aggregate_gbps": total * 8 / last / 1e9,
        "cv_pct": 100 * math.sqrt(var) / mean if mean else None,
        "jain": sum(rates) ** 2 / (n * sum(x * x for x in rates)),
        "incast_ms": last * 1e3,
    }


def reproduce_incast(prefix: str = "tb", quick: bool = False, out: str | None = None) -> int:
    cfg = config.defaults()
    cfg["name"] = "incast"
    cfg["description"] = f"{FLOWS}:1 incast (QPs of one rnic), 200 Mb/s RED/ECN bottleneck, 10 ms RTT"
    cfg["link"].update(rate="200mbit", rtt="10ms",
                       a2b_extra="limit-bytes 2MB red kmin 100KB kmax 400KB pmax 10%")
    cfg["rnic"].update(pace=0, qp_timeout=15)
    cfg["workload"].update(kind="bulk", size=MSG, iters=ITERS, qps=FLOWS, tx_depth=16)
    runs = [("none", ""), ("dcqcn", "")]
    if not quick:
        runs += [("dcqcn", "profile=wan"), ("dcqcn-p", ""), ("dctcp", ""), ("timely", "profile=wan")]
    out = out or os.path.join(report.RESULTS, "reproduce-incast")
    print(f"reproduce incast: DCQCN-p ({DCQCNP}) Table 4 scaled from 80 hosts at 100/25 Gb/s to "
          f"{FLOWS} QPs of one rnic through 200 Mb/s, {ITERS} x {MSG} per flow; one run each")
    rows = []
    for i, (cc, prm) in enumerate(runs):
        report.progress(i, len(runs), f"{cc} {prm}")
        c = copy.deepcopy(cfg)
        c["rnic"].update(cc=cc, cc_param=prm)
        row = runner.run_once(c, out, tag=f"i{i}", prefix=prefix)
        row["case"] = f"{cc}{' ' + prm if prm else ''}"
        row.update(flow_stats(row.get("qp_results", [])))
        rows.append(row)
    report.progress(len(runs), len(runs), "done")
    cols = [("case", "case", "{}"), ("flows", "flows", "{}"), ("min_rate_gbps", "min rate Gb/s", "{:.4f}"),
            ("mean_rate_gbps", "mean rate Gb/s", "{:.4f}"), ("aggregate_gbps", "aggregate Gb/s", "{:.3f}"),
            ("cv_pct", "CV %", "{:.1f}"), ("jain", "Jain", "{:.3f}"), ("incast_ms", "incast ms", "{:.0f}"),
            ("emu_a2b_drop_queue", "queue drops", "{}"), ("emu_a2b_ecn_marked", "CE", "{}"),
            ("rnic_b_tx_cnps", "CNPs", "{}"), ("rnic_b_tx_becn_acks", "BECN ACKs", "{}"),
            ("tx_retransmits", "retx", "{}"), ("completion_errors", "errors", "{}")]
    print(report.table(rows, cols))
    print("paper (80:1, 100/25 Gb/s): min rate DCQCN 10.76, TIMELY 8.95, DCTCP 10.78, DCQCN-p 13.28 Gb/s; "
          "fairness variance 15 %, 216 %, 191 %, 65 %; incast completion 5000, 200, 1400, 479 us")
    doc = report.write_doc(os.path.join(out, "incast.json"), cfg, rows)
    print(f"results: {doc}")
    bad = [r["case"] for r in rows if r.get("completion_errors") or r.get("flows") != FLOWS]
    if bad:
        print(f"incomplete: {', '.join(bad)}")
    return 1 if bad else 0
