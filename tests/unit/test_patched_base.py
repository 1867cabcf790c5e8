"""An input read from its base at a tag plus the changes above it (``statements.patched``), run
on DuckDB over random bases and change windows with duplicates and NULLs: the pieces are all of
positive weight (a bag can be made of them by repeating rows) and sum, row by row, to the base
plus the window — the input a rebuild from the whole history would see."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from ivm_core import statements as st
from tests.unit.duckdb_engine import connect, insert_rows, query

VALUES = [None, 0, 1, 2, 3]


def _row(rnd):
    return (rnd.choice(VALUES), rnd.choice(VALUES))


def _case(seed):
    """A base bag and a change window that deletes only rows the base (or the window) holds."""
    rnd = random.Random(seed)
    base = [_row(rnd) for _ in range(rnd.choice([0, 1, 5, 30]))]
    changes = []
    present = Counter(base)
    for seq in range(4, 4 + rnd.randint(1, 3)):
        for _ in range(rnd.choice([0, 1, 4, 12])):
            if present and rnd.random() < 0.5:
                row = rnd.choice(sorted(present, key=repr))
                weight = -rnd.randint(1, present[row])
            else:
                row, weight = _row(rnd), rnd.randint(1, 3)
            present[row] += weight
            present += Counter()  # drop rows at zero
            changes.append((*row, weight, seq))
    return base, changes


def _tables(base, name, extra, rows):
    """A DuckDB with the table ``base`` (a, b) and the table ``name`` (a, b, *extra)."""
    db = connect()
    for table, columns, content in (("base", (), base), (name, extra, rows)):
        db.execute(f"CREATE TABLE {table} ({', '.join(f'{c} BIGINT' for c in ('a', 'b', *columns))})")
        insert_rows(db, table, content)
    return db


@pytest.mark.parametrize("columns", [["a", "b"], ["a"], []])
@pytest.mark.parametrize("seed", range(60))
def test_patched_pieces_sum_to_the_base_plus_the_window(columns, seed):
    base, changes = _case(seed)
    db = _tables(base, "t_changes", ("_ivm_weight", "_ivm_seq"), changes)
    window = st.consolidated_changes("t_changes", columns, 3, 9)
    pieces = query(db, st.patched(st.weighted_rows("base", columns), window, columns))

    assert all(piece[-1] > 0 for piece in pieces)
    got: Counter = Counter()
    for *row, weight in pieces:
        got[tuple(row)] += weight
    expected: Counter = Counter()
    for row in base:
        expected[tuple(row[i] for i, c in enumerate("ab") if c in columns)] += 1
    for *row, weight, _ in changes:
        expected[tuple(row[i] for i, c in enumerate("ab") if c in columns)] += weight
    assert all(w >= 0 for w in expected.values())
    assert got == +expected


@pytest.mark.parametrize("seed", range(30))
def test_a_window_deleting_rows_the_base_lacks_is_counted(seed):
    """The rebuild's check (``negative_after`` of the window against the base's rows) counts
    exactly the rows whose multiplicity the window would take below zero."""
    rnd = random.Random(seed)
    base = [_row(rnd) for _ in range(rnd.choice([0, 3, 10]))]
    window = Counter()
    for _ in range(rnd.randint(1, 8)):
        window[_row(rnd)] += rnd.choice([-2, -1, 1])
    window = Counter({r: w for r, w in window.items() if w})
    db = _tables(base, "w", ("_ivm_weight",), [(*r, k) for r, k in window.items()])
    rows = f"({st.weighted_rows('base', ['a', 'b'])})"
    ((bad,),) = query(db, st.negative_after("SELECT * FROM w", rows, ["a", "b"]))
    have = Counter(base)
    assert bad == sum(1 for r, k in window.items() if have[r] + k < 0)


def test_nearest_base_tag_as_the_refs_lookup_chooses():
    """A base's ``ivm_seq_<s>`` tags read from the catalog (``bk.base_tag_seq``) and the tag a run
    reads it at (``bk.nearest_tag``): the greatest ``s <= mark``, or the least ``s > mark``
    (the SQL over ``.refs``, ``bk.tag_probe``, is compared with it on Spark in test_session)."""
    from ivm_core import bookkeeping as bk

    assert [bk.base_tag_seq(n) for n in ("ivm_seq_12", "ivm_seq_", "ivm_seq_1x", "xivm_seq_1", "ivm_seq_" + "9" * 19)] \
        == [12, None, None, None, None]
    tags = {3: 30, 7: 70, 12: 120}
    assert [bk.nearest_tag(tags, m, above=False) for m in (2, 3, 6, 7, 99)] == [None, (30, 3), (30, 3), (70, 7),
                                                                                (120, 12)]
    assert [bk.nearest_tag(tags, m, above=True) for m in (2, 3, 11, 12)] == [(30, 3), (70, 7), (120, 12), None]
    assert bk.nearest_tag({}, 5, above=False) is None
