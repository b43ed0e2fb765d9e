"""Unit tests of the testbed's config parsing, its errors, and the models."""
import os

import pytest

from rocewan.testbed import config, model, report
from rocewan.testbed.config import ConfigError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = sorted(os.path.join(ROOT, "configs", f) for f in os.listdir(os.path.join(ROOT, "configs"))
                 if f.endswith(".toml"))


def write(tmp_path, text):
    p = tmp_path / "x.toml"
    p.write_text(text)
    return str(p)


def test_every_shipped_config_loads():
    assert len(CONFIGS) >= 4
    for path in CONFIGS:
        cfg = config.load(path)
        assert cfg["name"] == os.path.basename(path)[:-5], path
        assert config.parse_rate(cfg["link"]["rate"]) > 0


def test_defaults_fill_missing_keys(tmp_path):
    cfg = config.load(write(tmp_path, 'name = "n"\n[link]\nrtt = "40ms"\n'))
    assert cfg["link"]["rtt"] == "40ms"
    assert cfg["link"]["rate"] == "1gbit"
    assert cfg["rnic"]["mtu"] == 4096
    assert cfg["workload"]["kind"] == "bulk"


@pytest.mark.parametrize("text,line,key,allowed", [
    ('name = "n"\n\n[link]\nrate = "fast"\n', 4, "link.rate", "is not a rate"),
    ('[link]\nrtt = "20ms"\njitter = 3\n', 3, "link.jitter", "allowed in [link]: rate, rtt"),
    ('[rnic]\n# comment\nmtu = 1000\n', 3, "rnic.mtu", "is not one of 256, 512, 1024, 2048, 4096"),
    ('[workload]\nkind = "bulk"\ncdf = "nosuch"\n', 3, "workload.cdf", "websearch"),
    ('[workload]\nload = 150\n', 2, "workload.load", "0..100"),
    ('[run]\ncapture = "yes"\n', 2, "run.capture", "true or false"),
    ('[linkk]\nrate = "1gbit"\n', 1, "linkk", "allowed: [link]"),
    ('[link]\nloss = "1%; rm -rf /"\n', 2, "link.loss", "netem SPEC fragment"),
])
def test_errors_name_file_line_key_and_what_is_allowed(tmp_path, text, line, key, allowed):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        config.load(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}:{line}:"), msg
    assert key in msg and allowed in msg, msg


def test_syntax_error_names_file(tmp_path):
    path = write(tmp_path, "[link\nrate = 1\n")
    with pytest.raises(ConfigError) as e:
        config.load(path)
    assert path in str(e.value) and "TOML syntax error" in str(e.value)


def test_missing_file():
    with pytest.raises(ConfigError) as e:
        config.load("/nonexistent/x.toml")
    assert "/nonexistent/x.toml" in str(e.value)


def test_override():
    cfg = config.defaults()
    c = config.override(cfg, "link.rtt=40ms")
    assert c["link"]["rtt"] == "40ms" and cfg["link"]["rtt"] == "20ms"
    assert config.override(cfg, "workload.flows=10")["workload"]["flows"] == 10
    with pytest.raises(ConfigError) as e:
        config.override(cfg, "link.rate=slow")
    assert "link.rate" in str(e.value)
    with pytest.raises(ConfigError):
        config.override(cfg, "rtt=40ms")


def test_overrides_apply_without_a_config_file():
    """`testbed up --set link.rate=...` without a config: the --set applies to the defaults."""
    from rocewan.testbed.experiments import load_cfg
    cfg = load_cfg(None, ["link.rate=300mbit", "link.rtt=4ms"], False)
    assert cfg["link"]["rate"] == "300mbit" and cfg["link"]["rtt"] == "4ms"
    assert load_cfg(None, None, False) == config.defaults()


