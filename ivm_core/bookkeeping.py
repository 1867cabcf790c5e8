"""The Spark SQL of a model's bookkeeping, as pure text builders (golden-tested, no Spark here):
its log, its lock row, the capture of high marks, snapshots and row counts, rollbacks and the
session's staged relations. ``statements`` holds the statements that move data.

Names passed in are already-quoted relation names; literals are escaped here.
"""

from __future__ import annotations

import datetime
import re
from typing import Mapping, Optional, Sequence

from ivm_core.sqltext import SEQ, WEIGHT, quote
from ivm_core.statements import METADATA_CLEANUP, Probe, string_literal, table_properties

LOG_COLUMNS = (
    "seq BIGINT, status STRING, mode STRING, reason STRING, fingerprint STRING, "
    "watermarks STRING, target_snapshot BIGINT, rows_inserted BIGINT, rows_deleted BIGINT, "
    "target_columns STRING, model_sql STRING, snapshots STRING, logged_at TIMESTAMP, row_counts STRING, "
    "changes_from BIGINT"
)
LOCK_COLUMNS = "k STRING, owner STRING, seq BIGINT, expires_at BIGINT"
# the message of the raise_error a lock row taken by another run makes the compare-and-swap fail with
LOCK_TAKEN = "ivm lock taken by"
# the message of the raise_error a fenced commit fails with (its lease was taken over)
LEASE_FENCED = "ivm lease fenced"
# the status of a log row that voids the commit of one owner's lease (``fence_lease``)
FENCED = "fenced"
UNION_ALL = "\nUNION ALL\n"


def union_all(parts: Sequence[str]) -> str:
    return UNION_ALL.join(parts)


# -- companion schema ---------------------------------------------------------------------------

def create_schema(schema: str) -> str:
    return f"CREATE SCHEMA IF NOT EXISTS {schema}"


def create_log(log: str) -> str:
    return f"CREATE TABLE IF NOT EXISTS {log} ({LOG_COLUMNS}) USING iceberg{metadata_cleanup()}"


def create_lock(lock: str) -> str:
    return f"CREATE TABLE IF NOT EXISTS {lock} ({LOCK_COLUMNS}) USING iceberg{metadata_cleanup()}"


def metadata_cleanup() -> str:
    return "\n" + table_properties(METADATA_CLEANUP)


# -- Iceberg metadata ---------------------------------------------------------------------------

def current_snapshot(table: str) -> str:
    """The table's current snapshot id (Iceberg metadata)."""
    return f"SELECT snapshot_id FROM {table}.refs WHERE name = 'main'"


def row_count(table: str) -> str:
    """The table's row count (answered from Iceberg metadata when it has no deletes)."""
    return f"SELECT CAST(count(*) AS BIGINT) AS n FROM {table}"


def partition_row_count(table: str, column: str, value: int) -> str:
    """``row_count`` of the rows of one partition (an identity partition ``column = value``)."""
    return f"SELECT CAST(count(*) AS BIGINT) AS n FROM {table} WHERE {quote(column)} = {int(value)}"


def partition_live_rows(table: str, column: str, value: int) -> str:
    """``live_rows`` of one partition (an identity partition ``column = value``), from Iceberg's
    partitions metadata table (0 when it has no files)."""
    return (
        "SELECT CAST(coalesce(sum(record_count - position_delete_record_count), 0) AS BIGINT) AS n "
        f"FROM {table}.partitions WHERE partition.{quote(column)} = {int(value)}"
    )


def live_rows_at(table: str, snapshot_id: int) -> str:
    """``live_rows`` of the table at one of its snapshots."""
    return (
        "SELECT CAST(summary['total-records'] AS BIGINT) - "
        "coalesce(CAST(summary['total-position-deletes'] AS BIGINT), 0) AS n "
        f"FROM {table}.snapshots WHERE snapshot_id = {int(snapshot_id)}"
    )


def live_rows(table: str) -> str:
    """The rows the table holds, from its current snapshot's summary (its data files' records
    less its position deletes; NULL when the summary lacks them)."""
    return (
        "SELECT CAST(s.summary['total-records'] AS BIGINT) - "
        "coalesce(CAST(s.summary['total-position-deletes'] AS BIGINT), 0) AS n "
        f"FROM {table}.snapshots AS s JOIN {table}.refs AS r ON s.snapshot_id = r.snapshot_id WHERE r.name = 'main'"
    )


