"""A rebuild at sequence ``S``, under the lock, top to bottom::

    find each input's position             an upstream model's target at the snapshot its last
                                           commit recorded (captured with its mark); a change-table
                                           source's base at its greatest ivm_seq_<s> tag
    validate what is read of the history   NULL/zero weights, deletes of absent rows: the changes
                                           above each base (against it), else the whole history
    log 'started' S, unless the next run   a run that finds it rebuilds again. Else a rebuild
      could roll this one back             that dies is rolled back by the next run like any
                                           run (recover.py: each replaced table set back to the
                                           last commit's snapshot) — the last commit's
                                           fingerprint and shapes —, or followed by a rebuild
                                           anyway (a model recomputed in full, a first build)
    build each join index, each aggregate state, then the target (from the groups it computes, when
                                           it holds its aggregate's group state: a statement that
                                           fails at a group its row would not determine, and the
                                           rebuild goes on with the group state in a table of its
                                           own: Layout.groups_apart)
    publish the target's change            the difference to the last committed target, at S,
                                           and its rows counted (readers' costs, cost.py) — or an
                                           empty table of the new shape; nothing when no model of
                                           the project reads the model's changes, every one that
                                           does rebuilds after it in this dbt invocation, or the
                                           last committed target is gone (its readers rebuild)
    retention, and maintenance every ivm_maintenance_every sequences  (maintain.py)
    log 'committed' S                      the commit point: every owned table's snapshot and
                                           row counts, read from metadata just before, and the
                                           rebuild's cost (cost.py)
"""

from __future__ import annotations

import dataclasses
from typing import Mapping, Optional

import sqlglot
from dbt_common.exceptions import DbtRuntimeError
from sqlglot import exp

from dbt.adapters.spark_ivm.ivm_inputs import CHANGE_TABLE, DIFFED, SNAPSHOTS
from dbt.adapters.spark_ivm.refresh.analysis import fallback_fingerprint, run_fingerprint
from dbt.adapters.spark_ivm.refresh.capture import OwnedTables, measure_built, owned_tables
from dbt.adapters.spark_ivm.refresh.db import Columns, logger
from dbt.adapters.spark_ivm.refresh.context import Outcome, Run
from dbt.adapters.spark_ivm.refresh.cost import Cost, Costs, input_sizes, rebuild_rows
from dbt.adapters.spark_ivm.refresh.log import Entry, LogEntry, RowCounts, json_literal, row_counts_literal, write_log
from dbt.adapters.spark_ivm.refresh.maintain import maintain_when_due
from dbt.adapters.spark_ivm.refresh.reading import (
    Position,
    bag_at,
    indexed_rows,
    plan_rows_sql,
    positions,
    snapshot_leaf,
    snapshot_zset,
    target_sort_key,
)
from dbt.adapters.spark_ivm.refresh.validate import validate
from ivm_core import bookkeeping as bk
from ivm_core import statements as st
from ivm_core.analyzer import normalize_table_name
from ivm_core.compiler import Program
from ivm_core.errors import IRREGULAR_GROUP
from ivm_core.plan import WindowResult
from ivm_core.sqltext import DIALECT, with_tables_replaced


