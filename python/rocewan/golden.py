"""Deterministic golden captures under tests/golden/, built with Scapy and the
layers of this package.

``python -m rocewan golden [DIR]`` rewrites them; the tests rebuild them in
memory and compare byte for byte, so a change in the layers, the ICRC or the
builder shows up as a diff of a reviewed file.

Files (every RoCEv2 frame in them is valid):

* scapy-rc-v4.pcap       every RC opcode once, IPv4, then a CNP
* scapy-rc-v6.pcap       the same over IPv6
* scapy-uc-v4-vlan.pcap  every UC opcode, IPv4, 802.1Q tagged
* scapy-ud-v6-vlan.pcap  UD SEND_ONLY (+IMM), IPv6, tagged, then a CNP
* scapy-psn-pfc-v4.pcap  one RC request stream with a known PSN story
  (see :data:`PSN_STORY_EXPECT`), PAUSE and PFC frames, CNPs, ECN-CE marks
"""

import os
import random
import sys

from scapy.compat import raw
from scapy.contrib.mac_control import (MACControlClassBasedFlowControl,
                                       MACControlPause)
from scapy.layers.l2 import Ether

from . import checkout
from . import opcodes as ops
from .build import ETH_MIN_FRAME, build_bytes
from .gen import random_spec
from .pcapio import write_frames

MAC_CTRL_DST = "01:80:c2:00:00:01"
GOLDEN_MAX_PAYLOAD = 300

# What ``validate`` must report for scapy-psn-pfc-v4.pcap.
PSN_STORY_EXPECT = {"streams": 1, "gaps": 2, "missing_psns": 3,
                    "retransmissions": 2, "cnp_pkts": 2, "pause_pkts": 1,
                    "pfc_pkts": 2, "ecn_ce_pkts": 2}


def _spec(seed, opcode, ver, vlan):
    """Fixed pseudo-random spec: same seed, same frame, on any machine.
    Payloads stay short to keep the files small."""
    return random_spec(random.Random(seed), opcode=opcode, ver=ver, vlan=vlan,
                       max_payload=GOLDEN_MAX_PAYLOAD)


def _by_transport(transport, ver, vlan, seed):
    codes = sorted(c for c, op in ops.OPCODES.items()
                   if op.transport == transport and not ops.is_extension(c))
    return [build_bytes(_spec(seed + c, c, ver, vlan)) for c in codes]


def _cnp(seed, ver, vlan):
    return build_bytes(_spec(seed, ops.CNP_OPCODE, ver, vlan))


def _pad(b):
    return b + b"\x00" * max(0, ETH_MIN_FRAME - len(b))


def pause_frame(quanta=0xffff):
    """802.3 Annex 31B PAUSE frame."""
    return _pad(raw(Ether(dst=MAC_CTRL_DST, src="02:00:00:00:00:01")
                    / MACControlPause(pause_time=quanta)))


def pfc_frame(prio, quanta=0xffff):
    """802.1Qbb PFC frame pausing priority ``prio``."""
    fields = {"c%d_enabled" % prio: 1, "c%d_pause_time" % prio: quanta}
    return _pad(raw(Ether(dst=MAC_CTRL_DST, src="02:00:00:00:00:01")
                    / MACControlClassBasedFlowControl(**fields)))


def _write_req(psn, payload_len, opcode=0x0a, dlen=None, ecn=0):
    ip = {"ver": 4, "src": "10.0.0.1", "dst": "10.0.0.2", "tos": 0x68 | ecn,
          "ttl": 64}
    return build_bytes({
        "vlan": None, "ip": ip, "udp": {"sport": 0xc123},
        "bth": {"opcode": opcode, "dqpn": 0x11, "psn": psn, "a": 1},
        "reth": {"va": 0x7f0000001000, "rkey": 0x1234,
                 "dlen": payload_len if dlen is None else dlen},
        "payload": bytes(i & 0xff for i in range(payload_len)),
    })


def _ack(psn, ecn=0):
    return build_bytes({
        "vlan": None,
        "ip": {"ver": 4, "src": "10.0.0.2", "dst": "10.0.0.1",
               "tos": 0x68 | ecn, "ttl": 64},
        "udp": {"sport": 0xc321},
        "bth": {"opcode": 0x11, "dqpn": 0x22, "psn": psn},
        "aeth": {"syndrome": 0x1f, "msn": psn},
    })


