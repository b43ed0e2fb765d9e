"""rnic against rnic with the selective loss recoveries (--recovery gbone | irn) on
both sides of a veth pair, on a clean link: the extension opcodes (self-placing
SENDs with SPETH and WRITE MIDDLE/LAST with RETH, docs/wire.md) cross the wire and
are accepted once each. The mode is the one both reports name in `recovery_used`:
perftest's version exchange negotiates it; rc_pingpong's exchange cannot (it carries
no capability record), so an rc_pingpong pair runs gbn whatever --recovery asks.
Losses: tests/netns/test_recovery_e2e.py (lossy-emu drop-psn, gbn against gbone and
irn) and the harness tests (tests/unit/transport/test_transport_sel.c).
"""
import re

import pytest

from conftest import rnic_pair as pair

MODES = ["gbone", "irn"]


def bw_pair(vp, tmp_path, test, mode, size, iters):
    rcs, out, res = pair(vp, tmp_path, test, f"-s {size} -n {iters} --recovery {mode}")
    assert rcs == [0, 0], f"exit codes {rcs}\n--- server:\n{out[0]}\n--- client:\n{out[1]}"
    for side, r in zip(("server", "client"), res):
        assert r["results"]["recovery_used"] == mode, (side, r["results"]["recovery_used"])
        assert r["results"]["completion_errors"] == 0, (side, r["results"])
    assert res[1]["results"]["iters"] == iters, res[1]["results"]
    return [r["results"]["qp_counters"] for r in res]


@pytest.mark.parametrize("mode", MODES)
def test_send_bw_clean(veth_pair, tmp_path, mode):
    size, iters = 4096, 200
    qs, qc = bw_pair(veth_pair, tmp_path, "send_bw", mode, size, iters)
    # every SEND packet (self-placing, with SPETH) sent once for the first time and
    # accepted once in order; each message one receive completion, every byte
    assert qc["tx_req_packets"] == qs["rx_req_packets"] == iters * 4, (qc, qs)
    assert qs["rx_req_bytes"] == iters * size and qs["recv_completions"] == iters, qs
    assert qc["send_completions"] == iters, qc
    assert qs["rx_invalid_requests"] == 0 and qs["tx_nak_seq_err"] == 0, qs


def test_rc_pingpong_runs_gbn(veth_pair, tmp_path):
    """rc_pingpong with --recovery gbone on both sides: the exchange has no capability
    record, so both fall back to Go-Back-N, say so in one line and report it."""
    size, iters = 4096, 50
    rcs, out, res = pair(veth_pair, tmp_path, "rc_pingpong", f"-s {size} -n {iters} --recovery gbone",
                         side_opts=("", "--chk"))
    assert rcs == [0, 0], f"exit codes {rcs}\n--- server:\n{out[0]}\n--- client:\n{out[1]}"
    for side, o, r in zip(("server", "client"), out, res):
        assert r["config"]["recovery"] == "gbone" and r["results"]["recovery_used"] == "gbn", (
            side, r["results"]["recovery_used"])
        assert len([ln for ln in o.splitlines() if "falling back from --recovery gbone" in ln]) == 1, o
        m = re.search(r"(\d+) bytes in [\d.]+ seconds = [\d.]+ Mbit/sec\n(\d+) iters in", o)
        assert m and (int(m.group(1)), int(m.group(2))) == (2 * size * iters, iters), f"{side}:\n{o}"
        q = r["results"]["qp_counters"]
        assert (q["send_completions"], q["recv_completions"]) == (iters, iters), (side, q)
        # Go-Back-N's plain SENDs: nothing placed out of order, no notices
        assert q["tx_req_packets"] == q["rx_req_packets"] == iters * 4, (side, q)
        assert q["tx_racks"] == q["rx_racks"] == 0, (side, q)


@pytest.mark.parametrize("mode", MODES)
def test_write_bw_clean(veth_pair, tmp_path, mode):
    size, iters = 65536, 200
    qs, qc = bw_pair(veth_pair, tmp_path, "write_bw", mode, size, iters)
    # each 64-packet WRITE: FIRST, 62 self-placing MIDDLE (RETH), self-placing LAST, sent
    # once for the first time and accepted once in order, every byte
    assert qc["tx_req_packets"] == qs["rx_req_packets"] == iters * size // 1024, (qc, qs)
    assert qs["rx_req_bytes"] == iters * size, qs
    assert qs["rx_invalid_requests"] == 0 and qs["tx_nak_seq_err"] == 0, qs
    assert qc["send_completions"] == iters, qc
