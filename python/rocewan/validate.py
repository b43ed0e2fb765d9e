"""``rocewan validate``: check every RoCEv2 packet of a capture.

For each frame addressed to UDP port 4791 it checks the ICRC (IPv4 and IPv6)
and the header consistency :func:`rocewan.frame.decode` enforces; it follows
the PSN of every request stream (gaps and retransmissions are counted, not
failures); and it counts CNPs, ECN-CE marks and 802.3 MAC Control frames
(PAUSE, PFC). lib/fec's repair and negotiation frames (opcodes 0xD0/0xD1,
docs/fec.md) are checked too: ICRC, FRH ranges, and each repair against the
XOR / Reed-Solomon code of its members when they are in the capture. VRP
ACKs and NACKs (opcodes 0xE0/0xE1, docs/vrp.md) are checked against the
requests of their stream in the capture (:class:`VrpChecker`), so are VRP
LOSS summaries (0xE3) against the packets of their message seen before
them, and, at the end of the capture, every VRP WRITE message's losses (the
PSNs that never arrived) against its tolerance: the VTETH of its FIRST, over
the receiver's own tolerance when given (``--vrp-tolerance``). A capture
fails when any RoCEv2 frame fails a check or a message lost more than it
allowed.
"""

import datetime
import json
import struct

from . import checkout, fec
from . import opcodes as ops
from .frame import ERR_TEXT, ETHERTYPE_MAC_CTRL, decode
from .pcapio import read_frames
from .psn import PsnTracker, psn_span

SCHEMA = "rocewan/1"
APP = "rocewan-validate"
MAC_CTRL_PAUSE = 0x0001
MAC_CTRL_PFC = 0x0101
ECN_CE = 3
FEC_ERR_TEXT = {
    "FEC_BAD_FRH": "FEC frame with an FRH out of range or a bad length",
    "FEC_MISMATCH": "FEC repair differs from the code of its captured members",
    "VRP_BAD_ACK": "VRP ACK names a PSN no request of its stream arrived with, "
                   "or reports given up a PSN it NACKed",
    "VRP_BAD_NACK": "VRP NACK names a PSN that had arrived already or was given up",
    "VRP_BAD_VTETH": "VRP WRITE FIRST with a tolerance out of range (reserved flag "
                     "bits, more than 4 ranges, loss above 100 %, a range outside "
                     "the message)",
    "VRP_CRIT_GIVEN_UP": "VRP ACK reports given up a PSN its message's tolerance "
                         "(VTETH) forbids losing: a critical range, the first or "
                         "last packet, or a message sent with 0 % loss",
    "VRP_BAD_SUMMARY": "VRP LOSS summary (0xE3) that hides a loss of its message "
                       "the capture shows (a packet never seen before it), or "
                       "whose map does not add up",
    "VRP_OVER_BUDGET": "VRP WRITE message that lost more than its tolerance "
                       "allows (a critical packet, a consecutive run or a "
                       "window over the loss rate; frame index = its FIRST)",
}
VTETH_F_LOSS, VTETH_F_WINDOW, VTETH_F_BURST = 1, 2, 4
VTETH_F_ALL = 7
WRITE_FIRST_OPCODE = 0x06
VRP_LOSS_BP_MAX = 10000


def vteth_problem(rec):
    """None if the VTETH of a VRP WRITE FIRST is well formed, else a reason."""
    v = rec["vteth"]
    dlen = rec["reth"]["dlen"]
    if v["flags"] & ~VTETH_F_ALL:
        return "reserved flag bits"
    if v["n_crit"] > len(v["crit"]):
        return "more than %d ranges" % len(v["crit"])
    if v["loss_bp"] > VRP_LOSS_BP_MAX:
        return "loss above 100 %"
    for off, ln in v["crit"][:v["n_crit"]]:
        if ln == 0 or off >= dlen or ln > dlen - off:
            return "range %d+%d outside the %d-byte message" % (off, ln, dlen)
    return None


VRP_WINDOW_DEFAULT = 64
VRP_HOLES = 8
BURST_UNLIMITED = 0xFFFFFFFF


