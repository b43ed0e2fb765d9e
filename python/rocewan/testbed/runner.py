"""Run one experiment on a Topology and reduce the apps' JSON to one result row."""
import copy
import json
import os
import threading
import time

from . import model
from .. import trace as loss_trace
from .config import fmt_time, parse_loss_change, parse_rate, parse_size, parse_time
from .telemetry import Telemetry, socket_path
from .topo import Capture, Topology, TopoError


def chained(cfg):
    """True when the topology has relays or a congested switch (the Chain topology)."""
    return cfg["relay"]["enabled"] or bool(cfg["switch"]["drain"])


def change_loss_later(topo, cfg, log=print):
    """[link] loss_change: a timer that sets the emulator's SPECs with the new loss
    through its telemetry; returns (timer, record) or (None, None). The record gets the
    replies ('applied': both directions acknowledged)."""
    ch = parse_loss_change(cfg["link"].get("loss_change", ""))
    if not ch:
        return None, None
    at, loss = ch
    new = copy.deepcopy(cfg)
    new["link"]["loss"] = loss
    spec = link_specs(new)
    rec = {"at_s": at, "to": loss or "none", "applied": False, "a2b_spec": spec["a2b"], "b2a_spec": spec["b2a"]}

    def fire():
        try:
            t = Telemetry(socket_path(f"{topo.prefix}E"))
            try:
                ok = [t.cmd(f"/lossy_emu/set,{d},{spec[d]}").get("/lossy_emu/set", {}) for d in ("a2b", "b2a")]
            finally:
                t.close()
            rec["replies"] = ok
            rec["applied"] = all(r.get("ok") == 1 for r in ok)
            rec["applied_monotonic"] = time.monotonic()
        except (OSError, ValueError) as e:
            rec["error"] = str(e)
            log(f"loss change at {at:g} s failed: {e}")

    timer = threading.Timer(at, fire)
    timer.daemon = True
    return timer, rec


def link_specs(cfg):
    """The lossy-emu SPEC of each direction: delay (half the RTT), rate, limit, loss.
    With relays the relays pace the long link, so the emulator only delays; with
    relays or a PFC switch, PFC frames cross the link with its delay (ctrl-delay)."""
    link = cfg["link"]
    half = fmt_time(parse_time(link["rtt"]) / 2)
    rate = "" if cfg["relay"]["enabled"] else f" rate {link['rate']}"
    base = f"delay {half}{rate} limit {link['limit']}" + (" ctrl-delay" if chained(cfg) else "")
    spec = {}
    for d in ("a2b", "b2a"):
        s = base
        if link["loss"] and link["loss_direction"] in ("both", d):
            s += f" loss {link['loss']}"
        if link[f"{d}_extra"]:
            s += " " + link[f"{d}_extra"]
        spec[d] = s
    return spec


def rnic_opts(cfg):
    r, w, link = cfg["rnic"], cfg["workload"], cfg["link"]
    rate_gbps = parse_rate(link["rate"]) / 1e9
    o = (f"-m {r['mtu']} --recovery {r['recovery']} --cc {r['cc']} "
         f"--max-inflight {r['max_inflight']} --qp-timeout {r['qp_timeout']} "
         f"--rto {r['rto']} --rto-min {r['rto_min']} "
         f"--rate_limit {rate_gbps * r['pace']:.6g} --seed {cfg['run']['seed']}")
    if r["cc_param"]:
        o += f" --cc-param {r['cc_param']}"
    if r["recovery"].startswith("fec+"):
        o += f" --fec {r['fec']}"
        if r["fec_adapt"]:
            o += " --fec-adapt"
    if r["recovery"] == "vrp":
        o += f" --vrp-loss {r['vrp_loss']:g} --vrp-window {r['vrp_window']}"
        if r["vrp_max_burst"]:
            o += f" --vrp-max-burst {r['vrp_max_burst']}"
        if r["vrp_wr"]:
            # the sender's per-WR tolerance (B ignores it: it posts no WRITE)
            o += f" --vrp-wr {r['vrp_wr']}"
    if not r["loss_window"]:
        o += " --loss-window off"
    elif r["loss_window_init"] != 10:
        o += f" --loss-window-init {r['loss_window_init']}"
    if r["pfc_xoff"]:
        # both ends get it; only B receives data (A's ACK stream never reaches a backlog)
        o += f" --pfc-xoff {r['pfc_xoff']}"
    if w["kind"] == "bulk":
        # keep about 4 BDPs posted: enough to fill the pipe, little to drain after -D
        size = parse_size(w["size"])
        bdp = parse_rate(link["rate"]) / 8 * parse_time(link["rtt"])
        depth = w["tx_depth"] or max(8, min(1024, int(4 * bdp / size) + 1))
        o += f" -s {size} -t {depth}"
        o += f" -n {w['iters']}" if w.get("iters") else f" -D {w['duration']}"
    else:
        o += f" -s {parse_size(w['size'])} --flows {w['flows']} --load {w['load']} --link-rate {rate_gbps:.6g} -t 1024"
        if w["cdf"]:
            o += f" --flow-cdf {w['cdf']}"
    if w.get("qps", 1) > 1:  # bulk: -q QPs at once; flows: a pool, an idle QP each
        o += f" -q {w['qps']}"
    return o


