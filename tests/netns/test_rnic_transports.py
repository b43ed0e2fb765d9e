"""UC and UD between two rnics on a veth pair, and send_lat longer than the receive queue.

UD sends name their peer in every WR (an address handle and the remote QPN) and
land behind a 40-byte GRH; UC has no ACKs. Every message must complete at both
ends with no completion error. UC WRITEs, which nothing resends, run on a memif link
(shared-memory rings: a full ring holds the sender back instead of dropping), so the
responder's count is exact.
"""
import os
import subprocess
import time
import uuid

import pytest

from conftest import check_read_responses, pair_results, serve_and_connect
from rocewan.testbed.topo import eal_lcores
from test_rnic_telemetry import RNIC, rnic_cmd, veth_h4  # noqa: F401 (fixture)


def run_pair(veth, tmp_path, opts, timeout=90):
    if not os.path.exists(RNIC):
        pytest.fail(f"{RNIC} is not built (run `make build`)")
    tag, ns, ifs = veth
    js = [tmp_path / "server.json", tmp_path / "client.json"]
    rcs, out = serve_and_connect(
        rnic_cmd(ns[1], ifs[1], f"rth4s{tag}", "10.52.0.12", f"{opts} --json {js[0]}"),
        rnic_cmd(ns[0], ifs[0], f"rth4c{tag}", "10.52.0.11", f"{opts} --json {js[1]} 10.52.0.2"),
        timeout)
    return pair_results(rcs, out, js)


@pytest.mark.parametrize("conn,mode,size", [("UC", "send_bw", 4096), ("UD", "send_bw", 1024)])
def test_unreliable_bw(veth_h4, tmp_path, conn, mode, size):
    n = 300
    r = run_pair(veth_h4, tmp_path, f"-c {conn} -s {size} -n {n} {mode}")
    assert r.client["iters"] == n and r.client["qp_counters"]["send_completions"] == n
    q = r.server["qp_counters"]
    assert q["tx_acks"] == 0  # no ACKs on UC/UD
    # on a lossless veth every SEND reaches a posted receive
    assert q["recv_completions"] == n and q["rx_no_recv_wqe"] == 0, q


