"""State layout and SQL of an aggregate (see ``rules/aggregate.py`` for the delta formula).

Group state ``<id>__groups``: one row per group with at least one row::

    <key columns>, _ivm_count BIGINT, <call>_s, <call>_n   (per linear call)

where ``_s`` is the weighted sum of the argument (NULLs skipped, 0 when none) and ``_n`` its
weighted non-NULL count. A call is *linear* when it is COUNT(*), COUNT(x), or SUM/AVG over a
non-floating-point argument: integer sums wrap exactly as Spark's do (ANSI off), decimals are
cast to Spark's own SUM/AVG result type at the end.

Value state ``<id>__values__<arg>``: per group, every non-NULL value of the argument with its
net weight. MIN, MAX, COUNT(DISTINCT), SUM(DISTINCT) and SUM/AVG over FLOAT/DOUBLE recompute
the touched groups from it with Spark's own aggregate functions — floating-point sums are
re-added from the values, in sorted order, on every change: they never drift with updates, and
the same state always gives bit-for-bit the same row (so the row retracted later is exactly the
row emitted now).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ivm_core.plan import AggCall, Aggregate
from ivm_core.sqlgen import refuse_negative

WEIGHT = "_ivm_weight"
COUNT = "_ivm_count"
VALUE = "_ivm_value"
FLOAT_TYPES = ("float", "double", "real")
# A floating-point sum that depends only on the multiset of values (added in sorted order), so a
# group's row recomputed from the same state is bit-for-bit the row emitted before.
FLOAT_SUM = (
    "aggregate(array_sort(collect_list(CAST({v} AS DOUBLE) * CAST({w} AS DOUBLE))), "
    "CAST(0 AS DOUBLE), (acc, x) -> acc + x)"
)


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _indent(sql: str) -> str:
    return "\n".join("  " + line for line in sql.splitlines())


@dataclass(frozen=True)
class CallTypes:
    """Spark's types for one call: of its argument, of SUM(arg) and of AVG(arg)."""

    arg: str = ""
    sum: str = ""
    avg: str = ""