def test_units():
    assert config.parse_rate("1gbit") == 1e9
    assert config.parse_rate("100mbit") == 1e8
    assert config.parse_rate("1gbps") == 8e9  # tc: bps = bytes per second
    assert config.parse_time("20ms") == pytest.approx(0.02)
    assert config.parse_time("500us") == pytest.approx(5e-4)
    assert config.parse_size("64K") == 65536 and config.parse_size("1M") == 1 << 20
    assert config.fmt_time(0.01) == "10ms" and config.fmt_time(5e-5) == "50us"
    for bad in ("1", "fast", "1 furlong"):
        with pytest.raises(ValueError):
            config.parse_time(bad)


def test_gbn_formula_limits_and_monotonicity():
    f = model.gbn_goodput_fraction
    assert f(0, 4096, 1e9, 0.02) == 1.0
    # more loss, longer RTT, or a faster link: less goodput
    assert f(1e-4, 4096, 1e9, 0.02) > f(1e-3, 4096, 1e9, 0.02) > f(1e-2, 4096, 1e9, 0.02)
    assert f(1e-4, 4096, 1e9, 0.01) > f(1e-4, 4096, 1e9, 0.04)
    assert f(1e-4, 4096, 1e9, 0.02) > f(1e-4, 4096, 10e9, 0.02)
    # against a direct evaluation of the series: E[(k-1)M / ((k-1)M + B RTT)]
    e, m, bdp = 1e-3, 4096, 1e9 / 8 * 0.02
    direct = sum((1 - e) ** (k - 1) * e * (k - 1) * m / ((k - 1) * m + bdp) for k in range(1, 40000))
    assert f(e, m, 1e9, 0.02) == pytest.approx(direct, rel=1e-6)


def test_ge_params():
    loss, ev = model.ge_params("gemodel 0.02% 20%")
    pi_b = 0.0002 / (0.0002 + 0.2)
    assert loss == pytest.approx(pi_b)            # 1-h = 100 %, 1-k = 0
    assert ev == pytest.approx((1 - pi_b) * 0.0002)  # bursts start from the good state
    assert model.ge_params("0.1%")[0] == pytest.approx(0.001)
    assert model.ge_params("random 1%")[1] == pytest.approx(0.01 * 0.99)


def test_slowdown_groups():
    rtt, rate = 0.01, 1e9
    recs = [[s, 0.0, (rtt + s * 8 / rate) * 1e6 * (2 if s > 5000 else 1)] for s in range(100, 10100, 100)]
    recs.append([123, 0.0, 0.0])  # not completed: ignored
    g = model.slowdown_groups(recs, rtt, rate, groups=20)
    assert len(g) == 20 and sum(x["flows"] for x in g) == 100
    assert g[0]["slowdown_p50"] == pytest.approx(1.0)
    assert g[-1]["slowdown_p95"] == pytest.approx(2.0)
    assert [x["size_max_bytes"] for x in g] == sorted(x["size_max_bytes"] for x in g)


def test_table_formats_missing_figures():
    rows = [{"case": "a", "recovery": "gbn", "loss": "none", "rtt_ms": 20, "goodput_gbps": 0.5,
             "fct_p50_ms": None, "retx_bytes": 2e6, "loss_rate_measured": 0.001}]
    t = report.table(rows)
    assert "0.500" in t and "2.00" in t and "0.100" in t and " - " in t


def test_lab_commands():
    from rocewan.testbed import lab
    cfg = config.load(os.path.join(ROOT, "configs", "lab-example.toml"))
    cmds = lab.lab_commands(cfg)
    hosts = [h for h, _, _ in cmds]
    assert hosts == ["root@wan-emu", "root@rnic-b", "root@rnic-a"]
    emu, b, a = (c for _, _, c in cmds)
    assert "-a 0000:5e:00.0 -a 0000:5e:00.1" in emu and "delay 20ms rate 10gbit" in emu
    assert "--ip 10.77.0.12/24" in b and b.rstrip().endswith("write_bw")
    assert a.rstrip().endswith("write_bw 10.77.0.2") and "-a 0000:3b:00.0" in a
    cfg["lab"]["b_port"] = ""
    with pytest.raises(ConfigError) as e:
        lab.lab_commands(cfg)
    assert "b_port" in str(e.value)


