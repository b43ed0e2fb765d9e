"""The testbed topology on one machine: three network namespaces joined by two
direct veth pairs (no bridge: bridges drop PFC frames).

    ns <p>A: rnic A (af_packet on vA; kernel IP .1 for perftest's TCP exchange)
         vA ===== eA   ns <p>E: lossy-emu (port 0 = eA, side A; port 1 = eB, side B)
                  eB ===== vB   ns <p>B: rnic B (kernel IP .2)

Every DPDK process gets its own --file-prefix. Everything this module creates
carries the prefix (default "tb"), so `down` and every `up`/`run` can remove
what an earlier, interrupted run left behind.
"""
import os
import signal
import subprocess
import time

from .config import ROOT

BUILD = os.environ.get("ROCEWAN_BUILD", os.path.join(ROOT, "build"))
SUBNET = "10.77.0"


class TopoError(RuntimeError):
    pass


def eal_lcores(lcores="0"):
    """EAL lcores ("0", "0-1", "1") as --lcores with every lcore's thread free to run on
    any CPU this process may use. EAL's -l pins lcore N to CPU N: on a small shared host
    that put every rnic's and box's main thread on CPU 0, where a woken poll loop waited
    in the run queue for up to 2.6 s behind the others (measured beside two busy loops;
    docs/testbed.md), long enough to exhaust a peer's retries. Floating threads let the
    kernel move a starved one to the idle CPU."""
    ids = []
    for part in str(lcores).split(","):
        lo, _, hi = part.partition("-")
        ids += range(int(lo), int(hi or lo) + 1)
    cpus = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
    return "--lcores '" + ",".join(f"{i}@({cpus})" for i in ids) + "'"


