"""``rocewan validate``: check every RoCEv2 packet of a capture.

For each frame addressed to UDP port 4791 it checks the ICRC (IPv4 and IPv6)
and the header consistency :func:`rocewan.frame.decode` enforces; it follows
the PSN of every request stream (gaps and retransmissions are counted, not
failures); and it counts CNPs, ECN-CE marks and 802.3 MAC Control frames
(PAUSE, PFC). lib/fec's repair and negotiation frames (opcodes 0xD0/0xD1,
docs/fec.md) are checked too: ICRC, FRH ranges, and each repair against the
XOR / Reed-Solomon code of its members when they are in the capture. VRP
ACKs and NACKs (opcodes 0xE0/0xE1, docs/vrp.md) are checked against the
requests of their stream in the capture (:class:`VrpChecker`). A capture
fails when any RoCEv2 frame fails a check.
"""

import datetime
import json
import os
import subprocess
import struct

from . import fec
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
}
VTETH_F_LOSS, VTETH_F_WINDOW, VTETH_F_BURST = 1, 2, 4
VTETH_F_ALL = 7
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

    def __init__(self):
        self.seen = {}       # (req src, req dst) -> {dqpn: set of PSNs}
        self.pending = {}    # (req src, req dst) -> NACKed PSNs not yet seen
        self.given_up = {}   # (req src, req dst) -> PSNs an ACK's run reported tolerated
        self.msgs = {}       # (req src, req dst) -> {first PSN: VrpMessage} (VTETH seen)
        self.counts = {"vrp_acks": 0, "vrp_nacks": 0, "vrp_nacked_psns": 0,
                       "vrp_nacks_repaired": 0, "vrp_acked_tolerated": 0,
                       "vrp_unchecked": 0, "vrp_wr_tol_msgs": 0}

    def add_request(self, rec):
        """A request packet: None, or the error kind of a bad VTETH."""
        key = (rec["ip"]["src"], rec["ip"]["dst"])
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


class Report:
    """Counters of one capture; feed frames with :meth:`add`."""

    def __init__(self, path):
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
        self.vrp = VrpChecker()

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
        bad = self._vrp(d.rec)
        if bad:
            err = self.errors.setdefault(bad, [0, idx])
            err[0] += 1
            return
        self.roce_ok += 1
        self._track_psn(idx, d.rec)
        self.fec.add_data(buf)

    def _vrp(self, rec):
        op = rec["bth"]["opcode"]
        if op in (ops.VRP_ACK_OPCODE, ops.VRP_NACK_OPCODE):
            return self.vrp.add_notice(rec)
        info = ops.lookup(op)
        if info is not None and info.request and info.transport == "RC":
            return self.vrp.add_request(rec)
        return None

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


def validate_file(path):
    """Read ``path`` and return its :class:`Report`."""
    rep = Report(path)
    for idx, buf, wire_len in read_frames(path):
        rep.add(idx, buf, wire_len)
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
    out.append("RESULT: %s" % ("OK" if r["ok"] else "FAIL"))
    return "\n".join(out)


def _version():
    """``git describe`` of the checkout this package lives in, or
    "unknown"."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, "describe", "--always",
                              "--dirty", "--tags"], capture_output=True,
                             text=True, timeout=5, check=True)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def write_json(rep, out_path):
    """Write the report in the project's results envelope (rocewan/1)."""
    doc = {
        "schema": SCHEMA,
        "app": APP,
        "version": _version(),
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
    rep = validate_file(args.file)
    print(summary(rep))
    if args.json:
        write_json(rep, args.json)
    return 1 if rep.failed else 0
