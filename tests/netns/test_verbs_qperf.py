"""qperf 0.4.11 (Debian), unmodified, on rnic0 at both ends, with its own TCP exchange (no
-cm1). qperf's server forks a child per test, and the child opens the device: the server
process itself never opens rnic0, so each child starts a device of its own (EAL, port,
engine) on first use and releases it at exit (docs/verbs.md, "fork"). Checked per test:
qperf's own result (messages sent and received), and the exact request counts of the client's and of that test's
server child's --json (FILE with %p: one file per child)."""
import glob
import json
import os
import re
import signal
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verbs"))
from harness import RNIC_EXEC, exec_argv, pkts, wait_listen  # noqa: E402

QPERF = "/usr/bin/qperf"
LPORT = 19791
MTU = 1024


@pytest.fixture(autouse=True)
def built():
    for p in (RNIC_EXEC, QPERF):
        if not os.path.exists(p):
            pytest.fail(f"{p} is missing (make build; apt-get install qperf)")


# test, message size, messages: two tests, so two server children in turn, each with a
# device of its own. rc_lat and rc_rdma_write_bw do not finish yet (docs/verbs.md, "fork").
CASES = [("rc_bw", 4096, 200), ("rc_bw", 65536, 50)]


def test_qperf_forked_server(veth_pair, tmp_path):
    vp = veth_pair
    sj = str(tmp_path / "server-%p.json")
    sargv, _ = exec_argv(vp, 1, [], [QPERF, "-lp", str(LPORT)], sj)
    srv = subprocess.Popen(sargv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    outs = []
    try:
        assert wait_listen(vp.ns[1], LPORT, srv), srv.communicate(timeout=10)[0]
        for test, size, n in CASES:
            before = set(glob.glob(str(tmp_path / "server-*.json")))
            cj = tmp_path / f"client-{test}-{size}.json"
            cargv, _ = exec_argv(vp, 0, [], [QPERF, vp.kip[1], "-lp", str(LPORT), "-i", "rnic0:1",
                                             "-mt", str(MTU), "-m", str(size), "-n", str(n), "-to", "30",
                                             "-vv",
                                             test],
                                 cj)
            r = subprocess.run(cargv, capture_output=True, text=True, timeout=120,
                               start_new_session=True)
            out = r.stdout + r.stderr
            outs.append(out)
            assert r.returncode == 0 and test + ":" in out, f"{test}: exit {r.returncode}\n{out}"
            for what in ("send_msgs", "recv_msgs"):
                assert re.search(rf"{what}\s+=\s+{n}\s", out), f"{test}: {what} not {n}\n{out}"
            # the child that served this test wrote its file at exit
            for _ in range(100):
                new = set(glob.glob(str(tmp_path / "server-*.json"))) - before
                if new:
                    break
                subprocess.run(["sleep", "0.1"])
            assert len(new) == 1, f"{test}: server children's --json files {new}\n{out}"
            sdoc = json.load(open(new.pop()))["results"]["device_counters"]
            cdoc = json.load(open(cj))["results"]["device_counters"]
            k = pkts(size, MTU)
            if test == "rc_lat":  # a ping-pong: each side sends every message
                for d in (cdoc, sdoc):
                    assert d["tx_req_packets"] == n * k, (test, d["tx_req_packets"], out)
            else:  # the client sends, the server child receives
                assert cdoc["tx_req_packets"] == n * k, (test, cdoc["tx_req_packets"], out)
                retx = cdoc["tx_retransmits"]
                assert n * k <= sdoc["rx_req_packets"] <= n * k + retx, (test, sdoc, out)
            for d in (cdoc, sdoc):
                assert d["retry_exceeded"] == 0 and d["rx_nak_rem_access"] == 0, (test, d)
    finally:
        os.killpg(srv.pid, signal.SIGTERM)
        try:
            sout, _ = srv.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(srv.pid, signal.SIGKILL)
            sout, _ = srv.communicate()
    assert "Error" not in sout and "failed" not in sout, sout + "\n".join(outs)
