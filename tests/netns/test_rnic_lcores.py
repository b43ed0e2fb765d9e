"""rnic --lcores 2 -q 4: QPs round-robin over two lcores, one af_packet queue each.

The af_packet PMD's queues (qpairs=2) share the interface through the kernel's
fanout hash, which the rnic cannot steer: each lcore reads the BTH destination
QPN of what its queue delivers and hands other lcores' frames over through
their ring. Checked: every bandwidth mode moves -n messages on every QP, each
lcore's engine only saw its own QPs (no frame reached a device that does not
own its QPN), both lcores did work, and the wire format is unchanged (a
single-lcore rnic is a valid peer).
"""
import json
import os
import subprocess
import sys
import time
import uuid

import pytest

from conftest import BUILD, check_read_responses, pair_results, serve_and_connect, sh

RNIC = os.path.join(BUILD, "app", "rnic", "rnic")
N, Q, L = 100, 4, 2


@pytest.fixture
def veth_h7():
    """Two namespaces on one veth pair, every name tagged h7."""
    tag = uuid.uuid4().hex[:6]
    ns, ifs = [f"rth7A{tag}", f"rth7B{tag}"], [f"vh7a{tag}", f"vh7b{tag}"]
    for n in ns:
        sh(f"ip netns add {n}")
    sh(f"ip link add {ifs[0]} netns {ns[0]} type veth peer name {ifs[1]} netns {ns[1]}")
    for n, i, ip in zip(ns, ifs, ("10.57.0.1", "10.57.0.2")):
        sh(f"ip -n {n} addr add {ip}/24 dev {i}")
        sh(f"ip -n {n} link set {i} up")
        sh(f"ip -n {n} link set lo up")
        sh(f"ip netns exec {n} ethtool -K {i} tx off", check=False)
    yield tag, ns, ifs
    for n in ns:
        sh(f"ip netns pids {n} | xargs -r kill -9", check=False)
        sh(f"ip netns del {n}", check=False)


def cmd(ns, iface, prefix, ip, lcores, args):
    eal = f"-l 0-{lcores - 1}" if lcores > 1 else "-l 0"
    return (f"ip netns exec {ns} {RNIC} {eal} --no-huge -m 512 --no-shconf --no-pci "
            f"--file-prefix {prefix} --log-level=lib.eal:error "
            f"--vdev net_af_packet0,iface={iface},qpairs={lcores},framesz=2048,blocksz=4096,"
            f"framecnt=4096 -- --ip {ip}/24 {args}" + (f" --lcores {lcores}" if lcores > 1 else ""))


def run_pair(veth, tmp_path, opts, srv_lcores, cli_lcores, timeout=90, srv_extra=""):
    if not os.path.exists(RNIC):
        pytest.fail(f"{RNIC} is not built (run `make build`)")
    tag, ns, ifs = veth
    js = [tmp_path / "server.json", tmp_path / "client.json"]
    rcs, out = serve_and_connect(
        cmd(ns[1], ifs[1], f"rth7s{tag}", "10.57.0.12", srv_lcores,
            f"{opts} {srv_extra} --json {js[0]}"),
        cmd(ns[0], ifs[0], f"rth7c{tag}", "10.57.0.11", cli_lcores,
            f"{opts} --json {js[1]} 10.57.0.2"), timeout)
    return pair_results(rcs, out, js)


def check_lcores(res, out, requester, rx=True, tx=True):
    """Each lcore owns QPs i % L == index, and its engine saw only those.

    rx / tx: the lcore's QPs receive / send RoCE frames (UD: no ACKs either way)."""
    lc = res["lcores"]
    assert len(lc) == L, lc
    qpns = [q for x in lc for q in x["qpns"]]
    assert len(qpns) == Q and len(set(qpns)) == Q
    handed = 0
    for x in lc:
        assert len(x["qpns"]) == Q // L
        span = [x["first_qpn"], x["first_qpn"] + 0x1000]
        assert all(span[0] <= q < span[1] for q in x["qpns"]), x
        dev, port = x["dev_counters"], x["port_counters"]
        # a frame for a QPN this device does not own would count here
        assert dev["rx_drop_bad_qpn"] == 0 and dev["rx_drop_bad_src"] == 0, (x, out)
        if tx:
            assert port["tx_frames"] > 0, (x, out)
        if rx:  # this lcore's engine got frames for its QPs
            assert port["rx_roce"] > 0, (x, out)
            assert sum(dev[k] for k in ("rx_req_packets", "rx_acks", "rx_read_responses",
                                        "rx_atomic_acks")) > 0, x
        assert port["rx_handoff_drop"] == 0, x
        if requester:
            assert x["iters"] == N * Q // L, x
        handed += port["rx_handoff"]
        assert port["rx_from_ring"] <= sum(y["port_counters"]["rx_handoff"] for y in lc)
    # every frame handed over was taken by its owner or still waits in its ring at exit
    # (the last ACKs of a peer that finished after the owner stopped polling)
    assert sum(x["port_counters"]["rx_from_ring"] + x["ring_left"] for x in lc) == handed, lc
    return handed


