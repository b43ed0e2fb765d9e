# SPDX-License-Identifier: BSD-3-Clause
"""Hostile frames at LIVE connected QPs: each counted under its
reason, exactly; nothing executed, no forged response taken; the transfer then completes
with checked data, no retransmission, and no leaked mbuf.

The storms of test_hostile.py hit a server before its QP exists. Here an rc_pingpong
transfer (the rnic client and an rnic --chk server on a veth pair) is frozen in the
middle, deterministically, with PFC: the server is paused (an XOFF at maximum quanta on
every priority; --link-rate 0.001 makes that 33.5 s) before its client starts, so the
client sends its first message and can go no further (a ping-pong waits for the echo);
then the client is paused too. Paused, an rnic sends no RoCE frame and advances no PSN
(rnic_port.c ops_tx), so once both have read what was already on the wire (the waits
below end on that event: each side's expected PSN equals the other's next PSN) every
PSN is fixed, and the test reads them from telemetry (/rnic/qp/stats: sq_psn, una,
epsn). Each rnic is then attacked from a raw socket with its peer's own MAC and IP and
its live QPN, so every check but the PSN ones passes:

* requests far ahead of the responder's window (REQ_AHEAD): a SEND; a WRITE with a
  random R_Key, VA 2^63 / 0 / top of memory and a 4 GiB - 1 DMA length; a READ of 1 GiB
  at VA 2^63 with a random R_Key (beyond any MR); atomics (FETCH_ADD and CMP_SWAP) at an
  address that is not 8-byte aligned. IBTA ch. 9.7: the PSN check comes first, so each
  is out of sequence (rx_out_of_sequence), never executed, and NAKed once (the NAK waits
  for the XON; later ones are suppressed until the expected PSN arrives);
* responses for PSNs never sent (RESP_AHEAD past the requester's next PSN): ACKs with
  random MSNs, NAKs of every code, READ responses and ATOMIC ACKNOWLEDGEs
  (rx_bad_responses);
* a CNP flood (rx_cnps).

Each batch is at most BATCH frames (below the 1024-frame af_packet rings) and is waited
for on the target QP's own counter (an event) before the next. Then an XON to both
resumes the transfer: ITERS ping-pongs of 4 KiB, every message checked by the server
(--chk) and every echo by the client; both --json reports must show each attack counter
exactly at its frames, exactly one PSN-sequence NAK each way (the one the attacks caused,
received by the peer as a valid NAK naming its next PSN: nothing resent), no
retransmission, no timeout, and the mempools' in-use counts at exit equal to those of
the same transfer without attacks (0 leaked mbufs).

Frames per attack are in docs/reliability.md.
"""
import json
import random
import signal
import struct
import subprocess
import time

import pytest

from conftest import RNIC, eal
from test_hostile import Attacks, mac_bytes, mac_of, no_ipv6, raw_socket
from rocewan.testbed.telemetry import Telemetry

from rocewan import icrc

SIZE, ITERS = 4096, 200
PKTS = SIZE // 1024           # packets per message at MTU 1024
PER_ATTACK = 64               # frames per attack, per rnic
BATCH = 64                    # frames in flight at most: far below the 1024-frame rings
# --rto fixed -u 24: a 68.7 s ACK timeout from every ACK (the frozen requesters wait for
# ACKs meanwhile, and "no timeout" after the resume must not depend on the host: the
# adaptive default would time out at RTT + 10 ms on a loaded host's stall);
# --link-rate 0.001: a maximum-quanta XOFF pauses for 65535 x 512 bit / 1 Mb/s = 33.5 s
OPTS = f"-s {SIZE} -n {ITERS} --rto fixed -u 24 --link-rate 0.001"
SOL_PACKET, PACKET_QDISC_BYPASS = 263, 20   # linux/socket.h, linux/if_packet.h
REQ_AHEAD, RESP_AHEAD = 0x400000, 0x400000   # 2^22: far outside any window, both ways

OP = {"send": 0x04, "write": 0x0A, "read_req": 0x0C, "read_resp": 0x10, "ack": 0x11,
      "atomic_ack": 0x12, "cmp_swap": 0x13, "fetch_add": 0x14, "cnp": 0x81}

