"""A model that loses the embedded session's JVM fails alone, for real. In one `dbt build`, two
models make the driver JVM exit from a task of their CTAS (``java_method('java.lang.System',
'exit', n)``): once with exit code 1, once with 52, the code Spark's handler exits with on an
OutOfMemoryError. Each time the build must go on in a new session (a new JVM) — the models after
each read the tables the earlier JVMs wrote, and their data test passes — and run_results must say
which model lost the session, how, and with what heap.

``dbt debug`` of the same project shows the driver heap the session runs with by default, and its
JVM reports that heap; the build runs with the profile's override (a small heap for the shared
test machine), which each of its JVMs reports.

Both run as `dbt` processes of their own: killing the JVM of this pytest worker would end the
session every later test of the worker shares. PYSPARK_SUBMIT_ARGS (which the functional conftest
sets for the workers' JVMs, and which would win over the profile) is left out.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.spark_ivm.connections import default_driver_memory, machine_memory

TABLE = "{{ config(materialized='table') }}\n"
# dbt runs the nodes of one generation in the order of their names: m2, m3, m4 after m1, m5 after m3
MODELS = {
    "m1_before.sql": TABLE + "select 1 as id union all select 2 as id",
    "m2_kills_the_jvm.sql": TABLE + "-- depends_on: {{ ref('m1_before') }}\n"
    "select java_method('java.lang.System', 'exit', 1) as x",
    "m3_after.sql": TABLE + "select count(*) as n from {{ ref('m1_before') }}",
    "m4_exits_as_out_of_memory.sql": TABLE + "-- depends_on: {{ ref('m1_before') }}\n"
    "select java_method('java.lang.System', 'exit', 52) as x",
    "m5_last.sql": TABLE + "select n + 1 as n from {{ ref('m3_after') }}",
}
# the models after a lost one read what the old JVMs wrote: the tests fail on any other count
TESTS = {
    "m3_reads_m1.sql": "select n from {{ ref('m3_after') }} where n <> 2",
    "m5_reads_m3.sql": "select n from {{ ref('m5_last') }} where n <> 3",
}
BUILD_HEAP = "2g"  # the profile's override for the build (target `small`)
READY = r"spark_ivm session ready in [\d.]+ s: JVM max heap (\S+)"


def _dbt() -> str:
    exe = Path(sys.executable).with_name("dbt")
    return str(exe) if exe.exists() else shutil.which("dbt") or "dbt"


def _project(root: Path) -> Path:
    project = root / "proj"
    (project / "models").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "dbt_project.yml").write_text(
        "name: session_loss\nversion: '1.0'\nconfig-version: 2\nprofile: session_loss\n"
    )
    (project / "profiles.yml").write_text(textwrap.dedent(f"""\
        session_loss:
          target: local
          outputs:
            local:
              type: spark_ivm
              method: session
              schema: analytics
              threads: 1
              session_dir: {root / 'session'}
            small:
              type: spark_ivm
              method: session
              schema: analytics
              threads: 1
              session_dir: {root / 'session'}
              server_side_parameters:
                spark.driver.memory: {BUILD_HEAP}
        """))
    for name, sql in MODELS.items():
        (project / "models" / name).write_text(sql)
    for name, sql in TESTS.items():
        (project / "tests" / name).write_text(sql)
    return project


def _run(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    for key in ("PYSPARK_SUBMIT_ARGS", "SPARK_DRIVER_MEMORY", "DBT_PROFILES_DIR", "DBT_LOG_PATH",
                "DBT_TARGET_PATH"):
        env.pop(key, None)
    return subprocess.run(
        [_dbt(), *args, "--project-dir", str(project), "--profiles-dir", str(project)],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )


def test_a_model_that_loses_the_jvm_fails_alone(tmp_path):
    project = _project(tmp_path)
    log_file = project / "logs" / "dbt.log"
    heap = default_driver_memory(machine_memory())

    started = time.monotonic()
    debug = _run(project, "debug")
    print(f"dbt debug: {time.monotonic() - started:.1f} s")
    assert debug.returncode == 0, debug.stdout[-4000:] + debug.stderr[-4000:]
    shown = re.search(r"driver_memory: (.*)", debug.stdout)
    assert shown, debug.stdout[-4000:]
    print("dbt debug shows driver_memory:", shown.group(1))
    assert shown.group(1).startswith(f"{heap} (default: half of the machine's ")
    debug_log = log_file.read_text()
    assert re.findall(READY, debug_log) == [heap]  # debug's connection test: the JVM's own heap

    started = time.monotonic()
    build = _run(project, "build", "--target", "small")
    print(f"dbt build: {time.monotonic() - started:.1f} s")
    out = build.stdout + build.stderr
    assert build.returncode == 1, out[-6000:]  # nodes failed

    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    by_node = {r["unique_id"].split(".")[-1]: r for r in results}
    for name, r in by_node.items():
        print(f"{name}: {r['status']} in {r['execution_time']:.2f} s: {(r['message'] or '').splitlines()[-1:]}")
    for name in ("m1_before", "m3_after", "m5_last"):
        assert by_node[name]["status"] == "success", by_node[name]["message"]
    for name in TESTS:
        assert by_node[name[:-4]]["status"] == "pass", by_node[name[:-4]]["message"]
    for name, ended in (("m2_kills_the_jvm", "its JVM exited (exit code 1)"),
                        ("m4_exits_as_out_of_memory", "its JVM ran out of memory and exited (exit code 52)")):
        lost = by_node[name]
        assert lost["status"] == "error"
        message = " ".join(lost["message"].split())
        print(f"run_results message of {name}: {message}")
        assert "The Spark session was lost while this statement ran: " in message
        assert ended + "." in message
        assert "The models after this one run in a new Spark session." in message
        assert f"The session's driver heap was {BUILD_HEAP}." in message
    assert "raise it" not in by_node["m2_kills_the_jvm"]["message"]
    assert "give it a larger heap" in by_node["m4_exits_as_out_of_memory"]["message"]

    build_log = log_file.read_text()[len(debug_log):]
    # three JVMs in the build (the first, one after each loss), each with the profile's heap
    assert re.findall(READY, build_log) == [BUILD_HEAP] * 3, re.findall(READY, build_log)
    # the statement's error may reach Python before the JVM exited (its SparkContext shut down) or after
    for ended in (r"its JVM exited \(exit code 1\)", r"its JVM ran out of memory and exited \(exit code 52\)"):
        assert re.search(r"the Spark session was lost \((its SparkContext was shut down; )?"
                         + ended + r"\); the next statement starts a new one", build_log), ended


# the JVM killed outside any statement (as by the OOM killer, or dying in the adapter's own calls
# to it): in a Python process of its own, the adapter's functions as the connection and each
# model's pre_model_hook call them
KILLED_OUTSIDE_A_STATEMENT = """
import os, signal, sys
from dbt.adapters.spark_ivm import connections as c

