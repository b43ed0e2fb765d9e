#!/usr/bin/env bash
# The main job: the testbed demo. rnic A -> lossy-emu (an emulated 1 Gb/s, 20 ms
# RTT WAN) -> rnic B on veth pairs in network namespaces; Go-Back-N on the clean
# and on the lossy link against the Go-Back-N model of Wang (NJUPT). Prints the table and
# writes results/demo/demo.json and results/demo/demo.png. Then a quick wire-library
# self-check. Extra arguments go to `testbed demo` (e.g. --loss "0.1%").
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/python"
mkdir -p results
./testbed demo "$@"
echo
echo "wire library self-check (every opcode built, parsed and ICRC-verified by lib/roce):"
./build/tools/rocewire/rocewire selfcheck
