"""rdma_cm programs between two rxe guests: the fixed commands, how to run one
pair (server in the background, client in the foreground) and a capture on the
host side of the bridge.

Used by tests/interop/test_rdmacm_rxe.py (the known-good rxe <-> rxe runs) and
by tests/interop/capture_cm_ground_truth.py (the goldens in tests/golden/cm/).
See docs/rdma-cm.md, "perftest -R on the wire".
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Optional

from vm import VMTimeout

# perftest's clock calibration can fail in a preempted TCG guest after a good
# transfer: the same two messages test_rnic_rxe matches before one repeat
PERFTEST_CLOCK = ("Correlation coefficient r^2", "Can't produce a report")
# perftest -R's server listens again for the test QPs only after the data
# exchange; a client whose REQ comes first is rejected (REJ reason 8, Invalid
# Service ID) and gives up (see docs/rdma-cm.md)
PERFTEST_REJECTED = "RDMA_CM_EVENT_REJECTED"


@dataclass
class CmRun:
    """One server/client pair. {srv} in a command is the server's address."""
    name: str
    server: str
    client: str
    port: int                      # the rdma_cm port the server listens on
    server_exits: bool = True      # cmtime's and qperf's servers run until killed
    client_lines: tuple = ()       # lines (substrings) the client must print
    server_lines: tuple = ()
    timeout: float = 180.0
    perftest: bool = False
    req_delay_ms: int = 0          # delay the client's REQs (see delay_client_reqs)
    app: Optional[str] = None       # rocewan.cmtrace.normalise's payload decoder


PERF = "-d rxe0 -R -n 5 -s 4096"
# perftest's server listens for the test QP only after the channel exchange;
# holding the client's REQs back this long lets it (see PERFTEST_REJECTED)
PERF_REQ_DELAY_MS = 500

# The goldens: small fixed runs (docs/rdma-cm.md lists them with their commands).
GOLDEN_RUNS = {
    "ib_write_bw": CmRun("ib_write_bw", f"ib_write_bw {PERF}", f"ib_write_bw {PERF} {{srv}}",
                         18515, perftest=True, app="perftest", req_delay_ms=PERF_REQ_DELAY_MS),
    "ib_send_bw": CmRun("ib_send_bw", f"ib_send_bw {PERF}", f"ib_send_bw {PERF} {{srv}}",
                        18515, perftest=True, app="perftest", req_delay_ms=PERF_REQ_DELAY_MS),
    "ib_read_bw": CmRun("ib_read_bw", f"ib_read_bw {PERF}", f"ib_read_bw {PERF} {{srv}}",
                        18515, perftest=True, app="perftest", req_delay_ms=PERF_REQ_DELAY_MS),
    "rping": CmRun("rping", "rping -s -a {srv} -V -C 10", "rping -c -a {srv} -V -C 10", 7174, app="rping",
                   server_lines=("server DISCONNECT EVENT",)),
    "udaddy": CmRun("udaddy", "udaddy", "udaddy -s {srv}", 7174,
                    client_lines=("data transfers complete", "return status 0"),
                    server_lines=("data transfers complete", "return status 0")),
    "ucmatose": CmRun("ucmatose", "ucmatose -c 2", "ucmatose -s {srv} -c 2", 7471,
                      client_lines=("data transfers complete", "return status 0"),
                      server_lines=("data transfers complete", "disconnected",
                                    "return status 0")),
}


def wait_cm_listen(vm, port: int, timeout: float = 60.0) -> None:
    """Wait until an rdma_cm ID listens on PORT in the guest (`rdma res show
    cm_id`: rdma_cm listeners have no socket in /proc/net/tcp)."""
    tenths = int(timeout * 10)
    rc, out = vm.run(
        f"i=0; while [ $i -lt {tenths} ]; do "
        f"rdma res show cm_id 2>/dev/null | grep -Eq 'state LISTEN .*src-addr [^ ]*:{port}( |$)' "
        f"&& exit 0; usleep 100000; i=$((i+1)); done; rdma res show cm_id; exit 1",
        timeout=timeout + 10)
    if rc != 0:
        raise AssertionError(f"{vm.name}: no rdma_cm listener on port {port} after "
                             f"{timeout:.0f} s; cm_ids:\n{out}")


