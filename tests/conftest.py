"""Root conftest, shared by every suite (unit, functional, thrift, packaging).

pytest only accepts `pytest_plugins` in a top-level conftest, so dbt-tests-adapter's fixture
plugin is registered here; it only defines (non-autouse) fixtures and starts nothing. The
Spark-specific fixtures (`dbt_profile_target`, the per-process session_dir) live in
tests/functional/conftest.py, so unit tests never start a JVM.

`run.sh test` runs the suite in two pytest-xdist workers (`-n 2 --dist loadgroup
--no-loadscope-reorder`). Each worker is its own process with its own SparkSession and metastore;
a file's tests stay in one worker (its class-scoped dbt projects are built once), and the whole
thrift tier is one group (one Thrift Server). The groups are handed out in the order below, the
longest first (xdist would otherwise order them by their number of tests).
"""

import os

import pytest

pytest_plugins = ["dbt.tests.fixtures.project"]

TESTS = os.path.dirname(os.path.abspath(__file__))
# handed out first, in this order (the rest keep their collection order): the thrift tier is the
# longest group, the integration project the longest file
FIRST = ("thrift", os.path.join("functional", "test_integration_project.py"), "functional")


def _group(rel: str) -> str:
    return "thrift" if rel.startswith("thrift" + os.sep) else rel


def _rank(rel: str) -> int:
    return next((i for i, prefix in enumerate(FIRST) if rel == prefix or rel.startswith(prefix + os.sep)),
                len(FIRST))


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    relative = {item: os.path.relpath(str(item.fspath), TESTS) for item in items}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(name=_group(relative[item])))
    items.sort(key=lambda item: _rank(relative[item]))  # stable: a file's tests keep their order
