"""Views are transparent (SPEC §2.4): each run inlines the SQL of every view the model reads.

A dbt ``view`` model (``ivm_inputs.VIEW``: its compiled SQL from dbt's graph when it has it, else
its text from the catalog) and a source that turns out to be a view (its text from the catalog,
``DESCRIBE TABLE EXTENDED``'s ``View Text``) are replaced in the model's SQL by their SQL
(``ivm_core.views.inline_views``), recursively, so the tables under them are the model's inputs:
a dbt view's own inputs as dbt's graph resolved them (a change table, an upstream incremental_ivm
model, Iceberg snapshots, another view), a catalog view's relations classified at run time as a
source's are. What cannot be inlined stays an input, diffed (SPEC §2.5), its ``what`` naming the
view and why: SQL that cannot be parsed, calls a non-deterministic function, or is beyond what
ivm_core maintains (a view's SQL is analyzed on its own over the relations it reads: what the
analyzer refuses in it would make the whole model a full recompute, where the view diffed keeps
the model incremental).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional

from dbt.adapters.spark_ivm.ivm_inputs import SNAPSHOTS, VIEW, Input, as_diffed, snapshot_input, view_input
from ivm_core.analyzer import InputSchema, analyze
from ivm_core.errors import IvmError
from ivm_core.statements import quote_relation
from ivm_core.views import (
    inline_views,
    parse_query,
    plain_names,
    qualified,
    relations_read,
    renamed,
    why_not_inlined,
)

if TYPE_CHECKING:
    from dbt.adapters.spark_ivm.refresh.db import Columns, Executor
    from dbt.adapters.spark_ivm.refresh.metadata import SqlMetadata

Described = tuple["Columns", dict[str, str]]  # a relation's columns and its DESCRIBE details


@dataclass(frozen=True)
class ViewUse:
    """A view the model reads, as this run found it."""

    key: str
    what: str  # "model stg_orders (view)", "source view raw.v"
    sql: str  # its SQL as inlined (relations qualified), or as read when not inlined
    reads: tuple[str, ...] = ()  # the relations its SQL reads
    why_not: str = ""  # why it is not inlined (it is a DIFFED input of the run), "" when it is

    @property
    def inlined(self) -> bool:
        return not self.why_not

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()[:8]


@dataclass
class Inlined:
    """The model's SQL with its views inlined, its inputs then, and the views it read."""

    sql: str
    inputs: dict[str, Input]
    views: tuple[ViewUse, ...]
    described: dict[str, Described]  # the inputs DESCRIBEd on the way (``_input_schemas`` reuses them)


