"""No import cycles in core/tritium or in any in-repo backend, plugin or compat package.

The graph is static (AST): a module imports another when it names it in ``import``/``from ... import`` (a
``from pkg import name`` edge goes to ``pkg.name`` when that is a module, else to ``pkg``) or in
``importlib.import_module("literal")``. Imports under ``if TYPE_CHECKING:`` never run and are skipped. Imports
inside functions count too: a lazy import between two modules that import each other only moves the cycle to
run time. Only in-repo modules are nodes, so lazy imports of heavy dependencies outside tritium (MLIR, llvmlite,
CUDA, torch, numpy) never form an edge. A cycle is a strongly connected component of more than one module.
"""
from __future__ import annotations

import ast
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from astwalk import runtime_nodes  # noqa: E402  (tests use importlib mode: a sibling module needs its folder)

REPO = pathlib.Path(__file__).resolve().parents[2]

# Cycles known and being removed: the modules of each, and why it is still there. A cycle found passes when its
# modules all lie in one entry (a cycle that shrinks while being taken apart still passes); an entry that covers
# no cycle any more fails the test, so that it is taken off and the list cannot go stale.
KNOWN: dict[frozenset[str], str] = {}


def packages(repo: pathlib.Path = REPO) -> list[pathlib.Path]:
    """Top-level in-repo packages: core's, every backend's and plugin's, the compat package."""
    found = []
    for init in sorted(repo.glob("*/**/__init__.py")):
        pkg = init.parent
        rel = pkg.relative_to(repo).parts
        if rel[0] not in ("core", "backends", "plugins", "compat") or "tests" in rel or any(
                p.startswith(".") or p in ("build", "__pycache__") for p in rel):
            continue
        if not (pkg.parent / "__init__.py").exists():
            found.append(pkg)
    return found


class Graph:
    def __init__(self, roots: list[pathlib.Path]) -> None:
        self.files: dict[str, pathlib.Path] = {}
        self.packages: set[str] = set()
        for root in roots:
            for path in sorted(root.rglob("*.py")):
                parts = list(path.relative_to(root.parent).with_suffix("").parts)
                if "__pycache__" in parts:
                    continue
                if parts[-1] == "__init__":
                    parts.pop()
                    self.packages.add(".".join(parts))
                self.files[".".join(parts)] = path
        self.edges: dict[str, dict[str, int]] = {m: {} for m in self.files}
        for name, path in self.files.items():
            for target, line in self._imports(name, path):
                if target in self.files and target != name:
                    self.edges[name].setdefault(target, line)

    def _imports(self, name: str, path: pathlib.Path) -> list[tuple[str, int]]:
        package = name if name in self.packages else name.rpartition(".")[0]
        found = []
        for node in runtime_nodes(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found += [(a.name, node.lineno) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    found.append((sub if sub in self.files else target, node.lineno))
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "import_module" and node.args
                  and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.append((node.args[0].value, node.lineno))
        return found

    def cycles(self) -> list[list[str]]:
        """Strongly connected components of more than one module (Tarjan, iterative)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        on_stack: set[str] = set()
        stack: list[str] = []
        out: list[list[str]] = []
        counter = 0
        for start in sorted(self.edges):
            if start in index:
                continue
            work = [(start, iter(sorted(self.edges[start])))]
            index[start] = low[start] = counter
            counter += 1
            stack.append(start)
            on_stack.add(start)
            while work:
                node, it = work[-1]
                for nxt in it:
                    if nxt not in index:
                        index[nxt] = low[nxt] = counter
                        counter += 1
                        stack.append(nxt)
                        on_stack.add(nxt)
                        work.append((nxt, iter(sorted(self.edges[nxt]))))
                        break
                    if nxt in on_stack:
                        low[node] = min(low[node], index[nxt])
                else:
                    work.pop()
                    if work:
                        low[work[-1][0]] = min(low[work[-1][0]], low[node])
                    if low[node] == index[node]:
                        comp = []
                        while True:
                            m = stack.pop()
                            on_stack.discard(m)
                            comp.append(m)
                            if m == node:
                                break
                        if len(comp) > 1:
                            out.append(sorted(comp))
        return sorted(out)

    def describe(self, comp: list[str]) -> str:
        """The component's modules and, for each, the imports that stay inside it (file:line)."""
        members = set(comp)
        lines = [f"cycle of {len(comp)} modules:"]
        for m in comp:
            for t, line in sorted(self.edges[m].items()):
                if t in members:
                    lines.append(f"  {self.files[m].relative_to(REPO) if self.files[m].is_relative_to(REPO) else self.files[m]}"
                                 f":{line}: {m} -> {t}")
        return "\n".join(lines)


def test_no_import_cycles():
    graph = Graph(packages())
    found = graph.cycles()
    new = [graph.describe(c) for c in found if not any(set(c) <= k for k in KNOWN)]
    gone = [sorted(k) for k in KNOWN if not any(set(c) <= k for c in found)]
    assert not new, "import cycles (break them: move the shared part down, or pass it in):\n" + "\n\n".join(new)
    assert not gone, f"known cycles that are gone (take them off KNOWN): {gone}"


def test_packages_found():
    names = {p.name for p in packages()}
    assert {"tritium", "tritium_cpu", "tritium_nvidia", "triton"} <= names, names


def test_checker_finds_cycles(tmp_path):
    """The checker itself: a lazy import closes a cycle, one under TYPE_CHECKING does not, and an import of a
    heavy dependency outside the packages is no edge."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\nimport numpy\n")
    (pkg / "b.py").write_text("def f():\n    from .a import g\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import d\n")
    (pkg / "d.py").write_text("from .c import x\n")
    graph = Graph([pkg])
    assert graph.cycles() == [["pkg.a", "pkg.b"]]
    text = graph.describe(["pkg.a", "pkg.b"])
    assert "a.py:1: pkg.a -> pkg.b" in text and "b.py:2: pkg.b -> pkg.a" in text
