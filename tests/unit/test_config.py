"""A model's ``ivm_*`` configs: defaults, accepted values, and refusals that name the model, the
config and the value (``refresh/config.parse_config``)."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.refresh.config import DEFAULT_SPARK_CONF, ignored_layout_configs, parse_config


STORED_VIEWS = ("spark.sql.legacy.storeAnalyzedPlanForView", "true")


def test_spark_conf_defaults_to_adaptive_execution_off_and_views_keeping_their_plan():
    config = parse_config("m", {}, catalog_is_exclusive=True)
    assert config.spark_conf == tuple(DEFAULT_SPARK_CONF.items()) == (("spark.sql.adaptive.enabled", "false"),
                                                                      STORED_VIEWS)


def test_spark_conf_takes_a_mapping_of_plain_values_laid_over_the_defaults():
    config = parse_config("m", {"ivm_spark_conf": {"spark.sql.adaptive.enabled": True,
                                                   "spark.sql.shuffle.partitions": 4}}, True)
    assert config.spark_conf == (("spark.sql.adaptive.enabled", "true"), STORED_VIEWS,
                                 ("spark.sql.shuffle.partitions", "4"))
    assert parse_config("m", {"ivm_spark_conf": {}}, True).spark_conf == (("spark.sql.adaptive.enabled", "false"),
                                                                          STORED_VIEWS)
    config = parse_config("m", {"ivm_spark_conf": {"spark.sql.shuffle.partitions": 4}}, True)
    assert config.spark_conf == (("spark.sql.adaptive.enabled", "false"), STORED_VIEWS,
                                 ("spark.sql.shuffle.partitions", "4"))


@pytest.mark.parametrize("value", [
    "spark.sql.adaptive.enabled=false",  # not a mapping
    {"spark.sql.adaptive.enabled": "false; DROP TABLE t"},  # not a plain value: no statement smuggled into SET
    {"spark.sql.x y": "1"},  # not a setting name
    {"spark.sql.x": None},
])
def test_spark_conf_refuses_anything_else_naming_model_and_config(value):
    with pytest.raises(DbtRuntimeError) as e:
        parse_config("orders_daily", {"ivm_spark_conf": value}, True)
    assert "orders_daily" in str(e.value) and "ivm_spark_conf" in str(e.value)


def test_maintenance_defaults_and_values():
    config = parse_config("m", {}, True)
    assert (config.maintenance_every, config.snapshot_retention) == (50, 3600)
    config = parse_config("m", {"ivm_maintenance_every": 0, "ivm_snapshot_retention": 0}, True)
    assert (config.maintenance_every, config.snapshot_retention) == (0, 0)


@pytest.mark.parametrize("key, value", [
    ("ivm_maintenance_every", -1), ("ivm_maintenance_every", 2.5), ("ivm_maintenance_every", "often"),
    ("ivm_maintenance_every", True), ("ivm_snapshot_retention", -5), ("ivm_snapshot_retention", "1h"),
])
def test_maintenance_configs_refuse_anything_else_naming_model_and_config(key, value):
    with pytest.raises(DbtRuntimeError) as e:
        parse_config("orders_daily", {key: value}, True)
    assert "orders_daily" in str(e.value) and key in str(e.value) and repr(value) in str(e.value)


def test_join_index_default_and_values():
    assert parse_config("m", {}, True).join_index == "auto"
    assert parse_config("m", {"ivm_join_index": "always"}, True).join_index == "always"
    with pytest.raises(DbtRuntimeError) as e:
        parse_config("orders_daily", {"ivm_join_index": "never"}, True)
    assert "orders_daily" in str(e.value) and "ivm_join_index" in str(e.value) and "'never'" in str(e.value)


def test_number_configs_defaults_and_values():
    config = parse_config("m", {}, True)
    assert (config.index_growth, config.rebuild_min_saving) == (2.0, 2.0)
    config = parse_config("m", {"ivm_index_growth": "1.5", "ivm_rebuild_min_saving": 0}, True)
    assert (config.index_growth, config.rebuild_min_saving) == (1.5, 0.0)


@pytest.mark.parametrize("key, value", [
    ("ivm_index_growth", 0.5), ("ivm_index_growth", True), ("ivm_index_growth", "twice"),
    ("ivm_rebuild_min_saving", -1), ("ivm_rebuild_min_saving", True), ("ivm_rebuild_min_saving", "10s"),
    ("ivm_rebuild_min_saving", float("nan")),
])
def test_number_configs_refuse_anything_else_naming_model_and_config(key, value):
    with pytest.raises(DbtRuntimeError) as e:
        parse_config("orders_daily", {key: value}, True)
    assert "orders_daily" in str(e.value) and key in str(e.value) and repr(value) in str(e.value)


def test_tblproperties_become_the_targets_properties_in_a_fixed_order():
    assert parse_config("m", {}, True).target_properties == ()
    config = parse_config("m", {"tblproperties": {"write.parquet.compression-codec": "snappy",
                                                  "commit.retry.num-retries": 8,
                                                  "write.spark.fanout.enabled": True}}, True)
    assert config.target_properties == (("commit.retry.num-retries", "8"),
                                        ("write.parquet.compression-codec", "snappy"),
                                        ("write.spark.fanout.enabled", "true"))


@pytest.mark.parametrize("value", [
    "write.format.default=parquet",  # not a mapping
    {"owner": None},
    {"owner": ["a", "b"]},
    {"": "x"},
    {1: "x"},
])
def test_tblproperties_refuse_anything_else_naming_model_and_config(value):
    with pytest.raises(DbtRuntimeError) as e:
        parse_config("orders_daily", {"tblproperties": value}, True)
    assert "orders_daily" in str(e.value) and "tblproperties" in str(e.value)


def test_layout_configs_the_target_does_not_take_are_named():
    assert ignored_layout_configs({"partition_by": ["day"], "buckets": None, "clustered_by": [],
                                   "location_root": "s3://x", "tblproperties": {"a": "b"}}) == {
        "partition_by": ["day"], "location_root": "s3://x"}
    assert ignored_layout_configs({}) == {}
