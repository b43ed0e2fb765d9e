#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end tests of lossy-emu: the real binary on net_af_packet ports in network
namespaces (see lemu_net.py for the topology). Needs root (fails without it, as every suite of scripts/test.sh).

    sudo /usr/bin/python3 tests/dpdk/emu/test_lemu_e2e.py --build build [-k NAME] [-v]

One emulator run serves most checks: its SPEC is changed between them through the
telemetry command /lossy_emu/set, which also exercises run-time control. Short runs
cover the config file (and seed determinism across processes), bad SPECs and the
EAL-memory error. Everything is removed on exit, also on failure or Ctrl-C.
"""

import argparse
import bisect
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lemu_net as ln  # noqa: E402

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


class Ctx:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.binary = os.path.join(self.build, "app", "lossy-emu", "lossy-emu")
        self.rocewire = os.path.join(self.build, "tools", "rocewire", "rocewire")
        self.tag = str(os.getpid() % 100000)
        self.topo = ln.Topology(self.tag)
        self.tmp = tempfile.mkdtemp(prefix="lemu-e2e-")
        self.emu = None
        self.a = self.b = None
        self.run = 0
        self.lossy_sent = []  # frames of the seed-determinism check
        self.drops_seed42 = None
        self.sent_a2b = 0
        self.sent_b2a = 0
        self.notes = []
        self.corrupted_extra = 0  # a2b frames corrupted by checks other than the corrupt ones
        self.loss_events_kept = 0  # a2b loss events that cancelled a duplicate instead of a drop

    def note(self, s):
        self.notes.append(s)
        if self.args.verbose:
            print("   ", s)

    def new_run(self):
        self.run += 1
        return self.run

    def quiet(self, t=0.05):
        """Drop what the capture sockets collected so far, and mark both directions'
        counters: settle() and collect() count from here."""
        time.sleep(t)
        self.a.take()
        self.b.take()
        self.mark = {d: self.stats(d) for d in ("a2b", "b2a")}

    def set(self, d, spec):
        r = self.emu.tel.cmd("/lossy_emu/set,%s,%s" % (d, spec))
        body = r.get("/lossy_emu/set", {})
        check(body and body.get("ok") == 1, "set %s %r: %s" % (d, spec, r))
        return body

    def stats(self, d):
        return self.emu.tel.cmd("/lossy_emu/stats,%s" % d)["/lossy_emu/stats"]


def send_probes(port, run, n, size=200, rate_pps=None, src=ln.MAC_A, dst=ln.MAC_B, stamp=False):
    gap = 1.0 / rate_pps if rate_pps else 0
    t_next = time.perf_counter()
    for i in range(n):
        if gap:  # sleep, do not spin: the emulator shares the machine's two cores
            left = t_next - time.perf_counter()
            if left > 0:
                time.sleep(left)
            t_next += gap
        elif i % 32 == 31:
            time.sleep(0.0005)  # about 60 kpps: well inside the af_packet ring
        port.send(ln.probe(run, i, size=size, tx_ns=time.time_ns() if stamp else 0,
                           src=src, dst=dst))


def probes_of(frames, run):
    out = []
    for ts, f in frames:
        p = ln.parse_probe(f)
        if p and p[0] == run:
            out.append((ts, p[1], p[2], f))
    return out


GUARD_S = 60  # a hang guard: only a stuck emulator reaches it, never a slow host


def settle(c, d, n_in):
    """Every frame the emulator sends in direction @d for the @n_in frames sent into it
    since c.quiet(): wait until it has received them (rx_pkts, or counted the port's
    misses) and holds none (in_flight 0), then until the far side's socket has taken
    every frame it sent (tx_pkts). Returns them (rx_ns, frame), in arrival order. Each
    wait ends on a counter reaching its value; the guard is reached only by a hang."""
    port = c.b if d == "a2b" else c.a
    m = c.mark[d]
    deadline = time.time() + GUARD_S
    while True:
        st = c.stats(d)
        if st["rx_pkts"] + st["rx_missed"] - m["rx_pkts"] - m["rx_missed"] >= n_in and st["in_flight"] == 0:
            break
        check(time.time() < deadline, "%s: the emulator took %d of %d frames, %d in flight after %d s"
              % (d, st["rx_pkts"] - m["rx_pkts"], n_in, st["in_flight"], GUARD_S))
        time.sleep(0.02)
    n_out = st["tx_pkts"] - m["tx_pkts"]
    got = []
    while True:
        got += port.take()
        if len(got) >= n_out:
            return got
        check(time.time() < deadline, "%s: %d of the %d frames the emulator sent arrived"
              % (d, len(got), n_out))
        time.sleep(0.02)


def collect(c, d, run, n_in):
    """The probes of this run among what settle() returns."""
    return probes_of(settle(c, d, n_in), run)


def runs_of(seqs, n):
    """Lengths of the runs of missing sequence numbers in 0..n-1."""
    have = set(seqs)
    runs, cur = [], 0
    for i in range(n):
        if i in have:
            if cur:
                runs.append(cur)
            cur = 0
        else:
            cur += 1
    if cur:
        runs.append(cur)
    return runs


# ---- tests on one emulator run ---------------------------------------------------------------

def t_loss_random(c):
    """loss 10%: drop fraction within 5 sigma of 10 %."""
    n, run = 3000, c.new_run()
    c.quiet()
    send_probes(c.a, run, n)
    c.sent_a2b += n
    got = collect(c, "a2b", run, n)
    seqs = [g[1] for g in got]
    check(len(set(seqs)) == len(seqs), "duplicates without duplicate")
    lost = n - len(seqs)
    p, sd = 0.10, math.sqrt(0.1 * 0.9 / n)
    c.note("loss 10%%: %d of %d lost (%.2f %%)" % (lost, n, 100.0 * lost / n))
    check(abs(lost / n - p) < 5 * sd, "loss %.4f not within 5 sd (%.4f) of 0.10" % (lost / n, sd))
    c.drops_seed42 = sorted(set(range(n)) - set(seqs))
    c.seed_run = run


def t_delay(c):
    """b2a delay 20ms at 1 kpps: every probe arrives once, in order, and none before its
    20 ms. How close to 20 ms they arrive is the emulator's delay accuracy, a timing claim
    that a loaded host can break: bench/emu/run.sh measures it (docs/claims.md)."""
    n, run = 300, c.new_run()
    c.quiet()
    send_probes(c.b, run, n, rate_pps=1000, src=ln.MAC_B, dst=ln.MAC_A, stamp=True)
    c.sent_b2a += n
    got = collect(c, "b2a", run, n)
    check(len(got) == n, "delay: %d of %d arrived" % (len(got), n))
    d = sorted((ts - tx) / 1e6 for ts, _, tx, _ in got)
    med, p99 = statistics.median(d), d[int(0.99 * (len(d) - 1))]
    c.note("delay 20ms: one-way median %.3f ms, p99 %.3f ms, max %.3f ms" % (med, p99, d[-1]))
    seqs = [g[1] for g in sorted(got)]
    check(seqs == list(range(n)), "a constant delay reordered or duplicated probes")
    # the probe's stamp is taken before send() and the RX timestamp after the release, on
    # the same clock: no probe can show less than its delay unless it was released early
    check(d[0] >= 20.0, "a packet left early: %.3f ms" % d[0])
    c.delay_median_ms, c.delay_p99_ms = med, p99


def t_gemodel(c):
    """loss gemodel 5% 40% 100% 0% (simple Gilbert): rate p/(p+r) = 11.1 %, mean burst 1/r = 2.5."""
    c.set("a2b", "loss gemodel 5% 40% 100% 0%")
    n, run = 6000, c.new_run()
    c.quiet()
    send_probes(c.a, run, n)
    c.sent_a2b += n
    got = collect(c, "a2b", run, n)
    runs = runs_of([g[1] for g in got], n)
    lost = sum(runs)
    mean_burst = lost / len(runs) if runs else 0
    c.note("gemodel: %.2f %% lost in %d bursts, mean burst %.2f (theory 11.11 %%, 2.5)"
           % (100.0 * lost / n, len(runs), mean_burst))
    # GE variance (docs/emulator-models.md 5.2): lambda = 1-p-r = 0.55, lB-lG = 1
    pl, pb, pg, lam = 1 / 9, 1 / 9, 8 / 9, 0.55
    sd = math.sqrt((pl * (1 - pl) + 2 * pb * pg * lam / (1 - lam)) / n)
    check(abs(lost / n - pl) < 5 * sd, "GE loss %.4f not within 5 sd (%.4f) of %.4f" % (lost / n, sd, pl))
    sd_b = math.sqrt(2.5 * 1.5 / max(1, len(runs))) * 1.5
    check(abs(mean_burst - 2.5) < 5 * sd_b, "mean burst %.2f not 2.5 +- %.2f" % (mean_burst, 5 * sd_b))
    st = c.stats("a2b")
    bursts = st.get("loss_bursts_by_length", [])
    c.note("emulator's loss_bursts_by_length %s" % bursts[:8])
    check(sum(bursts) >= len(runs), "emulator counted %d bursts, receiver saw %d" % (sum(bursts), len(runs)))


def t_seed_same_run(c):
    """The same seed and input give the same drops: re-setting the SPEC restarts the draws."""
    c.set("a2b", "loss 10%")
    n, run = 3000, c.new_run()
    c.quiet()
    send_probes(c.a, run, n)
    c.sent_a2b += n
    got = collect(c, "a2b", run, n)
    drops = sorted(set(range(n)) - set(g[1] for g in got))
    check(drops == c.drops_seed42, "drops differ after re-set: %d vs %d (first diff at %s; "
          "frames the port dropped: %d)" % (len(drops), len(c.drops_seed42),
                                            next((a for a, b in zip(drops, c.drops_seed42) if a != b), "end"),
                                            c.stats("a2b")["rx_missed"]))


def overtaken(seqs):
    """For each arrival, how many lower sequence numbers arrived after it (first copies)."""
    seen, first = set(), []
    for q in seqs:
        if q not in seen:
            seen.add(q)
            first.append(q)
    worst, later = 0, []
    # count, for each packet, the smaller ones still to come: scan from the end
    for q in reversed(first):
        worst = max(worst, bisect.bisect_left(later, q))
        bisect.insort(later, q)
    return worst


def t_seed_all_draws(c):
    """--seed covers every draw: the same SPEC re-set twice on the same input gives the same
    losses, duplicates, bit flips (position and value), reorder decisions and jitter draws."""
    spec = "delay 4ms 2ms loss 5% duplicate 10% corrupt 10% reorder 10% gap 3"
    n, runs = 1000, []
    c.set("a2b", "")
    st_start = c.stats("a2b")
    for _ in range(2):
        c.set("a2b", spec)                       # restarts every stream from the seed
        st0 = c.stats("a2b")
        run = c.new_run()
        c.quiet()
        sent, tx_ns = {}, {}
        t_next = time.perf_counter()
        for i in range(n):                       # 2 kpps: reordered frames overtake < 3
            left = t_next - time.perf_counter()
            if left > 0:
                time.sleep(left)
            t_next += 0.0005
            # no time in the payload: frames are the same in both runs, so a flip that
            # hits the sequence number still compares equal
            f = ln.probe(run, i, size=200)
            sent[i] = f
            tx_ns[i] = time.time_ns()
            c.a.send(f)
        c.sent_a2b += n
        got = collect(c, "a2b", run, n)
        st1 = c.stats("a2b")
        copies, flips, delay = {}, set(), {}
        for ts, seq, _, f in got:
            copies[seq] = copies.get(seq, 0) + 1
            ref = sent.get(seq)
            if ref is not None and f != ref:     # the flipped bit: offset and mask
                diff = [(k, x ^ y) for k, (x, y) in enumerate(zip(f, ref)) if x != y]
                flips.add((seq, tuple(diff)))
            elif ref is not None and seq not in delay:
                delay[seq] = (ts - tx_ns[seq]) / 1e6
        cnt = {k: st1[k] - st0[k]
               for k in ("drop_loss", "duplicated", "corrupted", "reordered", "delay_drawn_ns")}
        c.corrupted_extra += cnt["corrupted"]
        runs.append((copies, flips, delay, cnt))
    # a loss event on a duplicated frame cancels the copy (netem's --count), so the loss
    # runs count more events than drop_loss: remember how many for exit_json
    c.set("a2b", "")                             # closes a loss run still open
    st_end = c.stats("a2b")
    hist = [b - a for a, b in zip(st_start["loss_bursts_by_length"], st_end["loss_bursts_by_length"])]
    c.loss_events_kept += (sum((i + 1) * k for i, k in enumerate(hist))
                           - (st_end["drop_loss"] - st_start["drop_loss"]))
    (c1, f1, d1, n1), (c2, f2, d2, n2) = runs
    check(n1 == n2, "counters differ between the two runs: %s vs %s" % (n1, n2))
    check(n1["drop_loss"] > 0 and n1["duplicated"] > 0 and n1["corrupted"] > 0
          and n1["reordered"] > 0 and n1["delay_drawn_ns"] > 0,
          "the SPEC did not exercise every draw: %s" % n1)
    check(c1 == c2, "arrivals per sequence number differ (loss/duplicate draws): %d seqs differ"
          % sum(1 for k in set(c1) | set(c2) if c1.get(k) != c2.get(k)))
    check(f1 == f2, "bit flips differ: %d vs %d, %d in common" % (len(f1), len(f2), len(f1 & f2)))
    # jitter: the same draw per frame. The emulator sums the delays it drew
    # (delay_drawn_ns), so n1 == n2 above compares the draws exactly; their mean must lie
    # in the uniform [2, 6] ms (a frame that is reordered skips the line and draws
    # nothing). The measured one-way delays are only noted: they also carry the host's
    # scheduling noise (independent draws would agree within 0.5 ms for ~23 % of frames).
    delayed = n - n1["reordered"]  # at most; losses and copies move it by a few
    check(1.9e6 * 0.8 * delayed < n1["delay_drawn_ns"] < 6.1e6 * 1.2 * delayed,
          "delay_drawn_ns %d for about %d delayed frames is outside uniform [2, 6] ms"
          % (n1["delay_drawn_ns"], delayed))
    both = [k for k in d1 if k in d2 and d1[k] >= 1.9 and d2[k] >= 1.9]
    diffs = sorted(abs(d1[k] - d2[k]) for k in both)
    close = sum(1 for x in diffs if x < 0.5)
    c.note("seed, all draws: %s both times; %d flips identical; %d of %d delays within 0.5 ms"
           % (n1, len(f1), close, len(both)))


def t_reorder_dup(c):
    """reorder 20% gap 4 + duplicate 10%: copies arrive, a packet overtakes at most 4 others."""
    c.set("a2b", "delay 10ms reorder 20% gap 4 duplicate 10%")
    st0 = c.stats("a2b")
    n, run = 2000, c.new_run()
    c.quiet()
    send_probes(c.a, run, n)
    c.sent_a2b += n
    got = collect(c, "a2b", run, n)
    seqs = [g[1] for g in sorted(got)]
    dups = len(seqs) - len(set(seqs))
    worst = overtaken(seqs)
    st = c.stats("a2b")
    st = {k: st[k] - st0[k] for k in ("duplicated", "reordered")}  # this check only
    c.note("reorder/duplicate: %d copies (emulator %d), %d reordered, worst overtaking %d (gap 4)"
           % (dups, st["duplicated"], st["reordered"], worst))
    check(len(set(seqs)) == n, "%d of %d distinct packets arrived" % (len(set(seqs)), n))
    check(abs(dups / n - 0.10) < 5 * math.sqrt(0.09 / n), "duplicate fraction %.3f" % (dups / n))
    check(0 < worst <= 4, "worst overtaking %d, expected 1..4" % worst)
    # netem's selection: fraction P / (1 + (G - 1) P) = 0.2 / 1.6 of the decisions
    decided = n + dups
    check(abs(st["reordered"] / decided - 0.125) < 0.03, "reordered fraction %.3f"
          % (st["reordered"] / decided))


def t_jitter(c):
    """delay 5ms 4ms reorders (heap); with jitter-no-reorder nothing is reordered (FIFO)."""
    result = {}
    for spec in ("delay 5ms 4ms", "delay 5ms 4ms jitter-no-reorder"):
        c.set("a2b", spec)
        n, run = 600, c.new_run()
        c.quiet()
        send_probes(c.a, run, n, rate_pps=5000)
        c.sent_a2b += n
        got = collect(c, "a2b", run, n)
        check(len(got) == n, "%s: %d of %d arrived" % (spec, len(got), n))
        seqs = [g[1] for g in sorted(got)]
        result[spec] = sum(1 for x, y in zip(seqs, seqs[1:]) if y < x)
    c.note("jitter: %d inversions with jitter, %d with jitter-no-reorder" % tuple(result.values()))
    check(result["delay 5ms 4ms"] > 50, "jitter did not reorder")
    check(result["delay 5ms 4ms jitter-no-reorder"] == 0, "jitter-no-reorder reordered")


def t_small_frames(c):
    """Frames of 62..200 B (across the compact store's 64 and 128 B limits: one unit, two
    units, kept as mbufs) through a FIFO delay line and a reordering (heap) one: every
    probe arrives once, byte for byte, at its own length; the FIFO line keeps the order."""
    sizes = [62, 64, 65, 100, 127, 128, 129, 200]
    for spec in ("delay 2ms", "delay 5ms 4ms"):
        c.set("a2b", spec)
        n, run = 400, c.new_run()
        c.quiet()
        sent = {}
        gap, t_next = 1.0 / 5000, time.perf_counter()
        for i in range(n):
            left = t_next - time.perf_counter()
            if left > 0:
                time.sleep(left)
            t_next += gap
            sent[i] = ln.probe(run, i, size=sizes[i % len(sizes)])
            c.a.send(sent[i])
        c.sent_a2b += n
        got = collect(c, "a2b", run, n)
        seqs = [g[1] for g in sorted(got)]
        check(sorted(seqs) == list(range(n)), "%s: %d of %d probes, or duplicates" % (spec, len(got), n))
        bad = [g[1] for g in got if g[3] != sent[g[1]]]
        check(not bad, "%s: %d probes changed (first seq %s)" % (spec, len(bad), bad[:1]))
        if spec == "delay 2ms":
            check(seqs == list(range(n)), "a constant delay reordered small frames")
        else:
            c.note("small frames, %s: %d inversions" % (spec, sum(1 for x, y in zip(seqs, seqs[1:]) if y < x)))


def t_rate(c):
    """rate 10mbit: every probe arrives once, in order, byte for byte (the queue's limit
    1000 holds the burst); the throughput is a timing claim: bench/emu/lemu_timing.py."""
    c.set("a2b", "rate 10mbit")
    n, size, run = 500, 1000, c.new_run()
    c.quiet()
    send_probes(c.a, run, n, size=size)
    c.sent_a2b += n
    got = collect(c, "a2b", run, n)
    check([g[1] for g in got] == list(range(n)), "rate: %d of %d arrived, or out of order (limit "
          "1000 should hold them)" % (len(got), n))
    check(all(g[3] == ln.probe(run, g[1], size=size) for g in got), "rate: a probe changed")
    ts = sorted(g[0] for g in got)
    bps = (n - 1) * size * 8 / ((ts[-1] - ts[0]) / 1e9)
    c.note("rate 10mbit: measured %.3f Mbit/s over %.3f s" % (bps / 1e6, (ts[-1] - ts[0]) / 1e9))
    st = c.stats("a2b")
    check(st["drop_queue"] == c.mark["a2b"]["drop_queue"], "rate: the queue dropped frames")


def rocewire_frames(c, count, seed):
    path = os.path.join(c.tmp, "gen-%d.pcap" % seed)
    ln.sh(c.rocewire, "gen", "--seed", str(seed), "--count", str(count), path)
    return ln.read_pcap(path)


def set_ecn(frame, ecn):
    """Set the ECN bits of an (optionally tagged) IPv4/IPv6 frame; the ICRC masks them."""
    f = bytearray(frame)
    off, et = 14, f[12:14]
    if et == b"\x81\x00":
        off, et = 18, f[16:18]
    if et == b"\x08\x00":
        f[off + 1] = (f[off + 1] & 0xFC) | ecn
        f[off + 10:off + 12] = b"\0\0"
        f[off + 10:off + 12] = ln.ip4_csum(bytes(f[off:off + 20])).to_bytes(2, "big")
    elif et == b"\x86\xdd":
        f[off + 1] = (f[off + 1] & 0xCF) | (ecn << 4)
    return bytes(f)


def ecn_of(frame):
    off, et = 14, frame[12:14]
    if et == b"\x81\x00":
        off, et = 18, frame[16:18]
    if et == b"\x08\x00":
        return frame[off + 1] & 3, ln.ip4_csum(frame[off:off + 20]) == 0
    if et == b"\x86\xdd":
        return (frame[off + 1] >> 4) & 3, True
    return None, True


def validate(c, frames, name):
    path = os.path.join(c.tmp, name)
    ln.write_pcap(path, [(time.time_ns(), f) for f in frames])
    env = dict(os.environ, PYTHONPATH=os.path.join(SRC, "python"))
    p = subprocess.run(["/usr/bin/python3", "-m", "rocewan", "validate", "--json", path + ".json", path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    with open(path + ".json") as f:
        return p.returncode, json.load(f)["results"], p.stdout


def replay(c, port, frames):
    for i, f in enumerate(frames):
        port.send(f)
        if i % 32 == 31:
            time.sleep(0.0005)


def t_red(c):
    """red: CE marks from the queue, IPv4 checksums valid, ICRC untouched (rocewan validate)."""
    c.set("a2b", "rate 20mbit red kmin 20kb kmax 120kb pmax 20%")
    frames = [set_ecn(f, 2) for f in rocewire_frames(c, 300, 7)]  # all ECT(0)
    before = c.stats("a2b")["ecn_marked_red"]
    c.quiet()
    replay(c, c.a, frames)
    c.sent_a2b += len(frames)
    rx = [f for _, f in settle(c, "a2b", len(frames))]
    check(len(rx) == len(frames), "red: %d of %d frames arrived" % (len(rx), len(frames)))
    ce = 0
    for f in rx:
        e, ok = ecn_of(f)
        check(ok, "IPv4 header checksum wrong after marking")
        ce += e == 3
    marked = c.stats("a2b")["ecn_marked_red"] - before
    rc, res, out = validate(c, rx, "red.pcap")
    c.note("red: %d of %d frames CE-marked (emulator: %d); validate: %d ok, %d failed"
           % (ce, len(rx), marked, res["roce_ok_pkts"], res["roce_failed_pkts"]))
    check(rc == 0 and res["roce_failed_pkts"] == 0, "rocewan validate failed:\n" + out)
    check(ce > 0 and ce == marked, "CE at receiver %d, emulator marked %d" % (ce, marked))
    check(ce < len(rx), "every frame marked: the queue never stayed below kmin?")


def t_corrupt(c):
    """corrupt: bit flips fail the ICRC; with corrupt-recompute the ICRC is valid again."""
    frames = rocewire_frames(c, 60, 11)
    for spec, want_fail in (("corrupt 100%", True), ("corrupt 100% corrupt-recompute", False)):
        c.set("a2b", spec)
        c.quiet()
        replay(c, c.a, frames)
        c.sent_a2b += len(frames)
        rx = [f for _, f in settle(c, "a2b", len(frames))]
        check(len(rx) == len(frames), "%s: %d of %d arrived" % (spec, len(rx), len(frames)))
        changed = sum(1 for x, y in zip(rx, frames) if x != y)
        rc, res, out = validate(c, rx, "corrupt.pcap")
        skipped = c.stats("a2b")["corrupt_skipped"]
        c.note("%s: %d frames changed (%d header-only left intact), validate %d ok / %d failed"
               % (spec, changed, skipped, res["roce_ok_pkts"], res["roce_failed_pkts"]))
        check(changed + skipped == len(frames), "%s: only %d of %d frames changed"
              % (spec, changed, len(frames)))
        if want_fail:
            check(res["roce_failed_pkts"] == len(frames), "%s: %d frames still pass validate"
                  % (spec, res["roce_ok_pkts"]))
        else:
            check(rc == 0 and res["roce_failed_pkts"] == 0, "%s: validate failed:\n%s" % (spec, out))


def t_pfc(c):
    """pfc xoff 20kb xon 5kb behind rate 1mbit: XOFF at the threshold, XON at xon, every PFC
    frame the emulator counted received at A. How soon the first XOFF comes, how often it
    is refreshed and the XOFF-to-XON span are timing claims: bench/emu/lemu_timing.py."""
    c.set("a2b", "rate 1mbit limit-bytes 200kb pfc xoff 20kb xon 5kb")
    n, size, run = 40, 1000, c.new_run()
    c.quiet()
    send_probes(c.a, run, n, size=size)
    c.sent_a2b += n
    got = collect(c, "a2b", run, n)  # the queue drains at 1 Mbit/s: 8 ms per frame
    check([g[1] for g in got] == list(range(n)), "pfc: %d of %d probes, or out of order" % (len(got), n))
    st = c.stats("a2b")
    sent = st["pfc_sent"] - c.mark["a2b"]["pfc_sent"]
    # the PFC frames go out of port A toward side A: wait until all that were counted arrived
    pfcs, deadline = [], time.time() + GUARD_S
    while len(pfcs) < sent:
        pfcs += [(ts, p) for ts, p in ((ts, ln.parse_pfc(f)) for ts, f in c.a.take()) if p]
        check(time.time() < deadline, "%d of the %d PFC frames the emulator sent arrived" % (len(pfcs), sent))
        time.sleep(0.02)
    check(pfcs, "no PFC frame came back to side A")
    check(len(pfcs) == sent, "side A received %d PFC frames, the emulator sent %d" % (len(pfcs), sent))
    check(all(p[0] == 0x08 for _, p in pfcs), "PFC enable vector is not priority 3 only")
    check(pfcs[0][1][1][3] == 0xFFFF, "first PFC is not an XOFF: %s" % (pfcs[0],))
    check(pfcs[-1][1][1][3] == 0, "no XON at the end: last %s" % (pfcs[-1],))
    check(all(p[1][3] in (0, 0xFFFF) for _, p in pfcs), "a PFC quanta neither XOFF nor XON")
    xoffs = sum(1 for _, p in pfcs if p[1][3] == 0xFFFF)
    span = (pfcs[-1][0] - pfcs[0][0]) / 1e6
    c.note("pfc: %d XOFF then XON after %.1f ms; emulator: xoff at %d B, xon at %d B, pfc_sent %d"
           % (xoffs, span, st["pfc_xoff_at_bytes"], st["pfc_xon_at_bytes"], sent))
    check(20480 <= st["pfc_xoff_at_bytes"] < 20480 + size, "XOFF at %d B, not at 20 KiB"
          % st["pfc_xoff_at_bytes"])
    check(st["pfc_xon_at_bytes"] <= 5120, "XON at %d B, above 5 KiB" % st["pfc_xon_at_bytes"])


def t_mac_ctrl(c):
    """MAC control frames skip loss, the queue and the delay line, and go out first."""
    c.set("a2b", "delay 50ms")
    run = c.new_run()
    c.quiet()
    send_probes(c.a, run, 10)
    c.a.send(ln.pfc_frame(quanta=0x1234))
    c.sent_a2b += 11
    got = settle(c, "a2b", 11)
    order = ["pfc" if ln.parse_pfc(f) else "data" for _, f in got]
    check(order and order[0] == "pfc" and order.count("data") == 10,
          "expected the PFC frame first, then 10 data frames: %s" % order)
    c.set("a2b", "loss 100% rate 1mbit")
    c.quiet()
    for _ in range(20):
        c.a.send(ln.pfc_frame(quanta=7))
    send_probes(c.a, run, 5)
    c.sent_a2b += 25
    got = settle(c, "a2b", 25)
    npfc = sum(1 for _, f in got if ln.parse_pfc(f))
    check(npfc == 20 and len(got) == 20, "loss 100%%: %d PFC and %d other frames arrived"
          % (npfc, len(got) - npfc))
    # ctrl-delay: PFC keeps skipping loss and the queue but takes the base delay
    c.set("a2b", "delay 50ms loss 100% ctrl-delay")
    c.quiet()
    t0 = time.time_ns()  # the clock of the sockets' kernel RX stamps (SO_TIMESTAMPNS)
    c.a.send(ln.pfc_frame(quanta=9))
    send_probes(c.a, run, 3)
    c.sent_a2b += 4
    got = settle(c, "a2b", 4)
    # stamped before the send, received after the release: no delay can make it shorter
    waited = (got[0][0] - t0) / 1e9 if got else 0.0
    check(len(got) == 1 and ln.parse_pfc(got[0][1]) and waited >= 0.045,
          "ctrl-delay: expected the PFC frame alone after ~50 ms, got %d frame(s) after %.1f ms"
          % (len(got), waited * 1e3))
    c.note("mac control: PFC overtook a 50 ms delay line; 20/20 crossed loss 100%%; with "
           "ctrl-delay it arrived after %.1f ms" % (waited * 1e3))


def t_telemetry(c):
    """Runtime control answers: get, stats, and a bad SPEC names its token."""
    r = c.emu.tel.cmd("/lossy_emu/set,a2b,delay 20ms dealy 3ms")["/lossy_emu/set"]
    check(r.get("ok") == 0 and "dealy" in r.get("error", ""), "bad SPEC over telemetry: %s" % r)
    r = c.emu.tel.cmd("/lossy_emu/set,b2c,delay 1ms")["/lossy_emu/set"]
    check(r.get("ok") == 0 and "b2c" in r.get("error", ""), "bad direction: %s" % r)
    g = c.emu.tel.cmd("/lossy_emu/get,b2a")["/lossy_emu/get"]
    check("delay 20ms" in g, "/lossy_emu/get,b2a: %r" % g)
    s = c.emu.tel.cmd("/lossy_emu/stats")["/lossy_emu/stats"]
    check("a2b" in s and "rx_pkts" in s["a2b"] and "delay_err_ns_p99" in s["b2a"], "stats: %s" % s)
    c.note("telemetry: get b2a = %r" % g)


def t_exit_json(c):
    """SIGINT: counter table on stdout, --json with the required keys and sane values."""
    rc = c.emu.stop()
    out = "".join(c.emu.out)
    check(rc == 0, "exit status %s:\n%s" % (rc, out))
    check("lossy-emu counters" in out and "rx_pkts" in out, "no counter table:\n" + out)
    with open(c.json1) as f:
        doc = json.load(f)
    check(doc["schema"] == "rocewan/1" and doc["app"] == "lossy-emu", "envelope")
    check(doc["seed"] == 42 and doc["config"]["seed"] == 42, "seed not recorded")
    res = doc["results"]
    keys = ["rx_pkts", "tx_pkts", "rx_bytes", "tx_bytes", "drop_loss", "drop_queue", "corrupted",
            "ecn_marked", "duplicated", "reordered", "pfc_sent", "loss_bursts", "delay_err_us"]
    for d in ("a2b", "b2a"):
        for k in keys:
            check(k in res[d], "results.%s.%s missing" % (d, k))
        for k in ("p50", "p99", "max"):
            check(isinstance(res[d]["delay_err_us"][k], (int, float)), "delay_err_us.%s" % k)
    a, b = res["a2b"], res["b2a"]
    check(a["rx_pkts"] == c.sent_a2b, "a2b rx_pkts %d, sent %d" % (a["rx_pkts"], c.sent_a2b))
    check(b["rx_pkts"] == c.sent_b2a, "b2a rx_pkts %d, sent %d" % (b["rx_pkts"], c.sent_b2a))
    check(a["tx_pkts"] + a["drop_loss"] + a["drop_queue"] + a["in_flight"]
          == a["rx_pkts"] + a["duplicated"],
          "a2b does not add up: %s" % {k: a[k] for k in keys[:6]})
    check(b["tx_pkts"] == b["rx_pkts"], "b2a lost frames")
    bursts = a["loss_bursts"]
    check(all(len(x) == 2 for x in bursts), "loss_bursts is not [[len, count]]")
    if not any(ln >= 16 for ln, _ in bursts):  # the last bucket holds runs >= 16
        # loss_bursts counts the loss model's events: drops, plus those that cancelled a
        # duplicate (seed_all_draws) or became CE marks (netem ecn)
        check(sum(ln * n for ln, n in bursts) == a["drop_loss"] + a["ecn_marked_loss"]
              + c.loss_events_kept, "loss_bursts %s do not add up to drop_loss %d + "
              "ecn_marked_loss %d + %d cancelled duplicates" % (bursts, a["drop_loss"],
                                                                a["ecn_marked_loss"], c.loss_events_kept))
    check(a["corrupted"] + a["corrupt_skipped"] == 120 + c.corrupted_extra and a["ecn_marked"] > 0
          and a["pfc_sent"] > 0, "a2b counters")
    check(0 <= b["delay_err_us"]["p50"] <= b["delay_err_us"]["p99"] <= b["delay_err_us"]["max"],
          "delay_err_us order")
    # the release error's size is a timing claim (bench/emu/run.sh, docs/claims.md); what
    # holds here is that the delay line measured its releases: t_delay's 300 at least, and
    # no more than b2a released
    check(300 <= b["delay_err_us"]["samples"] <= b["tx_pkts"],
          "b2a release error samples %s, frames released %d" % (b["delay_err_us"], b["tx_pkts"]))
    c.note("json: b2a delay_err_us p50 %.1f p99 %.1f max %.1f; a2b drop_loss %d, loss_bursts %s"
           % (b["delay_err_us"]["p50"], b["delay_err_us"]["p99"], b["delay_err_us"]["max"],
              a["drop_loss"], bursts[:4]))


# ---- tests with their own emulator runs -----------------------------------------------------

def t_config_seed(c):
    """--config FILE (a2b, seed) gives the same drops as --a2b/--seed 42 in another process."""
    conf = os.path.join(c.tmp, "emu.conf")
    with open(conf, "w") as f:
        f.write("# lossy-emu test config\nseed = 42\na2b = \"loss 10%\"   # as run 1\nb2a = delay 1ms\n")
    emu = ln.Emu(c.binary, c.topo, "lemu%s_2" % c.tag, c.tmp)
    c.emu = emu
    emu.start(["--config", conf], lcores="0")  # one lcore: main runs both directions
    try:
        n = 3000
        c.quiet()
        send_probes(c.a, c.seed_run, n)
        got = collect(c, "a2b", c.seed_run, n)
        drops = sorted(set(range(n)) - set(g[1] for g in got))
        check(drops == c.drops_seed42, "seed 42 from --config: %d drops vs %d in run 1"
              % (len(drops), len(c.drops_seed42)))
        c.note("config file + 1 lcore: same %d drops as run 1" % len(drops))
    finally:
        check(emu.stop() == 0, "exit status")


def bth_of(frame):
    """(dest QPN, PSN, opcode) of a RoCEv2 frame (optional 802.1Q tag, IPv4/IPv6, UDP 4791)."""
    off, et = 14, frame[12:14]
    if et == b"\x81\x00":
        off, et = 18, frame[16:18]
    if et == b"\x08\x00":
        off += (frame[off] & 15) * 4
    elif et == b"\x86\xdd":
        off += 40
    else:
        return None
    if int.from_bytes(frame[off + 2:off + 4], "big") != 4791:
        return None
    b = frame[off + 8:off + 20]
    return int.from_bytes(b[5:8], "big"), int.from_bytes(b[9:12], "big") & 0xFFFFFF, b[0]


def t_drop_rules(c):
    """drop-psn QPN:PSN:TIMES and drop-nth N drop exactly the packets meant; --drop-log lists them."""
    frames = rocewire_frames(c, 80, 23)
    bths = [bth_of(f) for f in frames]
    check(all(bths), "rocewire gen made a frame without a RoCEv2 BTH")
    q, p, _ = bths[10]
    target = frames[10]
    # the target arrives 3 times (2 "retransmissions" at the end); drop-psn drops 2 of them
    send = frames + [target, target]
    # expected, by the rules' definition: rules in SPEC order, every arrival counts
    want_drop, matched, seen = [], 0, 0
    for i, f in enumerate(send):
        seen += 1
        hit_psn = bth_of(f)[:2] == (q, p)
        matched += hit_psn
        if hit_psn and matched <= 2:
            want_drop.append((i, "drop-psn"))
        elif seen % 9 == 0:
            want_drop.append((i, "drop-nth"))
    log = os.path.join(c.tmp, "drops.csv")
    js = os.path.join(c.tmp, "rules.json")
    emu = ln.Emu(c.binary, c.topo, "lemu%s_3" % c.tag, c.tmp)
    c.emu = emu
    spec = "drop-psn 0x%x:0x%x:2 drop-nth 9" % (q, p)
    emu.start(["--a2b", spec, "--drop-log", log, "--json", js], lcores="0")
    try:
        c.quiet()
        t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        replay(c, c.a, send)
        rx = [f for _, f in settle(c, "a2b", len(send))]
    finally:
        check(emu.stop() == 0, "exit status")
    t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    dropped = {i for i, _ in want_drop}
    expect_rx = [f for i, f in enumerate(send) if i not in dropped]
    check(rx == expect_rx, "received %d frames, expected %d (byte-exact, in order)"
          % (len(rx), len(expect_rx)))
    with open(js) as f:
        a = json.load(f)["results"]["a2b"]
    n_psn = sum(1 for _, k in want_drop if k == "drop-psn")
    n_nth = len(want_drop) - n_psn
    check(n_psn == 2, "test set-up: %d drop-psn drops expected" % n_psn)
    check(a["drop_rule"] == len(want_drop), "drop_rule %d, want %d" % (a["drop_rule"], len(want_drop)))
    check(a["drop_rules"] == [{"rule": "drop-psn 0x%x:0x%x:2" % (q, p), "dropped": 2},
                              {"rule": "drop-nth 9", "dropped": n_nth}],
          "drop_rules %s" % a["drop_rules"])
    check(a["rx_pkts"] == len(send) and a["tx_pkts"] + a["drop_rule"] + a["drop_loss"]
          + a["drop_queue"] + a["in_flight"] == a["rx_pkts"] + a["duplicated"],
          "a2b does not add up: %s" % {k: a[k] for k in ("rx_pkts", "tx_pkts", "drop_rule")})
    with open(log) as f:
        lines = f.read().splitlines()
    check(lines[0].startswith("#") and "CLOCK_MONOTONIC ns" in lines[0], "drop log header: %r" % lines[0])
    check(lines[1] == "time_ns,dir,cause,qpn,psn,opcode,len", "drop log columns: %r" % lines[1])
    rows = [r.split(",") for r in lines[2:]]
    check(len(rows) == len(want_drop), "drop log has %d rows, %d drops" % (len(rows), len(want_drop)))
    for (i, cause), r in zip(want_drop, rows):
        bq, bp, op = bth_of(send[i])
        check(r[1:] == ["a2b", cause, str(bq), str(bp), str(op), str(len(send[i]))],
              "drop log row %s, expected frame %d dropped by %s" % (r, i, cause))
        # the one clock: stamped between our CLOCK_MONOTONIC reads around the replay
        check(t0 <= int(r[0]) <= t1, "drop log time %s is not CLOCK_MONOTONIC ns in [%d, %d]"
              % (r[0], t0, t1))
    c.note("drop rules: %s -> %d dropped (%d by drop-psn, %d by drop-nth), log rows match"
           % (spec, len(want_drop), n_psn, n_nth))


def mad_frames():
    """MADs to QP1 (UD SEND_ONLY, DETH Q_Key 0x80010000) of the given CM attributes, and
    frames that look alike but are no MAD to QP1 (another QP, with immediate)."""
    sys.path.insert(0, os.path.join(SRC, "python"))
    from rocewan.build import build_bytes

    def one(attr, psn, dqpn=1, opcode=0x64, cls=0x07):
        mad = bytes([1, cls, 2, 3]) + bytes(12) + attr.to_bytes(2, "big") + bytes(238)
        spec = {"eth_src": ln.MAC_A.hex(":"), "eth_dst": ln.MAC_B.hex(":"),
                "ip": {"ver": 4, "src": "10.99.0.1", "dst": "10.99.0.2"},
                "bth": {"opcode": opcode, "dqpn": dqpn, "psn": psn},
                "deth": {"qkey": 0x80010000, "sqpn": 1}, "payload": mad}
        if opcode == 0x65:
            spec["immdt"] = 1
        return build_bytes(spec)

    REQ, REP, RTU = 0x10, 0x13, 0x14
    plan = [("cm-req", one(REQ, 1)), ("cm-rep", one(REP, 2)), ("cm-req", one(REQ, 3)),
            (None, one(REQ, 4, dqpn=2)), (None, one(REQ, 5, opcode=0x65)),
            ("cm-rtu", one(RTU, 6)), ("cm-rep", one(REP, 7)), ("vendor", one(REQ, 8, cls=0x30)),
            ("cm-rep", one(REP, 9)), ("cm-rep", one(REP, 10)), ("cm-req", one(REQ, 11))]
    return plan


def t_drop_mad(c):
    """drop-mad KIND ORD,...: the ORD-th MADs of that kind to QP1 are dropped, nothing else."""
    plan = mad_frames()
    send = [f for _, f in plan]
    spec = "drop-mad cm-req 1 drop-mad cm-rep 1,3"
    rules = {"cm-req": {1}, "cm-rep": {1, 3}}
    want_drop, nth = [], {}
    for i, (kind, _) in enumerate(plan):
        if kind is None:
            continue
        nth[kind] = nth.get(kind, 0) + 1
        if nth[kind] in rules.get(kind, ()):
            want_drop.append((i, kind))
    check(len(want_drop) == 3, "test set-up: %d drops expected" % len(want_drop))
    log = os.path.join(c.tmp, "mad-drops.csv")
    js = os.path.join(c.tmp, "mad.json")
    emu = ln.Emu(c.binary, c.topo, "lemu%s_m" % c.tag, c.tmp)
    c.emu = emu
    emu.start(["--a2b", spec, "--drop-log", log, "--json", js], lcores="0")
    try:
        c.quiet()
        replay(c, c.a, send)
        rx = [f for _, f in settle(c, "a2b", len(send))]
    finally:
        check(emu.stop() == 0, "exit status")
    dropped = {i for i, _ in want_drop}
    expect_rx = [f for i, f in enumerate(send) if i not in dropped]
    check(rx == expect_rx, "received %d frames, expected %d (byte-exact, in order)"
          % (len(rx), len(expect_rx)))
    with open(js) as f:
        a = json.load(f)["results"]["a2b"]
    check(a["drop_rule"] == 3, "drop_rule %d, want 3" % a["drop_rule"])
    check(a["drop_rules"] == [{"rule": "drop-mad cm-req 1", "dropped": 1},
                              {"rule": "drop-mad cm-rep 1,3", "dropped": 2}],
          "drop_rules %s" % a["drop_rules"])
    with open(log) as f:
        rows = [r.split(",") for r in f.read().splitlines()[2:]]
    check([r[2] for r in rows] == ["drop-mad"] * 3, "drop log causes %s" % [r[2] for r in rows])
    check([int(r[4]) for r in rows] == [bth_of(send[i])[1] for i, _ in want_drop],
          "drop log PSNs %s" % [r[4] for r in rows])
    c.note("drop-mad: %s -> frames %s dropped" % (spec, [i for i, _ in want_drop]))


def one_error_line(p):
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    return lines


def t_bad_spec(c):
    """Bad SPECs: one line naming the bad token, non-zero exit, nothing started."""
    cases = [
        (["--a2b", "delay 10ms loss 120%"], "120%"),
        (["--both", "delay 10ms dealy 5ms"], "dealy"),
        (["--b2a", "rate 10mbit pfc xoff 10kb xon 20kb"], "xon"),
        (["--a2b", "delay 10"], "\"10\""),
        (["--a2b", "rate 10mbit", "--bogus", "1"], "--bogus"),
    ]
    bad_conf = os.path.join(c.tmp, "bad.conf")
    with open(bad_conf, "w") as f:
        f.write("seed = 1\n\na2b = delay 5ms jitter 1ms\n")
    cases.append((["--config", bad_conf], "bad.conf:3"))
    for args, token in cases:
        prefix = "lemu%s_bad" % c.tag
        emu = ln.Emu(c.binary, c.topo, prefix, c.tmp)
        t0 = time.time()
        p = emu.run_once(args)
        lines = one_error_line(p)
        check(p.returncode != 0, "%s: exit status 0" % args)
        check(len(lines) == 1 and token in lines[0] and lines[0].startswith("lossy-emu: "),
              "%s: expected one line naming %r, got %r" % (args, token, p.stderr))
        check("EAL" not in p.stdout + p.stderr and not os.path.exists("/var/run/dpdk/" + prefix),
              "%s: EAL was started" % args)
        c.note("%-45s -> %s (%.2f s)" % (" ".join(args), lines[0], time.time() - t0))


def t_memory(c):
    """EAL memory too small: one line with the SPEC, the need in MB and the -m fix."""
    emu = ln.Emu(c.binary, c.topo, "lemu%s_mem" % c.tag, c.tmp)
    p = emu.run_once(["--a2b", "delay 100ms rate 10gbit"], mem=64)
    line = [x for x in p.stderr.splitlines() if x.startswith("lossy-emu:")]
    check(p.returncode != 0, "exit status 0 with 64 MB")
    check(len(line) == 1 and "delay 100ms rate 10gbit" in line[0] and re.search(r"\d+ MB", line[0])
          and re.search(r"-m \d+", line[0]), "memory error line: %r" % p.stderr)
    m = int(re.search(r"-m (\d+)", line[0]).group(1))
    c.note("memory: %s" % line[0])
    p = emu.run_once(["--a2b", "delay 100ms rate 10gbit", "--help"], mem=m)  # --help: parse only
    check(p.returncode == 0, "--help")


MAIN_RUN = [t_loss_random, t_delay, t_gemodel, t_seed_same_run, t_seed_all_draws, t_reorder_dup, t_jitter,
            t_small_frames, t_rate,
            t_red, t_corrupt,
            t_pfc, t_mac_ctrl, t_telemetry, t_exit_json]
OTHER = [t_config_seed, t_drop_rules, t_drop_mad, t_bad_spec, t_memory]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("-k", default="", help="run only tests whose name contains this")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--lcores", default="0-1",
                    help="EAL lcores of the main run (-l LIST, or --lcores MAP if it has @)")
    args = ap.parse_args()
    # scripts/test.sh: a suite that cannot run fails loudly, it is never skipped
    if os.geteuid() != 0:
        print("FAIL: the lossy-emu e2e tests need root (network namespaces, af_packet)")
        return 1
    c = Ctx(args)
    for exe in (c.binary, c.rocewire):
        if not os.access(exe, os.X_OK):
            print("FAIL: %s is not built" % exe)
            return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # runs the finally: cleanup
    t_start = time.time()
    passed, failed = [], []
    try:
        c.topo.create()
        c.a, c.b = c.topo.socket("a"), c.topo.socket("b")
        c.emu = ln.Emu(c.binary, c.topo, "lemu%s" % c.tag, c.tmp)
        c.json1 = os.path.join(c.tmp, "run1.json")
        c.emu.start(["--a2b", "loss 10%", "--b2a", "delay 20ms", "--seed", "42", "--json", c.json1],
                    lcores=args.lcores)
        main_emu = c.emu
        for t in MAIN_RUN + OTHER:
            name = t.__name__[2:]
            if args.k and args.k not in name and not (t in MAIN_RUN and name in ("loss_random",)):
                continue
            t1 = time.time()
            try:
                if t in OTHER and main_emu.proc.poll() is None:
                    main_emu.stop()
                t(c)
                passed.append(name)
                print("ok   %-16s %5.2f s  %s" % (name, time.time() - t1, t.__doc__.splitlines()[0]))
            except Fail as e:
                failed.append(name)
                print("FAIL %-16s %5.2f s  %s\n     %s" % (name, time.time() - t1,
                                                           t.__doc__.splitlines()[0], e))
            except Exception as e:  # a broken environment: report and go on
                failed.append(name)
                print("FAIL %-16s error: %r" % (name, e))
        if args.verbose or failed:
            for n in c.notes:
                print("  note:", n)
    finally:
        for e in (c.emu,):
            if e:
                e.kill()
        try:
            main_emu.kill()
        except NameError:
            pass
        for p in (c.a, c.b):
            if p:
                p.close()
        c.topo.remove()
        subprocess.run(["rm", "-rf", c.tmp])
    print("lossy-emu e2e: %d passed, %d failed (%.1f s)" % (len(passed), len(failed),
                                                            time.time() - t_start))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
