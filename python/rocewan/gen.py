"""Seeded random RoCEv2 frame specs for :func:`rocewan.build.build`.

Every spec is valid: the opcode is a defined one, payload only where the
opcode allows it, pad count matching the payload length. Fields are drawn
over their whole range so that bit-layout mistakes show up.
"""

import ipaddress
import random

from . import opcodes as ops
from .build import build_bytes
from .pcapio import write_frames

# Payload lengths worth hitting on purpose: empty, every pad count, MTU edges.
_EDGE_LENGTHS = (0, 1, 2, 3, 4, 5, 6, 7, 255, 256, 1023, 1024, 1025, 4093,
                 4095, 4096)
MAX_PAYLOAD = 4096


def _ip(rng, ver):
    if ver == 4:
        src = str(ipaddress.IPv4Address(rng.getrandbits(32)))
        dst = str(ipaddress.IPv4Address(rng.getrandbits(32)))
        flow = 0
    else:
        src = ipaddress.IPv6Address(rng.getrandbits(128)).compressed
        dst = ipaddress.IPv6Address(rng.getrandbits(128)).compressed
        flow = rng.getrandbits(20)
    return {"ver": ver, "src": src, "dst": dst, "tos": rng.getrandbits(8),
            "ttl": rng.getrandbits(8), "flow": flow}


def _bth(rng, opcode):
    return {"opcode": opcode, "se": rng.getrandbits(1),
            "m": rng.getrandbits(1), "tver": 0, "pkey": rng.getrandbits(16),
            "fecn": rng.getrandbits(1), "becn": rng.getrandbits(1),
            "dqpn": rng.getrandbits(24), "a": rng.getrandbits(1),
            "psn": rng.getrandbits(24)}


def _ext_entries(rng, op):
    """Random values for every extension header ``op`` carries."""
    r = rng.getrandbits
    out = {}
    if ops.DETH in op.exts:
        out["deth"] = {"qkey": r(32), "sqpn": r(24)}
    if ops.RETH in op.exts:
        out["reth"] = {"va": r(64), "rkey": r(32), "dlen": r(32)}
    if ops.ATOMICETH in op.exts:
        out["atomiceth"] = {"va": r(64), "rkey": r(32), "swap": r(64),
                            "cmp": r(64)}
    if ops.AETH in op.exts:
        out["aeth"] = {"syndrome": r(8), "msn": r(24)}
    if ops.ATOMICACKETH in op.exts:
        out["atomicacketh"] = {"orig": r(64)}
    if ops.IMMDT in op.exts:
        out["immdt"] = r(32)
    if ops.IETH in op.exts:
        out["ieth"] = r(32)
    if ops.SPETH in op.exts:
        out["speth"] = {"wqe_seq": r(32), "offset": r(32)}
    if ops.NTETH in op.exts:
        out["nteth"] = {"run": r(8), "psn": r(24)}
    if ops.VTETH in op.exts:
        out["vteth"] = {"flags": r(8), "n_crit": r(8), "loss_bp": r(16),
                        "window": r(16), "max_burst": r(32),
                        "crit": [[r(32), r(32)] for _ in range(4)]}
    if ops.VLETH in op.exts:
        out["vleth"] = {"len": r(32), "lost_pkts": r(32), "lost_bytes": r(32),
                        "n_holes": r(8), "flags": r(8),
                        "holes": [[r(32), r(32)] for _ in range(8)]}
    return out


def payload_len(rng, max_len=MAX_PAYLOAD):
    """A payload length in 0..max_len, edge values half of the time."""
    if rng.random() < 0.5:
        return rng.choice([n for n in _EDGE_LENGTHS if n <= max_len])
    return rng.randint(0, max_len)


def random_spec(rng, opcode=None, ver=None, vlan=None,
                max_payload=MAX_PAYLOAD):
    """One random valid spec; ``opcode``, ``ver`` (4/6) and ``vlan`` (bool)
    are drawn when None."""
    if opcode is None:
        opcode = rng.choice(sorted(ops.OPCODES))
    op = ops.OPCODES[opcode]
    if ver is None:
        ver = rng.choice((4, 6))
    if vlan is None:
        vlan = rng.random() < 0.3
    spec = {
        "vlan": ({"pcp": rng.getrandbits(3), "vid": rng.getrandbits(12)}
                 if vlan else None),
        "ip": _ip(rng, ver),
        # RoCE NICs pick source ports in 0xC000..0xFFFF; staying there also
        # keeps tshark from decoding the payload as some other UDP protocol
        "udp": {"sport": rng.randint(0xc000, 0xffff)},
        "bth": _bth(rng, opcode),
    }
    spec.update(_ext_entries(rng, op))
    n = payload_len(rng, max_payload) if op.payload else 0
    spec["payload"] = rng.getrandbits(8 * n).to_bytes(n, "big") if n else b""
    return spec


