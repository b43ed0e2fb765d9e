"""``python -m rocewan validate`` on the rxe capture, on corrupted copies and
on frames broken in every way the consistency checks know."""

import json

import pytest

import rwtest
from rocewan import golden
from rocewan.build import build_bytes
from rocewan.frame import decode
from rocewan.pcapio import read_frames, write_frames
from rocewan.psn import psn_delta, psn_span
from rocewan import gen
from rocewan.validate import parse_tolerance, validate_file

RXE_FIRST_ROCE = 19        # frames 0-18 are the perftest TCP exchange


def rxe_frames():
    return [buf for _, buf, _ in read_frames(rwtest.RXE_PCAP)]


def test_rxe_capture_all_valid():
    rep = validate_file(rwtest.RXE_PCAP)
    r = rep.results()
    assert r["ok"] and r["errors"] == {}
    assert (r["frames_pkts"], r["roce_pkts"], r["roce_ok_pkts"],
            r["other_pkts"]) == \
        (64, 25, 25, 39)
    assert r["opcodes_pkts"] == {"RC_RDMA_WRITE_FIRST": 5,
                                 "RC_RDMA_WRITE_MIDDLE": 10,
                                 "RC_RDMA_WRITE_LAST": 5, "RC_ACKNOWLEDGE": 5}
    assert (r["psn"]["streams"], r["psn"]["gaps"],
            r["psn"]["retransmissions"]) == (1, 0, 0)


def test_rxe_capture_decoded_fields():
    """ib_write_bw -s 4096 with a 1024-byte MTU: 5 writes of
    FIRST(RETH, len 4096) + 2 MIDDLE + LAST, 1024 bytes each, each ACKed."""
    recs = [decode(b, i).rec for i, b in enumerate(rxe_frames())]
    roce = [r for r in recs if r["roce"]]
    assert all(r["icrc_ok"] and r["err"] == "OK" for r in roce)
    writes = [r for r in roce if r["bth"]["opcode"] in (6, 7, 8)]
    assert [r["bth"]["opcode"] for r in writes] == [6, 7, 7, 8] * 5
    assert all(r["payload_len"] == 1024 and r["bth"]["pad"] == 0
               for r in writes)
    assert all(r["reth"]["dlen"] == 4096 for r in writes
               if r["bth"]["opcode"] == 6)
    psns = [r["bth"]["psn"] for r in writes]
    assert all(psn_delta(a, b) == 1 for a, b in zip(psns, psns[1:]))
    acks = [r for r in roce if r["bth"]["opcode"] == 0x11]
    assert [a["bth"]["psn"] for a in acks] == psns[3::4]


def _write_pcap(tmp_path, name, frames):
    path = tmp_path / name
    write_frames(str(path), frames)
    return path


def test_cli_ok_and_json(tmp_path):
    out = tmp_path / "v.json"
    p = rwtest.rocewan("validate", rwtest.RXE_PCAP, "--json", out)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "25 RoCEv2 (25 ok, 0 failed)" in p.stdout
    assert "RESULT: OK" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["schema"] == "rocewan/1" and doc["app"] == "rocewan-validate"
    assert doc["results"]["roce_ok_pkts"] == 25 and doc["results"]["ok"]
    for key in ("version", "started_utc", "config", "seed"):
        assert key in doc


def test_cli_help():
    for args in (["--help"], ["validate", "--help"]):
        p = rwtest.rocewan(*args)
        assert p.returncode == 0 and "usage:" in p.stdout


def test_cli_missing_file(tmp_path):
    p = rwtest.rocewan("validate", tmp_path / "nope.pcap")
    assert p.returncode == 2 and "cannot read" in p.stderr


def test_truncated_file_is_a_read_error(tmp_path):
    """A file cut inside a record or inside its header: exit 2, on Scapy 2.5
    (which returns the cut record as a shorter frame) and 2.8 (which warns
    and drops it) alike; the whole file still validates."""
    data = open(rwtest.RXE_PCAP, "rb").read()
    for cut, msg in ((3000, "truncated: record 19 has 686 of its 1098 bytes"),
                     (24 + 8, "truncated: record 0's header cut"),
                     (20, "truncated pcap header")):
        path = tmp_path / ("cut%d.pcap" % cut)
        path.write_bytes(data[:cut])
        p = rwtest.rocewan("validate", path)
        assert p.returncode == 2 and msg in p.stderr, (cut, p.returncode, p.stderr)
        assert "Traceback" not in p.stderr
    path = tmp_path / "whole.pcap"
    path.write_bytes(data)
    assert rwtest.rocewan("validate", path).returncode == 0