def inline(db: "Executor", metadata: "SqlMetadata", model_alias: str, sql: str, inputs: list[Input]) -> Inlined:
    """The model's SQL with every view it reads inlined (module docstring)."""
    final: dict[str, Input] = {}
    texts: dict[str, str] = {}  # inlined view key -> its SQL
    views: list[ViewUse] = []
    described: dict[str, Described] = {}
    columns: dict[str, Optional["Columns"]] = {}

    def describe(source: Input) -> Described:
        if source.key not in described:
            described[source.key] = db.columns_and_details(source.base)
        return described[source.key]

    def columns_of(key: str) -> Optional["Columns"]:
        """A relation's columns (for the analysis of a view's SQL), None when it has none."""
        if key not in columns:
            schema, _, table = key.rpartition(".")
            relation = quote_relation(schema, table)
            columns[key] = metadata.iceberg_columns(relation) or db.columns(relation) or None
        return columns[key]

    unparsed = ""
    try:
        if sql.strip():  # (an operation's model has no compiled SQL: its log's is read, views inlined)
            parse_query(sql)
    except IvmError:  # no view can be inlined in it; a source view is diffed as any other relation
        unparsed = "the model's SQL cannot be parsed, so no view can be inlined into it"
    queue = list(inputs)
    while queue:
        source = queue.pop(0)
        if source.key in final or source.key in texts:
            continue
        if source.kind == SNAPSHOTS and not source.declared and not unparsed:
            iceberg = metadata.iceberg_columns(source.base)
            if iceberg:
                described[source.key] = (iceberg, {"Provider": "iceberg"})
                columns[source.key] = iceberg
            if iceberg or describe(source)[1].get("Type", "").upper() != "VIEW":
                final[source.key] = source
                continue
            source = view_input(source.key, source.base, model_alias, f"source view {source.key}")
        elif source.kind != VIEW:
            final[source.key] = source
            continue
        view_columns, details = ([], {}) if source.view_sql else describe(source)
        text = source.view_sql or details.get("View Text", "")
        use = (ViewUse(source.key, source.what, text, why_not=unparsed) if unparsed
               else _view_use(source, text, view_columns, details, columns_of))
        views.append(use)
        if not use.inlined:
            final[source.key] = as_diffed(replace(source, view_sql="", inner=()),
                                          f"{use.what}, not inlined: {use.why_not}")
            continue
        texts[source.key] = use.sql
        known = {i.key for i in source.inner}
        schema_of = source.key.rpartition(".")[0]
        queue += list(source.inner)
        for key in sorted(set(use.reads) - known):  # named in its SQL, not by dbt: classified as a source's
            schema, _, table = key.rpartition(".")
            queue.append(snapshot_input(key, schema or schema_of, table, model_alias))
    return Inlined(inline_views(sql, texts) if sql.strip() else sql, final, tuple(views), described)


def _view_use(source: Input, text: str, view_columns: "Columns", details: dict[str, str],
              columns_of) -> ViewUse:
    """Whether and how the view ``source`` (its SQL ``text``) is inlined."""
    what = source.what or f"view {source.key}"
    if not text.strip():
        return ViewUse(source.key, what, text, why_not="its SQL text is not in the catalog")
    why_not = why_not_inlined(text)
    if why_not is not None:
        return ViewUse(source.key, what, text, why_not=why_not)
    tree = parse_query(text)
    schema = (details.get("View Catalog and Namespace") or details.get("Database")
              or source.key.rpartition(".")[0]).rpartition(".")[2]
    text = qualified(text, tree, schema)
    reads = tuple(sorted(relations_read(parse_query(text))))
    missing = [key for key in reads if columns_of(key) is None]
    if missing:
        return ViewUse(source.key, what, text, reads, f"it reads {', '.join(missing)}, which does not exist")
    try:
        analysis = analyze(text, [InputSchema(key, tuple(columns_of(key) or ())) for key in reads])
    except IvmError as e:
        return ViewUse(source.key, what, text, reads, f"its SQL cannot be maintained incrementally: {e}")
    names = list(analysis.output_names)
    declared = [c for c, _ in view_columns]
    if declared and [n.lower() for n in names] != [c.lower() for c in declared]:
        if len(names) != len(declared) or not plain_names(names):
            return ViewUse(source.key, what, text, reads,
                           f"its columns ({', '.join(declared)}) are not its SQL's ({', '.join(names)})")
        text = renamed(text, names, declared)  # CREATE VIEW v (a, b) AS ...
    return ViewUse(source.key, what, text, reads)


def signature(views: tuple[ViewUse, ...]) -> str:
    """The inlined views in a fingerprint: each key and a digest of its SQL as inlined."""
    inlined = sorted(f"{v.key}@{v.digest}" for v in views if v.inlined)
    return f";views={','.join(inlined)}" if inlined else ""


def changed_views(recorded_fingerprint: str, views: tuple[ViewUse, ...]) -> list[str]:
    """The views whose SQL differs from what the run that recorded ``recorded_fingerprint``
    inlined (or that one of the two runs inlined and the other did not)."""
    recorded = set()
    for part in recorded_fingerprint.split(";"):
        if part.startswith("views="):
            recorded = set(p for p in part[len("views="):].split(",") if p)
    now = {f"{v.key}@{v.digest}" for v in views if v.inlined}
    return sorted({entry.rpartition("@")[0] for entry in recorded ^ now})

