# SPDX-License-Identifier: BSD-3-Clause
"""Fault: the rnic's TX ring full. Every frame is accounted for by a
named counter, none is lost, no mbuf leaks, and the transfer completes byte-exact.

On a veth the af_packet PMD's ring never stays full: its sendto() transmits at once. It
does while the interface is down: sendto() fails (ENETDOWN), the frames stay in the ring
(TP_STATUS_SEND_REQUEST) and go at the next sendto() after the link is up. The rnic then
keeps what the ring refused in its batch (tx_ring_full) and tells the engine to hold
later frames (tx_ring_held, no PSN advances); nothing is dropped.

The sequence, each step waited for on an event (the rnics' telemetry):

1. rc_pingpong of 1 MiB messages (1024 packets at MTU 1024); the client's af_packet ring
   has 256 frames, its window 768 packets (--max-inflight 768, --loss-window off), the
   server's 128 (below the client's 256-frame ring) and its ring 1024 (above 768). So no
   receive ring can overflow, whatever the host's load.
2. The server is paused by PFC (an XOFF at maximum quanta; --link-rate 0.001 makes it
   33.5 s) before its client starts: it sends nothing. The client sends its window (768
   packets) and waits for an ACK that cannot come; the server has all 768.
3. The client's veth goes down. Nothing is in flight. After the ACK timeout (--rto fixed -u 20:
   4.3 s) the client goes back and resends its window: 768 frames into a 256-frame ring
   that cannot drain. The wait ends when the client counts tx_ring_full.
4. The link comes up: the ring drains, the held frames follow; every resent packet
   reaches the server as a duplicate (rx_dup_requests). Then an XON resumes the server
   and the transfer completes.

Asserted: both exit 0 after ITERS ping-pongs (the client compares every echoed byte);
each QP's RoCE frames sent = the peer's received, both ways (none lost); the first sends
= ITERS x 1024 request packets at each end; the resent packets = the server's duplicates
= 768 per go-back; the ring was full (tx_ring_full >= 1) and the engine held frames
(tx_ring_held >= 1), no frame dropped for want of an mbuf; imissed 0 at both; the
mempools' in-use counts at exit equal to those of the same transfer without the fault.
"""
import json
import subprocess

import pytest

from conftest import RNIC, eal, sh
from test_hostile import mac_of, no_ipv6
from test_liveqp import kill, pfc, quiet_socket, wait_for
from rocewan.testbed.telemetry import Telemetry

SIZE, ITERS = 1 << 20, 8
PKTS = SIZE // 1024
WINDOW, SRV_WINDOW, CLI_RING = 768, 128, 256
# --rto fixed: the go-back under test is IBTA's timer (-u 20: 4.3 s from every ACK), which
# resends the whole window at each timeout; the adaptive default resends the head first
COMMON = f"-s {SIZE} -n {ITERS} --rto fixed -u 20 --link-rate 0.001"
SRV_OPTS = f"{COMMON} --chk --max-inflight {SRV_WINDOW}"
CLI_OPTS = f"{COMMON} --max-inflight {WINDOW} --loss-window off"


def start(vp, tmp_path, side, prefix, tag):
    """rnic rc_pingpong on side 1 (server) or 0 (client); output to a file."""
    js, log = tmp_path / f"{tag}-{side}.json", tmp_path / f"{tag}-{side}.log"
    e = eal(vp.ifs[side], prefix)
    if side == 0:
        e = e.replace("framecnt=1024", f"framecnt={CLI_RING}")
    opts, peer = (SRV_OPTS, "") if side == 1 else (CLI_OPTS, vp.kip[1])
    p = subprocess.Popen(
        f"exec ip netns exec {vp.ns[side]} {RNIC} {e} -- --ip {vp.rip[side]}/24 {opts} "
        f"--json {js} rc_pingpong {peer}", shell=True, start_new_session=True,
        stdout=open(log, "w"), stderr=subprocess.STDOUT, text=True)
    p.log, p.js = log, js
    if side == 1:
        wait_for(lambda: "Waiting for client" in log.read_text(),
                 lambda: f"server never listened:\n{log.read_text()}", lambda: p.poll() is None)
    return p


