"""The incremental_ivm entry points the Jinja macros call (``adapter.ivm_*``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.contracts.connection import AdapterResponse
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.ivm_inputs import (
    NO_INVOCATION,
    Invocation,
    ModelTables,
    find_consumers,
    is_ivm_model,
    ivm_models,
    resolve_inputs,
)
from dbt.adapters.spark_ivm.ivm_inspect import check, explain
from dbt.adapters.spark_ivm.ivm_status import model_status, report
from dbt.adapters.spark_ivm.refresh import Run, open_run, parse_config, refresh
from dbt.adapters.spark_ivm.refresh.config import fault_hook, ignored_layout_configs
from dbt.adapters.spark_ivm.refresh.db import logger
from ivm_core import statements as st
from ivm_core.top_k import pre_limit_sql


@dataclass
class IvmAdapterResponse(AdapterResponse):
    """What run_results.json's ``adapter_response`` carries for an incremental_ivm model."""

    mode: str = ""
    reason: Optional[str] = None
    rows_inserted: int = 0
    rows_deleted: int = 0
    seq: Optional[int] = None
    statements: int = 0
    inputs_read: Optional[dict] = None


def _model_node(graph: Any, name: str) -> dict:
    for node in (graph.get("nodes") or {}).values():
        if node.get("resource_type") == "model" and name in (node.get("name"), node.get("alias")):
            if not is_ivm_model(node):
                raise DbtRuntimeError(f"model '{name}' is not materialized as incremental_ivm")
            return node
    raise DbtRuntimeError(f"no model named '{name}' in this project")


class IvmAdapterMixin(metaclass=AdapterMeta):
    """Mixed into the adapter class: the entry points of the materialization and operations."""

    if TYPE_CHECKING:  # provided by the adapter class it is mixed into
        config: Any

        def execute(
            self, sql: str, auto_begin: bool = False, fetch: bool = False, limit: Optional[int] = None
        ) -> Any: ...

        def get_columns_in_relation(self, relation: Any) -> list: ...

    def _ivm_run_for(self, model: Any, graph: Any, relation: Any = None, full_refresh: bool = False,
                     invocation: Invocation = NO_INVOCATION) -> Run:
        """A run of the model (its configs validated, its inputs' change relations checked) in the
        dbt ``invocation`` that runs it."""
        name = model.get("name")
        schema = relation.schema if relation is not None else model["schema"]
        identifier = relation.identifier if relation is not None else (model.get("alias") or name)
        config = parse_config(name, model.get("config") or {}, self.config.credentials.catalog_is_exclusive())
        return open_run(
            self, name, model.get("compiled_code") or model.get("compiled_sql") or "",
            ModelTables(schema, identifier), resolve_inputs(model, graph), config,
            full_refresh=bool(full_refresh), fault=fault_hook(name),
            consumers=find_consumers(graph, schema, identifier, invocation),
        )

    @available
    def ivm_refresh(self, model: Any, graph: Any, relation: Any, full_refresh: bool,
                    selected_resources: Optional[Sequence[str]] = None,
                    full_refresh_flag: bool = False) -> IvmAdapterResponse:
        """Refresh the model; ``selected_resources`` and ``full_refresh_flag`` (``--full-refresh``)
        say which models the invocation rebuilds after it (``ivm_inputs.Invocation``)."""
        invocation = Invocation(frozenset(selected_resources or ()), bool(full_refresh_flag))
        ignored = ignored_layout_configs(model.get("config") or {})
        if ignored:
            logger.warning(f"incremental_ivm model '{model.get('name')}': its target does not take "
                           f"{', '.join(f'{k}={v!r}' for k, v in ignored.items())} (ignored): it is one "
                           "unpartitioned Iceberg table in the schema's location, sorted by its key where it has one")
        run = self._ivm_run_for(model, graph, relation, full_refresh, invocation)
        for view in run.views:  # SPEC §2.4: views are transparent, or say why not
            logger.info(f"incremental_ivm model '{run.model}': view {view.key} ({view.what}) "
                        + (f"inlined: it reads {', '.join(view.reads) or 'nothing'}" if view.inlined
                           else f"not inlined, diffed: {view.why_not}"))
        outcome = refresh(run)
        message = f"{outcome.mode.upper()} +{outcome.rows_inserted} -{outcome.rows_deleted}"
        if outcome.reason:
            message += f" ({outcome.reason})"
        return IvmAdapterResponse(
            _message=message,
            code=outcome.mode.upper(),
            rows_affected=outcome.rows_inserted + outcome.rows_deleted,
            mode=outcome.mode,
            reason=outcome.reason,
            rows_inserted=outcome.rows_inserted,
            rows_deleted=outcome.rows_deleted,
            seq=outcome.seq,
            statements=outcome.statements,
            inputs_read={k: dict(v) for k, v in outcome.inputs_read.items()} or None,
        )

    @available
    def ivm_explain(self, model_name: str, graph: Any) -> str:
        """SPEC §6: inputs and change sources, plan, state tables, delta query per input."""
        return explain(self._ivm_run_for(_model_node(graph, model_name), graph))

    @available
    def ivm_check(self, model_name: str, graph: Any) -> str:
        """Verify the model's state store and target against their definitions; raise on drift."""
        report, drift = check(self._ivm_run_for(_model_node(graph, model_name), graph))
        if drift:
            raise DbtRuntimeError(report)
        return report

    @available
    def ivm_status(self, graph: Any, models: Any = None, max_lag_seconds: Any = None, format: str = "text") -> str:
        """SPEC §6b: per incremental_ivm model (all, or those named), its last run, whether a run
        holds it, its state's size and each input's lag; raises, after the report, when a lag
        exceeds ``max_lag_seconds``."""
        if format not in ("text", "json"):
            raise DbtRuntimeError(f"ivm_status: format must be 'text' or 'json', not {format!r}")
        names = [models] if isinstance(models, str) else list(models or [])
        nodes = [_model_node(graph, name) for name in names] if names else ivm_models(graph)
        statuses = [model_status(self._ivm_run_for(node, graph)) for node in nodes]
        limit = None if max_lag_seconds is None else float(max_lag_seconds)
        text, late = report(statuses, limit, as_json=format == "json")
        if late:
            raise DbtRuntimeError(f"{text}\nivm_status: lag above {limit:g} s: {', '.join(late)}")
        return text

    @available
    def ivm_correctness_sql(self, relation: Any) -> str:
        """SQL listing the rows where the model differs from a recompute of its SQL (SPEC §5); for
        a model ending in ORDER BY … LIMIT, the rows showing it is not a valid choice of the top
        rows (``ivm_core.top_k``: ties at the limit may be broken either way)."""
        tables = ModelTables(relation.schema, relation.identifier)
        _, table = self.execute(
            f"SELECT model_sql FROM {tables.log} WHERE status = 'committed' ORDER BY seq DESC LIMIT 1",
            fetch=True,
        )
        if not table.rows:
            raise DbtRuntimeError(
                f"ivm_matches_full_refresh: {relation} has no committed incremental_ivm run to check"
            )
        model_sql = table.rows[0][0]
        columns = self.get_columns_in_relation(relation)
        names, types = [c.name for c in columns], [c.dtype for c in columns]
        top_k = pre_limit_sql(model_sql)
        if top_k is not None:  # any valid choice of the rows tied at the limit passes
            pre_limit, written = top_k
            normalized = [st.comparable(c, t) for c, t in zip(names, types)]
            return written.resolve(names).violations(tables.target, pre_limit, names, normalized)
        return st.multiset_difference(tables.target, model_sql, names, types)
