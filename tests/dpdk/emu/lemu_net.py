# SPDX-License-Identifier: BSD-3-Clause
"""Plumbing for the lossy-emu end-to-end tests (stdlib only).

Topology (three network namespaces, two veth pairs, no bridge: bridges drop PFC):

    ns A: a0 <-veth-> a1 :ns E: b1 <-veth-> b0 :ns B
                      [lossy-emu, net_af_packet on a1 (port A) and b1 (port B)]

One Python process sends and captures in A and B through AF_PACKET sockets
opened inside each namespace (setns on the calling thread only), so sender and
receiver share one clock: one-way delays come from a send timestamp carried in
the payload and the kernel's receive timestamp (SO_TIMESTAMPNS).
"""

import ctypes
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
from rocewan.testbed.telemetry import Telemetry  # noqa: E402  (the one telemetry client)

CLONE_NEWNET = 0x40000000
SO_TIMESTAMPNS = 35
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
ETH_P_ALL = 0x0003
SO_RCVBUFFORCE = 33
SO_SNDBUFFORCE = 32
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40

_libc = ctypes.CDLL(None, use_errno=True)


def sh(*args, check=True):
    """Run a command quietly; raise with its stderr on failure."""
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(args), p.stderr.strip()))
    return p


def _setns_fd(fd):
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


class Topology:
    """Namespaces lemuA<tag>, lemuE<tag>, lemuB<tag> and veths; remove() always cleans up."""

    def __init__(self, tag, mtu=9000):
        self.tag = tag
        self.ns = {"a": "lemuA%s" % tag, "e": "lemuE%s" % tag, "b": "lemuB%s" % tag}
        self.ifs = {"a0": "la0%s" % tag, "a1": "la1%s" % tag,
                    "b0": "lb0%s" % tag, "b1": "lb1%s" % tag}
        self.mtu = mtu

    def create(self):
        self.remove()
        for n in self.ns.values():
            sh("ip", "netns", "add", n)
        i = self.ifs
        sh("ip", "link", "add", i["a0"], "type", "veth", "peer", "name", i["a1"])
        sh("ip", "link", "add", i["b0"], "type", "veth", "peer", "name", i["b1"])
        place = [("a", "a0"), ("e", "a1"), ("e", "b1"), ("b", "b0")]
        for ns, ifn in place:
            sh("ip", "link", "set", i[ifn], "netns", self.ns[ns])
        for ns, ifn in place:
            # no IPv6 autoconfiguration chatter, jumbo frames for 4 KiB RoCE
            sh("ip", "netns", "exec", self.ns[ns], "sysctl", "-qw",
               "net.ipv6.conf.%s.disable_ipv6=1" % i[ifn])
            sh("ip", "netns", "exec", self.ns[ns], "ip", "link", "set", i[ifn],
               "mtu", str(self.mtu), "up")

    def remove(self):
        for n in self.ns.values():
            sh("ip", "netns", "del", n, check=False)
        for ifn in self.ifs.values():  # in case a veth was left in the root namespace
            sh("ip", "link", "del", ifn, check=False)

    def socket(self, side):
        """A raw AF_PACKET socket on a0 (side "a") or b0 (side "b")."""
        ifn = self.ifs[side + "0"]
        here = os.open("/proc/self/ns/net", os.O_RDONLY)
        there = os.open("/var/run/netns/%s" % self.ns[side], os.O_RDONLY)
        try:
            _setns_fd(there)
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20)
            s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 8 << 20)
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)  # the kernel strips VLAN tags into it
            s.bind((ifn, 0))
        finally:
            _setns_fd(here)
            os.close(here)
            os.close(there)
        return Port(s)


