"""Where each input of an incremental_ivm model gets its changes from (SPEC §2).

Resolved from the dbt graph the materialization passes in: a source that declares
``meta: {ivm: {changes: <relation>}}`` is read through that change table (with ``base: tagged``
a rebuild reads the source itself at its ``ivm_seq_<s>`` tags, and its consumed history may be
pruned); a ``ref`` to another incremental_ivm model is read through the changes that model
publishes (only while an incremental_ivm model of the project reads it: ``find_consumers``);
any other source (or one declaring ``changes: snapshots``), and a ``table``,
``incremental``, seed or snapshot node stored as Iceberg, is read through its Iceberg snapshots:
the rows that changed between the snapshot the model last consumed and the current one
(``context`` checks at run time that the table is Iceberg). A ``ref`` to a dbt ``view`` model is
a ``VIEW``: each run inlines its SQL into the model's (``refresh/views.py``, SPEC §2.4), so its
own inputs, resolved here from its ``depends_on`` as the model's are, are the model's inputs; so
is a source that turns out at run time to be a view. Anything else — a table that is not Iceberg,
a source without a change table that turns out to be one, a view whose SQL cannot be inlined — is
*diffed* (SPEC §2.5): each run reads it whole and subtracts the copy of it the model keeps (its
join index, kept for this input whatever the plan needs), so its change costs a read of the input.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from typing import Any, Mapping

import sqlglot
from sqlglot import exp

from ivm_core.sqltext import DIALECT
from ivm_core.statements import quote_relation

CHANGE_TABLE = "change table"
IVM_MODEL = "incremental_ivm model"
SNAPSHOTS = "Iceberg snapshots"
DIFFED = "diffed against the model's copy"
# a dbt ``view`` model, inlined by each run (refresh/views.py): never among a Run's inputs, which
# hold the inputs under it instead (or the view itself, DIFFED, when it cannot be inlined)
VIEW = "view, inlined"
# nodes that store a table (dbt-spark-ivm makes Iceberg their default file_format)
TABLE_MATERIALIZATIONS = ("table", "incremental", "seed", "snapshot")


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
    # quoted change relation: CHANGE_TABLE and IVM_MODEL a table; SNAPSHOTS and DIFFED the temp
    # view an incremental run stages its change window in (a plain identifier)
    changes: str = ""
    upstream: ModelTables | None = None  # IVM_MODEL: the upstream model's tables
    # the quoted input relation: CHANGE_TABLE with ``base: tagged``, read at its tags; SNAPSHOTS,
    # read at its snapshots; DIFFED, read whole
    base: str = ""
    declared: bool = False  # SNAPSHOTS: ``changes: snapshots`` said so (else: not an Iceberg table is no error)
    what: str = ""  # DIFFED and VIEW: what the relation is (a view, a parquet table, ...), for the log
    # VIEW: the view's compiled SQL from dbt's graph ("": read from the catalog) and its own inputs
    view_sql: str = ""
    inner: tuple["Input", ...] = ()

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


def snapshot_input(key: str, schema: str, table: str, model_alias: str, declared: bool = False) -> Input:
    """An input read through its Iceberg snapshots; an incremental run of the model stages its
    change window in a temp view named after the model and the input."""
    return Input(key, SNAPSHOTS, f"Iceberg snapshots of {key}", _staged_view(model_alias, key),
                 base=quote_relation(schema, table), declared=declared)


def diffed_input(key: str, base: str, model_alias: str, what: str) -> Input:
    """An input diffed against the copy the model keeps (``base``: its quoted relation); an
    incremental run stages the difference in a temp view, as for a snapshot input."""
    return as_diffed(Input(key, DIFFED, "", _staged_view(model_alias, key), base=base), what)


def as_diffed(source: Input, what: str) -> Input:
    """``source`` (whose ``base`` is its relation) diffed against the model's copy of it."""
    return replace(source, kind=DIFFED, display_changes=f"the difference of {source.key} and the model's copy of it",
                   what=what)


def _staged_view(model_alias: str, key: str) -> str:
    named = f"{model_alias}__{key}"
    digest = hashlib.sha1(named.encode()).hexdigest()[:8]
    return f"_ivm_staged_change__{re.sub(r'[^A-Za-z0-9_]', '_', named)}_{digest}"


