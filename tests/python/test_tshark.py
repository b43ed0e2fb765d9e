"""tshark (Wireshark's InfiniBand dissector) as a third, independent decoder
of frames built by the Scapy layers."""

import glob

import pytest

import rwtest
from rocewan.build import build_bytes
from rocewan.frame import decode
from rocewan.gen import random_specs
from rocewan.pcapio import write_frames

SPECS = random_specs(seed=23, count=300)


@pytest.fixture(scope="module")
def scapy_pcap(tmp_path_factory):
    path = tmp_path_factory.mktemp("tshark") / "scapy-random.pcap"
    write_frames(str(path), [build_bytes(s) for s in SPECS])
    return path


def test_no_malformed_in_scapy_frames(scapy_pcap):
    text = rwtest.tshark_verbose(scapy_pcap)
    assert text.count("\nInfiniBand\n") == len(SPECS)
    assert rwtest.tshark_problems(text) == []


def test_no_malformed_in_golden_and_rxe():
    for path in sorted(glob.glob(rwtest.GOLDEN + "/*.pcap")):
        assert rwtest.tshark_problems(rwtest.tshark_verbose(path)) == [], path


def test_tshark_fields_equal_scapy_fields(scapy_pcap):
    recs = [decode(build_bytes(s), i).rec for i, s in enumerate(SPECS)]
    bad, compared = rwtest.tshark_field_diffs(scapy_pcap, recs)
    assert bad == []
    assert compared > rwtest.tshark_min_compared(SPECS)  # BTH (9) + ICRC + extensions
