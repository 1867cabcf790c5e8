"""Window functions with ``PARTITION BY``: a row's value depends only on the rows of its
partition, so only the partitions a change touches change::

    ΔW(R) = Σ_{p touched by ΔR}  W(R_p + ΔR_p) − W(R_p)

State: the window's output rows ``W(R)``, kept by the bag state the analyzer puts above the
window (an aggregate grouping by every column, each distinct row weighted by its copies:
``Aggregate.keeps_rows``). It is both terms' source: ``W(R_p)`` is what the state holds for
partition ``p`` — exactly the rows emitted before, so a retraction always matches, whatever
order Spark gave rows tied under the window's ``ORDER BY`` — and ``R_p`` is those rows without
the window's columns. A run reads the state's rows of the touched partitions (the distinct
partition keys of the change, a broadcast semi join), adds the change to them, lets Spark
evaluate the window over each touched partition's new rows (every copy a row), and emits the
difference, consolidated: a partition whose values do not move emits nothing for them. The bag
state then takes the change like any aggregate state; its change is the window's change.

The window is recomputed whole for each touched partition: a change to a large partition costs
that partition. A window without ``PARTITION BY`` is one partition, recomputed by every change:
the analyzer refuses it (a full recompute under ``auto``). A window at the top of the model, over
its inputs, whose partition keys the model keeps needs no bag state: the compiler lifts it into a
``WindowResult`` (``rules.window_result``), whose target holds the partitions.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ivm_core.plan import Empty, Node, Window, WindowDelta
from ivm_core.sqltext import WEIGHT, expression, indent, quote, repeated
from ivm_core.statements import consolidated, with_ctes, zset_sum

ZSet = dict[tuple, int]


def delta(node: Window, d, changed: frozenset[str]) -> Node:
    child = d(node.child)
    if isinstance(child, Empty):
        return Empty(node.columns)
    return WindowDelta(node, child)


# -- SQL ----------------------------------------------------------------------------------------

def rows_sql(window: Window, child_sql: str) -> str:
    """The window over a Z-set (``child_sql``: the child's columns and weights): its rows summed
    per row, each copy a row of weight 1 with the calls' values (a negative count fails: rows
    deleted that are not there)."""
    return _evaluated(window, consolidated(child_sql, window.child.columns, refused="a row"))


def _evaluated(window: Window, bag_sql: str) -> str:
    """Each row of ``bag_sql`` (positive weights) repeated by its weight, with the calls."""
    cols = [quote(c) for c in window.child.columns]
    calls = [f"{expression(call)} AS {quote(name)}" for name, call in window.calls]
    return (
        f"SELECT {', '.join(cols + calls)}, CAST(1 AS BIGINT) AS {WEIGHT}\n"
        f"FROM (\n{indent(bag_sql)}\n) AS _ivm_b\n{repeated(WEIGHT, '_ivm_a')}"
    )


def touched_partitions(window: Window, child_delta_sql: str) -> list[tuple[str, str]]:
    """The CTEs a window's change starts from (here and in ``rules.window_result``): the child's
    change (``_ivm_d``) and the distinct partition keys it touches (``_ivm_k``)."""
    keys = ", ".join(quote(k) for k in window.partition)
    return [("_ivm_d", child_delta_sql), ("_ivm_k", f"SELECT DISTINCT {keys} FROM _ivm_d")]


def in_touched_partitions(window: Window, rows_sql: str, keys: Sequence[str] | None = None) -> str:
    """The rows of ``rows_sql`` in a partition ``_ivm_k`` holds, by their ``keys`` (the columns
    holding the window's partition, in its order; default: the partition's own columns): a
    broadcast semi join on the touched keys."""
    on = " AND ".join(f"s.{quote(c)} <=> k.{quote(p)}" for c, p in zip(keys or window.partition, window.partition))
    return f"SELECT /*+ BROADCAST(k) */ s.* FROM (\n{indent(rows_sql)}\n) AS s\nLEFT SEMI JOIN _ivm_k AS k ON {on}"


def delta_sql(window: Window, child_delta_sql: str, held_sql: str) -> str:
    """``Σ_touched W(R_p + ΔR_p) − W(R_p)``, consolidated. ``held_sql``: the window's output rows
    as its state holds them, a Z-set (the window's columns; weights the copies each appended
    piece adds or retracts), summed here after the touched partitions are kept."""
    ctes = touched_partitions(window, child_delta_sql) + [
        ("_ivm_o", in_touched_partitions(window, held_sql)),
        ("_ivm_n", consolidated(zset_sum([("SELECT * FROM _ivm_o", 1), ("SELECT * FROM _ivm_d", 1)],
                                         window.child.columns), window.child.columns, refused="a row")),
    ]
    change = zset_sum([(_evaluated(window, "SELECT * FROM _ivm_n"), 1), ("SELECT * FROM _ivm_o", -1)],
                      window.columns)
    return f"{with_ctes(ctes)}\n{consolidated(change, window.columns)}"


# -- in memory (the property tests) ---------------------------------------------------------------

def memory_delta(window: Window, held: ZSet, change: ZSet, evaluate: Callable[[Window, ZSet], ZSet]) -> ZSet:
    """``delta_sql`` on in-memory Z-sets: ``held`` the state's rows (over the window's columns),
    ``change`` the child's, ``evaluate`` the window over a bag of the child's rows."""
    width = len(window.child.columns)
    position = [window.child.columns.index(k) for k in window.partition]

    def partition(row: tuple) -> tuple:
        return tuple(row[i] for i in position)

    touched = {partition(r) for r in change}
    old = {r: w for r, w in held.items() if partition(r) in touched}
    rows: ZSet = {}
    for r, w in [*((r[:width], w) for r, w in old.items()), *change.items()]:
        rows[r] = rows.get(r, 0) + w
    if any(w < 0 for w in rows.values()):
        raise ValueError("the change deletes rows that are not there")
    out = dict(evaluate(window, {r: w for r, w in rows.items() if w}))
    for r, w in old.items():
        out[r] = out.get(r, 0) - w
    return {r: w for r, w in out.items() if w}
