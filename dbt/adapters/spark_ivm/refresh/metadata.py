"""How a run reads its own tables' Iceberg metadata once it holds the lock: each table's current
snapshot, its rows (``count(*)``) and its live rows (its snapshot summary's records less its
position deletes) — or those of one set of a table of aggregate states (its ``_ivm_set``
partition: the partition's ``count(*)``, and its files' records less their position deletes, as
``<table>.partitions`` sums them). Two readers of the same measures:

* ``SqlMetadata`` — metadata-table queries (``<table>.refs``, ``<table>.snapshots``,
  ``<table>.partitions``), through any
  connection method (``thrift``, ``http``): what a commit embeds as subqueries of its log
  ``INSERT``, or one ``UNION ALL`` statement;
* ``CatalogMetadata`` — the embedded session's own Iceberg catalog, through the JVM it runs in:
  each table loaded from the metastore once per run (the catalog caches no table, see
  ``connections``) and refreshed for each later read, and its current snapshot read (a set's
  counts from the files its scan plans for the set's partition), with no
  Spark job (~0.01 s a table against ~0.1 s for each part of
  a metadata query). A measure it cannot answer
  exactly (a row count of a table with deletes, a summary without totals) and any error of the
  catalog fall back to ``SqlMetadata``.

The catalog also reads, each with no statement where SQL needs one:

* the model's log (``log_rows``: its last and last committed entries, through Iceberg's generic
  reader from the files at or above the ``seq`` its last append wrote) where ``bk.read_log``
  sorts the whole log in Spark (its cost grew with the files between two compactions: 1.1 s at
  100 files, against 0.03 s);
* an Iceberg input's columns (``iceberg_columns``) where ``DESCRIBE TABLE`` lists them;
* a ``base: tagged`` source's ``ivm_seq_<s>`` tags (``base_tags``) where SQL reads them from the
  base's ``.refs`` (``reading.positions``, ``reading.position_probes``);
* a key's span in a table (``key_span``: its data files' column bounds) where SQL reads its
  ``.data_files`` (``reading.ask_key_span``);
* a change table's high mark and row count (``change_marks``: its greatest ``_ivm_seq`` bound
  and its records, exact while it has no delete files) where the capture statement aggregates
  it (``capture``) — or, when its current snapshot is the one the last commit read them at, the
  marks that commit recorded, with no file read (an input with nothing new);
* the rows a small target rewritten from its state gained and lost (``rewrite_counts``: its two
  snapshots read with Iceberg's generic reader and compared as bags) where a statement diffs them
  (0.16–0.27 s at TPC-H SF 1 for Q1-like's 4 rows);
* what maintenance needs of each table (``upkeep``), and the expiry of old snapshots
  (``expire_snapshots``) through Iceberg's table API where the procedure runs a Spark action.

With these, an empty batch over change tables runs no statement on the embedded session.

What the reads are used for is unchanged: under the lock no other run writes these tables, so a
value read just before the commit's ``INSERT`` is the one its subquery would have read."""

from __future__ import annotations

import datetime
import math
import time
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import Any, Callable, Hashable, Mapping, Optional, Sequence, TypeVar

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.refresh.db import Executor, logger, optional_int
from dbt.adapters.spark_ivm.refresh import iceberg_files
from dbt.adapters.spark_ivm.refresh.embedded import is_embedded, java_class, session
from dbt.adapters.spark_ivm.refresh.iceberg_files import FileChange, StagedScans
from ivm_core import bookkeeping as bk
from ivm_core.rules.aggregate import SET
from ivm_core.sqltext import SEQ

SNAPSHOT, ROWS, LIVE_ROWS = "snapshot", "rows", "live_rows"
_SQL = {SNAPSHOT: bk.current_snapshot, ROWS: bk.row_count, LIVE_ROWS: bk.live_rows}
K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


@dataclass(frozen=True)
class Measure:
    kind: str  # SNAPSHOT | ROWS | LIVE_ROWS
    table: str  # quoted name
    # ROWS and LIVE_ROWS of one set of a table of aggregate states (its partition, SET = set):
    # from the files the catalog plans for it, or SQL (the partitions metadata table, a count of
    # the partition's rows)
    set: Optional[int] = None


@dataclass(frozen=True)
class ChangeMarks:
    """A change table's high mark (its greatest ``_ivm_seq``; 0: none) and rows, read at its
    Iceberg ``snapshot`` (None: it has none, or they were read with SQL)."""
    high: int
    rows: int
    snapshot: Optional[int] = None


