"""Cross-validation of the C wire library (lib/roce, through the rocewire
CLI) with Scapy, our layers and ICRC, and tshark. Any disagreement names the
frame, the field and both values."""

import collections
import glob
import random
import filecmp

import pytest
from scapy.compat import raw
from scapy.layers.inet import IP, UDP, IPOption
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import rwtest
from rocewan import icrc
from rocewan import opcodes as ops
from rocewan.build import build_bytes
from rocewan.frame import decode
from rocewan.gen import random_specs
from rocewan.layers import BTH, RETH
from rocewan.pcapio import read_frames, write_frames

GEN_SEEDS = [1, 2, 0xdecaf]
GEN_COUNT = 300
SPECS = random_specs(seed=31, count=300)


def _compare_with_ours(pcap, c_recs):
    """Our decoder vs rocewire parse on every frame of ``pcap``."""
    bad = []
    frames = list(read_frames(str(pcap)))
    assert len(frames) == len(c_recs)
    for (idx, buf, _), c in zip(frames, c_recs):
        py = decode(buf, idx).rec
        for line in rwtest.diff_records(c, py, "C", "py"):
            bad.append("%s: %s" % (rwtest.describe(c), line))
    return bad


def _scapy_icrc_problems_bytes(frames):
    """IPv4 frames whose ICRC as computed by Scapy's contrib BTH differs from
    the carried one."""
    bad = []
    for idx, buf in enumerate(frames):
        d = decode(buf, idx)
        if d.rec["ip"]["ver"] != 4:
            continue
        pkt = IP(d.ip)
        pkt[BTH].icrc = None
        if raw(pkt)[-4:] != d.ip[-4:]:
            bad.append("%s: Scapy ICRC %s carried %s" % (
                rwtest.describe(d.rec), raw(pkt)[-4:].hex(), d.ip[-4:].hex()))
    return bad


def _scapy_icrc_problems(pcap):
    return _scapy_icrc_problems_bytes(b for _, b, _ in read_frames(str(pcap)))


