"""The rnic's command line against its recorded argument corpus.

tests/golden/opts/rnic_args.txt holds about a thousand argument vectors (every
option with good and bad values, letters, aliases, ignored and refused
options, positionals, help, plus lossy-emu's and pfc-relay's messages, which
share lib/common/rw_opts). scripts/opts_corpus.py runs each through the rnic
binary (stopped at EAL) and through the EAL-free parser rnic_opts_dump, and
rnic_args.jsonl is what they printed and returned when the rnic moved onto
rw_opts. Any change of a value, message, help line or exit code fails here;
an intended one is re-recorded with --write and shows in the commit's diff.
"""

import importlib.util
import json
import os

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
GOLDEN = os.path.join(REPO, "tests", "golden", "opts")


def _corpus_module():
    spec = importlib.util.spec_from_file_location(
        "opts_corpus", os.path.join(REPO, "scripts", "opts_corpus.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rnic_args_corpus():
    oc = _corpus_module()
    build = os.environ.get("ROCEWAN_BUILD", os.path.join(REPO, "build"))
    for rel in list(oc.BINS.values()) + [oc.DUMP]:
        if not os.access(os.path.join(build, rel), os.X_OK):
            pytest.fail("%s not built in %s (ninja -C %s)" % (rel, build, build),
                        pytrace=False)
    corpus = os.path.join(GOLDEN, "rnic_args.txt")
    got = oc.run(build, corpus)
    with open(os.path.join(GOLDEN, "rnic_args.jsonl"), encoding="utf-8") as f:
        want = [json.loads(line) for line in f if line.strip()]
    assert len(got) == len(want) > 1000
    d = oc.diff(want, got, "recorded", "now")
    assert d == "", ("the command line changed (re-record with scripts/opts_corpus.py "
                     "--write if intended):\n" + d[:20000])
