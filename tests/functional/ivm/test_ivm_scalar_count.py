"""Correlated scalar subqueries over ``COUNT`` (``ivm_core.scalar_count``: the "count bug" — a row no
group matches has ``COUNT`` 0, not NULL, as Spark computes it) under random change batches with
duplicates and NULLs, compared with the oracle (Spark's full recompute) after every run: TPC-DS q41's
``(SELECT count(*) … WHERE (corr AND x) OR (corr AND y)) > 0`` (the correlation factored out of the
OR), counts and an expression over ``COUNT``, ``SUM`` and literals in the ``SELECT`` list, and
``count(*) = 0`` in ``WHERE`` (the rows no group matches are the ones kept). Each model is
``ivm_policy: incremental`` and must run incrementally (``Model.modes``).
"""

import os

import pytest

from .harness import IS_IVM, Model, batch_outcomes, project_files

pytestmark = [
    pytest.mark.skipif(not IS_IVM, reason="needs the incremental_ivm materialization"),
    pytest.mark.skipif(os.environ.get("IVM_FAST_TESTS") == "1", reason="slow; IVM_FAST_TESTS=1 skips it"),
]

INCREMENTAL = {"ivm_policy": "incremental"}
MODELS = [
    Model(
        "q41_products",
        """
select distinct p1.pname
from {products} p1
where p1.p_id between 1 and 4
  and (select count(*) as item_cnt
       from {products} p
       where (p.category = p1.category and (p.price > 10 or p.pname = 'pen'))
          or (p.category = p1.category and p.price is null)) > 0
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "customer_counts",
        """
select c.c_id, c.name,
       (select count(*) from {orders} o where o.c_id = c.c_id) as n_orders,
       (select count(o.amount) * 2 + coalesce(sum(o.amount), 0)
        from {orders} o where o.c_id = c.c_id and o.status = 'open') as open_score
from {customers} c
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "customers_without_big_orders",
        """
select c.c_id, c.tier
from {customers} c
where (select count(o.o_id) from {orders} o where o.c_id = c.c_id and o.amount > 50) = 0
""",
        ivm_config=INCREMENTAL,
    ),
]
NAMES = [m.name for m in MODELS]
INPUTS = {"orders": 0, "customers": 0, "products": 0}
SEED = 2718


class TestIvmScalarCount:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS)

    @pytest.fixture(scope="class")
    def outcomes(self, project):
        yield from batch_outcomes(project.test_schema, INPUTS, MODELS, SEED,
                                  ["nasty", None, ["products"], ["customers"]])

    @pytest.mark.parametrize("model", NAMES)
    def test_model_matches_oracle(self, outcomes, model):
        assert not outcomes[model], "\n".join(outcomes[model])
