"""Capture on memif links (docs/capture.md): `testbed up --capturable` runs lossy-emu as
a shared-config primary on hugepages, `testbed capture` attaches dpdk-dumpcap (a DPDK
secondary process) to its two memif ports and tcpdump to the control veth. Exact facts
only: every frame each rnic counted is in the capture, once per link it crossed (frame
counts against the rnics' and the emulator's --json counters, with deterministic drops);
`rocewan validate` passes on it; perftest's TCP exchange is in it. Negative control: a
topology in today's private mode (--no-huge) is refused with the way out named.
"""
import json
import os
import signal
import subprocess

import pytest

from rocewan import pcapio
from rocewan.testbed import topo

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTBED = os.path.join(ROOT, "testbed")
# unique per run (pid): another make test or testbed on this host keeps its own namespaces
PREFIX = "tbk%d" % (os.getpid() % 100000)
NTH = 53      # lossy-emu drop-nth on A->B: every 53rd RoCEv2 packet
ITERS = 100   # write_bw messages of 64 KiB: 16 packets of 4 KiB each
MAC = {"A": bytes.fromhex("02770000000a"), "B": bytes.fromhex("02770000000b")}
UP = ("--set", 'link.transport="memif"', "--set", 'link.rtt="2ms"', "--set", 'link.rate="1gbit"',
      "--set", f'link.a2b_extra="drop-nth {NTH}"', "--set", "workload.size=\"64K\"",
      "--set", f"workload.iters={ITERS}")


def tb(*args, timeout=120):
    r = subprocess.run([TESTBED, "--prefix", PREFIX, *args], capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT)
    return r.returncode, r.stdout + r.stderr


@pytest.fixture(scope="module", autouse=True)
def root_build_hugepages():
    if os.geteuid() != 0:
        pytest.fail("the testbed tests need root (namespaces, DPDK); CI runs them as root")
    if subprocess.run(["which", topo.DUMPCAP], capture_output=True).returncode:
        pytest.fail(f"{topo.DUMPCAP} is missing (Debian package dpdk, scripts/bootstrap.sh)")
    # lossy-emu's pools at 1 Gb/s x 2 ms and dumpcap's two rings: well under 256 pages
    if topo.free_hugepages() < 256:
        pytest.fail(f"{topo.free_hugepages()} free 2 MiB hugepages: the shared EAL mode needs "
                    "hugepages (scripts/hugepages.sh reserves 1024)")
    yield
    tb("down")


def rnic_lines(out, json_a, json_b):
    """The two rnic command lines `up` printed (B first), with --json."""
    lines = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("ip netns exec")]
    assert len(lines) == 2 and "-s 65536" in lines[0] and f"-n {ITERS}" in lines[0], out
    return [ln.replace("write_bw", f"--json {js} write_bw")
            for ln, js in zip(lines, (json_b, json_a))]


