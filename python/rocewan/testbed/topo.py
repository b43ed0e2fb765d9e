"""The testbed topology on one machine: three network namespaces joined by two
direct veth pairs (no bridge: bridges drop PFC frames).

    ns <p>A: rnic A (af_packet on vA; kernel IP .1 for perftest's TCP exchange)
         vA ===== eA   ns <p>E: lossy-emu (port 0 = eA, side A; port 1 = eB, side B)
                  eB ===== vB   ns <p>B: rnic B (kernel IP .2)

With transport "memif" ([link] transport) the DPDK ports are net_memif
shared-memory links instead (MEMIF_DIR/<prefix>/*.sock, the boxes serve, the
rnics are clients), and one veth pair joins A and B directly for the kernel
only: perftest's TCP exchange. No frame of the experiment crosses the kernel.

Every DPDK process gets its own --file-prefix. Everything this module creates
carries the prefix (default "tb"), so `down` and every `up`/`run` can remove
what an earlier, interrupted run left behind.
"""
import fcntl
import os
import shutil
import signal
import subprocess
import threading
import time

from .config import ROOT

BUILD = os.environ.get("ROCEWAN_BUILD", os.path.join(ROOT, "build") if ROOT else None)
SUBNET = "10.77.0"
TRANSPORTS = ("veth", "memif")
MEMIF_DIR = "/run/rocewan-memif"  # one directory per prefix: <MEMIF_DIR>/<prefix>/


def memif_dir(prefix):
    return os.path.join(MEMIF_DIR, prefix)


# The emulator's EAL heap. --no-huge maps it lazily (1.5 GB of address space, resident only
# as the pools fill it), and its pools hold the delay line in full-MTU packets
# (emu_min_frame): at MTU 1024 and 10 Gb/s, 113 MB a direction at 40 ms one way, 266 MB at
# 100 ms, which 768 MB could not hold for both directions.
EMU_MEM_MB = 1536
# a full RoCEv2 data packet on the wire: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4
ROCE_FRAME_OVERHEAD = 58


def emu_min_frame(mtu, extra=""):
    """The emulator's --min-frame for an rnic at @mtu: its pool then holds the delay line's
    packets at the rate of full data frames (about MTU + 58 B), not of --mbuf-size frames,
    which are up to twice as large (framesz), so the pool held half a BDP of packets. Left to
    the caller when it sizes the pool itself (--min-frame or --mbufs in @extra)."""
    if "--min-frame" in extra or "--mbufs" in extra:
        return ""
    return f"--min-frame {mtu + ROCE_FRAME_OVERHEAD}"


def memif_vdev(n, sock, server, framesz, mac):
    """One net_memif port on a filesystem socket (abstract sockets are per network
    namespace). bsize = the frame size, so a jumbo frame takes one descriptor; memif
    would chain descriptors otherwise (it has no MTU to set)."""
    return (f"--vdev net_memif{n},role={'server' if server else 'client'},id=0,socket={sock},"
            f"socket-abstract=no,bsize={framesz},mac={mac}")


