"""rnic against rnic on a veth pair: `rc_pingpong` and RoCEv2 over IPv6 (neighbour
discovery), without the VM. The rxe interop suite (tests/interop/test_rnic_rxe.py)
runs the same modes against Linux's implementations; these tests keep the
host-only path covered and fast.
"""
import re
import subprocess
import time

from conftest import RNIC, eal, rnic_pair as pair

IP6 = ["fe80::11", "fe80::12"]


def test_rc_pingpong_rnic_both_sides(veth_pair, tmp_path):
    size, iters = 4096, 200
    # the server checks each message's page starts (--chk), the client each echo
    rcs, out, res = pair(veth_pair, tmp_path, "rc_pingpong", f"-s {size} -n {iters}",
                         side_opts=("", "--chk"))
    assert res[0]["config"]["chk"] is True
    assert rcs == [0, 0], f"exit codes {rcs}\n--- server:\n{out[0]}\n--- client:\n{out[1]}"
    for side, o, r in zip(("server", "client"), out, res):
        m = re.search(r"(\d+) bytes in [\d.]+ seconds = [\d.]+ Mbit/sec\n(\d+) iters in", o)
        assert m and (int(m.group(1)), int(m.group(2))) == (2 * size * iters, iters), f"{side}:\n{o}"
        assert "remote address: LID 0x0000" in o, o
        q = r["results"]["qp_counters"]
        assert (q["send_completions"], q["recv_completions"]) == (iters, iters), (side, q)
        assert q["tx_req_packets"] == iters * 4 and q["rx_req_packets"] == iters * 4, (side, q)
        assert r["results"]["iters"] == iters and r["results"]["completion_errors"] == 0


def test_chk_is_an_rc_pingpong_option(veth_pair, tmp_path):
    r = subprocess.run(f"{RNIC} --no-huge --no-pci -- --ip 10.0.0.1/24 --chk write_bw",
                       shell=True, capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "--chk is an rc_pingpong option (write_bw checks nothing per message)" in r.stderr, r.stderr


def test_write_bw_over_ipv6(veth_pair, tmp_path):
    opts = "-s 65536 -n 100"
    rcs, out, res = pair(veth_pair, tmp_path, "write_bw", opts,
                         side_opts=(f"--ip6 {IP6[0]} -x 1", f"--ip6 {IP6[1]} -x 1"))
    assert rcs == [0, 0], f"exit codes {rcs}\n--- server:\n{out[0]}\n--- client:\n{out[1]}"
    srv, cli = res
    assert cli["results"]["iters"] == 100
    assert srv["results"]["qp_counters"]["rx_req_packets"] == 100 * 64
    # one side resolved the other by ND and got an advertisement back; the other side
    # answered that solicitation (and may have learnt its asker from it, RFC 4861 7.2.3,
    # so which side solicits depends on which reaches RTR first)
    pc = [r["results"]["port_counters"] for r in res]
    asker = [i for i in (0, 1) if pc[i]["nd_solicits_sent"] >= 1]
    assert asker, pc
    for i in asker:
        assert pc[i]["rx_nd_advert"] >= 1, pc
    assert any(pc[1 - i]["rx_nd_solicit"] >= 1 for i in asker), pc
    assert srv["results"]["dev_counters"]["rx_drop_not_for_us"] == 0


def test_rnic_answers_ping6(veth_pair, tmp_path):
    """The kernel in ns[0] pings the rnic's --ip6 address: neighbour discovery, then
    ICMPv6 echo (RFC 4443), answered by the rnic while it waits for a perftest client
    (and its IPv4 address too); Ctrl-C ends that wait at once."""
    vp = veth_pair
    srv = subprocess.Popen(
        f"exec ip netns exec {vp.ns[1]} {RNIC} {eal(vp.ifs[1], 'h1p6')} -- --ip {vp.rip[1]}/24 "
        f"--ip6 {IP6[1]} -x 1 --json {tmp_path / 's.json'} write_bw",
        shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        seen, t0 = "", time.monotonic()
        while "Waiting for client" not in seen and time.monotonic() - t0 < 30:
            line = srv.stdout.readline()
            if not line:
                break
            seen += line
        assert "Waiting for client" in seen, seen
        # the kernel side needs its own link-local address to send from (DAD takes a moment)
        ping = subprocess.run(
            f"ip netns exec {vp.ns[0]} ping -6 -c 3 -i 0.3 -w 15 {IP6[1]}%{vp.ifs[0]}",
            shell=True, capture_output=True, text=True, timeout=30)
        ping4 = subprocess.run(f"ip netns exec {vp.ns[0]} ping -c 2 -i 0.3 -w 10 {vp.rip[1]}",
                               shell=True, capture_output=True, text=True, timeout=30)
        wrong = subprocess.run(
            f"ip netns exec {vp.ns[0]} ping -6 -c 1 -w 2 fe80::99%{vp.ifs[0]}",
            shell=True, capture_output=True, text=True, timeout=30)
    finally:
        srv.send_signal(2)
        try:
            out, _ = srv.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            srv.kill()
            out, _ = srv.communicate()
    out = seen + out
    # the first requests may go while the kernel still resolves the address (ping -w
    # keeps sending until 3 replies came back)
    assert re.search(r"\d+ packets transmitted, 3 received", ping.stdout), (
        f"ping -6 to the rnic:\n{ping.stdout}{ping.stderr}\n--- rnic:\n{out}")
    assert " 0 received" in wrong.stdout, f"someone answered for fe80::99:\n{wrong.stdout}"
    assert re.search(r"\d+ packets transmitted, 2 received", ping4.stdout), ping4.stdout
    m = re.search(r"rx_icmp6_echo\s+(\d+)", out)
    assert m and int(m.group(1)) >= 3, f"the rnic's rx_icmp6_echo counter:\n{out}"
    assert "stopped while waiting for a client on TCP port 18515" in out, out


def test_gid_family_mismatch_is_one_clear_line(veth_pair, tmp_path):
    rcs, out, _ = pair(veth_pair, tmp_path, "write_bw", "-s 4096 -n 10",
                       side_opts=(f"--ip6 {IP6[0]} -x 1", ""), timeout=30)
    assert rcs[1] == 1, out[1]
    assert re.search(r"rnic: the peer's GID ::ffff:[\d.]+ is IPv4-mapped but ours \(-x 1\) is IPv6",
                     out[1]), out[1]