def pinned(table: str, snapshot: Optional[int]) -> str:
    """``table`` read at ``snapshot`` (as it is now when None), named by Iceberg's snapshot
    selector (``<table>.snapshot_id_<id>``) rather than ``VERSION AS OF``: the two read the same
    snapshot, but Spark's cache ties a relation read ``VERSION AS OF`` to the table itself, so
    every write to the table plans each cached query that reads it again and drops its data (the
    next reader computes it again); a relation named by the selector is another table to the
    cache, and what a run staged from its state survives the run's own writes to that state."""
    return table if snapshot is None else f"{table}.snapshot_id_{int(snapshot)}"


def snapshot_count(table: str, snapshot: int) -> str:
    """1 when ``snapshot`` is in the table's history, else 0."""
    return f"SELECT count(*) FROM {table}.snapshots WHERE snapshot_id = {int(snapshot)}"


def roll_back(table: str, snapshot: int) -> str:
    """Make ``snapshot`` the table's current snapshot again: an ancestor of the current one, or
    a snapshot of the table before a ``CREATE OR REPLACE`` (which keeps the old snapshots; an
    Iceberg rollback refuses any but an ancestor)."""
    return f"CALL spark_catalog.system.set_current_snapshot({string_literal(table)}, {int(snapshot)})"


# -- maintenance: snapshots and small files (refresh/maintain.py) ------------------------------------

def maintenance_probe(name: str, table: str, kept: Optional[int], retention_seconds: int,
                      small_file_bytes: int) -> str:
    """One row for ``table``: the time before which its snapshots may be expired — ``retention_seconds``
    ago, and no later than the commit of snapshot ``kept`` (the last commit's, which a rollback
    needs) — in milliseconds since the epoch, how many snapshots are older, and how many of its
    data files are smaller than ``small_file_bytes``."""
    kept_at = (f"(SELECT max(committed_at) FROM {table}.snapshots WHERE snapshot_id = {int(kept)})"
               if kept is not None else "CAST(NULL AS TIMESTAMP)")
    boundary = (f"least(current_timestamp() - make_dt_interval(0, 0, 0, {int(retention_seconds)}), "
                f"coalesce({kept_at}, current_timestamp()))")
    return (
        f"SELECT {string_literal(name)} AS name, CAST(unix_millis(max(b)) AS BIGINT) AS older_than_ms, "
        "CAST(count_if(s.committed_at < b) AS BIGINT) AS old_snapshots, "
        f"(SELECT CAST(count(*) AS BIGINT) FROM {table}.data_files WHERE file_size_in_bytes < {int(small_file_bytes)})"
        " AS small_files\n"
        f"FROM {table}.snapshots AS s CROSS JOIN (SELECT {boundary} AS b) AS _ivm_b"
    )


def expire_snapshots(table: str, older_than_ms: int) -> str:
    """Expire the table's snapshots committed before ``older_than_ms`` (milliseconds since the
    epoch; the current snapshot always stays) and delete the files only they reference. (The
    procedure takes literals only: the instant as a UTC timestamp literal.)"""
    seconds, millis = divmod(int(older_than_ms), 1000)
    instant = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
    text = instant.strftime("%Y-%m-%d %H:%M:%S.") + f"{millis:03d}Z"
    return (f"CALL spark_catalog.system.expire_snapshots(table => {string_literal(table)}, "
            f"older_than => TIMESTAMP {string_literal(text)}, retain_last => 1)")


def compact_small_files(table: str, small_file_bytes: int) -> str:
    """Rewrite the table's data files smaller than ``small_file_bytes`` into fewer (Iceberg's
    bin-pack; larger files stay as they are: an index's or a target's sorted files keep their
    order). The same rows: readers and the model's state see no change."""
    return (f"CALL spark_catalog.system.rewrite_data_files(table => {string_literal(table)}, "
            f"options => map('min-input-files', '2', 'min-file-size-bytes', '{int(small_file_bytes)}'))")


# -- the capture: (kind, k, v) rows of one statement ---------------------------------------------

