"""The embedded session's driver heap: sized from the machine's memory (``default_driver_memory``),
overridden by the profile's ``server_side_parameters: {spark.driver.memory: ...}``, and by what
PySpark's launcher reads last (``PYSPARK_SUBMIT_ARGS``); without Spark."""

import pytest

from dbt.adapters.spark_ivm.connections import (
    GiB,
    HEAP_KEY,
    MiB,
    SparkIvmCredentials,
    default_driver_memory,
    driver_memory,
    machine_memory,
    parse_memory,
)


@pytest.mark.parametrize(
    "total, heap",
    [
        (24683772 * 1024, "11g"),  # this machine's MemTotal (23.5 GiB)
        (32 * GiB, "16g"),
        (16 * GiB, "8g"),
        (8 * GiB, "4g"),  # half, and all but 4 GiB
        (6 * GiB, "2g"),  # all but 4 GiB for the OS, Python and the JVM's off-heap memory
        (4 * GiB, "1g"),  # Spark's own default is the least
        (2 * GiB, "1g"),
        (128 * GiB, "31g"),  # under 32 GiB: the JVM's compressed object pointers
        (None, "1g"),  # memory unknown: Spark's default
        (0, "1g"),
    ],
)
def test_the_default_heap_is_half_the_machine_within_bounds(total, heap):
    assert default_driver_memory(total) == heap


def test_this_machines_memory_is_read():
    total = machine_memory()
    with open("/proc/meminfo") as f:
        mem_total = int(next(line for line in f if line.startswith("MemTotal:")).split()[1]) * 1024
    assert total is not None and 0 < total <= mem_total
    assert parse_memory(default_driver_memory(total)) <= total // 2


@pytest.mark.parametrize(
    "value, size",
    [("8g", 8 * GiB), ("8G", 8 * GiB), ("4096m", 4 * GiB), ("512M", 512 * MiB), ("2048", 2 * GiB),
     ("1t", 1024 * GiB), ("3gb", 3 * GiB), ("1.5g", None), ("lots", None), ("", None)],
)
def test_memory_sizes_as_spark_reads_them(value, size):
    assert parse_memory(value) == size


def test_the_profile_overrides_the_default():
    assert driver_memory({HEAP_KEY: "6g"}, env={}, total=24 * GiB) == ("6g", "profile: server_side_parameters")
    assert driver_memory({}, env={}, total=24 * GiB) == ("12g", "default: half of the machine's 24.0 GiB")


def test_spark_driver_memory_env_is_kept_when_the_profile_says_nothing():
    env = {"SPARK_DRIVER_MEMORY": "5g"}
    assert driver_memory({}, env=env, total=24 * GiB) == ("5g", "SPARK_DRIVER_MEMORY")
    assert driver_memory({HEAP_KEY: "6g"}, env=env, total=24 * GiB)[0] == "6g"


@pytest.mark.parametrize(
    "submit_args",
    ["--driver-memory 3g pyspark-shell", "--driver-memory=3g pyspark-shell",
     "--conf spark.driver.memory=3g pyspark-shell", "--driver-memory 9g --conf spark.driver.memory=3g pyspark-shell"],
)
def test_pyspark_submit_args_win_as_the_launcher_reads_them_last(submit_args):
    # spark-submit gets the session's configuration first and PYSPARK_SUBMIT_ARGS after it: the
    # last value wins (checked: a 2g session under `--driver-memory 3g` got a 3 GiB heap)
    env = {"PYSPARK_SUBMIT_ARGS": submit_args}
    assert driver_memory({HEAP_KEY: "6g"}, env=env, total=24 * GiB) == ("3g", "PYSPARK_SUBMIT_ARGS")


def test_pyspark_submit_args_without_a_heap_change_nothing():
    env = {"PYSPARK_SUBMIT_ARGS": "--conf spark.ui.enabled=false pyspark-shell"}
    assert driver_memory({}, env=env, total=16 * GiB)[0] == "8g"


def test_the_session_is_configured_with_the_heap(tmp_path, monkeypatch):
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    monkeypatch.delenv("SPARK_DRIVER_MEMORY", raising=False)
    creds = SparkIvmCredentials.from_dict({"schema": "a", "session_dir": str(tmp_path)})
    assert creds.session_parameters()[HEAP_KEY] == default_driver_memory(machine_memory())
    creds = SparkIvmCredentials.from_dict(
        {"schema": "a", "session_dir": str(tmp_path), "server_side_parameters": {HEAP_KEY: "2g"}}
    )
    assert creds.session_parameters()[HEAP_KEY] == "2g"
    assert creds.driver_memory() == ("2g", "profile: server_side_parameters")


def test_a_heap_the_jvm_cannot_read_fails_before_a_jvm_is_launched(tmp_path, monkeypatch):
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    creds = SparkIvmCredentials.from_dict(
        {"schema": "a", "session_dir": str(tmp_path), "server_side_parameters": {HEAP_KEY: "lots"}}
    )
    with pytest.raises(Exception, match="'lots' .* is not a JVM memory size"):
        creds.driver_memory()
