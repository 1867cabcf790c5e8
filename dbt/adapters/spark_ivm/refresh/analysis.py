"""From the model's SQL to its compiled program, and whether a run must rebuild."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Mapping, Optional

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.ivm_inputs import DIFFED, IVM_MODEL, SNAPSHOTS
from dbt.adapters.spark_ivm.refresh.db import logger
from dbt.adapters.spark_ivm.refresh.context import Run
from dbt.adapters.spark_ivm.refresh.log import LogEntry
from dbt.adapters.spark_ivm.refresh.views import changed_views
from dbt.adapters.spark_ivm.refresh.views import signature as views_signature
from ivm_core import statements as st
from ivm_core.analyzer import InputSchema
from ivm_core.compiler import Program, compile_model, fingerprint
from ivm_core.errors import AnalysisError, UnsupportedSql
from ivm_core.plan import Scan


@dataclass(frozen=True)
class Fallback:
    """Why the model is recomputed in full on every run its inputs change. ``over_inputs``: its
    SQL's result is a function of its inputs' contents (``IvmError.over_inputs``), so a
    run that finds every input as the last commit consumed it has nothing to do."""

    reason: str
    over_inputs: bool = False

    def __str__(self) -> str:
        return self.reason


def fallback_fingerprint(run: Run) -> str:
    """Changes when the SQL or the schema of any input changes: a recompute's log entry
    records it, and a run whose fingerprint differs recomputes even over unchanged inputs."""
    return "full:" + fingerprint(run.sql, run.schemas) + sources_signature(run) + properties_signature(run)


def run_fingerprint(run: Run, program: Program) -> str:
    """What an incremental model's log records: its program's fingerprint, which inputs are
    read through their snapshots or diffed (the marks the log keeps for them are snapshot ids
    or sequences of the model, not of a change table: a source that switches kinds rebuilds),
    which have a join index (one that gains or loses it rebuilds) and the target's
    ``tblproperties`` (the target takes them when it is built: changed, they rebuild it)."""
    indexed = sorted(k for k, use in program.inputs.items() if run.keeps_index(use))
    return (program.fingerprint() + sources_signature(run) + f";indexed={','.join(indexed)}"
            + properties_signature(run))


_PROPERTIES = ";tblproperties="


def properties_signature(run: Run) -> str:
    """The target's ``tblproperties`` in a fingerprint (nothing when the model sets none, so
    that a log written before the config existed still matches)."""
    properties = run.config.target_properties
    if not properties:
        return ""
    return _PROPERTIES + hashlib.sha256(json.dumps(properties).encode()).hexdigest()[:16]


def _without_properties(recorded: str) -> str:
    return recorded.split(_PROPERTIES, 1)[0]


def sources_signature(run: Run) -> str:
    """Which inputs are read through their snapshots or diffed, and which views are inlined
    with a digest of their SQL (``views.signature``: a changed view SQL is a changed model)."""
    out = ""
    for kind, label in ((SNAPSHOTS, "snapshots"), (DIFFED, "diffed")):
        keys = sorted(k for k, i in run.inputs.items() if i.kind == kind)
        out += f";{label}={','.join(keys)}" if keys else ""
    return out + views_signature(run.views)


def compile_program(run: Run, bind_types: bool = True) -> tuple[Optional[Program], Optional[Fallback]]:
    """The compiled program, or why the model cannot be maintained incrementally (an error
    under ``ivm_policy: incremental``). Without ``bind_types`` the aggregates' Spark types are
    not asked yet (a run that finds nothing to do never needs them)."""
    try:
        program = compile_model(run.sql, [InputSchema(k, tuple(cols)) for k, cols in run.schemas.items()])
        if bind_types:
            bind_aggregate_types(run, program)
        return program, None
    except (UnsupportedSql, AnalysisError) as e:
        if run.config.policy == "incremental":
            raise DbtRuntimeError(
                f"incremental_ivm model '{run.model}' has ivm_policy 'incremental' but cannot be "
                f"maintained incrementally: {e}"
            ) from e
        return None, Fallback(str(e), e.over_inputs)


def bind_aggregate_types(run: Run, program: Program, recorded: Optional[Mapping[str, str]] = None) -> None:
    """Ask Spark (metadata only) the types of the aggregates' arguments and results — or bind
    those a commit ``recorded`` (``LogEntry.types``): they follow from the model's SQL and its
    inputs' schemas, which its fingerprint names, so an incremental run after a commit of the
    same fingerprint asks no ``DESCRIBE QUERY``."""
    if recorded is not None:
        program.bind_types(dict(recorded))
        return
    def empty_input(scan: Scan) -> str:
        source = run.inputs[scan.input]
        if source.kind == IVM_MODEL:
            relation = source.upstream_model.target
        else:
            relation = source.base if source.kind in (SNAPSHOTS, DIFFED) else source.changes
        return st.empty_input(relation, scan.input_columns)

    probe = program.type_probe_sql(empty_input)
    if probe is not None:
        program.bind_types(dict(run.db.describe(probe)))


def rebuild_reason(run: Run, program: Optional[Program], not_incremental: Optional[Fallback],
                   log: Optional[LogEntry]) -> Optional[str]:
    """Why this run rebuilds the model and its state, or None (it may apply changes)."""
    if run.config.policy == "full":
        return "ivm_policy is 'full'"
    if not_incremental is not None:
        logger.warning(f"incremental_ivm model '{run.model}' is recomputed in full on every run its inputs "
                       f"change: {not_incremental}")
        return f"not incrementally maintainable: {not_incremental}"
    if run.full_refresh:
        return "--full-refresh"
    if log is None:
        return "first run"
    if log.status != "committed":
        return "the previous rebuild was interrupted before it committed"
    assert program is not None
    expected = run_fingerprint(run, program)
    if log.fingerprint != expected:
        if log.model_sql != run.sql:
            views = changed_views(log.fingerprint, run.views)
            if views:
                named = f"view{'s' if len(views) > 1 else ''} {', '.join(views)}"
                return f"the SQL of {named}, inlined into the model, changed"
            return "the model SQL changed"
        if _without_properties(log.fingerprint) == _without_properties(expected):
            return "the target's tblproperties changed"
        return "an input's schema changed (or the state layout, with a new dbt-spark-ivm version)"
    return None


def unchanged_recompute_skippable(run: Run, not_incremental: Optional[Fallback], log: Optional[LogEntry]) -> bool:
    """Whether a model recomputed in full may end as ``noop`` when every input is as its last
    commit consumed it: its SQL reads only its inputs, deterministically, and the last commit
    recomputed this SQL over inputs of these schemas (not ``ivm_policy: full``, not
    ``--full-refresh``)."""
    return (not_incremental is not None and not_incremental.over_inputs and run.config.policy != "full"
            and not run.full_refresh and log is not None and log.status == "committed"
            and log.fingerprint == fallback_fingerprint(run))
