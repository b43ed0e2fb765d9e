"""Unmodified libibverbs programs on rnic0 (rnic-exec, docs/verbs.md) between the two
namespaces of a tests/netns VethPair: one program per side, each under its own rnic-exec,
with exact counts from each device's --json."""
import json
import math
import os
import shlex
import subprocess
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ROCEWAN_BUILD", os.path.join(ROOT, "build"))
RNIC_EXEC = os.path.join(BUILD, "app", "rnic", "rnic-exec")
VERBS_LIB = os.path.join(BUILD, "lib", "verbs", "librocewan-verbs.so")
SELFTEST = os.path.join(BUILD, "tests", "verbs", "rv_selftest")


def pkts(size, mtu):
    return max(1, math.ceil(size / mtu))


def eal_args(iface, prefix):
    """The netns suite's EAL arguments (conftest.eal), as a list."""
    from conftest import eal
    return shlex.split(eal(iface, prefix))


def exec_argv(vp, side, dev_opts, cmd, js=None):
    """rnic-exec in namespace vp.ns[side] with rnic0 at vp.rip[side]."""
    prefix = f"vb{uuid.uuid4().hex[:8]}"
    argv = ["ip", "netns", "exec", vp.ns[side], RNIC_EXEC] + eal_args(vp.ifs[side], prefix)
    argv += ["--", "--ip", f"{vp.rip[side]}/24"] + list(dev_opts)
    if js:
        argv += ["--json", str(js)]
    return argv + ["--"] + list(cmd), prefix


def wait_listen(ns, port, proc, timeout=30):
    """Until a TCP socket listens on @port in @ns (the server's exchange is up)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            return False
        r = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Hltn", f"sport = :{port}"],
                           capture_output=True, text=True)
        if r.stdout.strip():
            return True
        time.sleep(0.05)
    return False


class Pair:
    """Result of run_pair: rc, output, exe and the device JSON of [server, client]."""

    def __init__(self, rcs, out, exe, docs):
        self.rcs, self.out, self.exe, self.docs = rcs, out, exe, docs

    def dev(self, side):
        return self.docs[side]["results"]["device_counters"]

    def both(self):
        return f"\nserver:\n{self.out[0]}\nclient:\n{self.out[1]}"


def run_pair(vp, tmp_path, srv_cmd, cli_cmd, dev_opts=(), port=18515, timeout=90,
             client_cmd=None, cli_args=(), side_opts=((), ())):
    """Server program in ns[1], client in ns[0] (connecting to the server's kernel IP, which
    the program's own TCP exchange uses: appended to @cli_cmd, or put between @client_cmd
    and @cli_args); @side_opts: device options of [server, client] alone. Returns a Pair;
    /proc/PID/exe of each side is read while it runs (ip netns exec and rnic-exec exec, so
    the PID is the program's)."""
    js = [tmp_path / "server.json", tmp_path / "client.json"]
    sargv, _ = exec_argv(vp, 1, list(dev_opts) + list(side_opts[0]), srv_cmd, js[0])
    srv = subprocess.Popen(sargv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    exe = [None, None]
    listening = wait_listen(vp.ns[1], port, srv)
    try:
        exe[0] = os.readlink(f"/proc/{srv.pid}/exe")
    except OSError:
        pass
    cout, crc = "server never listened", -1
    if listening:
        cmd = (list(cli_cmd) + [vp.kip[1]] if client_cmd is None
               else list(client_cmd) + [vp.kip[1]] + list(cli_args))
        cargv, _ = exec_argv(vp, 0, list(dev_opts) + list(side_opts[1]), cmd, js[1])
        cli = subprocess.Popen(cargv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
        time.sleep(0.05)
        try:
            exe[1] = os.readlink(f"/proc/{cli.pid}/exe")
        except OSError:
            pass
        try:
            cout, _ = cli.communicate(timeout=timeout)
            crc = cli.returncode
        except subprocess.TimeoutExpired:
            cli.kill()
            cout, _ = cli.communicate()
            cout, crc = f"client timed out after {timeout} s:\n{cout}", -9
    try:
        sout, _ = srv.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        srv.kill()
        sout, _ = srv.communicate()
    docs = [json.load(open(j)) if j.exists() else None for j in js]
    return Pair([srv.returncode, crc], [sout, cout], exe, docs)


def check_ok(r, tools):
    assert r.rcs == [0, 0], f"exit codes {r.rcs}{r.both()}"
    for side in (0, 1):
        assert r.docs[side] is not None, f"no --json from side {side}{r.both()}"
        assert r.docs[side]["schema"] == "rocewan/1" and r.docs[side]["app"] == "rnic-exec"
    if tools:
        assert r.exe == [tools[0], tools[1]], f"/proc/PID/exe {r.exe}{r.both()}"


def check_requests(r, req_side, n):
    """Request packets: the requester sent exactly @n for the first time; the responder took
    @n, plus at most one per retransmission (a loaded host's stall can fire the timer and the
    resent packet arrives as a duplicate)."""
    tx, rx = r.dev(req_side), r.dev(1 - req_side)
    assert tx["tx_req_packets"] == n, f"tx_req_packets {tx['tx_req_packets']} != {n}{r.both()}"
    retx = tx["tx_retransmits"]
    assert n <= rx["rx_req_packets"] <= n + retx, (rx["rx_req_packets"], n, retx, r.both())
    assert retx or rx["rx_req_packets"] == n


BADINPUT = os.path.join(BUILD, "tests", "verbs", "rv_badinput")
# rv_badinput's outcome of every case, as Linux rxe (Debian 12's kernel) gives them; rnic0
# must give the same (tests/netns/test_verbs_badinput.py, tests/interop/test_verbs_rxe.py)
BADINPUT_EXPECT = {
    "reset_to_rts": "EINVAL",
    "reset_to_rtr": "EINVAL",
    "state_after_jumps": "RESET",
    "post_send_reset": "EINVAL",
    "post_recv_reset": "EINVAL",
    "reset_to_init": "ok",
    "init_to_rts": "EINVAL",
    "recv_too_many_sge": "EINVAL",
    "write_ok": "post ok, completion success",
    "send_too_many_sge": "post EINVAL",
    # rxe: an lkey that names no MR of the PD (or lacks the right) fails its lookup, a good
    # key with a range outside the MR its bounds check
    "write_wrong_lkey": "post ok, completion local QP operation error",
    "write_sge_past_mr": "post ok, completion local protection error",
    "write_wrong_rkey": "post ok, completion remote access error",
    "write_past_remote_mr": "post ok, completion remote access error",
    "cq_overrun": "the CQ's cqe completions, the rest lost",
    "recv_wrong_lkey": "post ok, completion local QP operation error",
    "recv_wrong_lkey_sender": "post ok, completion remote operation error",
}


def badinput_outcomes(out):
    """{case: outcome} of rv_badinput's "case NAME: OUTCOME" lines."""
    got = {}
    for ln in out.splitlines():
        if ln.startswith("case ") and ": " in ln:
            name, what = ln[5:].split(": ", 1)
            got[name] = what
    return got
