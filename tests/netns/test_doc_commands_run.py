# SPDX-License-Identifier: BSD-3-Clause
"""Documented commands run as written (scripts/doc_commands.py marks them "cmd: test").

The command is read from the doc itself, so a change to the doc changes what
runs. Only names that must differ on a shared machine are replaced: the
namespace and interface names (a fresh lemu_net topology stands in for "emu",
a1 and b1), the build directory, the JSON path, and a --file-prefix of its own.
"""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import uuid


HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "..", "dpdk", "emu"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_commands as dc  # noqa: E402
import lemu_net as ln  # noqa: E402

from conftest import BUILD, serve_and_connect  # noqa: E402
from rocewan.testbed.topo import eal_lcores  # noqa: E402

N = 300


def doc_block(doc, starts_with):
    """The one command block of docs/DOC whose first line starts with @starts_with."""
    found = [body for _, lang, body, _ in dc.blocks(os.path.join(ROOT, "docs", doc))
             if dc.is_command(lang, body) and body.startswith(starts_with)]
    assert len(found) == 1, f"docs/{doc}: {len(found)} blocks start with {starts_with!r}"
    return found[0]


def test_lossy_emu_quick_start(tmp_path):
    """docs/lossy-emu.md's first command: the emulator between two veths, then Ctrl-C."""
    block = doc_block("lossy-emu.md", "ip netns exec emu build/app/lossy-emu/lossy-emu")
    argv = shlex.split(block.replace("\\\n", " "))
    topo = ln.Topology("dq%d" % (os.getpid() % 10000))
    subst = {"emu": topo.ns["e"], "iface=a1": "iface=" + topo.ifs["a1"],
             "iface=b1": "iface=" + topo.ifs["b1"], "results/emu.json": str(tmp_path / "emu.json")}
    out = []
    for a in argv:
        a = subst.get(a, a)
        a = re.sub(r"iface=([ab])1,", lambda m: "iface=%s," % topo.ifs[m.group(1) + "1"], a)
        if a.startswith("build/"):
            a = os.path.join(BUILD, a[len("build/"):])
        out.append(a)
        if a == "--no-pci":  # its own EAL runtime directory on a shared machine
            out += ["--file-prefix", "docq%d" % os.getpid()]
    assert out[:4] == ["ip", "netns", "exec", topo.ns["e"]] and os.path.basename(out[4]) == "lossy-emu"
    assert "--json" in out and out[out.index("--json") + 1] == str(tmp_path / "emu.json")
    topo.create()
    ports = {}
    try:
        ports = {"a": topo.socket("a"), "b": topo.socket("b")}
        proc = subprocess.Popen(out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines, ready = [], threading.Event()

        def pump():
            for line in proc.stdout:
                lines.append(line)
                if "Ctrl-C to stop" in line:
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        ready.wait(60)
        assert proc.poll() is None, "the documented command did not start:\n" + "".join(lines)
        for s in range(N):
            ports["a"].send(ln.probe(21, s, size=300))
            ports["b"].send(ln.probe(22, s, size=300))
            if s % 50 == 49:
                time.sleep(0.005)
        got = {"b": set(), "a": set()}

        def collect():
            for side, run in (("b", 21), ("a", 22)):
                for _, f in ports[side].take():
                    p = ln.parse_probe(f)
                    if p and p[0] == run:
                        got[side].add(p[1])

        # wait for the lossless direction (a guard, not a bound: the counts below are
        # reconciled with what the emulator still held when it stopped)
        deadline = time.time() + 10
        while time.time() < deadline and len(got["a"]) < N:
            collect()
            time.sleep(0.02)
        time.sleep(0.05)
        for pid in ln.child_pids(proc.pid):  # "Stop it with Ctrl-C": SIGINT
            os.kill(pid, signal.SIGINT)
        rc = proc.wait(30)
        assert rc == 0, "".join(lines)
        res = json.load(open(tmp_path / "emu.json"))["results"]
        a2b, b2a = res["a2b"], res["b2a"]
        # every frame the emulator sent reaches the other side (veth, no loss after it)
        deadline = time.time() + 10
        while time.time() < deadline and (len(got["b"]) < a2b["tx_pkts"] or
                                          len(got["a"]) < b2a["tx_pkts"]):
            collect()
            time.sleep(0.02)
    finally:
        for p in ports.values():
            p.close()
        topo.remove()
    # in = out + dropped by the model + still held at the stop, each direction
    for d, name in ((a2b, "a2b"), (b2a, "b2a")):
        assert d["rx_pkts"] == N, (name, d)
        assert d["tx_pkts"] + d["drop_loss"] + d["in_flight"] == N, (name, d)
    assert b2a["drop_loss"] == 0, b2a  # b2a is "delay 10ms": no loss model
    assert len(got["b"]) == a2b["tx_pkts"] and len(got["a"]) == b2a["tx_pkts"], (
        len(got["b"]), len(got["a"]), a2b, b2a)
    print("quick start: a2b %d in, %d out, %d lost by the model, %d held; b2a %d out" %
          (a2b["rx_pkts"], a2b["tx_pkts"], a2b["drop_loss"], a2b["in_flight"], b2a["tx_pkts"]))


def rnic_manual_blocks():
    """docs/rnic.md's blocks that name test_rnic_manual: (marker note, body), in order."""
    return [(mark[1], body) for _, lang, body, mark in dc.blocks(os.path.join(ROOT, "docs", "rnic.md"))
            if dc.is_command(lang, body) and mark and mark[0] == "test"
            and mark[1].split()[0].endswith("::test_rnic_manual")]


def doc_commands(body):
    """A block's commands, continuation lines joined, comments dropped."""
    return [c.strip() for c in body.replace("\\\n", " ").split("\n")
            if c.strip() and not c.strip().startswith("#")]


class ManualNames:
    """The names rnic.md uses (namespaces a and b, veths va and vb, results/, build/,
    configs/, EAL -l N) mapped to ones of this run."""

    def __init__(self, tmp_path):
        tag = uuid.uuid4().hex[:6]
        self.map = {"a": f"dm{tag}a", "b": f"dm{tag}b", "va": f"dv{tag}a", "vb": f"dv{tag}b"}
        self.tmp = tmp_path
        self.n = 0

    AFTER = ("add", "del", "set", "dev", "name", "netns", "exec", "-n", "-K")

    def argv(self, cmd):
        words, out, eal = shlex.split(cmd), [], True
        i = 0
        while i < len(words):
            w = words[i]
            if w in self.map and out and out[-1] in self.AFTER:
                w = self.map[w]
            w = re.sub(r"iface=(va|vb),", lambda m: "iface=%s," % self.map[m.group(1)], w)
            if w.startswith("build/"):
                w = os.path.join(BUILD, w[len("build/"):])
            elif w.startswith("configs/"):
                w = os.path.join(ROOT, w)
            elif w.startswith("results/"):
                w = str(self.tmp / os.path.basename(w))
            eal = eal and w != "--"
            if eal and w == "-l" and i + 1 < len(words):  # floating lcores on a shared host
                out += shlex.split(eal_lcores(words[i + 1]))
                i += 2
                continue
            out.append(w)
            if w == "--no-pci":  # its own EAL runtime directory on a shared machine
                self.n += 1
                out += ["--file-prefix", "dm%d_%d" % (os.getpid(), self.n)]
            i += 1
        return out


def mtu_packets(size, mtu):
    return max(1, -(-size // mtu))


def test_rnic_manual(tmp_path):
    """docs/rnic.md's examples as written: the namespace set-up block, then each
    server/client pair, then the --help block. Exact counts per example: every message
    completed, every request packet sent once for the first time and accepted once in
    order, the negotiated recovery, the flows' bytes. Also every option --help prints and
    every counter the quick start's --json reports is named in rnic.md."""
    blocks = rnic_manual_blocks()
    assert len(blocks) >= 4, f"docs/rnic.md: {len(blocks)} blocks for test_rnic_manual"
    names = ManualNames(tmp_path)
    setup = [b for r, b in blocks if "setup" in r.split()[1:2]]
    pairs = [b for r, b in blocks if b.count("build/app/rnic/rnic") == 2]
    helps = [b for r, b in blocks if "--help" in b and b.count("build/app/rnic/rnic") == 1]
    assert len(setup) == 1 and len(pairs) >= 3 and len(helps) == 1, blocks
    doc = open(os.path.join(ROOT, "docs", "rnic.md"), encoding="utf-8").read()
    try:
        for cmd in doc_commands(setup[0]):
            r = subprocess.run(names.argv(cmd), capture_output=True, text=True)
            assert r.returncode == 0 or "ethtool" in cmd, (cmd, r.stderr)
        results = []
        for body in pairs:
            cmds = doc_commands(body)
            assert len(cmds) == 2 and cmds[0].endswith("&"), body
            srv, cli = names.argv(cmds[0][:-1]), names.argv(cmds[1])
            rcs, out = serve_and_connect(shlex.join(srv), shlex.join(cli), timeout=120)
            assert rcs == [0, 0], (body, rcs, out)
            js = [srv[srv.index("--json") + 1], cli[cli.index("--json") + 1]]
            docs = [json.load(open(j)) for j in js]
            results.append((body, cli, docs))
    finally:
        for ns in (names.map["a"], names.map["b"]):
            subprocess.run(f"ip netns pids {ns} | xargs -r kill -9", shell=True)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    for body, cli, (s, c) in results:
        sr, cr = s["results"], c["results"]
        assert s["schema"] == c["schema"] == "rocewan/1", body
        assert sr["completion_errors"] == cr["completion_errors"] == 0, body
        cfg = c["config"]
        assert sr["recovery_used"] == cr["recovery_used"] == \
            cfg["recovery"].replace("fec+", ""), (body, sr["recovery_used"])
        sent, got = cr["qp_counters"]["tx_req_packets"], sr["qp_counters"]["rx_req_packets"]
        if cfg["flows"]:
            f = cr["flows"]
            assert f["count"] == f["completed"] == cfg["flows"], f
            assert sum(r[0] for r in f["records"]) == f["bytes"], f
            assert sent == got == sum(mtu_packets(r[0], cfg["mtu_bytes"]) for r in f["records"])
            assert sr["qp_counters"]["rx_req_bytes"] == f["bytes"], sr["qp_counters"]
        else:
            n, size = cfg["iters"], cr["size_bytes"]
            assert cr["iters"] == n, (body, cr["iters"])
            assert sent == got == n * mtu_packets(size, cfg["mtu_bytes"]), (body, sent, got)
            if cfg["mode"] in ("write_bw", "send_bw"):
                assert sr["qp_counters"]["rx_req_bytes"] == n * size, body
        print("rnic.md: %s: %d request packets sent and accepted, recovery %s" %
              (cfg["mode"], sent, cr["recovery_used"]))
    # the --help block, and the manual names every option and counter
    argv = names.argv(doc_commands(helps[0])[0])
    r = subprocess.run(argv, capture_output=True, text=True)
    assert r.returncode == 0 and "Usage: rnic" in r.stdout, r
    opts = set(re.findall(r"^\s+(?:-\w, )?(--[\w-]+)", r.stdout, re.M))
    assert len(opts) > 60, opts
    missing = sorted(o for o in opts if "`%s" % o not in doc)
    assert not missing, f"docs/rnic.md does not name the options {missing}"
    cr = results[0][2][1]["results"]
    counters = set(cr["qp_counters"]) | set(cr["port_counters"]) | set(cr) | set(cr["rtt"])
    missing = sorted(k for k in counters if "`%s`" % k not in doc)
    assert not missing, f"docs/rnic.md does not name the counters {missing}"
