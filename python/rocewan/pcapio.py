"""Read and write Ethernet captures.

Reading goes through Scapy's raw readers (classic pcap in either byte order
and resolution, and pcapng). Writing is a few lines of our own so that the
output is byte-for-byte deterministic: timestamps are given, never taken from
the clock.
"""

import struct

from scapy.compat import raw
from scapy.utils import RawPcapReader

LINKTYPE_ETHERNET = 1
_PCAP_MAGIC_US = 0xa1b2c3d4
_SNAPLEN = 262144


class CaptureError(Exception):
    """The file is not an Ethernet capture we can read."""


def read_frames(path):
    """Yield ``(idx, frame_bytes, wire_len)`` for each frame of ``path``
    (0-based index; ``wire_len`` is None when the format does not say)."""
    try:
        reader = RawPcapReader(path)
    except (OSError, EOFError) as e:
        raise CaptureError("%s: cannot read capture: %s" % (path, e))
    try:
        for idx, (buf, meta) in enumerate(reader):
            # pcap has one link type per file, pcapng one per interface
            lt = getattr(meta, "linktype", None)
            if lt is None:
                lt = getattr(reader, "linktype", LINKTYPE_ETHERNET)
            if lt != LINKTYPE_ETHERNET:
                raise CaptureError("%s: frame %d: link type %d is not "
                                   "Ethernet (1)" % (path, idx, lt))
            yield idx, buf, getattr(meta, "wirelen", None)
    finally:
        reader.close()


def write_frames(path, frames, t0=1700000000, step_us=1, wire_lens=None):
    """Write ``frames`` (bytes or Scapy packets) as a microsecond pcap with
    timestamps ``t0 + i * step_us`` microseconds. ``wire_lens`` (optional,
    one per frame) records frames longer on the wire than captured."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", _PCAP_MAGIC_US, 2, 4, 0, 0, _SNAPLEN,
                            LINKTYPE_ETHERNET))
        for i, fr in enumerate(frames):
            b = fr if isinstance(fr, (bytes, bytearray)) else raw(fr)
            us = i * step_us
            wire = wire_lens[i] if wire_lens else len(b)
            f.write(struct.pack("<IIII", t0 + us // 1000000, us % 1000000,
                                len(b), wire))
            f.write(b)
