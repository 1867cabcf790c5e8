"""``LIMIT`` without ``ORDER BY`` over a result of at most one row (``ivm_core.single_row_limit``),
under random change batches with duplicates and NULLs, compared with the oracle (Spark's full
recompute of the model's SQL, its LIMIT included) after every run: TPC-DS q28's cross join of
global aggregates, q32's global sum over a correlated scalar subquery, q38's count of an
INTERSECT, q97's sums over a full outer join, and ``LIMIT 0`` (no row). Each model is
``ivm_policy: incremental`` and must run incrementally (``Model.modes``): a fallback to a full
recompute fails the suite.
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
        "q28_buckets",
        """
select *
from (select avg(o.amount) as b1_avg, count(o.amount) as b1_cnt, count(distinct o.amount) as b1_cntd
      from {orders} o where o.status = 'open' or o.p_id between 1 and 2) b1,
     (select avg(o.amount) as b2_avg, count(*) as b2_cnt, max(o.odate) as b2_last
      from {orders} o where o.c_id between 3 and 6) b2
limit 100
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "q32_excess",
        """
select sum(o.amount) as excess_amount
from {orders} o
where o.amount > (select 1.3 * avg(o2.amount) from {orders} o2 where o2.c_id = o.c_id)
limit 100
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "q38_hot",
        """
select count(*) as n
from (select distinct o.c_id, o.p_id from {orders} o
      intersect
      select distinct a.c_id, a.p_id from {archived_orders} a) hot
limit 100
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "q97_overlap",
        """
select sum(case when s.c_id is not null and c.c_id is null then 1 else 0 end) as store_only,
       sum(case when s.c_id is null and c.c_id is not null then 1 else 0 end) as catalog_only,
       sum(case when s.c_id is not null and c.c_id is not null then 1 else 0 end) as store_and_catalog
from (select distinct o.c_id, o.p_id from {orders} o) s
full outer join (select distinct a.c_id, a.p_id from {archived_orders} a) c
  on s.c_id = c.c_id and s.p_id = c.p_id
limit 100
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "limit_zero",
        """
select count(*) as n, sum(o.amount) as total from {orders} o limit 0
""",
        ivm_config=INCREMENTAL,
    ),
]
NAMES = [m.name for m in MODELS]
INPUTS = {"orders": 0, "archived_orders": 0}
SEED = 8128


class TestIvmSingleRowLimit:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS)

    @pytest.fixture(scope="class")
    def outcomes(self, project):
        yield from batch_outcomes(project.test_schema, INPUTS, MODELS, SEED, ["nasty", None, ["archived_orders"]],
                                  nasty_inputs=("orders", "archived_orders"))

    @pytest.mark.parametrize("model", NAMES)
    def test_model_matches_oracle(self, outcomes, model):
        assert not outcomes[model], "\n".join(outcomes[model])
