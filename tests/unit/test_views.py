"""Views inlined into a model's SQL (``ivm_core.views``, SPEC §2.4): every reference to a view replaced, on the
parse tree, by the view's SQL as a subquery under the reference's alias, recursively; what cannot be inlined
(unparseable, non-deterministic SQL) said why; and the fingerprint's record of the inlined views
(``refresh/views.py``)."""

import sqlglot
import pytest

from dbt.adapters.spark_ivm.refresh.views import ViewUse, changed_views, signature
from ivm_core.analyzer import analyze, InputSchema
from ivm_core.errors import AnalysisError
from ivm_core.views import inline_views, parse_query, qualified, relations_read, renamed, why_not_inlined

STG = "select o_id, c_id as customer_id from raw.orders where status <> 'cancelled'"
OVER = "select customer_id, count(*) as n from an.stg group by customer_id"


def tables(sql: str) -> list[str]:
    return sorted(t.sql(dialect="spark") for t in sqlglot.parse_one(sql, read="spark").find_all(sqlglot.exp.Table))


def test_the_reference_keeps_its_alias_or_takes_the_views_name():
    out = inline_views("select s.o_id from an.stg s join an.stg on s.o_id = stg.o_id", {"an.stg": STG})
    assert out == (f"select s.o_id from (\n  {STG}\n) s join (\n  {STG}\n) AS `stg` on s.o_id = stg.o_id")
    assert tables(out) == ["raw.orders", "raw.orders"]


def test_a_view_referenced_twice_and_with_a_catalog_is_replaced_everywhere():
    sql = ("select * from spark_catalog.an.stg as a union all "
           "select * from AN.STG where o_id in (select o_id from an.stg)")
    out = inline_views(sql, {"an.stg": STG})
    assert tables(out) == ["raw.orders"] * 3 and "an.stg" not in out.lower()
    assert out.startswith(f"select * from (\n  {STG}\n) as a union all")


def test_a_view_over_a_view_is_inlined_recursively():
    out = inline_views("select * from an.over_stg o where n > 1", {"an.stg": STG, "an.over_stg": OVER})
    assert tables(out) == ["raw.orders"]
    analysis = analyze(out, [InputSchema("raw.orders", (("o_id", "int"), ("c_id", "int"), ("status", "string")))])
    assert analysis.output_names == ("customer_id", "n")


def test_a_view_with_ctes_and_a_model_with_ctes_of_the_same_name():
    view = "with o as (select * from raw.orders) select o_id from o"
    out = inline_views("with o as (select o_id from an.v) select * from o join raw.orders r on o.o_id = r.o_id",
                       {"an.v": view})
    assert out == (f"with o as (select o_id from (\n  {view}\n) AS `v`) select * from o join raw.orders r "
                   "on o.o_id = r.o_id")
    assert relations_read(parse_query(out)) == {"raw.orders"}  # the CTEs o are no relations


def test_other_tables_and_time_travel_are_left_as_written():
    sql = "select * from an.stg VERSION AS OF 3 join raw.orders on true join stg on true"
    assert inline_views(sql, {"an.stg": STG}) == sql  # a time-travel read and a bare (CTE or other) name
    assert inline_views(sql, {}) == sql


def test_views_that_read_each_other_are_refused():
    with pytest.raises(AnalysisError, match="read each other"):
        inline_views("select * from an.a", {"an.a": "select * from an.b", "an.b": "select * from an.a"})


def test_a_catalog_views_relations_are_qualified_in_its_schema():
    text = "with c as (select * from orders) select * from c join `raw`.customers on true join items"
    assert qualified(text, parse_query(text), "raw") == (
        "with c as (select * from `raw`.orders) select * from c join `raw`.customers on true join `raw`.items")


def test_a_view_with_a_column_list_is_renamed_by_position():
    out = renamed("select a, b from raw.t", ["a", "b"], ["x", "y"])
    assert analyze(out, [InputSchema("raw.t", (("a", "int"), ("b", "int")))]).output_names == ("x", "y")


def test_why_a_view_is_not_inlined():
    assert why_not_inlined(STG) is None
    assert "RAND()" in why_not_inlined("select o_id, rand() as r from raw.orders")
    assert "non-deterministic" in why_not_inlined("select current_timestamp() as t, o_id from raw.orders")
    assert "uuid" in why_not_inlined("select uuid() as u from raw.orders").lower()
    assert why_not_inlined("select from where").startswith("its SQL cannot be parsed")
    assert why_not_inlined("select 1; select 2") == "its SQL is not one SELECT query"


def test_the_fingerprint_names_each_inlined_view_and_its_sql():
    before = (ViewUse("an.stg", "model stg (view)", STG), ViewUse("an.r", "model r (view)", "x", why_not="rand"))
    recorded = "abc;snapshots=raw.orders" + signature(before) + ";indexed="
    assert signature(before).startswith(";views=an.stg@") and "an.r" not in signature(before)
    assert changed_views(recorded, before) == []
    assert changed_views(recorded, (ViewUse("an.stg", "model stg (view)", STG + " and o_id > 1"),)) == ["an.stg"]
    assert changed_views(recorded, ()) == ["an.stg"]
    assert changed_views("abc;indexed=", before) == ["an.stg"]
