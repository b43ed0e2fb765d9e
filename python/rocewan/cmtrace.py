"""The rdma_cm exchange of a RoCEv2 capture, in a normalised form.

``read_pcap(path)`` decodes every RoCEv2 frame of a capture: the IB CM MADs
on QP1 (IBTA Vol. 1 ch. 12: REQ, MRA, REJ, REP, RTU, DREQ, DREP, SIDR_REQ,
SIDR_REP; the RDMA IP CM private-data header of Annex A11) and the RC/UD
packets of the connected QPs. ``normalise(packets)`` turns that into a list of
plain dicts in which every value that differs from run to run is replaced by
a symbol numbered in order of first appearance:

=============  ==========================================================
symbol         random field
=============  ==========================================================
``cid<n>``     CM communication IDs (local/remote comm ID, SIDR request ID)
``tid<n>``     MAD transaction IDs
``qpn<n>``     QP numbers (REQ/REP local QPN, BTH destination QP, SIDR QPN)
``psn<n>``     starting PSNs (REQ/REP); BTH PSNs become ``psn<n>+k``
``random``     the BTH PSN of QP1's sends (one per MAD, in send order)
``gid<n>``     GIDs and IP addresses (the cma header's, the REQ path's)
``flow<n>``    the REQ's primary flow label (rdma_cm derives it from ports)
``port<n>``    the active side's source port in the cma header
``guid<n>``    CA GUIDs
``rkey<n>``    R_Keys (RETH, and the perftest/rping payload fields)
``va<n>``      virtual addresses (RETH, and the payload fields)
=============  ==========================================================

Everything else (message order and direction, attribute IDs, service IDs,
responder resources, initiator depth, retry counts, CM response timeouts,
MTUs, Q_Keys, P_Keys, the payload bytes outside the listed fields) stays
literal, so two runs of the same programs with the same options compare
equal. ``dir`` is ``c>s`` for packets from the side that sent the first
REQ or SIDR_REQ (the active side), ``s>c`` for the other.

Used for the goldens in tests/golden/cm/ (docs/rdma-cm.md, "perftest -R on
the wire").
"""

import ipaddress
import struct

from . import opcodes
from .pcapio import read_frames

MAD_LEN = 256
MAD_HDR_LEN = 24
CM_CLASS = 0x07
GSI_QKEY = 0x80010000

ATTR_NAMES = {
    0x0001: "ClassPortInfo", 0x0010: "REQ", 0x0011: "MRA", 0x0012: "REJ",
    0x0013: "REP", 0x0014: "RTU", 0x0015: "DREQ", 0x0016: "DREP",
    0x0017: "SIDR_REQ", 0x0018: "SIDR_REP", 0x0019: "LAP", 0x001a: "APR",
}
# Where each message's private data starts inside the 232-byte CM payload,
# and its length (IBTA Vol. 1 12.6)
PRIVATE_DATA = {
    "REQ": (140, 92), "MRA": (10, 222), "REJ": (84, 148), "REP": (36, 196),
    "RTU": (8, 224), "DREQ": (12, 220), "DREP": (8, 224),
    "SIDR_REQ": (16, 216), "SIDR_REP": (96, 136),
}
CMA_HDR_LEN = 36      # the RDMA IP CM Service's private-data header (Annex A11)
RDMA_IP_CM_SID = 0x0000000001000000


class TraceError(Exception):
    """A frame that claims to be RoCEv2 but cannot be decoded."""


def _u24(b, off):
    return int.from_bytes(b[off:off + 3], "big")


def _ip_payload(frame):
    """(src, dst, udp payload) of a RoCEv2 frame, or None for other frames."""
    off = 12
    etype = struct.unpack_from("!H", frame, off)[0]
    while etype in (0x8100, 0x88a8):
        off += 4
        etype = struct.unpack_from("!H", frame, off)[0]
    off += 2
    if etype == 0x0800:
        ihl = (frame[off] & 0x0f) * 4
        if frame[off + 9] != 17:
            return None
        src = str(ipaddress.IPv4Address(frame[off + 12:off + 16]))
        dst = str(ipaddress.IPv4Address(frame[off + 16:off + 20]))
        tot = struct.unpack_from("!H", frame, off + 2)[0]
        end = off + tot
        off += ihl
    elif etype == 0x86dd:
        if frame[off + 6] != 17:
            return None
        src = str(ipaddress.IPv6Address(frame[off + 8:off + 24]))
        dst = str(ipaddress.IPv6Address(frame[off + 24:off + 40]))
        end = off + 40 + struct.unpack_from("!H", frame, off + 4)[0]
        off += 40
    else:
        return None
    if struct.unpack_from("!H", frame, off + 2)[0] != opcodes.ROCE_UDP_PORT:
        return None
    return src, dst, bytes(frame[off + 8:end])