def test_rnic_pfc_xoff_reaches_the_command_line(tmp_path):
    from rocewan.testbed import runner
    cfg = config.defaults()
    assert cfg["rnic"]["pfc_xoff"] == 0 and "--pfc-xoff" not in runner.rnic_opts(cfg)
    assert "--pfc-xoff 64" in runner.rnic_opts(config.override(cfg, "rnic.pfc_xoff=64"))
    with pytest.raises(ConfigError) as e:
        config.load(write(tmp_path, '[rnic]\npfc_xoff = -1\n'))
    assert "rnic.pfc_xoff" in str(e.value)


def test_incast_flow_stats():
    """reproduce incast's Table 4 figures on hand-made qp_results: rates 1 and 3 Gb/s."""
    from rocewan.testbed.repro import incast
    s = incast.flow_stats([{"bytes": 125000000, "last_completion_s": 1.0},
                           {"bytes": 375000000, "last_completion_s": 1.0},
                           {"bytes": 0, "last_completion_s": 0.0}])  # a QP that never completed
    assert s["flows"] == 2 and s["rates_gbps"] == [1.0, 3.0]
    assert s["min_rate_gbps"] == 1.0 and s["mean_rate_gbps"] == 2.0 and s["aggregate_gbps"] == 4.0
    assert s["cv_pct"] == 50.0  # population std 1 / mean 2
    assert s["jain"] == 0.8  # (1 + 3)^2 / (2 (1 + 9))
    assert s["incast_ms"] == 1000.0
    assert incast.flow_stats([]) == {}


def test_bulk_qps_and_iters_options():
    from rocewan.testbed import runner
    cfg = config.defaults()
    cfg["workload"].update(qps=8, iters=32, size="64K", tx_depth=16)
    o = runner.rnic_opts(cfg)
    assert " -n 32" in o and " -q 8" in o and " -D " not in o, o
    cfg = config.defaults()
    o = runner.rnic_opts(cfg)
    assert " -D 4" in o and " -q " not in o and " -n " not in o, o
    # flows: a pool of QPs (rnic_flows.c), the same -q
    cfg = config.defaults()
    cfg["workload"].update(kind="flows", qps=8, flows=20, load=30)
    o = runner.rnic_opts(cfg)
    assert " --flows 20" in o and " -q 8" in o, o
    cfg["workload"]["qps"] = 1
    assert " -q " not in runner.rnic_opts(cfg)


def test_lowar_rtt_reproduction_covers_the_bdp():
    """lowar-rtt: registered, valid configs at 40 / 80 ms, window and timer
    above the 80 ms path's BDP (0.18 Gb/s x 80 ms / 1024 B = 1757.8 packets) and RTT."""
    from rocewan.testbed.repro import REPRODUCTIONS, lowar
    assert REPRODUCTIONS["lowar-rtt"][0] is lowar.reproduce_lowar_rtt
    assert lowar.RTT_RTTS == ["40ms", "80ms"]
    assert lowar.RTT_LOSSES == ["0.001%", "0.01%", "0.1%", "1%"]
    for rtt, bdp in (("40ms", 878.90625), ("80ms", 1757.8125)):
        cfg = lowar.lowar_rtt_config(rtt, quick=False)
        assert config.validate(cfg) == cfg
        assert cfg["link"]["rtt"] == rtt and cfg["link"]["rate"] == "200mbit"
        assert cfg["rnic"]["mtu"] == 1024 and cfg["rnic"]["pace"] == 0.9
        assert lowar.bdp_packets(cfg) == pytest.approx(bdp)
        assert cfg["rnic"]["max_inflight"] >= 2 * bdp
        assert cfg["workload"]["tx_depth"] == 0  # auto: about 4 BDPs of WRITEs
        assert cfg["link"]["limit"] >= 2 * bdp
        # IBTA local ACK timeout 4.096 us x 2^15 = 134 ms > 80 ms
        assert 4.096e-6 * 2 ** cfg["rnic"]["qp_timeout"] > config.parse_time("80ms")
    assert lowar.lowar_rtt_config("80ms", quick=True)["workload"]["duration"] == 3
    # 10 expected losses a direction: 10 / (1e-5 x 21972.66 packets/s) = 45.5 -> 46 s
    cfg = lowar.lowar_rtt_config("80ms", quick=False)
    assert [lowar.lowar_rtt_duration(cfg, ls, False) for ls in ["", *lowar.RTT_LOSSES]] == [10, 46, 10, 10, 10]
    assert lowar.lowar_rtt_duration(cfg, "0.001%", True) == 3


