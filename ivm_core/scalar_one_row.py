"""An uncorrelated scalar subquery that is not a global aggregate — a ``SELECT DISTINCT``, a
filter, a ``GROUP BY`` — and so returns at most one row only by its data (TPC-DS q06, q14, q54,
q58: ``d_month_seq = (SELECT DISTINCT d_month_seq FROM date_dim WHERE d_year = 2001 AND d_moy =
1)``). Spark's value of it is NULL over no rows, the row's value over one, and over more it
fails the query (``SCALAR_SUBQUERY_TOO_MANY_ROWS``). Its rows are counted by a global aggregate,
which also keeps their smallest value, the value when there is one row::

    (SELECT v FROM …)  =  CASE WHEN n > 1 THEN raise_error(TOO_MANY_ROWS) ELSE m END
                          over  R × γ_{; count(*) AS n, min(v) AS m}(Q)

``Q``: the subquery's rows, as it computes them (its own DISTINCT, GROUP BY, joins). The value
is computed in the derived table's one row, under the cross join (``subqueries``), so every
statement that reads it reads it through the ``CASE``: a run whose inputs give the subquery more
than one row fails with Spark's message, and, as any failed run, leaves every table as the last
commit left it (the driver rolls back what it wrote); a rebuild fails the same way. Over no rows
``n`` = 0 and ``m`` is NULL; over one, ``m`` is its value, of its type (``min`` of one value).
The value's type must be one ``min`` orders (not a map).

Not yet exact: Spark runs the subquery before the query, so its query fails even when the outer
query has no rows; here the ``CASE`` is evaluated where a statement reads the value, and a
statement that joins it with no outer row may skip it — a run over an empty outer side may then
succeed (its result empty, as the outer side is) where the recompute fails.
"""

from __future__ import annotations

from sqlglot import exp

# Spark's error over more than one row, with its error class (raise_error reports it as the message)
TOO_MANY_ROWS = "[SCALAR_SUBQUERY_TOO_MANY_ROWS] More than one row returned by a subquery used as an expression."
VALUE = "_ivm_v"


def counted(query: exp.Query, alias: str) -> exp.Select:
    """The derived table's query: the value of ``query`` (one column), checked, over its rows."""
    table = f"{alias}_rows"
    rows = exp.Subquery(this=query.copy(), alias=exp.TableAlias(this=exp.to_identifier(table),
                                                                columns=[exp.to_identifier(VALUE)]))
    n = exp.Count(this=exp.Star())
    value = exp.Case(
        ifs=[exp.If(this=exp.GT(this=n, expression=exp.Literal.number(1)),
                    true=exp.Anonymous(this="raise_error", expressions=[exp.Literal.string(TOO_MANY_ROWS)]))],
        default=exp.Min(this=exp.column(VALUE, table=table)),
    )
    return exp.select(value).from_(rows)
