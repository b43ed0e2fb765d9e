"""rnic-exec's Prometheus metrics (--metrics ADDR:PORT, --metrics-file; docs/metrics.md,
docs/verbs.md): Debian's ibv_rc_pingpong on rnic0 on both ends of a veth pair, the
server's device serving its counters. A document scraped during the run passes
`promtool check metrics`; at exit the file's final values equal the device's --json
counter by counter (both are read after the data path stopped). No per-QP series: the
program destroys its QPs while a scrape could read them."""
import os
import re
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verbs"))
from harness import RNIC_EXEC, check_ok, run_pair  # noqa: E402
from test_metrics import PORT, PROMTOOL, curl, need, parse, promtool  # noqa: E402

ITERS = 3000
TOOL = "/usr/bin/ibv_rc_pingpong"


@pytest.fixture(autouse=True)
def built():
    need(RNIC_EXEC)
    need(PROMTOOL)


def test_rnic_exec_metrics_scraped_during_a_run(veth_pair, tmp_path):
    vp = veth_pair
    mf = tmp_path / "server.prom"
    cmd = [TOOL, "-d", "rnic0", "-g", "0", "-c", "-s", "4096", "-n", str(ITERS), "-m", "1024"]
    got, stop = {}, threading.Event()

    def scrape():  # until a document shows the run's traffic, or the run ended
        while not stop.is_set():
            code, body = curl(vp.ns[1])
            got.setdefault("codes", set()).add(code)
            if code == 200 and parse(body).get("rocewan_rnic_rx_req_packets_total", 0) > 0:
                got["body"] = body
                return
            time.sleep(0.02)
    t = threading.Thread(target=scrape, daemon=True)
    t.start()
    try:
        r = run_pair(vp, tmp_path, cmd, cmd, dev_opts=["--mtu", "1024"],
                     side_opts=(("--metrics", f"0.0.0.0:{PORT}", "--metrics-file", str(mf),
                                 "--metrics-interval", "20ms"), ()))
    finally:
        stop.set()
        t.join(15)
    check_ok(r, [TOOL, TOOL])
    assert "body" in got, f"no document with the run's traffic (statuses {got.get('codes')}){r.both()}"
    # only 200 (ready) and 503 (starting) before it, 0 while nothing listened yet
    assert got["codes"] <= {0, 200, 503}, got["codes"]
    rc, out = promtool(got["body"])
    assert rc == 0, out[:2000]
    assert not re.search(r'\{qp="', got["body"]), "per-QP series from rnic-exec"
    text = open(mf).read()
    rc, out = promtool(text)
    assert rc == 0, out[:2000]
    s = parse(text)
    dev = r.dev(0)
    names = {}
    for ln in text.splitlines():
        mm = re.match(r"# HELP (rocewan_rnic_\S+) .*\(rocewan counter (\w+), every QP", ln)
        if mm:
            names[mm.group(2)] = mm.group(1)
    assert set(names) == set(dev), set(dev) ^ set(names)
    bad = [(k, dev[k], s[names[k]]) for k in dev if s[names[k]] != dev[k]]
    assert bad == [], bad[:20]
    # the ping-pong's exact count: every message once, 4 packets of 1 KiB each
    assert s["rocewan_rnic_rx_req_packets_total"] == dev["rx_req_packets"] == ITERS * 4, dev
