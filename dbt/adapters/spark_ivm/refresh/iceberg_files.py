"""An Iceberg input's change between two of its snapshots, read by the data files that changed:
the input kind ``ivm_inputs.SNAPSHOTS`` on the embedded session, whose JVM holds Iceberg's own
planner and reader. Whatever wrote the table — INSERT, copy-on-write or merge-on-read DELETE,
UPDATE and MERGE (position delete files, format v3 deletion vectors), equality deletes::

    change(L, H) = sum over f in F of rows_H(f)  -  sum over f in F of rows_L(f)

    rows_s(f): the live rows of data file f at snapshot s — its rows less those its delete files
               at s delete, as Iceberg's planner assigns delete files to data files (position
               deletes and deletion vectors by file, equality deletes by sequence number and
               partition); no rows when f is not in the table at s
    F:         the data files whose live rows may differ between L and H — added, removed, or
               whose delete files differ (a file that only gained deletes is read at both
               snapshots: the rows it still holds cancel when the change is summed per row)

so a refresh reads the files a change touched, never the whole table. A file in the table at both
snapshots whose delete files changed (a merge-on-read delete, update or merge deleted from it) is
read at both, marking rather than dropping the rows its deletes delete (Iceberg's ``_deleted``
metadata column), and only those rows are kept — since its rows are the same at both::

    rows_H(f) - rows_L(f) = deleted_L(f) - deleted_H(f)

so what is summed per row is the rows deleted, not the file twice. (A format v3 table's staged
reads have no metadata columns: there the file's live rows at both snapshots are summed.)
Snapshots whose operation is ``replace`` (``rewrite_data_files``,
``rewrite_position_delete_files``: compactions) change no row, by Iceberg's contract: the window
is cut at them, each stretch between is diffed on its own (the sum of the stretches' changes is
the window's), and a window of compactions alone reads nothing. The files are read by Iceberg's
reader from staged scan tasks (``ScanTaskSetManager``, as Iceberg's own rewrite actions read the
files they rewrite), so the table's schema, its evolution and its deletes are applied as any
read of it applies them.

Other connections (``thrift``, ``http``) have no such reader: ``reading.stage_changes`` reads
those inputs through Iceberg's changelog, or by difference of the snapshots when delete files
are in the window."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from dbt.adapters.spark_ivm.refresh.embedded import java_class, session

REPLACE = "replace"


@dataclass(frozen=True)
class FileChange:
    """The data files of an Iceberg table to read for its change from ``low`` to ``high``, as Java
    ``FileScanTask`` objects: those a stretch added (read at its newer end, ``at_high``) and
    removed (at its older end, ``at_low``), and those whose delete files changed, at both ends
    (``deletes_high``, ``deletes_low``); and what reading them costs."""

    low: int
    high: int
    at_high: tuple[Any, ...]
    at_low: tuple[Any, ...]
    deletes_high: tuple[Any, ...]
    deletes_low: tuple[Any, ...]
    files: int  # data files read (one read at both ends counts twice)
    bytes: int  # their sizes
    rows: int  # their records (before their deletes: what the read reads)
    delete_files: int  # the delete files those reads apply
    # whether the reader marks the rows deletes delete (``_deleted``; not format v3's staged reads):
    # ``deletes_*`` are then read for those rows only, else for their live rows
    marks_deleted: bool = True

    @property
    def scanned_rows(self) -> int:
        """Of ``rows``, those read only to keep the rows deletes delete: not summed per row."""
        if not self.marks_deleted:
            return 0
        return sum(int(t.file().recordCount()) for t in self.deletes_high + self.deletes_low)



def plan(table: Any, low: Optional[int], high: int) -> FileChange:
    """The ``FileChange`` of a Java Iceberg ``Table`` from snapshot ``low`` (an ancestor of
    ``high``; None or 0: the table had no snapshot then) to ``high``."""
    at_high: list[Any] = []
    at_low: list[Any] = []
    deletes_high: list[Any] = []
    deletes_low: list[Any] = []
    for older, newer in _stretches(table, low or None, high):
        before = _live_files(table, older)
        after = _live_files(table, newer)
        at_high += [task for path, (task, _) in after.items() if path not in before]
        at_low += [task for path, (task, _) in before.items() if path not in after]
        for path, (task, deletes) in after.items():
            if path in before and before[path][1] != deletes:
                deletes_high.append(task)
                deletes_low.append(before[path][0])
    tasks = at_high + at_low + deletes_high + deletes_low
    return FileChange(
        low=int(low or 0), high=int(high), at_high=tuple(at_high), at_low=tuple(at_low),
        deletes_high=tuple(deletes_high), deletes_low=tuple(deletes_low), files=len(tasks),
        bytes=sum(int(t.file().fileSizeInBytes()) for t in tasks),
        rows=sum(int(t.file().recordCount()) for t in tasks),
        delete_files=len({_delete_key(d) for t in tasks for d in t.deletes()}),
        marks_deleted=_format_version(table) < 3)  # (see the module: v3 staged reads have no _deleted)


def _format_version(table: Any) -> int:
    try:
        return int(table.operations().current().formatVersion())
    except Exception:  # py4j: not a table with operations (a metadata table): as v3, no marks
        return 3


def _stretches(table: Any, low: Optional[int], high: int) -> list[tuple[Optional[int], int]]:
    """The window ``(low, high]`` cut at its ``replace`` snapshots: the (older, newer) snapshot
    ids bounding each stretch of other snapshots, oldest first (older None: no snapshot)."""
    chain: list[Any] = []  # high down to the snapshot above low
    snapshot = table.snapshot(int(high))
    while snapshot is not None and (low is None or int(snapshot.snapshotId()) != low):
        chain.append(snapshot)
        parent = snapshot.parentId()
        snapshot = None if parent is None else table.snapshot(parent)
    if low is not None and snapshot is None:
        raise ValueError(f"snapshot {low} is not an ancestor of {high}")
    stretches = []
    for replaces, group in itertools.groupby(reversed(chain), key=lambda s: str(s.operation()) == REPLACE):
        if not replaces:
            members = list(group)
            parent = members[0].parentId()
            stretches.append((None if parent is None else int(parent), int(members[-1].snapshotId())))
    return stretches


def _live_files(table: Any, snapshot: Optional[int]) -> dict[str, tuple[Any, frozenset]]:
    """Each data file of the table at ``snapshot``: its scan task and its delete files."""
    if snapshot is None:
        return {}
    files: dict[str, tuple[Any, frozenset]] = {}
    tasks = table.newScan().useSnapshot(int(snapshot)).planFiles()
    try:
        iterator = tasks.iterator()
        while iterator.hasNext():
            task = iterator.next()
            files[str(task.file().location())] = (task, frozenset(_delete_key(d) for d in task.deletes()))
    finally:
        tasks.close()
    return files


def _delete_key(delete_file: Any) -> tuple[str, Optional[int]]:
    """A delete file, or a deletion vector (one blob of a Puffin file that holds several)."""
    offset = delete_file.contentOffset()
    return str(delete_file.location()), None if offset is None else int(offset)


class StagedScans:
    """The scan tasks a run staged for Iceberg's reader, each set readable as a temp view until
    ``release``."""

    def __init__(self) -> None:
        self._staged: list[tuple[Any, str]] = []  # (Java Table, set id)

    def view(self, table: Any, table_name: str, tasks: Sequence[Any], name: str, deleted: bool = False) -> None:
        """The rows ``tasks`` read, as the temp view ``name`` (the table's columns) — with
        ``deleted``, the rows their delete files delete instead (``FileChange.marks_deleted``)."""
        spark = session()
        tasks_list = spark._jvm.java.util.ArrayList()
        for task in tasks:
            tasks_list.add(task)
        _manager(spark).stageTasks(table, name, tasks_list)
        self._staged.append((table, name))
        frame = spark.read.format("iceberg").option("scan-task-set-id", name).load(table_name)
        if deleted:
            frame = frame.where("_deleted")
        columns = ["`" + str(c.name()).replace("`", "``") + "`" for c in table.schema().columns()]
        frame.select(*columns).createOrReplaceTempView(name)  # (format v3 adds its row lineage)

    def release(self) -> None:
        if not self._staged:
            return
        manager = _manager(session())
        while self._staged:
            table, name = self._staged.pop()
            manager.removeTasks(table, name)


def _manager(spark: Any) -> Any:
    return java_class(spark, "org.apache.iceberg.spark.ScanTaskSetManager").get()
