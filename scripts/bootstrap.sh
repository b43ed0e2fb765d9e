#!/usr/bin/env bash
# Install everything the project needs on a fresh Debian 12 machine (root).
# Idempotent: when every package is present it only checks and returns (~1 s).
set -euo pipefail

PKGS=(
  build-essential meson ninja-build pkg-config clang llvm lld libclang-rt-14-dev
  dpdk dpdk-dev libdpdk-dev
  libibverbs-dev rdma-core ibverbs-utils ibverbs-providers perftest librdmacm-dev rdmacm-utils qperf
  libisal-dev libbpf-dev libxdp-dev libelf-dev zlib1g-dev libpcap-dev
  libbenchmark-dev
  clang-format
  python3-scapy python3-pytest python3-matplotlib python3-numpy python3-flake8 python3-venv
  iproute2 ethtool iperf3 tcpdump tshark iputils-ping procps psmisc openssh-client openssh-server
  libmicrohttpd-dev prometheus curl
  qemu-system-x86 busybox-static cpio kmod
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "bootstrap: need root to install: ${missing[*]}" >&2; exit 1; }
  echo "bootstrap: installing ${#missing[@]} package(s): ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "bootstrap: all ${#PKGS[@]} packages present"