def rebuild(run: Run, program: Optional[Program], log: Optional[LogEntry], highs: Mapping[str, int],
            input_rows: Mapping[str, int], reason: str, input_snapshots: Mapping[str, int],
            upstream_snapshots: Mapping[str, Optional[int]]) -> Outcome:
    logger.info(f"incremental_ivm model '{run.model}': full rebuild ({reason})")
    at = positions(run, highs, upstream_snapshots)
    bases = {k: p for k, p in at.items() if run.inputs[k].kind == CHANGE_TABLE}
    for key, source in sorted(run.inputs.items()):
        if source.kind == SNAPSHOTS:
            logger.info(f"incremental_ivm model '{run.model}': reads {key} at its snapshot {highs.get(key, 0)}")
        elif source.kind == DIFFED:
            logger.info(f"incremental_ivm model '{run.model}': reads {key} whole ({source.what}); every run "
                        "reads it whole again and diffs it against the copy this model keeps")
        elif key in bases:
            logger.info(f"incremental_ivm model '{run.model}': reads {key} at its tag {bk.BASE_TAG_PREFIX}"
                        f"{bases[key].seq} and the changes in ({bases[key].seq}, {highs.get(key, 0)}]")
        elif source.base:
            logger.warning(f"incremental_ivm model '{run.model}': {key} is declared base: tagged but has no tag "
                           f"{bk.BASE_TAG_PREFIX}<s> with s <= {highs.get(key, 0)}: read from its change history")
    validate(run, {k: (bases[k].seq if k in bases else None, h) for k, h in highs.items()}, input_rows,
             bases=bases)
    seq = (log.seq if log else 0) + 1
    fingerprint = run_fingerprint(run, program) if program else fallback_fingerprint(run)
    committed = log.committed if log is not None else None  # what downstream models consumed
    t = run.tables
    # the model's columns as Spark describes its SQL over the inputs (before any write: a join
    # index it is built from is not there yet on a first build)
    columns = run.db.describe(_substituted_sql(run, program, highs, at, from_indexes=False)) if program else None
    changes_columns = run.db.columns(t.changes) if committed is not None else []
    if _must_log_started(program, log, fingerprint, columns, changes_columns):
        assert log is not None
        write_log(run, Entry(seq=seq, status="started", mode="full", reason=reason, fingerprint=fingerprint,
                             highs=highs, changes_from=committed.changes_from if committed else 0,
                             columns=committed.target_columns if committed else [],
                             row_counts=row_counts_literal(RowCounts(inputs=input_rows),
                                                           committed.costs if committed else Costs())))
    run.fault("after_started")
    if program is not None:
        for key, use in program.inputs.items():
            if run.keeps_index(use):
                zset = snapshot_zset(run, key, use.columns, highs.get(key, 0), at.get(key))
                run.db.run(st.create_index(run.tables.index(key), indexed_rows(use, zset),
                                           use.cluster_key(input_sizes(run, input_rows))))
                run.fault(f"after_state:{key}")
    try:
        _build_states_and_target(run, program, highs, at, columns)
    except DbtRuntimeError as e:
        held = program.held_aggregates if program is not None else []
        if not held or IRREGULAR_GROUP not in str(e):
            raise
        assert program is not None
        logger.info(f"incremental_ivm model '{run.model}': a group of its aggregate has a SUM with a NULL value "
                    "or one that overflowed: its group state is kept in a table of its own from now on")
        for agg_id in held:
            program.keep_groups_apart(agg_id)
        _build_states_and_target(run, program, highs, at, columns)
    run.fault("after_target")
    new_columns = run.db.columns(t.target)
    names = [c for c, _ in new_columns]
    same_shape = _keeps_shape(committed, new_columns, changes_columns)
    published = (committed.counts.published or 0) if committed is not None else 0  # (log.py: RowCounts)
    old_target = _diffed_against(run, committed, same_shape)
    if old_target is not None:
        assert committed is not None
        # rows a run that died (a rebuild, or an incremental run this rebuild does not roll
        # back) published above the last commit were never committed
        run.db.run(bk.delete_changes_after(t.changes, committed.seq))
        run.db.run(st.diff_into_changes(t.changes, t.target, bk.pinned(t.target, old_target), names, seq))
        gained, lost = run.db.run(st.change_counts(t.changes, seq), fetch=True)[0]
        published += int(gained or 0) + int(lost or 0)
        changes_from = committed.changes_from
    else:  # a new shape, no old target, or no model reads the changes now: none are kept (from seq + 1 on)
        if run.consumers_rebuild:
            logger.info(f"incremental_ivm model '{run.model}': every model that reads its changes "
                        f"({', '.join(c.name for c in run.consumers)}) rebuilds after it in this invocation: "
                        "its change is not published")
        if not same_shape:  # else the table stays: no reader reads its rows, all below seq + 1
            run.db.run(st.create_table_as(t.changes, bk.empty_like(t.target), replace=True))
        changes_from = seq + 1
    run.fault("after_publish")
    owned = owned_tables(run, program)
    changes_from = maintain_when_due(run, seq, owned, committed.snapshots if committed is not None else {},
                                     changes_from, committed.seq if committed is not None else seq)
    recorded, index_rows, live = measure_built(run, owned)
    total = live.get(t.target_display, 0)  # a table just built has no deletes
    run.fault("before_commit")
    counts = RowCounts(inputs=input_rows, compacted=index_rows, index_rows=index_rows, tables=live,
                       input_snapshots=input_snapshots, published=published)
    target_snapshot = recorded.get(t.target_display)
    # the last incremental run's cost stays meaningful while the model's SQL and inputs do
    kept = committed.costs if committed and committed.fingerprint == fingerprint else Costs()
    costs = dataclasses.replace(kept, full=Cost(seq, run.seconds(), rebuild_rows(run, input_rows)))
    write_log(run, Entry(
        seq=seq, status="committed", mode="full", reason=reason, fingerprint=fingerprint, highs=highs,
        changes_from=changes_from, inserted=total, columns=new_columns,
        target_snapshot="NULL" if target_snapshot is None else str(int(target_snapshot)),
        snapshots=json_literal(recorded),
        row_counts=row_counts_literal(counts, costs, program.types if program else {}),
    ))
    _drop_stale_tables(run, owned, committed)
    return Outcome(mode="full", reason=reason, rows_inserted=total, seq=seq, statements=run.db.count)


