"""QEMU (TCG) guests with soft-RoCE (rdma_rxe) and netem, for interop tests.

The image comes from tests/interop/build_vm.sh (Debian kernel + busybox
initramfs).  Each guest has:

* ttyS0: kernel log and a root shell (logged to <workdir>/<name>.console);
* a virtio-serial port "rw.cmd" carrying a line protocol (see guest/rw-cmdloop)
  that this module drives: no kernel log noise can interleave with it;
* one virtio-net NIC (eth0) on a host tap device, optionally enslaved to a
  host bridge (see Bridge) so that several guests share an L2 segment.

All host-side network objects can live in a private network namespace
(Netns), which keeps test addresses off the host's own stack and makes
cleanup trivial (deleting the namespace deletes its taps and bridges).

Typical use::

    with Netns() as ns, Bridge("br0", "10.9.0.1/24", netns=ns) as br:
        a = VM("a", "10.9.0.2/24", bridge=br, netns=ns, image_dir=img)
        b = VM("b", "10.9.0.3/24", bridge=br, netns=ns, image_dir=img)
        with boot_all([a, b]):
            rc, out = a.run("ibv_devinfo -d rxe0")
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterable, Optional, Sequence

DEFAULT_BUILD = str(Path(__file__).resolve().parents[2] / "build")  # the repository's build/

HERE = Path(__file__).resolve().parent
BUILD_SCRIPT = HERE / "build_vm.sh"

DEFAULT_BOOT_TIMEOUT = 240.0   # TCG, two guests sharing two cores: ~10-30 s
DEFAULT_CMD_TIMEOUT = 120.0
SHUTDOWN_TIMEOUT = 30.0
CONSOLE_TAIL = 40


class VMError(RuntimeError):
    """A guest failed (boot, command channel, timeout); message has the console tail."""


class VMTimeout(VMError):
    pass


# --------------------------------------------------------------------------- host helpers

def _sh(args: Sequence[str], check: bool = True, netns: Optional[str] = None,
        timeout: float = 60.0) -> subprocess.CompletedProcess:
    if netns:
        args = ["ip", "netns", "exec", netns, *args]
    cp = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        text=True, timeout=timeout)
    if check and cp.returncode != 0:
        raise VMError(f"host command failed ({cp.returncode}): {' '.join(args)}\n{cp.stdout}")
    return cp


def _ip(netns: Optional[str], *args: str, check: bool = True) -> subprocess.CompletedProcess:
    pre = ["ip", "-n", netns] if netns else ["ip"]
    return _sh([*pre, *args], check=check)


def _nsname(netns) -> Optional[str]:
    if netns is None:
        return None
    return netns.name if isinstance(netns, Netns) else str(netns)


def _ethtool_tx_off(dev: str, netns: Optional[str]) -> None:
    """Turn off TX checksum offload so host-originated TCP carries real checksums."""
    if shutil.which("ethtool") is None:
        raise VMError("ethtool not found on the host (apt-get install ethtool)")
    _sh(["ethtool", "-K", dev, "tx", "off"], netns=netns)


def check_host_prerequisites() -> None:
    """Raise VMError explaining what is missing (root, /dev/net/tun, qemu, ip)."""
    problems = []
    if os.geteuid() != 0:
        problems.append("must run as root (tap devices, bridges, network namespaces)")
    if not os.path.exists("/dev/net/tun"):
        problems.append("/dev/net/tun is missing (modprobe tun / give the container the tun device)")
    elif not os.access("/dev/net/tun", os.R_OK | os.W_OK):
        problems.append("/dev/net/tun is not read/writable")
    for tool in ("qemu-system-x86_64", "ip", "ethtool"):
        if shutil.which(tool) is None:
            problems.append(f"{tool} not found on PATH")
    if problems:
        raise VMError("interop VM prerequisites missing:\n  - " + "\n  - ".join(problems))


def build_image(outdir: os.PathLike | str) -> Path:
    """Run build_vm.sh OUTDIR (cached) and return OUTDIR."""
    outdir = Path(outdir)
    cp = subprocess.run(["bash", str(BUILD_SCRIPT), str(outdir)], stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, text=True, timeout=1800)
    if cp.returncode != 0:
        raise VMError(f"build_vm.sh {outdir} failed (rc {cp.returncode}):\n{cp.stdout[-6000:]}")
    for f in ("vmlinuz", "initrd.img", "kernel-version"):
        if not (outdir / f).is_file():
            raise VMError(f"build_vm.sh did not produce {outdir / f}")
    return outdir


def mac_for(name: str) -> str:
    """Stable locally-administered unicast MAC derived from a VM name."""
    h = hashlib.sha256(name.encode()).digest()
    return "52:54:%02x:%02x:%02x:%02x" % (h[0], h[1], h[2], h[3])


# --------------------------------------------------------------------------- netns / bridge

def _alive(pid: int) -> bool:
    """True while PID exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class Netns:
    """A private network namespace (deleted with everything in it on exit)."""

    def __init__(self, name: Optional[str] = None):
        self.name = name or f"rwvm-{os.getpid()}"

    def __enter__(self) -> "Netns":
        if os.path.exists(f"/run/netns/{self.name}"):
            self.delete()
        _sh(["ip", "netns", "add", self.name])
        _ip(self.name, "link", "set", "lo", "up")
        return self

    def exec(self, args: Sequence[str], check: bool = True,
             timeout: float = 60.0) -> subprocess.CompletedProcess:
        return _sh(args, check=check, netns=self.name, timeout=timeout)

    def delete(self) -> None:
        # our own guests were started in this namespace: stop whatever is left
        cp = _sh(["ip", "netns", "pids", self.name], check=False)
        pids = [int(p) for p in cp.stdout.split() if p.isdigit()]
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        _sh(["ip", "netns", "del", self.name], check=False)

    def __exit__(self, *exc) -> None:
        self.delete()

    def __str__(self) -> str:
        return self.name


