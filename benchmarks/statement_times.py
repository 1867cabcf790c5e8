"""Per-statement times of IVM models from a benchmark run's dbt.log, grouped by each statement's
first words and its table (the adapter logs `[ivm <model>] statement N took <s>s` after each one;
dbt overwrites the file on each run):

    python benchmarks/statement_times.py benchmarks/project/logs/dbt.log [model ...]

Without models: order_revenue and chain_orders. Statements of other kinds (DESCRIBE, the
observation) are not listed."""

from __future__ import annotations

import re
import sys

STATEMENT = re.compile(r"^(MERGE INTO|CREATE OR REPLACE TABLE|INSERT INTO|INSERT OVERWRITE|CACHE TABLE|DELETE FROM"
                       r"|SELECT inline|SELECT CAST)\s*(\S*)")
TOOK = re.compile(r"\[ivm (\w+)\] statement (\d+) took ([0-9.]+)s")
DEFAULT_MODELS = ("order_revenue", "chain_orders")


def statement_times(lines: list[str]) -> dict[tuple[str, str], list[float]]:
    """(model, statement kind and table) -> the times of each such statement, in log order."""
    out: dict[tuple[str, str], list[float]] = {}
    current = None
    for line in lines:
        started = STATEMENT.search(line)
        if started:
            current = f"{started.group(1)} {started.group(2)}"[:70]
        took = TOOK.search(line)
        if took and current:
            out.setdefault((took.group(1), current), []).append(float(took.group(3)))
            current = None
    return out


def main() -> None:
    models = sys.argv[2:] or DEFAULT_MODELS
    with open(sys.argv[1], errors="replace") as f:
        times = statement_times(f.read().splitlines())
    for (model, statement), seconds in sorted(times.items()):
        if model in models:
            print(f"{model:14} {statement:70} {' '.join(f'{t:.2f}' for t in seconds)}")


if __name__ == "__main__":
    main()
