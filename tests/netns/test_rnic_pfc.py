"""802.1Qbb PFC in the rnic: a received pause stops the sender's RoCE data.

Two rnics on a veth pair run write_bw (A -> B) at full speed for a few seconds.
A raw AF_PACKET socket on B's end of the wire (the link partner of A) injects
PFC frames toward A (tests/dpdk/emu/lemu_net.py builds them):

  t5:  ten XOFFs on priority 5 (lossy for the rnic): must change nothing;
  t3:  XOFF on priority 3 (the rnic's, DSCP 26 >> 3) with 0xffff quanta,
       refreshed every 5 ms for ~300 ms: A's data must stop;
  ton: XON on priority 3: A must resume at once.

A capture on the same veth end timestamps both the injected PFC frames and
A's data. B runs --pfc off: the af_packet PMD also hands B the frames sent
from its own interface, and B is not the subject (it counts them as ignored).
A uses --link-rate 0.1 so one XOFF lasts 335.5 ms: Python's refresh timing on a
loaded machine (a 33.5 ms quantum at --link-rate 1 once expired between two
refreshes) cannot end the pause early; the XON ends it.

The second test is the negative control: the same injection with --pfc off
on A leaves A's data flowing through the whole pause window.
"""
import json
import os
import socket
import struct
import subprocess
import sys
import time

from conftest import BUILD, VethPair

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "dpdk", "emu"))
import lemu_net  # noqa: E402  (PFC frame builder, namespace-bound AF_PACKET sockets)

RNIC = os.path.join(BUILD, "app", "rnic", "rnic")
RNIC_BURST = 32  # app/rnic/rnic_port.h: frames per TX burst
PAUSE_S = 0.3
REFRESH_S = 0.005


def eal(iface, prefix):
    # 4096-frame rings: B keeps up with A at full speed, so no loss-driven retransmissions
    return (f"--no-huge -m 512 --no-shconf --no-pci --file-prefix {prefix} "
            f"--log-level=lib.eal:error --vdev net_af_packet0,iface={iface},"
            f"framesz=2048,blocksz=4096,framecnt=4096,qpairs=1")


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


def read_pcap_ns(path):
    """[(ts_ns, wire length, frame head)] of a nanosecond pcap (tcpdump --time-stamp-precision=nano)."""
    out = []
    with open(path, "rb") as f:
        magic = struct.unpack("<I", f.read(24)[:4])[0]
        assert magic == 0xA1B23C4D, f"{path}: not a nanosecond pcap (magic {magic:#x})"
        while True:
            h = f.read(16)
            if len(h) < 16:
                break
            sec, nsec, incl, orig = struct.unpack("<IIII", h)
            out.append((sec * 1000000000 + nsec, orig, f.read(incl)))
    return out


def is_roce_data(wire_len, frame):
    """A RoCEv2 frame (IPv4/UDP 4791) carrying a full MTU of payload: A's WRITE data, not B's ACKs."""
    return (wire_len > 1000 and len(frame) >= 38 and frame[12:14] == b"\x08\x00" and frame[23] == 17
            and struct.unpack_from("!H", frame, 14 + (frame[14] & 15) * 4 + 2)[0] == 4791)


