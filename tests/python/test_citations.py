"""Sources are cited, never by an internal file number: no "seed 000" (or "seed-003")
anywhere in the tree, no pointer at files outside the repository, and every paper
the code cites by short form has its full reference in docs/references.md."""
import os
import re

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
SKIP_DIRS = {".git", "results", "__pycache__", "subprojects"}
BINARY = (".pcap", ".pcapng", ".png", ".jpg", ".pdf", ".gz", ".xz", ".o", ".a", ".so", ".pyc", ".qcow2", ".img")
BARE_SEED = re.compile(r"\bseeds?[ _-]?0\d\d\b", re.IGNORECASE)
OUTSIDE = re.compile(r"/work/shared|\bshared/(reference|seeds|ARCHITECTURE)")


def tree_files():
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")]
        for f in files:
            if not f.endswith(BINARY) and f != ".git":
                yield os.path.join(d, f)


def findings(pattern):
    out = []
    for path in tree_files():
        if os.path.samefile(path, __file__):  # this test spells the patterns out
            continue
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                out.append(f"{os.path.relpath(path, ROOT)}:{n}: {line.strip()[:100]}")
    return out


def test_the_walk_sees_the_tree():
    files = {os.path.relpath(p, ROOT) for p in tree_files()}
    assert "python/rocewan/testbed/cli.py" in files and "docs/references.md" in files
    assert "app/pfc-relay/relay_core.c" in files and "configs/cdf/websearch.cdf" in files


@pytest.mark.parametrize("pattern", [BARE_SEED, OUTSIDE], ids=["bare-seed-number", "outside-pointer"])
def test_no_bare_seed_number_and_no_pointer_outside(pattern):
    assert findings(pattern) == []


def test_patterns_catch_what_they_forbid():
    """Negative control for the two patterns above."""
    for bad in ("as seed 000 reports", "Seed 003 eq. (4)", "seed-003 phi", "seeds 001 and 002"):
        assert BARE_SEED.search(bad), bad
    for ok in ("--seed 1", "seed N", "seeded streams", "the seed of the RNG"):
        assert not BARE_SEED.search(ok)
    assert OUTSIDE.search("(shared/reference/pfc_relay.md §6)") and OUTSIDE.search("/work/shared/seeds")


def test_every_short_citation_has_its_full_reference():
    refs = open(os.path.join(ROOT, "docs", "references.md")).read()
    for title in ("Research on transmission reliability of RoCEv2 protocol in WAN",
                  "LoWAR: Enhancing RDMA over Lossy WANs with Transparent Error Correction",
                  "Design of efficient congestion control method based on RDMA",
                  "Swing: Providing Long-Range Lossless RDMA via PFC-Relay",
                  "Variable Reliability Protocol", "MoonEm", "perftest", "rxe", "netem", "ns3-rdma"):
        assert title in refs, title
    from rocewan.testbed import references
    for short in (references.WANG, references.WANG_BY, references.SWING):
        assert short.split(",")[0].split(" (")[0] in refs
    assert "Wang (NJUPT)" in refs and "Chen et al., TPDS 2023" in refs
