"""Seed 003 (Swing, PFC-Relay) reproductions on the chain topology.

    relay:  rnic A - relay A (L->R) - E: long link, one-way delay D - relay B (R->L) - S - rnic B
    plain:  rnic A - E: long link - S - rnic B

S is the congested far-end switch: lossy-emu draining A->B at alpha x the link
rate, with `pfc xoff X xon Y prio 3` (802.1Qbb toward its input port) and a
byte-limited queue. E delays data and, with `ctrl-delay`, PFC frames by D each
way. rnic A paces at 0.98 x the link and obeys PFC (priority 3, DSCP 26).
"""
import json
import os
import time

from . import model, report
from .config import fmt_time
from .topo import Chain, TopoError

LINK_BPS = 1e9


def swing_run(mode, buf_bdp, alpha, d_s, out, tag, prefix="tb", duration=4, log=print, flows=None):
    """One run; returns a row with goodput, utilisation, drops and buffer high-water mark.
    flows: None for bulk write_bw, else (cdf_path, count, load_pct) for the flow workload."""
    rtt = 2 * d_s
    bdp = LINK_BPS / 8 * rtt
    relay = mode == "relay"
    boxes = [("RA", "relay"), ("E", "emu"), ("RB", "relay"), ("S", "emu")] if relay else \
        [("E", "emu"), ("S", "emu")]
    # the far-end pause pattern: S pauses for (X - Y) / (alpha C) = 1.2 RTT each time (>= 0.9 RTT)
    gap = int(1.2 * rtt * alpha * LINK_BPS / 8)
    if relay:
        # S is an in-DC switch: small buffer, headroom for its short link to relay B
        # (headroom: a software relay reacts to PFC within ~1 ms of scheduling, 250 KB at 2 Gb/s)
        s_xoff, s_limit = gap + 64 * 1024, gap + 64 * 1024 + 2048 * 1024
        rb_buf = int(buf_bdp * bdp)
    else:
        # plain PFC: S's buffer is buf_bdp BDPs, 1.1 BDP of it headroom above XOFF
        s_limit = int(buf_bdp * bdp)
        s_xoff = max(s_limit - int(1.1 * bdp), 32 * 1024)  # headroom: 1 BDP + 10 % (as the relay)
        rb_buf = None
    # relay: S's thresholds make the pause pattern; native PFC: XON just below XOFF, as
    # seed 003 §4.1 sets them (XON = XOFF "to ensure maximum throughput")
    s_xon = max(s_xoff - (gap if relay else 64 * 1024), 16 * 1024)
    os.makedirs(out, exist_ok=True)
    files = {k: os.path.join(out, f"{tag}-{k}.json") for k in ("rnicA", "rnicB", "E", "S", "RA", "RB")}
    for p in files.values():
        if os.path.exists(p):
            os.unlink(p)
    d = fmt_time(d_s)
    rate = f"{LINK_BPS / 1e9:g}gbit"
    # the long link is a pure delay line: its rate is the relay's (or rnic A's) paced egress,
    # so no second shaper with another idea of frame overhead sits in series
    spec_e = f"delay {d} limit 5000 ctrl-delay"
    spec_s = (f"rate {alpha * LINK_BPS / 1e6:g}mbit limit 5000 limit-bytes {s_limit}b "
              f"pfc xoff {s_xoff}b xon {s_xon}b prio 3")
    rtt_t = fmt_time(rtt)
    with Chain(boxes, prefix) as ch:
        if relay:
            # relay A toward rnic A: a software RNIC reacts within one TX burst (32 x 4 KiB)
            # after its last RX check, so give the short link's headroom room for that
            ch.start_box("RA", f"--local 0 --remote 1 --link-rate {rate} --rtt {rtt_t} --lossless 3 "
                               f"--local-rate 2gbit --pace-burst 200us --xoff 128kb --xon 64kb --headroom 4mb "
                               f"--mbuf-size 8192",
                         files["RA"], lcores="0")
            # relay B: in-DC side at 2 Gb/s, so the far switch's drain and PFC set its pace
            ch.start_box("RB", f"--local 1 --remote 0 --link-rate {rate} --rtt {rtt_t} --lossless 3 "
                               f"--local-rate 2gbit --pace-burst 200us --buffer {rb_buf}b "
                               f"--mbuf-size 8192", files["RB"], lcores="1")
        ch.start_box("E", f"--both '{spec_e}' --link-rate {rate} --mbuf-size 8192 --seed 1", files["E"])
        ch.start_box("S", f"--a2b '{spec_s}' --b2a '' --link-rate {rate} --mbuf-size 8192 --seed 1",
                     files["S"])
        ch.wait_path()
        opts = (f"-m 4096 --rate_limit {0.98 * LINK_BPS / 1e9:g} "
                f"--link-rate {LINK_BPS / 1e9:g} --qp-timeout 18")
        if flows:
            opts += f" -s 1048576 --flow-cdf {flows[0]} --flows {flows[1]} --load {flows[2]} -t 1024"
        else:
            opts += f" -s 1048576 -D {duration} -t 16"
        rc_a, out_a, rc_b, out_b = ch.rnic_pair("write_bw", opts, files["rnicA"], files["rnicB"],
                                                timeout=duration * 4 + 60)
        outs = {n: ch.stop(p) for n, p in zip([b for b, _ in boxes], ch.procs[:len(boxes)])}
    if rc_a != 0 or rc_b != 0:
        raise TopoError(f"{tag}: rnic A exit {rc_a}, rnic B exit {rc_b}\n{out_a[-2500:]}\n{out_b[-1500:]}")
    docs = {}
    for k, p in files.items():
        if k in ("RA", "RB") and not relay:
            continue
        if not os.path.exists(p):
            raise TopoError(f"{tag}: {k} wrote no JSON\n{outs.get(k, '')[-2000:]}")
        docs[k] = json.load(open(p))["results"]
    a = docs["rnicA"]
    goodput = a["bw_avg_mbps"] * 1048576 * 8 / 1e9 if not flows else a["flows"]["goodput_gbps"]
    s = docs["S"]["a2b"]
    row = {"case": f"{mode} buffer {buf_bdp:g} BDP", "mode": mode, "buffer_bdp": buf_bdp,
           "alpha": alpha, "one_way_delay_ms": d_s * 1e3, "rtt_ms": rtt * 1e3, "bdp_bytes": int(bdp),
           "goodput_gbps": goodput, "utilisation": goodput * 1e9 / LINK_BPS,
           "utilisation_of_drain": goodput * 1e9 / (alpha * LINK_BPS),
           "s_pfc_xoff_sent": s.get("pfc_xoff", 0), "s_pfc_sent": s.get("pfc_sent", 0),
           "s_drop_queue": s["drop_queue"], "s_queue_max_bytes": s["queue_max_bytes"],
           "s_xoff_bytes": s_xoff, "s_xon_bytes": s_xon, "s_limit_bytes": s_limit,
           "rnic_pfc_pauses": a["port_counters"].get("pfc_pauses", 0),
           "rnic_retransmits": a["qp_counters"]["tx_retransmits"],
           "rnic_timeouts": a["qp_counters"]["timeouts"]}
    if flows:
        f = a["flows"]
        row.update(flows=f["completed"], fct_avg_ms=f["fct_avg_us"] / 1e3, fct_p50_ms=f["fct_p50_us"] / 1e3,
                   fct_p99_ms=f["fct_p99_us"] / 1e3, records=f["records"])
    # seed 003: eq. (6) for the relay, eq. (4) for native PFC with this buffer
    row["model_utilisation"] = (model.swing_phi_relay(alpha) if relay else
                                model.swing_phi_pfc(d_s, alpha, buf_bdp * bdp, LINK_BPS))
    if relay:
        rb = docs["RB"]["r2l"]
        ra = docs["RA"]
        rrx = docs["RB"]["remote"]
        row.update(relay_b_in=rrx["rx_pkts"] - rrx["rx_pfc"] - rrx["rx_pfc_bad"] - rrx["rx_pause_ignored"],
                   relay_b_enq=rb["total"]["enq_pkts"], relay_b_out=rb["total"]["tx_pkts"],
                   relay_b_queued_end=rb["total"]["queued_bytes"])
        row.update(relay_buffer_bytes=rb["limit_bytes"], relay_drops=rb["total"]["drops"],
                   relay_hwm_bytes=rb["total"]["hwm_bytes"],
                   relay_hwm_bdp=rb["total"]["hwm_bytes"] / bdp,
                   relay_b_pfc_relayed=rb["pfc_relayed"],
                   relay_a_xoff_to_rnic=ra["l2r"]["total"]["xoff_sent"],
                   relay_a_drops=ra["l2r"]["total"]["drops"])
        row["drops"] = row["relay_drops"] + row["relay_a_drops"] + row["s_drop_queue"]
    else:
        row["drops"] = row["s_drop_queue"]
    return row


