"""802.1Qbb PFC in the rnic: a received pause stops the sender's RoCE data.

Two rnics on a veth pair run write_bw (A -> B, -n 4000 x 64 KiB). A raw AF_PACKET
socket on B's end of the wire (the link partner of A) injects PFC frames toward A
(tests/dpdk/emu/lemu_net.py builds them), once a capture on A's own end of the
veth shows A's data flowing:

  ten XOFFs on priority 5 (lossy for the rnic): must change nothing;
  XOFF on priority 3 (the rnic's, DSCP 26 >> 3) with 0xffff quanta, refreshed every
  5 ms for ~300 ms: A's data must stop; then one XON: A must resume.

What is checked holds on a loaded host by construction (docs/testing.md):
  - the capture is on A's own veth end, so it orders the injected frames as they reach
    A's interface and A's data as it leaves it: A transmits through the af_packet socket
    with qdisc_bypass=0, so each frame is tapped inside A's own sendto(). tcpdump's socket
    is opened after the rnic's, so the kernel hands each arriving frame to tcpdump first;
    a frame tapped after the XOFF was therefore handed to the PMD either after the RX check
    before which the XOFF arrived (the XOFF window) or after the XOFF was read (the
    overshoot). So the number of data frames between the XOFF and the XON in the capture
    lies between A's own pfc_overshoot_frames and pfc_overshoot_frames +
    pfc_xoff_window_frames of that one pause (docs/pfc.md) -- exact bounds from the
    sender's counters, whatever the scheduler does;
  - A uses --link-rate 0.001, so one XOFF lasts 33.5 s: only the XON can end the pause
    (pfc_pauses == 1 and A resumed), never a late refresh;
  - the pause is obeyed until the XON: nothing else leaves A in between.
How soon after the XOFF A's data stops on the wire (one TX burst at most on a quiet
host) is a timing claim: bench/rnic/pfc_wire.py measures it (docs/claims.md).

B runs --pfc off: the af_packet PMD also hands B the frames sent from its own
interface, and B is not the subject (it counts them as ignored).

The second test is the negative control: the same injection with --pfc off on A
leaves A's data flowing after the XOFF (the XON is sent only once the capture has
shown more data frames after the XOFF than two TX bursts).
"""
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time

from conftest import BUILD, VethPair

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "dpdk", "emu"))
import lemu_net  # noqa: E402  (PFC frame builder, namespace-bound AF_PACKET sockets)
from rocewan.testbed.topo import eal_lcores  # noqa: E402

RNIC = os.path.join(BUILD, "app", "rnic", "rnic")
RNIC_BURST = 32  # app/rnic/rnic_port.h: frames per TX burst
PAUSE_S = 0.3
REFRESH_S = 0.005
ITERS = 4000  # 256 MiB: A is still sending when the XOFF comes, and after the XON
TX_DEPTH = 16  # WRITEs outstanding (-t): bounds A's unacknowledged frames; see eal()


def eal(iface, prefix, bypass=1):
    # 4096-frame rings. B's RX ring cannot overflow, however long the host deschedules B:
    # A keeps at most TX_DEPTH x 64 request frames unacknowledged (1024), every frame
    # waiting in B's ring is one of them, and B's own ACKs echoed into its ring number at
    # most as many. So no loss-driven retransmission, by construction (run 29 in
    # docs/testing.md: perftest's default -t 128 lets 8192 frames fly, and a stall of B
    # overflowed the ring: 5635 NAK-driven retransmissions, 0 timeouts)
    # qdisc_bypass=0 (A): the kernel taps each frame for the capture inside A's sendto()
    return (f"{eal_lcores()} --no-huge -m 512 --no-shconf --no-pci --file-prefix {prefix} "
            f"--log-level=lib.eal:error --vdev net_af_packet0,iface={iface},"
            f"framesz=2048,blocksz=4096,framecnt=4096,qpairs=1,qdisc_bypass={bypass}")


def ns_socket(ns, ifn):
    """A raw AF_PACKET socket on @ifn inside namespace @ns (setns on this thread only)."""
    here = os.open("/proc/self/ns/net", os.O_RDONLY)
    there = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
    try:
        lemu_net._setns_fd(there)
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(lemu_net.ETH_P_ALL))
        s.bind((ifn, 0))
    finally:
        lemu_net._setns_fd(here)
        os.close(here)
        os.close(there)
    return s


