"""Per-statement times of IVM models from a dbt.log (`[ivm <model>] statement N took`), grouped by
the statement's first words: `python benchmarks/statement_times.py benchmarks/project/logs/dbt.log
[model ...]` (default: order_revenue and chain_orders). dbt.log is overwritten by each benchmark run."""
import re, sys
lines = open(sys.argv[1], errors="replace").read().splitlines()
cur = None
out = {}
for ln in lines:
    m = re.search(r"^(MERGE INTO|CREATE OR REPLACE TABLE|INSERT INTO|INSERT OVERWRITE|CACHE TABLE|DELETE FROM|SELECT inline|SELECT CAST)\s*(\S*)", ln)
    if m:
        cur = (m.group(1) + " " + m.group(2))[:70]
    m = re.search(r"\[ivm (\w+)\] statement (\d+) took ([0-9.]+)s", ln)
    if m and cur:
        out.setdefault((m.group(1), cur), []).append(float(m.group(3)))
        cur = None
for (model, stmt), ts in sorted(out.items()):
    if model in sys.argv[2:] or (len(sys.argv) < 3 and model in ("order_revenue", "chain_orders")):
        print(f"{model:14} {stmt:70} {' '.join(f'{t:.2f}' for t in ts)}")
