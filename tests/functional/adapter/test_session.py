"""The embedded `method: session` of spark_ivm: profile, session_dir, Iceberg defaults, PURGE."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from dbt.tests.util import get_connection, run_dbt

from dbt.adapters.spark_ivm.connections import (
    SparkIvmCredentials,
    iceberg_jar_path,
    iceberg_session_defaults,
)
from dbt.adapters.spark_ivm.impl import normalize_iceberg_information
from dbt.adapters.spark_ivm.refresh.config import parse_config
from ivm_core import bookkeeping as bk
from ivm_core import statements as st

SCATTER = ("derby.log", "metastore_db", "spark-warehouse")


def _dbt_executable() -> str:
    exe = Path(sys.executable).with_name("dbt")
    return str(exe) if exe.exists() else shutil.which("dbt") or "dbt"


# --- credentials, without Spark -------------------------------------------------------------


def test_profile_needs_only_type_method_schema(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    creds = SparkIvmCredentials.from_dict({"method": "session", "schema": "analytics"})
    assert creds.type == "spark_ivm"
    assert creds.method == "session"
    assert os.path.isabs(creds.session_dir)
    assert creds.session_dir.endswith(".spark_ivm")
    # `method` defaults to session as well
    assert SparkIvmCredentials.from_dict({"schema": "analytics"}).method == "session"


def test_relative_session_dir_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    creds = SparkIvmCredentials.from_dict({"schema": "a", "session_dir": "state/spark"})
    assert os.path.isabs(creds.session_dir)
    assert creds.session_dir.endswith(os.path.join("state", "spark"))


def test_user_server_side_parameters_override_defaults(tmp_path):
    creds = SparkIvmCredentials.from_dict(
        {
            "schema": "a",
            "session_dir": str(tmp_path),
            "server_side_parameters": {"spark.sql.shuffle.partitions": 7, "spark.x.custom": "y"},
        }
    )
    params = creds.session_parameters()
    assert params["spark.sql.shuffle.partitions"] == "7"
    assert params["spark.x.custom"] == "y"
    assert params["spark.sql.ansi.enabled"] == "false"  # forced by dbt-spark
    defaults = iceberg_session_defaults(str(tmp_path))
    for key in ("spark.jars", "spark.sql.catalog.spark_catalog", "spark.sql.warehouse.dir"):
        assert params[key] == defaults[key]
    assert params["spark.sql.warehouse.dir"] == str(tmp_path / "warehouse")
    assert str(tmp_path / "metastore_db") in params["spark.hadoop.javax.jdo.option.ConnectionURL"]
    assert f"-Dderby.system.home={tmp_path}" in params["spark.driver.extraJavaOptions"]
    assert os.path.isfile(iceberg_jar_path())


def test_iceberg_provider_normalization():
    info = "Type: EXTERNAL\nProvider: hive\nTable Properties: [owner=x, table_type=ICEBERG, uuid=1]\n"
    assert "Provider: iceberg" in normalize_iceberg_information(info)
    view = "Type: VIEW\nTable Properties: [table_type=ICEBERG-VIEW]\n"
    assert normalize_iceberg_information(view) == view
    parquet = "Type: MANAGED\nProvider: parquet\n"
    assert normalize_iceberg_information(parquet) == parquet


# --- a separate dbt process with the minimal profile ---------------------------------------


def test_minimal_profile_default_session_dir_and_clean_cwd(tmp_path):
    """`dbt run` with type/method/schema only: state goes to <project>/.spark_ivm, not the cwd.

    Runs in its own process (own JVM, own Derby metastore), so it cannot collide with the
    session shared by the rest of this pytest process.
    """
    project = tmp_path / "proj"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: minimal\nversion: '1.0'\nconfig-version: 2\nprofile: minimal\n"
    )
    (project / "profiles.yml").write_text(
        textwrap.dedent(
            """\
            minimal:
              target: local
              outputs:
                local:
                  type: spark_ivm
                  method: session
                  schema: analytics
            """
        )
    )
    (project / "models" / "one.sql").write_text(
        "{{ config(materialized='table') }} select 1 as id"
    )
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    env.pop("DBT_PROFILES_DIR", None)
    env.pop("DBT_LOG_PATH", None)
    proc = subprocess.run(
        [_dbt_executable(), "run", "--project-dir", str(project), "--profiles-dir", str(project)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    session_dir = project / ".spark_ivm"
    assert (session_dir / "warehouse" / "analytics.db" / "one" / "metadata").is_dir()
    assert (session_dir / "metastore_db").is_dir()
    assert (session_dir / "derby.log").is_file()
    assert list(cwd.iterdir()) == []
    for name in SCATTER:
        assert not (project / name).exists(), name


# --- the shared session of this pytest process ----------------------------------------------

table_model = "{{ config(materialized='table') }} select 1 as id, 'a' as name"
parquet_model = "{{ config(materialized='table', file_format='parquet') }} select 1 as id"
switch_model = "{{ config(materialized=var('mat', 'view')) }} select 2 as id"
view_model = "{{ config(materialized='view') }} select {{ var('view_sql', '1 as id') }}"
seed_csv = "id,name\n1,a\n2,b\n"


def _sql(project, sql, fetch="all"):
    return project.run_sql(sql, fetch=fetch)


class TestSessionTables:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "ice_table.sql": table_model,
            "parquet_table.sql": parquet_model,
            "switch.sql": switch_model,
            "changing_view.sql": view_model,
        }

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"my_seed.csv": seed_csv}

    def _provider(self, project, name):
        rows = _sql(project, f"describe table extended {project.test_schema}.{name}")
        meta = {r[0]: r[1] for r in rows}
        return meta.get("Provider"), meta.get("Location", "")

    def test_state_under_session_dir(self, project, spark_ivm_session_dir, request):
        run_dbt(["run", "--select", "ice_table"])
        provider, location = self._provider(project, "ice_table")
        assert os.path.join(spark_ivm_session_dir, "warehouse") in location
        assert os.path.isdir(os.path.join(spark_ivm_session_dir, "metastore_db"))
        for where in (Path(str(project.project_root)), request.config.invocation_params.dir):
            for name in SCATTER:
                assert not (Path(where) / name).exists(), f"{name} in {where}"

    def test_table_model_is_iceberg(self, project):
        run_dbt(["run", "--select", "ice_table"])
        provider, _ = self._provider(project, "ice_table")
        assert provider == "iceberg"
        snaps = _sql(project, f"select count(*) from {project.test_schema}.ice_table.snapshots")
        assert snaps[0][0] >= 1
        # relation listing reports it as Iceberg (dbt-spark listed it as provider hive)
        with get_connection(project.adapter):
            relations = project.adapter.list_relations(None, project.test_schema)
        by_name = {r.identifier: r for r in relations}
        assert by_name["ice_table"].is_iceberg

    def test_seed_is_iceberg(self, project):
        run_dbt(["seed"])
        assert self._provider(project, "my_seed")[0] == "iceberg"
        run_dbt(["seed", "--full-refresh"])
        assert _sql(project, f"select count(*) from {project.test_schema}.my_seed")[0][0] == 2

    def test_staged_relation_is_read_from_memory(self, project):
        # what a run stages (bk.cache_table) under the run's default Spark settings is computed
        # once: its readers scan the cached copy, also when the query has a CTE (an aggregate's
        # change has; with the session's defaults Spark never reads such a cache back)
        run_dbt(["run", "--select", "ice_table"])
        staged = "`_ivm_test_stage`"
        query = (f"SELECT * FROM (WITH x AS (SELECT * FROM {project.test_schema}.ice_table) "
                 "SELECT a.* FROM x AS a JOIN x AS b ON a.id = b.id) AS s")
        settings = parse_config("m", {}, catalog_is_exclusive=True).spark_conf
        for key, value in settings:
            _sql(project, f"SET {key}={value}", fetch=None)
        try:
            _sql(project, bk.cache_table(staged, query), fetch=None)
            plan = "\n".join(str(r[0]) for r in _sql(project, f"EXPLAIN SELECT count(*) FROM {staged}"))
            read = plan.split("InMemoryRelation")[0]  # what follows is how the cache was computed
            assert "Scan In-memory table" in read and "ice_table" not in read, plan
        finally:
            _sql(project, bk.drop_view(staged), fetch=None)
            for key, _ in settings:
                _sql(project, f"RESET {key}", fetch=None)

    def test_staged_relation_over_a_pinned_read_survives_writes_to_the_table(self, project):
        # a run stages its change from its state read pinned (bk.pinned), then writes that
        # state: the staged copy must stay in memory (Spark drops the cached data of every
        # relation that reads a table it writes, also one read VERSION AS OF a snapshot)
        from pyspark.sql import SparkSession

        run_dbt(["run", "--select", "ice_table"])
        table = f"{project.test_schema}.ice_table"
        snapshot = _sql(project, f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at DESC LIMIT 1")[0][0]
        staged = "_ivm_test_pinned_stage"
        session = SparkSession.builder.getOrCreate()

        def in_memory() -> bool:
            infos = session.sparkContext._jsc.sc().getRDDStorageInfo()
            return any(staged in info.name() and info.numCachedPartitions() > 0 for info in infos)

        query = f"SELECT id, count(*) AS n FROM {bk.pinned(table, snapshot)} GROUP BY id"
        _sql(project, bk.cache_table(f"`{staged}`", query), fetch=None)
        try:
            assert in_memory()
            _sql(project, f"INSERT INTO {table} VALUES (7, 'x')", fetch=None)
            _sql(project, f"DELETE FROM {table} WHERE id = 7", fetch=None)
            assert in_memory(), "a write to the table dropped what was staged from its pinned read"
            assert _sql(project, f"SELECT id, n FROM `{staged}`") == [(1, 1)]
        finally:
            _sql(project, bk.drop_view(f"`{staged}`"), fetch=None)

    def test_catalog_metadata_reads_what_the_metadata_tables_say(self, project):
        # a run's commit reads its tables' snapshots and row counts from the embedded session's
        # catalog (refresh/metadata.py) from dbt's model thread: the same values the metadata
        # tables give, a count with deletes left to count(*), a missing table an error
        import threading

        from dbt.adapters.spark_ivm.refresh.capture import upstream_rows
        from dbt.adapters.spark_ivm.refresh.db import Executor
        from dbt.adapters.spark_ivm.refresh.metadata import (
            LIVE_ROWS, ROWS, SNAPSHOT, CatalogMetadata, ChangeMarks, Measure, SqlMetadata, Upkeep, table_metadata,
        )

        schema = project.test_schema
        appended, deleted, empty = (f"`{schema}`.`meta_{n}`" for n in ("appended", "deleted", "empty"))
        for table in (appended, deleted, empty):
            _sql(project, f"CREATE OR REPLACE TABLE {table} (id INT) USING iceberg TBLPROPERTIES "
                          "('format-version'='2', 'write.delete.mode'='merge-on-read')", fetch=None)
        for rows in ("(1), (1)", "(2)"):
            _sql(project, f"INSERT INTO {appended} VALUES {rows}", fetch=None)
        _sql(project, f"INSERT INTO {deleted} VALUES (1), (2), (2), (3)", fetch=None)
        _sql(project, f"DELETE FROM {deleted} WHERE id = 3", fetch=None)
        measures = {(kind, table): Measure(kind, table)
                    for kind in (SNAPSHOT, ROWS, LIVE_ROWS) for table in (appended, deleted, empty)}
        # a table of aggregate states' sets (its partitions by _ivm_set): one with a position
        # delete, one whose rows are all deleted, one never written
        sets = f"`{schema}`.`meta_sets`"
        _sql(project, f"CREATE OR REPLACE TABLE {sets} (k INT, _ivm_set INT, v BIGINT) USING iceberg "
                      f"PARTITIONED BY (_ivm_set) TBLPROPERTIES ('format-version'='2', "
                      f"'write.delete.mode'='merge-on-read')", fetch=None)
        for rows in ("(1, 0, 5), (2, 0, 6), (1, 1, 7), (2, 1, 8), (1, 2, 9)", "(3, 1, 1), (4, 0, 2)"):
            _sql(project, f"INSERT INTO {sets} SELECT /*+ COALESCE(1) */ * FROM VALUES {rows}", fetch=None)
        _sql(project, f"DELETE FROM {sets} WHERE _ivm_set = 1 AND k = 2", fetch=None)
        _sql(project, f"DELETE FROM {sets} WHERE _ivm_set = 2", fetch=None)
        measures.update({(kind, sets, k): Measure(kind, sets, k) for kind in (ROWS, LIVE_ROWS) for k in range(4)})
        # a base: tagged source's ivm_seq_<s> tags (not a branch of that name, nor another tag)
        first = _sql(project, f"SELECT snapshot_id FROM {appended}.snapshots ORDER BY committed_at")[0][0]
        for ref in (f"TAG ivm_seq_3 AS OF VERSION {first}", "TAG ivm_seq_7", "TAG ivm_seq_x", "TAG other",
                    "BRANCH ivm_seq_9"):
            _sql(project, f"ALTER TABLE {appended} CREATE {ref}", fetch=None)
        # key spans (the files' column bounds): over several files, one of them all NULL, and a
        # row deleted (bounds are the files', as .data_files reads them)
        keyed = f"`{schema}`.`meta_keyed`"
        _sql(project, f"CREATE OR REPLACE TABLE {keyed} (id BIGINT, d DATE, i INT, s STRING) USING iceberg "
                      "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')", fetch=None)
        for rows in ("(5, DATE'2020-01-02', -3, 'a')", "(NULL, NULL, NULL, NULL)",
                     "(12, DATE'1999-12-31', 7, 'b'), (40, DATE'1999-12-30', 9, 'c')",
                     "(-4, DATE'2031-05-06', 0, 'c')"):
            _sql(project, f"INSERT INTO {keyed} SELECT /*+ COALESCE(1) */ * FROM VALUES {rows}", fetch=None)
        _sql(project, f"DELETE FROM {keyed} WHERE id = 40", fetch=None)  # a position delete: 40 stays a bound
        keyed_snapshots = [r[0] for r in
                           _sql(project, f"SELECT snapshot_id FROM {keyed}.snapshots ORDER BY committed_at")]
        spans = [(keyed, c) for c in ("id", "d", "I")] + [(empty, "id")]
        # a change table's high mark and rows: over several files; with a file whose _ivm_seq is
        # all NULL, or a delete file, the catalog leaves them to the capture's SQL
        marked, nulls, pruned = (f"`{schema}`.`meta_{n}_changes`" for n in ("marked", "nulls", "pruned"))
        for table in (marked, nulls, pruned):
            _sql(project, f"CREATE OR REPLACE TABLE {table} (id INT, _ivm_weight BIGINT, _ivm_seq BIGINT) "
                          "USING iceberg TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')",
                 fetch=None)
        for table in (marked, nulls, pruned):
            for rows in ("(1, 1, 3), (1, 1, 9)", "(2, -1, 4)"):
                _sql(project, f"INSERT INTO {table} SELECT /*+ COALESCE(1) */ * FROM VALUES {rows}", fetch=None)
        _sql(project, f"INSERT INTO {nulls} VALUES (5, 1, NULL)", fetch=None)
        _sql(project, f"DELETE FROM {pruned} WHERE _ivm_seq = 9", fetch=None)
        changes = [marked, nulls, pruned, empty]
        typed = f"`{schema}`.`meta_typed`"
        _sql(project, f"CREATE OR REPLACE TABLE {typed} (i INT, b BIGINT, d DECIMAL(12,3), s STRING, dt DATE, "
                      "ts TIMESTAMP, tsn TIMESTAMP_NTZ, f FLOAT, db DOUBLE, bo BOOLEAN, bi BINARY, "
                      "a ARRAY<STRUCT<x: INT, yZ: STRING>>, m MAP<STRING, DECIMAL(5,2)>, `Mixed Case` SMALLINT) "
                      "USING iceberg", fetch=None)
        _sql(project, f"CREATE OR REPLACE VIEW `{schema}`.`meta_view` AS SELECT i FROM {typed}", fetch=None)
        seen: dict = {}

        def read() -> None:  # in a thread of its own, as dbt runs a model
            with get_connection(project.adapter):
                catalog = table_metadata(Executor(project.adapter, "m"))
                seen["reader"] = type(catalog)
                seen["catalog"] = catalog.read(measures)
                seen["statements"] = catalog.db.count
                sql = SqlMetadata(Executor(project.adapter, "m"))
                seen["sql"] = sql.read(measures)
                try:
                    catalog.read({"gone": Measure(SNAPSHOT, f"`{schema}`.`meta_missing`")})
                except Exception as e:
                    seen["missing"] = str(e)
                seen["tags"] = tags = catalog.base_tags(appended)
                # the nearest tag at or below, and above, each mark: as the SQL probes choose
                marks = [(mark, above) for mark in (2, 3, 5, 7, 8) for above in (False, True)]
                seen["nearest"] = {m: bk.nearest_tag(tags, *m) for m in marks} if tags is not None else None
                rows = sql.db.run(st.probes_sql([bk.tag_probe(f"{m}", appended, *m) for m in marks]), fetch=True)
                seen["sql nearest"] = {m: None if row[5] is None else (int(row[4]), int(row[5]))
                                       for m in marks for row in rows if row[0] == f"{m}"}
                seen["tags of a missing table"] = catalog.base_tags(f"`{schema}`.`meta_missing`")
                seen["sql tags"] = sql.base_tags(appended)
                seen["spans"] = {span: catalog.key_span(*span) for span in spans}
                rows = sql.db.run(st.probes_sql([st.key_span(f"{n}", *span) for n, span in enumerate(spans)]),
                                  fetch=True)
                seen["sql spans"] = {span: tuple(row[4:6]) for n, span in enumerate(spans)
                                     for row in rows if row[0] == f"{n}"}
                missing = f"`{schema}`.`meta_missing`"
                seen["marks"] = {table: catalog.change_marks(table) for table in changes}
                seen["answers marks"] = {table: catalog.answers_change_marks(table) for table in changes}
                rows = sql.db.run(bk.union_all([bk.capture_change_table(t, t) for t in changes if t != empty]),
                                  fetch=True)
                seen["sql marks"] = {t: (int(dict((kind, v) for kind, k, v in rows if k == t)["high"]),
                                         int(dict((kind, v) for kind, k, v in rows if k == t)["rows"]))
                                     for t in changes if t != empty}
                seen["unread marks"] = [catalog.change_marks(missing), sql.change_marks(marked)]
                # marks recorded at the table's current snapshot are the answer, with no file read;
                # recorded at another snapshot, they are read again
                current = seen["marks"][marked].snapshot
                seen["known marks"] = [catalog.change_marks(marked, ChangeMarks(1, 1, current)),
                                       catalog.change_marks(marked, ChangeMarks(1, 1, current + 1))]
                seen["unread spans"] = [catalog.key_span(keyed, "s"), catalog.key_span(missing, "id"),
                                        sql.key_span(keyed, "id")]
                # an Iceberg table's columns as DESCRIBE lists them; not a view's
                seen["columns"] = [catalog.iceberg_columns(typed), sql.db.columns(typed)]
                seen["view columns"] = catalog.iceberg_columns(f"`{schema}`.`meta_view`")
                # the reader keeps each table it loaded and refreshes it: one dropped and created
                # again (a new table uuid, which a refresh refuses) is loaded anew
                recreated = f"`{schema}`.`meta_recreated`"
                sql.db.run(f"CREATE OR REPLACE TABLE {recreated} (a INT) USING iceberg")
                seen["recreated"] = [catalog.iceberg_columns(recreated)]
                sql.db.run(f"DROP TABLE {recreated}")
                sql.db.run(f"CREATE TABLE {recreated} (b STRING, c BIGINT) USING iceberg")
                seen["recreated"].append(catalog.iceberg_columns(recreated))
                # whether a table's history holds a snapshot (a rebuild publishes its difference
                # to the last committed target only then, rebuild.py): the catalog's answer as
                # the statement's — held, unknown, a table dropped and created again since, a
                # missing table, a view
                sql.db.run(f"INSERT INTO {recreated} VALUES ('x', 1)")
                before_drop = sql.db.run(f"SELECT snapshot_id FROM {recreated}.snapshots", fetch=True)[0][0]
                sql.db.run(f"DROP TABLE {recreated}")
                sql.db.run(f"CREATE TABLE {recreated} (b STRING, c BIGINT) USING iceberg")
                sql.db.run(f"INSERT INTO {recreated} VALUES ('y', 2)")
                after_drop = sql.db.run(f"SELECT snapshot_id FROM {recreated}.snapshots", fetch=True)[0][0]
                held = [(keyed, keyed_snapshots[0]), (keyed, 12345), (recreated, before_drop),
                        (recreated, after_drop), (missing, keyed_snapshots[0]),
                        (f"`{schema}`.`meta_view`", keyed_snapshots[0])]
                seen["holds"] = [(catalog.holds_snapshot(*h), sql.holds_snapshot(*h)) for h in held]
                # the log's last and last committed entries: as it grows by a file per entry, after
                # a rebuild that died (its started entry last), and compacted
                log = f"`{schema}`.`meta_log`"
                before = catalog.db.count
                seen["log missing"] = catalog.log_rows(log)
                sql.db.run(bk.create_log(log))
                seen["logs"] = [(catalog.log_rows(log), sql.db.run(bk.read_log(log), fetch=True))]
                for seq, status in ((1, "committed"), (2, "started"), (2, "committed"), (3, "started")):
                    counts = "'{\"published\": 7}'" if (seq, status) == (2, "committed") else "'{}'"
                    sql.db.run(bk.insert_log_entry(log, [
                        str(seq), f"'{status}'", "'full'", "NULL", f"'fp{seq}'", "'{\"a\": 1}'", str(40 + seq), "0",
                        "0", "'[]'", "'select 1'", "'{}'", "current_timestamp()", counts, "0"]))
                    seen["logs"].append((catalog.log_rows(log), sql.db.run(bk.read_log(log), fetch=True)))
                # a reader's capture of the log's last commit (its model upstream): the catalog's
                # rows as the capture statement's
                seen["upstream"] = [upstream_rows(catalog, "k", log),
                                    [tuple(r) for r in sql.db.run(bk.capture_upstream("k", log), fetch=True)]]
                # an Iceberg input's capture (its snapshot, rows, the consumed one's lineage and the
                # rows written since): the catalog's rows as the capture statement's — none consumed,
                # an ancestor (with delete files after it: counted by the catalog alone), one not in the table
                seen["iceberg inputs"] = {}
                for table in (appended, deleted, empty):
                    ids = [r[0] for r in sql.db.run(f"SELECT snapshot_id FROM {table}.snapshots "
                                                    "ORDER BY committed_at", fetch=True)]
                    for consumed in (None, ids[0] if ids else None, 12345):
                        parts = bk.capture_iceberg_input("k", table, None if consumed is None else str(consumed))
                        seen["iceberg inputs"][(table, consumed)] = [
                            {kind: v for kind, _, v in catalog.iceberg_input(table, consumed) or []},
                            {kind: v for kind, _, v in sql.db.run(bk.union_all(parts), fetch=True)}]
                sql.db.run(bk.compact_small_files(log, 8 << 20))
                seen["logs"].append((catalog.log_rows(log), sql.db.run(bk.read_log(log), fetch=True)))
                seen["log statements"] = catalog.db.count - before
                seen["log snapshot"] = _sql(project, f"SELECT operation FROM {log}.snapshots "
                                                     "ORDER BY committed_at DESC LIMIT 1")[0][0]
                # maintenance: what to expire and compact, then the expiry (last: it drops snapshots)
                kept = {"keyed": keyed_snapshots[2]}
                upkept = {"keyed": keyed, "appended": appended, "empty": empty}
                before = catalog.db.count
                seen["upkeep"] = {u.name: u for u in catalog.upkeep(upkept, kept, 0, 8 << 20)}
                seen["sql upkeep"] = {u.name: u for u in sql.upkeep(upkept, kept, 0, 8 << 20)}
                catalog.expire_snapshots(keyed, seen["upkeep"]["keyed"].older_than_ms)
                seen["upkeep statements"] = catalog.db.count - before
                sql.expire_snapshots(deleted, seen["sql upkeep"]["appended"].older_than_ms)

        thread = threading.Thread(target=read)
        thread.start()
        thread.join()
        assert seen["reader"] is CatalogMetadata
        assert seen["catalog"] == seen["sql"], (seen["catalog"], seen["sql"])
        assert seen["sql"][(ROWS, appended)] == 3 and seen["sql"][(LIVE_ROWS, deleted)] == 3
        assert seen["sql"][(SNAPSHOT, empty)] is None
        assert [seen["sql"][(LIVE_ROWS, sets, k)] for k in range(4)] == [3, 2, 0, 0], seen["sql"]
        # only the count(*)s of the table with deletes, and of the table with no snapshot, ran as SQL
        assert seen["statements"] == 1
        assert "meta_missing" in seen.get("missing", ""), seen
        refs = dict(_sql(project, f"SELECT name, snapshot_id FROM {appended}.refs WHERE type = 'TAG'"))
        assert seen["tags"] == {3: refs["ivm_seq_3"], 7: refs["ivm_seq_7"]}, (seen["tags"], refs)
        assert seen["nearest"] == seen["sql nearest"] and len(seen["nearest"]) == 10, seen
        assert seen["nearest"][(5, False)] == (refs["ivm_seq_3"], 3) and seen["nearest"][(7, True)] is None
        assert seen["tags of a missing table"] is None and seen["sql tags"] is None
        assert seen["spans"] == seen["sql spans"], (seen["spans"], seen["sql spans"])
        assert seen["spans"][(keyed, "id")] == ("-4", "40")
        assert seen["spans"][(keyed, "d")] == ("1999-12-30", "2031-05-06")
        assert seen["spans"][(empty, "id")] == (None, None)
        marked_at = _sql(project, f"SELECT snapshot_id FROM {marked}.snapshots ORDER BY committed_at DESC")[0][0]
        assert seen["marks"] == {marked: ChangeMarks(9, 3, marked_at), nulls: None, pruned: None,
                                 empty: ChangeMarks(0, 0)}, seen["marks"]
        assert seen["known marks"] == [ChangeMarks(1, 1, marked_at), ChangeMarks(9, 3, marked_at)], seen["known marks"]
        assert seen["sql marks"][marked] == (9, 3) and seen["sql marks"][pruned] == (4, 2), seen["sql marks"]
        assert seen["answers marks"] == {marked: True, nulls: True, pruned: False, empty: True}, seen["answers marks"]
        assert seen["unread marks"] == [None, None], seen["unread marks"]
        # a string key, a missing table: left to the .data_files query (as SQL always is)
        assert seen["unread spans"] == [None, None, None], seen["unread spans"]
        assert seen["columns"][0] == seen["columns"][1] and len(seen["columns"][0]) == 14, seen["columns"]
        assert seen["view columns"] is None
        assert seen["recreated"] == [[("a", "int")], [("b", "string"), ("c", "bigint")]], seen["recreated"]
        assert seen["holds"] == [(True, True), (False, False), (False, False), (True, True), (False, False),
                                 (False, False)], seen["holds"]
        assert seen["upstream"][0] == seen["upstream"][1] == [
            ("high", "k", 2), ("changes_from", "k", 0), ("upstream_snapshot", "k", 42), ("rows", "k", 7),
        ], seen["upstream"]
        for (table, consumed), (catalog_rows, sql_rows) in seen["iceberg inputs"].items():
            if sql_rows.get("changed", 0) is None:  # delete files: the catalog counts the files its change reads
                catalog_rows = {k: v for k, v in catalog_rows.items() if k not in ("changed", "scanned")}
                sql_rows = {k: v for k, v in sql_rows.items() if k != "changed"}
            assert catalog_rows == sql_rows, (table, consumed, catalog_rows, sql_rows)
        appended_ids = [r[0] for r in
                        _sql(project, f"SELECT snapshot_id FROM {appended}.snapshots ORDER BY committed_at")]
        assert seen["iceberg inputs"][(appended, appended_ids[0])][0] == {
            "high": appended_ids[1], "rows": 3, "lineage": 2, "changed": 1}, seen["iceberg inputs"]
        assert seen["iceberg inputs"][(appended, 12345)][0]["lineage"] == 0
        deleted_rows = [rows for (t, c), (rows, _) in seen["iceberg inputs"].items()
                        if t == deleted and c not in (None, 12345)]
        # a merge-on-read delete's change is read by the files it touched (iceberg_files.py): their rows,
        # read at both snapshots only for the rows the deletes delete (scanned, not summed)
        assert deleted_rows and deleted_rows[0]["lineage"] == 2, deleted_rows
        assert deleted_rows[0]["changed"] == deleted_rows[0]["scanned"] > 0, deleted_rows
        assert seen["iceberg inputs"][(empty, None)][0] == {}, seen["iceberg inputs"]
        # the log: the catalog's rows as read_log's, with no statement
        assert seen["log missing"] is None, seen["log missing"]
        for catalog_rows, sql_rows in seen["logs"]:
            assert sorted(catalog_rows) == sorted(tuple(r) for r in sql_rows), (catalog_rows, sql_rows)
        assert [sorted((r[0], r[1], r[2]) for r in rows) for rows, _ in seen["logs"]] == [
            [], [("committed", 1, "committed"), ("last", 1, "committed")],
            [("committed", 1, "committed"), ("last", 2, "started")],
            [("committed", 2, "committed"), ("last", 2, "committed")],
            [("committed", 2, "committed"), ("last", 3, "started")],
            [("committed", 2, "committed"), ("last", 3, "started")]]
        assert seen["log snapshot"] == "replace" and seen["log statements"] == 0, seen
        # maintenance's probe: the catalog's as the statement's (small files counted up to 2)
        catalog_upkeep, sql_upkeep = seen["upkeep"], seen["sql upkeep"]
        assert set(catalog_upkeep) == set(sql_upkeep) == {"keyed", "appended", "empty"}, seen
        for name, u in catalog_upkeep.items():
            v = sql_upkeep[name]
            assert (u.old_snapshots, u.small_files) == (v.old_snapshots, min(v.small_files, 2)), (u, v)
        kept_at = _sql(project, f"SELECT unix_millis(committed_at) FROM {keyed}.snapshots "
                                f"WHERE snapshot_id = {keyed_snapshots[2]}")[0][0]
        assert catalog_upkeep["keyed"] == replace(sql_upkeep["keyed"], small_files=2) == Upkeep("keyed", kept_at, 2, 2)
        assert abs(catalog_upkeep["appended"].older_than_ms - sql_upkeep["appended"].older_than_ms) < 60_000, seen
        assert catalog_upkeep["appended"].old_snapshots == 2 and catalog_upkeep["empty"].old_snapshots == 0
        # the expiry: through the catalog (no statement) down to the kept snapshot, through the
        # procedure down to the current one; the rows stay
        assert seen["upkeep statements"] == 0
        assert [r[0] for r in _sql(project, f"SELECT snapshot_id FROM {keyed}.snapshots ORDER BY committed_at")] \
            == keyed_snapshots[2:]
        assert _sql(project, f"SELECT count(*) FROM {deleted}.snapshots")[0][0] == 1
        assert _sql(project, f"SELECT count(*) FROM {keyed}")[0][0] == 4
        assert sorted(r[0] for r in _sql(project, f"SELECT id FROM {deleted}")) == [1, 2, 2]

    def test_explicit_file_format_wins_and_drop_recreate(self, project):
        # parquet tables are dropped and re-created by dbt-spark: needs DROP TABLE ... PURGE
        for _ in range(2):
            run_dbt(["run", "--select", "parquet_table"])
        assert self._provider(project, "parquet_table")[0] == "parquet"
        # Iceberg table: rebuilt twice, then dropped by dbt and rebuilt under the same name
        for _ in range(2):
            run_dbt(["run", "--select", "ice_table"])
        _sql(project, f"drop table {project.test_schema}.ice_table purge", fetch=None)
        run_dbt(["run", "--select", "ice_table"])
        assert _sql(project, f"select count(*) from {project.test_schema}.ice_table")[0][0] == 1

    def test_view_table_switch(self, project):
        run_dbt(["run", "--select", "switch", "--vars", "{mat: view}"])
        run_dbt(["run", "--select", "switch", "--vars", "{mat: table}"])
        assert self._provider(project, "switch")[0] == "iceberg"
        run_dbt(["run", "--select", "switch", "--vars", "{mat: view}"])
        run_dbt(["run", "--select", "switch", "--vars", "{mat: table}"])
        assert _sql(project, f"select id from {project.test_schema}.switch")[0][0] == 2

    def test_a_replaced_view_runs_its_new_sql(self, project):
        # `create or replace view` of an Iceberg view through the SparkSessionCatalog kept the
        # metastore's view text, so the view went on running its first SQL (apache/iceberg#15490)
        view = f"{project.test_schema}.changing_view"
        for sql, expected in (("1 as id", 1), ("2 as id", 2), ("3 as id", 3)):
            run_dbt(["run", "--select", "changing_view", "--vars", f"{{view_sql: '{sql}'}}"])
            assert _sql(project, f"select id from {view}") == [(expected,)]
        # a new SQL that fails leaves the old view as it was
        run_dbt(["run", "--select", "changing_view", "--vars", "{view_sql: 'nope from nowhere'}"],
                expect_pass=False)
        assert _sql(project, f"select id from {view}") == [(3,)]
        names = {r[1] for r in _sql(project, f"show views in {project.test_schema}")}
        assert "changing_view__dbt_tmp" not in names

    def test_manifest_keeps_user_config(self, project):
        """The Iceberg default is applied while materializing only, not written to manifest."""
        run_dbt(["run", "--select", "ice_table"])
        manifest = json.loads((Path(str(project.project_root)) / "target" / "manifest.json").read_text())
        node = manifest["nodes"]["model.test.ice_table"]
        assert node["config"].get("file_format") is None


class TestUserServerSideParameters:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, spark_ivm_session_dir):
        return {
            "type": "spark_ivm",
            "method": "session",
            "schema": "analytics",
            "session_dir": spark_ivm_session_dir,
            "threads": 1,
            "server_side_parameters": {"spark.sql.shuffle.partitions": "3"},
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {"m.sql": "select 1 as id"}

    def test_user_value_reaches_session(self, project):
        rows = _sql(project, "set spark.sql.shuffle.partitions")
        assert rows[0][1] == "3"