def _cma_hdr(pd):
    """The 36-byte RDMA IP CM header: version, IP version, port, src, dst."""
    ipv = pd[1] >> 4
    if ipv == 4:
        src = str(ipaddress.IPv4Address(pd[16:20]))
        dst = str(ipaddress.IPv4Address(pd[32:36]))
    else:
        src = str(ipaddress.IPv6Address(pd[4:20]))
        dst = str(ipaddress.IPv6Address(pd[20:36]))
    return {"cma_version": pd[0], "ip_version": ipv,
            "port": struct.unpack_from("!H", pd, 2)[0], "src": src, "dst": dst}


def decode_cm(mad):
    """The fields of one CM MAD (bytes of the whole 256-byte MAD)."""
    if len(mad) < MAD_LEN:
        raise TraceError(f"MAD of {len(mad)} bytes, not {MAD_LEN}")
    base, mclass, cver, method = mad[0], mad[1], mad[2], mad[3]
    status, cspec = struct.unpack_from("!HH", mad, 4)
    tid = struct.unpack_from("!Q", mad, 8)[0]
    attr, _, amod = struct.unpack_from("!HHI", mad, 16)
    d = mad[MAD_HDR_LEN:MAD_LEN]
    name = ATTR_NAMES.get(attr, "0x%04x" % attr)
    m = {"mad": name, "base_version": base, "mgmt_class": mclass, "class_version": cver,
         "method": method, "status": status, "class_specific": cspec, "tid": tid,
         "attr_id": attr, "attr_mod": amod}
    if mclass != CM_CLASS:
        m["data"] = d.hex()
        return m
    lcid, rcid = struct.unpack_from("!II", d, 0)
    if name == "REQ":
        m.update(local_comm_id=lcid, service_id=struct.unpack_from("!Q", d, 8)[0],
                 local_ca_guid=struct.unpack_from("!Q", d, 16)[0],
                 local_qkey=struct.unpack_from("!I", d, 28)[0],
                 local_qpn=_u24(d, 32), responder_resources=d[35],
                 local_eecn=_u24(d, 36), initiator_depth=d[39],
                 remote_eecn=_u24(d, 40), remote_cm_response_timeout=d[43] >> 3,
                 transport_service_type=(d[43] >> 1) & 3, e2e_flow_control=d[43] & 1,
                 starting_psn=_u24(d, 44), local_cm_response_timeout=d[47] >> 3,
                 retry_count=d[47] & 7, pkey=struct.unpack_from("!H", d, 48)[0],
                 path_mtu=d[50] >> 4, rdc_exists=(d[50] >> 3) & 1, rnr_retry_count=d[50] & 7,
                 max_cm_retries=d[51] >> 4, srq=(d[51] >> 3) & 1,
                 extended_transport_type=d[51] & 7,
                 primary_local_lid=struct.unpack_from("!H", d, 52)[0],
                 primary_remote_lid=struct.unpack_from("!H", d, 54)[0],
                 primary_local_gid=str(ipaddress.IPv6Address(d[56:72])),
                 primary_remote_gid=str(ipaddress.IPv6Address(d[72:88])),
                 primary_flow_label=struct.unpack_from("!I", d, 88)[0] >> 12,
                 primary_packet_rate=d[91] & 0x3f, primary_traffic_class=d[92],
                 primary_hop_limit=d[93], primary_sl=d[94] >> 4,
                 primary_subnet_local=(d[94] >> 3) & 1, primary_local_ack_timeout=d[95] >> 3,
                 alternate_path=d[96:140].hex())
    elif name == "REP":
        m.update(local_comm_id=lcid, remote_comm_id=rcid,
                 local_qkey=struct.unpack_from("!I", d, 8)[0], local_qpn=_u24(d, 12),
                 local_eecn=_u24(d, 16), starting_psn=_u24(d, 20),
                 responder_resources=d[24], initiator_depth=d[25],
                 target_ack_delay=d[26] >> 3, failover_accepted=(d[26] >> 1) & 3,
                 e2e_flow_control=d[26] & 1, rnr_retry_count=d[27] >> 5, srq=(d[27] >> 4) & 1,
                 local_ca_guid=struct.unpack_from("!Q", d, 28)[0])
    elif name in ("RTU", "DREP", "MRA", "REJ"):
        m.update(local_comm_id=lcid, remote_comm_id=rcid)
        if name == "MRA":
            m.update(message_mraed=d[8] >> 6, service_timeout=d[9] >> 3)
        if name == "REJ":
            m.update(message_rejected=d[8] >> 6, reject_info_length=d[9] >> 1,
                     reason=struct.unpack_from("!H", d, 10)[0], ari=d[12:84].hex())
    elif name == "DREQ":
        m.update(local_comm_id=lcid, remote_comm_id=rcid, remote_qpn_eecn=_u24(d, 8))
    elif name == "SIDR_REQ":
        m.update(request_id=lcid, pkey=struct.unpack_from("!H", d, 4)[0],
                 service_id=struct.unpack_from("!Q", d, 8)[0])
    elif name == "SIDR_REP":
        m.update(request_id=lcid, sidr_status=d[4], ari_length=d[5], qpn=_u24(d, 8),
                 service_id=struct.unpack_from("!Q", d, 12)[0],
                 qkey=struct.unpack_from("!I", d, 20)[0], ari=d[24:96].hex())
    if name in PRIVATE_DATA:
        off, n = PRIVATE_DATA[name]
        pd = d[off:off + n]
        sid = m.get("service_id")
        if name in ("REQ", "SIDR_REQ") and sid is not None and \
                sid & 0xffffffffff000000 == RDMA_IP_CM_SID:
            m["port_space"] = (sid >> 16) & 0xff
            m["service_port"] = sid & 0xffff
            m["cma_hdr"] = _cma_hdr(pd)
            pd = pd[CMA_HDR_LEN:]
        m["private_data"] = pd.hex()
    return m