class Port:
    """Send frames and capture in a background thread with kernel timestamps."""

    def __init__(self, s):
        self.s = s
        self.frames = []  # (rx_ns, bytes)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._t = threading.Thread(target=self._rx, daemon=True)
        self._t.start()

    def _rx(self):
        anc = socket.CMSG_SPACE(16) + socket.CMSG_SPACE(20)
        while not self._stop.is_set():
            r, _, _ = select.select([self.s], [], [], 0.05)
            if not r:
                continue
            while True:
                try:
                    data, cmsgs, _, _ = self.s.recvmsg(65536, anc, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                ts = time.time_ns()
                for level, kind, val in cmsgs:
                    if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                        sec, nsec = struct.unpack("qq", val[:16])
                        ts = sec * 1000000000 + nsec
                    elif level == SOL_PACKET and kind == PACKET_AUXDATA and len(val) >= 20:
                        status, _, _, _, _, tci, tpid = struct.unpack("IIIHHHH", val[:20])
                        if status & TP_STATUS_VLAN_VALID:  # put the tag back, as libpcap does
                            if not status & TP_STATUS_VLAN_TPID_VALID:
                                tpid = 0x8100
                            data = data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
                with self._lock:
                    self.frames.append((ts, data))

    def take(self):
        with self._lock:
            f, self.frames = self.frames, []
        return f

    def send(self, frame):
        self.s.send(frame)

    def close(self):
        self._stop.set()
        self._t.join()
        self.s.close()


# ---- frames --------------------------------------------------------------------------

MAC_A = bytes.fromhex("02000000000a")
MAC_B = bytes.fromhex("02000000000b")
MAGIC = b"LEMU"
PROBE_HDR = struct.Struct("!4sIIQ")  # magic, run, seq, tx_ns


def ip4_csum(hdr):
    s = sum(struct.unpack("!%dH" % (len(hdr) // 2), hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def probe(run, seq, size=200, tos=0, tx_ns=0, src=MAC_A, dst=MAC_B):
    """Ethernet/IPv4/UDP frame of @size bytes carrying (run, seq, tx_ns)."""
    payload = PROBE_HDR.pack(MAGIC, run, seq, tx_ns)
    payload += b"\0" * max(0, size - 14 - 20 - 8 - len(payload))
    udp = struct.pack("!HHHH", 40000, 40001, 8 + len(payload), 0)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(udp) + len(payload), seq & 0xFFFF,
                               0, 64, 17, 0, bytes([10, 99, 0, 1]), bytes([10, 99, 0, 2])))
    struct.pack_into("!H", ip, 10, ip4_csum(bytes(ip)))
    return dst + src + b"\x08\x00" + bytes(ip) + udp + payload


def parse_probe(frame):
    """(run, seq, tx_ns) of a probe frame, or None."""
    off = 14 + 20 + 8
    if len(frame) < off + PROBE_HDR.size or frame[12:14] != b"\x08\x00" or frame[23] != 17:
        return None
    magic, run, seq, tx_ns = PROBE_HDR.unpack_from(frame, off)
    return (run, seq, tx_ns) if magic == MAGIC else None


def pfc_frame(src=MAC_A, prio=3, quanta=0xFFFF):
    q = [0] * 8
    q[prio] = quanta
    body = struct.pack("!HH8H", 0x0101, 1 << prio, *q)
    f = bytes.fromhex("0180c2000001") + src + b"\x88\x08" + body
    return f + b"\0" * (60 - len(f))


def parse_pfc(frame):
    """(enable, quanta[8]) of a PFC frame, or None."""
    if len(frame) < 34 or frame[12:14] != b"\x88\x08":
        return None
    op, en = struct.unpack_from("!HH", frame, 14)
    if op != 0x0101:
        return None
    return en, list(struct.unpack_from("!8H", frame, 18))


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for ts, data in frames:
            f.write(struct.pack("<IIII", ts // 1000000000, (ts % 1000000000) // 1000,
                                len(data), len(data)))
            f.write(data)


def read_pcap(path):
    frames = []
    with open(path, "rb") as f:
        hdr = f.read(24)
        magic = struct.unpack("<I", hdr[:4])[0]
        e = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
        while True:
            h = f.read(16)
            if len(h) < 16:
                break
            _, _, incl, _ = struct.unpack(e + "IIII", h)
            frames.append(f.read(incl))
    return frames


# ---- the emulator process ----------------------------------------------------------

class Emu:
    """lossy-emu in namespace E on a1/b1; telemetry on its own file prefix."""

    def __init__(self, binary, topo, prefix, workdir):
        self.binary = binary
        self.topo = topo
        self.prefix = prefix
        self.workdir = workdir
        self.proc = None
        self.out = []
        self.tel = None

    def eal_args(self, mem=256, lcores="0-1", framesz=4608, blocksz=36864, framecnt=4096):
        # 4 KiB RoCE frames fit framesz 4608 (8 per block); 4096 frames per ring ride
        # out host stalls of tens of ms without dropping (seed tests compare drop sets)
        i = self.topo.ifs
        vdev = ",framesz=%d,blocksz=%d,framecnt=%d" % (framesz, blocksz, framecnt)
        lc = ["--lcores", lcores] if "@" in lcores else ["-l", lcores]
        return lc + ["--no-huge", "-m", str(mem), "--no-shconf", "--no-pci",
                     "--file-prefix", self.prefix,
                     "--vdev", "net_af_packet0,iface=%s%s" % (i["a1"], vdev),
                     "--vdev", "net_af_packet1,iface=%s%s" % (i["b1"], vdev)]

    def command(self, app_args, **eal):
        return (["ip", "netns", "exec", self.topo.ns["e"], self.binary] + self.eal_args(**eal)
                + ["--"] + app_args)

    def run_once(self, app_args, timeout=20, **eal):
        """Run to completion (for runs expected to fail); returns CompletedProcess."""
        return subprocess.run(self.command(app_args, **eal), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=timeout)

    def start(self, app_args, timeout=20, **eal):
        self.out = []
        self.proc = subprocess.Popen(self.command(app_args, **eal), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        ready = threading.Event()

        def pump():
            for line in self.proc.stdout:
                self.out.append(line)
                if "Ctrl-C to stop" in line:
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        if not ready.wait(timeout) or self.proc.poll() is not None:
            raise RuntimeError("lossy-emu did not start:\n" + "".join(self.out))
        self.tel = Telemetry("/var/run/dpdk/%s/dpdk_telemetry.v2" % self.prefix)

    def stop(self, timeout=15):
        """SIGINT, wait; returns the exit status."""
        if self.tel:
            self.tel.close()
            self.tel = None
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            # ip netns exec forwards nothing: signal the emulator itself
            for pid in child_pids(self.proc.pid) or [self.proc.pid]:
                os.kill(pid, signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        rc = self.proc.returncode
        time.sleep(0.1)  # let the pump thread read the last lines
        return rc

    def kill(self):
        if self.proc and self.proc.poll() is None:
            for pid in child_pids(self.proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.kill()
            self.proc.wait()


def child_pids(pid):
    """The process itself if it exec'd in place (ip netns exec does), plus its children."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = [int(x) for x in f.read().split()]
    except OSError:
        kids = []
    return [pid] + kids
