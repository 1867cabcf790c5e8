"""Which fallbacks may skip a recompute when no input changed (``IvmError.over_inputs``):
only SQL that reads nothing but its inputs (and its own CTEs), deterministically."""

from __future__ import annotations

import pytest

from ivm_core.analyzer import InputSchema
from ivm_core.compiler import compile_model
from ivm_core.errors import AnalysisError, UnsupportedSql

INPUTS = [InputSchema("db.r", (("a", "INT"), ("b", "INT")))]


@pytest.mark.parametrize("sql, over_inputs", [
    ("SELECT a FROM db.r ORDER BY a + b LIMIT 3", True),
    ("SELECT a, row_number() OVER (ORDER BY b) AS rn FROM db.r", True),
    ("SELECT x.a FROM db.r AS x WHERE x.b > 0 OR EXISTS (SELECT 1 FROM db.r AS y WHERE y.a = x.b)", True),
    ("WITH x AS (SELECT a FROM db.r) SELECT a FROM x LIMIT 1", True),
    ("SELECT a, rand() AS x FROM db.r ORDER BY a LIMIT 3", False),
    ("SELECT a, current_timestamp() AS t FROM db.r", False),
    ("SELECT a, uuid() AS u FROM db.r", False),
    ("SELECT r.a FROM db.r AS r JOIN db.elsewhere AS e ON r.a = e.a ORDER BY r.a LIMIT 1", False),
    ("SELECT r.a FROM db.r AS r JOIN db.elsewhere AS e ON r.a = e.a", False),
    ("SELECT a FROM elsewhere LIMIT 1", False),
])
def test_only_deterministic_sql_over_the_inputs_is_a_function_of_them(sql, over_inputs):
    with pytest.raises((UnsupportedSql, AnalysisError)) as e:
        compile_model(sql, INPUTS)
    assert e.value.over_inputs is over_inputs, e.value