def read_pcap(path):
    """Every RoCEv2 frame of the capture ``path``, decoded: a list of dicts
    with ``frame`` (0-based), ``src``, ``dst``, the BTH fields and, for a MAD
    to QP1, ``cm`` (decode_cm); for other packets the extension headers and
    ``payload`` (hex, without pad and ICRC)."""
    out = []
    for idx, frame, _ in read_frames(str(path)):
        ip = _ip_payload(frame)
        if ip is None:
            continue
        src, dst, roce = ip
        if len(roce) < opcodes.BTH_LEN + opcodes.ICRC_LEN:
            raise TraceError(f"{path}: frame {idx}: {len(roce)} bytes of RoCEv2")
        op, flags, pkey = roce[0], roce[1], struct.unpack_from("!H", roce, 2)[0]
        info = opcodes.lookup(op)
        if info is None:
            raise TraceError(f"{path}: frame {idx}: reserved opcode 0x{op:02x}")
        p = {"frame": idx, "src": src, "dst": dst, "opcode": info.name,
             "transport": info.transport, "se": flags >> 7, "migreq": (flags >> 6) & 1,
             "pad": (flags >> 4) & 3, "tver": flags & 15, "pkey": pkey,
             "dest_qp": _u24(roce, 5), "ackreq": roce[8] >> 7, "psn": _u24(roce, 9)}
        off = opcodes.BTH_LEN
        for ext in info.exts:
            n = opcodes.EXT_LEN[ext]
            h = roce[off:off + n]
            if ext == opcodes.DETH:
                p["qkey"], p["src_qp"] = struct.unpack_from("!I", h, 0)[0], _u24(h, 5)
            elif ext == opcodes.RETH:
                p["va"], p["rkey"], p["dma_len"] = struct.unpack_from("!QII", h, 0)
            elif ext == opcodes.AETH:
                p["syndrome"], p["msn"] = h[0], _u24(h, 1)
            elif ext == opcodes.IMMDT:
                p["imm"] = struct.unpack_from("!I", h, 0)[0]
            else:
                p[ext.lower()] = h.hex()
            off += n
        payload = roce[off:len(roce) - opcodes.ICRC_LEN - p["pad"]]
        if p["dest_qp"] == 1 and info.transport == "UD":
            p["cm"] = decode_cm(payload)
        else:
            p["payload"] = payload.hex()
        out.append(p)
    return out


