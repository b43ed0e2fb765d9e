"""rocewan.trace: joining a hand-made lossy-emu drop log with hand-made rnic traces."""

import io
import json

import pytest

from rocewan import trace

DROPS = """# lossy-emu drop log; clock CLOCK_MONOTONIC ns (as the rnic's --trace); ...
time_ns,dir,cause,qpn,psn,opcode,len
1000000000,a2b,drop-psn,17,100,1,1082
1002000000,a2b,loss,17,200,1,1082
1002500000,a2b,loss,17,200,1,1082
1003000000,b2a,loss,18,150,17,60
1004000000,a2b,queue,,,,98
1005000000,a2b,loss,17,16777215,2,1082
1006000000,a2b,loss,17,300,1,1082
1007000000,a2b,loss,17,400,1,1082
"""

# sender A (QP 18 -> 17) and receiver B (QP 17)
TRACE_A = """# rnic trace; clock CLOCK_MONOTONIC ns ...
time_ns,event,qpn,dqpn,psn
999000000,retx,18,17,100
1000400000,retx,18,17,100
1000400100,retx,18,17,101
1002400000,retx,18,17,200
1002900000,retx,18,17,200
1005300000,retx,18,17,16777215
1006200000,retx,18,17,300
"""
TRACE_B = """# rnic trace; clock CLOCK_MONOTONIC ns ...
time_ns,event,qpn,dqpn,psn
999500000,rx_late,17,18,100
1000900000,rx_late,17,18,100
1000900100,rx_late,17,18,101
1003400000,rx_late,17,18,200
1005800000,rx_late,17,18,16777215
"""


def lines(s):
    return s.splitlines()


def joined(rtt=2.0):
    return trace.join(trace.read_drop_log(lines(DROPS)),
                      [trace.read_trace(lines(TRACE_A)), trace.read_trace(lines(TRACE_B))], rtt)


def test_read():
    d = trace.read_drop_log(lines(DROPS))
    assert len(d) == 8
    assert d[0] == {"time_ns": 1000000000, "dir": "a2b", "cause": "drop-psn", "qpn": 17,
                    "psn": 100, "opcode": 1, "len": 1082}
    assert d[4]["qpn"] is None and d[4]["psn"] is None and d[4]["len"] == 98
    t = trace.read_trace(lines(TRACE_B))
    assert t[0] == {"time_ns": 999500000, "event": "rx_late", "qpn": 17, "dqpn": 18, "psn": 100}


def test_join_every_case():
    r = joined()
    assert len(r) == 8
    # PSN 100: the nearest events after the drop, not the earlier ones (an older loss of
    # the same PSN); 0.9 ms = 0.45 RTT at 2 ms
    assert r[0]["repaired"] and r[0]["latency_ms"] == pytest.approx(0.9)
    assert r[0]["latency_rtts"] == pytest.approx(0.45)
    assert r[0]["retx_ms"] == pytest.approx(0.4)
    # PSN 200 lost twice (original and first retransmission): both repaired by the one arrival
    assert r[1]["repaired"] and r[1]["latency_ms"] == pytest.approx(1.4)
    assert r[1]["retx_ms"] == pytest.approx(0.4)  # the retransmission before the second drop
    assert r[2]["repaired"] and r[2]["latency_ms"] == pytest.approx(0.9)
    assert r[2]["retx_ms"] == pytest.approx(0.4)
    # an ACK (opcode 0x11) and a frame that is not RoCEv2
    assert not r[3]["repaired"] and r[3]["reason"] == "not a request"
    assert not r[4]["repaired"] and r[4]["reason"] == "not RoCEv2"
    # PSN 2^24 - 1: the top of the 24-bit space
    assert r[5]["repaired"] and r[5]["psn"] == 0xFFFFFF and r[5]["latency_ms"] == pytest.approx(0.8)
    # resent, but the receiver never knew it was missing (a tail loss)
    assert not r[6]["repaired"] and r[6]["reason"] == "retransmitted, arrival not traced"
    assert r[6]["retx_ms"] == pytest.approx(0.2)
    # never resent
    assert not r[7]["repaired"] and r[7]["reason"] == "never retransmitted"


