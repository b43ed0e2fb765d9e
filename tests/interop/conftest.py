"""Fixtures for the QEMU/rxe interop tests (see docs/interop-vm.md).

Requirements are hard: root, /dev/net/tun, qemu-system-x86_64, ip, ethtool.
When one is missing the tests FAIL with the reason (they never skip).
"""

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import vm as vmlib  # noqa: E402


def _build_root() -> Path:
    return Path(os.environ.get("ROCEWAN_BUILD", str(Path(__file__).resolve().parents[2] / "build")))


@pytest.fixture(scope="session")
def vm_image() -> Path:
    """Build (or reuse the cached) guest image under $ROCEWAN_BUILD/interop/."""
    problem = None
    try:
        vmlib.check_host_prerequisites()
    except vmlib.VMError as e:
        problem = str(e)
    if problem:
        pytest.fail(problem, pytrace=False)
    outdir = _build_root() / "interop"
    t0 = time.monotonic()
    try:
        vmlib.build_image(outdir)
    except vmlib.VMError as e:
        problem = str(e)
    if problem:
        pytest.fail(problem, pytrace=False)
    print(f"\n[interop] image {outdir} ready in {time.monotonic() - t0:.1f} s "
          f"(kernel {(outdir / 'kernel-version').read_text().strip()})")
    return outdir


@pytest.fixture(scope="session")
def netns(vm_image):
    """A private network namespace for all taps/bridges/guests of this run."""
    vmlib.cleanup_stale_netns()
    with vmlib.Netns() as ns:
        yield ns