def _cnp_v4(dqpn):
    return build_bytes({
        "vlan": None,
        "ip": {"ver": 4, "src": "10.0.0.2", "dst": "10.0.0.1", "tos": 0x68,
               "ttl": 64},
        "udp": {"sport": 0xc321},
        "bth": {"opcode": ops.CNP_OPCODE, "dqpn": dqpn, "becn": 1},
    })


def psn_story():
    """RC request stream 10.0.0.1 -> 10.0.0.2 QP 0x11 with PSNs
    0xfffffe, 0xffffff, 0 (wrap), 2 (gap: 1 missing), 3, 1 (back:
    retransmission), 2, 3, 3 (repeat: retransmission), READ of 4096 bytes at
    4 (may use PSNs 4..19), 20 (in order), 23 (gap: 2 missing); plus ACKs,
    two CNPs, two ECN-CE marks, one PAUSE and two PFC frames."""
    f = [_write_req(0xfffffe, 100), _write_req(0xffffff, 3),
         _write_req(0, 4096, ecn=3), pfc_frame(3), _write_req(2, 1),
         _write_req(3, 0), _ack(3), _write_req(1, 7), pause_frame(),
         _write_req(2, 8), _write_req(3, 9), _write_req(3, 9),
         _cnp_v4(0x33), _write_req(4, 0, opcode=0x0c, dlen=4096),
         _write_req(20, 64, ecn=3), pfc_frame(5, 0), _write_req(23, 2),
         _ack(23), _cnp_v4(0x33)]
    return f


def _ext_spec(seed, code, ver):
    spec = _spec(seed, code, ver, False)
    if code == ops.VRP_WRITE_FIRST_OPCODE:
        # a VTETH rocewan validate accepts: 10 % over 16, 2 KiB bursts, a header
        spec["reth"]["dlen"] = 16384
        spec["vteth"] = {"flags": 7, "n_crit": 1, "loss_bp": 1000,
                         "window": 16, "max_burst": 2048,
                         "crit": [[0, 64], [0, 0], [0, 0], [0, 0]]}
    return spec


def _extensions(seed):
    """rocewan's extension opcodes (docs/wire.md registry), IPv4 then IPv6."""
    codes = sorted(c for c in ops.OPCODES if ops.is_extension(c))
    return [build_bytes(_ext_spec(seed + ver * 256 + c, c, ver))
            for ver in (4, 6) for c in codes]


def golden_frames():
    """file name -> list of frame bytes."""
    return {
        "scapy-rc-v4.pcap": _by_transport("RC", 4, False, 100)
        + [_cnp(1, 4, False)],
        "scapy-rc-v6.pcap": _by_transport("RC", 6, False, 200)
        + [_cnp(2, 6, False)],
        "scapy-uc-v4-vlan.pcap": _by_transport("UC", 4, True, 300),
        "scapy-ud-v6-vlan.pcap": _by_transport("UD", 6, True, 400)
        + [_cnp(3, 6, True)],
        "scapy-psn-pfc-v4.pcap": psn_story(),
        "scapy-ext-v4-v6.pcap": _extensions(500),
    }


def golden_dir():
    """tests/golden of the checkout (:func:`rocewan.checkout.root`); raises
    CheckoutError outside one, so an installed package never writes into its
    own site-packages."""
    return os.path.join(checkout.root(), "tests", "golden")


def write_golden(out_dir):
    """(Re)write every golden capture into ``out_dir`` (made if missing);
    returns the paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for name, frames in golden_frames().items():
        path = os.path.join(out_dir, name)
        write_frames(path, frames)
        paths.append(path)
    return paths


def run(args):
    """Entry point of ``python -m rocewan golden``: DIR, or the checkout's
    tests/golden; exit 2 without DIR outside a checkout."""
    out_dir = args.dir
    if out_dir is None:
        try:
            out_dir = golden_dir()
        except checkout.CheckoutError as e:
            print("rocewan golden: %s; or give the output DIR" % e, file=sys.stderr)
            return 2
    for path in write_golden(out_dir):
        print(os.path.normpath(path))
    return 0