def test_lowar_memif_config_and_ratios():
    """lowar-memif: registered; the memif chain at 10 Gb/s, MTU 4096, loss a->b
    only, the IBTA timer above 80 ms; one round's ratios on hand-made rows: x gbn, the BDP
    in packets at the measured lossless rate, E x BDP and the Go-Back-N formula of Wang
    (NJUPT) IV.A (model.gbn_goodput_fraction) with B = that lossless rate."""
    from rocewan.testbed import model
    from rocewan.testbed.repro import REPRODUCTIONS, lowar
    assert REPRODUCTIONS["lowar-memif"][0] is lowar.reproduce_lowar_memif
    for rtt in lowar.RTT_RTTS:
        cfg = lowar.lowar_memif_config(rtt, quick=False)
        assert config.validate(cfg) == cfg
        assert cfg["link"]["transport"] == "memif" and cfg["link"]["rate"] == "10gbit"
        assert cfg["link"]["loss_direction"] == "a2b" and cfg["link"]["rtt"] == rtt
        assert cfg["rnic"]["mtu"] == 4096 and cfg["rnic"]["recovery"] == "gbn"
        assert 4.096e-6 * 2 ** cfg["rnic"]["qp_timeout"] > config.parse_time("80ms")
        assert cfg["workload"]["duration"] == 6
    assert lowar.lowar_memif_config("80ms", quick=True)["workload"]["duration"] == 3
    rows = [{"rtt": "80ms", "case": "gbn lossless", "loss": "none", "goodput_gbps": 6.0},
            {"rtt": "80ms", "case": "gbn", "loss": "0.01%", "goodput_gbps": 2.0},
            {"rtt": "80ms", "case": "fec+gbn xor:32,4", "loss": "0.01%", "goodput_gbps": 5.0}]
    lowar.rtt_ratios(rows, 4096, measured_bdp=True)
    bdp = 6e9 / 8 * 0.08 / 4096  # 14648.4 packets of 4 KiB
    frac = model.gbn_goodput_fraction(model.ge_params("random 0.01%")[1], 4096, 6e9, 0.08)
    assert 0.1 < frac < 0.9
    for r in rows:
        assert r["bdp_pkts"] == pytest.approx(bdp) and r["lossless_gbps"] == 6.0
    assert rows[0]["e_x_bdp"] == 0 and rows[0]["model_gbn_gbps"] == 6.0
    assert rows[1]["x_gbn"] == 1.0 and rows[2]["x_gbn"] == 2.5
    ev = model.ge_params("random 0.01%")[1]  # loss events per packet: p (1 - p) for random loss
    assert ev == pytest.approx(1e-4, rel=1e-3)
    assert rows[2]["e_x_bdp"] == pytest.approx(ev * bdp)
    assert rows[1]["model_gbn_gbps"] == pytest.approx(6.0 * frac)
    assert rows[1]["x_model"] == pytest.approx(2.0 / (6.0 * frac))
    s = {(r["case"], r["loss"]): r for r in lowar.rtt_summary(rows + [dict(rows[2], goodput_gbps=4.0)])}
    f = s[("fec+gbn xor:32,4", "0.01%")]
    assert f["rounds"] == 2 and f["goodput_gbps_med"] == 4.5 and f["rtt"] == "80ms"
    # against the formula: x gbn = (fec / formula) / (gbn / formula), on every row of the point
    assert rows[2]["x_model"] == pytest.approx(5.0 / (6.0 * frac))
    assert rows[1]["gbn_x_model"] == rows[2]["gbn_x_model"] == pytest.approx(rows[1]["x_model"])
    assert rows[2]["x_gbn"] == pytest.approx(rows[2]["x_model"] / rows[2]["gbn_x_model"])
    assert f["gbn_x_model_med"] == pytest.approx(rows[1]["x_model"])
    assert rows[0]["gbn_x_model"] != rows[0]["gbn_x_model"]  # lossless: no gbn point (nan)


