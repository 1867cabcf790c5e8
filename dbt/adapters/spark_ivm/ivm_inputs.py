"""Where each input of an incremental_ivm model gets its changes from (SPEC §2).

Resolved from the dbt graph the materialization passes in: a source that declares
``meta: {ivm: {changes: <relation>}}`` is read through that change table (with ``base: tagged``
a rebuild reads the source itself at its ``ivm_seq_<s>`` tags, and its consumed history may be
pruned); a ``ref`` to another incremental_ivm model is read through the changes that model
publishes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ivm_core.statements import quote_relation

CHANGE_TABLE = "change table"
IVM_MODEL = "incremental_ivm model"
UNSUPPORTED = "no change source"


def state_schema_for(schema: str) -> str:
    """The schema holding a model's companion state: next to the model's own schema."""
    return f"{schema}_ivm"


@dataclass(frozen=True)
class ModelTables:
    """The companion tables of one incremental_ivm model."""

    schema: str
    identifier: str

    @property
    def state_schema(self) -> str:
        return state_schema_for(self.schema)

    @property
    def target(self) -> str:
        return quote_relation(self.schema, self.identifier)

    @property
    def target_display(self) -> str:
        return f"{self.schema}.{self.identifier}"

    def companion(self, suffix: str) -> str:
        return quote_relation(self.state_schema, f"{self.identifier}__{suffix}")

    @property
    def changes(self) -> str:
        return self.companion("changes")

    @property
    def log(self) -> str:
        return self.companion("log")

    @staticmethod
    def _index_suffix(input_key: str) -> str:
        return "index__" + input_key.replace(".", "__")

    def index(self, input_key: str) -> str:
        return self.companion(self._index_suffix(input_key))

    def index_display(self, input_key: str) -> str:
        return self.display(self._index_suffix(input_key))

    def display(self, suffix: str) -> str:
        return f"{self.state_schema}.{self.identifier}__{suffix}"


@dataclass(frozen=True)
class Input:
    key: str  # schema.table, lower case: how the model's SQL names it
    kind: str
    display_changes: str  # human-readable name of the change relation
    changes: str = ""  # quoted change table (CHANGE_TABLE and IVM_MODEL; "" when UNSUPPORTED)
    upstream: ModelTables | None = None  # IVM_MODEL: the upstream model's tables
    base: str = ""  # CHANGE_TABLE with ``base: tagged``: the quoted source relation, read at its tags
    why_unsupported: str | None = None

    @property
    def upstream_model(self) -> ModelTables:
        """The upstream incremental_ivm model's tables (IVM_MODEL inputs only)."""
        if self.upstream is None:
            raise ValueError(f"input {self.key} is not an incremental_ivm model")
        return self.upstream


def _meta(node: Mapping[str, Any]) -> dict:
    meta: dict = {}
    for part in (node.get("source_meta"), node.get("meta"), (node.get("config") or {}).get("meta")):
        if isinstance(part, Mapping):
            meta.update(part)
    return meta


def resolve_inputs(model: Mapping[str, Any], graph: Mapping[str, Any]) -> list[Input]:
    nodes = graph.get("nodes", {})
    sources = graph.get("sources", {})
    inputs: list[Input] = []
    pending = list((model.get("depends_on") or {}).get("nodes", []))
    seen: set[str] = set()
    while pending:
        unique_id = pending.pop(0)
        if unique_id in seen:
            continue
        seen.add(unique_id)
        if unique_id in sources:
            node = sources[unique_id]
            schema, table = node["schema"], node.get("identifier") or node["name"]
            key = f"{schema}.{table}".lower()
            ivm = _meta(node).get("ivm") or {}
            changes = ivm.get("changes") if isinstance(ivm, Mapping) else None
            if isinstance(changes, str) and changes and changes != "snapshots":
                c_schema, _, c_table = changes.rpartition(".")
                c_schema = c_schema or schema
                tagged = ivm.get("base") == "tagged"
                inputs.append(Input(key, CHANGE_TABLE, f"{c_schema}.{c_table}", quote_relation(c_schema, c_table),
                                    base=quote_relation(schema, table) if tagged else ""))
            else:
                inputs.append(
                    Input(
                        key,
                        UNSUPPORTED,
                        key,
                        why_unsupported=f"source {node['source_name']}.{node['name']} declares no "
                        "change table (meta: {ivm: {changes: <table>}})",
                    )
                )
        elif unique_id in nodes:
            node = nodes[unique_id]
            if node.get("resource_type") not in ("model", "seed", "snapshot"):
                continue
            schema, table = node["schema"], node.get("alias") or node["name"]
            key = f"{schema}.{table}".lower()
            materialized = (node.get("config") or {}).get("materialized")
            if node.get("resource_type") == "model" and materialized == "incremental_ivm":
                upstream = ModelTables(schema, table)
                inputs.append(Input(key, IVM_MODEL, upstream.display("changes"), upstream.changes, upstream))
            elif node.get("resource_type") == "model" and materialized == "ephemeral":
                # inlined into the compiled SQL as a CTE: its own inputs are the model's inputs
                pending.extend((node.get("depends_on") or {}).get("nodes", []))
            else:
                inputs.append(
                    Input(
                        key,
                        UNSUPPORTED,
                        key,
                        why_unsupported=f"{node['resource_type']} {node['name']} "
                        f"({materialized or node['resource_type']}) publishes no changes",
                    )
                )
    return inputs
