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
import sys
import threading
import time

import pytest

from conftest import BUILD, RNIC, eal, rnic_pair, sh

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
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, val = line.rsplit(" ", 1)
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
    for line in body.splitlines():
        if line.startswith("# TYPE ") and line.split()[3] == "counter":
            assert line.split()[2].endswith("_total"), line


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
        f"--metrics 0.0.0.0:{PORT} --metrics-file {mf[0]} --metrics-interval 20ms --json {js[0]} "
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
        # QP1 (the GSI): a bounded set of series (43), each equal to --json's gsi
        g = doc["gsi"]
        gsi = {k: v for k, v in s.items() if k.startswith("rocewan_rnic_gsi_")}
        assert len(gsi) == 3 + len(g["drops"]) + len(g["tx_errors"]) + 2 * len(g["rx_mads"]) == 43, gsi
        for k, name in (("rx_total", "rx_total"), ("delivered", "delivered_total"),
                        ("tx_total", "tx_total")):
            assert gsi[f"rocewan_rnic_gsi_{name}"] == g[k], k
        for cause, v in g["drops"].items():
            assert gsi[f'rocewan_rnic_gsi_drops_total{{cause="{cause}"}}'] == v, cause
        for d in ("rx", "tx"):
            for kind, v in g[f"{d}_mads"].items():
                cls, attr = kind.split("-", 1) if kind.startswith("cm-") else (kind, "any")
                assert gsi[f'rocewan_rnic_gsi_mads_total{{dir="{d}",class="{cls}",attr="{attr}"}}'] == v, kind


def test_rnic_per_qp_series_bounded(veth_pair, tmp_path):
    """write_bw -q 18: per-QP series for the first 16 QPs, the last two added up under
    qp="other"; at exit the per-QP series of a counter add up to the device's."""
    need(RNIC)
    mf = tmp_path / "m.prom"
    rcs, out, res = rnic_pair(veth_pair, tmp_path, "write_bw", "-q 18 -s 4096 -n 40",
                              side_opts=("", f"--metrics-file {mf}"))
    assert rcs == [0, 0], out
    text = open(mf).read()
    rc, msg = promtool(text)
    assert rc == 0, msg[:2000]
    s = parse(text)
    fam = "rocewan_rnic_qp_rx_req_packets_total"
    series = {k: v for k, v in s.items() if k.startswith(fam + "{")}
    labels = sorted(re.search(r'qp="(\w+)"', k).group(1) for k in series)
    assert len(series) == 17 and labels.count("other") == 1, labels
    assert sum(series.values()) == s["rocewan_rnic_rx_req_packets_total"] \
        == res[0]["results"]["device_counters"]["rx_req_packets"] > 0
    assert s["rocewan_rnic_qps"] == 18
    rates = [k for k in s if k.startswith("rocewan_rnic_qp_rate_bytes_per_second{")]
    assert len(rates) == 16 and not any('qp="other"' in k for k in rates)


def test_rnic_metrics_bad_address_refused():
    need(RNIC)
    for bad in ("9101", "1.2.3:80", "0.0.0.0:70000", "localhost:80", ":80"):
        r = sh(f"{RNIC} --no-huge -- --ip 10.0.0.1/24 --metrics {bad} write_bw", check=False)
        assert r.returncode == 2 and "--metrics" in r.stderr and "Segmentation" not in r.stderr, (bad, r.stderr)


# ---- lossy-emu and pfc-relay: ns E between two veth pairs (tests/dpdk/emu/lemu_net.py) ----

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dpdk", "emu"))
import lemu_net as ln  # noqa: E402

LEMU = os.path.join(BUILD, "app", "lossy-emu", "lossy-emu")
RELAY = os.path.join(BUILD, "app", "pfc-relay", "pfc-relay")
PRIO3_TOS = 26 << 2  # DSCP 26 -> priority 3


