"""The rnic's counters through DPDK telemetry (app/rnic/rnic_tel.c).

Two rnics on a veth pair run write_bw for a few seconds; while they run, the
client is queried over its telemetry socket (/var/run/dpdk/PREFIX/dpdk_telemetry.v2,
SOCK_SEQPACKET, the protocol of usertools/dpdk-telemetry.py). The counters must
grow while traffic flows, name the same counters as the JSON written at exit,
never exceed the values at exit, and agree with what the rnic prints at exit.
"""
import json
import os
import subprocess
import time
import uuid

import pytest

from conftest import BUILD, sh
from rocewan.testbed.telemetry import Telemetry

RNIC = os.path.join(BUILD, "app", "rnic", "rnic")


@pytest.fixture
def veth_h4():
    """Two namespaces on one veth pair, every name tagged h4."""
    tag = uuid.uuid4().hex[:6]
    ns, ifs = [f"rth4A{tag}", f"rth4B{tag}"], [f"vh4a{tag}", f"vh4b{tag}"]
    for n in ns:
        sh(f"ip netns add {n}")
    sh(f"ip link add {ifs[0]} netns {ns[0]} type veth peer name {ifs[1]} netns {ns[1]}")
    for n, i, ip in zip(ns, ifs, ("10.52.0.1", "10.52.0.2")):
        sh(f"ip -n {n} addr add {ip}/24 dev {i}")
        sh(f"ip -n {n} link set {i} up")
        sh(f"ip -n {n} link set lo up")
        sh(f"ip netns exec {n} ethtool -K {i} tx off", check=False)
    yield tag, ns, ifs
    for n in ns:
        sh(f"ip netns pids {n} | xargs -r kill -9", check=False)
        sh(f"ip netns del {n}", check=False)


def rnic_cmd(ns, iface, prefix, ip, args):
    # --file-prefix (not --in-memory) keeps the telemetry socket; --no-shconf does too.
    # 4096 ring frames ride out a receiver descheduled for ~10 ms (UC/UD do not resend)
    return (f"ip netns exec {ns} {RNIC} --no-huge -m 512 --no-shconf --no-pci "
            f"--file-prefix {prefix} --log-level=lib.eal:error "
            f"--vdev net_af_packet0,iface={iface},framesz=2048,blocksz=4096,framecnt=4096 "
            f"-- --ip {ip}/24 {args}")


