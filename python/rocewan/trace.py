"""The loss -> repair trace: join lossy-emu's ``--drop-log`` with the rnics'
``--trace`` files into one row per emulated loss (docs/loss-trace.md).

All three files carry CLOCK_MONOTONIC ns (one machine, or hosts whose clocks the
operator aligned). A dropped RoCEv2 request (destination QP ``Q``, PSN ``P``) is
repaired when the receiver's trace shows ``rx_late`` for QP ``Q`` and PSN ``P``:
the PSN that was missing arrived. The recovery latency is that arrival minus the
drop, in ms and in RTTs (``rtt_ms`` given by the caller). PSNs are 24-bit and wrap,
so the same (QP, PSN) can recur in a long run: each drop takes the nearest event
at or after it in time. A retransmission counts only before the next drop of the
same (QP, PSN) (else it is that drop's); the arrival may come later, as when the
retransmission was lost too: then both drops are repaired by the same arrival.

Under FEC (docs/fec.md) the receiver also traces ``fec_rebuilt`` for a request PSN
its decoder rebuilt from repair frames. A drop is repaired by the first of its
``fec_rebuilt`` and its ``rx_late`` at or after it (a tie goes to FEC: the rebuild is
traced before the transport sees the frame); ``by`` says which: ``fec`` or ``retx``
(every arrival that is not a rebuild: a retransmission, or the original late). With
``fill_ms``, the time K packets take at the sending rate (a block's fill time), the
latency is also given in fills (``latency_fills``).

When there is no arrival, the row says why ("never repaired"):
  - ``not a request``: an ACK/NAK, READ response or CNP was dropped; its loss is
    covered by later ACKs or a READ retry, not by resending that PSN;
  - ``FEC frame``: a repair or negotiation frame (opcodes 0xD0/0xD1) was dropped: not
    data, never resent (a lost repair shows as its block's holes resent instead);
  - ``not RoCEv2``: a frame without a BTH (ARP, the TCP exchange, ...);
  - ``never retransmitted``: no ``retx`` of that PSN towards QP ``Q`` in any trace
    (e.g. the run ended first, or no sender trace was given);
  - ``retransmitted, arrival not traced``: the sender resent it but the receiver
    never saw a later PSN before it, as for the lost last packet of a burst (the
    receiver cannot know it was missing); the row keeps the time to that
    retransmission as ``retx_ms``.
  - ``duplicate, no repair needed``: the dropped frame was itself a resend (a
    ``retx`` of that PSN at most ``DUP_LOOKBACK_NS`` before the drop, after the
    previous drop and the previous arrival of it), an earlier copy got through
    (no earlier drop of the PSN, or an arrival or another resend since it), and
    nothing resent the PSN again: the sender resends a PSN until it is
    acknowledged, so that earlier copy had arrived (a spurious resend, e.g. after a timeout that resent PSNs
    no notice had reported). The row keeps ``dup_retx_ms``, drop minus that
    resend. As for ``never retransmitted``, a run that ends right after the
    drop cannot tell.
"""

import argparse
import bisect
import json
import sys

from .opcodes import lookup
from .psn import PSN_MASK


def _rows(path_or_lines):
    """CSV rows of a drop log or trace as dicts; '#' lines are comments."""
    if isinstance(path_or_lines, str):
        with open(path_or_lines) as f:
            lines = f.read().splitlines()
    else:
        lines = list(path_or_lines)
    lines = [ln for ln in lines if ln.strip() and not ln.startswith("#")]
    if not lines:
        return []
    cols = lines[0].split(",")
    out = []
    for n, l in enumerate(lines[1:], 2):
        v = l.split(",")
        if len(v) != len(cols):
            raise ValueError(f"line {n}: {len(v)} fields, the header has {len(cols)}: {l!r}")
        out.append(dict(zip(cols, v)))
    return out


def read_drop_log(src):
    """lossy-emu --drop-log: dicts with time_ns, dir, cause, qpn, psn, opcode (None if
    not RoCEv2), len."""
    out = []
    for r in _rows(src):
        roce = r["qpn"] != ""
        out.append({"time_ns": int(r["time_ns"]), "dir": r["dir"], "cause": r["cause"],
                    "qpn": int(r["qpn"]) if roce else None,
                    "psn": int(r["psn"]) & PSN_MASK if roce else None,
                    "opcode": int(r["opcode"]) if roce else None, "len": int(r["len"])})
    return out


def read_trace(src):
    """rnic --trace: dicts with time_ns, event, qpn, dqpn, psn."""
    return [{"time_ns": int(r["time_ns"]), "event": r["event"], "qpn": int(r["qpn"]),
             "dqpn": int(r["dqpn"]), "psn": int(r["psn"]) & PSN_MASK} for r in _rows(src)]


