"""Lab mode, real machines ([lab] keys, docs/lab.md): the per-host commands of an
experiment; `testbed lab` runs them over OpenSSH (ssh itself, one ControlMaster
connection per host), collects each box's --json and reduces them into one result row
as `testbed reduce` does; `testbed lab --print` only prints the commands."""
import json
import os
import shlex
import subprocess
import tempfile

from . import report, runner, topo
from .config import ConfigError
from .experiments import load_cfg

ROLES = ("emu", "rnicB", "rnicA")  # the start order; each role's --json is ROLE.json


class LabError(RuntimeError):
    """A lab run failed; the message names the host."""


def lab_commands(cfg):
    """Per-host command lines of one experiment on real machines ([lab] keys)."""
    lab = cfg["lab"]
    missing = [k for k in ("a_host", "a_port", "a_kernel_ip", "a_rnic_ip", "b_host", "b_port",
                           "b_kernel_ip", "b_rnic_ip", "emu_host", "emu_ports") if not lab[k]]
    if missing:
        raise ConfigError(f"lab mode needs [lab] keys: {', '.join(missing)} (see docs/lab.md)")

    def port(p):
        return p if p.startswith("--vdev") else f"-a {p}"
    # two ports, side A first: "P0,P1", or ";" between them when a port is --vdev text
    # (whose devargs hold commas)
    ports = [x.strip() for x in lab["emu_ports"].split(";" if ";" in lab["emu_ports"] else ",")]
    if len(ports) != 2:
        raise ConfigError(f"[lab] emu_ports = '{lab['emu_ports']}': give two ports, side A first "
                          f"(P0,P1, or P0;P1 when they are --vdev text)")
    spec = runner.link_specs(cfg)
    opts = runner.rnic_opts(cfg)
    b = lab["bin_dir"]
    # a --file-prefix per role: two roles on one host (or other DPDK programs there) keep
    # their runtime files and telemetry sockets apart
    eal = f"{lab['rnic_eal']} --log-level=lib.eal:error"
    extra = f" {lab['emu_extra']}" if lab["emu_extra"] else ""
    return [
        (lab["emu_host"], "1. start, leave running; stop with SIGINT after the run (writes emu.json)",
         f"{b}/app/lossy-emu/lossy-emu {lab['emu_eal']} --file-prefix rwlab-emu {port(ports[0])} "
         f"{port(ports[1])} -- --a2b '{spec['a2b']}' --b2a '{spec['b2a']}' --seed {cfg['run']['seed']}"
         f"{extra} --json emu.json"),
        (lab["b_host"], "2. the server: start, it waits for rnic A",
         f"{b}/app/rnic/rnic {eal} --file-prefix rwlab-b {port(lab['b_port'])} -- --ip {lab['b_rnic_ip']} "
         f"{opts} --json rnicB.json write_bw"),
        (lab["a_host"], "3. the client: runs the workload",
         f"{b}/app/rnic/rnic {eal} --file-prefix rwlab-a {port(lab['a_port'])} -- --ip {lab['a_rnic_ip']} "
         f"{opts} --json rnicA.json write_bw {lab['b_kernel_ip']}"),
    ]


def print_commands(cfg_path: str, sets: list[str] | None = None) -> int:
    """`testbed lab --print`: the per-host ssh commands of a config's [lab] topology."""
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