@pytest.fixture(scope="module", params=GEN_SEEDS)
def c_gen(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("rw") / ("gen-%d.pcap" % request.param)
    rwtest.rocewire("gen", "--seed", request.param, "--count", GEN_COUNT,
                    path)
    return path, rwtest.rocewire_parse(path)


@pytest.fixture(scope="module")
def c_golden(tmp_path_factory):
    path = tmp_path_factory.mktemp("rw") / "golden.pcap"
    rwtest.rocewire("golden", path)
    return path, rwtest.rocewire_parse(path)


@pytest.fixture(scope="module")
def scapy_pcap(tmp_path_factory):
    path = tmp_path_factory.mktemp("rw") / "scapy.pcap"
    frames = [build_bytes(s) for s in SPECS]
    write_frames(str(path), frames)
    return path, frames


# (a) frames built by lib/roce, read by Scapy + our layers

def test_c_gen_frames_decode_identically(c_gen):
    path, c_recs = c_gen
    assert len(c_recs) == GEN_COUNT
    assert all(r["err"] == "OK" and r["icrc_ok"] for r in c_recs)
    assert _compare_with_ours(path, c_recs) == []


def test_c_gen_covers_the_space(c_gen):
    _, c_recs = c_gen
    vers = collections.Counter(r["ip"]["ver"] for r in c_recs)
    assert vers[4] > 50 and vers[6] > 50
    assert sum(r["vlan"] is not None for r in c_recs) > 20
    assert len({r["bth"]["opcode"] for r in c_recs}) > 30
    assert {r["bth"]["pad"] for r in c_recs} == {0, 1, 2, 3}


def test_c_gen_icrc_our_and_scapy(c_gen):
    path, c_recs = c_gen
    for (idx, buf, _), c in zip(read_frames(str(path)), c_recs):
        d = decode(buf, idx)
        assert icrc.compute(d.ip) == c["icrc"], rwtest.describe(c)
    assert _scapy_icrc_problems(path) == []


def test_c_gen_is_deterministic(tmp_path):
    a, b = tmp_path / "a.pcap", tmp_path / "b.pcap"
    rwtest.rocewire("gen", "--seed", 5, "--count", 20, a)
    rwtest.rocewire("gen", "--seed", 5, "--count", 20, b)
    assert filecmp.cmp(a, b, shallow=False)
    assert len(list(read_frames(str(a)))) == 20


def test_c_golden_every_opcode_both_versions(c_golden):
    path, c_recs = c_golden
    seen = {(r["bth"]["opcode"], r["ip"]["ver"]) for r in c_recs}
    assert seen == {(c, v) for c in ops.OPCODES for v in (4, 6)}
    assert all(r["err"] == "OK" for r in c_recs)
    assert _compare_with_ours(path, c_recs) == []
    assert _scapy_icrc_problems(path) == []


# (b) frames built by Scapy + our layers, read by lib/roce

def test_scapy_frames_parse_as_specified(scapy_pcap):
    path, frames = scapy_pcap
    c_recs = rwtest.rocewire_parse(path)
    assert len(c_recs) == len(SPECS)
    bad = []
    for idx, (spec, frame, c) in enumerate(zip(SPECS, frames, c_recs)):
        want = rwtest.expected_record(spec, frame, idx)
        for line in rwtest.diff_records(c, want, "C", "spec"):
            bad.append("%s: %s" % (rwtest.describe(want), line))
    assert bad == []


def _flip(frame):
    """Flip one ICRC-covered bit: the last payload byte if there is a
    payload, else the last header byte before the ICRC (PSN or an extension
    header)."""
    d = decode(frame)
    icrc_off = d.l3_off + len(d.ip) - 4
    off = icrc_off - 1 - (d.rec["bth"]["pad"] if d.rec["payload_len"] else 0)
    b = bytearray(frame)
    b[off] ^= 0x01
    return bytes(b)


def test_scapy_frames_with_flipped_bit_are_bad_icrc(tmp_path):
    frames = [_flip(build_bytes(s)) for s in SPECS]
    path = tmp_path / "flipped.pcap"
    write_frames(str(path), frames)
    c_recs = rwtest.rocewire_parse(path)
    bad = ["%s: err %s" % (rwtest.describe(c), c["err"])
           for c in c_recs if c["err"] != "BAD_ICRC" or c["icrc_ok"]]
    assert bad == []
    assert all(decode(f).err == "BAD_ICRC" for f in frames)


BROKEN = rwtest.broken_frames()


def test_broken_frames_same_error(tmp_path):
    path = tmp_path / "broken.pcap"
    write_frames(str(path), [b[1] for b in BROKEN])
    c_recs = rwtest.rocewire_parse(path)
    bad = []
    for (name, _, err), c in zip(BROKEN, c_recs):
        if c["err"] != err:
            bad.append("%s: C says %s, expected %s" % (name, c["err"], err))
    assert bad == []


def test_broken_frames_same_fields(tmp_path):
    """As far as parsing got, both decoders report the same fields. The
    "roce" flag differs on purpose: rocewire sets it once the BTH is reached,
    we set it for anything sent to UDP port 4791 (so that validate counts a
    truncated RoCEv2 frame as a broken RoCEv2 frame)."""
    path = tmp_path / "broken.pcap"
    write_frames(str(path), [b[1] for b in BROKEN])
    c_recs = rwtest.rocewire_parse(path)
    bad = []
    for (name, frame, _), c in zip(BROKEN, c_recs):
        py = decode(frame, c["idx"]).rec
        for line in rwtest.diff_records(c, py, "C", "py"):
            if not line.startswith("roce:"):
                bad.append("%s: %s" % (name, line))
    assert bad == []


# (c) tshark on what lib/roce builds

def test_tshark_decodes_c_frames(c_gen, c_golden):
    for path, c_recs in (c_gen, c_golden):
        text = rwtest.tshark_verbose(path)
        assert text.count("\nInfiniBand\n") == len(c_recs)
        assert rwtest.tshark_problems(text) == [], path


def test_tshark_fields_equal_c_fields(c_gen, c_golden):
    for path, c_recs in (c_gen, c_golden):
        bad, compared = rwtest.tshark_field_diffs(path, c_recs)
        assert bad == []
        assert compared > rwtest.tshark_min_compared(c_recs)


# (d) whole captures, including frames that are not RoCEv2

# Differences between the two decoders that are deliberate or not yet
# decided, as (err, record key). Each is reported in the hand-over notes.
KNOWN_DIFFERENCES = {
    # rocewire prints "vlan": null for a frame that ends inside its 802.1Q
    # tag; we print no vlan key (decoding stopped before the tag was read)
    ("TRUNC_VLAN", "vlan"),
}


def _l2_oddities():
    eth = bytes.fromhex("020000000002 020000000001")
    return [
        eth[:10],                                           # TRUNC_ETH
        eth + b"\x81\x00\x20",                              # TRUNC_VLAN
        eth + b"\x08\x00" + b"\x45" + bytes(9),             # TRUNC_IP
        eth + b"\x86\xdd" + b"\x45" + bytes(45),            # BAD_IP_VERSION
        eth + b"\x08\x06" + bytes(46),                      # ARP
        eth + b"\x88\x08\x01\x01" + bytes(44),              # PFC
    ]


@pytest.mark.parametrize("name", ["rxe", "golden", "l2"])
def test_whole_captures_decode_identically(name, tmp_path):
    if name == "rxe":
        paths = [rwtest.RXE_PCAP]
    elif name == "golden":
        paths = sorted(glob.glob(rwtest.GOLDEN + "/scapy-*.pcap"))
    else:
        paths = [str(tmp_path / "l2.pcap")]
        write_frames(paths[0], _l2_oddities())
    assert paths
    bad = []
    for path in paths:
        c_recs = rwtest.rocewire_parse(path)
        for (idx, buf, _), c in zip(read_frames(path), c_recs):
            py = decode(buf, idx).rec
            for line in rwtest.diff_records(c, py, "C", "py"):
                if (c["err"], line.split(":")[0].split(".")[0]) not in \
                        KNOWN_DIFFERENCES:
                    bad.append("%s %s (%s): %s" % (path, rwtest.describe(c),
                                                   c["err"], line))
    assert bad == []


def _mutants(seed, count):
    """Valid Scapy frames with random damage: bytes overwritten in the
    headers or the transport headers, cut short, or one bit flipped."""
    rng = random.Random(seed)
    base = [build_bytes(dict(s, payload=s["payload"][:200]))
            for s in random_specs(seed, 200)]
    out = []
    for _ in range(count):
        b = bytearray(rng.choice(base))
        how = rng.random()
        if how < 0.4:
            for _ in range(rng.randint(1, 3)):
                b[rng.randrange(min(len(b), 90))] = rng.getrandbits(8)
        elif how < 0.7:
            b = b[:rng.randrange(1, len(b))]
        elif how < 0.85:
            d = decode(bytes(b))
            start = d.l3_off + len(d.ip) - d.rec["udp"]["len"] + 8
            b[rng.randrange(start, min(len(b), start + 40))] = \
                rng.getrandbits(8)
        else:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        out.append(bytes(b))
    return out


def test_mutated_frames_decode_identically(tmp_path):
    """Same error name and same fields as far as parsing got, on damaged
    frames of every kind (a differential fuzz of the two decoders)."""
    frames = _mutants(seed=8, count=2000)
    path = tmp_path / "mutants.pcap"
    write_frames(str(path), frames)
    c_recs = rwtest.rocewire_parse(path)
    assert len(c_recs) == len(frames)
    errs = collections.Counter(c["err"] for c in c_recs)
    assert len(errs) >= 12, errs          # the damage reached every layer
    bad = []
    for frame, c in zip(frames, c_recs):
        py = decode(frame, c["idx"]).rec
        for line in rwtest.diff_records(c, py, "C", "py"):
            key = line.split(":")[0].split(".")[0]
            if key != "roce" and (c["err"], key) not in KNOWN_DIFFERENCES:
                bad.append("%s (%s): %s" % (rwtest.describe(c), c["err"],
                                            line))
    assert bad[:20] == []


def test_parse_reads_past_an_empty_record(tmp_path):
    """A zero-length pcap record is legal; parse must report it and go on
    (lib/common/rw_pcap.c: rw_pcap_next() returns 0 for it, the same value
    as end of file, so 'rocewire parse' used to stop there, exit 0)."""
    frames = [build_bytes(s) for s in SPECS[:3]]
    path = tmp_path / "empty-record.pcap"
    write_frames(str(path), [frames[0], b"", frames[1], frames[2]])
    c_recs = rwtest.rocewire_parse(path)
    assert [c["len"] for c in c_recs] == [len(frames[0]), 0, len(frames[1]),
                                          len(frames[2])]
    assert c_recs[1]["err"] == "TRUNC_ETH"


@pytest.mark.parametrize("opt_len", [4, 20, 24, 40])
def test_ipv4_options_icrc(opt_len, tmp_path):
    """IPv4 options are hashed as they are (only TOS, TTL and checksum are
    variant). Scapy's contrib ICRC, ours and lib/roce must agree for every
    header length up to 60 bytes."""
    pkt = (Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
           / IP(src="10.0.0.1", dst="10.0.0.2",
                options=[IPOption(b"\x01" * opt_len)])
           / UDP(sport=0xc000, dport=4791, chksum=0)
           / BTH(opcode=0x0a, psn=1) / RETH(dmalen=4) / Raw(b"abcd"))
    icrc.fill(pkt)
    frame = raw(pkt)
    d = decode(frame)
    assert d.err == "OK" and d.rec["bth"]["opcode"] == 0x0a
    assert _scapy_icrc_problems_bytes([frame]) == []
    path = tmp_path / "opts.pcap"
    write_frames(str(path), [frame])
    (c,) = rwtest.rocewire_parse(path)
    assert (c["err"], c["icrc_ok"]) == ("OK", True), \
        "IPv4 header of %d bytes: rocewire says %s" % (20 + opt_len, c["err"])
