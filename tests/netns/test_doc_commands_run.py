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


HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "..", "dpdk", "emu"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_commands as dc  # noqa: E402
import lemu_net as ln  # noqa: E402

from conftest import BUILD  # noqa: E402

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