def test_flipped_payload_bit_is_icrc_error(tmp_path):
    frames = rxe_frames()
    bad = bytearray(frames[RXE_FIRST_ROCE + 1])
    bad[200] ^= 0x10                     # inside the RDMA WRITE payload
    frames[RXE_FIRST_ROCE + 1] = bytes(bad)
    path = _write_pcap(tmp_path, "flip.pcap", frames)
    p = rwtest.rocewan("validate", path)
    assert p.returncode == 1, p.stdout
    assert "BAD_ICRC" in p.stdout and "first #20" in p.stdout
    assert "RESULT: FAIL" in p.stdout
    r = validate_file(str(path)).results()
    assert r["errors"] == {"BAD_ICRC": {"pkts": 1, "first_idx": 20}}


def test_truncated_frame_is_consistency_error(tmp_path):
    frames = rxe_frames()
    frames[RXE_FIRST_ROCE + 2] = frames[RXE_FIRST_ROCE + 2][:600]
    path = _write_pcap(tmp_path, "trunc.pcap", frames)
    p = rwtest.rocewan("validate", path)
    assert p.returncode == 1, p.stdout
    r = validate_file(str(path)).results()
    assert r["errors"] == {"BAD_IP_LEN": {"pkts": 1, "first_idx": 21}}
    assert r["roce_pkts"] == 25 and r["roce_failed_pkts"] == 1


def test_snaplen_cut_frames_are_not_failures(tmp_path):
    """A capture taken with a 128-byte snap length cannot be checked, but
    it is not broken either: the cut frames are counted apart."""
    frames = rxe_frames()
    path = tmp_path / "snap.pcap"
    write_frames(str(path), [f[:128] for f in frames],
                 wire_lens=[len(f) for f in frames])
    r = validate_file(str(path)).results()
    assert r["ok"]
    assert r["snaplen_cut_pkts"] == sum(len(f) > 128 for f in frames) == 30
    assert r["roce_pkts"] == 5                      # the ACKs fit in 128 bytes


BROKEN = rwtest.broken_frames()


@pytest.mark.parametrize("name,frame,err", BROKEN,
                         ids=[b[0] for b in BROKEN])
def test_decode_names_the_error(name, frame, err):
    d = decode(frame)
    assert d.roce, "a broken RoCEv2 frame still counts as RoCEv2"
    assert d.err == err


def test_validate_reports_every_error_kind(tmp_path):
    path = _write_pcap(tmp_path, "broken.pcap", [b[1] for b in BROKEN])
    r = validate_file(str(path)).results()
    want = {}
    for idx, (_, _, err) in enumerate(BROKEN):
        if err != "OK":
            want.setdefault(err, {"pkts": 0, "first_idx": idx})
            want[err]["pkts"] += 1
    assert r["errors"] == want
    assert r["roce_pkts"] == len(BROKEN)
    p = rwtest.rocewan("validate", path)
    assert p.returncode == 1
    for err in want:
        assert err in p.stdout


def test_psn_story_counts(tmp_path):
    path = _write_pcap(tmp_path, "psn.pcap", golden.psn_story())
    r = validate_file(str(path)).results()
    assert r["ok"]
    got = {k: r["psn"][k] for k in ("streams", "gaps", "missing_psns",
                                    "retransmissions")}
    got.update({k: r[k] for k in ("cnp_pkts", "pause_pkts", "pfc_pkts",
                                  "ecn_ce_pkts")})
    assert got == golden.PSN_STORY_EXPECT


def test_psn_helpers():
    assert psn_delta(0xffffff, 0) == 1
    assert psn_delta(0, 0xffffff) == -1
    assert psn_delta(5, 5) == 0
    assert psn_delta(0, 0x7fffff) == 0x7fffff
    assert psn_delta(0, 0x800000) == -0x800000
    assert psn_span(False) == 1
    assert psn_span(True, 0) == 1
    assert psn_span(True, 4096) == 16
    assert psn_span(True, 4097) == 17


