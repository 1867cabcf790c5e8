"""The Spark SQL of the aggregation rule: partial states of a change, output rows read back
from a state, the output change ``Σ_touched row(S + ΔS) − row(S)``, and the statements that add
a change to the stored state (MERGE, or INSERT OVERWRITE for a small state).

Each call's share of it comes from its function (``functions``): ``piece_sql`` (what one row
adds) and ``partial_sql`` (their sum over a group) for the group state, ``summaries`` for a value
state, ``result_sql``/``values_result_sql`` for the
read-back. Floating-point sums are re-added from the stored values in sorted order on every
change: they never drift with updates, and the same state always gives bit-for-bit the same
row (so the row retracted later is exactly the row emitted now).
"""

from __future__ import annotations

from typing import Callable, Mapping

from ivm_core.plan import AggCall
from ivm_core.rules.aggregate.functions import AGGREGATORS, State
from ivm_core.rules.aggregate.functions.base import TYPE_PROBES
from ivm_core.rules.aggregate.layout import COUNT, GROUPS, VALUE, Layout, value_state
from ivm_core.sqltext import WEIGHT, absent_rows_error, expression, indent, quote, refuse_negative
from ivm_core.statements import KeyBound, insert_unmatched, null_safe_match, with_ctes

StateTable = Callable[[str], str]  # state name (GROUPS, value_state(arg)) -> relation