@pytest.mark.parametrize("conn,mode,size", [
    ("RC", "write_bw", 16384), ("RC", "send_bw", 4096), ("RC", "read_bw", 16384),
    ("RC", "atomic_bw", 8), ("UD", "send_bw", 1024)])
def test_two_lcores(veth_h7, tmp_path, conn, mode, size):
    r = run_pair(veth_h7, tmp_path, f"-c {conn} -q {Q} -s {size} -n {N} {mode}", L, L)
    assert r.client["iters"] == N * Q
    assert r.client["qp_counters"]["send_completions"] == N * Q
    assert "Number of qps   : 4" in r.cout
    if mode == "send_bw":
        assert r.server["iters"] == N * Q
        assert r.server["qp_counters"]["recv_completions"] == N * Q
    dev = r.server["device_counters"]  # MTU 1024: size // 1024 packets a message
    if mode == "read_bw":
        check_read_responses(dev, r.client["device_counters"], N * Q, size // 1024)
    elif mode == "atomic_bw":
        assert dev["rx_req_packets"] == N * Q, dev
    else:
        assert dev["rx_req_packets"] == N * Q * (size // 1024), dev
    handed = (check_lcores(r.client, r.cout, True, rx=conn != "UD") +
              check_lcores(r.server, r.sout, False, tx=conn != "UD"))
    # Not asserted > 0 here: the kernel's fanout hash (seeded at boot) puts each of the
    # peer's 4 flows (UDP source port from the QP pair) on one queue; all 4 on both sides
    # may land on their owners (about 1 in 256 if the hash is uniform). test_handoff
    # makes that chance negligible.
    print(f"{conn} {mode}: frames handed over between lcores: {handed}")


def test_handoff(veth_h7, tmp_path):
    """-q 16: 16 flows each way on 2 queues; all 32 hashed to their owner: ~2^-32."""
    q = 16
    r = run_pair(veth_h7, tmp_path, f"-q {q} -s 4096 -n 20 write_bw", L, L)
    assert r.client["iters"] == 20 * q
    handed = 0
    for res in (r.client, r.server):
        lc = res["lcores"]
        assert sorted(len(x["qpns"]) for x in lc) == [q // L] * L
        for x in lc:
            assert x["dev_counters"]["rx_drop_bad_qpn"] == 0, x
            handed += x["port_counters"]["rx_handoff"]
        assert sum(x["port_counters"]["rx_from_ring"] + x["ring_left"] for x in lc) == \
            sum(x["port_counters"]["rx_handoff"] for x in lc)
    assert handed > 0, (r.cout, r.sout)


@pytest.mark.parametrize("srv_l,cli_l", [(1, L), (L, 1)])
def test_single_lcore_peer(veth_h7, tmp_path, srv_l, cli_l):
    """The wire format does not change: a one-lcore rnic talks to a two-lcore one."""
    r = run_pair(veth_h7, tmp_path, f"-q {Q} -s 16384 -n {N} write_bw", srv_l, cli_l)
    assert r.client["iters"] == N * Q
    assert r.server["device_counters"]["rx_req_packets"] == N * Q * 16, r.server
    multi = r.client if cli_l > 1 else r.server
    assert "lcores" in multi and "lcores" not in (r.server if cli_l > 1 else r.client)
    check_lcores(multi, r.cout + r.sout, cli_l > 1)


def test_pfc_reaches_every_lcore(veth_h7, tmp_path):
    """A PFC frame lands on one af_packet queue (the fanout hash); the lcore that
    reads it hands it to the others, so every lcore's transmit gate obeys it."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "dpdk", "emu"))
    import lemu_net
    from test_rnic_pfc import ns_socket
    tag, ns, ifs = veth_h7
    js = [tmp_path / "server.json", tmp_path / "client.json"]
    opts = f"-q {Q} -s 65536 -n 2000 write_bw"
    # B also reads what the injector sends on its interface: it ignores PFC
    srv = subprocess.Popen(cmd(ns[1], ifs[1], f"rth7s{tag}", "10.57.0.12", 1,
                               f"{opts} --pfc off --json {js[0]}"),
                           shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1)
    cli = subprocess.Popen(cmd(ns[0], ifs[0], f"rth7c{tag}", "10.57.0.11", L,
                               f"{opts} --json {js[1]} 10.57.0.2"),
                           shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    inj = ns_socket(ns[1], ifs[1])
    mac_b = bytes.fromhex("020000000b0b")
    sent = 0
    try:
        time.sleep(0.8)
        while cli.poll() is None and sent < 400:
            # short pauses (1000 quanta = 51 us at the default 10 Gb/s): the run goes on
            inj.send(lemu_net.pfc_frame(src=mac_b, prio=3, quanta=1000))
            sent += 1
            time.sleep(0.01)
        cout, _ = cli.communicate(timeout=90)
        sout, _ = srv.communicate(timeout=30)
    finally:
        for p in (cli, srv):
            if p.poll() is None:
                p.kill()
        inj.close()
    assert cli.returncode == 0 and srv.returncode == 0, f"{cout}\n{sout}"
    c = json.load(open(js[1]))["results"]
    got = [x["port_counters"]["pfc_rx_xoff"] for x in c["lcores"]]
    fan = sum(x["port_counters"]["pfc_fanout"] for x in c["lcores"])
    assert sent > 10, f"the transfer ended before PFC could be injected ({sent} frames)"
    assert all(g > 0 for g in got), f"PFC reached only some lcores: pfc_rx_xoff per lcore {got}"
    assert fan > 0, c["lcores"]
    assert c["iters"] == 2000 * Q
    print(f"PFC frames injected {sent}; pfc_rx_xoff per lcore {got}; handed to other lcores {fan}")


def test_pfc_xoff_with_two_lcores(veth_h7, tmp_path):
    """B reads with two lcores, each slowed to ~32 frames per ms (--slow-rx-us 1000),
    while A sends 4 QPs paced to 1 Gb/s in all. Each lcore publishes its backlog and
    lcore 0 pauses A for the larger one (--pfc-xoff): A resumes only when both caught
    up. Zero retransmissions is a `make bench` claim (a loaded host can deschedule B for
    longer than its rings last); here the counts are exact and every retransmission has a
    counted cause. One run, no retries."""
    r = run_pair(veth_h7, tmp_path, f"-q {Q} -s 65536 -n {N} write_bw --rate_limit 0.25", L, 1,
                 srv_extra="--slow-rx-us 1000 --pfc-xoff 64")
    sp = r.server["port_counters"]
    per = r.server["lcores"]
    assert all(x["port_counters"]["rx_slow_sleeps"] > 0 for x in per), per
    # only lcore 0 sends PFC, and every pause it started it ended
    assert sp["pfc_sent_xoff"] >= 1 and sp["pfc_sent_xon"] == sp["pfc_sent_xoff"], sp
    assert per[1]["port_counters"]["pfc_sent_xoff"] == 0, per[1]
    cp = r.client["port_counters"]
    assert cp["pfc_rx_xoff"] == sp["pfc_sent_xoff"] + sp["pfc_sent_refresh"], (sp, cp)
    assert cp["pfc_rx_xon"] == sp["pfc_sent_xon"] and cp["pfc_pauses"] >= 1, (sp, cp)
    assert r.server["qp_counters"]["rx_req_bytes"] == N * Q * 65536
    q, sq = r.client["qp_counters"], r.server["qp_counters"]
    assert q["tx_req_packets"] == N * Q * 64 and sq["rx_req_packets"] == N * Q * 64, (q, sq)
    # zero retransmissions needs B never descheduled for longer than its rings last: a
    # `make bench` claim. Here each retransmission must have a counted cause (a timeout or a
    # NAK for a gap B saw) and each duplicate at B must be one A sent again.
    assert q["retries"] <= q["timeouts"] + q["rx_nak_seq_err"] + q["implied_naks"], q
    assert q["tx_retransmits"] == 0 or q["retries"] > 0, q
    assert q["rx_nak_seq_err"] <= sq["tx_nak_seq_err"], (q, sq)
    assert sq["rx_dup_requests"] <= q["tx_retransmits"], (q, sq)
    print("pfc_sent", sp["pfc_sent_xoff"], sp["pfc_sent_refresh"], sp["pfc_sent_xon"],
          "backlog_max", sp["rx_backlog_max"],
          "rx per lcore", [x["port_counters"]["rx_frames"] for x in per], "pauses", cp["pfc_pauses"],
          "paused ms", cp["tx_paused_ns"] // 1000000, "retx", q["tx_retransmits"])