def parse_tolerance(spec):
    """The receiver's tolerance as ``rnic --vrp-*`` gave it, from a
    ``--vrp-tolerance`` SPEC: comma-separated ``loss=PCT``, ``window=N``,
    ``burst=BYTES`` and ``crit=OFF:LEN`` (several). Returns a dict with
    ``loss_bp``, ``window``, ``max_burst`` and ``crit``; ValueError if bad."""
    tol = {"loss_bp": 0, "window": 0, "max_burst": BURST_UNLIMITED, "crit": []}
    for item in filter(None, (x.strip() for x in spec.split(","))):
        key, _, val = item.partition("=")
        if key == "loss":
            bp = round(float(val) * 100)
            if not 0 <= bp <= VRP_LOSS_BP_MAX:
                raise ValueError("loss %s: 0..100 %%" % val)
            tol["loss_bp"] = bp
        elif key == "window":
            tol["window"] = int(val)
        elif key == "burst":
            tol["max_burst"] = int(val)
        elif key == "crit":
            off, _, ln = val.partition(":")
            tol["crit"].append((int(off, 0), int(ln, 0)))
        else:
            raise ValueError("unknown key %r (loss, window, burst, crit)" % key)
    return tol


def budget_problem(lost, npkts, mtu, window, loss_bp, max_burst, critical):
    """Why the set ``lost`` of packet indices breaks the tolerance, or None.
    The translation of docs/vrp.md (lib/vrp's vrp_tolerance_to_params):
    window = min(W or 64, npkts), max_loss = floor(loss_bp * window / 10000)
    losses in any ``window`` consecutive packets, max_cons =
    floor(max_burst / mtu) consecutive losses, no loss in ``critical``.
    ``None`` for an unknown field skips that check."""
    crit = sorted(set(lost) & critical)
    if crit:
        return "critical packet %d lost" % crit[0]
    if max_burst is not None and max_burst != BURST_UNLIMITED:
        max_cons, run = max_burst // mtu, 0
        for i in range(npkts):
            run = run + 1 if i in lost else 0
            if run > max_cons:
                return "%d consecutive losses (at most %d)" % (run, max_cons)
    if loss_bp is not None and window is not None:
        w = min(window or VRP_WINDOW_DEFAULT, npkts)
        max_loss, cnt = loss_bp * w // VRP_LOSS_BP_MAX, 0
        for i in range(npkts):
            cnt += i in lost
            if i >= w:
                cnt -= (i - w) in lost
            if cnt > max_loss:
                return "%d losses in %d packets ending at %d (at most %d)" % (
                    cnt, w, i, max_loss)
    return None


def loss_map(lost, dlen, mtu):
    """The responder's loss record of the packets ``lost``: (packets, bytes,
    merged holes [(off, len)] - all of them)."""
    holes, nbytes = [], 0
    for i in sorted(lost):
        off = i * mtu
        ln = min(mtu, dlen - off)
        nbytes += ln
        if holes and holes[-1][0] + holes[-1][1] == off:
            holes[-1] = (holes[-1][0], holes[-1][1] + ln)
        else:
            holes.append((off, ln))
    return len(lost), nbytes, holes


