#!/usr/bin/env bash
# lossy-emu's and pfc-relay's per-lcore forwarding rate on net_null ports against dpdk-testpmd
# --forward-mode=io on the same null ports, same run, ROUNDS rounds (docs/performance.md).
# Units: Mpps per forwarding lcore, both directions summed, 64-byte frames; ns/packet = 1000 / Mpps.
# Both programs forward on one lcore pinned to CPU 1 (testpmd's main lcore on CPU 0 only
# reads the console). The emulator sizes its pool itself from --link-rate 10gbit and
# --min-frame 60 (the packet rate of minimum frames x the delay, docs/lossy-emu.md).
# The pfc-relay runs with its relay and pause logic on every frame: --lossless 0 puts the null
# ports' frames (all zero: not IP, so priority 0) on a lossless priority, so each one goes through
# the Remote-ingress buffer accounting, the XOFF/XON thresholds, the watchdog and the egress
# pacer (--link-rate 400gbit: the pacer runs but is never what limits the rate). No PFC frame
# arrives: a null port carries none.
# Needs no root and no namespaces; run it under the heavy lock (busy polling).
#
#   bench/emu/null.sh [BUILD_DIR]     (ROUNDS=N, default BENCH_ROUNDS or 10; DUR=seconds, 4;
#                                      TARGET=ratio the impaired SPEC must reach, 0.15;
#                                      HUGE=1: every program on 2 MB hugepages (--in-memory),
#                                      default 4 KB pages (--no-huge), as the recorded rounds)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=$(realpath "${1:-build}")
ROUNDS=${ROUNDS:-${BENCH_ROUNDS:-10}}
DUR=${DUR:-4}
TARGET=${TARGET:-0.15}
EMU=$B/app/lossy-emu/lossy-emu
RELAY=$B/app/pfc-relay/pfc-relay
OUT=$B/results
T=$$
mkdir -p "$OUT"
[ -x "$EMU" ] || { echo "bench/emu/null.sh: $EMU not built" >&2; exit 1; }
[ -x "$RELAY" ] || { echo "bench/emu/null.sh: $RELAY not built" >&2; exit 1; }
command -v dpdk-testpmd >/dev/null || { echo "bench/emu/null.sh: dpdk-testpmd missing" >&2; exit 1; }
EAL="--no-pci --log-level=lib.eal:error --vdev net_null0 --vdev net_null1"
# 4 KB pages: the emulator's pools (150 k mbufs a direction) span far more than the TLB covers
if [ "${HUGE:-0}" = 1 ]; then MEM="--in-memory"; else MEM="--no-huge"; fi
IMPAIRED="delay 10ms loss gemodel 1% 20%"
SPECS=("" "delay 10ms" "$IMPAIRED" "rate 10gbit red kmin 100kb kmax 400kb pmax 20%")
NAMES=("none" "delay 10ms" "delay 10ms loss gemodel 1% 20%" "rate 10gbit red")

testpmd_mpps() { # both ports' Rx-pps over DUR seconds after 2 s of warm-up
	(sleep 2; echo "show port stats all"; sleep "$DUR"; echo "show port stats all"; sleep 0.5; echo quit) |
		dpdk-testpmd -l 0,1 $MEM -m 512 --file-prefix bnT$T $EAL -- -i --forward-mode=io \
			--nb-cores=1 --total-num-mbufs 32768 --auto-start 2>&1 |
		awk '/Rx-pps:/ {v[n++]=$2} END {printf "%.3f", (v[n-2]+v[n-1])/1e6}'
}

