"""Debian's ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong and ibv_srq_pingpong,
unmodified, on rnic0 (rnic-exec, docs/verbs.md) on both ends of a veth pair, with --chk
and -g 0: /proc/PID/exe is the Debian binary and the devices' counters are exact."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verbs"))
from harness import RNIC_EXEC, check_ok, check_requests, pkts, run_pair  # noqa: E402


@pytest.fixture(autouse=True)
def built():
    if not os.path.exists(RNIC_EXEC):
        pytest.fail(f"{RNIC_EXEC} is not built (run `make build`)")


@pytest.mark.parametrize("size,iters,mtu", [(4096, 50, 1024), (3000, 20, 512), (100, 30, 1024)])
def test_rc_pingpong(veth_pair, tmp_path, size, iters, mtu):
    tool = "/usr/bin/ibv_rc_pingpong"
    cmd = [tool, "-d", "rnic0", "-g", "0", "-c", "-s", str(size), "-n", str(iters),
           "-m", str(mtu)]
    r = run_pair(veth_pair, tmp_path, cmd, cmd, dev_opts=["--mtu", str(mtu)])
    check_ok(r, [tool, tool])
    assert f"{iters} iters in" in r.out[1], r.both()
    n = iters * pkts(size, mtu)
    # a ping-pong: each side sends every message once and receives every one
    for side in (0, 1):
        check_requests(r, side, n)
        d = r.dev(side)
        assert d["send_completions"] == iters and d["recv_completions"] == iters, d


def test_uc_pingpong(veth_pair, tmp_path):
    tool = "/usr/bin/ibv_uc_pingpong"
    iters, size = 40, 2048
    cmd = [tool, "-d", "rnic0", "-g", "0", "-c", "-s", str(size), "-n", str(iters)]
    r = run_pair(veth_pair, tmp_path, cmd, cmd)
    check_ok(r, [tool, tool])
    for side in (0, 1):
        d = r.dev(side)
        # UC: no ACKs, no retransmission; on this lossless path every packet arrives
        assert d["tx_req_packets"] == iters * pkts(size, 1024), d
        assert d["rx_req_packets"] == iters * pkts(size, 1024), d
        assert d["tx_acks"] == 0 and d["recv_completions"] == iters, d


def test_ud_pingpong(veth_pair, tmp_path):
    tool = "/usr/bin/ibv_ud_pingpong"
    iters, size = 40, 1024  # one MTU (UD: a message is a packet)
    cmd = [tool, "-d", "rnic0", "-g", "0", "-c", "-s", str(size), "-n", str(iters)]
    r = run_pair(veth_pair, tmp_path, cmd, cmd)
    check_ok(r, [tool, tool])
    for side in (0, 1):
        d = r.dev(side)
        assert d["tx_req_packets"] == iters and d["rx_req_packets"] == iters, d
        assert d["recv_completions"] == iters and d["send_completions"] == iters, d


def test_srq_pingpong(veth_pair, tmp_path):
    """16 QPs (the tool's default) sharing one SRQ on each side; the interposer's SRQ lends
    receive WRs to the QPs' queues (docs/verbs.md)."""
    tool = "/usr/bin/ibv_srq_pingpong"
    iters, size, qps = 20, 4096, 4
    cmd = [tool, "-d", "rnic0", "-g", "0", "-c", "-s", str(size), "-n", str(iters),
           "-q", str(qps)]
    r = run_pair(veth_pair, tmp_path, cmd, cmd)
    check_ok(r, [tool, tool])
    # the tool stops once -n messages came back on each side: up to one message per QP more
    # may be sent, and those still in flight at the end are never received (no closing
    # handshake), so the exact counts are per message: whole messages, each one received
    # and completed, per QP pair
    k = pkts(size, 1024)
    for side in (0, 1):
        d = r.dev(side)
        assert d["tx_req_packets"] % k == 0, d
        assert iters * k <= d["tx_req_packets"] <= (iters + 2 * qps) * k, d
        assert iters <= d["recv_completions"] <= iters + 2 * qps, d
        assert d["rx_req_packets"] >= d["recv_completions"] * k, d
        assert d["tx_retransmits"] or d["rx_req_packets"] <= r.dev(1 - side)["tx_req_packets"]


@pytest.mark.parametrize("flags", [["-N"], ["-e"], ["-N", "-e"]])
def test_rc_pingpong_wr_api_and_events(veth_pair, tmp_path, flags):
    """--new_send posts through struct ibv_qp_ex's ibv_wr_* (ibv_qp_to_qp_ex after
    ibv_create_qp_ex), --events sleeps in ibv_get_cq_event on a completion channel while
    the library's thread receives."""
    tool = "/usr/bin/ibv_rc_pingpong"
    iters, size = 30, 4096
    cmd = [tool, "-d", "rnic0", "-g", "0", "-c", "-s", str(size), "-n", str(iters)] + flags
    r = run_pair(veth_pair, tmp_path, cmd, cmd)
    check_ok(r, [tool, tool])
    for side in (0, 1):
        check_requests(r, side, iters * pkts(size, 1024))
        calls = r.docs[side]["results"]["verbs_calls"]
        if "-N" in flags:  # every send went through wr_start .. wr_complete
            assert calls["wr_complete"] == iters and calls["post_send"] == 0, calls
        else:
            assert calls["post_send"] == iters and calls["wr_complete"] == 0, calls
        if "-e" in flags:  # one event per armed CQ that completed, each one acknowledged
            assert calls["cq_events"] >= iters, calls


def test_rc_pingpong_odp_refused(veth_pair, tmp_path):
    """On-demand paging is not offered: the tool says so and exits; nothing crashes."""
    tool = "/usr/bin/ibv_rc_pingpong"
    cmd = [tool, "-d", "rnic0", "-g", "0", "-o"]
    r = run_pair(veth_pair, tmp_path, cmd, cmd, timeout=20)
    assert r.rcs[0] == 1, r.both()  # exit(1) from the tool, not a signal
    assert "ODP" in r.out[0] or "odp" in r.out[0].lower(), r.both()
