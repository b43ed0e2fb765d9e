"""docs/verbs.md's command blocks, run as written on a VethPair: the names that must differ
on a shared host (namespaces, interfaces, addresses, the build directory, the JSON path)
are replaced, nothing else."""
import os
import re
import subprocess
import sys

from conftest import BUILD, ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verbs"))
import doc_commands as dc  # noqa: E402
from harness import wait_listen  # noqa: E402


def block(starts_with, contains):
    found = [body for _, lang, body, _ in dc.blocks(os.path.join(ROOT, "docs", "verbs.md"))
             if dc.is_command(lang, body) and body.startswith(starts_with) and contains in body]
    assert len(found) == 1, f"docs/verbs.md: {len(found)} blocks {starts_with!r} / {contains!r}"
    return found[0]


def localise(cmd, vp, tmp_path):
    subs = [("nsA", vp.ns[0]), ("nsB", vp.ns[1]), ("iface=vA", f"iface={vp.ifs[0]}"),
            ("iface=vB", f"iface={vp.ifs[1]}"), ("10.0.0.11", vp.rip[0]),
            ("10.0.0.12", vp.rip[1]), ("build/", BUILD + "/"),
            ("server-%p.json", str(tmp_path / "server-%p.json"))]
    for a, b in subs:
        cmd = cmd.replace(a, b)
    return re.sub(r"\b10\.0\.0\.2\b", vp.kip[1], cmd)


def test_quick_start(veth_pair, tmp_path):
    srv = localise(block("ip netns exec nsB", "ibv_rc_pingpong"), veth_pair, tmp_path)
    cli = localise(block("ip netns exec nsA", "ibv_rc_pingpong"), veth_pair, tmp_path)
    s = subprocess.Popen(srv, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    assert wait_listen(veth_pair.ns[1], 18515, s), s.communicate()[0]
    c = subprocess.run(cli, shell=True, capture_output=True, text=True, timeout=60,
                       start_new_session=True)
    sout, _ = s.communicate(timeout=60)
    assert c.returncode == 0 and s.returncode == 0, c.stdout + c.stderr + sout
    assert "100 iters in" in c.stdout and "100 iters in" in sout, c.stdout + sout
    assert len(list(tmp_path.glob("server-*.json"))) == 1


def test_env_without_launcher(veth_pair, tmp_path):
    cmd = localise(block("ip netns exec nsA env LD_PRELOAD", "ibv_devinfo"), veth_pair,
                   tmp_path)
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "hca_id:\trnic0" in r.stdout and "PORT_ACTIVE" in r.stdout, r.stdout