def cleanup_stale_netns(prefix: str = "rwvm-") -> None:
    """Delete namespaces named PREFIX<pid> left behind by dead test runs of this harness."""
    cp = _sh(["ip", "netns", "list"], check=False)
    for line in cp.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.fullmatch(re.escape(prefix) + r"(\d+)", name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            Netns(name).delete()


class Bridge:
    """A Linux bridge (host side L2 switch for several guests).

    Note: a Linux bridge never forwards 01:80:C2:00:00:01 (PFC/pause), which is
    fine for RoCE over rxe but not for PFC tests (use direct links there).
    """

    def __init__(self, name: str = "rwbr0", host_ip: Optional[str] = "10.9.0.1/24",
                 mtu: int = 4200, netns=None):
        self.name, self.host_ip, self.mtu, self.netns = name, host_ip, mtu, _nsname(netns)

    def __enter__(self) -> "Bridge":
        _ip(self.netns, "link", "del", self.name, check=False)
        _ip(self.netns, "link", "add", self.name, "type", "bridge",
            "stp_state", "0", "forward_delay", "0")
        _ip(self.netns, "link", "set", self.name, "mtu", str(self.mtu))
        if self.host_ip:
            _ip(self.netns, "addr", "add", self.host_ip, "dev", self.name)
        _ip(self.netns, "link", "set", self.name, "up")
        _ethtool_tx_off(self.name, self.netns)
        return self

    def __exit__(self, *exc) -> None:
        _ip(self.netns, "link", "del", self.name, check=False)


# --------------------------------------------------------------------------- guest

class BgJob:
    """A command running in the background inside a guest (see VM.run_bg)."""

    def __init__(self, vm: "VM", n: int, cmd: str):
        self.vm, self.n, self.cmd = vm, n, cmd
        self.dir = f"/tmp/.rwbg/{n}"
        self.rc: Optional[int] = None
        self.output: Optional[str] = None

    def poll(self) -> Optional[int]:
        rc, out = self.vm.run(f"cat {self.dir}/rc 2>/dev/null", timeout=30)
        return int(out.strip()) if rc == 0 and out.strip() else None

    def wait(self, timeout: float = DEFAULT_CMD_TIMEOUT, check: bool = False) -> tuple[int, str]:
        """Wait (bounded) for the job to exit; return (rc, output)."""
        if self.rc is not None:
            return self.rc, self.output or ""
        tenths = max(1, int(timeout * 10))
        script = (f"i=0; while [ ! -f {self.dir}/rc ] && [ $i -lt {tenths} ]; do usleep 100000; "
                  f"i=$((i+1)); done; if [ -f {self.dir}/rc ]; then cat {self.dir}/rc; "
                  f"else echo RUNNING; fi; echo '--RWBG--'; cat {self.dir}/out")
        _, out = self.vm.run(script, timeout=timeout + 30)
        head, _, body = out.partition("--RWBG--\n")
        head = head.strip()
        if head == "RUNNING":
            raise VMTimeout(f"{self.vm.name}: background job {self.cmd!r} still running after "
                            f"{timeout:.0f} s; output so far:\n{body[-3000:]}"
                            + self.vm.console_tail_text())
        self.rc, self.output = int(head), body
        if check and self.rc != 0:
            raise VMError(f"{self.vm.name}: {self.cmd!r} exited {self.rc}:\n{body[-3000:]}")
        return self.rc, body

    def read_output(self) -> str:
        """Output produced so far (the job keeps running)."""
        return self.vm.run(f"cat {self.dir}/out", timeout=30)[1]

    def kill(self, sig: str = "TERM", timeout: float = 10.0) -> tuple[Optional[int], str]:
        """Signal the job's whole process group, then collect what it wrote."""
        if self.rc is None:
            self.vm.run(f"[ -f {self.dir}/rc ] || kill -{sig} -$(cat {self.dir}/pid) 2>/dev/null",
                        timeout=30)
            try:
                return self.wait(timeout)
            except VMTimeout:
                self.vm.run(f"kill -KILL -$(cat {self.dir}/pid) 2>/dev/null", timeout=30)
                out = self.read_output()
                self.rc, self.output = -9, out
        return self.rc, self.output or ""


class VM:
    """One QEMU/TCG guest booted from the build_vm.sh image.

    Parameters: name (also derives tap name and MAC), ip (guest eth0 ADDR/PREFIX),
    host_ip (address put on the tap when not bridged), bridge (Bridge or name to
    enslave the tap to), netns (Netns or name where tap/bridge/QEMU live), mtu,
    rxe (add rxe0), mem (MiB), image_dir (build_vm.sh OUTDIR), workdir (console
    log, sockets; default a temp dir), extra_cmdline, extra_qemu_args.
    """

    def __init__(self, name: str, ip: Optional[str] = "10.9.0.2/24", *,
                 host_ip: Optional[str] = None, bridge=None, netns=None,
                 tap: Optional[str] = None, mtu: int = 4200, rxe: bool = True,
                 mem: int = 512, image_dir: os.PathLike | str | None = None,
                 workdir: os.PathLike | str | None = None,
                 boot_timeout: float = DEFAULT_BOOT_TIMEOUT,
                 extra_cmdline: str = "", extra_qemu_args: Sequence[str] = (),
                 quiet: bool = True):
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,32}", name):
            raise ValueError(f"bad VM name {name!r}")
        self.name, self.ip, self.host_ip, self.mtu, self.rxe = name, ip, host_ip, mtu, rxe
        self.bridge = bridge.name if isinstance(bridge, Bridge) else bridge
        self.netns = _nsname(netns)
        self.tap = tap or ("rwt-" + name)[:15]
        self.mac = mac_for(name)
        self.mem, self.boot_timeout, self.quiet = mem, boot_timeout, quiet
        self.extra_cmdline, self.extra_qemu_args = extra_cmdline, list(extra_qemu_args)
        if image_dir is None:
            image_dir = Path(os.environ.get("ROCEWAN_BUILD", DEFAULT_BUILD)) / "interop"
        self.image_dir = Path(image_dir)
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix=f"rwvm-{name}-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.console_log = self.workdir / f"{name}.console"
        self.sock_path = self.workdir / f"{name}.cmd.sock"
        self.proc: Optional[subprocess.Popen] = None
        self._sock: Optional[socket.socket] = None
        self._buf = b""
        self._lock = threading.Lock()
        self._seq = 0
        self._bg = 0
        self._tap_created = False
        self.boot_seconds: Optional[float] = None
        self._t_start: Optional[float] = None

    # ----------------------------------------------------------------- lifecycle
    def __enter__(self) -> "VM":
        self.start()
        try:
            self.wait_ready()
        except BaseException:
            self.close(keep_workdir=True)
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(keep_workdir=exc_type is not None)

    def cmdline(self) -> str:
        parts = ["console=ttyS0", "panic=-1", "rw.hostname=" + self.name,
                 f"rw.mtu={self.mtu}", f"rw.rxe={1 if self.rxe else 0}"]
        if self.quiet:
            parts += ["quiet", "loglevel=3"]
        if self.ip:
            parts.append(f"rw.ip={self.ip}")
        if self.extra_cmdline:
            parts.append(self.extra_cmdline)
        return " ".join(parts)

    def kernel_path(self) -> Path:
        """The PVH-bootable uncompressed vmlinux when built (much faster under TCG)."""
        vmlinux = self.image_dir / "vmlinux"
        return vmlinux if vmlinux.is_file() else self.image_dir / "vmlinuz"

    def qemu_argv(self) -> list[str]:
        img = self.image_dir
        return [
            "qemu-system-x86_64", "-name", self.name,
            "-accel", "tcg", "-cpu", "max", "-smp", "1", "-m", str(self.mem),
            "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
            "-kernel", str(self.kernel_path()), "-initrd", str(img / "initrd.img"),
            "-append", self.cmdline(),
            "-chardev", f"file,id=con,path={self.console_log}",
            "-serial", "chardev:con",
            "-device", "virtio-serial-pci,id=vser0",
            "-chardev", f"socket,id=cmd,path={self.sock_path},server=on,wait=off",
            "-device", "virtserialport,bus=vser0.0,chardev=cmd,name=rw.cmd",
            "-netdev", f"tap,id=n0,ifname={self.tap},script=no,downscript=no",
            "-device", f"virtio-net-pci,netdev=n0,mac={self.mac},host_mtu={self.mtu},romfile=",
            "-pidfile", str(self.workdir / f"{self.name}.pid"),
            *self.extra_qemu_args,
        ]

    def _setup_tap(self) -> None:
        ns = self.netns
        _ip(ns, "link", "del", self.tap, check=False)
        _ip(ns, "tuntap", "add", "dev", self.tap, "mode", "tap")
        self._tap_created = True
        _ip(ns, "link", "set", self.tap, "mtu", str(self.mtu))
        if self.bridge:
            _ip(ns, "link", "set", self.tap, "master", self.bridge)
        elif self.host_ip:
            _ip(ns, "addr", "add", self.host_ip, "dev", self.tap)
        _ip(ns, "link", "set", self.tap, "up")
        _ethtool_tx_off(self.tap, ns)

    def start(self) -> None:
        """Create the tap and launch QEMU (does not wait; see wait_ready)."""
        for f in ("vmlinuz", "initrd.img"):
            if not (self.image_dir / f).is_file():
                raise VMError(f"{self.image_dir / f} missing: run tests/interop/build_vm.sh "
                              f"{self.image_dir}")
        self._setup_tap()
        for p in (self.sock_path, self.console_log):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
        argv = self.qemu_argv()
        if self.netns:
            argv = ["ip", "netns", "exec", self.netns, *argv]
        self._qemu_err = open(self.workdir / f"{self.name}.qemu.log", "wb")
        self._t_start = time.monotonic()
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._qemu_err,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout: Optional[float] = None) -> None:
        """Wait until the guest's command loop answers (bounded)."""
        if self._t_start is None:
            raise VMError(f"{self.name}: wait_ready() before start()")
        timeout = self.boot_timeout if timeout is None else timeout
        deadline = self._t_start + timeout
        while self._sock is None:
            self._check_alive("while booting")
            if time.monotonic() > deadline:
                raise VMTimeout(f"{self.name}: QEMU command socket never appeared"
                                + self.console_tail_text())
            if self.sock_path.exists():
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.connect(str(self.sock_path))
                    self._sock = s
                except OSError:
                    s.close()
            time.sleep(0.05)
        # The guest's command loop announces itself with "RWREADY ..." (its write
        # blocks until we are connected, so it is not lost).  Fall back to a
        # ping now and then in case the announcement was missed (loop restarted).
        next_ping = time.monotonic() + 20.0
        while True:
            now = time.monotonic()
            if now > deadline:
                raise VMTimeout(f"{self.name}: guest did not answer within {timeout:.0f} s"
                                + self.console_tail_text())
            with self._lock:
                line = self._read_line(min(deadline, next_ping, now + 1.0))
            if line is not None and line.startswith(b"RWREADY"):
                break
            if time.monotonic() >= next_ping:
                next_ping = time.monotonic() + 20.0
                try:
                    rc, out = self._request("echo rw-ready", timeout=5.0, guest_timeout=10)
                    if rc == 0 and out.strip() == "rw-ready":
                        break
                except VMTimeout:
                    pass
        self.boot_seconds = time.monotonic() - self._t_start

    def _check_alive(self, what: str) -> None:
        if self.proc is None:
            raise VMError(f"{self.name}: not started")
        if self.proc.poll() is not None:
            qlog = ""
            with contextlib.suppress(OSError):
                qlog = (self.workdir / f"{self.name}.qemu.log").read_text(errors="replace")[-3000:]
            raise VMError(f"{self.name}: QEMU exited with {self.proc.returncode} {what}\n"
                          f"qemu output:\n{qlog}" + self.console_tail_text())

    def console_tail(self, n: int = CONSOLE_TAIL) -> list[str]:
        try:
            data = self.console_log.read_bytes()
        except OSError:
            return []
        return data.decode(errors="replace").replace("\r", "").splitlines()[-n:]

    def console_tail_text(self, n: int = CONSOLE_TAIL) -> str:
        lines = self.console_tail(n)
        return (f"\n--- last {len(lines)} console lines of {self.name} "
                f"({self.console_log}) ---\n" + "\n".join(lines) + "\n--- end of console ---")

    def close(self, timeout: float = SHUTDOWN_TIMEOUT, keep_workdir: bool = False) -> None:
        """Power the guest off (kill QEMU if it does not stop in time), remove the tap.

        A temporary workdir (console log etc.) is removed unless keep_workdir.
        """
        try:
            if self.proc is not None and self.proc.poll() is None:
                if self.boot_seconds is None:      # never came up: no point in waiting
                    self.kill()
                else:
                    self.request_poweroff()
                try:
                    self.proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self.kill()
        finally:
            if self.proc is not None and self.proc.poll() is None:
                self.kill()
            if self._sock is not None:
                with contextlib.suppress(OSError):
                    self._sock.close()
                self._sock = None
            if getattr(self, "_qemu_err", None):
                self._qemu_err.close()
            if self._tap_created:
                _ip(self.netns, "link", "del", self.tap, check=False)
                self._tap_created = False
            if self._own_workdir and not keep_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)

    def request_poweroff(self) -> None:
        """Ask the guest to power off now (no disks: nothing to sync); does not wait."""
        if self._sock is not None and not getattr(self, "_poweroff_sent", False):
            with contextlib.suppress(OSError):
                self._send_line(self._encode_request("poweroff -f >/dev/null 2>&1 &", 10,
                                                     nonce="poweroff"))
            self._poweroff_sent = True

    def kill(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        # the Popen child is QEMU itself (ip netns exec execs it)
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)

    # ----------------------------------------------------------------- command channel
    def _encode_request(self, cmd: str, guest_timeout: int, nonce: str) -> bytes:
        b64 = base64.b64encode(cmd.encode()).decode()
        return f"RWCMD {nonce} {int(guest_timeout)} {b64}\n".encode()

    def _send_line(self, data: bytes) -> None:
        assert self._sock is not None
        self._sock.sendall(data)

    def _read_line(self, deadline: float) -> Optional[bytes]:
        while b"\n" not in self._buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._sock.settimeout(min(remaining, 1.0))
            try:
                chunk = self._sock.recv(65536)
            except socket.timeout:
                self._check_alive("during a command")
                continue
            if not chunk:
                self._check_alive("(command socket closed)")
                raise VMError(f"{self.name}: command socket closed" + self.console_tail_text())
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line.rstrip(b"\r")

    def _request(self, cmd: str, timeout: float, guest_timeout: float,
                 raise_timeout: bool = True) -> tuple[int, str]:
        with self._lock:
            if self._sock is None:
                raise VMError(f"{self.name}: not connected")
            self._seq += 1
            nonce = f"{os.getpid()}.{self._seq}"
            self._send_line(self._encode_request(cmd, max(1, int(guest_timeout)), nonce))
            deadline = time.monotonic() + timeout
            body: Optional[list[bytes]] = None
            while True:
                line = self._read_line(deadline)
                if line is None:
                    raise VMTimeout(f"{self.name}: no answer within {timeout:.0f} s to {cmd!r}"
                                    + self.console_tail_text())
                if line == f"RWBEGIN {nonce}".encode():
                    body = []
                    continue
                if line.startswith(f"RWEND {nonce} ".encode()) and body is not None:
                    rc = int(line.split()[2])
                    out = base64.b64decode(b"".join(body)).decode(errors="replace")
                    return rc, out
                if body is not None:
                    body.append(line)
                # anything else: answers to earlier (timed out / boot ping) requests

    def run(self, cmd: str, timeout: float = DEFAULT_CMD_TIMEOUT,
            check: bool = False) -> tuple[int, str]:
        """Run CMD with sh in the guest; return (rc, stdout+stderr).

        The guest kills the command after TIMEOUT seconds; that raises VMTimeout.
        With check=True a non-zero rc raises VMError.
        """
        t0 = time.monotonic()
        rc, out = self._request(cmd, timeout=timeout + 20, guest_timeout=timeout)
        if rc in (124, 137) and time.monotonic() - t0 >= timeout - 0.5:
            raise VMTimeout(f"{self.name}: {cmd!r} killed after {timeout:.0f} s; output:\n"
                            f"{out[-3000:]}" + self.console_tail_text())
        if check and rc != 0:
            raise VMError(f"{self.name}: {cmd!r} exited {rc}:\n{out[-3000:]}")
        return rc, out

    def run_bg(self, cmd: str) -> BgJob:
        """Start CMD in its own session in the background; returns a BgJob."""
        self._bg += 1
        job = BgJob(self, self._bg, cmd)
        b64 = base64.b64encode(cmd.encode()).decode()
        d = job.dir
        script = (
            f"mkdir -p {d} && echo {b64} | base64 -d > {d}/cmd && "
            # the wrapper leads a new session/process group and survives kill(): it
            # catches TERM/INT/HUP (its child gets default handlers) and records rc
            f"setsid /bin/dash -c 'echo $$ > {d}/pid; trap : TERM INT HUP; "
            f"/bin/dash {d}/cmd < /dev/null > {d}/out 2>&1 & c=$!; "
            f"while :; do wait $c; rc=$?; kill -0 $c 2>/dev/null || break; done; "
            f"echo $rc > {d}/rc.tmp; mv {d}/rc.tmp {d}/rc' < /dev/null > /dev/null 2>&1 &\n"
            f"i=0; while [ ! -s {d}/pid ] && [ $i -lt 100 ]; do usleep 50000; i=$((i+1)); done; "
            f"cat {d}/pid")
        rc, out = self.run(script, timeout=30)
        if rc != 0 or not out.strip().isdigit():
            raise VMError(f"{self.name}: could not start background job {cmd!r}: rc {rc}: {out}")
        return job

    # ----------------------------------------------------------------- conveniences
    def wait_tcp_listen(self, port: int, timeout: float = 60.0) -> None:
        """Wait until something listens on TCP PORT (IPv4 or IPv6) in the guest."""
        hexport = "%04X" % port
        tenths = int(timeout * 10)
        rc, out = self.run(
            f"i=0; while [ $i -lt {tenths} ]; do "
            f"cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | "
            f"awk '$2 ~ /:{hexport}$/ && $4 == \"0A\" {{f=1}} END {{exit !f}}' && exit 0; "
            f"usleep 100000; i=$((i+1)); done; exit 1", timeout=timeout + 10)
        if rc != 0:
            raise VMTimeout(f"{self.name}: nothing listens on TCP port {port} after {timeout:.0f} s"
                            + self.console_tail_text())

    def host_exec(self, args: Sequence[str], check: bool = True,
                  timeout: float = 60.0) -> subprocess.CompletedProcess:
        """Run a host command in the VM's network namespace (or the host's)."""
        return _sh(args, check=check, netns=self.netns, timeout=timeout)

    @property
    def addr(self) -> Optional[str]:
        return self.ip.split("/")[0] if self.ip else None


