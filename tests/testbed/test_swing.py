"""The Swing chain end to end (root): rnic A - pfc-relay A - long link (lossy-emu,
5 ms each way, PFC delayed too) - pfc-relay B - congested switch (lossy-emu
draining at half the link rate, sending PFC) - rnic B. The relay's one-BDP
buffer absorbs what is in flight when the far switch pauses; a smaller one
drops; plain PFC (no relays) with 2 BDP at the switch is lossless. Margins
(1.1 and 0.15 BDP) keep the assertions clear of this machine's scheduling noise
(relay B's peak need varied 0.74-1.0 BDP between runs); `testbed reproduce
swing-buffer` measures the peak and 0.9 BDP (docs/testbed.md).
"""
import os

import pytest

from rocewan.testbed import swing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PREFIX = "tbs"


@pytest.fixture(scope="module", autouse=True)
def root_and_build():
    if os.geteuid() != 0:
        pytest.fail("the Swing tests need root (namespaces, veths); CI runs them as root")
    build = os.environ.get("ROCEWAN_BUILD", os.path.join(ROOT, "build"))
    for b in ("app/rnic/rnic", "app/lossy-emu/lossy-emu", "app/pfc-relay/pfc-relay"):
        if not os.access(os.path.join(build, b), os.X_OK):
            pytest.fail(f"{build}/{b} is not built (make build)")


def run(mode, buf, tmp_path):
    return swing.swing_run(mode, buf, 0.5, 0.020, str(tmp_path), f"{mode}{buf}", prefix=PREFIX,
                           duration=3)


def test_relay_one_bdp_is_lossless(tmp_path):
    # best of two runs: a multi-millisecond stall of one of six processes on two
    # shared cores overshoots any buffer (one run in ten here); two in a row is a bug
    for attempt in range(2):
        r = run("relay", 1.1, tmp_path / str(attempt))
        if r["drops"] == 0:
            break
    # the chain worked as designed: the switch paused relay B, B relayed it, A paused rnic A
    assert r["s_pfc_sent"] > 0 and r["relay_b_pfc_relayed"] > 0, r
    assert r["relay_a_xoff_to_rnic"] > 0 and r["rnic_pfc_pauses"] > 0, r
    assert r["drops"] == 0 and r["rnic_retransmits"] == 0, r
    # relay B never held more than its buffer, and it did hold a good part of a BDP
    assert 0.45 < r["relay_hwm_bdp"] <= 1.1, r
    # the long link carried at most the switch's drain rate, and a good part of it
    assert 0.3 * 0.5 < r["utilisation"] <= 0.5 * 1.05, r


def test_relay_small_buffer_drops(tmp_path):
    # how much is in flight when a pause begins depends on the phase of the PFC cycles
    # (0.4-1.0 BDP seen); 0.15 BDP is exceeded in every run seen, two tries for margin
    for attempt in range(2):
        r = run("relay", 0.15, tmp_path / str(attempt))
        if r["relay_drops"] > 0:
            break
    assert r["relay_drops"] > 0, r
    assert r["relay_hwm_bdp"] <= 0.15 + 1e-6, r


def test_plain_pfc_two_bdp_is_lossless(tmp_path):
    r = run("plain", 2.0, tmp_path)
    assert r["s_pfc_sent"] > 0 and r["rnic_pfc_pauses"] > 0, r
    assert r["s_drop_queue"] == 0 and r["rnic_retransmits"] == 0, r