@dataclass(frozen=True)
class Upkeep:
    """What maintenance (maintain.py) needs to know of one of the model's tables."""
    name: str  # as the model's logs name it
    older_than_ms: Optional[int]  # its snapshots committed before this instant may be expired
    old_snapshots: int  # how many were
    small_files: int  # its data files below the small-file size


class SqlMetadata:
    """The measures as metadata-table queries."""

    embeds = True  # a statement that reads other things reads these measures too (the capture)

    def __init__(self, db: Executor):
        self.db = db

    def expressions(self, measures: Mapping[K, Measure]) -> dict[K, str]:
        """Each measure as a SQL expression (a scalar subquery) for a statement to embed."""
        return {key: _subquery(m) for key, m in measures.items()}

    def base_tags(self, table: str) -> Optional[dict[int, int]]:
        """A ``base: tagged`` table's ``ivm_seq_<s>`` tags (``s`` -> snapshot id) when they can
        be read without a statement; None: a statement over its ``.refs`` reads them."""
        return None

    def iceberg_columns(self, table: str) -> Optional[list[tuple[str, str]]]:
        """An Iceberg table's columns, as ``DESCRIBE TABLE`` lists them (name, Spark type), when
        read without a statement; None: ``DESCRIBE`` reads them (and says what ``table`` is)."""
        return None

    def log_rows(self, log: str) -> Optional[list[tuple]]:
        """The rows ``bk.read_log`` gives of the model's ``log`` (its last entry and its last
        committed one), when read without a statement; None: that statement reads them."""
        return None

    def key_span(self, table: str, column: str) -> Optional[tuple[Optional[str], Optional[str]]]:
        """The least and greatest value of ``column`` (an integral or date key) in ``table``'s
        live data files, as ``st.key_span`` answers them (strings; NULL: no bounds), when they
        can be read without a statement; None: the probe statement reads ``.data_files``."""
        return None

    def change_marks(self, table: str, known: Optional[ChangeMarks] = None) -> Optional[ChangeMarks]:
        """A change table's marks, as ``bk.capture_change_table`` reads them, when read without a
        statement; None: that statement reads them. ``known``: marks read before at a snapshot —
        the answer while that snapshot is still the table's current one (the same files)."""
        return None

    def iceberg_input(self, table: str, consumed: Optional[int]) -> Optional[list[tuple]]:
        """Capture rows (``kind, k, v``, ``k`` left None) of an Iceberg input as
        ``bk.capture_iceberg_input`` reads them — its current snapshot, its rows and, with
        ``consumed``, that snapshot's lineage and the rows written since — when read without a
        statement; None: that statement reads them."""
        return None

    def rewrite_counts(self, table: str, old_snapshot: Optional[int]) -> Optional[tuple[int, int]]:
        """The rows a small ``table`` gained and lost from ``old_snapshot`` to its current one, as
        ``st.rewrite_counts`` counts them, when read without a statement; None: that statement
        counts them."""
        return None

    def file_change(self, table: str, low: int, high: int) -> Optional[FileChange]:
        """The data files to read for an Iceberg input's change from snapshot ``low`` (0: none)
        to ``high`` (iceberg_files.py), once per run; None: no reader here can read them."""
        return None

    def stage_scan(self, scans: StagedScans, table: str, tasks: Sequence[Any], name: str,
                   deleted: bool = False) -> None:
        """Stage the scan ``tasks`` of a ``file_change`` of ``table`` as the temp view ``name``
        (``StagedScans.view``: with ``deleted``, the rows they delete)."""
        raise NotImplementedError("only the embedded session reads an input by its files")

    def answers_change_marks(self, table: str) -> bool:
        """Whether ``change_marks`` is likely to answer for ``table`` (its metadata alone says
        so: no delete files, few enough files), so that the capture statement leaves it out."""
        return False

    def holds_snapshot(self, table: str, snapshot_id: int) -> bool:
        """Whether ``table`` is an Iceberg table whose history holds ``snapshot_id`` (False when
        it is missing, or is another table of that name: dropped and created again)."""
        try:
            rows = self.db.run(bk.snapshot_count(table, snapshot_id), fetch=True)
        except DbtRuntimeError as e:
            logger.debug(f"spark_ivm: {table} does not hold snapshot {snapshot_id}: {str(e)[:300]}")
            return False
        return bool(rows and rows[0][0])

    def read(self, measures: Mapping[K, Measure]) -> dict[K, Optional[int]]:
        """Each measure's value (None: the table has no snapshot, or its summary no totals), in
        one statement."""
        if not measures:
            return {}
        keys = list(measures)
        parts = [f"SELECT {i} AS i, CAST({_subquery(measures[key])} AS BIGINT) AS v" for i, key in enumerate(keys)]
        values: dict[K, Optional[int]] = {key: None for key in keys}
        values.update({keys[int(i)]: optional_int(v) for i, v in self.db.run(bk.union_all(parts), fetch=True)})
        return values

    def upkeep(self, tables: Mapping[str, str], kept: Mapping[str, Optional[int]], retention_seconds: int,
               small_file_bytes: int) -> list[Upkeep]:
        """Each table's (name -> quoted name) ``Upkeep``: the instant ``retention_seconds`` ago,
        but no later than the commit of its ``kept`` snapshot (the last commit's, which a
        rollback needs), and its snapshots older than that; in one statement."""
        if not tables:
            return []
        rows = self.db.run(bk.union_all([
            bk.maintenance_probe(name, table, kept.get(name), retention_seconds, small_file_bytes)
            for name, table in tables.items()
        ]), fetch=True)
        return [Upkeep(str(name), optional_int(older_than), int(old or 0), int(small or 0))
                for name, older_than, old, small in rows]

    def expire_snapshots(self, table: str, older_than_ms: int) -> None:
        """Expire ``table``'s snapshots committed before ``older_than_ms`` (all but its current
        one) and delete the files only they reference."""
        self.db.run(bk.expire_snapshots(table, older_than_ms))


