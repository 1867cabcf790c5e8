"""Top-k models whose ORDER BY is an expression over the selected columns (``ivm_core.top_k``,
``SortKey.expression``) under random change batches with duplicates and NULLs, compared with the oracle
after every run: a valid top of Spark's full recompute (any choice of the rows tied at the limit, tied
under the expression's value). TPC-DS q47/q57's ``ORDER BY sum_sales - avg_monthly_sales`` over an
aggregate and a window average of it, q36/q70/q86's ``ORDER BY lochierarchy DESC, CASE WHEN lochierarchy = 0 THEN … END,
rank_within_parent`` over a ROLLUP with GROUPING and a window, a UNION ALL by ``coalesce(v, 0) * -1``
and rows (a bag state) by a function of a date with an OFFSET. Each model is ``ivm_policy:
incremental`` and must run incrementally (``Model.modes``). Then ``dbt test``
(``ivm_matches_full_refresh``, which compares the expression's values) and ``ivm_check`` pass, and a
target holding a row the top cannot have fails the test.
"""

import os
from collections import Counter

import pytest
from dbt.tests.util import run_dbt

from .harness import (
    IS_IVM,
    BatchGenerator,
    IvmHarness,
    Model,
    Oracle,
    collect,
    diff_message,
    drop_schema,
    project_files,
    run_batches,
    shop_inputs,
    sql,
    state_schema,
)

pytestmark = [
    pytest.mark.skipif(not IS_IVM, reason="needs the incremental_ivm materialization"),
    pytest.mark.skipif(os.environ.get("IVM_FAST_TESTS") == "1", reason="slow; IVM_FAST_TESTS=1 skips it"),
]

INCREMENTAL = {"ivm_policy": "incremental"}
MODELS = [
    Model(
        "q47_deviation",
        """
select o.c_id, o.status, sum(o.amount) as sum_sales,
       avg(sum(o.amount)) over (partition by o.c_id) as avg_monthly_sales
from {orders} o
group by o.c_id, o.status
order by sum_sales - avg_monthly_sales, c_id, status
limit 3
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "q36_hierarchy",
        """
select sum(o.amount) as total, c.tier, o.status,
       grouping(c.tier) + grouping(o.status) as lochierarchy,
       rank() over (partition by grouping(c.tier) + grouping(o.status),
                    case when grouping(o.status) = 0 then c.tier end
                    order by sum(o.amount) desc) as rank_within_parent
from {orders} o
join {customers} c on o.c_id = c.c_id
group by rollup(c.tier, o.status)
order by lochierarchy desc, case when lochierarchy = 0 then tier end, rank_within_parent
limit 5
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "ids_by_value",
        """
select o.c_id as id, o.amount as v from {orders} o
union all
select c.c_id, c.credit_limit from {customers} c
order by coalesce(v, 0) * -1, id nulls last
limit 4
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "orders_by_weekday",
        """
select o.o_id, o.amount, o.odate
from {orders} o
where o.status <> 'cancelled'
order by datediff(odate, date'2024-01-01') % 7 desc nulls first, o.amount
limit 5 offset 1
""",
        ivm_config=INCREMENTAL,
    ),
]
NAMES = [m.name for m in MODELS]
TOTAL_ORDER = ["q47_deviation"]  # no two rows tie under its ORDER BY (c_id, status tell its groups apart)
EXACT = "exact"
INPUTS = {"orders": 0, "customers": 0}
SEED = 3141


class TestIvmTopKExpressions:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS)

    @pytest.fixture(scope="class")
    def outcomes(self, project):
        """``run_batches``' problems, and under ``EXACT`` the runs after which a model whose ORDER BY
        orders its rows totally did not hold exactly the rows of Spark's own run of its SQL (the
        oracle's top-k check resolves the ORDER BY with ``ivm_core.top_k`` itself: this one does not)."""
        h = IvmHarness(project.test_schema, shop_inputs(INPUTS))
        oracle = Oracle(h, MODELS)
        exact: dict[str, list[str]] = {name: [] for name in TOTAL_ORDER}

        def compare_exactly():
            for name in TOTAL_ORDER:
                expected, actual = Counter(collect(oracle.sql_for(name))), oracle.contents(name)
                if expected != actual:
                    exact[name].append(diff_message(f"after seq {h.seq}, {name}", expected, actual))

        try:
            problems = run_batches(h, MODELS, BatchGenerator(h, SEED), ["nasty", None, ["customers"]],
                                   after_batch=compare_exactly)
            yield problems | {EXACT: [p for name in TOTAL_ORDER for p in exact[name]]}
        finally:
            drop_schema(state_schema(project.test_schema))

    @pytest.mark.parametrize("model", NAMES)
    def test_model_matches_oracle(self, outcomes, model):
        assert not outcomes[model], "\n".join(outcomes[model])

    def test_a_total_order_keeps_the_rows_spark_keeps(self, outcomes):
        assert not outcomes[EXACT], "\n".join(outcomes[EXACT])

    def test_tests_and_check_pass(self, outcomes, project):
        results = run_dbt(["test"], expect_pass=None)
        failed = [f"{r.node.name}: {r.status} {r.message}" for r in results if str(r.status) != "pass"]
        assert len(results) == len(NAMES) and not failed, "\n".join(failed)
        for name in NAMES:
            run_dbt(["run-operation", "ivm_check", "--args", "{model: %s}" % name])

    def test_a_row_the_top_cannot_have_fails_the_test(self, outcomes, project):
        """A row of the pre-limit result whose key value ranks it past the limit: the expression's
        values in the target no longer are the recompute's."""
        target = f"{project.test_schema}.q47_deviation"
        sql(f"INSERT INTO {target} VALUES (CAST(-1 AS INT), 'zzz', CAST(0 AS DECIMAL(20,2)), CAST(0 AS DECIMAL(24,6)))")
        results = run_dbt(["test", "--select", "q47_deviation"], expect_pass=False)
        assert [str(r.status) for r in results] == ["fail"], [(r.node.name, r.status) for r in results]
