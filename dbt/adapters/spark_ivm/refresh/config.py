"""A model's ``ivm_*`` configs and the dbt-spark configs its target takes (``tblproperties``),
parsed and validated once into one typed value."""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.refresh.db import logger

POLICIES = ("auto", "incremental", "full")
LOCK_MODES = ("auto", "table")
# consumers: publish the model's changes while an incremental_ivm model of the project reads
# them, and prune them once every such model consumed them; always: publish every change and
# prune none (something outside the project reads them)
PUBLISH_MODES = ("consumers", "always")
JOIN_INDEX_MODES = ("auto", "always")
DEFAULT_LOCK_TIMEOUT = 3600
DEFAULT_INDEX_GROWTH = 2.0
# a target or aggregate state with at most this many rows is rewritten in one INSERT OVERWRITE
# rather than updated in place. Measured: a rewrite of 30 k rows 0.35 s, a
# MERGE 0.45-0.7 s; 114 k rows about equal (0.6-0.9 s vs 0.5-0.7 s), 1 M rows 1.6-2.3 s vs
# 1.0-1.2 s. A model over one aggregate whose target and state are rewritten skips its change
# (Q3-like at SF 10, 114 k rows: 2.4-2.7x its twin rewritten, 1.8x in place)
DEFAULT_REWRITE_MAX_ROWS = 300_000
# a MERGE with an insert clause joins the table to the change with the change as the preserved
# side, which Spark cannot broadcast: it shuffles the whole table. A table updated in place that
# held at least this many rows at the last commit, and whose update no key ranges bound (the change
# touches it all over), is updated in two passes instead: the MERGE without that clause (an inner
# join, the change broadcast), then an INSERT of the change's rows it did not hold (a broadcast
# semi join finds those it held). Measured on a 4-column state taking 0.7 % of its rows at random
# keys, three runs each: 15 M rows 1.7-3.2 s against 4.5-6.3 s, 4 M 1.0-2.3 s against 1.9-3.1 s, 1 M
# about the same; TPC-H SF 10, random batches: 15 M-row MERGEs of 12.8-16.4 s took 4.3-7.6 s
DEFAULT_TWO_PASS_MIN_ROWS = 1_000_000
# under ivm_policy 'auto' a run rebuilds instead of applying its change only when this model's
# recorded costs expect that to save at least this many seconds (and 20 %: refresh/cost.py) —
# below it either way is quick, and an incremental run keeps measuring what it costs. At 10 s
# (before) a model over a copy-on-write Iceberg input kept applying 15 s changes its rebuild
# took 4 s for (TPC-H SF 1, Q1 over lineitem's snapshots: 0.3x its twin; with 5 s, 0.9x)
DEFAULT_REBUILD_MIN_SAVING = 2.0
# Spark SQL settings for a run's statements, from its observation on (restored after it); a model's
# ivm_spark_conf is laid over them. Adaptive execution is off: its stage-by-stage execution
# makes every shuffle and broadcast of a small change its own Spark job (TPC-H SF 1 rf 0.1 %,
# Q3-like: 72 jobs -> 36) and nine paired refreshes (Q1-, Q3-like, join; three batches each)
# took 55.0 s against 58.1 s (6 of 9 faster). A rebuild keeps the session's settings: it
# computes the whole model, where adaptive plans pay off. A temp view keeps its analyzed plan:
# what a run stages (CACHE TABLE v AS <query>) is then read back by every reader of v, also when
# the query has a CTE (an aggregate's change has); with the view kept as SQL text, each reader
# analyzes the text again, its CTEs get new ids, the cached plan never matches and every reader
# computes the query again (Q1-like leaf, SF 1: the change computed three times).
DEFAULT_SPARK_CONF: Mapping[str, str] = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.legacy.storeAnalyzedPlanForView": "true",
}
# maintenance (refresh/maintain.py) every this many sequences: a table appended on every run
# holds a file per run, and reading it grows with them (measured: a 1-row read of a table after
# 1,000 one-row commits 1.3 s, 0.07 s compacted)
DEFAULT_MAINTENANCE_EVERY = 50
# sequences of published changes a model keeps for a reader that has not consumed them: a reader
# that stopped running holds them no longer than this (it rebuilds on its next run)
DEFAULT_CHANGES_RETENTION = 10_000
# snapshots younger than this many seconds are never expired: a reader (another model's run, a
# query) may still be planning against them
DEFAULT_SNAPSHOT_RETENTION = 3600

# "<model>:<step>": tests make a refresh fail at that step. Steps of an incremental run:
# after_validate, after_publish, after_target, after_state[:<table>], in_maintenance[:<table>]
# (a failure there is a warning), after_maintenance, before_commit; of a rebuild: after_started,
# after_state[:<table>], after_target, after_publish, in_maintenance, after_maintenance, before_commit.
FAULT_ENV = "DBT_SPARK_IVM_FAULT"
STALL_ENV = "DBT_SPARK_IVM_STALL"