creds = c.SparkIvmCredentials.from_dict({"schema": "a", "session_dir": sys.argv[1],
                                         "server_side_parameters": {"spark.driver.memory": "1g"}})
params = creds.session_parameters()
first = c.embedded_session(params)
first.sql("CREATE TABLE default.kept USING iceberg AS SELECT 1 AS id").collect()
jvm = c._gateway_process()
os.kill(jvm.pid, signal.SIGKILL)
jvm.wait()
# between two statements: the next one finds the JVM gone without asking it and runs in a new one
second = c.embedded_session(params)
assert second is not first and c._gateway_process().pid != jvm.pid
print("second session reads", second.sql("SELECT count(*) FROM default.kept").collect()[0][0])
jvm = c._gateway_process()
os.kill(jvm.pid, signal.SIGKILL)
# before the next model (pre_model_hook): the lost session is replaced
print("replaced:", c.replace_lost_session())
third = c.embedded_session(params)
assert third is not second and c._gateway_process().pid != jvm.pid
print("third session reads", third.sql("SELECT count(*) FROM default.kept").collect()[0][0])
print("nothing lost:", c.replace_lost_session())
"""


def test_a_jvm_killed_outside_a_statement_is_replaced(tmp_path):
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", KILLED_OUTSIDE_A_STATEMENT, str(tmp_path / "session")],
                          env=env, capture_output=True, text=True, timeout=600)
    print(f"three JVMs: {time.monotonic() - started:.1f} s")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    print(proc.stdout)
    assert "second session reads 1" in proc.stdout
    assert "replaced: its JVM was killed (signal 9)" in proc.stdout
    assert "third session reads 1" in proc.stdout
    assert "nothing lost: None" in proc.stdout


# --- in this worker's own session: a statement's own error is not a lost session ---------------


class TestAnOrdinaryErrorKeepsTheSession:
    """A model whose statement fails at run time (``raise_error``: a SparkRuntimeException from a
    task, not an AnalysisException) fails with its own error; the session is probed, found alive
    and kept: the model after it runs in the same session and JVM."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "a_fails.sql": TABLE + "select cast(raise_error('boom from a_fails') as int) as x",
            "b_after.sql": TABLE + "select 1 as id",
        }

    def test_the_session_is_kept(self, project):
        from dbt.adapters.spark_ivm import connections

        run_dbt(["run", "--select", "b_after"])
        spark, jvm = connections._APPLIED["session"], connections._gateway_process()
        results = run_dbt(["run"], expect_pass=False)
        by_node = {r.node.name: r for r in results}
        assert by_node["a_fails"].status == "error"
        assert "boom from a_fails" in by_node["a_fails"].message
        assert "session was lost" not in by_node["a_fails"].message
        assert by_node["b_after"].status == "success"
        assert connections._APPLIED["session"] is spark and connections._gateway_process() is jvm