def test_lowar_memif_mtu_1024():
    """--mtu 1024 (LoWAR's MTU and the FEC acceptance points'): the same chain at MTU 1024, the BDP in
    packets and the formula taken at that MTU (4x the packets of 4096 at the same rate);
    any other MTU is refused; ConnectX-5's Go-Back-N in LoWAR against the same formula
    (9.21 -> 2.92 Gb/s at 1e-5, 40 ms) is 0.57 of it at 1 KiB, 0.40 at 4 KiB; the CLI
    passes --mtu only to a reproduction that takes it."""
    from rocewan.testbed import cli, model
    from rocewan.testbed.repro import lowar
    cfg = lowar.lowar_memif_config("40ms", quick=False, mtu=1024)
    assert config.validate(cfg) == cfg and cfg["rnic"]["mtu"] == 1024
    with pytest.raises(config.ConfigError):
        lowar.lowar_memif_config("40ms", quick=False, mtu=1500)
    rows = [{"rtt": "40ms", "case": "gbn lossless", "loss": "none", "goodput_gbps": 2.0},
            {"rtt": "40ms", "case": "gbn", "loss": "0.001%", "goodput_gbps": 1.5}]
    lowar.rtt_ratios(rows, 1024, measured_bdp=True)
    assert rows[1]["bdp_pkts"] == pytest.approx(2e9 / 8 * 0.04 / 1024)
    frac = model.gbn_goodput_fraction(model.ge_params("random 0.001%")[1], 1024, 2e9, 0.04)
    assert rows[1]["model_gbn_gbps"] == pytest.approx(2.0 * frac)
    assert lowar.lowar_bdp_packets("80ms", 1024) == pytest.approx(97656.25)
    assert lowar.cx5_gbn_x_model(1024) == pytest.approx(2.92 / (9.21 * 0.5588), rel=1e-3)
    assert 0.56 < lowar.cx5_gbn_x_model(1024) < 0.58 and 0.39 < lowar.cx5_gbn_x_model(4096) < 0.41
    a = cli.parser().parse_args(["reproduce", "lowar-memif", "--mtu", "1024"])
    assert a.mtu == 1024 and cli.parser().parse_args(["reproduce", "lowar"]).mtu is None
    with pytest.raises(config.ConfigError, match="one MTU"):
        cli.cmd_reproduce(cli.parser().parse_args(["reproduce", "lowar", "--mtu", "1024"]))


