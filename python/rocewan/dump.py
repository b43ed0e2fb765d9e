"""``rocewan parse``: one JSON object per frame, in the format of
``rocewire parse`` (tools/rocewire), so that the two can be diffed."""

import json

from .frame import decode
from .pcapio import read_frames


def records(path):
    """Yield the :func:`rocewan.frame.decode` record of every frame."""
    for idx, buf, _ in read_frames(path):
        yield decode(buf, idx).rec


def run(args):
    """Entry point of ``python -m rocewan parse``."""
    for rec in records(args.file):
        print(json.dumps(rec, separators=(",", ":")))
    return 0
