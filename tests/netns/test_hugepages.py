# SPDX-License-Identifier: BSD-3-Clause
"""Each binary in DPDK's default memory mode: hugepages, no -m, as docs/lab.md shows.

Every other test runs with --no-huge -m N, a fixed heap. With hugepages (the
default) the heap starts nearly empty and grows as allocations need it, which is
the mode a new user meets first: lossy-emu once refused to start in it ("EAL has
2 MB free"). Here rnic, lossy-emu and pfc-relay each start without --no-huge and
without -m and move a few frames, counted exactly on both sides.

--in-memory keeps the hugepages in memfds (no files left on hugetlbfs, nothing
shared), each process has its own --file-prefix, and the kernel frees the pages
when the process ends: hugepages are shared by everything on the machine.
scripts/hugepages.sh reserves them (make test does); without them the tests fail
with that hint, they never skip.
"""
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dpdk", "emu"))
import lemu_net as ln  # noqa: E402

from conftest import BUILD, pair_results  # noqa: E402

RNIC = os.path.join(BUILD, "app", "rnic", "rnic")
LEMU = os.path.join(BUILD, "app", "lossy-emu", "lossy-emu")
RELAY = os.path.join(BUILD, "app", "pfc-relay", "pfc-relay")
N = 200  # frames per direction


def free_hugepages_mb():
    info = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":", 1)
            info[k] = int(v.split()[0])
    return info.get("HugePages_Free", 0) * info.get("Hugepagesize", 0) // 1024


def need_hugepages(mb):
    free = free_hugepages_mb()
    if free < mb:
        pytest.fail(f"{free} MB of free hugepages, this test needs {mb} MB: run "
                    f"scripts/hugepages.sh (make test does)")


def hugepage_eal(prefix):
    """No --no-huge, no -m: the EAL takes hugepages as it needs them."""
    return ["--in-memory", "--no-pci", "--file-prefix", prefix, "--log-level=lib.eal:error"]