def repro_swing_buffer(a):
    """Seed 003: the relay needs one BDP of buffer (plus its PFC reaction margin) for
    zero drops at full drain rate, a smaller buffer drops; native PFC needs 2 BDP."""
    out = a.out or os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))))), "results", "reproduce-swing-buffer")
    os.makedirs(out, exist_ok=True)
    # D = 20 ms (RTT 40 ms, BDP 5 MB at 1 Gb/s): this machine's PFC reaction noise
    # (milliseconds under load) stays a few % of a BDP
    alpha, d_s = 0.5, 0.020
    dur = 3 if a.quick else 5
    reps = 1 if a.quick else 2
    bdp = LINK_BPS / 8 * 2 * d_s
    print("reproduce swing-buffer: seed 003 (Swing) — PFC-Relay needs 1 BDP, native PFC 2 BDP\n"
          f"  scaling: the paper's long-haul 100 Gb/s links become 1 Gb/s x {2 * d_s * 1e3:g} ms RTT "
          f"(BDP {bdp / 1e6:.2f} MB), drain alpha = {alpha} of the link;\n"
          "  the far switch pauses relay B for 1.2 RTT each time (>= 0.9 RTT). Relay B's buffer:\n"
          "  3 BDP measures the peak it needs; 'auto' = 1 BDP + 10 % + 4 frames (reaction margin).")
    cases = [("relay", 3.0), ("relay", 1.1), ("relay", 0.9), ("plain", 1.0), ("plain", 2.0)]
    rows = []
    for rep in range(reps):
        for i, (mode, buf) in enumerate(cases):
            t0 = time.monotonic()
            row = swing_run(mode, buf, alpha, d_s, out, f"s{rep}{i}", prefix=a.prefix, duration=dur)
            row["repetition"] = rep
            if mode == "relay" and buf == 1.1:
                row["case"] = "relay buffer auto (1.1 BDP)"
            rows.append(row)
            print(f"  #{rep} {row['case']:<28} goodput {row['goodput_gbps']:.3f} Gb/s, drops {row['drops']}, "
                  f"peak queue {row.get('relay_hwm_bdp', row['s_queue_max_bytes'] / bdp):.2f} BDP "
                  f"({time.monotonic() - t0:.0f} s)")
    cols = [("case", "case", "{}"), ("repetition", "rep", "{}"), ("goodput_gbps", "goodput Gb/s", "{:.3f}"),
            ("utilisation", "link util", "{:.3f}"), ("model_utilisation", "seed 003 phi", "{:.3f}"),
            ("drops", "drops", "{}"), ("relay_hwm_bdp", "relay B peak BDP", "{:.2f}"),
            ("s_drop_queue", "switch drops", "{}"), ("rnic_pfc_pauses", "rnic A pauses", "{}")]
    print(report.table(rows, cols))
    need = max(r["relay_hwm_bdp"] for r in rows if r["mode"] == "relay" and r["buffer_bdp"] == 3.0)
    print(f"relay B's peak occupancy with a 3-BDP buffer: {need:.2f} BDP (seed 003: <= 1 BDP)")
    from .cli import write_doc
    doc = write_doc(os.path.join(out, "swing-buffer.json"),
                    {"name": "swing-buffer", "alpha": alpha, "one_way_delay_s": d_s, "link_bps": LINK_BPS,
                     "run": {"seed": 1}}, rows, {"relay_peak_need_bdp": need})
    png = os.path.join(out, "swing-buffer.png")
    plot_swing([r for r in rows if r["repetition"] == 0], png, alpha)
    print(f"results: {doc}\nplot:    {png}")
    return 0


