"""Fixtures for end-to-end tests in network namespaces (root only; CI runs as root)."""
import json
import os
import subprocess
import time
import uuid
from types import SimpleNamespace

import pytest
from rocewan.testbed.topo import eal_lcores

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ROCEWAN_BUILD", os.path.join(ROOT, "build"))


def sh(cmd, check=True):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if check and r.returncode:
        raise RuntimeError(f"{cmd}: exit {r.returncode}: {r.stderr.strip()}")
    return r


@pytest.fixture(scope="session", autouse=True)
def require_root():
    if os.geteuid() != 0:
        pytest.fail("the netns tests need root (ip netns, veth); CI runs them as root")


class VethPair:
    """Two namespaces joined by one veth pair; kernel IPs .1/.2 for TCP, MTU as asked."""

    def __init__(self, mtu=1500, subnet="10.50.0"):
        tag = uuid.uuid4().hex[:6]
        self.ns = [f"rwA{tag}", f"rwB{tag}"]
        self.ifs = [f"va{tag}", f"vb{tag}"]
        self.kip = [f"{subnet}.1", f"{subnet}.2"]
        self.rip = [f"{subnet}.11", f"{subnet}.12"]
        for n in self.ns:
            sh(f"ip netns add {n}")
        sh(f"ip link add {self.ifs[0]} netns {self.ns[0]} mtu {mtu} type veth "
           f"peer name {self.ifs[1]} netns {self.ns[1]} mtu {mtu}")
        for n, i, ip in zip(self.ns, self.ifs, self.kip):
            sh(f"ip -n {n} addr add {ip}/24 dev {i}")
            sh(f"ip -n {n} link set {i} up")
            sh(f"ip -n {n} link set lo up")
            # kernel TCP through an af_packet port needs filled checksums
            sh(f"ip netns exec {n} ethtool -K {i} tx off", check=False)

    def close(self):
        for n in self.ns:
            sh(f"ip netns pids {n} | xargs -r kill -9", check=False)
            sh(f"ip netns del {n}", check=False)


@pytest.fixture
def veth_pair():
    vp = VethPair()
    yield vp
    vp.close()


@pytest.fixture
def veth_pair_jumbo():
    vp = VethPair(mtu=4200, subnet="10.51.0")
    yield vp
    vp.close()


RNIC = os.path.join(BUILD, "app", "rnic", "rnic")


def eal(iface, prefix):
    return (f"{eal_lcores()} --no-huge -m 512 --no-shconf --no-pci --file-prefix {prefix} "
            f"--log-level=lib.eal:error --vdev net_af_packet0,iface={iface},"
            f"framesz=2048,blocksz=4096,framecnt=1024,qpairs=1")


def serve_and_connect(srv_cmd, cli_cmd, timeout=60):
    """Start the server command, wait until it listens (perftest's "Waiting for client"
    line), run the client; returns [server rc, client rc], [server output, client output]."""
    srv = subprocess.Popen(srv_cmd, shell=True, start_new_session=True, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    seen = ""
    t0 = time.monotonic()
    while "Waiting for client" not in seen and time.monotonic() - t0 < 30:
        line = srv.stdout.readline()
        if not line:
            break
        seen += line
    try:
        cli = subprocess.run(cli_cmd, shell=True, capture_output=True, text=True, timeout=timeout,
                             start_new_session=True)  # own sessions: rocewan.testbed.topo.eal_lcores
        cout, crc = cli.stdout + cli.stderr, cli.returncode
    except subprocess.TimeoutExpired as e:
        cout, crc = f"client timed out after {timeout} s: {e.stdout or ''}{e.stderr or ''}", -9
    try:
        sout, _ = srv.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        srv.kill()
        sout, _ = srv.communicate()
    return [srv.returncode, crc], [seen + sout, cout]


def pair_results(rcs, out, js):
    """Both sides exited 0 and wrote rocewan/1 JSON without completion errors."""
    assert rcs[1] == 0, f"client failed:\n{out[1]}\nserver:\n{out[0]}"
    assert rcs[0] == 0, f"server failed:\n{out[0]}\nclient:\n{out[1]}"
    docs = [json.load(open(j)) for j in js]
    for d in docs:
        assert d["schema"] == "rocewan/1" and d["app"] == "rnic"
        assert d["results"]["completion_errors"] == 0, d["results"]
    return SimpleNamespace(server=docs[0]["results"], client=docs[1]["results"],
                           config=docs[0]["config"], docs=docs, sout=out[0], cout=out[1])


def rnic_pair(vp, tmp_path, mode, opts, side_opts=("", ""), timeout=60):
    """Server in ns[1], client in ns[0]; returns (rc, out, json) per side [server, client]."""
    if not os.path.exists(RNIC):
        pytest.fail(f"{RNIC} is not built (run `make build`)")
    js = [tmp_path / "server.json", tmp_path / "client.json"]
    rcs, out = serve_and_connect(
        f"ip netns exec {vp.ns[1]} {RNIC} {eal(vp.ifs[1], 'h1ps')} -- --ip {vp.rip[1]}/24 "
        f"{side_opts[1]} {opts} --json {js[0]} {mode}",
        f"ip netns exec {vp.ns[0]} {RNIC} {eal(vp.ifs[0], 'h1pc')} -- --ip {vp.rip[0]}/24 "
        f"{side_opts[0]} {opts} --json {js[1]} {mode} {vp.kip[1]}", timeout)
    res = [json.load(open(j)) if j.exists() else None for j in js]
    return rcs, out, res


def check_read_responses(server_dev, client_dev, msgs, pkts):
    """A READ server's response packets: each message's @pkts once, plus those of the READs
    it re-executed. A requester's timer fired by a loaded host's stall resends its READ, and
    IBTA (duplicate requests, 9.9.2) has the responder re-execute a duplicate READ; a re-read
    covers at most one message, and each answers a request the client resent (fresh-clone
    run 30 in docs/testing.md: 6416 = 6400 + one 16-packet replay)."""
    sent, replays = server_dev["tx_read_responses"], server_dev["rx_read_replays"]
    assert msgs * pkts <= sent <= (msgs + replays) * pkts, server_dev
    assert replays or sent == msgs * pkts, server_dev
    assert replays <= client_dev["tx_retransmits"], (server_dev, client_dev)
