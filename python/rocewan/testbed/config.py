"""Experiment configuration: TOML files in configs/, parsed with tomllib.

tomllib reports line numbers only for syntax errors, so we map every key to the
line it was written on ourselves; every error names FILE:LINE and the key, and
says what is allowed.
"""
import copy
import os
import re
import tomllib

from .. import checkout

UNITS_RATE = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
              "bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9}
UNITS_TIME = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "msec": 1e-3, "us": 1e-6, "usec": 1e-6,
              "ns": 1e-9}
UNITS_SIZE = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1 << 20, "mb": 1 << 20,
              "g": 1 << 30, "gb": 1 << 30}

# the checkout whose configs/, build/ and results/ the testbed uses (rocewan.checkout: ROCEWAN_ROOT,
# else the checkout this package is imported from); None outside one, and then the testbed command
# refuses to start (cli.main), so the paths below are never used unset
ROOT = checkout.find()
CDF_DIR = os.path.join(ROOT, "configs", "cdf") if ROOT else None
RECOVERY_MODES = ["gbn", "gbone", "irn"]  # the rnic's --recovery base modes
# and each under FEC (docs/fec.md): [rnic] recovery = "fec+gbn", code in [rnic] fec
RECOVERY_CHOICES = RECOVERY_MODES + ["fec+" + m for m in RECOVERY_MODES]
TOLERANT_MODES = ["vrp"]  # loss-tolerant --recovery choices (docs/vrp.md)
CC_MODES = ["none", "dcqcn", "dcqcn-p", "dctcp", "timely"]  # the rnic's --cc (lib/cc)


class ConfigError(ValueError):
    """A bad configuration: the message names file:line, the key and what is allowed."""


def parse_rate(s):
    """tc(8) rate ('1gbit', '100mbit', '10gbps' = bytes) -> bits per second."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(s))
    if not m or m.group(2).lower() not in UNITS_RATE:
        raise ValueError(f"'{s}' is not a rate (e.g. 1gbit, 100mbit, 10gbit)")
    return float(m.group(1)) * UNITS_RATE[m.group(2).lower()]


def parse_time(s):
    """tc(8) time ('20ms', '500us', '1s') -> seconds."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(s))
    if not m or m.group(2).lower() not in UNITS_TIME or not m.group(2):
        raise ValueError(f"'{s}' is not a time (e.g. 20ms, 500us, 1s)")
    return float(m.group(1)) * UNITS_TIME[m.group(2).lower()]


def parse_size(s):
    """Bytes: an integer, or with K/M/G (binary, as perftest's -s)."""
    if isinstance(s, int):
        return s
    m = re.fullmatch(r"\s*([0-9]+)\s*([a-zA-Z]*)\s*", str(s))
    if not m or m.group(2).lower() not in UNITS_SIZE:
        raise ValueError(f"'{s}' is not a size (e.g. 4096, 64K, 1M)")
    return int(m.group(1)) * UNITS_SIZE[m.group(2).lower()]


def fmt_time(sec):
    """Seconds -> a tc time string the emulator accepts."""
    us = sec * 1e6
    return f"{us / 1000:g}ms" if us >= 1000 else f"{us:g}us"


# The schema: section -> key -> (default, checker(value) -> normalised value, help)
def _choice(options):
    def check(v):
        if v not in options:
            raise ValueError(f"'{v}' is not one of {', '.join(map(str, options))}")
        return v
    return check


def _int_range(lo, hi):
    def check(v):
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise ValueError(f"{v!r} is not an integer in {lo}..{hi}")
        return v
    return check


def _str(v):
    if not isinstance(v, str):
        raise ValueError(f"{v!r} is not a string")
    return v


def _spec(v):
    """A fragment of lossy-emu SPEC (netem grammar); checked by the emulator itself."""
    if not isinstance(v, str) or any(c in v for c in "\"'`$;|&\n"):
        raise ValueError(f"{v!r} is not a netem SPEC fragment (plain words, no quotes)")
    return v.strip()


def _loss_change(v):
    v = _spec(v)
    if v:
        t, _, rest = v.partition(" ")
        if parse_time(t) <= 0:
            raise ValueError(f"{t!r}: the time of a loss change must be positive")
        _spec(rest)
    return v


def parse_loss_change(v):
    """'2s random 0.1%' -> (2.0, 'random 0.1%'); '' -> None."""
    if not v:
        return None
    t, _, rest = v.strip().partition(" ")
    return parse_time(t), rest.strip()


def _list_of(check):
    def c(v):
        if not isinstance(v, list) or not v:
            raise ValueError(f"{v!r} is not a non-empty list")
        return [check(x) for x in v]
    return c


