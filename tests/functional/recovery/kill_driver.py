"""Child process of test_ivm_kill.py: set up the project's inputs, apply change batches,
run dbt and compare the models with a full recompute. Runs in its own process because the
embedded Derby metastore admits one process at a time."""

import random
import sys
from collections import Counter

from dbt.cli.main import dbtRunner

SCHEMA = "kill_shop"
MODELS = {
    "customer_totals": (
        "select c.name, count(*) as n, sum(o.amount) as total, max(o.amount) as biggest "
        "from {s}.orders o join {s}.customers c on o.c_id = c.c_id group by c.name"
    ),
    "big_customers": "select t.name, t.total from {s}.customer_totals t where t.n > 1",
}


def dbt(project: str, *args: str) -> bool:
    result = dbtRunner().invoke(list(args) + ["--project-dir", project, "--profiles-dir", project])
    return result.success


def spark():
    from pyspark.sql import SparkSession

    return SparkSession.builder.getOrCreate()


def apply_batch(seed: int, seq: int) -> None:
    s = spark()
    rng = random.Random(seed)
    orders = [tuple(r) for r in s.sql(f"SELECT o_id, c_id, amount FROM {SCHEMA}.orders").collect()]
    rows = []
    for _ in range(rng.randint(2, 6)):
        rows.append((rng.randint(1, 99), rng.randint(1, 4), rng.randint(1, 50), 1))
    for o in rng.sample(orders, min(len(orders), rng.randint(1, 4))):
        rows.append((*o, -1))
    values = ", ".join(f"({o}, {c}, CAST({a} AS DECIMAL(10,2)), {w}, {seq})" for o, c, a, w in rows)
    s.sql(f"INSERT INTO {SCHEMA}.orders_changes VALUES {values}")
    if rng.random() < 0.5:
        cid = rng.randint(1, 4)
        s.sql(
            f"INSERT INTO {SCHEMA}.customers_changes SELECT c_id, name, -1, {seq} FROM {SCHEMA}.customers "
            f"WHERE c_id = {cid} UNION ALL SELECT {cid}, 'renamed{seq}', 1, {seq}"
        )
    for table, cols in (("orders", "o_id, c_id, amount"), ("customers", "c_id, name")):
        s.sql(
            f"INSERT OVERWRITE {SCHEMA}.{table} SELECT {cols} FROM (SELECT {cols}, sum(_ivm_weight) AS w "
            f"FROM {SCHEMA}.{table}_changes GROUP BY {cols} HAVING sum(_ivm_weight) > 0) "
            "LATERAL VIEW explode(sequence(1, w)) x AS i"
        )


def compare() -> list[str]:
    s = spark()
    problems = []
    for name, sql in MODELS.items():
        expected = Counter(tuple(r) for r in s.sql(sql.format(s=SCHEMA)).collect())
        actual = Counter(tuple(r) for r in s.sql(f"SELECT * FROM {SCHEMA}.{name}").collect())
        if expected != actual:
            problems.append(f"{name}: expected-only {expected - actual}, target-only {actual - expected}")
    return problems


def committed() -> int:
    """customer_totals' last committed sequence (its log)."""
    return int(spark().sql(f"SELECT max(seq) FROM {SCHEMA}_ivm.customer_totals__log "
                           "WHERE status = 'committed'").collect()[0][0])


def main(project: str, command: str, *batch: str) -> None:
    if command == "setup":
        assert dbt(project, "debug")
        s = spark()
        s.sql(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        s.sql(f"CREATE TABLE {SCHEMA}.orders_changes (o_id INT, c_id INT, amount DECIMAL(10,2), _ivm_weight BIGINT, _ivm_seq BIGINT) USING iceberg")
        s.sql(f"CREATE TABLE {SCHEMA}.customers_changes (c_id INT, name STRING, _ivm_weight BIGINT, _ivm_seq BIGINT) USING iceberg")
        s.sql(f"CREATE TABLE {SCHEMA}.orders (o_id INT, c_id INT, amount DECIMAL(10,2)) USING iceberg")
        s.sql(f"CREATE TABLE {SCHEMA}.customers (c_id INT, name STRING) USING iceberg")
        s.sql(f"INSERT INTO {SCHEMA}.customers_changes VALUES (1, 'ann', 1, 1), (2, 'bob', 1, 1), (3, 'cy', 1, 1), (4, 'dee', 1, 1)")
        apply_batch(0, 1)
        ok = dbt(project, "run")
        sys.exit(0 if ok and not compare() else 1)
    elif command == "recover":  # recover (a plain dbt run), compare, then write the next batch
        ok = dbt(project, "run")
        problems = compare() if ok else ["dbt run failed after the kill"]
        if problems:
            print("\n".join(problems))
            sys.exit(1)
        apply_batch(int(batch[0]), int(batch[1]))
        print(f"committed={committed()}")
        sys.exit(0)
    elif command == "committed":  # after a kill: what customer_totals had committed
        assert dbt(project, "debug")  # (the session, on the project's metastore)
        print(f"committed={committed()}")
        sys.exit(0)


if __name__ == "__main__":  # imported by test_ivm_kill.py for its names only
    main(*sys.argv[1:])
