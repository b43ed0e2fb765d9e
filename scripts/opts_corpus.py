#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run the apps' command lines over an argument corpus and record what they say.

Each corpus line is one argument vector (shell quoting; '#' comments):

  ARGS                the rnic's options: runs `rnic EAL -- ARGS` and the
                      EAL-free parser `rnic_opts_dump ARGS` (what was parsed)
  !rnic ARGS          the rnic binary with ARGS exactly (EAL side included)
  !lossy-emu ARGS     likewise for lossy-emu and pfc-relay
  !pfc-relay ARGS

A parsed configuration is recorded as the values that differ from the parse
of REFERENCE (the first record).

For each run the record keeps the exit code, stdout and stderr. A binary
that gets past its own parser starts EAL with one unknown EAL option
(EAL_STOP) and stops there; its record says "<EAL>" instead of DPDK's usage
text. --write records, --check compares with a recorded file,
--diff compares two builds (before/after a parser change).
"""
import argparse
import concurrent.futures
import difflib
import json
import os
import re
import shlex
import subprocess
import sys

EAL_STOP = '--rw-corpus-eal-stop'
BINS = {'rnic': 'app/rnic/rnic', 'lossy-emu': 'app/lossy-emu/lossy-emu',
        'pfc-relay': 'app/pfc-relay/pfc-relay'}
DUMP = 'tests/unit/rnic/rnic_opts_dump'


def read_corpus(path):
    cases = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            cases.append(line)
    return cases


def run_one(build, argv, eal):
    exe = os.path.join(build, argv[0])
    full = [exe] + ([EAL_STOP] if eal else []) + argv[1:]
    p = subprocess.run(full, capture_output=True, text=True, timeout=30,
                       errors='replace', stdin=subprocess.DEVNULL)
    out, err = p.stdout, p.stderr
    if eal and ("'%s'" % EAL_STOP) in err:
        out, err = '<EAL>', '<EAL>'
    out = out.replace(exe, argv[0])
    # --version names the build's git commit
    out = re.sub(r'^rnic \S+ \(perftest-compatible', 'rnic VERSION (perftest-compatible', out)
    err = err.replace(exe, argv[0])
    if not eal and p.returncode == 0 and out.startswith('{'):
        # the parsed values, one compact line (sorted keys) instead of an indented document
        out = json.dumps(json.loads(out), sort_keys=True, separators=(',', ':')) + '\n'
    return {'rc': p.returncode, 'stdout': out, 'stderr': err}


def run_case(build, line):
    if line.startswith('!'):
        words = shlex.split(line[1:])
        return {'case': line, 'bin': run_one(build, [BINS[words[0]]] + words[1:], True)}
    words = shlex.split(line)
    return {'case': line,
            'bin': run_one(build, [BINS['rnic'], '--'] + words, True),
            'dump': run_one(build, [DUMP] + words, False)}


REFERENCE = ['--ip', '10.0.0.1/24', 'write_bw']


def run(build, corpus):
    """The records; a parsed configuration keeps only the values that differ
    from the first record's, the parse of REFERENCE."""
    ref = run_one(build, [DUMP] + REFERENCE, False)
    records = [{'case': '=reference ' + ' '.join(REFERENCE), 'dump': ref}]
    base = json.loads(ref['stdout'])
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(lambda line: run_case(build, line), read_corpus(corpus)))
    for r in runs:
        d = r.get('dump')
        if d and d['rc'] == 0 and d['stdout'].startswith('{'):
            got = json.loads(d['stdout'])
            delta = {k: v for k, v in got.items() if base.get(k) != v}
            delta.update({k: None for k in base if k not in got})
            d['stdout'] = 'changed: ' + json.dumps(delta, sort_keys=True) + '\n'
        records.append(r)
    return records


def dump(records):
    return ''.join(json.dumps(r, sort_keys=True) + '\n' for r in records)


def diff(a, b, name_a, name_b):
    """Unified diff of two record lists, one record field per line."""
    def lines(records):
        out = []
        for r in records:
            out.append('case: %s\n' % r['case'])
            for k in ('bin', 'dump'):
                if k in r:
                    for f in ('rc', 'stdout', 'stderr'):
                        for ln in str(r[k][f]).splitlines() or ['']:
                            out.append('  %s.%s: %s\n' % (k, f, ln))
        return out
    return ''.join(difflib.unified_diff(lines(a), lines(b), name_a, name_b, n=2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', required=True, help='meson build directory')
    ap.add_argument('--corpus', required=True, help='argument corpus')
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument('--write', metavar='FILE', help='record the runs to FILE')
    g.add_argument('--check', metavar='FILE', help='compare with the runs recorded in FILE')
    g.add_argument('--diff', metavar='BUILD', help='compare with another build')
    a = ap.parse_args()
    records = run(a.build, a.corpus)
    if a.write:
        with open(a.write, 'w', encoding='utf-8') as f:
            f.write(dump(records))
        print('%d cases recorded in %s' % (len(records), a.write))
        return 0
    if a.check:
        with open(a.check, encoding='utf-8') as f:
            want = [json.loads(x) for x in f if x.strip()]
        d = diff(want, records, a.check, a.build)
    else:
        d = diff(run(a.diff, a.corpus), records, a.diff, a.build)
    sys.stdout.write(d)
    print('%d cases, %s' % (len(records), 'differences above' if d else 'identical'))
    return 1 if d else 0


if __name__ == '__main__':
    sys.exit(main())
