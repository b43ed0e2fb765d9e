"""`testbed lab` over real OpenSSH (docs/lab.md): three network namespaces stand for the
lab hosts (rnic A, lossy-emu, rnic B, joined by the testbed's veth links), each running
its own sshd on a management veth; keys are generated for the test, the client reaches
the hosts through an ssh_config ([lab] ssh_config). Exact facts only: the boxes were
started by sshd, the lab row has the columns of a local run of the same config and the
same exact counts, and bad input (a host that refuses ssh, a missing binary, a box that
fails to start) fails the run naming the host with nothing left running.
"""
import json
import os
import signal
import subprocess
import threading
import time

import pytest

from rocewan.testbed import topo

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTBED = os.path.join(ROOT, "testbed")
BUILD = os.environ.get("ROCEWAN_BUILD", os.path.join(ROOT, "build"))
CFG = os.path.join(ROOT, "configs", "gbn-lossy.toml")
# unique per run (pid): another make test or testbed on this host keeps its own namespaces
PREFIX = "tbl%d" % (os.getpid() % 100000)
NET = "10.79.%d" % (os.getpid() % 250)  # the management links: NET.(4i+1) host, NET.(4i+2) sshd
ITERS = 12  # write_bw messages of 1 MiB: the same work in both runs (exact counts)
SSHD = "/usr/sbin/sshd"
ROLES = {"A": 0, "E": 1, "B": 2}