def fec_fill_ms(cfg):
    """A FEC block's fill time in ms: K packets (MTU + RoCEv2 headers on the wire) at the
    rnics' paced rate; None without FEC."""
    r = cfg["rnic"]
    if not r["recovery"].startswith("fec+"):
        return None
    k = int(r["fec"].split(":")[1].split(",")[0])
    rate = parse_rate(cfg["link"]["rate"]) * (r["pace"] or 1.0)
    return k * (r["mtu"] + model.ROCE_OVERHEAD) * 8 / rate * 1e3


def run_once(cfg, outdir, tag="run", prefix="tb", log=print, capture=None):
    """Build the topology, run the workload once, tear down; return the result row."""
    os.makedirs(outdir, exist_ok=True)
    spec = link_specs(cfg)
    js = {k: os.path.join(outdir, f"{tag}-{k}.json") for k in ("emu", "rnicA", "rnicB")}
    for p in js.values():
        if os.path.exists(p):
            os.unlink(p)
    w = cfg["workload"]
    timeout = 60 + (w["duration"] if w["kind"] == "bulk" else 0) * 3 + \
        (w["flows"] * 0.2 if w["kind"] == "flows" else 0)
    t0 = time.monotonic()
    if chained(cfg):
        if cfg["link"].get("loss_change"):
            raise TopoError("[link] loss_change is not supported with relays or a switch (the chain)")
        return run_chain(cfg, outdir, tag, prefix, spec, js, timeout, capture, t0)
    tr = ({k: os.path.join(outdir, f"{tag}-{k}.csv") for k in ("drops", "traceA", "traceB")}
          if cfg["run"].get("trace") else None)
    # a capture on memif links attaches to lossy-emu, which then runs in the shared EAL mode
    shared = bool(capture) and cfg["link"]["transport"] == "memif"
    with Topology(prefix, cfg["rnic"]["mtu"], cfg["link"]["transport"], shared=shared) as topo:
        emu = topo.start_emu(spec["a2b"], spec["b2a"], cfg["run"]["seed"], js["emu"],
                             extra=f"--drop-log {tr['drops']}" if tr else "")
        cap = Capture(topo, capture) if capture else None
        timer, change = change_loss_later(topo, cfg, log)
        if timer:
            timer.start()
        rc_a, out_a, rc_b, out_b = topo.rnic_pair("write_bw", rnic_opts(cfg), js["rnicA"],
                                                  js["rnicB"], timeout=timeout,
                                                  extra_a=f"--trace {tr['traceA']}" if tr else "",
                                                  extra_b=f"--trace {tr['traceB']}" if tr else "")
        if timer:
            timer.cancel()
            timer.join(15)
        if cap:
            cap.stop()
        emu_out = topo.stop(emu)
    if rc_a != 0 or rc_b != 0:
        raise TopoError(f"{tag}: rnic A exit {rc_a}, rnic B exit {rc_b}\n--- rnic A:\n{out_a[-3000:]}"
                        f"\n--- rnic B:\n{out_b[-2000:]}\n--- lossy-emu:\n{emu_out[-2000:]}")
    for k, p in js.items():
        if not os.path.exists(p):
            raise TopoError(f"{tag}: {k} wrote no JSON ({p})\n{emu_out[-2000:] if k == 'emu' else ''}")
    docs = {k: json.load(open(p)) for k, p in js.items()}
    row = reduce(cfg, docs, spec)
    row["wall_s"] = round(time.monotonic() - t0, 1)
    row["files"] = js
    if change:
        row["loss_change"] = change
    if tr:  # per emulated loss: recovery latency, or why never repaired
        fill = fec_fill_ms(cfg)
        rows = loss_trace.join(loss_trace.read_drop_log(tr["drops"]),
                               [loss_trace.read_trace(tr["traceA"]), loss_trace.read_trace(tr["traceB"])],
                               parse_time(cfg["link"]["rtt"]) * 1e3, fill)
        row["trace"] = loss_trace.summary(rows)
        row["trace_cdf_ms"] = [x for x, _ in loss_trace.cdf(rows)]
        row["trace_fill_ms"] = fill
        # the repaired latencies (ms) per repair kind: FEC's rebuilds, the rest
        row["trace_cdf_ms_by"] = {k: [x for x, _ in loss_trace.cdf(rows, by=k)] for k in ("fec", "retx")}
        row["files"] = dict(js, **tr)
    return row


