"""integration_tests/ end to end in its own process: one incremental_ivm model per supported
SQL construct, `dbt build` after the first load and after a random change batch of every table
(duplicates, NULLs, deletes, key updates). The driver exits non-zero
when a build failed, a model's `ivm_matches_full_refresh` test failed, or a model was not
refreshed incrementally."""

import os
import subprocess
import sys

import pytest

# CI leaves it out for its time limit (the oracle suites run every construct, the thrift tier's
# server and the killed dbt processes the generated-code path); IVM_FULL_TESTS=1 runs it
pytestmark = pytest.mark.skipif(os.environ.get("IVM_FULL_TESTS") != "1", reason="IVM_FULL_TESTS=1 runs it")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = os.path.join(REPO, "integration_tests", "run.py")
MODELS = len([f for f in os.listdir(os.path.join(REPO, "integration_tests", "models")) if f.endswith(".sql")])


def test_integration_project():
    env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    # one batch of all tables and no closing --full-refresh: the driver's default adds an empty
    # batch, one of orders only, one of all tables again and the full refresh, left out here for
    # CI time (each build is 2.5-3 min on a slow machine; the oracle suites run every construct
    # through a nasty batch or more, the chain suite an empty one, the recovery suite and the
    # thrift tier's sample project --full-refresh)
    proc = subprocess.run([sys.executable, DRIVER, "--batches", "1", "--no-full-refresh"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=env, timeout=1800, start_new_session=True)
    out = proc.stdout
    print(out[-4000:])
    assert proc.returncode == 0, f"integration_tests/run.py exited {proc.returncode}:\n{out[-12000:]}"
    # two builds (first, the batch), each running every model's test
    assert out.count(f"tests {{'pass': {MODELS}}}") == 2, out[-6000:]