class CatalogMetadata(SqlMetadata):
    """The measures read from the embedded session's Iceberg catalog (see the module)."""

    embeds = False

    def __init__(self, db: Executor):
        super().__init__(db)
        self._tables: dict[str, Any] = {}  # quoted name -> its Java Iceberg Table, as last loaded
        self._file_changes: dict[tuple[str, int, int], Optional[FileChange]] = {}

    def _table(self, table: str) -> Any:
        """``table``'s Java Iceberg ``Table`` as the catalog holds it now. Loaded once per run,
        then refreshed: a refresh asks the metastore where the table's metadata is and re-reads it
        only when that moved (a load always reads and parses it: TPC-H SF 1's lineitem change
        table, 20 of each, medians 32–44 ms a load against 16–19 ms a refresh). A table dropped
        and created again (a refresh refuses a new table uuid) is loaded anew."""
        known = self._tables.get(table)
        if known is not None:
            try:
                known.refresh()
                return known
            except Exception:  # py4j: dropped, or created again: loaded anew (or the load says why)
                del self._tables[table]
        self._tables[table] = loaded = _table_loader()(table)
        return loaded

    def _from_table(self, table: str, what: str, instead: str, read: Callable[[Any], Optional[T]]) -> Optional[T]:
        """``read`` of ``table`` as the catalog holds it now; None when that fails (py4j: not an
        Iceberg table, missing, or the catalog failed: the SQL that reads it ``instead`` says why)."""
        try:
            return read(self._table(table))
        except Exception as e:
            logger.debug(f"spark_ivm: the catalog did not read {what} of {table} ({str(e)[:300]}): {instead}")
            return None

    def expressions(self, measures: Mapping[K, Measure]) -> dict[K, str]:
        values, rest = self._from_catalog(measures)
        literals = {key: "CAST(NULL AS BIGINT)" if v is None else f"CAST({int(v)} AS BIGINT)"
                    for key, v in values.items()}
        return {**literals, **super().expressions(rest)}

    def read(self, measures: Mapping[K, Measure]) -> dict[K, Optional[int]]:
        values, rest = self._from_catalog(measures)
        return {**values, **super().read(rest)}

    def base_tags(self, table: str) -> Optional[dict[int, int]]:
        return self._from_table(table, "its tags", "reading its refs table", _tags)

    def iceberg_columns(self, table: str) -> Optional[list[tuple[str, str]]]:
        return self._from_table(table, "its columns", "describing it", _spark_columns)

    def log_rows(self, log: str) -> Optional[list[tuple]]:
        return self._from_table(log, "its last entries", "reading the log with a statement", _log_rows)

    def change_marks(self, table: str, known: Optional[ChangeMarks] = None) -> Optional[ChangeMarks]:
        return self._from_table(table, "its marks", "reading them with a statement",
                                partial(_change_marks, known=known))

    def iceberg_input(self, table: str, consumed: Optional[int]) -> Optional[list[tuple]]:
        rows = self._from_table(table, "its snapshots", "reading its metadata tables with the capture",
                                lambda t: _iceberg_input(t, consumed))
        if rows is None or consumed is None:
            return rows
        # delete files in the window: the rows written are those of the files the change reads
        values = {kind: v for kind, _, v in rows}
        if values.get("lineage") == 2 and values.get("changed") is None and values.get("high") is not None:
            change = self.file_change(table, consumed, int(values["high"]))
            if change is not None:
                rows = [r for r in rows if r[0] != "changed"] + [("changed", None, change.rows),
                                                                  ("scanned", None, change.scanned_rows)]
        return rows

    def file_change(self, table: str, low: int, high: int) -> Optional[FileChange]:
        key = (table, int(low), int(high))
        if key not in self._file_changes:
            self._file_changes[key] = self._from_table(
                table, f"the files its snapshots {low}..{high} changed", "reading its change with SQL",
                lambda t: iceberg_files.plan(t, low, high))
        return self._file_changes[key]

    def stage_scan(self, scans: StagedScans, table: str, tasks: Sequence[Any], name: str,
                   deleted: bool = False) -> None:
        scans.view(self._table(table), table, tasks, name, deleted)

    def rewrite_counts(self, table: str, old_snapshot: Optional[int]) -> Optional[tuple[int, int]]:
        return self._from_table(table, "the rows its rewrite gained and lost", "diffing its snapshots with a statement",
                                lambda t: _rewrite_counts(t, old_snapshot))

    def answers_change_marks(self, table: str) -> bool:
        return bool(self._from_table(table, "whether it has deletes", "reading its marks with the capture",
                                     _marks_readable))

    def key_span(self, table: str, column: str) -> Optional[tuple[Optional[str], Optional[str]]]:
        return self._from_table(table, f"the span of {column}", "reading its data files table",
                                lambda t: _key_span(t, column))

    def holds_snapshot(self, table: str, snapshot_id: int) -> bool:
        held = self._from_table(table, f"whether it holds snapshot {snapshot_id}", "reading its snapshots table",
                                lambda t: t.snapshot(int(snapshot_id)) is not None)
        return super().holds_snapshot(table, snapshot_id) if held is None else held

    def upkeep(self, tables: Mapping[str, str], kept: Mapping[str, Optional[int]], retention_seconds: int,
               small_file_bytes: int) -> list[Upkeep]:
        now_ms = int(time.time() * 1000)
        found: list[Upkeep] = []
        rest: dict[str, str] = {}
        for name, table in tables.items():
            upkeep = self._from_table(table, "its snapshots and file sizes", "probing its metadata tables",
                                      partial(_upkeep, name, kept=kept.get(name),
                                              retention_ms=now_ms - 1000 * retention_seconds,
                                              small_file_bytes=small_file_bytes))
            if upkeep is None:
                rest[name] = table
            else:
                found.append(upkeep)
        return found + super().upkeep(rest, kept, retention_seconds, small_file_bytes)

    def expire_snapshots(self, table: str, older_than_ms: int) -> None:
        """Through Iceberg's table API, in this JVM: the procedure runs the same expiry as a Spark
        action, with Spark jobs to list the files to delete (~2 s a table against ~0.2 s)."""
        if not self._from_table(table, "its old snapshots", "calling expire_snapshots",
                                lambda t: _expire(t, older_than_ms)):
            super().expire_snapshots(table, older_than_ms)

    def _from_catalog(self, measures: Mapping[K, Measure]) -> tuple[dict[K, Optional[int]], dict[K, Measure]]:
        """The measures the catalog answers exactly, and the others."""
        loaded: dict[str, Any] = {}  # each table's current snapshot
        planned: dict[tuple[str, int], Optional[_SetFiles]] = {}  # each set's files
        values: dict[K, Optional[int]] = {}
        rest: dict[K, Measure] = {}
        for key, m in measures.items():
            try:
                if m.set is not None:
                    if (m.table, m.set) not in planned:
                        planned[(m.table, m.set)] = _set_files(self._table(m.table), m.set)
                    exact, value = _measured_set(m.kind, planned[(m.table, m.set)])
                else:
                    if m.table not in loaded:
                        loaded[m.table] = self._table(m.table).currentSnapshot()
                    exact, value = _measured(m.kind, loaded[m.table])
            except Exception as e:  # py4j: the table is missing, or the catalog failed: SQL says why
                logger.debug(f"spark_ivm: the catalog did not read {m.table} ({str(e)[:300]}): "
                             "reading its metadata tables")
                exact, value = False, None
            if exact:
                values[key] = value
            else:
                rest[key] = m
        return values, rest