def mgmt_ip(side, end):
    return f"{NET}.{4 * ROLES[side] + end}"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The three hosts: the testbed's veth topology, an sshd in each namespace."""
    if os.geteuid() != 0:
        pytest.fail("the testbed tests need root (namespaces, sshd); CI runs them as root")
    if not os.access(SSHD, os.X_OK):
        pytest.fail(f"{SSHD} is missing (Debian package openssh-server, scripts/bootstrap.sh)")
    d = tmp_path_factory.mktemp("lab")
    t = topo.Topology(PREFIX, 4096, "veth").up()
    sshds = []
    try:
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "id")], check=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host")], check=True)
        os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
        hostkey = open(d / "host.pub").read().split()
        with open(d / "known_hosts", "w") as f:
            for s in ROLES:
                f.write(f"{mgmt_ip(s, 2)} {hostkey[0]} {hostkey[1]}\n")
        with open(d / "authorized_keys", "w") as f:
            f.write(open(d / "id.pub").read())
        conf = []
        for s in ROLES:
            root_if, ns_if = f"{PREFIX}m{s}", f"{PREFIX}n{s}"
            topo.sh(f"ip link del {root_if}", check=False)
            topo.sh(f"ip link add {root_if} type veth peer name {ns_if} netns {t.ns[s]}")
            topo.sh(f"ip addr add {mgmt_ip(s, 1)}/30 dev {root_if}")
            topo.sh(f"ip link set {root_if} up")
            topo.sh(f"ip -n {t.ns[s]} addr add {mgmt_ip(s, 2)}/30 dev {ns_if}")
            topo.sh(f"ip -n {t.ns[s]} link set {ns_if} up")
            with open(d / f"sshd_{s}", "w") as f:
                f.write(f"ListenAddress {mgmt_ip(s, 2)}\nPort 22\nHostKey {d}/host\n"
                        f"AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n"
                        f"PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
                        f"StrictModes no\nPidFile {d}/sshd_{s}.pid\n")
            sshds.append(subprocess.Popen(["ip", "netns", "exec", t.ns[s], SSHD, "-D", "-e",
                                           "-f", str(d / f"sshd_{s}")],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            conf.append(f"Host lab{s}\n  HostName {mgmt_ip(s, 2)}\n  User root\n  IdentityFile {d}/id\n"
                        f"  IdentitiesOnly yes\n  UserKnownHostsFile {d}/known_hosts\n"
                        f"  StrictHostKeyChecking yes\n")
        # a host that refuses ssh: A's management address, a port no sshd listens on
        conf.append(f"Host labDown\n  HostName {mgmt_ip('A', 2)}\n  Port 2222\n  User root\n"
                    f"  IdentityFile {d}/id\n  UserKnownHostsFile {d}/known_hosts\n")
        with open(d / "ssh_config", "w") as f:
            f.write("\n".join(conf))
        # every sshd answers (hang guard only)
        for s in ROLES:
            for _ in range(100):
                r = subprocess.run(["ssh", "-F", str(d / "ssh_config"), "-o", "BatchMode=yes",
                                    f"lab{s}", "true"], capture_output=True, timeout=30)
                if r.returncode == 0:
                    break
                time.sleep(0.1)
            assert r.returncode == 0, r.stderr
        yield t, d
    finally:
        for p in sshds:
            p.terminate()
            p.wait()
        for s in ROLES:
            topo.sh(f"ip link del {PREFIX}m{s}", check=False)
        t.down()


def lab_sets(t, d, workdir, **over):
    fr = "framesz=8192,blocksz=16384"
    keys = {
        "a_host": "labA", "b_host": "labB", "emu_host": "labE",
        "a_port": f"--vdev net_af_packet0,iface={t.ifs['A']},{fr},framecnt=1024,qpairs=1",
        "b_port": f"--vdev net_af_packet0,iface={t.ifs['B']},{fr},framecnt=1024,qpairs=1",
        "emu_ports": f"--vdev net_af_packet0,iface={t.ifs['eA']},{fr},framecnt=4096;"
                     f"--vdev net_af_packet1,iface={t.ifs['eB']},{fr},framecnt=4096",
        "a_kernel_ip": t.kip["A"], "a_rnic_ip": f"{t.rip['A']}/24",
        "b_kernel_ip": t.kip["B"], "b_rnic_ip": f"{t.rip['B']}/24",
        "bin_dir": BUILD,
        # the local testbed's EAL and emulator options, so the two runs do the same
        "rnic_eal": f"{topo.eal_lcores()} --no-huge -m 512 --no-shconf --no-pci",
        "emu_eal": f"{topo.eal_lcores('0-1')} --no-huge -m {topo.EMU_MEM_MB} --no-pci",
        "emu_extra": f"--mbuf-size 8192 --link-rate 10gbit {topo.emu_min_frame(4096)}",
        "ssh_config": str(d / "ssh_config"), "workdir": str(workdir),
    }
    keys.update(over)
    out = ["--set", f"workload.iters={ITERS}"]
    for k, v in keys.items():
        out += ["--set", f"lab.{k}={json.dumps(v)}"]
    return out


def ours(t):
    """The experiment's processes left in the three namespaces (sshd aside)."""
    left = []
    for s in ROLES:
        for pid in topo.sh(f"ip netns pids {t.ns[s]}", check=False).stdout.split():
            try:
                comm = open(f"/proc/{pid}/comm").read().strip()
            except OSError:
                continue
            if comm in ("rnic", "lossy-emu"):
                left.append((s, pid, comm))
    return left


def parent_chain(pid):
    out = []
    while pid > 1:
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            break
        out.append(stat[stat.index("(") + 1:stat.rindex(")")])
        pid = int(stat[stat.rindex(")") + 2:].split()[1])
    return out


def test_lab_runs_gbn_lossy_over_ssh_like_the_local_run(lab, tmp_path):
    t, d = lab
    work = tmp_path / "remote"
    work.mkdir()
    p = subprocess.Popen([TESTBED, "--prefix", PREFIX, "lab", CFG, *lab_sets(t, d, work),
                          "--out", str(tmp_path / "lab")], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    chains = {}

    def watch():  # the emulator and rnic B run for the whole transfer: whose children are they
        while p.poll() is None and len(chains) < 2:
            for s, pid, comm in ours(t):
                if comm not in chains:
                    chains[comm] = parent_chain(int(pid))
            time.sleep(0.05)
    w = threading.Thread(target=watch, daemon=True)
    w.start()
    out, _ = p.communicate(timeout=600)
    w.join(10)
    assert p.returncode == 0, out
    assert chains.get("lossy-emu", [None, None])[1] == "sshd", chains
    assert chains.get("rnic", [None, None])[1] == "sshd", chains
    assert not ours(t), ours(t)
    assert os.listdir(work) == [], os.listdir(work)  # each host's run directory removed
    lab_row = json.load(open(tmp_path / "lab" / "gbn-lossy.json"))["results"]["rows"][0]
    # the same config on the local testbed (its own topology: the lab's is kept for the others)
    r = subprocess.run([TESTBED, "--prefix", PREFIX + "x", "run", CFG, "--quick", "--set",
                        f"workload.iters={ITERS}", "--out", str(tmp_path / "local")],
                       capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    local = json.load(open(tmp_path / "local" / "gbn-lossy.json"))["results"]["rows"][0]
    # the lab row has every column the local row has (the local one adds its wall time and files)
    assert set(local) - {"wall_s", "files"} <= set(lab_row), set(local) - set(lab_row)
    # exact counts the workload fixes: every request packet placed once, no errors
    per_msg = 1048576 // 4096
    for row in (lab_row, local):
        assert row["b_rx_req_packets"] == ITERS * per_msg, row["b_rx_req_packets"]
        assert row["completion_errors"] == 0, row
    for k in ("b_rx_req_packets", "completion_errors", "a2b_spec", "b2a_spec", "window_pkts",
              "workload", "recovery", "seed", "rate_gbps", "rtt_ms"):
        assert lab_row[k] == local[k], (k, lab_row[k], local[k])


def test_lab_refused_host_fails_naming_it(lab, tmp_path):
    t, d = lab
    r = subprocess.run([TESTBED, "--prefix", PREFIX, "lab", CFG,
                        *lab_sets(t, d, tmp_path, b_host="labDown"), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "labDown: unreachable over ssh" in r.stderr, r.stderr
    assert not ours(t), ours(t)


def test_lab_missing_binary_fails_naming_host_and_binary(lab, tmp_path):
    t, d = lab
    r = subprocess.run([TESTBED, "--prefix", PREFIX, "lab", CFG,
                        *lab_sets(t, d, tmp_path, bin_dir="/nonexistent/build"), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "labE: lacks /nonexistent/build/app/lossy-emu/lossy-emu" in r.stderr, r.stderr
    assert not ours(t), ours(t)


def test_lab_box_failing_to_start_stops_the_others(lab, tmp_path):
    """rnic B refuses its address after the emulator started on its host: the run fails
    naming B's host, and the emulator is stopped and the run directories are removed."""
    t, d = lab
    work = tmp_path / "remote"
    work.mkdir()
    r = subprocess.run([TESTBED, "--prefix", PREFIX, "lab", CFG,
                        *lab_sets(t, d, work, b_rnic_ip="10.77.0.12/99"), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "labB: rnicB did not start" in r.stderr, r.stderr
    assert "labE: emu started" in r.stdout, r.stdout  # the emulator had been running
    assert not ours(t), ours(t)
    assert os.listdir(work) == [], os.listdir(work)


def test_lab_ctrl_c_stops_every_host(lab, tmp_path):
    """SIGINT (Ctrl-C) while rnic A runs a long transfer: the run ends with 130 and every
    box on every host is stopped, the run directories removed."""
    t, d = lab
    work = tmp_path / "remote"
    work.mkdir()
    p = subprocess.Popen([TESTBED, "--prefix", PREFIX, "lab", CFG, *lab_sets(t, d, work),
                          "--set", "workload.iters=100000", "--out", str(tmp_path / "o")],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    seen = []
    for line in p.stdout:
        seen.append(line)
        if "rnicB started" in line:
            break
    assert seen and "rnicB started" in seen[-1], "".join(seen) + p.stdout.read()
    # rnic A is started right after that line: wait until it runs on host A (hang guard only)
    for _ in range(600):
        if any(s == "A" for s, _, _ in ours(t)):
            break
        time.sleep(0.05)
    assert any(s == "A" for s, _, _ in ours(t)), ours(t)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 130, "".join(seen) + out
    assert not ours(t), ours(t)
    assert os.listdir(work) == [], os.listdir(work)
