"""The SQL primitives (``ivm_core.sqltext``) are defined once: the statement builders take them
from ``sqltext``, not through ``sqlgen`` (the plan's SQL) or copies of their own."""

from __future__ import annotations

import ast
from pathlib import Path

import ivm_core
from ivm_core import sqltext

CORE = Path(ivm_core.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_statement_builders_do_not_depend_on_the_plan_sql():
    for name in ("statements.py", "bookkeeping.py"):
        imported = _imported_modules(CORE / name)
        assert "ivm_core.sqlgen" not in imported, name
        assert "ivm_core.sqltext" in imported, name


def test_sqltext_imports_nothing_of_ivm_core_but_errors():
    imported = {m for m in _imported_modules(CORE / "sqltext.py") if m.startswith("ivm_core")}
    assert imported <= {"ivm_core.errors"}


def test_one_text_repeats_rows():
    """Every ``LATERAL VIEW explode(sequence(1, n))`` comes from ``sqltext.repeated``."""
    for path in CORE.rglob("*.py"):
        if path.name != "sqltext.py":
            assert "explode(sequence" not in path.read_text(), path
    assert sqltext.repeated("w", "_ivm_a") == "LATERAL VIEW explode(sequence(1, w)) _ivm_a AS _ivm_copy"


def test_one_definition_of_the_column_names():
    for path in CORE.rglob("*.py"):
        if path.name != "sqltext.py":
            text = path.read_text()
            assert f'"{sqltext.WEIGHT}"' not in text and f'"{sqltext.SEQ}"' not in text, path
