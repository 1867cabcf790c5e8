"""Fixtures for tests that run dbt against the embedded Spark session.

All functional tests of one pytest process share ONE SparkSession (and so one Derby metastore:
Derby allows a single process per metastore). Every pytest process gets its own session_dir,
so concurrent pytest runs never share a metastore.
"""

import os

import pytest

# dbt-tests-adapter's fixtures (`project`, ...) are registered in tests/conftest.py:
# pytest refuses `pytest_plugins` in a non-top-level conftest.

# Spark warns and probes the network when the hostname resolves to loopback.
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
# A worker's session runs the whole suite's statements, its cached stages and Iceberg metadata
# in one JVM: with Spark's default 1 GiB heap its old generation was full after ~13 min of CI
# and GC took 6 % of its CPU (jstat). Every JVM PySpark launches here (and in the dbt
# subprocesses of some tests) gets 3 GiB.
os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--driver-memory 3g pyspark-shell")


@pytest.fixture(scope="session")
def spark_ivm_session_dir(tmp_path_factory):
    """The warehouse + metastore directory of this pytest process."""
    return str(tmp_path_factory.mktemp("spark_ivm_session"))


# The two workers' own sessions evaluate expressions interpreted, without generated code: the
# suite's tables hold a few rows, and compiling each new statement's Java code (Janino, and its
# class lookups over every jar) was the JVM's largest CPU cost (19 % of a profile of the chain
# suite). The chain and oracle suites in two workers, as CI runs them: 441 s and 874 CPU-s with
# code generation, 335 s and 663 CPU-s without. Every IVM result is still checked against
# Spark's full recompute under the same settings, and the default path (generated code) runs
# wherever a test starts Spark of its own: the thrift tier's server (its oracle, race and sample
# project), the integration project and the killed dbt processes (test_ivm_kill.py).
INTERPRETED = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}


@pytest.fixture(scope="session")
def dbt_profile_target(spark_ivm_session_dir):
    # dbt-tests-adapter replaces `schema` with a unique schema per test.
    return {
        "type": "spark_ivm",
        "method": "session",
        "schema": "analytics",
        "session_dir": spark_ivm_session_dir,
        "threads": 1,
        "server_side_parameters": dict(INTERPRETED),
    }


@pytest.fixture(scope="class")
def project_config_update():
    """dbt_project.yml for each test project: the oracle tests check the delta rules, so under
    ``ivm_policy: auto`` no run trades its change for a rebuild on cost (a stalled machine could
    make an incremental run look slow); ``test_ivm_cost.py`` sets ``ivm_rebuild_min_saving`` on its
    models to test that rule. A class that defines its own keeps the adapter's default."""
    return {"models": {"+ivm_rebuild_min_saving": 1e9}}
