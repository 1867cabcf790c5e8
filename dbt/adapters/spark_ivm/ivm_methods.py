"""The incremental_ivm entry points the Jinja macros call (``adapter.ivm_*``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.contracts.connection import AdapterResponse
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.ivm_inputs import ModelTables, resolve_inputs
from dbt.adapters.spark_ivm.ivm_inspect import check, explain
from dbt.adapters.spark_ivm.ivm_refresh import (
    DEFAULT_INDEX_GROWTH,
    DEFAULT_LOCK_TIMEOUT,
    DEFAULT_REWRITE_MAX_ROWS,
    Refresh,
)
from ivm_core import statements as st

# "<model>:<step>": tests make a refresh fail at that step. Steps of an incremental run:
# after_validate, after_publish, after_target, after_state[:<table>], before_commit; of a
# rebuild: after_started, after_state[:<table>], after_target, after_publish, before_commit.
FAULT_ENV = "DBT_SPARK_IVM_FAULT"


@dataclass
class IvmAdapterResponse(AdapterResponse):
    """What run_results.json's ``adapter_response`` carries for an incremental_ivm model."""

    mode: str = ""
    reason: Optional[str] = None
    rows_inserted: int = 0
    rows_deleted: int = 0
    seq: Optional[int] = None
    statements: int = 0


def _configured(config: dict, key: str, default: Any) -> Any:
    """A model config value; unset (None) means the default, while 0 stays 0."""
    value = config.get(key)
    return default if value is None else value


def _fault_hook(model_name: str):
    wanted = os.environ.get(FAULT_ENV, "")
    target, _, step = wanted.partition(":")
    if not wanted or target != model_name:
        return None

    def fault(reached: str) -> None:
        # "after_state" matches the first state statement ("after_state:<table>")
        if reached == step or reached.startswith(step + ":"):
            raise DbtRuntimeError(f"injected failure in model '{model_name}' at step {step}")

    return fault


def _model_node(graph: Any, name: str) -> dict:
    for node in (graph.get("nodes") or {}).values():
        if node.get("resource_type") == "model" and name in (node.get("name"), node.get("alias")):
            if (node.get("config") or {}).get("materialized") != "incremental_ivm":
                raise DbtRuntimeError(f"model '{name}' is not materialized as incremental_ivm")
            return node
    raise DbtRuntimeError(f"no model named '{name}' in this project")


class IvmAdapterMixin(metaclass=AdapterMeta):
    """Mixed into the adapter class: the entry points of the materialization and operations."""

    def _ivm_refresh_for(self, model: Any, graph: Any, relation: Any = None, full_refresh: bool = False) -> Refresh:
        config = model.get("config") or {}
        name = model.get("name")
        schema = relation.schema if relation is not None else model["schema"]
        identifier = relation.identifier if relation is not None else (model.get("alias") or name)
        return Refresh(
            adapter=self,
            model_name=name,
            sql=model.get("compiled_code") or model.get("compiled_sql") or "",
            tables=ModelTables(schema, identifier),
            inputs=resolve_inputs(model, graph),
            policy=str(config.get("ivm_policy") or "auto"),
            full_refresh=bool(full_refresh),
            fault=_fault_hook(name),
            lock_timeout=int(_configured(config, "ivm_lock_timeout", DEFAULT_LOCK_TIMEOUT)),
            index_growth=float(_configured(config, "ivm_index_growth", DEFAULT_INDEX_GROWTH)),
            lock_row=self._ivm_lock_row(name, str(config.get("ivm_lock") or "auto")),
            rewrite_max_rows=_configured(config, "ivm_rewrite_max_rows", DEFAULT_REWRITE_MAX_ROWS),
        )

    def _ivm_lock_row(self, model_name: str, mode: str) -> bool:
        """Whether runs take the model's lock row (``ivm_lock: table``) or only register in
        this process: ``auto`` does the latter when no other process can reach the catalog."""
        if mode not in ("auto", "table"):
            raise DbtRuntimeError(
                f"incremental_ivm model '{model_name}': ivm_lock must be 'auto' or 'table', not {mode!r}"
            )
        return mode == "table" or not self.config.credentials.catalog_is_exclusive()

    @available
    def ivm_refresh(self, model: Any, graph: Any, relation: Any, full_refresh: bool) -> IvmAdapterResponse:
        outcome = self._ivm_refresh_for(model, graph, relation, full_refresh).run()
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
        )

    @available
    def ivm_explain(self, model_name: str, graph: Any) -> str:
        """SPEC §6: inputs and change sources, plan, state tables, delta query per input."""
        return explain(self._ivm_refresh_for(_model_node(graph, model_name), graph))

    @available
    def ivm_check(self, model_name: str, graph: Any) -> str:
        """Verify the model's state store and target against their definitions; raise on drift."""
        report, drift = check(self._ivm_refresh_for(_model_node(graph, model_name), graph))
        if drift:
            raise DbtRuntimeError(report)
        return report

    @available
    def ivm_correctness_sql(self, relation: Any) -> str:
        """SQL listing the rows where the model differs from a recompute of its SQL (SPEC §5)."""
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
        return st.multiset_difference(
            tables.target, model_sql, [c.name for c in columns], [c.dtype for c in columns]
        )
