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

step "DPDK data paths under AddressSanitizer + UndefinedBehaviorSanitizer: netns smoke tests"
# rnic, lossy-emu and pfc-relay built with DPDK and ASan + UBSan (build-asan-dpdk), run by a
# few netns tests and the lossy-emu e2e checks. Debian's libdpdk is not instrumented: EAL
# runs with --no-huge (as in every netns test) and LSan skips what DPDK's own libraries
# allocate (tests/sanitizers/lsan_dpdk.supp). Any sanitizer report of any process fails it.
asan_dpdk() {
	local b=build-asan-dpdk logs rc=0
	if [ ! -f $b/build.ninja ]; then
		meson setup $b -Dbuildtype=debug -Db_sanitize=address,undefined -Db_lundef=false \
			>/dev/null || return 1
	fi
	ninja -C $b app/rnic/rnic app/lossy-emu/lossy-emu app/pfc-relay/pfc-relay \
		tools/rocewire/rocewire app/rnic/rnic-exec lib/verbs/librocewan-verbs.so \
		tests/verbs/rv_badinput >/dev/null || return 1
	logs=$(mktemp -d /tmp/rw-asan-dpdk.XXXXXX)
	local env=(ROCEWAN_BUILD="$PWD/$b"
		ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:log_path=$logs/asan"
		LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan_dpdk.supp:print_suppressions=0"
		UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan")
	env "${env[@]}" $PY tests/dpdk/emu/test_lemu_e2e.py --build "$b" || rc=1
	env "${env[@]}" $PY -m pytest -q -p no:cacheprovider tests/netns/test_recovery_e2e.py \
		"tests/netns/test_rnic_netns.py::test_modes" \
		tests/netns/test_pfc_relay.py::test_remote_pause_stops_only_prio3_and_local_xoff \
		tests/netns/test_pfc_relay.py::test_local_pfc_relayed_in_order_with_quanta_conversion \
		tests/netns/test_verbs_badinput.py || rc=1
	if [ -n "$(ls -A "$logs")" ]; then
		echo "sanitizer reports ($(ls "$logs" | wc -l) file(s)):"
		head -n 60 "$logs"/*
		rc=1
	else
		echo "no sanitizer report"
	fi
	rm -rf "$logs"
	return $rc
}
run asan-dpdk asan_dpdk

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
