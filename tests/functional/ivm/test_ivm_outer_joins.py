"""Outer, semi and anti joins, and the EXISTS/IN subqueries lowered to them, under random change batches,
compared with the oracle after every run.

Each model is ``ivm_policy: incremental`` (a fallback to a full recompute would fail the run): LEFT, RIGHT and
FULL joins with conditions on either side in ON and in WHERE, NULL keys, an outer join feeding an inner join and
an aggregate (TPC-H Q13's shape), LEFT SEMI and LEFT ANTI joins; a correlated EXISTS with a non-equi
condition, NOT IN over nullable columns (one and two columns: Spark's semantics, which DuckDB does not share
for two), IN with a correlated NOT EXISTS under an aggregate (Q4's and Q21's shape), and scalar subqueries
(uncorrelated in SELECT, correlated in WHERE as Q17's and in SELECT where a missing group is NULL), and a
correlated EXISTS whose own WHERE holds an aggregate subquery. The nasty
batch deletes every order of some customers (their rows become unmatched) and inserts orders for customers
that had none.
"""

import os

import pytest

from .harness import (
    IS_IVM,
    KEYED_WRITES,
    Model,
    batch_outcomes,
    project_files,
)

pytestmark = [
    pytest.mark.skipif(not IS_IVM, reason="needs the incremental_ivm materialization"),
    pytest.mark.skipif(os.environ.get("IVM_FAST_TESTS") == "1", reason="slow; IVM_FAST_TESTS=1 skips it"),
]

INCREMENTAL = {"ivm_policy": "incremental"}
MODELS = [
    Model(
        "left_join_filters",
        """
select o.o_id, o.amount, o.odate, c.name, c.credit_limit, c.tier
from {orders} o
left join {customers} c on o.c_id = c.c_id and c.tier = 'gold' and o.amount > c.credit_limit
where o.status is null or o.status <> 'cancelled'
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "right_join_where_nullable",
        """
select c.c_id, c.name, o.o_id, o.status
from {orders} o
right join {customers} c on o.c_id = c.c_id
where o.o_id is null or o.amount > 50
""",
        ivm_config={**INCREMENTAL, **KEYED_WRITES},
    ),
    Model(
        "full_join",
        """
select c.c_id as customer, o.c_id as order_customer, o.o_id, c.tier, o.note
from {customers} c
full outer join {orders} o on c.c_id = o.c_id and o.odate is not null
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "orders_per_customer",
        """
select c.c_id, c.name, count(o.o_id) as n_orders, sum(o.amount) as total, max(o.odate) as last_order
from {customers} c
left join {orders} o on c.c_id = o.c_id and (o.note is null or o.note not like '%gift%')
group by c.c_id, c.name
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "left_chain_then_inner",
        """
select o.o_id, c.name, r.region_id as region, p.pname
from {orders} o
left join {customers} c on o.c_id = c.c_id
left join {regions} r on c.region_id = r.region_id
join {products} p on p.p_id = o.p_id
""",
        ivm_config={**INCREMENTAL, **KEYED_WRITES},
    ),
    Model(
        "customers_without_orders",
        """
select c.c_id, c.name from {customers} c
left anti join {orders} o on o.c_id = c.c_id and o.status = 'open'
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "customers_with_orders",
        """
select c.c_id, c.tier from {customers} c
left semi join {orders} o on o.c_id = c.c_id
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "customers_with_big_open_orders",
        """
select c.c_id, c.name from {customers} c
where c.tier is not null
  and exists (select * from {orders} o where o.c_id = c.c_id and o.status = 'open' and o.amount > c.credit_limit)
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "orders_not_in_kitchen",
        """
select o.o_id, o.p_id from {orders} o
where o.p_id not in (select p.p_id from {products} p where p.category = 'kitchen')
  and (o.c_id, o.p_id) not in (select c.c_id, c.region_id from {customers} c where c.tier = 'silver')
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "latest_gold_orders_per_status",
        """
select o.status, count(*) as n, sum(o.amount) as total
from {orders} o
where o.odate is not null
  and o.c_id in (select c.c_id from {customers} c where c.tier = 'gold')
  and not exists (select 1 from {orders} o2 where o2.c_id = o.c_id and o2.o_id > o.o_id)
group by o.status
""",
        ivm_config=INCREMENTAL,
    ),
    Model(  # a correlated EXISTS whose own WHERE compares with an aggregate subquery (Q20's, Q21's shape)
        "customers_with_above_average_orders",
        """
select c.c_id, c.name from {customers} c
where exists (select 1 from {orders} o
              where o.c_id = c.c_id and o.amount > (select avg(o2.amount) from {orders} o2 where o2.status = 'open'))
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "orders_above_customer_average",
        """
select o.o_id, o.c_id, o.amount,
       (select max(p.price) from {products} p) as top_price,
       (select min(o3.odate) from {orders} o3 where o3.c_id = o.c_id) as first_order
from {orders} o
where o.amount > (select avg(o2.amount) from {orders} o2 where o2.c_id = o.c_id)
""",
        ivm_config=INCREMENTAL,
    ),
]
INPUTS = {"orders": 0, "customers": 0, "regions": 0, "products": 0}
SEED = 1313


class TestIvmOuterJoins:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS)

    @pytest.fixture(scope="class")
    def outcomes(self, project):
        yield from batch_outcomes(project.test_schema, INPUTS, MODELS, SEED, ["nasty"])

    @pytest.mark.parametrize("model", [m.name for m in MODELS])
    def test_model_matches_oracle(self, outcomes, model):
        assert not outcomes[model], "\n".join(outcomes[model])
