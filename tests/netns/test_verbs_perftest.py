"""Debian's perftest 4.5, unmodified, on rnic0 (rnic-exec, docs/verbs.md) at both ends of a
veth pair: ib_write_bw / ib_send_bw / ib_read_bw / ib_atomic_bw and the three latency
tools, RC plus UC and UD. Counts are exact per opcode: WRITE and SEND one request packet
per MTU, READ one request and one response per MTU, atomics one request and one
ACKNOWLEDGE. perftest 4.5 takes its ibv_wr_* post-send path only on the devices it knows
by vendor_part_id (ConnectX-4 and later, EFA, HNS) and ibv_post_send on any other, so on
rnic0 its default is --use_old_post_send (docs/verbs.md); verbs_calls shows the path
taken. The ibv_wr_* path runs in test_verbs_pingpong.py (ibv_rc_pingpong --new_send)."""
import os
import sys

import pytest
from conftest import check_read_responses

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verbs"))
from harness import RNIC_EXEC, check_ok, check_requests, pkts, run_pair  # noqa: E402

MTU = 1024
# perftest's default (ibv_post_send on rnic0), and the same asked for explicitly
PATHS = {"default": [], "old": ["--use_old_post_send"]}


@pytest.fixture(autouse=True)
def built():
    if not os.path.exists(RNIC_EXEC):
        pytest.fail(f"{RNIC_EXEC} is not built (run `make build`)")


def perftest(vp, tmp_path, tool, args, dev_opts=()):
    path = f"/usr/bin/{tool}"
    cmd = [path, "-d", "rnic0", "-x", "0", "-m", str(MTU)] + args
    r = run_pair(vp, tmp_path, cmd, cmd, dev_opts=dev_opts)
    check_ok(r, [path, path])
    return r


def check_path(r, side, path, posts):
    """The requester's posts went through ibv_post_send, at least @posts calls."""
    calls = r.docs[side]["results"]["verbs_calls"]
    assert calls["post_send"] >= posts and calls["wr_complete"] == 0, (path, calls)


@pytest.mark.parametrize("tool,size,iters,path", [("ib_write_bw", 4096, 100, "default"),
                                                  ("ib_write_bw", 4096, 100, "old"),
                                                  ("ib_send_bw", 3000, 100, "default")])
def test_write_send_bw(veth_pair, tmp_path, tool, size, iters, path):
    r = perftest(veth_pair, tmp_path, tool, ["-s", str(size), "-n", str(iters)] + PATHS[path])
    check_requests(r, 1, iters * pkts(size, MTU))  # side 1: the client, the requester
    cli, srv = r.dev(1), r.dev(0)
    assert cli["send_completions"] >= iters, cli
    if tool == "ib_send_bw":
        assert srv["recv_completions"] == iters, srv
    check_path(r, 1, path, 1)


def test_read_bw(veth_pair, tmp_path, path="default"):
    size, iters = 4096, 100
    r = perftest(veth_pair, tmp_path, "ib_read_bw", ["-s", str(size), "-n", str(iters)]
                 + PATHS[path])
    check_requests(r, 1, iters)  # one READ request packet per message
    check_read_responses(r.dev(0), r.dev(1), iters, pkts(size, MTU))
    assert r.dev(1)["rx_read_responses"] >= iters * pkts(size, MTU)
    check_path(r, 1, path, 1)


def test_atomic_bw(veth_pair, tmp_path, path="default"):
    iters = 100
    r = perftest(veth_pair, tmp_path, "ib_atomic_bw", ["-n", str(iters)] + PATHS[path])
    check_requests(r, 1, iters)
    srv, cli = r.dev(0), r.dev(1)
    # a duplicate atomic is answered from the responder's saved result, not executed again
    assert iters <= srv["tx_atomic_acks"] <= iters + cli["tx_retransmits"], (srv, cli)
    assert cli["rx_atomic_acks"] >= iters, cli
    check_path(r, 1, path, 1)


@pytest.mark.parametrize("tool", ["ib_write_lat", "ib_send_lat", "ib_read_lat"])
def test_lat(veth_pair, tmp_path, tool, path="default"):
    """ib_write_lat spins on a buffer byte and calls no verb while it waits: the library's
    progress thread has to receive for it."""
    iters = 50
    r = perftest(veth_pair, tmp_path, tool, ["-n", str(iters)] + PATHS[path])
    if tool == "ib_read_lat":
        check_requests(r, 1, iters)
        check_read_responses(r.dev(0), r.dev(1), iters, 1)
        check_path(r, 1, path, iters)
    else:  # a ping-pong: both sides send every message (2 bytes: one packet)
        for side in (0, 1):
            check_requests(r, side, iters)
            check_path(r, side, path, iters)
        if tool == "ib_send_lat":
            assert r.dev(0)["recv_completions"] == iters == r.dev(1)["recv_completions"]


@pytest.mark.parametrize("conn,tool,size", [("UC", "ib_write_bw", 4096), ("UD", "ib_send_bw", 1024)])
def test_uc_ud(veth_pair, tmp_path, conn, tool, size):
    iters = 100
    r = perftest(veth_pair, tmp_path, tool, ["-c", conn, "-s", str(size), "-n", str(iters)])
    n = iters * pkts(size, MTU)
    assert r.dev(1)["tx_req_packets"] == n, r.dev(1)
    # unreliable: nothing is resent, and on this lossless path everything arrives
    assert r.dev(0)["rx_req_packets"] == n and r.dev(1)["tx_retransmits"] == 0, r.dev(0)
    if tool == "ib_send_bw":
        assert r.dev(0)["recv_completions"] == iters, r.dev(0)