def reduce(cfg, docs, spec):
    """One row of figures from the three JSON documents."""
    a, b, e = docs["rnicA"]["results"], docs["rnicB"]["results"], docs["emu"]["results"]
    qa = a["qp_counters"]
    link = cfg["link"]
    rate = parse_rate(link["rate"])
    rtt = parse_time(link["rtt"])
    mtu = cfg["rnic"]["mtu"]
    row = {
        "name": cfg["name"], "recovery": cfg["rnic"]["recovery"], "cc": cfg["rnic"]["cc"],
        "rate_gbps": rate / 1e9, "rtt_ms": rtt * 1e3, "loss": link["loss"] or "none",
        "a2b_spec": spec["a2b"], "b2a_spec": spec["b2a"], "workload": cfg["workload"]["kind"],
        "seed": cfg["run"]["seed"],
        "tx_req_packets": qa["tx_req_packets"], "tx_retransmits": qa["tx_retransmits"],
        "retx_bytes": qa["tx_retransmits"] * mtu,
        "naks_seq_err_rx": qa["rx_nak_seq_err"], "timeouts": qa["timeouts"],
        "completion_errors": a["completion_errors"],
        "emu_a2b_drop_loss": e["a2b"]["drop_loss"], "emu_a2b_drop_queue": e["a2b"]["drop_queue"],
        "emu_b2a_drop_loss": e["b2a"]["drop_loss"], "emu_a2b_rx_pkts": e["a2b"]["rx_pkts"],
        "emu_a2b_drop_rule": e["a2b"].get("drop_rule", 0),
        # for reconciling A's retransmissions with what B saw (tests/testbed)
        "retries": qa["retries"], "implied_naks": qa["implied_naks"],
        "window_pkts": docs["rnicA"]["config"]["max_inflight_pkts"],
        "b_rx_req_packets": b["qp_counters"]["rx_req_packets"],
        "b_rx_dup_requests": b["qp_counters"]["rx_dup_requests"],
        "b_rx_out_of_sequence": b["qp_counters"]["rx_out_of_sequence"],
        "b_tx_nak_seq_err": b["qp_counters"]["tx_nak_seq_err"],
        "b_pmd_imissed": b.get("pmd_counters", {}).get("imissed"),
    }
    # RTT sampler / adaptive RTO of rnic A (docs/transport.md): counters, and the figures at exit
    for k in ("rtt_samples", "karn_skipped", "rto_expiries", "rto_spurious"):
        row[k] = qa.get(k, 0)
    rtt_a = a.get("rtt", {})
    for k in ("srtt_us", "rttvar_us", "rto_us"):
        row[k] = rtt_a.get(k)
    row["rx_goodput_samples"] = b.get("rx_goodput_samples", [])  # receiver, every 100 ms
    # PFC: pauses rnic A obeyed, XOFFs rnic B sent itself ([rnic] pfc_xoff)
    row["rnic_pfc_pauses"] = a["port_counters"].get("pfc_pauses", 0)
    row["rnic_b_pfc_sent_xoff"] = b["port_counters"].get("pfc_sent_xoff", 0)
    # ECN / CC: the emulator's CE marks, what rnic B (the NP) saw and sent back
    qb = b["qp_counters"]
    row["emu_a2b_ecn_marked"] = e["a2b"].get("ecn_marked", 0)
    row["emu_a2b_drop_queue"] = e["a2b"]["drop_queue"]
    row["rnic_b_rx_ecn_ce"] = qb.get("rx_ecn_ce", 0)
    row["rnic_b_tx_cnps"] = qb.get("tx_cnps", 0)
    row["rnic_b_tx_becn_acks"] = qb.get("tx_becn_acks", 0)
    row["rnic_a_rx_cnps"] = qa.get("rx_cnps", 0)
    row["rnic_a_rx_becn_acks"] = qa.get("rx_becn_acks", 0)
    row["cc_decreases"] = qa.get("cc_decreases", 0)
    row["cc_increases"] = qa.get("cc_increases", 0)
    row["loss_window_cuts"] = qa.get("loss_window_cuts", 0)
    row["loss_window_held"] = qa.get("loss_window_held", 0)
    row["cc_qps"] = a.get("cc_qps", [])
    row["qp_results"] = a.get("qp_results", [])  # per requester QP: bytes, last completion
    # rnic A's per-QP rate / window time series (every 10 ms; columns named in it)
    row["cc_trace"] = a.get("cc_trace")
    # FEC (docs/fec.md): what A coded and sent, what B rebuilt, held and released
    row["fec"] = a.get("fec_used")
    for k in ("fec_tx_covered", "fec_tx_frames", "fec_tx_overhead_bytes", "fec_tx_flushes",
              "fec_tx_recoded", "fec_tx_dropped"):
        row[k] = qa.get(k, 0)
    for k in ("fec_rebuilt", "fec_unrecoverable", "fec_loss_signals_withheld", "fec_holds_repaired",
              "fec_release_deadline", "fec_release_progress", "fec_release_unrecoverable", "fec_release_full",
              "fec_holds_filled", "fec_rebuilt_after_release", "fec_rebuilt_dup"):
        row["b_" + k] = qb.get(k, 0)
    # --fec-adapt (docs/fec.md): B's policy changes and PROPOSEs, and the code each end
    # ended with (A's encoder; B's decoder follows A's COMMITs)
    for k in ("fec_adapt_up", "fec_adapt_down", "fec_adapt_proposals", "fec_adapt_failed"):
        row["b_" + k] = qb.get(k, 0)
    fa, fb = (a.get("fec_qps") or [{}])[0], (b.get("fec_qps") or [{}])[0]
    row["fec_a_code"] = fa.get("code")
    row["fec_b_peer_code"] = fb.get("peer_code")
    row["fec_b_adapt_level"] = fb.get("adapt_level")
    row["fec_b_adapt_loss_ppm"] = fb.get("adapt_loss_ppm")
    mean_loss, events = model.ge_params(link["loss"]) if link["loss"] else (0.0, 0.0)
    row["loss_rate_model"] = mean_loss
    row["loss_rate_measured"] = e["a2b"]["drop_loss"] / e["a2b"]["rx_pkts"] if e["a2b"]["rx_pkts"] else 0
    row["gbn_model_fraction"] = model.gbn_goodput_fraction(events, mtu, rate, rtt)
    if cfg["workload"]["kind"] == "bulk":
        row["goodput_gbps"] = a["bw_avg_mbps"] * 1048576 * 8 / 1e9  # perftest MB/s = MiB/s
        row["duration_s"] = a["duration_s"]
        row["fct_p50_ms"] = row["fct_p99_ms"] = None
    else:
        f = a["flows"]
        row["goodput_gbps"] = f["goodput_gbps"]
        row["duration_s"] = f["duration_s"]
        row["flows"] = f["completed"]
        row["fct_p50_ms"] = f["fct_p50_us"] / 1e3
        row["fct_p99_ms"] = f["fct_p99_us"] / 1e3
        row["slowdown_groups"] = model.slowdown_groups(f["records"], rtt, rate)
        row["records"] = f["records"]
    # VRP (docs/vrp.md): what B gave up and zero-filled; goodput counts intact bytes only
    zb = qb.get("vrp_zero_filled_bytes", 0)
    took = qb.get("rx_req_bytes", 0)
    row["vrp_loss_pct"] = cfg["rnic"]["vrp_loss"] if cfg["rnic"]["recovery"] == "vrp" else None
    row["vrp_tolerated_pkts"] = qb.get("vrp_tolerated_pkts", 0)
    row["vrp_zero_filled_bytes"] = zb
    row["vrp_nacked_pkts"] = qb.get("vrp_nacked_pkts", 0)
    row["vrp_msgs"] = qb.get("vrp_msgs", 0)
    row["vrp_msgs_lossy"] = row["vrp_msgs"] - qb.get("vrp_msgs_loss_0", 0)
    row["vrp_nack_consecutive"] = qb.get("vrp_nack_consecutive", 0)
    row["vrp_nack_rate"] = qb.get("vrp_nack_rate", 0)
    row["vrp_wr_tol_msgs"] = qb.get("vrp_wr_tol_msgs", 0)
    # the requester's view (B's VRP LOSS summaries): equal to B's own counts when none was lost
    row["vrp_peer_lost_pkts"] = qa.get("vrp_peer_lost_pkts", 0)
    row["vrp_summary_missing"] = qa.get("vrp_summary_missing", 0)
    row["residual_loss"] = zb / (took + zb) if took + zb else 0.0
    row["goodput_intact_gbps"] = row["goodput_gbps"] * (1 - row["residual_loss"])
    # the fraction of the link that carried new data, and of what the pacer allows
    row["link_utilisation"] = row["goodput_gbps"] * 1e9 / rate
    payload_eff = mtu / (mtu + model.ROCE_OVERHEAD)
    row["goodput_model_gbps"] = rate * cfg["rnic"]["pace"] * payload_eff * row["gbn_model_fraction"] / 1e9
    return row


