"""Window functions (``ivm_core/rules/window.py``) under random change batches, compared with the oracle
(Spark's own recompute of the model) after every run.

Each model is ``ivm_policy: incremental`` (a fallback to a full recompute would fail the run): dbt's dedup
pattern (``row_number() … = 1`` in a subquery, latest order per customer, NULL customers one partition), RANK,
DENSE_RANK, PERCENT_RANK and CUME_DIST with ties, running sums (``RANGE`` with peers) and ``ROWS`` frames,
LAG/LEAD with defaults, FIRST_VALUE/LAST_VALUE/NTH_VALUE, whole-partition aggregates, two partitionings in one
SELECT, a window over a join partitioned by a nullable key, a window over an aggregate (rank of a customer's
revenue in its region), a per-group top-k (``dense_rank() <= 2``), the dedup joined with a dimension, and a model
reading a window model's published changes. Every ``ORDER BY`` a ROW_NUMBER, a LAG or a ``ROWS`` frame depends
on orders the rows completely (ties only between equal rows), so Spark's recompute is the one answer. The
nasty batch deletes every order of some customers (their partitions empty) and inserts orders for customers that
had none; an append batch only inserts (duplicates, NULL customers, rows twice); then a random batch. The
windows at the top of their models over orders alone keep no state (``rules/window_result.py``: their targets
hold the partitions; the whole-row dedup ranks an append from its target's rows and the inserted ones); the
others keep their rows in a bag state, two of them large for the run (``ivm_rewrite_max_rows: 0``): they take
each change as appended pieces, one compacted by every run. Then ``dbt test`` (``ivm_matches_full_refresh``) and
``ivm_check`` pass, ``ivm_explain`` names the window and its state, and a window without ``PARTITION BY`` falls
back under ``auto`` with the reason.
"""

import os

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from .harness import IS_IVM, KEYED_WRITES, Model, adapter_response, batch_outcomes, project_files

pytestmark = [
    pytest.mark.skipif(not IS_IVM, reason="needs the incremental_ivm materialization"),
    pytest.mark.skipif(os.environ.get("IVM_FAST_TESTS") == "1", reason="slow; IVM_FAST_TESTS=1 skips it"),
]