@contextlib.contextmanager
def boot_all(vms: Iterable[VM]):
    """Start several guests at once (they boot in parallel), wait for all, close all."""
    vms = list(vms)
    failed = True
    try:
        for vm in vms:
            vm.start()
        for vm in vms:
            vm.wait_ready()
        yield vms
        failed = False
    finally:
        errors = []
        for vm in vms:                                   # power all off at once
            if vm.boot_seconds is not None and vm.proc is not None and vm.proc.poll() is None:
                vm.request_poweroff()
        for vm in vms:
            try:
                vm.close(keep_workdir=failed)
            except Exception as e:  # keep closing the others
                errors.append(e)
        if errors:
            raise errors[0]


# --------------------------------------------------------------------------- output parsing

def parse_perftest_bw(output: str) -> dict:
    """Parse perftest's *_bw result table; returns the first result row as a dict.

    Keys: bytes, iterations, bw_peak, bw_avg (in the unit of the header, MB/sec
    by default or Gb/sec with --report_gbits), msg_rate (Mpps), unit.
    """
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if "#bytes" in line and "BW average" in line:
            unit = "Gb/sec" if "Gb/sec" in line else "MB/sec"
            for row in lines[i + 1:]:
                f = row.split()
                if len(f) >= 5 and f[0].isdigit():
                    return {"bytes": int(f[0]), "iterations": int(f[1]),
                            "bw_peak": float(f[2]), "bw_avg": float(f[3]),
                            "msg_rate": float(f[4]), "unit": unit}
    raise ValueError("no perftest bandwidth result row found in:\n" + output[-2000:])


