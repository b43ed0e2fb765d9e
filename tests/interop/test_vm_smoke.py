"""Smoke tests of the rxe/netem guest harness (tests/interop/vm.py).

(a) one guest: rxe0 is PORT_ACTIVE, `rdma link` lists it, the host pings it;
(b) netem in the guest: `tc qdisc ... netem delay 5ms loss 1%` works and the
    guest's pings to the host show the added delay;
(c) two bridged guests: ib_write_bw server/client over RoCEv2 (GID index 1).
"""

import shutil
import time

import pytest

from test_rnic_rxe import PERFTEST_CLOCK
from vm import VM, Bridge, VMTimeout, boot_all, parse_perftest_bw, parse_ping_rtt

SINGLE_NET = ("10.9.0.1/24", "10.9.0.2/24")                   # host tap, guest
PAIR_NET = ("10.9.1.1/24", "10.9.1.2/24", "10.9.1.3/24")      # bridge, server, client


def _rxe_active(vm):
    rc, out = vm.run("ibv_devinfo -d rxe0")
    assert rc == 0, f"{vm.name}: ibv_devinfo failed:\n{out}"
    assert "PORT_ACTIVE" in out, f"{vm.name}: rxe0 not active:\n{out}"
    return out


@pytest.fixture(scope="class")
def single_vm(vm_image, netns, tmp_path_factory):
    host_ip, guest_ip = SINGLE_NET
    vm = VM("rwsingle", guest_ip, host_ip=host_ip, netns=netns, image_dir=vm_image,
            workdir=tmp_path_factory.mktemp("vm-single"))
    t0 = time.monotonic()
    with vm:
        print(f"\n[interop] single guest booted in {time.monotonic() - t0:.1f} s")
        yield vm


class TestSingleVM:
    def test_rxe_active_and_host_ping(self, single_vm):
        vm = single_vm
        _rxe_active(vm)
        rc, out = vm.run("rdma link")
        assert rc == 0 and "rxe0" in out and "ACTIVE" in out, out
        # GID index 1 is the IPv4-mapped address (perftest -x 1)
        rc, gid = vm.run("cat /sys/class/infiniband/rxe0/ports/1/gids/1")
        assert rc == 0 and gid.strip().endswith("ffff:0a09:0002"), gid
        assert shutil.which("ping"), "ping not found on the host (apt-get install iputils-ping)"
        cp = vm.host_exec(["ping", "-c", "3", "-i", "0.2", "-W", "5", vm.addr],
                          check=False, timeout=60)
        assert cp.returncode == 0, f"host cannot ping {vm.addr}:\n{cp.stdout}"
        assert parse_ping_rtt(cp.stdout)["received"] >= 1

    def test_netem_delay_visible(self, single_vm):
        vm = single_vm
        host = SINGLE_NET[0].split("/")[0]
        _, out = vm.run(f"ping -c 5 -i 0.2 -W 5 {host}", timeout=60)
        base = parse_ping_rtt(out)
        rc, out = vm.run("tc qdisc add dev eth0 root netem delay 5ms loss 1%")
        assert rc == 0, f"tc netem failed:\n{out}"
        try:
            rc, show = vm.run("tc qdisc show dev eth0")
            assert "netem" in show and "delay 5ms" in show and "loss 1%" in show, show
            _, out = vm.run(f"ping -c 10 -i 0.2 -W 5 {host}", timeout=60)
            delayed = parse_ping_rtt(out)
            print(f"\n[interop] ping rtt without netem {base}, with netem 5ms {delayed}")
            assert delayed["received"] >= 5, out
            assert delayed["min"] >= 4.9, out
            assert delayed["avg"] >= base["min"] + 4.0, (base, delayed)
        finally:
            vm.run("tc qdisc del dev eth0 root")

    def test_harness_timeout_and_background_jobs(self, single_vm):
        vm = single_vm
        with pytest.raises(VMTimeout):
            vm.run("echo started; sleep 30", timeout=2)
        rc, out = vm.run("echo still-alive")           # the command loop survived
        assert (rc, out) == (0, "still-alive\n")
        job = vm.run_bg("echo out; echo err >&2; exit 3")
        assert job.wait(30) == (3, "out\nerr\n")
        job = vm.run_bg("echo begin; sleep 60")
        rc, out = job.kill()
        assert rc == 143 and out == "begin\n", (rc, out)


@pytest.fixture(scope="class")
def vm_pair(vm_image, netns, tmp_path_factory):
    br_ip, srv_ip, cli_ip = PAIR_NET
    work = tmp_path_factory.mktemp("vm-pair")
    with Bridge("rwbr0", br_ip, netns=netns) as br:
        srv = VM("rwsrv", srv_ip, bridge=br, netns=netns, image_dir=vm_image, workdir=work)
        cli = VM("rwcli", cli_ip, bridge=br, netns=netns, image_dir=vm_image, workdir=work)
        t0 = time.monotonic()
        with boot_all([srv, cli]):                       # both boot in parallel
            print(f"\n[interop] two guests booted in {time.monotonic() - t0:.1f} s")
            yield srv, cli


class TestBridgedPair:
    def test_ib_write_bw(self, vm_pair):
        srv, cli = vm_pair
        for vm in vm_pair:
            _rxe_active(vm)
        args = "-d rxe0 -x 1 -s 4096 -n 20"
        for attempt in range(3):
            job = srv.run_bg(f"ib_write_bw {args}")
            try:
                srv.wait_tcp_listen(18515, timeout=60)
                t0 = time.monotonic()
                crc, cout = cli.run(f"ib_write_bw {args} {srv.addr}", timeout=120)
                src, sout = job.wait(60)
            finally:
                if job.rc is None:
                    job.kill()
            # perftest's clock calibration (r^2 >= 0.9) can fail in a preempted TCG
            # guest after a good transfer: the one principled repeat (docs/testing.md),
            # matched by its exact messages, both of them, as test_rnic_rxe does
            if not any(all(m in o for m in PERFTEST_CLOCK) for o in (cout, sout)):
                break
            print("\n[interop] perftest could not calibrate its clock in the guest: run again")
        assert crc == 0, f"client failed ({crc}):\n{cout}"
        assert src == 0, f"server failed ({src}):\n{sout}"
        res = parse_perftest_bw(cout)
        print(f"\n[interop] ib_write_bw {args}: {res} ({time.monotonic() - t0:.1f} s)")
        assert res["bytes"] == 4096 and res["iterations"] == 20
        assert res["unit"] == "MB/sec" and res["bw_avg"] > 0

    def test_ibv_rc_pingpong(self, vm_pair):
        srv, cli = vm_pair
        args = "-d rxe0 -g 1 -n 10 -s 1024"
        job = srv.run_bg(f"ibv_rc_pingpong {args}")
        try:
            srv.wait_tcp_listen(18515, timeout=60)
            crc, cout = cli.run(f"ibv_rc_pingpong {args} {srv.addr}", timeout=120)
            src, sout = job.wait(60)
        finally:
            if job.rc is None:
                job.kill()
        assert crc == 0, f"client failed ({crc}):\n{cout}"
        assert src == 0, f"server failed ({src}):\n{sout}"
        assert "10 iters" in cout, cout
