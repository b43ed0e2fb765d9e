"""rnic -b against unmodified perftest -b on Linux rxe (QEMU guest, see test_rnic_rxe.py).

perftest's duplex bandwidth tests run the requester on both sides at once
(write_bw: run_iter_bw on both; send_bw: run_iter_bi, sending and receiving).
Each side then prints one row adding its own and the peer's report. Checked
exactly, on both sides: perftest's row (its own -n iterations), the rnic's two
directions (its own requests and perftest's report as carried by the exchange),
and the rnic's engine counters for each direction: its first transmissions and
rxe's requests it accepted in order (no loss on this path).
"""
import pytest

from test_rnic_rxe import (KIB, check_error_counters, check_packet_totals,  # noqa: F401
                           perftest_row, pkts, run_pair, rxe_vm)

CASES = [
    ("write_bw", 64 * KIB, 10, 1024),
    ("send_bw", 4 * KIB, 20, 1024),
]


@pytest.mark.parametrize("rnic_is_server", [False, True], ids=["rnic-client", "rnic-server"])
@pytest.mark.parametrize("mode,size,iters,mtu", CASES,
                         ids=[f"{m}-{s}B-mtu{u}" for m, s, n, u in CASES])
def test_bidirectional_against_rxe(rxe_vm, tmp_path, mode, size, iters, mtu, rnic_is_server):  # noqa: F811
    opts = f"-b -s {size} -n {iters}"
    tool = f"ib_{mode} -d rxe0 -x 1 -m {mtu} {opts}"
    run = run_pair(rxe_vm, tmp_path, mode, opts, tool, rnic_is_server, mtu=mtu)
    r = run.res["results"]
    row = perftest_row(run, size)
    assert int(row[1]) == iters, f"rxe's {tool} reports {row[1]} iterations, not {iters}{run.both()}"
    d = r["directions"]
    assert d["local"]["iters"] == iters and d["local"]["bytes"] == iters * size, f"{d}{run.both()}"
    assert d["remote"]["iters"] == iters and d["remote"]["bytes"] == iters * size, (
        f"perftest's report as the rnic got it: {d['remote']}{run.both()}")
    assert d["local"]["bw_avg_mbps"] > 0 and d["remote"]["bw_avg_mbps"] > 0, d
    assert r["bw_avg_mbps"] == pytest.approx(d["local"]["bw_avg_mbps"] + d["remote"]["bw_avg_mbps"])
    n = iters * pkts(size, mtu)
    q = run.q
    got = {k: q[k] for k in ("tx_req_packets", "rx_req_packets", "send_completions")}
    expect = {"tx_req_packets": n, "rx_req_packets": n, "send_completions": iters}
    if mode == "send_bw":
        got["recv_completions"] = q["recv_completions"]
        expect["recv_completions"] = iters
        assert d["received"]["iters"] == iters and d["received"]["completion_errors"] == 0, d
    assert got == expect, (f"rnic counters {got}, expected {expect}: {iters} x {size} B each way "
                           f"at MTU {mtu}{run.both()}")
    assert run.res["results"]["dev_counters"]["rx_req_bytes"] == iters * size, run.both()
    check_packet_totals(run)
