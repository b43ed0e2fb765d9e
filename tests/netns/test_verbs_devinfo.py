"""ibv_devices and ibv_devinfo -v, unmodified Debian binaries, list rnic0 through the
interposer (rnic-exec, docs/verbs.md): port ACTIVE, the MTU, GID 0 = ::ffff:IP as RoCE v2;
the launcher's option handling; the device's --json and no EAL file left behind."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verbs"))
from harness import RNIC_EXEC, VERBS_LIB, exec_argv, wait_listen  # noqa: E402


def run(vp, dev_opts, cmd, js=None):
    argv, prefix = exec_argv(vp, 0, dev_opts, cmd, js)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, start_new_session=True)
    return r, prefix


@pytest.fixture(autouse=True)
def built():
    if not os.path.exists(RNIC_EXEC):
        pytest.fail(f"{RNIC_EXEC} is not built (run `make build`)")


def test_devinfo_lists_rnic0(veth_pair, tmp_path):
    js = tmp_path / "dev-%p.json"
    r, prefix = run(veth_pair, ["--mtu", "512"], ["ibv_devinfo", "-v", "-d", "rnic0"], js)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "hca_id:\trnic0" in out
    assert "PORT_ACTIVE (4)" in out
    assert "active_mtu:\t\t512 (2)" in out
    assert "link_layer:\t\tEthernet" in out
    assert f"GID[  0]:\t\t::ffff:{veth_pair.rip[0]}, RoCE v2" in out
    assert "GID[  1]" not in out  # no --ip6: one GID
    docs = list(tmp_path.glob("dev-*.json"))
    assert len(docs) == 1 and "%p" not in docs[0].name, docs  # %p became the pid
    d = json.load(open(docs[0]))
    assert d["app"] == "rnic-exec" and d["results"]["recovery_used"] == "gbn"
    assert d["config"]["mtu"] == 512, d["config"]
    # in memory: EAL left no runtime directory (file prefix) behind
    assert not os.path.exists(f"/var/run/dpdk/{prefix}"), os.listdir(f"/var/run/dpdk/{prefix}")


def test_failed_start_leaves_nothing(veth_pair):
    """EAL starts but the port refuses the MTU (the veth has 1500): ibv_open_device fails
    with the port's reason, the program goes on (ibv_devinfo reports the failure), and
    EAL's runtime directory is gone."""
    r, prefix = run(veth_pair, ["--mtu", "4096"], ["ibv_devinfo", "-d", "rnic0"])
    assert r.returncode != 0 and "MTU" in r.stderr and "raise the interface MTU" in r.stderr, r
    assert not os.path.exists(f"/var/run/dpdk/{prefix}"), os.listdir(f"/var/run/dpdk/{prefix}")


def test_devices_guid_from_mac(veth_pair):
    r, _ = run(veth_pair, [], ["ibv_devices"])
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines() if "rnic0" in line]
    assert len(rows) == 1, r.stdout
    link = subprocess.run(["ip", "-n", veth_pair.ns[0], "-j", "link", "show", veth_pair.ifs[0]],
                          capture_output=True, text=True, check=True)
    mac = [int(x, 16) for x in json.loads(link.stdout)[0]["address"].split(":")]
    eui = [mac[0] ^ 2] + mac[1:3] + [0xff, 0xfe] + mac[3:]  # RFC 4291 appendix A
    assert rows[0][1] == "".join(f"{b:02x}" for b in eui), (rows, mac)


