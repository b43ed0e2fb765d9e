"""Decode and check one Ethernet frame carrying RoCEv2.

:func:`decode` dissects a frame with Scapy and the layers of
:mod:`rocewan.layers`, checks the lengths on the raw bytes, and returns a
:class:`Decoded` whose ``rec`` has the same shape as one line of
``rocewire parse`` (see tools/rocewire): keys are filled as far as decoding
got, and ``err`` names the first problem found, with the names lib/net and
lib/roce use (``TRUNC_BTH``, ``BAD_ICRC``, ...).

The checks run in wire order: Ethernet, optional 802.1Q tag, IPv4/IPv6
lengths (and the IPv4 header checksum), UDP length, BTH (opcode known,
TVer 0), extension headers present, pad count, payload allowed, ICRC.
"""

import ipaddress
import struct

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.utils import checksum

from . import icrc as icrc_mod
from . import opcodes as ops
from .layers import (AETH, BTH, DETH, IETH, NTETH, RETH, SPETH, VLETH,
                     VLETH_HOLES, VTETH, VTETH_CRIT, AtomicAckETH, AtomicETH,
                     ImmDt)

ETH_HLEN = 14
VLAN_HLEN = 4
IPV4_HLEN = 20
IPV6_HLEN = 40
UDP_HLEN = 8
ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_IPV6 = 0x86DD
ETHERTYPE_VLAN = 0x8100
ETHERTYPE_MAC_CTRL = 0x8808
IPPROTO_UDP = 17

# Errors that mean "this is not a RoCEv2 frame" rather than "broken RoCEv2".
NOT_ROCE = frozenset(("BAD_ETHERTYPE", "NOT_UDP", "NOT_ROCE_PORT"))

ERR_TEXT = {
    "OK": "ok",
    "TRUNC_ETH": "frame shorter than the Ethernet header",
    "TRUNC_VLAN": "frame ends inside the 802.1Q tag",
    "BAD_ETHERTYPE": "EtherType is neither IPv4 nor IPv6",
    "TRUNC_IP": "frame ends inside the IP header",
    "BAD_IP_VERSION": "IP version field does not match the EtherType",
    "BAD_IP_HLEN": "IPv4 header length below 20 bytes or past the frame",
    "BAD_IP_LEN": "IP total/payload length disagrees with the frame length",
    "BAD_IP_CSUM": "IPv4 header checksum is wrong",
    "IP_FRAGMENT": "IPv4 fragment (RoCEv2 is never fragmented)",
    "NOT_UDP": "IP protocol / next header is not UDP",
    "TRUNC_UDP": "frame ends inside the UDP header",
    "BAD_UDP_LEN": "UDP length disagrees with the IP length",
    "NOT_ROCE_PORT": "UDP destination port is not 4791",
    "TRUNC_BTH": "UDP payload shorter than BTH + ICRC",
    "BAD_OPCODE": "BTH opcode is reserved or unsupported",
    "BAD_TVER": "BTH transport header version is not 0",
    "TRUNC_EXT": "packet ends inside an extension header",
    "BAD_PAD": "pad count larger than the payload or not allowed for the "
               "opcode",
    "PAYLOAD_NOT_ALLOWED": "opcode carries no payload but bytes follow",
    "BAD_ICRC": "ICRC mismatch",
}
"""error name -> one-line description (the same list as lib/net's)"""


class FrameError(Exception):
    """Decoding stopped; ``kind`` is one of :data:`ERR_TEXT`."""

    def __init__(self, kind):
        super().__init__(kind)
        self.kind = kind


class Decoded:
    """Result of :func:`decode`.

    ``rec``: dict shaped like a ``rocewire parse`` line; ``err``: first error
    name ("OK" if none); ``roce``: the frame is addressed to UDP port 4791
    (whether or not it is well formed); ``ethertype``: EtherType after any
    802.1Q tag, or None; ``pkt``: the Scapy dissection (Ether), or None;
    ``bth``: the Scapy BTH (with the layers after it), or None; ``ip``: the
    bytes of the IP packet (header to ICRC), when known.
    """

    def __init__(self, idx, buf):
        self.rec = {"idx": idx, "len": len(buf), "roce": False, "err": "OK"}
        self.buf = buf
        self.pkt = None
        self.bth = None
        self.ethertype = None
        self.l3_off = None
        self.ip = None
        self.roce = False

    @property
    def err(self):
        return self.rec["err"]

    @property
    def failed(self):
        """True if this is a RoCEv2 frame with an error."""
        return self.roce and self.err != "OK"


