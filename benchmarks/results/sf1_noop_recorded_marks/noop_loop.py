"""Empty-batch (`noop`) refreshes of the benchmark's Q1- and Q3-like models, in one process:
a `dbt run --full-refresh` of both (its commit records what the next runs compare with), then
N runs that find nothing to do; prints each model's execute times (the first two dropped from
the median: the JVM compiles the new plan shapes). Runs over the warehouse `benchmarks/run.py`
left (`--groups q1_agg,q3_join_agg`). A/B: put another checkout first on PYTHONPATH.

    N=20 .venv/bin/python benchmarks/results/sf1_noop_recorded_marks/noop_loop.py
"""
import os
import statistics

from dbt.cli.main import dbtRunner

import dbt.adapters.spark_ivm as adapter

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "project"))
print("code", adapter.__file__)
runner = dbtRunner()
select = ["--select", "q1_agg", "q3_join_agg"]
assert runner.invoke(["-q", "run", "--full-refresh"] + select).success
times: dict = {}
for _ in range(int(os.environ.get("N", "10"))):
    for result in runner.invoke(["-q", "run"] + select).result.results:
        assert result.adapter_response.get("mode") == "noop", result.adapter_response
        times.setdefault(result.node.name, []).append(result.execution_time)
for name, seconds in times.items():
    kept = seconds[2:]
    print(f"{name} median {statistics.median(kept):.3f} min {min(kept):.3f} max {max(kept):.3f}",
          [round(x, 3) for x in seconds])