class AggregateSql:
    """The SQL of one aggregate, given its ``Layout`` (``sqlgen.AggregateRenderer``).
    ``child_is_partials``: the child change every method is given is its ``row_partials``
    already (a run staged them: ``Layout.reads_child_as_partials``)."""

    def __init__(self, layout: Layout, child_is_partials: bool = False):
        self.layout = layout
        self.agg = layout.agg
        self.child_is_partials = child_is_partials

    # -- partial states of a Z-set over the aggregate's child columns ---------------------------
    def _row_states(self) -> list[tuple[str, str, str]]:
        """Each group-state column after the keys, for a Z-set over the child's columns: its
        name (as SQL), what one row adds to it (never NULL) and its partial, the sum of that over
        a group's rows — the row count (the weight), every LINEAR call's ``_s`` (its function's
        piece) and ``_n`` (the weight of a non-NULL value)."""
        states = [(COUNT, f"CAST({WEIGHT} AS BIGINT)", f"CAST(sum({WEIGHT}) AS BIGINT)")]
        for c in self.layout.linear_calls:
            a = quote(c.arg or "")
            function, types = self.layout.function(c), self.layout.call_types(c)
            piece, partial = function.piece_sql(a, WEIGHT, types), function.partial_sql(a, WEIGHT, types)
            states.append((quote(c.name + "_s"), f"coalesce({piece}, 0)", partial))
            counted = f"CASE WHEN {a} IS NOT NULL THEN {WEIGHT} END"
            states.append((quote(c.name + "_n"), f"coalesce({counted}, 0)",
                           f"CAST(coalesce(sum({counted}), 0) AS BIGINT)"))
        return states

    def row_partials(self, child_sql: str) -> str:
        """Per group of ``child_sql``: its row count and every LINEAR call's ``_s`` and ``_n``
        (a group whose rows cancel is kept, with count 0)."""
        if self.child_is_partials:
            return child_sql
        keys = self.layout.keys
        cols = [quote(k) for k in keys] + [f"{partial} AS {name}" for name, _, partial in self._row_states()]
        group = f"\nGROUP BY {', '.join(quote(k) for k in keys)}" if keys else ""
        return f"SELECT {', '.join(cols)}\nFROM (\n{indent(child_sql)}\n) AS _ivm_c{group}\nHAVING count(*) > 0"

    def row_pieces(self, child_sql: str) -> str:
        """Each row of ``child_sql`` as a piece of the group state, in its columns: what the row
        adds to each (``row_partials`` sums them per group; partials are pieces too)."""
        if self.child_is_partials:
            return child_sql
        cols = [quote(k) for k in self.layout.keys] + [f"{piece} AS {name}" for name, piece, _ in self._row_states()]
        return f"SELECT {', '.join(cols)}\nFROM (\n{indent(child_sql)}\n) AS _ivm_c"

    def group_partials(self, child_sql: str, old_values: Mapping[str, str] | None = None,
                       within: KeyBound | None = None, built_values: Mapping[str, str] | None = None) -> str:
        """The partial group state of ``child_sql``: ``row_partials``, and every DISTINCT call's
        ``_s`` and ``_n`` over the values whose net weight crosses zero (``crossings``) —
        against ``old_values`` (by argument: its value state as the last commit left it, read at
        the change's values only, and within ``within``), or against an empty state (None: a
        build, which may read the child's values from ``built_values``: by argument, its value
        state just built from the same child)."""
        partials = {}
        for arg in self.layout.distinct_args:
            if old_values is None and built_values and arg in built_values:
                crossings = self.built_crossings(built_values[arg])
            else:
                crossings = self._crossings_of(child_sql, arg, old_values, within)
            partials[arg] = self.distinct_partials(arg, crossings)
        return self._with_distinct_partials(self.row_partials(child_sql), partials)

    def group_pieces(self, child_sql: str, old_values: Mapping[str, str]) -> str:
        """``group_partials`` as pieces in the group state's columns, which a sum per group
        turns into those partials: each row of ``child_sql`` (``row_pieces``, its DISTINCT
        calls' columns 0) and each value whose net weight crosses zero against ``old_values``
        (``crossings``, refusing a weight that would become negative) as what it adds to its
        DISTINCT calls' ``_s`` and ``_n`` (its other columns 0) — no aggregation per group
        before the sum, and no join of the two."""
        keys = [quote(k) for k in self.layout.keys]
        row_states = [name for name, _, _ in self._row_states()]
        distinct_states = [quote(c.name + suffix) for c in self.layout.distinct_calls for suffix in ("_s", "_n")]

        def piece(name: str, pieces: Mapping[str, str] | None = None) -> str:  # its piece in ``pieces``, else 0
            return f"{(pieces or {}).get(name, 'CAST(0 AS BIGINT)')} AS {name}"

        parts = [f"SELECT {', '.join(keys + row_states + [piece(n) for n in distinct_states])}\n"
                 f"FROM (\n{indent(self.row_pieces(child_sql))}\n) AS _ivm_rp"]
        for arg in self.layout.distinct_args:
            pieces = {name: one for name, one, _ in self._distinct_states(arg)}
            cols = keys + [piece(n) for n in row_states] + [piece(n, pieces) for n in distinct_states]
            parts.append(f"SELECT {', '.join(cols)}\n"
                         f"FROM (\n{indent(self._crossings_of(child_sql, arg, old_values))}\n) AS _ivm_x")
        return "\nUNION ALL\n".join(parts)

    def _crossings_of(self, child_sql: str, arg: str, old_values: Mapping[str, str] | None,
                      within: KeyBound | None = None) -> str:
        """``crossings`` of ``child_sql``'s values of ``arg`` against its value state in
        ``old_values`` (read at the change's values only, within ``within``), or against an
        empty state (None). A state update refuses a value whose weight would become negative
        (a value state of appended pieces is not checked by its own write)."""
        changes = self.value_partials(child_sql, arg)
        old = None if old_values is None else self.values_at_changes(old_values[arg], changes, within)
        return self.crossings(changes, old, refuse=old is not None)

    def _with_distinct_partials(self, rows_sql: str, distinct_partials: Mapping[str, str]) -> str:
        """``rows_sql`` (``row_partials``) with every DISTINCT call's ``_s`` and ``_n`` from
        ``distinct_partials`` (by argument, its ``distinct_partials``): 0 for a group none of
        whose values crossed zero."""
        if not self.layout.distinct_calls:
            return rows_sql
        aliases = {arg: f"_ivm_x{i}" for i, arg in enumerate(distinct_partials)}
        cols = ["p.*"]
        for c in self.layout.distinct_calls:
            x = aliases[c.arg or ""]
            cols += [f"coalesce({x}.{quote(c.name + suffix)}, 0) AS {quote(c.name + suffix)}"
                     for suffix in ("_s", "_n")]
        joins = "".join(f"\nLEFT JOIN (\n{indent(sql)}\n) AS {aliases[arg]} "
                        f"ON {null_safe_match(self.layout.keys, 'p', aliases[arg])}"
                        for arg, sql in distinct_partials.items())
        return f"SELECT {', '.join(cols)}\nFROM (\n{indent(rows_sql)}\n) AS p{joins}"

    def values_at_changes(self, values: str, changes_sql: str, within: KeyBound | None = None) -> str:
        """The rows of a value state (``values``) at the values ``changes_sql`` (a value state's
        shape) holds, within ``within``: what a DISTINCT call's change reads of it."""
        on = null_safe_match(list(self.layout.keys) + [VALUE], "s", "d")
        return (f"SELECT s.* FROM {_bounded(values, within)} AS s\n"
                f"LEFT SEMI JOIN (\n{indent(changes_sql)}\n) AS d ON {on}")

    def crossings(self, changes_sql: str, old_values_sql: str | None, refuse: bool = False) -> str:
        """DISTINCT's change over (group, value): each value of ``changes_sql`` (a value state's
        shape) weighted +1 when its net weight rises from 0 (``old_values_sql``: the stored
        weights — pieces, summed here —, None: none stored), −1 when it falls to 0, else 0;
        with ``refuse``, a value whose weight would become negative fails the statement."""
        cols = ", ".join([quote(k) for k in self.layout.keys] + [VALUE])
        parts = [f"SELECT {cols}, CAST(0 AS BIGINT) AS _ivm_was, {WEIGHT} AS _ivm_now FROM (\n"
                 f"{indent(changes_sql, '    ')}\n  ) AS _ivm_dv"]
        if old_values_sql is not None:
            parts.insert(0, f"SELECT {cols}, {WEIGHT} AS _ivm_was, {WEIGHT} AS _ivm_now FROM (\n"
                            f"{indent(old_values_sql, '    ')}\n  ) AS _ivm_ov")
        union = "\n  UNION ALL\n  ".join(parts)
        refused = f"WHEN sum(_ivm_now) < 0 THEN {absent_rows_error('a value', 'BIGINT')} " if refuse else ""
        return (
            f"SELECT {cols}, CAST(CASE {refused}WHEN sum(_ivm_was) <= 0 AND sum(_ivm_now) > 0 THEN 1 "
            f"WHEN sum(_ivm_was) > 0 AND sum(_ivm_now) <= 0 THEN -1 ELSE 0 END AS BIGINT) AS {WEIGHT}\n"
            f"FROM (\n  {union}\n) AS _ivm_u\nGROUP BY {cols}"
        )

    def built_crossings(self, values: str) -> str:
        """``crossings`` of a build, from the value state just built (``values``): it holds each
        (group, value) of the child once, at its net weight, so every value of positive weight
        rises from 0 (+1) — no second aggregation over the values."""
        cols = ", ".join([quote(k) for k in self.layout.keys] + [VALUE])
        return f"SELECT {cols}, CAST(1 AS BIGINT) AS {WEIGHT}\nFROM {values}\nWHERE {WEIGHT} > 0"

    def distinct_partials(self, arg: str, crossings_sql: str) -> str:
        """Per group: every DISTINCT call over ``arg``'s ``_s`` and ``_n``, its LINEAR function's
        partial state over the ``crossings``."""
        keys = [quote(k) for k in self.layout.keys]
        cols = keys + [f"{partial} AS {name}" for name, _, partial in self._distinct_states(arg)]
        group = f"\nGROUP BY {', '.join(keys)}" if keys else ""
        return f"SELECT {', '.join(cols)}\nFROM (\n{indent(crossings_sql)}\n) AS _ivm_x{group}"

    def _distinct_states(self, arg: str) -> list[tuple[str, str, str]]:
        """Each group-state column of the DISTINCT calls over ``arg``, for the ``crossings`` (a
        Z-set of values): its name (as SQL), what one crossing adds to it and its partial, the
        sum of that per group — every call's ``_s`` (its LINEAR function's piece of the value)
        and ``_n`` (the crossing's weight); ``_row_states``' twin."""
        states = []
        for c in self.layout.distinct_calls:
            if c.arg == arg:
                function, types = self.layout.linear_function(c), self.layout.call_types(c)
                states.append((quote(c.name + "_s"), f"coalesce({function.piece_sql(VALUE, WEIGHT, types)}, 0)",
                               function.partial_sql(VALUE, WEIGHT, types)))
                states.append((quote(c.name + "_n"), WEIGHT, f"CAST(coalesce(sum({WEIGHT}), 0) AS BIGINT)"))
        return states

    def value_partials(self, child_sql: str, arg: str) -> str:
        """Per group of ``child_sql``: each non-NULL value of ``arg`` with its net weight."""
        group = ", ".join([quote(k) for k in self.layout.keys] + [quote(arg)])
        return (f"{self._values(child_sql, arg, f'CAST(sum({WEIGHT}) AS BIGINT)')}\n"
                f"GROUP BY {group}\nHAVING sum({WEIGHT}) <> 0")

    def value_pieces(self, child_sql: str, arg: str) -> str:
        """Each row of ``child_sql`` with a non-NULL value of ``arg``, as a piece of its value
        state: the value and the row's weight (``value_partials`` sums them per value)."""
        return self._values(child_sql, arg, f"CAST({WEIGHT} AS BIGINT)")

    def _values(self, child_sql: str, arg: str, weight: str) -> str:
        """The rows of ``child_sql`` with a non-NULL value of ``arg``: their group keys, the value
        and ``weight``."""
        cols = [quote(k) for k in self.layout.keys] + [f"{quote(arg)} AS {VALUE}", f"{weight} AS {WEIGHT}"]
        return f"SELECT {', '.join(cols)}\nFROM (\n{indent(child_sql)}\n) AS _ivm_c\nWHERE {quote(arg)} IS NOT NULL"

    # -- output rows from state -----------------------------------------------------------------
    def _value_summary(self, arg: str, values_sql: str, alias: str, sided: bool = False) -> str:
        keys = [quote(k) for k in self.layout.keys] + ([SIDE] if sided else [])
        cols = list(keys)
        for name in sorted({c.func for c in self.layout.value_calls(arg)}):
            cols += [c for c in AGGREGATORS[name].summaries(VALUE, WEIGHT) if c not in cols]
        group = f"\nGROUP BY {', '.join(keys)}" if keys else ""
        return f"(\nSELECT {', '.join(cols)}\nFROM (\n{indent(values_sql)}\n) AS _ivm_v{group}\n) AS {alias}"

    def _result(self, call: AggCall, g: str, value_alias: Mapping[str, str]) -> str:
        function, types = self.layout.function(call), self.layout.call_types(call)
        state = function.state(types)
        if state is State.ROWS:
            return f"coalesce({g}.{COUNT}, 0)"
        if state in (State.LINEAR, State.DISTINCT):
            s, n = f"{g}.{quote(call.name + '_s')}", f"coalesce({g}.{quote(call.name + '_n')}, 0)"
            return self.layout.linear_function(call).result_sql(s, n, types)
        return function.values_result_sql(value_alias[call.arg or ""], types)

    def rows(self, groups_sql: str, values_sql: Mapping[str, str], out_names: tuple[str, ...],
             sided: bool = False) -> str:
        """One weighted output row per group present in ``groups_sql`` (the group state shape);
        a global aggregate always has its one row. ``sided``: ``groups_sql`` and each of
        ``values_sql`` hold a group's state before (``SIDE`` −1) and after (+1) a change, and a
        row's weight is signed by its side."""
        g = "_ivm_g"
        keys = self.layout.keys
        aliases = {arg: f"_ivm_v{i}" for i, arg in enumerate(self.layout.summarized_args)}
        if self.agg.is_global:
            source = f"(SELECT 1 AS _ivm_one) AS _ivm_one\nLEFT JOIN (\n{indent(groups_sql)}\n) AS {g} ON TRUE"
        else:
            source = f"(\n{indent(groups_sql)}\n) AS {g}"
        for arg, alias in aliases.items():
            summary = self._value_summary(arg, values_sql[arg], alias, sided)
            on = null_safe_match(keys, g, alias) + (f" AND {g}.{SIDE} = {alias}.{SIDE}" if sided else "")
            source += f"\nLEFT JOIN {summary} ON {on}"
        cols = [f"{g}.{quote(k)} AS {quote(o)}" for k, o in zip(keys, self.agg.out_keys)]
        cols += [f"{self._result(c, g, aliases)} AS {quote(c.name)}" for c in self.agg.aggs]
        cols.append(f"coalesce({g}.{COUNT}, 0) AS {COUNT}")
        cols += [f"{g}.{SIDE}"] if sided else []
        count = f"{g}.{COUNT}"
        if sided and self.layout.held is not None:  # no state update refuses a group left with a negative count
            count = refuse_negative(count, "a group")
        where = "" if self.agg.is_global else f"\nWHERE {count} > 0"
        inner = f"SELECT {', '.join(cols)}\nFROM {source}{where}"
        mult = "1" if self.agg.multiplicity is None else expression(self.agg.multiplicity)
        outs = ", ".join(quote(o) for o in out_names)
        signed = f" * {SIDE}" if sided else ""
        return (
            f"SELECT {outs}, CAST({mult} AS BIGINT){signed} AS {WEIGHT}\nFROM (\n{indent(inner)}\n) AS _ivm_r\n"
            f"WHERE CAST({mult} AS BIGINT) > 0"
        )

    def read_sql(self, state: StateTable) -> str:
        """The aggregate's integrated output from its state tables (a state of appended pieces
        summed per row first)."""
        groups = self.summed_pieces(state(GROUPS)) if self.agg.takes_pieces else f"SELECT * FROM {state(GROUPS)}"
        values = {arg: f"SELECT * FROM {state(value_state(arg))}" for arg in self.layout.summarized_args}
        return self.rows(groups, values, self.agg.columns)

    def delta_sql(self, child_delta_sql: str, state: StateTable, within: KeyBound | None = None) -> str:
        """``Σ_touched row(S + ΔS) − row(S)``, consolidated: only rows that really change (an
        aggregate that ``keeps_rows``: the child's change, renamed). ``within``: a group key and
        ranges every touched group's key is within (``Program.state_bounds``): the state is read
        within them, and the change states them, for Spark to carry across the joins reading it.
        ``state`` is read at the touched groups only (``Env.touched`` may hold just those), and
        once: one aggregation over the touched state rows and the change's partials gives each
        touched group's state before and after (``_sides``), and the output rows of both sides
        are read from that one relation, signed by side (Spark would scan a relation named
        twice twice)."""
        if self.agg.keeps_rows:
            cols = [f"{quote(k)} AS {quote(o)}" for k, o in zip(self.agg.keys, self.agg.out_keys)]
            return f"SELECT {', '.join(cols + [WEIGHT])}\nFROM (\n{indent(child_delta_sql)}\n) AS _ivm_d"
        keys = [quote(k) for k in self.layout.keys]
        summed = [(quote(c), bigint) for c, bigint in self.layout.summed_state_columns()]
        # the row partials; with DISTINCT calls, joined with their crossings' partials later
        rows = "_ivm_rp" if self.layout.distinct_calls else "_ivm_p"
        ctes = [
            ("_ivm_d", child_delta_sql),
            (rows, self.row_partials("SELECT * FROM _ivm_d")),
        ]
        if keys:
            ctes.append(("_ivm_t", f"SELECT DISTINCT {', '.join(keys)} FROM {rows}"))

        def touched(table: str) -> str:
            if not keys:
                return f"SELECT * FROM {table}"
            on = null_safe_match(self.layout.keys, "s", "t")
            return f"SELECT s.* FROM {_bounded(table, within)} AS s LEFT SEMI JOIN _ivm_t AS t ON {on}"

        groups = [("_ivm_og", touched(state(GROUPS))), ("_ivm_gs", _sides(keys, summed, "_ivm_og", "_ivm_p"))]
        ctes += [] if self.layout.distinct_calls else groups  # (with them: once _ivm_p is there)
        # each value state is read for the touched groups when their rows are read back from it
        # (VALUES calls), else only at the change's values (DISTINCT calls: their crossings)
        sided_values, distinct_partials = {}, {}
        for i, arg in enumerate(self.layout.value_args):
            changes = (f"_ivm_dv{i}", self.value_partials("SELECT * FROM _ivm_d", arg))
            summarized = arg in self.layout.summarized_args
            if summarized:
                ctes += [(f"_ivm_ov{i}", touched(state(value_state(arg)))), changes]
            else:
                ctes += [changes, (f"_ivm_ov{i}", self.values_at_changes(
                    state(value_state(arg)), f"SELECT * FROM _ivm_dv{i}", within))]
            if arg in self.layout.distinct_args:
                crossings = self.crossings(f"SELECT * FROM _ivm_dv{i}", f"SELECT * FROM _ivm_ov{i}")
                ctes.append((f"_ivm_dp{i}", self.distinct_partials(arg, crossings)))
                distinct_partials[arg] = f"SELECT * FROM _ivm_dp{i}"
            if summarized:
                values = _sides(keys + [VALUE], [(WEIGHT, True)], f"_ivm_ov{i}", f"_ivm_dv{i}")
                ctes.append((f"_ivm_sv{i}", f"SELECT * FROM (\n{indent(values)}\n) AS _ivm_s\nWHERE {WEIGHT} <> 0"))
                sided_values[arg] = f"SELECT * FROM _ivm_sv{i}"
        if self.layout.distinct_calls:
            ctes.append(("_ivm_p", self._with_distinct_partials(f"SELECT * FROM {rows}", distinct_partials)))
            ctes += groups
        outs = [quote(c) for c in self.agg.columns]
        stated = ""
        if within is not None:
            out_key = self.agg.out_keys[self.agg.keys.index(within[0])]
            stated = f"\nWHERE {within[1].predicate(out_key)}"
        sides = "SELECT * FROM _ivm_gs"
        if self.layout.held is not None:  # the new state must stay one its target row determines
            sides = self.layout.held.guarded(sides)
        both = self.rows(sides, sided_values, self.agg.columns, sided=True)
        return (
            f"{with_ctes(ctes)}\n"
            f"SELECT {', '.join(outs)}, CAST(sum({WEIGHT}) AS BIGINT) AS {WEIGHT}\nFROM (\n"
            f"{indent(both)}\n) AS _ivm_x{stated}\nGROUP BY {', '.join(outs)}\nHAVING sum({WEIGHT}) <> 0"
        )

    def touched_rows(self, table: str, child_delta_sql: str) -> str:
        """The rows of a state table (the group state, or a value state: each row carries its
        group's keys) of every group ``child_delta_sql`` touches: one scan of the state with the
        change's group keys broadcast to it (``Env.touched``). Staged for a large state updated in
        two passes, it is the one read of the state that the aggregate's change and the second
        pass both need (each would otherwise scan the state)."""
        keys = [quote(k) for k in self.layout.keys]
        return (f"SELECT /*+ BROADCAST(t) */ s.* FROM {table} AS s\n"
                f"LEFT SEMI JOIN (\n  SELECT DISTINCT {', '.join(keys)} FROM (\n{indent(child_delta_sql, '    ')}\n"
                f"  ) AS _ivm_d\n) AS t ON {null_safe_match(self.layout.keys, 's', 't')}")

    # -- maintaining the state ------------------------------------------------------------------
    def merge_groups(self, table: str, child_delta_sql: str, old_values: Mapping[str, str],
                     within: KeyBound | None = None) -> str:
        """Add the change's partials to the group state (``old_values``: see ``group_partials``);
        a group whose row count would become negative (the change deletes rows that are not
        there) fails the statement. ``within``: a group key and ranges every group the change
        touches is within (``Program.state_bounds``): the MERGE reads only those state rows."""
        return (
            f"{self._merge_matched_groups(table, self.group_partials(child_delta_sql, old_values, within), within)}\n"
            # a group the change only passes through (its rows cancel: count 0) is not inserted
            f"WHEN NOT MATCHED AND d.{COUNT} <> 0 THEN {_insert_clause(*self._new_group())}"
        )

    def update_groups(self, table: str, child_delta_sql: str, old_values: Mapping[str, str],
                      within: KeyBound | None = None) -> str:
        """The first pass of ``merge_groups`` done in two (``insert_groups`` the second): the
        MERGE without its insert clause — an inner join, so Spark broadcasts the change's
        partials to the scan of the state instead of shuffling the whole state by them."""
        partials = f"SELECT /*+ BROADCAST(_ivm_d) */ * FROM (\n" \
                   f"{indent(self.group_partials(child_delta_sql, old_values, within))}\n) AS _ivm_d"
        return self._merge_matched_groups(table, partials, within)

    def insert_groups(self, table: str, read: str, child_delta_sql: str, old_values: Mapping[str, str],
                      within: KeyBound | None = None) -> str:
        """The second pass of ``merge_groups`` done in two, after ``update_groups``: the groups
        of the change's partials that the state as the last commit left it (``read``) does not
        hold, inserted (a group whose rows cancel is not; one of negative count fails it)."""
        cols, values = self._new_group()
        return insert_unmatched(table, _bounded(read, within), self.group_partials(child_delta_sql, old_values, within),
                                self.layout.keys, cols, ", ".join(values), f"d.{COUNT} <> 0")

    def _new_group(self) -> tuple[list[str], list[str]]:
        """The columns and values of a state row for a group the state does not hold, from its
        partials (alias ``d``)."""
        return self.layout.stored(GROUPS).inserted({
            c: refuse_negative(f"d.{COUNT}", "a group") if c == COUNT else "d." + quote(c)
            for c in self.layout.group_state_columns()})

    def _merge_matched_groups(self, table: str, partials_sql: str, within: KeyBound | None) -> str:
        """A MERGE of group partials (alias ``d``) into the group state (alias ``s``), with its
        clauses for the groups the state holds: each partial added, a group left with no rows
        deleted, one left with a negative row count refused."""
        on = _within(self.layout.stored(GROUPS).match(self.layout.keys, "s", "d"), within)
        new_count = f"s.{COUNT} + d.{COUNT}"
        sets = [f"s.{COUNT} = {refuse_negative(new_count, 'a group')}"]
        for c in self.layout.linear_calls + self.layout.distinct_calls:
            for suffix in ("_s", "_n"):
                col = quote(c.name + suffix)
                sets.append(f"s.{col} = s.{col} + d.{col}")
        return (
            f"MERGE INTO {table} AS s\nUSING (\n{indent(partials_sql)}\n) AS d\nON {on}\n"
            f"WHEN MATCHED AND {new_count} = 0 THEN DELETE\n"
            f"WHEN MATCHED THEN UPDATE SET {', '.join(sets)}"
        )

    def pieces_sql(self, state: StateTable) -> str:
        """A state of appended pieces (``Aggregate.takes_pieces``) as the Z-set it sums to, in
        the aggregate's output columns: each piece a row weighted by the copies it adds (or, when
        negative, retracts). A reader that sums weights per row anyway (a window's change) reads
        this and filters the pieces before it sums them."""
        cols = [f"{quote(k)} AS {quote(o)}" for k, o in zip(self.layout.keys, self.agg.out_keys)]
        return f"SELECT {', '.join(cols)}, CAST({COUNT} AS BIGINT) AS {WEIGHT}\nFROM {state('groups')}"

    def summed_pieces(self, table: str) -> str:
        """A state of appended pieces (``Aggregate.takes_pieces``) as one row per distinct row."""
        keys = ", ".join(quote(k) for k in self.layout.keys)
        return (f"SELECT {keys}, CAST(sum({COUNT}) AS BIGINT) AS {COUNT}\nFROM {table}\nGROUP BY {keys}\n"
                f"HAVING sum({COUNT}) <> 0")

    def pieces(self, child_sql: str) -> str:
        """A Z-set over the child's columns as pieces of a state of appended pieces
        (``Aggregate.takes_pieces``): each row with its weight as the copies it adds, not summed
        per row (the state's readers sum them)."""
        return f"{self.row_pieces(child_sql)}\nWHERE {WEIGHT} <> 0"

    def append_groups(self, table: str, child_delta_sql: str) -> str:
        """Add the change to a state of appended pieces: its rows and their copies, appended."""
        return self.layout.stored(GROUPS).insert_into(table, self.pieces(child_delta_sql))

    def merge_values(self, table: str, child_delta_sql: str, arg: str, within: KeyBound | None = None) -> str:
        """Add the change's values of ``arg`` to its value state (a value whose weight would
        become negative fails the statement; ``within``: see ``merge_groups``)."""
        return (
            f"{self._merge_matched_values(table, self.value_partials(child_delta_sql, arg), arg, within)}\n"
            f"WHEN NOT MATCHED THEN {_insert_clause(*self._new_value(arg))}"
        )

    def update_values(self, table: str, child_delta_sql: str, arg: str, within: KeyBound | None = None) -> str:
        """The first pass of ``merge_values`` done in two (see ``update_groups``)."""
        partials = f"SELECT /*+ BROADCAST(_ivm_d) */ * FROM (\n{indent(self.value_partials(child_delta_sql, arg))}\n" \
                   f") AS _ivm_d"
        return self._merge_matched_values(table, partials, arg, within)

    def insert_values(self, table: str, read: str, child_delta_sql: str, arg: str) -> str:
        """The second pass of ``merge_values`` done in two, after ``update_values``: the values
        the value state as the last commit left it (``read``) does not hold, inserted (one of
        negative weight fails it)."""
        cols, values = self._new_value(arg)
        return insert_unmatched(table, read, self.value_partials(child_delta_sql, arg), [*self.layout.keys, VALUE],
                                cols, ", ".join(values), "TRUE")

    def _new_value(self, arg: str) -> tuple[list[str], list[str]]:
        """The columns and values of a value state row for a value the state does not hold
        (alias ``d``)."""
        return self.layout.stored(value_state(arg)).inserted({
            c: refuse_negative(f"d.{c}", "a value") if c == WEIGHT else "d." + quote(c)
            for c in [*self.layout.keys, VALUE, WEIGHT]})

    def _merge_matched_values(self, table: str, partials_sql: str, arg: str, within: KeyBound | None) -> str:
        """A MERGE of value partials (alias ``d``) into a value state (alias ``s``), with its
        clauses for the values the state holds: each weight added, a value left with none
        deleted, one left with a negative weight refused."""
        on = _within(self.layout.stored(value_state(arg)).match([*self.layout.keys, VALUE], "s", "d"), within)
        new_weight = f"s.{WEIGHT} + d.{WEIGHT}"
        return (
            f"MERGE INTO {table} AS s\nUSING (\n{indent(partials_sql)}\n) AS d\nON {on}\n"
            f"WHEN MATCHED AND {new_weight} = 0 THEN DELETE\n"
            f"WHEN MATCHED THEN UPDATE SET s.{WEIGHT} = {refuse_negative(new_weight, 'a value')}"
        )

    def rewrite_groups(self, table: str, read: str, child_delta_sql: str, old_values: Mapping[str, str]) -> str:
        """``merge_groups`` for a small state: the table is rewritten with each group's state
        plus the change's partials (one INSERT OVERWRITE, cheaper than a MERGE on Iceberg and it
        leaves no delete files)."""
        return self.layout.stored(GROUPS).overwrite(table, self.summed_groups(read, child_delta_sql, old_values))

    def summed_groups(self, read: str, child_delta_sql: str, old_values: Mapping[str, str]) -> str:
        """The group state after the change: each group's state (``read``) plus the change's
        partials; a group whose row count would become negative fails the statement. The change
        is added as pieces (``group_pieces``), summed with the state in one aggregation: one
        shuffle, not one for the partials and another for the sum (Q1-like's rewrite at SF 1:
        0.41-0.52 s against 0.51-0.57 s)."""
        state_cols = self.layout.group_state_columns()
        keys = [quote(k) for k in self.layout.keys]
        sums = []
        for c, bigint in self.layout.summed_state_columns():
            total = _total(quote(c), bigint)
            sums.append(f"{refuse_negative(total, 'a group') if c == COUNT else total} AS {quote(c)}")
        cols = ", ".join(quote(c) for c in state_cols)
        group = f"\nGROUP BY {', '.join(keys)}" if keys else ""
        change = (self.group_pieces(child_delta_sql, old_values) if self.layout.distinct_calls
                  else self.row_pieces(child_delta_sql))
        return (
            f"SELECT {', '.join(keys + sums)}\nFROM (\n"
            f"  SELECT {cols} FROM {read}\n  UNION ALL\n"
            f"  SELECT {cols} FROM (\n{indent(change, '    ')}\n  ) AS d\n"
            f") AS _ivm_u{group}\nHAVING sum({COUNT}) <> 0"
        )

    def append_values(self, table: str, child_delta_sql: str, arg: str) -> str:
        """Add the change's values of ``arg`` to a value state of appended pieces
        (``Layout.appended_value_args``): appended as they are; its readers sum a value's pieces,
        and the group state's update refuses a value whose weight would become negative."""
        return self.layout.stored(value_state(arg)).insert_into(table, self.value_partials(child_delta_sql, arg))

    def summed_value_pieces(self, table: str) -> str:
        """A value state of appended pieces as one row per (group, value) with its net weight."""
        cols = ", ".join([quote(k) for k in self.layout.keys] + [VALUE])
        return (f"SELECT {cols}, CAST(sum({WEIGHT}) AS BIGINT) AS {WEIGHT}\nFROM {table}\nGROUP BY {cols}\n"
                f"HAVING sum({WEIGHT}) <> 0")

    def rewrite_values(self, table: str, read: str, child_delta_sql: str, arg: str) -> str:
        """``merge_values`` for a small state, as one INSERT OVERWRITE (see ``rewrite_groups``):
        the change's rows added as pieces (``value_pieces``), summed with the state in one
        aggregation."""
        keys = [quote(k) for k in self.layout.keys] + [VALUE]
        cols = ", ".join(keys + [WEIGHT])
        total = f"CAST(sum({WEIGHT}) AS BIGINT)"
        return self.layout.stored(value_state(arg)).overwrite(table, (
            f"SELECT {', '.join(keys)}, {refuse_negative(total, 'a value')} AS {WEIGHT}\nFROM (\n"
            f"  SELECT {cols} FROM {read}\n  UNION ALL\n"
            f"  SELECT {cols} FROM (\n{indent(self.value_pieces(child_delta_sql, arg), '    ')}\n  ) AS d\n"
            f") AS _ivm_u\nGROUP BY {', '.join(keys)}\nHAVING sum({WEIGHT}) <> 0"
        ))

    def negative_groups_sql(self, table: str, child_delta_sql: str) -> str:
        """How many groups ``merge_groups`` would refuse (for the error message)."""
        on = null_safe_match(self.layout.keys, "s", "d")
        return (
            f"SELECT CAST(count(*) AS BIGINT) AS bad FROM (\n{indent(self.row_partials(child_delta_sql))}\n) AS d\n"
            f"LEFT JOIN {table} AS s ON {on}\nWHERE coalesce(s.{COUNT}, 0) + d.{COUNT} < 0"
        )

    # -- Spark's own aggregate, for its types ---------------------------------------------------
    def plain_sql(self, child_sql: str) -> str:
        """Spark's own GROUP BY over the child as a bag: only for asking Spark the types."""
        keys = self.layout.keys
        cols = [f"{quote(k)} AS {quote(o)}" for k, o in zip(keys, self.agg.out_keys)]
        cols += [
            f"{self.layout.function(c).spark_sql(quote(c.arg) if c.arg else '')} AS {quote(c.name)}"
            for c in self.agg.aggs
        ]
        group = f"\nGROUP BY {', '.join(quote(k) for k in keys)}" if keys else ""
        select = ", ".join(cols + [f"CAST(1 AS BIGINT) AS {WEIGHT}"])
        return f"SELECT {select}\nFROM (\n{indent(child_sql)}\n) AS _ivm_c{group}"

    def probe_columns(self) -> list[tuple[str, str]]:
        """(column alias, expression) whose Spark types decide this aggregate's layout."""
        out = []
        for c in self.agg.aggs:
            if c.arg is None:
                continue
            a = quote(c.arg)
            out.append((f"{self.agg.id}__{c.name}__arg", f"first({a})"))
            for kind in self.layout.function(c).type_probes:
                out.append((f"{self.agg.id}__{c.name}__{kind}", TYPE_PROBES[kind].format(a)))
        return out