def run_with_pfc(tmp_path, a_opts):
    """write_bw A -> B with the PFC script injected toward A; returns (client json, server json, capture)."""
    if not os.path.exists(RNIC):
        raise AssertionError(f"{RNIC} is not built (run `make build`)")
    vp = VethPair(subnet="10.56.0")
    procs = []
    try:
        pcap = tmp_path / "wire.pcap"
        # both directions on B's end: A's data arrives, the injected PFC leaves
        cap = subprocess.Popen(
            ["ip", "netns", "exec", vp.ns[1], "tcpdump", "-i", vp.ifs[1], "-s", "64", "-B", "65536",
             "--time-stamp-precision=nano", "-w", str(pcap)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        procs.append(cap)
        js = [tmp_path / "server.json", tmp_path / "client.json"]
        srv = subprocess.Popen(
            f"ip netns exec {vp.ns[1]} {RNIC} {eal(vp.ifs[1], 'pfcs')} -- --ip {vp.rip[1]}/24 "
            f"--pfc off --json {js[0]} write_bw",
            shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(srv)
        time.sleep(1.5)
        cli = subprocess.Popen(
            f"ip netns exec {vp.ns[0]} {RNIC} {eal(vp.ifs[0], 'pfcc')} -- --ip {vp.rip[0]}/24 "
            f"-s 65536 -D 3 --link-rate 0.1 {a_opts} --json {js[1]} write_bw {vp.kip[1]}",
            shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(cli)
        inj = ns_socket(vp.ns[1], vp.ifs[1])
        mac_b = bytes.fromhex("02000000b006")
        time.sleep(1.3)  # the exchange is done and A is sending
        for _ in range(10):
            inj.send(lemu_net.pfc_frame(src=mac_b, prio=5))
            time.sleep(REFRESH_S)
        t0 = time.monotonic()
        while time.monotonic() - t0 < PAUSE_S:
            inj.send(lemu_net.pfc_frame(src=mac_b, prio=3))
            time.sleep(REFRESH_S)
        inj.send(lemu_net.pfc_frame(src=mac_b, prio=3, quanta=0))
        inj.close()
        cout, _ = cli.communicate(timeout=60)
        sout, _ = srv.communicate(timeout=30)
        time.sleep(0.2)
        cap.send_signal(2)
        _, cerr = cap.communicate(timeout=30)
        assert cli.returncode == 0, f"client failed:\n{cout}\nserver:\n{sout}"
        assert srv.returncode == 0, f"server failed:\n{sout}\nclient:\n{cout}"
        assert "\n0 packets dropped by kernel" in "\n" + cerr, f"the capture lost frames: {cerr}"
        rc, rs = (json.load(open(j)) for j in (js[1], js[0]))
        return rc, rs, read_pcap_ns(pcap), cout
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        vp.close()


def timeline(frames):
    """(t5, t3, ton, [data timestamps from A]) from the capture."""
    pfc = [(ts, lemu_net.parse_pfc(f)) for ts, _, f in frames if f[12:14] == b"\x88\x08"]
    pfc = [(ts, p) for ts, p in pfc if p]
    t5 = min(ts for ts, (en, q) in pfc if en == 1 << 5)
    t3 = min(ts for ts, (en, q) in pfc if en == 1 << 3 and q[3])
    ton = min(ts for ts, (en, q) in pfc if en == 1 << 3 and q[3] == 0)
    data = sorted(ts for ts, n, f in frames if is_roce_data(n, f))
    return t5, t3, ton, data


def count(data, lo, hi):
    return sum(1 for t in data if lo <= t < hi)


def test_pfc_pauses_sender_and_xon_resumes(tmp_path):
    rc, rs, frames, cout = run_with_pfc(tmp_path, "")
    t5, t3, ton, data = timeline(frames)
    ms = 1000000
    assert ton - t3 > 250 * ms, "the injected pause was shorter than planned"
    before = count(data, t5 - (t3 - t5), t5)
    during5 = count(data, t5, t3)
    after3 = [t for t in data if t3 <= t < ton]
    resumed = [t for t in data if t >= ton]
    assert before > 0, f"A was not sending when the pause started (transfer too short?)\n{cout}"
    # priority 5 is lossy for the rnic: data keeps flowing
    assert during5 > 0.3 * before, (before, during5)
    pc = rc["results"]["port_counters"]
    print("rnic:", {k: v for k, v in pc.items() if "pfc" in k or "paused" in k or "behind" in k})
    # priority 3: what leaves after the XOFF hit the wire is the tail of the burst the kernel
    # was sending when it reached A's RX ring (the XOFF window) plus the burst already committed
    # in the rnic's TX batch (the overshoot): two TX bursts on a quiet host (docs/pfc.md). The
    # capture here timestamps the XOFF when it leaves B's end, though, and on a loaded host the
    # kernel may take milliseconds to deliver it into A's ring (a CI run saw the last frame
    # 2 ms after it, while A had not yet been told). The one-burst bounds are therefore checked
    # on the rnic's own counters below; the wire must show A silent for the rest of the pause.
    settle = 30 * ms
    late = [t for t in after3 if t >= t3 + settle]
    assert not late, (f"{len(late)} data frames more than {settle / ms:.0f} ms after the XOFF "
                      f"(first {(late[0] - t3) / ms:.3f} ms after it, pause {(ton - t3) / ms:.0f} ms)")
    assert resumed, "A never resumed after XON"
    resume_ms = (resumed[0] - ton) / 1e6
    # on a quiet host 0.1-0.7 ms; the bound leaves room for a loaded kernel's delivery delay
    # (5 ms seen with three busy loops on two cores) and still tells an XON that worked
    # from the pause timer running out (~330 ms after the XON here)
    assert resume_ms < 50, f"A resumed {resume_ms:.3f} ms after XON"
    last_ms = (after3[-1] - t3) / 1e6 if after3 else 0.0
    print(f"wire: {len(after3)} data frames after XOFF (last {last_ms:.3f} ms after it), "
          f"resume {resume_ms:.3f} ms after XON, {before} frames in the {(t3 - t5) / 1e6:.1f} ms "
          f"before t5, {during5} during the priority-5 XOFFs")

    q = rc["results"]["qp_counters"]
    n_xoff3 = sum(1 for _, _, f in frames if f[12:14] == b"\x88\x08" and f[17] == 1 << 3
                  and f[24:26] != b"\0\0")
    assert pc["pfc_rx_xoff"] == n_xoff3, (pc["pfc_rx_xoff"], n_xoff3)
    assert pc["pfc_rx_xon"] == 1
    assert pc["pfc_rx_ignored"] == 10  # the priority-5 frames
    assert pc["pfc_pauses"] == 1  # refreshes reload the one pause; the XON ends it
    assert pc["tx_paused_ns"] >= 0.8 * (ton - t3), (pc["tx_paused_ns"], ton - t3)
    assert pc["tx_paused_ns"] <= ton - t3 + 40 * ms
    assert pc["tx_pfc_held"] > 0
    assert pc["pfc_overshoot_max_frames"] <= RNIC_BURST
    assert pc["pfc_xoff_window_max_frames"] <= RNIC_BURST
    assert "tx_rx_behind_held" in pc, "the pre-TX check counter is missing from --json"
    assert pc["pfc_overshoot_frames"] >= pc["pfc_overshoot_max_frames"]
    assert pc["pfc_overshoot_max_bytes"] <= RNIC_BURST * 1100  # MTU 1024 frames
    # a paused link is not a lost packet: no timeout, no retransmission, every byte delivered once
    assert q["timeouts"] == 0 and q["tx_retransmits"] == 0, q
    assert rc["results"]["completion_errors"] == 0
    iters = rc["results"]["iters"]
    assert iters > 0
    assert rs["results"]["qp_counters"]["rx_req_bytes"] == iters * 65536
    assert rs["results"]["qp_counters"]["rx_dup_requests"] == 0
    assert rc["config"]["pfc"] is True and rc["config"]["lossless"] == [3]


def test_pfc_off_ignores_pause(tmp_path):
    rc, _, frames, cout = run_with_pfc(tmp_path, "--pfc off")
    t5, t3, ton, data = timeline(frames)
    before = count(data, t3 - (ton - t3), t3)
    during = count(data, t3, ton)
    assert before > 0, cout
    assert during > 0.3 * before, (before, during)
    pc = rc["results"]["port_counters"]
    # every PFC frame the capture saw leave B's end reached A and was ignored there; how many
    # refreshes Python managed to send in the 300 ms depends on the host's load, so the count
    # is taken from the wire, not from the plan
    n_pfc = sum(1 for _, _, f in frames if f[12:14] == b"\x88\x08")
    assert n_pfc > 11, n_pfc  # the ten priority-5 XOFFs, at least one priority-3 XOFF, the XON
    assert pc["pfc_rx_ignored"] == pc["rx_pfc"] == n_pfc, (pc["pfc_rx_ignored"], pc["rx_pfc"], n_pfc)
    assert pc["pfc_pauses"] == 0 and pc["tx_paused_ns"] == 0 and pc["tx_pfc_held"] == 0
    assert rc["config"]["pfc"] is False
