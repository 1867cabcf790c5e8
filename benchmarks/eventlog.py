"""Where a refresh's time goes, from a Spark event log (`run.py --event-log DIR` writes one).

Per SQL statement Spark executed (in order): its execution time, its Spark jobs, and per job
its tasks, their summed run time, and the rows and bytes they read — the numbers that show a
statement's fixed cost (jobs, planning gaps before the first job) and whether its reads follow
the change. The statement is named by the first operator of its physical plan and the tables
it scans or writes.

    python benchmarks/eventlog.py benchmarks/.eventlog/local-1795482246105
    python benchmarks/eventlog.py <log> --match q3_join_agg      # statements touching a table
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

_TABLES = re.compile(
    r"(?:BatchScan|AppendData|OverwriteByExpression|OverwritePartitionsDynamic|ReplaceData|WriteDelta)"
    r"[^\n]*?spark_catalog\.([\w.]+)"
)


@dataclass
class Stage:
    tasks: int = 0
    task_ms: int = 0
    rows: int = 0
    bytes: int = 0


@dataclass
class Job:
    start: int
    execution: Optional[int]
    stages: List[int]
    end: int = 0


@dataclass
class Statement:
    label: str
    start: int
    end: int = 0
    root: Optional[int] = None
    jobs: List[int] = field(default_factory=list)


def read(path: str):
    statements: Dict[int, Statement] = {}
    jobs: Dict[int, Job] = {}
    stages: Dict[int, Stage] = {}
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            kind = e["Event"]
            if kind.endswith("SQLExecutionStart"):
                plan = e.get("physicalPlanDescription", "")
                lines = plan.split("\n")
                first = (lines[1] if len(lines) > 1 else plan).strip()
                tables = sorted(set(_TABLES.findall(plan)))
                statements[e["executionId"]] = Statement(
                    f"{first[:60]} {','.join(tables)}", e["time"], root=e.get("rootExecutionId"))
            elif kind.endswith("SQLExecutionEnd"):
                statements[e["executionId"]].end = e["time"]
            elif kind == "SparkListenerJobStart":
                execution = e.get("Properties", {}).get("spark.sql.execution.id")
                jobs[e["Job ID"]] = Job(e["Submission Time"], int(execution) if execution else None,
                                        [s["Stage ID"] for s in e["Stage Infos"]])
            elif kind == "SparkListenerJobEnd":
                jobs[e["Job ID"]].end = e["Completion Time"]
            elif kind == "SparkListenerTaskEnd":
                stage = stages.setdefault(e["Stage ID"], Stage())
                metrics = e.get("Task Metrics") or {}
                info = e["Task Info"]
                stage.tasks += 1
                stage.task_ms += info["Finish Time"] - info["Launch Time"]
                stage.rows += metrics.get("Input Metrics", {}).get("Records Read", 0)
                stage.bytes += metrics.get("Input Metrics", {}).get("Bytes Read", 0)
    for job_id, job in sorted(jobs.items()):
        statement = statements.get(job.execution) if job.execution is not None else None
        if statement is None:
            continue
        root = statements.get(statement.root) if statement.root is not None else None
        (root or statement).jobs.append(job_id)
    return statements, jobs, stages


def report(path: str, match: Optional[str] = None) -> str:
    statements, jobs, stages = read(path)
    out = []
    for execution, s in sorted(statements.items()):
        if s.root not in (None, execution) or (match and match not in s.label):
            continue
        out.append(f"{(s.end - s.start) / 1000:6.2f}s {len(s.jobs):3d} jobs  {s.label}")
        for job_id in s.jobs:
            job = jobs[job_id]
            ran = [stages[i] for i in job.stages if i in stages]
            tasks = sum(x.tasks for x in ran)
            took, at = (job.end - job.start) / 1000, (job.start - s.start) / 1000
            out.append(f"        job {job_id}: {took:.2f}s at +{at:.2f}s, {tasks} tasks "
                       f"{sum(x.task_ms for x in ran)} ms, {sum(x.rows for x in ran)} rows "
                       f"{sum(x.bytes for x in ran) // 1024} KiB read")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", help="a Spark event log file")
    parser.add_argument("--match", help="only statements whose plan names this (a table, an operator)")
    args = parser.parse_args()
    print(report(args.log, args.match))


if __name__ == "__main__":
    main()