SIDE = "_ivm_side"  # a touched group's state before a change (-1) or after it (+1)


def _sides(keys: list[str], summed: list[tuple[str, bool]], old: str, change: str) -> str:
    """Per group (``keys``) of the ``old`` state rows and the ``change``'s partials (both with
    the ``summed`` columns: name, and whether a BIGINT), two rows: its state before the change
    (``SIDE`` −1: the sums over ``old`` alone, NULL when it has none) and after (+1: over
    both) — one aggregation, each relation read once."""
    names = [name for name, _ in summed]
    both = ", ".join(keys + names)
    before = [f"{_total(f'CASE WHEN _ivm_is_old THEN {n} END', b, '_ivm_is_old')} AS {_before(n)}" for n, b in summed]
    after = [f"{_total(n, b)} AS {n}" for n, b in summed]
    sides = [", ".join([f"'{_field(n)}', {_before(n)}" for n in names] + [f"'{SIDE}', CAST(-1 AS BIGINT)"]),
             ", ".join([f"'{_field(n)}', {n}" for n in names] + [f"'{SIDE}', CAST(1 AS BIGINT)"])]
    group = f"\n  GROUP BY {', '.join(keys)}" if keys else ""
    return (
        f"SELECT {', '.join(keys + [f'inline(array(named_struct({sides[0]}), named_struct({sides[1]})))'])}\n"
        f"FROM (\n  SELECT {', '.join(keys + before + after)}\n  FROM (\n"
        f"    SELECT {both}, TRUE AS _ivm_is_old FROM {old}\n    UNION ALL\n"
        f"    SELECT {both}, FALSE AS _ivm_is_old FROM {change}\n  ) AS _ivm_u{group}\n) AS _ivm_on"
    )


