"""Unmodified Debian tools on rnic0 (rnic-exec, docs/verbs.md) on the host against the same
unmodified tools on Linux rxe in the QEMU guest (test_rnic_rxe.py's VM and checks), both
directions: ib_write_bw, ib_send_bw, ib_read_bw and ibv_rc_pingpong --chk.

Both ends are standard programs, so both run Go-Back-N (rnic-exec's default). The tools'
TCP exchange runs over the kernel addresses (host 10.9.0.1, guest 10.9.0.2); rnic0 is
10.9.0.11 on the same tap (af_packet), GID 0 (IPv4-mapped), rxe's is GID 1. Checked on
both sides: each tool's exit code and result line, rnic0's device counters (exact per
opcode, as check_counts does for the rnic binary: WRITE and SEND one request packet per
MTU, READ one request and one response per MTU), the error counters of both, and that
/proc/PID/exe of the host side is the Debian binary."""
import base64
import json
import os
import sys
import subprocess
import time

import pytest

from test_rnic_rxe import (HOST_IP, KIB, PORT, RNIC_IP, VM_IP, Run,  # noqa: F401
                           check_counts, check_error_counters, check_packet_totals,
                           check_retransmits_explained, perftest_row, pingpong_result, pkts,
                           rxe_counters, rxe_vm, wait_tool_listens)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "verbs"))
from harness import BADINPUT, BADINPUT_EXPECT, badinput_outcomes  # noqa: E402

BUILD = os.environ.get("ROCEWAN_BUILD", os.path.join(ROOT, "build"))
RNIC_EXEC = os.path.join(BUILD, "app", "rnic", "rnic-exec")
# perftest's local ACK timeout (-u): 4.096 us * 2^16 = 268 ms, the TCG guest is slow
PERFTEST_TIMEOUT = 16


def exec_argv(vm, tool, mtu, json_path):
    """rnic-exec on the VM's tap with rnic0 at RNIC_IP, then TOOL (a list)."""
    framesz = 8192 if mtu > 2048 else 4096
    eal = ["--no-huge", "-m", "512", "--no-pci",
           f"--vdev=net_af_packet0,iface={vm.tap},framesz={framesz},blocksz={framesz * 2},"
           f"framecnt=512"]
    return (["ip", "netns", "exec", vm.ns, RNIC_EXEC] + eal
            + ["--", "--ip", f"{RNIC_IP}/24", "--mtu", str(mtu), "--json", str(json_path), "--"]
            + tool)


def host_listens(ns, port, proc, timeout=60):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            return False
        r = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Hltn", f"sport = :{port}"],
                           capture_output=True, text=True)
        if r.stdout.strip():
            return True
        time.sleep(0.1)
    return False


def exe_of(pid):
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