def capture_change_table(key: str, change_table: str) -> str:
    """A change table's highest seq and row count: one aggregate over its metadata."""
    k = string_literal(key)
    return (
        f"SELECT stack(2, 'high', {k}, high, 'rows', {k}, n) AS (kind, k, v) FROM "
        f"(SELECT CAST(max({SEQ}) AS BIGINT) AS high, CAST(count(*) AS BIGINT) AS n "
        f"FROM {change_table}) AS _ivm_marks"
    )


def capture_iceberg_input(key: str, table: str, consumed: Optional[str]) -> list[str]:
    """An Iceberg input's current snapshot (``high``) and its rows (``rows``: that snapshot
    summary's ``total-records``); when the model consumed one, where that snapshot stands
    (``lineage``): 2 an ancestor of the current snapshot, 1 in the table's metadata but not an
    ancestor (the table was replaced or rolled back), 0 gone (expired) — and how many rows the
    snapshots since it wrote (``changed``: the records of the data files each added and removed,
    summed over the current snapshot's ancestors committed after the consumed one, compactions
    (``replace``) left out; NULL when one added delete files: merge-on-read, whose change is read
    by difference). ``consumed`` is the consumed snapshot's id as a SQL expression (a literal, or
    ``consumed_mark``: the log's, read in the same statement). Two queries of Iceberg's metadata
    tables, each of one join."""
    k = string_literal(key)
    parts = [
        f"SELECT stack(2, 'high', {k}, _ivm_ref.snapshot_id, 'rows', {k}, "
        "CAST(_ivm_s.summary['total-records'] AS BIGINT)) AS (kind, k, v) "
        f"FROM ({current_snapshot(table)}) AS _ivm_ref LEFT JOIN {table}.snapshots AS _ivm_s "
        "ON _ivm_s.snapshot_id = _ivm_ref.snapshot_id"
    ]
    if consumed:
        written = " + ".join(f"coalesce(CAST(summary['{r}'] AS BIGINT), 0)"
                             for r in ("added-records", "deleted-records"))
        after = "ancestor AND operation <> 'replace' AND committed_at > since"
        parts.append(
            f"SELECT stack(2, 'lineage', {k}, lineage, 'changed', {k}, changed) AS (kind, k, v) FROM (\n"
            "  SELECT CAST(count_if(consumed) + count_if(consumed AND ancestor) AS BIGINT) AS lineage,\n"
            f"    CAST(CASE WHEN count_if({after} AND coalesce(CAST(summary['added-delete-files'] AS BIGINT), 0) > 0)"
            f" = 0 THEN coalesce(sum(CASE WHEN {after} THEN {written} END), 0) END AS BIGINT) AS changed\n"
            "  FROM (\n"
            "    SELECT *, max(CASE WHEN consumed THEN committed_at END) OVER () AS since FROM (\n"
            "      SELECT _ivm_s.operation, _ivm_s.summary, _ivm_s.committed_at,\n"
            f"        _ivm_s.snapshot_id = {consumed} AS consumed, _ivm_a.snapshot_id IS NOT NULL AS ancestor\n"
            f"      FROM {table}.snapshots AS _ivm_s LEFT JOIN (\n"
            f"        SELECT DISTINCT snapshot_id FROM {table}.history WHERE is_current_ancestor\n"
            "      ) AS _ivm_a ON _ivm_s.snapshot_id = _ivm_a.snapshot_id\n"
            "    ) AS _ivm_marked\n"
            "  ) AS _ivm_snapshots\n"
            ") AS _ivm_lineage"
        )
    return parts


def capture_upstream(key: str, upstream_log: str) -> str:
    """An upstream incremental_ivm model's last committed sequence (``high``), the first
    sequence from which its ``__changes`` holds every committed change (``changes_from``), the
    snapshot of its target that commit recorded (``upstream_snapshot``: where a reader without a
    join index of it reads it) and the rows it had published up to it (``rows``: its log's
    ``published``; NULL when not recorded)."""
    k = string_literal(key)
    return (
        f"SELECT stack(4, 'high', {k}, high, 'changes_from', {k}, changes_from, 'upstream_snapshot', {k}, snap, "
        f"'rows', {k}, published) "
        "AS (kind, k, v) FROM (SELECT CAST(max(seq) AS BIGINT) AS high, "
        "CAST(max_by(changes_from, seq) AS BIGINT) AS changes_from, "
        "CAST(max_by(target_snapshot, seq) AS BIGINT) AS snap, "
        "CAST(get_json_object(max_by(row_counts, seq), '$.published') AS BIGINT) AS published "
        f"FROM {upstream_log} WHERE status = 'committed') AS _ivm_upstream"
    )


