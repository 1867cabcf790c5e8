"""Oracle harness for incremental_ivm functional tests.

Every input of a model is a pair of Iceberg tables in the test schema:

* ``<name>_changes``: the input's columns + ``_ivm_weight BIGINT`` + ``_ivm_seq BIGINT`` (SPEC §2.1);
* ``<name>``: the base table, always rebuilt to the consolidation of the change table.

A model is written once as a template with ``{input}`` placeholders; the harness renders it for dbt
(``{{ source('raw', 'orders') }}`` / ``{{ ref('a') }}``) and for the oracle (``schema.orders`` / the referenced
model's oracle SQL as a subquery).  After every ``dbt run`` the oracle recomputes each model from scratch over
the base tables and compares it with the target as a multiset, and compares the column names and Spark types.

The harness talks to Spark directly (``SparkSession.builder.getOrCreate()`` returns the session dbt started in
this process); it never starts a second JVM.  tests/thrift switches it to a Spark Thrift Server (``set_backend``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ivm_core.top_k import pre_limit_sql

# Materialization under test.  Overridable so the harness itself can be validated with `table` models
# (e.g. IVM_TEST_MATERIALIZATION=table) before/without the incremental_ivm materialization.
MATERIALIZATION = os.environ.get("IVM_TEST_MATERIALIZATION", "incremental_ivm")
IS_IVM = MATERIALIZATION == "incremental_ivm"
SOURCE_NAME = "raw"

Row = Tuple
Batch = Dict[str, List[Tuple[Row, int]]]  # input name -> [(row, weight)]


def qi(name: str) -> str:
    """A Spark identifier, backquoted (backquotes inside doubled): column and table names may be reserved words or
    contain spaces, quotes and backquotes."""
    return "`" + name.replace("`", "``") + "`"


def spark():
    from pyspark.sql import SparkSession

    return SparkSession.builder.getOrCreate()


# ---------------------------------------------------------------------------------------------- SQL backend
# By default the harness runs its SQL in this process's SparkSession (the one dbt's session method started).
# tests/thrift sets a backend that runs it through a Spark Thrift Server instead: an object with
# ``sql(q)`` (executes now; returns an object whose ``collect()`` gives pyspark Rows with the same Python
# types as a DataFrame's) and ``schema(q)`` (the query's [(column, Spark type)]).
_BACKEND = None


def set_backend(backend):
    """Run the harness's SQL through ``backend`` (None: this process's SparkSession); returns the previous one."""
    global _BACKEND
    previous, _BACKEND = _BACKEND, backend
    return previous


def sql(q: str):
    if _BACKEND is not None:
        return _BACKEND.sql(q)
    return spark().sql(q)


def query_schema(q: str) -> List[Tuple[str, str]]:
    """[(column name, Spark type)] of a query's result."""
    if _BACKEND is not None:
        return _BACKEND.schema(q)
    return [(f.name, f.dataType.simpleString()) for f in sql(q).schema.fields]


def collect(q: str) -> List[Row]:
    return [tuple(r) for r in sql(q).collect()]


