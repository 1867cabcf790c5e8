"""Views inlined into a model's SQL (SPEC §2.4): a view is transparent, its SQL read in place of
its name, so the tables under it are the model's inputs.

Every reference to an inlined view's relation (``schema.view``, lower case as ``normalize_table_name``
says, with or without a catalog) is replaced by the view's SQL as a parenthesized subquery under
the reference's alias (the view's table name when it had none), the views it reads inlined in
turn. The references are found on sqlglot's parse of the SQL and the subqueries spliced at the
positions it records for them (``sqltext.with_tables_replaced``): every other character of the
model's and the views' SQL is kept as written, since sqlglot's rendering is not always Spark's
meaning.
"""

from __future__ import annotations

import re
from typing import Mapping, Optional, Sequence

import sqlglot
from sqlglot import exp

from ivm_core.analyzer import normalize_table_name, nondeterministic_call
from ivm_core.errors import AnalysisError
from ivm_core.sqltext import DIALECT, indent, quote, with_tables_replaced


def parse_query(sql: str) -> exp.Query:
    """The one query ``sql`` is; AnalysisError when it cannot be parsed or is not one SELECT."""
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
    except sqlglot.errors.ParseError as e:
        raise AnalysisError(f"cannot be parsed: {str(e).splitlines()[0]}") from e
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise AnalysisError("is not one SELECT query")
    return statements[0]


def _cte_names(tree: exp.Expr) -> set[str]:
    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


def _is_relation(table: exp.Table, ctes: set[str]) -> bool:
    """Whether a table reference names a relation of the catalog (not a CTE, not a time-travel
    read, which reads what it names)."""
    if not isinstance(table.this, exp.Identifier) or table.args.get("version") or table.args.get("when"):
        return False
    return table.args.get("db") is not None or table.name.lower() not in ctes


def relations_read(tree: exp.Expr) -> set[str]:
    """The ``schema.table`` keys (lower case) of the relations ``tree`` reads, its CTEs aside; an
    unqualified relation as its bare name."""
    ctes = _cte_names(tree)
    return {normalize_table_name(t) for t in tree.find_all(exp.Table) if _is_relation(t, ctes)}


def qualified(sql: str, tree: exp.Expr, schema: str) -> str:
    """``sql`` with every unqualified relation it reads (not a CTE) named in ``schema``: the text
    of a view from the catalog names relations as its author's session did."""
    ctes = _cte_names(tree)
    spans = []
    for table in tree.find_all(exp.Table):
        if table.args.get("db") is not None or not _is_relation(table, ctes):
            continue
        start = table.this.meta.get("start")
        if start is None:
            raise ValueError(f"no position of {table.sql(dialect=DIALECT)} in the parsed SQL")
        spans.append(start)
    out, at = [], 0
    for start in sorted(spans):
        out += [sql[at:start], quote(schema) + "."]
        at = start
    return "".join(out) + sql[at:]


def renamed(sql: str, names: Sequence[str], columns: Sequence[str]) -> str:
    """``sql`` (whose result columns are ``names``) with its columns named ``columns``, by
    position: a view declared with a column list (``CREATE VIEW v (a, b) AS ...``)."""
    outputs = ", ".join(f"_ivm_view.{quote(n)} AS {quote(c)}" for n, c in zip(names, columns))
    return f"SELECT {outputs}\nFROM (\n{indent(sql)}\n) AS _ivm_view"


def plain_names(names: Sequence[str]) -> bool:
    """Whether every result column name is one Spark would give the query too (an identifier,
    not the rendering of an unaliased expression)."""
    return all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in names)


def why_not_inlined(sql: str) -> Optional[str]:
    """Why a view's SQL cannot be inlined into a model's before its inputs are known: it cannot
    be parsed, or it calls a non-deterministic function (every read of the view computes other
    rows: no stored result stays equal to it). None: it may be."""
    try:
        tree = parse_query(sql)
    except AnalysisError as e:
        return f"its SQL {e}"
    call = nondeterministic_call(tree)
    if call is not None:
        return f"its SQL calls {call}, a non-deterministic function (each read of the view computes other rows)"
    return None


def inline_views(sql: str, views: Mapping[str, str]) -> str:
    """``sql`` with every reference to a view of ``views`` (``schema.view`` key -> its SQL, whose
    relations are qualified) replaced by that view's SQL, recursively: a view over a view."""
    expanded: dict[str, str] = {}

    def expand(key: str, within: tuple[str, ...]) -> str:
        if key in within:
            raise AnalysisError(f"the views {' -> '.join(within + (key,))} read each other")
        if key not in expanded:
            expanded[key] = substitute(views[key], within + (key,))
        return expanded[key]

    def substitute(text: str, within: tuple[str, ...]) -> str:
        tree = parse_query(text)
        ctes = _cte_names(tree)

        def replacement(table: exp.Table) -> Optional[str]:
            if not _is_relation(table, ctes) or table.args.get("db") is None:
                return None
            key = normalize_table_name(table)
            return expand(key, within) if key in views else None

        return with_tables_replaced(text, tree, replacement)

    return substitute(sql, ()) if views else sql
