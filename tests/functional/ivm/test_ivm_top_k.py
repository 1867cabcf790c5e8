"""Top-k models (``ORDER BY … LIMIT k [OFFSET n]``, ``ivm_core.top_k``) under random change batches, compared
with the oracle after every run: a valid top of the recompute (any choice of the rows tied at the limit).

Each model is ``ivm_policy: incremental`` (a fallback to a full recompute would fail the run), and each limit binds
(the shop's inputs have more rows than it keeps): an aggregate's top by a total with NULLs (its aggregate state is
the ranked rows' state), the most frequent statuses (ties in the count), rows of an outer join ranked by a column
with many ties and an OFFSET (a bag state), a top over a UNION ALL by position, and a model that reads a top-k
model's published changes (the top is ordered by every column there, so the oracle's inlined recompute chooses
the same rows). Then ``dbt test`` (``ivm_matches_full_refresh``, tie-aware) and ``ivm_check`` pass, a target
holding a row the top cannot have fails the test, and ``ivm_explain`` names the top-k.
"""

import os

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from .harness import IS_IVM, Model, batch_outcomes, project_files, sql

pytestmark = [
    pytest.mark.skipif(not IS_IVM, reason="needs the incremental_ivm materialization"),
    pytest.mark.skipif(os.environ.get("IVM_FAST_TESTS") == "1", reason="slow; IVM_FAST_TESTS=1 skips it"),
]

INCREMENTAL = {"ivm_policy": "incremental"}
MODELS = [
    Model(
        "top_customers",
        """
select o.c_id, sum(o.amount) as total, count(*) as n
from {orders} o
group by o.c_id
order by total desc, c_id
limit 3
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "top_customer_names",
        """
select t.c_id, t.total, c.name
from {ref:top_customers} t
join {customers} c on t.c_id = c.c_id
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "busiest_statuses",
        """
select o.status, count(*) as orders
from {orders} o
where o.odate is not null
group by o.status
order by orders desc
limit 2
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "orders_by_tier",
        """
select o.o_id, o.amount, c.tier
from {orders} o
left join {customers} c on o.c_id = c.c_id
order by c.tier desc nulls first, o.amount
limit 5 offset 2
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "highest_ids",
        """
select o.c_id as id from {orders} o
union all
select c.c_id from {customers} c where c.tier = 'gold'
order by 1 desc
limit 4
""",
        ivm_config=INCREMENTAL,
    ),
]
NAMES = [m.name for m in MODELS]
INPUTS = {"orders": 0, "customers": 0}
SEED = 4242


class TestIvmTopK:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS)

    @pytest.fixture(scope="class")
    def outcomes(self, project):
        yield from batch_outcomes(project.test_schema, INPUTS, MODELS, SEED,
                                  ["nasty", ["customers"]])

    @pytest.mark.parametrize("model", NAMES)
    def test_model_matches_oracle(self, outcomes, model):
        assert not outcomes[model], "\n".join(outcomes[model])

    def test_every_limit_binds(self, outcomes, project):
        """Each top-k model's pre-limit result had more rows than the model keeps (else the limit
        is not tested): checked on the inputs as they are after the last batch."""
        schema = project.test_schema
        pre_limit = {
            "top_customers": f"select count(distinct c_id) from {schema}.orders",
            "orders_by_tier": f"select count(*) from {schema}.orders",
            "highest_ids": f"select count(*) from {schema}.orders",
        }
        for name, count_sql in pre_limit.items():
            kept = sql(f"select count(*) from {schema}.{name}").collect()[0][0]
            assert sql(count_sql).collect()[0][0] > kept, name

    def test_tests_check_and_explain(self, outcomes, project):
        results = run_dbt(["test"], expect_pass=None)
        failed = [f"{r.node.name}: {r.status} {r.message}" for r in results if str(r.status) != "pass"]
        assert len(results) == len(NAMES) and not failed, "\n".join(failed)
        for name in NAMES:
            run_dbt(["run-operation", "ivm_check", "--args", "{model: %s}" % name])
        _, explained = run_dbt_and_capture(["run-operation", "ivm_explain", "--args", "{model: orders_by_tier}"])
        assert "(top-k; ties at the limit broken either way)" in explained, explained

    def test_a_row_the_top_cannot_have_fails_the_test(self, outcomes, project):
        target = f"{project.test_schema}.orders_by_tier"
        sql(f"INSERT INTO {target} VALUES (CAST(-1 AS INT), CAST('0.01' AS DECIMAL(10,2)), 'zzz')")
        results = run_dbt(["test", "--select", "orders_by_tier"], expect_pass=False)
        assert [str(r.status) for r in results] == ["fail"], [(r.node.name, r.status) for r in results]
