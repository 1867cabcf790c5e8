"""dbt's conventions on incremental_ivm, each through real dbt commands on embedded Spark + Iceberg.

One project, built once; the tests run in order, each on the state the previous one left:

1. a build: pre/post hooks run once each, in order (an audit table they insert into);
   ``persist_docs`` puts the descriptions on the target without making a snapshot; ``grants``
   on the embedded session are not applied, with a warning naming the relation (Spark SQL
   refuses GRANT), and the run passes (an incremental_ivm model and a ``table`` model);
2. ``dbt show`` returns the model's rows and writes nothing (every Iceberg snapshot, the audit
   table included, as before); the next ``dbt run`` is incremental, runs the hooks again, issues
   no statement for a comment that is already there, and ``dbt test``
   (``ivm_matches_full_refresh``) passes;
3. ``dbt run --empty`` builds empty targets with the same columns and types, also under
   ``ivm_policy: incremental``; the next ``dbt run`` rebuilds (the SQL changed) and is exact;
4. a run that fails after publishing its change, then ``dbt retry``: the failed model and the
   one it skipped run, incrementally, and end exact;
5. ``--select state:modified`` after changing one model's SQL runs only that model: a rebuild
   for the SQL change, with the new column (``on_schema_change`` unset: ``ignore``); the others'
   tables keep their snapshots;
6. ``on_schema_change: fail``: a SELECT whose columns differ (one added, one removed, one of
   another type) fails naming the model and each difference, and no table moves;
7. ``--defer``: a model built alone in a "dev" schema (``--vars '{dev: true}'``: the project's
   ``generate_schema_name`` appends ``_dev``) whose upstream incremental_ivm model exists only in
   the ``--state`` environment reads that model's target (dbt's ``ref`` does) through its Iceberg
   snapshots: built, then incremental after the upstream changes there, exact both times, and
   nothing of the state environment written;
8. ``tblproperties`` reach the target when it is built: setting them rebuilds the model (the
   reason says so) with each property on its target, quotes included, and the
   model's value where the adapter sets the property too; the next run is incremental and keeps
   them; ``partition_by`` is not taken, and the run says so;
9. dbt's unit tests (``unit_tests:``) run on an incremental_ivm model as on any model: its SQL
   over the given rows of its ``ref`` (another incremental_ivm model), compared with the expected
   rows — a right expectation passes, a wrong one fails showing the difference;
10. a model switched to ``materialized='view'`` and back: the view takes the target's name, and
    the next incremental_ivm run drops it and rebuilds the target; the model that reads its
    changes rebuilds too (the dropped target's rows are gone, so no difference is published, and
    the reason says so), both exact, and the next run is incremental again;
11. ``dbt clone`` into a "dev" schema makes a view of each model's relation in the --state
    environment (Iceberg has no zero-copy clone in Spark SQL; dbt-spark's clone refused every
    format but delta), reading what it reads there; a ``dbt run`` in dev then replaces each view
    with its incremental_ivm build, exact, and the next run after a change is incremental.
"""

import os
import shutil
from collections import Counter

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from .harness import (
    IS_IVM,
    Model,
    Oracle,
    collect,
    fingerprint_schemas,
    oracle_suite,
    project_files,
    query_schema,
    result_by_name,
    sql,
    state_schema,
)

pytestmark = pytest.mark.skipif(not IS_IVM, reason="dbt conventions on the incremental_ivm materialization")

AUDIT_PRE = ("insert into {{ this.schema }}.audit "
             "select 'pre', count(*), cast(null as bigint) from {{ this.schema }}.audit")
AUDIT_POST = ("insert into {{ this.schema }}.audit "
              "select 'post', (select count(*) from {{ this.schema }}.audit), count(*) from {{ this }}")
TOTALS_SQL = """
select c_id, count(*) as n, sum(amount) as total
from {orders}
group by c_id
"""
OPEN_SQL = """
select o_id, c_id, amount
from {orders}
where status = 'open'
"""
TOTALS = Model("totals", TOTALS_SQL, ivm_config={"pre_hook": AUDIT_PRE, "post_hook": AUDIT_POST})
BIG = Model("big_customers", "select c_id, total from {ref:totals} where n >= 2")
OPEN = Model("open_orders", OPEN_SQL, ivm_config={"ivm_policy": "incremental", "on_schema_change": "fail"})
MODELS = [TOTALS, BIG, OPEN]
IVM_NAMES = [m.name for m in MODELS]
INPUTS = {"orders": 0}
FAULT_ENV = "DBT_SPARK_IVM_FAULT"