def test_empty_record_is_counted(tmp_path):
    frames = rxe_frames()
    frames.insert(RXE_FIRST_ROCE, b"")
    path = _write_pcap(tmp_path, "empty.pcap", frames)
    r = validate_file(str(path)).results()
    assert r["ok"] and r["frames_pkts"] == 65 and r["roce_ok_pkts"] == 25


def test_selective_retransmission_is_no_gap(tmp_path):
    """Go-Back-ONE / IRN resend single PSNs (docs/transport.md): PSNs 0-9
    with 3 missing, a RACK, 3 resent, then new data 10-11. One gap of one PSN
    (3 before its resend), one retransmission, and the new data after the
    resend is in order; the RACK and the self-placing MIDDLE opcode validate."""
    def req(psn, opcode=0xc2):
        return build_bytes({
            "vlan": None,
            "ip": {"ver": 4, "src": "10.0.0.1", "dst": "10.0.0.2", "tos": 0,
                   "ttl": 64},
            "udp": {"sport": 0xc123},
            "bth": {"opcode": opcode, "dqpn": 0x11, "psn": psn},
            "reth": {"va": 0x1000 + 1024 * psn, "rkey": 7, "dlen": 12 * 1024},
            "payload": bytes(1024)})
    rack = build_bytes({
        "vlan": None,
        "ip": {"ver": 4, "src": "10.0.0.2", "dst": "10.0.0.1", "tos": 0,
               "ttl": 64},
        "udp": {"sport": 0xc321},
        "bth": {"opcode": 0xc0, "dqpn": 0x22, "psn": 2},
        "aeth": {"syndrome": 0x1f, "msn": 0}, "nteth": {"psn": 4, "run": 0}})
    frames = [req(p) for p in (0, 1, 2, 4, 5, 6, 7, 8, 9)] + [rack, req(3)] \
        + [req(10), req(11)]
    path = _write_pcap(tmp_path, "sel.pcap", frames)
    r = validate_file(str(path)).results()
    assert r["ok"], r["errors"]
    assert (r["psn"]["gaps"], r["psn"]["missing_psns"],
            r["psn"]["retransmissions"]) == (1, 1, 1)
    assert r["opcodes_pkts"]["RC_X_RACK"] == 1
    assert decode(rack).rec["nteth"] == {"run": 0, "psn": 4}


def _vrp_req(psn):
    return build_bytes({
        "vlan": None,
        "ip": {"ver": 4, "src": "10.0.0.1", "dst": "10.0.0.2", "tos": 0,
               "ttl": 64},
        "udp": {"sport": 0xc123},
        "bth": {"opcode": 0xc2, "dqpn": 0x11, "psn": psn},
        "reth": {"va": 0x1000 + 1024 * psn, "rkey": 7, "dlen": 12 * 1024},
        "payload": bytes(1024)})


def _vrp_notice(opcode, cum, psn, run=0):
    return build_bytes({
        "vlan": None,
        "ip": {"ver": 4, "src": "10.0.0.2", "dst": "10.0.0.1", "tos": 0,
               "ttl": 64},
        "udp": {"sport": 0xc321},
        "bth": {"opcode": opcode, "dqpn": 0x22, "psn": cum},
        "aeth": {"syndrome": 0x1f, "msn": 0}, "nteth": {"psn": psn, "run": run}})


def test_vrp_ack_nack_logic(tmp_path):
    """VRP (docs/vrp.md): PSNs 0-9, 3 tolerated (never resent), 5 and 6
    NACKed in one NACK (PSN 6, run 1) and resent; the ACK after 4 names 4.
    Then two broken stories: an ACK naming a PSN that never arrived, and a
    NACK naming one that had."""
    ack, nack = 0xe0, 0xe1
    frames = [_vrp_req(p) for p in (0, 1, 2, 4)] + [_vrp_notice(ack, 3, 4)] \
        + [_vrp_req(p) for p in (7, 8, 9)] + [_vrp_notice(nack, 4, 6, 1)] \
        + [_vrp_req(5), _vrp_req(6)]
    r = validate_file(str(_write_pcap(tmp_path, "vrp.pcap", frames))).results()
    assert r["ok"], r["errors"]
    assert r["opcodes_pkts"]["RC_X_VRP_ACK"] == 1
    assert r["opcodes_pkts"]["RC_X_VRP_NACK"] == 1
    assert {k: v for k, v in r["vrp"].items() if "summar" not in k and "budget" not in k
            and k not in ("vrp_incomplete_msgs", "vrp_lost_pkts")} == \
        {"vrp_acks": 1, "vrp_nacks": 1, "vrp_nacked_psns": 2,
         "vrp_nacks_repaired": 2, "vrp_acked_tolerated": 0,
         "vrp_unchecked": 0, "vrp_wr_tol_msgs": 0}
    assert decode(_vrp_notice(nack, 4, 6, 1)).rec["nteth"] == {"run": 1, "psn": 6}

    bad = [_vrp_req(p) for p in (0, 1, 2)] + [_vrp_notice(ack, 2, 3)] \
        + [_vrp_notice(nack, 2, 1)]
    r = validate_file(str(_write_pcap(tmp_path, "bad.pcap", bad))).results()
    assert not r["ok"]
    assert {k: e["pkts"] for k, e in r["errors"].items()} == \
        {"VRP_BAD_ACK": 1, "VRP_BAD_NACK": 1}


