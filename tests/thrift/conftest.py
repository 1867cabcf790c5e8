"""The thrift tier: every test here runs through ONE real Spark Thrift Server (started once per
pytest session on 127.0.0.1, from the pip pyspark, with the embedded session's Iceberg/Hive/Derby
settings), with dbt-spark's ``method: thrift`` through the ``spark_ivm`` adapter.

The oracle harness (tests/functional/ivm/harness.py) is switched to the server for the tests of
this folder (``harness.set_backend``), so the same harness, batch generator and oracle run here.
"""

from __future__ import annotations

import os

import pytest

from tests.functional.ivm import harness

from .server import ThriftServer

# every test of this folder is in the thrift tier (`-m thrift` selects it, `-m "not thrift"` skips it)
THRIFT_DIR = os.path.dirname(os.path.abspath(__file__))


def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.fspath).startswith(THRIFT_DIR + os.sep):
            item.add_marker(pytest.mark.thrift)


def _require_pyhive():
    try:
        import pyhive.hive  # noqa: F401
        import thrift_sasl  # noqa: F401
    except ImportError as e:  # a missing client is an install problem, never a reason to skip the tier
        raise RuntimeError(
            f"the thrift tier needs dbt-spark's thrift client ({e}): pip install -e '.[test]' "
            "(the test extra pins dbt-spark[PyHive])"
        ) from e


@pytest.fixture(scope="session")
def thrift_server(tmp_path_factory):
    """The Spark Thrift Server of this pytest session; stopped (its whole process group) at the
    end of the session, whatever the tests did."""
    _require_pyhive()
    server = ThriftServer(str(tmp_path_factory.mktemp("spark_ivm_thrift")))
    try:
        server.start()
        rss = server.rss_bytes()
        print(
            f"\nthrift server: ready on {server.host}:{server.port} after {server.start_seconds:.1f}s "
            f"(metastore prepared in {server.prepare_seconds or 0:.1f}s of it), {rss / 2**30:.2f} GiB resident; "
            f"log {server.log_path}",
            flush=True,
        )
        yield server
    finally:
        if server.proc is not None:
            print(f"\nthrift server: {server.rss_bytes() / 2**30:.2f} GiB resident at the end of the tier", flush=True)
        server.stop()


@pytest.fixture(scope="module", autouse=True)
def thrift_harness_backend(thrift_server):
    """The oracle harness runs its SQL through the server while this folder's tests run."""
    from .backend import ThriftBackend

    backend = ThriftBackend(thrift_server.host, thrift_server.port)
    previous = harness.set_backend(backend)
    try:
        yield backend
    finally:
        harness.set_backend(previous)
        backend.close()


@pytest.fixture(scope="session")
def dbt_profile_target(thrift_server):
    # dbt-tests-adapter replaces `schema` with a unique schema per test class.
    return {
        "type": "spark_ivm",
        "method": "thrift",
        "host": thrift_server.host,
        "port": thrift_server.port,
        "schema": "analytics",
        "threads": 1,
        # dbt-spark sleeps poll_interval (default 5) s whenever a statement is still running after
        # the server's long poll (hive.server2.long.polling.timeout, 5 s) returned; the long poll
        # already waits, so poll again at once
        "poll_interval": 0,
    }