def _checked(fn, conv):
    def c(v):
        conv(v)
        return v
    c.__name__ = fn
    return c


def _cdf(v):
    if not isinstance(v, str):
        raise ValueError(f"{v!r} is not a CDF name or path")
    if v in ("", "fixed"):
        return ""
    path = v if os.path.sep in v else os.path.join(CDF_DIR, v + ".cdf")
    if not os.path.isfile(path):
        names = sorted(f[:-4] for f in os.listdir(CDF_DIR) if f.endswith(".cdf"))
        raise ValueError(f"'{v}' is neither a file nor one of {', '.join(names)}")
    return path


SCHEMA = {
    "": {
        "name": ("experiment", _str, "experiment name (file names of the results)"),
        "description": ("", _str, "one line shown in reports"),
    },
    "link": {
        "rate": ("1gbit", _checked("rate", parse_rate), "bottleneck rate of the WAN link, each direction"),
        "rtt": ("20ms", _checked("rtt", parse_time), "base round-trip time (half of it each way)"),
        "loss": ("", _spec, "loss model, netem grammar after 'loss' (e.g. 'gemodel 0.02% 20%', '0.1%'); "
                 "empty = lossless"),
        "loss_direction": ("both", _choice(["both", "a2b", "b2a"]), "which directions lose packets"),
        "loss_change": ("", lambda v: _loss_change(v), "'TIME LOSS': TIME after the rnics are started, "
                        "the emulator's loss becomes LOSS (netem grammar after 'loss'; empty: "
                        "lossless), set through its telemetry (e.g. '2s random 0.1%'); empty: never"),
        "a2b_extra": ("", _spec, "more SPEC words for A->B (e.g. 'jitter-no-reorder', 'ecn')"),
        "b2a_extra": ("", _spec, "more SPEC words for B->A"),
        "limit": (10000, _int_range(1, 1 << 22), "bottleneck queue limit in packets"),
        "transport": ("veth", _choice(["veth", "memif"]), "the DPDK links: veth (af_packet, through the "
                      "kernel) or memif (shared memory between the processes; a veth A-B for TCP only)"),
    },
    "rnic": {
        "mtu": (4096, _choice([256, 512, 1024, 2048, 4096]), "path MTU"),
        "recovery": ("gbn", _choice(RECOVERY_CHOICES + TOLERANT_MODES), "loss recovery (fec+MODE: FEC under MODE)"),
        "fec": ("xor:32,4", _str, "FEC code of a fec+MODE recovery: xor:K,D or rs:K,R (docs/fec.md)"),
        "fec_adapt": (False, lambda v: _bool(v), "fec+MODE: the receiver adapts the code to the loss it "
                      "sees (--fec-adapt; docs/fec.md)"),
        "vrp_loss": (0.0, lambda v: _vrp_pct(v), "vrp: loss in percent a WRITE may lose over vrp_window "
                     "packets (--vrp-loss; docs/vrp.md)"),
        "vrp_window": (64, _int_range(1, 65536), "vrp: history window in packets (--vrp-window)"),
        "vrp_max_burst": ("", _str, "vrp: most consecutive bytes lost (--vrp-max-burst; empty: no bound)"),
        "vrp_wr": ("", _str, "vrp: the tolerance rnic A puts on each WRITE it posts (--vrp-wr "
                   "SPEC[/SPEC...], e.g. 'loss=10' or 'loss=10,burst=2048/qp'; empty: none, B's "
                   "vrp_* apply; docs/vrp.md)"),
        "cc": ("none", _choice(CC_MODES), "congestion control"),
        "cc_param": ("", _str, "--cc-param of the rnics, e.g. 'profile=wan,timer_us=300' (docs/cc.md)"),
        "loss_window": (True, lambda v: _bool(v), "the loss-reactive window under every CC (--loss-window)"),
        "loss_window_init": (10, _int_range(0, 8388608), "its initial window in slow start, packets "
                             "(--loss-window-init; 0: start at max_inflight)"),
        "pace": (0.98, lambda v: 0.0 if v == 0 and not isinstance(v, bool) else _frac(v),
                 "requester rate limit as a fraction of the link rate (0: no --rate_limit, line rate)"),
        "max_inflight": (65536, _int_range(1, 8388608), "packets in flight per QP"),
        "qp_timeout": (14, _int_range(1, 31), "local ACK timeout exponent (4.096 us x 2^N)"),
        "rto": ("adaptive", _choice(["adaptive", "fixed"]), "retransmit timer: adaptive "
                "(Jacobson/Karn from in-band RTT samples) or fixed (IBTA, from qp_timeout); docs/transport.md"),
        "rto_min": ("500us", _checked("rto_min", parse_time), "adaptive RTO hard floor: the least "
                    "margin above RTT (the rnic's default; a learned stall allowance adds to it)"),
        "pfc_xoff": (0, _int_range(0, 1 << 20), "rnic B sends PFC XOFF when its receive backlog "
                     "reaches this many frames, XON when a read comes back short (0: never; docs/pfc.md)"),
    },
    "workload": {
        "kind": ("bulk", _choice(["bulk", "flows"]), "bulk: perftest write_bw for a duration; flows: per-flow FCT"),
        "size": ("1M", _checked("size", parse_size), "bulk message size, or the size of every flow without a CDF"),
        "duration": (4, _int_range(1, 3600), "bulk: seconds of traffic"),
        "tx_depth": (0, _int_range(0, 65536), "bulk: messages posted (-t); 0: about 4 BDPs of them"),
        "qps": (1, _int_range(1, 64), "QPs of rnic A to B (-q), each with its own CC state; bulk: each "
                "with tx_depth posted, --json qp_results has each one's bytes and completion time; "
                "flows: a pool of connections, each flow on an idle QP if any"),
        "iters": (0, _int_range(0, 1 << 30), "bulk: messages per QP (-n) instead of a duration (0: run for "
                  "duration seconds)"),
        "flows": (200, _int_range(1, 1000000), "flows: how many"),
        "cdf": ("", _cdf, "flows: size distribution (websearch, fb_hadoop or a path); empty = fixed size"),
        "load": (50, _int_range(0, 100), "flows: Poisson arrivals at this % of the link rate (0 = one at a time)"),
    },
    "relay": {
        "enabled": (False, lambda v: _bool(v),
                    "put a pfc-relay at each end of the WAN link (Swing, Chen et al., TPDS 2023)"),
        "buffer": ("auto", lambda v: _relay_buffer(v),
                   "relay B's Remote-ingress buffer: auto (1 BDP + 10 %) or a size"),
        "lossless": (3, _int_range(0, 7), "the lossless priority (the rnic's is 3: DSCP 26)"),
    },
    "switch": {
        "drain": ("", lambda v: _opt_rate(v),
                  "a congested far-end switch before rnic B draining at this rate (empty: none)"),
        "xoff": ("800K", _checked("xoff", parse_size), "the switch's PFC XOFF threshold (bytes)"),
        "xon": ("100K", _checked("xon", parse_size), "the switch's PFC XON threshold (bytes)"),
        "limit": ("4M", _checked("limit", parse_size), "the switch's buffer (bytes); beyond it: drops"),
    },
    "lab": {
        "a_host": ("", _str, "lab mode: ssh destination of rnic A (user@host)"),
        "a_port": ("", _str, "lab mode: rnic A's DPDK port (PCI address, or EAL --vdev text)"),
        "a_kernel_ip": ("", _str, "lab mode: A's kernel IP (perftest's TCP exchange)"),
        "a_rnic_ip": ("", _str, "lab mode: rnic A's RoCE IP/prefix"),
        "b_host": ("", _str, "lab mode: ssh destination of rnic B"),
        "b_port": ("", _str, "lab mode: rnic B's DPDK port"),
        "b_kernel_ip": ("", _str, "lab mode: B's kernel IP (rnic A connects to it)"),
        "b_rnic_ip": ("", _str, "lab mode: rnic B's RoCE IP/prefix"),
        "emu_host": ("", _str, "lab mode: ssh destination of lossy-emu"),
        "emu_ports": ("", _str, "lab mode: lossy-emu's two DPDK ports, side A first (P0,P1)"),
        "bin_dir": ("/opt/rocewan/build", _str, "lab mode: the build directory on every host"),
        "rnic_eal": ("-l 0 --in-memory", _str, "lab mode: the rnics' EAL options (lcores, memory)"),
        "emu_eal": ("-l 0-2 --in-memory", _str, "lab mode: lossy-emu's EAL options (lcores, memory)"),
        "emu_extra": ("--busy-poll", _str, "lab mode: more lossy-emu options (--busy-poll for line rate)"),
        "ssh_config": ("", _str, "lab mode: an ssh_config file for every ssh call (ssh -F; empty: the "
                       "user's ~/.ssh/config and agent)"),
        "workdir": ("/tmp", _str, "lab mode: where each host keeps a run's JSON (a fresh directory "
                    "under it, removed after the run)"),
    },
    "run": {
        "repetitions": (1, _int_range(1, 100), "repeat the experiment, results appended"),
        "seed": (1, _int_range(0, 2**63 - 1), "seed of the emulator and the workload"),
        "capture": (False, lambda v: _bool(v), "write a pcap of the A side link and validate it"),
        "trace": (False, lambda v: _bool(v), "loss -> repair trace: lossy-emu --drop-log, rnic --trace, "
                  "joined per loss into the row's 'trace' (docs/loss-trace.md)"),
    },
}