TOTALS_DOC = "Orders per customer: it's kept by IVM, \\o/"
C_ID_DOC = "the customer's id"
TOTAL_DOC = "sum of amount (a\\b)"
SCHEMA_YML = """
version: 2
models:
  - name: totals
    description: 'Orders per customer: it''s kept by IVM, \\o/'
    config:
      persist_docs: {relation: true, columns: true}
      grants: {select: ['reporter']}
    columns:
      - name: c_id
        description: 'the customer''s id'
      - name: total
        description: 'sum of amount (a\\b)'
    data_tests: [ivm_matches_full_refresh]
  - name: big_customers
    data_tests: [ivm_matches_full_refresh]
  - name: open_orders
    data_tests: [ivm_matches_full_refresh]
  - name: plain
    config:
      grants: {select: ['reporter']}
"""


def unit_tests_yml(name: str, expected_total: str) -> str:
    """A dbt unit test of ``big_customers`` over given rows of ``totals``."""
    return f"""
unit_tests:
  - name: {name}
    model: big_customers
    given:
      - input: ref('totals')
        rows:
          - {{c_id: 1, n: 2, total: 9.50}}
          - {{c_id: 2, n: 1, total: 3.00}}
          - {{c_id: 3, n: 5, total: null}}
    expect:
      rows:
        - {{c_id: 1, total: {expected_total}}}
        - {{c_id: 3, total: null}}
"""


def views_in(schema: str, like: str = "*") -> list:
    """The (permanent) views of ``schema``: SHOW VIEWS lists the session's temporary views too."""
    return sorted(r[1] for r in collect(f"SHOW VIEWS IN {schema} LIKE '{like}'") if not r[2])


def modes(results) -> dict:
    return {r.node.name: (r.adapter_response or {}).get("mode") for r in results}


def audit_rows(schema: str) -> list:
    return sorted(collect(f"SELECT event, pos, target_rows FROM {schema}.audit"), key=lambda r: r[1])


def comments(project, relation: str) -> tuple:
    """(table comment, {column: comment}) of a relation, read through the adapter."""
    rows = project.run_sql(f"describe table extended {relation}", fetch="all")
    columns, table, in_columns = {}, None, True
    for name, value, comment in rows:
        if in_columns and (not name or name.startswith("#")):
            in_columns = False
        elif in_columns:
            columns[name] = comment
        elif name == "Comment":
            table = value
    return table, columns


def untouched_by_totals(fingerprints: dict) -> dict:
    """The fingerprints of the tables a run of ``totals`` alone must not write: every table but
    its target, its state and the audit table its hooks insert into."""
    return {t: v for t, v in fingerprints.items()
            if t.split(".", 1)[1] not in ("totals", "audit") and not t.split(".", 1)[1].startswith("totals__")}


