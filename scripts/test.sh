#!/usr/bin/env bash
# Every test suite, in order of cost. Any failure fails the run; a suite that
# cannot run because a capability is missing fails loudly, it is never skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/python"
export ROCEWAN_BUILD="$PWD/build"
PY=/usr/bin/python3
failed=()

step() { echo; echo "=== $* ==="; }
run() { local name=$1; shift; "$@" || failed+=("$name"); }

step "unit tests (meson)"
run unit meson test -C build --print-errorlogs --num-processes 2

step "unit tests under AddressSanitizer + UndefinedBehaviorSanitizer"
# without DPDK; the DPDK-free cores of lossy-emu and pfc-relay (lemu_core, relay_core) build
# and run here too (suite unit)
if [ ! -f build-asan/build.ninja ]; then
	meson setup build-asan -Ddpdk=disabled -Dbuildtype=debug -Db_sanitize=address,undefined \
		-Db_lundef=false >/dev/null || failed+=("asan-setup")
fi
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1
run asan bash -c 'ninja -C build-asan >/dev/null && meson test -C build-asan --suite unit --print-errorlogs --num-processes 2'

step "format: clang-format --dry-run --Werror on the files in scripts/format-files.txt"
run format bash -c 'clang-format --dry-run --Werror $(grep -v "^#" scripts/format-files.txt)'

step "lint: flake8 over python/, tests/, bench/ and ./testbed (config: .flake8)"
lint() {
	local out
	out=$($PY -m flake8 python tests bench testbed 2>&1)
	local rc=$?
	[ -n "$out" ] && echo "$out"
	if [ $rc -eq 0 ]; then
		echo "flake8: pass (no findings)"
	else
		echo "flake8: FAIL ($(printf '%s\n' "$out" | grep -c .) finding(s), exit $rc)"
	fi
	return $rc
}
run lint lint

step "fuzz: wire parsers ${FUZZ_SECONDS:-20} s, text parsers half that (libFuzzer + ASan + UBSan)"
run fuzz env FUZZ_SECONDS=${FUZZ_SECONDS:-20} bash scripts/fuzz.sh

if [ -d tests/python ]; then
	step "Python: Scapy layers, validate, cross-checks with Scapy and tshark"
	run python $PY -m pytest -q tests/python -p no:cacheprovider

	step "Python again: the package installed by pip in a venv with PyPI's Scapy 2.8.0, a wheel, an editable install"
	# needs PyPI (python/constraints-test.txt pins what it installs); fails naming the index without it
	run python-venv $PY tests/python/venv_run.py "$PWD/build"
fi

step "netns end-to-end: rnic processes on veth pairs (af_packet)"
run netns $PY -m pytest -q tests/netns -p no:cacheprovider

step "testbed: config parsing, models, every configs/*.toml end to end, demo, up/capture/down"
run testbed $PY -m pytest -q tests/testbed -p no:cacheprovider

if [ -d tests/interop ]; then
	step "interop: rxe VM harness"
	run interop $PY -m pytest -q tests/interop -p no:cacheprovider
fi

echo
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED suites: ${failed[*]}"
	exit 1
fi
echo "all test suites passed"
