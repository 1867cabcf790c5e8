"""Random models over three small tables, for the property tests of ivm_core."""

from __future__ import annotations

from hypothesis import strategies as st

from ivm_core.analyzer import InputSchema

TABLES = {
    "db.r": ("a", "b"),
    "db.s": ("b", "c"),
    "db.t": ("c", "d"),
}
SCHEMAS = [InputSchema(k, tuple((c, "INT") for c in cols)) for k, cols in TABLES.items()]
VALUES = st.one_of(st.none(), st.integers(0, 3))


def _pred(alias: str, col: str, draw) -> str:
    return draw(
        st.sampled_from(
            [
                f"{alias}.{col} > 0",
                f"{alias}.{col} <= 2",
                f"{alias}.{col} IS NOT NULL",
                f"({alias}.{col} = 1 OR {alias}.{col} IS NULL)",
                f"coalesce({alias}.{col}, 0) <> 2",
            ]
        )
    )


@st.composite
def queries(draw) -> str:
    shape = draw(
        st.sampled_from(
            ["filter", "join2", "join2_nonequi", "chain3", "star3", "self", "union", "cte", "subquery", "comma"]
        )
    )
    where = draw(st.booleans())
    if shape == "filter":
        sql = "SELECT r.a + 1 AS x, CASE WHEN r.b > 1 THEN r.a ELSE r.b END AS y FROM db.r AS r"
        return sql + (f" WHERE {_pred('r', 'a', draw)}" if where else "")
    if shape == "join2":
        sql = "SELECT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b"
        return sql + (f" WHERE {_pred('s', 'c', draw)}" if where else "")
    if shape == "join2_nonequi":
        return "SELECT r.a, s.c, r.b FROM db.r AS r JOIN db.s AS s ON r.b = s.b AND r.a < s.c"
    if shape == "chain3":
        sql = "SELECT r.a, t.d FROM db.r AS r JOIN db.s AS s ON r.b = s.b JOIN db.t AS t ON s.c = t.c"
        return sql + (f" WHERE {_pred('r', 'a', draw)}" if where else "")
    if shape == "star3":
        return (
            "SELECT s.b, r.a, t.d FROM db.s AS s JOIN db.r AS r ON r.b = s.b "
            "JOIN db.t AS t ON t.c = s.c AND t.d <> r.a"
        )
    if shape == "self":
        sql = "SELECT x.a AS a1, y.a AS a2 FROM db.r AS x JOIN db.r AS y ON x.b = y.b"
        return sql + (" WHERE x.a <= y.a" if where else "")
    if shape == "union":
        return (
            "SELECT r.a AS k, r.b AS v FROM db.r AS r WHERE r.a > 0 "
            "UNION ALL SELECT s.c, s.b FROM db.s AS s"
            + (" UNION ALL SELECT t.d, t.c FROM db.t AS t WHERE t.d IS NOT NULL" if where else "")
        )
    if shape == "cte":
        return (
            "WITH j AS (SELECT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b) "
            "SELECT j.a, j.c, t.d FROM j JOIN db.t AS t ON j.c = t.c"
        )
    if shape == "subquery":
        return (
            "SELECT q.a, q.bb FROM (SELECT r.a, r.b * 2 AS bb FROM db.r AS r WHERE r.a IS NOT NULL) AS q "
            "JOIN db.s AS s ON q.bb = s.c"
        )
    # comma join, condition in WHERE
    return "SELECT r.a, s.c FROM db.r AS r, db.s AS s WHERE r.b = s.b AND s.c > 0"


@st.composite
def bags(draw, columns: int, max_rows: int = 6) -> dict[tuple, int]:
    rows = draw(st.lists(st.tuples(*([VALUES] * columns)), max_size=max_rows))
    out: dict[tuple, int] = {}
    for r in rows:
        out[r] = out.get(r, 0) + draw(st.integers(1, 2))
    return out


@st.composite
def changes(draw, old: dict[tuple, int], columns: int) -> dict[tuple, int]:
    """Inserts, deletes of existing rows and updates (delete + insert)."""
    delta: dict[tuple, int] = {}
    for row, weight in old.items():
        if draw(st.integers(0, 3)) == 0:
            delta[row] = -draw(st.integers(1, weight))
    for row, weight in draw(bags(columns, 4)).items():
        delta[row] = delta.get(row, 0) + weight
    return {r: w for r, w in delta.items() if w != 0}
