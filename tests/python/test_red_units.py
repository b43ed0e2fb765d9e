"""Every shipped RED setting, read by lossy-emu's own SPEC parser (through `rocewire spec`),
marks as the paper it cites. DCQCN-p (Wang et al., J. HFUT 2025) 3.1 sets Kmin 100 KiB,
Kmax 400 KiB and Pmax 0.1, a fraction in its eq. (1) P = Pmax (L_Q - Kmin) / (Kmax - Kmin):
10 % at Kmax. The SPEC grammar is netem's, where a bare probability is a percent, so the
paper's value is written `pmax 10%` and a bare `pmax 0.1` is refused (it would be 0.1 %)."""
import ast
import glob
import os
import re

import pytest

from rwtest import REPO
from rocewan.testbed import config, runner, spec
from rocewan.testbed.repro import REPRODUCTIONS

DCQCNP_K = ("100kb", "400kb")  # Kmin, Kmax as the effective SPEC spells them (KB = 1024 B)
DCQCNP_PMAX_PCT = 10.0
RED = re.compile(r"\bred kmin (\S+) kmax (\S+) pmax (\S+)%")


@pytest.fixture(autouse=True)
def checkout_configs(monkeypatch):
    """The shipped files are the checkout's: an installed package (the venv run, no
    ROCEWAN_ROOT) finds no checkout of its own, so point the testbed's config at this one."""
    monkeypatch.setattr(config, "ROOT", REPO)
    monkeypatch.setattr(config, "CDF_DIR", os.path.join(REPO, "configs", "cdf"))


def red_of(text):
    """(kmin, kmax, pmax in %) of a SPEC, from the emulator's effective SPEC; None without red."""
    m = RED.search(spec.parse(text)["spec"])
    return (m.group(1), m.group(2), float(m.group(3))) if m else None


def check_dcqcnp(where, text):
    red = red_of(text)
    if red and red[:2] == DCQCNP_K:
        assert red[2] == DCQCNP_PMAX_PCT, f"{where}: {text!r} marks at {red[2]} %, DCQCN-p's is 10 %"
    return red


def test_the_check_sees_the_units():
    """Negative controls: 0.1 % is what `pmax 0.1` meant; a bare number is refused with both
    readings, and the Python side gets the emulator's message."""
    assert red_of("rate 200mbit red kmin 100KB kmax 400KB pmax 10%") == ("100kb", "400kb", 10.0)
    assert red_of("rate 200mbit red kmin 100KB kmax 400KB pmax 0.1%") == ("100kb", "400kb", 0.1)
    with pytest.raises(AssertionError):
        check_dcqcnp("control", "rate 200mbit red kmin 100KB kmax 400KB pmax 0.1%")
    with pytest.raises(ValueError) as e:
        spec.parse("rate 200mbit red kmin 100KB kmax 400KB pmax 0.1")
    assert str(e.value) == ('red pmax: "0.1" is ambiguous: write pmax 0.1% (netem\'s percent) '
                            "or pmax 10% (tc-red's fraction 0.1)")


def shipped_tomls():
    return sorted(glob.glob(os.path.join(REPO, "configs", "*.toml")) +
                  glob.glob(os.path.join(REPO, "bench", "**", "*.toml"), recursive=True))


def test_every_shipped_config_marks_as_cited():
    reds = []
    for path in shipped_tomls():
        specs = runner.link_specs(config.load(path))
        for d in ("a2b", "b2a"):
            red = check_dcqcnp(f"{path} {d}", specs[d])
            if red:
                reds.append((os.path.relpath(path, REPO), d, red))
    # the CC bottleneck of bench/cc/ecn.py and tests/testbed/test_cc_ecn.py is one of them
    assert ("bench/cc/ecn-dcqcn.toml", "a2b", DCQCNP_K + (DCQCNP_PMAX_PCT,)) in reds, reds


# the reproductions whose bottleneck is DCQCN-p's RED
RED_REPROS = ("incast", "wan-cc", "gbone-fct")


class _Stop(Exception):
    pass


@pytest.mark.parametrize("name", RED_REPROS)
def test_every_red_reproduction_marks_as_cited(name, monkeypatch, tmp_path):
    """The configuration each reproduction really runs, caught at its first run_once."""
    seen = []

    def run_once(cfg, *a, **k):
        seen.append(runner.link_specs(cfg))
        raise _Stop

    monkeypatch.setattr(runner, "run_once", run_once)
    with pytest.raises(_Stop):
        REPRODUCTIONS[name][0](prefix="xte", quick=True, out=str(tmp_path))
    assert seen
    assert check_dcqcnp(name, seen[0]["a2b"]) == DCQCNP_K + (DCQCNP_PMAX_PCT,), seen[0]


def red_literals():
    """Every string constant with a red SPEC in the testbed, the benches and the tests."""
    files = (glob.glob(os.path.join(REPO, "python", "rocewan", "**", "*.py"), recursive=True) +
             glob.glob(os.path.join(REPO, "bench", "**", "*.py"), recursive=True) +
             glob.glob(os.path.join(REPO, "tests", "**", "*.py"), recursive=True))
    for path in sorted(files):
        if os.path.abspath(path) == os.path.abspath(__file__):
            continue
        for node in ast.walk(ast.parse(open(path).read(), path)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    re.search(r"\bred kmin ", node.value):
                yield os.path.relpath(path, REPO), node.lineno, node.value


def test_every_red_spec_in_the_code_parses_and_marks_as_cited():
    lits = list(red_literals())
    where = {p for p, _, _ in lits}
    for p in ("python/rocewan/testbed/repro/incast.py", "python/rocewan/testbed/repro/wancc.py",
              "python/rocewan/testbed/repro/selective.py"):
        assert p in where, where
    for path, line, text in lits:
        full = text if re.search(r"\brate ", text) else "rate 1gbit " + text  # red needs a rate
        try:
            check_dcqcnp(f"{path}:{line}", full)
        except ValueError as e:
            pytest.fail(f"{path}:{line}: {text!r}: {e}")