def test_no_rtt_no_rtts():
    r = joined(rtt=None)
    assert r[0]["latency_rtts"] is None and r[0]["latency_ms"] == pytest.approx(0.9)


def test_summary_and_cdf():
    r = joined()
    s = trace.summary(r)
    assert s["drops"] == 8 and s["repaired"] == 4
    assert s["never_repaired"] == {"not a request": 1, "not RoCEv2": 1,
                                   "retransmitted, arrival not traced": 1,
                                   "never retransmitted": 1}
    assert s["latency_ms"]["p50"] == pytest.approx(0.9)
    assert s["latency_ms"]["max"] == pytest.approx(1.4)
    c = trace.cdf(r)
    assert [round(x, 3) for x, _ in c] == [0.8, 0.9, 0.9, 1.4]
    assert c[-1][1] == 1.0


def test_main_prints_and_writes_json(tmp_path):
    paths = []
    for name, text in (("drops.csv", DROPS), ("a.csv", TRACE_A), ("b.csv", TRACE_B)):
        p = tmp_path / name
        p.write_text(text)
        paths.append(str(p))
    out = io.StringIO()
    js = tmp_path / "trace.json"
    assert trace.main(paths + ["--rtt", "2", "--json", str(js)], out=out) == 0
    text = out.getvalue().splitlines()
    assert text[0].endswith("QP 0x11 PSN 0x000064: repaired in 0.900 ms (0.45 RTT)")
    assert text[-1].startswith("8 drops, 4 repaired (latency p50 0.900 ms")
    doc = json.loads(js.read_text())
    assert doc["summary"]["repaired"] == 4 and len(doc["rows"]) == 8 and len(doc["cdf"]) == 4


def test_malformed_line_is_refused():
    with pytest.raises(ValueError, match="line 3"):
        trace.read_trace(["time_ns,event,qpn,dqpn,psn", "1,retx,1,2,3", "1,retx,1"])


# drops of resent copies: PSN 500's original arrived (never dropped) and its resend was
# dropped; PSN 600 lost, repaired (arrival), then resent again and that copy dropped;
# PSN 700's original and resend both dropped and nothing after (the run ended): not a
# duplicate; PSN 800 resent 2 s before its drop (an older PSN of the same number)
DUP_DROPS = """# lossy-emu drop log
time_ns,dir,cause,qpn,psn,opcode,len
2000000000,a2b,loss,17,500,1,1082
2001000000,a2b,loss,17,600,1,1082
2003000000,a2b,loss,17,600,1,1082
2004000000,a2b,loss,17,700,1,1082
2004600000,a2b,loss,17,700,1,1082
5000000000,a2b,loss,17,800,1,1082
"""
DUP_A = """# rnic trace
time_ns,event,qpn,dqpn,psn
1999900000,retx,18,17,500
2001500000,retx,18,17,600
2002900000,retx,18,17,600
2004500000,retx,18,17,700
3000000000,retx,18,17,800
"""
DUP_B = """# rnic trace
time_ns,event,qpn,dqpn,psn
2001800000,rx_late,17,18,600
"""


def test_dropped_duplicates():
    r = trace.join(trace.read_drop_log(lines(DUP_DROPS)),
                   [trace.read_trace(lines(DUP_A)), trace.read_trace(lines(DUP_B))], 2.0)
    assert [x["reason"] for x in r] == [trace.DUPLICATE, None, trace.DUPLICATE,
                                        "retransmitted, arrival not traced",
                                        "never retransmitted", "never retransmitted"]
    assert r[0]["dup_retx_ms"] == pytest.approx(0.1) and not r[0]["repaired"]
    assert r[1]["repaired"] and r[1]["latency_ms"] == pytest.approx(0.8)
    assert r[2]["dup_retx_ms"] == pytest.approx(0.1)
    assert r[3]["retx_ms"] == pytest.approx(0.5)
    assert r[4]["dup_retx_ms"] is None
    assert trace.summary(r)["never_repaired"] == {trace.DUPLICATE: 2, "never retransmitted": 2,
                                                  "retransmitted, arrival not traced": 1}


