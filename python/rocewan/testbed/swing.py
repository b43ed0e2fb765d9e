"""One run of the Swing chain (Chen et al., IEEE TPDS 2023, "Swing: Providing Long-Range
Lossless RDMA via PFC-Relay"; docs/references.md): PFC-Relay or native PFC across an
emulated long link. The reproductions that use it are in repro/swing.py.

    relay:  rnic A - relay A (L->R) - E: long link, one-way delay D - relay B (R->L) - S - rnic B
    plain:  rnic A - E: long link - S - rnic B

S is the congested far-end switch: lossy-emu draining A->B at alpha x the link
rate, with `pfc xoff X xon Y prio 3` (802.1Qbb toward its input port) and a
byte-limited queue. E delays data and, with `ctrl-delay`, PFC frames by D each
way. rnic A paces at 0.98 x the link and obeys PFC (priority 3, DSCP 26).
"""
import json
import os

from . import model
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
    # Swing §4.1 sets them (XON = XOFF "to ensure maximum throughput")
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
    # Swing: eq. (6) for the relay, eq. (4) for native PFC with this buffer
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
