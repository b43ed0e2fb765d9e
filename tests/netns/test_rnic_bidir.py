"""rnic -b (bidirectional), as perftest's: both sides run the requester at once.

Two rnic processes on a veth pair (af_packet). Each side must send its -n
messages and receive the peer's -n: exact counts both ways, from each side's
own report, the peer's report as carried by perftest's exchange, and the
engine counters (request payload accepted in order, first transmissions).
The printed row adds both directions (perftest's print_full_bw_report).
"""
import math

import pytest

from conftest import pair_results, rnic_pair

MTU = 1024


def check_direction_counts(r, n, size, pkts_per_msg=None):
    """One side's JSON: both directions complete, exact payload bytes each way."""
    d = r["directions"]
    assert d["local"]["iters"] == n and d["local"]["bytes"] == n * size, d
    assert d["remote"]["iters"] == n and d["remote"]["bytes"] == n * size, d
    assert r["iters"] == n
    # the row is the sum of the two directions (perftest -b)
    assert r["bw_avg_mbps"] == pytest.approx(d["local"]["bw_avg_mbps"] + d["remote"]["bw_avg_mbps"])
    assert d["local"]["bw_avg_mbps"] > 0 and d["remote"]["bw_avg_mbps"] > 0
    dev = r["dev_counters"]
    # first transmissions of our requests: exactly n messages of ceil(size/MTU) packets
    # (an RDMA READ request is one packet)
    per = math.ceil(size / MTU) if pkts_per_msg is None else pkts_per_msg
    assert dev["tx_req_packets"] == n * per, dev
    return dev


@pytest.mark.parametrize("mode,size,n", [
    ("write_bw", 65536, 300),
    ("send_bw", 4096, 500),
])
def test_bidir_exact_bytes_both_ways(veth_pair, tmp_path, mode, size, n):
    rcs, out, _ = rnic_pair(veth_pair, tmp_path, mode, f"-b -s {size} -n {n}")
    r = pair_results(rcs, out, [tmp_path / "server.json", tmp_path / "client.json"])
    for side, res, text in (("server", r.server, r.sout), ("client", r.client, r.cout)):
        dev = check_direction_counts(res, n, size)
        # the peer's requests this side's engine accepted in order: exactly its n messages
        assert dev["rx_req_bytes"] == n * size, (side, dev)
        assert dev["rx_req_packets"] == n * math.ceil(size / MTU), (side, dev)
        if mode == "send_bw":
            rx = res["directions"]["received"]
            assert rx["iters"] == n and rx["bytes"] == n * size and rx["completion_errors"] == 0
        assert "-b: this side sent %d messages" % n in text, text
    # each side's "remote" is the other side's "local"
    assert r.server["directions"]["remote"]["iters"] == r.client["directions"]["local"]["iters"]
    assert r.client["directions"]["remote"]["iters"] == r.server["directions"]["local"]["iters"]
    assert r.config["bidirectional"] is True


def test_bidir_two_qps(veth_pair, tmp_path):
    """-q 2 -b: perftest counts -n per QP; both QPs of both sides complete."""
    n, size = 150, 8192
    rcs, out, _ = rnic_pair(veth_pair, tmp_path, "write_bw", f"-b -q 2 -s {size} -n {n}")
    r = pair_results(rcs, out, [tmp_path / "server.json", tmp_path / "client.json"])
    for res in (r.server, r.client):
        dev = check_direction_counts(res, 2 * n, size)
        assert dev["rx_req_bytes"] == 2 * n * size, dev


def test_bidir_read_bw(veth_pair, tmp_path):
    """READ both ways: each side's READs complete; the responses come from the peer's engine."""
    n, size = 200, 16384
    rcs, out, _ = rnic_pair(veth_pair, tmp_path, "read_bw", f"-b -s {size} -n {n}")
    r = pair_results(rcs, out, [tmp_path / "server.json", tmp_path / "client.json"])
    for res in (r.server, r.client):
        dev = check_direction_counts(res, n, size, pkts_per_msg=1)
        # the peer's READ requests, accepted in order: n, carrying no payload
        assert dev["rx_req_packets"] == n and dev["rx_req_bytes"] == 0, dev


def test_bidir_negative_control(veth_pair, tmp_path):
    """Without -b the server sends nothing: its engine sends no request at all."""
    n, size = 100, 65536
    rcs, out, _ = rnic_pair(veth_pair, tmp_path, "write_bw", f"-s {size} -n {n}")
    r = pair_results(rcs, out, [tmp_path / "server.json", tmp_path / "client.json"])
    assert r.server["dev_counters"]["tx_req_packets"] == 0
    assert r.client["dev_counters"]["rx_req_bytes"] == 0
    assert r.server["dev_counters"]["rx_req_bytes"] == n * size
    assert "directions" not in r.server and "directions" not in r.client


def test_bidir_duration_counts_reconcile(veth_pair, tmp_path):
    """-b -D: counts are not known up front, but they reconcile across the two boxes:
    what each side's requester completed is what the other side's engine accepted
    in order, and each side's "remote" is the other's "local"."""
    size = 65536
    rcs, out, _ = rnic_pair(veth_pair, tmp_path, "write_bw", f"-b -s {size} -D 2")
    r = pair_results(rcs, out, [tmp_path / "server.json", tmp_path / "client.json"])
    for me, peer in ((r.server, r.client), (r.client, r.server)):
        d = me["directions"]
        assert d["local"]["iters"] > 0 and d["local"]["bytes"] == d["local"]["iters"] * size
        assert d["local"]["bytes"] == peer["dev_counters"]["rx_req_bytes"], (d, peer["dev_counters"])
        assert d["remote"] == peer["directions"]["local"]