def test_dumpcap_captures_a_memif_run_exactly(tmp_path):
    js = {k: str(tmp_path / f"{k}.json") for k in "AB"}
    pcap = str(tmp_path / "cap.pcap")
    rc, out = tb("up", "--capturable", *UP, timeout=120)
    try:
        assert rc == 0, out
        srv_line, cli_line = rnic_lines(out, js["A"], js["B"])
        srv = subprocess.Popen(srv_line, shell=True, start_new_session=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # the capture announces itself once both dumpcaps have pdump enabled in lossy-emu
        # and tcpdump listens: from then on no frame is missed (no capture window)
        cap = subprocess.Popen([TESTBED, "--prefix", PREFIX, "capture", "--side", "both",
                                "--seconds", "0", "--out", pcap], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        first = cap.stdout.readline()
        assert first.startswith("capturing the memif link"), first + cap.stdout.read()
        # hang guards only (a loaded 2-core host may be slow): exact facts are checked below
        cli = subprocess.run(cli_line, shell=True, start_new_session=True, capture_output=True,
                             text=True, timeout=300)
        assert cli.returncode == 0, cli.stdout + cli.stderr
        out_b, _ = srv.communicate(timeout=120)
        assert srv.returncode == 0, out_b
        cap.send_signal(signal.SIGINT)
        cout, _ = cap.communicate(timeout=300)
        cout = first + cout
        assert cap.returncode == 0, cout
    finally:
        rc_down, dout = tb("down")
    assert rc_down == 0 and "removed 3 namespace(s)" in dout, dout
    assert "0 dropped" in cout and ", None dropped" not in cout, cout
    a = json.load(open(js["A"]))["results"]["port_counters"]
    b = json.load(open(js["B"]))["results"]["port_counters"]
    # count the frames by sender; the control veth's (TCP) frames have other MACs
    by_src, tcp, frames = {"A": 0, "B": 0}, 0, 0
    for _, buf, _ in pcapio.read_frames(pcap):
        frames += 1
        src = buf[6:12]
        for side, mac in MAC.items():
            if src == mac:
                by_src[side] += 1
        if buf[12:14] == b"\x08\x00" and buf[23] == 6:
            ihl = (buf[14] & 0x0F) * 4
            ports = {int.from_bytes(buf[14 + ihl:16 + ihl], "big"),
                     int.from_bytes(buf[16 + ihl:18 + ihl], "big")}
            tcp += 18515 in ports
    # each frame an rnic sent crossed the link to the emulator (port 0 or 1, RX there) and,
    # unless the emulator dropped it, the other link (TX there): the rnics' own counters
    # give both (what B received from the emulator is what the emulator passed of A's)
    assert by_src["A"] == a["tx_frames"] + b["rx_frames"], (by_src, a, b)
    assert by_src["B"] == b["tx_frames"] + a["rx_frames"], (by_src, a, b)
    # the rule dropped A->B RoCEv2 frames: fewer reached B than A sent, B->A lost none
    dropped = a["tx_frames"] - b["rx_frames"]
    assert dropped == (b["rx_roce"] + dropped) // NTH > 0, (a, b)
    assert b["tx_frames"] == a["rx_frames"], (a, b)
    # perftest's TCP exchange (port 18515) crossed the kernel and is in the same file
    assert tcp > 0 and frames == by_src["A"] + by_src["B"] + tcp, (frames, by_src, tcp)
    v = json.load(open(pcap + ".json"))["results"]
    assert v["ok"] and v["roce_failed_pkts"] == 0, v
    assert v["roce_pkts"] >= 2 * ITERS * 16, v
    assert "RESULT: OK" in cout, cout


def test_capture_refuses_a_private_memif_topology(tmp_path):
    """Without --capturable lossy-emu runs --no-huge (today's mode): no secondary can map
    its memory, and the capture says how to bring the topology up instead."""
    rc, out = tb("up", *UP, timeout=120)
    try:
        assert rc == 0, out
        rc, cout = tb("capture", "--seconds", "1", "--out", str(tmp_path / "x.pcap"))
    finally:
        tb("down")
    assert rc == 1, cout
    assert "--capturable" in cout and "dpdk-dumpcap cannot attach" in cout, cout
    assert not os.path.exists(tmp_path / "x.pcap")


def test_run_capture_over_memif_holds_a_side_link_exactly(tmp_path):
    """[run] capture = true over memif: lossy-emu in the shared mode for the run, its port 0
    (the link to rnic A) captured: every frame rnic A sent and received, once."""
    r = subprocess.run([TESTBED, "--prefix", PREFIX, "run", os.path.join(ROOT, "configs", "gbn-lossless.toml"),
                        "--quick", *UP[:6], "--set", "run.capture=true", *UP[8:], "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "RESULT: OK" in r.stdout, r.stdout
    pcap = tmp_path / "gbn-lossless-0.pcap"
    a = json.load(open(tmp_path / "gbn-lossless-0-rnicA.json"))["results"]["port_counters"]
    by_src = {"A": 0, "B": 0}
    for _, buf, _ in pcapio.read_frames(str(pcap)):
        for side, mac in MAC.items():
            by_src[side] += buf[6:12] == mac
    assert by_src == {"A": a["tx_frames"], "B": a["rx_frames"]}, (by_src, a)
    assert a["tx_frames"] > ITERS * 16, a