def parse_ping_rtt(output: str) -> dict:
    """Parse 'rtt min/avg/max/mdev = a/b/c/d ms' (iputils) or busybox's 'round-trip'."""
    m = re.search(r"(?:rtt|round-trip) min/avg/max(?:/mdev)? = ([\d.]+)/([\d.]+)/([\d.]+)", output)
    if not m:
        raise ValueError("no ping summary in:\n" + output[-2000:])
    r = re.search(r"(\d+) packets transmitted, (\d+) (?:packets )?received", output)
    res = {"min": float(m.group(1)), "avg": float(m.group(2)), "max": float(m.group(3))}
    if r:
        res["sent"], res["received"] = int(r.group(1)), int(r.group(2))
    return res


# --------------------------------------------------------------------------- manual use

def _main(argv: Optional[Sequence[str]] = None) -> int:
    """Boot one guest (or two bridged ones) in a private netns and relay commands.

    /usr/bin/python3 tests/interop/vm.py [--pair] [--image DIR]
    Each input line runs in the guest ("b: CMD" targets the second guest of a
    pair; "host: CMD" runs in the namespace on the host side).  EOF/"exit" quits.
    """
    import argparse
    import shlex

    ap = argparse.ArgumentParser(description=_main.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image", default=str(Path(os.environ.get("ROCEWAN_BUILD", DEFAULT_BUILD))
                                           / "interop"), help="build_vm.sh OUTDIR")
    ap.add_argument("--pair", action="store_true", help="two guests on a bridge")
    ap.add_argument("--mtu", type=int, default=4200)
    ap.add_argument("--no-rxe", action="store_true")
    ap.add_argument("--print-qemu", action="store_true", help="print the QEMU command line and exit")
    a = ap.parse_args(argv)
    check_host_prerequisites()
    build_image(a.image)
    rxe = not a.no_rxe
    if a.print_qemu:
        v = VM("rwa", "10.9.0.2/24", host_ip="10.9.0.1/24", image_dir=a.image, mtu=a.mtu, rxe=rxe)
        print(" ".join(shlex.quote(x) for x in v.qemu_argv()))
        shutil.rmtree(v.workdir, ignore_errors=True)
        return 0
    with contextlib.ExitStack() as st:
        ns = st.enter_context(Netns())
        if a.pair:
            br = st.enter_context(Bridge("rwbr0", "10.9.0.1/24", mtu=a.mtu, netns=ns))
            vms = [VM("rwa", "10.9.0.2/24", bridge=br, netns=ns, image_dir=a.image, mtu=a.mtu, rxe=rxe),
                   VM("rwb", "10.9.0.3/24", bridge=br, netns=ns, image_dir=a.image, mtu=a.mtu, rxe=rxe)]
        else:
            vms = [VM("rwa", "10.9.0.2/24", host_ip="10.9.0.1/24", netns=ns, image_dir=a.image,
                      mtu=a.mtu, rxe=rxe)]
        t0 = time.monotonic()
        st.enter_context(boot_all(vms))
        print(f"booted {len(vms)} guest(s) in {time.monotonic() - t0:.1f} s; netns {ns.name}; "
              f"host 10.9.0.1, guests " + ", ".join(f"{v.name}={v.addr}" for v in vms))
        for v in vms:
            print(f"  {v.name}: console log {v.console_log}")
        while True:
            try:
                line = input(f"{vms[0].name}> ")
            except EOFError:
                break
            if line.strip() in ("exit", "quit"):
                break
            if not line.strip():
                continue
            target = vms[0]
            if line.startswith("b:") and len(vms) > 1:
                target, line = vms[1], line[2:]
            elif line.startswith("host:"):
                cp = ns.exec(["sh", "-c", line[5:]], check=False, timeout=600)
                print(cp.stdout, end="")
                print(f"[rc {cp.returncode}]")
                continue
            try:
                rc, out = target.run(line, timeout=600)
            except VMTimeout as e:
                print(e)
                continue
            print(out, end="" if out.endswith("\n") or not out else "\n")
            print(f"[rc {rc}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