def _frac(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1:
        raise ValueError(f"{v!r} is not a fraction in (0, 1]")
    return float(v)


def _vrp_pct(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 100:
        raise ConfigError(f"vrp_loss must be a percentage 0..100, not {v!r}")
    return float(v)


def _relay_buffer(v):
    if v == "auto":
        return v
    parse_size(v)
    return v


def _opt_rate(v):
    if v in ("", None):
        return ""
    parse_rate(v)
    return v


def _bool(v):
    if not isinstance(v, bool):
        raise ValueError(f"{v!r} is not true or false")
    return v


def key_lines(text):
    """Map 'section.key' -> line number, by a light scan of the TOML text."""
    lines, section = {}, ""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip() if not raw.strip().startswith('"') else raw.strip()
        m = re.fullmatch(r"\[\s*([A-Za-z0-9_.-]+)\s*\]", line)
        if m:
            section = m.group(1)
            lines.setdefault(section, n)
            continue
        m = re.match(r"([A-Za-z0-9_-]+|\"[^\"]+\")\s*=", line)
        if m:
            k = m.group(1).strip('"')
            lines.setdefault(f"{section}.{k}" if section else k, n)
    return lines


def defaults():
    cfg = {}
    for sec, keys in SCHEMA.items():
        d = cfg if sec == "" else cfg.setdefault(sec, {})
        for k, (dflt, check, _) in keys.items():
            d[k] = check(dflt) if not isinstance(dflt, bool) else dflt
    return cfg


def validate(raw, where="<config>", lines=None):
    """Check a parsed TOML dict against SCHEMA; returns the full config with defaults."""
    lines = lines or {}
    cfg = defaults()

    def at(key):
        n = lines.get(key)
        return f"{where}:{n}" if n else where

    for sec, val in raw.items():
        if sec in SCHEMA[""]:
            try:
                cfg[sec] = SCHEMA[""][sec][1](val)
            except ValueError as e:
                raise ConfigError(f"{at(sec)}: key '{sec}': {e}") from None
            continue
        if sec not in SCHEMA or sec == "":
            allowed = ", ".join([f"[{s}]" for s in SCHEMA if s] + list(SCHEMA[""]))
            raise ConfigError(f"{at(sec)}: unknown section or key '{sec}' (allowed: {allowed})")
        if not isinstance(val, dict):
            raise ConfigError(f"{at(sec)}: '{sec}' must be a table ([{sec}])")
        for k, v in val.items():
            full = f"{sec}.{k}"
            if k not in SCHEMA[sec]:
                raise ConfigError(f"{at(full)}: unknown key '{full}' (allowed in [{sec}]: "
                                  f"{', '.join(SCHEMA[sec])})")
            try:
                cfg[sec][k] = SCHEMA[sec][k][1](v)
            except ValueError as e:
                raise ConfigError(f"{at(full)}: key '{full}': {e}") from None
    return cfg


def load(path):
    """Read and validate a TOML file; ConfigError names file:line and key."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
    except OSError as e:
        raise ConfigError(f"{path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: TOML syntax error: {e}") from None
    return validate(raw, path, key_lines(text))


def override(cfg, assignment):
    """Apply 'section.key=value' (value parsed as TOML, else taken as a string)."""
    if "=" not in assignment or "." not in assignment.split("=", 1)[0]:
        raise ConfigError(f"override '{assignment}': expected SECTION.KEY=VALUE, e.g. link.rtt=40ms")
    key, val = assignment.split("=", 1)
    sec, k = key.strip().split(".", 1)
    try:
        v = tomllib.loads(f"v = {val}")["v"]
    except tomllib.TOMLDecodeError:
        v = val.strip()
    raw = {sec: {k: v}}
    merged = copy.deepcopy(cfg)
    checked = validate(raw, f"override '{assignment}'")
    merged[sec][k] = checked[sec][k]
    return merged


def describe_schema():
    """Text for --help: every key with its default and meaning."""
    out = []
    for sec, keys in SCHEMA.items():
        if sec:
            out.append(f"[{sec}]")
        for k, (dflt, _, help_) in keys.items():
            out.append(f"  {k} = {dflt!r:<12} {help_}")
    return "\n".join(out)
