"""What every step of a run shares: the model being run and the connection that runs its SQL."""

from __future__ import annotations

import hashlib
import os
import socket
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.ivm_inputs import (
    CHANGE_TABLE,
    DIFFED,
    IVM_MODEL,
    SNAPSHOTS,
    Consumer,
    Input,
    ModelTables,
    as_diffed,
)
from dbt.adapters.spark_ivm.refresh.config import IvmConfig
from dbt.adapters.spark_ivm.refresh.db import Columns, Executor
from ivm_core.rules.aggregate.held import TARGET
from ivm_core import statements as st
from ivm_core.bookkeeping import pinned as pinned_relation
from ivm_core.compiler import InputUse

if TYPE_CHECKING:
    from dbt.adapters.spark_ivm.refresh.metadata import SqlMetadata
    from dbt.adapters.spark_ivm.refresh.views import ViewUse


class IvmInputError(DbtRuntimeError):
    """Bad input: the run stops before it changes any table."""


@dataclass(frozen=True)
class Outcome:
    mode: str  # incremental | full | noop
    reason: Optional[str] = None
    rows_inserted: int = 0
    rows_deleted: int = 0
    seq: Optional[int] = None
    statements: int = 0
    # each changed input read without a change table: how its change was read and what that
    # read (reading.stage_changes: "how", and "files", "bytes", "rows", "delete_files" when
    # read by its data files)
    inputs_read: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Run:
    """One run of one incremental_ivm model: what it runs, on which connection, as whom."""

    model: str
    sql: str
    tables: ModelTables
    inputs: Mapping[str, Input]
    config: IvmConfig
    db: Executor
    owner: str  # host:pid:run id:process identity (new_owner), as the lock row records it
    schemas: Mapping[str, Columns]  # each input's columns, without weight and seq
    # how the run reads its tables' metadata (metadata.py): the reader that read ``schemas``,
    # which keeps each table it loaded for the run's later reads
    metadata: "SqlMetadata"
    full_refresh: bool = False
    fault: Callable[[str], None] = lambda step: None
    consumers: tuple[Consumer, ...] = ()  # the project's incremental_ivm models that read this one
    started: float = field(default_factory=time.monotonic)  # when the run began (its cost, cost.py)
    # the views the model reads, inlined into ``sql`` or (not inlinable) diffed inputs (views.py)
    views: tuple["ViewUse", ...] = ()

    def reading_at(self, snapshots: Mapping[str, int]) -> "Run":
        """The run with each change table read at the snapshot its capture read it at
        (``snapshots``: key -> snapshot id): every statement of the run sees the same changes,
        and a producer's commit landing during the run is wholly in the next run."""
        pinned = {key: replace(source, changes=pinned_relation(source.changes, snapshots[key]))
                  for key, source in self.inputs.items() if source.kind == CHANGE_TABLE and key in snapshots}
        return replace(self, inputs={**self.inputs, **pinned}) if pinned else self

    def seconds(self) -> float:
        """Seconds since the run began."""
        return time.monotonic() - self.started

    @property
    def publishes(self) -> bool:
        """Whether the run publishes its change in ``<model>__changes``: for the models that
        read it (``ivm_publish_changes: consumers``), or always."""
        return self.config.publish_always or bool(self.consumers)

    @property
    def consumers_rebuild(self) -> bool:
        """Whether every model that reads this one's changes rebuilds after it in this dbt
        invocation (``Consumer.rebuilds``), so that none reads what a rebuild would publish
        (``ivm_publish_changes: always`` publishes for readers outside the project)."""
        return bool(self.consumers) and all(c.rebuilds for c in self.consumers) and not self.config.publish_always

    def keeps_index(self, use: InputUse) -> bool:
        """Whether the run keeps a join index of the input: a diffed input's index is the copy it
        is diffed against; any other's is kept when some update path reads its integrated value
        (``use.stateful``) and it has no position to read that at — a ``base: tagged`` source at
        its tags, an Iceberg input at its snapshots, an upstream model's target at the snapshot
        its commit recorded — or the model asks for indexes (``ivm_join_index: always``)."""
        if self.inputs[use.key].kind == DIFFED:
            return True
        return use.stateful and (self.config.join_index == "always" or not self.has_position(use.key))

    def reads_at_position(self, use: InputUse) -> bool:
        """Whether the run reads the input's integrated value at its position (its tag or its
        snapshot, ``reading.Position``) instead of from a join index."""
        return use.stateful and not self.keeps_index(use)

    def has_position(self, key: str) -> bool:
        source = self.inputs[key]
        return source.kind in (SNAPSHOTS, IVM_MODEL) or (source.kind == CHANGE_TABLE and bool(source.base))

    def state_table(self, agg_id: str, name: str) -> str:
        """An aggregate's table of states (``Layout.tables``), or the target (``TARGET``: a
        group state the target holds is read from it)."""
        return self.tables.target if name == TARGET else self.tables.companion(f"{agg_id}__{name}")

    def state_display(self, agg_id: str, name: str) -> str:
        return self.tables.target_display if name == TARGET else self.tables.display(f"{agg_id}__{name}")

    def fail(self, problem: str) -> IvmInputError:
        """Bad input, named: the model, then the problem (which names the table)."""
        return IvmInputError(f"incremental_ivm model '{self.model}': {problem}. Nothing was changed.")


