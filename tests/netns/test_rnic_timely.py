"""TIMELY on the wire. rnic A -> lossy-emu (delay 5 ms on A->B) -> rnic B, both
rnics `--cc timely` with its datacenter defaults (T_low 50 us, T_high 500 us), rc_pingpong.

Every RTT either rnic samples crosses the emulator's 5 ms once (A's requests, or the ACKs
of B's echoes), so every sample is above T_high whatever the load: TIMELY (Mittal et al.,
SIGCOMM 2015, Algorithm 1) may only cut (`rate *= 1 - beta (1 - T_high / rtt)`) and never
increase. That is a protocol fact a loaded host cannot break, so it is asserted: samples
were taken, the rate was cut, never raised, and ends at or below 0.28 of the line (one cut
at rtt >= 5 ms: 1 - 0.8 x 0.9), at the 100 Mb/s floor after ten samples; the cc_trace
shows only RTTs >= 5 ms. rc_pingpong's client compares every echo with what it sent, byte
by byte. How fast the rate reacts to added delay is timing: bench/cc/timely.py.
"""
import json
import os
import sys

import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("ROCEWAN_BUILD", BUILD)
from rocewan.testbed.topo import Topology  # noqa: E402

MSG, ITERS = 65536, 20
DELAY_US = 5000
FLOOR_GBPS = 0.1  # cc-param min_rate_mbps default


def test_timely_reacts_to_delay(tmp_path):
    for exe in ("rnic", "lossy-emu"):
        p = os.path.join(BUILD, "app", exe, exe)
        if not os.access(p, os.X_OK):
            pytest.fail(f"{p} is not built")
    js = {k: str(tmp_path / f"{k}.json") for k in ("emu", "A", "B")}
    with Topology("xm%d" % (os.getpid() % 10000), 1024) as topo:
        emu = topo.start_emu(f"delay {DELAY_US // 1000}ms", "", 1, js["emu"])
        rc_a, out_a, rc_b, out_b = topo.rnic_pair(
            "rc_pingpong", f"-s {MSG} -n {ITERS} -m 1024 --cc timely", js["A"], js["B"], timeout=120)
        topo.stop(emu)
    assert rc_a == 0 and rc_b == 0, f"--- A:\n{out_a[-2000:]}\n--- B:\n{out_b[-2000:]}"
    assert f"{ITERS} iters in" in out_a, out_a  # every echo arrived and matched byte by byte
    res = {}
    for k in ("A", "B"):
        with open(js[k]) as f:
            res[k] = json.load(f)
    for k in ("A", "B"):
        r = res[k]["results"]
        q = r["qp_counters"]
        assert res[k]["config"]["cc"] == "timely", res[k]["config"]
        assert r["completion_errors"] == 0, r
        assert q["rx_req_bytes"] == MSG * ITERS, q  # each message placed exactly once
        assert q["rtt_samples"] >= 2, q
        assert q["cc_increases"] == 0, q  # every sample is above T_high
        assert q["cc_decreases"] >= 1, q
        assert q["tx_cnps"] == 0 and q["rx_cnps"] == 0 and q["rx_ecn_ce"] == 0, q  # delay based
        (cq,) = r["cc_qps"]
        assert cq["rtt_us"] >= DELAY_US, cq
        line = cq["rate_gbps"] / FLOOR_GBPS  # only a bound: the floor is <= the rate
        assert line >= 1 - 1e-9, cq
        if q["rtt_samples"] >= 10:  # 0.28^9 < 0.01: at the floor whatever the line rate <= 10 Tb/s
            assert abs(cq["rate_gbps"] - FLOOR_GBPS) < 1e-9, (cq, q)
        print(f"\n{k}: {q['rtt_samples']} RTT samples, {q['cc_decreases']} cuts, rate now "
              f"{cq['rate_gbps']:.3f} Gb/s, last RTT {cq['rtt_us']:.0f} us, "
              f"{q['tx_retransmits']} retransmits")
    tr = res["A"]["results"]["cc_trace"]
    cols = tr["columns"]
    rtts = [x[cols.index("rtt_us")] for x in tr["rows"] if x[cols.index("rtt_us")] > 0]
    assert rtts and min(rtts) >= DELAY_US, tr
    rates = [x[cols.index("rate_gbps")] for x in tr["rows"]]
    # the trace never shows the rate going up (TIMELY only cut)
    assert all(b <= a + 1e-12 for a, b in zip(rates, rates[1:])), rates


if __name__ == "__main__":
    pytest.main([__file__, "-v", "-s"])
