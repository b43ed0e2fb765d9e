#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""memif links, N rounds (docs/performance.md, "memif"): per round, in this order,

1. dpdk-testpmd txonly -> rxonly over one memif link, frames of an MTU 4096 and an MTU 1024
   RoCE data packet, sender pinned to CPU 0, receiver to CPU 1 (main and forwarding lcore
   of each on its own CPU, so the two never share a core's poll loop);
2. rnic <-> rnic over the same kind of memif link, rnic A on CPU 0, rnic B on CPU 1,
   --busy-poll: write_bw at MTU 4096 and 1024, send_bw and read_bw at MTU 4096 (64 KiB);
3. the paced baseline: rnic <-> rnic over one memif link with exactly the chain's rnic
   options (configs/gbn-10g.toml through the testbed's own rnic_opts: write_bw -s 1M,
   --rate_limit 9.8, the same -t, -D, MTU and recovery) and the chain's CPU plan (floating
   lcores, idle back-off, own sessions): the chain without the emulator and its 40 ms;
4. the chain rnic -> lossy-emu -> rnic over memif: configs/gbn-10g.toml (10 Gb/s x 40 ms),
   lossless and with `loss 0.01%`, `./testbed run --quick`;
5. the same chain with its link at 40 Gb/s (`--set link.rate=40gbit`, the rnics paced at
   0.98 of it, the emulator's shaper at 40 Gb/s, still 40 ms and lossless): a link faster
   than this host carries, so the figure is what the three processes move when neither the
   pacer nor the shaper caps them (docs/performance.md, "where the chain's goodput goes").

Before testpmd 4096, write_bw 4096 and the 40 Gb/s chain it times a cache line's round trip
between CPU 0 and CPU 1 (bench/cpu_pingpong, -Dbench=true): on this VM the two vCPUs share a
cache or do not, from one minute to the next, and the pinned baselines follow it by up to 10x.

The claims: gbn-10g lossless reaches at least 0.5 x rnic<->rnic
write_bw (MTU 4096, unpaced, pinned) of the same round and at least 3 Gb/s; and the same
against the paced baseline, the rnic<->rnic figure the chain can be compared with (an unpaced
rnic<->rnic reaches 20-80 Gb/s on a quiet host, which a 9.8 Gb/s pacer never can). Measured
beside them: the uncapped chain (5.) against the unpaced rnic<->rnic of the same round, the
emulator hop's cost in the bar's terms without the 10 Gb/s cap of the config.

  bench/testbed/memif.py [BUILD_DIR]   (root; BENCH_ROUNDS=N, default 10; DUR=seconds, 3)
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import claims  # noqa: E402

B = claims.build_dir(sys.argv)
DUR = int(os.environ.get("DUR", "3"))
RNIC = os.path.join(B, "app", "rnic", "rnic")
SOCK_DIR = "/run/rocewan-memif/bench"
EAL = "--no-huge --no-shconf --no-pci --log-level=lib.eal:error"
# an RDMA WRITE data packet on the wire without FCS: Eth 14 + IPv4 20 + UDP 8 + BTH 12 + payload + ICRC 4
FRAME = {4096: 4096 + 58, 1024: 1024 + 58}


def vdev(server, bsize=8192):
    sock = os.path.join(SOCK_DIR, "l0.sock")
    return (f"--vdev net_memif0,role={'server' if server else 'client'},id=0,socket={sock},"
            f"socket-abstract=no,bsize={bsize}")


def fresh_sock():
    """A killed server leaves its socket file behind; the next one could not bind."""
    sock = os.path.join(SOCK_DIR, "l0.sock")
    if os.path.exists(sock):
        os.unlink(sock)


def wait_sock(timeout=20):
    """Until the memif server's socket exists: a client refuses to start without it."""
    sock = os.path.join(SOCK_DIR, "l0.sock")
    t0 = time.monotonic()
    while not os.path.exists(sock) and time.monotonic() - t0 < timeout:
        time.sleep(0.1)
    time.sleep(0.3)


PINGPONG = os.path.join(B, "bench", "cpu_pingpong")  # built with -Dbench=true (make bench)


def cpu_round_trip_ns():
    """A cache line's round trip between CPU 0 and CPU 1 right now (bench/cpu_pingpong.c):
    about 60 ns when the hypervisor has the two vCPUs on cores sharing a cache, about 330
    when not, and it moves within seconds. The pinned baselines follow it (docs/performance.md,
    "The pacer's catch-up"); nan when the tool is not built."""
    if not os.access(PINGPONG, os.X_OK):
        return float("nan")
    r = subprocess.run([PINGPONG, "0", "1", "300000"], capture_output=True, text=True, timeout=60)
    return json.loads(r.stdout)["round_trip_ns"] if r.returncode == 0 else float("nan")


def testpmd_gbps(frame):
    """Receiver's Rx-bps over DUR s (frames' bytes; testpmd's bps counts no FCS)."""
    fresh_sock()
    cmd = ("dpdk-testpmd {l} {eal} --file-prefix bm{side} {v} -- -i --forward-mode={mode} "
           "--nb-cores=1 --mbuf-size=8192 --total-num-mbufs=16384 --txpkts={f} --auto-start")
    rx = subprocess.Popen(
        f"(sleep 5; echo 'show port stats all'; sleep {DUR}; echo 'show port stats all'; sleep 0.5; "
        f"echo quit) | "
        + cmd.format(l="--lcores 0@1,1@1", eal=EAL + " -m 512", side="R", v=vdev(True), mode="rxonly",
                     f=frame),
        shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_sock()
    tx = subprocess.Popen(
        f"(sleep {DUR + 5}; echo quit) | "
        + cmd.format(l="--lcores 0@0,1@0", eal=EAL + " -m 512", side="T", v=vdev(False), mode="txonly",
                     f=frame),
        shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = rx.communicate(timeout=DUR + 30)
    tx.communicate(timeout=DUR + 30)
    bps = [int(x) for x in re.findall(r"Rx-bps:\s+(\d+)", out)]
    return bps[-1] / 1e9 if bps else float("nan")


def rnic_gbps(mode, mtu):
    """rnic B serves on CPU 1, rnic A on CPU 0 sends for DUR s; A's BW average (Gb/s)."""
    opts = f"-m {mtu} -s 65536 -D {DUR} --report_gbits --busy-poll -p 18799"
    fresh_sock()
    srv = subprocess.Popen(f"{RNIC} -l 1 {EAL} -m 512 --file-prefix bmB {vdev(True)} -- --ip 10.98.0.2/24 "
                           f"{opts} {mode}", shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    wait_sock()
    time.sleep(1.0)  # rnic B's perftest TCP listener comes up after its port
    cli = subprocess.run(f"{RNIC} -l 0 {EAL} -m 512 --file-prefix bmA {vdev(False)} -- --ip 10.98.0.1/24 "
                         f"{opts} {mode} 127.0.0.1", shell=True, capture_output=True, text=True,
                         timeout=DUR + 60)
    try:
        srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.communicate()
    m = re.search(r"^\s*65536\s+\d+\s+([\d.]+)\s+([\d.]+)", cli.stdout, re.M)
    if cli.returncode != 0 or not m:
        print(f"  rnic {mode} -m {mtu} failed (exit {cli.returncode}): {(cli.stdout + cli.stderr)[-600:]}")
        return float("nan")
    return float(m.group(2))


def rnic_paced_gbps():
    """rnic B serves, rnic A sends with the chain's options (gbn-10g.toml) and CPU plan."""
    sys.path.insert(0, os.path.join(claims.ROOT, "python"))
    from rocewan.testbed import experiments, runner, topo
    cfg = experiments.load_cfg(os.path.join(claims.ROOT, "configs", "gbn-10g.toml"), [], True)
    opts = runner.rnic_opts(cfg) + " --report_gbits -p 18799"
    fresh_sock()
    srv = subprocess.Popen(f"{RNIC} {topo.eal_lcores('0')} {EAL} -m 512 --file-prefix bmB {vdev(True)} -- "
                           f"--ip 10.98.0.2/24 {opts} write_bw", shell=True, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, start_new_session=True)
    wait_sock()
    time.sleep(1.0)
    cli = subprocess.run(f"{RNIC} {topo.eal_lcores('0')} {EAL} -m 512 --file-prefix bmA {vdev(False)} -- "
                         f"--ip 10.98.0.1/24 {opts} write_bw 127.0.0.1", shell=True, capture_output=True,
                         text=True, timeout=cfg["workload"]["duration"] + 60, start_new_session=True)
    try:
        srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.communicate()
    m = re.search(r"^\s*1048576\s+\d+\s+([\d.]+)\s+([\d.]+)", cli.stdout, re.M)
    if cli.returncode != 0 or not m:
        print(f"  rnic paced baseline failed (exit {cli.returncode}): {(cli.stdout + cli.stderr)[-600:]}")
        return float("nan")
    return float(m.group(2))


def chain_gbps(env, sets):
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([os.path.join(claims.ROOT, "testbed"), "--prefix", "tbw", "run",
                            os.path.join(claims.ROOT, "configs", "gbn-10g.toml"), "--quick", "--out", d]
                           + sum((["--set", s] for s in sets), []),
                           capture_output=True, text=True, env=env, cwd=claims.ROOT, timeout=600)
        if p.returncode != 0:
            print(f"  gbn-10g {sets} failed:\n{p.stdout[-1500:]}{p.stderr[-1500:]}")
            return float("nan"), {}
        row = json.load(open(os.path.join(d, "gbn-10g.json")))["results"]["rows"][0]
        return row["goodput_gbps"], row


def main():
    if os.geteuid() != 0:
        sys.exit("bench/testbed/memif.py: needs root (network namespaces)")
    os.makedirs(SOCK_DIR, exist_ok=True)
    n = claims.rounds()

    c = claims.Claims("bench_memif", B)
    env = dict(os.environ, ROCEWAN_BUILD=B, PYTHONPATH=os.path.join(claims.ROOT, "python"))
    for r in range(n):
        f, rt = {}, {}
        for mtu in (4096, 1024):
            if mtu == 4096:
                rt["testpmd 4096"] = cpu_round_trip_ns()
            f[f"testpmd {mtu}"] = testpmd_gbps(FRAME[mtu])
        for mode, mtu in (("write_bw", 4096), ("write_bw", 1024), ("send_bw", 4096), ("read_bw", 4096)):
            if (mode, mtu) == ("write_bw", 4096):
                rt["write_bw 4096"] = cpu_round_trip_ns()
            f[f"{mode} {mtu}"] = rnic_gbps(mode, mtu)
        f["write_bw paced"] = rnic_paced_gbps()
        f["chain 0%"], row = chain_gbps(env, [])
        f["chain 0.01%"], row_l = chain_gbps(env, ['link.loss="0.01%"'])
        rt["chain 40G"] = cpu_round_trip_ns()
        f["chain 40G"], row_u = chain_gbps(env, ["link.rate=40gbit"])
        ratio = f["chain 0%"] / f["write_bw 4096"]
        ratio_p = f["chain 0%"] / f["write_bw paced"]
        ratio_u = f["chain 40G"] / f["write_bw 4096"]
        print(f"round {r + 1}/{n}: " + ", ".join(f"{k} {v:.2f}" for k, v in f.items()) +
              f" Gb/s; rnic/testpmd at 4096 {f['write_bw 4096'] / f['testpmd 4096']:.2f}, "
              f"at 1024 {f['write_bw 1024'] / f['testpmd 1024']:.2f}; chain/rnic {ratio:.2f}; "
              f"chain/paced rnic {ratio_p:.2f}; chain 40G/rnic {ratio_u:.2f} "
              f"(drops {row_u.get('emu_a2b_drop_queue')}, retx {row_u.get('tx_retransmits')}); "
              f"chain drops {row.get('emu_a2b_drop_queue')}/{row.get('b_pmd_imissed')}, "
              f"0.01%: drops {row_l.get('emu_a2b_drop_loss')} retx {row_l.get('tx_retransmits')}; "
              "CPU 0-1 round trip before " + ", ".join(f"{k} {v:.0f} ns" for k, v in rt.items()), flush=True)
        for k, v in f.items():
            c.add(f"{k} Gb/s", "measured", v, True)
        for k, v in rt.items():
            c.add(f"CPU 0-1 cache-line round trip ns before {k}", "measured", v, True)
        c.add("gbn-10g lossless / rnic<->rnic write_bw 4096", ">= 0.5 and >= 3 Gb/s", ratio,
              ratio >= 0.5 and f["chain 0%"] >= 3)
        c.add("gbn-10g lossless / paced rnic<->rnic (the chain's rnic options, no emulator)",
              ">= 0.5 and >= 3 Gb/s", ratio_p, ratio_p >= 0.5 and f["chain 0%"] >= 3)
        c.add("chain at a 40 Gb/s link (uncapped) / rnic<->rnic write_bw 4096", ">= 0.5", ratio_u,
              ratio_u >= 0.5)
    c.report()


if __name__ == "__main__":
    main()