def test_vrp_ack_run_reports_tolerated(tmp_path):
    """A VRP ACK's run covers the losses the receiver tolerated (docs/wire.md):
    2 NACKed, 3 tolerated, the ACK for 4 with run 1 reports 3 given up, then 2
    arrives. Broken: a run over a PSN NACKed and still missing, and a NACK of a
    PSN a run reported given up."""
    ack, nack = 0xe0, 0xe1
    good = [_vrp_req(p) for p in (0, 1, 4)] + [
        _vrp_notice(nack, 1, 2), _vrp_notice(ack, 1, 4, 1), _vrp_req(2)]
    r = validate_file(str(_write_pcap(tmp_path, "tol.pcap", good))).results()
    assert r["ok"], r["errors"]
    assert r["vrp"]["vrp_acked_tolerated"] == 1
    assert r["vrp"]["vrp_nacks_repaired"] == 1
    bad = [_vrp_req(p) for p in (0, 1, 4)] + [
        _vrp_notice(nack, 1, 2), _vrp_notice(ack, 1, 4, 2), _vrp_req(6),
        _vrp_notice(ack, 1, 6, 1), _vrp_notice(nack, 1, 5)]
    r = validate_file(str(_write_pcap(tmp_path, "tolbad.pcap", bad))).results()
    assert not r["ok"]
    assert {k: e["pkts"] for k, e in r["errors"].items()} == \
        {"VRP_BAD_ACK": 1, "VRP_BAD_NACK": 1}


def _vrp_first(psn, dlen, vteth):
    """A VRP WRITE FIRST (0xE2) of a ``dlen``-byte message, MTU 1024."""
    return build_bytes({
        "vlan": None,
        "ip": {"ver": 4, "src": "10.0.0.1", "dst": "10.0.0.2", "tos": 0,
               "ttl": 64},
        "udp": {"sport": 0xc123},
        "bth": {"opcode": 0xe2, "dqpn": 0x11, "psn": psn},
        "reth": {"va": 0x1000, "rkey": 7, "dlen": dlen},
        "vteth": vteth,
        "payload": bytes(1024)})


