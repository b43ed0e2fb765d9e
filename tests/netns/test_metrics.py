"""Prometheus metrics of the three programs (--metrics ADDR:PORT, --metrics-file;
docs/metrics.md), scraped while they run.

Each program runs in a network namespace (its own port space) with
--metrics 0.0.0.0:9101 and a --metrics-file; the test scrapes
http://127.0.0.1:9101/metrics from inside the namespace with curl until the
run's own traffic shows in the document (a wait that ends on the event),
checks it with `promtool check metrics` (exit 0: valid text format 0.0.4,
no lint finding), checks the HTTP errors (404 for another path, 405 for a
POST), and at exit compares the file's final values with the program's --json,
counter by counter: they are read after the data path stopped, so they must be
equal.
"""
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import RNIC, eal, sh

PORT = 9101
PROMTOOL = "/usr/bin/promtool"


def need(path):
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing (build it; promtool: apt-get install prometheus, "
                    "scripts/bootstrap.sh)", pytrace=False)


def curl(ns, path="/metrics", method="GET"):
    """(HTTP status, body) of a request from inside @ns (status 0: no connection)."""
    r = subprocess.run(["ip", "netns", "exec", ns, "curl", "-s", "-m", "10", "-X", method,
                        "-o", "-", "-w", "\n%{http_code}", f"http://127.0.0.1:{PORT}{path}"],
                       capture_output=True, text=True)
    body, _, code = r.stdout.rpartition("\n")
    return int(code or 0), body


def parse(text):
    """name{labels} -> value of every sample (HELP/TYPE lines skipped)."""
    out = {}
    for ln in text.splitlines():
        if not ln or ln.startswith("#"):
            continue
        key, val = ln.rsplit(" ", 1)
        out[key] = float(val)
    return out


def promtool(text):
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                       text=True)
    return r.returncode, r.stdout + r.stderr


def wait_doc(ns, proc, ready, limit=120):
    """Scrape until ready(samples) holds; the statuses seen before (each 200 or 503)."""
    seen = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        code, body = curl(ns)
        seen.append(code)
        if code == 200:
            s = parse(body)
            if ready(s):
                return body, seen
        elif code not in (0, 503):
            pytest.fail(f"scrape returned HTTP {code}: {body[:500]}")
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    pytest.fail(f"no document with the run's traffic (statuses {sorted(set(seen))}); "
                f"exit {proc.poll()}")


def check_doc(body, prefix):
    rc, out = promtool(body)
    assert rc == 0, out[:3000]
    assert f"# TYPE {prefix}up gauge" in body
    for ln in body.splitlines():
        if ln.startswith("# TYPE ") and ln.split()[3] == "counter":
            assert ln.split()[2].endswith("_total"), ln


def check_errors(ns):
    code, body = curl(ns, "/other")
    assert code == 404 and "/metrics" in body, (code, body)
    code, body = curl(ns, "/metrics", "POST")
    assert code == 405, (code, body)


