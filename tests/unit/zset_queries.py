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
            + AGGREGATE_SHAPES + ["outer", "window"]
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
        return draw(st.sampled_from([
            "SELECT r.a, s.c, r.b FROM db.r AS r JOIN db.s AS s ON r.b = s.b AND r.a < s.c",
            "SELECT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b WHERE s.c = 1 OR r.a = 2",
        ]))
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
    if shape in AGGREGATE_SHAPES:
        return draw(st.sampled_from(AGGREGATE_QUERIES[shape]))
    if shape == "outer":
        return draw(outer_join_queries())
    if shape == "window":
        return draw(window_queries())
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


AGGREGATE_QUERIES = {
    "group": [
        "SELECT r.a, count(*) AS n, sum(r.b) AS s, min(r.b) AS lo, max(r.b) AS hi FROM db.r AS r GROUP BY r.a",
        "SELECT r.a, count(r.b) AS n, count(DISTINCT r.b) AS d, sum(DISTINCT r.b) AS sd FROM db.r AS r GROUP BY r.a",
        "SELECT r.b + 1 AS k, sum(CASE WHEN r.a > 1 THEN r.a ELSE 0 END) AS s FROM db.r AS r GROUP BY r.b + 1",
        "SELECT r.a, count(*) FILTER (WHERE r.b > 1) AS n, max(r.b) FILTER (WHERE r.b < 3) AS m FROM db.r AS r GROUP BY r.a",
        "SELECT r.a, r.b + 1 AS k, count(*) AS n, max(r.b) AS m FROM db.r AS r GROUP BY ALL",
    ],
    "having": [
        "SELECT r.a, count(*) AS n FROM db.r AS r GROUP BY r.a HAVING count(*) > 1",
        "SELECT r.a, sum(r.b) AS s FROM db.r AS r GROUP BY r.a HAVING sum(r.b) >= 2 OR max(r.b) IS NULL",
    ],
    "global": [
        "SELECT count(*) AS n, sum(r.b) AS s, min(r.a) AS lo, count(DISTINCT r.a) AS d FROM db.r AS r",
        "SELECT count(*) AS n, max(s.c) AS m FROM db.r AS r JOIN db.s AS s ON r.b = s.b WHERE r.a > 0",
        "SELECT count(*) AS n, sum(r.a) AS s FROM db.r AS r GROUP BY ALL",
    ],
    "distinct": [
        "SELECT DISTINCT r.b FROM db.r AS r",
        "SELECT DISTINCT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b",
        "SELECT r.a FROM db.r AS r GROUP BY r.a",
    ],
    "setop": [
        "SELECT r.a FROM db.r AS r UNION SELECT s.c FROM db.s AS s",
        "SELECT r.a FROM db.r AS r INTERSECT SELECT s.c FROM db.s AS s",
        "SELECT r.a FROM db.r AS r EXCEPT SELECT s.c FROM db.s AS s",
        "SELECT r.a FROM db.r AS r INTERSECT ALL SELECT s.c FROM db.s AS s",
        "SELECT r.a FROM db.r AS r EXCEPT ALL SELECT s.c FROM db.s AS s",
    ],
    "agg_join": [
        "SELECT r.a, s.c, g.n FROM db.r AS r JOIN db.s AS s ON r.b = s.b "
        "JOIN (SELECT t.c, count(*) AS n FROM db.t AS t GROUP BY t.c) AS g ON g.c = s.c",
        "SELECT r.a, r.b FROM db.r AS r JOIN (SELECT max(s.c) AS m FROM db.s AS s) AS g ON r.b > g.m",
        "SELECT s.b, count(*) AS n, sum(r.a) AS total FROM db.r AS r JOIN db.s AS s ON r.b = s.b GROUP BY s.b",
    ],
    "nested": [
        "SELECT q.n, count(*) AS groups FROM (SELECT r.a, count(*) AS n FROM db.r AS r GROUP BY r.a) AS q GROUP BY q.n",
        "SELECT DISTINCT q.s FROM (SELECT r.a, sum(r.b) AS s FROM db.r AS r GROUP BY r.a) AS q",
    ],
}
# COUNT_IF, BOOL_AND/BOOL_OR, the variances and standard deviations, AVG(DISTINCT), grouped and global
AGGREGATE_QUERIES["statistics"] = [
    "SELECT r.a, count_if(r.b > 1) AS n, bool_and(r.b > 0) AS all_pos, bool_or(r.b = 2) AS some_two "
    "FROM db.r AS r GROUP BY r.a",
    "SELECT r.a, var_pop(r.b) AS vp, var_samp(r.b) AS vs, stddev_pop(r.b) AS sp, stddev_samp(r.b) AS ss, "
    "stddev(r.b) AS sd FROM db.r AS r GROUP BY r.a",
    "SELECT count_if(r.a = r.b) AS n, bool_or(r.a > 2) AS big, var_samp(r.a) AS v, avg(DISTINCT r.b) AS ad "
    "FROM db.r AS r",
    "SELECT r.a, avg(DISTINCT r.b) AS ad, avg(r.b) AS av, count(DISTINCT r.b) AS cd FROM db.r AS r GROUP BY r.a",
    "SELECT s.b, variance(r.a + s.c) AS v, bool_and(r.a IS NULL) AS none FROM db.r AS r JOIN db.s AS s "
    "ON r.b = s.b GROUP BY s.b",
]
# MIN_BY/MAX_BY: ties on the ordering are frequent here (values 0-3): the tied pairs' order decides. Not
# among the random models: DuckDB, which checks their plans, breaks ties its own way (test_order_aggregates.py)
BY_ORDERING_QUERIES = [
    "SELECT r.a, min_by(r.b, r.a + r.b) AS lo, max_by(r.b, r.b) AS hi FROM db.r AS r GROUP BY r.a",
    "SELECT s.c, max_by(r.a, s.b) AS latest, min_by(s.b, r.a) AS first, count(*) AS n "
    "FROM db.r AS r JOIN db.s AS s ON r.b = s.b GROUP BY s.c",
    "SELECT max_by(r.a, r.b) AS m, min_by(r.a, r.b) AS lo FROM db.r AS r",
]
# ROLLUP, CUBE, GROUPING SETS (no set listed twice: DuckDB, the other engine, lists it once)
AGGREGATE_QUERIES["grouping_sets"] = [
    "SELECT r.a, r.b, count(*) AS n, sum(r.b) AS s FROM db.r AS r GROUP BY ROLLUP (r.a, r.b)",
    "SELECT r.a, s.c, count(*) AS n, grouping(s.c) AS gc, max(r.b) AS m FROM db.r AS r JOIN db.s AS s "
    "ON r.b = s.b GROUP BY CUBE (r.a, s.c)",
    "SELECT r.a, r.b, count(DISTINCT r.b) AS d FROM db.r AS r GROUP BY GROUPING SETS ((r.a), (r.b), ()) "
    "HAVING count(*) > 1",
    "SELECT r.a, r.b, min(r.b) AS lo, grouping(r.a) AS ga FROM db.r AS r GROUP BY r.a, ROLLUP (r.b)",
    "SELECT r.a + 1 AS k, sum(r.a) AS s FROM db.r AS r WHERE r.b IS NOT NULL GROUP BY r.a + 1 WITH ROLLUP",
]
# the model's result is the aggregate, with count(*), COUNT and SUM only: the target holds the group
# state (rules/aggregate/held.py) while every group's SUMs have no NULL value, else keeps it apart
AGGREGATE_QUERIES["held"] = [
    "SELECT r.a, sum(r.b) AS total, count(*) AS n, count(r.b) AS nb FROM db.r AS r GROUP BY r.a",
    "SELECT s.c, r.a, count(*) AS n, sum(r.b) AS sb, sum(s.c) AS sc FROM db.r AS r JOIN db.s AS s ON r.b = s.b "
    "GROUP BY s.c, r.a",
    "SELECT t.d + 1 AS k, count(*) AS n, sum(t.c * 2) AS s2 FROM db.t AS t WHERE t.c IS NULL OR t.c > 0 "
    "GROUP BY t.d + 1",
]
AGGREGATE_SHAPES = sorted(AGGREGATE_QUERIES)