def test_vrp_reproduction_cases_and_vrp_wr_option():
    """reproduce vrp / vrp-burst: registered; gbn, gbone and the per-WR
    case; the per-WR case sends --vrp-wr on the rnics with the receiver at 0 %; the
    burst variant runs GE bursts with the 2-packet bound both ways."""
    from rocewan.testbed import runner
    from rocewan.testbed.repro import REPRODUCTIONS, vrp
    assert "vrp" in REPRODUCTIONS and "vrp-burst" in REPRODUCTIONS
    names = [c[0] for c in vrp.CASES]
    assert names[:2] == ["gbn", "gbone"] and "vrp-wr 10 %" in names
    cfg = vrp.vrp_config(False)
    cfg["rnic"].update(recovery="vrp", vrp_loss=0.0, vrp_wr="loss=10")
    o = runner.rnic_opts(cfg)
    assert " --vrp-loss 0 " in o and " --vrp-wr loss=10" in o, o
    cfg["rnic"]["vrp_wr"] = ""
    assert "--vrp-wr" not in runner.rnic_opts(cfg)
    cfg["rnic"]["recovery"] = "gbn"
    cfg["rnic"]["vrp_wr"] = "loss=10"
    assert "--vrp" not in runner.rnic_opts(cfg)   # only under vrp
    b = vrp.vrp_config(False, burst=True)
    assert b["link"]["loss"].startswith("gemodel") and b["link"]["loss_direction"] == "a2b"
    burst = {c[0]: c for c in vrp.BURST_CASES}
    assert burst["vrp 10 % burst 2k"][3] == "2048"
    assert burst["vrp-wr 10 % burst 2k"][4] == "loss=10,burst=2048"


def test_lowar_rounds_summary():
    """reproduce lowar --rounds: median and min-max per point over hand-made rounds, an
    aborted round (NaN) left out of the statistics and counted."""
    from rocewan.testbed.repro import lowar
    nan = float("nan")
    rows = [{"case": "gbn", "loss": "1%", "goodput_gbps": g, "x_gbn": 1.0, "x_xor": x}
            for g, x in ((0.02, 0.5), (0.03, 0.25), (0.025, 0.4))]
    rows += [{"case": "rs", "loss": "1%", "goodput_gbps": g, "x_gbn": x, "x_xor": 2.0}
             for g, x in ((0.15, 7.5), (0.16, 5.0))]
    rows.append({"case": "rs", "loss": "1%", "goodput_gbps": nan, "x_gbn": nan, "x_xor": nan,
                 "aborted": "IBV_WC_RETRY_EXC_ERR"})
    s = {r["case"]: r for r in lowar.rounds_summary(rows)}
    g = s["gbn"]
    assert g["rounds"] == 3 and g["aborted"] == 0
    assert (g["goodput_gbps_med"], g["goodput_gbps_min"], g["goodput_gbps_max"]) == (0.025, 0.02, 0.03)
    assert (g["x_xor_med"], g["x_xor_min"], g["x_xor_max"]) == (0.4, 0.25, 0.5)
    r = s["rs"]
    assert r["rounds"] == 3 and r["aborted"] == 1
    assert r["goodput_gbps_med"] == pytest.approx(0.155) and r["x_gbn_med"] == 6.25
    assert (r["x_gbn_min"], r["x_gbn_max"]) == (5.0, 7.5)


