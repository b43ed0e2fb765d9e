"""Build RoCEv2 frames with Scapy from a *spec*: a dict shaped like a
``rocewire parse`` record (the same keys :mod:`rocewan.frame` produces), so
that what was asked for can be compared field by field with what a decoder
reports.

A spec holds ``vlan`` (None or {"pcp", "vid"}), ``ip`` (ver, src, dst, tos,
ttl, flow), ``udp`` (sport), ``bth`` (opcode, se, m, tver, pkey, fecn, becn,
dqpn, a, psn, and optionally pad), the extension header entries the opcode
needs (``reth``, ``aeth``, ``deth``, ``immdt``, ``ieth``, ``atomiceth``,
``atomicacketh``, and rocewan's ``speth``, ``nteth``, ``vteth``) and
``payload`` (bytes). Missing extension header entries are zeros. Lengths,
checksums, pad bytes and the ICRC (unless the spec gives ``icrc``, the
value to carry) are filled in; the result is padded to the
60-byte Ethernet minimum.
"""

from scapy.compat import raw
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Padding, Raw

from . import icrc
from . import opcodes as ops
from .layers import (AETH, BTH, DETH, IETH, NTETH, RETH, SPETH, VLETH,
                     VLETH_HOLES, VTETH, VTETH_CRIT, AtomicAckETH, AtomicETH,
                     CNPPadding, ImmDt)

ETH_MIN_FRAME = 60
DEFAULT_SRC_MAC = "02:00:00:00:00:01"
DEFAULT_DST_MAC = "02:00:00:00:00:02"


def _l2(spec):
    eth = Ether(src=spec.get("eth_src", DEFAULT_SRC_MAC),
                dst=spec.get("eth_dst", DEFAULT_DST_MAC))
    vlan = spec.get("vlan")
    if vlan:
        eth = eth / Dot1Q(prio=vlan["pcp"], vlan=vlan["vid"])
    return eth


def _l3_udp(spec):
    ip = spec["ip"]
    if ip["ver"] == 4:
        l3 = IP(src=ip["src"], dst=ip["dst"], tos=ip.get("tos", 0),
                ttl=ip.get("ttl", 64), id=ip.get("id", 0), flags="DF")
        csum = 0      # RoCEv2 over IPv4 sends no UDP checksum
    else:
        l3 = IPv6(src=ip["src"], dst=ip["dst"], tc=ip.get("tos", 0),
                  fl=ip.get("flow", 0), hlim=ip.get("ttl", 64))
        csum = None   # mandatory for IPv6: Scapy computes it
    udp = UDP(sport=spec.get("udp", {}).get("sport", 0xc000),
              dport=ops.ROCE_UDP_PORT, chksum=csum)
    return l3 / udp


def pad_count(payload_len):
    """Pad bytes that bring ``payload_len`` to a multiple of 4 (IBTA 9.2)."""
    return -payload_len & 3


def _bth(spec, payload_len):
    b = spec["bth"]
    pad = b.get("pad")
    return BTH(opcode=b["opcode"], solicited=b.get("se", 0),
               migreq=b.get("m", 0),
               padcount=pad_count(payload_len) if pad is None else pad,
               version=b.get("tver", 0), pkey=b.get("pkey", 0xffff),
               fecn=b.get("fecn", 0), becn=b.get("becn", 0),
               dqpn=b.get("dqpn", 0), ackreq=b.get("a", 0),
               psn=b.get("psn", 0), icrc=0)


