"""RoCEv2 invariant CRC (IBTA Annex A17.3.3) for IPv4 and IPv6.

The ICRC is ``zlib.crc32`` over

* 8 bytes of 0xFF (stand-in for the InfiniBand LRH),
* the IP header with its variant fields set to all ones
  (IPv4: TOS, TTL, header checksum;
  IPv6: traffic class, flow label, hop limit),
* the UDP header with the checksum set to 0xFFFF,
* the BTH with byte 4 (FECN, BECN, resv6) set to 0xFF,
* everything after the BTH up to, not including, the 4-byte ICRC.

The wire carries the CRC least-significant byte first. Scapy 2.5 computes it
for IPv4 only (it writes 0 for IPv6); this module does both, from bytes.
"""

import struct
import zlib

from scapy.compat import raw
from scapy.layers.inet import IP
from scapy.layers.inet6 import IPv6

from .layers import BTH

UDP_HLEN = 8
BTH_LEN = 12
ICRC_LEN = 4
IPV6_HLEN = 40
_LRH_STANDIN = b"\xff" * 8


def _ip_hlen(ip):
    version = ip[0] >> 4
    if version == 4:
        return (ip[0] & 0x0f) * 4
    if version == 6:
        return IPV6_HLEN
    raise ValueError("IP version %d is neither 4 nor 6" % version)


def _masked_headers(ip):
    """IP + UDP + BTH of ``ip`` with the variant fields set to all ones."""
    iphl = _ip_hlen(ip)
    h = bytearray(ip[:iphl + UDP_HLEN + BTH_LEN])
    if ip[0] >> 4 == 4:
        h[1] = 0xff                      # TOS (DSCP, ECN)
        h[8] = 0xff                      # TTL
        h[10:12] = b"\xff\xff"           # header checksum
    else:
        h[0] |= 0x0f                     # traffic class, high nibble
        h[1:4] = b"\xff\xff\xff"         # traffic class low nibble, flow label
        h[7] = 0xff                      # hop limit
    h[iphl + 6:iphl + 8] = b"\xff\xff"   # UDP checksum
    h[iphl + UDP_HLEN + 4] = 0xff        # BTH: FECN, BECN, resv6
    return bytes(h)


def compute(ip):
    """ICRC of a RoCEv2 packet given as bytes from the start of the IPv4/IPv6
    header to the end of the ICRC field (the ICRC's own bytes are not hashed).
    Returns the CRC value, i.e. the carried bytes read little-endian."""
    ip = bytes(ip)
    if len(ip) < _ip_hlen(ip) + UDP_HLEN + BTH_LEN + ICRC_LEN:
        raise ValueError("packet too short for IP + UDP + BTH + ICRC "
                         "(%d bytes)" % len(ip))
    hdrs = _masked_headers(ip)
    crc = zlib.crc32(_LRH_STANDIN + hdrs)
    return zlib.crc32(ip[len(hdrs):-ICRC_LEN], crc) & 0xffffffff


def carried(ip):
    """The ICRC stored in the last 4 bytes of ``ip``, read little-endian."""
    return struct.unpack("<I", bytes(ip[-ICRC_LEN:]))[0]


def verify(ip):
    """True if the ICRC carried by ``ip`` (IP header .. ICRC) is right."""
    return compute(ip) == carried(ip)


def to_bth_field(crc):
    """Value for Scapy's ``BTH.icrc`` field (big-endian) that puts ``crc`` on
    the wire least-significant byte first."""
    return struct.unpack(">I", struct.pack("<I", crc))[0]


def from_bth_field(value):
    """Inverse of :func:`to_bth_field`: the CRC value a ``BTH.icrc`` holds."""
    return to_bth_field(value)


def ip_layer(pkt):
    """The IP or IPv6 layer a RoCEv2 Scapy packet is carried in."""
    for cls in (IP, IPv6):
        if cls in pkt:
            return pkt[cls]
    raise ValueError("packet has no IP or IPv6 layer")


def ip_bytes(pkt):
    """Bytes of the IP packet in ``pkt``, Ethernet padding excluded."""
    ip = ip_layer(pkt)
    b = raw(ip)
    if isinstance(ip, IP):
        return b[:ip.len] if ip.len is not None else b
    return b[:IPV6_HLEN + ip.plen] if ip.plen is not None else b


def fill(pkt):
    """Set ``pkt[BTH].icrc`` to the right ICRC (IPv4 or IPv6) and return
    ``pkt``. Length and checksum fields left as None are computed by Scapy;
    the UDP checksum, which covers the ICRC, is computed after it."""
    pkt[BTH].icrc = 0
    crc = compute(ip_bytes(pkt.__class__(raw(pkt))))
    pkt[BTH].icrc = to_bth_field(crc)
    return pkt