def _l2(d):
    """Ethernet and at most one 802.1Q tag; sets ethertype and l3_off."""
    buf = d.buf
    if len(buf) < ETH_HLEN:
        raise FrameError("TRUNC_ETH")
    d.pkt = Ether(buf)
    etype = struct.unpack_from(">H", buf, 12)[0]
    d.l3_off = ETH_HLEN
    if etype == ETHERTYPE_VLAN:
        if len(buf) < ETH_HLEN + VLAN_HLEN:
            raise FrameError("TRUNC_VLAN")
        tag = d.pkt[Dot1Q]
        d.rec["vlan"] = {"pcp": tag.prio, "vid": tag.vlan}
        etype = tag.type
        d.l3_off += VLAN_HLEN
    else:
        d.rec["vlan"] = None
    d.ethertype = etype
    if etype not in (ETHERTYPE_IPV4, ETHERTYPE_IPV6):
        raise FrameError("BAD_ETHERTYPE")


def _peek_roce_port(d):
    """Decide whether the frame is meant for RoCEv2 (UDP dport 4791) from the
    raw bytes, before any length check, so that broken RoCEv2 frames count as
    RoCEv2."""
    b = d.buf[d.l3_off:]
    if d.ethertype == ETHERTYPE_IPV4 and len(b) >= IPV4_HLEN:
        hl, proto = (b[0] & 0x0f) * 4, b[9]
    elif d.ethertype == ETHERTYPE_IPV6 and len(b) >= IPV6_HLEN:
        hl, proto = IPV6_HLEN, b[6]
    else:
        return False
    if proto != IPPROTO_UDP or len(b) < hl + 4:
        return False
    return struct.unpack_from(">H", b, hl + 2)[0] == ops.ROCE_UDP_PORT


def _ipv4(d, b):
    if len(b) < IPV4_HLEN:
        raise FrameError("TRUNC_IP")
    if b[0] >> 4 != 4:
        raise FrameError("BAD_IP_VERSION")
    hlen = (b[0] & 0x0f) * 4
    if hlen < IPV4_HLEN or hlen > len(b):
        raise FrameError("BAD_IP_HLEN")
    ip = d.pkt[IP]
    if ip.len < hlen or ip.len > len(b):
        raise FrameError("BAD_IP_LEN")
    if ip.flags.MF or ip.frag:
        raise FrameError("IP_FRAGMENT")
    d.rec["ip"] = {"ver": 4, "src": ip.src, "dst": ip.dst, "tos": ip.tos,
                   "dscp": ip.tos >> 2, "ecn": ip.tos & 3, "ttl": ip.ttl,
                   "flow": 0}
    d.ip = b[:ip.len]
    if checksum(b[:hlen]) != 0:
        raise FrameError("BAD_IP_CSUM")
    return hlen, ip.proto


def _ipv6(d, b):
    if len(b) < IPV6_HLEN:
        raise FrameError("TRUNC_IP")
    if b[0] >> 4 != 6:
        raise FrameError("BAD_IP_VERSION")
    ip = d.pkt[IPv6]
    if ip.plen > len(b) - IPV6_HLEN:
        raise FrameError("BAD_IP_LEN")
    d.rec["ip"] = {"ver": 6,
                   "src": ipaddress.IPv6Address(ip.src).compressed,
                   "dst": ipaddress.IPv6Address(ip.dst).compressed,
                   "tos": ip.tc, "dscp": ip.tc >> 2, "ecn": ip.tc & 3,
                   "ttl": ip.hlim, "flow": ip.fl}
    d.ip = b[:IPV6_HLEN + ip.plen]
    return IPV6_HLEN, ip.nh


def _l3_udp(d):
    """IP and UDP headers; leaves d.ip as the IP packet (header .. ICRC)."""
    b = d.buf[d.l3_off:]
    if d.ethertype == ETHERTYPE_IPV4:
        hlen, proto = _ipv4(d, b)
    else:
        hlen, proto = _ipv6(d, b)
    if proto != IPPROTO_UDP:
        raise FrameError("NOT_UDP")
    if len(d.ip) - hlen < UDP_HLEN:
        raise FrameError("TRUNC_UDP")
    udp = d.pkt[UDP]
    d.rec["udp"] = {"sport": udp.sport, "dport": udp.dport, "len": udp.len,
                    "csum": udp.chksum}
    if udp.len != len(d.ip) - hlen:
        raise FrameError("BAD_UDP_LEN")
    if udp.dport != ops.ROCE_UDP_PORT:
        raise FrameError("NOT_ROCE_PORT")
    return udp.len - UDP_HLEN


