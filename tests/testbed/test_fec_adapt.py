"""--fec-adapt on the testbed (docs/fec.md): rnic A -> lossy-emu -> rnic B with
fec+gbn xor:32,4 and B's adaptive policy (configs/fec-adapt.toml), a fixed number of
WRITEs, two runs:

  - no loss, two WRITEs in flight (so neither B's nor the emulator's ring can overflow:
    nothing at all is lost): the policy stays at level 0: no change, no PROPOSE, A still
    codes xor:32,4 and B's decoder follows xor:32,4;
  - every 25th request packet dropped (`drop-nth 25` on a->b: 4 % loss in a fixed pattern,
    FEC frames not counted): the policy moves up, never down, one PROPOSE per change,
    and the code A ends with is the table's code of B's final level, which B's decoder
    follows (the PROPOSEs and COMMITs cross unharmed: drop-nth skips FEC frames and b->a
    is lossless).

Only counts and codes are asserted; how fast the policy moves is timing. A third run
changes the loss during the run ([link] loss_change, through the emulator's telemetry):
that the change was applied is asserted, not what the policy did after it (which depends
on how many packets the loaded host moved before and after it).
"""
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTBED = os.path.join(ROOT, "testbed")
CONFIG = os.path.join(ROOT, "configs", "fec-adapt.toml")
# unique per run (pid): another make test or testbed on this host keeps its own namespaces
PREFIX = "tbfa%d" % (os.getpid() % 100000)
# lib/fec/fec_adapt.c's table, level 0 up (docs/fec.md)
LEVELS = ["xor:32,4", "xor:16,4", "rs:32,2", "rs:32,4", "rs:16,4"]


@pytest.fixture(scope="module", autouse=True)
def root_and_build():
    if os.geteuid() != 0:
        pytest.fail("the testbed tests need root (namespaces, veths); CI runs them as root")
    build = os.environ.get("ROCEWAN_BUILD", os.path.join(ROOT, "build"))
    for b in ("app/rnic/rnic", "app/lossy-emu/lossy-emu"):
        if not os.access(os.path.join(build, b), os.X_OK):
            pytest.fail(f"{build}/{b} is not built (make build)")
    yield
    subprocess.run([TESTBED, "--prefix", PREFIX, "down"], capture_output=True, cwd=ROOT, timeout=60)


def run(tmp_path, *sets):
    args = [TESTBED, "--prefix", PREFIX, "run", CONFIG, "--out", str(tmp_path), "--set", 'link.loss=""']
    for s in sets:  # later --set override earlier ones
        args += ["--set", s]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.load(open(tmp_path / "fec-adapt.json"))["results"]["rows"]
    assert len(rows) == 1
    row = rows[0]
    assert row["completion_errors"] == 0, row
    assert row["recovery"] == "fec+gbn" and row["fec"] == "xor:32,4", row
    return row


def test_no_loss_no_change(tmp_path):
    row = run(tmp_path, "workload.iters=100", "workload.tx_depth=2")
    assert row["emu_a2b_drop_loss"] == 0 and row["emu_a2b_drop_rule"] == 0, row
    assert row["emu_a2b_drop_queue"] == 0 and row["b_pmd_imissed"] == 0, row
    assert row["b_fec_rebuilt"] == 0 and row["b_fec_unrecoverable"] == 0, row
    assert row["b_fec_adapt_up"] == 0 and row["b_fec_adapt_down"] == 0, row
    assert row["b_fec_adapt_proposals"] == 0 and row["b_fec_adapt_failed"] == 0, row
    assert row["fec_b_adapt_level"] == 0, row
    assert row["fec_a_code"] == "xor:32,4" and row["fec_b_peer_code"] == "xor:32,4", row


def test_heavy_loss_moves_up(tmp_path):
    row = run(tmp_path, 'link.a2b_extra="drop-nth 25"', "workload.iters=300")
    assert row["emu_a2b_drop_rule"] > 0 and row["emu_a2b_drop_loss"] == 0, row
    assert row["b_fec_rebuilt"] > 0, row
    up, down = row["b_fec_adapt_up"], row["b_fec_adapt_down"]
    assert up >= 1 and down == 0, row
    # one PROPOSE per change, and the level is the sum of the changes
    assert row["b_fec_adapt_proposals"] + row["b_fec_adapt_failed"] == up + down, row
    assert row["b_fec_adapt_failed"] == 0, row
    level = row["fec_b_adapt_level"]
    assert level == up - down, row
    # A's encoder applied the last PROPOSE, and B's decoder follows A's COMMIT
    assert row["fec_a_code"] == LEVELS[level], row
    assert row["fec_b_peer_code"] == LEVELS[level], row


def test_loss_change_applied(tmp_path):
    row = run(tmp_path, 'link.loss="random 3%"', 'link.loss_change="1s"', "workload.duration=3")
    ch = row["loss_change"]
    assert ch["applied"] is True and ch["to"] == "none", ch
    assert [r["ok"] for r in ch["replies"]] == [1, 1], ch
    assert "loss" not in ch["replies"][0]["a2b"] and "loss" not in ch["replies"][1]["b2a"], ch
    # each change sent one PROPOSE, whatever the changes were
    assert row["b_fec_adapt_proposals"] + row["b_fec_adapt_failed"] == \
        row["b_fec_adapt_up"] + row["b_fec_adapt_down"], row
    assert row["fec_b_adapt_level"] == row["b_fec_adapt_up"] - row["b_fec_adapt_down"], row
