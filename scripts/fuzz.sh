#!/usr/bin/env bash
# Run the fuzz targets (libFuzzer + ASan + UBSan), which meson builds in build-fuzz
# (clang, -Dfuzz=true: tests/fuzz/meson.build):
#  - fuzz_wire, every frame parser a peer reaches, for ${FUZZ_SECONDS:-30} s from a
#    seed corpus cut out of the golden pcaps;
#  - fuzz_text, the text parsers (netem SPEC, CDF files, perftest / rc_pingpong key
#    lines, priority lists), for ${FUZZ_TEXT_SECONDS:-FUZZ_SECONDS / 2} s.
# Any crash, leak, sanitizer report or broken round trip fails the run (the
# reproducer is kept in build-fuzz/artifacts*).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-fuzz
if [ ! -f "$out/build.ninja" ]; then
	# an older build-fuzz held only the hand-built binaries and the corpora: keep those
	mkdir -p "$out"
	CC=clang meson setup "$out" -Dfuzz=true -Ddpdk=disabled -Dbuildtype=debug \
		-Db_lundef=false > "$out/setup.log" 2>&1 || { tail -40 "$out/setup.log"; exit 1; }
fi
ninja -C "$out" tests/fuzz/fuzz_wire tests/fuzz/fuzz_text > "$out/build.log" 2>&1 ||
	{ tail -40 "$out/build.log"; exit 1; }
mkdir -p "$out/corpus" "$out/artifacts"
/usr/bin/python3 - "$out/corpus" tests/golden/*.pcap <<'PY'
import struct, sys, os, hashlib
out = sys.argv[1]
for path in sys.argv[2:]:
    data = open(path, 'rb').read()
    if len(data) < 24:
        continue
    magic = struct.unpack('<I', data[:4])[0]
    end = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + 'I', data[off + 8:off + 12])[0]
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        open(os.path.join(out, hashlib.sha1(frame).hexdigest()), 'wb').write(frame)
# IPv6 neighbour solicitation and ICMPv6 echo request, as Scapy builds them (tests/unit/test_nd.c)
for h in ("3333ff00000202000000000186dd6000000000203afffe800000000000000000000000000001ff02"
          "00000000000000000001ff00000287007a9700000000fe80000000000000000000000000000201"
          "01020000000001",
          "02000000000102000000000286dd6000000000103a40fe800000000000000000000000000002fe80"
          "00000000000000000000000000018000b51d12340007726f636577616e21"):
    frame = bytes.fromhex(h)
    open(os.path.join(out, hashlib.sha1(frame).hexdigest()), 'wb').write(frame)
PY
mkdir -p "$out/corpus_text" "$out/artifacts_text"
/usr/bin/python3 - "$out/corpus_text" configs/cdf/*.cdf <<'PY'
import hashlib, os, sys
out = sys.argv[1]
seeds = [b"\0delay 10ms 2ms 25% distribution normal loss gemodel 0.02% 20% rate 1gbit limit 5000",
         b"\0rate 10gbit red kmin 30000 kmax 90000 pmax 10% pfc xoff 800000b xon 100000b prio 3 ctrl-delay",
         b"\0rate 200mbit limit-bytes 2MB red kmin 100KB kmax 400KB pmax 0.1",
         b"\0loss 0.1% 25% duplicate 1% corrupt 0.1% reorder 25% 50% gap 5 slot 1ms",
         b"\0delay 5ms drop-psn 0x11:0x52e51e drop-psn 17:100:3 drop-nth 1000",
         b"\0delay 5ms drop-mad cm-req 1 drop-mad cm-rep 1,3 drop-mad vendor 2,4,6",
         b"\2" + b"0000:0010:000123:abcdef:12345678:00007f0000001000:" + b"00:" * 10 + b"ff:ff:0a:09:00:03:" + b"00000000:\0",
         b"\3" + b"0000:0010:000123:abcdef:12345678:00007f0000001000:00000000\0",
         b"\4" + b"0000:000123:abcdef:" + b"00000000000000000000ffff0a090003" + b"\0",
         b"\5" + b"3,4", b"\5" + b"0,1,2,3,4,5,6,7",
         b"\6" + bytes.fromhex("362e303600727701070101000000000d"),
         b"\6" + b"6.06" + bytes(12)]
for path in sys.argv[2:]:
    seeds.append(b"\1" + open(path, "rb").read())
for s in seeds:
    open(os.path.join(out, hashlib.sha1(s).hexdigest()), "wb").write(s)
PY
echo "fuzz: $(ls "$out/corpus" | wc -l) seed frames, ${FUZZ_SECONDS:-30} s"
"$out/tests/fuzz/fuzz_wire" -max_total_time="${FUZZ_SECONDS:-30}" -max_len=9000 -print_final_stats=1 \
	-artifact_prefix="$out/artifacts/" "$out/corpus" > "$out/fuzz.log" 2>&1 || { tail -40 "$out/fuzz.log"; exit 1; }
tail -6 "$out/fuzz.log"
tsec=${FUZZ_TEXT_SECONDS:-$(( ${FUZZ_SECONDS:-30} / 2 ))}
echo "fuzz: $(ls "$out/corpus_text" | wc -l) text seeds, $tsec s"
"$out/tests/fuzz/fuzz_text" -max_total_time="$tsec" -max_len=4096 -print_final_stats=1 \
	-artifact_prefix="$out/artifacts_text/" "$out/corpus_text" > "$out/fuzz_text.log" 2>&1 || { tail -40 "$out/fuzz_text.log"; exit 1; }
tail -6 "$out/fuzz_text.log"