@pytest.fixture
def emu_net():
    topo = ln.Topology("xwi%d" % (os.getpid() % 10000))
    topo.create()
    sh(f"ip -n {topo.ns['e']} link set lo up")  # the scrape goes to 127.0.0.1 in ns E
    a, b = topo.socket("a"), topo.socket("b")
    yield topo, a, b
    a.close()
    b.close()
    topo.remove()


def final_file(path, app_json):
    text = open(path).read()
    rc, out = promtool(text)
    assert rc == 0, out[:2000]
    return text, parse(text), json.load(open(app_json))


def test_lossy_emu_metrics(emu_net, tmp_path):
    """200 probes A -> B through `loss 50%`: the document during the run (promtool,
    drops by cause, queue depth), and at exit the file equals --json per direction
    and reconciles (what the emulator received = sent + drops by cause)."""
    need(LEMU)
    need(PROMTOOL)
    topo, a, b = emu_net
    js, mf = str(tmp_path / "emu.json"), str(tmp_path / "emu.prom")
    emu = ln.Emu(LEMU, topo, "xwime%d" % os.getpid(), str(tmp_path))
    # scrapes all through start and stop: each a whole document, a 503 or a refused connection
    stop, got = threading.Event(), []

    def scraper():
        while not stop.is_set():
            got.append(curl(topo.ns["e"]))
            time.sleep(0.01)

    th = threading.Thread(target=scraper, daemon=True)
    th.start()
    emu.start(["--a2b", "loss 50%", "--seed", "7", "--json", js, "--metrics", f"0.0.0.0:{PORT}",
               "--metrics-file", mf, "--metrics-interval", "20ms"])
    try:
        assert any(f"metrics at http://0.0.0.0:{PORT}/metrics" in ln_ for ln_ in emu.out), emu.out
        n = 200
        for i in range(n):
            a.send(ln.probe(1, i, size=300))
        # the emulator also forwards the kernel's own frames on the veth (IPv6 neighbour
        # discovery and the like), so it may count more than the probes: wait for the
        # first frames; the counts at exit reconcile whatever arrived
        body, _ = wait_doc(topo.ns["e"], emu.proc,
                           lambda s: s.get('rocewan_lossy_emu_rx_pkts_total{dir="a2b"}', 0) > 0)
        check_doc(body, "rocewan_lossy_emu_")
        check_errors(topo.ns["e"])
        s = parse(body)
        for d in ("a2b", "b2a"):
            assert f'rocewan_lossy_emu_queue_bytes{{dir="{d}"}}' in s
            assert f'rocewan_lossy_emu_ecn_marked_total{{dir="{d}"}}' in s
            for cause in ("loss", "queue", "rule", "nombuf", "ctrl", "multiseg", "cut", "rx_missed"):
                assert f'rocewan_lossy_emu_drops_total{{dir="{d}",cause="{cause}"}}' in s, cause
    finally:
        rc = emu.stop()
        time.sleep(0.2)
        stop.set()
        th.join(30)
    assert rc == 0, "".join(emu.out)[-3000:]
    codes = sorted({c for c, _ in got})
    assert set(codes) <= {0, 200, 503} and 200 in codes, codes
    for c, b in got:
        if c == 200:
            assert b.endswith("\n") and "rocewan_lossy_emu_up 1\n" in b and parse(b), b[-300:]
        elif c == 503:
            assert b.startswith(("starting:", "stopping:")), b
    assert got[-1][0] == 0  # after the exit: nothing listens
    text, s, doc = final_file(mf, js)
    res = doc["results"]
    for d in ("a2b", "b2a"):
        for k, v in res[d].items():
            if not isinstance(v, int) or isinstance(v, bool):
                continue
            name = None
            for ln_ in text.splitlines():
                mm = re.match(r"# HELP (\S+) .*\(lossy-emu counter (\w+), per direction\)$", ln_)
                if mm and mm.group(2) == k:
                    name = mm.group(1)
            if name is None:
                continue  # a --json figure that is not a counter (e.g. delay_err figures)
            got = s[f'{name}{{dir="{d}"}}']
            assert (round(got * 1e9) if k.endswith("_ns") else got) == v, (d, k, got, v)
    a2b = {c: s[f'rocewan_lossy_emu_drops_total{{dir="a2b",cause="{c}"}}'] for c in ("loss", "queue")}
    rx = s['rocewan_lossy_emu_rx_pkts_total{dir="a2b"}']
    assert rx > 0
    assert s['rocewan_lossy_emu_tx_pkts_total{dir="a2b"}'] + a2b["loss"] + a2b["queue"] == rx
    assert 0 < a2b["loss"] < rx  # the negative control: the loss model did drop, not all