def finish(procs):
    for p in procs:
        try:
            p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    outs = [p.log.read_text() for p in procs]
    for p in procs:
        assert p.returncode == 0, "\n----\n".join(outs)
    return [json.load(open(p.js))["results"] for p in procs]


def check_transfer(srv, cli):
    qs, qc = srv["qp_counters"], cli["qp_counters"]
    for r in (srv, cli):
        q = r["qp_counters"]
        assert r["iters"] == ITERS and r["completion_errors"] == 0, r
        assert (q["send_completions"], q["recv_completions"]) == (ITERS, ITERS), q
        assert q["tx_req_packets"] == q["rx_req_packets"] == ITERS * PKTS, q
        assert q["rx_req_bytes"] == ITERS * SIZE, q
        assert r["pmd_counters"]["imissed"] == 0, r["pmd_counters"]
    # every RoCE frame one QP handed to its port reached the other QP: none lost
    assert qc["tx_packets"] == qs["rx_packets"] and qs["tx_packets"] == qc["rx_packets"], (qs, qc)


@pytest.fixture(scope="module")
def clean_ring(tmp_path_factory):
    """The same transfer without the fault: the mempool use it leaves at exit."""
    from conftest import VethPair
    vp = VethPair()
    procs = []
    try:
        tmp = tmp_path_factory.mktemp("ringclean")
        procs.append(start(vp, tmp, 1, "trs" + vp.ns[1][-6:], "clean"))
        procs.append(start(vp, tmp, 0, "trc" + vp.ns[0][-6:], "clean"))
        srv, cli = finish(procs)
        check_transfer(srv, cli)
        assert cli["port_counters"]["tx_ring_full"] == 0, cli["port_counters"]
        yield srv, cli
    finally:
        kill(procs)
        vp.close()


