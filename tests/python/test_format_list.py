"""Every C source git tracks under lib/ app/ tests/ bench/ tools/ is in
scripts/format-files.txt, so `make test`'s clang-format check covers the whole
tree, and a new file cannot slip past it."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIRS = ("lib/", "app/", "tests/", "bench/", "tools/")


def test_every_c_file_is_format_checked():
    r = subprocess.run(["git", "ls-files", "*.c", "*.h"], cwd=ROOT, capture_output=True, text=True)
    if r.returncode:
        import pytest
        pytest.skip("not a git checkout")
    tracked = {f for f in r.stdout.split() if f.startswith(DIRS)}
    with open(os.path.join(ROOT, "scripts", "format-files.txt")) as f:
        listed = {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}
    assert sorted(tracked - listed) == [], "add these to scripts/format-files.txt (clang-format -i first)"
    assert sorted(listed - tracked) == [], "scripts/format-files.txt names files git does not track"