def _subquery(m: Measure) -> str:
    if m.set is not None:
        of_set = bk.partition_live_rows if m.kind == LIVE_ROWS else bk.partition_row_count
        return f"({of_set(m.table, SET, m.set)})"
    return f"({_SQL[m.kind](m.table)})"


def _table_loader() -> Callable[[str], Any]:
    """table -> its Java Iceberg ``Table``, as the session's catalog loads it now."""
    spark = session()
    spark_util = java_class(spark, "org.apache.iceberg.spark.Spark3Util")
    return lambda table: spark_util.loadIcebergTable(spark._jsparkSession, table)


def _tags(table: Any) -> dict[int, int]:
    """A Java Iceberg ``Table``'s ``ivm_seq_<s>`` tags: ``s`` -> snapshot id (branches named so
    are not tags)."""
    tags = {}
    for name, ref in dict(table.refs()).items():
        seq = bk.base_tag_seq(str(name))
        if seq is not None and ref.isTag():
            tags[seq] = int(ref.snapshotId())
    return tags


# A key span is read file by file through the JVM (~1 ms a file): a table with more files than
# this is left to its `.data_files` query, which Spark reads in parallel.
SPAN_FILES_MOST = 200  # (a change table's marks too)
_EPOCH = datetime.date(1970, 1, 1)
_SPAN_TEXT: dict[str, Callable[[int], str]] = {
    "INTEGER": str, "LONG": str, "DATE": lambda days: (_EPOCH + datetime.timedelta(days=days)).isoformat(),
}