def test_launcher_options(veth_pair):
    h = subprocess.run([RNIC_EXEC, "--help"], capture_output=True, text=True)
    assert h.returncode == 0 and "ROCEWAN_VERBS_ARGS" in h.stdout
    for bad in (["-s", "4096"], ["--size", "4096"], ["--iters=3"], ["--rdma_cm"]):
        r, _ = run(veth_pair, bad, ["true"])
        assert r.returncode == 2, (bad, r.stderr)
        assert "benchmark option" in r.stderr and "write_bw" in r.stderr, r.stderr
    r, _ = run(veth_pair, ["--recovery", "nope"], ["true"])
    assert r.returncode == 2 and "--recovery" in r.stderr, r.stderr
    r = subprocess.run([RNIC_EXEC, "--", "--", "true"], capture_output=True, text=True)
    assert r.returncode == 2 and "--ip" in r.stderr, r.stderr
    r = subprocess.run([RNIC_EXEC, "--", "--ip", "10.0.0.1/24"], capture_output=True, text=True)
    assert r.returncode == 2 and "COMMAND" in r.stderr, r.stderr


def test_unconfigured_open_fails_cleanly():
    """Preloaded without a configuration, rnic0 is listed, opening it fails with a message,
    and the program (ibv_devices) still runs."""
    env = dict(os.environ, LD_PRELOAD=VERBS_LIB)
    env.pop("ROCEWAN_VERBS_ARGS", None)
    r = subprocess.run(["ibv_devinfo", "-d", "rnic0"], capture_output=True, text=True, env=env,
                       timeout=30)
    assert r.returncode != 0
    assert "rnic0: --ip A.B.C.D/N is required" in r.stderr, r.stderr


def test_sigterm_cleans_up(veth_pair, tmp_path):
    """A program stopped by SIGTERM with its resources still open (ibv_rc_pingpong waiting
    for its client) dies by the signal, and the library first wrote --json, stopped the
    port and removed EAL's runtime directory, which existed while it ran."""
    js = tmp_path / "term.json"
    argv, prefix = exec_argv(veth_pair, 1, [], ["ibv_rc_pingpong", "-d", "rnic0", "-g", "0"], js)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        assert wait_listen(veth_pair.ns[1], 18515, p), p.communicate()[0]
        assert os.path.isdir(f"/var/run/dpdk/{prefix}")  # the control: EAL's files exist
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == -signal.SIGTERM, (p.returncode, out)
    assert not os.path.exists(f"/var/run/dpdk/{prefix}")
    d = json.load(open(js))
    assert d["results"]["device_counters"]["tx_req_packets"] == 0


def test_sigterm_while_busy(veth_pair, tmp_path):
    """SIGTERM to a program busy in its verbs (ibv_rc_pingpong polling mid-run): the
    handler may interrupt a verb inside the device's lock; the process still dies by the
    signal at once, with --json written and no EAL files left."""
    js = tmp_path / "busy.json"
    cmd = ["ibv_rc_pingpong", "-d", "rnic0", "-g", "0", "-n", "10000000"]
    sargv, sprefix = exec_argv(veth_pair, 1, [], cmd)
    srv = subprocess.Popen(sargv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    cli = None
    try:
        assert wait_listen(veth_pair.ns[1], 18515, srv), srv.communicate()[0]
        cargv, prefix = exec_argv(veth_pair, 0, [], cmd + [veth_pair.kip[1]], js)
        cli = subprocess.Popen(cargv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
        for _ in range(300):  # until its device runs, then a while of ping-pong
            if os.path.isdir(f"/var/run/dpdk/{prefix}"):
                break
            time.sleep(0.05)
        time.sleep(1.5)
        assert cli.poll() is None, cli.communicate()[0]
        cli.send_signal(signal.SIGTERM)
        out, _ = cli.communicate(timeout=20)
        assert cli.returncode == -signal.SIGTERM, (cli.returncode, out)
    finally:
        for p in (cli, srv):  # the server, left waiting for the client: SIGTERM too
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    assert not os.path.exists(f"/var/run/dpdk/{prefix}")
    assert not os.path.exists(f"/var/run/dpdk/{sprefix}"), sprefix
    d = json.load(open(js))["results"]["device_counters"]  # written, and consistent
    assert d["tx_req_packets"] >= d["send_completions"] and d["rx_req_packets"] >= 0, d
