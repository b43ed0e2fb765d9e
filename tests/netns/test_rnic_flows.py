"""The flow workload (--flows) rnic against rnic on a veth pair: every flow is one RDMA
WRITE, and with -q N flow i runs on QP i mod N, each QP a connection of its own (the
seeds' simulations give every flow its own QP). Exact facts only: every flow completes,
each on its QP, the data packets reconcile across the two ends, and the order of
starts: at --load 0 each QP runs one flow at a time, so the first N flows start in the
same poll and flow N waits for flow 0. The negative control (-q 1) serialises them.
"""
import pytest

from conftest import rnic_pair as pair

SIZE = 8192  # 8 packets at MTU 1024
FLOWS = 24


def after(a, b):
    """a >= b for two times the JSON printed with 9 significant digits (%.9g): equal within
    that rounding, not a timing allowance."""
    return a >= b - 2e-8 * max(abs(a), abs(b)) - 1e-3


def run_flows(vp, tmp_path, qps):
    rcs, out, res = pair(vp, tmp_path, "write_bw",
                         f"-m 1024 -s {SIZE} --flows {FLOWS} --load 0 -q {qps}")
    assert rcs == [0, 0], f"exit codes {rcs}\n--- server:\n{out[0]}\n--- client:\n{out[1]}"
    srv, cli = (r["results"] for r in res)
    f = cli["flows"]
    assert (f["count"], f["completed"], f["bytes"]) == (FLOWS, FLOWS, FLOWS * SIZE), f
    assert cli["completion_errors"] == 0, cli
    rec = f["records"]
    assert [r[3] for r in rec] == [i % qps for i in range(FLOWS)], rec  # flow i on QP i mod N
    assert all(r[0] == SIZE and r[2] > 0 for r in rec), rec
    # every first transmission taken in order once at the server, whichever QP carried it
    assert srv["qp_counters"]["rx_req_packets"] == cli["qp_counters"]["tx_req_packets"] \
        == FLOWS * SIZE // 1024, (srv["qp_counters"], cli["qp_counters"])
    per_qp = [q["msgs"] for q in cli["qp_results"]]
    assert per_qp == [FLOWS // qps] * qps, cli["qp_results"]
    return rec


@pytest.mark.parametrize("qps", [4])
def test_flows_over_qps(veth_pair, tmp_path, qps):
    rec = run_flows(veth_pair, tmp_path, qps)
    # load 0: the first N flows go in the same poll (one per idle QP) ...
    assert len({r[1] for r in rec[:qps]}) == 1, rec[:qps]
    # ... and flow i + N starts only after flow i of the same QP completed
    for i in range(FLOWS - qps):
        assert after(rec[i + qps][1], rec[i][1] + rec[i][2]), (i, rec[i], rec[i + qps])


def test_flows_one_qp_serialises(veth_pair, tmp_path):
    """Negative control: one QP, so every flow waits for the one before it."""
    rec = run_flows(veth_pair, tmp_path, 1)
    for i in range(FLOWS - 1):
        assert after(rec[i + 1][1], rec[i][1] + rec[i][2]), (i, rec[i], rec[i + 1])
    assert len({r[1] for r in rec}) == FLOWS, rec
