"""Golden fixtures of the SQL a refresh composes beside the compiled plan: its bookkeeping
statements (log, lock, capture, rollback: ``ivm_core.bookkeeping``) and the relations its
leaves read (``ivm_core.statements``). A diff here is a change in what runs on Spark: review
it, then regenerate with ``UPDATE_GOLDEN=1 pytest tests/unit/test_bookkeeping_sql.py``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ivm_core import bookkeeping as bk
from ivm_core import statements as st

GOLDEN = Path(__file__).parent / "golden"
LOG, LOCK, TARGET, CHANGES = "`s_ivm`.`m__log`", "`s_ivm`.`m__lock`", "`s`.`m`", "`s_ivm`.`m__changes`"


def render_bookkeeping() -> str:
    statements = [
        bk.create_schema("`s_ivm`"),
        bk.create_log(LOG),
        bk.create_lock(LOCK),
        bk.read_log(LOG),
        bk.insert_log_entry(LOG, ["8", "'committed'", "'incremental'", "NULL", "'fp'", "'{}'",
                                  f"({bk.current_snapshot(TARGET)})", "3", "1", "'[]'", "'select 1'",
                                  bk.json_map([("s.m", f"({bk.current_snapshot(TARGET)})")]), "current_timestamp()",
                                  "'{}'"]),
        bk.union_all([
            bk.capture_change_table("raw.orders", "`raw`.`orders_changes`"),
            bk.capture_upstream("s.up", "`s_ivm`.`up__log`"),
            bk.capture_snapshot("s.m", TARGET),
            bk.capture_row_count("s_ivm.m__index__raw__orders", "`s_ivm`.`m__index__raw__orders`"),
            bk.capture_live_rows("s.m", TARGET),
            bk.capture_lock(LOCK),
        ]),
        bk.upstream_target_snapshot("s.up", "`s_ivm`.`up__log`", 7),
        bk.read_lock(LOCK),
        bk.take_lock(LOCK, None, "host:1:abc", 8, 1700000000),
        bk.take_lock(LOCK, ("host:2:o'ld", 7), "host:1:abc", 8, 1700000000),
        bk.release_lock(LOCK, "host:1:abc"),
        bk.roll_back(TARGET, 42),
        bk.pinned(TARGET, 42),
        bk.live_rows(TARGET),
        bk.cache_table("`_ivm_x_agg0`", "SELECT 1"),
        bk.drop_view("`_ivm_x_agg0`"),
        bk.describe_query("SELECT 1"),
        bk.empty_like(TARGET),
        bk.delete_changes_after(CHANGES, 7),
        bk.zset_of("`s_ivm`.`m__index__raw__orders`", ["id", "weird `name`"]),
        bk.json_map([]),
        bk.describe_table(TARGET),
        bk.all_rows(TARGET),
    ]
    return "\n;\n".join(statements) + "\n"


def render_relations() -> str:
    cols = ["id", "weird `name`"]
    index = "`s_ivm`.`m__index__raw__orders` VERSION AS OF 42"
    statements = [
        st.filtered("<zset>", "`id` > 3"),
        st.counted("`s`.`up` VERSION AS OF 42", cols),
        st.counted("`s`.`up`", []),
        st.empty_input("`raw`.`orders_changes`", cols),
        st.aliased("<delta>", "_ivm_delta"),
        st.index_after_change(index, st.aliased("<delta>", "_ivm_delta"), cols),
        st.copies_as("<zset>", ["c0", "c1"], [("id", "int"), ("weird `name`", "decimal(10,2)")]),
        st.differing_rows("s.m", "<stored>", "<expected>"),
    ]
    return "\n;\n".join(statements) + "\n"


CASES = {"bookkeeping.sql": render_bookkeeping, "relations.sql": render_relations}


@pytest.mark.parametrize("fixture", sorted(CASES))
def test_sql_matches_golden(fixture):
    text = CASES[fixture]()
    path = GOLDEN / fixture
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"missing golden file {path}: run with UPDATE_GOLDEN=1"
    assert text == path.read_text()
