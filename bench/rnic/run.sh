#!/usr/bin/env bash
# rnic against dpdk-testpmd on the same veth pair, side by side (docs/performance.md).
# Needs root. Takes about ROUNDS * (4 * DUR + 40) seconds.
#
#   bench/rnic/run.sh [BUILD_DIR]     (DUR=seconds per point, default 5; ROUNDS, default 2)
#
# Topology: ns A (veth a, CPU 0) <-> ns B (veth b, CPU 1), MTU 4200, both ends on
# net_af_packet with 8 KiB ring frames (a 4096-MTU RoCE frame is 4154-4170 bytes).
#   baseline: dpdk-testpmd --forward-mode=txonly on a, --forward-mode=rxonly on b,
#             frames of exactly the rnic's size; rate = what b's PMD received
#             (testpmd's own Rx-pps, mean of the full seconds of traffic). Twice:
#             with testpmd's default addressing (a foreign MAC: b's kernel drops
#             each frame at once) and addressed like the rnic's frames (b's MAC,
#             the rnic IPs, UDP 4791: b's kernel also routes each frame and drops
#             it, as it does the rnic's).
#   rnic:     two rnic processes, client on a, server on b, --busy-poll;
#             write_bw 64 KiB messages at MTU 4096 (16 frames of 4154 B each, the
#             first 4170 B), compared as data frames/s with the baseline; again with
#             --own-mac (the rnic answers ARP with a MAC of its own: b's kernel then
#             drops its frames at once, as it drops testpmd's default frames).
# Then, for reference: send_bw 64 B message rate (baseline: testpmd at the same
# 122-byte frame) and write_lat 64 B. Rounds alternate baseline and rnic; the
# summary reports every round and the median.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=$(realpath "${1:-build}")
DUR=${DUR:-5}
ROUNDS=${ROUNDS:-2}
RNIC=$B/app/rnic/rnic
OUT=$B/results
T=$$
NA=rbh4A$T NB=rbh4B$T IA=rbh4a$T IB=rbh4b$T
KA=10.77.0.1 KB=10.77.0.2 RA=10.77.0.11 RB=10.77.0.12
PIDS=()
mkdir -p "$OUT"
[ "$(id -u)" = 0 ] || { echo "bench/rnic/run.sh: needs root (network namespaces)" >&2; exit 1; }
[ -x "$RNIC" ] || { echo "bench/rnic/run.sh: $RNIC not built" >&2; exit 1; }
command -v dpdk-testpmd >/dev/null || { echo "bench/rnic/run.sh: dpdk-testpmd missing" >&2; exit 1; }

cleanup() {
	for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	sleep 0.5
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	for n in $NA $NB; do ip netns del "$n" 2>/dev/null || true; done
}
trap cleanup EXIT

ip netns add $NA
ip netns add $NB
ip link add $IA netns $NA mtu 4200 type veth peer name $IB netns $NB mtu 4200
for p in "$NA $IA $KA" "$NB $IB $KB"; do
	set -- $p
	ip -n "$1" addr add "$3/24" dev "$2"
	ip -n "$1" link set "$2" up
	ip -n "$1" link set lo up
	ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"
	ip netns exec "$1" ethtool -K "$2" tx off >/dev/null 2>&1 || true # TCP through af_packet
done

EAL="--no-huge -m 512 --no-shconf --no-pci --log-level=lib.eal:error"
# -u 18: a 1.07 s local ACK timeout (8 tries: ~8.6 s) rides out the host descheduling a
# process for half a second, which ended a write_lat run at perftest's default -u 14
RNIC_OPTS="-u 18"
VDEV=framesz=8192,blocksz=8192,framecnt=2048,qpairs=1
stop() { kill -INT "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# One sample for window(): time, frames b's kernel received, CPU ticks of the sender
# ($1) plus ksoftirqd/0 (tick accounting charges softirq work done inside the sender's
# syscalls to the sender; the rest runs in ksoftirqd/0), and CPU 0's steal ticks.
KSIRQ=$(pgrep -x ksoftirqd/0 || true)
sample() {
	local t rx pt kt st
	t=$(date +%s.%N)
	rx=$(ip netns exec $NB cat /sys/class/net/$IB/statistics/rx_packets)
	pt=$(awk '{print $14 + $15}' /proc/$1/stat 2>/dev/null || echo 0)
	kt=$( [ -n "$KSIRQ" ] && awk '{print $14 + $15}' /proc/$KSIRQ/stat || echo 0)
	st=$(awk '/^cpu0 /{print $9}' /proc/stat)
	echo "$t $rx $((pt + kt)) $st"
}

# The measurement window of a run whose sender is pid $1 (on CPU 0): wait until frames
# reach b, 1 s of warm-up, then DUR s. Writes {"pps", "cpu_share", "steal_share"} to $2:
# the rate b's kernel saw, and the share of CPU 0 the sender got. The host is shared,
# so the rate per CPU share (pps / cpu_share) is what compares across runs.
window() {
	local r0 a b
	r0=$(ip netns exec $NB cat /sys/class/net/$IB/statistics/rx_packets)
	for _ in $(seq 150); do
		sleep 0.2
		[ "$(ip netns exec $NB cat /sys/class/net/$IB/statistics/rx_packets)" -gt $((r0 + 1000)) ] && break
	done
	sleep 1
	a=$(sample "$1")
	sleep "$DUR"
	b=$(sample "$1")
	echo "$a $b" | awk -v hz="$(getconf CLK_TCK)" '{dt = $5 - $1;
		printf "{\"pps\": %.1f, \"cpu_share\": %.3f, \"steal_share\": %.3f}\n",
		($6 - $2) / dt, ($7 - $3) / hz / dt, ($8 - $4) / hz / dt}' >"$2"
}