# a resend counts as the dropped frame only this close before the drop (PSNs wrap after
# 2^24 packets: 16.7 Gpkts/s would be needed to reuse a PSN within it)
DUP_LOOKBACK_NS = 1_000_000_000

DUPLICATE = "duplicate, no repair needed"


class _Index:
    """Event times by key, sorted, for 'first at or after t' look-ups."""

    def __init__(self):
        self.t = {}

    def add(self, key, t):
        self.t.setdefault(key, []).append(t)

    def seal(self):
        for v in self.t.values():
            v.sort()

    def first_at_or_after(self, key, t, before=None):
        v = self.t.get(key, [])
        i = bisect.bisect_left(v, t)
        if i < len(v) and (before is None or v[i] < before):
            return v[i]
        return None

    def last_at_or_before(self, key, t, after=None):
        v = self.t.get(key, [])
        i = bisect.bisect_right(v, t)
        if i > 0 and (after is None or v[i - 1] > after):
            return v[i - 1]
        return None


FEC_OPCODES = (0xD0, 0xD1)  # lib/fec's repair and negotiation frames (docs/wire.md)
FEC_FRAME = "FEC frame"


def join(drops, traces, rtt_ms=None, fill_ms=None):
    """One row per dropped frame, in drop-time order; see the module text."""
    arr, retx, reb = _Index(), _Index(), _Index()
    for tr in traces:
        for e in tr:
            if e["event"] == "rx_late":
                arr.add((e["qpn"], e["psn"]), e["time_ns"])
            elif e["event"] == "retx":
                retx.add((e["dqpn"], e["psn"]), e["time_ns"])
            elif e["event"] == "fec_rebuilt":
                reb.add((e["qpn"], e["psn"]), e["time_ns"])
    arr.seal()
    retx.seal()
    reb.seal()
    drops = sorted(drops, key=lambda d: d["time_ns"])
    # the next drop of the same (QP, PSN): a repair after it belongs to that one
    nxt, last = [None] * len(drops), {}
    for i in range(len(drops) - 1, -1, -1):
        d = drops[i]
        if d["qpn"] is not None:
            k = (d["qpn"], d["psn"])
            nxt[i] = last.get(k)
            last[k] = d["time_ns"]
    # the previous drop of the same (QP, PSN): a resend before it is not this frame
    prv, last = [None] * len(drops), {}
    for i, d in enumerate(drops):
        if d["qpn"] is not None:
            k = (d["qpn"], d["psn"])
            prv[i] = last.get(k)
            last[k] = d["time_ns"]
    rows = []
    for i, d in enumerate(drops):
        row = {"time_ns": d["time_ns"], "dir": d["dir"], "cause": d["cause"], "qpn": d["qpn"],
               "psn": d["psn"], "opcode": d["opcode"], "repaired": False, "by": None,
               "latency_ms": None, "latency_rtts": None, "latency_fills": None, "retx_ms": None,
               "dup_retx_ms": None, "reason": None}
        rows.append(row)
        if d["qpn"] is None:
            row["reason"] = "not RoCEv2"
            continue
        if d["opcode"] in FEC_OPCODES:
            row["reason"] = FEC_FRAME
            continue
        op = lookup(d["opcode"])
        if op is None or not op.request:
            row["reason"] = "not a request"
            continue
        k = (d["qpn"], d["psn"])
        # a later drop of the same (QP, PSN) may itself be the retransmission: the
        # first drop is repaired by what arrives after the last of them, so no bound
        # for the arrival, but a retransmission must come before the next drop
        t_arr = arr.first_at_or_after(k, d["time_ns"])
        t_fec = reb.first_at_or_after(k, d["time_ns"])
        t_rx = retx.first_at_or_after(k, d["time_ns"], before=nxt[i])
        if t_rx is not None:
            row["retx_ms"] = (t_rx - d["time_ns"]) / 1e6
        if t_fec is not None and (t_arr is None or t_fec <= t_arr):
            t_arr, row["by"] = t_fec, "fec"
        elif t_arr is not None:
            row["by"] = "retx"
        if t_arr is not None:
            row["repaired"] = True
            row["latency_ms"] = (t_arr - d["time_ns"]) / 1e6
            if rtt_ms:
                row["latency_rtts"] = row["latency_ms"] / rtt_ms
            if fill_ms:
                row["latency_fills"] = row["latency_ms"] / fill_ms
            continue
        if t_rx is None:
            # was the dropped frame a resend of a PSN that had arrived? Its resend is the
            # latest one before the drop, newer than the previous drop and arrival of it
            t0 = d["time_ns"] - DUP_LOOKBACK_NS
            p = prv[i] if prv[i] is not None and prv[i] > t0 else None
            t_a = arr.last_at_or_before(k, d["time_ns"], after=p)
            floor = max(x for x in (p, t0, t_a) if x is not None)
            t_dup = retx.last_at_or_before(k, d["time_ns"], after=floor)
            # and an earlier copy got through: none of it was dropped before, or one
            # arrived since that drop, or another resend left between that drop and this
            # resend (the next drop of the PSN is this one, so that copy was not dropped)
            if t_dup is not None and p is not None and t_a is None:
                if retx.last_at_or_before(k, t_dup - 1, after=p) is None:
                    t_dup = None
            if t_dup is not None:
                row["reason"] = DUPLICATE
                row["dup_retx_ms"] = (d["time_ns"] - t_dup) / 1e6
            else:
                row["reason"] = "never retransmitted"
        else:
            row["reason"] = "retransmitted, arrival not traced"
    return rows