def capture_snapshot(name: str, table: str, kind: str = "snapshot") -> str:
    return (
        f"SELECT {string_literal(kind)} AS kind, {string_literal(name)} AS k, snapshot_id AS v "
        f"FROM ({current_snapshot(table)}) AS _ivm_ref"
    )


def capture_change_table_at(key: str, change_table: str) -> list[str]:
    """``capture_change_table``'s marks, then the snapshot the run reads the change table at
    (``input_snapshot``): loaded after the marks (Spark loads a query's tables left to right),
    so it holds every change the marks count — a commit landing in between is wholly in it."""
    return [capture_change_table(key, change_table), capture_snapshot(key, change_table, "input_snapshot")]


def capture_lock(lock: str) -> str:
    """The lock row as ``owner|seq|expires_at`` in the ``k`` column."""
    return (
        "SELECT 'lock' AS kind, concat_ws('|', owner, CAST(seq AS STRING), CAST(expires_at AS STRING)) AS k, "
        f"CAST(0 AS BIGINT) AS v FROM {lock} WHERE k = 'lock'"
    )


def upstream_target_snapshot(key: str, upstream_log: str, seq: int) -> str:
    """The target snapshot an upstream model committed at ``seq``, as a position row
    (``k``, ``snap``, ``seq``)."""
    return (
        f"SELECT {string_literal(key)} AS k, max(target_snapshot) AS snap, CAST({int(seq)} AS BIGINT) AS seq "
        f"FROM {upstream_log} WHERE status = 'committed' AND seq = {int(seq)}"
    )


# A change-table source's base relation is tagged ``ivm_seq_<s>`` at a snapshot that holds exactly
# the changes with ``_ivm_seq <= s`` (SPEC §2.1): a rebuild reads it there instead of the history.
BASE_TAG_PREFIX = "ivm_seq_"


def base_tag(key: str, base: str, high: int) -> str:
    """The base's snapshot tagged ``ivm_seq_<s>`` with the greatest ``s <= high``, as a position
    row (``k``, ``snap``, ``seq``); no row when it has none."""
    return (f"SELECT {string_literal(key)} AS k, _ivm_t.tag.snap, _ivm_t.tag.seq FROM (SELECT "
            f"{_nearest_tag(high, above=False)} AS tag FROM {base}.refs WHERE {_IS_BASE_TAG}) AS _ivm_t "
            "WHERE _ivm_t.tag IS NOT NULL")


def tag_probe(label: str, base: str, mark: int, above: bool) -> Probe:
    """A probe row (``st.Probe``) of the base's nearest ``ivm_seq_<s>`` tag to ``mark``: the
    greatest ``s <= mark``, or (``above``) the least ``s > mark``; its snapshot in ``lo``, ``s``
    in ``hi`` (both NULL when there is none). Both probes of a base read its refs once."""
    return Probe(label, f"{base}.refs", _IS_BASE_TAG, aggregates=(("tag", _nearest_tag(mark, above)),),
                 answers=(("lo", "{tag}.snap"), ("hi", "{tag}.seq")))


_TAG_DIGITS = "[0-9]{1,18}"
_TAG_SEQ = f"CAST(substr(name, {len(BASE_TAG_PREFIX) + 1}) AS BIGINT)"
_IS_BASE_TAG = f"type = 'TAG' AND name RLIKE '^{BASE_TAG_PREFIX}{_TAG_DIGITS}$'"


def base_tag_seq(name: str) -> Optional[int]:
    """``s`` of a tag named ``ivm_seq_<s>`` (as ``_IS_BASE_TAG`` matches it), else None."""
    return int(name[len(BASE_TAG_PREFIX):]) if re.fullmatch(BASE_TAG_PREFIX + _TAG_DIGITS, name) else None