def delay_client_reqs(vm, ms: int) -> None:
    """netem-delay the CM REQs VM sends; everything else leaves undelayed
    (a delayed DREQ/DREP changes how perftest's two connections close).
    In an option-free IPv4 packet to UDP 4791: the BTH's destination QP (1)
    is the low 24 bits of the word at byte 32, the MAD's attribute ID
    (0x0010, REQ) the 16 bits at byte 64 (IP 20 + UDP 8 + BTH 12 + DETH 8 +
    16 into the MAD). ms=0 removes it."""
    if not ms:
        rc, out = vm.run("tc -s qdisc show dev eth0 | grep -A1 '^qdisc netem 30:'")
        sent = re.search(r"Sent \d+ bytes (\d+) pkt", out)
        if sent:
            print(f"\n[interop] {vm.name}: {sent.group(1)} CM REQs went through the delay")
    vm.run("tc qdisc del dev eth0 root 2>/dev/null; true")
    if not ms:
        return
    rc, out = vm.run(
        "tc qdisc add dev eth0 root handle 1: prio && "
        f"tc qdisc add dev eth0 parent 1:3 handle 30: netem delay {ms}ms && "
        "tc filter add dev eth0 parent 1:0 protocol ip prio 1 u32 "
        "match ip protocol 17 0xff match ip dport 4791 0xffff "
        "match u32 0x00000001 0x00ffffff at 32 match u16 0x0010 0xffff at 64 flowid 1:3")
    assert rc == 0, f"{vm.name}: cannot delay the REQs:\n{out}"


def perftest_repeat(crc: int, cout: str, sout: str) -> str:
    """Why a perftest -R pair deserves its one repeat, or ''."""
    if any(all(m in o for m in PERFTEST_CLOCK) for o in (cout, sout)):
        return "perftest could not calibrate its clock"
    if crc != 0 and PERFTEST_REJECTED in cout:
        return "the server was not listening yet for the test QP's REQ (REJ, Invalid Service ID)"
    return ""


def run_cm_pair(srv, cli, run: CmRun, attempts: int = 3) -> tuple[int, str, int, str]:
    """Run RUN's server on SRV (background) and client on CLI; return
    (client rc, client output, server rc, server output). A server that does
    not exit by itself is killed after the client has finished (rc 143), as
    is one still running 60 s after its client (10 s after a failed one)."""
    delay_client_reqs(cli, run.req_delay_ms)
    try:
        for attempt in range(attempts):
            job = srv.run_bg(run.server.format(srv=srv.addr))
            try:
                wait_cm_listen(srv, run.port)
                crc, cout = cli.run(run.client.format(srv=srv.addr), timeout=run.timeout)
                src, sout = None, ""
                if run.server_exits:
                    try:
                        src, sout = job.wait(60 if crc == 0 else 10)
                    except VMTimeout:
                        pass
                if src is None:
                    src, sout = job.kill()
            finally:
                if job.rc is None:
                    job.kill()
            why = perftest_repeat(crc, cout, sout) if run.perftest else ""
            if not why:
                break
            print(f"\n[interop] {run.name}: {why}: run again")
    finally:
        if run.req_delay_ms:
            delay_client_reqs(cli, 0)
    return crc, cout, src, sout


class BridgeCapture:
    """tcpdump on the host side of a bridge, in the guests' namespace."""

    def __init__(self, netns, dev: str, path: os.PathLike | str,
                 bpf: str = "udp port 4791"):
        self.netns, self.dev, self.path, self.bpf = str(netns), dev, str(path), bpf
        self.proc: Optional[subprocess.Popen] = None

    def __enter__(self) -> "BridgeCapture":
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", self.netns, "tcpdump", "-i", self.dev, "-U", "-s", "0",
             "-w", self.path, self.bpf],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # tcpdump says "listening on DEV" on stderr once the socket is open
        deadline = time.monotonic() + 30
        line = ""
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if "listening on" in line or not line:
                break
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError(f"tcpdump on {self.dev} did not start: {line!r}")
        return self

    def __exit__(self, *exc) -> None:
        time.sleep(1.0)                      # the last ACKs and DREPs
        assert self.proc is not None
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