# attack -> (the QP counter each of its frames must move by exactly one)
LIVE_ATTACKS = [
    ("oos_send", "rx_out_of_sequence"),
    ("oos_write_bogus_reth", "rx_out_of_sequence"),
    ("oos_read_beyond_mr", "rx_out_of_sequence"),
    ("oos_misaligned_atomic", "rx_out_of_sequence"),
    ("forged_ack", "rx_bad_responses"),
    ("forged_nak", "rx_bad_responses"),
    ("forged_read_resp", "rx_bad_responses"),
    ("forged_atomic_ack", "rx_bad_responses"),
    ("cnp_flood", "rx_cnps"),
]


def live_frames(name, atk, rng, n=PER_ATTACK):
    """@n frames of attack @name, built before the QPs exist: QPN 0 and each frame's PSN
    relative to the base that at_qp() adds (the responder's expected PSN for requests,
    the requester's next PSN for responses). Scapy takes milliseconds a frame; patching
    takes microseconds, so the frozen window stays short."""
    out = []
    for i in range(n):
        qpn, req, resp = 0, REQ_AHEAD + i, RESP_AHEAD + i
        if name == "oos_send":
            out.append(atk.roce(OP["send"], qpn, psn=req, payload=b"\xee" * 64))
        elif name == "oos_write_bogus_reth":
            out.append(atk.roce(OP["write"], qpn, psn=req, payload=b"\xee" * 64,
                                reth={"va": rng.choice([1 << 63, 0, 0xFFFFFFFFFFFF0000]),
                                      "rkey": rng.randrange(1 << 32), "dlen": 0xFFFFFFFF}))
        elif name == "oos_read_beyond_mr":
            out.append(atk.roce(OP["read_req"], qpn, psn=req, payload=b"",
                                reth={"va": 1 << 63, "rkey": rng.randrange(1 << 32),
                                      "dlen": 1 << 30}))
        elif name == "oos_misaligned_atomic":
            op = OP["fetch_add"] if i % 2 else OP["cmp_swap"]
            out.append(atk.roce(op, qpn, psn=req, payload=b"",
                                atomiceth={"va": 0x1000 + 1 + i % 7, "rkey": rng.randrange(1 << 32),
                                           "swap": 1, "cmp": 0}))
        elif name == "forged_ack":
            out.append(atk.roce(OP["ack"], qpn, psn=resp, payload=b"",
                                aeth={"syndrome": 0x1F, "msn": rng.randrange(1 << 24)}))
        elif name == "forged_nak":  # PSN sequence error, invalid request, remote access, RNR
            syn = (0x60, 0x61, 0x62, 0x2C)[i % 4]
            out.append(atk.roce(OP["ack"], qpn, psn=resp, payload=b"",
                                aeth={"syndrome": syn, "msn": rng.randrange(1 << 24)}))
        elif name == "forged_read_resp":
            out.append(atk.roce(OP["read_resp"], qpn, psn=resp, payload=b"\xee" * 256,
                                aeth={"syndrome": 0x1F, "msn": rng.randrange(1 << 24)}))
        elif name == "forged_atomic_ack":
            out.append(atk.roce(OP["atomic_ack"], qpn, psn=resp, payload=b"",
                                aeth={"syndrome": 0x1F, "msn": rng.randrange(1 << 24)},
                                atomicacketh={"orig": rng.randrange(1 << 64)}))
        else:  # cnp_flood
            out.append(atk.roce(OP["cnp"], qpn, psn=0, payload=b""))
    return out


def at_qp(frame, qpn, psn_base):
    """@frame (untagged IPv4 RoCEv2, built by live_frames) sent to QP @qpn, its PSN moved
    by @psn_base (None: kept, as a CNP's 0), the ICRC recomputed."""
    f = bytearray(frame)
    bth = 14 + 20 + 8
    f[bth + 5:bth + 8] = qpn.to_bytes(3, "big")
    if psn_base is not None:
        psn = (int.from_bytes(f[bth + 9:bth + 12], "big") + psn_base) & 0xFFFFFF
        f[bth + 9:bth + 12] = psn.to_bytes(3, "big")
    end = 14 + int.from_bytes(f[16:18], "big")     # the IP packet's end: the ICRC's end
    f[end - 4:end] = struct.pack("<I", icrc.compute(bytes(f[14:end])))
    return bytes(f)


