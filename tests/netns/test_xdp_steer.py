"""bpf/rnic_steer.o: an rnic on an af_xdp port shares the NIC with the kernel.

Topology: namespace A's veth carries kernel IP .1 AND a DPDK process on
net_af_xdp with xdp_prog=rnic_steer.o (rnic IP .11); namespace B has kernel IP
.2 (and, for the rnic test, an af_packet rnic with IP .12). The program must
send RoCEv2 (UDP 4791), ARP/ICMP for .11 and MAC control frames to the AF_XDP
socket and everything else (ARP for .1, ping, TCP) to A's kernel.

The per-class counters come from `rnic-xdp-cfg IF --stats` (the program's
rnic_stats map); `no_xsk` counts steered frames that found no socket.
"""
import json
import os
import re
import subprocess
import time
import uuid

import pytest

from conftest import BUILD, sh

RNIC = os.path.join(BUILD, "app", "rnic", "rnic")
PROG = os.path.join(BUILD, "bpf", "rnic_steer.o")
CFG = os.path.join(BUILD, "bpf", "rnic-xdp-cfg")
PY = "/usr/bin/python3"
TESTPMD = "dpdk-testpmd"


class XdpPair:
    """Namespaces h3A<tag>/h3B<tag> on one veth, MTU 1500 (native XDP on veth refuses > ~3.5 KB)."""

    def __init__(self, subnet):
        tag = uuid.uuid4().hex[:6]
        self.ns = [f"h3A{tag}", f"h3B{tag}"]
        self.ifs = [f"vh3a{tag}", f"vh3b{tag}"]
        self.kip = [f"{subnet}.1", f"{subnet}.2"]
        self.rip = [f"{subnet}.11", f"{subnet}.12"]
        self.tag = tag
        for n in self.ns:
            sh(f"ip netns add {n}")
        sh(f"ip link add {self.ifs[0]} netns {self.ns[0]} mtu 1500 type veth "
           f"peer name {self.ifs[1]} netns {self.ns[1]} mtu 1500")
        for n, i, ip in zip(self.ns, self.ifs, self.kip):
            sh(f"ip -n {n} addr add {ip}/24 dev {i}")
            sh(f"ip -n {n} link set {i} up")
            sh(f"ip -n {n} link set lo up")
            sh(f"ip netns exec {n} ethtool -K {i} tx off", check=False)
        link = sh(f"ip -n {self.ns[0]} -j link show {self.ifs[0]}").stdout
        self.mac_a = json.loads(link)[0]["address"]

    def a(self, cmd):
        return f"ip netns exec {self.ns[0]} {cmd}"

    def b(self, cmd):
        return f"ip netns exec {self.ns[1]} {cmd}"

    def xdp_prog_name(self):
        """(mode, program name) attached to A's veth, or (None, None)."""
        out = sh(f"ip -n {self.ns[0]} -d link show {self.ifs[0]}").stdout
        m = re.search(r"prog/(xdp\w*) id \d+ name (\w+)", out)
        return (m.group(1), m.group(2)) if m else (None, None)

    def wait_attached(self, proc, log, timeout=30):
        t0 = time.time()
        while time.time() - t0 < timeout:
            mode, name = self.xdp_prog_name()
            if name:
                return mode, name
            if proc.poll() is not None:
                break
            time.sleep(0.2)
        pytest.fail(f"no XDP program appeared on {self.ifs[0]} within {timeout} s; "
                    f"DPDK process exit {proc.poll()}, log:\n{read(log)}")

    def stats(self):
        r = sh(self.a(f"{CFG} {self.ifs[0]} --stats"))
        return json.loads(r.stdout)

    def ping(self, ip, count=3):
        r = sh(self.b(f"ping -c {count} -i 0.2 -W 1 {ip}"), check=False)
        m = re.search(r"(\d+) received", r.stdout)
        return int(m.group(1)) if m else 0

    def tcp_echo(self, port=18600):
        """Kernel TCP from B to A's kernel IP through the XDP-steered veth."""
        srv = subprocess.Popen(self.a(
            f"{PY} -c \"import socket; s=socket.socket(); "
            f"s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
            f"s.bind(('{self.kip[0]}', {port})); s.listen(1); s.settimeout(15); "
            f"c, _ = s.accept(); c.sendall(c.recv(100)[::-1]); c.close()\""),
            shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        cli = None
        for _ in range(50):
            cli = sh(self.b(
                f"{PY} -c \"import socket; s=socket.create_connection(('{self.kip[0]}', {port}), 3); "
                f"s.sendall(b'xdp-h3-steer'); print(s.recv(100).decode())\""), check=False)
            if cli.returncode == 0:
                break
            time.sleep(0.2)
        srv.wait(timeout=20)
        return cli.stdout.strip()

    def scapy_send(self, code):
        sh(self.b(f"{PY} -c \"from scapy.all import *; conf.verb = 0; iface = '{self.ifs[1]}'; "
                  f"dst = '{self.mac_a}'; {code}\""))

    def close(self):
        for n in self.ns:
            sh(f"ip netns pids {n} | xargs -r kill -9", check=False)
            sh(f"ip netns del {n}", check=False)


def read(path):
    try:
        return open(path).read()
    except OSError:
        return ""


def snmp(pair, proto, field):
    """A's kernel counter from /proc/net/snmp, e.g. ('Udp', 'NoPorts')."""
    lines = [ln.split() for ln in sh(pair.a("cat /proc/net/snmp")).stdout.splitlines()
             if ln.startswith(proto + ":")]
    return int(lines[1][lines[0].index(field)])


def require_built(*paths):
    for p in paths:
        if not os.path.exists(p):
            pytest.fail(f"{p} is not built (run `make build`)")


@pytest.fixture
def xdp_pair():
    pair = XdpPair(subnet="10.63.0")
    yield pair
    pair.close()


def start_testpmd(pair, log, xdp_prog=True):
    """testpmd in rxonly on A's veth via net_af_xdp; its RX counter shows what reached the socket."""
    vdev = f"net_af_xdp0,iface={pair.ifs[0]},busy_budget=0"
    if xdp_prog:
        vdev += f",xdp_prog={PROG}"
    p = subprocess.Popen(
        pair.a(f"{TESTPMD} --no-huge -m 256 --no-pci --no-shconf --file-prefix h3tp{pair.tag} "
               f"--log-level=lib.eal:error --vdev {vdev} -- --mbuf-size=2176 "
               f"--total-num-mbufs=4096 --forward-mode=rxonly -i"),
        shell=True, stdin=subprocess.PIPE, stdout=open(log, "w"), stderr=subprocess.STDOUT,
        text=True)
    p.stdin.write("start\n")
    p.stdin.flush()
    return p


def stop_testpmd(p, log):
    """Ask for the port's RX count, quit; return RX-packets."""
    p.stdin.write("show port stats 0\nquit\n")
    p.stdin.flush()
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    out = read(log)
    m = re.search(r"RX-packets:\s+(\d+)", out)
    assert m, f"no port stats in testpmd output:\n{out}"
    return int(m.group(1))


def test_steering_through_pmd_socket(xdp_pair, tmp_path):
    """The PMD loads rnic_steer.o; kernel ping/TCP keep working, RoCE/ARP/PFC reach the socket."""
    require_built(PROG, CFG)
    pair, log = xdp_pair, str(tmp_path / "testpmd.log")
    p = start_testpmd(pair, log)
    try:
        mode, name = pair.wait_attached(p, log)
        assert name == "rnic_steer", f"attached program is {name}, not rnic_steer"
        assert mode == "xdp", f"rnic_steer attached in {mode} mode, native (xdp) expected on veth"
        sh(pair.a(f"{CFG} {pair.ifs[0]} --ip {pair.rip[0]}"))
        time.sleep(1.0)  # the PMD fills xsks_map when its RX queue is set up
        base = pair.stats()
        udp_noports = snmp(pair, "Udp", "NoPorts")

        # (1) kernel ping and (2) kernel TCP to A's kernel IP
        assert pair.ping(pair.kip[0], 3) == 3, "kernel ping to A's kernel IP failed with rnic_steer attached"
        assert pair.tcp_echo() == "reets-3h-pdx", "kernel TCP echo through rnic_steer failed"
        mid = pair.stats()
        assert mid["pass"] - base["pass"] >= 6, (base, mid)
        assert all(mid[k] == base[k] for k in ("roce4", "roce6", "icmp4", "macctl", "no_xsk")), \
            f"kernel ping/TCP was steered: {base} -> {mid}"

        # RoCEv2 to A's KERNEL IP: must go to the socket, never to A's UDP stack
        pair.scapy_send(
            f"r4 = Ether(dst=dst)/IP(src='{pair.kip[1]}', dst='{pair.kip[0]}')"
            "/UDP(sport=49152, dport=4791)/Raw(b'\\x0a'*40); "
            f"r4q = Ether(dst=dst)/Dot1Q(vlan=100, prio=3)/IP(src='{pair.kip[1]}', dst='{pair.kip[0]}')"
            "/UDP(sport=49153, dport=4791)/Raw(b'\\x0a'*40); "
            f"r6 = Ether(dst=dst)/IPv6(src='fd00::2', dst='fd00::1')/UDP(sport=49154, dport=4791)/Raw(b'\\x0a'*40); "
            f"pfc = Ether(dst='01:80:c2:00:00:01', type=0x8808)/Raw(bytes.fromhex('0101' + '0008' + '0000'*8)); "
            f"arp = Ether(dst='ff:ff:ff:ff:ff:ff')/ARP(op=1, psrc='{pair.kip[1]}', pdst='{pair.rip[0]}'); "
            f"sendp([r4]*20 + [r4q]*3 + [r6]*10 + [pfc]*5 + [arp]*4, iface=iface)")
        # wait until the program has counted every frame sent (an event; the limit only a
        # broken program reaches), then the counts must be exact
        want = {"roce4": 23, "roce6": 10, "macctl": 5, "arp": 4}
        deadline = time.time() + 30
        while True:
            end = pair.stats()
            d = {k: end[k] - mid[k] for k in end}
            if all(d[k] >= n for k, n in want.items()) or time.time() > deadline:
                break
            time.sleep(0.05)
        assert d["roce4"] == 23 and d["roce6"] == 10 and d["macctl"] == 5, d
        assert d["arp"] == 4, d
        assert d["no_xsk"] == 0, f"steered frames found no AF_XDP socket: {d}"
        assert snmp(pair, "Udp", "NoPorts") == udp_noports, "RoCE frames reached A's kernel UDP"
        steered = sum(end[k] - base[k] for k in ("roce4", "roce6", "arp", "icmp4", "macctl"))
    finally:
        rx = stop_testpmd(p, log)
    assert rx == steered, f"testpmd received {rx} frames, the program steered {steered}"
    assert pair.xdp_prog_name() == (None, None), "the PMD left its XDP program attached on close"


def test_default_pmd_program_takes_kernel_traffic(xdp_pair, tmp_path):
    """Negative control: without xdp_prog the PMD's default program steals everything."""
    pair, log = xdp_pair, str(tmp_path / "testpmd.log")
    p = start_testpmd(pair, log, xdp_prog=False)
    try:
        _, name = pair.wait_attached(p, log)
        assert name != "rnic_steer"
        time.sleep(1.0)
        got = pair.ping(pair.kip[0], 3)
    finally:
        rx = stop_testpmd(p, log)
    assert got == 0, f"kernel ping answered {got}/3 with the default program: control is not valid"
    assert rx > 0, "the default program steered nothing to testpmd"


def eal_xdp(pair):
    return (f"--no-huge -m 512 --no-shconf --no-pci --file-prefix h3ra{pair.tag} "
            f"--log-level=lib.eal:error --vdev net_af_xdp0,iface={pair.ifs[0]},"
            f"xdp_prog={PROG},busy_budget=0")


def eal_packet(pair):
    return (f"--no-huge -m 512 --no-shconf --no-pci --file-prefix h3rb{pair.tag} "
            f"--log-level=lib.eal:error --vdev net_af_packet0,iface={pair.ifs[1]},"
            f"framesz=2048,blocksz=4096,framecnt=1024,qpairs=1")


def test_rnic_write_bw_shares_nic_with_kernel(xdp_pair, tmp_path):
    """rnic (af_xdp + rnic_steer) serves write_bw while A's kernel keeps ping/TCP."""
    require_built(RNIC, PROG, CFG)
    pair = xdp_pair
    js = [str(tmp_path / "server.json"), str(tmp_path / "client.json")]
    slog = str(tmp_path / "server.log")
    opts = "-m 1024 -s 4096 -D 3"
    srv = subprocess.Popen(
        pair.a(f"{RNIC} {eal_xdp(pair)} -- --ip {pair.rip[0]}/24 {opts} --json {js[0]} write_bw"),
        shell=True, stdout=open(slog, "w"), stderr=subprocess.STDOUT, text=True)
    try:
        t0 = time.time()
        while time.time() - t0 < 30 and srv.poll() is None and pair.xdp_prog_name()[1] is None:
            time.sleep(0.2)
        # app/rnic uses a 3072-byte data room on af_xdp ports (AF_XDP UMEM chunks are 4 KiB)
        assert srv.poll() is None, "rnic exited at start:\n" + read(slog)
        mode, name = pair.wait_attached(srv, slog)
        assert (mode, name) == ("xdp", "rnic_steer")
        sh(pair.a(f"{CFG} {pair.ifs[0]} --ip {pair.rip[0]}"))
        time.sleep(1.0)
        # (1)+(2): the rnic is up (waiting for its client); the kernel still answers
        assert pair.ping(pair.kip[0], 3) == 3, "kernel ping failed while the rnic holds the port"
        assert pair.tcp_echo() == "reets-3h-pdx", "kernel TCP failed while the rnic holds the port"

        # (3): RoCE between the rnics; the perftest exchange is kernel TCP to A's kernel IP
        cli = subprocess.Popen(
            pair.b(f"{RNIC} {eal_packet(pair)} -- --ip {pair.rip[1]}/24 {opts} --json {js[1]} "
                   f"write_bw {pair.kip[0]}"),
            shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # (4): ping the rnic's IP while it runs (ARP and ICMP steered to it)
        time.sleep(1.0)
        rnic_replies = pair.ping(pair.rip[0], 6)
        stats = None
        while srv.poll() is None:  # the program leaves with the rnic: read counters while it runs
            try:
                stats = pair.stats()
            except RuntimeError:
                break
            time.sleep(0.2)
        cout, _ = cli.communicate(timeout=60)
        srv.wait(timeout=30)
    finally:
        for proc in (srv,):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    sout = read(slog)
    assert cli.returncode == 0, f"client failed:\n{cout}\nserver:\n{sout}"
    assert srv.returncode == 0, f"server failed:\n{sout}\nclient:\n{cout}"
    rs, rc = [json.load(open(j)) for j in js]
    assert rc["results"]["iters"] > 0 and rc["results"]["completion_errors"] == 0, cout
    # exact: 4 KiB WRITEs at MTU 1024 are 4 request packets each, sent once for the first
    # time by B and accepted once in order by A (retransmissions and duplicates are counted
    # apart), and every byte was placed once
    n = rc["results"]["iters"] * 4
    assert rc["results"]["qp_counters"]["tx_req_packets"] == n, (n, rc["results"]["qp_counters"])
    assert rs["results"]["qp_counters"]["rx_req_packets"] == n, (n, sout)
    assert rs["results"]["qp_counters"]["rx_req_bytes"] == rc["results"]["iters"] * 4096, sout
    assert rnic_replies >= 1, f"no ICMP echo reply from the rnic at {pair.rip[0]}:\n{sout}"
    assert re.search(r"rx_icmp_echo\s+[1-9]", sout), f"the rnic answered no ping:\n{sout}"
    assert stats is not None, "could not read rnic_steer's counters while the rnic ran"
    assert stats["roce4"] > 0 and stats["arp"] >= 1 and stats["icmp4"] >= 1, stats
    assert stats["no_xsk"] == 0, f"steered frames found no AF_XDP socket: {stats}"
    assert stats["pass"] > 0, stats  # the perftest TCP exchange went to the kernel
    assert pair.xdp_prog_name() == (None, None), "the rnic left rnic_steer attached on exit"
