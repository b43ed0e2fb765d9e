"""Two rnics in different subnets, joined by a Linux router (--gw, and --gw6 for IPv6).

  ns A: kernel 10.61.1.2, rnic 10.61.1.11 --gw 10.61.1.1
        veth a0 ─── a1 (10.61.1.1)  ns R (ip_forward)  b1 (10.61.2.1) ─── b0
  ns B: kernel 10.61.2.2, rnic 10.61.2.12 --gw 10.61.2.1

The perftest exchange crosses the router in the kernels, on separate management
links (10.61.3.0/24 and 10.61.4.0/24, so no kernel ARPs a gateway where the rnic
can overhear the reply); RoCEv2 crosses it as
routed UDP: each rnic resolves the gateway by ARP (not the peer) and the router
decrements the TTL and rewrites the MACs and the IPv4 checksum, which the ICRC
does not cover (IBTA Annex A17: TTL and header checksum are masked). A run with
no --gw is the negative control: the peer is off-link and the rnic says so.
"""
import json
import os
import subprocess
import time
import uuid

import pytest

from conftest import BUILD, sh

RNIC = os.path.join(BUILD, "app", "rnic", "rnic")


@pytest.fixture
def routed():
    tag = uuid.uuid4().hex[:5]
    ns = {"a": f"rtA{tag}", "r": f"rtR{tag}", "b": f"rtB{tag}"}
    ifs = {"a0": f"ra0{tag}", "a1": f"ra1{tag}", "b0": f"rb0{tag}", "b1": f"rb1{tag}"}
    for n in ns.values():
        sh(f"ip netns add {n}")
        sh(f"ip -n {n} link set lo up")
    sh(f"ip link add {ifs['a0']} netns {ns['a']} type veth peer name {ifs['a1']} netns {ns['r']}")
    sh(f"ip link add {ifs['b0']} netns {ns['b']} type veth peer name {ifs['b1']} netns {ns['r']}")
    for n, i, ip in ((ns["a"], ifs["a0"], "10.61.1.2"), (ns["r"], ifs["a1"], "10.61.1.1"),
                     (ns["r"], ifs["b1"], "10.61.2.1"), (ns["b"], ifs["b0"], "10.61.2.2")):
        sh(f"ip -n {n} addr add {ip}/24 dev {i}")
        sh(f"ip -n {n} link set {i} up")
        # kernel TCP through an af_packet port needs filled checksums
        sh(f"ip netns exec {n} ethtool -K {i} tx off", check=False)
    sh(f"ip netns exec {ns['r']} sysctl -qw net.ipv4.ip_forward=1")
    sh(f"ip netns exec {ns['r']} sysctl -qw net.ipv6.conf.all.forwarding=1")
    sh(f"ip -n {ns['r']} -6 addr add fd00:61:1::1/64 dev {ifs['a1']} nodad")
    sh(f"ip -n {ns['r']} -6 addr add fd00:61:2::1/64 dev {ifs['b1']} nodad")
    # Neighbour caches, so that each rnic can learn its gateway's MAC only from its own
    # ARP request / neighbour solicitation, whichever side resolves first:
    #  - the kernels' traffic (the perftest TCP exchange) crosses the router on separate
    #    management links (10.61.3/24, 10.61.4/24): the rnic shares its veth and MAC with
    #    its kernel and learns from every ARP reply it sees, so a kernel asking for the
    #    same gateway on the rnic's link would resolve it for the rnic;
    #  - the router knows the rnics' addresses (permanent entries, the MAC the af_packet
    #    port takes from its veth), so it never asks for them: its request, sent when the
    #    first data reaches it, would teach the later rnic the gateway (RFC 826 merge).
    for side, sub in (("a", 3), ("b", 4)):
        m0, m1 = f"rm{side}0{tag}", f"rm{side}1{tag}"
        sh(f"ip link add {m0} netns {ns[side]} type veth peer name {m1} netns {ns['r']}")
        for n, i, ip in ((ns[side], m0, f"10.61.{sub}.2"), (ns["r"], m1, f"10.61.{sub}.1")):
            sh(f"ip -n {n} addr add {ip}/24 dev {i}")
            sh(f"ip -n {n} link set {i} up")
    sh(f"ip -n {ns['a']} route add 10.61.2.0/24 via 10.61.3.1")
    sh(f"ip -n {ns['b']} route add 10.61.3.0/24 via 10.61.4.1")
    mac = {i: sh(f"ip -n {ns[i[0]]} -br link show {ifs[i]}").stdout.split()[2] for i in ("a0", "b0")}
    for side, ip4, ip6 in (("a", "10.61.1.11", "fd00:61:1::11"), ("b", "10.61.2.12", "fd00:61:2::12")):
        rtr = ifs[f"{side}1"]
        sh(f"ip -n {ns['r']} neigh replace {ip4} lladdr {mac[side + '0']} dev {rtr} nud permanent")
        sh(f"ip -n {ns['r']} -6 neigh replace {ip6} lladdr {mac[side + '0']} dev {rtr} nud permanent")
    yield ns, ifs
    for n in ns.values():
        sh(f"ip netns pids {n} | xargs -r kill -9", check=False)
        sh(f"ip netns del {n}", check=False)