def test_vrp_wr_tolerance(tmp_path):
    """Per-WR tolerance (docs/vrp.md): a message whose FIRST (0xE2) names a
    critical range over packet 5 and 25 %; a second one sent with 0 %. An ACK
    run giving up packet 3 of the first is fine; giving up packet 5 (critical),
    its last packet, or any packet of the 0 % message is VRP_CRIT_GIVEN_UP.
    A VTETH with a range outside the message is VRP_BAD_VTETH."""
    ack = 0xe0
    tol = {"flags": 1, "n_crit": 1, "loss_bp": 2500, "window": 0,
           "max_burst": 0xffffffff, "crit": [[5 * 1024 + 10, 4]]}
    good = [_vrp_first(0, 12 * 1024, tol)] + [_vrp_req(p) for p in (1, 2, 4)] \
        + [_vrp_notice(ack, 2, 4, 1)]
    r = validate_file(str(_write_pcap(tmp_path, "wr.pcap", good))).results()
    assert r["ok"], r["errors"]
    assert r["vrp"]["vrp_wr_tol_msgs"] == 1
    assert r["vrp"]["vrp_acked_tolerated"] == 1
    assert decode(good[0]).rec["vteth"]["crit"][0] == [5 * 1024 + 10, 4]

    def errors(frames, name):
        r = validate_file(str(_write_pcap(tmp_path, name, frames))).results()
        return {k: e["pkts"] for k, e in r["errors"].items()}

    crit = [_vrp_first(0, 12 * 1024, tol)] + [_vrp_req(p) for p in (1, 2, 3, 4, 6)] \
        + [_vrp_notice(ack, 4, 6, 1)]
    assert errors(crit, "crit.pcap") == {"VRP_CRIT_GIVEN_UP": 1}
    last = [_vrp_first(0, 12 * 1024, tol)] + [_vrp_req(p) for p in range(1, 11)] \
        + [_vrp_req(12), _vrp_notice(ack, 10, 12, 1)]
    assert errors(last, "last.pcap") == {"VRP_CRIT_GIVEN_UP": 1}
    zero = dict(tol, loss_bp=0, n_crit=0)
    nolos = [_vrp_first(0, 12 * 1024, zero)] + [_vrp_req(p) for p in (1, 3)] \
        + [_vrp_notice(ack, 1, 3, 1)]
    assert errors(nolos, "zero.pcap") == {"VRP_CRIT_GIVEN_UP": 1}
    out = dict(tol, crit=[[12 * 1024 - 2, 4]])
    assert errors([_vrp_first(0, 12 * 1024, out)], "bad.pcap") == {"VRP_BAD_VTETH": 1}
    many = dict(tol, n_crit=5)
    assert errors([_vrp_first(0, 12 * 1024, many)], "many.pcap") == {"VRP_BAD_VTETH": 1}


# ---- VRP LOSS summaries (0xE3) and per-message loss budgets (docs/vrp.md) ----

# 10 % over a window of 16, bursts of one packet (1024 bytes), a 64-byte header
TOL16 = {"flags": 7, "n_crit": 1, "loss_bp": 1000, "window": 16,
         "max_burst": 1024, "crit": [[0, 64], [0, 0], [0, 0], [0, 0]]}


def _vrp_errors(tmp_path, name, frames, tol=None):
    path = str(_write_pcap(tmp_path, name, frames))
    r = validate_file(path, tol).results()
    return r, {k: e["pkts"] for k, e in r["errors"].items()}


def test_vrp_budget_within_passes(tmp_path):
    """Negative control: 4 messages of 16 packets at 10 %/16, burst 1 packet;
    each loses at most one packet (never the first or last), one more was
    NACKed and arrived late. Every summary matches, every budget holds."""
    lost = {(0, 5), (1, 9), (3, 14)}
    late = {(2, 7)}
    frames = gen.vrp_flow(4, 16, lost, late, vteth=TOL16)
    r, errs = _vrp_errors(tmp_path, "within.pcap", frames)
    assert r["ok"] and errs == {}, errs
    v = r["vrp"]
    assert (v["vrp_summaries"], v["vrp_summaries_match"]) == (4, 4)
    assert (v["vrp_budget_checked_msgs"], v["vrp_budget_over_msgs"]) == (4, 0)
    assert v["vrp_lost_pkts"] == 3 and v["vrp_incomplete_msgs"] == 0
    assert v["vrp_wr_tol_msgs"] == 4


@pytest.mark.parametrize("lost,why", [
    ({(1, 3), (1, 10)}, "rate"),        # 2 in 16 at 10 %/16 (max 1)
    ({(2, 0 + 8), (2, 9)}, "burst"),    # 2 consecutive with a 1-packet burst
    ({(0, 0)}, "first"),                # the FIRST (critical) never arrived
])
def test_vrp_budget_over_is_flagged(tmp_path, lost, why):
    """A message that lost more than its VTETH allows is VRP_OVER_BUDGET (once,
    at its FIRST's frame), whatever its summary says; the others pass."""
    if why == "first":
        # the FIRST carries the RETH: lost, the message is unknown; use a
        # second packet critical by the header range instead (crit 0:1100)
        tol = dict(TOL16, crit=[[0, 1100], [0, 0], [0, 0], [0, 0]])
        lost = {(0, 1)}
    else:
        tol = TOL16
    frames = gen.vrp_flow(3, 16, lost, vteth=tol)
    r, errs = _vrp_errors(tmp_path, "over-%s.pcap" % why, frames)
    assert errs == {"VRP_OVER_BUDGET": 1}, errs
    assert not r["ok"]
    assert r["vrp"]["vrp_budget_over_msgs"] == 1
    assert r["vrp"]["vrp_summaries_match"] == 3   # the summaries tell the truth


