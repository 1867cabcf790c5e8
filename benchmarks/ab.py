"""A/B of SQL statements in one warm Spark session, on the warehouse and the dbt log a benchmark
run left (`run.py`): for scripts that time a logged statement against variants of it.

    from ab import logged, time_rounds
    statement = logged("CREATE OR REPLACE TABLE `bench_ivm`.`order_revenue__agg0__groups`")
    times = time_rounds(generate.start_spark(), {"as built": statement, ...}, rounds=7)
"""
from __future__ import annotations

import os
import time
from typing import Any, Mapping

LOG_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "project", "logs", "dbt.log")


def logged(head: str) -> str:
    """The last statement in the benchmark's dbt log that starts with ``head``, up to the log's
    next line (which dbt starts with a colour escape)."""
    with open(LOG_FILE, errors="replace") as f:
        log = f.read()
    start = log.rfind(head)
    assert start >= 0, f"no statement {head!r} in {LOG_FILE}: run run.py first"
    return log[start:log.find("\x1b", start)]


def time_rounds(spark: Any, variants: Mapping[str, str], rounds: int) -> dict[str, list[float]]:
    """Seconds of each statement of ``variants`` (label -> SQL), run in turn ``rounds`` times in
    ``spark``, by label: every round runs each once, so the machine's drift spreads over all."""
    times: dict[str, list[float]] = {label: [] for label in variants}
    for _ in range(rounds):
        for label, statement in variants.items():
            started = time.time()
            spark.sql(statement).collect()
            times[label].append(time.time() - started)
    return times