def rnic(ns, iface, prefix, args):
    return (f"exec ip netns exec {ns} {RNIC} --no-huge -m 512 --no-shconf --no-pci "
            f"--file-prefix {prefix} --log-level=lib.eal:error --vdev net_af_packet0,iface={iface},"
            f"framesz=2048,blocksz=4096,framecnt=1024,qpairs=1 -- {args}")


def run(routed, tmp_path, a_gw, b_gw, opts="-s 65536 -n 200", timeout=60):
    if not os.path.exists(RNIC):
        pytest.fail(f"{RNIC} is not built (run `make build`)")
    ns, ifs = routed
    js = [tmp_path / "server.json", tmp_path / "client.json"]
    srv = subprocess.Popen(
        rnic(ns["b"], ifs["b0"], f"rts{ns['b']}", f"--ip 10.61.2.12/24 {b_gw} {opts} "
             f"--json {js[0]} write_bw"),
        shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1)
    cli = subprocess.run(
        rnic(ns["a"], ifs["a0"], f"rtc{ns['a']}", f"--ip 10.61.1.11/24 {a_gw} {opts} "
             f"--json {js[1]} write_bw 10.61.2.2"),
        shell=True, capture_output=True, text=True, timeout=timeout)
    if cli.returncode != 0 and srv.poll() is None:
        srv.send_signal(2)  # the server waits for its client's traffic: stop it
    try:
        sout, _ = srv.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        srv.kill()
        sout, _ = srv.communicate()
    res = [json.load(open(j)) if j.exists() else None for j in js]
    return cli.returncode, cli.stdout + cli.stderr, srv.returncode, sout, res


def test_write_bw_through_a_router(routed, tmp_path):
    crc, cout, src, sout, (rs, rc) = run(routed, tmp_path, "--gw 10.61.1.1", "--gw 10.61.2.1")
    assert crc == 0 and src == 0, f"client {crc}:\n{cout}\nserver {src}:\n{sout}"
    assert rc["results"]["iters"] == 200 and rc["results"]["completion_errors"] == 0, cout
    assert rs["results"]["qp_counters"]["rx_req_bytes"] == 200 * 65536
    # a loaded router may drop (its veth backlog is finite): Go-Back-N then resends, and
    # every duplicate the server saw is one the client sent again (no phantom duplicates)
    dups = rs["results"]["qp_counters"]["rx_dup_requests"]
    assert dups <= rc["results"]["qp_counters"]["tx_retransmits"], (rs, rc)
    for side, r in (("client", rc), ("server", rs)):
        d = r["results"]["dev_counters"]
        bad = {k: v for k, v in d.items() if k.startswith("rx_drop") and v}
        assert not bad, f"{side} dropped received frames: {bad}"
        p = r["results"]["port_counters"]
        # the gateway, not the off-link peer, was resolved, by the rnic's own ARP (the
        # router never asked: see the fixture), and the reply came from it
        assert p["arp_requests_sent"] >= 1 and p["rx_arp_reply"] >= 1, (side, p)
        assert p["rx_arp_req"] == 0, (side, p)
    # the router forwarded the RoCE traffic: its counters saw it
    ns, _ = routed
    fwd = int(sh(f"ip netns exec {ns['r']} cat /proc/net/snmp").stdout.split("Ip: ")[2].split()[5])
    assert fwd >= 200 * 64, f"the router forwarded only {fwd} datagrams"