def test_rnic_metrics_scraped_during_a_run(veth_pair, tmp_path):
    """rnic write_bw: the server's document during the run (its received requests
    counted), promtool, the Linux names, the per-QP series; at exit the file
    equals --json's device_counters and port_counters."""
    need(RNIC)
    need(PROMTOOL)
    vp = veth_pair
    size, iters = 65536, 3000
    js = [tmp_path / "server.json", tmp_path / "client.json"]
    mf = [tmp_path / "server.prom", tmp_path / "client.prom"]
    opts = f"write_bw -s {size} -n {iters}"
    srv = subprocess.Popen(
        f"ip netns exec {vp.ns[1]} {RNIC} {eal(vp.ifs[1], 'xwims')} -- --ip {vp.rip[1]}/24 "
        f"--metrics 0.0.0.0:{PORT} --metrics-file {mf[0]} --metrics-interval 20 --json {js[0]} "
        f"{opts}", shell=True, start_new_session=True, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        line = ""
        t0 = time.monotonic()
        while "Waiting for client" not in line and time.monotonic() - t0 < 60:
            ln = srv.stdout.readline()
            if not ln:
                break
            line += ln
        assert f"metrics at http://0.0.0.0:{PORT}/metrics" in line, line
        cli = subprocess.Popen(
            f"ip netns exec {vp.ns[0]} {RNIC} {eal(vp.ifs[0], 'xwimc')} -- --ip {vp.rip[0]}/24 "
            f"--metrics 0.0.0.0:{PORT} --metrics-file {mf[1]} --json {js[1]} {opts} {vp.kip[1]}",
            shell=True, start_new_session=True, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        # during the run: the server has accepted some of the requests, not all
        body, seen = wait_doc(vp.ns[1], srv, lambda s: s.get("rocewan_rnic_rx_req_packets_total", 0) > 0)
        check_doc(body, "rocewan_rnic_")
        check_errors(vp.ns[1])
        s = parse(body)
        for stem in ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "duplicate_request",
                     "rnr_nak_retry_err", "np_cnp_sent", "rp_cnp_handled",
                     "np_ecn_marked_roce_packets", "implied_nak_seq_err"):
            assert f"rocewan_rnic_{stem}_total" in s, stem
            assert f'rocewan_rnic_qp_{stem}_total{{qp="17",type="RC"}}' in s, stem
        # a counter carries one name: the Linux one replaces ours
        assert "rocewan_rnic_rx_out_of_sequence_total" not in s
        assert 'rocewan_rnic_qp_rate_bytes_per_second{qp="17",type="RC"}' in s
        cout, _ = cli.communicate(timeout=300)
        sout, _ = srv.communicate(timeout=60)
    finally:
        for p in (srv,):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
    assert cli.returncode == 0 and srv.returncode == 0, f"{sout[-2000:]}\n{cout[-2000:]}"
    for j, m in zip(js, mf):
        doc = json.load(open(j))["results"]
        text = open(m).read()
        rc, out = promtool(text)
        assert rc == 0, out[:2000]
        s = parse(text)
        dev = doc["device_counters"]
        names = {}
        for ln in text.splitlines():
            mm = re.match(r"# HELP (rocewan_rnic_\S+) .*\(rocewan counter (\w+), every QP", ln)
            if mm:
                names[mm.group(2)] = mm.group(1)
        assert set(names) == set(dev), set(dev) ^ set(names)
        bad = [(k, dev[k], s[names[k]]) for k in dev if s[names[k]] != dev[k]]
        assert bad == [], bad[:20]
        # one QP: its series at exit equal --json's qp_counters
        qps = {}
        for k, v in s.items():
            mm = re.match(r'(rocewan_rnic_qp_\w+)\{qp="17",type="RC"\}$', k)
            if mm:
                qps[mm.group(1)] = v
        qbad = [k for k in dev if names[k].replace("rocewan_rnic_", "rocewan_rnic_qp_", 1) not in qps
                or qps[names[k].replace("rocewan_rnic_", "rocewan_rnic_qp_", 1)] != doc["qp_counters"][k]]
        assert qbad == [], qbad[:20]
        pnames = {}
        for ln in text.splitlines():
            mm = re.match(r"# HELP (rocewan_rnic_port_\S+) .*\(rocewan port counter (\w+)\)$", ln)
            if mm:
                pnames[mm.group(2)] = mm.group(1)
        assert set(pnames) == set(doc["port_counters"]), set(pnames) ^ set(doc["port_counters"])
        for k, v in doc["port_counters"].items():
            if "_max_" in k:  # a maximum (gauge), not a count
                continue
            got = s[pnames[k]]
            assert (round(got * 1e9) if k.endswith("_ns") else got) == v, (k, got, v)
        assert doc["device_counters"]["rx_req_packets"] > 0 or doc["device_counters"]["tx_req_packets"] > 0


def test_rnic_metrics_bad_address_refused():
    need(RNIC)
    for bad in ("9101", "1.2.3:80", "0.0.0.0:70000", "localhost:80", ":80"):
        r = sh(f"{RNIC} --no-huge -- --ip 10.0.0.1/24 --metrics {bad} write_bw", check=False)
        assert r.returncode == 2 and "--metrics" in r.stderr and "Segmentation" not in r.stderr, (bad, r.stderr)