@dataclass(frozen=True)
class _Bounds:
    type_name: str  # the column's Iceberg type: a key of _SPAN_TEXT
    least: Optional[int]  # the least lower bound of the files that have one
    greatest: Optional[int]  # the greatest upper bound
    complete: bool  # every file has both


def _few_files(snapshot: Any) -> bool:
    return int(snapshot.summary().get("total-data-files") or SPAN_FILES_MOST + 1) <= SPAN_FILES_MOST


def _column_bounds(table: Any, snapshot: Any, column: str) -> Optional[_Bounds]:
    """The bounds of a Java Iceberg ``Table``'s ``column`` over the data files of ``snapshot``;
    None: more files than ``SPAN_FILES_MOST``, or a type not read (``_SPAN_TEXT``)."""
    if not _few_files(snapshot):
        return None
    field = table.schema().caseInsensitiveFindField(column)
    type_name = str(field.type().typeId().toString()) if field is not None else ""
    if type_name not in _SPAN_TEXT:
        return None
    conversions = java_class(session(), "org.apache.iceberg.types.Conversions")
    field_id, field_type = field.fieldId(), field.type()
    least: Optional[int] = None
    greatest: Optional[int] = None
    complete = True
    tasks = table.newScan().useSnapshot(snapshot.snapshotId()).includeColumnStats().planFiles()
    try:
        files = tasks.iterator()
        while files.hasNext():
            data_file = files.next().file()
            for bounds, lowest in ((data_file.lowerBounds(), True), (data_file.upperBounds(), False)):
                value = _bound(bounds, field_id, field_type, conversions)
                if value is None:
                    complete = False
                    continue
                if lowest:
                    least = value if least is None else min(least, value)
                else:
                    greatest = value if greatest is None else max(greatest, value)
    finally:
        tasks.close()
    return _Bounds(type_name, least, greatest, complete)


def _bound(bounds: Any, field_id: int, field_type: Any, conversions: Any) -> Optional[int]:
    """A data file's bound of an integral or date field, from its lower or upper ``bounds`` (a
    Java map of field id -> serialized value); None: the file has none."""
    bound = bounds.get(field_id) if bounds is not None else None
    return None if bound is None else int(conversions.fromByteBuffer(field_type, bound))


def _key_span(table: Any, column: str) -> Optional[tuple[Optional[str], Optional[str]]]:
    """``key_span`` of a Java Iceberg ``Table``: its files' least lower and greatest upper
    bound of ``column`` (a file without one skipped, as ``min``/``max`` skip NULLs), as text."""
    snapshot = table.currentSnapshot()
    if snapshot is None:
        return None, None
    b = _column_bounds(table, snapshot, column)
    if b is None:
        return None
    text = _SPAN_TEXT[b.type_name]
    return (None if b.least is None else text(b.least)), (None if b.greatest is None else text(b.greatest))


