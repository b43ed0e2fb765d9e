# SPDX-License-Identifier: BSD-3-Clause
"""QP1, the GSI, on the rnic (docs/rnic.md, "QP1, the GSI"): while an rnic server waits
for its client's TCP exchange, a raw AF_PACKET socket sends it a fixed set of frames to
QP 1 (well-formed CM REQ, REP and vendor MADs, and each malformed kind once or more);
the sender waits until the rnic's device has received every frame (telemetry, an
event). Then the real client runs rc_pingpong (every message checked) and the server's
--json `gsi` object must hold exactly what was sent, per cause and per MAD kind, and
reconcile (rx_total = delivered + drops). The client's QP1, sent nothing, counts nothing.
"""
import time

from conftest import RNIC  # noqa: F401  (the binary the helpers run)
from rocewan.build import build_bytes
from rocewan.testbed.telemetry import Telemetry
from test_hostile import counters, finish, mac_of, no_ipv6, raw_socket, run_client, run_server

GSI_QKEY = 0x80010000
OP_UD_SEND_ONLY, OP_UD_SEND_ONLY_IMM, OP_RC_SEND_ONLY = 0x64, 0x65, 0x04
CM, VENDOR = 0x07, 0x30
REQ, REP = 0x0010, 0x0013


def mad(mgmt_class, attr, base_version=1, tid=1, size=256):
    hdr = bytes([base_version, mgmt_class, 2, 0x03]) + b"\0\0\0\0" + tid.to_bytes(8, "big")
    hdr += attr.to_bytes(2, "big") + b"\0\0" + b"\0\0\0\0"
    body = bytes((i * 13 + tid) & 255 for i in range(256 - len(hdr)))
    return (hdr + body)[:size] + bytes(max(0, size - 256))


# (name, count, frame spec changes, MAD payload) -> the counters each frame moves
CASES = [
    ("cm_req", 5, {}, lambda i: mad(CM, REQ, tid=i), {"drops.unclaimed": 1, "rx_mads.cm-req": 1}),
    ("cm_rep", 3, {}, lambda i: mad(CM, REP, tid=i), {"drops.unclaimed": 1, "rx_mads.cm-rep": 1}),
    ("vendor", 2, {}, lambda i: mad(VENDOR, 0x10, tid=i),
     {"drops.unclaimed": 1, "rx_mads.vendor": 1}),
    ("bad_qkey", 4, {"deth": {"qkey": 0x11111111, "sqpn": 1}}, lambda i: mad(CM, REQ, tid=i),
     {"drops.bad_qkey": 1}),
    ("bad_pkey", 3, {"pkey": 0x8001}, lambda i: mad(CM, REQ, tid=i), {"drops.bad_pkey": 1}),
    ("short", 2, {}, lambda i: mad(CM, REQ, tid=i, size=100), {"drops.short": 1}),
    ("long", 1, {}, lambda i: mad(CM, REQ, tid=i, size=300), {"drops.long": 1}),
    ("base_version_2", 2, {}, lambda i: mad(CM, REQ, base_version=2, tid=i),
     {"drops.base_version": 1}),
    ("imm", 2, {"opcode": OP_UD_SEND_ONLY_IMM, "immdt": 7}, lambda i: mad(CM, REQ, tid=i),
     {"drops.imm": 1}),
    ("rc_send", 1, {"opcode": OP_RC_SEND_ONLY}, lambda i: mad(CM, REQ, tid=i),
     {"drops.bad_opcode": 1}),
]


def frame(smac, dmac, sip, dip, psn, changes, payload):
    spec = {"eth_src": smac, "eth_dst": dmac, "ip": {"ver": 4, "src": sip, "dst": dip},
            "bth": {"opcode": changes.get("opcode", OP_UD_SEND_ONLY), "dqpn": 1, "psn": psn,
                    "pkey": changes.get("pkey", 0xFFFF)},
            "deth": changes.get("deth", {"qkey": GSI_QKEY, "sqpn": 1}), "payload": payload}
    if "immdt" in changes:
        spec["immdt"] = changes["immdt"]
    return build_bytes(spec)


def flat(gsi):
    out = {k: v for k, v in gsi.items() if isinstance(v, int)}
    for group in ("drops", "tx_errors", "rx_mads", "tx_mads"):
        out.update({f"{group}.{k}": v for k, v in gsi[group].items()})
    return out


def test_rnic_gsi_counts_every_mad_exactly(veth_pair, tmp_path):
    vp = veth_pair
    no_ipv6(vp)
    prefix = "gsi" + vp.ns[1][-6:]
    srv, sjs, seen = run_server(vp, tmp_path, prefix, "gsi")
    smac, dmac = mac_of(vp.ns[0], vp.ifs[0]), mac_of(vp.ns[1], vp.ifs[1])
    frames, want = [], {}
    for name, n, changes, payload, moves in CASES:
        for i in range(n):
            frames.append(frame(smac, dmac, vp.rip[0], vp.rip[1], len(frames), changes,
                                payload(i + 1)))
        for k, v in moves.items():
            want[k] = want.get(k, 0) + v * n
    sock = raw_socket(vp.ns[0], vp.ifs[0])
    tel = Telemetry(f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2", 30, lambda: srv.poll() is None)
    try:
        deadline = time.time() + 30
        while "/rnic/port/stats" not in tel.get("/"):
            assert time.time() < deadline and srv.poll() is None, "/rnic/port/stats never registered"
            time.sleep(0.05)
        base = counters(tel.get("/rnic/port/stats"))[("device", "rx_packets")]
        for f in frames:
            sock.send(f)
        deadline = time.time() + 30
        while True:  # the device has received every frame (an event; the limit is a hang guard)
            got = counters(tel.get("/rnic/port/stats"))[("device", "rx_packets")] - base
            if got >= len(frames):
                break
            assert time.time() < deadline and srv.poll() is None, (got, len(frames))
            time.sleep(0.01)
    finally:
        tel.close()
        sock.close()
    cli, cjs = run_client(vp, tmp_path, "gsi")
    srv_res, cli_res = finish(srv, seen, cli, cjs, sjs)
    g = flat(srv_res["gsi"])
    print("server gsi:", {k: v for k, v in g.items() if v})
    assert g["qpn"] == 1
    assert g["rx_total"] == len(frames) == 25
    assert g["delivered"] == 0 and g["tx_total"] == 0
    # exactly what was sent: each cause and kind, and nothing else
    assert {k: v for k, v in g.items() if v and k not in ("qpn", "rx_total")} == want, want
    assert g["rx_total"] == g["delivered"] + sum(srv_res["gsi"]["drops"].values())
    # frames to QP 1 are QP1's, not the device's unknown-QPN drop
    assert srv_res["device_counters"]["rx_drop_bad_qpn"] == 0
    assert srv_res["pmd_counters"]["imissed"] == 0
    # negative control: the client's QP1 saw nothing
    c = flat(cli_res["gsi"])
    assert all(v == 0 for k, v in c.items() if k != "qpn"), c