def test_write_bw_over_ipv6_through_a_router(routed, tmp_path):
    """RoCEv2 over IPv6 across the router (--ip6 ADDR/64, --gw6): the router resolves the
    rnics by ND, decrements the hop limit (masked in the ICRC) and forwards."""
    crc, cout, src, sout, (rs, rc) = run(
        routed, tmp_path, "--ip6 fd00:61:1::11/64 --gw6 fd00:61:1::1 -x 1",
        "--ip6 fd00:61:2::12/64 --gw6 fd00:61:2::1 -x 1")
    assert crc == 0 and src == 0, f"client {crc}:\n{cout}\nserver {src}:\n{sout}"
    assert rc["results"]["iters"] == 200 and rc["results"]["completion_errors"] == 0, cout
    assert rs["results"]["qp_counters"]["rx_req_bytes"] == 200 * 65536
    assert rc["config"]["gw6"] == "fd00:61:1::1" and rc["config"]["ip6_prefix"] == 64
    for side, r in (("client", rc), ("server", rs)):
        d = r["results"]["dev_counters"]
        bad = {k: v for k, v in d.items() if k.startswith("rx_drop") and v}
        assert not bad, f"{side} dropped received frames: {bad}"
        p = r["results"]["port_counters"]
        # the gateway was resolved by the rnic's own solicitation (the router never asked)
        assert p["nd_solicits_sent"] >= 1 and p["rx_nd_advert"] >= 1, (side, p)
        assert p["rx_nd_solicit"] == 0, (side, p)
    ns, _ = routed
    snmp6 = sh(f"ip netns exec {ns['r']} cat /proc/net/snmp6").stdout
    fwd = int(next(ln.split()[1] for ln in snmp6.splitlines() if ln.startswith("Ip6OutForwDatagrams")))
    assert fwd >= 200 * 64, f"the router forwarded only {fwd} IPv6 datagrams"


def test_off_link_ipv6_peer_without_gw6(routed, tmp_path):
    crc, cout, _, _, _ = run(routed, tmp_path, "--ip6 fd00:61:1::11/64 -x 1",
                             "--ip6 fd00:61:2::12/64 --gw6 fd00:61:2::1 -x 1",
                             opts="-s 4096 -n 10", timeout=60)
    assert crc != 0, cout
    assert ("rnic: peer fd00:61:2::12 is not on-link (--ip6 fd00:61:1::11/64) and does not "
            "answer IPv6 neighbour solicitations on the DPDK port (3 s): give --gw6 with the "
            "next hop's address") in cout, cout


def test_gw6_must_be_on_link(routed, tmp_path):
    r = subprocess.run(f"{RNIC} --no-huge --no-pci -- --ip 10.0.0.1/24 --ip6 fd00:61:1::11/64 "
                       f"--gw6 fd00:99::1 write_bw", shell=True, capture_output=True, text=True,
                       timeout=30)
    assert r.returncode != 0
    assert ("--gw6 fd00:99::1 is not on-link: it must be link-local (fe80::/10) or in --ip6 "
            "fd00:61:1::11/64") in r.stderr, r.stderr


def test_off_link_peer_without_gw_is_one_clear_line(routed, tmp_path):
    crc, cout, _, sout, _ = run(routed, tmp_path, "", "--gw 10.61.2.1", opts="-s 4096 -n 10",
                                timeout=60)
    assert crc != 0, cout
    assert ("rnic: peer 10.61.2.12 is not in our subnet (--ip 10.61.1.11/24) and does not answer "
            "ARP on the DPDK port (3 s): give --gw with the next hop's address") in cout, cout


def test_silent_gateway_is_named(routed, tmp_path):
    crc, cout, _, _, _ = run(routed, tmp_path, "--gw 10.61.1.99", "--gw 10.61.2.1",
                             opts="-s 4096 -n 10", timeout=60)
    assert crc != 0, cout
    assert ("rnic: the gateway 10.61.1.99 (--gw, next hop to peer 10.61.2.12) does not answer "
            "ARP on the DPDK port (3 s)") in cout, cout