class VrpWrite:
    """A multi-packet RDMA WRITE message seen in the capture (its FIRST:
    0x06, or 0xE2 with a VTETH), for the loss-budget and summary checks."""

    def __init__(self, rec, idx):
        self.idx = idx
        self.first = rec["bth"]["psn"]
        self.mtu = max(rec["payload_len"], 1)   # a FIRST carries one full MTU
        self.dlen = rec["reth"]["dlen"]
        self.npkts = max(1, -(-self.dlen // self.mtu))
        self.last = (self.first + self.npkts - 1) & 0xFFFFFF
        self.vteth = rec.get("vteth")

    def psn(self, i):
        return (self.first + i) & 0xFFFFFF

    def lost(self, seen):
        return {i for i in range(self.npkts) if self.psn(i) not in seen}


class VrpMessage:
    """A WRITE message whose FIRST carried its tolerance (VTETH): which of
    its packets may never be given up (docs/vrp.md)."""

    def __init__(self, rec):
        v = rec["vteth"]
        self.first = rec["bth"]["psn"]
        mtu = max(rec["payload_len"], 1)   # a FIRST carries one full MTU
        dlen = rec["reth"]["dlen"]
        self.npkts = max(1, -(-dlen // mtu))
        self.critical = {0, self.npkts - 1}
        for off, ln in v["crit"][:v["n_crit"]]:
            self.critical.update(range(off // mtu, (off + ln - 1) // mtu + 1))
        self.no_loss = ((v["flags"] & VTETH_F_LOSS and v["loss_bp"] == 0) or
                        (v["flags"] & VTETH_F_BURST and v["max_burst"] < mtu))

    def forbids(self, psn):
        """None if @p psn is not of this message, else whether losing it breaks
        the tolerance."""
        idx = (psn - self.first) & 0xFFFFFF
        if idx >= self.npkts:
            return None
        return self.no_loss or idx in self.critical


class VrpChecker:
    """VRP ACK/NACK logic against the data seen (docs/vrp.md, docs/wire.md).

    The receiver's single ACK names a PSN it received (the NTETH PSN); the
    ``run`` PSNs right before it are PSNs it received or gave up (tolerated
    losses, zero-filled), and it NACKs only PSNs it has not. So in a capture
    taken where the receiver is (``testbed capture`` records each rnic's
    incoming frames), it is wrong for a VRP ACK to name a PSN that no request of its
    stream carried before it, or to report as given up a run PSN it NACKed
    and that has not arrived since; and for a VRP NACK to name a PSN that had
    arrived or that an ACK reported given up. Run PSNs reported without
    having arrived are counted ``vrp_acked_tolerated``.
    The stream is the requests in the opposite direction between the same
    two addresses; with more than one destination QP there the notice is
    counted unchecked. A NACKed PSN that arrives later is counted repaired.
    """

    def __init__(self, tolerance=None):
        self.tolerance = tolerance  # the receiver's (parse_tolerance), or None
        self.writes = {}     # (req src, req dst, dqpn) -> {last PSN: VrpWrite}
        self.seen = {}       # (req src, req dst) -> {dqpn: set of PSNs}
        self.pending = {}    # (req src, req dst) -> NACKed PSNs not yet seen
        self.given_up = {}   # (req src, req dst) -> PSNs an ACK's run reported tolerated
        self.msgs = {}       # (req src, req dst) -> {first PSN: VrpMessage} (VTETH seen)
        self.counts = {"vrp_acks": 0, "vrp_nacks": 0, "vrp_nacked_psns": 0,
                       "vrp_nacks_repaired": 0, "vrp_acked_tolerated": 0,
                       "vrp_unchecked": 0, "vrp_wr_tol_msgs": 0,
                       "vrp_summaries": 0, "vrp_summaries_match": 0,
                       "vrp_summary_extra_pkts": 0,
                       "vrp_summaries_unchecked": 0,
                       "vrp_budget_checked_msgs": 0, "vrp_budget_over_msgs": 0,
                       "vrp_budget_unchecked_msgs": 0, "vrp_incomplete_msgs": 0,
                       "vrp_lost_pkts": 0}

    def add_request(self, rec, idx=0):
        """A request packet: None, or the error kind of a bad VTETH."""
        key = (rec["ip"]["src"], rec["ip"]["dst"])
        if rec["bth"]["opcode"] in (ops.VRP_WRITE_FIRST_OPCODE, WRITE_FIRST_OPCODE):
            m = VrpWrite(rec, idx)
            self.writes.setdefault(key + (rec["bth"]["dqpn"],), {}) \
                .setdefault(m.last, m)
        if rec["bth"]["opcode"] == ops.VRP_WRITE_FIRST_OPCODE:
            if vteth_problem(rec):
                return "VRP_BAD_VTETH"
            msgs = self.msgs.setdefault(key, {})
            if rec["bth"]["psn"] not in msgs:
                self.counts["vrp_wr_tol_msgs"] += 1
                msgs[rec["bth"]["psn"]] = VrpMessage(rec)
        psn = rec["bth"]["psn"]
        self.seen.setdefault(key, {}).setdefault(rec["bth"]["dqpn"], set()).add(psn)
        pend = self.pending.get(key)
        if pend and psn in pend:
            pend.discard(psn)
            self.counts["vrp_nacks_repaired"] += 1
        return None

    def add_notice(self, rec):
        """A VRP ACK or NACK: the error kind, or None."""
        nack = rec["bth"]["opcode"] == ops.VRP_NACK_OPCODE
        self.counts["vrp_nacks" if nack else "vrp_acks"] += 1
        key = (rec["ip"]["dst"], rec["ip"]["src"])
        streams = self.seen.get(key, {})
        psns = [(rec["nteth"]["psn"] - i) & 0xFFFFFF
                for i in range(rec["nteth"]["run"] + 1)]
        if nack:
            self.counts["vrp_nacked_psns"] += len(psns)
        if len(streams) != 1:
            self.counts["vrp_unchecked"] += 1
            return None
        seen = next(iter(streams.values()))
        given_up = self.given_up.setdefault(key, set())
        if nack:
            if any(p in seen or p in given_up for p in psns):
                return "VRP_BAD_NACK"
            self.pending.setdefault(key, set()).update(psns)
            return None
        if psns[0] not in seen:
            return "VRP_BAD_ACK"
        pend = self.pending.get(key, set())
        for p in psns[1:]:
            if p in seen:
                continue
            if p in pend:
                return "VRP_BAD_ACK"
            if any(m.forbids(p) for m in self.msgs.get(key, {}).values()):
                return "VRP_CRIT_GIVEN_UP"
            if p not in given_up:
                given_up.add(p)
                self.counts["vrp_acked_tolerated"] += 1
        return None

    def add_summary(self, rec):
        """A VRP LOSS summary (0xE3) of the WRITE message ending at its PSN
        (the responder sends it when the message ends). Its map must add up
        (packets and bytes equal to its holes, unless truncated) and it must
        report lost every packet of the message the capture never saw arrive
        before it: a summary that hides a visible loss is VRP_BAD_SUMMARY. It
        may report more: a copy that arrived after the receiver gave the
        packet up is discarded, and a frame the capture saw may have been
        missed by the receiver's socket; those are counted
        (vrp_summary_extra_pkts), exact maps as vrp_summaries_match. The
        error kind, or None; unchecked when the message's FIRST is not in the
        capture."""
        self.counts["vrp_summaries"] += 1
        key = (rec["ip"]["dst"], rec["ip"]["src"])
        cands = [ws[rec["bth"]["psn"]] for k, ws in self.writes.items()
                 if k[:2] == key and rec["bth"]["psn"] in ws]
        streams = self.seen.get(key, {})
        if len(cands) != 1 or len(streams) != 1:
            self.counts["vrp_summaries_unchecked"] += 1
            return None
        m, seen = cands[0], next(iter(streams.values()))
        visible = m.lost(seen)
        v = rec["vleth"]
        trunc = bool(v["flags"] & 1)
        holes = [tuple(h) for h in v["holes"][:v["n_holes"]]]
        pkts, nbytes, end = set(), 0, 0
        for off, ln in holes:
            if ln == 0 or off < end or off + ln > m.dlen:
                return "VRP_BAD_SUMMARY"
            end = off + ln
            nbytes += ln
            pkts.update(range(off // m.mtu, (off + ln - 1) // m.mtu + 1))
        if v["len"] != m.dlen or v["n_holes"] > VRP_HOLES or \
                (not trunc and (nbytes != v["lost_bytes"] or len(pkts) != v["lost_pkts"])) or \
                (trunc and (nbytes > v["lost_bytes"] or len(pkts) > v["lost_pkts"])):
            return "VRP_BAD_SUMMARY"
        # every loss the capture shows is reported (past the last hole of a truncated map:
        # only counted)
        shown = visible if not trunc else {i for i in visible if i * m.mtu < end}
        if not shown <= pkts or len(visible) > v["lost_pkts"]:
            return "VRP_BAD_SUMMARY"
        if pkts == visible and not trunc:
            self.counts["vrp_summaries_match"] += 1
        else:
            self.counts["vrp_summary_extra_pkts"] += v["lost_pkts"] - len(visible)
        return None

    def _tolerance_of(self, m):
        """(window, loss_bp, max_burst, critical packets) of message ``m``: the
        receiver's tolerance (if given) with the VTETH's fields over it and
        its ranges added, the first and last packets critical (docs/vrp.md).
        A field neither gives is None (its check is skipped)."""
        base = self.tolerance
        window = base["window"] if base else None
        loss_bp = base["loss_bp"] if base else None
        burst = base["max_burst"] if base else None
        ranges = list(base["crit"]) if base else []
        v = m.vteth
        if v:
            if v["flags"] & VTETH_F_LOSS:
                loss_bp = v["loss_bp"]
            if v["flags"] & VTETH_F_WINDOW:
                window = v["window"]
            if v["flags"] & VTETH_F_BURST:
                burst = v["max_burst"]
            ranges += [tuple(c) for c in v["crit"][:v["n_crit"]]]
        crit = {0, m.npkts - 1}
        for off, ln in ranges:
            if ln and off < m.dlen:
                crit.update(range(off // m.mtu,
                                  min(off + ln - 1, m.dlen - 1) // m.mtu + 1))
        if loss_bp == 0 and window is None:
            window = 0      # 0 %: nothing may be lost, whatever the window
        return window, loss_bp, burst, crit

    def finish(self):
        """End of the capture: each WRITE message's losses (its PSNs never
        seen) against its tolerance. Returns [(error kind, frame index)]. A
        message whose LAST never arrived (cut by the capture's end, or
        failed) is counted incomplete, not judged."""
        out = []
        for key, ws in self.writes.items():
            seen = self.seen.get(key[:2], {}).get(key[2], set())
            for m in ws.values():
                if m.npkts < 2:
                    continue
                if m.psn(m.npkts - 1) not in seen:
                    self.counts["vrp_incomplete_msgs"] += 1
                    continue
                window, loss_bp, burst, crit = self._tolerance_of(m)
                if self.tolerance is None and m.vteth is None:
                    self.counts["vrp_budget_unchecked_msgs"] += 1
                    continue
                lost = m.lost(seen)
                self.counts["vrp_budget_checked_msgs"] += 1
                self.counts["vrp_lost_pkts"] += len(lost)
                if budget_problem(lost, m.npkts, m.mtu, window, loss_bp, burst,
                                  crit):
                    self.counts["vrp_budget_over_msgs"] += 1
                    out.append(("VRP_OVER_BUDGET", m.idx))
        return out


class Report:
    """Counters of one capture; feed frames with :meth:`add`, then call
    :meth:`finish`."""

    def __init__(self, path, vrp_tolerance=None):
        self.path = path
        self.started_utc = datetime.datetime.now(datetime.timezone.utc) \
            .strftime("%Y-%m-%dT%H:%M:%SZ")
        self.frames = 0
        self.roce = 0
        self.roce_ok = 0
        self.snaplen_cut = 0
        self.opcodes = {}
        self.errors = {}          # kind -> [count, first idx]
        self.mac_ctrl = {"pause": 0, "pfc": 0, "other": 0}
        self.cnp = 0
        self.ecn_ce = 0
        self.psn = PsnTracker()
        self.fec = fec.FecChecker()
        self.vrp = VrpChecker(vrp_tolerance)
        self.finished = False

    @property
    def failed(self):
        return bool(self.errors)

    def add(self, idx, buf, wire_len=None):
        """Account one captured frame."""
        self.frames += 1
        if wire_len is not None and wire_len > len(buf):
            # cut by the capture's snap length, not on the wire: undecidable
            self.snaplen_cut += 1
            return
        f = fec.parse(buf)
        if f is not None:
            self._fec_frame(idx, f)
            return
        d = decode(buf, idx)
        if d.ethertype == ETHERTYPE_MAC_CTRL:
            self._mac_ctrl(buf, d.l3_off)
        if not d.roce:
            return
        self.roce += 1
        self._count_headers(d.rec)
        if d.err != "OK":
            err = self.errors.setdefault(d.err, [0, idx])
            err[0] += 1
            return
        bad = self._vrp(d.rec, idx)
        if bad:
            err = self.errors.setdefault(bad, [0, idx])
            err[0] += 1
            return
        self.roce_ok += 1
        self._track_psn(idx, d.rec)
        self.fec.add_data(buf)

    def _vrp(self, rec, idx):
        op = rec["bth"]["opcode"]
        if op in (ops.VRP_ACK_OPCODE, ops.VRP_NACK_OPCODE):
            return self.vrp.add_notice(rec)
        if op == ops.VRP_LOSS_OPCODE:
            return self.vrp.add_summary(rec)
        info = ops.lookup(op)
        if info is not None and info.request and info.transport == "RC":
            return self.vrp.add_request(rec, idx)
        return None

    def finish(self):
        """End of the capture: the per-message VRP loss budgets."""
        if self.finished:
            return
        self.finished = True
        for kind, idx in self.vrp.finish():
            err = self.errors.setdefault(kind, [0, idx])
            err[0] += 1

    def _fec_frame(self, idx, f):
        """A lib/fec repair or negotiation frame (not part of any PSN stream)."""
        self.roce += 1
        self.opcodes[f["name"]] = self.opcodes.get(f["name"], 0) + 1
        if f["problem"] is not None:
            kind = "BAD_ICRC" if f["problem"] == "ICRC mismatch" else "FEC_BAD_FRH"
            err = self.errors.setdefault(kind, [0, idx])
            err[0] += 1
            return
        self.roce_ok += 1
        before = self.fec.counts["fec_repairs_mismatch"]
        self.fec.add_fec(idx, f)
        if self.fec.counts["fec_repairs_mismatch"] != before:
            err = self.errors.setdefault("FEC_MISMATCH", [0, idx])
            err[0] += 1

    def _mac_ctrl(self, buf, off):
        op = struct.unpack_from(">H", buf, off)[0] if len(buf) >= off + 2 \
            else None
        kind = {MAC_CTRL_PAUSE: "pause", MAC_CTRL_PFC: "pfc"}.get(op, "other")
        self.mac_ctrl[kind] += 1

    def _count_headers(self, rec):
        if "ip" in rec and rec["ip"]["ecn"] == ECN_CE:
            self.ecn_ce += 1
        if "bth" not in rec:
            return
        name = rec["bth"]["name"]
        if ops.lookup(rec["bth"]["opcode"]) is None:
            name = "RESERVED_0x%02x" % rec["bth"]["opcode"]
        self.opcodes[name] = self.opcodes.get(name, 0) + 1
        if rec["bth"]["opcode"] == ops.CNP_OPCODE:
            self.cnp += 1

    def _track_psn(self, idx, rec):
        op = ops.lookup(rec["bth"]["opcode"])
        if not op.request:
            return
        read = ops.is_read_request(op.code)
        span = psn_span(read, rec["reth"]["dlen"] if read else 0)
        key = (rec["ip"]["src"], rec["ip"]["dst"], rec["bth"]["dqpn"])
        self.psn.add(idx, key, rec["bth"]["psn"], span)

    def results(self):
        """Everything counted, as a JSON-ready dict."""
        return {
            "frames_pkts": self.frames,
            "roce_pkts": self.roce,
            "roce_ok_pkts": self.roce_ok,
            "roce_failed_pkts": self.roce - self.roce_ok,
            "other_pkts": self.frames - self.roce - self.snaplen_cut,
            "snaplen_cut_pkts": self.snaplen_cut,
            "opcodes_pkts": dict(sorted(self.opcodes.items())),
            "errors": {k: {"pkts": c, "first_idx": i}
                       for k, (c, i) in sorted(self.errors.items())},
            "psn": self.psn.totals(),
            "psn_streams": [dict(src=k[0], dst=k[1], dqpn=k[2],
                                 **f.as_dict())
                            for k, f in self.psn.flows.items()],
            "cnp_pkts": self.cnp,
            "ecn_ce_pkts": self.ecn_ce,
            "pause_pkts": self.mac_ctrl["pause"],
            "pfc_pkts": self.mac_ctrl["pfc"],
            "mac_ctrl_other_pkts": self.mac_ctrl["other"],
            "fec": dict(self.fec.counts),
            "vrp": dict(self.vrp.counts),
            "ok": not self.failed,
        }


def validate_file(path, vrp_tolerance=None):
    """Read ``path`` and return its finished :class:`Report`.
    ``vrp_tolerance``: the VRP receiver's own tolerance (:func:`parse_tolerance`)."""
    rep = Report(path, vrp_tolerance)
    for idx, buf, wire_len in read_frames(path):
        rep.add(idx, buf, wire_len)
    rep.finish()
    return rep


def summary(rep):
    """Readable multi-line summary of a :class:`Report`."""
    r = rep.results()
    out = ["%s: %d frames, %d RoCEv2 (%d ok, %d failed), %d other"
           % (rep.path, r["frames_pkts"], r["roce_pkts"], r["roce_ok_pkts"],
              r["roce_failed_pkts"], r["other_pkts"])]
    if r["snaplen_cut_pkts"]:
        out.append("  %d frames cut by the snap length were not checked"
                   % r["snaplen_cut_pkts"])
    out.append("  opcodes:" if r["opcodes_pkts"] else "  opcodes: none")
    for name, n in r["opcodes_pkts"].items():
        out.append("    %-36s %6d" % (name, n))
    out.append("  errors (first frame index is 0-based; Wireshark's frame "
               "number is one more):" if r["errors"] else "  errors: none")
    for kind, e in r["errors"].items():
        out.append("    %-20s %6d  first #%d  (%s)"
                   % (kind, e["pkts"], e["first_idx"],
                      ERR_TEXT.get(kind) or FEC_ERR_TEXT[kind]))
    p = r["psn"]
    out.append("  PSN of request streams: %d streams, %d gaps (%d PSNs "
               "missing), %d retransmissions"
               % (p["streams"], p["gaps"], p["missing_psns"],
                  p["retransmissions"]))
    out.append("  CNP: %d  ECN-CE: %d  PAUSE: %d  PFC: %d"
               % (r["cnp_pkts"], r["ecn_ce_pkts"], r["pause_pkts"],
                  r["pfc_pkts"]))
    fc = r["fec"]
    if fc["fec_repair_pkts"] or fc["fec_negotiation_pkts"]:
        out.append("  FEC: %d repairs (%d match their members' code, %d do "
                   "not, %d uncheckable: members not all captured), %d "
                   "negotiation" % (fc["fec_repair_pkts"],
                                    fc["fec_repairs_match"],
                                    fc["fec_repairs_mismatch"],
                                    fc["fec_repairs_uncheckable"],
                                    fc["fec_negotiation_pkts"]))
    v = r["vrp"]
    if v["vrp_acks"] or v["vrp_nacks"]:
        out.append("  VRP: %d ACKs, %d NACKs naming %d PSNs (%d arrived later), "
                   "%d PSNs reported tolerated, "
                   "%d unchecked (several QPs between the two addresses), "
                   "%d messages with their own tolerance"
                   % (v["vrp_acks"], v["vrp_nacks"], v["vrp_nacked_psns"],
                      v["vrp_nacks_repaired"], v["vrp_acked_tolerated"],
                      v["vrp_unchecked"], v.get("vrp_wr_tol_msgs", 0)))
    if v["vrp_summaries"]:
        out.append("  VRP LOSS summaries: %d, %d exactly the packets their message "
                   "missed in the capture, %d packets reported lost that the capture "
                   "saw arrive (late copies, receiver socket drops), %d unchecked "
                   "(message not captured)"
                   % (v["vrp_summaries"], v["vrp_summaries_match"],
                      v["vrp_summary_extra_pkts"], v["vrp_summaries_unchecked"]))
    if v["vrp_budget_checked_msgs"] or v["vrp_budget_unchecked_msgs"]:
        out.append("  VRP loss budget: %d WRITE messages checked (%d PSNs never "
                   "arrived), %d over their tolerance, %d unchecked (no VTETH "
                   "and no --vrp-tolerance), %d incomplete"
                   % (v["vrp_budget_checked_msgs"], v["vrp_lost_pkts"],
                      v["vrp_budget_over_msgs"], v["vrp_budget_unchecked_msgs"],
                      v["vrp_incomplete_msgs"]))
    out.append("RESULT: %s" % ("OK" if r["ok"] else "FAIL"))
    return "\n".join(out)


def write_json(rep, out_path):
    """Write the report in the project's results envelope (rocewan/1)."""
    doc = {
        "schema": SCHEMA,
        "app": APP,
        "version": checkout.version(),
        "started_utc": rep.started_utc,
        "config": {"file": rep.path},
        "seed": None,
        "results": rep.results(),
    }
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def run(args):
    """Entry point of ``python -m rocewan validate``; returns the exit code."""
    tol = None
    if getattr(args, "vrp_tolerance", None):
        try:
            tol = parse_tolerance(args.vrp_tolerance)
        except ValueError as e:
            print("rocewan validate: --vrp-tolerance: %s" % e)
            return 2
    rep = validate_file(args.file, tol)
    print(summary(rep))
    if args.json:
        write_json(rep, args.json)
    return 1 if rep.failed else 0
