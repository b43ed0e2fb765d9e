# SPDX-License-Identifier: BSD-3-Clause
"""Scapy ``fuzz()`` frames per layer for the hostile storms.

Each layer's frames come from Scapy's ``fuzz()``, which fills every field the frame
does not set with a random value drawn from Python's ``random`` module. The module is
seeded once per layer (``random.seed(seed + index)``) and every frame is built to bytes
at once, so a run sends the same frames every time (Debian's Scapy 2.5).

Layers (N frames each, ``N = PER_LAYER``):

- ``roce``: RoCEv2 to the target's MAC, IP and UDP port 4791; BTH and the extension
  headers of its opcode (``scapy.contrib.roce`` and ``rocewan.layers``: RETH, DETH,
  AETH, AtomicETH, AtomicAckETH, ImmDt, IETH and the project's SPETH/NTETH/VTETH)
  fuzzed, with a random payload. A quarter each: a valid opcode, the rest fuzzed, the
  ICRC computed over the fuzzed headers (right); everything fuzzed, the opcode and the
  ICRC too; a valid opcode with transport version and pad count 0 and a payload only
  where the opcode carries one (so the parser reads on to the ICRC), ICRC right; the same with a random ICRC.
- ``pfc``: MAC control frames (EtherType 0x8808) to 01:80:c2:00:00:01, a quarter each:
  a valid 802.1Qbb PFC with a fuzzed class-enable vector and quanta; the same with the
  reserved upper byte of the vector fuzzed; the opcode fuzzed too; another MAC control
  opcode of ``scapy.contrib.mac_control`` (802.3x PAUSE, MPCP) with its fields fuzzed.
- ``arp``: fuzzed ARP (hardware and protocol types and lengths, opcode, addresses);
  every other one asks for the target's IP.
- ``nd``: IPv6 from fe80::1 with a fuzzed ICMPv6 neighbour discovery message (NS, NA,
  RS, RA, redirect) and a fuzzed link-layer address option.
- ``ipudp``: IPv4/UDP to the target's MAC with fuzzed IP and UDP headers (version, IHL,
  lengths, flags, protocol, ports, checksums) and a random payload; even frames keep
  the target's IP.

Plus two hand-made families that are not fuzz() but share the reconciliation:

- ``oversized``: a valid RoCEv2 SEND ONLY (correct ICRC) of 9000 bytes and more, larger
  than the receiving port's af_packet frame and mbuf data room (2048 B at the rnic, 4608
  B at the middle boxes): the veths carry a 9216-byte MTU so the kernel hands them on.
- ``over_mtu``: a valid RoCEv2 SEND ONLY of 1100-1400 bytes of payload, larger than the
  rnic's 1024-byte RoCE MTU but within the port's frame.
- ``runt``: a valid RoCEv2 frame cut at a random byte between 14 and 59 (shorter than
  the Ethernet minimum, not padded).
"""
import random

PER_LAYER = 200
LAYERS = ["roce", "pfc", "arp", "nd", "ipudp", "oversized", "over_mtu", "runt"]


def _roce_base(smac, dmac, sip, dip):
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    return (Ether(src=smac, dst=dmac) / IP(src=sip, dst=dip, flags="DF")
            / UDP(sport=0xC000, dport=4791, chksum=0))


def _roce(smac, dmac, sip, dip, i):
    from scapy.packet import Raw, fuzz
    from scapy.volatile import RandBin, RandNum

    from rocewan import opcodes as ops
    from rocewan.layers import BTH, EXT_CLASSES

    base = _roce_base(smac, dmac, sip, dip)
    kind = i % 4
    # fuzz() leaves fields whose default is None alone (the ICRC: computed), so a wrong
    # ICRC is drawn here
    if kind == 1:  # everything fuzzed: the opcode and the ICRC too
        op = random.randrange(256)
        bth = BTH(icrc=random.getrandbits(32))
    else:
        op = random.choice(sorted(ops.OPCODES))
        # 0: the rest of the BTH fuzzed, ICRC right; 2: transport version and pad count
        # 0 (so the parser reads on), ICRC right; 3: as 2 with a random ICRC
        kw = {} if kind == 0 else {"version": 0, "padcount": 0}
        kw["icrc"] = random.getrandbits(32) if kind == 3 else None
        bth = BTH(opcode=op, **kw)
    hdr = bth
    for e in (ops.OPCODES[op].exts if op in ops.OPCODES else ()):
        hdr = hdr / EXT_CLASSES[e]()
    n = int(RandNum(0, 256))
    if kind >= 2:  # a payload only where the opcode has one, whole 4-byte words
        n = n // 4 * 4 if ops.OPCODES[op].payload else 0
    return bytes(base / fuzz(hdr) / Raw(bytes(RandBin(n))))


