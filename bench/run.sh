#!/usr/bin/env bash
# Run every benchmark program and keep JSON results beside the build.
# Usage: bench/run.sh BUILD_DIR      (BENCH_ROUNDS=N rounds per timing claim, default 10)
set -euo pipefail
b=${1:-build-bench}
out="$b/results"
mkdir -p "$out"
echo "== wire layer (lib/roce): $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$b/bench/bench_wire" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
	--benchmark_out="$out/bench_wire.json" --benchmark_out_format=json
echo "results: $out/bench_wire.json"
/usr/bin/python3 bench/summary.py "$out/bench_wire.json"
echo "== lib/fec: XOR / RS encode and decode next to ISA-L's raw routines (bench_fec)"
"$b/bench/bench_fec" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
	--benchmark_out="$out/bench_fec.json" --benchmark_out_format=json
echo "results: $out/bench_fec.json"
echo "== rnic against dpdk-testpmd on a veth pair (bench/rnic/run.sh; root)"
bash bench/rnic/run.sh "$b"
echo "== lossy-emu against dpdk-testpmd io, and its delay accuracy (bench/emu/run.sh; root)"
bash bench/emu/run.sh "$b"
echo "== claim: lossy-emu's own share of the release error on memif + net_null, no system call per burst (bench/emu/accuracy_memif.py; root)"
/usr/bin/python3 bench/emu/accuracy_memif.py "$b"
echo "== claim: lossy-emu's rate limiter within 10 %, PFC's first XOFF, refreshes and XOFF-to-XON span (bench/emu/lemu_timing.py; root)"
/usr/bin/python3 bench/emu/lemu_timing.py "$b"
echo "== claim: lossy-emu against netem, the lateness bounds of the cross-check (bench/emu/netem_xcheck.py; root)"
/usr/bin/python3 bench/emu/netem_xcheck.py "$b"
echo "== lossy-emu and pfc-relay on net_null against dpdk-testpmd io, per lcore (bench/emu/null.sh)"
bash bench/emu/null.sh "$b"
echo "== memif: testpmd, rnic<->rnic (unpaced and paced as the chain) and the gbn-10g chain over memif (bench/testbed/memif.py; root)"
/usr/bin/python3 bench/testbed/memif.py "$b"
echo "== rnic --pfc-xoff: PFC from a receiver that falls behind (bench/rnic/pfc_send.py; root)"
/usr/bin/python3 bench/rnic/pfc_send.py "$b" "${PFC_ROUNDS:-${BENCH_ROUNDS:-10}}"
# the timing claims make test may not assert (docs/testing.md, figures in docs/claims.md);
# each runs BENCH_ROUNDS rounds (default 10) and prints its pass rate
echo "== claim: rnic PFC reaction on the wire (bench/rnic/pfc_wire.py; root)"
/usr/bin/python3 bench/rnic/pfc_wire.py "$b"
echo "== claim: pfc-relay PFC latency, 1 ms target (bench/relay/latency.py; root)"
/usr/bin/python3 bench/relay/latency.py "$b"
echo "== claim: an idle pfc-relay uses < 35 % of a core (bench/relay/idle_cpu.py; root)"
/usr/bin/python3 bench/relay/idle_cpu.py "$b"
echo "== claim: Go-Back-N goodput against the Go-Back-N model of Wang (NJUPT) (bench/testbed/goodput_model.py; root)"
/usr/bin/python3 bench/testbed/goodput_model.py "$b"
echo "== claim: Swing one-BDP buffer, bracketed (bench/testbed/swing_bracket.py; root)"
/usr/bin/python3 bench/testbed/swing_bracket.py "$b"
echo "== claim: rnic adaptive RTO, tail loss resent 1.0-1.5 RTT after its send (bench/rnic/rto_tail.py; root)"
/usr/bin/python3 bench/rnic/rto_tail.py "$b" "${RTO_ROUNDS:-${BENCH_ROUNDS:-10}}"
echo "== claim: gbone / irn keep 80 % of the lossless goodput and 2.5x gbn's at 1 % loss (bench/testbed/selective_goodput.py; root)"
/usr/bin/python3 bench/testbed/selective_goodput.py "$b"
echo "== claim: FEC xor:32,4 >= 2x gbn at 0.5 %, rs:32,4 >= 1.2x xor at 1 % (bench/testbed/fec_goodput.py; root)"
/usr/bin/python3 bench/testbed/fec_goodput.py "$b"
echo "== claim: vrp at 10 % tolerated delivers >= 0.12 Gb/s intact and >= 5x gbn at 5 % loss, 20 ms (bench/testbed/vrp_goodput.py; root)"
/usr/bin/python3 bench/testbed/vrp_goodput.py "$b"
echo "== congestion control: RED/ECN bottleneck per --cc, slow receiver with defaults (bench/cc/ecn.py; root)"
/usr/bin/python3 bench/cc/ecn.py "$b" "${CC_ROUNDS:-${BENCH_ROUNDS:-10}}"
echo "== congestion control: TIMELY with and without 10 ms of added RTT, datacenter and WAN profiles (bench/cc/timely.py; root)"
/usr/bin/python3 bench/cc/timely.py "$b" "${CC_ROUNDS:-${BENCH_ROUNDS:-10}}"
echo "== congestion control: the loss window's slow-start cost, 1 Gb/s x 40 ms lossless (bench/cc/slowstart.py; root)"
/usr/bin/python3 bench/cc/slowstart.py "$b" "${CC_ROUNDS:-${BENCH_ROUNDS:-10}}"