def wait_sockets(paths, procs, timeout=20):
    """Until every memif server socket exists (the box's EAL probed its ports)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        for p in procs:
            if p.poll() is not None:
                raise TopoError(f"a box exited ({p.returncode}):\n{p.stdout.read()[-2000:]}")
        if all(os.path.exists(x) for x in paths):
            time.sleep(0.2)
            return
        time.sleep(0.05)
    raise TopoError(f"memif sockets {', '.join(paths)} did not appear within {timeout} s")


class TopoError(RuntimeError):
    pass


def wait_line(p, text, timeout=120):
    """Read a box's output until a line contains text (the box is up: lossy-emu prints
    "Ctrl-C to stop" once its ports are started and its directions initialised); the text
    read. Its memif sockets exist from the EAL's probe on, seconds before that with large
    pools on a loaded host (the pools are populated in between): an rnic started at the
    socket gave up resolving its peer (3 s) while the emulator still filled its pools, at
    --set link.rate=40gbit (2 x 219 MB of mbufs)."""
    got, seen = [], threading.Event()

    def reader():  # a thread: readline blocks, and only up to the line (communicate() reads the rest)
        for line in iter(p.stdout.readline, ""):
            got.append(line)
            if text in line:
                seen.set()
                return
        seen.set()  # end of output: the box exited

    threading.Thread(target=reader, daemon=True).start()
    if seen.wait(timeout) and got and text in got[-1]:
        return "".join(got)
    raise TopoError(f"the box did not print {text!r} within {timeout} s (exit {p.poll()}):\n"
                    + "".join(got)[-2000:])


# A DPDK process a capture can attach to (docs/capture.md): a primary with a shared
# configuration (no --no-shconf / --in-memory), on hugepages (a --no-huge heap is
# anonymous memory no secondary can map), its memory at a fixed virtual address the
# secondary (dpdk-dumpcap, started under `setarch -R`) maps at the same place. The
# heap grows from the free hugepages on demand (no -m).
SHARED_BASE_VA = "0x200000000"
HUGE_DIR = "/dev/hugepages"


def eal_mem(shared, mb):
    """The EAL memory options: today's private --no-huge heap of @mb MB, or a shared
    configuration on hugepages a capture can attach to."""
    if shared:
        return f"--base-virtaddr {SHARED_BASE_VA}"
    return f"--no-huge -m {mb}"


def free_hugepages():
    try:
        with open("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 0


def remove_hugefiles(file_prefixes):
    """The hugepage files (HUGE_DIR/<file-prefix>map_N) and runtime directories
    (/var/run/dpdk/<file-prefix>) of dead shared-mode processes. A memif process exits
    without rte_eal_cleanup() (dp_eal_cleanup), and a killed one never runs it: their
    files would hold the pages until the next primary of the same prefix."""
    if os.path.isdir(HUGE_DIR):
        for f in os.listdir(HUGE_DIR):
            if not any(f.startswith(fp + "map_") for fp in file_prefixes):
                continue
            path = os.path.join(HUGE_DIR, f)
            try:  # a live process holds a shared lock on each of its files (as EAL's own cleanup checks)
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.unlink(path)
            except OSError:
                pass
            finally:
                os.close(fd)
    for fp in file_prefixes:
        d = os.path.join("/var/run/dpdk", fp)
        if os.path.isdir(d):
            shutil.rmtree(d, ignore_errors=True)


def eal_lcores(lcores="0"):
    """EAL lcores ("0", "0-1", "1") as --lcores with every lcore's thread free to run on
    any CPU this process may use. EAL's -l pins lcore N to CPU N: on a small shared host
    that put every rnic's and box's main thread on CPU 0, where a woken poll loop waited
    in the run queue for up to 2.6 s behind the others (measured beside two busy loops;
    docs/testbed.md), long enough to exhaust a peer's retries. Floating threads let the
    kernel move a starved one to the idle CPU. Every DPDK process also gets its own session
    (start_new_session): with the kernel's autogroups each session shares the CPU as one
    group, and an rnic in the session of the load beside it (two busy loops started by
    the same shell as the tests) lost to it often enough to end in IBV_WC_RETRY_EXC_ERR."""
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


def _check_transport(transport):
    if transport not in TRANSPORTS:
        raise TopoError(f"transport {transport!r} is not one of {', '.join(TRANSPORTS)}")
    return transport


class Topology:
    def __init__(self, prefix="tb", mtu=4096, transport="veth", shared=False):
        self.prefix = prefix
        self.transport = _check_transport(transport)
        # shared: lossy-emu runs as a primary a capture can attach to (memif links only:
        # dpdk-dumpcap on its two ports); the rnics keep their private --no-huge heaps
        self.shared = shared
        if shared and self.transport != "memif":
            raise TopoError("the shared EAL mode is for memif links (veth links are captured "
                            "with tcpdump)")
        self.ns = {r: f"{prefix}{r}" for r in "AEB"}
        self.ifs = {"A": f"{prefix}vA", "eA": f"{prefix}eA", "eB": f"{prefix}eB", "B": f"{prefix}vB"}
        self.kip = {"A": f"{SUBNET}.1", "B": f"{SUBNET}.2"}
        self.rip = {"A": f"{SUBNET}.11", "B": f"{SUBNET}.12"}
        self.link_mtu = 4200 if mtu > 2048 else 2200 if mtu > 1024 else 1500
        self.framesz = 8192 if mtu > 2048 else 4096 if mtu > 1024 else 2048
        self.mtu = mtu
        self.procs = []
        self.emu_head = {}  # pid -> the output read while waiting for the box to start

    def up(self):
        cleanup(self.prefix)
        for n in self.ns.values():
            sh(f"ip netns add {n}")
        pairs = [("A", "eA"), ("eB", "B")]
        nsof = {"A": self.ns["A"], "eA": self.ns["E"], "eB": self.ns["E"], "B": self.ns["B"]}
        if self.transport == "memif":  # the kernel's veth joins A and B: control only
            os.makedirs(memif_dir(self.prefix), exist_ok=True)
            pairs = [("A", "B")]
            self.ifs = {"A": self.ifs["A"], "B": self.ifs["B"]}
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
        if self.transport == "memif":
            # CPU plan (docs/testbed.md): floating lcores as on veth, every loop backing off when idle
            sock = os.path.join(memif_dir(self.prefix), f"{side}.sock")
            mac = "02:77:00:00:00:0a" if side == "A" else "02:77:00:00:00:0b"
            return (f"{eal_lcores()} --no-huge -m 512 --no-shconf --no-pci "
                    f"--file-prefix {self.prefix}{side} --log-level=lib.eal:error "
                    + memif_vdev(0, sock, False, self.framesz, mac))
        return (f"{eal_lcores()} --no-huge -m 512 --no-shconf --no-pci --file-prefix {self.prefix}{side} "
                f"--log-level=lib.eal:error --vdev net_af_packet0,iface={self.ifs[side]},"
                f"framesz={self.framesz},blocksz={self.framesz * 2},framecnt=1024,qpairs=1")

    def memif_socks(self):
        return [os.path.join(memif_dir(self.prefix), f"{s}.sock") for s in "AB"]

    def _eal_emu(self):
        if self.transport == "memif":
            a, b = self.memif_socks()
            return (f"{eal_lcores('0-1')} {eal_mem(self.shared, EMU_MEM_MB)} --no-pci --file-prefix {self.prefix}E "
                    f"--log-level=lib.eal:error {memif_vdev(0, a, True, self.framesz, '02:77:00:00:00:e0')} "
                    f"{memif_vdev(1, b, True, self.framesz, '02:77:00:00:00:e1')}")
        v = f"framesz={self.framesz},blocksz={self.framesz * 2},framecnt=4096"
        return (f"{eal_lcores('0-1')} --no-huge -m {EMU_MEM_MB} --no-pci --file-prefix {self.prefix}E "
                f"--log-level=lib.eal:error --vdev net_af_packet0,iface={self.ifs['eA']},{v} "
                f"--vdev net_af_packet1,iface={self.ifs['eB']},{v}")

    def start_emu(self, a2b, b2a, seed, json_path, pcap=None, extra=""):
        cmd = (f"ip netns exec {self.ns['E']} {binary('lossy-emu')} {self._eal_emu()} -- "
               f"--a2b '{a2b}' --b2a '{b2a}' --seed {seed} --json {json_path} --mbuf-size {self.framesz} "
               f"--link-rate 10gbit {emu_min_frame(self.mtu, extra)}" + (f" {extra}" if extra else ""))
        p = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
        self.procs.append(p)
        if self.transport == "memif":  # the rnics connect to its sockets; ping takes the control veth
            wait_sockets(self.memif_socks(), [p])
            self.emu_head[p.pid] = wait_line(p, "Ctrl-C to stop")
            return p
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
        return self.emu_head.pop(p.pid, "") + out

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
                shell=True, capture_output=True, text=True, timeout=timeout,
                start_new_session=True)  # its own session: see eal_lcores()
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


def Capture(topo, path, sides="A"):
    """The capture of a running topology's link into @path: tcpdump of both rnics' received
    frames on veth links (VethCapture); dpdk-dumpcap on lossy-emu's memif port(s) of @sides
    (DumpCapture: "A", the link to rnic A, holds every frame A sent and received)."""
    if getattr(topo, "transport", "veth") == "memif":
        if isinstance(topo, Chain):
            raise TopoError("a capture on a memif chain (relays, switch) is not supported: capture "
                            "the plain memif topology, or use the rnics' --trace")
        if not getattr(topo, "shared", False):
            raise TopoError("a capture on memif links needs lossy-emu in the shared EAL mode "
                            "(Topology(shared=True); docs/capture.md)")
        return DumpCapture(topo.prefix, topo.ns, path, sides)
    return VethCapture(topo, path)


DUMPCAP = "dpdk-dumpcap"
# dpdk-dumpcap's snapshot length: a whole frame of the testbed's largest (the memif bsize,
# 8192 B at MTU 4096). DPDK 22.11 sizes its copies as uint16_t data rooms, so -s 65535
# overflows them and every copy fails (all frames counted as dropped).
DUMPCAP_SNAPLEN = 8192
DUMPCAP_RING = 8192  # frames between the primary's callbacks and the file (-N; default 2048)


def dumpcap_cmd(file_prefix, port, path, ns=None):
    """One dpdk-dumpcap (a DPDK secondary process) on one port of the primary started with
    --file-prefix @file_prefix. It captures one interface (DPDK 22.11's takes the last -i);
    pcap (-P): one wall-clock timestamp per burst, so it merges with a tcpdump capture
    (22.11's pcapng timestamps are far off: year 2251). `setarch -R`: no address-space
    randomisation, so nothing of the secondary's own lands where the primary's memory is."""
    cmd = ["setarch", os.uname().machine, "-R", DUMPCAP, f"--file-prefix={file_prefix}", "-i", port,
           "-s", str(DUMPCAP_SNAPLEN), "-N", str(DUMPCAP_RING), "-P", "-w", path]
    return (["ip", "netns", "exec", ns] if ns else []) + cmd


PCAP_NSEC_LE, PCAP_USEC_LE = bytes.fromhex("4d3cb2a1"), bytes.fromhex("d4c3b2a1")


def fix_dumpcap_times(path):
    """DPDK 22.11's dumpcap -P opens a nanosecond pcap (pcap_open_dead_with_tstamp_precision
    NANO) but stamps each burst with gettimeofday(): the fraction field holds microseconds,
    read as nanoseconds (a frame at .958462 s shows at .000958462). Marking the file as the
    microsecond pcap it is fixes every timestamp, and with them the merge by time."""
    with open(path, "r+b") as f:
        if f.read(4) == PCAP_NSEC_LE:
            f.seek(0)
            f.write(PCAP_USEC_LE)


class DumpCaptureProc:
    """A dpdk-dumpcap process: started, ready once pdump is enabled in the primary, stopped
    once its count of written frames stopped moving."""

    def __init__(self, cmd, what):
        self.what = what
        self.p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  start_new_session=True)
        self.err = b""
        os.set_blocking(self.p.stderr.fileno(), False)

    def _read(self):
        try:
            while True:
                b = self.p.stderr.read()
                if not b:
                    break
                self.err += b
        except (BlockingIOError, TypeError):
            pass

    def text(self):
        return self.err.decode(errors="replace").replace("\b", "")

    def count(self):
        """Frames written so far (its "Packets captured: N" counter, rewritten with backspaces)."""
        t = self.err.decode(errors="replace")
        if "Packets captured:" not in t:
            return None
        tail = t.rsplit("Packets captured:", 1)[1].split("\n")[0]
        nums = [w for w in tail.replace("\b", " ").split() if w.isdigit()]
        return int(nums[-1]) if nums else 0

    def wait_ready(self, timeout=30):
        """Until it prints "Packets captured:", which dumpcap does after rte_pdump_enable()
        returned: from then on every frame of the port reaches its ring."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            self._read()
            if "Packets captured:" in self.err.decode(errors="replace"):
                return
            if self.p.poll() is not None:
                self._read()
                raise TopoError(f"{DUMPCAP} on {self.what} exited ({self.p.returncode}): "
                                f"{self.text().strip()[-800:]} (the primary must run in the shared "
                                f"EAL mode, docs/capture.md)")
            time.sleep(0.05)
        self.kill()
        raise TopoError(f"{DUMPCAP} on {self.what} did not start within {timeout} s: {self.text()[-800:]}")

    def settled(self, since, settle):
        """True once the written count has not moved for @settle s; @since holds the last
        count and when it was seen (updated here)."""
        self._read()
        n = self.count()
        if n != since.get("n") or "t" not in since:
            since.update(n=n, t=time.monotonic())
        return self.p.poll() is not None or time.monotonic() - since["t"] >= settle

    def stop(self):
        """SIGINT (see settled(): dumpcap leaves what is still in its ring unwritten when it
        quits), then its exit report."""
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGINT)
        try:
            self.p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()
        os.set_blocking(self.p.stderr.fileno(), True)
        self.err += self.p.stderr.read() or b""
        return self.text()

    def _stats(self):
        for line in self.text().splitlines():
            if "received/dropped" in line:
                rx, drop = line.split(":")[-1].split("(")[0].split("/")
                return int(rx), int(drop)
        return None, None

    def dropped(self):
        """The frames pdump could not hand to the ring ("received/dropped" at exit), or None."""
        return self._stats()[1]

    def received(self):
        """The frames pdump handed to the ring (with none dropped: what the file must hold)."""
        return self._stats()[0]

    def kill(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()


class DumpCapture:
    """A memif topology's links: dpdk-dumpcap on lossy-emu's ports (port 0: the link to
    rnic A, both directions; port 1: the link to rnic B), and tcpdump on the control veth
    (perftest's TCP exchange, which crosses the kernel), merged by time into one pcap."""

    def __init__(self, prefix, ns, path, sides="AB"):
        self.path, self.parts, self.dumps = path, [], {}
        self.sides = sides
        for side in sides:
            part = f"{path}.{side}"
            self.parts.append(part)
            port = "net_memif0" if side == "A" else "net_memif1"
            d = DumpCaptureProc(dumpcap_cmd(f"{prefix}E", port, part, ns["E"]),
                                f"lossy-emu's {port} (the link to rnic {side})")
            self.dumps[side] = d
            try:
                d.wait_ready()
            except TopoError:
                self.abort()
                raise
        self.tcp = f"{path}.tcp"
        self.parts.append(self.tcp)
        self.tcpdump = subprocess.Popen(["ip", "netns", "exec", ns["A"], "tcpdump", "-i", f"{prefix}vA",
                                         "-s", "0", "-U", "-w", self.tcp, "tcp port 18515"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                        start_new_session=True)
        line = self.tcpdump.stderr.readline()
        if "listening on" not in line:
            self.abort()
            raise TopoError(f"tcpdump on {prefix}vA: {line.strip() or 'exited'}")
        self.report = {}

    def abort(self):
        for d in self.dumps.values():
            d.kill()
        t = getattr(self, "tcpdump", None)
        if t and t.poll() is None:
            os.killpg(t.pid, signal.SIGKILL)
            t.wait()
        for f in self.parts:
            if os.path.exists(f):
                os.unlink(f)

    SETTLE_S = 1.0  # a written count that held still this long: the rings are drained

    def stop(self):
        since = {side: {} for side in self.dumps}
        t0 = time.monotonic()
        while not all(d.settled(since[side], self.SETTLE_S) for side, d in self.dumps.items()):
            if time.monotonic() - t0 > 60:
                break
            time.sleep(0.05)
        for side, d in self.dumps.items():
            d.stop()
            self.report[side] = {"captured": d.count(), "dropped": d.dropped(),
                                 "received": d.received()}
            if os.path.exists(f"{self.path}.{side}"):
                fix_dumpcap_times(f"{self.path}.{side}")
        if self.tcpdump.poll() is None:
            self.tcpdump.terminate()
        self.tcpdump.communicate()
        r = subprocess.run(["mergecap", "-F", "pcap", "-w", self.path] + self.parts,
                           capture_output=True, text=True)
        if r.returncode:
            raise TopoError(f"mergecap: {r.stderr.strip()}")
        for f in self.parts:
            os.unlink(f)
        for side, rep in self.report.items():
            if rep["dropped"]:
                raise TopoError(f"{DUMPCAP} on the link to rnic {side} dropped {rep['dropped']} frames "
                                f"(its ring of {DUMPCAP_RING} was full): {self.path} misses them")
            if rep["received"] is not None and rep["captured"] != rep["received"]:
                raise TopoError(f"{DUMPCAP} on the link to rnic {side} wrote {rep['captured']} of the "
                                f"{rep['received']} frames its ring got (it quit with the rest in "
                                f"the ring): {self.path} misses them")
        return self.path


class VethCapture:
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

    def __init__(self, boxes, prefix="tb", mtu=4096, transport="veth"):
        self.prefix = prefix
        self.transport = _check_transport(transport)
        self.started = set()
        self.emu_head = {}  # pid -> a box's output read while waiting for it to start
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
        if self.transport == "memif":
            return {"A": f"{self.prefix}cA", "B": f"{self.prefix}cB"}.get(node)
        return self.right["A"] if node == "A" else self.left["B"] if node == "B" else None

    def _sock(self, i):
        return os.path.join(memif_dir(self.prefix), f"l{i}.sock")

    rnic_iface = iface

    def up(self):
        cleanup_names(self.prefix, self.NAMES)
        for n in self.nodes:
            sh(f"ip netns add {self.ns[n]}")
        if self.transport == "memif":
            os.makedirs(memif_dir(self.prefix), exist_ok=True)
            ca, cb = self.iface("A"), self.iface("B")
            sh(f"ip link add {ca} netns {self.ns['A']} type veth peer name {cb} netns {self.ns['B']}")
            for n, ifn in (("A", ca), ("B", cb)):
                sh(f"ip -n {self.ns[n]} link set {ifn} up")
        for i in range(len(self.nodes) - 1 if self.transport == "veth" else 0):
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
        if self.transport == "memif":
            # a link's server is whichever end starts first: rnics start last, and a memif
            # client refuses to start without its server
            i = self.nodes.index(node)
            out = []
            for port, j, peer in ((0, i - 1, self.nodes[i - 1]), (1, i, self.nodes[i + 1])):
                server = peer in ("A", "B") or peer not in self.started
                out.append(memif_vdev(port, self._sock(j), server, self.framesz,
                                      f"02:77:00:00:{i:02x}:{port:02x}"))
            return " ".join(out)
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
        self.started.add(node)
        # up to its ready line, printed once its ports are started: the next box (a memif
        # client of this one) and the rnics connect only then (see wait_line)
        try:
            self.emu_head[p.pid] = wait_line(p, "Ctrl-C to stop")
        except TopoError as e:
            raise TopoError(f"{kind} {node}: {e}") from None
        return p

    def wait_path(self, timeout=20):
        if self.transport == "memif":  # ping would take the control veth: wait for the sockets
            return wait_sockets([self._sock(i) for i in range(len(self.nodes) - 1)], self.procs, timeout)
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
        if self.transport == "memif":
            i = len(self.nodes) - 2 if side == "B" else 0
            return (f"{eal_lcores()} --no-huge -m 512 --no-shconf --no-pci "
                    f"--file-prefix {self.prefix}{side} --log-level=lib.eal:error "
                    + memif_vdev(0, self._sock(i), False, self.framesz,
                                 "02:77:00:00:00:0a" if side == "A" else "02:77:00:00:00:0b"))
        return (f"{eal_lcores()} --no-huge -m 512 --no-shconf --no-pci --file-prefix {self.prefix}{side} "
                f"--log-level=lib.eal:error --vdev net_af_packet0,iface={self.iface(side)},"
                f"framesz={self.framesz},blocksz={self.framesz * 2},framecnt=1024,qpairs=1")

    rnic_pair = Topology.rnic_pair


def wait_gone(pids, timeout=10):
    """Until every pid has exited (or is a zombie, which holds no file or lock any
    more). SIGKILL is asynchronous: a DPDK process unmapping its memory takes a
    while to die, and the next box started under the same --file-prefix failed
    its EAL init ("Cannot allocate memzone list") on the files the dying one still
    held (bench/rnic/rto_tail.py, 2 of 60 runs on 2026-11-28)."""
    t0 = time.monotonic()
    for pid in pids:
        while time.monotonic() - t0 < timeout:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break
            except (FileNotFoundError, ProcessLookupError, IndexError):
                break
            time.sleep(0.01)


def cleanup_names(prefix, names):
    """Kill processes in, and delete, namespaces <prefix><name> for the given names."""
    listed = sh("ip netns list", check=False).stdout.split()
    ours = [n for n in listed if n.startswith(prefix) and n[len(prefix):] in names]
    killed = []
    for n in ours:
        for pid in sh(f"ip netns pids {n}", check=False).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
                killed.append(int(pid))
            except (ProcessLookupError, ValueError):
                pass
    wait_gone(killed)
    for n in ours:
        sh(f"ip netns del {n}", check=False)
    d = memif_dir(prefix)
    if os.path.isdir(d):
        for f in os.listdir(d):
            if f.endswith(".sock"):
                os.unlink(os.path.join(d, f))
    remove_hugefiles([prefix + n for n in names])
    return ours
