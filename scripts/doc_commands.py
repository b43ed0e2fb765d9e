#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""List the command blocks of README.md and docs/*.md and check each one's class.

A command block is a fenced block marked sh, bash, shell or console, or an
unmarked one with a "$ " prompt line. Each must say, in an HTML comment on the
line before its fence, what runs it:

  <!-- cmd: test tests/PATH.py[::NAME] [note] -->  a test runs it (veth or null
                                                    ports standing in for PCI)
  <!-- cmd: ci [note] -->        one of make test's own steps (make test, meson
                                 test, a pytest line of a suite make test runs)
  <!-- cmd: bench [note] -->     make bench runs it (bench/...)
  <!-- cmd: record REASON -->    the command behind a recorded figure, kept so it
                                 can be repeated; no test runs it
  <!-- cmd: hardware [note] -->  an example that needs hardware (PCI addresses,
                                 a ConnectX, a lab host)

--check verifies every block has a class and the class fits: a test reference
names an existing file (and NAME in it), ci/bench blocks name only paths that
exist, a hardware block names hardware. Exit 1 with one line per problem.
--list prints every command block with its class.
"""
import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHELL_LANGS = {"sh", "bash", "shell", "console"}
MARK = re.compile(r"<!--\s*cmd:\s*(\w+)\s*(.*?)\s*-->")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
PCI = re.compile(r"\b[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\b")
HARDWARE = re.compile(r"ConnectX|mlx5|\bib_\w+ -d mlx|show_gids|vfio-pci|<host [AB]", re.I)
PATHS = re.compile(r"(?<![\w/$.-])((?:tests|scripts|bench|docs|configs)/[\w./-]+)")


def blocks(path):
    """(line, lang, text, marker) of each fenced block of a markdown file."""
    out = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(2)
        j = i + 1
        while j < len(lines) and not FENCE.match(lines[j]):
            j += 1
        body = "\n".join(l.strip() for l in lines[i + 1:j])
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark = MARK.search(lines[k]) if k >= 0 else None
        out.append((start + 1, lang, body, mark.groups() if mark else None))
        i = j + 1
    return out


def is_command(lang, body):
    return lang in SHELL_LANGS or (lang == "" and any(l.startswith("$ ") for l in body.split("\n")))


def check_block(root, kind, ref, body):
    """None if the class fits the block, else why not."""
    if kind == "test":
        if not ref:
            return "cmd: test names no test file"
        target = ref.split()[0]
        fname, _, name = target.partition("::")
        fpath = os.path.join(root, fname)
        if not os.path.isfile(fpath):
            return f"cmd: test {fname}: no such file"
        if name and not re.search(r"def %s\b" % re.escape(name), open(fpath).read()):
            return f"cmd: test {fname} has no test {name}"
        return None
    if kind in ("ci", "bench"):
        missing = [p for p in PATHS.findall(body) if not os.path.exists(os.path.join(root, p.rstrip(".")))]
        if missing:
            return f"cmd: {kind}: the block names paths that do not exist: {', '.join(missing)}"
        if kind == "ci" and not re.search(r"make test|meson test|pytest|scripts/test\.sh", body):
            return "cmd: ci, but the block runs neither make test, meson test nor pytest"
        if kind == "bench" and "bench" not in body:
            return "cmd: bench, but the block runs nothing under bench/"
        return None
    if kind == "record":
        return None if ref else "cmd: record needs a reason"
    if kind == "hardware":
        if PCI.search(body) or HARDWARE.search(body):
            return None
        return "cmd: hardware, but the block names no PCI address or hardware RNIC"
    return f"unknown class cmd: {kind}"


def scan(root):
    """[(file, line, kind or None, ref, first line, problem or None)] of every command block."""
    files = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    rows = []
    for f in files:
        if not os.path.isfile(f):
            continue
        for line, lang, body, mark in blocks(f):
            if not is_command(lang, body):
                continue
            first = next((l for l in body.split("\n") if l), "")
            rel = os.path.relpath(f, root)
            if not mark:
                rows.append((rel, line, None, "", first, "no <!-- cmd: ... --> before the block"))
                continue
            kind, ref = mark
            rows.append((rel, line, kind, ref, first, check_block(root, kind, ref, body)))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=ROOT, help="repository root (default: this checkout)")
    ap.add_argument("--list", action="store_true", help="print every command block and its class")
    ap.add_argument("--check", action="store_true", help="exit 1 unless every block is classified")
    a = ap.parse_args(argv)
    rows = scan(a.root)
    if a.list or not a.check:
        for f, line, kind, ref, first, _ in rows:
            print(f"{f}:{line}: {kind or 'UNCLASSIFIED':10} {ref[:60]:60} | {first[:70]}")
        counts = {}
        for r in rows:
            counts[r[2] or "unclassified"] = counts.get(r[2] or "unclassified", 0) + 1
        print(f"{len(rows)} command blocks: " +
              ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    bad = [r for r in rows if r[5]]
    if a.check:
        for f, line, _, _, first, why in bad:
            print(f"{f}:{line}: {why} ({first[:60]})", file=sys.stderr)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