@pytest.mark.usefixtures("project")
class TestDbtConventions:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        files = project_files(unique_schema, MODELS, INPUTS, with_tests=False)
        files["plain.sql"] = "{{ config(materialized='table') }}\nselect 1 as one\n"
        files["schema.yml"] = SCHEMA_YML
        files["unit_tests.yml"] = unit_tests_yml("big_customers_keeps_two_orders_or_more", "9.50")
        return files

    @pytest.fixture(scope="class")
    def macros(self):
        return {"schema_name.sql": (
            "{% macro generate_schema_name(custom_schema_name, node) -%}\n"
            "{{ target.schema }}{{ '_dev' if var('dev', false) else '' }}\n"
            "{%- endmacro %}\n")}

    @pytest.fixture(scope="class")
    def ctx(self, project):
        for ctx in oracle_suite(project.test_schema, INPUTS, MODELS, 14):  # one context, then its teardown
            sql(f"CREATE TABLE {ctx['h'].fq('audit')} (event STRING, pos BIGINT, target_rows BIGINT) USING iceberg")
            yield ctx

    def assert_exact(self, oracle, names=IVM_NAMES):
        problems = [d for d in (oracle.compare(n) for n in names) if d]
        assert not problems, "\n".join(problems)

    def test_1_build_runs_hooks_persists_docs_and_warns_about_grants(self, project, ctx):
        h = ctx["h"]
        h.apply(ctx["gen"].initial())
        results, log = run_dbt_and_capture(["run"])
        assert set(modes(results).values()) == {"full", None}, modes(results)  # `plain` is a table
        self.assert_exact(ctx["oracle"])

        totals_rows = len(collect(f"SELECT * FROM {h.fq('totals')}"))
        assert audit_rows(h.schema) == [("pre", 0, None), ("post", 1, totals_rows)]

        table, columns = comments(project, h.fq("totals"))
        assert table == TOTALS_DOC
        assert columns == {"c_id": C_ID_DOC, "n": None, "total": TOTAL_DOC}
        # the comments, set after the run's commit, made no snapshot: the target is at the one it recorded
        committed = collect(f"SELECT target_snapshot FROM {state_schema(h.schema)}.totals__log "
                            "WHERE status = 'committed' ORDER BY seq DESC LIMIT 1")
        assert committed == collect(f"SELECT snapshot_id FROM {h.fq('totals')}.refs WHERE name = 'main'")

        for relation in ("totals", "plain"):
            warning = f"grants {{'select': ['reporter']}} of {h.schema}.{relation} were not applied"
            assert warning in log, log

    def test_2_show_writes_nothing_and_the_next_run_is_incremental_and_exact(self, project, ctx):
        h, oracle = ctx["h"], ctx["oracle"]
        h.apply(ctx["gen"].batch(["orders"]))
        schemas = [h.schema, state_schema(h.schema)]
        before = fingerprint_schemas(schemas)
        shown = run_dbt(["show", "--select", "totals", "--limit", "-1"])
        assert fingerprint_schemas(schemas) == before  # the audit table too: show runs no hook
        assert Counter(tuple(r) for r in shown.results[0].agate_table.rows) == Counter(
            collect(oracle.sql_for("totals"))
        )

        results, log = run_dbt_and_capture(["--debug", "run"])  # --debug: every statement in the log
        assert modes(results)["totals"] == "incremental", modes(results)
        self.assert_exact(oracle)
        totals_rows = len(collect(f"SELECT * FROM {h.fq('totals')}"))
        assert [r[0] for r in audit_rows(h.schema)] == ["pre", "post", "pre", "post"]
        assert audit_rows(h.schema)[2:] == [("pre", 2, None), ("post", 3, totals_rows)]
        assert comments(project, h.fq("totals"))[0] == TOTALS_DOC
        # the comments were there: persist_docs read them and set none again
        assert f"comment on table {h.schema}.totals" not in log
        assert f"alter table {h.schema}.totals alter column" not in log
        run_dbt(["test"])

    def test_3_empty_builds_empty_targets_then_a_normal_run_rebuilds_exactly(self, project, ctx):
        h, oracle = ctx["h"], ctx["oracle"]
        shapes = {n: query_schema(f"SELECT * FROM {h.fq(n)}") for n in IVM_NAMES}
        results = run_dbt(["run", "--empty"])
        assert {n: modes(results)[n] for n in IVM_NAMES} == {n: "full" for n in IVM_NAMES}
        for n in IVM_NAMES:
            assert collect(f"SELECT count(*) FROM {h.fq(n)}") == [(0,)], n
            assert query_schema(f"SELECT * FROM {h.fq(n)}") == shapes[n], n

        results = run_dbt(["run"])
        for n in IVM_NAMES:
            response = result_by_name(results)[n].adapter_response
            assert (response["mode"], response["reason"]) == ("full", "the model SQL changed"), (n, response)
        self.assert_exact(oracle)

    def test_4_retry_after_a_failure_ends_exact(self, project, ctx):
        h, oracle = ctx["h"], ctx["oracle"]
        h.apply(ctx["gen"].batch(["orders"]))
        os.environ[FAULT_ENV] = "totals:after_publish"
        try:
            results = run_dbt(["run"], expect_pass=False)
        finally:
            del os.environ[FAULT_ENV]
        status = {r.node.name: str(r.status) for r in results}
        assert (status["totals"], status["big_customers"], status["open_orders"]) == ("error", "skipped", "success")
        assert "injected failure" in str(result_by_name(results)["totals"].message)

        results = run_dbt(["retry"])
        assert modes(results) == {"totals": "incremental", "big_customers": "incremental"}
        self.assert_exact(oracle)
        run_dbt(["test"])

    def test_5_state_modified_runs_only_the_changed_model(self, project, ctx):
        h = ctx["h"]
        state_dir = os.path.join(project.project_root, "state")
        shutil.copytree(os.path.join(project.project_root, "target"), state_dir)
        schemas = [h.schema, state_schema(h.schema)]
        before = untouched_by_totals(fingerprint_schemas(schemas))

        changed = Model("totals", TOTALS_SQL.replace("as total", "as total, max(amount) as biggest"),
                        ivm_config=TOTALS.ivm_config)
        write_file(changed.render_dbt(), project.project_root, "models", "totals.sql")
        results = run_dbt(["run", "--select", "state:modified", "--state", state_dir])
        assert [r.node.name for r in results] == ["totals"]
        response = results[0].adapter_response
        assert (response["mode"], response["reason"]) == ("full", "the model SQL changed"), response
        assert "biggest" in [c for c, _ in query_schema(f"SELECT * FROM {h.fq('totals')}")]
        self.assert_exact(Oracle(h, [changed]), ["totals"])

        assert untouched_by_totals(fingerprint_schemas(schemas)) == before

    def test_6_on_schema_change_fail_stops_before_anything_is_written(self, project, ctx):
        h = ctx["h"]
        schemas = [h.schema, state_schema(h.schema)]
        before = fingerprint_schemas(schemas)
        changed = Model("open_orders", OPEN_SQL.replace(
            "select o_id, c_id, amount", "select c_id, cast(amount as double) as amount, amount * 2 as doubled"
        ), ivm_config=OPEN.ivm_config)
        write_file(changed.render_dbt(), project.project_root, "models", "open_orders.sql")
        results = run_dbt(["run", "--select", "open_orders"], expect_pass=False)
        message = str(results[0].message)
        new_types = dict(query_schema(Oracle(h, [changed]).sql_for("open_orders")))
        assert new_types["amount"] == "double"
        for part in ("open_orders", "on_schema_change 'fail'", "removed o_id int", "amount decimal(10,2) -> double",
                     f"added doubled {new_types['doubled']}", "Nothing was written"):
            assert part in message, message
        assert fingerprint_schemas(schemas) == before
        self.assert_exact(ctx["oracle"], ["open_orders"])  # the previous SELECT's rows, still exact

    def test_7_defer_reads_the_upstream_where_ref_reads_it(self, project, ctx):
        h = ctx["h"]
        dev = f"{h.schema}_dev"
        state_dir = os.path.join(project.project_root, "state_for_defer")
        run_dbt(["run", "--select", "totals", "big_customers"])
        shutil.copytree(os.path.join(project.project_root, "target"), state_dir)
        expected = f"SELECT c_id, total FROM {h.fq('totals')} WHERE n >= 2"
        dev_run = ["run", "--select", "big_customers", "--defer", "--state", state_dir, "--vars", "{dev: true}"]
        try:
            results = run_dbt(dev_run)
            assert modes(results) == {"big_customers": "full"}
            assert Counter(collect(f"SELECT * FROM {dev}.big_customers")) == Counter(collect(expected))

            h.apply(ctx["gen"].batch(["orders"], ops=8))
            assert modes(run_dbt(["run", "--select", "totals"])) == {"totals": "incremental"}
            before = fingerprint_schemas([h.schema, state_schema(h.schema)])
            results = run_dbt(dev_run)
            assert modes(results) == {"big_customers": "incremental"}
            assert Counter(collect(f"SELECT * FROM {dev}.big_customers")) == Counter(collect(expected))
            assert fingerprint_schemas([h.schema, state_schema(h.schema)]) == before
        finally:
            for schema in (state_schema(dev), dev):
                sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    def test_8_tblproperties_reach_the_target_and_partition_by_is_named_as_ignored(self, project, ctx):
        h, oracle = ctx["h"], ctx["oracle"]
        properties = {"write.parquet.compression-codec": "snappy", "write.merge.mode": "copy-on-write",
                      "ivm.test.owner": "o'hara's team"}
        changed = Model("big_customers", BIG.template,
                        ivm_config={"tblproperties": properties, "partition_by": ["c_id"]})
        write_file(changed.render_dbt(), project.project_root, "models", "big_customers.sql")
        results, log = run_dbt_and_capture(["run", "--select", "big_customers"])
        response = results[0].adapter_response
        assert (response["mode"], response["reason"]) == ("full", "the target's tblproperties changed"), response
        assert "incremental_ivm model 'big_customers': its target does not take partition_by=['c_id']" in log, log
        shown = dict(collect(f"SHOW TBLPROPERTIES {h.fq('big_customers')}"))
        for key, value in properties.items():
            assert shown.get(key) == value, (key, shown)
        assert shown.get("write.delete.mode") == "merge-on-read"  # the adapter's own, where not given
        self.assert_exact(oracle, ["big_customers"])

        h.apply(ctx["gen"].batch(["orders"]))
        results = run_dbt(["run", "--select", "totals", "big_customers"])
        assert modes(results) == {"totals": "incremental", "big_customers": "incremental"}
        assert dict(collect(f"SHOW TBLPROPERTIES {h.fq('big_customers')}"))["ivm.test.owner"] == "o'hara's team"
        self.assert_exact(oracle, ["big_customers"])  # (totals' SQL is test 5's now)

    def test_9_dbt_unit_tests_run_the_models_sql_over_given_rows(self, project, ctx):
        results = run_dbt(["test", "--select", "test_type:unit"])
        assert [(r.node.name, str(r.status)) for r in results] == [("big_customers_keeps_two_orders_or_more", "pass")]

        write_file(unit_tests_yml("a_wrong_expectation", "9.40"), project.project_root, "models", "wrong_unit.yml")
        try:
            results, log = run_dbt_and_capture(["test", "--select", "test_name:a_wrong_expectation"],
                                               expect_pass=False)
            assert [(r.node.name, str(r.status)) for r in results] == [("a_wrong_expectation", "fail")]
            assert "differs from" in log and "9.4" in log, log  # dbt colours "actual" and "expected"
        finally:
            os.remove(os.path.join(project.project_root, "models", "wrong_unit.yml"))

    def test_10_a_model_switched_to_a_view_and_back_rebuilds_with_its_reader(self, project, ctx):
        h = ctx["h"]
        path = os.path.join(project.project_root, "models", "totals.sql")
        with open(path) as f:
            as_ivm = f.read()  # test 5's SQL
        write_file(as_ivm.replace("materialized='incremental_ivm'", "materialized='view'"), path)
        run_dbt(["run", "--select", "totals"])
        assert views_in(h.schema, "totals") == ["totals"]

        write_file(as_ivm, path)
        h.apply(ctx["gen"].batch(["orders"]))
        results = run_dbt(["run", "--select", "totals", "big_customers"])
        response = {r.node.name: r.adapter_response for r in results}
        assert response["totals"]["mode"] == "full", response
        assert response["big_customers"]["mode"] == "full", response
        assert "not publishable: its target had been dropped" in response["big_customers"]["reason"], response
        assert views_in(h.schema, "totals") == []
        changed = Model("totals", TOTALS_SQL.replace("as total", "as total, max(amount) as biggest"))
        self.assert_exact(Oracle(h, [changed, BIG]), ["totals", "big_customers"])

        h.apply(ctx["gen"].batch(["orders"]))
        assert modes(run_dbt(["run", "--select", "totals", "big_customers"])) == {
            "totals": "incremental", "big_customers": "incremental"}
        self.assert_exact(Oracle(h, [changed, BIG]), ["totals", "big_customers"])

    def test_11_clone_makes_views_that_a_run_replaces_with_builds(self, project, ctx):
        h = ctx["h"]
        dev = f"{h.schema}_dev"
        state_dir = os.path.join(project.project_root, "state_for_clone")
        shutil.copytree(os.path.join(project.project_root, "target"), state_dir)
        in_dev = ["--select", "totals", "big_customers", "--vars", "{dev: true}"]
        changed = Model("totals", TOTALS_SQL.replace("as total", "as total, max(amount) as biggest"))
        oracle = Oracle(h, [changed, BIG])
        sql(f"CREATE SCHEMA IF NOT EXISTS {dev}")  # with the audit table totals' hooks write, in clone too
        sql(f"CREATE TABLE {dev}.audit (event STRING, pos BIGINT, target_rows BIGINT) USING iceberg")
        try:
            results = run_dbt(["clone", "--state", state_dir, *in_dev])
            assert sorted(str(r.status) for r in results) == ["success", "success"]
            assert views_in(dev) == ["big_customers", "totals"]
            for name in ("totals", "big_customers"):
                cloned, there = (collect(f"SELECT * FROM {s}") for s in (f"{dev}.{name}", h.fq(name)))
                assert Counter(cloned) == Counter(there), name

            results = run_dbt(["run", *in_dev])
            assert modes(results) == {"totals": "full", "big_customers": "full"}
            assert views_in(dev) == []
            h.apply(ctx["gen"].batch(["orders"]))
            assert modes(run_dbt(["run", *in_dev])) == {"totals": "incremental", "big_customers": "incremental"}
            for name in ("totals", "big_customers"):
                assert Counter(collect(f"SELECT * FROM {dev}.{name}")) == Counter(collect(oracle.sql_for(name))), name
        finally:
            for schema in (state_schema(dev), dev):
                sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