def _change_marks(table: Any, known: Optional[ChangeMarks] = None) -> Optional[ChangeMarks]:
    """``change_marks`` of a Java Iceberg ``Table``: ``known`` while its snapshot is the current
    one (a snapshot id names one set of files); else, with no delete files, its rows are its
    snapshot's records and its greatest ``_ivm_seq`` the greatest upper bound of its files, when
    every file has one (a file of NULLs only has none: left to SQL)."""
    snapshot = table.currentSnapshot()
    if snapshot is None:
        return ChangeMarks(0, 0)
    snapshot_id = int(snapshot.snapshotId())
    if known is not None and known.snapshot == snapshot_id:
        return known
    rows = _exact_rows(snapshot)
    if rows is None:
        return None
    if rows == 0:
        return ChangeMarks(0, 0, snapshot_id)
    b = _column_bounds(table, snapshot, SEQ)
    if b is None or not b.complete or b.greatest is None:
        return None
    return ChangeMarks(b.greatest, rows, snapshot_id)


def _iceberg_input(table: Any, consumed: Optional[int]) -> list[tuple]:
    """``iceberg_input`` of a Java Iceberg ``Table``: the consumed snapshot's lineage from the
    walk down the current snapshot's ancestors, and what the ancestors above it wrote (as the
    capture statement counts them)."""
    current = table.currentSnapshot()
    rows: list[tuple] = []
    if current is not None:
        total = current.summary().get("total-records")
        rows += [("high", None, int(current.snapshotId())), ("rows", None, None if total is None else int(total))]
    if consumed is None:
        return rows
    written: Optional[int] = 0
    snapshot, lineage = current, 0
    while snapshot is not None:
        if int(snapshot.snapshotId()) == consumed:
            lineage = 2
            break
        summary = snapshot.summary()
        if written is not None and str(snapshot.operation()) != "replace":
            if int(summary.get("added-delete-files") or 0) > 0:
                written = None
            else:
                written += int(summary.get("added-records") or 0) + int(summary.get("deleted-records") or 0)
        parent = snapshot.parentId()
        snapshot = None if parent is None else table.snapshot(parent)
    if lineage == 0 and table.snapshot(consumed) is not None:
        lineage = 1
    return rows + [("lineage", None, lineage), ("changed", None, written if lineage == 2 else 0)]


# A rewritten table's gain and loss are counted in this JVM (its two snapshots read with Iceberg's
# generic reader, ~0.2 ms a row through py4j) up to this many rows a snapshot; larger, by a statement.
COUNTED_ROWS_MOST = 200
# Iceberg types whose values the generic reader gives as Python values equal when Spark's are (a
# date, time or timestamp as its ISO text, a decimal as a Decimal); binary and nested types are not
_COUNTED_TYPES = {"BOOLEAN", "INTEGER", "LONG", "FLOAT", "DOUBLE", "DECIMAL", "DATE", "TIME", "TIMESTAMP",
                  "TIMESTAMP_NANO", "STRING", "UUID"}


def _rewrite_counts(table: Any, old_snapshot: Optional[int]) -> Optional[tuple[int, int]]:
    """``rewrite_counts`` of a Java Iceberg ``Table``: its rows at the current snapshot and at
    ``old_snapshot`` as two bags, their difference counted as Spark's GROUP BY would (NaN equal to
    NaN, -0.0 to 0.0) — when both snapshots hold at most ``COUNTED_ROWS_MOST`` rows, no delete
    files, and only columns of ``_COUNTED_TYPES``."""
    current = table.currentSnapshot()
    previous = table.snapshot(old_snapshot) if old_snapshot is not None else None
    if current is None or previous is None:
        return None
    for snapshot in (current, previous):
        rows = _exact_rows(snapshot)
        if rows is None or rows > COUNTED_ROWS_MOST:
            return None
    columns = list(table.schema().columns())
    if any(str(c.type().typeId().toString()) not in _COUNTED_TYPES for c in columns):
        return None
    width = len(columns)

    def row(record: Any) -> tuple:
        return tuple(_comparable(record.get(i)) for i in range(width))

    new = Counter(_generic_rows(table, row, snapshot_id=int(current.snapshotId())))
    old = Counter(_generic_rows(table, row, snapshot_id=int(previous.snapshotId())))
    return sum((new - old).values()), sum((old - new).values())


