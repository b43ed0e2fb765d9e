# The two promised commands are `make demo` and `make test`; both set up a fresh
# Debian 12 machine (as root) before doing their job. Everything else is a helper.
SHELL := /bin/bash
BUILD ?= build
ASAN_BUILD ?= build-asan
BENCH_BUILD ?= build-bench
PY := /usr/bin/python3

.PHONY: all setup build demo test test-unit test-asan test-python lint bench soak clean

all: build

setup:
	@bash scripts/bootstrap.sh
	@bash scripts/hugepages.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD)

build: $(BUILD)/build.ninja
	ninja -C $(BUILD)

demo: setup build
	@bash scripts/demo.sh

test: setup build
	@bash scripts/test.sh

bench: setup
	@[ -f $(BENCH_BUILD)/build.ninja ] || meson setup $(BENCH_BUILD) -Dbench=true
	ninja -C $(BENCH_BUILD)
	@bash bench/run.sh $(BENCH_BUILD)

# the three binaries for SOAK_SECONDS (default 1800) under load and impairments; not in
# make test (docs/reliability.md)
soak: setup build
	@$(PY) bench/soak.py $(BUILD)

# Python lint alone (make test runs it too; config: .flake8)
lint:
	@$(PY) -m flake8 python tests bench testbed && echo "flake8: pass (no findings)"

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(BENCH_BUILD) build-fuzz build-asan-dpdk
