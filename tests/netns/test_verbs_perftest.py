"""Debian's perftest 4.5, unmodified, on rnic0 (rnic-exec, docs/verbs.md) at both ends of a
veth pair: ib_write_bw / ib_send_bw / ib_read_bw / ib_atomic_bw and the three latency
tools, RC plus UC and UD. Counts are exact per opcode: WRITE and SEND one request packet
per MTU, READ one request and one response per MTU, atomics one request and one
ACKNOWLEDGE. perftest 4.5 takes its ibv_wr_* post-send path only on the devices it knows
by vendor_part_id (ConnectX-4 and later, EFA, HNS) and ibv_post_send on any other, so on
rnic0 its default is --use_old_post_send (docs/verbs.md); verbs_calls shows the path
taken. The ibv_wr_* path runs in test_verbs_pingpong.py (ibv_rc_pingpong --new_send)."""
import json
import os
import shlex
import subprocess
import sys

import pytest
from conftest import RNIC, check_read_responses, eal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verbs"))
from harness import (RNIC_EXEC, check_ok, check_requests, exec_argv, pkts,  # noqa: E402
                     run_pair, wait_listen)

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


@pytest.mark.parametrize("builtin_side", ["server", "client"])
def test_against_builtin_rnic(veth_pair, tmp_path, builtin_side):
    """The two front ends of the device layer on one wire: the rnic binary's built-in
    write_bw against unmodified ib_write_bw on rnic-exec. To the rnic a perftest peer is a
    standard one (no capability record), so both run Go-Back-N; counts exact."""
    size, iters = 65536, 50
    n = iters * pkts(size, MTU)
    js = [tmp_path / "server.json", tmp_path / "client.json"]
    tool = ["/usr/bin/ib_write_bw", "-d", "rnic0", "-x", "0", "-m", str(MTU), "-s", str(size),
            "-n", str(iters)]

    def builtin(side, server_ip=None):
        return (["ip", "netns", "exec", veth_pair.ns[side], RNIC]
                + shlex.split(eal(veth_pair.ifs[side], f"vbb{side}{os.getpid()}"))
                + ["--", "--ip", f"{veth_pair.rip[side]}/24", "--json", str(js[1 - side]),
                   "-s", str(size), "-n", str(iters), "-m", str(MTU), "write_bw"]
                + ([server_ip] if server_ip else []))

    if builtin_side == "server":
        sargv = builtin(1)
        cargv, _ = exec_argv(veth_pair, 0, [], tool + [veth_pair.kip[1]], js[1])
    else:
        sargv, _ = exec_argv(veth_pair, 1, [], tool, js[0])
        cargv = builtin(0, veth_pair.kip[1])
    srv = subprocess.Popen(sargv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    try:
        assert wait_listen(veth_pair.ns[1], 18515, srv), srv.communicate(timeout=10)[0]
        cli = subprocess.run(cargv, capture_output=True, text=True, timeout=90,
                             start_new_session=True)
        sout, _ = srv.communicate(timeout=60)
    finally:
        if srv.poll() is None:
            srv.kill()
    both = f"\nserver:\n{sout}\nclient:\n{cli.stdout}{cli.stderr}"
    assert cli.returncode == 0 and srv.returncode == 0, both
    docs = [json.load(open(j))["results"] for j in js]
    for d in docs:
        assert d["recovery_used"] == "gbn", d["recovery_used"]
    srv_dev, cli_dev = (d["device_counters"] for d in docs)
    assert cli_dev["tx_req_packets"] == n, cli_dev
    retx = cli_dev["tx_retransmits"]
    assert n <= srv_dev["rx_req_packets"] <= n + retx and (retx or srv_dev["rx_req_packets"] == n)


@pytest.mark.parametrize("tool,args", [("ib_send_bw", ["-e"]), ("ib_send_lat", ["-e"]),
                                       ("ib_write_lat", ["-I", "64"]), ("ib_send_bw", ["-b"])])
def test_events_inline_bidir(veth_pair, tmp_path, tool, args):
    """perftest's -e (sleep in ibv_get_cq_event on a completion channel), -I (inline data)
    and -b (both sides request at once)."""
    iters = 100
    size = 2 if "lat" in tool else 4096
    r = perftest(veth_pair, tmp_path, tool, ["-s", str(size), "-n", str(iters)] + args)
    n = iters * pkts(size, MTU)
    both = "lat" in tool or "-b" in args
    for side in ((0, 1) if both else (1,)):
        check_requests(r, side, n)
    if tool == "ib_send_bw":
        assert r.dev(0)["recv_completions"] == iters, r.dev(0)
    if "-e" in args:  # the receiver slept on its channel and was woken for its completions
        assert r.docs[0]["results"]["verbs_calls"]["cq_events"] >= 1, r.docs[0]["results"]


@pytest.mark.parametrize("cc", ["timely", "none"])
def test_cc_through_perftest(veth_pair, tmp_path, cc):
    """--cc reaches the engine of an unmodified program's QPs: TIMELY (Mittal et al.,
    SIGCOMM 2015) moves its rate on the RTT samples of every ACK; with none (the negative
    control) nothing does."""
    iters = 200
    r = perftest(veth_pair, tmp_path, "ib_write_bw", ["-s", "65536", "-n", str(iters)],
                 dev_opts=["--cc", cc])
    cli = r.dev(1)
    check_requests(r, 1, iters * pkts(65536, MTU))
    assert r.docs[1]["results"]["cc_used"] == cc and cli["rtt_samples"] > 0, cli
    moves = cli["cc_increases"] + cli["cc_decreases"]
    assert (moves > 0) == (cc == "timely"), cli