# Under FEC (docs/fec.md): B traces fec_rebuilt for a PSN its decoder rebuilt. QP 17's
# PSNs 10 and 20 rebuilt, 30 resent after its block could not be rebuilt, 40 rebuilt after
# its hold was released (the responder's rx_late in the same ns: FEC's), 50 resent and the
# late rebuild a duplicate (retx first), a repair frame (0xD0) dropped.
FEC_DROPS = """time_ns,dir,cause,qpn,psn,opcode,len
1000000000,a2b,loss,17,10,7,1082
1001000000,a2b,loss,17,20,7,1082
1002000000,a2b,loss,17,30,7,1082
1002500000,a2b,loss,17,33,208,1100
1003000000,a2b,loss,17,40,7,1082
1004000000,a2b,loss,17,50,7,1082
"""
FEC_A = """time_ns,event,qpn,dqpn,psn
1030000000,retx,18,17,30
1034000000,retx,18,17,50
"""
FEC_B = """time_ns,event,qpn,dqpn,psn
1004000000,fec_rebuilt,17,18,10
1009000000,fec_rebuilt,17,18,20
1040000000,rx_late,17,18,30
1011000000,fec_rebuilt,17,18,40
1011000000,rx_late,17,18,40
1044000000,rx_late,17,18,50
1045000000,fec_rebuilt,17,18,50
"""


def test_fec_repairs_told_apart():
    rows = trace.join(trace.read_drop_log(lines(FEC_DROPS)),
                      [trace.read_trace(lines(FEC_A)), trace.read_trace(lines(FEC_B))],
                      rtt_ms=20.0, fill_ms=2.0)
    got = {r["psn"]: (r["by"], r["latency_ms"]) for r in rows}
    assert got[10] == ("fec", pytest.approx(4.0))
    assert got[20] == ("fec", pytest.approx(8.0))
    assert got[30] == ("retx", pytest.approx(38.0))
    assert got[40] == ("fec", pytest.approx(8.0))
    assert got[50] == ("retx", pytest.approx(40.0))
    r33 = next(r for r in rows if r["psn"] == 33)
    assert not r33["repaired"] and r33["reason"] == trace.FEC_FRAME and r33["by"] is None
    r10 = rows[0]
    assert r10["latency_rtts"] == pytest.approx(0.2) and r10["latency_fills"] == pytest.approx(2.0)
    s = trace.summary(rows)
    assert s["drops"] == 6 and s["repaired"] == 5 and s["never_repaired"] == {trace.FEC_FRAME: 1}
    f, x = s["by"]["fec"], s["by"]["retx"]
    assert f["repaired"] == 3 and x["repaired"] == 2
    assert f["latency_ms"] == {"p50": pytest.approx(8.0), "p90": pytest.approx(8.0),
                               "p99": pytest.approx(8.0), "max": pytest.approx(8.0)}
    assert f["latency_fills"]["p50"] == pytest.approx(4.0)
    assert x["latency_rtts"]["p50"] == pytest.approx(1.9) and x["latency_rtts"]["max"] == pytest.approx(2.0)
    assert [round(v, 3) for v, _ in trace.cdf(rows, by="fec", unit="fills")] == [2.0, 4.0, 4.0]
    assert [round(v, 3) for v, _ in trace.cdf(rows, by="retx")] == [38.0, 40.0]
    # without FEC events every arrival is a retransmission's; without fill_ms no fills
    plain = trace.join(trace.read_drop_log(lines(FEC_DROPS)), [trace.read_trace(lines(FEC_A))], 20.0)
    assert all(r["by"] is None and r["latency_fills"] is None for r in plain)
    assert trace.summary(plain)["by"]["fec"] == {"repaired": 0, "latency_ms": trace.quantiles([])}


def test_main_fec_lines(tmp_path):
    paths = []
    for name, text in (("d.csv", FEC_DROPS), ("a.csv", FEC_A), ("b.csv", FEC_B)):
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    out = io.StringIO()
    assert trace.main(paths + ["--rtt", "20", "--fill", "2"], out=out) == 0
    text = out.getvalue().splitlines()
    assert text[0].endswith("PSN 0x00000a: repaired by FEC in 4.000 ms (0.20 RTT) (2.00 fills)")
    assert text[-2] == "  by fec: 3 (p50 8.000 ms, p99 8.000 ms)"
    assert text[-1] == "  by retx: 2 (p50 38.000 ms, p99 40.000 ms)"