def plot_swing(rows, path, alpha):
    """Measured long-link utilisation per case beside seed 003's phi, drops annotated."""
    plt = report._plt()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["utilisation"] for r in rows], 0.4, label="measured",
           color="#4c72b0")
    ax.bar([x + 0.2 for x in xs], [r["model_utilisation"] for r in rows], 0.4,
           label="seed 003 phi (eq. 6 relay, eq. 4 PFC)", color="#bbbbbb")
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


def _out(a, name):
    return a.out or os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))))), "results", f"reproduce-{name}")


def repro_swing_throughput(a):
    """Seed 003 §4.1 eq. (4) and §5.2 eq. (6): long-link utilisation against the
    one-way delay D and the drain fraction alpha, relay vs native PFC, the native
    PFC switch holding a fixed buffer."""
    out = _out(a, "swing-throughput")
    os.makedirs(out, exist_ok=True)
    fixed = 5e6  # bytes: 1 BDP at D = 20 ms, 2 BDP at 10 ms, 4 BDP at 5 ms (1 Gb/s)
    ds = [0.005, 0.020] if a.quick else [0.005, 0.010, 0.020]
    alphas = [0.5] if a.quick else [0.25, 0.5, 0.75]
    dur = 3 if a.quick else 4
    print("reproduce swing-throughput: seed 003 eq. (4) (native PFC, fixed buffer B_a) and eq. (6) "
          "(relay: phi = alpha)\n"
          f"  scaling: 1 Gb/s long link, D = {', '.join(f'{d * 1e3:g}' for d in ds)} ms one way, "
          f"native PFC buffer B_a = {fixed / 1e6:g} MB at the far switch (XOFF = B_a - 1 BDP, XON just "
          "below), the relay with 1 BDP + 10 %.")
    rows, pts = [], [(m, d, al) for d in ds for al in alphas for m in ("relay", "plain")]
    from .cli import progress, write_doc
    for i, (mode, d, al) in enumerate(pts):
        progress(i, len(pts), f"{mode} D {d * 1e3:g} ms alpha {al}")
        bdp = LINK_BPS / 8 * 2 * d
        buf = 1.1 if mode == "relay" else fixed / bdp
        r = swing_run(mode, buf, al, d, out, f"t{i}", prefix=a.prefix, duration=dur)
        r["case"] = f"{mode} D {d * 1e3:g} ms alpha {al}"
        r["ratio"] = r["utilisation"] / r["model_utilisation"] if r["model_utilisation"] else float("nan")
        rows.append(r)
    progress(len(pts), len(pts), "done")
    cols = [("case", "case", "{}"), ("buffer_bdp", "buffer BDP", "{:.2f}"),
            ("utilisation", "link util", "{:.3f}"), ("model_utilisation", "seed 003 phi", "{:.3f}"),
            ("ratio", "ours/phi", "{:.2f}"), ("drops", "drops", "{}")]
    print(report.table(rows, cols))
    doc = write_doc(os.path.join(out, "swing-throughput.json"),
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


def repro_swing_fct(a):
    """Seed 003: average and p99 FCT of WebSearch / FB_Hadoop inter-DC flows, relay vs
    native PFC with the same buffer (the paper: 14-66 % lower average FCT)."""
    from .config import CDF_DIR
    from .cli import write_doc
    out = _out(a, "swing-fct")
    os.makedirs(out, exist_ok=True)
    d, alpha = 0.010, 0.5
    n = 60 if a.quick else 200
    load = 30
    print("reproduce swing-fct: seed 003 — FCT of inter-DC flows, PFC-Relay vs native PFC\n"
          f"  scaling: 1 Gb/s x {2 * d * 1e3:g} ms RTT, far switch draining at alpha = {alpha}, "
          f"Poisson arrivals at {load} % of the link, {n} flows per run; relay B and the native-PFC "
          "switch both hold 1.1 BDP (same buffer).")
    rows = []
    for cdf in ("websearch", "fb_hadoop"):
        for mode in ("relay", "plain"):
            t0 = time.monotonic()
            r = swing_run(mode, 1.1, alpha, d, out, f"f{cdf}{mode}", prefix=a.prefix,
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
    print("paper (seed 003): average FCT 14-66 % lower with SWING")
    doc = write_doc(os.path.join(out, "swing-fct.json"),
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
