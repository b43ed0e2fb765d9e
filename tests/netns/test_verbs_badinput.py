"""The bad-input suite (tests/verbs/rv_badinput.c) on rnic0: QP state jumps, posting on a
RESET QP, out-of-range SGEs, a wrong lkey or rkey, a remote range past the MR, a CQ
overrun. Every outcome (errno at post / modify, or completion status) must be the one
Linux rxe gives for the same binary (harness.BADINPUT_EXPECT, checked against rxe0 by
tests/interop/test_verbs_rxe.py::test_badinput_same_on_rxe), and the program runs to its
end on both sides (no crash)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verbs"))
from harness import (BADINPUT, BADINPUT_EXPECT, RNIC_EXEC, badinput_outcomes,  # noqa: E402
                     run_pair)


@pytest.fixture(autouse=True)
def built():
    for p in (RNIC_EXEC, BADINPUT):
        if not os.path.exists(p):
            pytest.fail(f"{p} is not built (run `make build`)")


def test_badinput_same_as_rxe(veth_pair, tmp_path):
    srv = [BADINPUT, "rnic0", "0", "server", "18620"]
    r = run_pair(veth_pair, tmp_path, srv, None, port=18620,
                 client_cmd=[BADINPUT, "rnic0", "0", "client"], cli_args=["18620"])
    assert r.rcs == [0, 0], f"exit codes {r.rcs}{r.both()}"
    for side in (0, 1):
        assert r.out[side].rstrip().endswith("done"), r.both()
    got = {**badinput_outcomes(r.out[1]), **badinput_outcomes(r.out[0])}
    diff = {k: (got.get(k), BADINPUT_EXPECT.get(k)) for k in set(got) | set(BADINPUT_EXPECT)
            if got.get(k) != BADINPUT_EXPECT.get(k)}
    assert not diff, f"rnic0 (got, rxe): {diff}{r.both()}"
    # the CQ overrun: completions beyond the CQ are counted, not written past it
    cli = r.dev(1)
    assert cli["cq_overflow"] > 0, cli