def _ext(name, spec):
    """Scapy layer for extension header ``name`` from the spec's entry."""
    if name == ops.DETH:
        h = spec.get("deth", {})
        return DETH(qkey=h.get("qkey", 0), srcqp=h.get("sqpn", 0))
    if name == ops.RETH:
        h = spec.get("reth", {})
        return RETH(va=h.get("va", 0), rkey=h.get("rkey", 0),
                    dmalen=h.get("dlen", 0))
    if name == ops.ATOMICETH:
        h = spec.get("atomiceth", {})
        return AtomicETH(va=h.get("va", 0), rkey=h.get("rkey", 0),
                         swapadd=h.get("swap", 0), compare=h.get("cmp", 0))
    if name == ops.AETH:
        h = spec.get("aeth", {})
        return AETH(syndrome=h.get("syndrome", 0), msn=h.get("msn", 0))
    if name == ops.ATOMICACKETH:
        return AtomicAckETH(orig=spec.get("atomicacketh", {}).get("orig", 0))
    if name == ops.IMMDT:
        return ImmDt(imm=spec.get("immdt", 0))
    if name == ops.IETH:
        return IETH(rkey=spec.get("ieth", 0))
    if name == ops.SPETH:
        h = spec.get("speth", {})
        return SPETH(wqe_seq=h.get("wqe_seq", 0), offset=h.get("offset", 0))
    if name == ops.NTETH:
        h = spec.get("nteth", {})
        return NTETH(run=h.get("run", 0), psn=h.get("psn", 0))
    if name == ops.VTETH:
        h = spec.get("vteth", {})
        crit = list(h.get("crit", [])) + [[0, 0]] * VTETH_CRIT
        kw = {}
        for i in range(VTETH_CRIT):
            kw["crit%d_off" % i], kw["crit%d_len" % i] = crit[i]
        return VTETH(flags=h.get("flags", 0), n_crit=h.get("n_crit", 0),
                     loss_bp=h.get("loss_bp", 0), window=h.get("window", 0),
                     max_burst=h.get("max_burst", 0), **kw)
    if name == ops.VLETH:
        h = spec.get("vleth", {})
        holes = list(h.get("holes", [])) + [[0, 0]] * VLETH_HOLES
        kw = {}
        for i in range(VLETH_HOLES):
            kw["hole%d_off" % i], kw["hole%d_len" % i] = holes[i]
        return VLETH(len=h.get("len", 0), lost_pkts=h.get("lost_pkts", 0),
                     lost_bytes=h.get("lost_bytes", 0),
                     n_holes=h.get("n_holes", 0), flags=h.get("flags", 0),
                     **kw)
    return CNPPadding()


def transport(spec):
    """BTH, extension headers, payload and pad bytes for ``spec``. Raises
    ValueError for a reserved opcode."""
    op = ops.lookup(spec["bth"]["opcode"])
    if op is None:
        raise ValueError("opcode 0x%02x is reserved" % spec["bth"]["opcode"])
    payload = bytes(spec.get("payload", b""))
    pkt = _bth(spec, len(payload))
    for name in op.exts:
        pkt = pkt / _ext(name, spec)
    pad = pkt.padcount
    if payload or pad:
        pkt = pkt / Raw(payload + b"\x00" * pad)
    return pkt


def build(spec):
    """Scapy Ether frame for ``spec`` with lengths, checksums and ICRC set."""
    pkt = _l2(spec) / _l3_udp(spec) / transport(spec)
    if spec.get("icrc") is not None:
        pkt[BTH].icrc = icrc.to_bth_field(spec["icrc"])
    else:
        icrc.fill(pkt)
    short = ETH_MIN_FRAME - len(raw(pkt))
    if short > 0:
        pkt = pkt / Padding(b"\x00" * short)
    return pkt


def build_bytes(spec):
    """:func:`build`, as bytes."""
    return raw(build(spec))


def wrap(spec, transport_bytes):
    """Frame with the Ethernet, IP and UDP headers of ``spec`` around
    arbitrary ``transport_bytes`` (BTH onwards, ICRC excluded), followed by
    an ICRC computed over them (zeros when there is no room for a BTH).
    Lengths and checksums are right, so the transport bytes are all a
    decoder can object to: for negative tests."""
    def frame(crc):
        return raw(_l2(spec) / _l3_udp(spec) /
                   Raw(bytes(transport_bytes) + crc.to_bytes(4, "little")))

    first = frame(0)
    crc = 0
    if len(transport_bytes) >= ops.BTH_LEN:
        crc = icrc.compute(icrc.ip_bytes(Ether(first)))
    b = frame(crc)
    return b + b"\x00" * max(0, ETH_MIN_FRAME - len(b))


def transport_bytes(spec):
    """BTH, extension headers, payload and pad of ``spec`` as bytes (no
    ICRC): the input :func:`wrap` takes."""
    return raw(transport(spec))[:-ops.ICRC_LEN]
