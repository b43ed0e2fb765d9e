"""Read and write Ethernet captures.

Reading goes through Scapy's raw readers (classic pcap in either byte order
and resolution, and pcapng). Writing is a few lines of our own so that the
output is byte-for-byte deterministic: timestamps are given, never taken from
the clock.
"""

import os
import struct

from scapy.compat import raw
from scapy.error import Scapy_Exception
from scapy.utils import RawPcapReader

LINKTYPE_ETHERNET = 1
_PCAP_MAGIC_US = 0xa1b2c3d4
_SNAPLEN = 262144


class CaptureError(Exception):
    """The file is not an Ethernet capture we can read."""


_PCAP_MAGICS = {b"\xd4\xc3\xb2\xa1": "<", b"\x4d\x3c\xb2\xa1": "<",
                b"\xa1\xb2\xc3\xd4": ">", b"\xa1\xb2\x3c\x4d": ">"}
_PCAPNG_SHB = b"\x0a\x0d\x0d\x0a"


def check_complete(path):
    """CaptureError unless the pcap or pcapng file ``path`` ends exactly
    after its last record (pcap: 24-byte header, then 16-byte record headers
    each followed by its captured length; pcapng: blocks of their stated
    total length). Scapy stops quietly at a cut record (2.5) or with a
    warning (2.8), so a truncated file would otherwise pass as a shorter one.
    Other files (compressed ones) are left to Scapy's reader."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(4)
            if head in _PCAP_MAGICS:
                bo = _PCAP_MAGICS[head]
                if size < 24:
                    raise CaptureError("%s: truncated pcap header (%d bytes)" % (path, size))
                off, n = 24, 0
                while off < size:
                    f.seek(off)
                    rec = f.read(16)
                    if len(rec) < 16:
                        raise CaptureError("%s: truncated: record %d's header cut at byte %d"
                                           % (path, n, size))
                    caplen = struct.unpack(bo + "I", rec[8:12])[0]
                    if off + 16 + caplen > size:
                        raise CaptureError("%s: truncated: record %d has %d of its %d bytes"
                                           % (path, n, size - off - 16, caplen))
                    off += 16 + caplen
                    n += 1
            elif head == _PCAPNG_SHB:
                f.seek(8)
                bom = f.read(4)
                bo = "<" if bom == b"\x4d\x3c\x2b\x1a" else ">"
                off, n = 0, 0
                while off < size:
                    f.seek(off)
                    blk = f.read(8)
                    blen = struct.unpack(bo + "I", blk[4:8])[0] if len(blk) == 8 else 0
                    if blen < 12 or off + blen > size:
                        raise CaptureError("%s: truncated: pcapng block %d cut at byte %d"
                                           % (path, n, size))
                    off += blen
                    n += 1
    except OSError as e:
        raise CaptureError("%s: cannot read capture: %s" % (path, e))


def read_frames(path):
    """Yield ``(idx, frame_bytes, wire_len)`` for each frame of ``path``
    (0-based index; ``wire_len`` is None when the format does not say).
    CaptureError if the file cannot be read or is truncated."""
    check_complete(path)
    try:
        reader = RawPcapReader(path)
    except (OSError, EOFError, Scapy_Exception) as e:
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
