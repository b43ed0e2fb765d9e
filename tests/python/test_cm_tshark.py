"""tshark 4.0's InfiniBand CM dissector as an independent decoder of every CM
message lib/cm builds: tests/unit/cm/cm_pcap writes them as RoCEv2 UD SENDs to
QP1 (with the ICRC lib/roce computes); tshark must read back the same field
values, with no malformed frame."""

import os

import pytest

import rwtest

# tshark field -> the value cm_pcap put there, per frame (attribute ID order of
# the pcap: REQ, MRA, REP, RTU, DREQ, DREP, REJ, SIDR_REQ, SIDR_REP)
ATTRS = ["0x0010", "0x0011", "0x0013", "0x0014", "0x0015", "0x0016", "0x0012",
         "0x0017", "0x0018"]
REQ = {
    "infiniband.cm.req.serviceid": "0x0000000001064853",
    "infiniband.cm.req.localcaguid": "0x0002c9fffe000001",
    "infiniband.cm.req.localqpn": "0x000123",
    "infiniband.cm.req.responderres": "0x10",
    "infiniband.cm.req.initdepth": "0x08",
    "infiniband.cm.req.remoteresptout": "0x14",
    "infiniband.cm.req.transpsvctype": "0x00",
    "infiniband.cm.req.e2eflowctrl": "0x01",
    "infiniband.cm.req.startpsn": "0x00abcd",
    "infiniband.cm.req.localresptout": "0x12",
    "infiniband.cm.req.retrcount": "0x07",
    "infiniband.cm.req.pkey": "0xffff",
    "infiniband.cm.req.pppmtu": "0x03",
    "infiniband.cm.req.rnrretrcount": "0x06",
    "infiniband.cm.req.maxcmretr": "0x0f",
    "infiniband.cm.req.prim_tfcclass": "0x60",
    "infiniband.cm.req.prim_hoplim": "0x40",
    "infiniband.cm.req.prim_sl": "0x05",
    "infiniband.cm.req.prim_subnetlocal": "0x01",
    "infiniband.cm.req.prim_localacktout": "0x0e",
    "infiniband.cm.req.prim_localgid_ipv4": "10.0.0.1",
    "infiniband.cm.req.prim_remotegid_ipv4": "10.0.0.2",
    "infiniband.cm.req.ip_cm.ipv": "0x04",
    "infiniband.cm.req.ip_cm.sport": "0xc123",
    "infiniband.cm.req.ip_cm.sip4": "10.0.0.1",
    "infiniband.cm.req.ip_cm.dip4": "10.0.0.2",
}
# Not compared: prim_flowlabel / prim_pktrate. Wireshark 4.0 reads that 32-bit
# word two bytes early (inside the remote GID); the bytes are at MAD-data
# offset 88 as Linux's cm_msgs.h places them (tests/unit/cm/test_cm_msg.c).
REP = {
    "infiniband.cm.rep.remotecommid": "0x11223344",
    "infiniband.cm.rep.localqpn": "0x000456",
    "infiniband.cm.rep.startpsn": "0x00dcba",
    "infiniband.cm.rep.respres": "0x04",
    "infiniband.cm.rep.initdepth": "0x02",
    "infiniband.cm.rep.tgtackdelay": "0x0f",
    "infiniband.cm.rep.e2eflowctrl": "0x01",
    "infiniband.cm.rep.rnrretrcount": "0x07",
    "infiniband.cm.rep.localcaguid": "0x0002c9fffe000002",
}
RTU = {"infiniband.cm.rtu.localcommid": "0x11223344",
       "infiniband.cm.rtu.remotecommid": "0x55667788"}
DREQ = {"infiniband.cm.dreq.localcommid": "0x11223344",
        "infiniband.cm.dreq.remotecommid": "0x55667788",
        "infiniband.cm.req.remoteqpneecn": "0x000456"}
DREP = {"infiniband.cm.drsp.localcommid": "0x55667788",
        "infiniband.cm.drsp.remotecommid": "0x11223344"}
REJ = {"infiniband.cm.rej.localcommid": "0x55667789",
       "infiniband.cm.rej.remotecommid": "0x11223345",
       "infiniband.cm.rej.msgrej": "0x00",
       "infiniband.cm.rej.reason": "0x001c"}
EXPECT = [REQ, {}, REP, RTU, DREQ, DREP, REJ, {}, {}]
COMMON = {"infiniband.bth.opcode": "100", "infiniband.bth.destqp": "0x000001",
          "infiniband.deth.q_key": "0x0000000080010000",
          "infiniband.deth.srcqp": "0x00000001",
          "infiniband.mad.baseversion": "0x01",
          "infiniband.mad.mgmtclass": "0x07",
          "infiniband.mad.classversion": "0x02",
          "infiniband.mad.method": "0x03"}


def cm_pcap_path():
    path = os.environ.get("CM_PCAP", os.path.join(
        rwtest.REPO, "build", "tests", "unit", "cm", "cm_pcap"))
    if not os.access(path, os.X_OK):
        pytest.fail("cm_pcap not found at %s: build it with 'ninja -C build "
                    "tests/unit/cm/cm_pcap' or set CM_PCAP" % path,
                    pytrace=False)
    return path


@pytest.fixture(scope="module")
def cm_pcap(tmp_path_factory):
    path = tmp_path_factory.mktemp("cm") / "cm.pcap"
    rwtest.run([cm_pcap_path(), str(path)])
    return path


def fields(pcap, names):
    cmd = [rwtest.tshark_path(), "-r", str(pcap), "-T", "fields",
           "-E", "separator=|", "-E", "occurrence=f"]
    for n in names:
        cmd += ["-e", n]
    out = rwtest.run(cmd).stdout
    return [dict(zip(names, line.split("|"))) for line in out.splitlines()]