emu_mpps() { # $1: SPEC; frames both directions forwarded / forwarding seconds (forward_s: from the
	# lcores' launch to their stop, not duration_s, which counts from EAL start and so includes
	# the pools' population: testpmd's Rx-pps covers forwarding only, after its warm-up)
	local j="$OUT/bench_emu_null_$T.json"
	rm -f "$j"
	timeout -s INT $((DUR + 3)) "$EMU" -l 1 $MEM -m 1024 --file-prefix bnE$T $EAL -- \
		--both "$1" --link-rate 10gbit --min-frame 60 --mbuf-size 256 --busy-poll --seed 1 \
		--json "$j" >"$OUT/bench_emu_null.log" 2>&1 || true
	[ -s "$j" ] || { echo "lossy-emu failed:" >&2; tail -5 "$OUT/bench_emu_null.log" >&2; echo 0; return; }
	/usr/bin/python3 -c "
import json, sys
r = json.load(open('$j'))['results']
e = r['a2b'], r['b2a']
print(f\"{sum(x['tx_pkts'] for x in e) / r['forward_s'] / 1e6:.3f}\")
print('pool_empty', sum(x['rx_pool_empty'] for x in e), 'mbufs', e[0]['mbufs'],
      'duration_s', r['duration_s'], 'forward_s', r['forward_s'], file=sys.stderr)"
}

relay_mpps() { # frames both directions relayed / the relay's forwarding seconds
	local j="$OUT/bench_relay_null_$T.json"
	rm -f "$j"
	timeout -s INT $((DUR + 3)) "$RELAY" -l 1 $MEM -m 1024 --file-prefix bnR$T $EAL -- \
		--local 0 --remote 1 --link-rate 400gbit --rtt 1ms --lossless 0 --mbuf-size 256 \
		--mbufs 65536 --busy-poll --json "$j" >"$OUT/bench_relay_null.log" 2>&1 || true
	[ -s "$j" ] || { echo "pfc-relay failed:" >&2; tail -5 "$OUT/bench_relay_null.log" >&2; echo 0; return; }
	/usr/bin/python3 -c "
import json, sys
r = json.load(open('$j'))['results']
print(f\"{(r['local']['tx_pkts'] + r['remote']['tx_pkts']) / r['duration_s'] / 1e6:.3f}\")
p = r['l2r']['prio'][0], r['r2l']['prio'][0]
print('relay lossless enq', sum(x['enq_pkts'] for x in p), 'drops', sum(x['drop_bytes'] for x in p), file=sys.stderr)"
}

echo "lossy-emu and pfc-relay on net_null against testpmd io, one forwarding lcore each, $ROUNDS rounds of ${DUR} s ($MEM)"
declare -A RATIOS
pass=0
RELAY_RATIOS=""
for r in $(seq 1 "$ROUNDS"); do
	tp=$(testpmd_mpps)
	line="round $r: testpmd io $tp Mpps"
	rm=$(relay_mpps 2>>"$OUT/bench_relay_null.pool")
	ratio=$(awk "BEGIN{printf \"%.3f\", $rm / $tp}")
	RELAY_RATIOS="$RELAY_RATIOS $ratio"
	line="$line | pfc-relay: $rm Mpps ($(awk "BEGIN{printf \"%.0f\", 1000 / $rm}") ns/pkt, x$ratio)"
	for i in "${!SPECS[@]}"; do
		m=$(emu_mpps "${SPECS[$i]}" 2>>"$OUT/bench_emu_null.pool")
		ratio=$(awk "BEGIN{printf \"%.3f\", $m / $tp}")
		RATIOS[$i]="${RATIOS[$i]:-} $ratio"
		line="$line | ${NAMES[$i]}: $m Mpps ($(awk "BEGIN{printf \"%.0f\", 1000 / $m}") ns/pkt, x$ratio)"
		if [ "${SPECS[$i]}" = "$IMPAIRED" ] && awk "BEGIN{exit !($ratio >= $TARGET)}"; then
			pass=$((pass + 1))
		fi
	done
	echo "$line"
done
for i in "${!SPECS[@]}"; do
	med=$(printf '%s\n' ${RATIOS[$i]} | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
	echo "${NAMES[$i]}: ratio to testpmd per round:${RATIOS[$i]}; median $med"
done
med=$(printf '%s\n' $RELAY_RATIOS | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
echo "pfc-relay: ratio to testpmd per round:$RELAY_RATIOS; median $med"
echo "claim: '$IMPAIRED' at >= $TARGET x testpmd io: passed $pass of $ROUNDS rounds"