def quantiles(xs):
    """p50 / p90 / p99 / max of @p xs (nearest rank), None for each if empty."""
    xs = sorted(xs)

    def q(p):
        if not xs:
            return None
        return xs[min(len(xs) - 1, max(0, -(-len(xs) * p // 100) - 1))]

    return {"p50": q(50), "p90": q(90), "p99": q(99), "max": xs[-1] if xs else None}


def summary(rows):
    """Counts and latency quantiles (nearest rank) of the repaired losses; ``by``: the
    same per repair kind (``fec``, ``retx``), in ms, and in RTTs and block fills where
    the rows have them."""
    lat = [r["latency_ms"] for r in rows if r["repaired"]]
    reasons = {}
    for r in rows:
        if not r["repaired"]:
            reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
    by = {}
    for kind in ("fec", "retx"):
        rs = [r for r in rows if r["repaired"] and r["by"] == kind]
        by[kind] = {"repaired": len(rs), "latency_ms": quantiles(r["latency_ms"] for r in rs)}
        for unit in ("rtts", "fills"):
            v = [r["latency_" + unit] for r in rs if r.get("latency_" + unit) is not None]
            if v:
                by[kind]["latency_" + unit] = quantiles(v)
    return {"drops": len(rows), "repaired": len(lat), "never_repaired": reasons,
            "latency_ms": quantiles(lat), "by": by}


def cdf(rows, by=None, unit="ms"):
    """[(latency, fraction of repaired losses <= it)], for a plot; @p by: only the losses
    repaired that way ("fec", "retx"); @p unit: "ms", "rtts" or "fills"."""
    lat = sorted(r["latency_" + unit] for r in rows
                 if r["repaired"] and (by is None or r["by"] == by) and r["latency_" + unit] is not None)
    return [(x, (i + 1) / len(lat)) for i, x in enumerate(lat)]


def main(argv=None, out=sys.stdout):
    p = argparse.ArgumentParser(prog="testbed trace",
                                description="per emulated loss: recovery latency or why never repaired")
    p.add_argument("drop_log", help="lossy-emu --drop-log FILE")
    p.add_argument("traces", nargs="+", help="rnic --trace FILEs (both sides)")
    p.add_argument("--rtt", type=float, metavar="MS", help="path RTT in ms (latency in RTTs too)")
    p.add_argument("--fill", type=float, metavar="MS",
                   help="FEC block fill time in ms, K packets at the sending rate (latency in fills too)")
    p.add_argument("--json", metavar="OUT", help="write the rows and the summary")
    a = p.parse_args(argv)
    rows = join(read_drop_log(a.drop_log), [read_trace(t) for t in a.traces], a.rtt, a.fill)
    s = summary(rows)
    for r in rows:
        what = (f"repaired{' by FEC' if r['by'] == 'fec' else ''} in {r['latency_ms']:.3f} ms" +
                (f" ({r['latency_rtts']:.2f} RTT)" if r["latency_rtts"] is not None else "") +
                (f" ({r['latency_fills']:.2f} fills)" if r["latency_fills"] is not None else "")
                if r["repaired"] else f"never repaired: {r['reason']}")
        where = f"QP {r['qpn']:#x} PSN {r['psn']:#08x}" if r["qpn"] is not None else "-"
        print(f"{r['time_ns']} {r['dir']} {r['cause']:<8} {where}: {what}", file=out)
    lm = s["latency_ms"]
    print(f"{s['drops']} drops, {s['repaired']} repaired" +
          (f" (latency p50 {lm['p50']:.3f} ms, p99 {lm['p99']:.3f} ms, max {lm['max']:.3f} ms)"
           if s["repaired"] else "") +
          "".join(f"; {n} never repaired: {k}" for k, n in sorted(s["never_repaired"].items())),
          file=out)
    if s["by"]["fec"]["repaired"]:
        for kind, b in s["by"].items():
            lm = b["latency_ms"]
            print(f"  by {kind}: {b['repaired']}" +
                  (f" (p50 {lm['p50']:.3f} ms, p99 {lm['p99']:.3f} ms)" if b["repaired"] else ""), file=out)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "summary": s, "cdf": cdf(rows)}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
