#!/usr/bin/env bash
# Run every benchmark program and keep JSON results beside the build.
# Usage: bench/run.sh BUILD_DIR
set -euo pipefail
b=${1:-build-bench}
out="$b/results"
mkdir -p "$out"
echo "== wire layer (lib/roce): $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$b/bench/bench_wire" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
	--benchmark_out="$out/bench_wire.json" --benchmark_out_format=json
echo "results: $out/bench_wire.json"
/usr/bin/python3 bench/summary.py "$out/bench_wire.json"
echo "== rnic against dpdk-testpmd on a veth pair (bench/rnic/run.sh; root)"
bash bench/rnic/run.sh "$b"
echo "== lossy-emu against dpdk-testpmd io, and its delay accuracy (bench/emu/run.sh; root)"
bash bench/emu/run.sh "$b"
echo "== rnic --pfc-xoff: PFC from a receiver that falls behind (bench/rnic/pfc_send.py; root)"
/usr/bin/python3 bench/rnic/pfc_send.py "$b" "${PFC_ROUNDS:-5}"