def _generic_rows(table: Any, row: Callable[[Any], tuple], where: Any = None,
                  snapshot_id: Optional[int] = None) -> list[tuple]:
    """``row`` of each record of a Java Iceberg ``Table`` read with Iceberg's generic reader (no
    Spark job): at ``snapshot_id`` (None: the current snapshot), the records that may match
    ``where`` (an Iceberg expression; None: all — files are skipped by their column bounds)."""
    scan = java_class(session(), "org.apache.iceberg.data.IcebergGenerics").read(table)
    if snapshot_id is not None:
        scan = scan.useSnapshot(snapshot_id)
    records = (scan if where is None else scan.where(where)).build()
    try:
        found = records.iterator()
        rows = []
        while found.hasNext():
            rows.append(row(found.next()))
        return rows
    finally:
        records.close()


def _comparable(value: Any) -> Any:
    """A generic record's value as a Python value equal to another exactly when Spark groups them
    together: NaN as one marker (NaN != NaN in Python), a Java object (a date, a timestamp) as its
    text; -0.0 already equals 0.0."""
    if value is None or isinstance(value, (bool, int, str, Decimal)):
        return value
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else value
    return str(value.toString())


def _marks_readable(table: Any) -> bool:
    """Whether ``_change_marks`` should answer for a Java Iceberg ``Table``, by its current
    snapshot's summary alone: no delete files, at most ``SPAN_FILES_MOST`` files."""
    snapshot = table.currentSnapshot()
    return snapshot is None or _exact_rows(snapshot) is not None and _few_files(snapshot)


def _exact_rows(snapshot: Any) -> Optional[int]:
    """``count(*)`` of a table at ``snapshot`` from its summary: only with no delete files."""
    exact, value = _measured(ROWS, snapshot)
    return value if exact else None


def _spark_columns(table: Any) -> list[tuple[str, str]]:
    """A Java Iceberg ``Table``'s columns as Spark reads them (Iceberg's own conversion of its
    schema) and ``DESCRIBE TABLE`` lists them: name and type (``simpleString``)."""
    struct = java_class(session(), "org.apache.iceberg.spark.SparkSchemaUtil").convert(table.schema())
    return [(str(f.name()), str(f.dataType().simpleString())) for f in struct.fields()]


_LOG_ENTRY_FIELDS = [c.strip() for c in bk.LOG_ENTRY_COLUMNS.split(",")]


def _log_rows(log: Any) -> list[tuple]:
    """``log_rows`` of a model's log as a Java Iceberg ``Table``, read with Iceberg's generic
    reader (no Spark job): the entries from the greatest ``seq`` of the files its current
    snapshot appended on (a run's append of its entry: the other files are skipped by their
    ``seq`` bounds), all of them when that snapshot is not an append (a compaction: few files);
    the committed entries when the last entry is not one (a rebuild that died)."""
    snapshot = log.currentSnapshot()
    if snapshot is None:
        return []
    expressions = java_class(session(), "org.apache.iceberg.expressions.Expressions")
    since = _appended_seq(log, snapshot) if str(snapshot.operation()) == "append" else None
    # (as read_log's: a fence is no entry)
    entries = [e for e in _log_entries(log, None if since is None else expressions.greaterThanOrEqual("seq", since))
               if e[1] != bk.FENCED]
    if not entries and since is not None:
        entries = [e for e in _log_entries(log, None) if e[1] != bk.FENCED]
    if not entries:
        return []
    # as read_log's ORDER BY: the greatest seq, a committed entry before a started one
    last = max(entries, key=lambda e: (e[0], e[1] == "committed"))
    committed = [e for e in entries if e[1] == "committed"]
    if not committed:  # (none at or above the appended seq: the last is a started entry)
        committed = _log_entries(log, expressions.equal("status", "committed"))
    rows = [("last", *last)]
    if committed:
        rows.append(("committed", *max(committed, key=lambda e: e[0])))
    return rows


def _appended_seq(log: Any, snapshot: Any) -> Optional[int]:
    """The greatest ``seq`` upper bound of the data files ``snapshot`` added (None: none has one)."""
    field = log.schema().findField("seq")
    conversions = java_class(session(), "org.apache.iceberg.types.Conversions")
    greatest: Optional[int] = None
    added = snapshot.addedDataFiles(log.io()).iterator()
    while added.hasNext():
        value = _bound(added.next().upperBounds(), field.fieldId(), field.type(), conversions)
        if value is not None:
            greatest = value if greatest is None else max(greatest, value)
    return greatest