@dataclass
class Layout:
    agg: Aggregate
    types: Mapping[str, CallTypes] = field(default_factory=dict)

    def call_types(self, call: AggCall) -> CallTypes:
        return self.types.get(call.name, CallTypes())

    def linear(self, call: AggCall) -> bool:
        if call.func in ("count_star", "count"):
            return True
        if call.func in ("sum", "avg"):
            return not self.call_types(call).arg.lower().startswith(FLOAT_TYPES)
        return False

    @property
    def keys(self) -> tuple[str, ...]:
        return self.agg.keys

    @property
    def linear_calls(self) -> list[AggCall]:
        return [c for c in self.agg.aggs if self.linear(c) and c.func != "count_star"]

    @property
    def value_args(self) -> list[str]:
        return sorted({c.arg for c in self.agg.aggs if not self.linear(c)})

    def group_state_columns(self) -> list[str]:
        cols = list(self.keys) + [COUNT]
        for c in self.linear_calls:
            cols += [f"{c.name}_s", f"{c.name}_n"]
        return cols

    # -- partial aggregates of a Z-set over the child's columns ----------------------------
    def group_partials(self, child_sql: str) -> str:
        w = WEIGHT
        cols = [_q(k) for k in self.keys] + [f"CAST(sum({w}) AS BIGINT) AS {COUNT}"]
        for c in self.linear_calls:
            a = _q(c.arg)
            if c.func != "count":
                cols.append(f"coalesce(sum({a} * {w}), 0) AS {_q(c.name + '_s')}")
            else:
                cols.append(f"CAST(0 AS BIGINT) AS {_q(c.name + '_s')}")
            cols.append(f"CAST(coalesce(sum(CASE WHEN {a} IS NOT NULL THEN {w} END), 0) AS BIGINT) AS {_q(c.name + '_n')}")
        group = f"\nGROUP BY {', '.join(_q(k) for k in self.keys)}" if self.keys else ""
        return f"SELECT {', '.join(cols)}\nFROM (\n{_indent(child_sql)}\n) AS _ivm_c{group}\nHAVING count(*) > 0"

    def value_partials(self, child_sql: str, arg: str) -> str:
        keys = [_q(k) for k in self.keys]
        group = ", ".join(keys + [_q(arg)])
        return (
            f"SELECT {', '.join(keys + [f'{_q(arg)} AS {VALUE}', f'CAST(sum({WEIGHT}) AS BIGINT) AS {WEIGHT}'])}\n"
            f"FROM (\n{_indent(child_sql)}\n) AS _ivm_c\nWHERE {_q(arg)} IS NOT NULL\n"
            f"GROUP BY {group}\nHAVING sum({WEIGHT}) <> 0"
        )

    # -- output rows from state ------------------------------------------------------------
    def _value_summary(self, arg: str, values_sql: str, alias: str) -> str:
        keys = [_q(k) for k in self.keys]
        v = VALUE
        needed = {c.func for c in self.agg.aggs if c.arg == arg and not self.linear(c)}
        summaries = {
            "min": [f"min({v}) AS _min"],
            "max": [f"max({v}) AS _max"],
            "count_distinct": [f"count({v}) AS _count_distinct"],
            "sum_distinct": [f"sum({v}) AS _sum_distinct"],
            "sum": [f"{FLOAT_SUM.format(v=v, w=WEIGHT)} AS _float_sum"],
            "avg": [
                f"{FLOAT_SUM.format(v=v, w=WEIGHT)} AS _float_sum",
                f"CAST(sum({WEIGHT}) AS BIGINT) AS _float_n",
            ],
        }
        cols = list(keys)
        for func in sorted(needed):
            cols += [c for c in summaries[func] if c not in cols]
        group = f"\nGROUP BY {', '.join(keys)}" if keys else ""
        return f"(\nSELECT {', '.join(cols)}\nFROM (\n{_indent(values_sql)}\n) AS _ivm_v{group}\n) AS {alias}"

    def _final(self, call: AggCall, g: str, value_alias: Mapping[str, str]) -> str:
        t = self.call_types(call)
        if call.func == "count_star":
            return f"coalesce({g}.{COUNT}, 0)"
        if self.linear(call):
            s, n = f"{g}.{_q(call.name + '_s')}", f"coalesce({g}.{_q(call.name + '_n')}, 0)"
            if call.func == "count":
                return n
            if call.func == "sum":
                return f"CASE WHEN {n} > 0 THEN CAST({s} AS {t.sum}) END"
            if t.avg.lower().startswith("decimal"):
                return (
                    f"CASE WHEN {n} > 0 THEN CAST(CAST({s} AS {t.sum}) / CAST({n} AS DECIMAL(20,0)) AS {t.avg}) END"
                )
            return f"CASE WHEN {n} > 0 THEN CAST({s} AS DOUBLE) / CAST({n} AS DOUBLE) END"
        v = value_alias[call.arg]
        if call.func == "count_distinct":
            return f"coalesce({v}._count_distinct, 0)"
        if call.func == "sum_distinct":
            return f"{v}._sum_distinct"
        if call.func in ("min", "max"):
            return f"{v}._{call.func}"
        if call.func == "sum":
            return f"{v}._float_sum"
        return f"{v}._float_sum / CAST({v}._float_n AS DOUBLE)"  # avg over floats

    def rows(self, groups_sql: str, values_sql: Mapping[str, str], out_names: tuple[str, ...]) -> str:
        """One weighted output row per group present in ``groups_sql`` (the group state shape)."""
        g = "_ivm_g"
        aliases = {arg: f"_ivm_v{i}" for i, arg in enumerate(self.value_args)}
        if self.agg.is_global:
            source = f"(SELECT 1 AS _ivm_one) AS _ivm_one\nLEFT JOIN (\n{_indent(groups_sql)}\n) AS {g} ON TRUE"
        else:
            source = f"(\n{_indent(groups_sql)}\n) AS {g}"
        for arg, alias in aliases.items():
            summary = self._value_summary(arg, values_sql[arg], alias)
            on = " AND ".join(f"{g}.{_q(k)} <=> {alias}.{_q(k)}" for k in self.keys) or "TRUE"
            source += f"\nLEFT JOIN {summary} ON {on}"
        cols = [f"{g}.{_q(k)} AS {_q(o)}" for k, o in zip(self.keys, self.agg.out_keys)]
        cols += [f"{self._final(c, g, aliases)} AS {_q(c.name)}" for c in self.agg.aggs]
        cols.append(f"coalesce({g}.{COUNT}, 0) AS {COUNT}")
        where = "" if self.agg.is_global else f"\nWHERE {g}.{COUNT} > 0"
        inner = f"SELECT {', '.join(cols)}\nFROM {source}{where}"
        mult = "1" if self.agg.multiplicity is None else self.agg.multiplicity.sql(dialect="spark")
        outs = ", ".join(_q(o) for o in out_names)
        return (
            f"SELECT {outs}, CAST({mult} AS BIGINT) AS {WEIGHT}\nFROM (\n{_indent(inner)}\n) AS _ivm_r\n"
            f"WHERE CAST({mult} AS BIGINT) > 0"
        )

    def read_sql(self, state: Callable[[str], str]) -> str:
        """The aggregate's integrated output from its state tables."""
        groups = f"SELECT * FROM {state('groups')}"
        values = {arg: f"SELECT * FROM {state('values__' + arg)}" for arg in self.value_args}
        return self.rows(groups, values, self.agg.columns)

    def delta_sql(self, child_delta_sql: str, state: Callable[[str], str]) -> str:
        """``Σ_touched row(S + ΔS) − row(S)``, consolidated: only rows that really change."""
        keys = [_q(k) for k in self.keys]
        on = lambda a, b: " AND ".join(f"{a}.{k} <=> {b}.{k}" for k in keys) or "TRUE"
        state_cols = ", ".join(_q(c) for c in self.group_state_columns())
        sums = [f"CAST(sum({COUNT}) AS BIGINT) AS {COUNT}"]
        for c in self.linear_calls:
            sums += [f"sum({_q(c.name + '_s')}) AS {_q(c.name + '_s')}",
                     f"CAST(sum({_q(c.name + '_n')}) AS BIGINT) AS {_q(c.name + '_n')}"]
        group = f" GROUP BY {', '.join(keys)}" if keys else ""
        ctes = [
            ("_ivm_d", child_delta_sql),
            ("_ivm_p", self.group_partials("SELECT * FROM _ivm_d")),
        ]
        if keys:
            ctes.append(("_ivm_t", f"SELECT DISTINCT {', '.join(keys)} FROM _ivm_p"))
            old_groups = f"SELECT s.* FROM {state('groups')} AS s LEFT SEMI JOIN _ivm_t AS t ON {on('s', 't')}"
        else:
            old_groups = f"SELECT * FROM {state('groups')}"
        ctes.append(("_ivm_og", old_groups))
        ctes.append((
            "_ivm_ng",
            f"SELECT {', '.join(keys + sums)}\nFROM (\n  SELECT {state_cols} FROM _ivm_og\n  UNION ALL\n"
            f"  SELECT {state_cols} FROM _ivm_p\n) AS _ivm_u{group}",
        ))
        old_values, new_values = {}, {}
        for i, arg in enumerate(self.value_args):
            table = state("values__" + arg)
            if keys:
                old = f"SELECT s.* FROM {table} AS s LEFT SEMI JOIN _ivm_t AS t ON {on('s', 't')}"
            else:
                old = f"SELECT * FROM {table}"
            vcols = ", ".join(keys + [VALUE, WEIGHT])
            ctes.append((f"_ivm_ov{i}", old))
            ctes.append((f"_ivm_dv{i}", self.value_partials("SELECT * FROM _ivm_d", arg)))
            ctes.append((
                f"_ivm_nv{i}",
                f"SELECT {', '.join(keys + [VALUE])}, CAST(sum({WEIGHT}) AS BIGINT) AS {WEIGHT}\nFROM (\n"
                f"  SELECT {vcols} FROM _ivm_ov{i}\n  UNION ALL\n  SELECT {vcols} FROM _ivm_dv{i}\n"
                f") AS _ivm_u\nGROUP BY {', '.join(keys + [VALUE])}\nHAVING sum({WEIGHT}) <> 0",
            ))
            old_values[arg] = f"SELECT * FROM _ivm_ov{i}"
            new_values[arg] = f"SELECT * FROM _ivm_nv{i}"
        outs = [_q(c) for c in self.agg.columns]
        old_rows = self.rows("SELECT * FROM _ivm_og", old_values, self.agg.columns)
        new_rows = self.rows("SELECT * FROM _ivm_ng", new_values, self.agg.columns)
        with_ = ",\n".join(f"{name} AS (\n{_indent(sql)}\n)" for name, sql in ctes)
        return (
            f"WITH {with_}\n"
            f"SELECT {', '.join(outs)}, CAST(sum({WEIGHT}) AS BIGINT) AS {WEIGHT}\nFROM (\n"
            f"  SELECT {', '.join(outs)}, -{WEIGHT} AS {WEIGHT} FROM (\n{_indent(_indent(old_rows))}\n  ) AS _ivm_old\n"
            f"  UNION ALL\n"
            f"  SELECT {', '.join(outs)}, {WEIGHT} FROM (\n{_indent(_indent(new_rows))}\n  ) AS _ivm_new\n"
            f") AS _ivm_x\nGROUP BY {', '.join(outs)}\nHAVING sum({WEIGHT}) <> 0"
        )

    # -- maintaining the state -------------------------------------------------------------------
    def merge_groups(self, table: str, child_delta_sql: str) -> str:
        """Add the change's partials to the group state; a group whose row count would become
        negative (the change deletes rows that are not there) fails the statement."""
        keys = [_q(k) for k in self.keys]
        on = " AND ".join(f"s.{k} <=> d.{k}" for k in keys) or "TRUE"
        new_count = f"s.{COUNT} + d.{COUNT}"
        sets = [f"s.{COUNT} = {refuse_negative(new_count, 'a group')}"]
        for c in self.linear_calls:
            for suffix in ("_s", "_n"):
                col = _q(c.name + suffix)
                sets.append(f"s.{col} = s.{col} + d.{col}")
        state_cols = self.group_state_columns()
        cols = ", ".join(_q(c) for c in state_cols)
        dcols = ", ".join(
            refuse_negative(f"d.{COUNT}", "a group") if c == COUNT else "d." + _q(c) for c in state_cols
        )
        return (
            f"MERGE INTO {table} AS s\nUSING (\n{_indent(self.group_partials(child_delta_sql))}\n) AS d\nON {on}\n"
            f"WHEN MATCHED AND {new_count} = 0 THEN DELETE\n"
            f"WHEN MATCHED THEN UPDATE SET {', '.join(sets)}\n"
            # a group the change only passes through (its rows cancel: count 0) is not inserted
            f"WHEN NOT MATCHED AND d.{COUNT} <> 0 THEN INSERT ({cols}) VALUES ({dcols})"
        )

    def merge_values(self, table: str, child_delta_sql: str, arg: str) -> str:
        cols = [_q(k) for k in self.keys] + [VALUE]
        on = " AND ".join(f"s.{c} <=> d.{c}" for c in cols)
        all_cols = cols + [WEIGHT]
        new_weight = f"s.{WEIGHT} + d.{WEIGHT}"
        values = ", ".join(refuse_negative(f"d.{c}", "a value") if c == WEIGHT else "d." + c for c in all_cols)
        return (
            f"MERGE INTO {table} AS s\nUSING (\n{_indent(self.value_partials(child_delta_sql, arg))}\n) AS d\nON {on}\n"
            f"WHEN MATCHED AND {new_weight} = 0 THEN DELETE\n"
            f"WHEN MATCHED THEN UPDATE SET s.{WEIGHT} = {refuse_negative(new_weight, 'a value')}\n"
            f"WHEN NOT MATCHED THEN INSERT ({', '.join(all_cols)}) VALUES ({values})"
        )

    def rewrite_groups(self, table: str, read: str, child_delta_sql: str) -> str:
        """``merge_groups`` for a small state: the table is rewritten with each group's state
        plus the change's partials (one INSERT OVERWRITE, cheaper than a MERGE on Iceberg and it
        leaves no delete files). A group whose row count would become negative fails it."""
        state_cols = self.group_state_columns()
        keys = [_q(k) for k in self.keys]
        sums = []
        for c in state_cols[len(keys):]:
            total = f"CAST(sum({_q(c)}) AS BIGINT)" if c == COUNT or c.endswith("_n") else f"sum({_q(c)})"
            sums.append(f"{refuse_negative(total, 'a group') if c == COUNT else total} AS {_q(c)}")
        cols = ", ".join(_q(c) for c in state_cols)
        group = f"\nGROUP BY {', '.join(keys)}" if keys else ""
        return (
            f"INSERT OVERWRITE {table} ({cols})\nSELECT {', '.join(keys + sums)}\nFROM (\n"
            f"  SELECT {cols} FROM {read}\n  UNION ALL\n"
            f"  SELECT {cols} FROM (\n{_indent(_indent(self.group_partials(child_delta_sql)))}\n  ) AS d\n"
            f") AS _ivm_u{group}\nHAVING sum({COUNT}) <> 0"
        )

    def rewrite_values(self, table: str, read: str, child_delta_sql: str, arg: str) -> str:
        """``merge_values`` for a small state, as one INSERT OVERWRITE (see ``rewrite_groups``)."""
        keys = [_q(k) for k in self.keys] + [VALUE]
        cols = ", ".join(keys + [WEIGHT])
        total = f"CAST(sum({WEIGHT}) AS BIGINT)"
        return (
            f"INSERT OVERWRITE {table} ({cols})\n"
            f"SELECT {', '.join(keys)}, {refuse_negative(total, 'a value')} AS {WEIGHT}\nFROM (\n"
            f"  SELECT {cols} FROM {read}\n  UNION ALL\n"
            f"  SELECT {cols} FROM (\n{_indent(_indent(self.value_partials(child_delta_sql, arg)))}\n  ) AS d\n"
            f") AS _ivm_u\nGROUP BY {', '.join(keys)}\nHAVING sum({WEIGHT}) <> 0"
        )

    def negative_groups_sql(self, table: str, child_delta_sql: str) -> str:
        """How many groups ``merge_groups`` would refuse (for the error message)."""
        keys = [_q(k) for k in self.keys]
        on = " AND ".join(f"s.{k} <=> d.{k}" for k in keys) or "TRUE"
        return (
            f"SELECT CAST(count(*) AS BIGINT) AS bad FROM (\n{_indent(self.group_partials(child_delta_sql))}\n) AS d\n"
            f"LEFT JOIN {table} AS s ON {on}\nWHERE coalesce(s.{COUNT}, 0) + d.{COUNT} < 0"
        )

    def plain_sql(self, child_sql: str) -> str:
        """Spark's own GROUP BY over the child as a bag: only for asking Spark the types."""
        funcs = {
            "count_star": "count(*)", "count": "count({})", "sum": "sum({})", "avg": "avg({})",
            "min": "min({})", "max": "max({})", "count_distinct": "count(DISTINCT {})",
            "sum_distinct": "sum(DISTINCT {})",
        }
        cols = [f"{_q(k)} AS {_q(o)}" for k, o in zip(self.keys, self.agg.out_keys)]
        cols += [f"{funcs[c.func].format(_q(c.arg) if c.arg else '')} AS {_q(c.name)}" for c in self.agg.aggs]
        group = f"\nGROUP BY {', '.join(_q(k) for k in self.keys)}" if self.keys else ""
        return (
            f"SELECT {', '.join(cols + [f'CAST(1 AS BIGINT) AS {WEIGHT}'])}\nFROM (\n{_indent(child_sql)}\n) AS _ivm_c{group}"
        )

    def probe_columns(self) -> list[tuple[str, str]]:
        """(column alias, expression) whose Spark types decide this aggregate's layout."""
        out = []
        for c in self.agg.aggs:
            if c.arg is None:
                continue
            a = _q(c.arg)
            out.append((f"{self.agg.id}__{c.name}__arg", f"first({a})"))
            if c.func in ("sum", "avg"):
                out.append((f"{self.agg.id}__{c.name}__sum", f"sum({a})"))
                out.append((f"{self.agg.id}__{c.name}__avg", f"avg({a})"))
        return out

