"""Uncorrelated scalar subqueries that are not global aggregates (``ivm_core.scalar_one_row``): TPC-DS
q06's ``= (SELECT DISTINCT … WHERE …)``, q54's ``BETWEEN (SELECT DISTINCT …) AND (SELECT DISTINCT …)``
under a global aggregate, and one in the ``SELECT`` list without DISTINCT. The region rows their
subqueries read are changed by hand, the customers at random (duplicates, NULLs), so that the
subqueries go through no row (NULL), one row (also two equal rows under DISTINCT) and more than one:

* while a subquery has at most one row, every run is incremental (``ivm_policy: incremental``,
  ``Model.modes``) and equals Spark's full recompute;
* a run whose change gives a model's subquery more than one row fails with Spark's message, as
  Spark's own run of the model's SQL does, and leaves the model's tables (its target and state) as
  they were; the next run that brings it back to one row is incremental and exact.
"""

import os

import pytest
from dbt.tests.util import run_dbt

from .harness import (
    IS_IVM,
    BatchGenerator,
    IvmHarness,
    Model,
    Oracle,
    collect,
    drop_schema,
    fingerprint_schemas,
    mode_problem,
    project_files,
    result_by_name,
    shop_inputs,
    state_schema,
)

pytestmark = [
    pytest.mark.skipif(not IS_IVM, reason="needs the incremental_ivm materialization"),
    pytest.mark.skipif(os.environ.get("IVM_FAST_TESTS") == "1", reason="slow; IVM_FAST_TESTS=1 skips it"),
]

INCREMENTAL = {"ivm_policy": "incremental"}
Q06 = Model(
    "q06_north_customers",
    """
select c.c_id, c.name, c.tier
from {customers} c
where c.region_id = (select distinct r.region_id from {regions} r where r.rname = 'north')
""",
    ivm_config=INCREMENTAL,
)
Q54 = Model(
    "q54_near_north",
    """
select count(*) as n, sum(c.credit_limit) as credit
from {customers} c
where c.region_id between (select distinct r.region_id - 1 from {regions} r where r.rname = 'north')
                      and (select distinct r.region_id + 1 from {regions} r where r.rname = 'north')
""",
    ivm_config=INCREMENTAL,
)
SOUTH = Model(
    "south_id",
    """
select c.c_id, c.name, (select r.region_id from {regions} r where r.rname = 'south') as south_id
from {customers} c
""",
    ivm_config=INCREMENTAL,
)
MODELS = [Q06, Q54, SOUTH]
INPUTS = {"customers": 0, "regions": 0}
SEED = 1618
SPARK_MESSAGE = "More than one row returned by a subquery used as an expression"


class TestIvmScalarOneRow:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS)

    @pytest.fixture(scope="class")
    def ctx(self, project):
        h = IvmHarness(project.test_schema, shop_inputs(INPUTS))
        h.create_inputs()
        gen = BatchGenerator(h, SEED)
        first = gen.initial()
        first["regions"] = [((1, "north"), 1), ((2, "south"), 1), ((3, "east"), 1)]
        h.apply(first)
        run_dbt(["run"])
        oracle = Oracle(h, MODELS)
        for m in MODELS:
            assert oracle.compare(m.name) is None, m.name
        schemas = [project.test_schema, state_schema(project.test_schema)]
        yield {"h": h, "gen": gen, "oracle": oracle, "schemas": schemas}
        drop_schema(state_schema(project.test_schema))

    def _step(self, ctx, regions, failing=()):
        """Apply ``regions``' changes and random customers' ones, ``dbt run``: the models in
        ``failing`` fail with Spark's message (as Spark's run of their SQL does) and their tables
        are unchanged; every other model ran incrementally and equals its recompute."""
        h, oracle = ctx["h"], ctx["oracle"]
        batch = ctx["gen"].batch(["customers"], ops=3)
        batch["regions"] = regions
        h.apply(batch)
        h.check_bases()
        owned = {m.name: m.name.lower() for m in MODELS}

        def tables(name):
            return {t: f for t, f in fingerprint_schemas(ctx["schemas"]).items()
                    if t.split(".")[-1].lower().startswith(owned[name])}

        before = {name: tables(name) for name in failing}
        results = result_by_name(run_dbt(["run"], expect_pass=None))
        problems = []
        for m in MODELS:
            r = results[m.name]
            if m.name in failing:
                if str(r.status) != "error" or SPARK_MESSAGE not in str(r.message):
                    problems.append(f"{m.name}: expected to fail with Spark's message, got {r.status}: {r.message}")
                with pytest.raises(Exception, match=SPARK_MESSAGE):
                    collect(oracle.sql_for(m.name))
                if tables(m.name) != before[m.name]:
                    problems.append(f"{m.name}: the failed run changed its tables")
                continue
            if str(r.status) != "success":
                problems.append(f"{m.name}: {r.status}: {r.message}")
                continue
            problem = oracle.compare(m.name) or mode_problem(m, r)
            if problem:
                problems.append(problem)
        assert not problems, "\n".join(problems) + f"\nafter seq {h.seq}: {batch}"

    def test_no_row_is_null(self, ctx):
        self._step(ctx, [((2, "south"), -1)])

    def test_two_values_fail_the_runs_that_read_them(self, ctx):
        self._step(ctx, [((3, "north"), 1)], failing=[Q06.name, Q54.name])

    def test_two_equal_rows_are_one_under_distinct_and_two_without(self, ctx):
        self._step(ctx, [((3, "north"), -1), ((1, "north"), 1), ((2, "south"), 2)], failing=[SOUTH.name])

    def test_back_to_one_row(self, ctx):
        self._step(ctx, [((2, "south"), -1)])

    def test_no_north_row(self, ctx):
        self._step(ctx, [((1, "north"), -2)])
