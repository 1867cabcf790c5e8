"""The Spark SQL statements of a refresh, as pure text builders (golden-tested, no Spark here).

Names passed in are already-quoted relation names (``quote_relation``); column lists are raw
column names and are quoted here. Every statement works on Iceberg and keeps to SQL that
Delta Lake accepts too.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

# (the adapter names the weight and seq columns as ``st.WEIGHT`` and ``st.SEQ``)
from ivm_core.errors import ROW_TWICE
from ivm_core.sqltext import (
    FLOAT_TYPES,
    SEQ,
    WEIGHT,
    absent_rows_error,
    indent,
    quote,
    refuse_negative,
    refuse_when,
    repeated,
)


def quote_relation(*parts: str) -> str:
    return ".".join(quote(p) for p in parts if p)


def string_literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _cols(columns: Iterable[str], prefix: str = "") -> str:
    return ", ".join(f"{prefix}{quote(c)}" for c in columns)


def with_ctes(ctes: Sequence[tuple[str, str]]) -> str:
    """``WITH name AS (sql), …`` of (name, SELECT) pairs, each SELECT indented."""
    return "WITH " + ",\n".join(f"{name} AS (\n{indent(sql)}\n)" for name, sql in ctes)


def null_safe_match(columns: Sequence[str], left: str, right: str) -> str:
    if not columns:
        return "TRUE"
    return " AND ".join(f"{left}.{quote(c)} <=> {right}.{quote(c)}" for c in columns)


# -- reading changes --------------------------------------------------------------------------

def consolidated_changes(change_table: str, columns: Sequence[str], low: int | None, high: int,
                         bounds: str | None = None) -> str:
    """Net weight per distinct row (over ``columns``) of the change rows in ``(low, high]``.

    ``bounds`` (``key_bounds``) is a predicate every row of the window satisfies, stated so that
    Spark infers it for whatever the change is equi-joined with."""
    group = f"\nGROUP BY {_cols(columns)}" if columns else ""
    select = f"{_cols(columns)}, " if columns else ""
    return (
        f"SELECT {select}CAST(SUM({WEIGHT}) AS BIGINT) AS {WEIGHT}\n"
        f"FROM {change_table}\nWHERE {window(low, high, bounds)}{group}\nHAVING SUM({WEIGHT}) <> 0"
    )


def window_changes(change_table: str, columns: Sequence[str], low: int, high: int, bounds: str | None = None) -> str:
    """The change rows in ``(low, high]`` as they are, one row and weight each (for a consumer
    that sums weights itself: ``Program.unconsolidated_inputs``)."""
    select = f"{_cols(columns)}, " if columns else ""
    return (f"SELECT {select}CAST({WEIGHT} AS BIGINT) AS {WEIGHT}\n"
            f"FROM {change_table}\nWHERE {window(low, high, bounds)}")


def window(low: int | None, high: int, bounds: str | None = None) -> str:
    """The change rows of the window ``(low, high]`` (``low`` None: the whole history up to
    ``high``), within ``bounds`` when given."""
    where = f"{SEQ} <= {int(high)}" if low is None else f"{SEQ} > {int(low)} AND {SEQ} <= {int(high)}"
    return f"{where} AND {bounds}" if bounds else where


# -- an Iceberg input's change between two of its snapshots ------------------------------------
# Staged once per run as the input's change relation: its rows summed per distinct row, every
# one at sequence SNAPSHOT_WINDOW[1], so the run reads it as the window SNAPSHOT_WINDOW.
SNAPSHOT_WINDOW = (0, 1)


def changelog_view(table: str, low: int, high: int, view: str) -> str:
    """Iceberg's changelog of ``table`` from snapshot ``low`` (exclusive, an ancestor of ``high``)
    to ``high`` as the temp view ``view``: a row per inserted and per deleted row
    (``_change_type``), from the data files those snapshots added and removed only."""
    options = f"map('start-snapshot-id', '{int(low)}', 'end-snapshot-id', '{int(high)}')"
    return (f"CALL spark_catalog.system.create_changelog_view(table => {string_literal(table)}, "
            f"options => {options}, changelog_view => {string_literal(view)})")


def staged_change(zset_sql: str, columns: Sequence[str]) -> str:
    """A Z-set as a staged change relation: consolidated (``consolidated``), every row at
    sequence ``SNAPSHOT_WINDOW[1]``."""
    select = f"{_cols(columns)}, " if columns else ""
    return (f"SELECT {select}{WEIGHT}, CAST({SNAPSHOT_WINDOW[1]} AS BIGINT) AS {SEQ}\n"
            f"FROM (\n{indent(consolidated(zset_sql, columns))}\n) AS _ivm_c")


def changelog_changes(changelog: str, columns: Sequence[str]) -> str:
    """A changelog (``changelog_view``) as a staged change: +1 per inserted row, -1 per deleted
    one, summed per distinct row (rows a copy-on-write commit rewrote unchanged cancel)."""
    select = f"{_cols(columns)}, " if columns else ""
    weight = "CASE WHEN _change_type IN ('DELETE', 'UPDATE_BEFORE') THEN -1 ELSE 1 END"
    return staged_change(f"SELECT {select}CAST({weight} AS BIGINT) AS {WEIGHT} FROM {changelog}", columns)


# Key ranges: the distinct keys of a change window, sorted and cut at their widest gaps into at
# most this many ranges. A literal ``k BETWEEN lo AND hi`` lets Iceberg skip files and row groups
# by their min/max for any number of keys (it stops pruning IN lists above 200 literals).
RANGES_PER_KEY = 16
# a window with more distinct keys than this is bounded by one range, its minimum to its maximum
LISTED_KEYS = 100_000
RANGED_TYPES = ("tinyint", "smallint", "int", "integer", "bigint", "long", "date")


def ranged(spark_type: str) -> bool:
    """Whether a key of this type gets ranges (integral and date: a gap is a difference)."""
    return spark_type.lower() in RANGED_TYPES


def key_values(label: str, change_table: str, column: str, low: int, high: int, listed: int = LISTED_KEYS,
               deletes_only: bool = False) -> Probe:
    """A probe row (``Probe``) whose ``lo`` and ``hi`` are the least and greatest non-NULL value
    of ``column`` in the change rows in ``(low, high]`` (``deletes_only``: of those with a
    negative weight) and whose ``keys`` are, when there are at most ``listed`` of them, every
    distinct value sorted (else NULL), all as strings (``cut_ranges`` makes the ranges)."""
    c = quote(column)
    value = f"CASE WHEN {WEIGHT} < 0 THEN {c} END" if deletes_only else c
    listed_keys = f"CASE WHEN size({{keys}}) <= {int(listed)} THEN transform({{keys}}, v -> CAST(v AS STRING)) END"
    return Probe(
        label, change_table, window(low, high),
        aggregates=(("lo", f"min({value})"), ("hi", f"max({value})"), ("keys", f"array_sort(collect_set({value}))")),
        answers=(("lo", "{lo}"), ("hi", "{hi}"), ("keys", listed_keys)),
    )


def cut_ranges(lo: str | None, hi: str | None, keys: Sequence[str] | None, spark_type: str,
               most: int = RANGES_PER_KEY) -> list[tuple[str, str]]:
    """At most ``most`` ranges covering ``key_values``' keys: the sorted keys cut at the
    ``most - 1`` widest gaps between neighbours (the leftmost of equal gaps first); one range
    ``[lo, hi]`` when the keys were not listed; none when every key is NULL."""
    if lo is None or hi is None:
        return []
    if keys is None or len(keys) <= 1:
        return [(lo, hi)]
    numbers = [_number(k, spark_type) for k in keys]
    widest = sorted(range(1, len(numbers)), key=lambda i: (numbers[i - 1] - numbers[i], i))[: max(most - 1, 0)]
    starts = [0] + sorted(widest)
    ends = [i - 1 for i in starts[1:]] + [len(numbers) - 1]
    return [(keys[a], keys[b]) for a, b in zip(starts, ends)]


def _number(value: str, spark_type: str) -> int:
    return datetime.date.fromisoformat(value).toordinal() if spark_type.lower() == "date" else int(value)


def narrow(ranges: Sequence[tuple[str, str]], spark_type: str, span: tuple[str | None, str | None] = (None, None),
           most: float = 0.5) -> bool:
    """Whether ``cut_ranges`` leave out enough of the key space to be worth stating: together
    they cover at most ``most`` of it — from the least key to the greatest of the ranges and of
    ``span``, the least and greatest key of the table they will prune (``key_span``; unknown:
    the ranges' own span). A slice of keys (appends above the greatest key, deletes of the
    oldest) is narrow in a table's key space; random keys give ranges covering nearly all of
    it, which prune nothing and only cost their evaluation."""
    known = span[0] is not None and span[1] is not None
    if not ranges or (len(ranges) == 1 and not known):
        return True
    numbers = [(_number(lo, spark_type), _number(hi, spark_type)) for lo, hi in ranges]
    least, greatest = min(lo for lo, _ in numbers), max(hi for _, hi in numbers)
    if known:
        least = min(least, _number(str(span[0]), spark_type))
        greatest = max(greatest, _number(str(span[1]), spark_type))
    covered = sum(hi - lo + 1 for lo, hi in numbers)
    return covered <= most * (greatest - least + 1)


def key_span(label: str, table: str, column: str) -> Probe:
    """A probe row whose ``lo`` and ``hi`` are the least and greatest value of ``column`` in
    ``table``'s data files, from Iceberg's metadata (the files' column bounds): the key space
    ranges are ``narrow`` in. NULL when the table has no files."""
    metrics = f"readable_metrics.{quote(column)}"
    return Probe(label, f"{table}.data_files", "",
                 aggregates=(("lo", f"min({metrics}.lower_bound)"), ("hi", f"max({metrics}.upper_bound)")),
                 answers=(("lo", "{lo}"), ("hi", "{hi}")))


_DATE = re.compile(r"^-?\d{4,}-\d{2}-\d{2}$")


def key_bounds(column: str, spark_type: str, ranges: Sequence[tuple[str, str]], table: str | None = None) -> str:
    """The predicate ``column IS NULL OR column BETWEEN lo AND hi OR ...`` over ``cut_ranges``,
    with literals of the column's type (the column read from ``table``, an alias, if given)."""
    def literal(value: str) -> str:
        if spark_type.lower() == "date":
            if not _DATE.match(value):
                raise ValueError(f"not a date: {value!r}")
            return f"DATE'{value}'"
        return str(int(value))

    c = f"{table}.{quote(column)}" if table else quote(column)
    parts = [f"{c} IS NULL"]
    for lo, hi in ranges:
        parts.append(f"{c} = {literal(lo)}" if lo == hi else f"{c} BETWEEN {literal(lo)} AND {literal(hi)}")
    return "(" + " OR ".join(parts) + ")"


@dataclass(frozen=True)
class KeyRanges:
    """The ranges (``cut_ranges``) that bound a change window's values of one key column, of a
    type that gets ranges (``ranged``); NULL keys are always within them."""

    spark_type: str
    ranges: tuple[tuple[str, str], ...]

    def predicate(self, column: str, table: str | None = None) -> str:
        """``key_bounds`` over ``column`` (of ``table``, an alias, if given)."""
        return key_bounds(column, self.spark_type, self.ranges, table)

    @staticmethod
    def union(parts: Sequence["KeyRanges | None"]) -> "KeyRanges | None":
        """Ranges holding every value each part's do, each range once (None: a part unknown,
        or parts of kinds whose literals differ — dates and numbers). The parts are often equal:
        the ranges of both sides of one join key (orders' and lineitem's order keys)."""
        known = [p for p in parts if p is not None]
        if not known or len(known) < len(parts):
            return None
        dates = {p.spark_type.lower() == "date" for p in known}
        if len(dates) > 1:
            return None
        return KeyRanges(known[0].spark_type, tuple(dict.fromkeys(r for p in known for r in p.ranges)))


# a group key of an aggregate and the ranges every group a change touches has its key within
KeyBound = tuple[str, KeyRanges]


def weighted_rows(relation: str, columns: Sequence[str], weight: int = 1) -> str:
    """A bag relation seen as a Z-set: every row with ``weight`` (1; -1 to subtract it)."""
    select = f"{_cols(columns)}, " if columns else ""
    return f"SELECT {select}CAST({int(weight)} AS BIGINT) AS {WEIGHT} FROM {relation}"


def difference(new_relation: str, old_relation: str | None, columns: Sequence[str]) -> str:
    """``new − old`` of two bags as a Z-set, not consolidated (``old`` None: nothing)."""
    parts = [weighted_rows(new_relation, columns)]
    if old_relation is not None:
        parts.append(weighted_rows(old_relation, columns, -1))
    return "\nUNION ALL\n".join(parts)


def selected(relation: str, columns: Sequence[str]) -> str:
    """A relation's ``columns`` as a query (a bag: its rows as they are)."""
    return f"SELECT {_cols(columns) or '1 AS _ivm_none'} FROM {relation}"


def patched(pieces_sql: str, window_sql: str, columns: Sequence[str]) -> str:
    """``P + W`` as positive pieces: the Z-set ``pieces_sql`` (pieces of positive weight, e.g. a
    relation's rows at weight 1) plus a consolidated change ``window_sql``. Pieces no window row
    equals pass as they are; those it touches are summed with it. The window is broadcast, so
    the pieces are read twice and never shuffled (a validated window leaves no sum negative)."""
    cols = _cols(columns)
    sep = ", " if columns else ""
    group = f"\nGROUP BY {cols}" if columns else ""
    match = null_safe_match(columns, "p", "w")

    def pieces(join: str) -> str:
        return (f"SELECT /*+ BROADCAST(w) */ p.* FROM (\n{indent(pieces_sql)}\n) AS p\n"
                f"{join} (\n{indent(window_sql)}\n) AS w ON {match}")

    touched = f"{pieces('LEFT SEMI JOIN')}\nUNION ALL\n{window_sql}"
    return (
        f"{pieces('LEFT ANTI JOIN')}\nUNION ALL\n"
        f"SELECT {cols}{sep}CAST(sum({WEIGHT}) AS BIGINT) AS {WEIGHT}\nFROM (\n{indent(touched)}\n) AS _ivm_touched"
        f"{group}\nHAVING sum({WEIGHT}) <> 0"
    )


def exploded(zset_sql: str, columns: Sequence[tuple[str, str]], present: Sequence[str]) -> str:
    """The bag a Z-set with positive weights denotes: each row repeated weight times.

    ``columns`` are all the input's (name, type) in order; those not in ``present`` are not
    read by the model and come out as typed NULLs (so ``SELECT *`` keeps the input's shape).
    """
    present_set = set(present)
    outs = [
        f"_ivm_z.{quote(name)}" if name in present_set else f"CAST(NULL AS {typ}) AS {quote(name)}"
        for name, typ in columns
    ]
    return (
        f"SELECT {', '.join(outs) or '1 AS _ivm_none'}\nFROM (\n{indent(zset_sql)}\n) AS _ivm_z\n"
        f"{repeated(f'_ivm_z.{WEIGHT}', '_ivm_copies')}"
    )


# -- probes: one-row questions about the change windows, asked together in one statement ---------

PROBE_COLUMNS = ("probe", "bad", "total", "deletes", "lo", "hi", "keys")
_PROBE_TYPES = ("BIGINT", "BIGINT", "BIGINT", "STRING", "STRING", "ARRAY<STRING>")


def probe(label: str, bad: str = "NULL", total: str = "NULL", deletes: str = "NULL", lo: str = "NULL",
          hi: str = "NULL", keys: str = "NULL") -> str:
    """The SELECT list of a probe row: every probe has the columns of ``PROBE_COLUMNS`` (those
    it does not answer NULL), so any of them form one ``UNION ALL``."""
    values = dict(bad=bad, total=total, deletes=deletes, lo=lo, hi=hi, keys=keys)
    return f"SELECT {string_literal(label)} AS probe, " + ", ".join(
        f"CAST({values[c]} AS {t}) AS {c}" for c, t in zip(PROBE_COLUMNS[1:], _PROBE_TYPES))


def probe_row(**values: object) -> tuple:
    """The values of a probe row (``PROBE_COLUMNS`` after its label, those not given NULL) as a
    probe statement returns them, for a probe answered without one."""
    unknown = set(values) - set(PROBE_COLUMNS[1:])
    if unknown:
        raise ValueError(f"not probe columns: {sorted(unknown)}")
    return tuple(values.get(c) for c in PROBE_COLUMNS[1:])


@dataclass(frozen=True)
class Probe:
    """A probe row from one aggregation: ``aggregates`` (name, aggregate) over the rows of
    ``source`` that pass ``where``, and ``answers`` (a probe column, an expression over the
    aggregates, each named ``{name}``). Probes of one source and filter are answered by one scan
    of it (``probes_sql``)."""

    label: str
    source: str
    where: str
    aggregates: tuple[tuple[str, str], ...]
    answers: tuple[tuple[str, str], ...]

    @property
    def sql(self) -> str:
        """The probe asked alone."""
        return probes_sql([self])


def probes_sql(parts: Sequence[Probe | str]) -> str:
    """Probe rows in one ``UNION ALL``: each ``str`` a probe statement as it is; the ``Probe``s
    of one source and filter, whatever their place, one aggregation over one scan (several: its
    row made the probes' rows by ``inline``)."""
    groups: dict[tuple[str, str], list[Probe]] = {}
    selects: list[str | tuple[str, str]] = []
    for part in parts:
        if isinstance(part, str):
            selects.append(part)
            continue
        group = (part.source, part.where)
        if group not in groups:
            groups[group] = []
            selects.append(group)
        groups[group].append(part)
    return "\nUNION ALL\n".join(s if isinstance(s, str) else _probe_group(groups[s]) for s in selects)


def _probe_group(probes: Sequence[Probe]) -> str:
    source, where = probes[0].source, probes[0].where
    aggregates, rows = [], []
    for i, p in enumerate(probes):
        names = {name: f"_ivm_p{i}_{name}" for name, _ in p.aggregates}
        aggregates += [f"{sql} AS {names[name]}" for name, sql in p.aggregates]
        answers = {column: sql.format(**names) for column, sql in p.answers}
        rows.append((p.label, [answers.get(c, "NULL") for c in PROBE_COLUMNS[1:]]))
    filtered = f"\n  WHERE {where}" if where else ""
    scan = f"FROM (\n  SELECT {', '.join(aggregates)}\n  FROM {source}{filtered}\n) AS _ivm_probe"
    if len(rows) == 1:
        label, values = rows[0]
        return f"{probe(label, *values)}\n{scan}"
    fields = PROBE_COLUMNS[1:]
    structs = ", ".join(
        f"named_struct('probe', {string_literal(label)}, "
        + ", ".join(f"{string_literal(c)}, CAST({v} AS {t})" for c, v, t in zip(fields, values, _PROBE_TYPES)) + ")"
        for label, values in rows)
    return f"SELECT inline(array({structs}))\n{scan}"


def window_check(label: str, change_table: str, low: int | None, high: int) -> Probe:
    """A probe row of the window's rows: those whose weight is NULL or zero (``bad``), all of
    them (``total``, which tells whether rows appeared below the window's low mark) and its
    deletes (``deletes``: only a change with deletes can delete rows that are not there)."""
    return Probe(label, change_table, window(low, high),
                 aggregates=(("bad", f"count_if({WEIGHT} IS NULL OR {WEIGHT} = 0)"), ("total", "count(*)"),
                             ("deletes", f"count_if({WEIGHT} < 0)")),
                 answers=(("bad", "{bad}"), ("total", "{total}"), ("deletes", "{deletes}")))


def absent_rows(label: str, check_sql: str) -> str:
    """A probe row whose ``bad`` is the count ``check_sql`` (``negative_after``) returns."""
    return f"{probe(label, bad='bad')}\nFROM (\n{indent(check_sql)}\n) AS _ivm_check"


# a row the change ``d`` deletes more copies of than the state holds (``h``: held_copies)
_HELD_FEWER_THAN_DELETED = f"d.{WEIGHT} < 0 AND coalesce(h.{WEIGHT}, 0) + d.{WEIGHT} < 0"


def negative_after(delta_sql: str, state_table: str | None, columns: Sequence[str]) -> str:
    """Distinct rows whose multiplicity would become negative once ``delta`` is applied to the
    Z-set ``state_table`` (which may hold a row in several pieces: appended changes): each row
    the change deletes against the copies the state holds of it (``held_copies``)."""
    if state_table is None:
        return f"SELECT CAST(count(*) AS BIGINT) AS bad FROM (\n{indent(delta_sql)}\n) AS d WHERE d.{WEIGHT} < 0"
    return (
        f"SELECT CAST(count(*) AS BIGINT) AS bad FROM (\n{indent(delta_sql)}\n) AS d\n"
        f"LEFT JOIN (\n{indent(held_copies(delta_sql, state_table, columns))}\n) AS h "
        f"ON {null_safe_match(columns, 'd', 'h')}\n"
        f"WHERE {_HELD_FEWER_THAN_DELETED}"
    )


# -- state ------------------------------------------------------------------------------------

# State tables and targets take row-level changes every run: merge-on-read writes the changed
# rows and delete files instead of rewriting every data file a change touches.
MERGE_ON_READ = (("write.merge.mode", "merge-on-read"), ("write.update.mode", "merge-on-read"),
                 ("write.delete.mode", "merge-on-read"))
# A large target is read by the key ranges of the rows a change deletes: row groups of 2 MiB let
# Iceberg skip most of each file (a user's table: larger than an index's, for full scans). At
# 8 MiB a 1.5 M-row target (SF 1, ~7 MiB a file) was one row group a file: each MERGE read half
# of it; at 2 MiB a refresh read half the bytes, and a full scan of the target took no longer
TARGET_ROW_GROUP_BYTES = 2 << 20


# Every commit writes a new metadata JSON, and Iceberg keeps all of them unless told otherwise:
# the model's tables keep the last few (their snapshots are expired by refresh/maintain.py)
METADATA_CLEANUP = (("write.metadata.delete-after-commit.enabled", "true"),
                    ("write.metadata.previous-versions-max", "10"))


def table_properties(properties: Sequence[tuple[str, str]]) -> str:
    """``TBLPROPERTIES (…)``; a property named twice takes its last value."""
    merged = dict(properties)
    return "TBLPROPERTIES (" + ", ".join(f"{string_literal(k)} = {string_literal(v)}" for k, v in merged.items()) + ")"


def _created(table: str, select_sql: str, replace: bool, properties: Sequence[tuple[str, str]],
             given: Sequence[tuple[str, str]] = (), partition: str | None = None) -> str:
    """``CREATE [OR REPLACE] TABLE … AS`` with the adapter's ``properties`` and the user's
    ``given`` ones (a model's ``tblproperties``), which win where both name a property;
    partitioned by the column ``partition`` when given."""
    verb = "CREATE OR REPLACE TABLE" if replace else "CREATE TABLE"
    props = table_properties([*properties, *METADATA_CLEANUP, *given])
    partitioned = f"PARTITIONED BY ({quote(partition)})\n" if partition else ""
    return f"{verb} {table}\nUSING iceberg\n{partitioned}{props}\nAS\n{select_sql}"


def _sorted(select_sql: str, sort_key: str | None, alias: str, within_files: bool = False) -> str:
    """The rows of ``select_sql`` ordered by ``sort_key`` (unchanged without one): across the
    written files (``ORDER BY``: each file one range of the key; Spark samples the rows first
    and shuffles them by range), or ``within_files`` only (``SORT BY``: each write task sorts
    its own rows, so every file's row groups hold narrow ranges — what a bounded read skips
    by — at the cost of one sort, for rows an aggregate has just spread over tasks by their
    key anyway)."""
    if not sort_key:
        return select_sql
    order = "SORT BY" if within_files else "ORDER BY"
    return f"SELECT * FROM (\n{indent(select_sql)}\n) AS {alias}\n{order} {quote(sort_key)}"


def create_table_as(table: str, select_sql: str, replace: bool = False, merge_on_read: bool = True,
                    sort_key: str | None = None, properties: Sequence[tuple[str, str]] = ()) -> str:
    """``CREATE [OR REPLACE] TABLE … AS``; with ``sort_key`` (``Program.target_key``) each write
    task's rows are written sorted by it, in row groups of ``TARGET_ROW_GROUP_BYTES``, so that a
    read within a change's key ranges skips the row groups outside them. Within tasks, not in one
    global order: that samples the rows first, computing them twice (a per-order target of 1.5 M
    rows at SF 1: 2.1-2.4 s against 2.7-3.7 s); with row groups this small a bounded ``MERGE``
    that reads the target was no slower and a staged ``DELETE`` 0.1 s slower at most. Every file
    then spans the key range: a bounded read plans each file.
    ``properties``: the user's (a model's ``tblproperties``), over the adapter's."""
    ours = list(MERGE_ON_READ) if merge_on_read else []
    if sort_key:
        ours.append(("write.parquet.row-group-size-bytes", str(TARGET_ROW_GROUP_BYTES)))
    return _created(table, _sorted(select_sql, sort_key, "_ivm_rows", within_files=True), replace, ours,
                    properties)


# A join index is read by ranges of its sort key: row groups of 1 MiB let Iceberg skip most of
# each file (the default, 128 MiB, is the whole index in one row group). Iceberg plans a scan
# task per few row groups, weighing each at least its open-file cost (default 4 MiB): a bounded
# read of a 27 MiB index file was 41 tasks, each opening the file for the rows of one range
# (0.5-0.8 s); weighed by their size, the row groups of a file share one task that skips the
# ones outside the range by their statistics (2 tasks, 0.15-0.2 s)
INDEX_ROW_GROUP_BYTES = 1 << 20
INDEX_OPEN_FILE_COST = 64 << 10
INDEX_PROPERTIES = (("write.parquet.row-group-size-bytes", str(INDEX_ROW_GROUP_BYTES)),
                    ("read.split.open-file-cost", str(INDEX_OPEN_FILE_COST)))

# A rebuild builds the target by reading the whole state back: Snappy, not Iceberg's default zstd,
# whose Parquet pages read slower here. The per-order revenue's 1.5 M-row state (SF 1): its target
# built from it in 0.94-1.08 s against 1.30-1.41 s, the state written no slower; 27 MB against
# 16 MB, still well under the inputs it indexes (188 MB). Incremental runs' bounded reads took the
# same time either way.
STATE_CODEC = (("write.parquet.compression-codec", "snappy"),)


# A table of an aggregate's states is partitioned by its set column (``Layout.stored``): each
# write task writes the rows it has to their partitions as they come (fanout), with no shuffle
# to cluster them by partition first (Iceberg's default for a partitioned table), which would
# send every row of a state to one task
UNCLUSTERED_PARTITIONS = (("write.distribution-mode", "none"), ("write.merge.distribution-mode", "none"),
                          ("write.update.distribution-mode", "none"), ("write.delete.distribution-mode", "none"),
                          ("write.spark.fanout.enabled", "true"))


def create_state(state_table: str, select_sql: str, sort_key: str | None, partition: str | None = None) -> str:
    """Build a table of aggregate states (merge-on-read: MERGEs write delete files, not the
    whole state), partitioned by ``partition`` when it has one (a table of several states, by
    their set); with ``sort_key`` (``Program.state_sort_key``) each file sorted by it, in a join
    index's row groups, so that a read within a change's key ranges skips the row groups
    outside them. Sorted within files, not across them: a global order samples the state's
    rows first, which runs the aggregation twice (Q3-like's build at SF 1: 1.7-2.1 s against
    1.1-1.4 s), and the aggregate has already spread the rows over its tasks by their key."""
    properties = [*MERGE_ON_READ, *(INDEX_PROPERTIES if sort_key else ()), *STATE_CODEC,
                  *(UNCLUSTERED_PARTITIONS if partition else ())]
    return _created(state_table, _sorted(select_sql, sort_key, "_ivm_state", within_files=True), True, properties,
                    partition=partition)


def create_index(index_table: str, zset_sql: str, sort_key: str | None) -> str:
    """Build a join index sorted by ``sort_key`` (``InputUse.cluster_key``), so that its files
    and row groups each hold one narrow range of the key."""
    return _created(index_table, _sorted(zset_sql, sort_key, "_ivm_index"), True, [*INDEX_PROPERTIES, *STATE_CODEC])


def append_to_state(state_table: str, delta_sql: str, columns: Sequence[str], state_read: str | None = None) -> str:
    """``I(x) += Δx`` for a join index kept as a Z-set of appended pieces: the change is added
    as it is (no rewrite of the index). Readers sum a row's pieces. With ``state_read`` (the
    index as the last commit left it, within the change's key ranges) each row the change
    deletes is matched with the copies the index holds of it (``held_copies``), and the
    statement fails (``ABSENT_ROWS``) when it would leave fewer than none: one read of the
    index, no second pass over the change."""
    inserts = _cols(list(columns) + [WEIGHT])
    if state_read is None:
        return f"INSERT INTO {state_table} ({inserts})\n{delta_sql}"
    absent = refuse_when(_HELD_FEWER_THAN_DELETED, "a row of the input")
    return (
        f"INSERT INTO {state_table} ({inserts})\n"
        f"SELECT /*+ BROADCAST(h) */ {_cols(list(columns) + [WEIGHT], 'd.')}\n"
        f"FROM (\n{indent(delta_sql)}\n) AS d\n"
        f"LEFT JOIN (\n{indent(held_copies(delta_sql, state_read, columns))}\n) AS h "
        f"ON {null_safe_match(columns, 'd', 'h')}\n"
        f"WHERE {absent}"
    )


def held_copies(delta_sql: str, state_read: str, columns: Sequence[str]) -> str:
    """The net weight a Z-set of pieces (``state_read``) holds of each row the change deletes:
    the pieces are matched with the change's deletes broadcast (the state is scanned once,
    never shuffled), then summed."""
    group = f"\nGROUP BY {_cols(columns, 's.')}" if columns else ""
    sep = ", " if columns else ""
    return (
        f"SELECT /*+ BROADCAST(k) */ {_cols(columns, 's.')}{sep}sum(s.{WEIGHT}) AS {WEIGHT}\n"
        f"FROM {state_read} AS s\n"
        f"LEFT SEMI JOIN (SELECT * FROM (\n{indent(delta_sql)}\n) AS _ivm_d WHERE {WEIGHT} < 0) AS k "
        f"ON {null_safe_match(columns, 's', 'k')}{group}"
    )


def compact_state(state_table: str, delta_sql: str, columns: Sequence[str], sort_key: str | None = None) -> str:
    """``I(x) += Δx`` rewriting the index with one row per distinct row (net weight non-zero),
    sorted by ``sort_key``: done when appended pieces have made the index grow past its
    configured ratio. A row left with a negative net weight (the change deletes rows that are
    not there) fails the statement (``ABSENT_ROWS``)."""
    cols = _cols(list(columns) + [WEIGHT])
    pieces = f"SELECT {cols} FROM {state_table}\nUNION ALL\nSELECT {cols} FROM (\n{indent(delta_sql)}\n) AS _ivm_delta"
    net = consolidated(pieces, columns, refused="a row of the input")
    return f"INSERT OVERWRITE {state_table}\n{_sorted(net, sort_key, '_ivm_index')}"


def consolidated(zset_sql: str, columns: Sequence[str], refused: str | None = None) -> str:
    """One row per distinct row of a Z-set with its net weight (non-zero); with ``refused``
    (what a row is, for the message) a negative net weight fails the statement."""
    cols = _cols(columns)
    sep = ", " if columns else ""
    group = f"\nGROUP BY {cols}" if columns else ""
    net = f"CAST(sum({WEIGHT}) AS BIGINT)"
    weight = refuse_negative(net, refused) if refused else net
    return (
        f"SELECT {cols}{sep}{weight} AS {WEIGHT}\n"
        f"FROM (\n{indent(zset_sql)}\n) AS _ivm_z{group}\n"
        f"HAVING sum({WEIGHT}) <> 0"
    )


# -- output -----------------------------------------------------------------------------------

def output_changes(delta_sql: str, columns: Sequence[str], seq: int) -> str:
    """The model's change at sequence ``seq``, consolidated: its columns, ``_ivm_weight`` and
    ``_ivm_seq``, as ``<model>__changes`` holds it."""
    group = f"\nGROUP BY {_cols(columns)}" if columns else ""
    return (
        f"SELECT {_cols(columns)}, CAST(SUM({WEIGHT}) AS BIGINT) AS {WEIGHT}, "
        f"CAST({int(seq)} AS BIGINT) AS {SEQ}\n"
        f"FROM (\n{indent(delta_sql)}\n) AS _ivm_delta{group}\nHAVING SUM({WEIGHT}) <> 0"
    )


def insert_output_changes(changes_table: str, delta_sql: str, columns: Sequence[str], seq: int) -> str:
    """Consolidate the model's change and publish it at sequence ``seq``."""
    return f"INSERT INTO {changes_table}\n{output_changes(delta_sql, columns, seq)}"


def diff_into_changes(changes_table: str, new_relation: str, old_relation: str, columns: Sequence[str],
                      seq: int) -> str:
    """Publish ``new − old`` of a rebuilt target (so downstream models stay exact)."""
    return insert_output_changes(changes_table, difference(new_relation, old_relation, columns), columns, seq)


def target_change(target: str, changes_table: str, columns: Sequence[str], seq: int, bounds: str | None = None) -> str:
    """The published change at ``seq``, each row with ``_ivm_old``: how many copies of it the bag
    ``target`` holds (counted for the rows it deletes). The driver stages it (``CACHE TABLE``)
    and refuses the run, before any write to the target, if a row would be left with a
    negative count (``target_change_counts``).

    Counting copies joins the (small) deleted rows, broadcast, with the target: the target is
    scanned once and never shuffled, whatever its size. No CTE: Spark does not use a cached
    relation whose query has one. ``bounds``: a predicate over the target's columns that every
    row the change deletes satisfies (its key ranges): only the target's files and row groups
    within it are read.
    """
    cols = _cols(columns)
    sep = ", " if columns else ""
    changes = f"SELECT {cols}{sep}{WEIGHT} FROM {changes_table} WHERE {SEQ} = {int(seq)}"
    group = f"\n  GROUP BY {_cols(columns, 'n.')}" if columns else ""
    read = within(target, bounds) if bounds else target
    present = (
        f"SELECT /*+ BROADCAST(n) */ {_cols(columns, 'n.')}{sep}count(*) AS _ivm_old\n"
        f"  FROM ({changes} AND {WEIGHT} < 0) AS n\n"
        f"  JOIN {read} AS t ON {null_safe_match(columns, 'n', 't')}{group}"
    )
    return (
        f"SELECT {_cols(columns, 'c.')}{sep}c.{WEIGHT}, "
        f"CASE WHEN c.{WEIGHT} < 0 THEN coalesce(p._ivm_old, 0) ELSE 0 END AS _ivm_old\n"
        f"FROM ({changes}) AS c\n"
        f"LEFT JOIN (\n  {present}\n) AS p ON {null_safe_match(columns, 'c', 'p')}"
    )


# of a change: the copies it adds and the copies it removes
_GAINED = f"coalesce(sum(CASE WHEN {WEIGHT} > 0 THEN {WEIGHT} END), 0)"
_LOST = f"coalesce(sum(CASE WHEN {WEIGHT} < 0 THEN -{WEIGHT} END), 0)"
_GAINED_AND_LOST = f"CAST({_GAINED} AS BIGINT), CAST({_LOST} AS BIGINT)"


def target_change_counts(staged: str) -> str:
    """Of a staged ``target_change``: the rows that delete more copies than the target has
    (the change deletes rows that are not there), the rows whose copies must be deleted, the
    rows to insert (copies or copies back), the rows of which some copies stay (deleted, then
    put back), and the rows the target gains and loses."""
    return (
        f"SELECT CAST(count_if(_ivm_old + {WEIGHT} < 0) AS BIGINT), "
        f"CAST(count_if({WEIGHT} < 0 AND _ivm_old > 0) AS BIGINT), "
        f"CAST(count_if({WEIGHT} > 0 OR _ivm_old + {WEIGHT} > 0) AS BIGINT), "
        f"CAST(count_if({WEIGHT} < 0 AND _ivm_old + {WEIGHT} > 0) AS BIGINT), "
        f"{_GAINED_AND_LOST} FROM {staged}"
    )


def delete_from_target(target: str, staged: str, columns: Sequence[str], bounds: str | None = None) -> str:
    """Delete every copy of each row the staged change deletes from (a broadcast semi join:
    the staged change is in memory, so Spark knows it is small); ``bounds`` as for
    ``target_change``."""
    within = f"{bounds} AND " if bounds else ""
    return (
        f"DELETE FROM {target} AS t WHERE {within}EXISTS (\n"
        f"  SELECT 1 FROM {staged} AS s WHERE s.{WEIGHT} < 0 AND s._ivm_old > 0 "
        f"AND {null_safe_match(columns, 't', 's')}\n)"
    )


def insert_into_target(target: str, staged: str, columns: Sequence[str]) -> str:
    """Insert ``w`` copies of each row the staged change adds ``w`` to, and ``old + w`` copies
    back of each row it deleted every copy of (so duplicates stay exact).

    Spark drops the staged change from its cache when the target is written (Iceberg tables
    are equal by name, whatever version a cached query read), so reading it after the DELETE
    computes it again: ``insert_added_rows`` is the statement to use when no copies go back."""
    cols = _cols(columns)
    copies = f"CASE WHEN {WEIGHT} > 0 THEN {WEIGHT} ELSE _ivm_old + {WEIGHT} END"
    return (
        f"INSERT INTO {target} ({cols})\n"
        f"SELECT {cols} FROM {staged}\n"
        f"  {repeated(copies, '_ivm_a')}\n"
        f"  WHERE {WEIGHT} > 0 OR _ivm_old + {WEIGHT} > 0"
    )


# a failed statement: a row the change inserts into a set target is there already, or twice
_TWICE = f"CAST(raise_error('{ROW_TWICE}') AS BOOLEAN)"


def merge_into_set_target(target: str, changes_table: str, columns: Sequence[str], seq: int,
                          bounds: str | None = None) -> str:
    """Apply the published change at ``seq`` to a target that holds every row at most once
    (``Program.result_is_set``), in one MERGE matching whole rows: a row of weight −1 deletes
    its copy, a row of weight +1 is inserted. A delete of a row that is not there (or of more
    than one copy) fails the statement with ``ABSENT_ROWS``; an insert of a row that is there
    (or of two copies) with ``ROW_TWICE``. ``bounds`` as for ``target_change``, over the
    target's alias ``t``: Iceberg reads only the target's files and row groups within it."""
    source = f"SELECT {_cols(columns)}, {WEIGHT} FROM {changes_table} WHERE {SEQ} = {int(seq)}"
    return (
        f"{_set_target_merge(target, source, columns, bounds)}\n"
        f"WHEN NOT MATCHED AND {_set_target_unmatched('c')} THEN INSERT ({_cols(columns)}) "
        f"VALUES ({_cols(columns, 'c.')})"
    )


def delete_from_set_target(target: str, changes_table: str, columns: Sequence[str], seq: int,
                           bounds: str | None = None) -> str:
    """The first pass of ``merge_into_set_target`` done in two (``insert_into_set_target``): the MERGE
    without its insert clause — an inner join, so Spark broadcasts the change to the scan of the
    target instead of shuffling the whole target by it — deletes the rows of weight −1 and
    refuses an insert of a row that is there."""
    source = (f"SELECT /*+ BROADCAST(_ivm_c) */ * FROM (SELECT {_cols(columns)}, {WEIGHT} FROM {changes_table} "
              f"WHERE {SEQ} = {int(seq)}) AS _ivm_c")
    return _set_target_merge(target, source, columns, bounds)


def _set_target_merge(target: str, source_sql: str, columns: Sequence[str], bounds: str | None) -> str:
    """A MERGE of a change (``source_sql``, alias ``c``) into a set target, matching whole rows,
    with its clause for the rows the target holds: a row of weight −1 deletes its copy; one of
    weight > 0 fails the statement (``ROW_TWICE``), one below −1 too (``ABSENT_ROWS``)."""
    absent = absent_rows_error("a row of the result", "BOOLEAN")
    deletes = f"CASE WHEN c.{WEIGHT} = -1 THEN TRUE WHEN c.{WEIGHT} > 0 THEN {_TWICE} ELSE {absent} END"
    within = f" AND {bounds}" if bounds else ""
    return (
        f"MERGE INTO {target} AS t\n"
        f"USING ({source_sql}) AS c\n"
        f"ON {null_safe_match(columns, 't', 'c')}{within}\n"
        f"WHEN MATCHED AND {deletes} THEN DELETE"
    )


def _set_target_unmatched(alias: str) -> str:
    """A change row the target does not hold: TRUE for an insert (weight 1); else the statement
    fails — two copies of a row (``ROW_TWICE``), or a delete of a row that is not there."""
    absent = absent_rows_error("a row of the result", "BOOLEAN")
    return f"CASE WHEN {alias}.{WEIGHT} = 1 THEN TRUE WHEN {alias}.{WEIGHT} > 0 THEN {_TWICE} ELSE {absent} END"


def insert_into_set_target(target: str, changes_table: str, columns: Sequence[str], seq: int, live_rows_sql: str,
                           expected_rows_sql: str) -> str:
    """The second pass of ``merge_into_set_target`` done in two, after ``delete_from_set_target``
    (which deleted each row of weight −1 it holds and refused each row of weight > 0 it holds):
    the rows of weight 1 inserted, without reading the target. What the one MERGE's insert
    clause refused besides is refused here: two copies of a row (weight > 1), and a delete of a
    row the target does not hold — which the first pass left undeleted, so that the target's
    rows now (``live_rows_sql``, from Iceberg's metadata) are not ``expected_rows_sql``, its
    rows at the last commit less the rows of weight −1."""
    absent = absent_rows_error("a row of the result", "BOOLEAN")
    return (
        f"INSERT INTO {target} ({_cols(columns)})\n"
        f"SELECT {_cols(columns)} FROM {changes_table}\n"
        f"WHERE {SEQ} = {int(seq)} AND CASE WHEN ({live_rows_sql}) <> {expected_rows_sql} THEN {absent}\n"
        f"  WHEN {WEIGHT} = 1 THEN TRUE WHEN {WEIGHT} > 0 THEN {_TWICE} WHEN {WEIGHT} = -1 THEN FALSE ELSE {absent} END"
    )


def insert_unmatched(table: str, table_read: str, source_sql: str, keys: Sequence[str], columns: Sequence[str],
                     values: str, where: str) -> str:
    """The second pass of an update done in two (a MERGE whose insert clause would make Spark
    shuffle the whole table: it joins the table to the source with the source as the preserved
    side, which Spark cannot broadcast; the first pass is the MERGE without that clause, an
    inner join): INSERT INTO ``table`` (``columns``) the ``values`` of each row of
    ``source_sql`` (alias ``d``) whose ``keys`` ``table_read`` — the table as the last commit
    left it, before the first pass — does not hold and for which ``where`` holds (it may fail
    the statement: it is asked of those rows only). The keys it holds are found by a semi join
    of ``table_read`` with the source's keys, the source broadcast, then broadcast themselves
    to the source: the table is scanned once, never shuffled."""
    return (
        f"WITH _ivm_src AS (\n{indent(source_sql)}\n)\n"
        f"INSERT INTO {table} ({_cols(columns)})\n"
        f"SELECT /*+ BROADCAST(h) */ {values} FROM _ivm_src AS d\n"
        f"LEFT JOIN (\n"
        f"  SELECT /*+ BROADCAST(k) */ {_cols(keys, 's.')}, TRUE AS _ivm_held FROM {table_read} AS s\n"
        f"  LEFT SEMI JOIN (SELECT {_cols(keys)} FROM _ivm_src) AS k ON {null_safe_match(keys, 's', 'k')}\n"
        f") AS h ON {null_safe_match(keys, 'd', 'h')}\n"
        # one condition over both sides: Spark cannot evaluate ``where`` before the join
        f"WHERE CASE WHEN h._ivm_held THEN FALSE ELSE {where} END"
    )


def change_counts_probe(label: str, changes_table: str, seq: int) -> Probe:
    """A probe row whose ``total`` and ``deletes`` are the rows the published change at ``seq``
    adds to and removes from the target (``change_counts``)."""
    return Probe(label, changes_table, window(seq - 1, seq),
                 aggregates=(("gained", _GAINED), ("lost", _LOST)),
                 answers=(("total", "{gained}"), ("deletes", "{lost}")))


def change_counts(changes_table: str, seq: int) -> str:
    """The rows the published change at ``seq`` adds to and removes from the target."""
    return f"SELECT {_GAINED_AND_LOST}\nFROM {changes_table} WHERE {SEQ} = {int(seq)}"


def _target_plus_change(target_read: str, changes_table: str, columns: Sequence[str], seq: int) -> str:
    """The target as a Z-set (every row weight 1) plus the published change at ``seq``."""
    cols = _cols(columns)
    return (
        f"{weighted_rows(target_read, columns)}\nUNION ALL\n"
        f"SELECT {cols}, {WEIGHT} FROM {changes_table} WHERE {SEQ} = {int(seq)}"
    )


def rewrite_target(target: str, target_read: str, changes_table: str, columns: Sequence[str], seq: int) -> str:
    """``target = target + Δ`` for a small target, in one statement: every row's copies are
    counted over the target and the change together and the table is rewritten with them (which
    also drops the delete files earlier writes left). A row left with a negative count (the
    change deletes rows that are not there) fails the statement, so nothing is written."""
    cols = _cols(columns)
    net = f"CAST(sum({WEIGHT}) AS BIGINT)"
    return (
        f"INSERT OVERWRITE {target} ({cols})\n"
        f"SELECT {cols} FROM (\n"
        f"  SELECT {cols}, {refuse_negative(net, 'a row of the result')} AS {WEIGHT}\n"
        f"  FROM (\n{indent(indent(_target_plus_change(target_read, changes_table, columns, seq)))}\n  ) AS _ivm_z\n"
        f"  GROUP BY {cols}\n  HAVING sum({WEIGHT}) <> 0\n) AS _ivm_net\n"
        f"{repeated(WEIGHT, '_ivm_a')}"
    )


def rewrite_target_from(target: str, result_sql: str, columns: Sequence[str]) -> str:
    """``target = result`` for a small target whose result is read from state the run has just
    updated (``Program.result_sql``: a weighted row per output row, weights positive): each row
    written as many times as its weight."""
    cols = _cols(columns)
    return (
        f"INSERT OVERWRITE {target} ({cols})\n"
        f"SELECT {cols} FROM (\n{indent(result_sql)}\n) AS _ivm_r\n"
        f"{repeated(WEIGHT, '_ivm_a')}\nWHERE {WEIGHT} > 0"
    )


def rewrite_counts(new_read: str, old_read: str, columns: Sequence[str]) -> str:
    """The rows a rewrite added to and removed from a table: ``new − old`` consolidated, its
    positive and its negative weights summed (both reads pinned to their snapshots)."""
    net = consolidated(difference(new_read, old_read, columns), columns)
    return f"SELECT {_GAINED_AND_LOST}\nFROM (\n{indent(net)}\n) AS _ivm_net"


def rewrite_target_refused(target_read: str, changes_table: str, columns: Sequence[str], seq: int) -> str:
    """How many rows ``rewrite_target`` refuses (for the error message)."""
    return (
        f"SELECT CAST(count(*) AS BIGINT) FROM (\n"
        f"  SELECT {_cols(columns)} FROM (\n"
        f"{indent(indent(_target_plus_change(target_read, changes_table, columns, seq)))}\n  ) AS _ivm_z\n"
        f"  GROUP BY {_cols(columns)}\n  HAVING sum({WEIGHT}) < 0\n) AS _ivm_bad"
    )


def deleted_rows_probe(label: str, changes_table: str, seq: int) -> Probe:
    """A probe row whose ``deletes`` is how many distinct rows the published change at ``seq``
    deletes from (rows of negative weight: the change is consolidated). Equal to the copies it
    removes (``change_counts_probe``), it deletes each row once: ``delete_every_copy`` applies."""
    return Probe(label, changes_table, window(seq - 1, seq),
                 aggregates=(("rows", f"count_if({WEIGHT} < 0)"),), answers=(("deletes", "{rows}"),))


def delete_every_copy(target: str, changes_table: str, columns: Sequence[str], seq: int, bounds: str) -> str:
    """Delete every copy of each row the published change at ``seq`` deletes once (weight −1),
    in one MERGE matching whole rows, the target read within ``bounds`` (over its alias ``t``:
    the key ranges of those rows). A row the target does not hold fails the statement
    (``ABSENT_ROWS``): its insert clause only refuses. The target's row counts then say whether
    a row had more copies, which ``insert_rows_and_copies`` puts back."""
    cols = _cols(columns)
    absent = absent_rows_error("a row of the result", "BOOLEAN")
    return (
        f"MERGE INTO {target} AS t\n"
        f"USING (SELECT {cols} FROM {changes_table} WHERE {SEQ} = {int(seq)} AND {WEIGHT} < 0) AS c\n"
        f"ON {null_safe_match(columns, 't', 'c')} AND {bounds}\n"
        f"WHEN MATCHED THEN DELETE\n"
        f"WHEN NOT MATCHED AND {absent} THEN INSERT ({cols}) VALUES ({_cols(columns, 'c.')})"
    )


def insert_rows_and_copies(target: str, changes_table: str, columns: Sequence[str], seq: int, old_target: str,
                           bounds: str) -> str:
    """After ``delete_every_copy`` deleted rows that had more copies than the change deletes:
    insert ``w`` copies of each row the change adds ``w`` to, and put back every copy but one of
    each row it deleted, counted in ``old_target`` (the target as the last commit left it, read
    within ``bounds``, over its columns) — the deleted rows broadcast to its scan."""
    cols = _cols(columns)
    change = f"SELECT {cols}, {WEIGHT} FROM {changes_table} WHERE {SEQ} = {int(seq)}"
    kept = (
        f"SELECT /*+ BROADCAST(d) */ {_cols(columns, 't.')}, count(*) - 1 AS _ivm_n\n"
        f"FROM {within(old_target, bounds)} AS t\n"
        f"JOIN ({change} AND {WEIGHT} < 0) AS d ON {null_safe_match(columns, 't', 'd')}\n"
        f"GROUP BY {_cols(columns, 't.')}"
    )
    return (
        f"INSERT INTO {target} ({cols})\n"
        f"SELECT {cols} FROM (\n"
        f"  SELECT {cols}, {WEIGHT} AS _ivm_n FROM ({change} AND {WEIGHT} > 0) AS a\n"
        f"  UNION ALL\n{indent(kept)}\n) AS _ivm_r\n"
        f"{repeated('_ivm_n', '_ivm_a')}\nWHERE _ivm_n > 0"
    )


def insert_added_rows(target: str, changes_table: str, columns: Sequence[str], seq: int) -> str:
    """Insert ``w`` copies of each row the published change at ``seq`` adds ``w`` to: all an
    in-place update inserts when no deleted row keeps copies (read from the change table, not
    the staged change, so the target is not scanned again)."""
    cols = _cols(columns)
    return (
        f"INSERT INTO {target} ({cols})\n"
        f"SELECT {cols} FROM {changes_table}\n"
        f"  {repeated(WEIGHT, '_ivm_a')}\n"
        f"  WHERE {SEQ} = {int(seq)} AND {WEIGHT} > 0"
    )


# -- correctness ------------------------------------------------------------------------------

FLOAT_DIGITS = 12


def comparable(column: str, spark_type: str) -> str:
    """The column as compared by the correctness test.

    DOUBLE values are compared at 12 significant digits (FLOAT at 6): Spark's own floating-point SUM
    and AVG depend on the order rows arrive in, so two full recomputes of the same query can
    differ in the last bits. Every other type is compared exactly.
    """
    c = quote(column)
    kind = spark_type.lower()
    if kind not in FLOAT_TYPES:
        return c
    digits = FLOAT_DIGITS - 1 if kind == "double" else 5
    return f"CAST(format_string('%.{digits}e', CAST({c} AS DOUBLE)) AS DOUBLE) AS {c}"


def multiset_difference(target: str, full_sql: str, columns: Sequence[str], types: Sequence[str] | None = None) -> str:
    """Rows whose multiplicity differs between ``target`` and a recompute of the model."""
    types = list(types) if types is not None else ["" for _ in columns]
    normalized = ", ".join(comparable(c, t) for c, t in zip(columns, types))
    target = f"(SELECT {normalized} FROM {target}) AS _ivm_target" if columns else target
    full_sql = f"SELECT {normalized} FROM (\n{indent(full_sql)}\n) AS _ivm_recompute" if columns else full_sql
    cols = _cols(columns)
    group = f" GROUP BY {cols}" if columns else ""
    outs = ", ".join(f"coalesce(t.{quote(c)}, f.{quote(c)}) AS {quote(c)}" for c in columns)
    # the counts are named _ivm_n: a model column may well be called `n`
    return (
        f"WITH t AS (SELECT {cols}{', ' if columns else ''}count(*) AS _ivm_n FROM {target}{group}),\n"
        f"f AS (SELECT {cols}{', ' if columns else ''}count(*) AS _ivm_n "
        f"FROM (\n{indent(full_sql)}\n) AS _ivm_full{group})\n"
        f"SELECT {outs}{', ' if columns else ''}coalesce(t._ivm_n, 0) AS target_count, "
        f"coalesce(f._ivm_n, 0) AS full_refresh_count\n"
        f"FROM t FULL OUTER JOIN f ON {null_safe_match(columns, 't', 'f')}\n"
        f"WHERE NOT (t._ivm_n <=> f._ivm_n)"
    )


# -- relations a refresh reads: inputs, indexes and the plan's rows ------------------------------

def filtered(zset_sql: str, condition: str) -> str:
    """The rows of a Z-set that satisfy ``condition`` (a join index keeps only the rows its
    input's own filters let through)."""
    return f"SELECT * FROM (\n{zset_sql}\n) AS _ivm_rows\nWHERE {condition}"


def within(relation: str, predicate: str) -> str:
    """A relation's rows that satisfy ``predicate``, as a relation (a join index or a target
    read within a change's key ranges)."""
    return f"(SELECT * FROM {relation} WHERE {predicate})"


def empty_input(relation: str, columns: Sequence[str]) -> str:
    """An input with no rows, typed as ``relation``'s ``columns`` (Spark types a query from it)."""
    select = f"{_cols(columns)}, " if columns else ""
    return f"(SELECT {select}CAST(1 AS BIGINT) AS {WEIGHT} FROM {relation} WHERE FALSE) AS _ivm_empty"


def aliased(sql: str, alias: str) -> str:
    """A query as a leaf the plan reads (``(sql) AS alias``)."""
    return f"(\n{sql}\n) AS {alias}"


def zset_sum(terms: Sequence[tuple[str, int]], columns: Sequence[str]) -> str:
    """``Σ sign · Z`` over ``terms`` of (Z-set SQL, +1 or -1): pieces, not summed."""
    select = f"{_cols(columns)}, " if columns else ""
    return "\nUNION ALL\n".join(
        f"SELECT {select}{WEIGHT if sign > 0 else f'-{WEIGHT} AS {WEIGHT}'} FROM (\n{indent(zset)}\n) AS _ivm_term{i}"
        for i, (zset, sign) in enumerate(terms)
    )


def index_after_change(index: str, delta_leaf: str, columns: Sequence[str]) -> str:
    """A join index with a change window added: ``I + Δ`` (pieces, not summed)."""
    select = f"{_cols(columns)}, " if columns else ""
    return (
        f"(\nSELECT {select}{WEIGHT} FROM {index}\nUNION ALL\n"
        f"SELECT {select}{WEIGHT} FROM {delta_leaf}\n) AS _ivm_new"
    )


def copies_as(zset_sql: str, internal: Sequence[str], names_types: Sequence[tuple[str, str]]) -> str:
    """The bag a Z-set of the plan's (internal) columns denotes, each row repeated weight
    times, cast to the model's names and Spark types."""
    outs = ", ".join(
        f"CAST(_ivm_z.{col} AS {typ}) AS {quote(name)}" for col, (name, typ) in zip(internal, names_types)
    )
    return (
        f"SELECT {outs}\nFROM (\n{zset_sql}\n) AS _ivm_z\n"
        f"{repeated(f'_ivm_z.{WEIGHT}', '_ivm_copies')}"
    )


def differing_rows(name: str, stored: str, expected: str) -> str:
    """How many rows two queries differ by as bags, labelled ``name`` (ivm_check)."""
    return labelled_count(
        name, f"  (({stored}) EXCEPT ALL ({expected}))\n  UNION ALL\n  (({expected}) EXCEPT ALL ({stored}))"
    )


def labelled_count(name: str, rows: str) -> str:
    """The number of rows ``rows`` returns, labelled ``name``: one row (name, differing) of
    ivm_check's report."""
    return (f"SELECT {string_literal(name)} AS name, CAST(count(*) AS BIGINT) AS differing FROM (\n{rows}\n)"
            " AS _ivm_rows")
