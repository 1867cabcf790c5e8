"""integration_tests/ end to end in its own process: one incremental_ivm model per supported
SQL construct, `dbt build` after the first load, after each random change batch (duplicates,
NULLs, deletes, key updates; an empty batch; a batch of one table) and after
`--full-refresh`. The driver exits non-zero when a build failed, a model's
`ivm_matches_full_refresh` test failed, or a model was not refreshed incrementally."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = os.path.join(REPO, "integration_tests", "run.py")
MODELS = len([f for f in os.listdir(os.path.join(REPO, "integration_tests", "models")) if f.endswith(".sql")])


def test_integration_project():
    env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    # two batches (all tables, then empty): the driver's default adds one of orders only and one
    # of all tables again, left out here for CI time (each build is about 2.3 min here)
    proc = subprocess.run([sys.executable, DRIVER, "--batches", "2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env, timeout=1800, start_new_session=True)
    out = proc.stdout
    print(out[-4000:])
    assert proc.returncode == 0, f"integration_tests/run.py exited {proc.returncode}:\n{out[-12000:]}"
    # four builds (first, two batches, full refresh), each running every model's test
    assert out.count(f"tests {{'pass': {MODELS}}}") == 4, out[-6000:]