def _bth(d, roce_len):
    """BTH fields; returns the opcode's OpInfo."""
    if roce_len < ops.BTH_LEN + ops.ICRC_LEN:
        raise FrameError("TRUNC_BTH")
    # dissect from the UDP payload rather than trusting Scapy's port-based
    # guess on the whole frame (UDP sport 53 would make it DNS)
    d.bth = bth = BTH(d.ip[-roce_len:])
    d.rec["bth"] = {
        "opcode": bth.opcode, "name": ops.name(bth.opcode),
        "se": bth.solicited, "m": bth.migreq, "pad": bth.padcount,
        "tver": bth.version, "pkey": bth.pkey, "fecn": bth.fecn,
        "becn": bth.becn, "dqpn": bth.dqpn, "a": bth.ackreq, "psn": bth.psn,
    }
    op = ops.lookup(bth.opcode)
    if op is None:
        raise FrameError("BAD_OPCODE")
    if bth.version != 0:
        raise FrameError("BAD_TVER")
    if roce_len < op.hdr_len + ops.ICRC_LEN:
        raise FrameError("TRUNC_EXT")
    return op


def _ext_fields(pkt):
    """Record entries of the extension headers present in ``pkt``."""
    out = {}
    if DETH in pkt:
        h = pkt[DETH]
        out["deth"] = {"qkey": h.qkey, "sqpn": h.srcqp}
    if RETH in pkt:
        h = pkt[RETH]
        out["reth"] = {"va": h.va, "rkey": h.rkey, "dlen": h.dmalen}
    if AtomicETH in pkt:
        h = pkt[AtomicETH]
        out["atomiceth"] = {"va": h.va, "rkey": h.rkey, "swap": h.swapadd,
                            "cmp": h.compare}
    if AETH in pkt:
        h = pkt[AETH]
        out["aeth"] = {"syndrome": h.syndrome, "msn": h.msn}
    if AtomicAckETH in pkt:
        out["atomicacketh"] = {"orig": pkt[AtomicAckETH].orig}
    if ImmDt in pkt:
        out["immdt"] = pkt[ImmDt].imm
    if IETH in pkt:
        out["ieth"] = pkt[IETH].rkey
    if SPETH in pkt:
        out["speth"] = {"wqe_seq": pkt[SPETH].wqe_seq,
                        "offset": pkt[SPETH].offset}
    if NTETH in pkt:
        out["nteth"] = {"run": pkt[NTETH].run, "psn": pkt[NTETH].psn}
    if VTETH in pkt:
        h = pkt[VTETH]
        out["vteth"] = {"flags": h.flags, "n_crit": h.n_crit,
                        "loss_bp": h.loss_bp, "window": h.window,
                        "max_burst": h.max_burst,
                        "crit": [[getattr(h, "crit%d_off" % i),
                                  getattr(h, "crit%d_len" % i)]
                                 for i in range(VTETH_CRIT)]}
    if VLETH in pkt:
        h = pkt[VLETH]
        out["vleth"] = {"len": h.len, "lost_pkts": h.lost_pkts,
                        "lost_bytes": h.lost_bytes, "n_holes": h.n_holes,
                        "flags": h.flags,
                        "holes": [[getattr(h, "hole%d_off" % i),
                                   getattr(h, "hole%d_len" % i)]
                                  for i in range(VLETH_HOLES)]}
    return out


def _payload_and_icrc(d, op, roce_len):
    """Extension headers, pad/payload rules and the ICRC."""
    d.rec.update(_ext_fields(d.bth))
    body = roce_len - op.hdr_len - ops.ICRC_LEN   # payload + pad
    pad = d.rec["bth"]["pad"]
    if not op.payload:
        if pad:
            raise FrameError("BAD_PAD")
        if body:
            raise FrameError("PAYLOAD_NOT_ALLOWED")
    elif pad > body:
        raise FrameError("BAD_PAD")
    d.rec["payload_len"] = body - pad
    d.rec["icrc"] = icrc_mod.carried(d.ip)
    d.rec["icrc_ok"] = icrc_mod.compute(d.ip) == d.rec["icrc"]
    if not d.rec["icrc_ok"]:
        raise FrameError("BAD_ICRC")


def decode(buf, idx=0):
    """Decode one captured frame (bytes, Ethernet first). Never raises on
    malformed input: problems end up in ``Decoded.err``."""
    d = Decoded(idx, bytes(buf))
    try:
        _l2(d)
        d.roce = _peek_roce_port(d)
        roce_len = _l3_udp(d)
        d.roce = True
        op = _bth(d, roce_len)
        _payload_and_icrc(d, op, roce_len)
    except FrameError as e:
        d.rec["err"] = e.kind
    d.rec["roce"] = d.roce
    return d