class PcapStream(threading.Thread):
    """tcpdump -w - on an interface, read as it comes: [(wire length, frame head)] in
    capture order, with conditions to wait for."""

    def __init__(self, ns, ifn):
        super().__init__(daemon=True)
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, "tcpdump", "-i", ifn, "-s", "64", "-B", "65536", "-U",
             "--time-stamp-precision=nano", "-w", "-"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.frames = []
        self.ts = []  # kernel timestamps (ns), for bench/rnic/pfc_wire.py only
        self.cond = threading.Condition()
        self.start()

    def run(self):
        f = self.proc.stdout
        if len(f.read(24)) < 24:
            return
        while True:
            h = f.read(16)
            if len(h) < 16:
                break
            sec, nsec, incl, orig = struct.unpack("<IIII", h)
            with self.cond:
                self.ts.append(sec * 1000000000 + nsec)
                self.frames.append((orig, f.read(incl)))
                self.cond.notify_all()

    def wait_for(self, pred, timeout):
        with self.cond:
            return self.cond.wait_for(lambda: pred(self.frames), timeout)

    def stop(self):
        time.sleep(0.2)
        self.proc.send_signal(2)
        err = self.proc.communicate(timeout=30)[1].decode()
        self.join(timeout=30)
        return err


def packet_socket_count(ns):
    with subprocess.Popen(["ip", "netns", "exec", ns, "cat", "/proc/net/packet"],
                          stdout=subprocess.PIPE, text=True) as p:
        return len(p.stdout.read().splitlines()) - 1


def is_roce_data(wire_len, frame):
    """A RoCEv2 frame (IPv4/UDP 4791) carrying a full MTU of payload: A's WRITE data, not B's ACKs."""
    return (wire_len > 1000 and len(frame) >= 38 and frame[12:14] == b"\x08\x00" and frame[23] == 17
            and struct.unpack_from("!H", frame, 14 + (frame[14] & 15) * 4 + 2)[0] == 4791)


def pfc_of(frame):
    return lemu_net.parse_pfc(frame) if frame[12:14] == b"\x88\x08" else None


def is_xoff3(frame):
    p = pfc_of(frame)
    return p is not None and p[0] == 1 << 3 and p[1][3] != 0


