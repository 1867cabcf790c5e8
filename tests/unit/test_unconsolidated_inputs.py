"""Which inputs' change windows a run reads as they are (``Program.unconsolidated_inputs``):
those only aggregates read, through filters, projections and unions. Every aggregate state is
a sum of weights, so the pieces of a row sum up there (test_delta_properties runs the generated
SQL over such pieces); an input a join also reads is summed per row first, so that an update
of a column the model does not read cancels before the join."""

from __future__ import annotations

import pytest

from ivm_core.analyzer import InputSchema
from ivm_core.compiler import compile_model

SCHEMAS = [
    InputSchema("s.orders", (("o_id", "INT"), ("c_id", "INT"), ("amount", "INT"), ("status", "STRING"))),
    InputSchema("s.customers", (("c_id", "INT"), ("tier", "STRING"))),
]

CASES = [
    ("select status, count(*) as n, sum(amount) as total from s.orders where amount > 1 group by status",
     {"s.orders"}),
    ("select distinct c_id from s.orders", {"s.orders"}),
    ("select count(distinct c_id) as n, max(amount) as top from s.orders", {"s.orders"}),
    ("select c_id from s.orders except all select c_id from s.customers", {"s.orders", "s.customers"}),
    ("select c_id, count(*) as n from (select c_id from s.orders union all select c_id from s.customers) u "
     "group by c_id", {"s.orders", "s.customers"}),
    # no aggregate reads the change: summed per row
    ("select o_id, amount from s.orders where amount > 1", set()),
    # a join reads it
    ("select c.tier, count(*) as n from s.orders o join s.customers c on o.c_id = c.c_id group by c.tier", set()),
    # customers joins an aggregate of orders: only orders is read by an aggregate alone
    ("select c.tier, g.n from (select c_id, count(*) as n from s.orders group by c_id) g "
     "join s.customers c on g.c_id = c.c_id", {"s.orders"}),
    # orders is read by an aggregate and by a join
    ("select o.o_id, g.n from s.orders o join (select c_id, count(*) as n from s.orders group by c_id) g "
     "on o.c_id = g.c_id", set()),
]


@pytest.mark.parametrize("sql,expected", CASES)
def test_inputs_read_only_by_aggregates(sql, expected):
    assert compile_model(sql, SCHEMAS).unconsolidated_inputs() == frozenset(expected)
