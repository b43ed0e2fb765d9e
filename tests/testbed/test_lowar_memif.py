"""testbed reproduce lowar-memif --quick (docs/reproductions.md): the plumbing of the
80 ms LoWAR sweep over memif links (rnic A -> lossy-emu -> rnic B over net_memif), one
round of three points (gbn lossless, gbn and fec+gbn xor:32,4 at random 0.01 % a->b).

Only what a loaded host cannot change is asserted: every run completed without a
completion error, the loss fell on the data direction only (none b->a, none in the
lossless run), the ratios are the rows' own (x gbn of gbn is 1, the Go-Back-N formula fed
with the round's lossless goodput), A coded every request packet under fec+gbn, and no
FEC frame was dropped at A: the port's back-pressure (a full memif TX ring, frequent at
these rates) queues repairs instead of dropping them (roce_fec.c; before the fix a 6 s
run dropped 16 800). No goodput is asserted.
"""
import json
import os
import subprocess

import pytest

from rocewan.testbed import model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTBED = os.path.join(ROOT, "testbed")
# unique per run (pid): another make test or testbed on this host keeps its own namespaces
PREFIX = "tblm%d" % (os.getpid() % 100000)


@pytest.fixture(scope="module", autouse=True)
def root_and_build():
    if os.geteuid() != 0:
        pytest.fail("the testbed tests need root (namespaces, memif sockets); CI runs them as root")
    build = os.environ.get("ROCEWAN_BUILD", os.path.join(ROOT, "build"))
    for b in ("app/rnic/rnic", "app/lossy-emu/lossy-emu"):
        if not os.access(os.path.join(build, b), os.X_OK):
            pytest.fail(f"{build}/{b} is not built (make build)")
    yield
    subprocess.run([TESTBED, "--prefix", PREFIX, "down"], capture_output=True, cwd=ROOT, timeout=60)


def test_lowar_memif_quick(tmp_path):
    r = subprocess.run([TESTBED, "--prefix", PREFIX, "reproduce", "lowar-memif", "--quick",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    doc = json.load(open(tmp_path / "lowar-memif.json"))
    rows = doc["results"]["rows"]
    assert [(x["case"], x["loss"], x["rtt"]) for x in rows] == [
        ("gbn lossless", "none", "80ms"), ("gbn", "0.01%", "80ms"), ("fec+gbn xor:32,4", "0.01%", "80ms")]
    for x in rows:
        assert not x.get("aborted") and x["completion_errors"] == 0, x
        assert x["emu_b2a_drop_loss"] == 0, x  # loss a->b only
        assert x["seconds"] == 3
    lossless, gbn, fec = rows
    assert lossless["emu_a2b_drop_loss"] == 0  # (a stalled host may still time out: no retx bound)
    assert gbn["recovery"] == "gbn" and fec["recovery"] == "fec+gbn" and fec["fec"] == "xor:32,4"
    # the ratios are the round's own
    b = lossless["goodput_gbps"]
    assert gbn["x_gbn"] == 1.0 and fec["x_gbn"] == pytest.approx(fec["goodput_gbps"] / gbn["goodput_gbps"])
    bdp = b * 1e9 / 8 * 0.08 / 4096
    ev = model.ge_params("random 0.01%")[1]
    assert gbn["bdp_pkts"] == pytest.approx(bdp) and gbn["e_x_bdp"] == pytest.approx(ev * bdp)
    frac = model.gbn_goodput_fraction(ev, 4096, b * 1e9, 0.08)
    assert gbn["model_gbn_gbps"] == pytest.approx(b * frac)
    # A coded every request packet it sent (originals and go-back rounds; a frame coded, refused
    # by the port and then given up for a go-back is coded again) and dropped no FEC frame
    assert fec["fec_tx_covered"] >= fec["tx_req_packets"] + fec["tx_retransmits"] > 0, fec
    assert fec["fec_tx_dropped"] == 0, fec
    assert gbn["fec_tx_covered"] == 0 and gbn["fec_tx_frames"] == 0