def nearest_tag(tags: Mapping[int, int], mark: int, above: bool) -> Optional[tuple[int, int]]:
    """Of a base's ``ivm_seq_<s>`` tags (``s`` -> snapshot id), as ``_nearest_tag`` chooses: the
    greatest ``s <= mark`` (or, ``above``, the least ``s > mark``) as (snapshot, s); None when
    there is none."""
    found = [s for s in tags if (s > mark if above else s <= mark)]
    if not found:
        return None
    s = min(found) if above else max(found)
    return tags[s], s


def _nearest_tag(mark: int, above: bool) -> str:
    """Over a base's refs that are ``ivm_seq_<s>`` tags (``_IS_BASE_TAG``): the one with the
    greatest ``s <= mark`` (or, ``above``, the least ``s > mark``) as ``struct(snap, seq)``, NULL
    when there is none."""
    tag = f"named_struct('snap', snapshot_id, 'seq', {_TAG_SEQ})"
    if above:
        return f"min_by({tag}, {_TAG_SEQ}) FILTER (WHERE {_TAG_SEQ} > {int(mark)})"
    return f"max_by({tag}, {_TAG_SEQ}) FILTER (WHERE {_TAG_SEQ} <= {int(mark)})"


# -- the log ------------------------------------------------------------------------------------

LOG_ENTRY_COLUMNS = ("seq, status, mode, fingerprint, watermarks, target_snapshot, target_columns, model_sql, "
                     "snapshots, row_counts, changes_from")


def read_log(log: str) -> str:
    """The log's last entry (a committed one before a started one of the same seq) and its last
    committed entry, tagged 'last' and 'committed'."""
    cols = LOG_ENTRY_COLUMNS
    last = _last_entry(log, f"'last' AS which, {cols}")
    return (
        f"SELECT * FROM ({last})"
        f"{UNION_ALL}SELECT * FROM (SELECT 'committed' AS which, {cols} FROM {log} "
        "WHERE status = 'committed' ORDER BY seq DESC LIMIT 1)"
    )


def _last_entry(log: str, select: str) -> str:
    return (f"SELECT {select} FROM {log} WHERE status <> '{FENCED}' "
            "ORDER BY seq DESC, CASE status WHEN 'committed' THEN 1 ELSE 0 END DESC LIMIT 1")


def read_log_and_capture(log: str, capture: Sequence[str]) -> str:
    """``read_log``'s rows and the capture's (kind, k, v) rows in one statement: a log row has
    NULL ``kind``, a capture row NULL ``which``. The log is read first, as when these were two
    statements (a high mark is never older than the log's record of it): Spark resolves a
    query's relations depth first, left to right, and loads each table as it resolves it."""
    nulls = ", ".join(f"NULL AS {c.strip()}" for c in LOG_ENTRY_COLUMNS.split(","))
    return (
        f"SELECT *, NULL AS kind, NULL AS k, NULL AS v FROM ({read_log(log)}) AS _ivm_log"
        f"{UNION_ALL}SELECT NULL AS which, {nulls}, kind, k, v FROM ({union_all(capture)}) AS _ivm_capture"
    )


def consumed_mark(log: str, key: str) -> str:
    """The high mark of ``key`` the log's last entry records, as a scalar subquery."""
    marks = _last_entry(log, "from_json(watermarks, 'map<string,bigint>') AS m")
    return f"(SELECT m[{string_literal(key)}] FROM ({marks}) AS _ivm_last)"


def consumer_mark(consumer_log: str, key: str) -> str:
    """How far a downstream model consumed the upstream it knows as ``key``: the high mark its
    log's last entry records (NULL when it records none)."""
    return f"SELECT CAST({consumed_mark(consumer_log, key)} AS BIGINT) AS consumed"


def prune_changes(changes_table: str, through: int) -> str:
    """Delete the published changes of every sequence up to ``through`` (each sequence's rows
    are files of their own, so Iceberg drops whole files: a metadata-only commit)."""
    return f"DELETE FROM {changes_table} WHERE {SEQ} <= {int(through)}"


def prune_log(log: str, keep_from: int) -> str:
    """Delete the log's entries (and fences) below sequence ``keep_from``."""
    return f"DELETE FROM {log} WHERE seq < {int(keep_from)}"


