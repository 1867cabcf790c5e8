"""What ``dbt debug`` prints for a profile (``Credentials.connection_info``): for the embedded
session, what it runs on — the Iceberg jar, the catalog, the warehouse and the metastore — as the
session will be configured (a profile's server_side_parameters win); for the cluster methods,
dbt-spark's keys only."""

from __future__ import annotations

import os

from dbt.adapters.spark_ivm.connections import SparkIvmCredentials, iceberg_jar_path


def _info(**profile) -> dict:
    return dict(SparkIvmCredentials.from_dict(profile).connection_info())


def test_the_embedded_session_shows_what_it_runs_on(tmp_path):
    info = _info(method="session", schema="s", session_dir=str(tmp_path))
    assert info["method"] == "session" and info["session_dir"] == str(tmp_path)
    assert info["iceberg_jar"] == iceberg_jar_path() and os.path.isfile(info["iceberg_jar"])
    assert info["catalog"] == "spark_catalog = org.apache.iceberg.spark.SparkSessionCatalog (type hive)"
    assert info["warehouse"] == os.path.join(str(tmp_path), "warehouse")
    assert os.path.join(str(tmp_path), "metastore_db") in info["metastore"]


def test_a_profile_override_is_what_debug_shows(tmp_path):
    info = _info(method="session", schema="s", session_dir=str(tmp_path),
                 server_side_parameters={"spark.sql.catalog.spark_catalog.type": "hadoop",
                                         "spark.sql.warehouse.dir": "/data/wh"})
    assert info["catalog"].endswith("(type hadoop)")
    assert info["warehouse"] == "/data/wh"


def test_a_cluster_profile_shows_dbt_sparks_keys():
    info = _info(method="thrift", schema="s", host="spark.example", port=10000)
    assert info["host"] == "spark.example"
    assert not {"iceberg_jar", "catalog", "warehouse", "metastore", "driver_memory"} & set(info)


def test_debug_shows_the_driver_heap_and_where_it_comes_from(tmp_path, monkeypatch):
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    monkeypatch.delenv("SPARK_DRIVER_MEMORY", raising=False)
    from dbt.adapters.spark_ivm.connections import default_driver_memory, machine_memory

    info = _info(method="session", schema="s", session_dir=str(tmp_path))
    heap = default_driver_memory(machine_memory())
    assert info["driver_memory"].startswith(f"{heap} (default: half of the machine's ")
    info = _info(method="session", schema="s", session_dir=str(tmp_path),
                 server_side_parameters={"spark.driver.memory": "6g"})
    assert info["driver_memory"] == "6g (profile: server_side_parameters)"
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-memory 3g pyspark-shell")
    info = _info(method="session", schema="s", session_dir=str(tmp_path),
                 server_side_parameters={"spark.driver.memory": "6g"})
    assert info["driver_memory"] == "3g (PYSPARK_SUBMIT_ARGS)"


def test_debug_says_when_the_heap_is_no_size(tmp_path, monkeypatch):
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    info = _info(method="session", schema="s", session_dir=str(tmp_path),
                 server_side_parameters={"spark.driver.memory": "lots"})
    assert "is not a JVM memory size" in info["driver_memory"]