@dataclass(frozen=True)
class IvmConfig:
    policy: str = "auto"  # auto | incremental | full
    lock_row: bool = True  # take the lock row (else the catalog admits this process only)
    lock_timeout: int = DEFAULT_LOCK_TIMEOUT  # seconds until a dead run's lock row expires
    index_growth: float = DEFAULT_INDEX_GROWTH  # compact a join index past this growth
    # which joined inputs get a join index: those with no position to read them at ("auto"), or all
    join_index: str = "auto"
    rewrite_max_rows: int = DEFAULT_REWRITE_MAX_ROWS  # rewrite tables up to this size
    two_pass_min_rows: int = DEFAULT_TWO_PASS_MIN_ROWS  # an unbounded update of a table this large: two passes
    # Spark SQL settings from the run's observation on, reset before a rebuild (``ivm_spark_conf``)
    spark_conf: tuple[tuple[str, str], ...] = tuple(DEFAULT_SPARK_CONF.items())
    maintenance_every: int = DEFAULT_MAINTENANCE_EVERY  # sequences between maintenances (0: never)
    changes_retention: int = DEFAULT_CHANGES_RETENTION  # sequences of changes kept for a reader behind
    snapshot_retention: int = DEFAULT_SNAPSHOT_RETENTION  # seconds a snapshot is kept at least
    publish_always: bool = False  # ivm_publish_changes: always (else: for the project's consumers)
    rebuild_min_saving: float = DEFAULT_REBUILD_MIN_SAVING  # seconds (cost.py)
    # the target's Iceberg table properties the model asks for (``tblproperties``, as dbt-spark's
    # table models take them), over the adapter's own
    target_properties: tuple[tuple[str, str], ...] = ()


# dbt-spark's table layout configs an incremental_ivm target does not take (warned about, not refused:
# a project may set them for every model)
IGNORED_LAYOUT_CONFIGS = ("partition_by", "clustered_by", "buckets", "location_root")


def parse_config(model_name: str, config: Mapping[str, Any], catalog_is_exclusive: bool) -> IvmConfig:
    """The model's configs, or an error naming the model, the config and the value."""

    def bad(key: str, what: str, value: Any) -> DbtRuntimeError:
        return DbtRuntimeError(f"incremental_ivm model '{model_name}': {key} must be {what}, not {value!r}")

    def get(key: str, default: Any) -> Any:  # unset (None) means the default, while 0 stays 0
        value = config.get(key)
        return default if value is None else value

    policy = str(config.get("ivm_policy") or "auto")
    if policy not in POLICIES:
        raise bad("ivm_policy", f"one of {', '.join(POLICIES)}", policy)
    publish = str(config.get("ivm_publish_changes") or "consumers")
    if publish not in PUBLISH_MODES:
        raise bad("ivm_publish_changes", "'consumers' or 'always'", publish)
    join_index = str(config.get("ivm_join_index") or "auto")
    if join_index not in JOIN_INDEX_MODES:
        raise bad("ivm_join_index", "'auto' or 'always'", join_index)
    lock = str(config.get("ivm_lock") or "auto")
    if lock not in LOCK_MODES:
        raise bad("ivm_lock", "'auto' or 'table'", lock)
    lock_timeout = _whole(get("ivm_lock_timeout", DEFAULT_LOCK_TIMEOUT))
    if lock_timeout is None or lock_timeout < 1:
        raise bad("ivm_lock_timeout", "a whole number of seconds, at least 1", config.get("ivm_lock_timeout"))
    growth_value = get("ivm_index_growth", DEFAULT_INDEX_GROWTH)
    index_growth = _number(growth_value)
    if index_growth is None or not index_growth >= 1:
        raise bad("ivm_index_growth", "at least 1", growth_value)
    rewrite_max_rows = _whole(get("ivm_rewrite_max_rows", DEFAULT_REWRITE_MAX_ROWS))
    if rewrite_max_rows is None or rewrite_max_rows < 0:
        raise bad("ivm_rewrite_max_rows", "a whole number of rows, at least 0", config.get("ivm_rewrite_max_rows"))
    two_pass_min_rows = _whole(get("ivm_two_pass_min_rows", DEFAULT_TWO_PASS_MIN_ROWS))
    if two_pass_min_rows is None or two_pass_min_rows < 0:
        raise bad("ivm_two_pass_min_rows", "a whole number of rows, at least 0", config.get("ivm_two_pass_min_rows"))
    maintenance_every = _whole(get("ivm_maintenance_every", DEFAULT_MAINTENANCE_EVERY))
    if maintenance_every is None or maintenance_every < 0:
        raise bad("ivm_maintenance_every", "a whole number of runs, at least 0 (0: never)",
                  config.get("ivm_maintenance_every"))
    changes_retention = _whole(get("ivm_changes_retention", DEFAULT_CHANGES_RETENTION))
    if changes_retention is None or changes_retention < 0:
        raise bad("ivm_changes_retention", "a whole number of sequences, at least 0",
                  config.get("ivm_changes_retention"))
    snapshot_retention = _whole(get("ivm_snapshot_retention", DEFAULT_SNAPSHOT_RETENTION))
    if snapshot_retention is None or snapshot_retention < 0:
        raise bad("ivm_snapshot_retention", "a whole number of seconds, at least 0",
                  config.get("ivm_snapshot_retention"))
    saving_value = get("ivm_rebuild_min_saving", DEFAULT_REBUILD_MIN_SAVING)
    rebuild_min_saving = _number(saving_value)
    if rebuild_min_saving is None or not rebuild_min_saving >= 0:
        raise bad("ivm_rebuild_min_saving", "a number of seconds, at least 0", saving_value)
    spark_conf = get("ivm_spark_conf", {})
    if not isinstance(spark_conf, Mapping) or not all(
        isinstance(k, str) and _SETTING.match(k) and isinstance(v, (str, int, float, bool)) and _VALUE.match(str(v))
        for k, v in spark_conf.items()
    ):
        raise bad("ivm_spark_conf", "a mapping of Spark SQL setting names to plain values", spark_conf)
    properties = get("tblproperties", {})
    if not isinstance(properties, Mapping) or not all(
        isinstance(k, str) and k.strip() and isinstance(v, (str, int, float, bool)) for k, v in properties.items()
    ):
        raise bad("tblproperties", "a mapping of Iceberg table property names to plain values", properties)
    return IvmConfig(
        spark_conf=tuple({**DEFAULT_SPARK_CONF, **{k: _plain(v) for k, v in spark_conf.items()}}.items()),
        policy=policy,
        lock_row=lock == "table" or not catalog_is_exclusive,
        lock_timeout=lock_timeout,
        index_growth=index_growth,
        join_index=join_index,
        rewrite_max_rows=rewrite_max_rows,
        two_pass_min_rows=two_pass_min_rows,
        maintenance_every=maintenance_every,
        changes_retention=changes_retention,
        snapshot_retention=snapshot_retention,
        publish_always=publish == "always",
        rebuild_min_saving=rebuild_min_saving,
        target_properties=tuple(sorted((k, _plain(v)) for k, v in properties.items())),
    )