def test_uc_write_bw_memif_exact(tmp_path):
    """UC write_bw, 300 x 64 KiB, rnic <-> rnic on one memif link (both in one namespace
    of their own, perftest's TCP exchange on its loopback): every request packet the
    client sent arrives and is accepted once, in order: 300 x 64, every byte."""
    if not os.path.exists(RNIC):
        pytest.fail(f"{RNIC} is not built (run `make build`)")
    n, size = 300, 65536
    tag = uuid.uuid4().hex[:6]
    ns, sdir = f"rtm{tag}", f"/run/rocewan-memif/uc{tag}"
    sock = os.path.join(sdir, "l0.sock")
    os.makedirs(sdir, exist_ok=True)
    subprocess.run(f"ip netns add {ns} && ip -n {ns} link set lo up", shell=True, check=True)
    js = [tmp_path / "server.json", tmp_path / "client.json"]

    def cmd(side, ip, args):
        role = "server" if side == "s" else "client"
        return (f"ip netns exec {ns} {RNIC} {eal_lcores()} --no-huge -m 512 --no-shconf --no-pci "
                f"--file-prefix rtm{side}{tag} --log-level=lib.eal:error --vdev net_memif0,role={role},"
                f"id=0,socket={sock},socket-abstract=no,bsize=2048 -- --ip {ip}/24 {args}")
    try:
        opts = f"-c UC -s {size} -n {n} write_bw"
        srv = subprocess.Popen(cmd("s", "10.53.0.12", f"{opts} --json {js[0]}"), shell=True,
                               start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
        seen = ""
        t0 = time.monotonic()  # hang guards only: each wait ends on the line or the socket
        while "Waiting for client" not in seen and time.monotonic() - t0 < 60:
            line = srv.stdout.readline()
            if not line:
                break
            seen += line
        assert "Waiting for client" in seen and os.path.exists(sock), seen
        cli = subprocess.run(cmd("c", "10.53.0.11", f"{opts} --json {js[1]} 127.0.0.1"), shell=True,
                             capture_output=True, text=True, timeout=300, start_new_session=True)
        sout, _ = srv.communicate(timeout=300)
        rcs, out = [srv.returncode, cli.returncode], [seen + sout, cli.stdout + cli.stderr]
    finally:
        subprocess.run(f"ip netns pids {ns} | xargs -r kill -9; ip netns del {ns}; rm -rf {sdir}",
                       shell=True)
    r = pair_results(rcs, out, js)
    assert r.client["iters"] == n and r.client["qp_counters"]["send_completions"] == n, r.client
    qc, qs = r.client["qp_counters"], r.server["qp_counters"]
    assert qs["tx_acks"] == 0  # no ACKs on UC
    assert qc["tx_req_packets"] == qs["rx_req_packets"] == n * size // 1024, (qc, qs)
    assert qs["rx_req_bytes"] == n * size and qs["rx_uc_msg_drops"] == 0, qs


@pytest.mark.parametrize("conn", ["RC", "UD"])
def test_send_lat_longer_than_the_receive_queue(veth_h4, tmp_path, conn):
    # 512 receives are posted before the run; each iteration tops the queue up
    r = run_pair(veth_h4, tmp_path, f"-c {conn} -s 64 -n 700 send_lat")
    assert r.client["iters"] == 700 and r.server["iters"] == 700
    assert r.client["lat_typical_us"] > 0  # how small: a timing figure, not make test


@pytest.mark.parametrize("opt,mode", [("--lcores 2", "write_bw"), ("-q 2", "write_lat"),
                                      ("-q 65", "write_bw")])
def test_several_qps_or_lcores_refused(opt, mode):
    """Not built: one clear line and exit 2, never a silent run on fewer QPs / lcores."""
    if not os.path.exists(RNIC):
        pytest.fail(f"{RNIC} is not built")
    r = subprocess.run(f"{RNIC} --no-huge -- --ip 10.52.0.11/24 {opt} {mode}", shell=True,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert opt.split()[0] in r.stderr, r.stderr


@pytest.mark.parametrize("conn,mode,size", [
    ("RC", "write_bw", 65536), ("RC", "send_bw", 4096), ("RC", "read_bw", 16384),
    ("UD", "send_bw", 1024)])
def test_several_qps(veth_h4, tmp_path, conn, mode, size):
    """-q 4: perftest's four key lines each way, -n messages on every QP, one CQ."""
    n, q = 100, 4
    r = run_pair(veth_h4, tmp_path, f"-c {conn} -q {q} -s {size} -n {n} {mode}")
    assert r.client["iters"] == n * q and r.client["qp_counters"]["send_completions"] == n * q
    assert "Number of qps   : 4" in r.cout
    if mode == "send_bw":
        assert r.server["iters"] == n * q and r.server["qp_counters"]["recv_completions"] == n * q
    dev = r.server["device_counters"]  # MTU 1024: size // 1024 packets a message
    if mode == "read_bw":
        check_read_responses(dev, r.client["device_counters"], n * q, size // 1024)
    else:
        assert dev["rx_req_packets"] == n * q * (size // 1024), dev


def ip_in_addr_errors(ns):
    """IP InAddrErrors of a namespace: frames its kernel routed and had to drop."""
    lines = [ln.split() for ln in subprocess.run(f"ip netns exec {ns} cat /proc/net/snmp", shell=True,
                                                 capture_output=True, text=True).stdout.splitlines()
             if ln.startswith("Ip:")]
    return int(lines[1][lines[0].index("InAddrErrors")])


@pytest.mark.parametrize("own_mac", [False, True])
def test_own_mac_keeps_roce_out_of_the_kernel(veth_h4, tmp_path, own_mac):
    """With --own-mac the kernel sharing the interface drops RoCE frames as not its own
    (PACKET_OTHERHOST) instead of routing each and counting an address error."""
    ns = veth_h4[1][1]
    before = ip_in_addr_errors(ns)
    r = run_pair(veth_h4, tmp_path, f"-s 65536 -n 100 {'--own-mac' if own_mac else ''} write_bw")
    routed = ip_in_addr_errors(ns) - before
    assert r.client["iters"] == 100 and r.config["own_mac"] == own_mac
    frames = r.server["qp_counters"]["rx_req_packets"]
    assert frames == 100 * 64
    if own_mac:
        assert routed < 10, routed
    else:
        assert routed >= frames, (routed, frames)