def _build_states_and_target(run: Run, program: Optional[Program], highs: Mapping[str, int],
                             at: Mapping[str, Position], columns: Optional[Columns]) -> None:
    """Each aggregate state, then the target (a ``CREATE OR REPLACE``: a failed one leaves the
    table as it was)."""
    if program is not None:
        leaf = snapshot_leaf(run, program, highs, at)
        for statement in program.state_builds(leaf, run.state_table):
            run.db.run(st.create_state(run.state_table(statement.aggregate, statement.state), statement.sql,
                                       statement.sort_key, statement.partition))
            run.fault(f"after_state:{statement.aggregate}__{statement.state}")
    full_sql, sort_key = _full_sql(run, program, highs, at, columns)
    run.db.run(st.create_table_as(run.tables.target, full_sql, replace=True, sort_key=sort_key,
                                  properties=run.config.target_properties))


def _diffed_against(run: Run, committed: Optional[LogEntry], same_shape: bool) -> Optional[int]:
    """The last committed target's snapshot, when the rebuild publishes its difference to it: a
    model of the project reads this one's changes and does not rebuild after it in this
    invocation, the target keeps its shape, and the target still holds that snapshot. A target
    dropped since (or replaced by a view, or by another table of its name) does not: its rows
    are gone, nothing is published, and the models that read its changes rebuild (they find
    them held from the next sequence on)."""
    if not (run.publishes and not run.consumers_rebuild and committed is not None
            and committed.target_snapshot is not None and same_shape):
        return None
    if run.metadata.holds_snapshot(run.tables.target, committed.target_snapshot):
        return committed.target_snapshot
    logger.info(f"incremental_ivm model '{run.model}': its target no longer holds the snapshot its last commit "
                "recorded (dropped or replaced since): its change is not published, and the models that read "
                "it rebuild")
    return None


def _must_log_started(program: Optional[Program], log: Optional[LogEntry], fingerprint: str,
                      columns: Optional[Columns], changes_columns: Columns) -> bool:
    """Whether this rebuild must log 'started' before it writes, so that, should it die before
    its commit, the next run rebuilds again instead of rolling it back.

    A run that finds owned tables moved since the last commit sets each back to the snapshot the
    commit recorded (recover.py; Iceberg keeps a replaced table's snapshots). That undoes a dead
    rebuild exactly when the rebuild has the last commit's fingerprint (the SQL, the inputs'
    schemas, the state layout) and keeps the shape of what it replaces: the target's columns
    (``columns``, as Spark describes the model) and the published changes' as the commit left
    them. A run under another fingerprint rebuilds anyway — but the next one may be the last
    commit's again (the SQL changed back), so a rebuild under a new fingerprint logs 'started'.
    A model recomputed in full is never rolled back (its next run rebuilds, or finds its
    tables moved and rebuilds); a first build has nothing to go back to."""
    if log is None or log.committed is None:
        return False
    if log.committed.fingerprint != fingerprint:
        return True
    if program is None:
        return False
    assert columns is not None  # described for every model with a program
    return not _keeps_shape(log.committed, columns, changes_columns)