def _relation(node: Mapping[str, Any]) -> tuple[str, str]:
    """The (schema, table) a dbt node is stored as: its alias, else its name."""
    return str(node["schema"]), str(node.get("alias") or node.get("name"))


def _stores_iceberg_table(node: Mapping[str, Any]) -> bool:
    """Whether a node stores an Iceberg table, whose snapshots can be read (a table, incremental,
    seed or snapshot in the default or the iceberg file format, or an incremental_ivm model's
    target)."""
    config = node.get("config") or {}
    kind = config.get("materialized") or node.get("resource_type")
    return kind in TABLE_MATERIALIZATIONS + ("incremental_ivm",) and config.get("file_format") in (None, "iceberg")


def is_ivm_model(node: Mapping[str, Any]) -> bool:
    return node.get("resource_type") == "model" and (node.get("config") or {}).get("materialized") == "incremental_ivm"


def ivm_models(graph: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The project's incremental_ivm models (dbt's graph: every enabled node), by unique id."""
    return [node for _, node in sorted((graph.get("nodes") or {}).items()) if is_ivm_model(node)]


def resolve_inputs(model: Mapping[str, Any], graph: Mapping[str, Any]) -> list[Input]:
    """The inputs of ``model`` (its ``depends_on``, ephemeral models followed), each with where
    its changes come from; a dbt ``view`` model as a ``VIEW`` holding its own inputs."""
    model_alias = str(model.get("alias") or model.get("name") or "model")
    read = tables_read(str(model.get("compiled_code") or model.get("compiled_sql") or ""))
    return _resolve(list((model.get("depends_on") or {}).get("nodes", [])), graph, model_alias, read)


def with_inner(inputs: list[Input]) -> list[Input]:
    """``inputs`` and, after each ``VIEW``, the inputs under it (recursively)."""
    out: list[Input] = []
    for source in inputs:
        out.append(source)
        out += with_inner(list(source.inner))
    return out


def view_input(key: str, base: str, model_alias: str, what: str, view_sql: str = "",
               inner: tuple[Input, ...] = ()) -> Input:
    """A view the run inlines (``VIEW``); diffed (``as_diffed``) when it cannot be, so it stages
    its change window as a diffed input does."""
    return replace(diffed_input(key, base, model_alias, what), kind=VIEW, display_changes=f"the inputs of view {key}",
                   view_sql=view_sql, inner=inner)


def _resolve(unique_ids: list[str], graph: Mapping[str, Any], model_alias: str, read: set[str]) -> list[Input]:
    nodes = graph.get("nodes", {})
    sources = graph.get("sources", {})
    inputs: list[Input] = []
    pending = list(unique_ids)
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
                inputs.append(snapshot_input(key, schema, table, model_alias, declared=changes == "snapshots"))
        elif unique_id in nodes:
            node = nodes[unique_id]
            if node.get("resource_type") not in ("model", "seed", "snapshot"):
                continue
            deferred = _deferred(node, read)
            if deferred is not None:
                inputs.append(deferred_input(node, deferred, model_alias))
                continue
            schema, table = _relation(node)
            key = f"{schema}.{table}".lower()
            materialized = (node.get("config") or {}).get("materialized")
            if is_ivm_model(node):
                upstream = ModelTables(schema, table)
                inputs.append(Input(key, IVM_MODEL, upstream.display("changes"), upstream.changes, upstream))
            elif node.get("resource_type") == "model" and materialized == "ephemeral":
                # inlined into the compiled SQL as a CTE: its own inputs are the model's inputs
                pending.extend((node.get("depends_on") or {}).get("nodes", []))
            elif node.get("resource_type") == "model" and materialized == "view":
                inner = _resolve(list((node.get("depends_on") or {}).get("nodes", [])), graph, model_alias, read)
                inputs.append(view_input(key, quote_relation(schema, table), model_alias,
                                         f"model {node['name']} (view)",
                                         str(node.get("compiled_code") or node.get("compiled_sql") or ""),
                                         tuple(inner)))
            elif _stores_iceberg_table(node):  # an incremental_ivm model is an IVM_MODEL above
                inputs.append(snapshot_input(key, schema, table, model_alias))
            else:
                what = f"{node['resource_type']} {node['name']} ({materialized or node['resource_type']})"
                inputs.append(diffed_input(key, quote_relation(schema, table), model_alias, what))
    return inputs


def tables_read(sql: str) -> set[str]:
    """The ``schema.table`` keys (lower case) of the tables ``sql`` names; none when it cannot be
    parsed."""
    try:
        tree = sqlglot.parse_one(sql, read=DIALECT) if sql.strip() else None
    except sqlglot.errors.ParseError:
        return set()
    if tree is None:
        return set()
    return {".".join(p.name.lower() for p in (t.args.get("db"), t.this) if p is not None)
            for t in tree.find_all(exp.Table)}


def _deferred(node: Mapping[str, Any], read: set[str]) -> Mapping[str, Any] | None:
    """The relation dbt's ``ref`` read the node at instead of its own, under ``--defer``: its
    ``defer_relation`` (in the ``--state`` environment), when the model's SQL names that and not
    the node's own relation."""
    defer = node.get("defer_relation")
    if not isinstance(defer, Mapping) or not defer.get("schema"):
        return None
    own, there = (".".join(_relation(n)).lower() for n in (node, defer))
    return defer if there in read and own not in read else None


