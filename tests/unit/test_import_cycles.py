"""No import cycles in the adapter and the compiler: each module's imports — at the top, inside a
function, or for type checking only — lead only to modules that do not lead back to it. A cycle
means a record lives beside the I/O that fills it, or a step calls back into the one before it."""

import ast
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ivm_core", os.path.join("dbt", "adapters", "spark_ivm"))


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project's modules ``path`` imports; ``from package import module`` names the module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{a.name}" for a in node.names} & modules.keys()
            if submodules:
                found |= submodules
            elif node.module in modules:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names} & modules.keys()
    return found


def import_cycles() -> list[list[str]]:
    """Each set of modules that import one another, in a cycle (Tarjan's strongly connected
    components of more than one module, or a module importing itself)."""
    modules = _modules()
    graph = {m: _imports(p, modules) for m, p in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_cycles():
    cycles = import_cycles()
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_a_cycle_is_found(tmp_path, monkeypatch):
    """The check itself: two modules that import each other are a cycle."""
    package = tmp_path / "ivm_core"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from ivm_core.b import B\nA = 1\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ivm_core.a import A\nB = 2\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    monkeypatch.setattr(f"{__name__}.PACKAGES", ("ivm_core",))
    assert import_cycles() == [["ivm_core.a", "ivm_core.b"]]
