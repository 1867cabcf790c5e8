"""Probes asked together (``statements.probes_sql``) answer exactly what each answers alone, and
the probes of one source and filter share one scan of it: run on DuckDB over random change
tables with NULL keys, zero weights and deletes, with the probes of several windows and tables
interleaved. A base's two nearest tags (``bookkeeping.tag_probe``, one scan of its refs), and the
rebuild's read of the one at or below a mark (``bookkeeping.base_tag``), are checked against the
tags themselves."""

from __future__ import annotations

import random

import pytest

from ivm_core import bookkeeping as bk
from ivm_core import statements as st
from tests.unit.duckdb_engine import connect, insert_rows, query

TABLES = ("a_changes", "b_changes")


def _tables(db, rnd):
    for table in TABLES:
        db.execute(f"CREATE OR REPLACE TABLE {table} (k BIGINT, j BIGINT, _ivm_weight BIGINT, _ivm_seq BIGINT)")
        rows = [(None if rnd.random() < 0.1 else rnd.randint(-20, 20), rnd.randint(0, 5),
                 rnd.choice([-2, -1, 0, 1, 1, 3]), rnd.randint(1, 6)) for _ in range(rnd.choice([0, 3, 40]))]
        insert_rows(db, table, rows)


def _random_probes(rnd):
    probes = []
    for i in range(rnd.randint(1, 8)):
        table = rnd.choice(TABLES)
        low, high = sorted(rnd.sample(range(0, 7), 2))
        kind = rnd.choice(["check", "keys", "deleted keys", "counts"])
        if kind == "check":
            probes.append(st.window_check(f"p{i}", table, None if rnd.random() < 0.2 else low, high))
        elif kind == "counts":
            probes.append(st.change_counts_probe(f"p{i}", table, high))
        else:
            probes.append(st.key_values(f"p{i}", table, rnd.choice("kj"), low, high, rnd.choice([2, 100]),
                                        deletes_only=kind == "deleted keys"))
    return probes


@pytest.mark.parametrize("seed", range(30))
def test_probes_together_answer_what_each_answers_alone(seed):
    rnd = random.Random(seed)
    db = connect()
    _tables(db, rnd)
    probes = _random_probes(rnd)
    alone = sorted(row for p in probes for row in query(db, p.sql))
    sql = st.probes_sql(probes)
    assert sorted(query(db, sql)) == alone
    scans = {(p.source, p.where) for p in probes}
    assert sum(sql.count(f"FROM {table}\n") for table in TABLES) == len(scans)


@pytest.mark.parametrize("seed", range(20))
def test_tag_probes_find_the_nearest_tags_in_one_scan(seed):
    rnd = random.Random(seed)
    db = connect()
    db.execute("CREATE SCHEMA base")
    db.execute("CREATE TABLE base.refs (name VARCHAR, type VARCHAR, snapshot_id BIGINT)")
    tagged = sorted(rnd.sample(range(1, 30), rnd.choice([0, 1, 5])))
    refs = [(f"ivm_seq_{s}", "TAG", 1000 + s) for s in tagged]
    refs += [("main", "BRANCH", 7), ("ivm_seq_x", "TAG", 8), ("release", "TAG", 9), ("ivm_seq_40", "BRANCH", 10)]
    insert_rows(db, "base.refs", refs)
    mark = rnd.choice(tagged) if tagged and rnd.random() < 0.5 else rnd.randint(0, 31)  # a tag's own mark too
    sql = st.probes_sql([bk.tag_probe("at", "base", mark, above=False), bk.tag_probe("above", "base", mark, above=True)])
    assert sql.count("FROM base.refs") == 1
    rows = {row[0]: (row[4], row[5]) for row in query(db, sql)}
    at = max((s for s in tagged if s <= mark), default=None)
    above = min((s for s in tagged if s > mark), default=None)
    assert rows["at"] == ((str(1000 + at), str(at)) if at is not None else (None, None))
    assert rows["above"] == ((str(1000 + above), str(above)) if above is not None else (None, None))
    # a rebuild's position read: the same tag at or below the mark, no row when there is none
    assert query(db, bk.base_tag("raw.t", "base", mark)) == ([("raw.t", 1000 + at, at)] if at is not None else [])
