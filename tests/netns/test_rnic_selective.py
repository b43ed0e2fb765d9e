"""rnic against rnic with the selective loss recoveries (--recovery gbone | irn) on
both sides of a veth pair, on a clean link: the extension opcodes (self-placing
SENDs with SPETH and WRITE MIDDLE/LAST with RETH, docs/wire.md) cross the wire,
are accepted once each, and rc_pingpong --chk checks the messages. Losses are
covered deterministically by the harness tests (tests/unit/transport/
test_transport_sel.c); end-to-end losses need the lossy-emu's drop rules.
"""
import re

import pytest

from conftest import rnic_pair as pair

MODES = ["gbone", "irn"]


def pingpong(vp, tmp_path, mode, size, iters, timeout=60):
    rcs, out, res = pair(vp, tmp_path, "rc_pingpong", f"-s {size} -n {iters} --recovery {mode}",
                         side_opts=("", "--chk"), timeout=timeout)
    assert rcs == [0, 0], f"exit codes {rcs}\n--- server:\n{out[0]}\n--- client:\n{out[1]}"
    for side, o, r in zip(("server", "client"), out, res):
        assert r["config"]["recovery"] == mode
        m = re.search(r"(\d+) bytes in [\d.]+ seconds = [\d.]+ Mbit/sec\n(\d+) iters in", o)
        assert m and (int(m.group(1)), int(m.group(2))) == (2 * size * iters, iters), f"{side}:\n{o}"
        q = r["results"]["qp_counters"]
        assert (q["send_completions"], q["recv_completions"]) == (iters, iters), (side, q)
        assert r["results"]["completion_errors"] == 0
    return [r["results"]["qp_counters"] for r in res]


@pytest.mark.parametrize("mode", MODES)
def test_clean(veth_pair, tmp_path, mode):
    size, iters = 4096, 200
    qs, qc = pingpong(veth_pair, tmp_path, mode, size, iters)
    for q in (qs, qc):
        # every SEND packet (self-placing, with SPETH) accepted in order, once
        assert q["tx_req_packets"] == iters * 4 and q["rx_req_packets"] == iters * 4, q
        assert q["rx_invalid_requests"] == 0 and q["tx_nak_seq_err"] == 0, q


@pytest.mark.parametrize("mode", MODES)
def test_write_bw_clean(veth_pair, tmp_path, mode):
    size, iters = 65536, 200
    rcs, out, res = pair(veth_pair, tmp_path, "write_bw", f"-s {size} -n {iters} --recovery {mode}")
    assert rcs == [0, 0], f"exit codes {rcs}\n--- server:\n{out[0]}\n--- client:\n{out[1]}"
    qs, qc = (r["results"]["qp_counters"] for r in res)
    assert res[1]["results"]["iters"] == iters and res[1]["results"]["completion_errors"] == 0
    # each 64-packet WRITE: FIRST, 62 self-placing MIDDLE (RETH), self-placing LAST, taken once
    assert qs["rx_req_packets"] >= iters * size // 1024, qs
    assert qs["rx_invalid_requests"] == 0 and qs["tx_nak_seq_err"] == 0, qs
    assert qc["send_completions"] >= iters, qc