def _gid_key(v):
    """One key per address: an IPv4-mapped GID is its IPv4 address."""
    try:
        ip = ipaddress.ip_address(v)
    except ValueError:
        return v
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


class _Syms:
    """Random values -> symbols numbered by first appearance, per kind and,
    when given, per owning side ("c" or "s"): two freshly booted peers often
    pick the same QPN, and each side's must stay its own."""

    def __init__(self):
        self.maps = {}

    def __call__(self, kind, value, side=None):
        if kind == "gid":
            value = _gid_key(value)
        m = self.maps.setdefault((kind, side), {})
        if value not in m:
            m[value] = f"{side + '.' if side else ''}{kind}{len(m)}"
        return m[value]


def _psn_sym(syms, psn_base, psn):
    """psn<n>+k against the closest known starting PSN at or below psn."""
    best = None
    for base, sym in psn_base.items():
        k = (psn - base) & 0xffffff
        if k < 0x800000 and (best is None or k < best[0]):
            best = (k, sym)
    if best is None:
        return syms("psn", psn)
    return best[1] if best[0] == 0 else f"{best[1]}+{best[0]}"


# perftest's 56-byte key message over the rdma_cm channel (struct
# pingpong_dest, every field in network byte order): lid, out_reads, qpn,
# psn, rkey (4 bytes each), 4 bytes of structure padding (uninitialised:
# zero in the first messages, stack bytes later), vaddr (8), gid (16),
# srqn (4), gid_index (4)
PERFTEST_DEST_LEN = 56


def _perftest_dest(syms, b, side):
    lid, out_reads, qpn, psn, rkey = struct.unpack_from("!5I", b, 0)
    vaddr = struct.unpack_from("!Q", b, 24)[0]
    srqn, gid_index = struct.unpack_from("!II", b, 48)
    if not any(b):
        return {"perftest_dest": "zero"}
    return {"perftest_dest": {
        "lid": lid, "out_reads": out_reads, "qpn": syms("qpn", qpn, side),
        "psn": syms("psn", psn, side), "rkey": syms("rkey", rkey, side), "pad": "uninit",
        "vaddr": syms("va", vaddr, side),
        "gid": syms("gid", str(ipaddress.IPv6Address(b[32:48]))), "srqn": srqn,
        "gid_index": gid_index}}


# rping's 16-byte struct rping_rdma_info: buf (8), rkey (4), size (4), all
# big-endian
def _rping_info(syms, b, side):
    buf, rkey, size = struct.unpack_from("!QII", b, 0)
    return {"rping_info": {"buf": syms("va", buf, side), "rkey": syms("rkey", rkey, side),
                           "size": size}}


def _payload(syms, app, d, state, pl):
    """The normalised form of one SEND payload of application ``app``."""
    if app == "perftest":
        if len(pl) == PERFTEST_DEST_LEN:
            return _perftest_dest(syms, pl, d[0])
        if len(pl) == 8:
            # the bw report: size, iters (big-endian u64), bw_peak, bw_avg,
            # msgRate (doubles, run dependent); the server's are never filled
            n = state.setdefault(d, 0)
            state[d] = n + 1
            if d == "s>c":
                return {"report": "uninit"}
            return {"report": int.from_bytes(pl, "big") if n % 5 < 2 else "f64"}
    if app == "rping" and len(pl) == 16:
        return _rping_info(syms, pl, d[0])
    return {"payload": pl.hex()} if len(pl) <= 64 else {}


APPS = ("perftest", "rping", None)