def pfc(smac, quanta):
    """A PFC frame for all eight priorities (XOFF at @quanta, or XON at 0)."""
    f = (bytes.fromhex("0180c2000001") + mac_bytes(smac) + b"\x88\x08"
         + struct.pack("!HH8H", 0x0101, 0xFF, *([quanta] * 8)))
    return f + b"\0" * (60 - len(f))


def quiet_socket(ns, ifname):
    """A raw socket whose frames only the far end of the veth sees. A frame sent the
    usual way also goes to every packet socket on the sending interface (the kernel's
    taps), so the rnic beside it would read it too: the XON meant for the client would
    resume the server as well. With PACKET_QDISC_BYPASS (as the rnics send) it does not."""
    s = raw_socket(ns, ifname)
    s.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
    return s


def wait_for(cond, what, alive, limit=60.0):
    """Until @cond() holds (an event); the limit only a broken rnic reaches."""
    deadline = time.monotonic() + limit
    while True:
        try:
            v = cond()
        except OSError as e:  # the rnic closed its telemetry socket: it exited
            raise AssertionError(f"telemetry lost ({e}): an rnic exited") from e
        if v:
            return v
        if time.monotonic() >= deadline or not alive():
            try:
                msg = what()
            except OSError as e:
                msg = f"(telemetry lost: {e})"
            raise AssertionError(msg)
        time.sleep(0.01)


def start_server(vp, tmp_path, prefix, tag):
    """The rc_pingpong server, once it listens. Its output goes to a file (a pipe nobody
    reads while the test runs could fill and stall it)."""
    js, log = tmp_path / f"server-{tag}.json", tmp_path / f"server-{tag}.log"
    srv = subprocess.Popen(
        f"exec ip netns exec {vp.ns[1]} {RNIC} {eal(vp.ifs[1], prefix)} -- --ip {vp.rip[1]}/24 "
        f"--chk {OPTS} --json {js} rc_pingpong", shell=True, start_new_session=True,
        stdout=open(log, "w"), stderr=subprocess.STDOUT, text=True)
    srv.log = log
    wait_for(lambda: "Waiting for client" in log.read_text(),
             lambda: f"server never listened:\n{log.read_text()}", lambda: srv.poll() is None)
    return srv, js


def start_client(vp, tmp_path, prefix, tag):
    js, log = tmp_path / f"client-{tag}.json", tmp_path / f"client-{tag}.log"
    cli = subprocess.Popen(
        f"exec ip netns exec {vp.ns[0]} {RNIC} {eal(vp.ifs[0], prefix)} -- --ip {vp.rip[0]}/24 "
        f"{OPTS} --json {js} rc_pingpong {vp.kip[1]}", shell=True, start_new_session=True,
        stdout=open(log, "w"), stderr=subprocess.STDOUT, text=True)
    cli.log = log
    return cli, js


def finish(procs):
    """Wait for both (the limit only a hang reaches); their output."""
    for p in procs:
        try:
            p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    outs = [p.log.read_text() for p in procs]
    for p in procs:
        assert p.returncode == 0, "\n----\n".join(outs)
    return outs


def check_transfer(res):
    """Every message of the transfer sent, received and checked once (a mismatch in the
    server's --chk or the client's echo check fails the run: exit 1); exact packets."""
    for r in res:
        q = r["qp_counters"]
        assert r["iters"] == ITERS and r["completion_errors"] == 0, r
        assert (q["send_completions"], q["recv_completions"]) == (ITERS, ITERS), q
        assert q["tx_req_packets"] == q["rx_req_packets"] == ITERS * PKTS, q
        assert q["rx_req_bytes"] == ITERS * SIZE, q
        assert r["pmd_counters"]["imissed"] == 0, r["pmd_counters"]


