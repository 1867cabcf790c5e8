"""benchmarks/run.py printing, after each `dbt run` it makes, how many classes Spark's code generator
compiled during it and how long the compiles took (Janino's time; ``Dbt.compiled`` counts them):

    .venv/bin/python benchmarks/results/sf1_rebuilds_codegen/codegen_probe.py --sf 1 --no-scale \
        --no-merge --shape rf --batches empty --rebuilds 4 --groups order_revenue,chain --out <dir>

The lines it prints start with CODEGEN. Any run.py argument works."""
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
import run as bench  # noqa: E402  (benchmarks/run.py)

plain_run = bench.Dbt.run


def run_counting_compiles(self, select, full_refresh=False):
    result = plain_run(self, select, full_refresh)  # counts them (``Dbt.compiled``) since 60f9952
    seconds = {name: round(node["seconds"], 2) for name, node in result["nodes"].items()}
    print(f"CODEGEN {select} fr={full_refresh}: compiles {result['classes']}, "
          f"compile {result['compiling']:.2f}s, nodes {seconds}", flush=True)
    return result


bench.Dbt.run = run_counting_compiles
sys.exit(bench.main(sys.argv[1:]))