def run_with_pfc(tmp_path, a_opts, control=False):
    """write_bw A -> B with the PFC script injected toward A once A's data flows;
    returns (client json, server json, [(wire length, frame head)] on A's end, output)."""
    if not os.path.exists(RNIC):
        raise AssertionError(f"{RNIC} is not built (run `make build`)")
    vp = VethPair(subnet="10.56.0")
    procs = []
    cap = None
    try:
        js = [tmp_path / "server.json", tmp_path / "client.json"]
        srv = subprocess.Popen(
            f"ip netns exec {vp.ns[1]} {RNIC} {eal(vp.ifs[1], 'pfcs')} -- --ip {vp.rip[1]}/24 "
            f"--pfc off --json {js[0]} write_bw",
            shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(srv)
        time.sleep(1.5)
        base = packet_socket_count(vp.ns[0])
        # --rto-min 1s: "a paused link is not a lost packet: no timeout" is about the pause;
        # the adaptive timer's 10 ms floor would fire on a loaded host's stall of B
        cli = subprocess.Popen(
            f"ip netns exec {vp.ns[0]} {RNIC} {eal(vp.ifs[0], 'pfcc', 0)} -- --ip {vp.rip[0]}/24 "
            f"-s 65536 -n {ITERS} -t {TX_DEPTH} --link-rate 0.001 --rto-min 1s {a_opts} --json {js[1]} "
            f"write_bw {vp.kip[1]}",
            shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(cli)
        # the capture's socket must be newer than the rnic's (see the module docstring)
        t0 = time.monotonic()
        while packet_socket_count(vp.ns[0]) <= base:
            assert cli.poll() is None and time.monotonic() - t0 < 60, "the client never opened its port"
            time.sleep(0.01)
        cap = PcapStream(vp.ns[0], vp.ifs[0])
        procs.append(cap.proc)
        inj = ns_socket(vp.ns[1], vp.ifs[1])
        mac_b = bytes.fromhex("02000000b006")
        assert cap.wait_for(lambda fr: any(is_roce_data(n, f) for n, f in fr[-64:]), 120), \
            "A's data never showed on its veth"
        for _ in range(10):
            inj.send(lemu_net.pfc_frame(src=mac_b, prio=5))
        if control:
            # no pause: A's data keeps leaving after the XOFF, well past two TX bursts
            inj.send(lemu_net.pfc_frame(src=mac_b, prio=3))

            def flowing(fr):
                x = next((k for k, (_, f) in enumerate(fr) if is_xoff3(f)), None)
                return x is not None and sum(1 for n, f in fr[x:] if is_roce_data(n, f)) > 4 * RNIC_BURST
            flowed = cap.wait_for(flowing, 60)
        else:
            t0 = time.monotonic()
            while time.monotonic() - t0 < PAUSE_S:
                inj.send(lemu_net.pfc_frame(src=mac_b, prio=3))
                time.sleep(REFRESH_S)
        inj.send(lemu_net.pfc_frame(src=mac_b, prio=3, quanta=0))
        inj.close()
        cout, _ = cli.communicate(timeout=120)
        sout, _ = srv.communicate(timeout=30)
        cerr = cap.stop()
        assert cli.returncode == 0, f"client failed:\n{cout}\nserver:\n{sout}"
        assert srv.returncode == 0, f"server failed:\n{sout}\nclient:\n{cout}"
        assert "\n0 packets dropped by kernel" in "\n" + cerr, f"the capture lost frames: {cerr}"
        if control:
            assert flowed, "with --pfc off, A's data did not keep flowing after the XOFF"
        rc, rs = (json.load(open(j)) for j in (js[1], js[0]))
        run_with_pfc.last_ts = cap.ts
        return rc, rs, cap.frames, cout
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        vp.close()


def timeline(frames):
    """Indices (first priority-5 XOFF, first priority-3 XOFF, the XON) in capture order."""
    i5 = next(k for k, (_, f) in enumerate(frames) if (pfc_of(f) or (0,))[0] == 1 << 5)
    i3 = next(k for k, (_, f) in enumerate(frames) if is_xoff3(f))
    ion = next(k for k, (_, f) in enumerate(frames) if (pfc_of(f) or (0, [1] * 8))[0] == 1 << 3
               and pfc_of(f)[1][3] == 0)
    return i5, i3, ion


def data_count(frames, lo, hi):
    return sum(1 for n, f in frames[lo:hi] if is_roce_data(n, f))


def test_pfc_pauses_sender_and_xon_resumes(tmp_path):
    rc, rs, frames, cout = run_with_pfc(tmp_path, "")
    i5, i3, ion = timeline(frames)
    assert i5 < i3 < ion
    before, during = data_count(frames, 0, i5), data_count(frames, i3, ion)
    resumed = data_count(frames, ion, len(frames))
    pc = rc["results"]["port_counters"]
    print("rnic:", {k: v for k, v in pc.items() if "pfc" in k or "paused" in k or "behind" in k})
    print(f"A's end of the wire: {before} data frames before the PFC, {during} between the "
          f"priority-3 XOFF and the XON, {resumed} after it")
    assert before > 0, "the PFC was injected before A's data flowed"
    # priority 5 is lossy for the rnic: counted as ignored, it paused nothing
    assert pc["pfc_rx_ignored"] == 10
    assert pc["pfc_pauses"] == 1  # refreshes reload the one 33.5 s pause; only the XON ends it
    # the one-burst bound on the wire, reconciled with the sender's own counters: between
    # the XOFF and the XON, A's end of the veth carried its overshoot and at most the part
    # of its XOFF window that left after the XOFF arrived; nothing else (the pause is
    # obeyed until the XON), and both are at most one TX burst
    # (one pause, so its overshoot is the total and its window the largest one)
    over, win = pc["pfc_overshoot_frames"], pc["pfc_xoff_window_max_frames"]
    assert over <= during <= over + win, (during, over, win)
    assert pc["pfc_overshoot_max_frames"] == over <= RNIC_BURST and win <= RNIC_BURST
    assert pc["pfc_overshoot_max_bytes"] <= RNIC_BURST * 1100  # MTU 1024 frames
    assert resumed > 0, "A never resumed after XON"
    n_xoff3 = sum(1 for _, f in frames if is_xoff3(f))
    assert pc["pfc_rx_xoff"] == n_xoff3, (pc["pfc_rx_xoff"], n_xoff3)
    assert pc["pfc_rx_xon"] == 1
    assert pc["tx_paused_ns"] > 0 and pc["tx_pfc_held"] > 0
    assert "tx_rx_behind_held" in pc, "the pre-TX check counter is missing from --json"

    q = rc["results"]["qp_counters"]
    # a paused link is not a lost packet: no timeout, no retransmission, every byte delivered once
    assert q["timeouts"] == 0 and q["tx_retransmits"] == 0, q
    assert rc["results"]["completion_errors"] == 0
    assert rc["results"]["iters"] == ITERS
    assert rs["results"]["qp_counters"]["rx_req_bytes"] == ITERS * 65536
    assert rs["results"]["qp_counters"]["rx_dup_requests"] == 0
    # each request packet sent once (the capture may have started after the first ones)
    assert q["tx_req_packets"] == ITERS * 64
    assert data_count(frames, 0, len(frames)) <= q["tx_req_packets"]
    assert rc["config"]["pfc"] is True and rc["config"]["lossless"] == [3]


def test_pfc_off_ignores_pause(tmp_path):
    rc, _, frames, cout = run_with_pfc(tmp_path, "--pfc off", control=True)
    i5, i3, ion = timeline(frames)
    assert data_count(frames, i3, ion) > 4 * RNIC_BURST
    pc = rc["results"]["port_counters"]
    n_pfc = sum(1 for _, f in frames if pfc_of(f))
    assert pc["pfc_rx_ignored"] == pc["rx_pfc"] == n_pfc == 12, (pc, n_pfc)
    assert pc["pfc_pauses"] == 0 and pc["tx_paused_ns"] == 0 and pc["tx_pfc_held"] == 0
    assert rc["config"]["pfc"] is False