def kill(procs):
    for p in procs:
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture(scope="module")
def clean_live(tmp_path_factory):
    """The same transfer without pause or attacks: the mempool use it leaves at exit."""
    from conftest import VethPair
    vp = VethPair()
    procs = []
    try:
        tmp = tmp_path_factory.mktemp("liveclean")
        srv, sjs = start_server(vp, tmp, "lqs" + vp.ns[1][-6:], "clean")
        procs.append(srv)
        cli, cjs = start_client(vp, tmp, "lqc" + vp.ns[0][-6:], "clean")
        procs.append(cli)
        finish([srv, cli])
        res = [json.load(open(j))["results"] for j in (sjs, cjs)]
        check_transfer(res)
        yield res
    finally:
        kill(procs)
        vp.close()


class FrozenPingpong:
    """An rc_pingpong between an rnic server (ns[1]) and client (ns[0]) frozen by PFC
    after the client's first message, every PSN fixed (see the module's docstring).
    Attributes: procs, tel, qpn, psns (per box: sq_psn, una, epsn), base (each QP's
    counters once frozen), sock (per box: a socket that sends to it from its peer's
    side), mac, ip, peer, sjs/cjs (the --json paths)."""

    def __init__(self, vp, tmp_path, tag):
        self.vp = vp
        self.pfx = {"server": f"lqs{tag}" + vp.ns[1][-5:], "client": f"lqc{tag}" + vp.ns[0][-5:]}
        self.mac = {"client": mac_of(vp.ns[0], vp.ifs[0]), "server": mac_of(vp.ns[1], vp.ifs[1])}
        self.ip = {"client": vp.rip[0], "server": vp.rip[1]}
        self.peer = {"server": "client", "client": "server"}
        self.sock = {"server": quiet_socket(vp.ns[0], vp.ifs[0]),
                     "client": quiet_socket(vp.ns[1], vp.ifs[1])}
        self.procs, self.tel, self.qpn = {}, {}, {}
        self.alive = {b: (lambda b=b: self.procs[b].poll() is None) for b in self.peer}
        self.tmp_path, self.tag = tmp_path, tag

    def port(self, box):
        return self.tel[box].get("/rnic/port/stats")

    def qstat(self, box):
        return self.tel[box].get(f"/rnic/qp/stats,{self.qpn[box]}")

    def pause(self, box, quanta, counted=True):
        """XOFF (or XON) at @box from its peer's side, waited for on its counter (unless
        the caller waits for what follows, e.g. the rnic's exit)."""
        ctr = "pfc_rx_xoff" if quanta else "pfc_rx_xon"
        before = self.port(box)[ctr]
        self.sock[box].send(pfc(self.mac[self.peer[box]], quanta))
        if counted:
            wait_for(lambda: self.port(box)[ctr] > before, lambda: f"{box}: no {ctr}",
                     self.alive[box])

    def freeze(self):
        vp, tel = self.vp, self.tel
        srv, self.sjs = start_server(vp, self.tmp_path, self.pfx["server"], self.tag)
        self.procs["server"] = srv
        tel["server"] = Telemetry(f"/var/run/dpdk/{self.pfx['server']}/dpdk_telemetry.v2", 30,
                                  self.alive["server"])
        wait_for(lambda: "/rnic/port/stats" in tel["server"].get("/"),
                 lambda: "server: /rnic/port/stats never registered", self.alive["server"])
        self.pause("server", 0xFFFF)  # before the client exists: its first message is all it sends
        cli, self.cjs = start_client(vp, self.tmp_path, self.pfx["client"], self.tag)
        self.procs["client"] = cli
        tel["client"] = Telemetry(f"/var/run/dpdk/{self.pfx['client']}/dpdk_telemetry.v2", 30,
                                  self.alive["client"])
        for box in ("server", "client"):
            self.qpn[box] = wait_for(lambda: tel[box].get("/rnic/qp/list"),
                                     lambda: f"{box}: no QP", self.alive[box])[0]
        qstat = self.qstat
        # the client's first message reached the server, which echoes nothing (paused):
        # the transfer cannot move; pause the client too, then wait until each side has
        # read everything on the wire (its expected PSN is the other's next PSN)
        wait_for(lambda: qstat("server")["rx_req_packets"] == PKTS,
                 lambda: f"server: {qstat('server')}", self.alive["server"])
        self.pause("client", 0xFFFF)
        wait_for(lambda: qstat("client")["state"] == "RTS" and qstat("server")["state"] == "RTS"
                 and qstat("server")["epsn"] == qstat("client")["sq_psn"]
                 and qstat("client")["epsn"] == qstat("server")["sq_psn"],
                 lambda: f"not settled: {qstat('server')} {qstat('client')}", self.alive["client"])
        self.psns = {b: {k: qstat(b)[k] for k in ("sq_psn", "una", "epsn")} for b in self.qpn}
        self.base = {b: qstat(b) for b in self.qpn}

    def fail(self):
        """On a failure: stop both, print their output."""
        kill(self.procs.values())
        for b, p in self.procs.items():
            p.wait()
            print(f"---- {b} output:\n{p.log.read_text()[-3000:]}")

    def close(self):
        for t in self.tel.values():
            t.close()
        for x in self.sock.values():
            x.close()