INCREMENTAL = {"ivm_policy": "incremental"}
# every column of orders: ties under it are equal rows
ORDER_TOTALLY = "o.odate desc nulls last, o.o_id desc, o.amount, o.status, o.note, o.p_id"
MODELS = [
    Model(
        "latest_order_per_customer",
        f"""
select t.c_id, t.o_id, t.amount, t.odate
from (
  select o.c_id, o.o_id, o.amount, o.odate,
         row_number() over (partition by o.c_id order by {ORDER_TOTALLY}) as rn
  from {{orders}} o
) t
where t.rn = 1
""",
        ivm_config={**INCREMENTAL, **KEYED_WRITES},
    ),
    Model(  # dbt's usual form: every column kept
        "latest_order_whole",
        f"""
select *
from (
  select o.*, row_number() over (partition by o.c_id order by {ORDER_TOTALLY}) as rn
  from {{orders}} o
) t
where t.rn = 1
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "order_ranks",
        """
select o.o_id, o.status, o.amount,
       rank() over (partition by o.status order by o.amount desc) as r,
       dense_rank() over (partition by o.status order by o.amount desc) as dr,
       percent_rank() over (partition by o.status order by o.amount) as pr,
       cume_dist() over (partition by o.status order by o.amount) as cd
from {orders} o
""",
        ivm_config={**INCREMENTAL, **KEYED_WRITES},
    ),
    Model(
        "running_totals",
        f"""
select o.o_id, o.c_id, o.odate, o.amount,
       sum(o.amount) over (partition by o.c_id order by o.odate) as to_date,
       count(*) over (partition by o.c_id) as orders,
       avg(o.amount) over (partition by o.c_id, o.status) as avg_by_status,
       max(o.amount) over (partition by o.c_id) as biggest,
       sum(o.amount) over (partition by o.c_id order by {ORDER_TOTALLY}
                           rows between 2 preceding and current row) as last_three
from {{orders}} o
""",
        ivm_config={**INCREMENTAL, **KEYED_WRITES},
    ),
    Model(
        "order_neighbours",
        f"""
select o.o_id, o.c_id, o.amount, o.odate, o.status, o.note, o.p_id,
       lag(o.amount) over (partition by o.c_id order by {ORDER_TOTALLY}) as previous_amount,
       lead(o.o_id, 2, -1) over (partition by o.c_id order by {ORDER_TOTALLY}) as next_but_one,
       first_value(o.status) over (partition by o.c_id order by {ORDER_TOTALLY}) as first_status,
       last_value(o.amount) over (partition by o.c_id order by {ORDER_TOTALLY}
                                  rows between unbounded preceding and unbounded following) as last_amount,
       nth_value(o.o_id, 2) over (partition by o.c_id order by {ORDER_TOTALLY}
                                  rows between unbounded preceding and unbounded following) as second_id
from {{orders}} o
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "orders_in_region",
        """
select o.o_id, c.region_id, c.tier,
       count(*) over (partition by c.region_id) as region_orders,
       dense_rank() over (partition by c.region_id order by c.tier) as tier_rank,
       sum(o.amount) over (partition by c.c_id) as customer_total
from {orders} o
join {customers} c on o.c_id = c.c_id
""",
        # its bag state compacted by every run that grows it
        ivm_config={**INCREMENTAL, **KEYED_WRITES, "ivm_index_growth": 1},
    ),
    Model(
        "revenue_rank_in_region",
        """
select c.region_id, c.c_id, sum(o.amount) as revenue,
       rank() over (partition by c.region_id order by sum(o.amount) desc) as position
from {orders} o
join {customers} c on o.c_id = c.c_id
group by c.region_id, c.c_id
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "top_two_amounts_per_status",
        """
select * from (
  select o.o_id, o.status, o.amount, dense_rank() over (partition by o.status order by o.amount desc) as place
  from {orders} o
  where o.amount is not null
) t
where t.place <= 2
""",
        ivm_config=INCREMENTAL,
    ),
    Model(
        "latest_order_with_customer",
        f"""
with latest as (
  select o.c_id, o.o_id, o.status,
         row_number() over (partition by o.c_id order by {ORDER_TOTALLY}) as rn
  from {{orders}} o
)
select c.c_id, c.name, l.o_id, l.status
from {{customers}} c
left join latest l on l.c_id = c.c_id and l.rn = 1
""",
        ivm_config={**INCREMENTAL, **KEYED_WRITES},  # its bag state takes the changes as appended pieces
    ),
    Model(  # reads a window model's published changes
        "customers_by_latest_amount",
        """
select count(*) as customers, sum(l.amount) as total, max(l.odate) as newest
from {ref:latest_order_per_customer} l
""",
        ivm_config=INCREMENTAL,
    ),
]
NAMES = [m.name for m in MODELS]
FALLBACK = Model("global_row_number", "select o.o_id, count(*) over () as n from {orders} o", modes=("full",))
INPUTS = {"orders": 0, "customers": 0}
SEED = 2718


class TestIvmWindows:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS + [FALLBACK], INPUTS)

    @pytest.fixture(scope="class")
    def outcomes(self, project):
        yield from batch_outcomes(project.test_schema, INPUTS, MODELS + [FALLBACK], SEED,
                                  ["nasty", "append"])

    @pytest.mark.parametrize("model", NAMES + [FALLBACK.name])
    def test_model_matches_oracle(self, outcomes, model):
        assert not outcomes[model], "\n".join(outcomes[model])

    def test_windows_are_incremental_and_explained(self, outcomes, project):
        for name in NAMES:
            assert adapter_response(project.project_root, name)["mode"] in ("incremental", "noop"), name
        fallback = adapter_response(project.project_root, FALLBACK.name)
        assert fallback["mode"] == "full" and "without PARTITION BY" in fallback["reason"], fallback
        _, explained = run_dbt_and_capture(
            ["run-operation", "ivm_explain", "--args", "{model: latest_order_per_customer}"])
        assert "Window[" in explained and "ROW_NUMBER() OVER (PARTITION BY" in explained, explained
        assert "the target holds its rows" in explained and "the rows of window" not in explained, explained
        assert "top rows whole" not in explained, explained  # its ORDER BY reads columns it drops
        _, explained = run_dbt_and_capture(["run-operation", "ivm_explain", "--args", "{model: latest_order_whole}"])
        assert "top rows whole" in explained, explained
        _, explained = run_dbt_and_capture(["run-operation", "ivm_explain", "--args", "{model: orders_in_region}"])
        assert "the rows of window" in explained, explained  # over a join: the window keeps its rows

    def test_tests_and_check_pass(self, outcomes, project):
        results = run_dbt(["test"], expect_pass=None)
        failed = [f"{r.node.name}: {r.status} {r.message}" for r in results if str(r.status) != "pass"]
        assert len(results) == len(NAMES) + 1 and not failed, "\n".join(failed)
        for name in NAMES:
            run_dbt(["run-operation", "ivm_check", "--args", "{model: %s}" % name])
