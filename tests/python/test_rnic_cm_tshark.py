"""tshark 4.0 as an independent decoder of the CM messages the rnic's CM
endpoint (app/rnic/rnic_cm.c) sends through QP1: tests/unit/rnic/test_rnic_cm
connects and disconnects two endpoints back to back and, with RNIC_CM_PCAP set,
writes every frame they sent. tshark must decode REQ REP RTU DREQ DREP in that
order, with the rdma_cm REQ fields the endpoint sets, no malformed frame, and
`rocewan validate` must accept every ICRC and length."""

import os
import subprocess

import pytest

import rwtest

ATTRS = ["0x0010", "0x0013", "0x0014", "0x0015", "0x0016"]
REQ = {
    "infiniband.cm.req.serviceid": "0x0000000001064853",
    "infiniband.cm.req.localqpn": "0x000011",
    "infiniband.cm.req.startpsn": "0x111111",
    "infiniband.cm.req.remoteresptout": "0x14",
    "infiniband.cm.req.localresptout": "0x14",
    "infiniband.cm.req.maxcmretr": "0x0f",
    "infiniband.cm.req.pppmtu": "0x03",
    "infiniband.cm.req.pkey": "0xffff",
    "infiniband.cm.req.prim_hoplim": "0x40",
    "infiniband.cm.req.prim_localacktout": "0x13",
    "infiniband.cm.req.prim_localgid_ipv4": "10.0.0.1",
    "infiniband.cm.req.prim_remotegid_ipv4": "10.0.0.2",
    "infiniband.cm.req.ip_cm.ipv": "0x04",
    "infiniband.cm.req.ip_cm.sip4": "10.0.0.1",
    "infiniband.cm.req.ip_cm.dip4": "10.0.0.2",
    # the CA GUID: EUI-64 of the port's MAC 02:00:00:00:00:01
    "infiniband.cm.req.localcaguid": "0x000000fffe000001",
}
REP = {"infiniband.cm.rep.localqpn": "0x000022",
       "infiniband.cm.rep.startpsn": "0x222222",
       "infiniband.cm.rep.localcaguid": "0x000000fffe000002"}
COMMON = {"infiniband.bth.opcode": "100", "infiniband.bth.destqp": "0x000001",
          "infiniband.deth.q_key": "0x0000000080010000",
          "infiniband.deth.srcqp": "0x00000001",
          "infiniband.mad.mgmtclass": "0x07",
          "infiniband.mad.classversion": "0x02",
          "infiniband.mad.method": "0x03"}


def rnic_cm_test_path():
    return os.environ.get("TEST_RNIC_CM", os.path.join(
        rwtest.REPO, "build", "tests", "unit", "rnic", "test_rnic_cm"))


@pytest.fixture(scope="module")
def pcap(tmp_path_factory):
    exe = rnic_cm_test_path()
    if not os.access(exe, os.X_OK):
        pytest.fail("test_rnic_cm not found at %s: build it with 'ninja -C build' "
                    "or set TEST_RNIC_CM" % exe, pytrace=False)
    path = tmp_path_factory.mktemp("rnic_cm") / "rnic_cm.pcap"
    env = dict(os.environ, RNIC_CM_PCAP=str(path))
    p = subprocess.run([exe], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    return path


def fields(pcap, names):
    cmd = [rwtest.tshark_path(), "-r", str(pcap), "-T", "fields",
           "-E", "separator=|", "-E", "occurrence=f"]
    for n in names:
        cmd += ["-e", n]
    out = rwtest.run(cmd).stdout
    return [dict(zip(names, line.split("|"))) for line in out.splitlines()]


def test_every_frame_decodes(pcap):
    text = rwtest.tshark_verbose(pcap)
    assert text.count("\nInfiniBand\n") == len(ATTRS)
    assert rwtest.tshark_problems(text) == []


def test_fields_read_back(pcap):
    names = ["infiniband.mad.attributeid"] + list(COMMON) + list(REQ) + list(REP)
    rows = fields(pcap, names)
    assert [r["infiniband.mad.attributeid"] for r in rows] == ATTRS
    for i, row in enumerate(rows):
        for name, value in COMMON.items():
            assert row[name] == value, (i, name, row[name])
    for name, value in REQ.items():
        assert rows[0][name] == value, (name, rows[0][name], value)
    for name, value in REP.items():
        assert rows[1][name] == value, (name, rows[1][name], value)


def test_icrc_and_lengths_validate(pcap):
    p = rwtest.rocewan("validate", str(pcap))
    assert p.returncode == 0, p.stdout + p.stderr