def test_rnic_live_qp_attacks(veth_pair, tmp_path, clean_live):
    vp = veth_pair
    no_ipv6(vp)
    fz = FrozenPingpong(vp, tmp_path, "a")
    mac, ip, peer, sock = fz.mac, fz.ip, fz.peer, fz.sock
    rng = random.Random(15)
    templates = {}
    for box in ("server", "client"):
        atk = Attacks(mac[peer[box]], mac[box], ip[peer[box]], ip[box])
        templates[box] = {name: live_frames(name, atk, rng) for name, _ in LIVE_ATTACKS}
    sent = {"server": {}, "client": {}}
    try:
        fz.freeze()
        qpn, psns, base, qstat, alive, pause = fz.qpn, fz.psns, fz.base, fz.qstat, fz.alive, fz.pause
        for box in ("server", "client"):
            total = {}
            for name, ctr in LIVE_ATTACKS:
                psn_base = (psns[box]["epsn"] if name.startswith("oos") else
                            None if name == "cnp_flood" else psns[box]["sq_psn"])
                frames = [at_qp(f, qpn[box], psn_base) for f in templates[box][name]]
                sent[box][name] = len(frames)
                for i in range(0, len(frames), BATCH):
                    for f in frames[i:i + BATCH]:
                        sock[box].send(f)
                    total[ctr] = total.get(ctr, 0) + len(frames[i:i + BATCH])
                    wait_for(lambda: qstat(box)[ctr] - base[box][ctr] >= total[ctr],
                             lambda: f"{box} {name}: {ctr} +{qstat(box)[ctr] - base[box][ctr]}"
                             f" of {total[ctr]}", alive[box])
        # frozen throughout: no PSN moved, both still paused and in RTS
        after = {b: qstat(b) for b in qpn}
        for b in qpn:
            assert {k: after[b][k] for k in ("sq_psn", "una", "epsn")} == psns[b], (b, after[b])
            assert after[b]["state"] == "RTS", after[b]
        # resume, in an order that lets each NAK the attacks caused be read before its
        # receiver sends again (else it names a PSN sent meanwhile: a go-back, resending
        # what had arrived). The client first: all it has to send is its NAK, naming the
        # server's next PSN; the server (still paused) reads it: nothing to resend. Then
        # the server: its engine sends the NAK (responder) before the echo (requester),
        # and the client reads them in that order, before it sends its next message.
        pause("client", 0)
        wait_for(lambda: qstat("server")["rx_nak_seq_err"] == base["server"]["rx_nak_seq_err"] + 1,
                 lambda: f"server: the client's NAK never came: {qstat('server')}",
                 alive["server"])
        pause("server", 0)
    except BaseException:
        fz.fail()
        raise
    finally:
        fz.close()
    outs = finish([fz.procs["server"], fz.procs["client"]])
    res = {"server": json.load(open(fz.sjs))["results"],
           "client": json.load(open(fz.cjs))["results"]}
    print("live-QP attacks, frames sent per rnic: " + ", ".join(
        f"{k} {v}" for k, v in sent["server"].items()))
    for b in ("server", "client"):
        q = res[b]["qp_counters"]
        print(f"  {b}: PSNs when frozen {psns[b]}; rx_out_of_sequence {q['rx_out_of_sequence']}, "
              f"rx_bad_responses {q['rx_bad_responses']}, rx_cnps {q['rx_cnps']}, "
              f"tx_nak_seq_err {q['tx_nak_seq_err']}, rx_nak_seq_err {q['rx_nak_seq_err']}, "
              f"tx_retransmits {q['tx_retransmits']}, mempool {res[b]['mempool']}")
        print(f"    nonzero: {dict((k, v) for k, v in q.items() if v)}")
    check_transfer([res["server"], res["client"]])
    for b in ("server", "client"):
        q, o = res[b]["qp_counters"], res[peer[b]]["qp_counters"]
        want = {}
        for name, ctr in LIVE_ATTACKS:
            want[ctr] = want.get(ctr, 0) + sent[b][name]
        # each hostile frame counted once under its reason; the transfer moved none of these
        for ctr, n in want.items():
            assert q[ctr] == n, (b, ctr, q[ctr], n, outs)
        # the out-of-sequence requests executed nothing: no R_Key, length, op or atomic error
        for k in ("rx_bad_rkey", "rx_invalid_requests", "rx_length_errors", "tx_nak_rem_access",
                  "tx_nak_inv_req", "tx_nak_rem_op", "tx_nak_rnr", "rx_atomic_replays",
                  "rx_read_replays", "tx_read_responses", "tx_atomic_acks"):
            assert q[k] == 0, (b, k, q)
        # no forged response was taken as one: no fatal NAK, no RNR wait, no ACK
        # completed anything early (every completion is counted above, exactly)
        for k in ("rx_nak_rnr", "rx_nak_inv_req", "rx_nak_rem_access", "rx_nak_rem_op",
                  "rx_nak_other", "rx_read_responses", "rx_atomic_acks", "retry_exceeded",
                  "rnr_retry_exceeded", "rnr_retries"):
            assert q[k] == 0, (b, k, q)
        # the attacks cost one PSN-sequence NAK each way, no more (later ones wait for the
        # expected PSN), and the peer took it as valid: it names the peer's next PSN, so
        # nothing was resent; no timeout, no go-back, nothing out of sequence for real
        assert q["tx_nak_seq_err"] == 1 and o["rx_nak_seq_err"] == 1, (b, q, o)
        for k in ("tx_retransmits", "timeouts", "retries", "implied_naks", "rx_dup_requests"):
            assert q[k] == 0, (b, k, q)
        # 0 leaked mbufs: what the same transfer without attacks leaves in use at exit
    for r, c in zip((res["server"], res["client"]), clean_live):
        assert r["mempool"]["in_use"] == c["mempool"]["in_use"], (r["mempool"], c["mempool"])