def deferred_input(node: Mapping[str, Any], defer: Mapping[str, Any], model_alias: str) -> Input:
    """An input ``--defer`` resolved to its relation in the ``--state`` environment: read through
    its Iceberg snapshots when it stores a table there (an incremental_ivm model's target too:
    its published changes belong to that environment's consumers and retention), else diffed."""
    schema, table = _relation(defer)
    key = f"{schema}.{table}".lower()
    materialized = (defer.get("config") or {}).get("materialized") or defer.get("resource_type")
    if _stores_iceberg_table(defer):
        return snapshot_input(key, schema, table, model_alias)
    what = f"{node['resource_type']} {node['name']} ({materialized}) deferred to {schema}.{table}"
    return diffed_input(key, quote_relation(schema, table), model_alias, what)


@dataclass(frozen=True)
class Consumer:
    """An incremental_ivm model of the project that reads another one's published changes."""

    name: str
    log: str  # its log (quoted), whose entries record how far it consumed
    key: str  # the input key it knows the upstream model by
    # selected in this dbt invocation with a full refresh (its own ``full_refresh`` config, else
    # ``--full-refresh``): it rebuilds after this model and reads none of its published changes
    rebuilds: bool = False


@dataclass(frozen=True)
class Invocation:
    """What the dbt invocation running a model selected (``selected_resources``, unique ids)
    and whether it passed ``--full-refresh``."""

    selected: frozenset[str] = frozenset()
    full_refresh: bool = False

    def rebuilds(self, node: Mapping[str, Any]) -> bool:
        """Whether this invocation rebuilds ``node`` in full: selected, and its ``full_refresh``
        config (dbt's ``should_full_refresh``: the config, else the flag) is true."""
        configured = (node.get("config") or {}).get("full_refresh")
        return node.get("unique_id") in self.selected and bool(
            self.full_refresh if configured is None else configured)


NO_INVOCATION = Invocation()  # an operation's (ivm_status, ivm_explain, a test): it rebuilds nothing


def find_consumers(graph: Mapping[str, Any], schema: str, identifier: str,
                   invocation: Invocation = NO_INVOCATION) -> list[Consumer]:
    """The incremental_ivm models of the project (dbt's graph: every enabled node, whatever the
    run selects) that read the model stored as ``schema.identifier`` — directly or through
    ephemeral models and views —, each with whether ``invocation`` rebuilds it."""
    key = f"{schema}.{identifier}".lower()
    consumers = []
    for node in ivm_models(graph):
        if any(i.kind == IVM_MODEL and i.key == key for i in with_inner(resolve_inputs(node, graph))):
            tables = ModelTables(node["schema"], node.get("alias") or node["name"])
            consumers.append(Consumer(str(node["name"]), tables.log, key, invocation.rebuilds(node)))
    return consumers
