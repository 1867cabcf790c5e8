"""A model whose SQL our parser (sqlglot) does not read as Spark does is not maintained
incrementally: its plan would compute sqlglot's reading. Each refused form below is one sqlglot
misreads (checked against its rendering when this test was written); each accepted one it only
respells. Under ``ivm_policy: auto`` a refused model falls back to a full recompute of its SQL as
written (``sqltext.with_tables_replaced``)."""

from __future__ import annotations

import pytest

from ivm_core.compiler import compile_model
from ivm_core.errors import UnsupportedSql
from tests.unit.zset_queries import SCHEMAS


@pytest.mark.parametrize("select, lost", [
    ("percentile(r.b, 0.5, r.a)", "r.a"),  # the frequency is dropped: an unweighted percentile
    ("date_trunc(r.a, current_date())", None),  # (non-deterministic anyway)
    ("date_trunc(r.a, r.b)", "r.a"),  # the unit column becomes the literal 'A'
    ("first(r.a, r.b)", "r.b"),  # ignoreNulls given by a column is dropped
    ("to_char(r.a, '999')", "format"),  # the format is dropped: a plain CAST
    ("percentile_cont(0.5) WITHIN GROUP (ORDER BY r.b)", "WITHIN GROUP"),  # read as percentile_approx
])
def test_what_our_parser_misreads_is_refused(select, lost):
    with pytest.raises(UnsupportedSql) as refused:
        compile_model(f"SELECT {select} AS x FROM db.r AS r GROUP BY r.a", SCHEMAS)
    if lost is not None:
        assert lost in str(refused.value)


@pytest.mark.parametrize("select", [
    "nvl(r.a, 1) AS x, ifnull(r.b, 2) AS y, pow(r.a, 2) AS z",
    "substr(CAST(r.a AS STRING), 1, 2) AS x, instr(CAST(r.a AS STRING), '1') AS y",
    "r.a + 100L + 2S + 3Y AS x, CAST(r.b AS DOUBLE) * 0.1d + 1BD AS y",
    "date '2024-01-01' + r.a AS x, timestamp '2024-01-01 00:00:00' AS t, interval 1 day AS i",
    "'it''s' AS x, \"double quoted\" AS y, `r`.`a` AS z -- a comment\n",
    "date_trunc('MM', CAST(r.a AS TIMESTAMP)) AS x, trunc(CAST(r.b AS DATE), 'MM') AS y, trunc(r.a, r.b) AS z",
    # read as STRUCT(r.a AS k, r.b AS v): the same struct, its field names identifiers
    "named_struct('k', r.a, 'v', r.b) AS x, struct(r.a AS k) AS y",
])
def test_what_our_parser_only_respells_is_kept(select):
    compile_model(f"SELECT {select} FROM db.r AS r", SCHEMAS)


def test_a_refused_model_over_its_inputs_may_skip_a_recompute_of_unchanged_inputs():
    """Its SQL as written is still a function of its inputs' contents (``over_inputs``): a run
    over unchanged inputs is a noop, as for any fallback over inputs."""
    with pytest.raises(UnsupportedSql) as refused:
        compile_model("SELECT r.a, percentile(r.b, 0.5, r.a) AS p FROM db.r AS r GROUP BY r.a", SCHEMAS)
    assert refused.value.over_inputs
    with pytest.raises(UnsupportedSql) as elsewhere:
        compile_model("SELECT percentile(r.b, 0.5, o.a) AS p FROM db.r AS r JOIN other.o AS o ON r.a = o.a",
                      SCHEMAS)
    assert not elsewhere.value.over_inputs


def test_nulls_first_and_last_are_words_not_names():
    compile_model("SELECT r.a, r.b FROM db.r AS r ORDER BY r.a DESC NULLS LAST, r.b NULLS FIRST LIMIT 3", SCHEMAS)