# testpmd txonly a -> rxonly b with $1-byte frames, receiver's log in $2 (window in
# $2.win), $3: "rnic" to address the frames like the rnic's (b's MAC, the rnic IPs,
# UDP 4791: the receiving kernel then does the same work per frame: an IP route
# lookup and a drop), "" for testpmd's defaults (MAC 02:00:00:00:00:00: the kernel
# drops the frame as PACKET_OTHERHOST at once)
testpmd_pair() {
	local addr=()
	[ "$3" = rnic ] && addr=(--eth-peer=0,"$(ip netns exec $NB cat /sys/class/net/$IB/address)" --tx-ip=$RA,$RB --tx-udp=49152,4791)
	ip netns exec $NB dpdk-testpmd --lcores 0@1,1@1 $EAL --file-prefix rbh4r$T \
		--vdev net_af_packet0,iface=$IB,$VDEV -- --forward-mode=rxonly --auto-start \
		--total-num-mbufs=8192 --mbuf-size=9344 --stats-period 1 >"$2" 2>&1 &
	local rx=$!
	PIDS+=($rx)
	sleep 1
	ip netns exec $NA dpdk-testpmd --lcores 0@0,1@0 $EAL --file-prefix rbh4t$T \
		--vdev net_af_packet0,iface=$IA,$VDEV -- --mbuf-size=9344 --forward-mode=txonly \
		--txpkts="$1" "${addr[@]}" --auto-start --total-num-mbufs=8192 --stats-period 1 \
		>"$2.tx" 2>&1 &
	local tx=$!
	PIDS+=($tx)
	window $tx "$2.win"
	sleep 1
	stop $tx
	stop $rx
}

# two rnics: $1 mode options, $2 tag (JSON names $OUT/bench_rnic_$2_{server,client}.json),
# $3 "window" to measure a window of the run (write_bw -D long enough)
rnic_pair() {
	local opts=$1 tag=$2
	ip netns exec $NB taskset -c 1 "$RNIC" --lcores 0@1 $EAL --file-prefix rbh4s$T \
		--vdev net_af_packet0,iface=$IB,$VDEV -- --ip $RB/24 --busy-poll $RNIC_OPTS $opts \
		--json "$OUT/bench_rnic_${tag}_server.json" >"$OUT/bench_rnic_${tag}_server.log" 2>&1 &
	local srv=$!
	PIDS+=($srv)
	sleep 1
	ip netns exec $NA taskset -c 0 "$RNIC" --lcores 0@0 $EAL --file-prefix rbh4c$T \
		--vdev net_af_packet0,iface=$IA,$VDEV -- --ip $RA/24 --busy-poll $RNIC_OPTS $opts \
		--json "$OUT/bench_rnic_${tag}_client.json" $KB \
		>"$OUT/bench_rnic_${tag}_client.log" 2>&1 &
	local cli=$!
	PIDS+=($cli)
	[ "${3:-}" = window ] && window $cli "$OUT/bench_rnic_${tag}.win"
	wait $cli || echo "rnic client ($tag) failed: see $OUT/bench_rnic_${tag}_client.log" >&2
	wait $srv || echo "rnic server ($tag) failed: see $OUT/bench_rnic_${tag}_server.log" >&2
}

echo "$(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //');" \
	"DUR=$DUR s, ROUNDS=$ROUNDS, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$ROUNDS"); do
	echo "-- round $r: testpmd 4154 B, testpmd's addressing"
	testpmd_pair 4154 "$OUT/bench_rnic_r${r}_testpmd_4154.log" ""
	echo "-- round $r: testpmd 4154 B, addressed like the rnic"
	testpmd_pair 4154 "$OUT/bench_rnic_r${r}_testpmd_4154_rnicaddr.log" rnic
	echo "-- round $r: rnic write_bw 64 KiB, MTU 4096"
	rnic_pair "-m 4096 -s 65536 -D $((DUR + 5)) write_bw" "r${r}_write_bw" window
	echo "-- round $r: rnic write_bw 64 KiB, MTU 4096, --own-mac"
	rnic_pair "-m 4096 -s 65536 -D $((DUR + 5)) --own-mac write_bw" "r${r}_write_bw_ownmac" window
	echo "-- round $r: testpmd 122 B, addressed like the rnic"
	testpmd_pair 122 "$OUT/bench_rnic_r${r}_testpmd_122_rnicaddr.log" rnic
	echo "-- round $r: rnic send_bw 64 B"
	rnic_pair "-m 4096 -s 64 -n 300000 -t 256 -r 1024 send_bw" "r${r}_send_bw"
	echo "-- round $r: rnic write_lat 64 B"
	rnic_pair "-m 4096 -s 64 -n 5000 write_lat" "r${r}_write_lat"
done
/usr/bin/python3 bench/rnic/summary.py "$OUT" "$ROUNDS" "$DUR"