def hugetlb_kb(pid):
    """The hugepage memory a process maps (HugetlbPages in /proc/PID/status), in kB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("HugetlbPages:"):
                return int(line.split()[1])
    return 0


def test_rnic_write_bw_on_hugepages(veth_pair, tmp_path):
    """rnic A -> rnic B write_bw: exact messages, packets and bytes."""
    if not os.path.exists(RNIC):
        pytest.fail(f"{RNIC} is not built")
    need_hugepages(2 * 80)
    vp, size = veth_pair, 4096
    js = [tmp_path / "server.json", tmp_path / "client.json"]

    def cmd(i, prefix, tail):
        vdev = f"net_af_packet0,iface={vp.ifs[i]},framesz=2048,blocksz=4096,framecnt=1024"
        return (["ip", "netns", "exec", vp.ns[i], RNIC] + hugepage_eal(prefix) +
                ["--vdev", vdev, "--", "--ip", f"{vp.rip[i]}/24", "-s", str(size),
                 "-n", str(N), "--json", str(js[1 - i]), "write_bw"] + tail)
    srv = subprocess.Popen(cmd(1, f"hp_rnic_s{os.getpid()}", []), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    seen = ""
    try:
        while "Waiting for client" not in seen:
            line = srv.stdout.readline()
            if not line:
                break
            seen += line
        assert "Waiting for client" in seen, "rnic server did not start:\n" + seen
        # the server's mempool and rings live on hugepages (ip netns exec execs in place)
        held = hugetlb_kb(srv.pid)
        print(f"rnic server: {held} kB of hugepages")
        assert held >= 60 * 1024, f"rnic server maps {held} kB of hugepages"
        cli = subprocess.run(cmd(0, f"hp_rnic_c{os.getpid()}", [vp.kip[1]]), capture_output=True,
                             text=True, timeout=120)
        sout, _ = srv.communicate(timeout=60)
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()
    r = pair_results([srv.returncode, cli.returncode], [seen + sout, cli.stdout + cli.stderr], js)
    assert r.client["iters"] == N
    per = math.ceil(size / 1024)
    assert r.client["dev_counters"]["tx_req_packets"] == N * per, r.client["dev_counters"]
    assert r.server["dev_counters"]["rx_req_packets"] == N * per, r.server["dev_counters"]
    assert r.server["dev_counters"]["rx_req_bytes"] == N * size, r.server["dev_counters"]


class Box:
    """One of the two-port binaries in ns E of a lemu_net topology, on hugepages."""

    def __init__(self, binary, topo, prefix, args, lcores):
        i = topo.ifs
        vdev = ",framesz=2048,blocksz=8192,framecnt=1024"
        self.cmd = (["ip", "netns", "exec", topo.ns["e"], binary, "-l", lcores] +
                    hugepage_eal(prefix) +
                    ["--vdev", f"net_af_packet0,iface={i['a1']}{vdev}",
                     "--vdev", f"net_af_packet1,iface={i['b1']}{vdev}", "--"] + args)
        self.out = []

    def __enter__(self):
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        ready = threading.Event()

        def pump():
            for line in self.proc.stdout:
                self.out.append(line)
                if "Ctrl-C to stop" in line:
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        ready.wait(60)
        if self.proc.poll() is not None or not any("Ctrl-C to stop" in ln for ln in self.out):
            self.stop()
            pytest.fail("did not start on hugepages:\n" + "".join(self.out))
        self.hugetlb_kb = hugetlb_kb(self.proc.pid)  # ip netns exec execs in place
        return self

    def stop(self):
        if self.proc.poll() is None:
            for pid in ln.child_pids(self.proc.pid):  # ip netns exec execs in place
                os.kill(pid, signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        time.sleep(0.1)
        return self.proc.returncode

    def __exit__(self, *exc):
        self.stop()


@pytest.fixture
def topo():
    t = ln.Topology("hp%d" % (os.getpid() % 10000))
    t.create()
    ports = {"a": t.socket("a"), "b": t.socket("b")}
    yield t, ports
    for p in ports.values():
        p.close()
    t.remove()


def send_and_collect(ports, run, n, t=5.0):
    """n probes A->B and n probes B->A; the sequence numbers each side received."""
    for s in range(n):
        ports["a"].send(ln.probe(run, s, size=300))
        ports["b"].send(ln.probe(run + 1, s, size=300))
        if s % 50 == 49:
            time.sleep(0.005)  # keep within the af_packet rings
    got = {"b": set(), "a": set()}
    deadline = time.time() + t
    while time.time() < deadline and (len(got["b"]) < n or len(got["a"]) < n):
        for side, want in (("b", run), ("a", run + 1)):
            for _, f in ports[side].take():
                p = ln.parse_probe(f)
                if p and p[0] == want:
                    got[side].add(p[1])
        time.sleep(0.01)
    return got


def test_lossy_emu_on_hugepages(topo, tmp_path):
    """lossy-emu on hugepages: -l 0-1 --in-memory, no -m, --both "delay 1ms"."""
    if not os.path.exists(LEMU):
        pytest.fail(f"{LEMU} is not built")
    need_hugepages(64)
    t, ports = topo
    js = tmp_path / "emu.json"
    emu_args = ["--both", "delay 1ms", "--seed", "1", "--json", str(js)]
    with Box(LEMU, t, f"hp_lemu{os.getpid()}", emu_args, "0-1") as emu:
        got = send_and_collect(ports, 7, N)
        rc = emu.stop()
    print(f"lossy-emu: {emu.hugetlb_kb} kB of hugepages")
    # two pools of 5008 mbufs of 4608 B for "delay 1ms": about 48 MB on hugepages
    assert emu.hugetlb_kb >= 40 * 1024, f"lossy-emu maps {emu.hugetlb_kb} kB of hugepages"
    out = "".join(emu.out)
    assert rc == 0, out
    assert got["b"] == set(range(N)) and got["a"] == set(range(N)), (len(got["b"]), len(got["a"]))
    res = json.load(open(js))["results"]
    for d in ("a2b", "b2a"):
        assert res[d]["rx_pkts"] == N and res[d]["tx_pkts"] == N, (d, res[d])
        assert res[d]["rx_bytes"] == N * 300 and res[d]["tx_bytes"] == N * 300, (d, res[d])


def test_pfc_relay_on_hugepages(topo, tmp_path):
    """pfc-relay, one lcore, default memory: N frames each way, counted on every port."""
    if not os.path.exists(RELAY):
        pytest.fail(f"{RELAY} is not built")
    need_hugepages(64)
    t, ports = topo
    js = tmp_path / "relay.json"
    relay_args = ["--link-rate", "1gbit", "--rtt", "1ms", "--json", str(js)]
    with Box(RELAY, t, f"hp_relay{os.getpid()}", relay_args, "0") as relay:
        got = send_and_collect(ports, 9, N)
        rc = relay.stop()
    print(f"pfc-relay: {relay.hugetlb_kb} kB of hugepages")
    assert relay.hugetlb_kb >= 16 * 1024, f"pfc-relay maps {relay.hugetlb_kb} kB of hugepages"
    out = "".join(relay.out)
    assert rc == 0, out
    assert got["b"] == set(range(N)) and got["a"] == set(range(N)), (len(got["b"]), len(got["a"]))
    res = json.load(open(js))["results"]
    for side in ("local", "remote"):
        p = res[side]
        assert p["rx_pkts"] == N and p["tx_pkts"] == N, (side, p)
        assert p["pmd_imissed"] == 0 and p["pmd_rx_nombuf"] == 0, (side, p)