def _total(value: str, bigint: bool, present: str | None = None) -> str:
    """The sum of a group state's column (``Layout.summed_state_columns``) over the rows where
    ``present`` holds (None: every row). An ``_s`` is NULL only when its sum overflowed (a
    partial with no value is 0: ``Aggregator.partial_sql``), and so is the total, as Spark's
    own sum over all the group's values is."""
    if bigint:
        return f"CAST(sum({value}) AS BIGINT)"
    rows = "count(*)" if present is None else f"count(CASE WHEN {present} THEN 1 END)"
    return f"CASE WHEN {rows} = count({value}) THEN sum({value}) END"


def _field(name: str) -> str:
    return name.strip("`")


def _before(name: str) -> str:
    field = _field(name)
    return quote(f"_ivm_old_{field[len('_ivm_'):] if field.startswith('_ivm_') else field}")


def _bounded(table: str, within: KeyBound | None) -> str:
    """A state table's rows within ``within`` (a relation), or the table itself without it."""
    return table if within is None else f"(SELECT * FROM {table} WHERE {within[1].predicate(within[0])})"


def _within(on: str, within: KeyBound | None) -> str:
    """A MERGE's match condition, restricted to the state rows (alias ``s``) within ``within``."""
    return on if within is None else f"{on} AND {within[1].predicate(within[0], 's')}"


def _insert_clause(columns: list[str], values: list[str]) -> str:
    """A MERGE's ``INSERT (columns) VALUES (values)``."""
    return f"INSERT ({', '.join(quote(c) for c in columns)}) VALUES ({', '.join(values)})"
