"""Hostile names end to end (SPEC §7: names are never spliced into SQL unquoted).

Source tables, change tables and model aliases that are reserved words, columns named with reserved words,
spaces, single and double quotes, a backquote, a dot and a name the analyzer also uses internally (``c1``),
output columns with such names, and string VALUES with quotes, backslashes, backquotes, newlines and
``--``: every model must equal the full recompute (as a multiset, names and types included) after the first
build and after every random change batch, and ``ivm_matches_full_refresh`` and ``ivm_check`` must pass.
Models: a join + GROUP BY with SUM/MAX/COUNT DISTINCT/COUNT(*)/HAVING, a join + filter with ``o.*``, a model that
is not incremental (a window over all rows: recomputed from the SQL as written, string escapes included)
and a chain reading a model whose alias is a reserved word.

Spark's strict keywords (``join``, ``left``, ``on``, ``union``, ...) cannot even be an unquoted alias; a table
named ``join`` is tested separately (``TestIvmStrictKeywordTable``, a known bug for now).

What the catalog (Spark 3.5 + Iceberg 1.10 over the Hive/Derby metastore) refuses, so it is not tested:
table and schema names may only hold letters, digits and ``_`` — ``my orders``, ``it's``, ``a`b``,
``dq"x``, ``dot.ted``, ``semi;colon`` are rejected at CREATE ("Invalid Hive object" /
"not a valid name for tables/databases"); upper-case table names are stored lower-cased.  Column names
accept anything (spaces, quotes, backquotes, dots, backslashes, ``;``, ``,``), and reserved words are
accepted everywhere (``order``, ``from``, ``table``, ``where``, ``group``, ``select``).
"""

import pytest
from dbt.tests.util import run_dbt

from .harness import (
    IS_IVM,
    BatchGenerator,
    Column,
    Input,
    IvmHarness,
    Model,
    Oracle,
    adapter_response,
    choice_gen,
    decimal_gen,
    drop_schema,
    int_gen,
    list_tables,
    models_files,
    result_by_name,
    run_and_compare,
    state_schema,
)

# String values that break naive literal splicing.
NASTY_VALUES = [
    "O'Brien",
    'say "hi"',
    "back\\slash",
    "trailing\\",
    "tick`s",
    "semi;colon -- not a comment",
    "line\nbreak",
    "{{ not jinja }}",
    "",
    "ünï",
]


def names_inputs():
    return [
        Input(
            "order",  # reserved word
            [
                Column("select", "INT", int_gen(1, 5, null_p=0.1), key=True),
                Column("group", "INT", int_gen(1, 3, null_p=0.1)),
                Column("my col", "STRING", choice_gen(NASTY_VALUES, null_p=0.1)),
                Column("it's", "DECIMAL(10,2)", decimal_gen(1, 50, null_p=0.1)),
                Column("a`b", "INT", int_gen(-5, 20, null_p=0.1)),
                Column("dot.ted", "INT", int_gen(1, 4, null_p=0.1)),
                Column('say "q"', "STRING", choice_gen(["x", "O'Brien", "back\\slash"], null_p=0.2)),
            ],
            initial_rows=14,
            changes_name="from",  # reserved word
        ),
        Input(
            "table",  # reserved word
            [
                Column("select", "INT", int_gen(1, 5, null_p=0.1), key=True),
                Column("Mixed Case", "STRING", choice_gen(["x", "y", "it's"], null_p=0.1)),
                Column("c1", "INT", int_gen(0, 3, null_p=0.1)),  # the analyzer's own internal names are c0, c1, ...
                Column("n", "BIGINT", int_gen(0, 9)),
            ],
            initial_rows=8,
            changes_name="where",  # reserved word
        ),
    ]


MODELS = [
    # join + GROUP BY + SUM, MAX, COUNT DISTINCT, COUNT(*) and a HAVING, over hostile names (referenced in another
    # letter case than declared, as Spark allows); alias reserved word; output columns `n` and `select`
    Model(
        "names_agg",
        r"""
select t.`Mixed Case` as `Mixed Case`, o.`group` as `group`,
       sum(o.`a``b`) as `sum a``b`,
       max(o.`MY COL`) as `max "my col"`,
       count(distinct o.`dot.ted`) as `count distinct`,
       sum(o.`it's`) as `it's sum`,
       count(*) as n,
       sum(t.n) as `select`
from {order} o
join {table} t on o.`select` = t.`select`
where o.`my col` <> 'O\'Brien' or o.`my col` is null
group by t.`MIXED CASE`, o.`group`
having count(*) > 0
""",
        alias="group",
    ),
    # plain join + filter with SELECT o.* (star expansion over hostile names), literals with quotes/backslashes
    Model(
        "names_join",
        r"""
select o.*, t.`Mixed Case`, t.c1, t.n,
       concat(o.`my col`, '\'', "\"", '\\', 'tab\there', '\u00e9', "it's") as `my col quoted`
from {order} o
join {table} t on o.`select` = t.`select` and (o.`group` <> t.c1 or t.c1 is null)
where o.`my col` is null or o.`my col` not in ('back\\slash', 'say "hi"')
""",
        alias="select",
    ),
    # not incremental (a window over all rows): recomputed in full every run from the SQL as written, string
    # literals' escapes included
    Model(
        "names_window",
        r"""
select o.`my col`, o.`group`, max(o.`a``b`) over () as `max a``b`,
       concat(coalesce(o.`my col`, 'NULL'), '\'', "\"", '\\', 'tab\there', '\u00e9', "it's") as `lit "x"`
from {order} o
where o.`my col` is null or o.`my col` not in ('back\\slash', 'O\'Brien', 'say "hi"', 'line\nbreak')
""",
        modes=("full",),
    ),
    # a chain: reads the model aliased `select`
    Model(
        "names_chain",
        r"""
select j.`my col`, j.`a``b` * 2 as `twice a``b`, j.`dot.ted`, j.`Mixed Case`
from {ref:names_join} j
where j.`it's` is null or j.`it's` > 5
""",
    ),
]
NAMES = [m.name for m in MODELS]