def test_vrp_budget_receiver_tolerance(tmp_path):
    """Messages without a VTETH (standard FIRST) are judged against the
    receiver's tolerance given to validate (--vrp-tolerance), and only then:
    2 losses in 16 pass at 20 %/16 and are over budget at 10 %/16."""
    frames = gen.vrp_flow(2, 16, {(1, 4), (1, 11)})
    r, errs = _vrp_errors(tmp_path, "noqp.pcap", frames)
    assert errs == {} and r["vrp"]["vrp_budget_unchecked_msgs"] == 2
    ok = parse_tolerance("loss=20,window=16")
    r, errs = _vrp_errors(tmp_path, "qp20.pcap", frames, ok)
    assert errs == {} and r["vrp"]["vrp_budget_checked_msgs"] == 2
    tight = parse_tolerance("loss=10,window=16,burst=4096")
    r, errs = _vrp_errors(tmp_path, "qp10.pcap", frames, tight)
    assert errs == {"VRP_OVER_BUDGET": 1}, errs
    # a critical range of the receiver's own over packet 4 of message 1
    crit = parse_tolerance("loss=20,window=16,crit=4096:1")
    r, errs = _vrp_errors(tmp_path, "qpcrit.pcap", frames, crit)
    assert errs == {"VRP_OVER_BUDGET": 1}, errs
    with pytest.raises(ValueError):
        parse_tolerance("loss=101")
    with pytest.raises(ValueError):
        parse_tolerance("drop=3")


def test_vrp_summary_checked_against_capture(tmp_path):
    """A VRP LOSS summary must report every packet of its message that the
    capture never saw arrive before it, and add up: a summary that hides a
    loss, moves a hole, or whose bytes disagree with its holes is
    VRP_BAD_SUMMARY. One that reports a packet the capture saw arrive (a late
    copy the receiver discarded, a frame its socket missed) passes, counted.
    A message cut by the capture's end is incomplete, not judged."""
    lost = {(0, 5), (1, 9)}

    def hide(m, vl):
        return dict(vl, lost_pkts=0, lost_bytes=0, n_holes=0, holes=[]) \
            if m == 1 else vl

    def move(m, vl):
        return dict(vl, holes=[[6 * 1024, 1024]]) if m == 0 else vl

    def bytes_off(m, vl):
        return dict(vl, lost_bytes=vl["lost_bytes"] + 1) if m == 1 else vl

    def invent(m, vl):
        return dict(vl, lost_pkts=1, lost_bytes=1024, n_holes=1,
                    holes=[[3 * 1024, 1024]]) if m == 2 else vl

    for name, fn in (("hide", hide), ("move", move), ("bytes", bytes_off)):
        frames = gen.vrp_flow(3, 16, lost, vteth=TOL16, summaries=fn)
        r, errs = _vrp_errors(tmp_path, name + ".pcap", frames)
        assert errs == {"VRP_BAD_SUMMARY": 1}, (name, errs)
        assert r["vrp"]["vrp_summaries_match"] == 2
    frames = gen.vrp_flow(3, 16, lost, vteth=TOL16, summaries=invent)
    r, errs = _vrp_errors(tmp_path, "invent.pcap", frames)
    assert errs == {}, errs
    assert r["vrp"]["vrp_summaries_match"] == 2
    assert r["vrp"]["vrp_summary_extra_pkts"] == 1
    # the capture ends inside message 2: its LAST never seen
    frames = gen.vrp_flow(3, 16, lost, vteth=TOL16)
    cut = frames[:-3]
    r, errs = _vrp_errors(tmp_path, "cut.pcap", cut)
    assert errs == {} and r["vrp"]["vrp_incomplete_msgs"] == 1
    assert r["vrp"]["vrp_budget_checked_msgs"] == 2
    # the summary layer as decoded
    rec = decode(frames[15]).rec   # message 0: 15 packets arrived, then its summary
    assert rec["bth"]["opcode"] == 0xe3 and rec["vleth"]["holes"][0] == [5 * 1024, 1024]
    assert rec["vleth"]["lost_pkts"] == 1 and rec["aeth"]["msn"] == 1