OUTER_JOIN_QUERIES = [
    "SELECT r.a, s.c FROM db.r AS r LEFT JOIN db.s AS s ON r.b = s.b",
    "SELECT r.a, s.c FROM db.r AS r LEFT JOIN db.s AS s ON r.b = s.b AND s.c > 0 WHERE r.a IS NOT NULL",
    "SELECT r.a, s.c FROM db.r AS r LEFT OUTER JOIN db.s AS s ON r.b = s.b AND r.a < 2",
    "SELECT r.a, s.c FROM db.r AS r LEFT JOIN db.s AS s ON r.b = s.b WHERE s.c IS NULL",
    "SELECT r.a, s.b, s.c FROM db.r AS r RIGHT JOIN db.s AS s ON r.b = s.b",
    "SELECT r.a, s.b, s.c FROM db.r AS r RIGHT JOIN db.s AS s ON r.b = s.b WHERE r.a > 0 OR s.c = 1",
    "SELECT r.a, s.c, t.d FROM db.r AS r JOIN db.s AS s ON r.b = s.b RIGHT JOIN db.t AS t ON s.c = t.c WHERE r.a <> 1",
    "SELECT s.c, t.d FROM db.s AS s RIGHT JOIN db.t AS t ON s.c = t.c AND s.b > 0 WHERE t.d > 0",
    "SELECT r.a, r.b, s.b AS sb, s.c FROM db.r AS r FULL OUTER JOIN db.s AS s ON r.b = s.b",
    "SELECT r.a, s.c FROM db.r AS r FULL JOIN db.s AS s ON r.b = s.b AND r.a <= s.c",
    "SELECT r.a, s.c, t.d FROM db.r AS r LEFT JOIN db.s AS s ON r.b = s.b LEFT JOIN db.t AS t ON s.c = t.c",
    "SELECT r.a, s.c, t.d FROM db.r AS r JOIN db.s AS s ON r.b = s.b LEFT JOIN db.t AS t ON s.c = t.c AND t.d <> r.a",
    "SELECT r.a, t.d FROM db.r AS r LEFT JOIN db.s AS s ON r.b = s.b JOIN db.t AS t ON coalesce(s.c, 0) = t.c",
    "SELECT r.a, s.c, t.d FROM db.r AS r, db.s AS s LEFT JOIN db.t AS t ON s.c = t.c WHERE r.b = s.b",
    "SELECT x.a, y.a AS a2 FROM db.r AS x LEFT JOIN db.r AS y ON x.b = y.b AND x.a < y.a",
    "SELECT r.a FROM db.r AS r LEFT SEMI JOIN db.s AS s ON r.b = s.b",
    "SELECT b, r.a, s.c FROM db.r AS r FULL JOIN db.s AS s USING (b)",
    "SELECT b, r.a, s.c FROM db.r AS r NATURAL LEFT JOIN db.s AS s",
    "SELECT r.a, r.b FROM db.r AS r LEFT ANTI JOIN db.s AS s ON r.b = s.b AND s.c > 1",
    "SELECT r.a, count(s.c) AS n, count(*) AS m FROM db.r AS r LEFT JOIN db.s AS s ON r.b = s.b GROUP BY r.a",
    "SELECT DISTINCT s.c FROM db.r AS r RIGHT JOIN db.s AS s ON r.b = s.b WHERE r.a IS NULL",
    "SELECT q.a, q.n, t.d FROM (SELECT r.a, count(s.c) AS n FROM db.r AS r LEFT JOIN db.s AS s ON r.b = s.b "
    "GROUP BY r.a) AS q LEFT JOIN db.t AS t ON q.n = t.c",
]