def _pfc(smac, i):
    from scapy.contrib import mac_control as mc
    from scapy.packet import fuzz
    from scapy.layers.l2 import Ether

    eth = Ether(src=smac, dst="01:80:c2:00:00:01", type=0x8808)
    pfc = mc.MACControlClassBasedFlowControl
    if i % 4 == 0:  # a valid PFC: random class-enable vector and quanta
        return bytes(eth / fuzz(pfc(_op_code=0x0101, _reserved=0)))
    if i % 4 == 1:  # the reserved upper byte of the vector fuzzed too
        return bytes(eth / fuzz(pfc(_op_code=0x0101)))
    if i % 4 == 2:  # the opcode fuzzed too
        return bytes(eth / fuzz(pfc()))
    # another MAC control opcode (802.3x PAUSE, the EPON MPCP ones), its fields fuzzed
    cls = random.choice([c for _, c in sorted(mc.MAC_CTRL_CLASSES.items())])
    return bytes(eth / fuzz(cls(_op_code=cls()._op_code)))


def _arp(smac, dip, i):
    from scapy.layers.l2 import ARP, Ether
    from scapy.packet import fuzz
    kw = {"pdst": dip} if i % 2 == 0 else {}
    return bytes(Ether(src=smac, dst="ff:ff:ff:ff:ff:ff") / fuzz(ARP(**kw)))


def _nd(smac, i):
    from scapy.layers import inet6 as v6
    from scapy.layers.l2 import Ether
    from scapy.packet import fuzz
    msg = [v6.ICMPv6ND_NS, v6.ICMPv6ND_NA, v6.ICMPv6ND_RS, v6.ICMPv6ND_RA, v6.ICMPv6ND_Redirect][i % 5]
    opt = v6.ICMPv6NDOptSrcLLAddr() if i % 2 == 0 else v6.ICMPv6NDOptDstLLAddr()
    return bytes(Ether(src=smac, dst="33:33:ff:00:00:01")
                 / v6.IPv6(src="fe80::1", dst="ff02::1:ff00:1", hlim=255)
                 / fuzz(msg() / opt))


def _ipudp(smac, dmac, dip, i):
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw, fuzz
    from scapy.volatile import RandBin, RandNum
    ip = IP(dst=dip) if i % 2 == 0 else IP()
    return bytes(Ether(src=smac, dst=dmac) / fuzz(ip / UDP()) / Raw(bytes(RandBin(RandNum(0, 200)))))


def _send_only(smac, dmac, sip, dip, payload_len):
    from scapy.packet import Raw
    from rocewan.layers import BTH
    return bytes(_roce_base(smac, dmac, sip, dip)
                 / BTH(opcode=0x04, dqpn=random.randrange(0x100, 1 << 24), psn=random.randrange(1 << 24),
                       icrc=None)
                 / Raw(bytes(random.randrange(256) for _ in range(payload_len))))


def layer_frames(layer, smac, dmac, sip, dip, n=PER_LAYER, seed=15):
    """n frames of one layer, reproducible: the RNG is seeded per layer."""
    random.seed(seed + LAYERS.index(layer))
    out = []
    for i in range(n):
        if layer == "roce":
            f = _roce(smac, dmac, sip, dip, i)
        elif layer == "pfc":
            f = _pfc(smac, i)
        elif layer == "arp":
            f = _arp(smac, dip, i)
        elif layer == "nd":
            f = _nd(smac, i)
        elif layer == "ipudp":
            f = _ipudp(smac, dmac, dip, i)
        elif layer == "oversized":
            f = _send_only(smac, dmac, sip, dip, random.randrange(9000, 9150))
        elif layer == "over_mtu":
            f = _send_only(smac, dmac, sip, dip, random.randrange(1100, 1400))
        elif layer == "runt":
            f = _send_only(smac, dmac, sip, dip, 64)[:random.randrange(14, 60)]
        else:
            raise ValueError(layer)
        out.append(f)
    return out


def all_frames(smac, dmac, sip, dip, n=PER_LAYER, seed=15):
    """{layer: [frames]} for every layer."""
    return {layer: layer_frames(layer, smac, dmac, sip, dip, n, seed) for layer in LAYERS}
