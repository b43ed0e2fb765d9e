"""Documented commands are run by tests or marked: scripts/doc_commands.py --check.

Every command block of README.md and docs/*.md carries a <!-- cmd: CLASS ... -->
line naming what runs it (a test, make test, make bench), or marks it as a
recorded measurement or an example that needs hardware. The negative controls
show the checker refuses an unmarked block, a test reference to nothing and a
"hardware" block without hardware.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_commands as dc  # noqa: E402


def test_every_documented_command_is_classified():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "doc_commands.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = dc.scan(ROOT)
    assert len(rows) >= 16 and all(kind for _, _, kind, _, _, _ in rows)


def write_doc(tmp_path, text):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# x\n")
    (tmp_path / "docs" / "a.md").write_text(text)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_runs_it():\n    pass\n")
    return dc.scan(str(tmp_path))


def test_unmarked_block_is_reported(tmp_path):
    rows = write_doc(tmp_path, "text\n\n```sh\nrnic --no-huge -- --help\n```\n\n```\na diagram\n```\n")
    assert len(rows) == 1 and rows[0][1] == 3 and rows[0][2] is None and "no <!-- cmd" in rows[0][5]


def test_prompt_line_makes_a_command_block(tmp_path):
    rows = write_doc(tmp_path, "```\n$ ./testbed run bad.toml\nerror\n```\n")
    assert len(rows) == 1 and rows[0][5]


def test_references_are_checked(tmp_path):
    rows = write_doc(tmp_path,
                     "<!-- cmd: test tests/test_x.py::test_runs_it -->\n```sh\nok\n```\n"
                     "<!-- cmd: test tests/test_x.py::test_gone -->\n```sh\nx\n```\n"
                     "<!-- cmd: test tests/none.py -->\n```sh\nx\n```\n"
                     "<!-- cmd: hardware -->\n```sh\nrnic --vdev net_null0 -- write_bw\n```\n"
                     "<!-- cmd: hardware -->\n```sh\nrnic -a 0000:3b:00.0 -- write_bw\n```\n"
                     "<!-- cmd: ci -->\n```sh\npytest tests/gone.py\n```\n"
                     "<!-- cmd: record -->\n```sh\nx\n```\n"
                     "<!-- cmd: maybe later -->\n```sh\nx\n```\n")
    why = [r[5] for r in rows]
    assert why[0] is None and why[4] is None
    assert "has no test test_gone" in why[1]
    assert "no such file" in why[2]
    assert "names no PCI address" in why[3]
    assert "do not exist: tests/gone.py" in why[5]
    assert "needs a reason" in why[6]
    assert "unknown class" in why[7]