def ignored_layout_configs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The table layout configs a model sets that its incremental_ivm target does not take."""
    return {k: config[k] for k in IGNORED_LAYOUT_CONFIGS if config.get(k) not in (None, [], {}, "")}


_SETTING = re.compile(r"^[A-Za-z0-9_.\-]+$")
_VALUE = re.compile(r"^[A-Za-z0-9_.:/\-]*$")


def _plain(value: Any) -> str:
    """A config value as Spark writes it: booleans in lower case."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _number(value: Any) -> Optional[float]:
    """``value`` as a number (a YAML number or a string of one), else None (a bool is not one)."""
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _whole(value: Any) -> Optional[int]:
    number = _number(value)
    return int(number) if number is not None and number == int(number) else None


# a process stalled by the test hook (``DBT_SPARK_IVM_STALL``): as a process paused whole (a long
# garbage collection, a network partition), its runs renew no lease meanwhile (lock.Lease)
STALLED = threading.Event()


def fault_hook(model_name: str) -> Callable[[str], None]:
    """The test hooks: a run fails at the step ``DBT_SPARK_IVM_FAULT`` (``model:step``) names,
    and stalls — sleeps, renewing no lease — for ``seconds`` at the step ``DBT_SPARK_IVM_STALL``
    (``model:step:seconds``) names; no-ops unless they name this model."""
    wanted = os.environ.get(FAULT_ENV, "")
    target, _, step = wanted.partition(":")
    stall_at, _, stall_seconds = os.environ.get(STALL_ENV, "").rpartition(":")
    stall_target, _, stall_step = stall_at.partition(":")
    fails = bool(wanted) and target == model_name
    stalls = bool(stall_at) and stall_target == model_name
    if not fails and not stalls:
        return lambda reached: None

    def at(reached: str, wanted_step: str) -> bool:
        # "after_state" matches the first state statement ("after_state:<table>")
        return reached == wanted_step or reached.startswith(wanted_step + ":")

    def fault(reached: str) -> None:
        if stalls and at(reached, stall_step):
            logger.info(f"[ivm {model_name}] test hook: stalled at {reached} for {stall_seconds}s")
            STALLED.set()
            try:
                time.sleep(float(stall_seconds))
            finally:
                STALLED.clear()
        if fails and at(reached, step):
            raise DbtRuntimeError(f"injected failure in model '{model_name}' at step {step}")

    return fault