def insert_log_entry(log: str, values: Sequence[str]) -> str:
    """Append one entry: ``values`` are SQL expressions in the order of ``LOG_COLUMNS``."""
    return f"INSERT INTO {log} SELECT {', '.join(values)}"


_LOG_NAMES = [c.split()[0] for c in LOG_COLUMNS.split(", ")]


def commit_fenced(log: str, values: Sequence[str], seq: int, owner: str) -> str:
    """The commit point of a run that holds a lease: append its 'committed' entry (``values`` as
    ``insert_log_entry``'s) unless the log holds a 'committed' entry of ``seq`` already or a fence
    of ``owner``'s lease (``fence_lease``); then the statement fails with ``LEASE_FENCED``. A
    fence or a commit appended while it runs fails it too: Iceberg validates a MERGE's
    rewrite against the files appended since the snapshot it read (serializable isolation),
    so of a commit and the fence of its lease exactly one lands."""
    source = ", ".join(f"{v} AS {n}" for v, n in zip(values, _LOG_NAMES))
    return (
        f"MERGE INTO {log} AS t USING (SELECT {source}) AS s\n"
        f"ON t.seq = {int(seq)} AND (t.status = 'committed' OR (t.status = '{FENCED}' AND t.reason = "
        f"{string_literal(owner)}))\n"
        f"WHEN MATCHED THEN UPDATE SET t.status = CAST(raise_error(concat('{LEASE_FENCED} ', t.status)) AS STRING)\n"
        "WHEN NOT MATCHED THEN INSERT *"
    )


def fence_lease(log: str, seq: int, owner: str) -> str:
    """Void any later commit of ``seq`` by the lease ``owner`` held: a run that took over that
    lease appends this before it reads the log again (``commit_fenced``). Readers of the log
    skip fences."""
    values = {"seq": str(int(seq)), "status": string_literal(FENCED), "reason": string_literal(owner),
              "logged_at": "current_timestamp()"}
    return insert_log_entry(log, [values.get(n, "NULL") for n in _LOG_NAMES])


def json_map(entries: Sequence[tuple[str, str]]) -> str:
    """A JSON object, as a SQL expression, of string keys and SQL expression values."""
    if not entries:
        return "'{}'"
    keys = ", ".join(string_literal(k) for k, _ in entries)
    values = ", ".join(v for _, v in entries)
    return f"to_json(map_from_arrays(array({keys}), array({values})))"


# -- ivm_status: how far a model is behind its inputs ---------------------------------------------

def _lag(commits_and_oldest: str) -> str:
    """(commits not consumed, seconds since the oldest of them) of a query of the two."""
    return (f"SELECT CAST(b AS BIGINT) AS behind, CAST(unix_timestamp(current_timestamp()) - unix_timestamp(o) "
            f"AS DOUBLE) AS lag_seconds FROM ({commits_and_oldest}) AS _ivm_lag(b, o)")


def change_table_lag(change_table: str, consumed: int, log: str) -> str:
    """A change table's sequences above ``consumed``, and the time of its oldest Iceberg
    snapshot after the model's last commit (a change table records no time per sequence; else
    the last commit's own time)."""
    since = f"(SELECT max(logged_at) FROM {log} WHERE status = 'committed')"
    return _lag(f"SELECT (SELECT count(DISTINCT {SEQ}) FROM {change_table} WHERE {SEQ} > {int(consumed)}), "
                f"coalesce((SELECT min(committed_at) FROM {change_table}.snapshots WHERE committed_at > {since}), "
                f"{since})")


def upstream_lag(upstream_log: str, consumed: int) -> str:
    """An upstream model's committed runs above ``consumed``, and the oldest one's time."""
    return _lag(f"SELECT count(*), min(logged_at) FROM {upstream_log} WHERE status = 'committed' "
                f"AND seq > {int(consumed)}")


def snapshot_lag(table: str, consumed: int) -> str:
    """An Iceberg table's snapshots (current ancestors) made current after the ``consumed``
    one, and the oldest one's time."""
    consumed_at = f"(SELECT made_current_at FROM {table}.history WHERE snapshot_id = {int(consumed)})"
    return _lag(f"SELECT count(*), min(made_current_at) FROM {table}.history WHERE is_current_ancestor "
                f"AND made_current_at > coalesce({consumed_at}, timestamp'1970-01-01')")