def random_specs(seed, count):
    """``count`` specs from ``seed``: every opcode in IPv4 and IPv6 first,
    then random ones."""
    rng = random.Random(seed)
    specs = []
    for opcode in sorted(ops.OPCODES):
        for ver in (4, 6):
            specs.append(random_spec(rng, opcode, ver))
    while len(specs) < count:
        specs.append(random_spec(rng))
    return specs[:max(count, 0)]


def run(args):
    """Entry point of ``python -m rocewan gen``: write random valid frames."""
    write_frames(args.out, [build_bytes(s)
                            for s in random_specs(args.seed, args.count)])
    return 0


def vrp_flow(nmsgs, npkts, lost=(), late=(), vteth=None, mtu=1024,
             summaries=True, psn0=0x100):
    """Frames of a VRP WRITE flow as a capture at the receiver sees it
    (docs/vrp.md), for ``rocewan validate``: A (10.0.0.1) writes ``nmsgs``
    messages of ``npkts`` packets to QP 0x11 of B (10.0.0.2), PSNs from
    ``psn0``: a FIRST (0xE2 with ``vteth`` when given, else the standard
    0x06), self-placing MIDDLEs (0xC2) and a LAST (0xC3). The (message,
    packet) pairs in ``lost`` never arrive (given up, zero-filled); those in
    ``late`` arrive after the message's other packets (a NACKed packet
    resent). After each message B's VRP LOSS summary (0xE3) with the map of
    its lost packets, unless ``summaries`` is false; ``summaries`` may also
    be a function (message index, vleth dict) -> vleth dict that rewrites it
    (a lying responder)."""
    lost, late = set(lost), set(late)
    ip_a = {"ver": 4, "src": "10.0.0.1", "dst": "10.0.0.2", "tos": 0, "ttl": 64}
    ip_b = {"ver": 4, "src": "10.0.0.2", "dst": "10.0.0.1", "tos": 0, "ttl": 64}
    dlen = npkts * mtu
    frames = []
    for m in range(nmsgs):
        first = (psn0 + m * npkts) & 0xFFFFFF

        def req(i):
            op = 0xc2 if i < npkts - 1 else 0xc3
            spec = {"vlan": None, "ip": ip_a, "udp": {"sport": 0xc123},
                    "bth": {"opcode": op, "dqpn": 0x11,
                            "psn": (first + i) & 0xFFFFFF},
                    "reth": {"va": 0x10000 + m * dlen + i * mtu, "rkey": 7,
                             "dlen": dlen},
                    "payload": bytes([(m + i) & 0xFF]) * mtu}
            if i == 0:
                spec["bth"]["opcode"] = 0x06 if vteth is None else 0xe2
                spec["reth"]["va"] = 0x10000 + m * dlen
                if vteth is not None:
                    spec["vteth"] = vteth
            return build_bytes(spec)

        gone = sorted(i for (k, i) in lost if k == m)
        frames += [req(i) for i in range(npkts)
                   if (m, i) not in lost and (m, i) not in late]
        frames += [req(i) for (k, i) in sorted(late) if k == m]
        if not summaries:
            continue
        holes = []
        for i in gone:
            if holes and holes[-1][0] + holes[-1][1] == i * mtu:
                holes[-1][1] += mtu
            else:
                holes.append([i * mtu, mtu])
        vl = {"len": dlen, "lost_pkts": len(gone), "lost_bytes": len(gone) * mtu,
              "n_holes": min(len(holes), 8), "flags": int(len(holes) > 8),
              "holes": holes[:8]}
        if callable(summaries):
            vl = summaries(m, vl)
        frames.append(build_bytes({
            "vlan": None, "ip": ip_b, "udp": {"sport": 0xc321},
            "bth": {"opcode": ops.VRP_LOSS_OPCODE, "dqpn": 0x22,
                    "psn": (first + npkts - 1) & 0xFFFFFF},
            "aeth": {"syndrome": 0x1f, "msn": m + 1}, "vleth": vl}))
    return frames