def run_chain(cfg, outdir, tag, prefix, spec, js, timeout, capture, t0):
    """rnic A [- relay A] - WAN [- relay B] [- congested switch] - rnic B."""
    from .topo import Chain
    relay, sw = cfg["relay"], cfg["switch"]
    boxes = ([("RA", "relay")] if relay["enabled"] else []) + [("E", "emu")] + \
        ([("RB", "relay")] if relay["enabled"] else []) + ([("S", "emu")] if sw["drain"] else [])
    for k in ("RA", "RB", "S"):
        js[k] = os.path.join(outdir, f"{tag}-{k}.json")
        if os.path.exists(js[k]):
            os.unlink(js[k])
    rate, rtt = cfg["link"]["rate"], cfg["link"]["rtt"]
    common = (f"--link-rate {rate} --rtt {rtt} --lossless {relay['lossless']} --mbuf-size 8192 "
              f"--local-rate {parse_rate(rate) * 2 / 1e9:g}gbit --pace-burst 200us")
    with Chain(boxes, prefix, cfg["rnic"]["mtu"], cfg["link"]["transport"]) as ch:
        if relay["enabled"]:
            ch.start_box("RA", f"--local 0 --remote 1 {common} --xoff 128kb --xon 64kb --headroom 4mb",
                         js["RA"], lcores="0")
            buf = relay["buffer"] if relay["buffer"] == "auto" else f"{parse_size(relay['buffer'])}b"
            ch.start_box("RB", f"--local 1 --remote 0 {common} --buffer {buf}", js["RB"], lcores="1")
        ch.start_box("E", f"--a2b '{spec['a2b']}' --b2a '{spec['b2a']}' --link-rate {rate} "
                          f"--mbuf-size 8192 --seed {cfg['run']['seed']}", js["emu"])
        if sw["drain"]:
            s_spec = (f"rate {sw['drain']} limit 5000 limit-bytes {parse_size(sw['limit'])}b "
                      f"pfc xoff {parse_size(sw['xoff'])}b xon {parse_size(sw['xon'])}b prio {relay['lossless']}")
            ch.start_box("S", f"--a2b '{s_spec}' --b2a '' --link-rate {rate} --mbuf-size 8192 --seed 1",
                         js["S"])
        ch.wait_path()
        cap = Capture(ch, capture) if capture else None
        opts = rnic_opts(cfg) + f" --link-rate {parse_rate(rate) / 1e9:g}"
        rc_a, out_a, rc_b, out_b = ch.rnic_pair("write_bw", opts, js["rnicA"], js["rnicB"], timeout=timeout)
        if cap:
            cap.stop()
        outs = [ch.stop(p) for p in list(ch.procs)]
    if rc_a != 0 or rc_b != 0:
        raise TopoError(f"{tag}: rnic A exit {rc_a}, rnic B exit {rc_b}\n--- rnic A:\n{out_a[-3000:]}"
                        f"\n--- rnic B:\n{out_b[-2000:]}\n--- boxes:\n{''.join(o[-800:] for o in outs)}")
    docs = {}
    for k, p in js.items():
        if k in ("RA", "RB") and not relay["enabled"] or k == "S" and not sw["drain"]:
            continue
        if not os.path.exists(p):
            raise TopoError(f"{tag}: {k} wrote no JSON ({p})")
        docs[k] = json.load(open(p))
    row = reduce(cfg, {"emu": docs["emu"], "rnicA": docs["rnicA"], "rnicB": docs["rnicB"]}, spec)
    if relay["enabled"]:
        rb = docs["RB"]["results"]["r2l"]
        row.update(relay_b_buffer_bytes=rb["limit_bytes"], relay_b_drops=rb["total"]["drops"],
                   relay_b_hwm_bytes=rb["total"]["hwm_bytes"], relay_b_pfc_relayed=rb["pfc_relayed"],
                   relay_a_drops=docs["RA"]["results"]["l2r"]["total"]["drops"])
    if sw["drain"]:
        s = docs["S"]["results"]["a2b"]
        row.update(switch_pfc_sent=s.get("pfc_sent", 0), switch_drops=s["drop_queue"],
                   switch_queue_max_bytes=s["queue_max_bytes"])
    row["wall_s"] = round(time.monotonic() - t0, 1)
    row["files"] = js
    return row
