#!/usr/bin/env python3
"""The Python package as pip installs it, against PyPI's Scapy (make test runs this
after the Python tests with Debian's interpreter and Scapy 2.5; docs/python.md).

1. A venv (no --system-site-packages: pip would take Debian's Scapy 2.5 as meeting
   the requirement) with the package (a copy of python/, so the checkout gets no
   build/ of setuptools) and pytest installed by pip under
   python/constraints-test.txt (Scapy 2.8.0). tests/python runs in it with
   PYTHONPATH unset and ROCEWAN_VENV set, so test_package.py asserts that it tests
   the installed package and the pinned Scapy.
2. A wheel (pip wheel --no-deps) installed into a clean venv without extras:
   matplotlib is not pulled; `rocewan validate --json` on the rxe capture exits 0
   (schema rocewan/1), on a copy with one payload byte flipped 1, on a truncated
   copy 2; a user's script sees FEC's repair layer; `rocewan-testbed` without
   ROCEWAN_ROOT exits 2 naming it.
3. An editable install (pip install -e python/): the package is the checkout's,
   which rocewan-testbed finds without ROCEWAN_ROOT.

Needs PyPI (or the index pip is configured with): when pip cannot install, this
fails and names the index. pip's downloads are cached in BUILD/pip-cache.
Usage: venv_run.py [BUILD] (default $ROCEWAN_BUILD, else build/). Exit 0 when every
check passed, 1 otherwise.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
PYDIR = os.path.join(REPO, "python")
CONSTRAINTS = os.path.join(PYDIR, "constraints-test.txt")
RXE_PCAP = os.path.join(REPO, "tests", "golden", "rxe-ib_write_bw-4096.pcap")
FEC_PCAP = os.path.join(REPO, "tests", "golden", "fec-xor-rs.pcap")
BASE_PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

failures = []


def log(msg):
    print(f"venv_run: {msg}", flush=True)


def check(ok, what, detail=""):
    log(("ok   " if ok else "FAIL ") + what + ("" if ok else f"\n{detail}"))
    if not ok:
        failures.append(what)
    return ok


def run(cmd, env=None, cwd=None, timeout=900):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


def clean_env(**extra):
    """The environment without PYTHONPATH (and without a caller's ROCEWAN_ROOT)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ROCEWAN_ROOT", "ROCEWAN_VENV")}
    env.update(extra)
    return env


def index_name(pip):
    """The index pip installs from, as pip's configuration and environment say."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    r = run([pip, "config", "list"], env=clean_env())
    m = re.search(r"index-url='([^']+)'", r.stdout)
    return m.group(1) if m else "PyPI (pip's default index; no index-url configured)"


def pip_install(pip, args, env, what, target=None):
    """pip install under the constraints (into the interpreter ``target``'s environment, else
    pip's own); on failure report it with the index named."""
    where = ["--python", target] if target else []   # a general option: before the command
    r = run([pip] + where + ["install", "--disable-pip-version-check", "-c", CONSTRAINTS] + args, env=env)
    if r.returncode != 0:
        check(False, f"{what}: pip could not install from {index_name(pip)} (is it reachable?)",
              (r.stdout[-3000:] + r.stderr[-3000:]).strip())
        return False
    return True


def make_venv(path, with_pip):
    shutil.rmtree(path, ignore_errors=True)
    r = run([BASE_PY, "-m", "venv"] + ([] if with_pip else ["--without-pip"]) + [path])
    return check(r.returncode == 0, f"python3 -m venv {path}",
                 r.stderr + "\n(Debian: apt-get install python3-venv; scripts/bootstrap.sh installs it)")


def source_copy(dst):
    """python/ without what setuptools or Python leave in it."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(PYDIR, dst, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    return dst


def first_roce_payload_offset(data):
    """File offset of a byte inside the payload of the first large RoCEv2 frame (UDP 4791)
    of a little-endian microsecond pcap."""
    off = 24
    while off + 16 <= len(data):
        caplen = int.from_bytes(data[off + 8:off + 12], "little")
        frame = data[off + 16:off + 16 + caplen]
        if caplen > 1000 and frame[12:14] == b"\x08\x00" and frame[23] == 17 and \
                int.from_bytes(frame[36:38], "big") == 4791:
            return off + 16 + caplen - 100      # in the RDMA payload, before the ICRC
        off += 16 + caplen
    raise SystemExit("no large RoCEv2 frame in " + RXE_PCAP)


def venv_tests(work, env):
    """Step 1: tests/python in a venv with the installed package and Scapy 2.8.0, started in
    the background; (venv, (process, log)), or (None, None) when the venv could not be made."""
    venv = os.path.join(work, "venv")
    if not make_venv(venv, with_pip=True):
        return None, None
    pip = os.path.join(venv, "bin", "pip")
    src = source_copy(os.path.join(work, "src"))
    t = time.monotonic()
    if not pip_install(pip, [src, "pytest"], env, "the package and pytest into the venv"):
        return None, None
    log(f"installed in {time.monotonic() - t:.0f} s: " +
        run([pip, "list", "--format=freeze"], env=env).stdout.replace("\n", " "))
    if os.environ.get("VENV_RUN_NO_PYTEST") == "1":   # while working on the checks below only
        check(False, "tests/python in the venv: not run (VENV_RUN_NO_PYTEST=1)")
        return venv, None
    penv = dict(env, ROCEWAN_VENV=venv)
    # runs while the wheel and the editable install are checked; its output follows theirs
    logf = open(os.path.join(work, "pytest.log"), "w+")
    proc = subprocess.Popen([os.path.join(venv, "bin", "python"), "-m", "pytest", "-q", "tests/python",
                             "-p", "no:cacheprovider"], env=penv, cwd=REPO, stdout=logf,
                            stderr=subprocess.STDOUT)
    return venv, (proc, logf)


def venv_tests_result(running):
    proc, logf = running
    rc = proc.wait(timeout=1800)
    logf.seek(0)
    print(logf.read(), end="", flush=True)
    check(rc == 0, "tests/python in the venv (installed rocewan, PyPI's Scapy)", f"pytest exited {rc}")


def wheel_checks(work, env, pip):
    """Step 2: a wheel, installed into a clean venv without extras."""
    wdir = os.path.join(work, "wheel")
    shutil.rmtree(wdir, ignore_errors=True)
    src = source_copy(os.path.join(work, "src-wheel"))
    r = run([pip, "wheel", "--disable-pip-version-check", "--no-deps", "-w", wdir, src], env=env)
    wheels = sorted(f for f in os.listdir(wdir) if f.endswith(".whl")) if os.path.isdir(wdir) else []
    if not check(r.returncode == 0 and len(wheels) == 1 and wheels[0].startswith("rocewan-"),
                 f"pip wheel --no-deps: {wheels}", r.stdout[-2000:] + r.stderr[-2000:]):
        return
    venv = os.path.join(work, "wheel-venv")
    if not make_venv(venv, with_pip=False):
        return
    py = os.path.join(venv, "bin", "python")
    if not pip_install(pip, [os.path.join(wdir, wheels[0])], env, "the wheel", target=py):
        return
    r = run([py, "-c", "import importlib.util as u, scapy, rocewan; "
             "print(scapy.VERSION, u.find_spec('matplotlib') is None, rocewan.__file__)"], env=env)
    check(r.returncode == 0 and r.stdout.split()[:2] == ["2.8.0", "True"]
          and r.stdout.split()[2].startswith(venv + os.sep),
          "the wheel's venv: Scapy 2.8.0, no matplotlib, rocewan from the venv", r.stdout + r.stderr)
    exe = os.path.join(venv, "bin", "rocewan")
    if not check(os.access(exe, os.X_OK), "the wheel installed the console scripts into its venv"):
        return
    out = os.path.join(work, "validate.json")
    r = run([exe, "validate", "--json", out, RXE_PCAP], env=env, cwd=work)
    doc = json.load(open(out)) if os.path.exists(out) else {}
    check(r.returncode == 0 and doc.get("schema") == "rocewan/1" and doc["results"]["roce_ok_pkts"] == 25,
          "rocewan validate --json on the rxe capture: exit 0, rocewan/1, 25 frames ok",
          f"exit {r.returncode} {r.stderr[-2000:]} {doc.get('schema')}")
    data = bytearray(open(RXE_PCAP, "rb").read())
    flipped = os.path.join(work, "flipped.pcap")
    data[first_roce_payload_offset(data)] ^= 0x01
    open(flipped, "wb").write(data)
    r = run([exe, "validate", flipped], env=env)
    check(r.returncode == 1 and "BAD_ICRC" in r.stdout, "one payload byte flipped: exit 1, BAD_ICRC",
          f"exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    cut = os.path.join(work, "truncated.pcap")
    open(cut, "wb").write(open(RXE_PCAP, "rb").read()[:3000])
    r = run([exe, "validate", cut], env=env)
    check(r.returncode == 2 and "truncated" in r.stderr and "Traceback" not in r.stderr,
          "a truncated copy: exit 2", f"exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    user = ("import rocewan.layers\nfrom scapy.all import rdpcap\nfrom scapy.packet import Raw\n"
            "ps = [p for p in rdpcap(%r) if p.haslayer('BTH') and p['BTH'].opcode in (0xD0, 0xD1)]\n"
            "print(len(ps), sum(type(p['BTH'].payload) is rocewan.layers.FRH for p in ps))\n" % FEC_PCAP)
    r = run([py, "-c", user], env=env, cwd=work)
    check(r.returncode == 0 and r.stdout.split() == ["20", "20"],
          "a user's script: import rocewan.layers, rdpcap(fec-xor-rs.pcap): 20 of 20 FEC frames have FRH",
          r.stdout + r.stderr)
    r = run([os.path.join(venv, "bin", "rocewan-testbed"), "run", "configs/gbn-lossy.toml", "--quick"],
            env=env, cwd=work)
    check(r.returncode == 2 and "set ROCEWAN_ROOT" in r.stderr,
          "rocewan-testbed without ROCEWAN_ROOT: exit 2 naming it", f"exit {r.returncode}\n{r.stderr}")
    r = run([os.path.join(venv, "bin", "rocewan-testbed"), "run", "configs/gbn-lossy.toml", "--quick"],
            env=dict(env, ROCEWAN_ROOT=REPO), cwd=work)
    check(r.returncode == 2 and "needs matplotlib: install the testbed extra" in r.stderr,
          "rocewan-testbed run without the testbed extra: exit 2 before running, naming the extra",
          f"exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    r = run([os.path.join(venv, "bin", "rocewan-testbed"), "--help"], env=env, cwd=work)
    check(r.returncode == 0 and "usage: rocewan-testbed" in r.stdout, "rocewan-testbed --help", r.stderr)
    for args in (["--help"], ["golden"]):
        r = run([exe] + args, env=env, cwd=work)
        want = 0 if args == ["--help"] else 2
        check(r.returncode == want and (want == 0 or "ROCEWAN_ROOT" in r.stderr),
              f"rocewan {' '.join(args)}: exit {want}", f"exit {r.returncode}\n{r.stderr}")


def editable_checks(work, env, pip):
    """Step 3: pip install -e python/: the checkout's files, found by rocewan-testbed."""
    venv = os.path.join(work, "edit-venv")
    if not make_venv(venv, with_pip=False):
        return
    py = os.path.join(venv, "bin", "python")
    if not pip_install(pip, ["-e", PYDIR], env, "the editable install", target=py):
        return
    r = run([py, "-c", "import rocewan, rocewan.checkout as c; print(rocewan.__file__); print(c.root())"],
            env=env, cwd=work)
    lines = r.stdout.split("\n")
    check(r.returncode == 0 and os.path.realpath(lines[0]).startswith(os.path.realpath(PYDIR) + os.sep)
          and os.path.realpath(lines[1]) == os.path.realpath(REPO),
          "editable install: rocewan is the checkout's python/rocewan and finds the checkout",
          r.stdout + r.stderr)
    r = run([os.path.join(venv, "bin", "rocewan-testbed"), "--help"], env=env, cwd=work)
    check(r.returncode == 0, "editable rocewan-testbed --help", r.stderr)


def main(argv):
    default = os.environ.get("ROCEWAN_BUILD", os.path.join(REPO, "build"))
    build = os.path.abspath(argv[1] if len(argv) > 1 else default)
    work = os.path.join(build, "pyvenv")
    os.makedirs(work, exist_ok=True)
    env = clean_env(PIP_CACHE_DIR=os.path.join(build, "pip-cache"), ROCEWAN_BUILD=build,
                    PIP_NO_INPUT="1")
    t0 = time.monotonic()
    venv, running = venv_tests(work, env)
    if venv is not None:
        pip = os.path.join(venv, "bin", "pip")
        try:
            wheel_checks(work, env, pip)
            editable_checks(work, env, pip)
        finally:
            if running:
                venv_tests_result(running)
    log(f"{time.monotonic() - t0:.0f} s")
    if failures:
        log(f"FAILED: {len(failures)} check(s): " + "; ".join(failures))
        return 1
    log("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
