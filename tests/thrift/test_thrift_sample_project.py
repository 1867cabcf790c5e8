"""The sample shop project end to end through the Spark Thrift Server: `run_demo.py --host`
(seed the shop tables through the server, dbt build, change batches each followed by dbt build,
dbt build --full-refresh) in its own process, with dbt's `method: thrift`. Every model carries
`ivm_matches_full_refresh`; the demo exits non-zero when any dbt command failed. The demo's
first two batches (new orders, cancellations and updates; the empty one): its other two (deletes,
join-key updates) run the same statements through the server, for CI time."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(REPO, "sample_project", "run_demo.py")
TIMEOUT = 1500
MODELS = 10


def test_sample_project_through_thrift(thrift_server, tmp_path):
    env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    proc = subprocess.run(
        [sys.executable, DEMO, "--host", thrift_server.host, "--port", str(thrift_server.port),
         "--work-dir", str(tmp_path), "--batches", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=TIMEOUT,
        start_new_session=True,
    )
    out = proc.stdout
    table = out[out.rfind("incremental_ivm demo"):] if "incremental_ivm demo" in out else out[-6000:]
    print("\n" + table, flush=True)
    assert proc.returncode == 0, f"run_demo.py exited {proc.returncode}:\n{out[-12000:]}"
    assert "every model matched its full recompute" in out
    # every model's test ran in each of the four builds, all passed (the timing table's detail)
    assert table.count(f"tests {MODELS} pass") >= 4, table
