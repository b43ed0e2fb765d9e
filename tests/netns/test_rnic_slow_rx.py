"""A slow receiver with default options (no --rate_limit, no --max-inflight).

rnic B (the send_bw server) sleeps --slow-rx-us after every RX burst, so it drains
far slower than rnic A sends; its af_packet ring overflows and the kernel drops
frames. Without back-pressure A sends its whole 65536-packet window at line rate into it,
and Go-Back-N resends that window every round (the rxe interop runs only passed with
--max-inflight 8). With the loss-reactive window (roce_lwin.h, on by default) and
TX back-pressure, the transfer completes. Asserted here: completion, exact byte
counts, no rnic-dropped frames. How fast it completes, and how many rounds it
took, is timing and goes to bench; the counters are printed.
"""
import pytest

from conftest import rnic_pair

MSG, N = 1048576, 20
OPTS = f"-s {MSG} -n {N}"
SLOW = "--slow-rx-us 1000"


def test_slow_receiver_default_options(veth_pair, tmp_path):
    rcs, out, (srv, cli) = rnic_pair(veth_pair, tmp_path, "send_bw", OPTS, side_opts=("", SLOW),
                                     timeout=120)
    assert rcs == [0, 0], f"exit codes {rcs}\n--- server:\n{out[0]}\n--- client:\n{out[1]}"
    assert cli["config"]["loss_window"] is True and cli["config"]["max_inflight_pkts"] == 65536
    assert cli["config"]["rate_limit_gbps"] == 0
    assert cli["results"]["iters"] == N and cli["results"]["completion_errors"] == 0
    sq, sp = srv["results"]["qp_counters"], srv["results"]["port_counters"]
    cq, cp = cli["results"]["qp_counters"], cli["results"]["port_counters"]
    # every byte placed exactly once, whatever was lost and resent
    assert sq["rx_req_bytes"] == N * MSG, sq
    assert sq["recv_completions"] == N, sq
    assert sp["rx_slow_sleeps"] > 0, sp
    # the rnic never drops its own RoCE frames (a full TX ring holds the engine back)
    assert cp.get("tx_drop_full", 0) == 0, cp
    # every first transmission of the 20 MiB (MTU 1024): exactly one per packet
    assert cq["tx_req_packets"] == N * MSG // 1024, cq
    print(f"\nslow receiver: {cq['tx_retransmits']} retransmits, {cq['loss_window_cuts']} "
          f"window cuts, {cq['timeouts']} timeouts, {cq['retries']} go-back rounds, "
          f"{cp.get('tx_ring_held', 0)} TX-ring holds, "
          f"{cli['results']['bw_avg_mbps']:.1f} MiB/s average")


if __name__ == "__main__":
    pytest.main([__file__, "-v", "-s"])