def test_counters_through_telemetry(veth_h4, tmp_path):
    if not os.path.exists(RNIC):
        pytest.fail(f"{RNIC} is not built (run `make build`)")
    tag, ns, ifs = veth_h4
    cprefix = f"rth4c{tag}"
    js = tmp_path / "client.json"
    opts = "-s 65536 -D 4 --rto adaptive write_bw"  # the RTT figures of the adaptive timer
    srv = subprocess.Popen(rnic_cmd(ns[1], ifs[1], f"rth4s{tag}", "10.52.0.12", opts),
                           shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1)
    cli = subprocess.Popen(rnic_cmd(ns[0], ifs[0], cprefix, "10.52.0.11", f"{opts} --json {js} 10.52.0.2"),
                           shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tel = None
    try:
        tel = Telemetry(f"/var/run/dpdk/{cprefix}/dpdk_telemetry.v2", 30, lambda: cli.poll() is None)
        # the socket opens in EAL init, the commands come with the port, the QP after it,
        # its counters move once connected
        deadline = time.time() + 30
        while "/rnic/qp/stats" not in tel.get("/"):
            assert time.time() < deadline and cli.poll() is None, "/rnic/ commands never registered"
            time.sleep(0.05)
        while True:
            qpns = tel.get("/rnic/qp/list")
            if qpns and tel.get(f"/rnic/qp/stats,{qpns[0]}")["rx_acks"] > 0:
                break
            assert time.time() < deadline and cli.poll() is None, f"no traffic; list {qpns}"
            time.sleep(0.1)
        assert len(qpns) == 1, qpns
        qpn = qpns[0]
        a = tel.get(f"/rnic/qp/stats,{qpn}")
        pa = tel.get("/rnic/port/stats")
        grow = ("tx_packets", "tx_bytes", "tx_req_packets", "rx_packets", "rx_acks")
        while True:  # until every counter grew (an event; how soon is not asserted)
            b = tel.get(f"/rnic/qp/stats,{qpn:#x}")  # hex QPNs work too
            pb = tel.get("/rnic/port/stats")
            if all(b[k] > a[k] for k in grow) and pb["tx_frames"] > pa["tx_frames"] and \
                    pb["rx_frames"] > pa["rx_frames"] and pb["polls"] > pa["polls"]:
                break
            assert time.time() < deadline + 30 and cli.poll() is None, (a, b)
            time.sleep(0.05)
        # the QP's congestion-control state (the live cc_trace): --cc none, so no rate or
        # alpha, and the default loss window bounds the flight
        cc = b["cc"]
        assert set(cc) == {"rate_mbps", "target_mbps", "cc_window_pkts", "loss_window_pkts",
                           "alpha_ppm", "rtt_us"}, cc
        assert cc["loss_window_pkts"] > 0 and cc["rate_mbps"] == 0 and cc["alpha_ppm"] == 0, cc
        # errors: an unknown QPN or a missing parameter give a null reply
        assert tel.get(f"/rnic/qp/stats,{qpn + 1000}") is None
        assert tel.get("/rnic/qp/stats") is None
        assert tel.get("/rnic/qp/stats,abc") is None
    finally:
        if tel:
            tel.close()
        try:
            cout, cerr = cli.communicate(timeout=60)
            sout, _ = srv.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            cli.kill()
            srv.kill()
            raise
    assert cli.returncode == 0, f"client failed:\n{cout}{cerr}\nserver:\n{sout}"
    assert srv.returncode == 0, f"server failed:\n{sout}"

    assert a["qpn"] == qpn and a["type"] == "RC" and a["state"] == "RTS"
    for k in ("tx_packets", "tx_bytes", "tx_req_packets", "rx_packets", "rx_acks"):
        assert b[k] > a[k] > 0, (k, a[k], b[k])  # growing while traffic flows
    assert pb["tx_frames"] > pa["tx_frames"] > 0 and pb["rx_frames"] > pa["rx_frames"] > 0
    assert pb["polls"] > pa["polls"]
    # the device adds up its QPs; it was read after the QP
    assert pb["device"]["tx_packets"] >= b["tx_packets"]

    res = json.load(open(js))["results"]
    q, port, dev = res["qp_counters"], res["port_counters"], res["device_counters"]
    assert set(b) - {"qpn", "type", "state", "rtt", "cc", "sq_psn", "una", "epsn"} == set(q)
    # the live PSNs (24 bits): the requester's next one moved while data flowed
    assert all(0 <= x[k] < 1 << 24 for x in (a, b) for k in ("sq_psn", "una", "epsn")), (a, b)
    assert b["sq_psn"] != a["sq_psn"], (a, b)
    assert set(pb) - {"port_id", "device", "rtt"} == set(port)
    # RTT figures (not counters): the adaptive timeout is never below --rto-min (its default
    # 500 us) nor above --rto-max (1 s)
    assert b["rtt_samples"] > 0 and b["rtt"]["qps_sampled"] == 1, b
    assert 500 <= b["rtt"]["rto_us"] <= 1000000 and 500 <= pb["rtt"]["rto_us"] <= 1000000, (b, pb)
    assert res["rtt"]["qps_sampled"] == 1 and res["rtt"]["rto_us"] >= 500, res["rtt"]
    assert res["rtt"]["stall_us"] >= 0, res["rtt"]
    assert set(pb["device"]) == set(dev)
    for k in q:
        assert b[k] <= q[k], (k, b[k], q[k])
        assert pb["device"][k] <= dev[k], (k, pb["device"][k], dev[k])
    for k in port:
        assert pb[k] <= port[k], (k, pb[k], port[k])
    assert q["tx_packets"] == dev["tx_packets"] > b["tx_packets"]  # one QP, still counting after b
    assert q["send_completions"] == res["iters"] > 0
    # the same figures are printed at exit
    printed = {ln.split()[0]: int(ln.split()[1]) for ln in cerr.splitlines()
               if ln.startswith("  ") and len(ln.split()) > 1 and ln.split()[1].isdigit()}
    assert printed["tx_packets"] == q["tx_packets"] and printed["tx_frames"] == port["tx_frames"], cerr