def test_rnic_tx_ring_full(veth_pair, tmp_path, clean_ring):
    vp = veth_pair
    no_ipv6(vp)
    pfx = ["trc" + vp.ns[0][-6:], "trs" + vp.ns[1][-6:]]
    cmac = mac_of(vp.ns[0], vp.ifs[0])
    to_srv = [quiet_socket(vp.ns[0], vp.ifs[0])]   # PFC to the server, from the client's side
    procs, tel = [], {}
    try:
        srv = start(vp, tmp_path, 1, pfx[1], "fault")
        procs.append(srv)
        tel["s"] = Telemetry(f"/var/run/dpdk/{pfx[1]}/dpdk_telemetry.v2", 30,
                             lambda: srv.poll() is None)

        def xoff_server(quanta):
            ctr = "pfc_rx_xoff" if quanta else "pfc_rx_xon"
            before = tel["s"].get("/rnic/port/stats")[ctr]
            to_srv[0].send(pfc(cmac, quanta))
            wait_for(lambda: tel["s"].get("/rnic/port/stats")[ctr] > before,
                     lambda: f"server: no {ctr}", lambda: srv.poll() is None)

        wait_for(lambda: "/rnic/port/stats" in tel["s"].get("/"),
                 lambda: "server: no /rnic/port/stats", lambda: srv.poll() is None)
        xoff_server(0xFFFF)
        cli = start(vp, tmp_path, 0, pfx[0], "fault")
        procs.append(cli)
        tel["c"] = Telemetry(f"/var/run/dpdk/{pfx[0]}/dpdk_telemetry.v2", 30,
                             lambda: cli.poll() is None)
        qpn = {b: wait_for(lambda: tel[b].get("/rnic/qp/list"), lambda: f"{b}: no QP",
                           lambda: cli.poll() is None and srv.poll() is None)[0] for b in "sc"}

        def qstat(b):
            return tel[b].get(f"/rnic/qp/stats,{qpn[b]}")

        def cport():
            return tel["c"].get("/rnic/port/stats")

        # the client's window is out and all of it arrived; the client waits for an ACK
        wait_for(lambda: qstat("s")["rx_req_packets"] == WINDOW,
                 lambda: f"server: {qstat('s')['rx_req_packets']} of {WINDOW}", lambda: srv.poll() is None)
        q = qstat("c")
        assert (q["sq_psn"] - q["una"]) & 0xFFFFFF == WINDOW and q["tx_req_packets"] == WINDOW, q
        xoff_server(0xFFFF)   # a fresh 33.5 s for what follows
        sh(f"ip -n {vp.ns[0]} link set {vp.ifs[0]} down")
        # the ACK timeout: the window goes again, into a ring that cannot drain
        wait_for(lambda: cport()["tx_ring_full"] >= 1,
                 lambda: f"client: ring never full: {cport()}", lambda: cli.poll() is None)
        sh(f"ip -n {vp.ns[0]} link set {vp.ifs[0]} up")
        # the link went down under the socket: it would report ENETDOWN once; a new one
        to_srv[0].close()
        to_srv[0] = quiet_socket(vp.ns[0], vp.ifs[0])
        # every resent packet reaches the server (a duplicate there), then resume it
        wait_for(lambda: qstat("s")["rx_dup_requests"] >= WINDOW,
                 lambda: f"server: {qstat('s')['rx_dup_requests']} duplicates of {WINDOW}",
                 lambda: srv.poll() is None)
        xoff_server(0)
    except BaseException:
        kill(procs)
        for p in procs:
            p.wait()
            print(f"---- output:\n{p.log.read_text()[-3000:]}")
        raise
    finally:
        for t in tel.values():
            t.close()
        to_srv[0].close()
    srv_r, cli_r = finish(procs)
    qs, qc, pc = srv_r["qp_counters"], cli_r["qp_counters"], cli_r["port_counters"]
    print(f"client port: tx_ring_full {pc['tx_ring_full']}, tx_ring_held {pc['tx_ring_held']}, "
          f"tx_drop_full {pc['tx_drop_full']}, tx_frames {pc['tx_frames']}; pmd {cli_r['pmd_counters']}")
    print(f"client QP: tx_packets {qc['tx_packets']}, timeouts {qc['timeouts']}, retries "
          f"{qc['retries']}, tx_retransmits {qc['tx_retransmits']}, tx_errors {qc['tx_errors']}; "
          f"server QP: rx_packets {qs['rx_packets']}, rx_dup_requests {qs['rx_dup_requests']}; "
          f"mempool {srv_r['mempool']} {cli_r['mempool']}")
    check_transfer(srv_r, cli_r)
    # the ring was full and the engine held frames; nothing dropped for it
    assert pc["tx_ring_full"] >= 1 and pc["tx_ring_held"] >= 1, pc
    assert pc["tx_drop_nombuf"] == 0, pc
    # no control frame needed the full ring (no ARP, ND or ICMP to answer: IPv6 is off)
    assert pc["tx_drop_full"] == 0, pc
    # the PMD counts as errors the frames written into its ring while sendto() failed
    # (ENETDOWN): the whole ring, all sent after the link came up (counted above)
    assert cli_r["pmd_counters"]["oerrors"] == CLI_RING, cli_r["pmd_counters"]
    # each go-back resent the whole window, every packet of it arrived (a duplicate)
    assert qc["timeouts"] == qc["retries"] >= 1, qc
    assert qc["tx_retransmits"] == WINDOW * qc["retries"] == qs["rx_dup_requests"], (qc, qs)
    assert qc["retry_exceeded"] == 0 and qs["tx_retransmits"] == 0, (qc, qs)
    # 0 leaked mbufs
    for r, c in zip((srv_r, cli_r), clean_ring):
        assert r["mempool"]["in_use"] == c["mempool"]["in_use"], (r["mempool"], c["mempool"])