SUBQUERY_QUERIES = [
    "SELECT r.a FROM db.r AS r WHERE EXISTS (SELECT * FROM db.s AS s WHERE s.b = r.b AND s.c > 0)",
    "SELECT r.a, r.b FROM db.r AS r WHERE NOT EXISTS (SELECT 1 FROM db.s AS s WHERE s.b = r.b)",
    "SELECT r.a FROM db.r AS r WHERE r.a IN (SELECT s.c FROM db.s AS s)",
    "SELECT r.a FROM db.r AS r WHERE r.a NOT IN (SELECT s.c FROM db.s AS s)",
    "SELECT r.a FROM db.r AS r WHERE r.a NOT IN (SELECT s.c FROM db.s AS s WHERE s.c IS NOT NULL AND s.b = 1)",
    "SELECT r.a FROM db.r AS r WHERE (r.a, r.b) IN (SELECT t.c, t.d FROM db.t AS t)",
    "SELECT r.a FROM db.r AS r WHERE (r.a, r.b) NOT IN (SELECT t.c, t.d FROM db.t AS t)",
    "SELECT r.a FROM db.r AS r WHERE r.a IN (SELECT s.c FROM db.s AS s WHERE s.b = r.b)",
    "SELECT r.a FROM db.r AS r WHERE r.a NOT IN (SELECT s.c FROM db.s AS s WHERE s.b = r.b)",
    "SELECT r.b, count(*) AS n FROM db.r AS r WHERE r.a > 0 AND NOT EXISTS "
    "(SELECT * FROM db.s AS s WHERE s.b = r.b AND s.c <> r.a) GROUP BY r.b",
    "SELECT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b "
    "WHERE EXISTS (SELECT * FROM db.t AS t WHERE t.c = s.c AND t.d > r.a) AND NOT EXISTS "
    "(SELECT * FROM db.r AS r2 WHERE r2.b = r.b AND r2.a <> r.a)",
    "SELECT r.a FROM db.r AS r WHERE EXISTS (SELECT * FROM db.s AS s WHERE s.c > 2)",
    "SELECT r.a FROM db.r AS r WHERE EXISTS (SELECT 1 FROM db.s AS s WHERE r.a = 1)",
    "SELECT r.a FROM db.r AS r WHERE r.b IN (SELECT s.b FROM db.s AS s WHERE s.c IN (SELECT t.c FROM db.t AS t))",
    "SELECT r.a FROM db.r AS r WHERE r.a IN (SELECT s.c FROM db.s AS s UNION ALL SELECT t.d FROM db.t AS t)",
    "SELECT r.a FROM db.r AS r LEFT JOIN db.s AS s ON r.b = s.b "
    "WHERE s.c IS NULL AND r.a NOT IN (SELECT t.d FROM db.t AS t WHERE t.c = r.b)",
    "SELECT DISTINCT r.b FROM db.r AS r WHERE r.b IN (SELECT s.b FROM db.s AS s WHERE s.c = r.a OR s.c IS NULL)",
    # scalar subqueries
    "SELECT r.a FROM db.r AS r WHERE r.a > (SELECT avg(s.c) FROM db.s AS s)",
    "SELECT r.a, r.b FROM db.r AS r WHERE r.b = (SELECT max(s.b) FROM db.s AS s WHERE s.c > 0) OR r.a IS NULL",
    "SELECT r.a, (SELECT count(*) FROM db.s AS s WHERE s.c = 1) AS n FROM db.r AS r",
    "SELECT r.a, (SELECT max(s.c) FROM db.s AS s WHERE s.b = r.b) AS m FROM db.r AS r",
    "SELECT sum(r.a) AS x, count(*) AS n FROM db.r AS r WHERE r.a < (SELECT 2 * avg(s.c) FROM db.s AS s "
    "WHERE s.b = r.b)",
    "SELECT r.a FROM db.r AS r WHERE coalesce((SELECT min(s.c) FROM db.s AS s WHERE s.b = r.b), -1) < 1",
    "SELECT r.a FROM db.r AS r WHERE r.b IN (SELECT s.b FROM db.s AS s WHERE s.c > "
    "(SELECT 2 * sum(t.d) FROM db.t AS t WHERE t.c = s.c))",
    "SELECT r.a FROM db.r AS r WHERE r.a + 1 > (SELECT sum(s.c) FROM db.s AS s WHERE s.b = r.b + 1 AND r.a = s.b)",
    # a correlated EXISTS whose own WHERE compares with an aggregate (its own subquery, Q20's and Q21's shape)
    "SELECT r.a FROM db.r AS r WHERE EXISTS (SELECT 1 FROM db.s AS s WHERE s.b = r.b "
    "AND s.c > (SELECT avg(t.d) FROM db.t AS t))",
    "SELECT r.a, r.b FROM db.r AS r WHERE NOT EXISTS (SELECT 1 FROM db.s AS s WHERE s.b = r.b "
    "AND s.c >= (SELECT max(t.d) FROM db.t AS t WHERE t.c = s.c))",
    "SELECT r.a FROM db.r AS r WHERE NOT r.b <> (SELECT min(s.b) FROM db.s AS s WHERE s.c = r.a)",
    # correlated scalar subqueries over COUNT: 0 for a row no group matches (the count bug, scalar_count.py)
    "SELECT r.a FROM db.r AS r WHERE r.a < (SELECT count(*) FROM db.s AS s WHERE s.b = r.b)",
    "SELECT r.a, r.b FROM db.r AS r WHERE (SELECT count(*) FROM db.t AS t WHERE t.c = r.a AND t.d > 0) = 0",
    "SELECT r.a, (SELECT count(s.c) + 1 FROM db.s AS s WHERE s.b = r.b AND s.c > 0) AS n FROM db.r AS r",
    "SELECT r.a, (SELECT coalesce(sum(s.c), 0) * 10 + count(DISTINCT s.c) FROM db.s AS s WHERE s.b = r.b) AS n "
    "FROM db.r AS r",
    # TPC-DS q41: the correlation repeated in each disjunct of an OR (factored out), a count compared with 0
    "SELECT DISTINCT r.b FROM db.r AS r WHERE r.a >= 0 AND (SELECT count(*) AS cnt FROM db.s AS s "
    "WHERE (s.b = r.b AND s.c > 1) OR (s.b = r.b AND (s.c IS NULL OR s.c = 0))) > 0",
    # subqueries in HAVING
    "SELECT r.b, sum(r.a) AS x FROM db.r AS r GROUP BY r.b HAVING sum(r.a) > (SELECT avg(s.c) FROM db.s AS s)",
    "SELECT r.b, count(*) AS n FROM db.r AS r GROUP BY r.b HAVING r.b IN (SELECT s.b FROM db.s AS s) AND count(*) > 1",
    "SELECT DISTINCT max(r.b) AS m FROM db.r AS r GROUP BY r.a "
    "HAVING coalesce(max(r.b), 0) >= (SELECT min(s.c) FROM db.s AS s WHERE s.b = 1)",
    # IN over distinct rows (an inner join): TPC-H Q18's shape, DISTINCT, two columns; and a
    # GROUP BY whose keys are not all selected (rows may repeat: stays a semi join)
    "SELECT r.a, sum(r.b) AS x FROM db.r AS r WHERE r.a IN "
    "(SELECT s.b FROM db.s AS s GROUP BY s.b HAVING sum(s.c) > 1) GROUP BY r.a",
    "SELECT r.a, r.b FROM db.r AS r WHERE r.b IN (SELECT DISTINCT s.c FROM db.s AS s WHERE s.b > 0)",
    "SELECT r.a FROM db.r AS r WHERE (r.a, r.b) IN (SELECT t.c, t.d FROM db.t AS t GROUP BY t.d, t.c)",
    "SELECT r.a FROM db.r AS r WHERE r.a IN (SELECT t.c FROM db.t AS t GROUP BY t.c, t.d)",
]

