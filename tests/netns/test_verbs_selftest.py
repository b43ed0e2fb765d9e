"""tests/verbs/rv_selftest.c, a libibverbs program linked with the real libibverbs, under
rnic-exec (docs/verbs.md): the caller's CPU affinity is untouched by EAL, bad input gets an
errno and never a crash, and one thread posts while another polls the same CQ."""
import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verbs"))
from harness import SELFTEST, exec_argv, run_pair  # noqa: E402


@pytest.fixture(autouse=True)
def built():
    if not os.path.exists(SELFTEST):
        pytest.fail(f"{SELFTEST} is not built (run `make build`)")


def checks(out):
    """The program's "ok NAME" / "FAIL NAME: why" lines."""
    ok = {line.split()[1] for line in out.splitlines() if line.startswith("ok ")}
    bad = [line for line in out.splitlines() if line.startswith("FAIL")]
    return ok, bad


def test_affinity_unchanged(veth_pair):
    """EAL pins the thread that calls rte_eal_init to its lcore's CPUs (here every CPU of
    this host): the program, held to one CPU by taskset, keeps exactly that one."""
    cpu = sorted(os.sched_getaffinity(0))[-1]
    argv, _ = exec_argv(veth_pair, 0, [], [SELFTEST, "affinity"])
    argv = argv[:4] + ["taskset", "-c", str(cpu)] + argv[4:]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, start_new_session=True)
    ok, bad = checks(r.stdout)
    assert r.returncode == 0 and not bad and "affinity_unchanged" in ok, r.stdout + r.stderr
    assert "cpus 1" in r.stdout, r.stdout


def test_fork_child_gets_enodev(veth_pair):
    """The device stays in the process that opened it: in a child of fork() opening rnic0,
    a PD or a CQ fails with ENODEV (and one line), and the parent's device still works."""
    argv, _ = exec_argv(veth_pair, 0, [], [SELFTEST, "fork"])
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, start_new_session=True)
    ok, bad = checks(r.stdout)
    assert r.returncode == 0 and not bad, r.stdout + r.stderr
    assert ok == {"fork_child_enodev", "fork_parent_works"}, r.stdout
    assert "a child of fork()" in r.stderr, r.stderr


BAD_INPUT = ["reset_to_rts", "reset_to_rtr", "state_still_reset", "post_send_reset",
             "post_recv_reset", "reset_to_init", "rtr_missing_attrs", "recv_too_many_sge",
             "recv_negative_sge", "recv_sge_past_mr", "recv_wrong_lkey", "destroy_cq_in_use",
             "dealloc_pd_in_use", "alloc_mw", "create_cq_ex", "open_xrcd", "reg_mr_odp",
             "create_qp_xrc", "alloc_dm", "ud_setup", "ud_rts", "ud_larger_than_mtu",
             "cq_overrun_no_crash", "destroy_qp", "dereg_mr", "destroy_cq", "dealloc_pd"]


def test_bad_input(veth_pair, tmp_path):
    js = tmp_path / "bad.json"
    argv, _ = exec_argv(veth_pair, 0, [], [SELFTEST, "badinput", veth_pair.kip[1]], js)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, start_new_session=True)
    ok, bad = checks(r.stdout)
    assert r.returncode == 0 and not bad, r.stdout + r.stderr
    assert ok == set(BAD_INPUT), sorted(set(BAD_INPUT) ^ ok)
    # a CQ of 2 entries and 8 UD sends: 2 completions, 6 counted as lost, the rest of the
    # device unharmed (rxe reports the overrun as IBV_EVENT_CQ_ERR instead: docs/verbs.md)
    assert "cq_overrun posted 8 polled 2" in r.stdout, r.stdout
    dev = json.load(open(js))["results"]["device_counters"]
    assert dev["cq_overflow"] == 6 and dev["tx_req_packets"] == 8, dev


def test_threads_post_and_poll(veth_pair, tmp_path):
    """The client posts 3000 SENDs from one thread while a second polls their completions
    (in order, all successful); the server checks every byte of every message. Then one
    RDMA WRITE with an rkey the server never gave: NAK remote access error, the WR
    completes with IBV_WC_REM_ACCESS_ERR and both QPs are in the error state."""
    n = 3000
    srv = [SELFTEST, "threads-server", "18600", str(n)]
    cli = [SELFTEST, "threads-client"]
    r = run_pair(veth_pair, tmp_path, srv, None, port=18600, cli_args=["18600", str(n)],
                 client_cmd=cli)
    for side, names in ((0, {"server_received", "server_in_order", "server_bytes"}),
                        (1, {"client_completed", "client_in_order", "server_count",
                             "wrong_rkey_rem_access_err", "wrong_rkey_qp_error"})):
        ok, bad = checks(r.out[side])
        assert not bad and names <= ok, r.both()
    assert r.rcs == [0, 0], r.both()
    cli, srv = r.dev(1), r.dev(0)
    assert cli["tx_req_packets"] == n + 1 and srv["recv_completions"] == n, (cli, srv)
    assert srv["tx_nak_rem_access"] == 1 and cli["rx_nak_rem_access"] == 1, (cli, srv)