def test_pfc_relay_metrics(emu_net, tmp_path):
    """The far side pauses priority 3 (65535 quanta at 10 Mbit/s: 3.36 s, no refresh) and
    20 priority-3 frames of 300 B wait in the relay: the document shows the pause and an
    occupancy of exactly 6000 bytes; after the XON the file at exit equals --json."""
    need(RELAY)
    need(PROMTOOL)
    topo, a, b = emu_net
    js, mf = str(tmp_path / "relay.json"), str(tmp_path / "relay.prom")
    relay = ln.Emu(RELAY, topo, "xwimr%d" % os.getpid(), str(tmp_path))
    relay.start(["--link-rate", "10mbit", "--rtt", "1ms", "--watchdog", "off", "--xoff", "64kb",
                 "--xon", "16kb", "--json", js, "--metrics", f"0.0.0.0:{PORT}", "--metrics-file", mf],
                lcores="0", mem=256, framesz=2048, blocksz=8192)
    q = 'path="l2r",prio="3"'
    try:
        b.send(ln.pfc_frame(src=ln.MAC_B, prio=3, quanta=0xFFFF))
        wait_doc(topo.ns["e"], relay.proc, lambda s: s.get(f"rocewan_pfc_relay_paused_now{{{q}}}") == 1)
        for i in range(20):
            a.send(ln.probe(1, i, size=300, tos=PRIO3_TOS))
        body, _ = wait_doc(topo.ns["e"], relay.proc,
                           lambda s: s.get(f"rocewan_pfc_relay_enq_pkts_total{{{q}}}") == 20)
        check_doc(body, "rocewan_pfc_relay_")
        check_errors(topo.ns["e"])
        s = parse(body)
        assert s[f"rocewan_pfc_relay_queued_bytes{{{q}}}"] == 20 * 300, body[:2000]
        assert s[f"rocewan_pfc_relay_pauses_total{{{q}}}"] == 1
        assert s[f"rocewan_pfc_relay_tx_pkts_total{{{q}}}"] == 0
        b.send(ln.pfc_frame(src=ln.MAC_B, prio=3, quanta=0))
        wait_doc(topo.ns["e"], relay.proc, lambda s: s.get(f"rocewan_pfc_relay_tx_pkts_total{{{q}}}") == 20)
    finally:
        rc = relay.stop()
    assert rc == 0, "".join(relay.out)[-3000:]
    text, s, doc = final_file(mf, js)
    res = doc["results"]
    for d in ("l2r", "r2l"):
        for pr in res[d]["prio"]:
            lab = f'path="{d}",prio="{pr["prio"]}"'
            for k, v in pr.items():
                if k in ("prio", "lossless") or k == "paused_ns":
                    continue  # paused_ns of a pause still running grows between the two reads
                gauge = k in ("queued_bytes", "hwm_bytes", "paused_now", "wd_in_storm")
                name = f"rocewan_pfc_relay_{k}" + ("" if gauge else "_total")
                assert s[f"{name}{{{lab}}}"] == v, (d, k, s[f"{name}{{{lab}}}"], v)
    for port in ("local", "remote"):
        for k, v in res[port].items():
            if k in ("port", "rate_bps") or k.startswith("pmd_"):
                continue
            assert s[f'rocewan_pfc_relay_port_{k}_total{{port="{port}"}}'] == v, (port, k)
    assert s['rocewan_pfc_relay_port_rx_pfc_total{port="remote"}'] == 2
