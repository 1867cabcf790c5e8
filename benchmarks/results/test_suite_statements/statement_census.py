"""Where the embedded test suites' time goes, by kind of statement: the ``[ivm <model>] statement N
took Xs`` lines of every ``dbt.log`` under a logs directory (dbt-tests-adapter writes one per test
class under ``logs/``), each attributed to the SQL logged before it (the timer includes fetching).

    .venv/bin/python benchmarks/results/test_suite_statements/statement_census.py logs
"""

import collections
import glob
import re
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LOG_LINE = re.compile(r"^\d\d:\d\d:\d\d\.\d+ \[")
TOOK = re.compile(r"\[ivm [^\]]+\] statement \d+ took ([0-9.]+)s")


def kind(sql: str) -> str:
    first = sql.split("\n")[0]
    words = sql.split()
    if ".snapshots AS s CROSS JOIN" in sql:
        return "maintenance census (.snapshots of the model's tables)"
    if "'snapshot' AS kind" in sql:
        return "commit: snapshot ids and row counts"
    if words[:1] == ["CALL"]:
        return "CALL " + first.split("(")[0].split(".")[-1]
    if re.match(r"INSERT INTO \S+__log", first):
        return "INSERT the log entry"
    if "__lock" in first:
        return "lock: " + words[0]
    if words[:1] == ["CACHE"]:
        return "CACHE TABLE"
    if words and words[0] in ("INSERT", "MERGE", "DELETE", "CREATE"):
        table = re.search(r"`[^`]*`\.`([^`]*)`", first)
        what = table.group(1).split("__")[1] if table and "__" in table.group(1) else "target"
        return f"{' '.join(words[:2] if words[0] != 'MERGE' else words[:1])} -> {re.sub(r'[0-9]+$', '', what)}"
    if words[:1] == ["SELECT"]:
        return "SELECT validation" if "raise_error" in sql else "SELECT other"
    return " ".join(words[:2])


def census(logs: str):
    total, count = collections.Counter(), collections.Counter()
    for path in glob.glob(f"{logs}/*/dbt.log"):
        sql, lines = None, None
        for raw in open(path, errors="replace"):
            line = ANSI.sub("", raw.rstrip("\n"))
            if not LOG_LINE.match(line):
                if lines is not None:
                    lines.append(line)
                continue
            if lines is not None:
                sql, lines = "\n".join(lines), None
            took = TOOK.search(line)
            if took and sql:
                total[kind(sql)] += float(took.group(1))
                count[kind(sql)] += 1
                sql = None
            if "On model." in line and line.rstrip().endswith("*/"):
                lines = []
    return total, count


if __name__ == "__main__":
    total, count = census(sys.argv[1] if len(sys.argv) > 1 else "logs")
    print(f"statements: {sum(count.values())}, {sum(total.values()) / 60:.1f} min")
    for k, v in total.most_common(25):
        print(f"{v / 60:6.2f} min {count[k]:6d} x {v / count[k]:.3f} s  {k}")