def normalise(packets, app=None):
    """The normalised sequence of ``packets`` (read_pcap): see the module
    docstring. ``app`` ("perftest", "rping" or None) names the program whose
    SEND payloads are decoded, with their random fields replaced; otherwise
    payloads of at most 64 bytes are kept literally (longer ones by length)."""
    if app not in APPS:
        raise ValueError(f"unknown app {app!r}: one of {APPS}")
    syms = _Syms()
    active = None
    for p in packets:
        if "cm" in p and p["cm"]["mad"] in ("REQ", "SIDR_REQ"):
            active = p["src"]
            break
    psn_base = {}
    state = {}
    out = []
    for p in packets:
        d = "c>s" if p["src"] == active else "s>c"
        me, peer = d[0], d[2]           # the sender's side, the receiver's
        syms("gid", p["src"])
        syms("gid", p["dst"])
        if "cm" in p:
            m = dict(p["cm"])
            m["dir"] = d
            m["bth"] = {"opcode": p["opcode"], "pkey": p["pkey"], "dest_qp": p["dest_qp"],
                        "qkey": p.get("qkey"), "src_qp": p.get("src_qp"),
                        "psn": "random", "se": p["se"], "pad": p["pad"]}
            m["tid"] = syms("tid", m["tid"])
            for k, side in (("local_comm_id", me), ("remote_comm_id", peer),
                            ("request_id", "c")):
                if k in m:
                    m[k] = syms("cid", m[k], side) if m[k] else 0
            for k, side in (("local_qpn", me), ("qpn", me), ("remote_qpn_eecn", peer)):
                if k in m and m[k]:
                    m[k] = syms("qpn", m[k], side)
            if "starting_psn" in m:
                base = m["starting_psn"]
                m["starting_psn"] = syms("psn", base, me)
                psn_base[base] = m["starting_psn"]
            if "local_ca_guid" in m:
                m["local_ca_guid"] = syms("guid", m["local_ca_guid"], me)
            if "primary_flow_label" in m:
                m["primary_flow_label"] = syms("flow", m["primary_flow_label"])
            for k in ("primary_local_gid", "primary_remote_gid"):
                if k in m:
                    m[k] = syms("gid", m[k])
            if "cma_hdr" in m:
                h = dict(m["cma_hdr"])
                h["port"] = syms("port", h["port"])
                h["src"], h["dst"] = syms("gid", h["src"]), syms("gid", h["dst"])
                m["cma_hdr"] = h
            out.append(m)
            continue
        q = {"dir": d, "opcode": p["opcode"], "dest_qp": syms("qpn", p["dest_qp"], peer),
             "ackreq": p["ackreq"], "psn": _psn_sym(syms, psn_base, p["psn"]),
             "se": p["se"], "pad": p["pad"], "pkey": p["pkey"]}
        for k in ("qkey", "syndrome", "msn", "imm", "dma_len"):
            if k in p:
                q[k] = p[k]
        if "src_qp" in p:
            q["src_qp"] = syms("qpn", p["src_qp"], me)
        if "va" in p:
            # RETH: the responder's buffer and key
            q["va"], q["rkey"] = syms("va", p["va"], peer), syms("rkey", p["rkey"], peer)
        pl = bytes.fromhex(p["payload"])
        q["len"] = len(pl)
        if "SEND" in p["opcode"]:
            q.update(_payload(syms, app, d, state, pl))
        out.append(q)
    return out


def without_acks(seq):
    """A normalised sequence without RC ACKs: rxe's ACK coalescing depends
    on timing (two runs of the same programs differ there), so comparisons
    of two implementations leave them out."""
    return [m for m in seq if m.get("opcode") != "RC_ACKNOWLEDGE"]


def _flow_key(m):
    """The connection a CM message belongs to (its active side's comm ID or
    SIDR request ID), or the QP a packet goes to."""
    if "mad" in m:
        for k in ("local_comm_id", "remote_comm_id", "request_id"):
            v = m.get(k)
            if isinstance(v, str) and v.startswith("c."):
                return f"cm {v}"
        return "cm ?"
    return f"qp {m['dest_qp']}"


def by_flow(seq):
    """A normalised sequence without ACKs, split into flows: the CM messages
    of each connection, and the packets to each QP, each in its own order.
    Two runs of the same programs interleave independent flows differently
    (perftest's two DREQ/DREP pairs, ucmatose's connections); per flow they
    are equal."""
    flows = {}
    for m in without_acks(seq):
        flows.setdefault(_flow_key(m), []).append(m)
    return flows


def cm_messages(seq):
    """Only the CM MADs of a normalised sequence, as (dir, name) pairs."""
    return [(m["dir"], m["mad"]) for m in seq if "mad" in m]
