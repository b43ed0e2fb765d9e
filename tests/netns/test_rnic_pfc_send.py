"""The rnic sends PFC when its own receive path falls behind (--pfc-xoff).

rnic B (the write_bw server) is made slow on purpose: --slow-rx-us 300 sleeps
300 us after every RX burst, so it reads at most ~100k frames/s while rnic A
sends 64 KiB WRITEs as fast as the veth takes them. B's af_packet ring (1024
frames) overflows and the kernel drops frames; A's Go-Back-N resends them.
With --pfc-xoff 64, B pauses A's priority 3 while its backlog (frames read in
back-to-back full bursts: af_packet cannot report its ring's fill level) is
at least 64 frames and resumes it once a burst comes back short, and A, which
obeys PFC, stops in time: no frame is lost. Every XOFF is answered by an XON.
"""
import subprocess

import pytest

from conftest import RNIC, rnic_pair

OPTS = "-s 65536 -n 200"
SLOW = "--slow-rx-us 1000"
PACE = "--rate_limit 1"


def run(vp, tmp_path, srv_opts):
    rcs, out, res = rnic_pair(vp, tmp_path, "write_bw", OPTS, side_opts=(PACE, srv_opts))
    assert rcs == [0, 0], f"exit codes {rcs}\n--- server:\n{out[0]}\n--- client:\n{out[1]}"
    srv, cli = res
    assert cli["results"]["iters"] == 200 and cli["results"]["completion_errors"] == 0
    # every byte placed exactly once, whatever was lost and resent
    assert srv["results"]["qp_counters"]["rx_req_bytes"] == 200 * 65536
    assert srv["results"]["port_counters"]["rx_slow_sleeps"] > 0
    return srv, cli


def test_slow_receiver_without_pfc_loses(veth_pair, tmp_path):
    """The negative control: the same slow receiver without --pfc-xoff overflows its ring."""
    rcs, out, (srv, cli) = rnic_pair(veth_pair, tmp_path, "write_bw", OPTS, side_opts=(PACE, SLOW))
    assert cli is not None, f"no client JSON (exit {rcs[1]}):\n{out[1]}"
    q, cp = cli["results"]["qp_counters"], cli["results"]["port_counters"]
    assert q["tx_retransmits"] > 0, q
    assert cp["pfc_pauses"] == 0 and cli["config"]["pfc_xoff"] == 0
    if rcs != [0, 0]:
        # Go-Back-N resends everything after a loss into the same full ring; it may run
        # out of retries (IBV_WC_RETRY_EXC_ERR): the collapse PFC prevents
        assert q["retry_exceeded"] >= 1 and cli["results"]["error"] is not None, out[1]
    else:
        sp = srv["results"]["port_counters"]
        assert sp["pfc_sent_xoff"] == 0 and sp["rx_slow_sleeps"] > 0, sp


def check_retransmits_explained(cli, srv):
    """Every retransmission A made has a counted cause, and every NAK a counted gap at B:
    Go-Back-N resends only in a retry round (lib/roce/roce_comp.c, comp_retry):
    it starts on a timeout, a sequence NAK or an implied NAK, and B NAKs only a PSN gap."""
    q, sq = cli["results"]["qp_counters"], srv["results"]["qp_counters"]
    assert q["retries"] <= q["timeouts"] + q["rx_nak_seq_err"] + q["implied_naks"], q
    assert q["tx_retransmits"] == 0 or q["retries"] > 0, q
    assert q["rx_nak_seq_err"] <= sq["tx_nak_seq_err"], (q, sq)
    assert sq["tx_nak_seq_err"] == 0 or sq["rx_out_of_sequence"] > 0, sq
    # a duplicate at B is a packet A sent again (the veth invents none)
    assert sq["rx_dup_requests"] <= q["tx_retransmits"], (q, sq)


def test_slow_receiver_pauses_its_sender(veth_pair, tmp_path):
    """With --pfc-xoff, B pauses A and A obeys: the PFC exchange reconciles frame for frame
    and every byte is placed once. That A then retransmits nothing holds only while the host
    does not deschedule B for longer than its ring lasts, so it is a `make bench` claim
    (bench/rnic/pfc_send.py, pass rate in docs/claims.md); here every retransmission must be
    explained by a counted timeout or NAK instead. One run, no retries."""
    srv, cli = run(veth_pair, tmp_path, f"{SLOW} --pfc-xoff 64")
    sp, cp = srv["results"]["port_counters"], cli["results"]["port_counters"]
    q = cli["results"]["qp_counters"]
    assert srv["config"]["pfc_xoff"] == 64 and srv["config"]["pfc_xon"] == 31
    # B paused A at least once, and every pause it started it also ended
    assert sp["pfc_sent_xoff"] >= 1, sp
    assert sp["pfc_sent_xon"] == sp["pfc_sent_xoff"], sp
    assert sp["rx_backlog_max"] >= 64, sp
    # A obeyed: each frame B sent arrived (XOFF and refreshes pause, XONs resume)
    assert cp["pfc_rx_xoff"] == sp["pfc_sent_xoff"] + sp["pfc_sent_refresh"], (sp, cp)
    assert cp["pfc_rx_xon"] == sp["pfc_sent_xon"], (sp, cp)
    # (a refresh that arrives after the pause ran out, e.g. B descheduled, starts a new one)
    assert 1 <= cp["pfc_pauses"] <= cp["pfc_rx_xoff"], (sp, cp)
    assert cp["tx_paused_ns"] > 0 and cp["pfc_overshoot_max_frames"] <= 32, cp
    assert cp["pfc_xoff_window_max_frames"] <= 32, cp
    # exact counts: 200 messages of 64 request packets, each sent once first, accepted once
    assert q["tx_req_packets"] == 200 * 64 and srv["results"]["qp_counters"]["rx_req_packets"] == 200 * 64
    check_retransmits_explained(cli, srv)
    print("retransmits", q["tx_retransmits"], "timeouts", q["timeouts"], "naks", q["rx_nak_seq_err"])


def test_pfc_xon_must_be_below_xoff(tmp_path):
    r = subprocess.run(f"{RNIC} --no-huge --no-pci -- --ip 10.0.0.1/24 --pfc-xoff 16 write_bw",
                       shell=True, capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert ("option --pfc-xon: 31 frames must be below --pfc-xoff 16 (hysteresis: XON only "
            "once the backlog fell under XOFF)") in r.stderr, r.stderr


if __name__ == "__main__":
    pytest.main([__file__, "-v"])