# -- the lock row -------------------------------------------------------------------------------

def read_lock(lock: str) -> str:
    return f"SELECT owner, seq, expires_at FROM {lock} WHERE k = 'lock'"


def take_lock(lock: str, expected: Optional[tuple[str, int, Optional[int]]], owner: str, seq: int,
              expires_at: int) -> str:
    """Compare-and-swap of the lock row: set it to (``owner``, ``seq``, ``expires_at``) if it is
    still ``expected`` (owner, seq, expires_at; a None expiry matches any: the holder renewing its
    own lease) — or absent when ``expected`` is None; otherwise fail the statement with
    ``LOCK_TAKEN`` and the owner that took it."""
    matches = "FALSE"
    if expected is not None:
        matches = f"t.owner = {string_literal(expected[0])} AND t.seq = {int(expected[1])}"
        if expected[2] is not None:
            matches += f" AND t.expires_at = {int(expected[2])}"
    me = string_literal(owner)
    return (
        f"MERGE INTO {lock} AS t USING (SELECT 'lock' AS k) AS s ON t.k = s.k\n"
        f"WHEN MATCHED AND {matches} THEN UPDATE SET t.owner = {me}, t.seq = {int(seq)}, "
        f"t.expires_at = {int(expires_at)}\n"
        f"WHEN MATCHED THEN UPDATE SET t.owner = CAST(raise_error(concat('{LOCK_TAKEN} ', t.owner)) AS STRING)\n"
        f"WHEN NOT MATCHED THEN INSERT (k, owner, seq, expires_at) VALUES ('lock', {me}, {int(seq)}, {int(expires_at)})"
    )


def release_lock(lock: str, owner: str) -> str:
    """Free the lock row now, if ``owner`` holds it (a run that wrote nothing, or failed)."""
    return f"UPDATE {lock} SET expires_at = 0 WHERE owner = {string_literal(owner)}"


# -- relations of one session -----------------------------------------------------------------

def cache_table(name: str, select_sql: str) -> str:
    """Compute ``select_sql`` once and keep it in memory as the temp view ``name``. Its readers
    read it back only while the session stores a temp view's analyzed plan (the run's
    ``spark.sql.legacy.storeAnalyzedPlanForView``, refresh/config.py) or the query has no CTE."""
    return f"CACHE TABLE {name} AS\n{select_sql}"


def drop_table(name: str) -> str:
    return f"DROP TABLE IF EXISTS {name} PURGE"


def drop_view(name: str) -> str:
    return f"DROP VIEW IF EXISTS {name}"


def describe_query(select_sql: str) -> str:
    """The names and Spark types of a query's columns (no job)."""
    return f"DESCRIBE QUERY {select_sql}"


def empty_like(table: str) -> str:
    """A published-changes table's shape: the target's columns plus weight and seq, no rows."""
    return f"SELECT *, CAST(0 AS BIGINT) AS {WEIGHT}, CAST(0 AS BIGINT) AS {SEQ} FROM {table} WHERE FALSE"


def delete_changes_after(changes_table: str, seq: int) -> str:
    """Drop published changes above ``seq`` (an interrupted rebuild's, never committed)."""
    return f"DELETE FROM {changes_table} WHERE {SEQ} > {int(seq)}"


def staged_rows(label: str, relation: str) -> str:
    """(label, rows) of a staged relation (a row of a ``union_all``)."""
    return f"SELECT {string_literal(label)} AS label, CAST(count(*) AS BIGINT) AS rows FROM {relation}"


def zset_of(table: str, columns: Sequence[str]) -> str:
    """A stored Z-set (``columns`` + weight) as a query; pieces of one row are not summed."""
    cols = ", ".join(quote(c) for c in columns)
    return f"SELECT {cols}{', ' if columns else ''}{WEIGHT} FROM {table}"


def describe_table(relation: str, extended: bool = False) -> str:
    """The names and Spark types of a relation's columns, then (``extended``) its details such
    as its provider (fails when it does not exist)."""
    return f"DESCRIBE TABLE {'EXTENDED ' if extended else ''}{relation}"


def all_rows(table: str) -> str:
    return f"SELECT * FROM {table}"