def _keeps_shape(committed: Optional[LogEntry], columns: Columns, changes_columns: Columns) -> bool:
    """Whether a target of ``columns`` has the committed target's columns (as its log entry
    recorded them) and the changes table (``changes_columns``) those of its changes."""
    target = [tuple(c) for c in columns]
    return (committed is not None and [tuple(c) for c in committed.target_columns] == target
            and [tuple(c) for c in changes_columns] == target + [(st.WEIGHT, "bigint"), (st.SEQ, "bigint")])


def _drop_stale_tables(run: Run, owned: OwnedTables, committed: Optional[LogEntry]) -> None:
    """After the commit point: drop the join indexes and aggregate state tables the last commit
    kept that the model no longer keeps (its inputs are now read at their positions, it reads
    other inputs, or its states are stored otherwise)."""
    if committed is None:
        return
    for name in sorted(set(committed.snapshots) - set(owned.tables)):
        if name.startswith((run.tables.display("index__"), run.tables.display("agg"))):
            try:
                run.db.run(bk.drop_table(run.tables.companion(name[len(run.tables.display("")):])))
            except DbtRuntimeError:  # an orphan only costs storage
                logger.warning(f"incremental_ivm model '{run.model}': could not drop the unused table {name}")


def _full_sql(run: Run, program: Optional[Program], highs: Mapping[str, int], at: Mapping[str, Position],
              names_types: Optional[Columns]) -> tuple[str, Optional[str]]:
    """The model's contents at the captured marks, with the names and types of its SELECT
    (``names_types``, as Spark describes it; None for a model recomputed in full), and the
    column to sort the target by (``Program.target_key``; None: unsorted).

    Incremental models are built from the plan over the freshly built state, so every row a
    later run retracts is exactly a row built here (floating-point aggregates included) — a
    top-k model from the rows it ranks; Spark names and types the columns from the model's own
    SQL. A window kept by its target (``WindowResult``) has no state: its rows are the model's
    own SQL's, as a table's (a later run retracts the target's rows as they are). An aggregate
    whose group state the target holds is read from the groups computed in the same statement
    (``Program.built_groups``).
    """
    user_sql = _substituted_sql(run, program, highs, at)
    if program is None or names_types is None:
        return user_sql, None
    if isinstance(program.plan, WindowResult):
        rows = user_sql
    else:
        leaf = snapshot_leaf(run, program, highs, at)
        held = {agg_id: f"(\n{program.built_groups(agg_id, leaf, run.state_table)}\n)"
                for agg_id in program.held_aggregates}
        rows = plan_rows_sql(run, program, leaf, names_types, positive=True, groups=held)
    if program.top_k is not None:  # at most k rows: nothing to sort the target by
        return program.top_k.limited(rows, [name for name, _ in names_types]), None
    sort_key = target_sort_key(program, names_types)
    return rows, sort_key[0] if sort_key else None


def _substituted_sql(run: Run, program: Optional[Program], highs: Mapping[str, int],
                     at: Mapping[str, Position], from_indexes: bool = True) -> str:
    """The model's own SQL with every input replaced by its contents at the captured mark: read
    from its join index, when it keeps one and ``from_indexes``, else at its position."""
    try:
        tree = sqlglot.parse_one(run.sql, read=DIALECT)
    except sqlglot.errors.ParseError:
        return run.sql  # beyond our parser: Spark reads the inputs' relations as they are
    replacements = {}
    for key in run.inputs:
        all_columns = run.schemas[key]
        use = program.inputs.get(key) if program else None
        if use is not None and from_indexes and run.keeps_index(use):
            zset = st.consolidated(bk.zset_of(run.tables.index(key), use.columns), use.columns)
            replacements[key] = st.exploded(zset, all_columns, use.columns)
        else:
            replacements[key] = bag_at(run, key, all_columns, [c for c, _ in all_columns], highs.get(key, 0),
                                       at.get(key))

    def replacement(table: exp.Table) -> Optional[str]:
        if not isinstance(table.this, exp.Identifier) or table.args.get("version") or table.args.get("when"):
            return None  # a time-travel read reads what it names
        return replacements.get(normalize_table_name(table))

    return with_tables_replaced(run.sql, tree, replacement)
