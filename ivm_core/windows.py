"""Window functions in a SELECT list, as the analyzer meets them (the rule is ``rules.window``).

Spark evaluates a query's windows after its WHERE, GROUP BY and HAVING and before its DISTINCT
and ORDER BY. So the analyzer takes each window call out of the SELECT list first (``extract``:
a placeholder stands in its place), builds the query below it as usual — the call's arguments,
``PARTITION BY`` and ``ORDER BY`` expressions are rewritten like any expression of the SELECT
list, over the joined or the grouped rows — and then adds, for each distinct ``PARTITION BY``,
a ``Window`` node computing its calls, and above it the bag state of its output rows that the
rule reads back (the compiler drops that state when the model's target holds the window's
partitions: ``rules.window_result``).

Any function Spark evaluates over a window is accepted (ranking, ``lag``/``lead``,
``first_value``/``last_value``/``nth_value``, aggregates, any frame): Spark computes it over
each touched partition, and retractions are the rows the state holds, so the function needs no
rule of its own. A window without ``PARTITION BY`` is refused: a change to any row recomputes all
rows, which is a full recompute.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from ivm_core.errors import UnsupportedSql
from ivm_core.plan import own_scope
from ivm_core.sqltext import DIALECT

PLACEHOLDER = "_ivm_window_"


@dataclass(frozen=True)
class WrittenWindow:
    """A window call of a SELECT list, as written (columns as the SQL names them)."""

    placeholder: str
    call: exp.Window

    @property
    def function(self) -> exp.Expression:
        """The window function (inside ``IGNORE NULLS``/``RESPECT NULLS``)."""
        func = self.call.this
        while isinstance(func, (exp.IgnoreNulls, exp.RespectNulls)):
            func = func.this
        return func

    def parts(self) -> list[exp.Expression]:
        """Every expression the call evaluates: the function's arguments, then the
        ``PARTITION BY`` expressions, then the ``ORDER BY`` expressions."""
        func = self.function
        args = [func.args[key] if index is None else func.args[key][index] for key, index in _slots(func)]
        order = self.call.args.get("order")
        ordered = [item.this for item in order.expressions] if order is not None else []
        return args + list(self.call.args.get("partition_by") or []) + ordered

    @property
    def partition_width(self) -> int:
        return len(self.call.args.get("partition_by") or [])

    def rebuilt(self, parts: list[exp.Expression]) -> exp.Window:
        """The call over ``parts`` (rewritten ``parts()``, in their order)."""
        call = self.call.copy()
        func = call.this
        while isinstance(func, (exp.IgnoreNulls, exp.RespectNulls)):
            func = func.this
        rest = list(parts)
        for key, index in _slots(func):
            value = rest.pop(0)
            func.set(key, value, index=index)
        call.set("partition_by", rest[:self.partition_width])
        rest = rest[self.partition_width:]
        order = call.args.get("order")
        for item in order.expressions if order is not None else []:
            item.set("this", rest.pop(0))
        return call


def _slots(func: exp.Expression) -> list[tuple[str, int | None]]:
    """Where ``func`` holds its argument expressions: (arg name, index in a list or None)."""
    out: list[tuple[str, int | None]] = []
    for key, value in func.args.items():
        if isinstance(value, exp.Expression):
            out.append((key, None))
        elif isinstance(value, list):
            out += [(key, i) for i, v in enumerate(value) if isinstance(v, exp.Expression)]
    return out


def extract(select: exp.Select) -> tuple[exp.Select, list[WrittenWindow]]:
    """``select`` with each window call of its SELECT list replaced by a placeholder, and the
    calls; ``select`` itself when it has none. Windows anywhere else are refused (Spark refuses
    them too), as are those that cannot be maintained."""
    for key in ("where", "group", "having"):
        clause = select.args.get(key)
        for window in _windows(clause) if clause is not None else []:
            raise UnsupportedSql(window.sql(DIALECT), f"a window function in {key.upper()}")
    if select.args.get("windows"):
        raise UnsupportedSql("WINDOW …", "named windows are not supported yet: write each OVER (…) out")
    if not any(_windows(e) for e in select.expressions):
        return select, []
    select = select.copy()
    written: list[WrittenWindow] = []
    for window in [w for e in select.expressions for w in _windows(e)]:
        _refuse(window)
        written.append(WrittenWindow(f"{PLACEHOLDER}{len(written)}", window.copy()))
        window.replace(exp.Placeholder(this=written[-1].placeholder))
    return select, written


def _windows(e: exp.Expression) -> list[exp.Window]:
    return [n for n in own_scope(e) if isinstance(n, exp.Window)]


def _refuse(call: exp.Window) -> None:
    if not call.args.get("partition_by"):
        raise UnsupportedSql(
            call.sql(DIALECT),
            "a window without PARTITION BY is one partition over all rows: any change recomputes all of it, "
            "which is a full recompute",
        )
    for inner in call.find_all(exp.Query):
        raise UnsupportedSql(inner.sql(DIALECT), "a subquery in a window call is not supported yet")


def placeholder(node: exp.Expression) -> str | None:
    """The placeholder's window, when ``node`` stands in for one."""
    if isinstance(node, exp.Placeholder) and str(node.this).startswith(PLACEHOLDER):
        return str(node.this)
    return None
