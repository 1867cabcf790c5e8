"""Which results hold every row at most once (``Program.result_is_set``): a run applies their
change in one MERGE matching whole rows, which is exact only if no row has two copies. A result
called a set that is not one would lose copies, so every bag shape must say no."""

from __future__ import annotations

import pytest

from ivm_core.analyzer import InputSchema
from ivm_core.compiler import compile_model

SCHEMAS = [
    InputSchema("s.orders", (("o_id", "INT"), ("c_id", "INT"), ("amount", "INT"), ("status", "STRING"))),
    InputSchema("s.customers", (("c_id", "INT"), ("tier", "STRING"))),
]

SETS = [
    "select c_id, count(*) as n, sum(amount) as total from s.orders group by c_id",
    "select status, c_id, max(amount) as top from s.orders group by c_id, status",
    "select count(*) as n from s.orders",
    "select distinct c_id, status from s.orders",
    "select c_id, count(*) as n from s.orders group by c_id having count(*) > 1",
    "select c_id as customer, n * 2 as twice from (select c_id, count(*) as n from s.orders group by c_id) g",
    "select c_id from s.orders union select c_id from s.customers",
    # a join of two sets is a set: each row pairs one row of each
    "select a.c_id, a.n, b.c_id as b_id, b.tier from (select c_id, count(*) as n from s.orders group by c_id) a "
    "join (select distinct c_id, tier from s.customers) b on a.c_id = b.c_id",
    "select c.tier, count(*) as n from s.orders o join s.customers c on o.c_id = c.c_id group by c.tier",
]

BAGS = [
    "select o_id, amount from s.orders",
    "select distinct c_id, status from s.orders union all select c_id, tier from s.customers",
    # the group key is not selected: two groups may give the same row
    "select count(*) as n from s.orders group by c_id",
    "select n from (select c_id, count(*) as n from s.orders group by c_id) g",
    "select c_id + 1 as next_id, count(*) as n from s.orders group by c_id",
    "select c_id from s.orders intersect all select c_id from s.customers",
    "select c_id from s.orders except all select c_id from s.customers",
    "select o.o_id, c.tier from s.orders o join (select distinct c_id, tier from s.customers) c on o.c_id = c.c_id",
]


@pytest.mark.parametrize("sql", SETS)
def test_result_is_a_set(sql):
    assert compile_model(sql, SCHEMAS).result_is_set()


@pytest.mark.parametrize("sql", BAGS)
def test_result_may_repeat_rows(sql):
    assert not compile_model(sql, SCHEMAS).result_is_set()
