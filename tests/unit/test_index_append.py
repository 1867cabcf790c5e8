"""A join index takes a change window appended (``statements.append_to_state``), run on DuckDB
over random indexes of pieces (a row held in several appended pieces, duplicates, NULLs) and
random windows: the index gains the window exactly when no row would be left with a negative
multiplicity, and is left as it was, with the ABSENT_ROWS error, otherwise."""

from __future__ import annotations

import random
from collections import Counter

import duckdb
import pytest

from ivm_core import statements as st
from ivm_core.errors import ABSENT_ROWS
from tests.unit.duckdb_engine import connect, execute, insert_rows, query

VALUES = [None, 0, 1, 2]


def _row(rnd, width):
    return tuple(rnd.choice(VALUES) for _ in range(width))


def _case(seed, width):
    """Pieces of an index (each row's pieces sum to a positive multiplicity) and a window: one
    row per distinct row with its net weight; deletes mostly of rows held, at times more."""
    rnd = random.Random(seed)
    held: Counter = Counter()
    for _ in range(rnd.choice([0, 2, 8, 20])):
        held[_row(rnd, width)] += rnd.randint(1, 3)
    pieces = []
    for row, n in held.items():
        split = rnd.randint(0, n - 1) if n > 1 else 0
        pieces += [(*row, w) for w in (split, n - split) if w]
        if rnd.random() < 0.2:  # a piece that cancels: +1 then -1 of the same row
            pieces += [(*row, 1), (*row, -1)]
    window: Counter = Counter()
    for _ in range(rnd.choice([1, 3, 8])):
        if held and rnd.random() < 0.6:
            row = rnd.choice(sorted(held, key=repr))
            window[row] -= rnd.randint(1, held[row] + (1 if rnd.random() < 0.2 else 0))
        else:
            window[_row(rnd, width)] += rnd.choice([-1, 1, 2])
    return held, pieces, Counter({r: w for r, w in window.items() if w})


def _contents(db) -> Counter:
    net: Counter = Counter()
    for *row, weight in query(db, "SELECT * FROM idx"):
        net[tuple(row)] += weight
    return +net


@pytest.mark.parametrize("width", [1, 3])
@pytest.mark.parametrize("seed", range(60))
def test_an_append_refuses_exactly_the_windows_that_delete_absent_rows(width, seed):
    held, pieces, window = _case(seed, width)
    columns = ["a", "b", "c"][:width]
    db = connect()
    for name, content in (("idx", pieces), ("w", [(*r, k) for r, k in window.items()])):
        db.execute(f"CREATE TABLE {name} ({', '.join(f'{c} BIGINT' for c in columns)}, _ivm_weight BIGINT)")
        insert_rows(db, name, content)
    db.execute("CREATE TABLE idx_before AS SELECT * FROM idx")
    absent = any(held[r] + k < 0 for r, k in window.items())

    statement = st.append_to_state("idx", "SELECT * FROM w", columns, "(SELECT * FROM idx_before)")
    if absent:
        with pytest.raises(duckdb.Error, match=ABSENT_ROWS):
            execute(db, statement)
        assert _contents(db) == +held
    else:
        execute(db, statement)
        assert _contents(db) == _summed(held, window)


def _summed(held: Counter, window: Counter) -> Counter:
    net = Counter(held)
    for row, k in window.items():
        net[row] += k
    return +net