def sh(cmd, check=True):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if check and r.returncode:
        raise TopoError(f"{cmd}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def binary(name):
    path = {"rnic": os.path.join(BUILD, "app", "rnic", "rnic"),
            "lossy-emu": os.path.join(BUILD, "app", "lossy-emu", "lossy-emu"),
            "pfc-relay": os.path.join(BUILD, "app", "pfc-relay", "pfc-relay")}[name]
    if not os.access(path, os.X_OK):
        raise TopoError(f"{path} is not built (run `make build`, or set ROCEWAN_BUILD)")
    return path


def cleanup(prefix="tb"):
    """Kill processes in, and delete, every namespace of the prefix's topologies."""
    return cleanup_names(prefix, Chain.NAMES)


class Topology:
    def __init__(self, prefix="tb", mtu=4096):
        self.prefix = prefix
        self.ns = {r: f"{prefix}{r}" for r in "AEB"}
        self.ifs = {"A": f"{prefix}vA", "eA": f"{prefix}eA", "eB": f"{prefix}eB", "B": f"{prefix}vB"}
        self.kip = {"A": f"{SUBNET}.1", "B": f"{SUBNET}.2"}
        self.rip = {"A": f"{SUBNET}.11", "B": f"{SUBNET}.12"}
        self.link_mtu = 4200 if mtu > 2048 else 2200 if mtu > 1024 else 1500
        self.framesz = 8192 if mtu > 2048 else 4096 if mtu > 1024 else 2048
        self.procs = []

    def up(self):
        cleanup(self.prefix)
        for n in self.ns.values():
            sh(f"ip netns add {n}")
        pairs = [("A", "eA"), ("eB", "B")]
        nsof = {"A": self.ns["A"], "eA": self.ns["E"], "eB": self.ns["E"], "B": self.ns["B"]}
        for x, y in pairs:
            sh(f"ip link add {self.ifs[x]} netns {nsof[x]} mtu {self.link_mtu} type veth "
               f"peer name {self.ifs[y]} netns {nsof[y]} mtu {self.link_mtu}")
        for k, ifn in self.ifs.items():
            n = nsof[k]
            sh(f"ip -n {n} link set {ifn} up")
            sh(f"ip -n {n} link set lo up")
            # kernel TCP through the DPDK af_packet ports needs filled checksums
            sh(f"ip netns exec {n} ethtool -K {ifn} tx off", check=False)
        for r in "AB":
            sh(f"ip -n {self.ns[r]} addr add {self.kip[r]}/24 dev {self.ifs[r]}")
        return self

    def down(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.procs = []
        cleanup(self.prefix)

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()

    # ---- processes -------------------------------------------------------------------
    def _eal_rnic(self, side):
        return (f"{eal_lcores()} --no-huge -m 512 --no-shconf --no-pci --file-prefix {self.prefix}{side} "
                f"--log-level=lib.eal:error --vdev net_af_packet0,iface={self.ifs[side]},"
                f"framesz={self.framesz},blocksz={self.framesz * 2},framecnt=1024,qpairs=1")

    def _eal_emu(self):
        v = f"framesz={self.framesz},blocksz={self.framesz * 2},framecnt=4096"
        return (f"{eal_lcores('0-1')} --no-huge -m 768 --no-pci --file-prefix {self.prefix}E "
                f"--log-level=lib.eal:error --vdev net_af_packet0,iface={self.ifs['eA']},{v} "
                f"--vdev net_af_packet1,iface={self.ifs['eB']},{v}")

    def start_emu(self, a2b, b2a, seed, json_path, pcap=None, extra=""):
        cmd = (f"ip netns exec {self.ns['E']} {binary('lossy-emu')} {self._eal_emu()} -- "
               f"--a2b '{a2b}' --b2a '{b2a}' --seed {seed} --json {json_path} --mbuf-size {self.framesz} "
               "--link-rate 10gbit" + (f" {extra}" if extra else ""))
        p = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
        self.procs.append(p)
        # wait until it forwards: ping across it from A to B
        t0 = time.monotonic()
        while time.monotonic() - t0 < 20:
            if p.poll() is not None:
                raise TopoError(f"lossy-emu exited ({p.returncode}):\n{p.stdout.read()}")
            r = sh(f"ip netns exec {self.ns['A']} ping -c 1 -W 1 {self.kip['B']}", check=False)
            if r.returncode == 0:
                return p
        raise TopoError("lossy-emu started but A cannot ping B through it within 20 s")

    def stop(self, p, timeout=20):
        """SIGINT (the apps write --json at exit) and wait; the output text."""
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGINT)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
        return out

    def rnic_pair(self, mode, opts, json_a, json_b, timeout, extra_a="", extra_b=""):
        """rnic B serves, rnic A is the client; returns (rcA, outA, rcB, outB).
        extra_a / extra_b: options for one side only (e.g. --trace FILE)."""
        srv = subprocess.Popen(
            f"ip netns exec {self.ns['B']} {binary('rnic')} {self._eal_rnic('B')} -- "
            f"--ip {self.rip['B']}/24 {opts} {extra_b} --json {json_b} {mode}",
            shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        self.procs.append(srv)
        seen = []
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30:
            line = srv.stdout.readline()
            if not line:
                break
            seen.append(line)
            if "Waiting for client" in line:
                break
        else:
            pass
        if not seen or "Waiting for client" not in seen[-1]:
            srv.kill()
            raise TopoError("rnic B did not start listening:\n" + "".join(seen))
        try:
            cli = subprocess.run(
                f"ip netns exec {self.ns['A']} {binary('rnic')} {self._eal_rnic('A')} -- "
                f"--ip {self.rip['A']}/24 {opts} {extra_a} --json {json_a} {mode} {self.kip['B']}",
                shell=True, capture_output=True, text=True, timeout=timeout)
            rc_a, out_a = cli.returncode, cli.stdout + cli.stderr
        except subprocess.TimeoutExpired as e:
            rc_a, out_a = -1, f"rnic A timed out after {timeout} s\n{e.stdout or ''}"
        try:
            out_b, _ = srv.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(srv.pid, signal.SIGKILL)
            out_b, _ = srv.communicate()
        return rc_a, out_a, srv.returncode, "".join(seen) + out_b

    def rnic_iface(self, side):
        return self.ifs[side]


class Capture:
    """tcpdump of what each rnic *receives* (the af_packet PMD transmits with
    PACKET_QDISC_BYPASS, so its own frames never reach a tap), merged by time."""

    def __init__(self, topo, path):
        self.path, self.parts, self.procs = path, [], []
        for side in "AB":
            part = f"{path}.{side}"
            self.parts.append(part)
            p = subprocess.Popen(f"ip netns exec {topo.ns[side]} tcpdump -i {topo.rnic_iface(side)} -Q in "
                                 f"-s 0 -U -w {part} 'udp port 4791 or ether proto 0x8808' 2>/dev/null",
                                 shell=True, start_new_session=True)
            self.procs.append(p)
        time.sleep(0.5)

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGINT)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        r = subprocess.run(["mergecap", "-w", self.path] + self.parts, capture_output=True, text=True)
        if r.returncode:
            raise TopoError(f"mergecap: {r.stderr.strip()}")
        for f in self.parts:
            os.unlink(f)
        return self.path


class Chain:
    """A line of boxes between rnic A and rnic B, each box in its own namespace,
    consecutive boxes joined by a direct veth pair:

        A ─ box1 ─ box2 ─ … ─ B        (e.g. A, relayA, wan, relayB, switch, B)

    `boxes` is a list of (name, kind) with kind "emu" or "relay"; a box's left
    port (toward A) is DPDK port 0, its right port port 1. Namespaces are
    <prefix><name>; cleanup() removes them all (names must be listed in NAMES).
    """

    NAMES = ("A", "E", "B", "RA", "RB", "S", "W")

    def __init__(self, boxes, prefix="tb", mtu=4096):
        self.prefix = prefix
        self.nodes = ["A"] + [n for n, _ in boxes] + ["B"]
        self.kind = {n: k for n, k in boxes}
        for n in self.nodes:
            if n not in self.NAMES:
                raise TopoError(f"box name {n!r} is not one of {self.NAMES}")
        self.ns = {n: f"{prefix}{n}" for n in self.nodes}
        # link i joins nodes[i] (its right port) and nodes[i+1] (its left port)
        self.left, self.right = {}, {}
        for i in range(len(self.nodes) - 1):
            self.right[self.nodes[i]] = f"{prefix}{i}r"
            self.left[self.nodes[i + 1]] = f"{prefix}{i}l"
        self.kip = {"A": f"{SUBNET}.1", "B": f"{SUBNET}.2"}
        self.rip = {"A": f"{SUBNET}.11", "B": f"{SUBNET}.12"}
        self.link_mtu = 4200 if mtu > 2048 else 2200 if mtu > 1024 else 1500
        self.framesz = 8192 if mtu > 2048 else 4096 if mtu > 1024 else 2048
        self.procs = []

    def iface(self, node):
        return self.right["A"] if node == "A" else self.left["B"] if node == "B" else None

    rnic_iface = iface

    def up(self):
        cleanup_names(self.prefix, self.NAMES)
        for n in self.nodes:
            sh(f"ip netns add {self.ns[n]}")
        for i in range(len(self.nodes) - 1):
            a, b = self.nodes[i], self.nodes[i + 1]
            ra, lb = self.right[a], self.left[b]
            sh(f"ip link add {ra} netns {self.ns[a]} mtu {self.link_mtu} type veth "
               f"peer name {lb} netns {self.ns[b]} mtu {self.link_mtu}")
            for n, ifn in ((a, ra), (b, lb)):
                sh(f"ip -n {self.ns[n]} link set {ifn} up")
                sh(f"ip netns exec {self.ns[n]} ethtool -K {ifn} tx off", check=False)
        for n in self.nodes:
            sh(f"ip -n {self.ns[n]} link set lo up")
        sh(f"ip -n {self.ns['A']} addr add {self.kip['A']}/24 dev {self.iface('A')}")
        sh(f"ip -n {self.ns['B']} addr add {self.kip['B']}/24 dev {self.iface('B')}")
        return self

    def down(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
        self.procs = []
        cleanup_names(self.prefix, self.NAMES)

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()

    def _vdevs(self, node):
        v = f"framesz={self.framesz},blocksz={self.framesz * 2},framecnt=4096"
        return (f"--vdev net_af_packet0,iface={self.left[node]},{v} "
                f"--vdev net_af_packet1,iface={self.right[node]},{v}")

    def start_box(self, node, args, json_path, lcores="0-1"):
        """lossy-emu (args: its options) or pfc-relay (args: its options) in node's namespace."""
        kind = self.kind[node]
        exe = binary("lossy-emu") if kind == "emu" else binary("pfc-relay")
        mem = 768 if kind == "emu" else 1024  # relay: buffers / 256 B mbufs per priority
        cmd = (f"ip netns exec {self.ns[node]} {exe} {eal_lcores(lcores)} --no-huge -m {mem} --no-pci "
               f"--file-prefix {self.prefix}{node} --log-level=lib.eal:error {self._vdevs(node)} -- "
               f"{args} --json {json_path}")
        p = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
        self.procs.append(p)
        time.sleep(0.3)
        if p.poll() is not None:
            raise TopoError(f"{kind} {node} exited ({p.returncode}):\n{p.stdout.read()}")
        return p

    def wait_path(self, timeout=20):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            for p in self.procs:
                if p.poll() is not None:
                    raise TopoError(f"a box exited ({p.returncode}):\n{p.stdout.read()[-2000:]}")
            r = sh(f"ip netns exec {self.ns['A']} ping -c 1 -W 1 {self.kip['B']}", check=False)
            if r.returncode == 0:
                return
        raise TopoError(f"A cannot ping B through {' - '.join(self.nodes)} within {timeout} s")

    stop = Topology.stop

    def _eal_rnic(self, side):
        return (f"{eal_lcores()} --no-huge -m 512 --no-shconf --no-pci --file-prefix {self.prefix}{side} "
                f"--log-level=lib.eal:error --vdev net_af_packet0,iface={self.iface(side)},"
                f"framesz={self.framesz},blocksz={self.framesz * 2},framecnt=1024,qpairs=1")

    rnic_pair = Topology.rnic_pair


def cleanup_names(prefix, names):
    """Kill processes in, and delete, namespaces <prefix><name> for the given names."""
    listed = sh("ip netns list", check=False).stdout.split()
    ours = [n for n in listed if n.startswith(prefix) and n[len(prefix):] in names]
    for n in ours:
        for pid in sh(f"ip netns pids {n}", check=False).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
    for n in ours:
        sh(f"ip netns del {n}", check=False)
    return ours
