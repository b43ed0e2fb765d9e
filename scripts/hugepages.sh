#!/usr/bin/env bash
# Reserve 2 MiB hugepages for DPDK and mount hugetlbfs; if that is not possible,
# say so once: the apps then run with --no-huge (slower mempools, 64 MB default).
set -u
WANT=${ROCEWAN_HUGEPAGES:-1024}   # 2 GiB
nr=/proc/sys/vm/nr_hugepages
if [ -w "$nr" ]; then
	cur=$(cat "$nr")
	[ "$cur" -ge "$WANT" ] || echo "$WANT" > "$nr" 2>/dev/null || true
fi
if ! grep -qs " /dev/hugepages hugetlbfs " /proc/mounts; then
	mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null || true
fi
got=$(cat "$nr" 2>/dev/null || echo 0)
if [ "$got" -gt 0 ] && grep -qs hugetlbfs /proc/mounts; then
	echo "hugepages: $got x 2 MiB reserved, hugetlbfs mounted"
else
	echo "hugepages: none available; DPDK programs will run with --no-huge"
fi
