"""The Python package's import structure: no import cycle anywhere in python/, hidden
ones included (an import inside a function is an edge like any other), and every
module imports on its own in a fresh interpreter."""
import ast
import os
import subprocess
import sys

import pytest

PYDIR = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "python"))


def modules(root):
    """{dotted module name: path} of every .py file under root (packages by __init__)."""
    mods = {}
    for d, dirs, files in os.walk(root):
        # packages only: not what setuptools leaves beside them (build/, *.egg-info)
        dirs[:] = [s for s in dirs if os.path.isfile(os.path.join(d, s, "__init__.py"))]
        for f in files:
            if not f.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(d, f), root)[:-3].split(os.sep)
            if rel[-1] == "__init__":
                rel = rel[:-1]
            mods[".".join(rel)] = os.path.join(d, f)
    return mods


def import_graph(root):
    """{module: set of the package's modules it imports}, from every import statement
    in the module's source, at any depth (module level, functions, branches)."""
    mods = modules(root)
    graph = {}
    for name, path in mods.items():
        is_pkg = os.path.basename(path) == "__init__.py"
        pkg = name if is_pkg else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(open(path).read(), path)):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg.split(".")[:len(pkg.split(".")) - (node.level - 1)]
                    base = ".".join(base + ([node.module] if node.module else []))
                else:
                    base = node.module
                # `from P import x`: the module P.x when x is one, else P itself
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in mods:  # `import a.b.c` of a non-module: its nearest module
                    t = t.rpartition(".")[0]
                if t and t != name:
                    edges.add(t)
        graph[name] = edges
    return graph


def cycles(graph):
    """Every import cycle, each as a list of modules ending where it starts (Tarjan's
    strongly connected components; a component of two or more modules is a cycle)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp) + [sorted(comp)[0]])

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_in_python_dir():
    graph = import_graph(PYDIR)
    assert "rocewan.testbed.cli" in graph and "rocewan.testbed.repro.goback" in graph
    assert cycles(graph) == [], f"import cycles in python/: {cycles(graph)}"


def test_cycle_checker_finds_a_cycle_hidden_in_a_function(tmp_path):
    """Negative control: the shape the testbed had (swing.py importing cli.py inside a
    function while cli.py imports swing) must be reported."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "cli.py").write_text("def run():\n    from .swing import go\n    return go()\n")
    (pkg / "swing.py").write_text("def go():\n    from . import cli\n    return cli\n")
    (pkg / "report.py").write_text("import os\n")
    assert cycles(import_graph(str(tmp_path))) == [["pkg.cli", "pkg.swing", "pkg.cli"]]
    (pkg / "swing.py").write_text("from . import report\n")
    assert cycles(import_graph(str(tmp_path))) == []


@pytest.mark.parametrize("mod", sorted(modules(PYDIR)))
def test_module_imports_standalone(mod):
    """Each module in a fresh interpreter, with nothing imported before it (the rocewan this
    interpreter imports: the checkout's with PYTHONPATH=python, or a venv's installed one)."""
    r = subprocess.run([sys.executable, "-c", f"import {mod}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