# ---- a bad request AT the expected PSN: fatal for the responder's QP, by the standard ----

# attack -> (the responder counter it moves, the NAK it draws, the NAK's code in the log)
IN_WINDOW = {
    "wrong_rkey_write": ("rx_bad_rkey", "tx_nak_rem_access", 2),
    "read_beyond_mr": ("rx_bad_rkey", "tx_nak_rem_access", 2),
    "misaligned_atomic": ("rx_invalid_requests", "tx_nak_inv_req", 1),
    "huge_dma_write": ("rx_invalid_requests", "tx_nak_inv_req", 1),
}


def in_window_frame(name, atk, qpn, psn):
    rkey = random.Random(name).randrange(1 << 32)
    if name == "wrong_rkey_write":
        return atk.roce(OP["write"], qpn, psn=psn, payload=b"\xee" * 64,
                        reth={"va": 0x1000, "rkey": rkey, "dlen": 64})
    if name == "read_beyond_mr":
        return atk.roce(OP["read_req"], qpn, psn=psn, payload=b"",
                        reth={"va": 1 << 63, "rkey": rkey, "dlen": 1 << 30})
    if name == "misaligned_atomic":
        return atk.roce(OP["fetch_add"], qpn, psn=psn, payload=b"",
                        atomiceth={"va": 0x1003, "rkey": rkey, "swap": 1, "cmp": 0})
    # huge_dma_write: a WRITE ONLY of 64 bytes that claims 4 GiB - 1
    return atk.roce(OP["write"], qpn, psn=psn, payload=b"\xee" * 64,
                    reth={"va": 0x1000, "rkey": rkey, "dlen": 0xFFFFFFFF})


