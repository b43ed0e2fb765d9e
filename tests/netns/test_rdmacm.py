"""Debian's rdma_cm programs (rdmacm-utils, perftest's -R), unmodified, on rnic0 through
rnic-exec (docs/rdma-cm.md, "Unmodified applications"), rnic to rnic over a veth pair:
/proc/PID/exe is the Debian binary, both exit 0, the CM exchange and the data counts are
exact, and no rdma_cm id is left at exit."""
import os
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verbs"))
from harness import RNIC_EXEC, Pair, check_ok, exec_argv  # noqa: E402


@pytest.fixture(autouse=True)
def built():
    if not os.path.exists(RNIC_EXEC):
        pytest.fail(f"{RNIC_EXEC} is not built (run `make build`)")


def wait_device(vp, proc, timeout=30):
    """Until the server's rnic0 answers ping from the client's namespace: its device is
    up, which the programs below start just before they listen."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            return False
        r = subprocess.run(["ip", "netns", "exec", vp.ns[0], "ping", "-c1", "-W1", vp.rip[1]],
                           capture_output=True)
        if r.returncode == 0:
            return True
    return False


def run_cm_pair(vp, tmp_path, srv_cmd, cli_cmd, timeout=90):
    """Server in ns[1], client in ns[0] connecting to the server's rnic0 address (the
    programs' own connection goes through rdma_cm, so the address is rnic0's)."""
    js = [tmp_path / "server.json", tmp_path / "client.json"]
    sargv, _ = exec_argv(vp, 1, [], srv_cmd, js[0])
    srv = subprocess.Popen(sargv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    exe = [None, None]
    up = wait_device(vp, srv)
    try:
        exe[0] = os.readlink(f"/proc/{srv.pid}/exe")
    except OSError:
        pass
    cout, crc = "server's device never came up", -1
    if up:
        # from the device's start to rdma_listen: a few calls; the margin is for a loaded
        # host (a client that came too early would be rejected and fail the test loudly)
        time.sleep(2)
        cargv, _ = exec_argv(vp, 0, [], cli_cmd, js[1])
        cli = subprocess.Popen(cargv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
        time.sleep(0.05)
        try:
            exe[1] = os.readlink(f"/proc/{cli.pid}/exe")
        except OSError:
            pass
        try:
            cout, _ = cli.communicate(timeout=timeout)
            crc = cli.returncode
        except subprocess.TimeoutExpired:
            cli.kill()
            cout, _ = cli.communicate()
            cout, crc = f"client timed out after {timeout} s:\n{cout}", -9
    try:
        sout, _ = srv.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        srv.kill()
        sout, _ = srv.communicate()
    import json
    docs = [json.load(open(j)) if j.exists() else None for j in js]
    return Pair([srv.returncode, crc], [sout, cout], exe, docs)


def cm(r, side):
    return r.docs[side]["results"]["rdma_cm"]


def check_cm(r, conns, crossed=0):
    """@conns connections, each REQ / REP / RTU once, no retry, no timeout, no drop but
    @crossed duplicates per side (both sides disconnecting at once: the DREQs cross, each
    side answers the other's with a DREP, and the DREP to its own DREQ after that finds
    the ID already in TIMEWAIT)."""
    s, c = cm(r, 0), cm(r, 1)
    assert c["tx_REQ"] == conns and s["rx_REQ"] == conns, (s, c)
    assert s["tx_REP"] == conns and c["rx_REP"] == conns, (s, c)
    assert c["tx_RTU"] == conns and s["rx_RTU"] == conns, (s, c)
    for d in (s, c):
        assert d["cm_established"] == conns and d["cm_retries"] == 0, d
        assert d["cm_timeouts"] == 0 and d["cm_tx_err"] == 0, d
        assert d["drop_duplicate"] <= crossed, d
        assert all(v == 0 for k, v in d.items()
                   if k.startswith("drop_") and k != "drop_duplicate"), d


def test_rping(veth_pair, tmp_path):
    """rping -V validates every byte; 100 iterations, each a SEND of the buffer advert, an
    RDMA READ by the server, a SEND, an RDMA WRITE by the server, a SEND (rping.c)."""
    tool = "/usr/bin/rping"
    n = 100
    r = run_cm_pair(veth_pair, tmp_path, [tool, "-s", "-a", veth_pair.rip[1], "-V", "-C", str(n)],
                    [tool, "-c", "-a", veth_pair.rip[1], "-V", "-C", str(n)])
    check_ok(r, [tool, tool])
    check_cm(r, 1)
    s, c = r.dev(0), r.dev(1)
    # client: 2 SENDs per iteration; server: 2 SENDs, 1 READ request, 1 WRITE (64 bytes)
    assert c["send_completions"] == 2 * n and s["send_completions"] == 4 * n, (s, c)
    assert c["tx_req_packets"] == 2 * n and s["tx_req_packets"] == 4 * n, (s, c)
    # a loaded host's stall may fire the retransmit timer (never asserted away): each
    # retransmission then follows a timer expiry, and -V has checked every byte
    for d in (s, c):
        assert d["tx_retransmits"] == 0 or d["timeouts"] > 0, d
    for d in (cm(r, 0), cm(r, 1)):
        assert d["ids_live"] == 0, d
    # one DREQ and its DREP, whichever side sent it
    assert cm(r, 0)["tx_DREQ"] + cm(r, 1)["tx_DREQ"] == 1
    assert cm(r, 0)["tx_DREP"] + cm(r, 1)["tx_DREP"] == 1


def test_ucmatose(veth_pair, tmp_path):
    tool = "/usr/bin/ucmatose"
    r = run_cm_pair(veth_pair, tmp_path, [tool, "-c", "10"],
                    [tool, "-s", veth_pair.rip[1], "-c", "10"])
    check_ok(r, [tool, tool])
    assert "return status 0" in r.out[0] and "return status 0" in r.out[1], r.both()
    check_cm(r, 10)
    for d in (cm(r, 0), cm(r, 1)):
        assert d["ids_live"] == 0, d


def test_rdma_server_client(veth_pair, tmp_path):
    """rdma_create_ep / rdma_get_request on synchronous ids, rdma_verbs.h's inline
    rdma_post_send / rdma_get_send_comp on the CQs rdma_create_qp made."""
    r = run_cm_pair(veth_pair, tmp_path, ["/usr/bin/rdma_server"],
                    ["/usr/bin/rdma_client", "-s", veth_pair.rip[1]])
    check_ok(r, ["/usr/bin/rdma_server", "/usr/bin/rdma_client"])
    assert "rdma_server: end 0" in r.out[0] and "rdma_client: end 0" in r.out[1], r.both()
    check_cm(r, 1, crossed=1)
    s, c = r.dev(0), r.dev(1)
    assert s["send_completions"] == 1 and c["send_completions"] == 1, (s, c)
    assert s["recv_completions"] == 1 and c["recv_completions"] == 1, (s, c)


def test_ib_write_bw_rdma_cm(veth_pair, tmp_path):
    """perftest's -R: the parameter exchange as SEND/RECV on an rdma_cm QP of its own, then
    the test QP through the CM; -n 20 of 4096 bytes at MTU 1024 is 80 WRITE packets."""
    tool = "/usr/bin/ib_write_bw"
    args = ["-R", "-d", "rnic0", "-x", "0", "-n", "20", "-s", "4096"]
    r = run_cm_pair(veth_pair, tmp_path, [tool] + args, [tool] + args + [veth_pair.rip[1]])
    check_ok(r, [tool, tool])
    check_cm(r, 2, crossed=2)
    s, c = r.dev(0), r.dev(1)
    # the client's packets: 80 WRITEs plus the exchange's SENDs, as many as the server's
    # (tx_req_packets counts first sends; a loaded host's stall may fire a retransmit,
    # which then arrives as a duplicate)
    exch = s["send_completions"]
    assert c["tx_req_packets"] == 80 + exch, (s, c)
    retx = c["tx_retransmits"]
    assert 80 + exch <= s["rx_req_packets"] <= 80 + exch + retx, (s, c)
