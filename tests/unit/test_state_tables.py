"""Which tables hold an aggregate's states can follow from Spark's types of its arguments (a SUM
over a DOUBLE keeps its values, in a table of states; over an INT its group state alone). A run
names the tables it reads before it asks the types, so it binds the types its last commit
recorded first — for every model whose tables depend on them (``Program.tables_depend_on_types``).
A model that said no but whose tables do depend on them would find its tables missing and
rebuild on every run."""

from __future__ import annotations

import pytest

from ivm_core.analyzer import InputSchema
from ivm_core.compiler import Program, compile_model

SCHEMAS = [InputSchema("s.orders", (("o_id", "INT"), ("c_id", "INT"), ("x", "INT"), ("note", "STRING")))]
MODELS = [
    "select c_id, count(*) as n, sum(x) as total from s.orders group by c_id",
    "select c_id, avg(x) as mean from s.orders group by c_id",
    "select c_id, sum(distinct x) as sd, count(*) as n from s.orders group by c_id",
    "select c_id, avg(distinct x) as ad from s.orders group by c_id",
    "select c_id, count(*) as n, count(x) as nx, count_if(x > 1) as big from s.orders group by c_id",
    "select c_id, min(x) as lo, max(note) as hi from s.orders group by c_id",
    "select c_id, count(distinct x) as d from s.orders group by c_id",
    "select c_id, var_pop(x) as v, stddev(x) as sd from s.orders group by c_id",
    "select n, count(*) as groups from (select c_id, sum(x) as n from s.orders group by c_id) g group by n",
]


def _tables(sql: str, arg_type: str, sum_type: str) -> list[tuple[str, str]]:
    program = compile_model(sql, SCHEMAS)
    program.bind_types({f"{a.id}__{c.name}__{kind}": t for a in program.aggregates for c in a.aggs
                        for kind, t in (("arg", arg_type), ("sum", sum_type), ("avg", "double"),
                                        ("weighted", sum_type))})
    return program.state_tables()


@pytest.mark.parametrize("sql", MODELS)
def test_a_model_whose_state_tables_follow_from_its_types_says_so(sql):
    program: Program = compile_model(sql, SCHEMAS)
    differ = _tables(sql, "int", "bigint") != _tables(sql, "double", "double")
    assert not differ or program.tables_depend_on_types(), sql


def test_the_tables_of_some_models_follow_from_their_types():
    """(The test above would pass vacuously if no model's tables changed with its types.)"""
    assert _tables(MODELS[0], "int", "bigint") != _tables(MODELS[0], "double", "double")
    assert not compile_model(MODELS[4], SCHEMAS).tables_depend_on_types()