def test_cm_frames_not_malformed(cm_pcap):
    text = rwtest.tshark_verbose(cm_pcap)
    assert text.count("\nInfiniBand\n") == len(ATTRS)
    assert rwtest.tshark_problems(text) == []


def test_cm_fields_read_back(cm_pcap):
    names = ["infiniband.mad.attributeid", "infiniband.invariant.crc"]
    names += list(COMMON)
    for e in EXPECT:
        names += [n for n in e if n not in names]
    rows = fields(cm_pcap, names)
    assert [r["infiniband.mad.attributeid"] for r in rows] == ATTRS
    compared = 0
    for i, (row, want) in enumerate(zip(rows, EXPECT)):
        for name, value in list(COMMON.items()) + list(want.items()):
            assert row[name] == value, (i, name, row[name], value)
            compared += 1
    assert compared == len(COMMON) * len(ATTRS) + sum(len(e) for e in EXPECT)


def test_cm_icrc_and_lengths_validate(cm_pcap):
    p = rwtest.rocewan("validate", str(cm_pcap))
    assert p.returncode == 0, p.stdout + p.stderr


# tshark field -> (Scapy layer name, field) of rocewan.layers' MAD and CM layers
SCAPY = {
    "infiniband.mad.attributeid": ("MAD", "attr_id"),
    "infiniband.mad.mgmtclass": ("MAD", "mgmt_class"),
    "infiniband.mad.classversion": ("MAD", "class_version"),
    "infiniband.mad.method": ("MAD", "method"),
    "infiniband.mad.transactionid": ("MAD", "tid"),
    "infiniband.cm.req.serviceid": ("CM_REQ", "service_id"),
    "infiniband.cm.req.localcaguid": ("CM_REQ", "local_ca_guid"),
    "infiniband.cm.req.localqpn": ("CM_REQ", "local_qpn"),
    "infiniband.cm.req.responderres": ("CM_REQ", "responder_resources"),
    "infiniband.cm.req.initdepth": ("CM_REQ", "initiator_depth"),
    "infiniband.cm.req.remoteresptout": ("CM_REQ",
                                         "remote_cm_response_timeout"),
    "infiniband.cm.req.startpsn": ("CM_REQ", "starting_psn"),
    "infiniband.cm.req.localresptout": ("CM_REQ", "local_cm_response_timeout"),
    "infiniband.cm.req.retrcount": ("CM_REQ", "retry_count"),
    "infiniband.cm.req.pppmtu": ("CM_REQ", "path_mtu"),
    "infiniband.cm.req.rnrretrcount": ("CM_REQ", "rnr_retry_count"),
    "infiniband.cm.req.maxcmretr": ("CM_REQ", "max_cm_retries"),
    "infiniband.cm.req.prim_tfcclass": ("CM_REQ", "primary_traffic_class"),
    "infiniband.cm.req.prim_hoplim": ("CM_REQ", "primary_hop_limit"),
    "infiniband.cm.req.prim_sl": ("CM_REQ", "primary_sl"),
    "infiniband.cm.req.prim_localacktout": ("CM_REQ",
                                            "primary_local_ack_timeout"),
    "infiniband.cm.rep.remotecommid": ("CM_REP", "remote_comm_id"),
    "infiniband.cm.rep.localqpn": ("CM_REP", "local_qpn"),
    "infiniband.cm.rep.startpsn": ("CM_REP", "starting_psn"),
    "infiniband.cm.rep.tgtackdelay": ("CM_REP", "target_ack_delay"),
    "infiniband.cm.rep.rnrretrcount": ("CM_REP", "rnr_retry_count"),
    "infiniband.cm.rep.localcaguid": ("CM_REP", "local_ca_guid"),
    "infiniband.cm.rtu.localcommid": ("CM_RTU", "local_comm_id"),
    "infiniband.cm.rtu.remotecommid": ("CM_RTU", "remote_comm_id"),
    "infiniband.cm.dreq.localcommid": ("CM_DREQ", "local_comm_id"),
    "infiniband.cm.req.remoteqpneecn": ("CM_DREQ", "remote_qpn"),
    "infiniband.cm.drsp.remotecommid": ("CM_DREP", "remote_comm_id"),
    "infiniband.cm.rej.reason": ("CM_REJ", "reason"),
    "infiniband.cm.rej.localcommid": ("CM_REJ", "local_comm_id"),
}


def test_scapy_reads_what_tshark_reads(cm_pcap):
    from scapy.utils import rdpcap

    from rocewan import layers

    rows = fields(cm_pcap, list(SCAPY))
    pkts = rdpcap(str(cm_pcap))
    assert len(pkts) == len(rows) == len(ATTRS)
    compared = 0
    for i, (pkt, row) in enumerate(zip(pkts, rows)):
        assert pkt.haslayer(layers.MAD), i
        for tf, (layer, field) in SCAPY.items():
            if row[tf] == "":
                continue
            cls = getattr(layers, layer)
            assert pkt.haslayer(cls), (i, layer)
            assert getattr(pkt[cls], field) == int(row[tf], 16), (i, tf)
            compared += 1
    assert compared == 5 * len(ATTRS) + len(SCAPY) - 5
    # the SIDR messages tshark 4.0 does not decode field by field
    sr = pkts[7][layers.CM_SIDR_REQ]
    assert (sr.request_id, sr.service_id) == (0x0badcafe, 0x0000000001111c06)
    rp = pkts[8][layers.CM_SIDR_REP]
    assert (rp.qpn, rp.qkey, rp.status) == (0x789, 0x01234567, 0)
    assert pkts[1][layers.CM_MRA].service_timeout == 20
