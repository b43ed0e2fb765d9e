"""The flow workload (--flows) rnic against rnic on a veth pair: every flow is one RDMA
WRITE, and with -q N the QPs are a pool of N connections (the seeds' simulations give
every flow a QP of its own): a flow takes the lowest-numbered idle QP. Exact facts only:
every flow completes on the QP its record names, the data packets and each QP's flows
reconcile across the two ends, and the order of starts: at --load 0 each QP runs one
flow at a time, so the first N flows start in one poll on QPs 0..N-1 and no two flows
of one QP overlap. The negative control (-q 1) serialises them all.
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
    assert all(r[0] == SIZE and r[2] > 0 and 0 <= r[3] < qps for r in rec), rec
    # every first transmission taken in order once at the server, whichever QP carried it
    assert srv["qp_counters"]["rx_req_packets"] == cli["qp_counters"]["tx_req_packets"] \
        == FLOWS * SIZE // 1024, (srv["qp_counters"], cli["qp_counters"])
    # each QP completed the flows the records give it
    assert [q["msgs"] for q in cli["qp_results"]] == [sum(r[3] == k for r in rec) for k in range(qps)], \
        (cli["qp_results"], rec)
    # flows start in arrival (index) order, and one QP never runs two at once
    assert all(after(rec[i + 1][1], rec[i][1]) for i in range(FLOWS - 1)), rec
    for k in range(qps):
        mine = [r for r in rec if r[3] == k]
        assert all(after(b[1], a[1] + a[2]) for a, b in zip(mine, mine[1:])), (k, mine)
    return rec


@pytest.mark.parametrize("qps", [4])
def test_flows_over_a_pool_of_qps(veth_pair, tmp_path, qps):
    rec = run_flows(veth_pair, tmp_path, qps)
    # load 0, all QPs idle at the start: the first N flows go in one poll, one per QP
    assert [r[3] for r in rec[:qps]] == list(range(qps)), rec[:qps]
    assert len({r[1] for r in rec[:qps]}) == 1, rec[:qps]


def test_flows_one_qp_serialises(veth_pair, tmp_path):
    """Negative control: one QP, so every flow waits for the one before it."""
    rec = run_flows(veth_pair, tmp_path, 1)
    for i in range(FLOWS - 1):
        assert after(rec[i + 1][1], rec[i][1] + rec[i][2]), (i, rec[i], rec[i + 1])
    assert len({r[1] for r in rec}) == FLOWS, rec