@pytest.mark.parametrize("name", sorted(IN_WINDOW))
def test_rnic_live_qp_in_window_attack(veth_pair, tmp_path, name):
    """One bad request at the live QP's expected PSN (the on-path attacker who knows
    it): the responder checks it (IBTA ch. 9.7: R_Key, bounds, alignment, DMA length),
    counts it once under its reason, answers with one fatal NAK once the pause ends, and
    its QP goes to ERR after the NAK has left: rc_pingpong exits 1 with one clear line
    per step, its --json complete. The NAK names the client's next PSN, a request the
    client never sent: one bad response there, nothing else taken. No crash, nothing
    executed out of the MR (the frame never gets past the checks)."""
    ctr, nak, code = IN_WINDOW[name]
    vp = veth_pair
    no_ipv6(vp)
    fz = FrozenPingpong(vp, tmp_path, "w")
    try:
        fz.freeze()
        atk = Attacks(fz.mac["client"], fz.mac["server"], fz.ip["client"], fz.ip["server"])
        fz.sock["server"].send(in_window_frame(name, atk, fz.qpn["server"],
                                               fz.psns["server"]["epsn"]))
        wait_for(lambda: fz.qstat("server")[ctr] == fz.base["server"][ctr] + 1,
                 lambda: f"server: {ctr} never counted: {fz.qstat('server')}", fz.alive["server"])
        q = fz.qstat("server")
        # paused: the NAK waits, so the QP is still in RTS
        assert q["state"] == "RTS" and q[nak] == 0, q
        fz.pause("server", 0, counted=False)  # the NAK leaves, the QP ends, the server exits
        fz.procs["server"].wait(timeout=120)
        wait_for(lambda: fz.qstat("client")["rx_bad_responses"] == 1,
                 lambda: f"client: the NAK never came: {fz.qstat('client')}", fz.alive["client"])
        assert fz.qstat("client")["state"] == "RTS"
        fz.procs["client"].send_signal(signal.SIGTERM)
        fz.procs["client"].wait(timeout=120)
    except BaseException:
        fz.fail()
        raise
    finally:
        fz.close()
    out = {b: p.log.read_text() for b, p in fz.procs.items()}
    print(f"{name}: server exit {fz.procs['server'].returncode}:\n{out['server'][-1500:]}\n"
          f"client exit {fz.procs['client'].returncode}:\n{out['client'][-800:]}")
    assert fz.procs["server"].returncode == 1 and fz.procs["client"].returncode == 1, out
    assert out["server"].count(f"NAK code {code}, QP goes to ERR") == 1, out["server"]
    assert "completion error IBV_WC_WR_FLUSH_ERR after 0 of" in out["server"], out["server"]
    assert "PSN was never sent" in out["client"], out["client"]
    assert "round trips completed (stopped by a signal)" in out["client"], out["client"]
    s = json.load(open(fz.sjs))["results"]
    c = json.load(open(fz.cjs))["results"]
    qs, qc = s["qp_counters"], c["qp_counters"]
    # the one frame, counted once under its reason, answered by one fatal NAK
    assert qs[ctr] == 1 and qs[nak] == 1, qs
    assert qs["rx_bad_rkey"] + qs["rx_invalid_requests"] == 1, qs
    for k in ("rx_out_of_sequence", "tx_nak_seq_err", "tx_read_responses", "tx_atomic_acks",
              "rx_dup_requests"):
        assert qs[k] == 0, (k, qs)
    assert qs["rx_req_packets"] == PKTS and s["completion_errors"] >= 1, s
    # the client: one response, for a PSN it never sent, taken as nothing
    assert qc["rx_bad_responses"] == 1, qc
    for k in ("rx_acks", "rx_nak_seq_err", "rx_nak_rnr", "rx_nak_inv_req", "rx_nak_rem_access",
              "rx_nak_rem_op", "rx_nak_other", "tx_retransmits"):
        assert qc[k] == 0, (k, qc)
