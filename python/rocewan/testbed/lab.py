"""Lab mode, real machines ([lab] keys, docs/lab.md): the per-host commands of an
experiment (`testbed lab`) and the reduction of the three JSON files a run on real
hosts writes into one result row (`testbed reduce`)."""
import json

from . import report, runner
from .config import ConfigError
from .experiments import load_cfg


def lab_commands(cfg):
    """Per-host command lines of one experiment on real machines ([lab] keys)."""
    lab = cfg["lab"]
    missing = [k for k in ("a_host", "a_port", "a_kernel_ip", "a_rnic_ip", "b_host", "b_port",
                           "b_kernel_ip", "b_rnic_ip", "emu_host", "emu_ports") if not lab[k]]
    if missing:
        raise ConfigError(f"lab mode needs [lab] keys: {', '.join(missing)} (see docs/lab.md)")

    def port(p):
        return p if p.startswith("--vdev") else f"-a {p}"
    ports = [x.strip() for x in lab["emu_ports"].split(",")]
    if len(ports) != 2:
        raise ConfigError(f"[lab] emu_ports = '{lab['emu_ports']}': give two ports, side A first (P0,P1)")
    spec = runner.link_specs(cfg)
    opts = runner.rnic_opts(cfg)
    b = lab["bin_dir"]
    eal = "-l 0 --in-memory --log-level=lib.eal:error"
    return [
        (lab["emu_host"], "1. start, leave running; stop with SIGINT after the run (writes emu.json)",
         f"{b}/app/lossy-emu/lossy-emu -l 0-2 --in-memory {port(ports[0])} {port(ports[1])} -- "
         f"--a2b '{spec['a2b']}' --b2a '{spec['b2a']}' --seed {cfg['run']['seed']} --busy-poll --json emu.json"),
        (lab["b_host"], "2. the server: start, it waits for rnic A",
         f"{b}/app/rnic/rnic {eal} {port(lab['b_port'])} -- --ip {lab['b_rnic_ip']} {opts} "
         f"--json rnicB.json write_bw"),
        (lab["a_host"], "3. the client: runs the workload",
         f"{b}/app/rnic/rnic {eal} {port(lab['a_port'])} -- --ip {lab['a_rnic_ip']} {opts} "
         f"--json rnicA.json write_bw {lab['b_kernel_ip']}"),
    ]


def print_commands(cfg_path: str, sets: list[str] | None = None) -> int:
    """`testbed lab`: the per-host ssh commands of a config's [lab] topology."""
    cfg = load_cfg(cfg_path, sets, False)
    print(f"# {cfg['name']}: per-host commands (run as root; then collect the three JSON files and\n"
          f"#   ./testbed reduce {cfg_path} --emu emu.json --rnic-a rnicA.json --rnic-b rnicB.json)")
    for host, what, cmd in lab_commands(cfg):
        print(f"\n# {what}\nssh {host} {json.dumps(cmd)}")
    return 0


def reduce(cfg_path: str, emu: str, rnic_a: str, rnic_b: str, sets: list[str] | None = None,
           out: str | None = None) -> int:
    """`testbed reduce`: the three JSON files of a run on real hosts -> one result row."""
    cfg = load_cfg(cfg_path, sets, False)
    docs = {}
    for k, path in (("emu", emu), ("rnicA", rnic_a), ("rnicB", rnic_b)):
        try:
            docs[k] = json.load(open(path))
        except (OSError, ValueError) as e:
            raise ConfigError(f"{path}: cannot read {k}'s JSON: {e}") from None
        if docs[k].get("schema") != "rocewan/1":
            raise ConfigError(f"{path}: not a rocewan/1 result document")
    row = runner.reduce(cfg, docs, runner.link_specs(cfg))
    row["case"] = cfg["name"]
    print(report.table([row]))
    if out:
        report.write_doc(out, cfg, [row])
        print(f"results: {out}")
    return 0
