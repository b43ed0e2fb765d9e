#!/usr/bin/env bash
# Build the wire-parser fuzz target with clang's libFuzzer + ASan + UBSan and run
# it for ${FUZZ_SECONDS:-30} s from a seed corpus cut out of the golden pcaps.
# Any crash, leak or sanitizer report fails the run (the reproducer is kept).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-fuzz
mkdir -p "$out/corpus" "$out/artifacts"
src=(lib/net/net_hdr.c lib/net/net_arp.c lib/net/net_nd.c lib/net/pfc.c lib/roce/roce_opcode.c lib/roce/roce_icrc.c
     lib/roce/roce_pkt.c tests/fuzz/fuzz_wire.c)
clang -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-Ilib/net -Ilib/roce "${src[@]}" -lisal -o "$out/fuzz_wire"
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
echo "fuzz: $(ls "$out/corpus" | wc -l) seed frames, ${FUZZ_SECONDS:-30} s"
"$out/fuzz_wire" -max_total_time="${FUZZ_SECONDS:-30}" -max_len=9000 -print_final_stats=1 \
	-artifact_prefix="$out/artifacts/" "$out/corpus" > "$out/fuzz.log" 2>&1 || { tail -40 "$out/fuzz.log"; exit 1; }
tail -6 "$out/fuzz.log"
