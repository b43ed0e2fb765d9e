"""The Swing chain end to end (root): rnic A - pfc-relay A - long link (lossy-emu,
5 ms each way, PFC delayed too) - pfc-relay B - congested switch (lossy-emu
draining at a quarter of the link rate, sending PFC) - rnic B. The relay's one-BDP
buffer absorbs what is in flight when the far switch pauses; a smaller one
drops; plain PFC (no relays) with 2 BDP at the switch is lossless. Those are
timing claims (how soon six processes on two shared cores react to PFC):
bench/testbed/swing_bracket.py brackets them over 10 rounds (docs/claims.md).
make test checks what holds every time: the PFC chain's events, queue limits,
and relay B's frame reconciliation.
"""
import os

import pytest

from rocewan.testbed import swing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# unique per run (pid): another make test or testbed on this host keeps its own namespaces
PREFIX = "tbs%d" % (os.getpid() % 100000)
# The switch drains at ALPHA x the link rate. A quarter, not the Swing setting's half:
# the chain's events must happen every time, and beside two busy loops rnic A did not
# always outrun a 500 Mb/s drain long enough to fill the switch to XOFF (no PFC at all,
# fresh-clone run 6). At 250 Mb/s any run that moves data congests the switch.
ALPHA = 0.25


@pytest.fixture(scope="module", autouse=True)
def root_and_build():
    if os.geteuid() != 0:
        pytest.fail("the Swing tests need root (namespaces, veths); CI runs them as root")
    build = os.environ.get("ROCEWAN_BUILD", os.path.join(ROOT, "build"))
    for b in ("app/rnic/rnic", "app/lossy-emu/lossy-emu", "app/pfc-relay/pfc-relay"):
        if not os.access(os.path.join(build, b), os.X_OK):
            pytest.fail(f"{build}/{b} is not built (make build)")


def run(mode, buf, tmp_path):
    return swing.swing_run(mode, buf, ALPHA, 0.020, str(tmp_path), f"{mode}{buf}", prefix=PREFIX,
                           duration=3)


def test_relay_chain_pauses_and_reconciles(tmp_path):
    """One run at 1.1 BDP, no retries. Whether relay B drops nothing depends on how soon
    six processes on two shared cores react to PFC (relay B's peak need varied 0.74-1.0
    BDP between runs): the Swing buffer claim, bracketed at 0.5/0.6/0.9/1.0/1.1 BDP, is a
    `make bench` claim (bench/testbed/swing_bracket.py, docs/claims.md). What holds here
    every time: the PFC chain worked, relay B's queue never held more than its buffer, and
    relay B reconciles: every data frame in was queued or dropped by a counted cause, and
    every queued frame left."""
    r = run("relay", 1.1, tmp_path)
    # the chain worked as designed: the switch paused relay B, B relayed it, A paused rnic A
    assert r["s_pfc_sent"] > 0 and r["relay_b_pfc_relayed"] > 0, r
    assert r["relay_a_xoff_to_rnic"] > 0 and r["rnic_pfc_pauses"] > 0, r
    assert r["relay_hwm_bytes"] <= r["relay_buffer_bytes"], r
    assert r["relay_buffer_bytes"] == int(1.1 * r["bdp_bytes"]), r
    assert r["relay_b_in"] == r["relay_b_enq"] + r["relay_drops"], r
    assert r["relay_b_enq"] == r["relay_b_out"] and r["relay_b_queued_end"] == 0, r
    # the long link carried no more than the switch's drain rate
    assert r["utilisation"] <= ALPHA * 1.05, r
    print("relay 1.1 BDP: drops %d, peak %.2f BDP, retransmits %d" % (
        r["drops"], r["relay_hwm_bdp"], r["rnic_retransmits"]))


def test_plain_pfc_two_bdp_pauses(tmp_path):
    """Native PFC with 2 BDP at the switch: the switch paused rnic A, its queue never held
    more than its limit. Zero drops with 2 BDP is a timing claim (bench, docs/claims.md)."""
    r = run("plain", 2.0, tmp_path)
    assert r["s_pfc_sent"] > 0 and r["rnic_pfc_pauses"] > 0, r
    assert r["s_queue_max_bytes"] <= r["s_limit_bytes"], r
    print("plain 2 BDP: switch drops %d, retransmits %d" % (r["s_drop_queue"], r["rnic_retransmits"]))
