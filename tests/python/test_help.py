"""Every program's --help prints its usage on stdout and exits 0: ./testbed and each of its
subcommands, the three DPDK programs (before "--" and after it, answered before EAL
starts, so no root or hugepages are needed), rocewire and `python3 -m rocewan` with each
of its subcommands. The subcommand lists are read from the parsers themselves, so a new
subcommand is covered without editing this file."""
import argparse
import os
import re
import subprocess

import pytest

from rwtest import PYTHON, REPO

BUILD = os.environ.get("ROCEWAN_BUILD", os.path.join(REPO, "build"))
TESTBED = os.path.join(REPO, "testbed")
ENV = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
USAGE = re.compile(r"^\s*usage:", re.I | re.M)


def subcommands(p):
    acts = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(acts) == 1, acts
    return sorted(acts[0].choices)


def tb_subcommands():
    from rocewan.testbed import cli
    return subcommands(cli.parser())


def rocewan_subcommands():
    from rocewan import __main__ as m
    return subcommands(m._parser())


def check(argv):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=REPO, env=ENV)
    shown = f"{argv}: exit {r.returncode}\nstdout: {r.stdout[:2000]}\nstderr: {r.stderr[:2000]}"
    assert r.returncode == 0, shown
    assert USAGE.search(r.stdout), shown
    assert "Traceback" not in r.stderr, shown
    return r.stdout


def test_the_subcommand_lists_are_read():
    assert {"demo", "run", "sweep", "up", "down", "capture", "reproduce", "trace"} <= set(tb_subcommands())
    assert {"validate", "parse", "gen", "golden"} <= set(rocewan_subcommands())


def test_testbed_help():
    out = check([TESTBED, "--help"])
    for sub in tb_subcommands():
        assert sub in out, sub


@pytest.mark.parametrize("sub", tb_subcommands())
def test_testbed_subcommand_help(sub):
    out = check([TESTBED, sub, "--help"])
    assert f"testbed {sub}" in out


@pytest.mark.parametrize("path", ["app/rnic/rnic", "app/lossy-emu/lossy-emu", "app/pfc-relay/pfc-relay"])
@pytest.mark.parametrize("form", [["--help"], ["--", "--help"]], ids=["help", "after-dashes"])
def test_dpdk_program_help(path, form):
    exe = os.path.join(BUILD, path)
    assert os.access(exe, os.X_OK), f"{exe} is not built (set ROCEWAN_BUILD)"
    out = check([exe] + form)
    assert os.path.basename(path) in out


def test_rocewire_help():
    exe = os.path.join(BUILD, "tools", "rocewire", "rocewire")
    assert os.access(exe, os.X_OK), f"{exe} is not built (set ROCEWAN_BUILD)"
    out = check([exe, "--help"])
    for cmd in ("gen", "golden", "parse", "selfcheck", "spec"):
        assert f"rocewire {cmd}" in out, cmd


def test_python_package_help():
    out = check([PYTHON, "-m", "rocewan", "--help"])
    for sub in rocewan_subcommands():
        assert sub in out, sub


@pytest.mark.parametrize("sub", rocewan_subcommands())
def test_python_package_subcommand_help(sub):
    check([PYTHON, "-m", "rocewan", sub, "--help"])
