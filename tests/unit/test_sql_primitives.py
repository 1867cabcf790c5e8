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


def _replaced(sql: str, tables: dict[str, str]) -> str:
    import sqlglot
    from sqlglot import exp

    from ivm_core.analyzer import normalize_table_name

    def replacement(table: exp.Table) -> str | None:
        return tables.get(normalize_table_name(table))

    return sqltext.with_tables_replaced(sql, sqlglot.parse_one(sql, read="spark"), replacement)


def test_tables_are_replaced_in_the_text_as_written():
    """A rebuild's SQL is the model's text with its inputs spliced in, every other character as
    the author wrote it: sqlglot renders ``percentile(x, p, frequency)`` without its frequency
    (a different result), and drops comments and spellings Spark reads."""
    sql = ("select g, percentile(x, 0.5, f) as p -- the weighted median\n"
           "from spark_catalog.db.t as a join db.`t` b on a.g = b.g join other.u using (g), db.t")
    got = _replaced(sql, {"db.t": "SELECT 1 AS g"})
    assert got == (
        "select g, percentile(x, 0.5, f) as p -- the weighted median\n"
        "from (\n  SELECT 1 AS g\n) as a join (\n  SELECT 1 AS g\n) b on a.g = b.g join other.u using (g), "
        "(\n  SELECT 1 AS g\n) AS `t`"
    )


def test_a_text_with_no_table_to_replace_is_kept():
    sql = "with t as (select 1 as x) select percentile(x, 0.5, x) from t"
    assert _replaced(sql, {"db.t": "SELECT 2"}) == sql


def test_a_targets_given_properties_win_over_the_adapters_and_are_quoted():
    """A model's ``tblproperties`` reach its target's ``CREATE``: a property the adapter sets too
    takes the model's value, written once; quotes and backslashes are escaped."""
    from ivm_core import statements as st

    sql = st.create_table_as("`s`.`m`", "SELECT 1 AS id", replace=True, sort_key="id",
                             properties=[("write.merge.mode", "copy-on-write"), ("owner", "o'hara \\ team")])
    properties = sql.split("TBLPROPERTIES (", 1)[1].split(")\nAS", 1)[0]
    assert properties.count("'write.merge.mode'") == 1
    assert "'write.merge.mode' = 'copy-on-write'" in properties
    assert "'owner' = 'o\\'hara \\\\ team'" in properties
    assert "'write.metadata.delete-after-commit.enabled' = 'true'" in properties  # the adapter's stay
    assert st.create_table_as("`s`.`m`", "SELECT 1 AS id") == st.create_table_as("`s`.`m`", "SELECT 1 AS id",
                                                                                properties=())