def open_run(adapter: Any, model: str, sql: str, tables: ModelTables, inputs: list[Input], config: IvmConfig,
             full_refresh: bool = False, fault: Optional[Callable[[str], None]] = None,
             consumers: Sequence[Consumer] = ()) -> Run:
    """A run of the model, with its inputs' change relations checked and their columns read."""
    from dbt.adapters.spark_ivm.refresh.metadata import table_metadata

    from dbt.adapters.spark_ivm.refresh.views import inline

    db = Executor(adapter, model)
    metadata = table_metadata(db)
    inlined = inline(db, metadata, tables.identifier, sql, inputs)  # views are transparent (views.py)
    by_key = inlined.inputs
    schemas = _input_schemas(db, metadata, model, by_key, inlined.described)
    return Run(
        model=model, sql=inlined.sql, tables=tables, inputs=by_key, config=config, db=db,
        owner=new_owner(),
        schemas=schemas, metadata=metadata, full_refresh=full_refresh,
        fault=fault or (lambda step: None), consumers=tuple(consumers), views=inlined.views,
    )


def new_owner() -> str:
    """A run's name on the lock row: ``host:pid:run id:process identity``. The host and pid name
    it to people; the run id (random) tells two runs of one process apart; the identity
    (``process_identity``) tells whether the pid may be looked up from here."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}:{process_identity()}"


def process_identity() -> str:
    """The kernel boot and pid namespace this process runs in, hashed: two processes with the same
    identity share one pid space, so one's pid names the same process to the other. Containers
    that share a host name (host networking) have pid namespaces of their own, so differ here."""
    parts = []
    for path, read in (("/proc/sys/kernel/random/boot_id", _read_text), ("/proc/self/ns/pid", os.readlink)):
        try:
            parts.append(read(path).strip())
        except OSError:
            parts.append("")
    if not any(parts):  # no /proc (not Linux): unknown, never judged by its pid
        return "unknown"
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:12]


def _read_text(path: str) -> str:
    with open(path) as f:
        return f.read()


def _input_schemas(db: Executor, metadata: "SqlMetadata", model: str, inputs: dict[str, Input],
                   described: Optional[Mapping[str, tuple[Columns, dict[str, str]]]] = None) -> dict[str, Columns]:
    """Each input's columns (without weight and seq), checking its change relation; an input
    read through snapshots that turns out not to be an Iceberg table is diffed instead
    (``ivm_inputs.DIFFED``; an error when it declared ``changes: snapshots``). An Iceberg
    table's columns come from the embedded session's catalog when it has one (metadata.py),
    else from ``DESCRIBE TABLE`` (``described``: the relations already described, by key)."""
    schemas = {}
    prefix = f"incremental_ivm model '{model}'"
    for key, source in list(inputs.items()):
        if source.kind in (SNAPSHOTS, DIFFED):
            known = (described or {}).get(key)
            iceberg_columns = None if known else metadata.iceberg_columns(source.base)
            columns, details = (known if known else (iceberg_columns, {"Provider": "iceberg"}) if iceberg_columns
                                else db.columns_and_details(source.base))
            if not columns:
                raise IvmInputError(f"{prefix}: input {key} does not exist (or has no columns). Nothing was changed.")
            schemas[key] = columns
            provider = details.get("Provider", "").lower()
            if source.kind == DIFFED or provider == "iceberg":
                continue
            what = f"{details.get('Type', 'relation').lower()} {key} (provider {provider or 'none'})"
            if source.declared:
                raise IvmInputError(f"{prefix}: source {key} declares changes: snapshots, but it is a {what}, "
                                    "not an Iceberg table. Nothing was changed.")
            inputs[key] = as_diffed(source, f"{what}, not an Iceberg table, with no change table declared")
            continue
        columns = metadata.iceberg_columns(source.changes) or db.columns(source.changes)
        if not columns:
            raise IvmInputError(
                f"{prefix}: the change relation {source.display_changes} of input {key} does not exist. "
                "Nothing was changed."
            )
        names = {c.lower() for c, _ in columns}
        missing = [c for c in (st.WEIGHT, st.SEQ) if c not in names]
        if missing:
            raise IvmInputError(
                f"{prefix}: change table {source.display_changes} of input {key} is missing column(s) "
                f"{', '.join(missing)}. Nothing was changed."
            )
        types = {c.lower(): t.lower() for c, t in columns}
        wrong = [c for c in (st.WEIGHT, st.SEQ) if types[c] not in ("bigint", "int", "smallint", "tinyint")]
        if wrong:
            raise IvmInputError(
                f"{prefix}: change table {source.display_changes}: column(s) {', '.join(wrong)} must be integers "
                f"(BIGINT), not {', '.join(types[c] for c in wrong)}. Nothing was changed."
            )
        schemas[key] = [(c, t) for c, t in columns if c.lower() not in (st.WEIGHT, st.SEQ)]
    return schemas