# DuckDB makes (a, b) NOT IN (…) unknown when any value in the subquery is NULL; SQL and Spark
# (sql-tests not-in-unit-tests-multi-column.sql, case 5) return a row with one NULL column and no
# match. The Spark oracle suite checks this form (test_ivm_outer_joins.py).
DUCKDB_DIVERGES = {"SELECT r.a FROM db.r AS r WHERE (r.a, r.b) NOT IN (SELECT t.c, t.d FROM db.t AS t)"}


def subquery_queries(engine: str = "any"):
    return st.sampled_from([q for q in SUBQUERY_QUERIES if engine != "duckdb" or q not in DUCKDB_DIVERGES])


def outer_join_queries():
    return st.sampled_from(OUTER_JOIN_QUERIES)


def aggregate_queries():
    """One of the aggregate models, each as likely as any other."""
    return st.sampled_from([q for shape in AGGREGATE_SHAPES for q in AGGREGATE_QUERIES[shape]])

# Window functions. Rows a ROW_NUMBER, LAG or ROWS frame orders as ties are identical rows, so
# every engine (and the in-memory definition) gives the same bag; RANK, DENSE_RANK and RANGE
# frames treat ties as peers.
WINDOW_QUERIES = [
    "SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b DESC) AS rn FROM db.r AS r",
    "SELECT q.a, q.b FROM (SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b) AS rn "
    "FROM db.r AS r) AS q WHERE q.rn = 1",
    "SELECT r.a, r.b, rank() OVER (PARTITION BY r.a ORDER BY r.b) AS k, "
    "dense_rank() OVER (PARTITION BY r.a ORDER BY r.b DESC) AS dk FROM db.r AS r",
    "SELECT r.a, r.b, sum(r.b) OVER (PARTITION BY r.a ORDER BY r.b) AS run, count(*) OVER (PARTITION BY r.a) AS n "
    "FROM db.r AS r WHERE r.b IS NULL OR r.b < 3",
    "SELECT r.a, r.b, lag(r.b) OVER (PARTITION BY r.a ORDER BY r.b) AS prev, "
    "lead(r.b, 1, -1) OVER (PARTITION BY r.a ORDER BY r.b) AS nxt FROM db.r AS r",
    "SELECT r.a, r.b, sum(r.b) OVER (PARTITION BY r.a ORDER BY r.b ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s2 "
    "FROM db.r AS r",
    "SELECT r.a, s.c, count(*) OVER (PARTITION BY s.c) AS n, max(r.a) OVER (PARTITION BY r.b) AS m "
    "FROM db.r AS r JOIN db.s AS s ON r.b = s.b",
    "SELECT r.a, sum(r.b) AS s, rank() OVER (PARTITION BY coalesce(r.a, 0) > 1 ORDER BY sum(r.b) DESC) AS k "
    "FROM db.r AS r GROUP BY r.a",
    "WITH w AS (SELECT s.b, s.c, row_number() OVER (PARTITION BY s.b ORDER BY s.c) AS rn FROM db.s AS s) "
    "SELECT r.a, w.c FROM db.r AS r JOIN w ON r.b = w.b WHERE w.rn = 1",
    "SELECT DISTINCT r.a, max(r.b) OVER (PARTITION BY r.a) AS m, min(r.b) OVER (PARTITION BY r.a, r.b) AS lo "
    "FROM db.r AS r",
    # the partition key not in the output: the window keeps its rows (rules.window), not the target
    "SELECT r.b, rank() OVER (PARTITION BY r.a ORDER BY r.b) AS k FROM db.r AS r",
    # a window's child over two inputs (rules.window_result reads both after the change)
    "SELECT u.x, u.y, dense_rank() OVER (PARTITION BY u.x ORDER BY u.y DESC) AS k FROM "
    "(SELECT r.a AS x, r.b AS y FROM db.r AS r WHERE r.b IS NOT NULL UNION ALL SELECT s.b, s.c FROM db.s AS s) AS u",
    # top rows kept by the target (rules.window_result)
    "SELECT q.b, q.a, q.k FROM (SELECT r.a, r.b, rank() OVER (PARTITION BY r.a ORDER BY r.b DESC NULLS LAST) AS k "
    "FROM db.r AS r) AS q WHERE q.k <= 2",
    "SELECT q.x, q.y FROM (SELECT u.x, u.y, dense_rank() OVER (PARTITION BY u.x ORDER BY u.y) AS k FROM "
    "(SELECT r.a AS x, r.b AS y FROM db.r AS r UNION ALL SELECT s.b, s.c FROM db.s AS s) AS u) AS q WHERE q.k < 3",
    # a second filter term over a dedup
    "SELECT q.a, q.b FROM (SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b) AS rn "
    "FROM db.r AS r) AS q WHERE q.rn = 1 AND q.b IS NOT NULL",
    # top-2 per group over a join: the window keeps its rows
    "SELECT q.a, q.c FROM (SELECT r.a, s.c, row_number() OVER (PARTITION BY r.a ORDER BY s.c) AS rn "
    "FROM db.r AS r JOIN db.s AS s ON r.b = s.b) AS q WHERE q.rn <= 2",
]


def window_queries():
    return st.sampled_from(WINDOW_QUERIES)
