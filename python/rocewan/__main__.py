"""Command line: ``python -m rocewan {validate,parse,gen,golden} ...``."""

import argparse
import sys

from . import dump, gen, golden, validate
from .pcapio import CaptureError


def _parser():
    p = argparse.ArgumentParser(
        prog="rocewan",
        description="RoCEv2 capture tools of the rocewan testbed.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", required=True)

    v = sub.add_parser(
        "validate", help="check ICRC, headers and PSNs of a capture",
        description="Check every RoCEv2 frame (UDP port 4791) of FILE: ICRC "
        "(IPv4 and IPv6), IP/UDP lengths, opcode, TVer, pad count, payload "
        "rules and extension header lengths. PSN gaps and retransmissions "
        "of request streams, CNPs, ECN-CE marks and PAUSE/PFC frames are "
        "counted. Frame indices are 0-based. Exit status: 0 if every RoCEv2 "
        "frame passes, 1 if any fails, 2 on usage or read errors.")
    v.add_argument("file", metavar="FILE.pcap", help="pcap or pcapng capture")
    v.add_argument("--json", metavar="OUT",
                   help="also write the results as rocewan/1 JSON to OUT")
    v.add_argument("--vrp-tolerance", metavar="SPEC",
                   help="the VRP receiver's own tolerance, as its rnic "
                   "--vrp-* options gave it: loss=PCT,window=N,burst=BYTES,"
                   "crit=OFF:LEN[,crit=...]; each WRITE message's losses are "
                   "checked against it, with its FIRST's VTETH over it "
                   "(docs/vrp.md). Without it only messages with a VTETH "
                   "are checked, for the fields the VTETH sets")
    v.set_defaults(func=validate.run)

    d = sub.add_parser(
        "parse", help="print one JSON object per frame",
        description="Decode every frame of FILE and print one JSON object "
        "per line, in the format of 'rocewire parse'.")
    d.add_argument("file", metavar="FILE.pcap")
    d.set_defaults(func=dump.run)

    g = sub.add_parser(
        "gen", help="write random valid RoCEv2 frames",
        description="Write COUNT seeded random valid RoCEv2 frames built "
        "with Scapy (every opcode in IPv4 and IPv6 first) to OUT.")
    g.add_argument("--seed", type=int, default=1, help="default: 1")
    g.add_argument("--count", type=int, default=300, help="default: 300")
    g.add_argument("out", metavar="OUT.pcap")
    g.set_defaults(func=gen.run)

    w = sub.add_parser(
        "golden", help="regenerate the golden captures",
        description="Rewrite the deterministic Scapy-built captures.")
    w.add_argument("dir", nargs="?", default=None,
                   help="output directory (default: tests/golden of the "
                   "checkout; refused when there is none)")
    w.set_defaults(func=golden.run)
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except CaptureError as e:
        print("rocewan: %s" % e, file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


def console_main():
    """The ``rocewan`` console script (pip install ./python)."""
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
