#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unmodified Debian perftest 4.5 over rnic-exec against the rnic's built-in perftest clone,
on one memif link, N rounds (docs/verbs.md, "Performance"). Per round, in this order:

1. built-in `rnic ... write_bw -s 65536 -n BW_ITERS`, then `/usr/bin/ib_write_bw -s 65536
   -n BW_ITERS` with both ends under rnic-exec; claim: ib_write_bw's BW average >= 0.9 x the
   built-in's of the same round;
2. built-in `send_lat -s 2 -n LAT_ITERS`, then `ib_send_lat` alike; claim: ib_send_lat's
   t_typical <= 1.2 x the built-in's;
3. `ib_write_lat -s 2 -n LAT_ITERS`: it spins on a buffer byte and calls no verb while it
   waits, so the library's progress thread receives for it; checked: exact request counts
   (LAT_ITERS one-packet WRITEs each way, each side's --json), its t_typical reported, and
   the thread layout (each thread's allowed CPUs and last CPU, read from /proc while it runs);
4. measured beside, no claim: ib_send_lat and ib_write_lat with the device option
   --busy-poll (the progress thread never naps).

Both processes of a pair run in the root namespace, the server side the memif server; the
programs' own TCP exchange goes over 127.0.0.1. The server's EAL lcore is CPU 1, the
client's CPU 0 (rnic and rnic-exec alike: `-l`); the programs' threads are not pinned.
Both front ends run with the device defaults (no --busy-poll: the progress thread naps
when idle), MTU 1024 (-m 1024).

  bench/verbs/perftest_memif.py [BUILD_DIR]   (root; BENCH_ROUNDS=N, default 10;
                                               BW_ITERS, 2000; LAT_ITERS, 1000)
"""
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import claims  # noqa: E402

B = claims.build_dir(sys.argv)
RNIC = os.path.join(B, "app", "rnic", "rnic")
RNIC_EXEC = os.path.join(B, "app", "rnic", "rnic-exec")
BW_ITERS = int(os.environ.get("BW_ITERS", "2000"))
LAT_ITERS = int(os.environ.get("LAT_ITERS", "1000"))
SOCK_DIR = "/run/rocewan-memif/xvb-verbs"
SOCK = os.path.join(SOCK_DIR, "l0.sock")
PORT = 18731  # the programs' TCP exchange, on 127.0.0.1
MTU = 1024
SIZE = 65536
IP = ["10.97.0.2/24", "10.97.0.1/24"]  # [server, client]
CPU = ["1", "0"]
TIMEOUT = 180


def eal(side):
    role = "server" if side == 0 else "client"
    return (f"-l {CPU[side]} --no-huge -m 512 --no-pci --log-level=lib.eal:error "
            f"--vdev net_memif0,role={role},id=0,socket={SOCK},socket-abstract=no").split()


def builtin_argv(side, mode, args, js):
    # the built-in rnic is not under rnic-exec, which adds these itself
    a = [RNIC] + eal(side) + ["--no-shconf", "--file-prefix", f"xvbB{side}", "--",
                              "--ip", IP[side], "--json", js, "-p", str(PORT), "-m", str(MTU)]
    return a + args + [mode] + (["127.0.0.1"] if side == 1 else [])


def exec_argv(side, tool, args, js, dev_opts=()):
    a = ([RNIC_EXEC] + eal(side) + ["--file-prefix", f"xvbE{side}", "--", "--ip", IP[side], "--json", js]
         + list(dev_opts) + ["--", f"/usr/bin/{tool}", "-d", "rnic0", "-x", "0", "-p", str(PORT), "-m", str(MTU)])
    return a + args + (["127.0.0.1"] if side == 1 else [])


def listening(proc, timeout=30):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            return False
        r = subprocess.run(["ss", "-Hltn", f"sport = :{PORT}"], capture_output=True, text=True)
        if r.stdout.strip():
            return True
        time.sleep(0.05)
    return False


def threads(pid):
    """[(thread name, allowed CPUs, last CPU)] of @pid, from /proc."""
    out = []
    try:
        for t in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
            base = f"/proc/{pid}/task/{t}"
            name = open(f"{base}/comm").read().strip()
            allowed = re.search(r"Cpus_allowed_list:\s*(\S+)", open(f"{base}/status").read())
            last = open(f"{base}/stat").read().rsplit(")", 1)[1].split()[36]
            out.append((name, allowed.group(1) if allowed else "?", last))
    except (OSError, IndexError):
        pass
    return out


def run_pair(make, layout=False):
    """@make(side, js) -> argv; server (side 0) first, then the client. Returns
    (rc list, outputs, device docs, thread layout of [server, client] or None)."""
    if os.path.exists(SOCK):
        os.unlink(SOCK)  # a killed memif server leaves its socket behind
    js = [f"/tmp/xvb-verbs-{s}.json" for s in (0, 1)]
    for j in js:
        if os.path.exists(j):
            os.unlink(j)
    srv = subprocess.Popen(make(0, js[0]), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, start_new_session=True)
    lay = None
    cout, crc = "server never listened", -1
    if listening(srv):
        cli = subprocess.Popen(make(1, js[1]), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
        if layout:
            time.sleep(1.5)  # past EAL start and the exchange, inside the ping-pong
            lay = [threads(srv.pid), threads(cli.pid)]
        try:
            cout, _ = cli.communicate(timeout=TIMEOUT)
            crc = cli.returncode
        except subprocess.TimeoutExpired:
            cli.kill()
            cout, _ = cli.communicate()
            crc = -9
    try:
        sout, _ = srv.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        srv.kill()
        sout, _ = srv.communicate()
    docs = []
    for j in js:
        try:
            docs.append(json.load(open(j))["results"])
        except (OSError, ValueError, KeyError):
            docs.append(None)
    return [srv.returncode, crc], [sout, cout], docs, lay


def failed(what, rcs, outs):
    print(f"  {what} failed (exit {rcs}):\n  server: {outs[0][-500:]}\n  client: {outs[1][-500:]}",
          flush=True)


def bw(rcs, outs, what):
    m = re.search(rf"^\s*{SIZE}\s+\d+\s+([\d.]+)\s+([\d.]+)", outs[1], re.M)
    if rcs != [0, 0] or not m:
        failed(what, rcs, outs)
        return float("nan")
    return float(m.group(2))


def typical(rcs, outs, what):
    """t_typical (µs) of the client's row (perftest prints it on the client)."""
    m = re.search(r"^\s*2\s+\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", outs[1], re.M)
    if rcs != [0, 0] or not m:
        failed(what, rcs, outs)
        return float("nan")
    return float(m.group(3))


def counts_exact(docs, n):
    """Each side sent exactly @n requests; the other took them, plus at most one per
    retransmission (tests/verbs/harness.py's check_requests)."""
    if None in docs:
        return False
    for s in (0, 1):
        tx, rx = docs[s]["device_counters"], docs[1 - s]["device_counters"]
        retx = tx["tx_retransmits"]
        if tx["tx_req_packets"] != n or not n <= rx["rx_req_packets"] <= n + retx:
            return False
    return True


def main():
    if os.geteuid() != 0:
        sys.exit("bench/verbs/perftest_memif.py: needs root (memif sockets under /run)")
    for p in (RNIC, RNIC_EXEC):
        if not os.access(p, os.X_OK):
            sys.exit(f"bench/verbs/perftest_memif.py: {p} is not built")
    os.makedirs(SOCK_DIR, exist_ok=True)
    n = claims.rounds()
    c = claims.Claims("bench_verbs_perftest_memif", B)
    bw_args = ["-s", str(SIZE), "-n", str(BW_ITERS), "--report_gbits"]
    lat_args = ["-s", "2", "-n", str(LAT_ITERS)]
    layouts = []
    for r in range(n):
        f = {}
        f["builtin write_bw"] = bw(*run_pair(lambda s, j: builtin_argv(s, "write_bw", bw_args, j))[:2],
                                   "built-in write_bw")
        f["ib_write_bw"] = bw(*run_pair(lambda s, j: exec_argv(s, "ib_write_bw", bw_args, j))[:2],
                              "ib_write_bw")
        f["builtin send_lat"] = typical(
            *run_pair(lambda s, j: builtin_argv(s, "send_lat", lat_args, j))[:2], "built-in send_lat")
        f["ib_send_lat"] = typical(*run_pair(lambda s, j: exec_argv(s, "ib_send_lat", lat_args, j))[:2],
                                   "ib_send_lat")
        rcs, outs, docs, lay = run_pair(lambda s, j: exec_argv(s, "ib_write_lat", lat_args, j),
                                        layout=True)
        f["ib_write_lat"] = typical(rcs, outs, "ib_write_lat")
        exact = rcs == [0, 0] and counts_exact(docs, LAT_ITERS)
        # measured beside: the same two tools with the progress thread never napping
        for tool in ("ib_send_lat", "ib_write_lat"):
            f[f"{tool} busy"] = typical(*run_pair(lambda s, j: exec_argv(s, tool, lat_args, j, ["--busy-poll"]))[:2],
                                        f"{tool} --busy-poll")
        layouts.append(lay)
        rbw = f["ib_write_bw"] / f["builtin write_bw"]
        rlat = f["ib_send_lat"] / f["builtin send_lat"]
        print(f"round {r + 1}/{n}: write_bw built-in {f['builtin write_bw']:.2f} Gb/s, ib_write_bw "
              f"{f['ib_write_bw']:.2f} Gb/s ({rbw:.2f}x); send_lat typical built-in "
              f"{f['builtin send_lat']:.2f} us, ib_send_lat {f['ib_send_lat']:.2f} us ({rlat:.2f}x); "
              f"ib_write_lat typical {f['ib_write_lat']:.2f} us, counts exact {exact}; with --busy-poll "
              f"ib_send_lat {f['ib_send_lat busy']:.2f} us, ib_write_lat {f['ib_write_lat busy']:.2f} us; "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
        if lay:
            for side, name in ((0, "server"), (1, "client")):
                print(f"  ib_write_lat {name} threads (name, allowed CPUs, last CPU): {lay[side]}")
        c.add("built-in write_bw -s 65536 Gb/s", "measured", f["builtin write_bw"], True)
        c.add("ib_write_bw -s 65536 Gb/s", "measured", f["ib_write_bw"], True)
        c.add("built-in send_lat t_typical us", "measured", f["builtin send_lat"], True)
        c.add("ib_send_lat t_typical us", "measured", f["ib_send_lat"], True)
        c.add("ib_send_lat --busy-poll t_typical us", "measured", f["ib_send_lat busy"], True)
        c.add("ib_write_lat --busy-poll t_typical us", "measured", f["ib_write_lat busy"], True)
        c.add("ib_write_bw / built-in write_bw (-s 65536)", ">= 0.9", rbw, rbw >= 0.9)
        c.add("ib_send_lat / built-in send_lat (t_typical)", "<= 1.2", rlat, rlat <= 1.2)
        c.add("ib_write_lat t_typical us, completes with exact counts", "exit 0 and exact counts",
              f["ib_write_lat"], exact)
    c.report({"bw_iters": BW_ITERS, "lat_iters": LAT_ITERS, "mtu": MTU,
              "ib_write_lat_threads": layouts})


if __name__ == "__main__":
    main()