# ---------------------------------------------------------------------------------------------- values
def _null(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def int_gen(lo: int, hi: int, null_p: float = 0.0) -> Callable[[random.Random], Optional[int]]:
    def g(rng):
        return None if _null(rng, null_p) else rng.randint(lo, hi)

    return g


def choice_gen(values: Sequence, null_p: float = 0.0):
    def g(rng):
        return None if _null(rng, null_p) else rng.choice(list(values))

    return g


def decimal_gen(lo: int, hi: int, null_p: float = 0.0):
    def g(rng):
        if _null(rng, null_p):
            return None
        return decimal.Decimal(rng.randint(lo * 100, hi * 100)) / 100

    return g


def date_gen(null_p: float = 0.0):
    base = dt.date(2024, 1, 1)

    def g(rng):
        return None if _null(rng, null_p) else base + dt.timedelta(days=rng.randint(0, 90))

    return g


def sql_literal(v, spark_type: str) -> str:
    if v is None:
        return f"CAST(NULL AS {spark_type})"
    t = spark_type.lower()
    if t.startswith("decimal"):
        return f"CAST('{v}' AS {spark_type})"
    if t == "date":
        return f"DATE'{v.isoformat()}'"
    if t == "string":
        return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"
    if t == "boolean":
        return "TRUE" if v else "FALSE"
    if t in ("double", "float"):
        return f"CAST({v!r} AS {spark_type})"
    return f"CAST({v} AS {spark_type})"


# ---------------------------------------------------------------------------------------------- inputs
@dataclass
class Column:
    name: str
    type: str  # Spark SQL type
    gen: Callable[[random.Random], object]
    key: bool = False  # join key: updates of it are favoured, NULLs exercised


@dataclass
class Input:
    name: str
    columns: List[Column]
    initial_rows: int = 12
    rows: Counter = field(default_factory=Counter)  # current consolidated contents (python mirror)
    changes_name: Optional[str] = None  # the change table's name (default: <name>_changes)

    @property
    def col_names(self) -> List[str]:
        return [c.name for c in self.columns]

    @property
    def quoted_cols(self) -> str:
        return ", ".join(qi(c) for c in self.col_names)

    @property
    def changes(self) -> str:
        return self.changes_name or f"{self.name}_changes"

    def new_row(self, rng: random.Random) -> Row:
        return tuple(c.gen(rng) for c in self.columns)


class IvmHarness:
    """Owns the inputs of one test project and the sequence counter."""

    def __init__(self, schema: str, inputs: Iterable[Input], base_kind: Optional[str] = None):
        """base_kind 'view' (default, cheap: a view over the consolidation of the change table, always exact) or
        'table' (an Iceberg table rebuilt with INSERT OVERWRITE after each batch; ~2 Spark writes per input and
        batch)."""
        self.schema = schema
        self.base_kind = base_kind or os.environ.get("IVM_TEST_BASE", "view")
        self.inputs: Dict[str, Input] = {i.name: i for i in inputs}
        self.seq = 0
        self.history: List[Batch] = []

    # ---- DDL
    def fq(self, table: str) -> str:
        return f"{self.schema}.{qi(table)}"

    def create_inputs(self):
        for inp in self.inputs.values():
            cols = ", ".join(f"{qi(c.name)} {c.type}" for c in inp.columns)
            sql(f"DROP VIEW IF EXISTS {self.fq(inp.name)}")
            sql(f"DROP TABLE IF EXISTS {self.fq(inp.changes)}")
            sql(f"DROP TABLE IF EXISTS {self.fq(inp.name)}")
            sql(
                f"CREATE TABLE {self.fq(inp.changes)} ({cols}, _ivm_weight BIGINT, _ivm_seq BIGINT) USING iceberg"
            )
            if self.base_kind == "view":
                sql(f"CREATE VIEW {self.fq(inp.name)} AS {self.consolidation_sql(inp.name)}")
            else:
                sql(f"CREATE TABLE {self.fq(inp.name)} ({cols}) USING iceberg")
            inp.rows = Counter()

    def consolidation_sql(self, name: str) -> str:
        """The input's contents: every row with positive total weight, repeated weight times."""
        inp = self.inputs[name]
        cols = inp.quoted_cols
        return (
            f"SELECT {cols} FROM ("
            f"SELECT {cols}, SUM(_ivm_weight) AS _w FROM {self.fq(inp.changes)} "
            f"GROUP BY {cols} HAVING SUM(_ivm_weight) > 0"
            f") LATERAL VIEW explode(sequence(1, _w)) _x AS _i"
        )

    def sources_yml(self, source_name: str = SOURCE_NAME, quote_identifiers: bool = False,
                    base: Optional[str] = None) -> str:
        """quote_identifiers: dbt quotes the sources' table names (needed for reserved words);
        base: each source's ``meta.ivm.base`` (``tagged``)."""
        lines = ["version: 2", "sources:", f"  - name: {source_name}", f"    schema: {self.schema}"]
        if quote_identifiers:
            lines += ["    quoting:", "      identifier: true"]
        lines.append("    tables:")
        for inp in self.inputs.values():
            lines += [
                f"      - name: {json.dumps(inp.name)}",
                "        meta:",
                "          ivm:",
                f"            changes: {json.dumps(inp.changes)}",
            ] + ([f"            base: {base}"] if base else [])
        return "\n".join(lines) + "\n"

    # ---- change batches
    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def write_changes(self, name: str, changes: List[Tuple[Row, int]], seq: int):
        """Append raw change rows (no validation: bad-input tests use this too)."""
        if not changes:
            return
        inp = self.inputs[name]
        types = [c.type for c in inp.columns]
        values = []
        for row, w in changes:
            lits = [sql_literal(v, t) for v, t in zip(row, types)]
            wl = "CAST(NULL AS BIGINT)" if w is None else f"CAST({w} AS BIGINT)"
            values.append("(" + ", ".join(lits + [wl, f"CAST({seq} AS BIGINT)"]) + ")")
        sql(f"INSERT INTO {self.fq(inp.changes)} VALUES " + ",\n".join(values))

    def rebuild_base(self, name: str):
        if self.base_kind == "table":
            sql(f"INSERT OVERWRITE {self.fq(name)} {self.consolidation_sql(name)}")

    def apply(self, batch: Batch) -> int:
        """Write one transaction: all change rows share the next _ivm_seq; base tables are rebuilt."""
        seq = self.next_seq()
        for name, changes in batch.items():
            if not changes:
                continue
            inp = self.inputs[name]
            for row, w in changes:
                inp.rows[row] += w
                assert inp.rows[row] >= 0, f"generator bug: negative multiplicity for {name} {row}"
                if inp.rows[row] == 0:
                    del inp.rows[row]
            self.write_changes(name, changes, seq)
            self.rebuild_base(name)
        self.history.append(batch)
        return seq

    def check_bases(self):
        """The base tables equal the python mirror (sanity check of the harness itself)."""
        for inp in self.inputs.values():
            got = Counter(collect(f"SELECT {inp.quoted_cols} FROM {self.fq(inp.name)}"))
            assert got == inp.rows, diff_message(f"base table {inp.name}", inp.rows, got)


# ---------------------------------------------------------------------------------------------- generator
class BatchGenerator:
    """Seeded random change batches with the nasty cases: duplicates, NULLs (incl. NULL join keys), deletes of
    existing (often joined) rows, updates (-old +new, same seq) incl. join keys, weights of +-2, several inputs
    in one batch."""

    def __init__(self, harness: IvmHarness, seed: int):
        self.h = harness
        self.rng = random.Random(seed)

    def initial(self) -> Batch:
        batch: Batch = {}
        for inp in self.h.inputs.values():
            rows = []
            for _ in range(inp.initial_rows):
                r = inp.new_row(self.rng)
                rows.append((r, 1))
                if self.rng.random() < 0.15:  # exact duplicate
                    rows.append((r, 1))
            batch[inp.name] = rows
        return batch

    def _mutate(self, inp: Input, row: Row) -> Row:
        keys = [i for i, c in enumerate(inp.columns) if c.key]
        others = [i for i, c in enumerate(inp.columns) if not c.key]
        if keys and (not others or self.rng.random() < 0.5):
            idx = self.rng.choice(keys)  # update of a join key
        else:
            idx = self.rng.choice(others)
        new = list(row)
        for _ in range(5):
            new[idx] = inp.columns[idx].gen(self.rng)
            if new[idx] != row[idx]:
                break
        return tuple(new)

    def nasty_batch(self, names: Sequence[str]) -> Batch:
        """One batch that surely contains each nasty case for each named input: insert with a NULL in every key
        column, exact duplicate insert, weight +2, delete of an existing row, -2 of a row present twice (after
        the +2), update of a key column (-old +new), update of a non-key column."""
        rng = self.rng
        batch: Batch = {}
        for name in names:
            inp = self.h.inputs[name]
            cur = Counter(inp.rows)
            out: List[Tuple[Row, int]] = []

            def emit(r, w):
                out.append((r, w))
                cur[r] += w
                assert cur[r] >= 0

            keys = [i for i, c in enumerate(inp.columns) if c.key]
            for k in keys:  # NULL join key
                r = list(inp.new_row(rng))
                r[k] = None
                emit(tuple(r), 1)
            live = sorted(cur.elements(), key=repr)
            if live:
                emit(rng.choice(live), 1)  # exact duplicate of an existing row
            big = inp.new_row(rng)
            emit(big, 2)
            live = sorted((+cur).elements(), key=repr)
            emit(rng.choice([r for r in live if r != big]), -1)  # delete (most rows join: small key domains)
            emit(big, -2 if rng.random() < 0.5 else -1)
            for k in keys:  # update of a key column
                live = sorted((+cur).elements(), key=repr)
                old = rng.choice(live)
                new = list(old)
                new[k] = old[k] + 1 if old[k] is not None else 1
                emit(old, -1)
                emit(tuple(new), 1)
            others = [i for i, c in enumerate(inp.columns) if not c.key]
            if others:
                live = sorted((+cur).elements(), key=repr)
                old = rng.choice(live)
                emit(old, -1)
                new = list(old)
                new[others[-1]] = inp.columns[others[-1]].gen(rng)
                emit(tuple(new), 1)
            batch[name] = out
        return batch

    def append_batch(self, names: Sequence[str]) -> Batch:
        """Inserts only, as an append-only source writes them: new rows (one with a NULL in every
        key column), an exact duplicate of an existing row, a new row twice (weight +2)."""
        rng = self.rng
        batch: Batch = {}
        for name in names:
            inp = self.h.inputs[name]
            out: List[Tuple[Row, int]] = [(inp.new_row(rng), 1) for _ in range(3)]
            null_keys = list(inp.new_row(rng))
            for k, column in enumerate(inp.columns):
                if column.key:
                    null_keys[k] = None
            out += [(tuple(null_keys), 1), (inp.new_row(rng), 2)]
            live = sorted(Counter(inp.rows).elements(), key=repr)
            if live:
                out.append((rng.choice(live), 1))
            batch[name] = out
        return batch

    def batch(self, inputs: Optional[Sequence[str]] = None, ops: int = 5) -> Batch:
        rng = self.rng
        names = list(inputs) if inputs is not None else list(self.h.inputs)
        if inputs is None:
            # usually several inputs in one batch; sometimes just one
            k = rng.choice([1, 2, len(names), len(names)])
            names = rng.sample(names, min(k, len(names)))
        batch: Batch = {}
        for name in names:
            inp = self.h.inputs[name]
            cur = Counter(inp.rows)  # contents as the batch proceeds
            out: List[Tuple[Row, int]] = []
            for _ in range(rng.randint(max(1, ops - 2), ops + 2)):
                op = rng.random()
                live = sorted(cur.elements(), key=repr)
                if op < 0.35 or not live:
                    # insert: new row, or a duplicate of an existing row; sometimes weight 2
                    r = rng.choice(live) if live and rng.random() < 0.3 else inp.new_row(rng)
                    w = 2 if rng.random() < 0.15 else 1
                elif op < 0.65:
                    r = rng.choice(live)
                    w = -2 if cur[r] >= 2 and rng.random() < 0.5 else -1
                else:
                    old = rng.choice(live)
                    new = self._mutate(inp, old)
                    out.append((old, -1))
                    cur[old] -= 1
                    r, w = new, 1
                out.append((r, w))
                cur[r] += w
                cur += Counter()  # drop zero/negative entries
            batch[name] = out
        return batch


# ---------------------------------------------------------------------------------------------- models
# A model with this config updates its target and aggregate state in place (a MERGE of whole rows for a result
# that is a set, else a staged DELETE + INSERT; a MERGE for a state) however small they are; the test tables are
# small, so the others take the rewrite path.
KEYED_WRITES = {"ivm_rewrite_max_rows": 0}
# ... and, where no key ranges bound the update, in two passes however small the tables are (the MERGE without its
# insert clause, then an INSERT of the rows the table did not hold), as a large table is
TWO_PASS_WRITES = {"ivm_rewrite_max_rows": 0, "ivm_two_pass_min_rows": 0}


@dataclass
class Model:
    name: str
    template: str  # SQL with {input} / {ref:model} placeholders
    tests: bool = True  # attach ivm_matches_full_refresh
    alias: Optional[str] = None  # config(alias=...): the target table's name
    ivm_config: Dict[str, Any] = field(default_factory=dict)  # more config of the incremental_ivm model
    # the modes a run of the model after its first build may take (a run whose inputs did not
    # change is a noop, always allowed): a model that silently rebuilds fails its suite
    modes: Tuple[str, ...] = ("incremental",)

    @property
    def relation_name(self) -> str:
        return self.alias or self.name

    def render_dbt(self, materialization: str = None) -> str:
        mat = materialization or MATERIALIZATION
        extra = ", file_format='iceberg'" if mat == "table" else ""
        if self.alias:
            extra += f", alias={self.alias!r}"
        if mat == "incremental_ivm":
            extra += "".join(f", {k}={v!r}" for k, v in sorted(self.ivm_config.items()))
        body = re.sub(r"\{ref:(\w+)\}", r"{{ ref('\1') }}", self.template)
        body = re.sub(r"\{(\w+)\}", lambda m: "{{ source('%s', '%s') }}" % (SOURCE_NAME, m.group(1)), body)
        return "{{ config(materialized='%s'%s) }}\n%s\n" % (mat, extra, body)


def mode_problem(model: Model, result) -> Optional[str]:
    """None when a run of ``model`` after its first build (its ``RunResult``) took a mode the model
    expects (``Model.modes``, or noop); else a message with the run's reason."""
    if not IS_IVM:
        return None
    response = getattr(result, "adapter_response", None) or {}
    mode = response.get("mode")
    if mode == "noop" or mode in model.modes or (mode == "full" and response.get("reason") == "first run"):
        return None
    return f"model {model.name}: the run was {mode} ({response.get('reason')}), expected {' or '.join(model.modes)}"


class Oracle:
    def __init__(self, harness: IvmHarness, models: Sequence[Model]):
        self.h = harness
        self.models = {m.name: m for m in models}
        self.seen: Dict[str, Counter] = {}  # each model's target as its last comparison read it

    def sql_for(self, name: str) -> str:
        m = self.models[name]
        body = re.sub(r"\{ref:(\w+)\}", lambda x: "(\n" + self.sql_for(x.group(1)) + "\n)", m.template)
        return re.sub(r"\{(\w+)\}", lambda x: self.h.fq(x.group(1)), body)

    def target(self, name: str) -> str:
        m = self.models.get(name)
        return self.h.fq(m.relation_name if m else name)

    def compare(self, name: str) -> Optional[str]:
        """None when the target equals the full recompute (columns, types, multiset) or, for a
        model ending in ORDER BY … LIMIT, is one of its valid results (``ivm_core.top_k``); else a
        message."""
        q = self.sql_for(name)
        # Iceberg has no 8- or 16-bit integers: any Iceberg table stores TINYINT and SMALLINT
        # (GROUPING's type) as INT
        exp_schema = [(c, "int" if t in ("tinyint", "smallint") else t) for c, t in query_schema(q)]
        act_schema = query_schema(f"SELECT * FROM {self.target(name)}")
        if exp_schema != act_schema:
            return f"model {name}: columns differ\n  expected {exp_schema}\n  actual   {act_schema}"
        top_k = pre_limit_sql(q)
        if top_k is not None:  # ORDER BY … LIMIT: any choice of the rows tied at the limit is right
            pre_limit, written = top_k
            names = [c for c, _ in act_schema]
            wrong = collect(written.resolve(names).violations(self.target(name), pre_limit, names))
            return f"model {name}: not a valid top k: {wrong}" if wrong else None
        # one Spark job for both sides
        both = sql(f"SELECT true AS _exp, * FROM ({q}) UNION ALL SELECT false AS _exp, * FROM {self.target(name)}")
        exp, act = Counter(), Counter()
        for r in both.collect():
            (exp if r[0] else act)[tuple(r)[1:]] += 1
        self.seen[name] = act
        if exp != act:
            return diff_message(f"model {name}", exp, act)
        return None

    def counts_problem(self, name: str, before: Optional[Counter], response: dict) -> Optional[str]:
        """None when an incremental run's ``response`` (its adapter_response) counts the rows the
        target gained and lost since ``before`` (its contents at the last comparison, None:
        unknown) as the last ``compare`` read them; else a message."""
        after = self.seen.get(name)
        if before is None or after is None or response.get("mode") != "incremental":
            return None
        gained, lost = sum((after - before).values()), sum((before - after).values())
        counted = (response.get("rows_inserted"), response.get("rows_deleted"))
        if counted != (gained, lost):
            return (f"model {name}: the run counted +{counted[0]}/-{counted[1]} rows, "
                    f"the target gained {gained} and lost {lost}")
        return None

    def contents(self, name: str) -> Counter:
        return Counter(collect(f"SELECT * FROM {self.target(name)}"))


def diff_message(what: str, expected: Counter, actual: Counter, limit: int = 30) -> str:
    keys = set(expected) | set(actual)
    diffs = sorted(((k, expected.get(k, 0), actual.get(k, 0)) for k in keys if expected.get(k, 0) != actual.get(k, 0)), key=repr)
    lines = [
        f"{what}: differs from full recompute as a multiset "
        f"(expected {sum(expected.values())} rows, got {sum(actual.values())}; {len(diffs)} distinct rows differ)"
    ]
    for k, e, a in diffs[:limit]:
        lines.append(f"  expected x{e}  actual x{a}  {k}")
    if len(diffs) > limit:
        lines.append(f"  ... {len(diffs) - limit} more")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- dbt helpers
def models_files(models: Sequence[Model], with_tests: bool = True) -> Dict[str, str]:
    files = {f"{m.name}.sql": m.render_dbt() for m in models}
    if with_tests:
        lines = ["version: 2", "models:"]
        for m in models:
            lines.append(f"  - name: {m.name}")
            if m.tests and IS_IVM:
                lines += ["    data_tests:", "      - ivm_matches_full_refresh"]
        files["schema.yml"] = "\n".join(lines) + "\n"
    return files


def project_files(schema: str, models: Sequence[Model], inputs: Optional[Dict[str, int]] = None,
                  with_tests: bool = True, base: Optional[str] = None) -> Dict[str, str]:
    """The model files plus a sources.yml declaring the shop inputs (``shop_inputs(inputs)``) in
    ``schema``, each with its change table (and ``base``, see ``sources_yml``)."""
    files = models_files(models, with_tests)
    files["sources.yml"] = IvmHarness(schema, shop_inputs(inputs)).sources_yml(base=base)
    return files


def oracle_suite(schema: str, inputs: Optional[Dict[str, int]], models: Sequence[Model], seed: int):
    """A suite's context, for a class-scoped fixture to ``yield from``: the shop inputs created in
    ``schema`` (``shop_inputs(inputs)``), an ``Oracle`` over ``models`` and a ``BatchGenerator``
    seeded with ``seed`` (``{"h", "oracle", "gen"}``); the models' state schema dropped after."""
    h = IvmHarness(schema, shop_inputs(inputs))
    h.create_inputs()
    try:
        yield {"h": h, "oracle": Oracle(h, models), "gen": BatchGenerator(h, seed)}
    finally:
        drop_schema(state_schema(schema))


def batch_outcomes(schema: str, inputs: Optional[Dict[str, int]], models: Sequence[Model], seed: int, plan,
                   nasty_inputs=("orders", "customers")):
    """For a class-scoped fixture to ``yield from``: ``run_batches`` over the shop inputs
    (``shop_inputs(inputs)``) in ``schema`` with a ``BatchGenerator`` seeded with ``seed``; the
    models' state schema dropped after."""
    h = IvmHarness(schema, shop_inputs(inputs))
    try:
        yield run_batches(h, models, BatchGenerator(h, seed), plan, nasty_inputs)
    finally:
        drop_schema(state_schema(schema))


FIRST_BUILD = "first build"


def run_batches(harness: "IvmHarness", models: Sequence[Model], gen: "BatchGenerator", plan, nasty_inputs=("orders", "customers"),
                after_batch: Optional[Callable[[], None]] = None) -> Dict[str, List[str]]:
    """Create the inputs, load the initial batch, `dbt run`, then for each entry of `plan` (None: random inputs,
    a list: those inputs, "nasty": gen.nasty_batch, "append": gen.append_batch) apply a batch and `dbt run`; after every run compare every
    model with the oracle (and after each batch's run call ``after_batch``).  Returns, per model, the problems
    seen (empty list: always exact)."""
    import time

    from dbt.tests.util import run_dbt

    oracle = Oracle(harness, models)
    problems: Dict[str, List[str]] = {m.name: [] for m in models}

    def run_and_check(label):
        t0 = time.time()
        results = run_dbt(["run"], expect_pass=None)
        print(f"[{label}] dbt run took {time.time() - t0:.1f}s")
        by_name = result_by_name(results)
        for m in models:
            r = by_name.get(m.name)
            if r is None or str(r.status) != "success":
                msg = getattr(r, "message", "not run")
                problems[m.name].append(f"[{label}] dbt run status {getattr(r, 'status', None)}: {msg}")
                continue
            before = oracle.seen.get(m.name)
            diff = oracle.compare(m.name) or oracle.counts_problem(m.name, before, r.adapter_response)
            if label != FIRST_BUILD:
                diff = diff or mode_problem(m, r)
            if diff:
                problems[m.name].append(f"[{label}] {diff}")

    harness.create_inputs()
    harness.apply(gen.initial())
    harness.check_bases()
    run_and_check(FIRST_BUILD)
    for i, inputs in enumerate(plan, start=1):
        if inputs == "nasty":
            harness.apply(gen.nasty_batch(list(nasty_inputs)))
        elif inputs == "append":
            harness.apply(gen.append_batch(list(nasty_inputs)))
        else:
            harness.apply(gen.batch(inputs))
        run_and_check(f"batch {i} (seq {harness.seq})")
        if after_batch is not None:
            after_batch()
    return problems


def shop_harness(schema: str, inputs: Dict[str, int]) -> "IvmHarness":
    """The shop inputs (``shop_inputs(inputs)``) created in ``schema``, empty."""
    h = IvmHarness(schema, shop_inputs(inputs))
    h.create_inputs()
    return h


def built_and_checked(h: "IvmHarness", model: "Model") -> "Oracle":
    """``model`` built by ``dbt run`` over the harness's inputs, and equal to its oracle."""
    from dbt.tests.util import run_dbt

    run_dbt(["run"])
    oracle = Oracle(h, [model])
    assert oracle.compare(model.name) is None
    return oracle


def run_and_compare(oracle: "Oracle", names: Sequence[str], args=("run",), label: str = "",
                    rebuilds: Sequence[str] = ()):
    """``dbt <args>``; every model in ``names`` must succeed, equal its full recompute, and take a
    mode it expects (``Model.modes``) — but the models in ``rebuilds`` (this run is to rebuild
    them: the test checks why) and a ``--full-refresh``."""
    from dbt.tests.util import run_dbt

    results = run_dbt(list(args), expect_pass=None)
    by_name = result_by_name(results)
    problems = []
    for n in names:
        r = by_name.get(n)
        if r is None or str(r.status) != "success":
            problems.append(f"{n}: dbt {args} status {getattr(r, 'status', None)}: {getattr(r, 'message', '')}")
            continue
        diff = oracle.compare(n)
        if diff is None and n in oracle.models and n not in rebuilds and "--full-refresh" not in args:
            diff = mode_problem(oracle.models[n], r)
        if diff:
            problems.append(diff)
    if problems:
        h = oracle.h
        problems.append(f"after {label} (seq {h.seq}); last batch: {h.history[-1] if h.history else None}")
    assert not problems, "\n".join(problems)
    return results


def result_by_name(results) -> Dict[str, object]:
    return {r.node.name: r for r in results}


def run_results(project_root) -> dict:
    with open(os.path.join(project_root, "target", "run_results.json")) as f:
        return json.load(f)


def adapter_response(project_root, model: str) -> dict:
    for r in run_results(project_root)["results"]:
        if r["unique_id"].split(".")[-1] == model:
            return r.get("adapter_response") or {}
    raise AssertionError(f"{model} not in run_results.json")


def state_schema(schema: str) -> str:
    return f"{schema}_ivm"


def list_tables(schema: str) -> List[str]:
    try:
        rows = sql(f"SHOW TABLES IN {schema}").collect()
    except Exception:  # schema does not exist
        return []
    return sorted(r["tableName"] for r in rows if not r["isTemporary"])


def table_fingerprint(fq_table: str):
    """The current Iceberg snapshot id of a table (main ref); for non-Iceberg tables, its contents."""
    try:
        rows = collect(f"SELECT snapshot_id FROM {fq_table}.refs WHERE name = 'main'")
        return ("snapshot", rows[0][0] if rows else None)
    except Exception:
        return ("contents", tuple(sorted(Counter(collect(f"SELECT * FROM {fq_table}")).items(), key=repr)))


def list_views(schema: str) -> List[str]:
    try:
        return sorted(r["viewName"] for r in sql(f"SHOW VIEWS IN {schema}").collect())
    except Exception:
        return []


def fingerprint_schemas(schemas: Sequence[str]) -> Dict[str, object]:
    """Fingerprint of every table (not view) of the schemas, except the materialization's lock tables
    (`<model>__lock`: taking the lock is a write even for a run that then fails and changes nothing)."""
    fp = {}
    for s in schemas:
        views = set(list_views(s))
        for t in list_tables(s):
            if t in views or t.endswith("__lock"):
                continue
            fp[f"{s}.{t}"] = table_fingerprint(f"{s}.{t}")
    return fp


def drop_schema(schema: str):
    try:
        sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    except Exception:
        pass


# ---------------------------------------------------------------------------------------------- a small shop
def shop_inputs(sizes: Optional[Dict[str, int]] = None) -> List[Input]:
    """Fresh input definitions (small key domains: lots of join matches and duplicates)."""
    notes = ["fragile", "O'Brien", "", "gift wrap", "x\\y"]
    sizes = sizes or {}

    def orders_cols():
        return [
            Column("o_id", "INT", int_gen(1, 40)),
            Column("c_id", "INT", int_gen(1, 8, null_p=0.15), key=True),
            Column("p_id", "INT", int_gen(1, 5, null_p=0.1), key=True),
            Column("amount", "DECIMAL(10,2)", decimal_gen(1, 120, null_p=0.1)),
            Column("status", "STRING", choice_gen(["open", "shipped", "cancelled"], null_p=0.1)),
            Column("odate", "DATE", date_gen(null_p=0.05)),
            Column("note", "STRING", choice_gen(notes, null_p=0.3)),
        ]

    all_inputs = [
        Input(
            "customers",
            [
                Column("c_id", "INT", int_gen(1, 8, null_p=0.1), key=True),
                Column("name", "STRING", choice_gen(["ann", "bob", "cy", "dee", "eve"])),
                Column("region_id", "INT", int_gen(1, 3, null_p=0.1), key=True),
                Column("credit_limit", "DECIMAL(10,2)", decimal_gen(10, 100, null_p=0.1)),
                Column("tier", "STRING", choice_gen(["gold", "silver"], null_p=0.2)),
            ],
            initial_rows=10,
        ),
        Input("orders", orders_cols(), initial_rows=20),
        Input(
            "products",
            [
                Column("p_id", "INT", int_gen(1, 5, null_p=0.05), key=True),
                Column("pname", "STRING", choice_gen(["pen", "ink", "pad", "cup"])),
                Column("price", "DECIMAL(10,2)", decimal_gen(1, 30, null_p=0.1)),
                Column("category", "STRING", choice_gen(["office", "kitchen"], null_p=0.1)),
            ],
            initial_rows=6,
        ),
        Input(
            "regions",
            [
                Column("region_id", "INT", int_gen(1, 3, null_p=0.1), key=True),
                Column("rname", "STRING", choice_gen(["north", "south", "east"])),
            ],
            initial_rows=4,
        ),
        Input("archived_orders", orders_cols(), initial_rows=8),
    ]
    return [i for i in all_inputs if not sizes or i.name in sizes]