def run_exec_pair(vm, tmp_path, name, host_tool, vm_tool, rnic_is_server, mtu, timeout=240):
    """HOST_TOOL under rnic-exec against VM_TOOL on rxe0; returns a Run whose counters are
    rnic0's device counters (the one QP of these tools)."""
    js = tmp_path / f"{name}.json"
    t0 = time.monotonic()
    vm.run("ip neigh flush dev eth0", timeout=30)
    before = rxe_counters(vm)
    exe = None
    if rnic_is_server:
        srv = subprocess.Popen(exec_argv(vm, host_tool, mtu, js), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            if not host_listens(vm.ns, PORT, srv):
                out = srv.communicate(timeout=10)[0] if srv.poll() is not None else ""
                raise AssertionError(f"rnic-exec's {host_tool[0]} never listened:\n{out}")
            exe = exe_of(srv.pid)
            prc, pout = vm.run(f"{vm_tool} {HOST_IP}", timeout=timeout)
            try:
                rout, _ = srv.communicate(timeout=60 if prc == 0 else 5)
            except subprocess.TimeoutExpired:
                srv.kill()
                rout, _ = srv.communicate()
        finally:
            if srv.poll() is None:
                srv.kill()
                srv.wait()
        rrc = srv.returncode
    else:
        job = vm.run_bg(vm_tool)
        try:
            if not wait_tool_listens(vm, job):
                prc, pout = job.wait(timeout=30)
                raise AssertionError(f"rxe's {vm_tool} exited ({prc}) before listening:\n{pout}")
            cli = subprocess.Popen(exec_argv(vm, host_tool + [VM_IP], mtu, js),
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
            time.sleep(0.2)
            exe = exe_of(cli.pid)
            try:
                rout, _ = cli.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                cli.kill()
                rout, _ = cli.communicate()
            rrc = cli.returncode
            if rrc != 0:
                prc, pout = job.kill("KILL")
            else:
                prc, pout = job.wait(timeout=120)
        finally:
            if job.poll() is None:
                job.kill("KILL")
    after = rxe_counters(vm)
    rxe = {k: after[k] - before.get(k, 0) for k in after
           if after[k] != before.get(k, 0) or k in ("duplicate_request", "out_of_seq_request",
                                                    "rcvd_seq_err", "completer_retry_err")}
    print(f"\n[rnic-exec {' '.join(host_tool)} mtu {mtu} rnic-"
          f"{'server' if rnic_is_server else 'client'}] {time.monotonic() - t0:.1f} s, rxe {rxe}")
    doc = json.load(open(js)) if js.exists() else None
    res = None
    if doc:
        dc = doc["results"]["device_counters"]
        # Run and the checks read the rnic binary's layout: one QP, so both are the device's
        res = {"results": {"qp_counters": dc, "dev_counters": dc, "completion_errors": 0,
                           "recovery_used": doc["results"]["recovery_used"]}}
    run = Run(host_tool[0], prc, pout, rrc, rout, res, rxe)
    check_error_counters(run)
    assert rrc == 0, f"rnic-exec's {host_tool[0]} failed (exit {rrc}){run.both()}"
    assert prc == 0, f"rxe's {run.tool} failed (exit {prc}){run.both()}"
    assert res is not None, f"rnic-exec wrote no --json{run.both()}"
    assert exe == host_tool[0], f"/proc/PID/exe is {exe}, not {host_tool[0]}{run.both()}"
    assert res["results"]["recovery_used"] == "gbn", run.both()
    return run


CASES = [
    ("write_bw", 64 * KIB, 10, 1024),
    ("write_bw", 4 * KIB, 20, 4096),
    ("send_bw", 4 * KIB, 20, 1024),
    ("read_bw", 64 * KIB, 10, 1024),
]


@pytest.mark.parametrize("rnic_is_server", [False, True], ids=["rnic-client", "rnic-server"])
@pytest.mark.parametrize("mode,size,iters,mtu", CASES,
                         ids=[f"{m}-{s}B-mtu{u}" for m, s, n, u in CASES])
def test_perftest_rnic_exec_against_rxe(rxe_vm, tmp_path, mode, size, iters, mtu,  # noqa: F811
                                        rnic_is_server):
    opts = ["-m", str(mtu), "-s", str(size), "-n", str(iters), "-u", str(PERFTEST_TIMEOUT)]
    host = [f"/usr/bin/ib_{mode}", "-d", "rnic0", "-x", "0"] + opts
    guest = f"ib_{mode} -d rxe0 -x 1 " + " ".join(opts)
    run = run_exec_pair(rxe_vm, tmp_path, mode, host, guest, rnic_is_server, mtu)
    for who, out in (("rxe", run.pout), ("rnic0", run.rout)):
        rows = [ln.split() for ln in out.splitlines() if ln.strip().startswith(f"{size} ")]
        assert rows and int(rows[-1][1]) == iters, f"{who}'s result row{run.both()}"
    check_counts(run, mode, size, iters, mtu, rnic_is_server)


@pytest.mark.parametrize("rnic_is_server", [False, True], ids=["rnic-client", "rnic-server"])
def test_rc_pingpong_rnic_exec_against_rxe(rxe_vm, tmp_path, rnic_is_server):  # noqa: F811
    """ibv_rc_pingpong --chk at both ends: each checks the page starts of every message."""
    size, iters, mtu = 4096, 20, 1024
    opts = ["--chk", "-m", str(mtu), "-s", str(size), "-n", str(iters)]
    host = ["/usr/bin/ibv_rc_pingpong", "-d", "rnic0", "-g", "0"] + opts
    guest = "ibv_rc_pingpong -d rxe0 -g 1 " + " ".join(opts)
    run = run_exec_pair(rxe_vm, tmp_path, "rc_pingpong", host, guest, rnic_is_server, mtu)
    expect = (2 * size * iters, iters)
    assert pingpong_result(run.pout, "rxe's ibv_rc_pingpong") == expect, run.both()
    assert pingpong_result(run.rout, "rnic0's ibv_rc_pingpong") == expect, run.both()
    for out in (run.pout, run.rout):
        assert "invalid data" not in out, f"--chk found bad data{run.both()}"
    q, n = run.q, iters * pkts(size, mtu)
    got = {k: q[k] for k in ("send_completions", "recv_completions", "tx_req_packets",
                             "rx_req_packets")}
    assert got == {"send_completions": iters, "recv_completions": iters,
                   "tx_req_packets": n, "rx_req_packets": n}, (
        f"rnic0 counters {got} for {iters} round trips of {size} B{run.both()}")
    check_packet_totals(run)
    check_retransmits_explained(run)


def copy_to_vm(vm, path, dest):
    """Put a host file into the guest (base64 over the command channel, in chunks)."""
    data = base64.b64encode(open(path, "rb").read()).decode()
    rc, out = vm.run(f": > {dest}.b64")
    assert rc == 0, out
    for i in range(0, len(data), 60000):
        rc, out = vm.run(f"printf %s '{data[i:i + 60000]}' >> {dest}.b64")
        assert rc == 0, out
    rc, out = vm.run(f"base64 -d {dest}.b64 > {dest} && chmod +x {dest} && rm {dest}.b64")
    assert rc == 0, out


def test_badinput_same_on_rxe(rxe_vm):  # noqa: F811
    """The bad-input cases of rv_badinput on rxe0 (server and client in the guest, rxe's
    own loopback): each outcome is the one rnic0 gives (tests/netns/test_verbs_badinput.py
    checks rnic0 against the same table), and nothing crashes."""
    vm = rxe_vm
    copy_to_vm(vm, BADINPUT, "/tmp/rv_badinput")
    job = vm.run_bg("/tmp/rv_badinput rxe0 1 server 18620")
    try:
        rc, cout = vm.run("sleep 1; /tmp/rv_badinput rxe0 1 client 127.0.0.1 18620", timeout=120)
        src, sout = job.wait(timeout=60)
    finally:
        if job.poll() is None:
            job.kill("KILL")
    both = f"\n--- client (exit {rc}):\n{cout}\n--- server (exit {src}):\n{sout}"
    print(both)
    assert rc == 0 and src == 0, both
    got = {**badinput_outcomes(cout), **badinput_outcomes(sout)}
    assert got == BADINPUT_EXPECT, f"{sorted(set(got.items()) ^ set(BADINPUT_EXPECT.items()))}{both}"