def _run_and_compare(oracle, label, args=("run",)):
    run_and_compare(oracle, NAMES, args, label)


@pytest.mark.skipif(not IS_IVM, reason="hostile names are a property of the incremental_ivm materialization")
class TestIvmHostileNames:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        files = models_files(MODELS)
        files["sources.yml"] = IvmHarness(unique_schema, names_inputs()).sources_yml(quote_identifiers=True)
        return files

    @pytest.fixture(scope="class")
    def project_config_update(self):
        # `ref('names_join')` renders its alias `select`: dbt must quote model identifiers too
        return {"quoting": {"identifier": True}}

    @pytest.fixture(scope="class")
    def ctx(self, project):
        h = IvmHarness(project.test_schema, names_inputs())
        h.create_inputs()
        ctx = {"h": h, "oracle": Oracle(h, MODELS), "gen": BatchGenerator(h, 20240611)}
        yield ctx
        drop_schema(state_schema(project.test_schema))

    def test_first_build(self, project, ctx):
        h = ctx["h"]
        h.apply(ctx["gen"].initial())
        h.check_bases()
        _run_and_compare(ctx["oracle"], "first build")
        tables = list_tables(project.test_schema)
        for relation in ("group", "select", "names_chain", "order", "table", "from", "where"):
            assert relation in tables, f"{relation} missing from {tables}"
        assert "group__changes" in list_tables(state_schema(project.test_schema))

    def test_batches(self, project, ctx):
        h, gen = ctx["h"], ctx["gen"]
        h.apply(gen.nasty_batch(["order", "table"]))
        _run_and_compare(ctx["oracle"], "nasty batch")
        for n in NAMES:
            expected = "full" if n == "names_window" else "incremental"
            assert adapter_response(project.project_root, n).get("mode") == expected, n
        h.apply(gen.batch(["order", "table"], ops=6))
        _run_and_compare(ctx["oracle"], "random batch")
        h.check_bases()

    def test_ivm_matches_full_refresh(self, project, ctx):
        results = run_dbt(["test"], expect_pass=None)
        failed = [f"{r.node.name}: {r.status} {r.message}" for r in results if str(r.status) != "pass"]
        assert len(results) == len(NAMES) and not failed, "\n".join(failed)

    def test_ivm_check_and_explain(self, project, ctx):
        for n in NAMES:
            if n != "names_window":  # recomputed in full: no state
                run_dbt(["run-operation", "ivm_check", "--args", "{model: %s}" % n])
        run_dbt(["run-operation", "ivm_explain", "--args", "{model: names_agg}"])

    def test_full_refresh(self, project, ctx):
        """A rebuild over existing state publishes the difference (diff_into_changes) with these names too."""
        _run_and_compare(ctx["oracle"], "--full-refresh", ("run", "--full-refresh"))


# Spark's strict keywords (JOIN, LEFT, ON, UNION, ...) cannot be an unquoted alias. A source table named `join`
# read without an alias makes the rebuild substitute `(<its contents>) AS join` for it.
JOIN_INPUT = Input(
    "join",
    [Column("on", "INT", int_gen(1, 3), key=True), Column("left", "STRING", choice_gen(["a", "b'c"]))],
    initial_rows=5,
    changes_name="union",
)
JOIN_MODEL = Model(
    "names_strict_keyword",
    """
select `join`.`on`, `join`.`left`, count(*) as n
from {join}
group by `join`.`on`, `join`.`left`
""",
)


@pytest.mark.skipif(not IS_IVM, reason="hostile names are a property of the incremental_ivm materialization")
class TestIvmStrictKeywordTable:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        files = models_files([JOIN_MODEL], with_tests=False)
        files["sources.yml"] = IvmHarness(unique_schema, [JOIN_INPUT]).sources_yml(quote_identifiers=True)
        return files

    def test_table_named_join(self, project):
        h = IvmHarness(project.test_schema, [JOIN_INPUT])
        h.create_inputs()
        gen = BatchGenerator(h, 5)
        oracle = Oracle(h, [JOIN_MODEL])
        try:
            h.apply(gen.initial())
            for label in ("first build", "a batch"):
                results = result_by_name(run_dbt(["run"], expect_pass=None))
                r = results[JOIN_MODEL.name]
                assert str(r.status) == "success", f"{label}: {r.message}"
                diff = oracle.compare(JOIN_MODEL.name)
                assert diff is None, f"{label}: {diff}"
                h.apply(gen.batch(["join"], ops=3))
        finally:
            drop_schema(state_schema(project.test_schema))