def _log_entries(log: Any, where: Any) -> list[tuple]:
    """The log's entries (``LOG_ENTRY_COLUMNS``' values) that may match ``where`` (an Iceberg
    expression; None: all): the generic reader skips files by their column bounds."""
    return _generic_rows(log, lambda record: tuple(record.getField(name) for name in _LOG_ENTRY_FIELDS), where)


def _upkeep(name: str, table: Any, kept: Optional[int], retention_ms: int, small_file_bytes: int) -> Upkeep:
    """A Java Iceberg ``Table``'s ``Upkeep`` (SqlMetadata.upkeep's; ``retention_ms``: the instant
    the retention allows expiring before). Its small files are counted up to two: compaction
    needs no more to know."""
    snapshot = table.snapshot(kept) if kept is not None else None
    older_than = min(retention_ms, int(snapshot.timestampMillis())) if snapshot is not None else retention_ms
    old = sum(1 for s in table.snapshots() if int(s.timestampMillis()) < older_than)
    small = 0
    if table.currentSnapshot() is not None:
        tasks = table.newScan().planFiles()
        try:
            files = tasks.iterator()
            while small < 2 and files.hasNext():
                small += int(files.next().file().fileSizeInBytes()) < small_file_bytes
        finally:
            tasks.close()
    return Upkeep(name, older_than, old, small)


def _expire(table: Any, older_than_ms: int) -> bool:
    """Expire a Java Iceberg ``Table``'s snapshots committed before ``older_than_ms``, keeping
    its current one, and delete the files only they referenced (as the procedure does)."""
    table.expireSnapshots().expireOlderThan(older_than_ms).retainLast(1).cleanExpiredFiles(True).commit()
    return True


def _measured(kind: str, snapshot: Any) -> tuple[bool, Optional[int]]:
    """(exact, value) of a measure of a table at ``snapshot`` (a Java Snapshot, or None: the
    table was created empty), as the metadata-table query computes it."""
    if snapshot is None:
        return kind == SNAPSHOT, None  # no snapshot: counts are left to count(*)
    if kind == SNAPSHOT:
        return True, int(snapshot.snapshotId())
    summary = snapshot.summary()
    records = summary.get("total-records")
    if records is None:
        return kind == LIVE_ROWS, None  # as live_rows' NULL; count(*) is left to SQL
    position_deletes = int(summary.get("total-position-deletes") or 0)
    if kind == LIVE_ROWS:
        return True, int(records) - position_deletes
    # count(*) equals the records only with no delete files
    return position_deletes == 0 and int(summary.get("total-equality-deletes") or 0) == 0, int(records)


@dataclass(frozen=True)
class _SetFiles:
    """The files the current snapshot of a table of aggregate states plans for one set (its
    ``SET`` partition): their records, the records of the delete files that apply to them (a
    delete file counted once, whichever files it applies to), and whether those are all
    position deletes."""
    records: int
    deleted: int
    deletes: bool
    position_deletes_only: bool


def _set_files(table: Any, set_id: int) -> Optional[_SetFiles]:
    """``_SetFiles`` of one set of a Java Iceberg ``Table``; None when it has no snapshot."""
    if table.currentSnapshot() is None:
        return None
    expressions = java_class(session(), "org.apache.iceberg.expressions.Expressions")
    tasks = table.newScan().filter(expressions.equal(SET, set_id)).planFiles()
    records, deleted, position_only = 0, {}, True
    try:
        files = tasks.iterator()
        while files.hasNext():
            task = files.next()
            records += int(task.file().recordCount())
            for delete in task.deletes():
                position_only = position_only and str(delete.content().name()) == "POSITION_DELETES"
                deleted[str(delete.location())] = int(delete.recordCount())
    finally:
        tasks.close()
    return _SetFiles(records, sum(deleted.values()), bool(deleted), position_only)


def _measured_set(kind: str, files: Optional[_SetFiles]) -> tuple[bool, Optional[int]]:
    """(exact, value) of ROWS or LIVE_ROWS of one set of a table of aggregate states, from its
    files (``_set_files``), as the partitions metadata table sums them: their records less their
    position deletes. ROWS is exact only with no delete files, neither with equality deletes
    (left to SQL, as for a whole table)."""
    if files is None:
        return False, None
    if kind == LIVE_ROWS:
        return files.position_deletes_only, files.records - files.deleted
    return not files.deletes, files.records


def table_metadata(db: Executor) -> SqlMetadata:
    """The reader for the run's connection: the embedded session's catalog, else SQL."""
    return CatalogMetadata(db) if is_embedded(db.adapter) else SqlMetadata(db)