class Ssh:
    """One lab host over OpenSSH: every call goes through one ControlMaster connection
    (ControlPath in a private local directory), BatchMode (keys from the user's agent or
    ssh config, never a password prompt), and, with [lab] ssh_config, ssh -F FILE."""

    def __init__(self, host, ctl_dir, ssh_config=""):
        self.host = host
        self.base = ["ssh"] + (["-F", ssh_config] if ssh_config else []) + [
            "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
            "-o", "ControlMaster=auto", "-o", f"ControlPath={ctl_dir}/%C", "-o", "ControlPersist=300",
            "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"]

    def argv(self, remote):
        return self.base + [self.host, remote]

    def run(self, remote, timeout=60):
        try:
            return subprocess.run(self.argv(remote), capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise LabError(f"{self.host}: ssh did not return within {timeout} s: {remote[:120]}") from None

    def popen(self, remote):
        # its own session: a Ctrl-C at the terminal reaches the testbed, which stops the
        # remote processes itself (an ssh without a tty would not pass the signal on)
        return subprocess.Popen(self.argv(remote), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True, start_new_session=True)

    def close(self):
        subprocess.run(self.base + ["-O", "exit", self.host], capture_output=True, timeout=30)


def _preflight(sshs, binaries, workdir):
    """Every host answers over ssh and has its binaries; a fresh run directory on each.
    Nothing has started yet when this fails."""
    dirs = {}
    for host, ssh in sshs.items():
        checks = "; ".join(f"[ -x {shlex.quote(b)} ] || echo missing: {shlex.quote(b)}"
                           for b in sorted(binaries[host]))
        r = ssh.run(f"{checks}; mktemp -d {shlex.quote(workdir)}/rocewan-lab.XXXXXX")
        if r.returncode == 255:
            raise LabError(f"{host}: unreachable over ssh: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
        missing = [ln.split(": ", 1)[1] for ln in r.stdout.splitlines() if ln.startswith("missing: ")]
        if missing:
            raise LabError(f"{host}: lacks {', '.join(missing)} (build it there, or set [lab] bin_dir)")
        last = (r.stdout.strip().splitlines() or [""])[-1]
        if r.returncode or not last.startswith("/"):
            raise LabError(f"{host}: cannot make a run directory under {workdir}: {r.stderr.strip()}")
        dirs[host] = last
    return dirs


def _stop_remote(ssh, rdir, role, timeout_s=10):
    """SIGINT (the apps write --json at exit), then SIGKILL after timeout_s; the remote
    shell script returns once the process is gone."""
    pid = f"$(cat {rdir}/{role}.pid 2>/dev/null)"
    n = int(timeout_s / 0.1)
    return ssh.run(f"p={pid}; [ -n \"$p\" ] || exit 0; kill -INT $p 2>/dev/null; i=0; "
                   f"while kill -0 $p 2>/dev/null && [ $i -lt {n} ]; do sleep 0.1; i=$((i+1)); done; "
                   f"kill -KILL $p 2>/dev/null; true", timeout=timeout_s + 30)


def _log(msg):
    print(msg, flush=True)  # progress lines as they happen, also into a pipe


def run_lab(cfg_path: str, sets: list[str] | None = None, out: str | None = None,
            log=_log) -> int:
    """`testbed lab`: run the experiment on the [lab] hosts over ssh, collect the three JSON
    documents, reduce them into the result row `testbed run` makes. Everything it started
    is stopped on the way out, also on an error or Ctrl-C."""
    cfg = load_cfg(cfg_path, sets, False)
    cmds = lab_commands(cfg)
    lab = cfg["lab"]
    out = out or os.path.join(report.RESULTS, f"{cfg['name']}-lab")
    os.makedirs(out, exist_ok=True)
    hosts = {r: h for r, (h, _, _) in zip(ROLES, cmds)}
    binaries = {}
    for r, (h, _, c) in zip(ROLES, cmds):
        binaries.setdefault(h, set()).add(shlex.split(c)[0])
    ctl = tempfile.mkdtemp(prefix="rwlab-")
    sshs = {h: Ssh(h, ctl, lab["ssh_config"]) for h in binaries}
    started, procs, dirs = [], {}, {}
    w = cfg["workload"]
    timeout = 60 + (w["duration"] if w["kind"] == "bulk" else 0) * 3 + \
        (w["flows"] * 0.2 if w["kind"] == "flows" else 0)
    try:
        dirs = _preflight(sshs, binaries, lab["workdir"])

        def start(role, cmd):
            h = hosts[role]
            procs[role] = sshs[h].popen(f"cd {dirs[h]} && echo $$ > {role}.pid && exec {cmd}")
            started.append(role)
            return procs[role]

        heads = {}
        for role, (h, _, cmd) in zip(ROLES, cmds):
            p = start(role, cmd)
            if role == "rnicA":
                break
            ready = "Ctrl-C to stop" if role == "emu" else "Waiting for client"
            try:
                heads[role] = topo.wait_line(p, ready, timeout=120)
            except topo.TopoError as e:
                raise LabError(f"{h}: {role} did not start: {e}") from None
            log(f"{h}: {role} started")
        try:
            out_a, _ = procs["rnicA"].communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise LabError(f"{hosts['rnicA']}: rnic A did not finish within {timeout} s") from None
        try:
            out_b, _ = procs["rnicB"].communicate(timeout=60)
        except subprocess.TimeoutExpired:
            raise LabError(f"{hosts['rnicB']}: rnic B did not exit within 60 s of rnic A") from None
        for role, o, rc in (("rnicA", out_a, procs["rnicA"].returncode),
                            ("rnicB", heads.get("rnicB", "") + out_b, procs["rnicB"].returncode)):
            if rc != 0:
                raise LabError(f"{hosts[role]}: {role} exited {rc}:\n{o[-3000:]}")
        _stop_remote(sshs[hosts["emu"]], dirs[hosts["emu"]], "emu")
        try:
            procs["emu"].communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        paths = {}
        for role in ROLES:
            h = hosts[role]
            r = sshs[h].run(f"cat {dirs[h]}/{role}.json")
            if r.returncode:
                raise LabError(f"{h}: {role} wrote no JSON ({dirs[h]}/{role}.json): {r.stderr.strip()}")
            paths[role] = os.path.join(out, f"{cfg['name']}-{role}.json")
            with open(paths[role], "w") as f:
                f.write(r.stdout)
        log(f"collected {', '.join(paths.values())}")
        result = os.path.join(out, f"{cfg['name']}.json")
        return reduce(cfg_path, paths["emu"], paths["rnicA"], paths["rnicB"], sets=sets, out=result)
    finally:
        # whatever happened: stop every role started, newest first, remove the run
        # directories, close the connections
        for role in reversed(started):
            h = hosts[role]
            try:
                _stop_remote(sshs[h], dirs[h], role)
            except LabError as e:
                log(f"testbed: {e}")
        for p in procs.values():
            if p.poll() is None:
                p.kill()
            p.wait()
        for h, d in dirs.items():
            try:
                sshs[h].run(f"rm -rf {shlex.quote(d)}")
            except LabError:
                pass
        for s in sshs.values():
            s.close()
        try:
            os.rmdir(ctl)
        except OSError:
            pass