def test_lowar_latency_pooled_and_fill():
    """lowar-latency: the block fill (32 x (1024 + 62) B x 8 / 0.18 Gb/s), the per-kind
    figures of one traced row, and two rounds' latencies pooled."""
    from rocewan.testbed import runner
    from rocewan.testbed.repro import lowar
    cfg = lowar.lowar_config(False)
    assert runner.fec_fill_ms(cfg) is None  # gbn: no FEC
    cfg["rnic"].update(recovery="fec+gbone", fec="xor:32,4")
    assert runner.fec_fill_ms(cfg) == pytest.approx(32 * 1086 * 8 / 0.18e9 * 1e3)
    cfg["rnic"]["fec"] = "rs:16,4"
    assert runner.fec_fill_ms(cfg) == pytest.approx(16 * 1086 * 8 / 0.18e9 * 1e3)
    q = {"p50": 2.0, "p90": 3.0, "p99": 4.0, "max": 4.0}
    row = {"trace": {"drops": 9, "repaired": 6, "never_repaired": {"FEC frame": 2, "not a request": 1},
                     "by": {"fec": {"repaired": 4, "latency_ms": q, "latency_fills": q},
                            "retx": {"repaired": 2, "latency_ms": q}}}}
    f = lowar.latency_rows(row)
    assert (f["drops"], f["fec_frames"], f["not_req"], f["never"], f["dup"]) == (9, 2, 1, 0, 0)
    assert f["fec_n"] == 4 and f["fec_fills_p50"] == 2.0 and f["retx_n"] == 2
    assert f["retx_fills_p50"] is None
    rows = [{"case": "fec+gbn", "drops": 3, "fec_n": 2, "retx_n": 1, "fec_fills_p50": 1.0,
             "trace_cdf_ms_by": {"fec": [1.0, 2.0], "retx": [40.0]}},
            {"case": "fec+gbn", "drops": 2, "fec_n": 2, "retx_n": 0, "fec_fills_p50": 3.0,
             "trace_cdf_ms_by": {"fec": [3.0, 4.0], "retx": []}}]
    s = lowar.pooled_latency(rows, fill=2.0, rtt_ms=20.0)[0]
    assert s["rounds"] == 2 and s["drops"] == 5 and s["fec_n"] == 4 and s["retx_n"] == 1
    # pooled FEC latencies 1, 2, 3, 4 ms = 0.5 ... 2 fills: nearest-rank p50 is the 2nd
    assert (s["fec_fills_p50"], s["fec_fills_max"]) == (1.0, 2.0)
    assert s["fec_rtts_p50"] == pytest.approx(0.1) and s["retx_rtts_p50"] == 2.0
    assert (s["fec_fills_p50_min"], s["fec_fills_p50_max"]) == (1.0, 3.0)


def test_loss_change_parsed_and_checked(tmp_path):
    """[link] loss_change: 'TIME LOSS' (LOSS empty: lossless), refused without a positive
    time or with shell characters; the SPECs the timer would set."""
    from rocewan.testbed import runner
    assert config.parse_loss_change("") is None
    assert config.parse_loss_change("2s random 0.1%") == (2.0, "random 0.1%")
    assert config.parse_loss_change("500ms") == (0.5, "")
    for bad in ("0s random 1%", "soon random 1%", "2s random 1%; reboot"):
        with pytest.raises(ConfigError) as e:
            config.load(write(tmp_path, f'[link]\nloss_change = "{bad}"\n'))
        assert "link.loss_change" in str(e.value)
    cfg = config.defaults()
    cfg["link"].update(loss="random 3%", loss_direction="a2b", loss_change="2s random 0.1%")
    timer, rec = runner.change_loss_later(type("T", (), {"prefix": "zz"})(), cfg)
    assert timer is not None and not timer.is_alive()  # built, not started
    assert rec["at_s"] == 2.0 and rec["to"] == "random 0.1%" and rec["applied"] is False
    assert rec["a2b_spec"].endswith(" loss random 0.1%") and "loss" not in rec["b2a_spec"]
    cfg["link"]["loss_change"] = ""
    assert runner.change_loss_later(None, cfg) == (None, None)


def test_reproduce_rounds_option():
    """--rounds reaches the reproductions that take it and is refused, before anything
    runs, by the others and below 1."""
    import inspect
    import subprocess
    import sys
    from rocewan.testbed.repro import REPRODUCTIONS, lowar
    assert REPRODUCTIONS["lowar-latency"][0] is lowar.reproduce_lowar_latency
    takes = {n for n, (fn, _) in REPRODUCTIONS.items() if "rounds" in inspect.signature(fn).parameters}
    assert takes == {"lowar", "lowar-burst", "lowar-latency", "lowar-rtt", "lowar-fct", "lowar-memif", "vrp",
                     "gbone-fct", "gbn-model"}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"))
    for args, msg in ((["vrp-burst", "--rounds", "2"], "runs one round per point"),
                      (["lowar", "--rounds", "0"], "at least 1")):
        r = subprocess.run([sys.executable, os.path.join(root, "testbed"), "reproduce", *args],
                           capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 2 and msg in r.stderr, (r.returncode, r.stdout, r.stderr)
